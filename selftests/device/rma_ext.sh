#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# RDMA FLUSH and ATOMIC WRITE (verbs/rma_ext): on the local transport, then
# in RoCEv2 packets (force_wire), with FLUSH's ICRC in the IBA's form and
# in rdma_rxe's (rxe_flush_icrc=1), then, where the kernel's rdma_rxe has
# them (6.2 on), against rdma_rxe in both directions: softrma in namespace
# nsx on one end of a veth pair, rxe on the other end in init_net, which is
# where rxe holds UDP port 4791.  The packets' ICRCs are checked as well.
. "$(dirname "$0")/../lib.sh"

add_softrma0
"$SOFTRMA_BIN/rma_ext" softrma0 10.9.0.1 || fail "rma_ext, local transport"

params=/sys/module/softrma/parameters
echo 1 > $params/force_wire || fail "no force_wire parameter"
for form in 0 1; do
	echo $form > $params/rxe_flush_icrc || fail "no rxe_flush_icrc parameter"
	sent=$(port_counter softrma0 sent_pkts)
	"$SOFTRMA_BIN/rma_ext" softrma0 10.9.0.1 || break
	[ "$(port_counter softrma0 sent_pkts)" -gt "$((sent + 40))" ] || break
	form=done$form
done
echo 0 > $params/force_wire
echo 0 > $params/rxe_flush_icrc
[ "$form" = done1 ] || fail "rma_ext in packets (rxe_flush_icrc=${form#done})"
[ "$(port_counter softrma0 rcvd_icrc_err)" = 0 ] || fail "ICRC errors"
rdma link delete softrma0 || fail "rdma link delete softrma0"

major=$(uname -r | cut -d. -f1) minor=$(uname -r | cut -d. -f2)
if [ "$major" -lt 6 ] || { [ "$major" = 6 ] && [ "$minor" -lt 2 ]; }; then
	info "SKIP against rdma_rxe: it has FLUSH and ATOMIC WRITE from 6.2 on"
	exit 0
fi
modprobe rdma_rxe || fail "modprobe rdma_rxe"
ip netns add nsx || fail "ip netns add"
ip link add vx type veth peer name vr || fail "veth"
ip link set vx netns nsx || fail "veth into nsx"
ip -n nsx addr add 10.13.0.1/24 dev vx && ip -n nsx link set vx up &&
	ip -n nsx link set lo up || fail "vx"
ip addr add 10.13.0.2/24 dev vr && ip link set vr up || fail "vr"
ip netns exec nsx rdma link add softx type softrma netdev vx || fail "softx"
rdma link add rxe9 type rxe netdev vr || fail "rdma link add rxe9"
wait_gid softx "::ffff:10.13.0.1" || fail "no GID on softx"
wait_gid rxe9 "::ffff:10.13.0.2" || fail "no GID on rxe9"
ip netns exec nsx ping -c 1 -W 5 10.13.0.2 > /dev/null || fail "no route over the veth"

# rxe drops FLUSH packets that carry the IBA's ICRC (see admin-guide.md).
echo 1 > $params/rxe_flush_icrc
capture_start vr 40
"$SOFTRMA_BIN/rma_ext" softx 10.13.0.1 rxe9 10.13.0.2
rc=$?
echo 0 > $params/rxe_flush_icrc
[ $rc = 0 ] || fail "rma_ext, softrma to rdma_rxe"
capture_check
"$SOFTRMA_BIN/rma_ext" rxe9 10.13.0.2 softx 10.13.0.1 ||
	fail "rma_ext, rdma_rxe to softrma"

rdma link delete rxe9
ip netns del nsx
wait_gone softx
ip link del vr 2>/dev/null
modprobe -r rdma_rxe
exit 0
