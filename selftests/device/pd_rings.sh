#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Parent domains and rings in memory their allocators give:
# verbs/pd_rings.c's rings (the allocator's calls, the rings really in its
# memory, traffic, frees after destroy, EOPNOTSUPP resizes, EBUSY
# deallocs, bad attributes), hostile (read-only anonymous memory, a
# read-only mapping of a read-only file whose bytes must not change,
# memory not page-aligned or not all mapped, an RQ its process unmapped,
# a child killed with its rings in its memory) and, as an unprivileged
# user, memlock (pinned rings count against RLIMIT_MEMLOCK).  rdma-core's
# own test_parent_domain runs in device/pyverbs.sh.
. "$(dirname "$0")/../lib.sh"

add_softrma0
run() { SOFTRMA_DEV=softrma0 SOFTRMA_IPV4=10.9.0.1 "$SOFTRMA_BIN/pd_rings" "$@"; }

run rings || fail "rings"
run hostile || fail "hostile"
SOFTRMA_DEV=softrma0 SOFTRMA_IPV4=10.9.0.1 as_user 65534 "$SOFTRMA_BIN/pd_rings" memlock ||
	fail "memlock"
