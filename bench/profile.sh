#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Run in a guest by `make profile`: system-wide perf profiles (perf record
# -a -g around the perftest client) of DEV:TOOL:SIZE runs on the devices of
# bench/devices.sh.  For each, in $SOFTRMA_VM_OUT: NAME.txt, the symbols
# by their own share of the samples; NAME.children.txt, by the share of
# the samples under them; NAME.callers.txt, the callers of those above 3 %;
# NAME.comm.txt, by task; NAME.client, perftest's
# output; NAME.counters, what the run added to a softrma device's counters.
# Runs are PROFILE_SCALE (10) times as long as the bench's, so that the
# steady state outweighs perftest's setup in the samples.  perf.data stays
# in the guest's /tmp: written over 9p it would cost the guest more than
# what it records.
#
# usage: profile.sh DEV:TOOL:SIZE...
top=$(cd "$(dirname "$0")/.." && pwd)
export RDMAV_DRIVERS="$top/user/libsoftrma"
. "$top/bench/lib.sh"
. "$top/bench/devices.sh"
out=${SOFTRMA_VM_OUT:-/tmp}
command -v perf >/dev/null || { echo "profile: perf missing (run 'make deps')"; exit 1; }
# Kernel symbols for perf report, and samples of every task.
echo 0 > /proc/sys/kernel/kptr_restrict
echo -1 > /proc/sys/kernel/perf_event_paranoid
bench_devices_up

# counters DEV: the "name value" pairs of a softrma device's counters.
counters() {
	case $1 in
	local) rdma statistic show link softrma0/1 ;;
	wire) ip netns exec nsw rdma statistic show link softw/1 ;;
	esac | tr ' ' '\n' | awk 'prev ~ /^[a-z_]+$/ && $1 ~ /^[0-9]+$/ { print prev, $1 } { prev = $1 }'
}

# report OPTIONS...: perf report of /tmp/perf.data, without its comments.
report() {
	perf report -i /tmp/perf.data --kallsyms=/proc/kallsyms --stdio -g none "$@" 2>/dev/null |
		grep -v '^#' | grep -v '^$'
}

for spec in "$@"; do
	dev=${spec%%:*} rest=${spec#*:}
	tool=${rest%%:*} size=${rest#*:}
	name=$dev-$tool-$size
	counters "$dev" > "$BENCH_WORK/counters.before"
	n=$(($(bench_iters "$size") * ${PROFILE_SCALE:-10}))
	v=$(BENCH_PERF=/tmp/perf.data bench_run "$dev" "$tool" "$size" "$n")
	cp "$BENCH_WORK/client.log" "$out/$name.client"
	counters "$dev" | awk 'NR == FNR { before[$1] = $2; next }
		$2 != before[$1] { print $1, $2 - before[$1] }' \
		"$BENCH_WORK/counters.before" - > "$out/$name.counters"
	report --no-children --sort sym --percent-limit 0.5 > "$out/$name.txt"
	report --children --sort sym --percent-limit 2 > "$out/$name.children.txt"
	report --no-children --sort comm --percent-limit 1 > "$out/$name.comm.txt"
	# Who calls each symbol above 3 %, by the callers' share of its samples.
	report --no-children --sort sym --percent-limit 3 -g graph,0.5,callee \
		> "$out/$name.callers.txt"
	rm -f /tmp/perf.data
	echo "$name: $v $(bench_unit "$tool" "$size"); top symbols:"
	head -n 12 "$out/$name.txt"
	[ -s "$out/$name.counters" ] && echo "counters: $(tr "\n" " " < "$out/$name.counters")"
done
bench_devices_down
