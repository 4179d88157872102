#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The object limits (module parameters max_pd, max_qp, max_cq, max_srq,
# max_mr, max_mw, max_ah): out-of-range values refused at load, the limits
# advertised by query_device, and enforced with ENOMEM at exactly the limit,
# counting the kernel's own objects.  Then the rings of a user QP, and
# those a resize makes, are charged to the creator's memory cgroup, and a
# cgroup's memory.max stops a process that creates QPs or resizes queues.
. "$(dirname "$0")/../lib.sh"

modprobe -a ib_uverbs udp_tunnel ip6_udp_tunnel || fail "modprobe"
expect_fail "max_qp=0" insmod "$SOFTRMA_KO" max_qp=0
expect_fail "max_mr=2^24" insmod "$SOFTRMA_KO" max_mr=16777216
expect_fail "max_mw=0" insmod "$SOFTRMA_KO" max_mw=0
insmod "$SOFTRMA_KO" max_pd=7 max_qp=9 max_cq=6 max_srq=5 max_mr=11 max_mw=3 max_ah=4 ||
	fail "insmod with limits"
add_softrma0

for f in pd:7 qp:9 cq:6 srq:5 mr:11 mw:3 ah:4; do
	expect_eq "max_${f%:*} advertised" "$(devinfo_field softrma0 "max_${f%:*}")" "${f#*:}"
done

# held KIND: objects of KIND softrma0 holds now, from "rdma resource show";
# a kernel PD has an MR of its own (local_dma_lkey) that restrack lists not.
held() {
	n=$(rdma resource show softrma0 | grep -o " $1 [0-9]*" | awk '{ print $2 }')
	[ "$1" = mr ] && n=$((n + $(rdma resource show pd dev softrma0 |
		grep -c 'comm \[ib_core\]')))
	echo "${n:-0}"
}
for f in pd:7 qp:9 cq:6 srq:5 mr:11 mw:3; do
	kind=${f%:*}
	"$SOFTRMA_BIN/limits" softrma0 fill "$kind" $((${f#*:} - $(held "$kind"))) ||
		fail "$kind at its limit"
done
"$SOFTRMA_BIN/limits" softrma0 fill ah 4 || fail "ah at its limit"
rdma link delete softrma0 || fail "rdma link delete"
rmmod softrma || fail "rmmod"
ip link delete d0

# Memory cgroups: one QP's rings (2 x 16384 entries of 16 SGEs, 8 MiB or
# more) are charged to the process that creates it; with memory.max at
# 48 MiB a process gets at least one and at most 6 such QPs, then ENOMEM,
# without the OOM killer.
add_softrma0
mountpoint -q /sys/fs/cgroup || mount -t cgroup2 cgroup2 /sys/fs/cgroup ||
	skip "no cgroup2"
grep -qw memory /sys/fs/cgroup/cgroup.controllers || skip "no memory controller"
echo +memory > /sys/fs/cgroup/cgroup.subtree_control
cg=/sys/fs/cgroup/softrma-limits
rmdir "$cg" 2>/dev/null
mkdir "$cg" || fail "mkdir $cg"
in_cgroup() { sh -c 'echo $$ > '"$cg"'/cgroup.procs && exec "$@"' sh "$@"; }

in_cgroup "$SOFTRMA_BIN/limits" softrma0 rings 1 > /tmp/rings.log ||
	fail "rings: $(cat /tmp/rings.log)"
charged=$(sed -n 's/^charged //p' /tmp/rings.log)
info "one QP with two 16384-entry rings: $charged bytes charged"
[ "${charged:-0}" -ge $((8 << 20)) ] || fail "QP rings charged $charged bytes, want 8 MiB or more"

echo $((48 << 20)) > "$cg/memory.max"
in_cgroup "$SOFTRMA_BIN/limits" softrma0 rings 64 > /tmp/rings.log ||
	fail "rings under memory.max: $(cat /tmp/rings.log)"
created=$(sed -n 's/^created //p' /tmp/rings.log)
info "memory.max 48 MiB: $created QPs created, the next refused with ENOMEM"
[ "$created" -ge 1 ] && [ "$created" -le 6 ] ||
	fail "$created QPs of 8 MiB under a 48 MiB memory.max"

# A resize charges its new ring the same way: a CQ grown to max_cqe (12 MiB
# of entries) and an SRQ to max_srq_wr; with memory.max at 48 MiB a process
# resizes at least one and at most 3 such pairs, then ENOMEM.
echo max > "$cg/memory.max"
in_cgroup "$SOFTRMA_BIN/limits" softrma0 resize 1 > /tmp/resize.log ||
	fail "resize: $(cat /tmp/resize.log)"
charged=$(sed -n 's/^charged //p' /tmp/resize.log)
info "a CQ and an SRQ resized to their maximum: $charged bytes charged"
[ "${charged:-0}" -ge $((12 << 20)) ] || fail "resized rings charged $charged bytes, want 12 MiB or more"

echo $((48 << 20)) > "$cg/memory.max"
in_cgroup "$SOFTRMA_BIN/limits" softrma0 resize 64 > /tmp/resize.log ||
	fail "resize under memory.max: $(cat /tmp/resize.log)"
resized=$(sed -n 's/^resized //p' /tmp/resize.log)
info "memory.max 48 MiB: $resized pairs resized, the next refused with ENOMEM"
[ "$resized" -ge 1 ] && [ "$resized" -le 3 ] ||
	fail "$resized pairs of 12.5 MiB under a 48 MiB memory.max"
expect_eq "OOM kills" "$(sed -n 's/^oom_kill //p' "$cg/memory.events")" 0
rmdir "$cg" || fail "rmdir $cg"
