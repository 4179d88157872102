# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Helpers for the tests that run the kernel's own RDMA consumers (ULPs) over
# an RDMA device: device/nvme_rdma.sh, nfs_rdma.sh, iser.sh, srp.sh.
# Sourced after lib.sh.
#
# The device under test is softrma0 on dummy d0 (10.9.0.1/24), as
# add_softrma0 makes it.  With ULP_DEV_TYPE=rxe in the environment, or "rxe"
# as the test's first argument, it is rdma_rxe's rxe0 on the same d0 and
# address instead: a device that has every verb these consumers use, to
# check the tests themselves.  selftests/vm/run passes no environment to the
# guest, so there it is e.g.
#   selftests/vm/run -- env ULP_DEV_TYPE=rxe sh selftests/run_tests.sh device/nvme_rdma.sh
#
# The initiators register memory with fast registration (IB_WR_REG_MR on MRs
# from ib_alloc_mr()): nvme-rdma, xprtrdma (the NFS client) and ib_iser refuse
# a device that does not advertise IB_DEVICE_MEM_MGT_EXTENSIONS ("Memory
# registrations not supported", "'frwr' mode is not supported by device",
# "IB device does not support memory registrations"); ib_srp falls back to
# the PD's unsafe global rkey.  The targets (nvmet-rdma, svcrdma, ib_isert,
# ib_srpt) use the rdma_rw API, which on RoCE registers nothing.

ULP_DEV_TYPE=${1:-${ULP_DEV_TYPE:-softrma}}
ULP_IP=10.9.0.1
ULP_DEV=

# ulp_dev_up: the device under test ($ULP_DEV) up on d0 with $ULP_IP, its
# IPv4 GID in the table.
ulp_dev_up() {
	ulp_klog_mark
	case $ULP_DEV_TYPE in
	softrma)
		add_softrma0
		ULP_DEV=softrma0 ;;
	rxe)
		grep -q '^softrma ' /proc/modules &&
			info "softrma is loaded too: its devices stay, rxe0 is on d0"
		modprobe rdma_rxe || fail "modprobe rdma_rxe"
		add_dummy d0 "$ULP_IP/24"
		rdma link add rxe0 type rxe netdev d0 || fail "rdma link add rxe0"
		wait_gid rxe0 "::ffff:$ULP_IP" || fail "no GID on rxe0"
		ULP_DEV=rxe0 ;;
	*)
		fail "ULP_DEV_TYPE is softrma or rxe, not '$ULP_DEV_TYPE'" ;;
	esac
	if ibv_devinfo -v -d "$ULP_DEV" | grep -q MEM_MGT_EXTENSIONS; then
		ULP_FRWR=yes
		info "device under test: $ULP_DEV (fast registration: advertised)"
	else
		ULP_FRWR=no
		info "device under test: $ULP_DEV (fast registration: NOT advertised)"
	fi
}

# ulp_dev_down: remove what ulp_dev_up made that the runner does not remove
# itself (run_tests.sh deletes softrma's links, unloads softrma and deletes
# dummies).  Returns non-zero when the device cannot be removed.
ulp_dev_down() {
	[ "$ULP_DEV_TYPE" = rxe ] || return 0
	if [ -e /sys/class/infiniband/rxe0 ]; then
		timeout "$(bound 60)" rdma link delete rxe0 || return 1
	fi
	ip link del d0 2>/dev/null
	timeout "$(bound 60)" modprobe -r rdma_rxe
}

# ulp_teardown_end STRICT PROBLEMS: how every ULP test's teardown ends: no
# kernel QP left on the device, the test's tmpfs ($WORK) unmounted, the
# device removed; with STRICT=1, PROBLEMS and what goes wrong here fail the
# test.
ulp_teardown_end() {
	problems=$2
	[ -z "$ULP_DEV" ] || [ -z "$(ulp_kernel_qps)" ] ||
		problems="$problems; QPs left on $ULP_DEV: $(ulp_kernel_qps)"
	mountpoint -q "$WORK" && umount "$WORK"
	ulp_dev_down || problems="$problems; removing $ULP_DEV"
	[ "$1" = 0 ] || [ -z "$problems" ] || fail "teardown${problems}"
}

# ulp_kernel_qps: the QPs on the device under test that kernel consumers
# created (all but ib_core's own GSI QP), one line each.
ulp_kernel_qps() {
	rdma resource show qp link "$ULP_DEV/1" 2>/dev/null | grep -v 'comm \[ib_core\]'
}

# ulp_klog_mark / ulp_klog: the kernel log since the mark.
ulp_klog_mark() {
	ulp_klog_from=$(dmesg | wc -l)
}
ulp_klog() {
	dmesg | tail -n "+$((ulp_klog_from + 1))"
}

# ulp_fail WHAT: fail, with the kernel log since the mark, and why this is
# expected on a device without fast registration.
ulp_fail() {
	echo "# kernel log since the test began (last 15 lines):"
	ulp_klog | tail -n 15 | sed 's/^/#   /'
	if [ "$ULP_FRWR" = no ]; then
		fail "$1 (expected: $ULP_DEV does not advertise fast registration, IB_DEVICE_MEM_MGT_EXTENSIONS)"
	fi
	fail "$1"
}

# ulp_modules_gone MODULE...: none of MODULE is loaded (prints those that are).
ulp_modules_gone() {
	left=
	for m in "$@"; do
		grep -q "^$m " /proc/modules && left="$left $m"
	done
	[ -z "$left" ] || { echo "still loaded:$left"; return 1; }
}

# ulp_tmpfs DIR MB: a fresh tmpfs of MB MiB on DIR (data that the guest's
# memory keeps for the test to compare).
ulp_tmpfs() {
	mkdir -p "$1" || fail "mkdir $1"
	mount -t tmpfs -o "size=${2}m" ulp "$1" || fail "mount tmpfs on $1"
}

# ulp_random FILE BYTES: a file of BYTES random bytes.
ulp_random() {
	head -c "$2" /dev/urandom > "$1" || fail "random data into $1"
}

# ulp_wait SECONDS CMD...: CMD until it succeeds, at most SECONDS (made
# longer on a slow kernel), polling every 0.2 s.
ulp_wait() {
	end=$(($(date +%s) + $(bound "$1"))); shift
	until "$@"; do
		[ "$(date +%s)" -lt "$end" ] || return 1
		sleep 0.2
	done
}

# ulp_configfs: configfs mounted on /sys/kernel/config.
ulp_configfs() {
	modprobe configfs 2>/dev/null
	grep -q ' /sys/kernel/config configfs ' /proc/mounts ||
		mount -t configfs configfs /sys/kernel/config || fail "mount configfs"
}

# ulp_check_block DEV FILE: data through the block device DEV of a remote
# LUN or namespace whose target keeps it in FILE (at the same offsets), at
# least 48 MiB:
#  - fio writes, then reads back and checks each block's crc32c, with 4k,
#    32k, 128k and 1m blocks at queue depth 8 (so multi-page registrations),
#    each block size on a region of its own in the first 28 MiB;
#  - 6 MiB of random data written at 40 MiB with O_DIRECT in 512k blocks is
#    compared with FILE (the target really stored it; "-" for a target on
#    another host), then read back with O_DIRECT in 256k blocks and compared
#    again.
ulp_check_block() {
	off=0
	for job in 4k:4 32k:8 128k:8 1m:8; do
		bs=${job%:*} mb=${job#*:}
		timeout "$(bound 300)" fio --name="verify-$bs" --filename="$1" \
			--ioengine=libaio --direct=1 --iodepth=8 --rw=randwrite --bs="$bs" \
			--offset="${off}M" --size="${mb}M" --verify=crc32c --do_verify=1 \
			--verify_fatal=1 --exitall_on_error > "/tmp/fio-$bs.log" 2>&1 ||
			ulp_fail "fio bs=$bs on $1: $(grep -iE 'error|verify|bad' "/tmp/fio-$bs.log" |
				head -n 3 | tr '\n' ' ')"
		info "fio bs=$bs: ${mb} MiB written and verified at ${off} MiB:$(grep -E '^ +(WRITE|READ):' \
			"/tmp/fio-$bs.log" | sed 's/,.*//' | tr -s ' ' | tr '\n' ';')"
		off=$((off + mb))
	done

	ulp_random /tmp/ulp-pattern $((6 << 20))
	at=40	# MiB
	timeout "$(bound 120)" dd if=/tmp/ulp-pattern of="$1" bs=512k seek=$((at * 2)) \
		oflag=direct conv=fsync status=none || ulp_fail "dd to $1"
	[ "$2" = - ] || cmp -n $((6 << 20)) /tmp/ulp-pattern "$2" 0 $((at << 20)) ||
		fail "the target's $2 differs from what was written to $1"
	timeout "$(bound 120)" dd if="$1" of=/tmp/ulp-back bs=256k skip=$((at * 4)) count=24 \
		iflag=direct status=none || ulp_fail "dd from $1"
	cmp /tmp/ulp-pattern /tmp/ulp-back || fail "read back from $1: differs"
	rm -f /tmp/ulp-pattern /tmp/ulp-back
	where=" found in the target's file,"
	[ "$2" != - ] || where=
	info "6 MiB of random data: written,$where read back: equal"
}
