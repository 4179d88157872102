#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# NFS over RDMA, server and client in one guest, over the device under test
# (selftests/ulp.sh: softrma0, or rxe0 with ULP_DEV_TYPE=rxe).  The guest has
# no init system, so the test starts what a server needs by hand: rpcbind,
# rpc.mountd, the kernel's nfsd through rpc.nfsd, and an RDMA listener on
# 10.9.0.1:20049 ("rdma 20049" into /proc/fs/nfsd/portlist).  nfsd exports a
# tmpfs directory; the kernel's NFS client mounts it with -o rdma (xprtrdma,
# which registers every chunk with fast registration; svcrdma moves the
# payloads with RDMA Read and Write).  Then:
#  - NFSv4.2: files of 1 B to 8 MiB (several over 1 MiB, so multi-page
#    chunks) written, unmounted; the server's copies compared;
#  - caches dropped, NFSv4.2 mounted again and every file read back
#    (buffered, and with O_DIRECT so that every byte crosses again) and
#    compared;
#  - the same over NFSv3 (mountd over TCP, NFS over RDMA);
#  - unmounted, nfsd stopped, daemons ended, nfsd, rpcrdma and the NFS
#    client modules unloaded, no QP of theirs left on the device.
# On a device without fast registration xprtrdma refuses it (no FRWR): the
# mount fails.
# timeout: 900 s
. "$(dirname "$0")/../lib.sh"
. "$SOFTRMA_TOP/selftests/ulp.sh"

WORK=/tmp/ulp-nfs
EXPORT=$WORK/export
MNT=$WORK/mnt
SRC=$WORK/src
# Every module this test loads; "modprobe -r" takes them in this order.
MODULES="nfsv4 nfsv3 nfs nfsd rpcrdma lockd"
pids=

started() {	# started NAME CMD...: CMD in the background, recorded in $pids
	name=$1; shift
	"$@" > "/tmp/nfs-$name.log" 2>&1 &
	pids="$pids $!"
}

nfs_mounted() { grep -q " $MNT nfs" /proc/mounts; }

# nfs_mount VERS: the export on $MNT over RDMA with NFS version VERS.
nfs_mount() {
	opts="rdma,port=20049,vers=$1,sec=sys,timeo=600,retrans=2"
	[ "$1" = 3 ] && opts="$opts,nolock"
	# NFSv4 sees the export as its root (fsid=0), NFSv3 by its path.
	path=/
	[ "$1" = 3 ] && path=$EXPORT
	if ! timeout "$(bound 180)" mount -t nfs -o "$opts" "$ULP_IP:$path" "$MNT" \
			> /tmp/nfs-mount.log 2>&1; then
		ulp_fail "mount -t nfs -o $opts: $(tail -n 2 /tmp/nfs-mount.log | tr '\n' ' ')"
	fi
	grep " $MNT " /proc/mounts | grep -q 'proto=rdma' ||
		fail "vers=$1: not over RDMA: $(grep " $MNT " /proc/mounts)"
	[ "$(ulp_kernel_qps | grep -c 'type RC state RTS')" -ge 2 ] ||
		fail "vers=$1: no QPs of the client and nfsd on $ULP_DEV: $(ulp_kernel_qps)"
}

nfs_umount() {
	timeout "$(bound 120)" umount "$MNT" || {
		umount -f "$MNT" 2>/dev/null || umount -l "$MNT"
		return 1
	}
}

# check_files WHAT: every file under $MNT as $SRC has it, read buffered and
# read with O_DIRECT.
check_files() {
	(cd "$MNT" && timeout "$(bound 300)" sha256sum -c --quiet "$SRC/SHA256SUMS") ||
		fail "$1: the files read back differ"
	for f in $FILES; do
		timeout "$(bound 120)" dd if="$MNT/$f" of=/tmp/nfs-direct bs=1M iflag=direct status=none ||
			ulp_fail "$1: O_DIRECT read of $f"
		cmp "$SRC/$f" /tmp/nfs-direct || fail "$1: $f read with O_DIRECT differs"
	done
	info "$1: $(echo $FILES | wc -w) files read back (buffered and O_DIRECT): equal"
}

teardown() {
	problems=
	if nfs_mounted; then
		nfs_umount || problems="$problems; umount $MNT hung"
	fi
	if [ -e /proc/fs/nfsd/threads ]; then
		timeout "$(bound 60)" rpc.nfsd 0 > /dev/null 2>&1 ||
			echo 0 > /proc/fs/nfsd/threads || problems="$problems; stopping nfsd"
		timeout "$(bound 30)" exportfs -ua 2>/dev/null
	fi
	for p in $pids; do
		kill "$p" 2>/dev/null
		timeout 5 sh -c "while kill -0 $p 2>/dev/null; do sleep 0.1; done" || kill -KILL "$p"
	done
	pids=
	grep -q ' /proc/fs/nfsd nfsd ' /proc/mounts && umount /proc/fs/nfsd
	# The client's transports go away in the background: a few tries.
	ulp_wait 30 sh -c "modprobe -r $MODULES 2>/dev/null; ! grep -qE '^($(echo $MODULES | tr ' ' '|')) ' /proc/modules" ||
		problems="$problems; modprobe -r: $(modprobe -r $MODULES 2>&1 | head -n 1)"
	left=$(ulp_modules_gone $MODULES) || problems="$problems; $left"
	ulp_teardown_end "$1" "$problems"
}
trap 'rc=$?; trap - EXIT; teardown 0; exit $rc' EXIT

for t in rpc.nfsd rpc.mountd exportfs rpcbind mount.nfs; do
	command -v $t > /dev/null || skip "$t is not installed (nfs-kernel-server, rpcbind: scripts/deps.sh)"
done
ulp_dev_up
timeout "$(bound 60)" modprobe -a nfsd rpcrdma nfs nfsv3 nfsv4 || fail "modprobe nfsd rpcrdma nfs"

# The server.
ulp_tmpfs "$WORK" 96
mkdir "$EXPORT" "$MNT" "$SRC" || fail "mkdir"
chmod 0777 "$EXPORT"
grep -q ' /proc/fs/nfsd nfsd ' /proc/mounts || mount -t nfsd nfsd /proc/fs/nfsd ||
	fail "mount nfsd"
mkdir -p /run/rpcbind
started rpcbind rpcbind -f
ulp_wait 10 sh -c 'rpcinfo -p 127.0.0.1 > /dev/null 2>&1' || fail "rpcbind does not answer"
# An NFSv4 server starts in a grace period (90 s by default) in which it
# refuses new OPENs: as short as it can be.
echo 10 > /proc/fs/nfsd/nfsv4leasetime && echo 10 > /proc/fs/nfsd/nfsv4gracetime ||
	info "could not shorten the NFSv4 lease and grace times"
# fsid=0: the export is NFSv4's root; a pseudo root from / down would have
# to go through the guest's overlayfs, which nfsd cannot export.
timeout "$(bound 30)" exportfs -i -o rw,sync,no_root_squash,insecure,no_subtree_check,fsid=0 \
	"$ULP_IP/24:$EXPORT" || fail "exportfs"
started mountd rpc.mountd -F
ulp_wait 10 sh -c 'rpcinfo -p 127.0.0.1 | grep -q mountd' || fail "rpc.mountd: $(cat /tmp/nfs-mountd.log)"
timeout "$(bound 60)" rpc.nfsd 4 > /tmp/nfs-nfsd.log 2>&1 || fail "rpc.nfsd: $(cat /tmp/nfs-nfsd.log)"
echo "rdma 20049" > /proc/fs/nfsd/portlist ||
	ulp_fail "nfsd does not listen on RDMA port 20049"
grep -q '^rdma 20049' /proc/fs/nfsd/portlist ||
	fail "no rdma listener in /proc/fs/nfsd/portlist: $(cat /proc/fs/nfsd/portlist | tr '\n' ' ')"
info "server: nfsd $(cat /proc/fs/nfsd/threads) threads, versions $(cat /proc/fs/nfsd/versions)," \
	"listening on $(tr '\n' ' ' < /proc/fs/nfsd/portlist)"

# The files, with their checksums.
FILES=
for size in 1 4096 100000 1048576 1048577 3158067 8388608; do
	ulp_random "$SRC/f$size" "$size"
	FILES="$FILES f$size"
done
(cd "$SRC" && sha256sum $FILES > SHA256SUMS) || fail "sha256sum"

# NFSv4.2: write.
nfs_mount 4.2
info "vers=4.2 mounted: $(grep " $MNT " /proc/mounts | grep -o 'rsize=[0-9]*,wsize=[0-9]*')," \
	"$(ulp_kernel_qps | grep -c .) kernel QPs on $ULP_DEV"
for f in $FILES; do
	timeout "$(bound 120)" cp "$SRC/$f" "$MNT/$f" || ulp_fail "writing $f over NFS"
done
timeout "$(bound 120)" sync || ulp_fail "sync"
nfs_umount || ulp_fail "umount after writing"
(cd "$EXPORT" && sha256sum -c --quiet "$SRC/SHA256SUMS") || fail "the server's copies differ"
info "vers=4.2: $(echo $FILES | wc -w) files ($(du -sk "$SRC" | cut -f1) KiB) written; the server has them"

# Read back, cold.
echo 3 > /proc/sys/vm/drop_caches
nfs_mount 4.2
check_files "vers=4.2"
nfs_umount || ulp_fail "umount"
echo 3 > /proc/sys/vm/drop_caches
nfs_mount 3
check_files "vers=3"
nfs_umount || ulp_fail "umount"

trap - EXIT
teardown 1
info "unmounted, nfsd stopped, $MODULES unloaded, no QP left"
