// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Two RC QPs for selftests/wire/craft_stale.py, which starts this program
 * and drives it through its standard input: a message in progress must
 * never reach memory through a registration or a binding made after it
 * began, even under the same key.
 *
 * QP 0 is granted REMOTE_WRITE on MR N; QP 1 on a zero-based type 2B
 * window bound through it to [0, 16 KiB) of MR M.  Both MRs hold a known
 * pattern.  Printed: "qpn0 Q", "qpn1 Q", "rkey K" and "addr A" (N),
 * "mwkey K" and "ready".  Commands, each answered by a line:
 *   rereg   N loses REMOTE_WRITE (ibv_rereg_mr: the keys stay)
 *   rebind  the window is invalidated and bound again under the same key,
 *           to 1 KiB at 32 KiB of M
 *   check   "state I S" for each QP, then for each MR where it differs
 *           from the pattern past its first KiB, which a first packet may
 *           fill ("N as expected" or "N changed at OFFSET", M alike)
 * The QPs' peer is a QPN nobody has, so their answers go nowhere.
 *
 * usage: stale_sink DEV IPV4
 */
#include <stdint.h>
#include <unistd.h>

#include "test.h"

#define LEN	(64 << 10)
#define FIRST	1024		/* the path MTU: one packet's payload */

static unsigned char pattern(size_t i)
{
	return (unsigned char)(i * 7 + 3);
}

static void check_memory(const char *name, const unsigned char *buf)
{
	size_t i;

	for (i = FIRST; i < LEN && buf[i] == pattern(i); i++)
		;
	if (i == LEN)
		printf("%s as expected\n", name);
	else
		printf("%s changed at %zu\n", name, i);
}

static void post_wait(struct ibv_qp *qp, struct ibv_cq *cq,
		      struct ibv_send_wr *wr, const char *what)
{
	struct ibv_send_wr *bad;
	struct ibv_wc wc;

	wr->send_flags = IBV_SEND_SIGNALED;
	CHECK_EQ(ibv_post_send(qp, wr, &bad), 0);
	wc = test_poll_one(cq, 10);
	CHECK(wc.status == IBV_WC_SUCCESS, "%s: %s", what,
	      ibv_wc_status_str(wc.status));
}

static void bind_window(struct ibv_qp *qp, struct ibv_cq *cq, struct ibv_mw *mw,
		 uint32_t key, struct ibv_mr *mr, size_t off, size_t len)
{
	struct ibv_send_wr wr = { .opcode = IBV_WR_BIND_MW };

	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = key;
	wr.bind_mw.bind_info = (struct ibv_mw_bind_info) {
		.mr = mr, .addr = (uintptr_t)mr->addr + off, .length = len,
		.mw_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_ZERO_BASED,
	};
	post_wait(qp, cq, &wr, "bind");
}

static unsigned char *patterned(void)
{
	unsigned char *buf = malloc(LEN);

	CHECK(buf, "malloc");
	for (size_t i = 0; i < LEN; i++)
		buf[i] = pattern(i);
	return buf;
}

int main(int argc, char **argv)
{
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	unsigned char *m, *n;
	struct ibv_context *ctx;
	struct ibv_mr *mr_m, *mr_n;
	struct ibv_send_wr inv = { .opcode = IBV_WR_LOCAL_INV };
	struct ibv_qp *qp[2];
	union ibv_gid gid;
	struct ibv_mw *mw;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	char line[64];
	uint32_t key;
	int gid_index;

	CHECK(argc == 3, "usage: stale_sink DEV IPV4");
	ctx = test_open_device(argv[1]);
	gid_index = test_find_ipv4_gid(ctx, argv[2]);
	CHECK_EQ(ibv_query_gid(ctx, 1, gid_index, &gid), 0);
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	CHECK(pd && cq, "pd, cq");
	m = patterned();
	n = patterned();
	mr_m = ibv_reg_mr(pd, m, LEN, access | IBV_ACCESS_MW_BIND);
	mr_n = ibv_reg_mr(pd, n, LEN, access);
	CHECK(mr_m && mr_n, "reg_mr: %s", strerror(errno));
	for (int q = 0; q < 2; q++) {
		qp[q] = test_create_qp(pd, cq, NULL, IBV_QPT_RC, access);
		test_connect_to(qp[q], gid_index, &gid, 0xfffff0, 0);
		printf("qpn%d %u\n", q, qp[q]->qp_num);
	}
	mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	CHECK(mw, "alloc_mw: %s", strerror(errno));
	key = ibv_inc_rkey(mw->rkey);
	bind_window(qp[1], cq, mw, key, mr_m, 0, 16 << 10);
	printf("rkey %u\naddr %llu\nmwkey %u\nready\n", mr_n->rkey,
	       (unsigned long long)(uintptr_t)n, key);
	fflush(stdout);

	while (fgets(line, sizeof(line), stdin)) {
		if (!strcmp(line, "rereg\n")) {
			printf("rereg %d\n",
			       ibv_rereg_mr(mr_n, IBV_REREG_MR_CHANGE_ACCESS,
					    NULL, NULL, 0,
					    IBV_ACCESS_LOCAL_WRITE));
		} else if (!strcmp(line, "rebind\n")) {
			inv.invalidate_rkey = key;
			post_wait(qp[1], cq, &inv, "local invalidate");
			bind_window(qp[1], cq, mw, key, mr_m, 32 << 10, 1024);
			printf("rebind 0\n");
		} else if (!strcmp(line, "check\n")) {
			for (int q = 0; q < 2; q++)
				printf("state %d %d\n", q, test_qp_state(qp[q]));
			check_memory("N", n);
			check_memory("M", m);
			fflush(stdout);
			break;
		}
		fflush(stdout);
	}

	for (int q = 0; q < 2; q++)
		CHECK_EQ(ibv_destroy_qp(qp[q]), 0);
	CHECK_EQ(ibv_dealloc_mw(mw), 0);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
	CHECK_EQ(ibv_dereg_mr(mr_m), 0);
	CHECK_EQ(ibv_dereg_mr(mr_n), 0);
	CHECK_EQ(ibv_dealloc_pd(pd), 0);
	CHECK_EQ(ibv_close_device(ctx), 0);
	free(m);
	free(n);
	return KSFT_PASS;
}
