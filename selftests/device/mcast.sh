#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# UD multicast: verbs/mcast (attach, delivery to every member, detach, Q_Key,
# the rules and limits, the IP group on the netdev) on the local device and
# with force_wire; unmodified mckey over rdma_cm, receiver and sender on
# one host; then, where rdma_rxe is loadable, mckey across a veth pair
# between softrma (in namespace nsm) and rdma_rxe (in init_net), each way.
. "$(dirname "$0")/../lib.sh"

modprobe rdma_ucm || fail "modprobe rdma_ucm"
add_softrma0
"$SOFTRMA_BIN/mcast" softrma0 10.9.0.1 239.1.2.3 || fail "mcast"
echo 1 > /sys/module/softrma/parameters/force_wire
"$SOFTRMA_BIN/mcast" softrma0 10.9.0.1 239.1.2.4
rc=$?
echo 0 > /sys/module/softrma/parameters/force_wire
[ $rc = 0 ] || fail "mcast with force_wire"

# mckey RECEIVER_NETNS SENDER_NETNS BIND_R BIND_S GROUP: 10 messages.
mckey_pair() {
	$1 timeout 60 stdbuf -oL mckey -m "$5" -b "$3" -C 10 > /tmp/mrecv.log 2>&1 &
	r=$!
	wait_line /tmp/mrecv.log "receiving data transfers" ||
		fail "mckey receiver: $(cat /tmp/mrecv.log)"
	$2 timeout 60 mckey -m "$5" -b "$4" -s -C 10 > /tmp/msend.log 2>&1 ||
		fail "mckey sender: $(cat /tmp/msend.log)"
	wait "$r" || fail "mckey receiver: $(cat /tmp/mrecv.log)"
	grep -q "data transfers complete" /tmp/mrecv.log ||
		fail "mckey receiver: $(cat /tmp/mrecv.log)"
}

mckey_pair "" "" 10.9.0.1 10.9.0.1 239.1.2.5
info "mckey: 10 messages from a sender to a receiver on softrma0"
ip maddr show dev d0 | grep -q 239.1.2 && fail "an IP group is left on d0"
rdma link delete softrma0 || fail "rdma link delete softrma0"

modprobe rdma_rxe 2>/dev/null || { info "SKIP against rdma_rxe: not loadable"; exit 0; }
ip netns add nsm && ip link add vm type veth peer name vr || fail "veth"
ip link set vm netns nsm || fail "vm into nsm"
ip -n nsm addr add 10.14.0.1/24 dev vm && ip -n nsm link set vm up &&
	ip -n nsm link set lo up || fail "vm"
ip addr add 10.14.0.2/24 dev vr && ip link set vr up || fail "vr"
ip netns exec nsm rdma link add softm type softrma netdev vm || fail "softm"
rdma link add rxe8 type rxe netdev vr || fail "rdma link add rxe8"
wait_gid softm "::ffff:10.14.0.1" || fail "no GID on softm"
wait_gid rxe8 "::ffff:10.14.0.2" || fail "no GID on rxe8"

capture_start vr 10
mckey_pair "" "ip netns exec nsm" 10.14.0.2 10.14.0.1 239.1.2.6
capture_check
info "mckey: softrma sends, rdma_rxe receives"
mckey_pair "ip netns exec nsm" "" 10.14.0.1 10.14.0.2 239.1.2.7
info "mckey: rdma_rxe sends, softrma receives"

rdma link delete rxe8
ip netns del nsm
wait_gone softm
ip link del vr 2>/dev/null
modprobe -r rdma_rxe
exit 0
