#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The provider opens softrma devices through plain libibverbs calls, keeps
# matching them after a rename, and leaves other drivers' devices alone.
. "$(dirname "$0")/../lib.sh"

load_softrma
add_dummy d0 10.9.0.1/24
add_dummy d1 10.9.1.1/24
rdma link add softrma0 type softrma netdev d0 || fail "rdma link add"
wait_gid softrma0 "::ffff:10.9.0.1" || fail "no IPv4 GID"

"$SOFTRMA_BIN/open_device" softrma0 10.9.0.1 1024 || fail "open_device"
expect_eq "provider of softrma0" "$("$SOFTRMA_BIN/which_provider" softrma0)" \
	libsoftrma-rdmav34.so

rdma dev set softrma0 name renamed0 || fail "rdma dev set name"
expect_eq "provider after rename" "$("$SOFTRMA_BIN/which_provider" renamed0)" \
	libsoftrma-rdmav34.so
"$SOFTRMA_BIN/open_device" renamed0 10.9.0.1 1024 || fail "open_device after rename"

# rdma_rxe binds UDP port 4791 of the initial namespace when it loads, which
# softrma holds while it has a device there: softrma's device goes first.
rdma link delete renamed0 || fail "rdma link delete renamed0"
modprobe rdma_rxe || fail "modprobe rdma_rxe"
rdma link add rxe0 type rxe netdev d1 || fail "rdma link add rxe0"
owner=$("$SOFTRMA_BIN/which_provider" rxe0) || fail "which_provider rxe0"
info "rxe0 is served by $owner"
[ "$owner" != libsoftrma-rdmav34.so ] || fail "softrma's provider took rxe0"
rdma link delete rxe0 || fail "rdma link delete rxe0"
rmmod rdma_rxe || fail "rmmod rdma_rxe"
