# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The devices of one bench guest (bench/guest.sh, bench/profile.sh), each
# on a netdev of its own, server and client on this one host:
#
#   local   softrma0, softrma's local transport (one copy, no packets)
#   wire    softw, softrma with force_wire: every request a RoCEv2 packet
#           with its ICRC, looped back past the IP stack (as rdma_rxe's) in
#           a namespace of its own (rdma_rxe holds UDP port 4791 in init_net)
#   rxe     rxe0, rdma_rxe
#   siw     siw0, rdma_siw built out of tree (scripts/build-siw.sh), with
#           rdma_cm (-R) as iWARP needs; left out when it is not built
#
# $devs lists those up.  Needs $top and bench/lib.sh.

bench_devices_up() {
	build=$top/build/$(uname -r)
	# insmod resolves no dependencies: load what the modules need first.
	modprobe -a ib_uverbs udp_tunnel ip6_udp_tunnel libcrc32c rdma_ucm
	insmod "$build/softrma.ko" || exit 1
	modprobe rdma_rxe || { echo "bench: rdma_rxe is not available"; exit 1; }
	devs="local wire rxe"
	[ -f "$build/siw.ko" ] && insmod "$build/siw.ko" && devs="$devs siw"
	for i in 0 1 4; do
		ip link add d$i type dummy && ip link set d$i up &&
			ip addr add 10.9.$i.1/24 dev d$i || exit 1
	done
	rdma link add softrma0 type softrma netdev d0 || exit 1
	rdma link add rxe0 type rxe netdev d1 || exit 1
	case $devs in *siw*) rdma link add siw0 type siw netdev d4 || exit 1 ;; esac
	ip netns add nsw && ip link add dw type dummy && ip link set dw netns nsw &&
		ip -n nsw addr add 10.9.2.1/24 dev dw && ip -n nsw link set dw up &&
		ip -n nsw link set lo up || exit 1
	ip netns exec nsw rdma link add softw type softrma netdev dw || exit 1
	sleep 2
}

bench_devices_down() {
	ip netns exec nsw rdma link delete softw
	case $devs in *siw*) rdma link delete siw0 && rmmod siw ;; esac
	rdma link delete rxe0
	rdma link delete softrma0
	rmmod softrma
}

# bench_dev DEV: for perftest on DEV (or on "checking", a device named
# softnc on 10.9.3.1), its arguments ($args), its server's address
# ($addr), the command its runs go through ($ns) and whether it is softrma
# with force_wire ($wire).
bench_dev() {
	ns='' wire=0
	case $1 in
	local) args="-d softrma0 -x 1" addr=10.9.0.1 ;;
	wire) args="-d softw -x 1" addr=10.9.2.1 ns="ip netns exec nsw" wire=1 ;;
	rxe) args="-d rxe0 -x 1" addr=10.9.1.1 ;;
	siw) args="-d siw0 -R" addr=10.9.4.1 ;;
	checking) args="-d softnc -x 1" addr=10.9.3.1 ;;
	esac
}

# bench_run DEV TOOL SIZE ITERS: one perftest run on DEV, the client's
# result printed.  With BENCH_PERF=FILE the client runs under
# "perf record -a -g -o FILE".  force_wire is read when a QP's path is
# set, so it is on for the wire device's runs only.
bench_run() {
	dev=$1 tool=$2 size=$3 n=$4
	bench_dev "$dev"
	echo $wire > /sys/module/softrma/parameters/force_wire
	# shellcheck disable=SC2086
	timeout 300 $ns "$tool" $args -s "$size" -n "$n" > "$BENCH_WORK/server.log" 2>&1 &
	# On a loaded machine the server may not listen yet: try again.
	for _ in 1 2 3; do
		sleep 1
		# shellcheck disable=SC2086
		timeout 300 ${BENCH_PERF:+perf record -q -a -g -o "$BENCH_PERF" --} \
			$ns "$tool" $args -s "$size" -n "$n" "$addr" > "$BENCH_WORK/client.log" 2>&1
		grep -q "Couldn't connect" "$BENCH_WORK/client.log" || break
	done
	wait
	echo 0 > /sys/module/softrma/parameters/force_wire
	bench_value "$BENCH_WORK/client.log" "$tool" "$size"
}
