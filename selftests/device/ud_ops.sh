#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# UD between QPs of one device: verbs/ud_ops.c, a kselftest_harness.h test
# (network header in front of the payload, immediate data, Q_Key, short
# receive, MTU, AH of another PD) whose cases each run on the local
# transport (variant "local") and with every datagram a RoCEv2 packet
# through lo (variant "wire": it sets force_wire), one TAP line each.
. "$(dirname "$0")/../lib.sh"

add_softrma0
SOFTRMA_DEV=softrma0 SOFTRMA_IPV4=10.9.0.1 "$SOFTRMA_BIN/ud_ops" || fail "ud_ops"
