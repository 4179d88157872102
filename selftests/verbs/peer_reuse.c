// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A connected QP on this host answers the QP object it was connected to,
 * not whatever QP later bears its number (review 2, G11: the local
 * transport has no PSN).  QP A on DEV_A is connected to QP C on DEV_C, and
 * C's RDMA WRITE lands in A's memory.  C goes, and DEV_C is deleted and
 * added again (RELINK, a shell command), so that its QP numbers start over:
 * the first QP of the new device, C2, bears C's number, and has C's GID.
 * Connected to A, C2's WRITE with A's rkey must not land (it completes
 * with an error when A drops it), while A is still RTS.
 *
 * usage: peer_reuse DEV_A IPV4_A DEV_C IPV4_C RELINK
 */
#include <stdint.h>
#include <stdlib.h>

#include "test.h"

#define LEN 64

struct end {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t buf[LEN];
	int gid_index;
	union ibv_gid gid;
};

static void end_init(struct end *e, const char *dev, const char *ipv4)
{
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;

	e->ctx = test_open_device(dev);
	e->gid_index = test_find_ipv4_gid(e->ctx, ipv4);
	CHECK_EQ(ibv_query_gid(e->ctx, 1, e->gid_index, &e->gid), 0);
	e->pd = ibv_alloc_pd(e->ctx);
	CHECK(e->pd, "alloc_pd");
	e->cq = ibv_create_cq(e->ctx, 16, NULL, NULL, 0);
	CHECK(e->cq, "create_cq: %s", strerror(errno));
	e->qp = test_create_qp(e->pd, e->cq, NULL, IBV_QPT_RC, access);
	e->mr = ibv_reg_mr(e->pd, e->buf, LEN, access);
	CHECK(e->mr, "reg_mr: %s", strerror(errno));
}

static void end_fini(struct end *e)
{
	CHECK_EQ(ibv_destroy_qp(e->qp), 0);
	CHECK_EQ(ibv_dereg_mr(e->mr), 0);
	CHECK_EQ(ibv_destroy_cq(e->cq), 0);
	CHECK_EQ(ibv_dealloc_pd(e->pd), 0);
	CHECK_EQ(ibv_close_device(e->ctx), 0);
}

/* @from WRITEs LEN bytes of @fill into @to's buffer: its completion. */
static struct ibv_wc write_to(struct end *from, struct end *to, uint8_t fill)
{
	struct ibv_sge sge = { (uintptr_t)from->buf, LEN, from->mr->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { (uintptr_t)to->buf, to->mr->rkey },
	}, *bad;

	memset(from->buf, fill, LEN);
	CHECK_EQ(ibv_post_send(from->qp, &wr, &bad), 0);
	return test_poll_one(from->cq, 30);
}

static int all_of(const uint8_t *buf, uint8_t fill)
{
	for (int i = 0; i < LEN; i++)
		if (buf[i] != fill)
			return 0;
	return 1;
}

int main(int argc, char **argv)
{
	struct end a, c, c2;
	struct ibv_wc wc;
	uint32_t qpn;

	CHECK(argc == 6, "usage: peer_reuse DEV_A IPV4_A DEV_C IPV4_C RELINK");
	end_init(&a, argv[1], argv[2]);
	end_init(&c, argv[3], argv[4]);
	qpn = c.qp->qp_num;
	test_connect_to(a.qp, a.gid_index, &c.gid, qpn, 7);
	test_connect_to(c.qp, c.gid_index, &a.gid, a.qp->qp_num, 7);
	wc = write_to(&c, &a, 'C');
	CHECK(wc.status == IBV_WC_SUCCESS, "C's WRITE: %s",
	      ibv_wc_status_str(wc.status));
	CHECK(all_of(a.buf, 'C'), "C's WRITE did not land");
	end_fini(&c);

	CHECK(system(argv[5]) == 0, "%s failed", argv[5]);
	end_init(&c2, argv[3], argv[4]);
	if (c2.qp->qp_num != qpn) {
		printf("# the new %s gave QPN %u, not C's %u\n", argv[3],
		       c2.qp->qp_num, qpn);
		return KSFT_SKIP;
	}
	CHECK(!memcmp(&c2.gid, &c.gid, sizeof(c.gid)), "C2 has another GID");
	test_connect_to(c2.qp, c2.gid_index, &a.gid, a.qp->qp_num, 7);
	wc = write_to(&c2, &a, 'X');
	printf("# C2, QPN %u as C, WRITE to A: %s\n", qpn,
	       ibv_wc_status_str(wc.status));
	CHECK(all_of(a.buf, 'C'), "C2's WRITE landed in A's memory");
	CHECK(wc.status != IBV_WC_SUCCESS, "C2's WRITE completed with success");
	CHECK_EQ(test_qp_state(a.qp), IBV_QPS_RTS);
	end_fini(&c2);
	end_fini(&a);
	printf("# A (%s) refused C2 (%s), which bears the number of its departed peer C\n",
	       argv[1], argv[3]);
	return KSFT_PASS;
}
