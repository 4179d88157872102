#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Datagrams as RoCEv2 packets on one host: with force_wire=1 every UD and
# GSI send leaves as a packet (here through lo) and comes back through
# softrma's UDP socket.  rping connects through CM MADs in packets, and a
# capture of ibv_ud_pingpong checks every packet's ICRC with zlib.
# verbs/ud_ops runs in packets in its own "wire" variant (ud_ops.sh).
. "$(dirname "$0")/../lib.sh"

load_softrma
echo 1 > /sys/module/softrma/parameters/force_wire || fail "no force_wire parameter"
modprobe rdma_ucm || fail "modprobe rdma_ucm"
add_softrma0

capture_start lo 50
timeout "$(bound 60)" ibv_ud_pingpong -d softrma0 -g 1 -n 100 > /tmp/server.log 2>&1 &
spid=$!
sleep 1
retry 30 timeout "$(bound 60)" ibv_ud_pingpong -d softrma0 -g 1 -n 100 10.9.0.1 > /tmp/client.log 2>&1 ||
	fail "ibv_ud_pingpong: $(tail -n 3 /tmp/client.log)"
wait "$spid" || fail "ibv_ud_pingpong server: $(tail -n 3 /tmp/server.log)"
capture_check

rping -s -a 10.9.0.1 -v -C 10 > /tmp/server.log 2>&1 &
spid=$!
sleep 1
timeout "$(bound 60)" rping -c -a 10.9.0.1 -v -C 10 > /tmp/client.log 2>&1 ||
	{ kill_tree "$spid"; fail "rping with CM MADs in packets: $(tail -n 3 /tmp/client.log)"; }
wait "$spid" || fail "rping server: $(tail -n 3 /tmp/server.log)"
info "rping: connected through CM MADs in RoCEv2 packets"
echo 0 > /sys/module/softrma/parameters/force_wire
