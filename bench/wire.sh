#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Guest side of `make bench-wire` (selftests/wire/pair): perftest between
# two guests over their qemu link, with guest a's device the server and
# guest b's the client, for three pairs: softrma-softrma, softrma-rxe
# (softrma serving rdma_rxe) and rxe-rxe.  The pairs take turns round by
# round, each guest switching its device (and module: both want UDP port
# 4791 of init_net) between runs; guest b prints the medians and the
# ratios to rxe-rxe and writes them to $SOFTRMA_VM_OUT/bench.dat.
SOFTRMA_TOP=$(cd "$(dirname "$0")/.." && pwd)
. "$SOFTRMA_TOP/selftests/lib.sh"
. "$SOFTRMA_TOP/bench/lib.sh"

role=$1
wire_up "$role"
modprobe -a ib_uverbs udp_tunnel ip6_udp_tunnel || fail "modprobe"
current=

# unuse: dev0 and its module gone, if any.
unuse() {
	[ -n "$current" ] || return 0
	rdma link delete dev0 || fail "rdma link delete"
	case $current in
	softrma) rmmod softrma ;;
	rxe) rmmod rdma_rxe ;;
	esac || fail "rmmod $current"
	current=
}

# use DEV: dev0 on eth0 is DEV (softrma or rxe), and only DEV's module
# holds the port.
use() {
	[ "$current" = "$1" ] && return 0
	unuse
	case $1 in
	softrma) load_softrma ;;
	rxe) modprobe rdma_rxe || fail "modprobe rdma_rxe" ;;
	esac
	rdma link add dev0 type "$1" netdev eth0 || fail "rdma link add $1"
	wait_gid dev0 "::ffff:$WIRE_ME" || fail "no GID"
	current=$1
}

# bench_run PAIR TOOL SIZE ITERS: on guest a, serve one run with a's
# device of PAIR; on guest b, run the client with b's and print its result.
# The client tries again only while the server does not listen yet, so
# that no run ever meets the server of another.
bench_run() {
	pair=$1 tool=$2 size=$3 n=$4
	if [ "$role" = a ]; then
		use "${pair%-*}"
		timeout 300 "$tool" -d dev0 -x "$(gid_index dev0 "$WIRE_ME")" \
			-s "$size" -n "$n" > "$BENCH_WORK/server.log" 2>&1
		return 0
	fi
	use "${pair#*-}"
	for _ in $(seq 120); do
		timeout 300 "$tool" -d dev0 -x "$(gid_index dev0 "$WIRE_ME")" \
			-s "$size" -n "$n" "$WIRE_PEER" > "$BENCH_WORK/client.log" 2>&1
		grep -q "Couldn't connect" "$BENCH_WORK/client.log" || break
		sleep 1
	done
	bench_value "$BENCH_WORK/client.log" "$tool" "$size"
}

if [ "$role" = a ]; then
	BENCH_DATA=/dev/null
	bench_table bench_run rxe-rxe softrma-softrma softrma-rxe rxe-rxe > /dev/null
	info "served every run"
else
	BENCH_DATA=$SOFTRMA_VM_OUT/bench.dat
	: > "$BENCH_DATA"
	echo "perftest between two guests, a serving b, median of $BENCH_ROUNDS rounds"
	bench_table bench_run rxe-rxe softrma-softrma softrma-rxe rxe-rxe
fi
unuse
