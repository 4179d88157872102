#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# softrma in network namespaces, as in containers: a device in each of two
# namespaces joined by a veth pair.  Each namespace gets its own RoCEv2
# socket, devices in different namespaces reach each other only through the
# network (ibv_ud_pingpong, with the packets captured on the veth and every
# ICRC checked), and deleting a namespace takes its device with it, also
# while processes of another namespace send RC packets through it.
. "$(dirname "$0")/../lib.sh"

load_softrma
namespace_pair 10.11.0
ga=$(gid_index softa 10.11.0.1)
gb=$(gid_index softb 10.11.0.2)

capture_start va 50 nsa
ip netns exec nsa timeout "$(bound 60)" ibv_ud_pingpong -d softa -g "$ga" -n 100 > /tmp/server.log 2>&1 &
spid=$!
retry 30 ip netns exec nsb timeout "$(bound 60)" ibv_ud_pingpong -d softb -g "$gb" -n 100 10.11.0.1 \
	> /tmp/client.log 2>&1 || fail "ibv_ud_pingpong across namespaces: $(tail -n 3 /tmp/client.log)"
wait "$spid" || fail "ibv_ud_pingpong server: $(tail -n 3 /tmp/server.log)"
capture_check
sent=$(port_counter softa sent_pkts)
[ "${sent:-0}" -ge 100 ] || fail "softa sent $sent packets, want at least 100"

# Devices are shared between namespaces: processes of init_net run RC
# traffic between softa and softb, through the veth, and with force_wire
# from softa to itself, looped back to nsa's socket without the IP stack,
# while the namespaces go.  Each namespace's socket closes while the
# processes' doorbells and the work receive its packets and doorbells loop
# packets back to it; the devices go, and the runner finds nothing left and
# softrma unloading.
before=$(port_counter softa rcvd_pkts)
echo 1 > /sys/module/softrma/parameters/force_wire
ib_write_bw -d softa -x "$ga" -D 60 -p 18600 > /tmp/lserver.log 2>&1 &
lspid=$!
for _ in $(seq 100); do
	listening "$lspid" && break
	sleep 0.1
done
ib_write_bw -d softa -x "$ga" -D 60 -p 18600 127.0.0.1 > /tmp/lclient.log 2>&1 &
lcpid=$!
for _ in $(seq "$(bound 100)"); do
	[ "$(port_counter softa rcvd_pkts)" -gt $((before + 1000)) ] && break
	sleep 0.1
done
echo 0 > /sys/module/softrma/parameters/force_wire
[ "$(port_counter softa rcvd_pkts)" -gt $((before + 1000)) ] ||
	fail "no RC traffic looped back on softa: $(tail -n 3 /tmp/lclient.log)"

before=$(port_counter softb rcvd_pkts)
ib_write_bw -d softa -x "$ga" -D 60 > /tmp/server.log 2>&1 &
spid=$!
for _ in $(seq 100); do
	listening "$spid" && break
	sleep 0.1
done
ib_write_bw -d softb -x "$gb" -D 60 127.0.0.1 > /tmp/client.log 2>&1 &
cpid=$!
for _ in $(seq "$(bound 100)"); do
	[ "$(port_counter softb rcvd_pkts)" -gt $((before + 1000)) ] && break
	sleep 0.1
done
[ "$(port_counter softb rcvd_pkts)" -gt $((before + 1000)) ] ||
	fail "no RC traffic between the namespaces: $(tail -n 3 /tmp/client.log)"

# A namespace that goes takes its device (its veth end goes with it).
ip netns del nsa
wait_gone softa
ip netns del nsb
wait_gone softb
for pid in "$spid" "$cpid" "$lspid" "$lcpid"; do
	kill_tree "$pid"
done
wait
info "deleting the namespaces under RC traffic, looped back and through the veth, removed their devices"
