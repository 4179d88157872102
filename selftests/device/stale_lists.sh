#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# A message in progress never reaches memory through a registration or a
# binding made after it began, even under the same key (security review 2,
# G2): hand-made RoCEv2 packets (selftests/wire/craft_stale.py) begin an
# 8 KiB WRITE through an MR and one through a type 2B window of
# verbs/stale_sink; the MR then loses REMOTE_WRITE by ibv_rereg_mr (its keys
# stay) and the window is invalidated and bound again under the same key to
# 1 KiB elsewhere.  The next packet of each WRITE must be refused (its QP
# goes to error) and both MRs must hold their pattern past the first packet.
. "$(dirname "$0")/../lib.sh"

load_softrma
echo 1 > /sys/module/softrma/parameters/force_wire || fail "no force_wire parameter"
add_softrma0
python3 "$SOFTRMA_TOP/selftests/wire/craft_stale.py" "$SOFTRMA_BIN/stale_sink" \
	softrma0 10.9.0.1 > /tmp/stale.log 2>/tmp/craft.log ||
	fail "craft_stale.py: $(cat /tmp/craft.log /tmp/stale.log)"
echo 0 > /sys/module/softrma/parameters/force_wire
sed 's/^/# /' /tmp/craft.log /tmp/stale.log

grep -qx 'N as expected' /tmp/stale.log ||
	fail "a WRITE went on after ibv_rereg_mr took REMOTE_WRITE: $(grep '^N' /tmp/stale.log)"
grep -qx 'M as expected' /tmp/stale.log ||
	fail "a WRITE went on through the window bound again: $(grep '^M' /tmp/stale.log)"
expect_eq "QP 0 (IBV_QPS_ERR)" "$(sed -n 's/^state 0 //p' /tmp/stale.log)" 6
expect_eq "QP 1 (IBV_QPS_ERR)" "$(sed -n 's/^state 1 //p' /tmp/stale.log)" 6
info "the MIDDLE packets were refused; nothing written past the FIRST"
