#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Memory registration through plain libibverbs: see verbs/reg_mr.c.  Also:
# RLIMIT_MEMLOCK is enforced by the kernel's own pinned-page accounting, and
# MRs of a process that dies are released (the runner then checks that
# "rdma resource show" is empty and softrma unloads).
. "$(dirname "$0")/../lib.sh"

load_softrma
add_dummy d0 10.9.0.1/24
rdma link add softrma0 type softrma netdev d0 || fail "rdma link add"

"$SOFTRMA_BIN/reg_mr" softrma0 || fail "reg_mr"
(ulimit -l 64 && exec setpriv --bounding-set=-ipc_lock -- \
	"$SOFTRMA_BIN/reg_mr" softrma0 memlock) || fail "reg_mr memlock"

"$SOFTRMA_BIN/reg_mr" softrma0 hold 64 > /tmp/hold &
pid=$!
wait_line /tmp/hold ready
expect_eq "MRs listed while held" "$(rdma resource show mr dev softrma0 | grep -c rkey)" 1
kill -9 "$pid"
wait "$pid"
expect_eq "MRs after kill -9" "$(rdma resource show mr dev softrma0 | grep -c rkey)" 0
