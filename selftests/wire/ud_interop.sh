#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Guest side of selftests/wire/pair: softrma on guest a, rdma_rxe on guest b,
# UD over the link in both directions (ibv_ud_pingpong, server on a then on
# b).  Guest a captures the packets of both sides and checks every ICRC with
# zlib and with kernel/proto.
. "$(dirname "$0")/../lib.sh"

role=$1
wire_up "$role"
PEER=rxe wire_dev_up "$role"
gid=$(gid_index dev0 "$WIRE_ME")
pp="ibv_ud_pingpong -d dev0 -g $gid -n 200 -s 1024"

server() {
	timeout 60 $pp > /tmp/server.log 2>&1 ||
		fail "$1 ibv_ud_pingpong server: $(tail -n 3 /tmp/server.log)"
	info "$1 server: $(tail -n 1 /tmp/server.log)"
}

client() {
	retry 60 timeout 60 $pp "$WIRE_PEER" > /tmp/client.log 2>&1 ||
		fail "$1 ibv_ud_pingpong client: $(tail -n 3 /tmp/client.log)"
	info "$1 client: $(tail -n 1 /tmp/client.log)"
}

if [ "$role" = a ]; then
	capture_start eth0 100
	server softrma
	capture_check
	client softrma
else
	client rxe
	server rxe
fi
