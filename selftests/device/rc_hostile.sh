#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Hand-made RC packets from user space (selftests/wire/craft_rc.py, through
# a raw socket) at the RC QPs of verbs/rc_sink: a WRITE from an address that
# is not the QP's peer is dropped, a WRITE beyond the expected PSN is not
# executed and counted, the good WRITE lands, a storm of 12
# 64 KiB READs is answered, an ATOMIC WRITE and FLUSHes with either form of
# ICRC (the IBA's, rdma_rxe's) execute, a FLUSH with a wrong ICRC is dropped
# and counted, duplicates of a WRITE and an ATOMIC WRITE with other data are
# counted and not executed again, duplicate READs are answered only for
# what was accepted (one packet of four), and that QP stays in RTS; each
# refused request (bad rkey, past the end, 2 GiB DMA length, a message that
# starts in the middle, a short FIRST packet, an unaligned atomic, a READ of
# 4 GiB - 1,
# an unaligned ATOMIC WRITE, ATOMIC WRITEs whose RETH or payload is not 8
# bytes, a FLUSH with a bad rkey or placement type) takes its QP to error
# with nothing written.  The MR must hold exactly the pattern plus the good
# WRITE.
. "$(dirname "$0")/../lib.sh"

load_softrma
echo 1 > /sys/module/softrma/parameters/force_wire || fail "no force_wire parameter"
add_softrma0
for n in out_of_seq_request duplicate_request rcvd_icrc_err sent_pkts; do
	eval "before_$n=\$(port_counter softrma0 $n)"
done

"$SOFTRMA_BIN/rc_sink" softrma0 10.9.0.1 13 10 > /tmp/sink.log &
sink=$!
for _ in $(seq 100); do grep -q '^len ' /tmp/sink.log && break; sleep 0.1; done
grep -q '^len ' /tmp/sink.log || fail "rc_sink did not start: $(cat /tmp/sink.log)"
python3 "$SOFTRMA_TOP/selftests/wire/craft_rc.py" 10.9.0.1 10.9.0.1 \
	"$(sed -n 's/^rkey //p' /tmp/sink.log)" "$(sed -n 's/^addr //p' /tmp/sink.log)" \
	$(sed -n 's/^qpn //p' /tmp/sink.log) softrma0 2>/tmp/craft.log || fail "craft_rc.py: $(cat /tmp/craft.log)"
wait "$sink" || fail "rc_sink: $(cat /tmp/sink.log)"
sed 's/^/# /' /tmp/craft.log
echo 0 > /sys/module/softrma/parameters/force_wire

grep -q '^memory as expected$' /tmp/sink.log || fail "$(grep memory /tmp/sink.log)"
info "memory: the pattern and the good WRITE, nothing else"
expect_eq "QP 0 (IBV_QPS_RTS)" "$(sed -n 's/^state 0 //p' /tmp/sink.log)" 3
for q in $(seq 12); do
	expect_eq "QP $q (IBV_QPS_ERR)" "$(sed -n "s/^state $q //p" /tmp/sink.log)" 6
done
info "QP 0 in RTS; the 12 QPs that got a refused request in ERR"
for n in out_of_seq_request:1 duplicate_request:6 rcvd_icrc_err:1; do
	eval "delta=\$((\$(port_counter softrma0 ${n%:*}) - before_${n%:*}))"
	expect_eq "counter ${n%:*}" "$delta" "${n#*:}"
done
# 12 READs of 64 packets, the ATOMIC WRITE, 2 FLUSHes, a sequence NAK, the
# ATOMIC WRITE's duplicate, one packet of the first READ again, 12 NAKs.
expect_eq "packets sent in answer" \
	"$(($(port_counter softrma0 sent_pkts) - before_sent_pkts))" $((12 * 64 + 1 + 2 + 1 + 1 + 1 + 12))
info "out_of_seq_request +1, duplicate_request +6, rcvd_icrc_err +1"
