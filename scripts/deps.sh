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

pkgs="build-essential kmod sparse python3 clang libclang-rt-14-dev \
	linux-image-amd64 linux-headers-amd64 \
	qemu-system-x86 busybox-static cpio \
	rdma-core ibverbs-providers libibverbs-dev librdmacm-dev \
	ibverbs-utils rdmacm-utils perftest qperf libfabric-bin iproute2 iputils-ping procps man-db \
	nvme-cli fio nfs-kernel-server nfs-common rpcbind open-iscsi dkms"
# The same 6.12 in its PREEMPT_RT flavour (make check KVERS=<it>), and its
# source with what building it takes (make debug-kernel).
[ -n "$k612" ] && pkgs="$pkgs linux-image-$k612 linux-headers-$k612 \
	linux-image-${k612%-amd64}-rt-amd64-unsigned linux-headers-${k612%-amd64}-rt-amd64 \
	linux-source-6.12 flex bison bc libelf-dev libssl-dev xz-utils"

# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $pkgs >/dev/null
echo "deps: installed ($pkgs)"
