#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Ring indices moved by a racing thread (verbs/ring_racer), on the local
# transport and on the wire: a doorbell against an SQ producer kept a ring
# ahead in error returns within a bound; destroy_qp against a racing RQ
# producer and CQ consumer in error finishes within a bound; a receive is
# completed once however the RQ producer flips under WRITE_WITH_IMM; an SQ
# whose SOFTRMA_RING_DRAINING a thread keeps set holds only that QP's
# entries back; streamed WRITEs on the local transport (doorbell_handover
# set) all complete with the flag as the kernel keeps it and as a thread
# clears it.  The runner's kernel log check catches soft lockups.
. "$(dirname "$0")/../lib.sh"

add_softrma0
for wire in 0 1; do
	echo $wire > /sys/module/softrma/parameters/force_wire
	# Only the local transport hands doorbells over: streams run there.
	streams=drain_stream
	[ $wire = 1 ] && streams=
	echo $((1 - wire)) > /sys/module/softrma/parameters/doorbell_handover
	for t in sq_err rq_err write_imm drain_lie $streams; do
		timeout "$(bound 60)" "$SOFTRMA_BIN/ring_racer" softrma0 10.9.0.1 $t ||
			fail "ring_racer $t, force_wire=$wire"
	done
	echo 0 > /sys/module/softrma/parameters/doorbell_handover
done
echo 0 > /sys/module/softrma/parameters/force_wire
