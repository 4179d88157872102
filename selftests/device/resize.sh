#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Resizing CQs and SRQs that hold work: verbs/resize.c, a
# kselftest_harness.h test (completions and receives kept in order through
# growing and shrinking, also while they arrive; sizes below what is held,
# out of range or below the armed limit refused; the limit event after a
# resize; corrupted ring indices refused with EPROTO; a ring the provider
# cannot map) whose cases each run on the local transport (variant "local")
# and in RoCEv2 packets through lo (variant "wire": it sets force_wire), one
# TAP line each.
. "$(dirname "$0")/../lib.sh"

add_softrma0
SOFTRMA_DEV=softrma0 SOFTRMA_IPV4=10.9.0.1 "$SOFTRMA_BIN/resize" || fail "resize"
