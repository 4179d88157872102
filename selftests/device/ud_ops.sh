#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# UD between local QPs: see verbs/ud_ops.c (network header in front of the
# payload, immediate data, Q_Key, short receive, MTU, AH of another PD).
. "$(dirname "$0")/../lib.sh"

add_softrma0
"$SOFTRMA_BIN/ud_ops" softrma0 10.9.0.1 || fail "ud_ops"
