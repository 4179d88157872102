#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Run in a guest by `make bench-scale`, once with one vCPU and once with
# two: whether a device's traffic spreads over the guest's CPUs.  On every
# soft device of bench/devices.sh, ib_write_bw of SCALE_SIZE bytes three
# ways: one QP, four QPs of one process (-q 4), and two processes at once
# (two server/client pairs on their own ports, their bandwidths added).
# Each BENCH_ROUNDS times, the devices interleaved round by round; the
# medians go to $SOFTRMA_VM_OUT/scale.dat as "DEV MODE SIZE MEDIAN".
#
# On the host, "scale.sh report ONE TWO CHART" prints the table of the two
# guests' scale.dat (one vCPU, two vCPUs) with each 2-vCPU/1-vCPU ratio,
# and writes to CHART the lines "DEV:MODE SIZE VCPUS MB/S" that
# bench/chart.sh draws with 1vcpu as the reference.
#
# usage: scale.sh | scale.sh report ONE.dat TWO.dat CHART.dat
top=$(cd "$(dirname "$0")/.." && pwd)
if [ "${1-}" = report ]; then
	awk -v chart="$4" 'FNR == 1 { f++ }
		{ key = $1 " " $2; v[f, key] = $4; size = $3
		  if (f == 1) keys[++n] = key }
		END {
			printf "%-6s %-5s %10s %10s %8s\n", "device", "mode", "1 vCPU", "2 vCPUs", "2/1"
			for (i = 1; i <= n; i++) {
				k = keys[i]; split(k, p, " ")
				a = v[1, k]; b = v[2, k]
				r = (a + 0 > 0 && b + 0 > 0) ? sprintf("%.2fx", b / a) : "-"
				printf "%-6s %-5s %10s %10s %8s\n", p[1], p[2], a, b, r
				print p[1] ":" p[2], size, "1vcpu", a > chart
				print p[1] ":" p[2], size, "2vcpu", b > chart
			}
		}' "$2" "$3"
	exit
fi
export RDMAV_DRIVERS="$top/user/libsoftrma"
. "$top/bench/lib.sh"
. "$top/bench/devices.sh"
SCALE_SIZE=${SCALE_SIZE:-65536}
SCALE_MODES="q1 q4 two"
data=${SOFTRMA_VM_OUT:-/tmp}/scale.dat
: > "$data"
bench_devices_up

# scale_run DEV MODE: the MB/s of one run of MODE on DEV ("FAIL" when a
# client printed none).
scale_run() {
	bench_dev "$1"
	extra='' pairs=1
	case $2 in
	q4) extra="-q 4" ;;
	two) pairs=2 ;;
	esac
	n=$(bench_iters "$SCALE_SIZE")
	echo $wire > /sys/module/softrma/parameters/force_wire
	for p in $(seq "$pairs"); do
		# shellcheck disable=SC2086
		timeout 300 $ns ib_write_bw $args $extra -p $((18514 + p)) \
			-s "$SCALE_SIZE" -n "$n" > "$BENCH_WORK/server.$p" 2>&1 &
	done
	sleep 1
	for p in $(seq "$pairs"); do
		# shellcheck disable=SC2086
		timeout 300 $ns ib_write_bw $args $extra -p $((18514 + p)) \
			-s "$SCALE_SIZE" -n "$n" "$addr" > "$BENCH_WORK/client.$p" 2>&1 &
	done
	wait
	echo 0 > /sys/module/softrma/parameters/force_wire
	for p in $(seq "$pairs"); do
		bench_value "$BENCH_WORK/client.$p" ib_write_bw "$SCALE_SIZE"
	done | awk '$1 == "FAIL" { fail = 1 } { sum += $1 }
		END { if (fail || !NR) print "FAIL"; else printf "%.2f\n", sum }'
}

echo "ib_write_bw $SCALE_SIZE B, $(nproc) vCPU(s), MB/s, median of $BENCH_ROUNDS rounds"
for mode in $SCALE_MODES; do
	for d in $devs; do : > "$BENCH_WORK/scale.$d"; done
	for _ in $(seq "$BENCH_ROUNDS"); do
		for d in $devs; do
			scale_run "$d" "$mode" >> "$BENCH_WORK/scale.$d"
		done
	done
	printf '%-5s' "$mode"
	for d in $devs; do
		m=$(bench_median "$BENCH_WORK/scale.$d")
		echo "$d $mode $SCALE_SIZE $m" >> "$data"
		printf ' %6s %10s' "$d" "$m"
	done
	echo
done

bench_devices_down
