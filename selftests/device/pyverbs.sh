#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# rdma-core's own pyverbs tests of what softrma offers beyond the basics, on
# softrma0, through selftests/pyverbs/run.sh with the tests of the release
# python3-pyverbs comes from (make deps unpacks them): test_mr (MRs,
# ibv_rereg_mr of access, translation and PD with traffic after it, memory
# windows), test_parent_domain (parent domains with and without custom
# allocators, their rings in memory from the allocator, 2 MiB huge pages
# among it), test_shared_pd (an imported context, PD and MR), and the
# modules with XRC tests besides their others: test_atomic, test_cqex,
# test_qpex and test_relaxed_ordering (XRC atomics, SENDs with and without
# immediate data through the ibv_wr_* API, traffic into an extended CQ,
# relaxed-ordering MRs), and test_odp (on-demand paging: RC, UD, XRC and
# SRQ traffic, atomics, READ and WRITE into ODP MRs, implicit ODP, 2 MiB
# huge pages, two MRs over one buffer, ibv_advise_mr).  No test may fail or
# error, and a test may skip only for what neither softrma nor the guest
# has: device memory, and dma-buf allocation from a GPU's render node.
# Skipped when the tests or pyverbs are missing.  The unittest output is left in
# $SOFTRMA_VM_OUT/pyverbs/softrma0/MODULE.log.
. "$(dirname "$0")/../lib.sh"

modules="test_mr test_parent_domain test_shared_pd test_atomic test_cqex test_qpex
	test_relaxed_ordering test_odp"
out=${SOFTRMA_VM_OUT:-/tmp}/pyverbs
rm -rf "$out"

# test_parent_domain's and test_odp's huge page tests skip without them.
hugepages=$(cat /proc/sys/vm/nr_hugepages)
trap 'echo "$hugepages" > /proc/sys/vm/nr_hugepages' EXIT
echo 4 > /proc/sys/vm/nr_hugepages

# shellcheck disable=SC2086 # the modules are words, here and below
PYVERBS_DEVICES=softrma PYVERBS_OUT=$out sh "$SOFTRMA_TOP/selftests/pyverbs/run.sh" $modules
rc=$?
[ "$rc" = 0 ] || exit "$rc"		# a skip (4) says why itself

# shellcheck disable=SC2086
python3 - "$SOFTRMA_TOP/selftests/pyverbs" "$out/softrma0" $modules <<'PY'
import re
import sys

sys.path.insert(0, sys.argv[1])
import table

MISSING = re.compile(r'Device memory is not supported$|'
                     r'Allocating dmabuf is not supported by /dev/dri/renderD\d+$|'
                     r'Device /dev/dri/renderD\d+ is not present$')
failed = False
for module in sys.argv[3:]:
    log = f'{sys.argv[2]}/{module}'
    with open(f'{log}.rc') as f:
        r = table.parse(f'{log}.log', int(f.read()))
    missing = [why for _, why in r['skips'] if MISSING.match(why)]
    bad = [f'{kind} {name}: {why}' for kind, name, why in r['problems']]
    bad += [f'SKIP {name}: {why}' for name, why in r['skips']
            if not MISSING.match(why)]
    if not r['pass']:
        bad.append('no test passed')
    for line in bad:
        print(f'# {module}: {line}')
    print(f'# {module}: {r["ran"]} ran, {r["pass"]} passed, {len(missing)} '
          'skipped for a capability softrma or the guest lacks')
    failed = failed or bool(bad)
sys.exit(1 if failed else 0)
PY
