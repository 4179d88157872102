#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# UD between local QPs: see verbs/ud_ops.c (network header in front of the
# payload, immediate data, Q_Key, short receive, MTU, AH of another PD).
. "$(dirname "$0")/../lib.sh"

load_softrma
add_dummy d0 10.9.0.1/24
rdma link add softrma0 type softrma netdev d0 || fail "rdma link add"
wait_gid softrma0 "::ffff:10.9.0.1" || fail "no GID"
"$SOFTRMA_BIN/ud_ops" softrma0 10.9.0.1 || fail "ud_ops"
