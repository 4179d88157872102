#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Run in a guest by `make bench`: perftest on softrma and on rdma_rxe in the
# same guest (same kernel, same CPU model), client and server on one host,
# each device on its own dummy netdev.  Prints one line per test with both
# results and the ratio softrma/rxe (bandwidth: higher is better; latency:
# lower is better, so the ratio is rxe/softrma).  Absolute numbers under TCG
# mean little; the ratios are the claim.
#
# Two tables: softrma's local transport against rxe, then softrma on the
# wire (force_wire, every request a RoCEv2 packet with its ICRC, through
# the namespace's lo) against rxe, which builds packets for local
# destinations too.  softrma's wire device lives in a namespace of its own,
# because rdma_rxe holds UDP port 4791 in init_net.
top=$(cd "$(dirname "$0")/.." && pwd)
export RDMAV_DRIVERS=$top/user/libsoftrma
ITER=${BENCH_ITER:-1000}

# insmod resolves no dependencies: load what softrma.ko needs first.
modprobe -a ib_uverbs udp_tunnel ip6_udp_tunnel
insmod "$top/build/$(uname -r)/softrma.ko" || exit 1
modprobe rdma_rxe || { echo "bench: rdma_rxe is not available"; exit 1; }
for i in 0 1; do
	ip link add d$i type dummy && ip link set d$i up &&
		ip addr add 10.9.$i.1/24 dev d$i || exit 1
done
rdma link add softrma0 type softrma netdev d0 || exit 1
rdma link add rxe0 type rxe netdev d1 || exit 1
sleep 2

# run DEV ADDR TOOL ARGS...: the client's result column (BW average, or
# typical latency).  The wire device's tools run in its namespace.
run() {
	dev=$1 addr=$2 tool=$3; shift 3
	ns=
	[ "$dev" = softw ] && ns="ip netns exec nsw"
	timeout 300 $ns "$tool" -d "$dev" -x 1 "$@" > /tmp/bench-server.log 2>&1 &
	sleep 1
	timeout 300 $ns "$tool" -d "$dev" -x 1 "$@" "$addr" > /tmp/bench-client.log 2>&1
	wait
	case $tool in
	*_lat) col=5 ;;
	*) col=4 ;;
	esac
	awk -v c=$col '$1 ~ /^[0-9]+$/ && NF >= c { v = $c } END { print v ? v : "FAIL" }' \
		/tmp/bench-client.log
}

# table SOFTRMA_DEV SOFTRMA_ADDR: every test on it and on rxe0.
table() {
	printf '%-14s %9s %12s %12s %8s\n' test size softrma rxe ratio
	for spec in ib_write_bw:4096 ib_write_bw:65536 ib_write_bw:1048576 \
		    ib_read_bw:65536 ib_send_bw:65536 \
		    ib_write_lat:2 ib_read_lat:2 ib_send_lat:2; do
		tool=${spec%%:*} size=${spec#*:}
		n=$ITER
		[ "$size" -ge 1048576 ] && n=$((ITER / 10))
		s=$(run "$1" "$2" "$tool" -s "$size" -n "$n")
		r=$(run rxe0 10.9.1.1 "$tool" -s "$size" -n "$n")
		ratio=$(awk -v s="$s" -v r="$r" -v t="$tool" 'BEGIN {
			if (s + 0 <= 0 || r + 0 <= 0) { print "-"; exit }
			printf "%.2fx\n", (t ~ /_lat$/) ? r / s : s / r }')
		unit=MB/s
		case $tool in *_lat) unit=usec ;; esac
		printf '%-14s %9s %12s %12s %8s\n' "$tool" "$size" "$s $unit" "$r $unit" "$ratio"
	done
}

echo "softrma local transport vs rdma_rxe"
table softrma0 10.9.0.1

ip netns add nsw && ip link add dw type dummy && ip link set dw netns nsw &&
	ip -n nsw addr add 10.9.2.1/24 dev dw && ip -n nsw link set dw up &&
	ip -n nsw link set lo up || exit 1
echo 1 > /sys/module/softrma/parameters/force_wire
ip netns exec nsw rdma link add softw type softrma netdev dw || exit 1
sleep 2
echo "softrma RoCEv2 packets (force_wire) vs rdma_rxe"
table softw 10.9.2.1
ip netns exec nsw rdma link delete softw
echo 0 > /sys/module/softrma/parameters/force_wire

# The non-coherent checking device (Documentation/noncoherent.md) beside
# softrma0 in normal mode: perftest never syncs, so the checking device
# moves the data as it stood at registration, at the cost of the checks.
# Not ib_write_lat: it polls its buffer for the peer's WRITE, which on a
# checking device, as on a non-coherent platform, it never sees.
ip link add d2 type dummy && ip link set d2 up && ip addr add 10.9.3.1/24 dev d2 &&
	rdma link add softnc type softrma netdev d2 &&
	echo 1 > /sys/class/infiniband/softnc/noncoherent || exit 1
sleep 2
echo "softrma checking device (noncoherent) vs normal mode, local transport"
printf '%-14s %9s %12s %12s %8s\n' test size checking normal ratio
for spec in ib_write_bw:65536 ib_read_bw:65536 ib_send_bw:65536 ib_send_lat:2; do
	tool=${spec%%:*} size=${spec#*:}
	c=$(run softnc 10.9.3.1 "$tool" -s "$size" -n "$ITER")
	n=$(run softrma0 10.9.0.1 "$tool" -s "$size" -n "$ITER")
	printf '%-14s %9s %12s %12s %8s\n' "$tool" "$size" "$c" "$n" \
		"$(awk -v c="$c" -v n="$n" -v t="$tool" 'BEGIN {
			if (c + 0 <= 0 || n + 0 <= 0) { print "-"; exit }
			printf "%.2fx\n", (t ~ /_lat$/) ? n / c : c / n }')"
done
echo "softrmadv_sync_mr() per call"
for len in 64 65536; do
	"$top/build/sync_cost" softrma0 $len 20000
	"$top/build/sync_cost" softnc $len 20000
done
rdma link delete softnc

rdma link delete rxe0
rdma link delete softrma0
rmmod softrma
