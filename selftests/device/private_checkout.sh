#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The tests pass wherever the checkout is, also where other users cannot
# enter (a clone in a 0700 home): with the checkout made 0700 in the
# guest's overlay (the host's is left alone), uid 65534 cannot enter it,
# and device/local_isolation.sh, whose stranger runs as that uid
# (as_user of lib.sh: the program and the provider from world-readable
# copies), passes again.
. "$(dirname "$0")/../lib.sh"

[ "$(stat -f -c %T "$SOFTRMA_TOP")" = overlayfs ] ||
	skip "$SOFTRMA_TOP is not on the guest's overlay: its mode is not changed here"
mode=$(stat -c %a "$SOFTRMA_TOP") || fail "stat $SOFTRMA_TOP"
trap 'chmod "$mode" "$SOFTRMA_TOP"' EXIT
chmod 0700 "$SOFTRMA_TOP" || fail "chmod 0700 $SOFTRMA_TOP"
setpriv --reuid=65534 --regid=65534 --clear-groups ls "$SOFTRMA_TOP" > /dev/null 2>&1 &&
	fail "uid 65534 still enters $SOFTRMA_TOP"
sh "$SOFTRMA_TOP/selftests/device/local_isolation.sh" ||
	fail "device/local_isolation.sh from a checkout of mode 0700"
