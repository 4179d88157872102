#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Shared PDs: verbs/import.c (ibv_import_device on a duplicate of a
# context's file, ibv_import_pd and ibv_import_mr, writes both ways between
# the two contexts; handles that name nothing, another type's object or
# another file's refused; unimport before destroy; a child that imports its
# parent's context killed mid-write).  rdma-core's own test_shared_pd runs
# in device/pyverbs.sh.
. "$(dirname "$0")/../lib.sh"

add_softrma0
SOFTRMA_DEV=softrma0 SOFTRMA_IPV4=10.9.0.1 "$SOFTRMA_BIN/import" || fail "import"
