#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# UD multicast: unmodified mckey over rdma_cm across a veth pair between
# softrma (in namespace nss) and rdma_rxe (in init_net), each way; then
# verbs/mcast.c, a kselftest_harness.h test (attach, delivery to every
# member, detach, Q_Key, the rules and limits, the IP group on the netdev)
# whose cases each run on the local transport (variant "local") and with
# every datagram a RoCEv2 packet (variant "wire": it sets force_wire), one
# TAP line each, and mckey with receiver and sender on that device.
. "$(dirname "$0")/../lib.sh"

modprobe rdma_ucm || fail "modprobe rdma_ucm"
# mckey_pair RECEIVER_NETNS SENDER_NETNS BIND_R BIND_S GROUP: 10 messages
# from an mckey sender to an mckey receiver; false, with the reason in
# $why, when they do not all arrive.
mckey_pair() {
	$1 timeout "$(bound 60)" stdbuf -oL mckey -m "$5" -b "$3" -C 10 > /tmp/mrecv.log 2>&1 &
	r=$!
	wait_line /tmp/mrecv.log "receiving data transfers"
	if ! $2 timeout "$(bound 60)" mckey -m "$5" -b "$4" -s -C 10 > /tmp/msend.log 2>&1; then
		kill_tree "$r"
		why="sender: $(cat /tmp/msend.log)"
		return 1
	fi
	wait "$r" && grep -q "data transfers complete" /tmp/mrecv.log && return 0
	why="receiver: $(cat /tmp/mrecv.log)"
	return 1
}

load_softrma
# From rdma_rxe to softrma.  rxe 6.12 sometimes completes multicast sends
# without a packet going out (its sent_pkts stays); only then is the
# direction left unverified.
softrma_rxe_pair 10.14.0
sent=$(port_counter rxer sent_pkts)
if mckey_pair "ip netns exec nss" "" 10.14.0.1 10.14.0.2 239.1.2.7; then
	info "mckey: rdma_rxe sends, softrma receives"
elif [ "$(port_counter rxer sent_pkts)" -lt "$((sent + 10))" ]; then
	info "rdma_rxe to softrma not verified: rxe completed its sends but transmitted $(($(port_counter rxer sent_pkts) - sent)) packets"
else
	fail "mckey, rdma_rxe to softrma: $why"
fi
capture_start vr 10
mckey_pair "" "ip netns exec nss" 10.14.0.2 10.14.0.1 239.1.2.6 ||
	fail "mckey, softrma to rdma_rxe: $why"
capture_check
info "mckey: softrma sends, rdma_rxe receives"
softrma_rxe_unpair

add_softrma0
SOFTRMA_DEV=softrma0 SOFTRMA_IPV4=10.9.0.1 "$SOFTRMA_BIN/mcast" || fail "mcast"

mckey_pair "" "" 10.9.0.1 10.9.0.1 239.1.2.5 || fail "mckey on softrma0: $why"
info "mckey: 10 messages from a sender to a receiver on softrma0"
ip maddr show dev d0 | grep -q 239.1.2 && fail "an IP group is left on d0"
rdma link delete softrma0 || fail "rdma link delete softrma0"

