#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Completion order across an RC connection (issue 27): verbs/comp_order
# ping-pongs, the client's SEND answered at once by the server's, with a
# send CQ and a receive CQ sharing a completion channel on each side (as
# librpma's example 12scch-receive-completion-queue); the client's SEND
# must complete before the reply's receive, every time.  On the local
# transport, in packets through lo (force_wire), and in packets between two
# namespaces (a veth pair: a receive worker for each side), with both
# sides waiting for events, then (fewer times: three threads spinning on
# the guest's two CPUs are slow) both polling; with a busy process beside
# them, which widens the races.  Also with a READ of 256 KiB before each
# SEND: in packets the server's acknowledgement waits behind its 256 READ
# responses, and its reply behind that acknowledgement.
#
# RoCE needs the network to keep a flow's packets in order.  lo and veth
# queue a packet on the backlog of the CPU that sends it, and a CPU whose
# softirqs wait for ksoftirqd (6.1 defers them whenever ksoftirqd is
# runnable) delivers later what it was given first: an acknowledgement sent
# by a worker on one CPU then arrives after the reply that the application
# sent on the other.  RPS queues a flow on one CPU, as a NIC keeps it in
# order on its wire (Documentation/admin-guide.md).
. "$(dirname "$0")/../lib.sh"

ITERS=${COMP_ORDER_ITERS:-5000}

# run NAME WAIT ITERS CLIENT_DEV CLIENT_IPV4 SERVER_DEV SERVER_IPV4 [READ_BYTES]
run() {
	name=$1 wait=$2 n=$3
	shift 3
	timeout "$(bound 120)" "$SOFTRMA_BIN/comp_order" "$1" "$2" "$3" "$4" \
		"$n" "$wait" "$wait" ${5:-} > /tmp/comp_order.log 2>&1
	status=$?
	sed "s/^# /# $name: /" /tmp/comp_order.log
	[ "$status" = 0 ] ||
		failed="$failed${failed:+; }$name, $wait: $(grep -v '^# ping ' /tmp/comp_order.log | tail -n 1)"
}

add_softrma0
namespace_pair 10.17.0
ip netns exec nsa ping -c 1 -W 5 10.17.0.2 > /dev/null || fail "no route over the veth"
lo_rps=$(cat /sys/class/net/lo/queues/rx-0/rps_cpus)
rps_all lo
rps_all va nsa
rps_all vb nsb
sh -c 'while :; do :; done' &
busy=$!
trap 'kill $busy; echo "$lo_rps" > /sys/class/net/lo/queues/rx-0/rps_cpus' EXIT

failed=
echo 0 > /sys/module/softrma/parameters/force_wire
run local event "$ITERS" softrma0 10.9.0.1 softrma0 10.9.0.1
run local poll $((ITERS / 5)) softrma0 10.9.0.1 softrma0 10.9.0.1
run "local, READ" event $((ITERS / 10)) softrma0 10.9.0.1 softrma0 10.9.0.1 262144
echo 1 > /sys/module/softrma/parameters/force_wire
run "wire, lo" event "$ITERS" softrma0 10.9.0.1 softrma0 10.9.0.1
run "wire, lo, READ" event $((ITERS / 10)) softrma0 10.9.0.1 softrma0 10.9.0.1 262144
echo 0 > /sys/module/softrma/parameters/force_wire
run "wire, veth" event "$ITERS" softa 10.17.0.1 softb 10.17.0.2
run "wire, veth" poll $((ITERS / 5)) softa 10.17.0.1 softb 10.17.0.2
run "wire, veth, READ" poll $((ITERS / 10)) softa 10.17.0.1 softb 10.17.0.2 262144
[ -z "$failed" ] || fail "$failed"

ip netns del nsa
wait_gone softa
ip netns del nsb
wait_gone softb
