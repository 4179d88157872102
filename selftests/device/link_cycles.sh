#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Load, add, use, delete, unload: 20 times, half of them unloading with the
# device still present.  A leaked netdev reference would make "ip link del"
# hang, so it runs under a timeout.
. "$(dirname "$0")/../lib.sh"

for i in $(seq 20); do
	load_softrma
	add_dummy d0 10.9.0.1/24
	rdma link add softrma0 type softrma netdev d0 || fail "cycle $i: add"
	ibv_devinfo -d softrma0 >/dev/null || fail "cycle $i: ibv_devinfo"
	if [ $((i % 2)) = 0 ]; then
		rdma link delete softrma0 || fail "cycle $i: delete"
	fi
	rmmod softrma || fail "cycle $i: rmmod"
	[ -z "$(softrma_links)" ] || fail "cycle $i: devices left: $(softrma_links)"
	timeout "$(bound 10)" ip link del d0 || fail "cycle $i: ip link del d0 hangs"
done
info "20 load/add/delete/unload cycles"
