#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Teardown while a peer on the wire holds things up (verbs/teardown,
# force_wire): ibv_dereg_mr, kill -9, and the runner's rdma link delete and
# rmmod must each finish within a bound, whatever the peer does.
#  - A WRITE_WITH_IMM RNR NAKed for 3 s completes once its receive is
#    posted, without one ACK timeout (local_ack_timeout_err stays), and its
#    target MR then deregisters.
#  - A hostile peer (wire/craft_stall.py) starts a WRITE into an MR and a
#    SEND into a posted receive and goes silent: the MR deregisters; and in
#    a second run the owner is killed instead and exits.
#  - WQEs held in flight by the peer (timeout 0, RNR forever): their source
#    MRs deregister.
. "$(dirname "$0")/../lib.sh"

# finishes SECONDS PID DESC: PID exits within SECONDS, or the test fails
# with its state (a task in D state cannot be waited for).
finishes() {
	for _ in $(seq $(($1 * 10))); do
		kill -0 "$2" 2>/dev/null || { wait "$2"; return; }
		sleep 0.1
	done
	fail "$3: still running after $1 s: $(cat /proc/$2/stat 2>/dev/null | cut -d' ' -f3), $(cat /proc/$2/wchan 2>/dev/null; for t in /proc/$2/task/*; do cat $t/wchan; echo; done | sort -u | tr '\n' ' ')"
}

# stalled: verbs/teardown's stalled case ($held), the hostile messages sent.
stalled() {
	start_held stall "$SOFTRMA_BIN/teardown" softrma0 10.9.0.1 stalled
	python3 "$SOFTRMA_TOP/selftests/wire/craft_stall.py" 10.9.0.1 10.9.0.1 \
		"$(sed -n 's/^rkey //p' /tmp/stall.log)" "$(sed -n 's/^addr //p' /tmp/stall.log)" \
		$(sed -n 's/^qpn //p' /tmp/stall.log) 2>/tmp/craft.log ||
		fail "craft_stall.py: $(cat /tmp/craft.log)"
	sleep 1
}

load_softrma
echo 1 > /sys/module/softrma/parameters/force_wire || fail "no force_wire parameter"
add_softrma0

before=$(port_counter softrma0 local_ack_timeout_err)
"$SOFTRMA_BIN/teardown" softrma0 10.9.0.1 rnr_imm 3 > /tmp/rnr.log 2>&1 &
finishes 30 $! "WRITE_WITH_IMM after RNR NAKs, then dereg" ||
	fail "rnr_imm: $(cat /tmp/rnr.log)"
sed 's/^#* */# /' /tmp/rnr.log
expect_eq "ACK timeouts while RNR NAKed" \
	"$(($(port_counter softrma0 local_ack_timeout_err) - before))" 0

stalled
echo go >&3
exec 3>&-
finishes 10 "$held" "dereg of an MR that a stalled WRITE and SEND hold" ||
	fail "stalled: $(cat /tmp/stall.log)"
info "$(grep 'dereg done' /tmp/stall.log)"

stalled
kill -9 "$held"
exec 3>&-
finishes 10 "$held" "kill -9 of the owner of a stalled WRITE and SEND"
info "kill -9 of the owner of a stalled WRITE and SEND: exited"

"$SOFTRMA_BIN/teardown" softrma0 10.9.0.1 requester > /tmp/req.log 2>&1 &
finishes 30 $! "dereg of MRs held by WQEs in flight" ||
	fail "requester: $(cat /tmp/req.log)"
sed 's/^#* */# /' /tmp/req.log
echo 0 > /sys/module/softrma/parameters/force_wire
