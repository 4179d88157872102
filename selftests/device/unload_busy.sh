#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# "rdma link delete" and "rmmod softrma" while an application holds a
# context and a PD: both succeed at once, the application sees
# IBV_EVENT_DEVICE_FATAL and failing verbs, and nothing oopses.
. "$(dirname "$0")/../lib.sh"

load_softrma
add_dummy d0

rdma link add softrma0 type softrma netdev d0 || fail "rdma link add"
while_held softrma0 "rdma link delete" rdma link delete softrma0

rdma link add softrma0 type softrma netdev d0 || fail "rdma link add"
while_held softrma0 "rmmod softrma" rmmod softrma
[ -z "$(softrma_links)" ] || fail "devices left: $(softrma_links)"
