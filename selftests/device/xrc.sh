#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# XRC, on the local transport and in RoCEv2 packets through lo (force_wire):
# ibv_xsrq_pingpong (three clients, each an XRC SEND QP to the server's XRC
# RECV QP and an SRQ of its own, the domain opened on a file; it checks
# every message; its server may send before a client's XRC RECV QP is in
# RTR, and the request is sent again after the ACK timeout) and
# rdma_xserver/rdma_xclient in XRC mode (rdma_cm); then
# verbs/xrc.c, a kselftest_harness.h test whose cases each run on both
# transports (domains shared through a file and a forked child, XRC SRQ
# numbers, SENDs and RDMA into the SRQ a request names and memory of that
# SRQ's PD only, hostile SRQ numbers, an SRQ destroyed under traffic, a
# process killed mid-traffic, posts refused), as root and as an
# unprivileged user (the wire cases skip: force_wire is root's), after which
# softrma0 must hold no object.  The pyverbs XRC tests run in
# device/pyverbs.sh.
. "$(dirname "$0")/../lib.sh"

add_softrma0

# Three clients at once; each must succeed.
# shellcheck disable=SC2016 # expanded by the client's shell
xsrq_clients='pids=
for i in 1 2 3; do
	ibv_xsrq_pingpong -d softrma0 -g 1 -n 100 10.9.0.1 & pids="$pids $!"
done
for p in $pids; do wait $p || exit 1; done'

for wire in 0 1; do
	echo "$wire" > /sys/module/softrma/parameters/force_wire
	pair "ibv_xsrq_pingpong -c 3, force_wire=$wire" \
		"timeout $(bound 120) ibv_xsrq_pingpong -d softrma0 -g 1 -n 100 -c 3" \
		"$xsrq_clients"
	pair "rdma_xserver -c x, force_wire=$wire" "rdma_xserver -c x" \
		"rdma_xclient -s 10.9.0.1 -c x"
done
echo 0 > /sys/module/softrma/parameters/force_wire

SOFTRMA_DEV=softrma0 SOFTRMA_IPV4=10.9.0.1 "$SOFTRMA_BIN/xrc" || fail "xrc"
SOFTRMA_DEV=softrma0 SOFTRMA_IPV4=10.9.0.1 as_user 65534 "$SOFTRMA_BIN/xrc" ||
	fail "xrc, unprivileged"
expect_no_objects softrma0
