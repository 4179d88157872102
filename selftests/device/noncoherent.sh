#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The non-coherent checking device (Documentation/noncoherent.md) and
# softrmadv_sync_mr(), through verbs/noncoherent.c on both transports: on
# softrma0 in normal mode the sync's refusals and data that needs no sync;
# then in checking mode every device access path with the syncs uDAPL
# requires, without each, and the reports that name the range.  The mode is
# off by default and changes only while the device has no MR.  Unmodified
# programs that never sync run to the end on a checking device and leave
# reports.
. "$(dirname "$0")/../lib.sh"

t=/sys/kernel/tracing
[ -d $t/events ] || mount -t tracefs nodev $t 2>/dev/null || skip "no tracefs"
add_softrma0
nc=/sys/class/infiniband/softrma0/noncoherent
run() { SOFTRMA_DEV=softrma0 SOFTRMA_IPV4=10.9.0.1 "$SOFTRMA_BIN/noncoherent" "$@"; }
counters() {
	echo "to_device=$(port_counter softrma0 missing_sync_to_device)" \
	     "to_cpu=$(port_counter softrma0 missing_sync_to_cpu)"
}

expect_eq "noncoherent by default" "$(cat $nc)" 0
run -t sync_bad_input -t coherent -t mode_fixed || fail "normal mode"
expect_eq "reports in normal mode" "$(counters)" "to_device=0 to_cpu=0"
echo 2 > $nc 2>/dev/null && fail "noncoherent took 2"
echo 1 > $nc || fail "cannot turn checking mode on"
expect_eq "noncoherent" "$(cat $nc)" 1
run || fail "checking mode"
info "after noncoherent: $(counters)"

# Programs written for coherent devices: they end, and leave reports.
before=$(port_counter softrma0 missing_sync_to_cpu)
pair "ibv_rc_pingpong" "ibv_rc_pingpong -d softrma0 -g 1 -n 100"
pair "ib_write_bw" "ib_write_bw -d softrma0 -x 1 -n 200 -s 4096"
[ "$(port_counter softrma0 missing_sync_to_cpu)" -gt "$before" ] ||
	fail "ib_write_bw's and ibv_rc_pingpong's receives were not reported"
info "after ibv_rc_pingpong and ib_write_bw: $(counters)"

echo 0 > $nc || fail "cannot turn checking mode off once the MRs are gone"
rdma link delete softrma0 || fail "rdma link delete softrma0"
