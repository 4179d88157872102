#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# "rdma link delete" and "rmmod softrma" while an application holds a
# context and a PD: both succeed at once, the application sees
# IBV_EVENT_DEVICE_FATAL and failing verbs, and nothing oopses.
. "$(dirname "$0")/../lib.sh"

load_softrma
add_dummy d0

rdma link add softrma0 type softrma netdev d0 || fail "rdma link add"
"$SOFTRMA_BIN/hold_context" softrma0 > /tmp/hold &
pid=$!
wait_line /tmp/hold ready
timeout 20 rdma link delete softrma0 || fail "rdma link delete with a context open"
wait "$pid" || fail "hold_context after delete: $(cat /tmp/hold)"

rdma link add softrma0 type softrma netdev d0 || fail "rdma link add"
"$SOFTRMA_BIN/hold_context" softrma0 > /tmp/hold &
pid=$!
wait_line /tmp/hold ready
timeout 20 rmmod softrma || fail "rmmod with a context open"
wait "$pid" || fail "hold_context after rmmod: $(cat /tmp/hold)"
[ -z "$(softrma_links)" ] || fail "devices left: $(softrma_links)"
