#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# SQD on the wire (verbs/sqd, force_wire): WQEs in flight when the QP goes
# to SQD are kept, a doorbell in SQD sends nothing new, a path change off
# the wire is EBUSY while WQEs are in flight, and at RTS everything goes on.
# Against wire/craft_resp.py, READ responses among stale ones complete the
# READ with exactly their data; against a real peer, SENDs, READs and
# atomics in flight across SQD arrive exactly once and in order.  The SQ
# Drained event comes once what was in flight completed (both transports).
. "$(dirname "$0")/../lib.sh"

load_softrma
echo 1 > /sys/module/softrma/parameters/force_wire || fail "no force_wire parameter"
add_softrma0

start_held sqd "$SOFTRMA_BIN/sqd" softrma0 10.9.0.1 crafted
python3 "$SOFTRMA_TOP/selftests/wire/craft_resp.py" 10.9.0.1 10.9.0.1 \
	"$(sed -n 's/^qpn //p' /tmp/sqd.log)" 2>/tmp/craft.log ||
	fail "craft_resp.py: $(cat /tmp/craft.log)"
echo go >&3
exec 3>&-
wait "$held" || fail "sqd crafted: $(cat /tmp/sqd.log)"
sed 's/^#* */# /' /tmp/craft.log
grep '^#' /tmp/sqd.log

"$SOFTRMA_BIN/sqd" softrma0 10.9.0.1 peer 20 || fail "sqd with a real peer"
"$SOFTRMA_BIN/sqd" softrma0 10.9.0.1 drained || fail "sqd drained event, wire"
echo 0 > /sys/module/softrma/parameters/force_wire
"$SOFTRMA_BIN/sqd" softrma0 10.9.0.1 drained || fail "sqd drained event, local"
