#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Guest side of selftests/wire/pair: NVMe over Fabrics on RDMA between
# softrma (guest a) and rdma_rxe (guest b; softrma as well with
# PEER=softrma), the target (nvmet-rdma, a 64 MiB namespace on a tmpfs file)
# on a and the host (nvme-rdma) on b, then the other way round.  The host
# checks data with ulp_check_block (fio crc32c verify from 4k to 1m blocks,
# random data written and read back).  Its pages are fast registrations
# (IB_WR_REG_MR) the target's RDMA READs and WRITEs go to, and it asks for
# remote invalidation: the target answers with SEND with invalidate
# (SEND_ONLY_INV, an IETH), so each side's invalidation meets the other's.
. "$(dirname "$0")/../lib.sh"
role=$1
set --
. "$SOFTRMA_TOP/selftests/ulp.sh"
. "$SOFTRMA_TOP/selftests/nvme.sh"

WORK=/tmp/ulp-nvme
NS_MB=64

wire_up "$role"
wire_dev_up "$role"
ULP_DEV=dev0
nvme_modules

teardown() {
	problems=$(nvme_host_down; nvme_target_down; nvme_modules_down)
	mountpoint -q "$WORK" && umount "$WORK"
	[ -z "$(ulp_kernel_qps)" ] || problems="$problems; QPs left: $(ulp_kernel_qps)"
	[ "$1" = 0 ] || [ -z "$problems" ] || fail "teardown: $(echo $problems)"
}
trap 'rc=$?; trap - EXIT; teardown 0; exit $rc' EXIT

# The target's RDMA/CM connections of hosts.
host_connected() {
	rdma resource show cm_id 2>/dev/null | grep 'comm \[nvmet_rdma\]' |
		grep -q 'state CONNECT'
}

host_gone() { ! host_connected; }

# target_turn: serve $NQN until the host on the other guest came and went.
target_turn() {
	ulp_tmpfs "$WORK" $((NS_MB + 8))
	truncate -s "${NS_MB}M" "$WORK/ns1.img" || fail "truncate"
	nvme_target_up "$WIRE_ME" "$WORK/ns1.img"
	ulp_wait 300 host_connected || fail "$me target: no host came"
	ulp_wait 600 host_gone || fail "$me target: the host did not leave"
	problems=$(nvme_target_down)
	[ -z "$problems" ] || fail "$me target: $problems"
	umount "$WORK"
	info "$me target: served the host on $WIRE_PEER"
}

host_turn() {
	nvme_host_up "$WIRE_PEER"
	expect_eq "$dev size" "$(blockdev --getsize64 "$dev")" $((NS_MB << 20))
	ulp_check_block "$dev" -
	problems=$(nvme_host_down)
	[ -z "$problems" ] || fail "$me host: $problems"
	info "$me host: data verified on the target on $WIRE_PEER, disconnected"
}

if [ "$role" = a ]; then
	target_turn
	host_turn
else
	host_turn
	target_turn
fi
trap - EXIT
teardown 1
if [ "$me" = softrma ]; then
	info "$(rdma statistic show link dev0/1)"
fi
