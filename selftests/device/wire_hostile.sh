#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Hand-made RoCEv2 packets from user space (selftests/wire/craft.py, through
# a raw socket) at a UD QP: a bad ICRC, cut-short headers, an unknown
# opcode, transport version 1, pad beyond the payload, an unknown QPN, an RC
# WRITE into nowhere, an XRC SEND to the UD QP, an XRCETH cut short and a
# wrong Q_Key reach nothing; the one good packet
# arrives whole; and the port counters move by exactly what was sent.
. "$(dirname "$0")/../lib.sh"

QKEY=0x11111111

add_softrma0
names="rcvd_pkts rcvd_icrc_err rcvd_malformed rcvd_no_qp rcvd_dropped"
for n in $names; do eval "before_$n=\$(port_counter softrma0 $n)"; done

"$SOFTRMA_BIN/ud_sink" softrma0 10.9.0.1 $QKEY 5 > /tmp/sink.log &
sink=$!
for _ in $(seq 100); do grep -q '^qpn ' /tmp/sink.log && break; sleep 0.1; done
qpn=$(sed -n 's/^qpn //p' /tmp/sink.log)
[ -n "$qpn" ] || fail "ud_sink did not start: $(cat /tmp/sink.log)"
python3 "$SOFTRMA_TOP/selftests/wire/craft.py" 10.9.0.1 10.9.0.1 "$qpn" $QKEY \
	> /tmp/expect 2>/tmp/craft.log || fail "craft.py: $(cat /tmp/craft.log)"
wait "$sink" || fail "ud_sink: $(cat /tmp/sink.log)"

sed 's/^/# /' /tmp/craft.log
grep '^recv' /tmp/sink.log | sed 's/^/# /'
expect_eq "datagrams received" "$(sed -n 's/^received //p' /tmp/sink.log)" 1
grep -q "^recv 0 52 66 softrma-good$" /tmp/sink.log ||
	fail "the good packet did not arrive whole: $(grep '^recv' /tmp/sink.log)"
for n in $names; do
	eval "delta=\$((\$(port_counter softrma0 $n) - before_$n))"
	want=$(awk -v k="$n" '$1 == k { print $2 }' /tmp/expect)
	expect_eq "counter $n" "$delta" "${want:-0}"
	info "$n +$delta"
done
