#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The extended verbs: see verbs/ext_api.c (ibv_wr_* batches, ibv_start_poll,
# failing batches post nothing, unsupported operations refused).
. "$(dirname "$0")/../lib.sh"

load_softrma
add_dummy d0 10.9.0.1/24
rdma link add softrma0 type softrma netdev d0 || fail "rdma link add"
wait_gid softrma0 "::ffff:10.9.0.1" || fail "no GID"
"$SOFTRMA_BIN/ext_api" softrma0 10.9.0.1 || fail "ext_api"
