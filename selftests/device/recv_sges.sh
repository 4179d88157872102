#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# A receive's memory checked as far as a message fills it: verbs/recv_sges.c,
# a kselftest_harness.h test (zero-length SENDs into receives that name no
# MR, from an SRQ shared by four QPs as libfabric's fi_shared_ctx does and
# from a QP's own queue; a WRITE with immediate taking such a receive; a
# SEND within the SGEs that pass, one into the SGE that fails
# (LOC_PROT_ERR), one past them all (LOC_LEN_ERR)) whose cases each run on
# the local transport (variant "local") and in RoCEv2 packets through lo
# (variant "wire": it sets force_wire), one TAP line each.
. "$(dirname "$0")/../lib.sh"

add_softrma0
SOFTRMA_DEV=softrma0 SOFTRMA_IPV4=10.9.0.1 "$SOFTRMA_BIN/recv_sges" || fail "recv_sges"
