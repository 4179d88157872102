#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Build libfabric's own test suite, fabtests, of the release Debian ships
# (1.17.0 on Debian 12) against Debian's libfabric (libfabric-dev), for
# selftests/fabtests/run.sh.  Nothing of libfabric is kept in this tree.
#
# usage: scripts/build-fabtests.sh GITDIR [TAG]   a libfabric clone (default TAG v1.17.0)
#        scripts/build-fabtests.sh SRCDIR         an unpacked fabtests/ directory
#
#   OUT   the install prefix (default ${SOFTRMA_CACHE:-/var/cache/softrma}/fabtests-<version>)
#   WORK  where the sources are unpacked and built (default $OUT.build)
#
# Needs autoconf, automake, libtool and libfabric-dev (Debian packages).
# Layout: $OUT/bin/{runfabtests.sh,fi_*}, $OUT/share/fabtests/test_configs.
set -eu

[ $# -ge 1 ] || { sed -n '7,8s/^# //p' "$0" >&2; exit 2; }
for cmd in autoreconf libtoolize pkg-config; do
	command -v "$cmd" >/dev/null ||
		{ echo "$0: no $cmd: apt-get install autoconf automake libtool pkg-config" >&2; exit 1; }
done
pkg-config --exists libfabric ||
	{ echo "$0: no libfabric.pc: apt-get install libfabric-dev" >&2; exit 1; }
version=$(pkg-config --modversion libfabric)
tag=${2:-v$version}
OUT=${OUT:-${SOFTRMA_CACHE:-/var/cache/softrma}/fabtests-${tag#v}}
WORK=${WORK:-$OUT.build}

rm -rf "$WORK"
mkdir -p "$WORK"
if [ -d "$1/fabtests" ] || [ -f "$1/configure.ac" ]; then
	src=$1; [ -d "$src/fabtests" ] && src=$src/fabtests
	cp -a "$src/." "$WORK/"
else
	# A bare or ordinary clone: git archive reads either.
	git --git-dir="$1" archive "$tag" fabtests | tar -x -C "$WORK" --strip-components=1
fi
[ "$tag" = "v$version" ] ||
	echo "$0: note: building fabtests $tag against libfabric $version" >&2

cd "$WORK"
./autogen.sh >autogen.log 2>&1 || { tail autogen.log >&2; exit 1; }
./configure --prefix="$OUT" >configure.log 2>&1 || { tail configure.log >&2; exit 1; }
nice make -j"${JOBS:-2}" >make.log 2>&1 || { tail -n 30 make.log >&2; exit 1; }
make install >install.log 2>&1 || { tail install.log >&2; exit 1; }
echo "fabtests $tag (libfabric $version) in $OUT"
