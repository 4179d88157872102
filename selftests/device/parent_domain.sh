#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Parent domains and the rings their allocators give: verbs/parent_domain.c,
# a kselftest_harness.h test (bad attributes, EBUSY deallocs, the
# allocator's calls and frees, RC and UD traffic with the rings in the
# caller's memory, refused resizes, USE_DEFAULT and no allocators; hostile
# memory: none, read-only, a read-only file's mapping whose bytes must not
# change, not page-aligned, not all mapped; a CQ ring unmapped while the
# kernel writes into it; a child killed with its rings in its memory) whose
# cases each run on the local transport (variant "local") and in RoCEv2
# packets through lo (variant "wire"), one TAP line each.  Then softrma0
# must hold no object: not even the killed children's.  Last, as an
# unprivileged user, verbs/pd_memlock: pinned rings count against
# RLIMIT_MEMLOCK.
. "$(dirname "$0")/../lib.sh"

add_softrma0
SOFTRMA_DEV=softrma0 SOFTRMA_IPV4=10.9.0.1 "$SOFTRMA_BIN/parent_domain" ||
	fail "parent_domain"
expect_no_objects softrma0
SOFTRMA_DEV=softrma0 SOFTRMA_IPV4=10.9.0.1 as_user 65534 "$SOFTRMA_BIN/pd_memlock" ||
	fail "pd_memlock"
