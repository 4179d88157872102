// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A receive's memory is checked as far as a message fills it, as rdma_rxe,
 * siw and HCAs check it.  A zero-length SEND, or an RDMA WRITE with
 * immediate, takes a receive whose SGE names memory no MR covers (address
 * 0, length 256, lkey 0: what libfabric's fi_shared_ctx posts on an MSG
 * endpoint, whose messages are all empty), from a QP's own receive queue
 * or from an SRQ that four QPs share; a SEND that fits in the SGEs that
 * pass their checks lands there; one that reaches an SGE that fails them
 * completes with LOC_PROT_ERR, one longer than all the SGEs with
 * LOC_LEN_ERR.  Each case runs on both transports: the fixture's variants
 * "local" and "wire" (force_wire: RoCEv2 packets through lo).  rdma_rxe
 * (SOFTRMA_DEV=rxe0 recv_sges -v local) passes the first four cases and
 * completes the last two with LOC_QP_OP_ERR and REM_OP_ERR.
 *
 * usage: [SOFTRMA_DEV=softrma0] [SOFTRMA_IPV4=10.9.0.1] recv_sges [HARNESS OPTIONS]
 */
#include <stdbool.h>
#include <unistd.h>

#define PAIR_BUF_LEN 4096
#include "pair.h"
#include "transport.h"

#define NQP 4

/* The SGE of fi_shared_ctx's receives: no MR, no key. */
static const struct ibv_sge no_mr_sge = { .addr = 0, .length = 256, .lkey = 0 };

/* n pairs in one PD, a[i] sending to b[i]; the b's share srq when there is one. */
FIXTURE(recv) {
	struct ibv_pd *pd;
	struct ibv_srq *srq;
	struct side a[NQP], b[NQP];
	int n;
};

TRANSPORT_VARIANTS(recv);

FIXTURE_SETUP(recv)
{
	ctx = transport_open_device(&gid_index);
	if (!transport_set(variant->force_wire))
		SKIP(return, "%s: %s", FORCE_WIRE, strerror(errno));
}

/*
 * After a case's body returned; a failed check exit()s the case's process
 * (test.h), which releases what the case built.
 */
FIXTURE_TEARDOWN(recv)
{
	for (int i = 0; i < self->n; i++) {
		side_fini(&self->a[i], 0);
		side_fini(&self->b[i], 0);
	}
	if (self->srq)
		CHECK_EQ(ibv_destroy_srq(self->srq), 0);
	if (self->pd)
		CHECK_EQ(ibv_dealloc_pd(self->pd), 0);
	CHECK_EQ(ibv_close_device(ctx), 0);
	transport_put_back();
}

static void pairs_init(FIXTURE_DATA(recv) *self, int n, bool srq)
{
	struct ibv_srq_init_attr init = { .attr = { .max_wr = 16, .max_sge = 2 } };

	self->pd = ibv_alloc_pd(ctx);
	CHECK(self->pd, "alloc_pd");
	if (srq) {
		self->srq = ibv_create_srq(self->pd, &init);
		CHECK(self->srq, "create_srq: %s", strerror(errno));
	}
	for (int i = 0; i < n; i++) {
		side_init(&self->a[i], self->pd, ALL_ACCESS, NULL);
		side_init(&self->b[i], self->pd, ALL_ACCESS, self->srq);
		self->n = i + 1;
		connect_qp(self->a[i].qp, self->b[i].qp->qp_num, 7);
		connect_qp(self->b[i].qp, self->a[i].qp->qp_num, 7);
	}
}

/* A receive of @num SGEs on @s's QP, or on the SRQ when there is one. */
static void post_recv(FIXTURE_DATA(recv) *self, struct side *s, uint64_t wr_id,
		      struct ibv_sge *sge, int num)
{
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = sge,
				  .num_sge = num }, *bad;

	if (self->srq)
		CHECK_EQ(ibv_post_srq_recv(self->srq, &wr, &bad), 0);
	else
		CHECK_EQ(ibv_post_recv(s->qp, &wr, &bad), 0);
}

/* A SEND of @len bytes of a's buffer, or an empty one (no memory, no key). */
static struct ibv_wc send_from(struct side *a, uint32_t len)
{
	struct ibv_sge sge = { len ? (uintptr_t)a->buf : 0, len,
			       len ? a->mr->lkey : 0 };
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND };

	fill(a->buf, len, len);
	return post_wait(a, &wr);
}

static void check_wc(struct ibv_wc wc, enum ibv_wc_status want, const char *what)
{
	if (wc.status != want)
		FAIL("%s: %s, want %s", what, ibv_wc_status_str(wc.status),
		     ibv_wc_status_str(want));
}

/* fi_shared_ctx -e msg --no-tx-shared-ctx on the verbs provider. */
TEST_F(recv, srq_zero_length_sends)
{
	struct ibv_sge sge = no_mr_sge;

	pairs_init(self, NQP, true);
	for (int i = 0; i <= NQP; i++)		/* one more, as fi_shared_ctx */
		post_recv(self, NULL, 100 + i, &sge, 1);
	for (int i = 0; i < NQP; i++) {
		struct ibv_wc wc;

		check_wc(send_from(&self->a[i], 0), IBV_WC_SUCCESS,
			 "zero-length SEND into an SRQ receive without MR");
		wc = test_poll_one(self->b[i].cq, 5);
		check_wc(wc, IBV_WC_SUCCESS, "its receive");
		CHECK_EQ(wc.opcode, IBV_WC_RECV);
		CHECK_EQ(wc.byte_len, 0);
		CHECK_EQ(wc.qp_num, self->b[i].qp->qp_num);
		CHECK_EQ(wc.wr_id, 100 + i);
	}
	for (int i = 0; i < NQP; i++)
		CHECK_EQ(test_qp_state(self->b[i].qp), IBV_QPS_RTS);
}

TEST_F(recv, rq_zero_length_send)
{
	struct ibv_sge sge = no_mr_sge;
	struct ibv_wc wc;

	pairs_init(self, 1, false);
	post_recv(self, &self->b[0], 7, &sge, 1);
	check_wc(send_from(&self->a[0], 0), IBV_WC_SUCCESS,
		 "zero-length SEND into a receive without MR");
	wc = test_poll_one(self->b[0].cq, 5);
	check_wc(wc, IBV_WC_SUCCESS, "its receive");
	CHECK_EQ(wc.byte_len, 0);
	CHECK_EQ(wc.wr_id, 7);
}

/* The WRITE's data goes to its rkey's memory: the receive gives its completion. */
TEST_F(recv, srq_write_with_imm)
{
	struct ibv_sge sge = no_mr_sge, src;
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &src, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
				  .imm_data = htonl(0xfab) };
	struct side *a, *b;
	struct ibv_wc wc;

	pairs_init(self, 1, true);
	a = &self->a[0], b = &self->b[0];
	post_recv(self, b, 8, &sge, 1);
	src = (struct ibv_sge) { (uintptr_t)a->buf, 64, a->mr->lkey };
	wr.wr.rdma.remote_addr = (uintptr_t)b->buf + 128;
	wr.wr.rdma.rkey = b->mr->rkey;
	fill(a->buf, 64, 3);
	check_wc(post_wait(a, &wr), IBV_WC_SUCCESS,
		 "WRITE with immediate taking a receive without MR");
	wc = test_poll_one(b->cq, 5);
	check_wc(wc, IBV_WC_SUCCESS, "its receive");
	CHECK_EQ(wc.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
	CHECK_EQ(ntohl(wc.imm_data), 0xfab);
	CHECK(!memcmp(b->buf + 128, a->buf, 64), "WRITE data differs");
}

/* Receive: 64 bytes of b's MR, then 64 that no MR covers. */
static void post_half_good(FIXTURE_DATA(recv) *self, struct side *b)
{
	struct ibv_sge sge[2] = {
		{ (uintptr_t)b->buf, 64, b->mr->lkey }, no_mr_sge,
	};

	memset(b->buf, 0, 256);
	post_recv(self, b, 9, sge, 2);
}

TEST_F(recv, srq_send_within_checked_sges)
{
	struct side *a, *b;
	struct ibv_wc wc;

	pairs_init(self, 1, true);
	a = &self->a[0], b = &self->b[0];
	post_half_good(self, b);
	check_wc(send_from(a, 64), IBV_WC_SUCCESS,
		 "64-byte SEND into a receive whose second SGE has no MR");
	wc = test_poll_one(b->cq, 5);
	check_wc(wc, IBV_WC_SUCCESS, "its receive");
	CHECK_EQ(wc.byte_len, 64);
	CHECK(!memcmp(b->buf, a->buf, 64), "SEND data differs");
}

/* One byte into the SGE without MR: a local protection error. */
TEST_F(recv, srq_send_into_failing_sge)
{
	struct side *a, *b;

	pairs_init(self, 1, true);
	a = &self->a[0], b = &self->b[0];
	post_half_good(self, b);
	check_wc(send_from(a, 65), IBV_WC_REM_OP_ERR, "65-byte SEND");
	check_wc(test_poll_one(b->cq, 5), IBV_WC_LOC_PROT_ERR, "its receive");
}

/* Past SGEs that all pass their checks: a length error, as before. */
TEST_F(recv, rq_send_past_every_sge)
{
	struct side *a, *b;
	struct ibv_sge sge[2];

	pairs_init(self, 1, false);
	a = &self->a[0], b = &self->b[0];
	sge[0] = (struct ibv_sge) { (uintptr_t)b->buf, 32, b->mr->lkey };
	sge[1] = (struct ibv_sge) { (uintptr_t)b->buf + 32, 32, b->mr->lkey };
	post_recv(self, b, 10, sge, 2);
	check_wc(send_from(a, 65), IBV_WC_REM_INV_REQ_ERR, "65-byte SEND");
	check_wc(test_poll_one(b->cq, 5), IBV_WC_LOC_LEN_ERR, "its receive");
}

TRANSPORT_HARNESS_MAIN
