// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * RDMA FLUSH and ATOMIC WRITE (IBA 1.5) from a QP of device A to memory of
 * device B, case by case on fresh QPs: what succeeds lands exactly (and
 * completes with its own opcode), what must fail gets the status rdma_rxe
 * gives it and leaves B's memory untouched.  A librpma-style batch (WRITE,
 * FLUSH, ATOMIC WRITE, FLUSH, READ back) checks the order.  FLUSH needs
 * softrmadv.h, so it runs only when A is a softrma device; so do ATOMIC
 * WRITE through ibv_post_send and the refusals of a UC QP.
 *
 * One kselftest_harness.h case per behaviour, each run in the fixture's
 * variants: "local" and "wire" (force_wire: RoCEv2 packets through lo) with
 * A and B the one device SOFTRMA_DEV, and "peer" with B the device
 * SOFTRMA_PEER_DEV (rdma_rxe, say), skipped when that is not set.
 *
 * usage: [SOFTRMA_DEV=softrma0] [SOFTRMA_IPV4=10.9.0.1]
 *        [SOFTRMA_PEER_DEV=rxer SOFTRMA_PEER_IPV4=10.13.0.2] rma_ext [HARNESS OPTIONS]
 * (-h: -l lists the cases, -v peer runs one variant,
 * -r rma.wire.persist_batch_in_order one case)
 */
#include "softrmadv.h"
#include <sys/mman.h>

#include "transport.h"

#define LEN		65536
#define DATA_ACCESS	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ)
#define FLUSH_ACCESS	(SOFTRMADV_ACCESS_FLUSH_GLOBAL | \
			 SOFTRMADV_ACCESS_FLUSH_PERSISTENT)
#define ATOMIC_ACCESS	(DATA_ACCESS | IBV_ACCESS_REMOTE_ATOMIC)
#define FLUSH_QP_ACCESS	(DATA_ACCESS | FLUSH_ACCESS)
#define SEND_OPS	(IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_READ | \
			 IBV_QP_EX_WITH_ATOMIC_WRITE)

struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	uint8_t *buf;
	struct ibv_mr *mr;		/* data access and FLUSH GLOBAL */
	struct ibv_mr *mr_ro;		/* remote read only */
	int gid_index;
	union ibv_gid gid;
	int softrma;
};

static struct side a, b;
static uint8_t shadow[LEN];		/* what B's buffer must hold */
static int flush_ops;			/* A offers FLUSH: SOFTRMADV_QP_EX_WITH_FLUSH */

/* @s on the device @s->ctx opened, or on the device of @same. */
static void side_init(struct side *s, struct side *same)
{
	if (same) {
		*s = *same;
	} else {
		CHECK_EQ(ibv_query_gid(s->ctx, 1, s->gid_index, &s->gid), 0);
		s->pd = ibv_alloc_pd(s->ctx);
		CHECK(s->pd, "alloc_pd");
		s->cq = ibv_create_cq(s->ctx, 64, NULL, NULL, 0);
		CHECK(s->cq, "create_cq");
		s->softrma = softrmadv_is_softrma(s->ctx);
	}
	s->buf = mmap(NULL, LEN, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	CHECK(s->buf != MAP_FAILED, "mmap");
	memset(s->buf, 0xa5, LEN);
	s->mr = ibv_reg_mr(s->pd, s->buf, LEN,
			   DATA_ACCESS | SOFTRMADV_ACCESS_FLUSH_GLOBAL);
	CHECK(s->mr, "reg_mr with FLUSH_GLOBAL: %s", strerror(errno));
	s->mr_ro = ibv_reg_mr(s->pd, s->buf, LEN, IBV_ACCESS_REMOTE_READ);
	CHECK(s->mr_ro, "reg_mr: %s", strerror(errno));
}

/* Releases @s, and its device unless it is another side's. */
static void side_fini(struct side *s, bool own_device)
{
	CHECK_EQ(ibv_dereg_mr(s->mr_ro), 0);
	CHECK_EQ(ibv_dereg_mr(s->mr), 0);
	CHECK_EQ(munmap(s->buf, LEN), 0);
	if (!own_device)
		return;
	CHECK_EQ(ibv_destroy_cq(s->cq), 0);
	CHECK_EQ(ibv_dealloc_pd(s->pd), 0);
	CHECK_EQ(ibv_close_device(s->ctx), 0);
}

/* An RC QP in INIT with @ops in its extended send API and @access. */
static struct ibv_qp *create_qp(struct side *s, uint64_t ops, int access)
{
	struct ibv_qp_init_attr_ex init = {
		.qp_type = IBV_QPT_RC, .send_cq = s->cq, .recv_cq = s->cq,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = s->pd, .send_ops_flags = ops,
	};
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = access,
	};
	struct ibv_qp *qp = ibv_create_qp_ex(s->ctx, &init);

	CHECK(qp, "create_qp_ex: %s", strerror(errno));
	CHECK_EQ(ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			       IBV_QP_PORT | IBV_QP_ACCESS_FLAGS), 0);
	return qp;
}

struct conn {
	struct ibv_qp *qa, *qb;
	struct ibv_qp_ex *qx;
	int n;				/* work requests built */
};

/* What a case built beyond the sides: teardown destroys it. */
FIXTURE(rma) {
	struct conn c;
};

TRANSPORT_PEER_VARIANTS(rma);

FIXTURE_SETUP(rma)
{
	if (variant->peer) {
		b.ctx = transport_open_peer(&b.gid_index);
		if (!b.ctx)
			SKIP(return, TRANSPORT_NO_PEER);
	}
	a.ctx = transport_open_device(&a.gid_index);
	if (!transport_set(variant->force_wire))
		SKIP(return, "%s: %s", FORCE_WIRE, strerror(errno));
	side_init(&a, NULL);
	side_init(&b, variant->peer ? NULL : &a);
	memcpy(shadow, b.buf, LEN);
	if (a.softrma)
		flush_ops = SOFTRMADV_QP_EX_WITH_FLUSH;
}

/*
 * The harness runs this after a case's body returned, not after a failed
 * check: that exit()s the case's process (test.h), which releases what the
 * case built.
 */
FIXTURE_TEARDOWN(rma)
{
	if (self->c.qa)
		CHECK_EQ(ibv_destroy_qp(self->c.qa), 0);
	if (self->c.qb)
		CHECK_EQ(ibv_destroy_qp(self->c.qb), 0);
	side_fini(&b, variant->peer);
	side_fini(&a, true);
	transport_put_back();
}

/* @c: a fresh connection from A to B, whose QP grants @access; wr_start'ed. */
static void connect_ab(struct conn *c, int access)
{
	c->qa = create_qp(&a, SEND_OPS | flush_ops, DATA_ACCESS);
	c->qb = create_qp(&b, IBV_QP_EX_WITH_RDMA_WRITE, access);
	test_connect_to(c->qa, a.gid_index, &b.gid, c->qb->qp_num, 7);
	test_connect_to(c->qb, b.gid_index, &a.gid, c->qa->qp_num, 7);
	c->qx = ibv_qp_to_qp_ex(c->qa);
	ibv_wr_start(c->qx);
}

/* Starts the next work request of @c. */
static struct ibv_qp_ex *next_wr(struct conn *c)
{
	c->qx->wr_id = c->n++;
	c->qx->wr_flags = IBV_SEND_SIGNALED;
	return c->qx;
}

/*
 * Posts what @c built; all but the last complete successfully with
 * @opcodes, the last with @status.  B's memory must then equal shadow.
 * Each completion may take 30 s (rdma_rxe): the cases that post have a
 * harness timeout of 60 s.
 */
static void run(struct conn *c, enum ibv_wc_status status, const int *opcodes)
{
	CHECK_EQ(ibv_wr_complete(c->qx), 0);
	for (int i = 0; i < c->n; i++) {
		struct ibv_wc wc = test_poll_one(a.cq, 30);
		enum ibv_wc_status want = i == c->n - 1 ? status : IBV_WC_SUCCESS;

		CHECK(wc.status == want, "completion %d: %s, want %s", i,
		      ibv_wc_status_str(wc.status), ibv_wc_status_str(want));
		CHECK(wc.wr_id == (uint64_t)i, "wr_id %lu, want %d",
		      (unsigned long)wc.wr_id, i);
		if (wc.status == IBV_WC_SUCCESS)
			CHECK(wc.opcode == (unsigned int)opcodes[i],
			      "opcode %d, want %d", wc.opcode, opcodes[i]);
	}
	CHECK(!memcmp(b.buf, shadow, LEN), "B's memory is not as expected");
}

static const int aw_op[] = { IBV_WC_ATOMIC_WRITE };
static const int fl_op[] = { SOFTRMADV_WC_FLUSH };

/* A's device name, for the cases that need A to be softrma. */
static const char *a_name(void)
{
	return ibv_get_device_name(a.ctx->device);
}

#define NO_FLUSH "%s is not softrma, and rdma-core 44 has no ibv_wr_flush"
#define NOT_SOFTRMA "%s is not softrma: the case checks softrma's answer"

static void check_caps(struct side *s)
{
	struct ibv_device_attr_ex attr;
	uint64_t caps = 7ULL << 38;	/* FLUSH_GLOBAL, _PERSISTENT, ATOMIC_WRITE */

	CHECK_EQ(ibv_query_device_ex(s->ctx, NULL, &attr), 0);
	CHECK((attr.device_cap_flags_ex & caps) == caps,
	      "device_cap_flags_ex %#lx lacks FLUSH or ATOMIC WRITE",
	      (unsigned long)attr.device_cap_flags_ex);
}

TEST_F(rma, device_offers_flush_and_atomic_write)
{
	if (!a.softrma && !b.softrma)
		SKIP(return, "neither %s nor %s is softrma", a_name(),
		     ibv_get_device_name(b.ctx->device));
	if (a.softrma)
		check_caps(&a);
	if (b.softrma)
		check_caps(&b);
}

/* UC has neither: the QP cannot be created with @ops (@name): EOPNOTSUPP. */
static void uc_refuses(uint64_t ops, const char *name)
{
	struct ibv_qp_init_attr_ex init = {
		.qp_type = IBV_QPT_UC, .send_cq = a.cq, .recv_cq = a.cq,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = a.pd, .send_ops_flags = ops,
	};

	CHECK(!ibv_create_qp_ex(a.ctx, &init) && errno == EOPNOTSUPP,
	      "a UC QP with %s", name);
}

TEST_F(rma, uc_qp_refuses_atomic_write)
{
	if (!a.softrma)
		SKIP(return, NOT_SOFTRMA, a_name());
	uc_refuses(IBV_QP_EX_WITH_ATOMIC_WRITE, "ATOMIC WRITE");
}

TEST_F(rma, uc_qp_refuses_flush)
{
	if (!a.softrma)
		SKIP(return, NO_FLUSH, a_name());
	uc_refuses(SOFTRMADV_QP_EX_WITH_FLUSH, "FLUSH");
}

/*
 * rdma-core 45 and later name FLUSH in send_ops_flags with
 * IBV_QP_EX_WITH_FLUSH, 1 << 11 (libibverbs/verbs.h), which is what
 * librpma passes: an RC QP with it is created, and FLUSHes.
 */
#define RDMA_CORE_QP_EX_WITH_FLUSH	(1ULL << 11)

TEST_F_TIMEOUT(rma, qp_with_rdma_core_flush_bit, 60)
{
	struct conn *c = &self->c;

	if (!a.softrma)
		SKIP(return, NO_FLUSH, a_name());
	c->qa = create_qp(&a, SEND_OPS | RDMA_CORE_QP_EX_WITH_FLUSH,
			  DATA_ACCESS);
	c->qb = create_qp(&b, IBV_QP_EX_WITH_RDMA_WRITE, FLUSH_QP_ACCESS);
	test_connect_to(c->qa, a.gid_index, &b.gid, c->qb->qp_num, 7);
	test_connect_to(c->qb, b.gid_index, &a.gid, c->qa->qp_num, 7);
	c->qx = ibv_qp_to_qp_ex(c->qa);
	ibv_wr_start(c->qx);
	softrmadv_wr_flush(next_wr(c), b.mr->rkey, (uintptr_t)b.buf, 64,
			   SOFTRMADV_FLUSH_GLOBAL, SOFTRMADV_FLUSH_RANGE);
	run(c, IBV_WC_SUCCESS, fl_op);
}

/* ibv_post_send(IBV_WR_ATOMIC_WRITE): the 8 bytes are the one SGE's. */
TEST_F_TIMEOUT(rma, atomic_write_through_post_send, 60)
{
	struct conn *c = &self->c;
	uint64_t v = 0xfeedfacecafebeefULL;
	struct ibv_sge sge = { (uintptr_t)&v, sizeof(v), 0 };
	struct ibv_send_wr wr = {
		.wr_id = 0, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_ATOMIC_WRITE, .send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { (uintptr_t)b.buf + 128, b.mr->rkey },
	}, *bad;

	if (!a.softrma)
		SKIP(return, NOT_SOFTRMA, a_name());
	connect_ab(c, DATA_ACCESS);
	ibv_wr_abort(c->qx);
	sge.length = 4;
	CHECK_EQ(ibv_post_send(c->qa, &wr, &bad), EINVAL);
	sge.length = sizeof(v);
	CHECK_EQ(ibv_post_send(c->qa, &wr, &bad), 0);
	v = 0;		/* taken at post time */
	memcpy(shadow + 128, &(uint64_t){ 0xfeedfacecafebeefULL }, 8);
	ibv_wr_start(c->qx);
	c->n = 1;
	run(c, IBV_WC_SUCCESS, aw_op);
}

/* FLUSH PERSISTENT rights need persistent memory, as rdma_rxe says too. */
TEST_F(rma, flush_persistent_rights_need_pmem)
{
	struct ibv_mr *mr = ibv_reg_mr(b.pd, b.buf, LEN, DATA_ACCESS |
				       SOFTRMADV_ACCESS_FLUSH_PERSISTENT);

	CHECK(!mr && errno == EINVAL, "FLUSH_PERSISTENT on DRAM: %s",
	      mr ? "registered" : strerror(errno));
}

/* An ATOMIC WRITE to B's @off through @rkey, on a QP of B granting @access. */
static void atomic_write_case(struct conn *c, int access, uint32_t rkey,
			      uint64_t off, enum ibv_wc_status status)
{
	uint64_t v = 0x1122334455667788ULL ^ off;

	connect_ab(c, access);
	ibv_wr_atomic_write(next_wr(c), rkey, (uintptr_t)b.buf + off, &v);
	if (status == IBV_WC_SUCCESS)
		memcpy(shadow + off, &v, sizeof(v));
	run(c, status, aw_op);
}

TEST_F_TIMEOUT(rma, atomic_write_lands_8_bytes, 60)
{
	atomic_write_case(&self->c, ATOMIC_ACCESS, b.mr->rkey, 64,
			  IBV_WC_SUCCESS);
}

TEST_F_TIMEOUT(rma, atomic_write_at_last_8_bytes_of_mr, 60)
{
	atomic_write_case(&self->c, ATOMIC_ACCESS, b.mr->rkey, LEN - 8,
			  IBV_WC_SUCCESS);
}

TEST_F_TIMEOUT(rma, atomic_write_unaligned, 60)
{
	atomic_write_case(&self->c, ATOMIC_ACCESS, b.mr->rkey, 68,
			  IBV_WC_REM_INV_REQ_ERR);
}

TEST_F_TIMEOUT(rma, atomic_write_past_mr, 60)
{
	atomic_write_case(&self->c, ATOMIC_ACCESS, b.mr->rkey, LEN,
			  IBV_WC_REM_ACCESS_ERR);
}

TEST_F_TIMEOUT(rma, atomic_write_wrong_rkey, 60)
{
	atomic_write_case(&self->c, ATOMIC_ACCESS, b.mr->rkey ^ 0x80, 64,
			  IBV_WC_REM_ACCESS_ERR);
}

TEST_F_TIMEOUT(rma, atomic_write_read_only_mr, 60)
{
	atomic_write_case(&self->c, ATOMIC_ACCESS, b.mr_ro->rkey, 64,
			  IBV_WC_REM_ACCESS_ERR);
}

TEST_F_TIMEOUT(rma, atomic_write_qp_without_remote_write, 60)
{
	atomic_write_case(&self->c, IBV_ACCESS_REMOTE_READ, b.mr->rkey, 64,
			  IBV_WC_REM_INV_REQ_ERR);
}

/*
 * A FLUSH of @type and @level through @rkey at B's @off, @len bytes, on a
 * QP of B granting @access.
 */
static void flush_case(struct conn *c, int access, uint32_t rkey, uint64_t off,
		       size_t len, uint8_t type, uint8_t level,
		       enum ibv_wc_status status)
{
	connect_ab(c, access);
	softrmadv_wr_flush(next_wr(c), rkey, (uintptr_t)b.buf + off, len,
			   type, level);
	run(c, status, fl_op);
}

TEST_F_TIMEOUT(rma, flush_global_of_range, 60)
{
	if (!a.softrma)
		SKIP(return, NO_FLUSH, a_name());
	flush_case(&self->c, FLUSH_QP_ACCESS, b.mr->rkey, 4096, 8192,
		   SOFTRMADV_FLUSH_GLOBAL, SOFTRMADV_FLUSH_RANGE,
		   IBV_WC_SUCCESS);
}

TEST_F_TIMEOUT(rma, flush_global_of_mr, 60)
{
	if (!a.softrma)
		SKIP(return, NO_FLUSH, a_name());
	flush_case(&self->c, FLUSH_QP_ACCESS, b.mr->rkey, 0, 0,
		   SOFTRMADV_FLUSH_GLOBAL, SOFTRMADV_FLUSH_MR, IBV_WC_SUCCESS);
}

TEST_F_TIMEOUT(rma, flush_past_mr, 60)
{
	if (!a.softrma)
		SKIP(return, NO_FLUSH, a_name());
	flush_case(&self->c, FLUSH_QP_ACCESS, b.mr->rkey, LEN - 8, 16,
		   SOFTRMADV_FLUSH_GLOBAL, SOFTRMADV_FLUSH_RANGE,
		   IBV_WC_REM_ACCESS_ERR);
}

TEST_F_TIMEOUT(rma, flush_mr_without_flush_rights, 60)
{
	if (!a.softrma)
		SKIP(return, NO_FLUSH, a_name());
	flush_case(&self->c, FLUSH_QP_ACCESS, b.mr_ro->rkey, 0, 64,
		   SOFTRMADV_FLUSH_GLOBAL, SOFTRMADV_FLUSH_RANGE,
		   IBV_WC_REM_ACCESS_ERR);
}

TEST_F_TIMEOUT(rma, flush_wrong_rkey, 60)
{
	if (!a.softrma)
		SKIP(return, NO_FLUSH, a_name());
	flush_case(&self->c, FLUSH_QP_ACCESS, b.mr->rkey ^ 0x80, 0, 64,
		   SOFTRMADV_FLUSH_GLOBAL, SOFTRMADV_FLUSH_MR,
		   IBV_WC_REM_ACCESS_ERR);
}

TEST_F_TIMEOUT(rma, flush_persistent_of_global_only_mr, 60)
{
	if (!a.softrma)
		SKIP(return, NO_FLUSH, a_name());
	flush_case(&self->c, FLUSH_QP_ACCESS, b.mr->rkey, 0, 64,
		   SOFTRMADV_FLUSH_PERSISTENT, SOFTRMADV_FLUSH_RANGE,
		   IBV_WC_REM_ACCESS_ERR);
}

TEST_F_TIMEOUT(rma, flush_qp_without_flush_rights, 60)
{
	if (!a.softrma)
		SKIP(return, NO_FLUSH, a_name());
	flush_case(&self->c, DATA_ACCESS, b.mr->rkey, 0, 64,
		   SOFTRMADV_FLUSH_GLOBAL, SOFTRMADV_FLUSH_RANGE,
		   IBV_WC_REM_INV_REQ_ERR);
}

/*
 * What the requester can tell is wrong is refused at posting: EINVAL, and
 * nothing reaches B.
 */
static void flush_refused(struct conn *c, uint8_t type, uint8_t level)
{
	connect_ab(c, FLUSH_QP_ACCESS);
	softrmadv_wr_flush(next_wr(c), b.mr->rkey, (uintptr_t)b.buf, 64, type,
			   level);
	CHECK_EQ(ibv_wr_complete(c->qx), EINVAL);
	ibv_wr_start(c->qx);
	c->n = 0;
	run(c, IBV_WC_SUCCESS, NULL);
}

TEST_F(rma, flush_of_unknown_type_refused)
{
	if (!a.softrma)
		SKIP(return, NO_FLUSH, a_name());
	flush_refused(&self->c, 3, SOFTRMADV_FLUSH_RANGE);
}

TEST_F(rma, flush_of_unknown_level_refused)
{
	if (!a.softrma)
		SKIP(return, NO_FLUSH, a_name());
	flush_refused(&self->c, SOFTRMADV_FLUSH_GLOBAL, 2);
}

/*
 * As librpma persists: WRITE data, FLUSH it, ATOMIC WRITE a pointer to it,
 * FLUSH that, READ all of it back.  Each completes in order.
 */
TEST_F_TIMEOUT(rma, persist_batch_in_order, 60)
{
	static const int ops[] = {
		IBV_WC_RDMA_WRITE, SOFTRMADV_WC_FLUSH, IBV_WC_ATOMIC_WRITE,
		SOFTRMADV_WC_FLUSH, IBV_WC_RDMA_READ,
	};
	struct conn *c = &self->c;
	uint64_t ptr = 0x2000;
	uintptr_t rb = (uintptr_t)b.buf;

	if (!a.softrma)
		SKIP(return, NO_FLUSH, a_name());
	connect_ab(c, FLUSH_QP_ACCESS);

	for (int i = 0; i < 4096; i++)
		a.buf[i] = i * 7 + 1;
	memcpy(shadow + 0x2000, a.buf, 4096);
	memcpy(shadow + 0x1000, &ptr, sizeof(ptr));
	memset(a.buf + 0x8000, 0, 0x2000);

	ibv_wr_rdma_write(next_wr(c), b.mr->rkey, rb + 0x2000);
	ibv_wr_set_sge(c->qx, a.mr->lkey, (uintptr_t)a.buf, 4096);
	softrmadv_wr_flush(next_wr(c), b.mr->rkey, rb + 0x2000, 4096,
			   SOFTRMADV_FLUSH_GLOBAL, SOFTRMADV_FLUSH_RANGE);
	ibv_wr_atomic_write(next_wr(c), b.mr->rkey, rb + 0x1000, &ptr);
	softrmadv_wr_flush(next_wr(c), b.mr->rkey, rb + 0x1000, 8,
			   SOFTRMADV_FLUSH_GLOBAL, SOFTRMADV_FLUSH_RANGE);
	ibv_wr_rdma_read(next_wr(c), b.mr->rkey, rb + 0x1000);
	ibv_wr_set_sge(c->qx, a.mr->lkey, (uintptr_t)a.buf + 0x8000, 0x2000);
	run(c, IBV_WC_SUCCESS, ops);
	CHECK(!memcmp(a.buf + 0x8000, shadow + 0x1000, 0x2000),
	      "the READ did not see what the batch wrote");
}

TRANSPORT_HARNESS_MAIN
