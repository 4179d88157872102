#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Run in a guest by `make bench`: perftest on every soft device of one
# guest (bench/devices.sh: softrma's local transport and its RoCEv2 packets,
# rdma_rxe and rdma_siw), same kernel, same CPU model, client and server on
# this one host.  Each row runs BENCH_ROUNDS times, the devices interleaved
# round by round, and prints the medians and the ratios to rxe (bandwidth
# and message rate: device/rxe; latency: rxe/device; higher is better
# either way).  Then the guest's ceilings (bench/ceiling.c) and each
# bandwidth row's share of its device's ceiling: the fastest copy for the
# local transport and siw, the CRC-32 its ICRC is computed with for the
# wire and rxe.  Absolute numbers under TCG mean little; the ratios, taken
# in one guest, are the claim.  The medians also go to
# $SOFTRMA_VM_OUT/bench.dat for bench/chart.sh.
top=$(cd "$(dirname "$0")/.." && pwd)
export RDMAV_DRIVERS="$top/user/libsoftrma"
. "$top/bench/lib.sh"
BENCH_DATA=${SOFTRMA_VM_OUT:-/tmp}/bench.dat
: > "$BENCH_DATA"

. "$top/bench/devices.sh"
bench_devices_up

echo "perftest, one host, median of $BENCH_ROUNDS rounds"
# shellcheck disable=SC2086
bench_table bench_run rxe $devs
echo
# The ceilings, each the median of BENCH_ROUNDS runs.
for _ in $(seq "$BENCH_ROUNDS"); do
	"$top/build/ceiling" "$BENCH_WORK/ceiling.tmp"
done > "$BENCH_WORK/ceiling.runs"
for name in $(awk '{ print $2 }' "$BENCH_WORK/ceiling.runs" | sort -u); do
	awk -v n="$name" '$2 == n { print $3 }' "$BENCH_WORK/ceiling.runs" > "$BENCH_WORK/ceiling.$name"
	printf 'ceiling %-12s %8s MB/s\n' "$name" "$(bench_median "$BENCH_WORK/ceiling.$name")"
done | tee "$BENCH_WORK/ceilings"
ceiling() {
	awk -v n="$1" '$2 == n && $3 + 0 > 0 { print $3 }' "$BENCH_WORK/ceilings"
}
copy=$(awk '$2 ~ /^(memcpy|pread|kernel_copy)$/ && $3 > c { c = $3 } END { print c }' \
	"$BENCH_WORK/ceilings")
echo "share of the ceiling: local and siw of the fastest copy ($copy MB/s),"
echo "wire of crc32_le (softrma's ICRC), rxe of crc32 (the crypto API's, rxe's)"
for spec in ib_write_bw:65536 ib_write_bw:1048576 ib_read_bw:65536 ib_send_bw:65536; do
	tool=${spec%%:*} size=${spec#*:}
	printf '%-13s %8s' "$tool" "$size"
	for d in $devs; do
		case $d in
		wire) c=$(ceiling crc32_le) ;;
		rxe) c=$(ceiling crc32) ;;
		*) c=$copy ;;
		esac
		v=$(awk -v t="$tool" -v s="$size" -v d="$d" \
			'$1 == t && $2 == s && $3 == d { print $4 }' "$BENCH_DATA")
		printf ' %6s %-5s' "$(awk -v v="$v" -v c="$c" 'BEGIN {
			if (v + 0 <= 0 || c + 0 <= 0) print "-"
			else printf "%.0f%%", 100 * v / c }')" "$d"
	done
	echo
done
awk '{ print "ceiling", $2, $3 }' "$BENCH_WORK/ceilings" >> "$BENCH_DATA"

# The non-coherent checking device (Documentation/noncoherent.md) beside
# softrma0 in normal mode: perftest never syncs, so the checking device
# moves the data as it stood at registration, at the cost of the checks.
# Not ib_write_lat: it polls its buffer for the peer's WRITE, which on a
# checking device, as on a non-coherent platform, it never sees.
ip link add d2 type dummy && ip link set d2 up && ip addr add 10.9.3.1/24 dev d2 &&
	rdma link add softnc type softrma netdev d2 &&
	echo 1 > /sys/class/infiniband/softnc/noncoherent || exit 1
sleep 2
echo
echo "softrma checking device (noncoherent) vs normal mode, local transport, median of $BENCH_ROUNDS"
BENCH_ROWS="ib_write_bw:65536 ib_read_bw:65536 ib_send_bw:65536 ib_send_lat:2"
BENCH_DATA=/dev/null
bench_table bench_run local checking local
echo "softrmadv_sync_mr() per call"
for len in 64 65536; do
	"$top/build/sync_cost" softrma0 $len 20000
	"$top/build/sync_cost" softnc $len 20000
done
rdma link delete softnc

bench_devices_down
