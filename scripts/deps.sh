#!/bin/sh
# Install every Debian package that building, testing and benchmarking softrma
# needs.  Idempotent and non-interactive; run as root (or through sudo).
set -eu

SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive

$SUDO apt-get update -qq

# The kernel's own RDMA consumers (selftests/device/nvme_rdma.sh, nfs_rdma.sh,
# iser.sh, srp.sh) are driven from user space by nvme-cli, fio, nfs-utils,
# rpcbind and open-iscsi.  No daemon of theirs needs to run on this host:
# the tests start what they need inside the guest (which boots this root
# file system), by hand.

# The newest 6.12 backport kernel that also has headers in the archive.
k612=$(apt-cache search --names-only '^linux-headers-6\.12\.[0-9]+\+deb12-amd64$' |
	sed -n 's/^linux-headers-\(6\.12\.[0-9]*+deb12-amd64\) .*/\1/p' |
	sort -V | tail -n 1)
# make bench builds rdma_siw (which Debian's kernels lack) from the
# linux-source of each series, 6.1 here and 6.12 below, and draws its charts
# with gnuplot; make profile records with perf.
pkgs="build-essential kmod sparse python3 clang libclang-rt-14-dev \
	linux-image-amd64 linux-headers-amd64 \
	qemu-system-x86 busybox-static cpio \
	rdma-core ibverbs-providers libibverbs-dev librdmacm-dev \
	ibverbs-utils rdmacm-utils perftest qperf libfabric-bin python3-pyverbs \
	iproute2 iputils-ping procps man-db \
	nvme-cli fio nfs-kernel-server nfs-common rpcbind open-iscsi dkms ndctl librpma-dev \
	debhelper dh-dkms lintian linux-source-6.1 gnuplot-nox linux-perf"
# The same 6.12 in its PREEMPT_RT flavour (make check KVERS=<it>), and its
# source with what building it takes (make debug-kernel).
[ -n "$k612" ] && pkgs="$pkgs linux-image-$k612 linux-headers-$k612 \
	linux-image-${k612%-amd64}-rt-amd64-unsigned linux-headers-${k612%-amd64}-rt-amd64 \
	linux-source-6.12 flex bison bc libelf-dev libssl-dev xz-utils"

# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $pkgs >/dev/null
echo "deps: installed ($pkgs)"

# rdma-core's own tests (selftests/pyverbs/run.sh, device/pyverbs.sh): the
# tests/ directory of the rdma-core release python3-pyverbs was built from
# (44.0 on Debian 12), unpacked in $SOFTRMA_CACHE/rdma-core-tests.
# python3-pyverbs installs it as documentation, partly gzipped; where dpkg
# leaves documentation out (a path-exclude of /usr/share/doc), it comes from
# the source package, through a private apt configuration with the deb-src
# twins of this machine's sources, /etc/apt left as it is.
cache=${SOFTRMA_CACHE:-/var/cache/softrma}
tests=$cache/rdma-core-tests
ver=$(dpkg-query -W -f '${Version}' python3-pyverbs)

rdma_core_tests_from_source() {
	apt="-o Dir::Etc::SourceList=$1/sources.list -o Dir::Etc::SourceParts=$1/parts"
	apt="$apt -o Dir::State::Lists=$1/lists -o APT::Sandbox::User=root"
	mkdir -p "$1/parts" "$1/lists/partial" "$1/src"
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -r "$f" ] && sed -n 's/^deb /deb-src /p' "$f"
	done > "$1/sources.list"
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -r "$f" ] && sed 's/^Types:.*/Types: deb-src/' "$f" > "$1/parts/${f##*/}"
	done
	# What other sources have no source index for fails alone.
	# shellcheck disable=SC2086
	apt-get $apt -qq update
	# shellcheck disable=SC2086
	(cd "$1/src" && apt-get $apt -qq source "rdma-core=$ver") &&
		cp -R "$1"/src/rdma-core-*/tests/. "$2"
}

if [ "$(cat "$tests/.version" 2>/dev/null)" != "$ver" ]; then
	work=$(mktemp -d)
	mkdir "$work/tests"
	doc=/usr/share/doc/rdma-core/tests
	if [ -r "$doc/run_tests.py" ]; then
		cp -R "$doc/." "$work/tests"
		find "$work/tests" -name '*.gz' -exec gunzip {} +
	elif ! rdma_core_tests_from_source "$work" "$work/tests"; then
		echo "deps: rdma-core $ver's tests neither in $doc nor from 'apt-get source rdma-core'" >&2
	fi
	if [ -r "$work/tests/run_tests.py" ]; then
		echo "$ver" > "$work/tests/.version"
		$SUDO mkdir -p "$cache"
		$SUDO rm -rf "$tests"
		$SUDO cp -R "$work/tests" "$tests"
		echo "deps: rdma-core $ver's tests in $tests"
	fi
	rm -rf "$work"
fi
