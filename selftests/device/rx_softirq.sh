#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Receive in the softirq: RC between two namespaces joined by a veth pair,
# so that every packet arrives in the softirq of the veth's receive, as
# from a NIC.  The common packet (an in-order SEND, WRITE or READ request,
# an ACK or READ response) is processed there (rcvd_in_softirq); the rest
# waits for process context: a QP with an SRQ, atomics, any packet while
# the device has an ODP MR, and any packet behind one of those.  ACKs of
# requests that arrive together are coalesced there too.
# Unmodified tools check the data (ibv_rc_pingpong -c) or run the
# operations both ways at once, so that ACKs arrive while a process holds
# the requester; a client killed in the middle of a stream leaves nothing.
. "$(dirname "$0")/../lib.sh"

load_softrma
echo 1 > /sys/module/softrma/parameters/rx_softirq || fail "no rx_softirq parameter"
namespace_pair 10.21.0
rps_all va nsa
rps_all vb nsb
ga=$(gid_index softa 10.21.0.1)
gb=$(gid_index softb 10.21.0.2)

# across NAME SERVER_CMD CLIENT_CMD: the server in nsa, the client in nsb,
# which appends the server's address.
across() {
	pair "$1" "ip netns exec nsa $2" "ip netns exec nsb $3 10.21.0.1"
}

pkts() { port_counter "$1" rcvd_pkts; }
sirq() { port_counter "$1" rcvd_in_softirq; }

p0=$(pkts softa) s0=$(sirq softa)
across "ibv_rc_pingpong -c" "ibv_rc_pingpong -d softa -g $ga -n 100 -s 65536 -c" \
	"ibv_rc_pingpong -d softb -g $gb -n 100 -s 65536 -c"
for t in ib_write_bw ib_read_bw ib_send_bw; do
	across "$t -q 4" "timeout $(bound 120) $t -d softa -x $ga -n 200 -s 16384 -q 4 $(ack_timeout)" \
		"timeout $(bound 120) $t -d softb -x $gb -n 200 -s 16384 -q 4 $(ack_timeout)"
	across "$t -b" "timeout $(bound 120) $t -d softa -x $ga -n 200 -s 16384 -b $(ack_timeout)" \
		"timeout $(bound 120) $t -d softb -x $gb -n 200 -s 16384 -b $(ack_timeout)"
done
for t in ib_write_lat ib_read_lat ib_send_lat; do
	across "$t" "timeout $(bound 120) $t -d softa -x $ga -n 200 $(ack_timeout)" \
		"timeout $(bound 120) $t -d softb -x $gb -n 200 $(ack_timeout)"
done
p=$(($(pkts softa) - p0)) s=$(($(sirq softa) - s0))
info "softa: $p packets received, $s of them in the softirq"
# Nothing holds the server's QPs in the one-way runs: it posts nothing.
[ "$s" -ge $((p / 2)) ] ||
	fail "softa processed $s of $p packets in the softirq, want at least half"

# The softirq's ACK waits for the end of its round of softirqs: requests
# that arrive together get one ACK.  netem hands the veth 16 at a time,
# and with RPS off they all wait on the backlog of the CPU that dequeued
# them; every 64-byte SEND asks for an ACK.
modprobe sch_netem || fail "no sch_netem"
ip netns exec nsb tc qdisc add dev vb root netem slot 10ms 10ms packets 16 ||
	fail "netem slots on vb"
ip netns exec nsa sh -c 'echo 0 > /sys/class/net/va/queues/rx-0/rps_cpus' ||
	fail "RPS off on va"
c0=$(port_counter softa coalesced_acks) s0=$(sirq softa)
across "ib_send_bw -s 64, 16 at a time" \
	"timeout $(bound 120) ib_send_bw -d softa -x $ga -n 2000 -s 64 $(ack_timeout)" \
	"timeout $(bound 120) ib_send_bw -d softb -x $gb -n 2000 -s 64 $(ack_timeout)"
c=$(($(port_counter softa coalesced_acks) - c0)) s=$(($(sirq softa) - s0))
info "softa: $s packets in the softirq, $c ACKs covered by a later one"
[ "$s" -ge 1000 ] || fail "softa: of 2000 SENDs arriving 16 at a time, only $s in the softirq"
[ "$c" -ge 1000 ] ||
	fail "softa: of 2000 SENDs arriving 16 at a time, $c ACKs coalesced (want 1000)"
ip netns exec nsb tc qdisc del dev vb root
rps_all va nsa

# Packets of QPs with an SRQ, and atomics, wait for process context.
p0=$(pkts softa) s0=$(sirq softa)
across "ibv_srq_pingpong" "ibv_srq_pingpong -d softa -g $ga -n 200 -q 4" \
	"ibv_srq_pingpong -d softb -g $gb -n 200 -q 4"
across "ib_atomic_bw" "timeout $(bound 120) ib_atomic_bw -d softa -x $ga -n 500 $(ack_timeout)" \
	"timeout $(bound 120) ib_atomic_bw -d softb -x $gb -n 500 $(ack_timeout)"
p=$(($(pkts softa) - p0)) s=$(($(sirq softa) - s0))
[ $((p - s)) -ge 1000 ] ||
	fail "softa took only $((p - s)) of $p SRQ and atomic packets in process context"

# With an ODP MR on the device nothing is processed in the softirq, which
# may not fault pages in: every byte still arrives (-c).
p0=$(pkts softa) s0=$(sirq softa) t0=$(sirq softb)
across "ibv_rc_pingpong -o -P -c (ODP)" "ibv_rc_pingpong -d softa -g $ga -n 100 -s 65536 -o -P -c" \
	"ibv_rc_pingpong -d softb -g $gb -n 100 -s 65536 -o -P -c"
[ "$(pkts softa)" -gt "$p0" ] || fail "softa received nothing in the ODP run"
expect_eq "softa's packets in the softirq with ODP MRs" $(($(sirq softa) - s0)) 0
expect_eq "softb's packets in the softirq with ODP MRs" $(($(sirq softb) - t0)) 0

# rx_softirq=0: every packet in process context.
echo 0 > /sys/module/softrma/parameters/rx_softirq
s0=$(sirq softa)
across "ibv_rc_pingpong -c, rx_softirq=0" "ibv_rc_pingpong -d softa -g $ga -n 100 -s 65536 -c" \
	"ibv_rc_pingpong -d softb -g $gb -n 100 -s 65536 -c"
expect_eq "softa's packets in the softirq with rx_softirq=0" $(($(sirq softa) - s0)) 0
echo 1 > /sys/module/softrma/parameters/rx_softirq

# A client killed in the middle of a two-way stream: the server ends, and
# nothing of either is left.
ip netns exec nsa timeout "$(bound 120)" ib_write_bw -d softa -x "$ga" -D 60 -b \
	> /tmp/server.log 2>&1 &
spid=$!
for _ in $(seq 100); do
	listening "$spid" && break
	sleep 0.1
done
ip netns exec nsb ib_write_bw -d softb -x "$gb" -D 60 -b 10.21.0.1 > /tmp/client.log 2>&1 &
cpid=$!
s0=$(sirq softa)
for _ in $(seq "$(bound 100)"); do
	[ "$(sirq softa)" -gt $((s0 + 1000)) ] && break
	sleep 0.1
done
kill -9 "$cpid"
wait "$cpid" 2>/dev/null
[ "$(sirq softa)" -gt $((s0 + 1000)) ] ||
	fail "no stream before the kill: $(tail -n 3 /tmp/client.log)"
kill_tree "$spid"
wait "$spid" 2>/dev/null
expect_no_objects softa
expect_no_objects softb

ip netns del nsa
ip netns del nsb
wait_gone softa
wait_gone softb
