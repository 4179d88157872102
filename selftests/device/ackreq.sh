#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Acknowledgement requests on the wire: verbs/ackreq.c, a
# kselftest_harness.h test, one TAP line per case.  An unsignalled stream
# asks for few acknowledgements, an unsignalled tail is asked for by the
# retransmission timer with one probe, and an unsignalled WRITE to a dead
# peer still ends in RETRY_EXC_ERR after retry_cnt + 1 ACK timeouts.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

add_softrma0
export SOFTRMA_DEV=softrma0 SOFTRMA_IPV4=10.9.0.1
"$SOFTRMA_BIN/ackreq" || fail "ackreq"
