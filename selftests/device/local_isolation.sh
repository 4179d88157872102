#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# On the local transport a connected QP takes requests only from its peer:
# a process under another uid (nobody) aims RC and UC QPs at a victim's
# locally connected QPs by QPN and sends SENDs, WRITEs (with the right and
# a wrong rkey) and a READ.  The victim receives nothing, its memory stays
# as it was, its QPs stay in RTS and its real peers still get through; the
# stranger's requests are counted as rcvd_no_qp (verbs/isolation): each of
# the 6 RC ones as often as it is sent, once and after each of its
# retry_cnt (7) ACK timeouts, and the 5 UC ones once.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

add_softrma0
chmod 0666 /dev/infiniband/uverbs* || fail "no uverbs device node"
before=$(port_counter softrma0 rcvd_no_qp)

start_held victim "$SOFTRMA_BIN/isolation" softrma0 10.9.0.1 victim
# shellcheck disable=SC2046 # the victim's QPNs, rkey and address: words
set -- $(sed -n 's/^\(rc\|uc\|rkey\|addr\) //p' /tmp/victim.log)
as_user 65534 "$SOFTRMA_BIN/isolation" softrma0 10.9.0.1 stranger "$@" > /tmp/stranger.log 2>&1 ||
	fail "stranger: $(cat /tmp/stranger.log)"
sed 's/^#* */# /' /tmp/stranger.log
echo go >&3
exec 3>&-
wait "$held" || fail "victim: $(cat /tmp/victim.log)"
grep '^#' /tmp/victim.log
dropped=$(($(port_counter softrma0 rcvd_no_qp) - before))
expect_eq "the stranger's requests counted in rcvd_no_qp" "$dropped" $((6 * (1 + 7) + 5))
