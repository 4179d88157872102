#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The provider with libibverbs of other rdma-core releases, built by
# scripts/build-rdma-core.sh under $RDMA_CORE_BUILDS (vNN/{bin,lib,include}):
# libibverbs loads libsoftrma-rdmav<its ABI>.so, and with each release
# ibv_devinfo, ibv_rc_pingpong with and without -N (the ibv_wr_* API, which
# needs the release's struct verbs_qp layout), verbs/ext_api (built against
# rdma-core 44's headers, as programs of the installed release are) and,
# from rdma-core 45 on, ibv_wr_flush() reaching the provider; rdma-core 34
# to 43 (ABI 34 too, older layouts) get no softrma device; perftest's
# ib_write_bw and ib_send_bw (which post with ibv_wr_* since perftest 6)
# where built against that release under $PERFTEST_BUILDS/vNN/bin.  Skipped without builds
# (make check-rdma-core).
. "$(dirname "$0")/../lib.sh"

builds=${RDMA_CORE_BUILDS:-/var/tmp/rdma-core-builds}
perftest=${PERFTEST_BUILDS:-/var/tmp/perftest-builds}
ls -d "$builds"/v*/lib/libibverbs.so.1 >/dev/null 2>&1 ||
	skip "no rdma-core builds in $builds (scripts/build-rdma-core.sh)"
add_softrma0

# The provider's wr_flush, called through ibv_wr_flush() of the release's
# verbs.h: a placement type it does not know fails the batch with EINVAL,
# which only the provider's FLUSH checks.
cat > /tmp/wr_flush.c <<'EOF_C'
#include <errno.h>
#include <stdio.h>
#include <infiniband/verbs.h>

int main(void)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = list && list[0] ? ibv_open_device(list[0]) : NULL;
	struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	struct ibv_cq *cq = pd ? ibv_create_cq(ctx, 4, NULL, NULL, 0) : NULL;
	struct ibv_qp_init_attr_ex attr = {
		.qp_type = IBV_QPT_RC, .send_cq = cq, .recv_cq = cq, .pd = pd,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = IBV_QP_EX_WITH_FLUSH | IBV_QP_EX_WITH_RDMA_WRITE,
	};
	struct ibv_qp *qp = cq ? ibv_create_qp_ex(ctx, &attr) : NULL;
	struct ibv_qp_ex *qpx = qp ? ibv_qp_to_qp_ex(qp) : NULL;
	int ret;

	if (!qpx || !qpx->wr_flush) {
		printf("no QP with wr_flush: %m\n");
		return 1;
	}
	ibv_wr_start(qpx);
	ibv_wr_flush(qpx, 1, 0, 8, 1 << 5, IBV_FLUSH_RANGE);
	ret = ibv_wr_complete(qpx);
	printf("ibv_wr_complete: %d\n", ret);
	return ret != EINVAL;
}
EOF_C

for b in "$builds"/v*; do
	[ -e "$b/lib/libibverbs.so.1" ] || continue
	v=${b##*/}
	export LD_LIBRARY_PATH="$b/lib"
	if [ "${v#v}" -lt 44 ]; then
		"$b/bin/ibv_devinfo" -d softrma0 > /tmp/devinfo.log 2>&1 &&
			fail "$v: softrma0 served by the libibverbs of rdma-core $v"
		info "$v: softrma0 not served: $(head -n 1 /tmp/devinfo.log)"
		continue
	fi
	"$b/bin/ibv_devinfo" -d softrma0 > /tmp/devinfo.log 2>&1 &&
		grep -q PORT_ACTIVE /tmp/devinfo.log ||
		fail "$v: ibv_devinfo: $(tail -n 3 /tmp/devinfo.log)"
	info "$v: ibv_devinfo through $("$SOFTRMA_BIN/which_provider" softrma0)"
	pair "$v ibv_rc_pingpong" "$b/bin/ibv_rc_pingpong -d softrma0 -g 1 -n 200"
	pair "$v ibv_rc_pingpong -N" "$b/bin/ibv_rc_pingpong -d softrma0 -g 1 -n 200 -N"
	SOFTRMA_DEV=softrma0 SOFTRMA_IPV4=10.9.0.1 "$SOFTRMA_BIN/ext_api" > /tmp/ext_api.log 2>&1 ||
		fail "$v: ext_api: $(grep -E 'not ok|FAIL' /tmp/ext_api.log | head -n 5)"
	info "$v: ext_api: $(grep -c '^ok' /tmp/ext_api.log) cases pass"
	if grep -q wr_flush "$b/include/infiniband/verbs.h"; then
		gcc -o /tmp/wr_flush /tmp/wr_flush.c -I"$b/include" -L"$b/lib" -libverbs ||
			fail "$v: building wr_flush.c"
		/tmp/wr_flush > /tmp/wr_flush.log 2>&1 || fail "$v: ibv_wr_flush: $(cat /tmp/wr_flush.log)"
		info "$v: ibv_wr_flush reaches the provider"
	fi
	for t in ib_write_bw ib_send_bw; do
		[ -x "$perftest/$v/bin/$t" ] || continue
		pair "$v $t" "timeout $(bound 120) $perftest/$v/bin/$t -d softrma0 -x 1 -n 200"
	done
done
unset LD_LIBRARY_PATH
