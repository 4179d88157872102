#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# kill -9 of one side in the middle of an ib_write_bw run, connected by
# its TCP exchange and by rdma_cm (-R).  The writer whose
# target QP vanished gets error completions and ends; a server whose client
# died ends when its socket closes.  (An RC side that only waits for
# receives never hears of a dead peer, on any RDMA device.)  Once both are
# gone nothing of theirs is left: the runner checks "rdma resource show" and
# that softrma unloads.
. "$(dirname "$0")/../lib.sh"

modprobe rdma_ucm || fail "modprobe rdma_ucm"
add_softrma0

# With rdma_cm the passive side's final exchange waits on an RDMA receive,
# so there both sides write (-b): each is a writer whose peer can vanish.
for how in "-x 1" "-R -b"; do
for victim in server client; do
	ib_write_bw -d softrma0 $how -D 60 > /tmp/server.log 2>&1 &
	spid=$!
	sleep 1
	ib_write_bw -d softrma0 $how -D 60 10.9.0.1 > /tmp/client.log 2>&1 &
	cpid=$!
	sleep "$(bound 3)"
	if [ $victim = server ]; then kill -9 "$spid"; other=$cpid; else kill -9 "$cpid"; other=$spid; fi
	# The survivor's next send finds no QP: it is sent again after each
	# ACK timeout, retry_cnt (7) times, and then fails; it must not hang.
	# rdma_cm's ACK timeout on RoCE is about a second (packet lifetime
	# 2^16 x 4.096 us, doubled, plus the ACK delay): allow 30 s.
	for _ in $(seq "$(bound 300)"); do
		kill -0 "$other" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$other" 2>/dev/null; then
		kill -9 "$other"
		fail "the survivor of kill -9 $victim still runs after $(bound 30) s"
	fi
	wait "$other" && fail "the survivor of kill -9 $victim reported success"
	# A surviving writer must have seen its sends fail (RETRY_EXC_ERR).
	[ $victim = server ] && log=/tmp/client.log || log=/tmp/server.log
	if [ $victim = server ] || [ "$how" != "-x 1" ]; then
		grep -q 'Failed status 12' "$log" ||
			fail "the survivor of kill -9 $victim saw no RETRY_EXC_ERR: $(tail -n 3 $log)"
	fi
	info "ib_write_bw $how, kill -9 $victim: the other side failed and ended"
done
done
