#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Build libibverbs and its example programs (ibv_devinfo, ibv_*_pingpong, ...)
# from rdma-core release tags, one install prefix per tag, so softrma's
# provider can be tested against several libibverbs versions side by side.
# Only those targets are built: no other provider, library or tool, and
# nothing is written outside $OUT.
#
# usage: scripts/build-rdma-core.sh GITDIR TAG...     e.g. v45.0 v57.0 v64.0
#        scripts/build-rdma-core.sh SRCDIR NAME       an unpacked source tree
#
#   OUT   install prefixes, $OUT/<tag minus ".0"> (default /var/tmp/rdma-core-builds)
#   WORK  unpacked sources and build dirs (default $OUT/work)
#   JOBS  ninja -j (default 2); NICE: nice -n (default 10)
#
# Layout: $OUT/v64/{bin/ibv_*,lib/libibverbs.so*,lib/pkgconfig,include/infiniband,
#         etc/libibverbs.d (empty)}.  The binaries carry a RUNPATH to $OUT/v64/lib;
#         LD_LIBRARY_PATH=$OUT/v64/lib is still needed for other programs.
#
# Loading a provider from any directory: libibverbs has no environment
# variable for its config directory (IBV_CONFIG_DIR is the compile-time
# $prefix/etc/libibverbs.d, no getenv at v45..v64), but every name in
# RDMAV_DRIVERS (or, if unset, IBV_DRIVERS), split at ':' or ';', is loaded as
# well (ignored when setuid).  A name starting with '/' is dlopen()ed as
# NAME-rdmav<PABI>.so, so
#     RDMAV_DRIVERS=/work/main/user/libsoftrma  ->  .../libsoftrma-rdmav34.so
# (<PABI> is IBVERBS_PABI_VERSION: 34 in v45..v56; 57, 59 and 64 in those
# releases).  A plain name "foo" (from RDMAV_DRIVERS or a "driver foo" line in
# a *.driver file) tries $prefix/lib/libibverbs/libfoo-rdmav<PABI>.so, then
# libfoo-rdmav<PABI>.so on the ordinary library search path.  A build here
# never reads /etc/libibverbs.d nor /usr/lib/x86_64-linux-gnu/libibverbs, so
# Debian's providers are not loaded; "driver /abs/libsoftrma" in a file in
# $prefix/etc/libibverbs.d works like RDMAV_DRIVERS.  The provider must link
# against the same private ABI (IBVERBS_PRIVATE_<PABI>) or the dlopen fails.
# Providers are only loaded once the kernel lists a uverbs device.
set -eu

[ $# -ge 2 ] || { sed -n '9,10s/^# //p' "$0" >&2; exit 2; }
src=$(cd "$1" && pwd); shift
OUT=${OUT:-/var/tmp/rdma-core-builds}
WORK=${WORK:-$OUT/work}
JOBS=${JOBS:-2}
NICE=${NICE:-10}
examples="ibv_devinfo ibv_devices ibv_asyncwatch ibv_rc_pingpong ibv_uc_pingpong
	  ibv_ud_pingpong ibv_srq_pingpong ibv_xsrq_pingpong"

for tag; do
	start=$(date +%s)
	name=${tag%.0}
	prefix=$OUT/$name
	build=$WORK/$name-build
	if [ -f "$src/CMakeLists.txt" ]; then
		tree=$src
	else
		tree=$WORK/$name
		rm -rf "$tree" && mkdir -p "$tree"
		git --git-dir="$src" archive "$tag" | tar -x -C "$tree"
	fi
	rm -rf "$build" "$prefix" && mkdir -p "$build"
	echo "== $tag: PABI $(sed -n 's/^set(IBVERBS_PABI_VERSION "\(.*\)")/\1/p' "$tree/CMakeLists.txt"), $tree -> $prefix"

	nice -n "$NICE" cmake -G Ninja -S "$tree" -B "$build" -Wno-dev \
		-DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_INSTALL_LIBDIR=lib \
		-DCMAKE_INSTALL_RPATH="$prefix/lib" \
		-DNO_PYVERBS=1 -DNO_MAN_PAGES=1 -DENABLE_STATIC=0 >"$build/cmake.log"
	# shellcheck disable=SC2086
	nice -n "$NICE" ninja -C "$build" -j "$JOBS" ibverbs $examples

	# Install just these directories' files: a full "ninja install"
	# would build everything and write to /usr/lib/sysusers.d and /lib.
	for d in libibverbs libibverbs/examples kernel-headers; do
		cmake -DCMAKE_INSTALL_PREFIX="$prefix" \
			-P "$build/$d/cmake_install.cmake" >/dev/null
	done
	install -D -m 0644 "$build/lib/pkgconfig/libibverbs.pc" \
		"$prefix/lib/pkgconfig/libibverbs.pc"
	mkdir -p "$prefix/etc/libibverbs.d"

	# Without ib_uverbs in the kernel this says "Failed to get IB devices
	# list: Function not implemented" and exits 255; it must not exit 127
	# (the dynamic loader failing).
	rc=0; LD_LIBRARY_PATH=$prefix/lib "$prefix/bin/ibv_devinfo" -l || rc=$?
	[ "$rc" -ne 127 ]
	echo "== $tag: built in $(($(date +%s) - start))s"
done
