#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The extended verbs: verbs/ext_api.c, a kselftest_harness.h test (ibv_wr_*
# batches, ibv_start_poll, failing batches post nothing, unsupported
# operations refused) whose cases each run on the local transport (variant
# "local") and in RoCEv2 packets through lo (variant "wire": it sets
# force_wire), one TAP line each.
. "$(dirname "$0")/../lib.sh"

add_softrma0
SOFTRMA_DEV=softrma0 SOFTRMA_IPV4=10.9.0.1 "$SOFTRMA_BIN/ext_api" || fail "ext_api"
