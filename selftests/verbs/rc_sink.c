// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * RC QPs for hostile packets from outside (selftests/wire/craft_rc.py):
 * NQP QPs in RTS, expecting PSN 0, with every remote right (FLUSH GLOBAL
 * too) on one 64 KiB
 * MR that holds a known pattern.  Prints "qpn N" for each, "rkey K",
 * "addr A" and "len L", waits SECONDS, then prints each QP's state
 * ("state I S") and where the MR differs from the pattern apart from its
 * first 16 bytes, which the one good WRITE fills ("memory as expected" or
 * "memory changed at OFFSET").  The QPs' peer is a QPN nobody has, so
 * their answers go nowhere.
 *
 * usage: rc_sink DEV IPV4 NQP SECONDS
 */
#include <unistd.h>

#include "softrmadv.h"
#include "test.h"

#define MAX_QP	16
#define LEN	(64 << 10)
#define ACCESS	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC | \
		 SOFTRMADV_ACCESS_FLUSH_GLOBAL)

static unsigned char pattern(size_t i)
{
	return (unsigned char)(i * 7 + 3);
}

int main(int argc, char **argv)
{
	static const char good[16] = "softrma-good-wr!";
	struct ibv_qp *qp[MAX_QP];
	struct ibv_context *ctx;
	union ibv_gid gid;
	unsigned char *buf;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	int nqp, gid_index;
	size_t i;

	CHECK(argc == 5, "usage: rc_sink DEV IPV4 NQP SECONDS");
	nqp = atoi(argv[3]);
	CHECK(nqp > 0 && nqp <= MAX_QP, "NQP 1..%d", MAX_QP);
	ctx = test_open_device(argv[1]);
	gid_index = test_find_ipv4_gid(ctx, argv[2]);
	CHECK_EQ(ibv_query_gid(ctx, 1, gid_index, &gid), 0);
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	CHECK(pd && cq, "pd, cq");
	buf = malloc(LEN);
	CHECK(buf, "malloc");
	for (i = 0; i < LEN; i++)
		buf[i] = pattern(i);
	mr = ibv_reg_mr(pd, buf, LEN, ACCESS);
	CHECK(mr, "reg_mr: %s", strerror(errno));
	for (int q = 0; q < nqp; q++) {
		qp[q] = test_create_qp(pd, cq, NULL, IBV_QPT_RC, ACCESS);
		test_connect_to(qp[q], gid_index, &gid, 0xfffff0, 0);
		printf("qpn %u\n", qp[q]->qp_num);
	}
	printf("rkey %u\naddr %llu\nlen %u\n", mr->rkey,
	       (unsigned long long)(uintptr_t)buf, LEN);
	fflush(stdout);
	sleep(atoi(argv[4]));

	for (int q = 0; q < nqp; q++)
		printf("state %d %d\n", q, test_qp_state(qp[q]));
	for (i = 0; i < LEN; i++)
		if (buf[i] != (i < sizeof(good) ? (unsigned char)good[i] : pattern(i)))
			break;
	if (i == LEN)
		printf("memory as expected\n");
	else
		printf("memory changed at %zu\n", i);

	for (int q = 0; q < nqp; q++)
		CHECK_EQ(ibv_destroy_qp(qp[q]), 0);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
	CHECK_EQ(ibv_dereg_mr(mr), 0);
	CHECK_EQ(ibv_dealloc_pd(pd), 0);
	CHECK_EQ(ibv_close_device(ctx), 0);
	free(buf);
	return KSFT_PASS;
}
