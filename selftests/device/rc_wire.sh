#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# RC and UC as RoCEv2 packets on one host: with force_wire=1 every
# connected QP speaks to its peer in packets (through lo), so unmodified
# tools run over the wire transport: ibv_rc_pingpong (over IPv4 and over
# IPv6, every captured packet of the IPv6 run an IPv6 one), ibv_srq_pingpong,
# ibv_uc_pingpong, perftest (several QPs, both directions) and rping -V
# over rdma_cm.  The packets' ICRCs are checked on the way.  The responder
# sends one ACK for the requests of a receive batch that asked for one.
# verbs/rc_ops and verbs/ext_api run in packets in their own "wire"
# variants (rc_ops.sh, ext_api.sh).
. "$(dirname "$0")/../lib.sh"

load_softrma
echo 1 > /sys/module/softrma/parameters/force_wire || fail "no force_wire parameter"
modprobe rdma_ucm || fail "modprobe rdma_ucm"
add_softrma0

capture_start lo 100
pair "ibv_rc_pingpong -s 65536" "ibv_rc_pingpong -d softrma0 -g 1 -n 100 -s 65536"
capture_check
ip -6 addr add fd00:9::1/64 dev d0 nodad || fail "IPv6 address on d0"
wait_gid softrma0 "fd00:9::1, RoCE v2" || fail "no IPv6 GID"
capture_start lo 100
pair "ibv_rc_pingpong -c over IPv6" \
	"ibv_rc_pingpong -d softrma0 -g $(gid_index softrma0 fd00:9::1) -n 100 -s 65536 -c"
capture_check
expect_eq "IPv6 packets of the 100 captured" "$(grep -c '^6 ' /tmp/capture.txt)" 100
pair "ibv_srq_pingpong" "ibv_srq_pingpong -d softrma0 -g 1 -n 200 -q 4"
pair "ibv_uc_pingpong" "ibv_uc_pingpong -d softrma0 -g 1 -n 500"
for t in ib_write_bw ib_read_bw ib_send_bw ib_atomic_bw; do
	pair "$t -q 4" "timeout $(bound 120) $t -d softrma0 -x 1 -n 500 -q 4 $(ack_timeout)"
done
pair "ib_write_bw -b" "timeout $(bound 120) ib_write_bw -d softrma0 -x 1 -n 500 -b $(ack_timeout)"
pair "ib_write_lat" "timeout $(bound 120) ib_write_lat -d softrma0 -x 1 -n 500 $(ack_timeout)"
# A doorbell sends a post list of 16 SENDs, then processes what came back:
# one batch of 16 requests that each ask for an ACK (-Q 1: each is
# signalled), and one ACK answers.
acks=$(port_counter softrma0 coalesced_acks)
pair "ib_send_bw -l 16" "timeout $(bound 120) ib_send_bw -d softrma0 -x 1 -s 64 -n 1600 -l 16 -Q 1 $(ack_timeout)"
[ "$(port_counter softrma0 coalesced_acks)" -ge $((${acks:-0} + 800)) ] ||
	fail "ACKs coalesced over 1600 SENDs in lists of 16: $(port_counter softrma0 coalesced_acks), ${acks:-none} before"
pair "rping -V" "rping -s -a 10.9.0.1 -V -C 20 -S 65000" "rping -c -a 10.9.0.1 -V -C 20 -S 65000"

sent=$(port_counter softrma0 sent_pkts)
[ "${sent:-0}" -ge 100000 ] || fail "only $sent packets sent: was the wire used?"
info "$(rdma statistic show link softrma0/1)"
echo 0 > /sys/module/softrma/parameters/force_wire
