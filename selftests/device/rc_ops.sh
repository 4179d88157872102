#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# RC data path between local QPs: see verbs/rc_ops.c (every opcode and size,
# unaligned transfers, every error status, garbage in the shared SQ ring).
. "$(dirname "$0")/../lib.sh"

add_softrma0
"$SOFTRMA_BIN/rc_ops" softrma0 10.9.0.1 || fail "rc_ops"
