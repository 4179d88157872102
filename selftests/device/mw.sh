#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Memory windows, type 1 and type 2B: verbs/mw.c, a kselftest_harness.h
# test whose cases each run on the local transport (variant "local") and in
# RoCEv2 packets through lo (variant "wire": it sets force_wire), one TAP
# line each.
#
# MW_DEV_TYPE=rxe runs the variant "local" against rdma_rxe instead, to
# check the test's expectations on a device that has memory windows:
#   selftests/vm/run -- env MW_DEV_TYPE=rxe sh selftests/run_tests.sh device/mw.sh
. "$(dirname "$0")/../lib.sh"

if [ "${MW_DEV_TYPE:-softrma}" = rxe ]; then
	load_softrma	# mw sets softrma's force_wire as each variant wants
	add_rxe0
	SOFTRMA_DEV=rxe0 SOFTRMA_IPV4=10.9.0.1 "$SOFTRMA_BIN/mw" -v local ||
		fail "mw on rdma_rxe"
	exit 0
fi
add_softrma0
SOFTRMA_DEV=softrma0 SOFTRMA_IPV4=10.9.0.1 "$SOFTRMA_BIN/mw" || fail "mw"
