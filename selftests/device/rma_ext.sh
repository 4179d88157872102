#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# RDMA FLUSH and ATOMIC WRITE: verbs/rma_ext.c, a kselftest_harness.h test
# whose cases each run on the local transport (variant "local") and in
# RoCEv2 packets through lo (variant "wire": it sets force_wire), one TAP
# line each.  The variant "wire" runs twice: FLUSH packets with the IBA's
# ICRC, then with rdma_rxe's (rxe_flush_icrc=1); each run must have sent its
# packets, and softrma must take both forms.  Then, where the kernel's
# rdma_rxe has them (6.2 on), the variant "peer" against rdma_rxe in both
# directions across a veth pair (softrma_rxe_pair in lib.sh), the packets'
# ICRCs checked as well.
. "$(dirname "$0")/../lib.sh"

add_softrma0
params=/sys/module/softrma/parameters
# sent_since COUNT: more than 40 packets went out of softrma0 since its
# sent_pkts was COUNT.
sent_since() {
	[ "$(port_counter softrma0 sent_pkts)" -gt "$(($1 + 40))" ]
}

echo 0 > $params/rxe_flush_icrc || fail "no rxe_flush_icrc parameter"
sent=$(port_counter softrma0 sent_pkts)
SOFTRMA_DEV=softrma0 SOFTRMA_IPV4=10.9.0.1 "$SOFTRMA_BIN/rma_ext" -V peer ||
	fail "rma_ext, local transport and in packets"
sent_since "$sent" || fail "rma_ext's variant wire did not go in packets"

echo 1 > $params/rxe_flush_icrc
sent=$(port_counter softrma0 sent_pkts)
SOFTRMA_DEV=softrma0 SOFTRMA_IPV4=10.9.0.1 "$SOFTRMA_BIN/rma_ext" -v wire
rc=$?
echo 0 > $params/rxe_flush_icrc
[ $rc = 0 ] || fail "rma_ext in packets, rxe_flush_icrc=1"
sent_since "$sent" ||
	fail "rma_ext's variant wire did not go in packets (rxe_flush_icrc=1)"
[ "$(port_counter softrma0 rcvd_icrc_err)" = 0 ] || fail "ICRC errors"
rdma link delete softrma0 || fail "rdma link delete softrma0"

major=$(uname -r | cut -d. -f1) minor=$(uname -r | cut -d. -f2)
if [ "$major" -lt 6 ] || { [ "$major" = 6 ] && [ "$minor" -lt 2 ]; }; then
	info "SKIP against rdma_rxe: it has FLUSH and ATOMIC WRITE from 6.2 on"
	exit 0
fi
softrma_rxe_pair 10.13.0

# rxe drops FLUSH packets that carry the IBA's ICRC (see admin-guide.md).
echo 1 > $params/rxe_flush_icrc
capture_start vr 40
SOFTRMA_DEV=softs SOFTRMA_IPV4=10.13.0.1 \
	SOFTRMA_PEER_DEV=rxer SOFTRMA_PEER_IPV4=10.13.0.2 \
	"$SOFTRMA_BIN/rma_ext" -v peer
rc=$?
echo 0 > $params/rxe_flush_icrc
[ $rc = 0 ] || fail "rma_ext, softrma to rdma_rxe"
capture_check
SOFTRMA_DEV=rxer SOFTRMA_IPV4=10.13.0.2 \
	SOFTRMA_PEER_DEV=softs SOFTRMA_PEER_IPV4=10.13.0.1 \
	"$SOFTRMA_BIN/rma_ext" -v peer || fail "rma_ext, rdma_rxe to softrma"

softrma_rxe_unpair
