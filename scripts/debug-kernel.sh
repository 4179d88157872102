#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# make debug-kernel: build Debian's 6.12 source (linux-source-6.12) with a
# small configuration for the test guest plus the checkers Debian's kernels
# lack (KASAN, lockdep, atomic-sleep checks, kmemleak, UBSAN, debug objects),
# and install it as an ordinary kernel of this machine (/boot/vmlinuz-KVER,
# /lib/modules/KVER with a "build" link), so that
#	make check KVERS=KVER
# runs the suite on it.  The build lives in $SOFTRMA_CACHE (default
# /var/cache/softrma), outside the tree, and is done once per machine: a
# second run only reinstalls.  Prints KVER last.
set -eu

SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
tarball=$(ls /usr/src/linux-source-6.12.tar.* 2>/dev/null | head -n 1)
[ -n "$tarball" ] || { echo "debug-kernel: linux-source-6.12 missing (run 'make deps')" >&2; exit 1; }
cache=${SOFTRMA_CACHE:-/var/cache/softrma}/debug-kernel
src=$cache/linux
obj=$cache/obj
$SUDO mkdir -p "$cache"
$SUDO chown "$(id -u):$(id -g)" "$cache"

if [ ! -f "$src/Makefile" ] || [ "$tarball" -nt "$src/Makefile" ]; then
	rm -rf "$src" "$obj"
	mkdir -p "$src"
	tar -xf "$tarball" -C "$src" --strip-components=1
fi
mkdir -p "$obj"

# The guest boots with virtio, 9p and overlayfs; the tests use the RDMA core,
# rdma_rxe and siw, network namespaces, veth, dummy, VLANs, netem and memory
# cgroups, and the kernel's RDMA consumers: NVMe-oF (host and target), NFS
# over RDMA (client and server), iSER (initiator and LIO target) and SRP,
# and the emulated NVDIMM of selftests/vm/run -p (device/pmem.sh).  Modules
# where the tests load modules, so that loading and unloading is exercised
# as on Debian's kernels.
conf() { "$src/scripts/config" --file "$obj/.config" "$@"; }
if [ ! -f "$obj/.config" ] || [ "$0" -nt "$obj/.config" ]; then
	make -s -C "$src" O="$obj" x86_64_defconfig kvm_guest.config
	conf --set-str LOCALVERSION -softrma-debug --disable LOCALVERSION_AUTO \
		--disable MODULE_SIG --disable DEBUG_INFO_BTF --disable WERROR \
		--enable DEBUG_INFO_NONE \
		--enable MODULES --enable MODULE_UNLOAD \
		--enable VIRTIO_PCI --enable VIRTIO_NET --enable HW_RANDOM_VIRTIO \
		--enable NET_9P --enable NET_9P_VIRTIO --enable 9P_FS --enable 9P_FS_POSIX_ACL \
		--enable OVERLAY_FS --enable TMPFS --enable DEVTMPFS \
		--enable NAMESPACES --enable NET_NS --enable USER_NS \
		--enable CGROUPS --enable MEMCG \
		--enable IPV6 --module VETH --module DUMMY --module VLAN_8021Q \
		--enable NET_SCHED --module NET_SCH_NETEM \
		--module INFINIBAND --module INFINIBAND_USER_ACCESS \
		--enable INFINIBAND_ADDR_TRANS --module RDMA_RXE --module RDMA_SIW \
		--enable BLOCK --module BLK_DEV_NVME --module NVME_RDMA \
		--module NVME_TARGET --module NVME_TARGET_RDMA \
		--enable NETWORK_FILESYSTEMS --module SUNRPC --module SUNRPC_XPRT_RDMA \
		--module NFS_FS --enable NFS_V3 --module NFS_V4 --enable NFS_V4_1 \
		--enable NFS_V4_2 --module NFSD \
		--enable NFSD_V4 --enable FILE_LOCKING \
		--module SCSI --module BLK_DEV_SD --module SCSI_ISCSI_ATTRS \
		--module ISCSI_TCP --module INFINIBAND_ISER \
		--module TARGET_CORE --module TCM_FILEIO --module TCM_IBLOCK \
		--module ISCSI_TARGET \
		--module INFINIBAND_ISERT \
		--module SCSI_SRP_ATTRS --module INFINIBAND_SRP --module INFINIBAND_SRPT \
		--enable CONFIGFS_FS \
		--enable MEMORY_HOTPLUG --enable MEMORY_HOTREMOVE --enable ZONE_DEVICE \
		--enable TRANSPARENT_HUGEPAGE --enable DAX --enable FS_DAX \
		--module LIBNVDIMM --module ACPI_NFIT --module BLK_DEV_PMEM \
		--enable NVDIMM_PFN --enable NVDIMM_DAX \
		--module DEV_DAX --module DEV_DAX_PMEM \
		--enable KASAN --enable KASAN_GENERIC --enable KASAN_INLINE \
		--enable PROVE_LOCKING --enable DEBUG_ATOMIC_SLEEP \
		--enable DEBUG_KMEMLEAK --set-val DEBUG_KMEMLEAK_MEM_POOL_SIZE 65536 \
		--disable DEBUG_KMEMLEAK_DEFAULT_OFF --disable DEBUG_KMEMLEAK_AUTO_SCAN \
		--enable UBSAN --enable UBSAN_BOUNDS --enable UBSAN_SHIFT \
		--enable DEBUG_OBJECTS --enable DEBUG_OBJECTS_FREE \
		--enable DEBUG_OBJECTS_TIMERS --enable DEBUG_OBJECTS_WORK \
		--enable DEBUG_OBJECTS_RCU_HEAD --enable DEBUG_OBJECTS_PERCPU_COUNTER \
		--enable DEBUG_LIST --enable REFCOUNT_FULL \
		--enable DETECT_HUNG_TASK --enable SOFTLOCKUP_DETECTOR \
		--enable KALLSYMS --enable KALLSYMS_ALL
	make -s -C "$src" O="$obj" olddefconfig
	for opt in KASAN PROVE_LOCKING DEBUG_ATOMIC_SLEEP DEBUG_KMEMLEAK UBSAN \
			DEBUG_OBJECTS INFINIBAND_USER_ACCESS RDMA_RXE 9P_FS OVERLAY_FS \
			NVME_RDMA NVME_TARGET_RDMA SUNRPC_XPRT_RDMA NFSD NFS_V4 \
			NFS_V4_1 NFS_V4_2 INFINIBAND_ISER INFINIBAND_ISERT \
			TCM_FILEIO TCM_IBLOCK \
			INFINIBAND_SRP INFINIBAND_SRPT \
			ZONE_DEVICE FS_DAX ACPI_NFIT BLK_DEV_PMEM DEV_DAX_PMEM; do
		grep -Eq "^CONFIG_$opt=(y|m)" "$obj/.config" ||
			{ echo "debug-kernel: CONFIG_$opt did not stick" >&2; exit 1; }
	done
fi

make -s -C "$src" O="$obj" -j"$(nproc)" bzImage modules
kver=$(make -s -C "$src" O="$obj" kernelrelease)
$SUDO make -s -C "$src" O="$obj" INSTALL_MOD_PATH=/ modules_install
$SUDO ln -sfn "$obj" "/lib/modules/$kver/build"
$SUDO cp "$obj/arch/x86/boot/bzImage" "/boot/vmlinuz-$kver"
$SUDO depmod -a "$kver"
echo "$kver"
