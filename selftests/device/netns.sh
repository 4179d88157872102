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

# write_bw NAME COUNTED SERVER_ARGS CLIENT_ARGS: an ib_write_bw pair of
# init_net running for 60 s in the background (its PIDs added to $pids),
# once the device COUNTED received 1000 more packets.
pids=
write_bw() {
	before=$(port_counter "$2" rcvd_pkts)
	# shellcheck disable=SC2086
	ib_write_bw $3 -D 60 > "/tmp/$1.server.log" 2>&1 &
	server=$!
	pids="$pids $server"
	for _ in $(seq 100); do
		listening "$server" && break
		sleep 0.1
	done
	# shellcheck disable=SC2086
	ib_write_bw $4 -D 60 127.0.0.1 > "/tmp/$1.client.log" 2>&1 &
	pids="$pids $!"
	for _ in $(seq "$(bound 100)"); do
		[ "$(port_counter "$2" rcvd_pkts)" -gt $((before + 1000)) ] && return 0
		sleep 0.1
	done
	fail "no RC traffic ($1): $(tail -n 3 "/tmp/$1.client.log")"
}

# Devices are shared between namespaces: processes of init_net run RC
# traffic between softa and softb, through the veth, and with force_wire
# from softa to itself, looped back to nsa's socket without the IP stack,
# while the namespaces go.  Each namespace's socket closes while the
# processes' doorbells and the work receive its packets and doorbells loop
# packets back to it; the devices go, and the runner finds nothing left and
# softrma unloading.
echo 1 > /sys/module/softrma/parameters/force_wire
write_bw looped-back softa "-d softa -x $ga -p 18600" "-d softa -x $ga -p 18600"
echo 0 > /sys/module/softrma/parameters/force_wire
write_bw between-namespaces softb "-d softa -x $ga" "-d softb -x $gb"

# A namespace that goes takes its device (its veth end goes with it).
ip netns del nsa
wait_gone softa
ip netns del nsb
wait_gone softb
for pid in $pids; do
	kill_tree "$pid"
done
wait
info "deleting the namespaces under RC traffic, looped back and through the veth, removed their devices"
