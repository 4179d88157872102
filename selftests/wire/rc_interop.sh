#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Guest side of selftests/wire/pair: softrma on guest a; on guest b
# rdma_rxe, or softrma when PEER=softrma.  Connected traffic over the link
# with the server on a, then on b: ibv_rc_pingpong and ibv_uc_pingpong
# (received data checked, -c), rping -V (data validated), ib_write_bw,
# ib_read_bw, ib_send_bw, ib_atomic_bw and ib_write_lat; between two
# softrma guests also XRC: ibv_xsrq_pingpong and rdma_xserver/rdma_xclient
# -c x (rdma_rxe has no XRC).  Guest a captures
# the RC packets of both sides and checks every ICRC with zlib and with
# kernel/proto.
. "$(dirname "$0")/../lib.sh"

role=$1
wire_up "$role"
wire_dev_up "$role"
modprobe rdma_ucm || fail "modprobe rdma_ucm"
gid=$(gid_index dev0 "$WIRE_ME")

# result LOG: the line with the figures (perftest ends with a ruler).
result() {
	grep -E '^ *[0-9]|iters|^success|end 0' "$1" | tail -n 1
}

# step NAME SERVER_ROLE CMD [CLIENT_CMD]: CMD as the server on SERVER_ROLE,
# and CLIENT_CMD (default CMD) with the peer's address appended as its
# client on the other guest.
step() {
	if [ "$role" = "$2" ]; then
		timeout 180 sh -c "$3" > /tmp/server.log 2>&1 ||
			fail "$1, $me server: $(tail -n 12 /tmp/server.log)"
		info "$1, $me server: $(result /tmp/server.log)"
	else
		: > /tmp/client.log
		retry 90 timeout 180 sh -c "${4:-$3} $WIRE_PEER" >> /tmp/client.log 2>&1 ||
			fail "$1, $me client: $(grep -v "connect" /tmp/client.log | tail -n 25)"
		info "$1, $me client: $(result /tmp/client.log)"
	fi
}

# rping takes its address as an option, and the server binds to its own.
rping_step() {
	if [ "$role" = "$1" ]; then
		timeout 180 rping -s -a "$WIRE_ME" -V -C 20 -S 4000 > /tmp/server.log 2>&1 ||
			fail "rping -V, $me server: $(tail -n 3 /tmp/server.log)"
	else
		retry 90 timeout 180 rping -c -a "$WIRE_PEER" -V -C 20 -S 4000 > /tmp/client.log 2>&1 ||
			fail "rping -V, $me client: $(tail -n 3 /tmp/client.log)"
	fi
	info "rping -V: 20 pings of 4000 bytes validated ($me)"
}

pt="-d dev0 -x $gid -F $(ack_timeout)"
for server in a b; do
	[ "$role" = a ] && [ "$server" = a ] && capture_start eth0 200
	step "ibv_rc_pingpong -c" $server "ibv_rc_pingpong -d dev0 -g $gid -c -n 200 -s 8192"
	[ "$role" = a ] && [ "$server" = a ] && capture_check
	step "ibv_uc_pingpong -c" $server "ibv_uc_pingpong -d dev0 -g $gid -c -n 200 -s 1000"
	rping_step $server
	step "ib_write_bw" $server "ib_write_bw $pt -n 200 -s 65536"
	step "ib_read_bw" $server "ib_read_bw $pt -n 200 -s 65536"
	step "ib_send_bw" $server "ib_send_bw $pt -n 200 -s 65536"
	step "ib_atomic_bw" $server "ib_atomic_bw $pt -n 200"
	step "ib_write_lat" $server "ib_write_lat $pt -n 200 -s 64"
	if [ "${PEER:-}" = softrma ]; then
		step "ibv_xsrq_pingpong" $server "ibv_xsrq_pingpong -d dev0 -g $gid -n 100"
		step "rdma_xserver -c x" $server "rdma_xserver -c x" \
			"rdma_xclient -c x -s"
	fi
done
if [ "$me" = softrma ]; then
	info "$(rdma statistic show link dev0/1)"
fi
