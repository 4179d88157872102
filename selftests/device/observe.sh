#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# What an administrator sees.  Tracepoints: verbs/rc_ops' cases run in
# packets (its variant "wire") while events/softrma/ records, and the trace
# must show the QPs going RESET -> INIT -> RTR -> RTS and to ERR, as many
# MR deregistrations as registrations, a remote access NAK sent and the same
# NAK received, an ACK timeout and a rewind (the QP whose peer is not
# there), and exactly one drop event for every drop each port counter
# counted.  Resource details: while ib_write_bw runs in packets,
# "rdma resource show qp -dd" shows its QPs' transport and PSNs,
# "rdma resource show mr -dd" its MR's pinned pages and "rdma resource show
# cq -dd" its CQs' rings, and the MAD layer's CQ (armed by ib_core after
# every poll) shows "armed next" and nothing held; a user without
# CAP_NET_ADMIN sees neither the PSNs nor the MR's iova.  Then the local
# transport's counters move by what ibv_rc_pingpong sends.
. "$(dirname "$0")/../lib.sh"

add_softrma0
echo 1 > /sys/module/softrma/parameters/force_wire || fail "no force_wire parameter"
t=/sys/kernel/tracing
[ -d $t/events ] || mount -t tracefs nodev $t 2>/dev/null || skip "no tracefs"
[ -d $t/events/softrma ] || fail "no softrma events in tracefs"

drops="send_err rcvd_icrc_err rcvd_malformed rcvd_no_qp rcvd_dropped out_of_seq_request"
for c in $drops; do eval "before_$c=$(port_counter softrma0 $c)"; done
echo 0 > $t/tracing_on
echo > $t/trace
echo 16384 > $t/buffer_size_kb
echo 1 > $t/events/softrma/enable
echo 1 > $t/tracing_on
SOFTRMA_DEV=softrma0 SOFTRMA_IPV4=10.9.0.1 "$SOFTRMA_BIN/rc_ops" -v wire > /tmp/rc_ops.log 2>&1 ||
	fail "rc_ops in packets: $(grep '^not ok' /tmp/rc_ops.log | head -n 3)"
echo 0 > $t/tracing_on
echo 0 > $t/events/softrma/enable
cat $t/trace > /tmp/trace.txt
for s in $t/per_cpu/cpu*/stats; do
	grep -q '^overrun: 0$' "$s" || fail "the trace buffer overran ($s)"
done

events() { grep -c "$1" /tmp/trace.txt; }
for change in "RESET -> INIT" "INIT -> RTR" "RTR -> RTS" "RTS -> ERR"; do
	[ "$(events "softrma_qp_state: dev=softrma0 .*$change")" -gt 0 ] ||
		fail "no QP state change $change traced"
done
reg=$(events "softrma_mr_reg: dev=softrma0")
dereg=$(events "softrma_mr_dereg: dev=softrma0")
[ "$reg" -gt 0 ] && [ "$reg" = "$dereg" ] ||
	fail "$reg MR registrations and $dereg deregistrations traced"
for dir in sent received; do
	[ "$(events "softrma_nak: dev=softrma0 .* $dir .* syndrome=0x62")" -gt 0 ] ||
		fail "no remote access NAK $dir traced"
done
[ "$(events "softrma_ack_timeout: dev=softrma0")" -gt 0 ] || fail "no ACK timeout traced"
[ "$(events "softrma_rewind: dev=softrma0")" -gt 0 ] || fail "no rewind traced"
for c in $drops; do
	eval "counted=\$(($(port_counter softrma0 $c) - before_$c))"
	expect_eq "drop events for $c" "$(events "softrma_drop: dev=softrma0 reason=$c\$")" "$counted"
done
for e in qp_state nak drop; do
	info "$(grep -m 1 "softrma_$e: " /tmp/trace.txt | sed 's/^ *//')"
done
info "traced: $reg MR registrations, $(events softrma_qp_state) QP state changes, $(events softrma_nak) NAKs, $(events softrma_drop) drops, all counted ones"

ib_write_bw -d softrma0 -x 1 -D 20 > /tmp/server.log 2>&1 &
spid=$!
sleep 1
ib_write_bw -d softrma0 -x 1 -D 20 10.9.0.1 > /tmp/client.log 2>&1 &
cpid=$!
ok=
for _ in $(seq 30); do
	sleep 1
	rdma resource show qp -dd 2>/dev/null | grep "comm ib_write_bw" > /tmp/qps.txt
	[ "$(grep -c "transport wire .*send_psn [0-9]* .*expected_psn [0-9]" /tmp/qps.txt)" = 2 ] &&
		ok=1 && break
done
rdma resource show mr -dd 2>/dev/null | grep "comm ib_write_bw" > /tmp/mrs.txt
rdma resource show cq -dd 2>/dev/null | grep "comm ib_write_bw" > /tmp/cqs.txt
for what in qp mr; do
	setpriv --reuid=65534 --regid=65534 --clear-groups \
		rdma resource show $what -dd 2>&1 | grep "comm ib_write_bw" > /tmp/${what}s_user.txt
done
wait "$spid" "$cpid"
[ -n "$ok" ] || fail "rdma resource show qp -dd: $(cat /tmp/qps.txt)"
grep -q "pinned_pages [1-9].* drv_iova 0x" /tmp/mrs.txt || fail "rdma resource show mr -dd: $(cat /tmp/mrs.txt)"
[ "$(grep -c "transport wire .*window" /tmp/qps_user.txt)" = 2 ] &&
	! grep -Eq "_psn|drv_msn" /tmp/qps_user.txt ||
	fail "rdma resource show qp -dd as nobody: $(cat /tmp/qps_user.txt)"
grep -q "pinned_pages [1-9]" /tmp/mrs_user.txt && ! grep -q "iova" /tmp/mrs_user.txt ||
	fail "rdma resource show mr -dd as nobody: $(cat /tmp/mrs_user.txt)"
info "as nobody: $(head -n 1 /tmp/qps_user.txt)"
info "as nobody: $(head -n 1 /tmp/mrs_user.txt)"
[ "$(grep -Ec "drv_ring_entries [1-9][0-9]* drv_produced [0-9]+ drv_held [0-9]+ drv_armed (no|next|solicited) drv_overflowed no" /tmp/cqs.txt)" -ge 2 ] &&
	grep -q "drv_produced [1-9]" /tmp/cqs.txt ||
	fail "rdma resource show cq -dd: $(cat /tmp/cqs.txt)"
mad_cq=$(rdma resource show cq dev softrma0 -dd | grep 'comm \[ib_core\]' | head -n 1)
case $mad_cq in
*" drv_held 0 drv_armed next drv_overflowed no"*) ;;
*) fail "the MAD layer's CQ: $mad_cq" ;;
esac
info "$(head -n 1 /tmp/qps.txt)"
info "$(head -n 1 /tmp/mrs.txt)"
info "$(head -n 1 /tmp/cqs.txt)"
info "$mad_cq"

# Counters of the local transport: ibv_rc_pingpong's 2 x 100 SENDs of
# 1000 bytes between two QPs of softrma0, each counted once as sent and once
# as received, and no packet.
echo 0 > /sys/module/softrma/parameters/force_wire
gid=$(gid_index softrma0 10.9.0.1)
counters="local_sent_msgs local_rcvd_msgs local_sent_bytes local_rcvd_bytes sent_pkts"
for c in $counters; do eval "before_$c=$(port_counter softrma0 $c)"; done
pair "ibv_rc_pingpong" "ibv_rc_pingpong -d softrma0 -g $gid -n 100 -s 1000" \
	"ibv_rc_pingpong -d softrma0 -g $gid -n 100 -s 1000 10.9.0.1"
for want in local_sent_msgs:200 local_rcvd_msgs:200 local_sent_bytes:200000 \
	    local_rcvd_bytes:200000 sent_pkts:0; do
	c=${want%:*}
	eval "moved=\$(($(port_counter softrma0 $c) - before_$c))"
	expect_eq "$c after ibv_rc_pingpong on the local transport" "$moved" "${want#*:}"
done
info "local transport: $(rdma statistic show link softrma0/1 | grep -o 'local_[a-z_]* [0-9]*' | tr '\n' ' ')"
