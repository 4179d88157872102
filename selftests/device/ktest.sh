#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Fast registration and invalidation through kernel verbs, as NVMe-oF, iSER
# and NFS/RDMA use them, ib_resize_cq() of kernel CQs, and a receive posted
# as another CPU moves the QP to error (held by a kprobe in between):
# selftests/kmod/softrma_ktest.c, a module whose init runs its cases against
# one device and logs them as KTAP (shown here).  On softrma0 it runs twice,
# on the local transport (force_wire=0) and in RoCEv2 packets
# (force_wire=1).  No case may fail or skip, and the kernel log must show no
# warning.
#
# KTEST_DEV_TYPE=rxe runs the module against rdma_rxe on the same dummy
# netdev instead, to check the test against a device that has it all.
# selftests/vm/run does not pass its environment to the guest: name it in
# the guest's command,
#   selftests/vm/run -- env KTEST_DEV_TYPE=rxe sh selftests/run_tests.sh device/ktest.sh
# KTEST_CASES=SUBSTR runs only the cases whose name contains SUBSTR.
# timeout: 600 s
. "$(dirname "$0")/../lib.sh"

ktest_ko=$SOFTRMA_TOP/build/$(uname -r)/softrma_ktest.ko
[ -e "$ktest_ko" ] || fail "no $ktest_ko: make modules"

# ktest DEV DESC: the module's cases against DEV, their KTAP lines shown
# prefixed with DESC.
ktest() {
	before=$(dmesg | wc -l)
	insmod "$ktest_ko" dev="$1" slowdown="$SOFTRMA_SLOWDOWN" ${KTEST_CASES:+cases="$KTEST_CASES"}
	rc=$?
	grep -q '^softrma_ktest ' /proc/modules && rmmod softrma_ktest
	dmesg | tail -n +"$((before + 1))" > /tmp/ktest.log
	sed -n 's/^.*softrma_ktest: //p' /tmp/ktest.log > /tmp/ktest.ktap
	sed "s/^/# $2: /" /tmp/ktest.ktap
	if grep -nE 'WARNING:|BUG:|Oops|Call Trace|UBSAN|refcount_t:|list_(add|del) corruption' \
			/tmp/ktest.log; then
		fail "$2: the kernel log shows a bug"
	fi
	grep -qx 'KTAP version 1' /tmp/ktest.ktap || fail "$2: no KTAP output"
	plan=$(sed -n 's/^1\.\.\([0-9][0-9]*\)$/\1/p' /tmp/ktest.ktap)
	ran=$(grep -cE '^(not )?ok [0-9]+ ' /tmp/ktest.ktap)
	[ -n "$plan" ] && [ "$ran" = "$plan" ] || fail "$2: $ran of ${plan:-no plan} cases reported"
	! grep -q '^not ok ' /tmp/ktest.ktap || fail "$2: $(grep -c '^not ok ' /tmp/ktest.ktap) cases failed"
	! grep -q '# SKIP' /tmp/ktest.ktap || fail "$2: $(grep -c '# SKIP' /tmp/ktest.ktap) cases skipped"
	[ "$rc" = 0 ] || fail "$2: insmod failed ($rc)"
}

if [ "${KTEST_DEV_TYPE:-softrma}" = rxe ]; then
	add_rxe0
	ktest rxe0 rxe0
	exit 0
fi

add_softrma0
params=/sys/module/softrma/parameters
echo 0 > $params/force_wire || fail "no force_wire parameter"
ktest softrma0 local
echo 1 > $params/force_wire
sent=$(port_counter softrma0 sent_pkts)
ktest softrma0 wire
echo 0 > $params/force_wire
sent=$(($(port_counter softrma0 sent_pkts) - sent))
info "wire: $sent packets sent"
[ "$sent" -gt 0 ] || fail "wire: the cases did not go in packets"
