#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Unmodified rdma_cm programs over softrma, server and client in one guest.
# Connection setup runs the kernel's CM MADs over softrma's GSI QP (kernel
# QPs, CQs, AHs and DMA MR), so every pair here also proves the kernel verbs.
# rping -v and ibv_ud_pingpong check their data; perftest -R covers every
# RC opcode through rdma_cm.
. "$(dirname "$0")/../lib.sh"

modprobe rdma_ucm || fail "modprobe rdma_ucm"
add_softrma0
expect_eq "GSI QP" "$(rdma resource show qp link softrma0/1 | grep -c 'lqpn 1 type GSI state RTS')" 1

pair "rping -v" "rping -s -a 10.9.0.1 -v -C 100 -S 4096" \
	"rping -c -a 10.9.0.1 -v -C 100 -S 4096"
grep -q 'rdma-ping-99: ' /tmp/client.log || fail "rping: no 100th ping: $(tail -n 2 /tmp/client.log)"
pair "ucmatose" "ucmatose -c 4" "ucmatose -s 10.9.0.1 -c 4"
pair "rdma_server/rdma_client" "rdma_server" "rdma_client -s 10.9.0.1"
pair "udaddy" "udaddy -c 4" "udaddy -s 10.9.0.1 -c 4"
# rsockets: rstream with its data checked, and riostream (riomap and
# riowrite), whose two sides poll the last byte of each other's buffer and
# then write it themselves: it hung when softrma stored that byte twice
# (issue 27, device/last_byte.sh).  riostream -T v fails in riomap with
# ENOMEM on rdma_rxe as well: not used.
pair "rstream -T v" "rstream -T v -S 65536 -C 200" "rstream -T v -S 65536 -C 200 -s 10.9.0.1"
pair "riostream" "riostream -b 10.9.0.1" "riostream -s 10.9.0.1"
pair "ibv_ud_pingpong" "ibv_ud_pingpong -d softrma0 -g 1 -n 500" \
	"ibv_ud_pingpong -d softrma0 -g 1 -n 500 10.9.0.1"
for t in ib_write_bw ib_read_bw ib_send_bw ib_atomic_bw ib_write_lat ib_read_lat ib_send_lat; do
	pair "$t -R" "timeout $(bound 120) $t -d softrma0 -R -n 200"
done
# Several QPs both ways.  (Not SEND: the CM sets min_rnr_timer 0, so every
# RNR NAK costs 655 ms, on any device, and a busy guest makes many.)
pair "ib_write_bw -R -q 4 -b" "timeout $(bound 120) ib_write_bw -d softrma0 -R -n 200 -q 4 -b"
