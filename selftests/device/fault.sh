#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Fault injection (kernel/fault.c) and what an application sees of each
# knob: verbs/fault.c's create (a failed creation of every object type),
# wc (an injected error completion, on the local transport and on the
# wire), events (QP, port and device events), race (an injected QP error
# racing modify_qp: the error stays), packets (2% loss, 2%
# corruption, 5% duplicates, which put QPs of one host on packets: every
# byte still in place) and reorder (10% reordered, 5% delayed by 20 ms), and
# the counters behind them.  Only root may inject: an unprivileged user's
# write is refused.
. "$(dirname "$0")/../lib.sh"

add_softrma0
sys=/sys/class/infiniband/softrma0
run() { SOFTRMA_DEV=softrma0 SOFTRMA_IPV4=10.9.0.1 "$SOFTRMA_BIN/fault" "$@"; }

run create || fail "create"
run wc || fail "wc, local transport"
run events || fail "events"
run race || fail "qp_fatal racing modify_qp"
before_icrc=$(port_counter softrma0 rcvd_icrc_err)
before_dup=$(port_counter softrma0 duplicate_request)
before_retrans=$(port_counter softrma0 retrans_pkts)
before_local=$(port_counter softrma0 local_sent_msgs)
run packets || fail "packets"
[ "$(port_counter softrma0 local_sent_msgs)" -eq "$before_local" ] ||
	fail "packet faults set, yet the local transport carried messages"
icrc=$(($(port_counter softrma0 rcvd_icrc_err) - before_icrc))
dup=$(($(port_counter softrma0 duplicate_request) - before_dup))
retrans=$(($(port_counter softrma0 retrans_pkts) - before_retrans))
info "packets: $icrc ICRC errors, $dup duplicate requests, $retrans retransmitted"
if [ "$icrc" -eq 0 ] || [ "$dup" -eq 0 ] || [ "$retrans" -eq 0 ]; then
	fail "the packet faults left no trace in the counters"
fi
before_oos=$(port_counter softrma0 out_of_seq_request)
before_local=$(port_counter softrma0 local_sent_msgs)
run reorder || fail "reorder"
[ "$(port_counter softrma0 local_sent_msgs)" -eq "$before_local" ] ||
	fail "packet faults set, yet the local transport carried messages"
info "reorder: $(($(port_counter softrma0 out_of_seq_request) - before_oos)) requests out of sequence"
echo 1 > /sys/module/softrma/parameters/force_wire || fail "no force_wire parameter"
trap 'echo 0 > /sys/module/softrma/parameters/force_wire' EXIT
run wc || fail "wc, wire"
injected=$(port_counter softrma0 injected_faults)
info "injected_faults: $injected"
[ "$injected" -gt 20 ] || fail "injected_faults $injected"

for attr in fault_drop fault_delay fault_reorder fault_fail_create fault_event \
	fault_wc_status; do
	as_user 65534 sh -c "echo 'qp 1' > $sys/$attr" 2>/dev/null &&
		fail "an unprivileged user wrote $attr"
done
grep -q '^qp 0$' "$sys/fault_fail_create" || fail "fault_fail_create: $(cat "$sys/fault_fail_create")"
info "an unprivileged user cannot inject"
