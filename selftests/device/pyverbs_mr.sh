#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# rdma-core's own test_mr (pyverbs: MRs, ibv_rereg_mr of access, translation
# and PD with traffic after it, memory windows) on softrma0, through
# selftests/pyverbs/run.sh with the tests of the release python3-pyverbs
# comes from (make deps unpacks them).  No test may fail or error, and a
# test may skip only for what neither softrma nor the guest has: device
# memory, and dma-buf allocation from a GPU's render node.  Skipped when
# the tests or pyverbs are missing.  The unittest output is left in
# $SOFTRMA_VM_OUT/pyverbs_mr/softrma0/test_mr.log.
. "$(dirname "$0")/../lib.sh"

out=${SOFTRMA_VM_OUT:-/tmp}/pyverbs_mr
rm -rf "$out"
PYVERBS_DEVICES=softrma PYVERBS_OUT=$out sh "$SOFTRMA_TOP/selftests/pyverbs/run.sh" test_mr
rc=$?
[ "$rc" = 0 ] || exit "$rc"		# a skip (4) says why itself

log=$out/softrma0/test_mr.log
python3 - "$SOFTRMA_TOP/selftests/pyverbs" "$log" "$(cat "$out/softrma0/test_mr.rc")" <<'EOF'
import re
import sys

sys.path.insert(0, sys.argv[1])
import table

MISSING = re.compile(r'Device memory is not supported$|'
                     r'Allocating dmabuf is not supported by /dev/dri/renderD\d+$|'
                     r'Device /dev/dri/renderD\d+ is not present$')
r = table.parse(sys.argv[2], int(sys.argv[3]))
missing = [why for _, why in r['skips'] if MISSING.match(why)]
bad = [f'{kind} {name}: {why}' for kind, name, why in r['problems']]
bad += [f'SKIP {name}: {why}' for name, why in r['skips']
        if not MISSING.match(why)]
if not r['pass']:
    bad.append('no test passed')
for line in bad:
    print(f'# {line}')
print(f'# test_mr: {r["ran"]} ran, {r["pass"]} passed, {len(missing)} skipped '
      'for a capability softrma or the guest lacks')
sys.exit(1 if bad else 0)
EOF
