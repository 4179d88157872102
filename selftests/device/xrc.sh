#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# XRC: ibv_xsrq_pingpong (XRC SEND QPs to one XRC RECV QP, a SRQ per
# client QP, the domain shared through a file) and rdma_xserver/rdma_xclient
# in XRC mode, on the local transport and in packets (force_wire).
. "$(dirname "$0")/../lib.sh"

add_softrma0

for wire in 0 1; do
	echo "$wire" > /sys/module/softrma/parameters/force_wire
	pair "ibv_xsrq_pingpong force_wire=$wire" \
		"timeout $(bound 120) ibv_xsrq_pingpong -d softrma0 -g 1 -n 200"
done
echo 0 > /sys/module/softrma/parameters/force_wire
