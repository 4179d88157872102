#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The extended verbs: see verbs/ext_api.c (ibv_wr_* batches, ibv_start_poll,
# failing batches post nothing, unsupported operations refused).
. "$(dirname "$0")/../lib.sh"

add_softrma0
"$SOFTRMA_BIN/ext_api" softrma0 10.9.0.1 || fail "ext_api"
