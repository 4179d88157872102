#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# VLANs and lo.  A veth pair across two namespaces, a softrma device on
# each end and addresses only on VLAN 100 above them: the core gives the
# ports the VLAN netdevs' GIDs, and ibv_rc_pingpong and ibv_ud_pingpong
# between those GIDs cross in packets that the VLAN netdevs count.  On lo: ibv_rc_pingpong over 127.0.0.1
# on the local transport and, with force_wire, as packets through lo.
. "$(dirname "$0")/../lib.sh"

load_softrma
modprobe 8021q 2>/dev/null
ip netns add nsa && ip netns add nsb || fail "ip netns add"
ip link add va type veth peer name vb || fail "veth"
ip link set va netns nsa && ip link set vb netns nsb || fail "veth into namespaces"
for n in a b; do
	i=$([ $n = a ] && echo 1 || echo 2)
	ip -n ns$n link set v$n up && ip -n ns$n link set lo up || fail "v$n up"
	ip -n ns$n link add link v$n name v$n.100 type vlan id 100 || fail "VLAN on v$n"
	ip -n ns$n addr add "10.16.0.$i/24" dev v$n.100 && ip -n ns$n link set v$n.100 up ||
		fail "v$n.100"
	ip netns exec ns$n rdma link add soft$n type softrma netdev v$n ||
		fail "rdma link add soft$n on v$n"
	wait_gid soft$n "::ffff:10.16.0.$i" || fail "no GID for v$n.100 on soft$n"
done
ip netns exec nsa ping -c 1 -W 5 10.16.0.2 > /dev/null || fail "no route over VLAN 100"
ga=$(gid_index softa 10.16.0.1)
gb=$(gid_index softb 10.16.0.2)
[ "$(cat /sys/class/infiniband/softa/ports/1/gid_attrs/ndevs/"$ga")" = va.100 ] ||
	fail "GID $ga of softa is not va.100's"
tx_before=$(ip netns exec nsa cat /sys/class/net/va.100/statistics/tx_packets)

for t in ibv_rc_pingpong ibv_ud_pingpong; do
	ip netns exec nsa timeout "$(bound 60)" $t -d softa -g "$ga" -n 200 > /tmp/server.log 2>&1 &
	spid=$!
	retry 30 ip netns exec nsb timeout "$(bound 60)" $t -d softb -g "$gb" -n 200 10.16.0.1 \
		> /tmp/client.log 2>&1 || fail "$t over VLAN 100: $(tail -n 3 /tmp/client.log)"
	wait "$spid" || fail "$t server: $(tail -n 3 /tmp/server.log)"
done
tx=$(($(ip netns exec nsa cat /sys/class/net/va.100/statistics/tx_packets) - tx_before))
sent=$(port_counter softa sent_pkts)
[ "$tx" -ge "$sent" ] && [ "$sent" -ge 400 ] ||
	fail "softa sent $sent packets, va.100 counted $tx"
info "ibv_rc_pingpong and ibv_ud_pingpong over VLAN 100: $sent packets, all through va.100"
ip netns del nsa
wait_gone softa
ip netns del nsb
wait_gone softb

ip link set lo up
rdma link add softlo type softrma netdev lo || fail "rdma link add on lo"
wait_gid softlo "::ffff:127.0.0.1" || fail "no GID for 127.0.0.1"
g=$(gid_index softlo 127.0.0.1)
pair "ibv_rc_pingpong on lo" "ibv_rc_pingpong -d softlo -g $g -n 200" \
	"ibv_rc_pingpong -d softlo -g $g -n 200 127.0.0.1"
echo 1 > /sys/module/softrma/parameters/force_wire
sent=$(port_counter softlo sent_pkts)
pair "ibv_rc_pingpong on lo, in packets" "ibv_rc_pingpong -d softlo -g $g -n 200" \
	"ibv_rc_pingpong -d softlo -g $g -n 200 127.0.0.1"
echo 0 > /sys/module/softrma/parameters/force_wire
[ "$(port_counter softlo sent_pkts)" -ge "$((sent + 400))" ] ||
	fail "force_wire on lo sent no packets"
rdma link delete softlo || fail "rdma link delete softlo"
