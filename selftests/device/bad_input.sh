#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# "rdma link" with bad input fails cleanly and leaves nothing behind.
# One netdev carries at most one softrma device (EEXIST), as with rxe.
# A taken name is refused by the RDMA core itself, with ENFILE.
. "$(dirname "$0")/../lib.sh"

load_softrma
add_dummy d0
add_dummy d1

expect_fail "netdev that does not exist" \
	rdma link add softrma0 type softrma netdev nosuch0
expect_eq "devices after a missing netdev" "$(softrma_links)" ""

rdma link add softrma0 type softrma netdev d0 || fail "rdma link add"
expect_fail "second device on d0" rdma link add softrma9 type softrma netdev d0
expect_fail "duplicate name" rdma link add softrma0 type softrma netdev d1
expect_fail "name with a format" rdma link add 'bad%d' type softrma netdev d1
expect_eq "devices after refusals" "$(softrma_links)" softrma0

# Refusals must not have left d1 marked as taken.
rdma link add softrma1 type softrma netdev d1 || fail "d1 after refusals"
expect_fail "delete of an unknown device" rdma link delete nosuch0
expect_eq "devices" "$(softrma_links | sort | tr '\n' ' ')" "softrma0 softrma1 "
