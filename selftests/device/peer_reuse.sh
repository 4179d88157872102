#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# A connected QP answers the local QP object it was connected to, not a
# later QP with that number (review 2, G11): verbs/peer_reuse connects A on
# softrma0 to C on softrma1 (local transport), lets C go, has softrma1
# deleted and added again so that its QP numbers start over, and checks
# that the new device's first QP, with C's number and GID, cannot WRITE
# into A's memory.
. "$(dirname "$0")/../lib.sh"

add_softrma01

relink="rdma link delete softrma1 && rdma link add softrma1 type softrma netdev d1 &&
	for i in \$(seq 50); do
		ibv_devinfo -v -d softrma1 2>/dev/null | grep -q ::ffff:10.9.1.1 && exit 0
		sleep 0.1
	done; exit 1"
timeout "$(bound 120)" "$SOFTRMA_BIN/peer_reuse" softrma0 10.9.0.1 softrma1 10.9.1.1 "$relink"
status=$?
[ "$status" = 4 ] && skip "the new softrma1 did not reuse the QP number"
[ "$status" = 0 ] || fail "peer_reuse: status $status"
