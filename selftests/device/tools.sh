#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Unmodified tools over softrma: ibv_rc_pingpong (polling and events, which
# validates data), ibv_srq_pingpong, ibv_uc_pingpong and perftest's RC
# tests, server and client in one guest.
# perftest -R (rdma_cm) runs in rdma_cm.sh.
. "$(dirname "$0")/../lib.sh"

add_softrma0

pair "ibv_rc_pingpong" "ibv_rc_pingpong -d softrma0 -g 1 -n 500"
pair "ibv_rc_pingpong -e" "ibv_rc_pingpong -d softrma0 -g 1 -n 500 -e"
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
