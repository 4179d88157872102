# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Shared by bench/guest.sh (one guest) and bench/wire.sh (two guests): the
# perftest rows, rounds interleaving the devices, medians and ratios.

BENCH_ITER=${BENCH_ITER:-1000}
BENCH_ROUNDS=${BENCH_ROUNDS:-3}
# BENCH_ROWS: TOOL:SIZE rows, these unless the environment names others.
BENCH_ROWS=${BENCH_ROWS:-"ib_write_bw:4096 ib_write_bw:65536 ib_write_bw:1048576
ib_read_bw:65536 ib_send_bw:65536 ib_send_bw:64
ib_write_lat:2 ib_read_lat:2 ib_send_lat:2"}
BENCH_WORK=${BENCH_WORK:-/tmp/bench}
mkdir -p "$BENCH_WORK"

# bench_iters SIZE: iterations of a row; 64-byte rows measure a message rate.
bench_iters() {
	case $1 in
	64) echo $((BENCH_ITER * 20)) ;;
	1048576) echo $((BENCH_ITER / 10)) ;;
	*) echo "$BENCH_ITER" ;;
	esac
}

bench_unit() {
	case $1:$2 in
	*_lat:*) echo usec ;;
	*_bw:64) echo Mmsg/s ;;
	*) echo MB/s ;;
	esac
}

# bench_value LOG TOOL SIZE: from a perftest client's output, the average
# bandwidth, the message rate of a 64-byte row, or the typical latency;
# "FAIL" when it printed none.
bench_value() {
	case $2:$3 in
	*_lat:* | *_bw:64) col=5 ;;
	*) col=4 ;;
	esac
	awk -v c=$col '$1 ~ /^[0-9]+$/ && NF >= c && $c != "inf" { v = $c }
		END { print v ? v : "FAIL" }' "$1"
}

# bench_median FILE: of the numbers in FILE, one a line ("FAIL" if none).
bench_median() {
	grep -E '^[0-9.]+$' "$1" | sort -g | awk '{ v[NR] = $1 }
		END { print NR ? (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) : "FAIL" }'
}

# bench_ratio VALUE REF TOOL: VALUE against REF, higher is better.
bench_ratio() {
	awk -v v="$1" -v r="$2" -v t="$3" 'BEGIN {
		if (v + 0 <= 0 || r + 0 <= 0) { print "-"; exit }
		printf "%.2fx\n", (t ~ /_lat$/) ? r / v : v / r }'
}

# bench_table RUN REF DEV...: every row of BENCH_ROWS BENCH_ROUNDS times,
# the DEVs interleaved round by round ("RUN DEV TOOL SIZE ITERS" prints
# one result), then the medians and each DEV's ratio to REF, one line a
# row.  The medians go to $BENCH_DATA as "TOOL SIZE DEV MEDIAN".
bench_table() {
	run=$1 ref=$2
	shift 2
	vw=9 rw=9
	for d in "$@"; do
		[ "${#d}" -gt "$vw" ] && vw=${#d}
		[ $((${#d} + 1 + ${#ref})) -gt "$rw" ] && rw=$((${#d} + 1 + ${#ref}))
	done
	printf '%-13s %8s %7s' test size unit
	for d in "$@"; do printf " %${vw}s" "$d"; done
	for d in "$@"; do [ "$d" = "$ref" ] || printf " %${rw}s" "$d/$ref"; done
	echo
	for spec in $BENCH_ROWS; do
		tool=${spec%%:*} size=${spec#*:}
		n=$(bench_iters "$size")
		for d in "$@"; do : > "$BENCH_WORK/results.$d"; done
		for _ in $(seq "$BENCH_ROUNDS"); do
			for d in "$@"; do
				"$run" "$d" "$tool" "$size" "$n" >> "$BENCH_WORK/results.$d"
			done
		done
		printf '%-13s %8s %7s' "$tool" "$size" "$(bench_unit "$tool" "$size")"
		for d in "$@"; do
			bench_median "$BENCH_WORK/results.$d" > "$BENCH_WORK/median.$d"
			echo "$tool $size $d $(cat "$BENCH_WORK/median.$d")" >> "$BENCH_DATA"
			printf " %${vw}s" "$(cat "$BENCH_WORK/median.$d")"
		done
		for d in "$@"; do
			[ "$d" = "$ref" ] || printf " %${rw}s" "$(bench_ratio \
				"$(cat "$BENCH_WORK/median.$d")" \
				"$(cat "$BENCH_WORK/median.$ref")" "$tool")"
		done
		echo
	done
}
