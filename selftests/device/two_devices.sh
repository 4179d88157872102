#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Two devices on two netdevs at once, each with its own identity; removing
# one leaves the other working.
. "$(dirname "$0")/../lib.sh"

add_softrma01
expect_eq "devices" "$(softrma_links | sort | tr '\n' ' ')" "softrma0 softrma1 "
[ "$(devinfo_field softrma0 node_guid)" != "$(devinfo_field softrma1 node_guid)" ] ||
	fail "both devices have one GUID"
"$SOFTRMA_BIN/open_device" softrma0 10.9.0.1 1024 || fail "open softrma0"
"$SOFTRMA_BIN/open_device" softrma1 10.9.1.1 1024 || fail "open softrma1"

rdma link delete softrma0 || fail "delete softrma0"
"$SOFTRMA_BIN/open_device" softrma1 10.9.1.1 1024 || fail "softrma1 after softrma0 left"
expect_eq "devices" "$(softrma_links)" softrma1
