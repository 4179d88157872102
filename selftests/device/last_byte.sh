#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The last byte of an RDMA WRITE is stored once, after the rest, on the
# local transport and from packets (force_wire): verbs/last_byte's poller
# overwrites each WRITE's last byte as soon as it sees it, and the device
# must never store it again (riostream hung when it did: issue 27).  The
# race is two instructions of the writer's CPU wide: it shows when the
# guest's host is busy, and a quiet run proves little on a device that
# has it.
. "$(dirname "$0")/../lib.sh"

ITERS=${LAST_BYTE_ITERS:-50000}

add_softrma0
failed=
for wire in 0 1; do
	echo "$wire" > /sys/module/softrma/parameters/force_wire
	n=$((wire ? ITERS / 2 : ITERS))
	timeout "$(bound 300)" "$SOFTRMA_BIN/last_byte" softrma0 10.9.0.1 "$n" \
		> /tmp/last_byte.log 2>&1
	status=$?
	sed "s/^# /# force_wire $wire: /" /tmp/last_byte.log
	[ "$status" = 0 ] || failed="$failed force_wire=$wire"
done
echo 0 > /sys/module/softrma/parameters/force_wire
[ -z "$failed" ] || fail "the last byte was stored again with$failed"
