#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Guest side of selftests/wire/pair: rdma_rxe on both guests runs
# ibv_rc_pingpong over the link while guest a captures the RoCEv2 packets.
# Every captured packet's ICRC is checked twice, by zlib (capture.py) and by
# kernel/proto (roce_test --capture): softrma's codec agrees with rxe's
# packets byte for byte.
. "$(dirname "$0")/../lib.sh"

role=$1
wire_up "$role"
modprobe rdma_rxe || fail "modprobe rdma_rxe"
rdma link add rxe0 type rxe netdev eth0 || fail "rdma link add rxe0"
wait_gid rxe0 "::ffff:$WIRE_ME" || fail "no GID"
gid=$(gid_index rxe0 "$WIRE_ME")
uname -r | sed 's/^/# kernel /'

if [ "$role" = a ]; then
	capture_start eth0 40
	timeout 60 ibv_rc_pingpong -d rxe0 -g "$gid" -n 50 -s 300 > /tmp/pp.log 2>&1 ||
		fail "ibv_rc_pingpong server: $(tail -n 3 /tmp/pp.log)"
	capture_check
	cp /tmp/capture.txt "$SOFTRMA_VM_OUT/capture.txt"
else
	retry 60 timeout 60 ibv_rc_pingpong -d rxe0 -g "$gid" -n 50 -s 300 \
		"$WIRE_PEER" > /tmp/pp.log 2>&1 ||
		fail "ibv_rc_pingpong client: $(tail -n 3 /tmp/pp.log)"
	tail -n 1 /tmp/pp.log | sed 's/^/# /'
fi
