#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Unmodified tools over softrma: ibv_rc_pingpong (polling, events and the
# ibv_wr_* API with -N; it validates data), ibv_srq_pingpong, ibv_uc_pingpong and perftest's RC
# tests, server and client in one guest; qperf's RC tests.
# perftest -R (rdma_cm) runs in rdma_cm.sh.
. "$(dirname "$0")/../lib.sh"

add_softrma0

pair "ibv_rc_pingpong" "ibv_rc_pingpong -d softrma0 -g 1 -n 500"
pair "ibv_rc_pingpong -e" "ibv_rc_pingpong -d softrma0 -g 1 -n 500 -e"
pair "ibv_rc_pingpong -N" "ibv_rc_pingpong -d softrma0 -g 1 -n 500 -N"
pair "ibv_rc_pingpong -s 65536" "ibv_rc_pingpong -d softrma0 -g 1 -n 100 -s 65536"
pair "ibv_srq_pingpong" "ibv_srq_pingpong -d softrma0 -g 1 -n 200 -q 4"
pair "ibv_uc_pingpong" "ibv_uc_pingpong -d softrma0 -g 1 -n 500"
for t in ib_write_bw ib_read_bw ib_send_bw ib_atomic_bw; do
	pair "$t" "timeout $(bound 120) $t -d softrma0 -x 1 -n 500"
done
for t in ib_write_lat ib_read_lat ib_send_lat; do
	pair "$t" "timeout $(bound 120) $t -d softrma0 -x 1 -n 500"
done
pair "ib_write_bw -a" "timeout $(bound 120) ib_write_bw -d softrma0 -x 1 -n 20 -a"
# Both directions and several QPs at once: requesters feed each other's
# responders concurrently.
pair "ib_write_bw -b -q 4" "timeout $(bound 120) ib_write_bw -d softrma0 -x 1 -n 500 -b -q 4"
pair "ib_send_bw -b -q 2" "timeout $(bound 120) ib_send_bw -d softrma0 -x 1 -n 500 -b -q 2"
pair "ib_read_bw -q 4 -o 16" "timeout $(bound 120) ib_read_bw -d softrma0 -x 1 -n 500 -q 4 -o 16"

# qperf, whose server runs until it is killed: the RC tests over rdma_cm
# (-cm1: RoCE needs GIDs), the RDMA ones with a server QP that has no send
# queue.  qperf's UC and UD tests ignore -cm1 and address by LID, which RoCE
# refuses (modify_qp to RTR, create_ah: EINVAL), on rdma_rxe as well.
modprobe rdma_ucm || fail "modprobe rdma_ucm"
qperf > /tmp/qperf-server.log 2>&1 &
qperf_pid=$!
retry 10 sh -c "ss -ltn | grep -q ':19765 '" || fail "qperf server: $(cat /tmp/qperf-server.log)"
timeout "$(bound 300)" qperf -cm1 -i softrma0:1 -t 1 10.9.0.1 \
	rc_rdma_write_bw rc_rdma_read_bw rc_bw rc_lat \
	> /tmp/qperf.log 2>&1
status=$?
kill_tree "$qperf_pid"
wait "$qperf_pid" 2>/dev/null
[ "$status" = 0 ] || fail "qperf: $(tail -n 5 /tmp/qperf.log)"
tests=$(grep -c ':$' /tmp/qperf.log)
expect_eq "qperf tests reported" "$tests" 4
info "qperf: $(grep -E '(bw|latency) *=' /tmp/qperf.log | tr -s ' ' | tr '\n' ';')"
