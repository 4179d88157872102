#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# SQD: verbs/sqd.c, a kselftest_harness.h test, one TAP line per case.
# On the wire, against wire/craft_resp.py (sqd_crafted, held while the
# packets are sent): WQEs in flight when the QP goes to SQD are kept, a
# doorbell in SQD sends nothing new, a path change off the wire is EBUSY
# while WQEs are in flight, and at RTS READ responses among stale ones
# complete the READ with exactly their data.  Then, on the local transport
# (variant "local") and in RoCEv2 packets through lo (variant "wire": it
# sets force_wire), against a real peer: SENDs, READs and atomics in flight
# across SQD arrive exactly once and in order, and the SQ Drained event
# comes once what was in flight completed.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

add_softrma0
export SOFTRMA_DEV=softrma0 SOFTRMA_IPV4=10.9.0.1

start_held sqd env SOFTRMA_SQD_CRAFTED=1 "$SOFTRMA_BIN/sqd" -f sqd_crafted
python3 "$SOFTRMA_TOP/selftests/wire/craft_resp.py" 10.9.0.1 10.9.0.1 \
	"$(sed -n 's/^qpn //p' /tmp/sqd.log)" 2>/tmp/craft.log ||
	fail "craft_resp.py: $(cat /tmp/craft.log)"
echo go >&3
exec 3>&-
wait "$held" || fail "sqd crafted: $(cat /tmp/sqd.log)"
sed 's/^#* */# /' /tmp/craft.log
cat /tmp/sqd.log

"$SOFTRMA_BIN/sqd" -f sqd || fail "sqd"
