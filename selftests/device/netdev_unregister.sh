#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# A netdev that goes away takes its softrma device with it, also while an
# application holds the device open and when the netdev is a veth whose
# peer is deleted.
. "$(dirname "$0")/../lib.sh"

load_softrma
add_dummy d0
rdma link add softrma0 type softrma netdev d0 || fail "rdma link add"
timeout "$(bound 10)" ip link del d0 || fail "ip link del d0 hangs"
wait_gone softrma0

add_dummy d1
rdma link add softrma1 type softrma netdev d1 || fail "rdma link add"
while_held softrma1 "ip link del d1" ip link del d1
wait_gone softrma1

ip link add v0 type veth peer name v1 || fail "veth"
rdma link add softrma2 type softrma netdev v0 || fail "rdma link add"
timeout "$(bound 10)" ip link del v1 || fail "ip link del v1 hangs"
wait_gone softrma2
