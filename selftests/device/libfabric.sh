#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# libfabric over softrma with libfabric's defaults: fi_pingpong, checking
# its data (-c), on the verbs provider's MSG and DGRAM endpoints and on
# RxM's RDM endpoint over verbs, server and client in one guest.  RxM opens
# one verbs CQ for its receive and send queues to every peer of its
# universe: with libfabric 1.17's defaults (128 + 128 entries, 1024 peers)
# 262144 entries, which max_cqe has to allow.
. "$(dirname "$0")/../lib.sh"

command -v fi_pingpong >/dev/null || skip "no fi_pingpong (Debian's libfabric-bin)"
add_softrma0
modprobe rdma_ucm || fail "modprobe rdma_ucm"

port=47600
# fi_pingpong_pair NAME DOMAIN ARGS...: one fi_pingpong exchange, each on a
# control port of its own.
fi_pingpong_pair() {
	name=$1 domain=$2; shift 2
	port=$((port + 1))
	pp="timeout $(bound 120) fi_pingpong -d $domain -I 100 -c $*"
	pair "$name" "$pp -B $port" "$pp -P $port 10.9.0.1"
}

fi_pingpong_pair "fi_pingpong verbs;ofi_rxm rdm" softrma0 -p "'verbs;ofi_rxm'" -e rdm
fi_pingpong_pair "fi_pingpong verbs msg" softrma0 -p verbs -e msg
fi_pingpong_pair "fi_pingpong verbs dgram" softrma0-dgram -p verbs -e dgram
