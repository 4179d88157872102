#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# RC data path between QPs of one device: verbs/rc_ops.c, a
# kselftest_harness.h test (every opcode and size, unaligned transfers, every
# error status, RNR, garbage in the shared SQ ring, SRQ, UC drops) whose
# cases each run on the local transport (variant "local") and in RoCEv2
# packets through lo (variant "wire": it sets force_wire), one TAP line each.
. "$(dirname "$0")/../lib.sh"

add_softrma0
SOFTRMA_DEV=softrma0 SOFTRMA_IPV4=10.9.0.1 "$SOFTRMA_BIN/rc_ops" || fail "rc_ops"
