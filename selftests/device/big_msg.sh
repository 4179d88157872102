#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Messages at the 2 GiB verbs limit: see verbs/big_msg.c (RDMA WRITE, READ
# and SEND of exactly 2 GiB with every byte checked; one byte more refused).
. "$(dirname "$0")/../lib.sh"

avail=$(awk '/MemAvailable/ { print $2 }' /proc/meminfo)
[ "$avail" -ge 4800000 ] || skip "needs 4.8 GB of free memory, the guest has $avail kB"
add_softrma0
"$SOFTRMA_BIN/big_msg" softrma0 10.9.0.1 || fail "big_msg"
