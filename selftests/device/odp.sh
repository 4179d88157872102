#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# On-demand paging, on the local transport and in RoCEv2 packets through lo
# (force_wire): unmodified ibv_rc_pingpong with ODP MRs and prefetch (-o -P,
# every message checked) and with implicit ODP (-O), and perftest's
# ib_write_bw and ib_read_bw --odp;
# then verbs/odp.c, a kselftest_harness.h test whose cases each run on both
# transports (what the device reports, traffic of every kind into memory
# never touched, implicit MRs over the stack and over nothing, the ODP
# budget, ibv_advise_mr and its refusals, a range unmapped and
# mapped again, a read-only file, mprotect and fork under an MR, pages
# taken back during a stream of WRITEs, two MRs over one buffer both ways,
# windows refused), as root and as an unprivileged user (the wire cases
# skip: force_wire is root's); a writer killed mid-stream; and ODP refused
# while the device checks syncs.  softrma0 must hold no object after.  The
# pyverbs ODP tests run in device/pyverbs.sh.
. "$(dirname "$0")/../lib.sh"

add_softrma0
sys=/sys/class/infiniband/softrma0
for wire in 0 1; do
	echo "$wire" > /sys/module/softrma/parameters/force_wire
	pair "ibv_rc_pingpong -o -P, force_wire=$wire" \
		"ibv_rc_pingpong -d softrma0 -g 1 -n 200 -s 65536 -o -P -c" \
		"ibv_rc_pingpong -d softrma0 -g 1 -n 200 -s 65536 -o -P -c 10.9.0.1"
	pair "ibv_rc_pingpong -O, force_wire=$wire" \
		"ibv_rc_pingpong -d softrma0 -g 1 -n 200 -s 65536 -O -c" \
		"ibv_rc_pingpong -d softrma0 -g 1 -n 200 -s 65536 -O -c 10.9.0.1"
	for bw in ib_write_bw ib_read_bw; do
		pair "$bw --odp, force_wire=$wire" "$bw -d softrma0 -x 1 --odp -n 200" \
			"$bw -d softrma0 -x 1 --odp -n 200 10.9.0.1"
	done
done
echo 0 > /sys/module/softrma/parameters/force_wire

SOFTRMA_DEV=softrma0 SOFTRMA_IPV4=10.9.0.1 "$SOFTRMA_BIN/odp" || fail "odp"
chmod 0666 /dev/infiniband/uverbs* || fail "no uverbs device node"
as_user 65534 env SOFTRMA_DEV=softrma0 SOFTRMA_IPV4=10.9.0.1 \
	"$SOFTRMA_BIN/odp" > /tmp/odp-user.log 2>&1 ||
	fail "odp as nobody: $(grep -E '^(not ok|# FAIL)' /tmp/odp-user.log | head -n 3)"
info "verbs/odp as nobody: $(grep -c '^ok .*local' /tmp/odp-user.log) local cases passed"

# A writer into ODP memory killed mid-stream: its peer fails and ends.
ib_write_bw -d softrma0 -x 1 --odp -D 60 > /tmp/server.log 2>&1 &
spid=$!
sleep 1
ib_write_bw -d softrma0 -x 1 --odp -D 60 10.9.0.1 > /tmp/client.log 2>&1 &
cpid=$!
sleep "$(bound 3)"
kill -9 "$spid"
for _ in $(seq "$(bound 100)"); do
	kill -0 "$cpid" 2>/dev/null || break
	sleep 0.1
done
kill -0 "$cpid" 2>/dev/null && { kill -9 "$cpid"; fail "the writer still runs after its peer died"; }
wait "$cpid" && fail "the writer whose peer died reported success"
expect_no_objects softrma0

# A checking device copies pages at registration: ODP is refused there.
echo 1 > $sys/noncoherent || fail "noncoherent"
python3 - <<'PY' || fail "ODP on a checking device"
import errno
from pyverbs.device import Context
from pyverbs.pd import PD
from pyverbs.mr import MR
from pyverbs.pyverbs_error import PyverbsRDMAError
import pyverbs.enums as e

ctx = Context(name='softrma0')
assert ctx.query_device_ex().odp_caps.general_caps == 0, 'ODP caps reported'
pd = PD(ctx)
try:
    MR(pd, 4096, e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_ON_DEMAND)
    raise SystemExit('an ODP MR was registered')
except PyverbsRDMAError as ex:
    assert ex.error_code == errno.EOPNOTSUPP, ex
print('# a checking device: no ODP caps, ODP MRs EOPNOTSUPP')
PY
echo 0 > $sys/noncoherent || fail "noncoherent off"
rdma link delete softrma0 || fail "rdma link delete softrma0"
