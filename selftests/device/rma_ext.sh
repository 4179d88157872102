#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# RDMA FLUSH and ATOMIC WRITE (verbs/rma_ext): on the local transport, then
# in RoCEv2 packets (force_wire), with FLUSH's ICRC in the IBA's form and
# in rdma_rxe's (rxe_flush_icrc=1), then, where the kernel's rdma_rxe has
# them (6.2 on), against rdma_rxe in both directions across a veth pair
# (softrma_rxe_pair in lib.sh).  The packets' ICRCs are checked as well.
. "$(dirname "$0")/../lib.sh"

add_softrma0
"$SOFTRMA_BIN/rma_ext" softrma0 10.9.0.1 || fail "rma_ext, local transport"

params=/sys/module/softrma/parameters
echo 1 > $params/force_wire || fail "no force_wire parameter"
for form in 0 1; do
	echo $form > $params/rxe_flush_icrc || fail "no rxe_flush_icrc parameter"
	sent=$(port_counter softrma0 sent_pkts)
	"$SOFTRMA_BIN/rma_ext" softrma0 10.9.0.1 || break
	[ "$(port_counter softrma0 sent_pkts)" -gt "$((sent + 40))" ] || break
	form=done$form
done
echo 0 > $params/force_wire
echo 0 > $params/rxe_flush_icrc
[ "$form" = done1 ] || fail "rma_ext in packets (rxe_flush_icrc=${form#done})"
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
"$SOFTRMA_BIN/rma_ext" softs 10.13.0.1 rxer 10.13.0.2
rc=$?
echo 0 > $params/rxe_flush_icrc
[ $rc = 0 ] || fail "rma_ext, softrma to rdma_rxe"
capture_check
"$SOFTRMA_BIN/rma_ext" rxer 10.13.0.2 softs 10.13.0.1 ||
	fail "rma_ext, rdma_rxe to softrma"

softrma_rxe_unpair
