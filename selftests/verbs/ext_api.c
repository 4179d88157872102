// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The extended verbs over softrma: ibv_create_qp_ex() with send_ops_flags
 * and the ibv_wr_*() calls, and ibv_create_cq_ex() with ibv_start_poll().
 * Every RC operation in one batch with data checks; a batch with an error
 * (oversized inline data, more entries than the SQ holds) posts nothing;
 * unsupported operations and CQ fields are refused with EOPNOTSUPP.  One
 * kselftest_harness.h case per behaviour, each run on both transports: the
 * fixture's variants "local" and "wire" (force_wire: RoCEv2 packets through
 * lo).
 *
 * usage: [SOFTRMA_DEV=softrma0] [SOFTRMA_IPV4=10.9.0.1] ext_api [HARNESS OPTIONS]
 * (-h: -l lists the cases, -v wire runs one variant,
 * -r ext.wire.aborted_batch_posts_nothing one case)
 */
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "transport.h"

#define BUF 65536
#define SQ_DEPTH 16
#define ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)
#define RC_OPS (IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | \
		IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | \
		IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | \
		IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | IBV_QP_EX_WITH_SEND_WITH_INV)
#define WC_FLAGS (IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM | \
		  IBV_WC_EX_WITH_QP_NUM | IBV_WC_EX_WITH_SRC_QP)

static struct ibv_context *ctx;
static int gid_index;
static struct ibv_pd *pd;

struct side {
	struct ibv_cq_ex *cq;
	struct ibv_qp *qp;
	struct ibv_qp_ex *qpx;
	uint8_t *buf;
	struct ibv_mr *mr;
};

static struct ibv_cq_ex *create_cq(uint64_t wc_flags)
{
	struct ibv_cq_init_attr_ex attr = {
		.cqe = 64, .wc_flags = wc_flags,
		.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS,
		.flags = IBV_CREATE_CQ_ATTR_SINGLE_THREADED,
	};

	return ibv_create_cq_ex(ctx, &attr);
}

static struct ibv_qp *create_qp(struct ibv_cq_ex *cq, uint64_t ops)
{
	struct ibv_qp_init_attr_ex init = {
		.qp_type = IBV_QPT_RC,
		.send_cq = ibv_cq_ex_to_cq(cq), .recv_cq = ibv_cq_ex_to_cq(cq),
		.cap = { .max_send_wr = SQ_DEPTH, .max_recv_wr = 16,
			 .max_send_sge = 2, .max_recv_sge = 2,
			 .max_inline_data = 64 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = pd, .send_ops_flags = ops,
	};

	return ibv_create_qp_ex(ctx, &init);
}

static void side_init(struct side *s)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT, .port_num = 1, .qp_access_flags = ACCESS,
	};

	s->cq = create_cq(WC_FLAGS);
	CHECK(s->cq, "create_cq_ex: %s", strerror(errno));
	s->qp = create_qp(s->cq, RC_OPS);
	CHECK(s->qp, "create_qp_ex: %s", strerror(errno));
	s->qpx = ibv_qp_to_qp_ex(s->qp);
	CHECK(s->qpx, "ibv_qp_to_qp_ex");
	CHECK_EQ(ibv_modify_qp(s->qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			       IBV_QP_PORT | IBV_QP_ACCESS_FLAGS), 0);
	s->buf = calloc(1, BUF);
	CHECK(s->buf, "calloc");
	s->mr = ibv_reg_mr(pd, s->buf, BUF, ACCESS);
	CHECK(s->mr, "reg_mr: %s", strerror(errno));
}

/* Polls @n completions through the extended API, into @wc, within 5 s. */
static void poll_n(struct ibv_cq_ex *cq, struct ibv_wc *wc, int n)
{
	struct ibv_poll_cq_attr attr = {};
	int seconds = test_bound(5), got = 0, ret;
	struct timespec start, now;

	clock_gettime(CLOCK_MONOTONIC, &start);
	while (got < n) {
		ret = ibv_start_poll(cq, &attr);
		if (ret == ENOENT) {
			clock_gettime(CLOCK_MONOTONIC, &now);
			CHECK(now.tv_sec - start.tv_sec < seconds,
			      "%d of %d completions in %d s", got, n, seconds);
			usleep(1);
			continue;
		}
		CHECK_EQ(ret, 0);
		do {
			wc[got] = (struct ibv_wc) {
				.wr_id = cq->wr_id, .status = cq->status,
				.opcode = ibv_wc_read_opcode(cq),
				.byte_len = ibv_wc_read_byte_len(cq),
				.qp_num = ibv_wc_read_qp_num(cq),
				.src_qp = ibv_wc_read_src_qp(cq),
				.wc_flags = ibv_wc_read_wc_flags(cq),
			};
			if (wc[got].wc_flags & IBV_WC_WITH_IMM)
				wc[got].imm_data = ibv_wc_read_imm_data(cq);
			got++;
		} while (got < n && !(ret = ibv_next_poll(cq)));
		ibv_end_poll(cq);
	}
}

static void expect_empty(struct ibv_cq_ex *cq)
{
	struct ibv_poll_cq_attr attr = {};

	usleep(100000);
	CHECK_EQ(ibv_start_poll(cq, &attr), ENOENT);
}

static void post_recvs(struct side *s, int n)
{
	for (int i = 0; i < n; i++) {
		struct ibv_sge sge = { .addr = (uintptr_t)s->buf + 4096 * (i + 1),
				       .length = 4096, .lkey = s->mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = 100 + i, .sg_list = &sge,
					  .num_sge = 1 }, *bad;

		CHECK_EQ(ibv_post_recv(s->qp, &wr, &bad), 0);
	}
}

static void side_fini(struct side *s)
{
	CHECK_EQ(ibv_destroy_qp(s->qp), 0);
	CHECK_EQ(ibv_destroy_cq(ibv_cq_ex_to_cq(s->cq)), 0);
	CHECK_EQ(ibv_dereg_mr(s->mr), 0);
	free(s->buf);
}

/* What a case built: teardown destroys it. */
FIXTURE(ext) {
	struct side a, b;	/* a sends to b */
	struct ibv_cq_ex *cq;	/* for the QPs that must be refused */
};

TRANSPORT_VARIANTS(ext);

FIXTURE_SETUP(ext)
{
	ctx = transport_open_device(&gid_index);
	if (!transport_set(variant->force_wire))
		SKIP(return, "%s: %s", FORCE_WIRE, strerror(errno));
	pd = ibv_alloc_pd(ctx);
	CHECK(pd, "alloc_pd");
}

/*
 * The harness runs this after a case's body returned, not after a failed
 * check: that exit()s the case's process (test.h), which releases what the
 * case built.
 */
FIXTURE_TEARDOWN(ext)
{
	if (self->a.qp)
		side_fini(&self->a);
	if (self->b.qp)
		side_fini(&self->b);
	if (self->cq)
		CHECK_EQ(ibv_destroy_cq(ibv_cq_ex_to_cq(self->cq)), 0);
	CHECK_EQ(ibv_dealloc_pd(pd), 0);
	CHECK_EQ(ibv_close_device(ctx), 0);
	transport_put_back();
}

/* a and b, connected to each other. */
static void connect_sides(struct side *a, struct side *b)
{
	side_init(a);
	side_init(b);
	test_connect_rc(ctx, a->qp, gid_index, b->qp->qp_num, 7);
	test_connect_rc(ctx, b->qp, gid_index, a->qp->qp_num, 7);
}

/* Every RC operation in one batch: a -> b, checked on both sides. */
static void check_batch(struct side *a, struct side *b)
{
	struct ibv_qp_ex *q = a->qpx;
	uint64_t rb = (uintptr_t)b->buf;
	char msg[] = "inline via ibv_wr_set_inline_data";
	struct ibv_wc wc[8];

	for (int i = 0; i < 2048; i++)
		a->buf[i] = i * 13;
	memset(b->buf, 0, BUF);
	*(uint64_t *)(b->buf + 60000) = 40;
	*(uint64_t *)(b->buf + 60008) = 7;
	post_recvs(b, 2);

	ibv_wr_start(q);
	q->wr_id = 1;
	q->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(q, b->mr->rkey, rb + 100);
	ibv_wr_set_sge(q, a->mr->lkey, (uintptr_t)a->buf, 1000);
	q->wr_id = 2;
	ibv_wr_rdma_write_imm(q, b->mr->rkey, rb + 2000, htonl(0x1234));
	ibv_wr_set_sge(q, a->mr->lkey, (uintptr_t)a->buf + 1000, 24);
	q->wr_id = 3;
	ibv_wr_send(q);
	ibv_wr_set_inline_data(q, msg, sizeof(msg));
	q->wr_id = 4;
	ibv_wr_rdma_read(q, b->mr->rkey, rb + 100);
	ibv_wr_set_sge(q, a->mr->lkey, (uintptr_t)a->buf + 8192, 1000);
	q->wr_id = 5;
	ibv_wr_atomic_fetch_add(q, b->mr->rkey, rb + 60000, 2);
	ibv_wr_set_sge(q, a->mr->lkey, (uintptr_t)a->buf + 16384, 8);
	q->wr_id = 6;
	ibv_wr_atomic_cmp_swp(q, b->mr->rkey, rb + 60008, 7, 99);
	ibv_wr_set_sge(q, a->mr->lkey, (uintptr_t)a->buf + 16392, 8);
	CHECK_EQ(ibv_wr_complete(q), 0);

	poll_n(a->cq, wc, 6);
	for (int i = 0; i < 6; i++) {
		CHECK_EQ(wc[i].status, IBV_WC_SUCCESS);
		CHECK_EQ(wc[i].wr_id, i + 1);
		CHECK_EQ(wc[i].qp_num, a->qp->qp_num);
	}
	CHECK_EQ(wc[0].opcode, IBV_WC_RDMA_WRITE);
	CHECK_EQ(wc[2].opcode, IBV_WC_SEND);
	CHECK_EQ(wc[3].opcode, IBV_WC_RDMA_READ);
	CHECK_EQ(wc[3].byte_len, 1000);
	CHECK_EQ(wc[4].opcode, IBV_WC_FETCH_ADD);
	CHECK_EQ(wc[5].opcode, IBV_WC_COMP_SWAP);
	CHECK(!memcmp(b->buf + 100, a->buf, 1000), "RDMA WRITE data");
	CHECK_EQ(b->buf[99], 0);
	CHECK_EQ(b->buf[1100], 0);
	CHECK(!memcmp(b->buf + 2000, a->buf + 1000, 24), "WRITE_WITH_IMM data");
	CHECK(!memcmp(a->buf + 8192, a->buf, 1000), "RDMA READ data");
	CHECK_EQ(*(uint64_t *)(a->buf + 16384), 40);
	CHECK_EQ(*(uint64_t *)(b->buf + 60000), 42);
	CHECK_EQ(*(uint64_t *)(a->buf + 16392), 7);
	CHECK_EQ(*(uint64_t *)(b->buf + 60008), 99);

	poll_n(b->cq, wc, 2);
	CHECK_EQ(wc[0].opcode, IBV_WC_RECV_RDMA_WITH_IMM);
	CHECK_EQ(ntohl(wc[0].imm_data), 0x1234);
	CHECK_EQ(wc[0].src_qp, a->qp->qp_num);
	CHECK_EQ(wc[1].opcode, IBV_WC_RECV);
	CHECK_EQ(wc[1].byte_len, sizeof(msg));
	CHECK(!memcmp(b->buf + 8192, msg, sizeof(msg)), "inline SEND data");
}

TEST_F(ext, batch_of_every_rc_operation)
{
	connect_sides(&self->a, &self->b);
	check_batch(&self->a, &self->b);
}

/*
 * a and b connected and a batch started on a: a's first bytes are not
 * zero, b's are, so a WRITE that was posted shows.
 */
static struct ibv_qp_ex *start_batch(struct side *a, struct side *b)
{
	connect_sides(a, b);
	memset(a->buf, 0x5a, 100);
	memset(b->buf, 0, BUF);
	ibv_wr_start(a->qpx);
	a->qpx->wr_flags = IBV_SEND_SIGNALED;
	return a->qpx;
}

/* Nothing of the batch started on a was posted; the QP takes the next one. */
static void check_nothing_posted(struct side *a, struct side *b)
{
	expect_empty(a->cq);
	CHECK_EQ(b->buf[0], 0);
	check_batch(a, b);
}

TEST_F(ext, oversized_inline_batch_posts_nothing)
{
	struct side *a = &self->a, *b = &self->b;
	struct ibv_qp_ex *q = start_batch(a, b);
	char big[65] = "";

	ibv_wr_rdma_write(q, b->mr->rkey, (uintptr_t)b->buf);
	ibv_wr_set_sge(q, a->mr->lkey, (uintptr_t)a->buf, 100);
	ibv_wr_rdma_write(q, b->mr->rkey, (uintptr_t)b->buf);
	ibv_wr_set_inline_data(q, big, sizeof(big));	/* above max_inline */
	CHECK_EQ(ibv_wr_complete(q), EINVAL);
	check_nothing_posted(a, b);
}

TEST_F(ext, batch_beyond_sq_posts_nothing)
{
	struct side *a = &self->a, *b = &self->b;
	struct ibv_qp_ex *q = start_batch(a, b);

	for (int i = 0; i <= SQ_DEPTH; i++) {
		ibv_wr_rdma_write(q, b->mr->rkey, (uintptr_t)b->buf);
		ibv_wr_set_sge(q, a->mr->lkey, (uintptr_t)a->buf, 8);
	}
	CHECK_EQ(ibv_wr_complete(q), ENOMEM);
	check_nothing_posted(a, b);
}

TEST_F(ext, aborted_batch_posts_nothing)
{
	struct side *a = &self->a, *b = &self->b;
	struct ibv_qp_ex *q = start_batch(a, b);

	ibv_wr_rdma_write(q, b->mr->rkey, (uintptr_t)b->buf);
	ibv_wr_set_sge(q, a->mr->lkey, (uintptr_t)a->buf, 100);
	ibv_wr_abort(q);
	check_nothing_posted(a, b);
}

/*
 * ibv_wr_local_inv() of a memory region of user pages: only fast
 * registrations and type 2B windows can be invalidated.
 */
TEST_F(ext, local_inv_of_user_mr_refused)
{
	struct side *a = &self->a, *b = &self->b;
	struct ibv_wc wc[1];

	connect_sides(a, b);
	ibv_wr_start(a->qpx);
	a->qpx->wr_id = 1;
	a->qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_local_inv(a->qpx, a->mr->rkey);
	CHECK_EQ(ibv_wr_complete(a->qpx), 0);
	poll_n(a->cq, wc, 1);
	CHECK_EQ(wc[0].status, IBV_WC_LOC_QP_OP_ERR);
}

/*
 * ibv_wr_send_inv() naming a memory region of user pages: only fast
 * registrations (a kernel consumer's) can be invalidated, so b refuses
 * it, as rdma_rxe does: b's receive and a's SEND complete in error.
 */
TEST_F(ext, send_with_inv_of_user_mr_refused)
{
	struct side *a = &self->a, *b = &self->b;
	struct ibv_wc wc[1];

	connect_sides(a, b);
	post_recvs(b, 1);
	ibv_wr_start(a->qpx);
	a->qpx->wr_id = 1;
	a->qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send_inv(a->qpx, b->mr->rkey);
	ibv_wr_set_sge(a->qpx, a->mr->lkey, (uintptr_t)a->buf, 64);
	CHECK_EQ(ibv_wr_complete(a->qpx), 0);
	poll_n(a->cq, wc, 1);
	CHECK_EQ(wc[0].status, IBV_WC_REM_INV_REQ_ERR);
	poll_n(b->cq, wc, 1);
	CHECK_EQ(wc[0].wr_id, 100);
	CHECK_EQ(wc[0].status, IBV_WC_REM_INV_REQ_ERR);
}

/*
 * IBV_QP_INIT_ATTR_CREATE_FLAGS with no flag set asks for nothing
 * (pyverbs sets the bit at random); a flag softrma lacks is refused.
 */
TEST_F(ext, qp_with_empty_create_flags)
{
	struct ibv_qp_init_attr_ex init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS,
		.pd = pd,
	};
	struct ibv_qp *qp;

	self->cq = create_cq(WC_FLAGS);
	CHECK(self->cq, "create_cq_ex: %s", strerror(errno));
	init.send_cq = init.recv_cq = ibv_cq_ex_to_cq(self->cq);
	qp = ibv_create_qp_ex(ctx, &init);
	CHECK(qp, "create_qp_ex with create_flags 0: %s", strerror(errno));
	CHECK_EQ(ibv_destroy_qp(qp), 0);
	init.create_flags = IBV_QP_CREATE_SCATTER_FCS;
	CHECK(!ibv_create_qp_ex(ctx, &init), "SCATTER_FCS accepted");
	CHECK_EQ(errno, EOPNOTSUPP);
}

TEST_F(ext, cq_with_completion_timestamps_refused)
{
	CHECK(!create_cq(IBV_WC_EX_WITH_COMPLETION_TIMESTAMP), "timestamps accepted");
	CHECK_EQ(errno, EOPNOTSUPP);
}

TRANSPORT_HARNESS_MAIN
