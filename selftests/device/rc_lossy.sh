#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# RC over a bad link: two namespaces joined by a veth pair whose both ends
# lose 3%, duplicate 1% and reorder 5% of the packets (netem).  verbs/
# wire_bulk moves LOSSY_MIB MiB (default 128; a TCG guest moves about
# 8 MiB/s over this link) each of RDMA WRITE, READ and
# SEND with every byte checked, then checks that a dead peer ends in
# RETRY_EXC_ERR after as many ACK timeouts as its retry count implies.  The port
# counters must show the recovery at work.
. "$(dirname "$0")/../lib.sh"

mib=${LOSSY_MIB:-128}
load_softrma
modprobe sch_netem || skip "no sch_netem"
namespace_pair 10.12.0
# Neighbours first: the core resolves the peer's MAC when the QPs connect.
ip netns exec nsa ping -c 1 -W 5 10.12.0.2 > /dev/null || fail "no route over the veth"
for n in a b; do
	ip netns exec ns$n tc qdisc add dev v$n root netem \
		delay 1ms reorder 95% 50% loss 3% duplicate 1% limit 100000 ||
		fail "netem on v$n"
done

"$SOFTRMA_BIN/wire_bulk" softa 10.12.0.1 softb 10.12.0.2 "$mib"
rc=$?
for c in sent_pkts retrans_pkts rcvd_seq_err local_ack_timeout_err duplicate_request out_of_seq_request; do
	info "$c: softa $(port_counter softa $c), softb $(port_counter softb $c)"
done
[ $rc = 0 ] || fail "wire_bulk over a lossy link"
[ "$(port_counter softa retrans_pkts)" -gt 0 ] || fail "no retransmission on a lossy link"
[ "$(port_counter softb duplicate_request)" -gt 0 ] || fail "no duplicate seen on a lossy link"

ip netns del nsa
wait_gone softa
ip netns del nsb
wait_gone softb
