// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * RDMA FLUSH and ATOMIC WRITE (IBA 1.5) from a QP of device A to memory of
 * device B (the same device when B is not given), case by case on fresh
 * QPs: what succeeds lands exactly (and completes with its own opcode),
 * what must fail gets the status rdma_rxe gives it and leaves B's memory
 * untouched.  A librpma-style batch (WRITE, FLUSH, ATOMIC WRITE, FLUSH,
 * READ back) checks the order.  FLUSH needs softrmadv.h, so it runs only
 * when A is a softrma device; so does ATOMIC WRITE through ibv_post_send.
 *
 * usage: rma_ext DEV_A IPV4_A [DEV_B IPV4_B]
 */
#include "softrmadv.h"
#include <sys/mman.h>

#include "test.h"

#define LEN		65536
#define DATA_ACCESS	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ)
#define FLUSH_ACCESS	(SOFTRMADV_ACCESS_FLUSH_GLOBAL | \
			 SOFTRMADV_ACCESS_FLUSH_PERSISTENT)
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

static void side_init(struct side *s, const char *dev, const char *ipv4,
		      struct side *same)
{
	if (same) {
		*s = *same;
		s->buf = NULL;
	} else {
		s->ctx = test_open_device(dev);
		s->gid_index = test_find_ipv4_gid(s->ctx, ipv4);
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

/* A fresh connection from A to B, whose QP grants @access; wr_start'ed. */
static struct conn connect_ab(int access)
{
	struct conn c = {
		.qa = create_qp(&a, SEND_OPS | flush_ops, DATA_ACCESS),
		.qb = create_qp(&b, IBV_QP_EX_WITH_RDMA_WRITE, access),
	};

	test_connect_to(c.qa, a.gid_index, &b.gid, c.qb->qp_num, 7);
	test_connect_to(c.qb, b.gid_index, &a.gid, c.qa->qp_num, 7);
	c.qx = ibv_qp_to_qp_ex(c.qa);
	ibv_wr_start(c.qx);
	return c;
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
 */
static void run(struct conn *c, enum ibv_wc_status status, const int *opcodes,
		const char *what)
{
	CHECK_EQ(ibv_wr_complete(c->qx), 0);
	for (int i = 0; i < c->n; i++) {
		struct ibv_wc wc = test_poll_one(a.cq, 30);
		enum ibv_wc_status want = i == c->n - 1 ? status : IBV_WC_SUCCESS;

		CHECK(wc.status == want, "%s: completion %d: %s, want %s", what,
		      i, ibv_wc_status_str(wc.status), ibv_wc_status_str(want));
		CHECK(wc.wr_id == (uint64_t)i, "%s: wr_id %lu, want %d", what,
		      (unsigned long)wc.wr_id, i);
		if (wc.status == IBV_WC_SUCCESS)
			CHECK(wc.opcode == (unsigned int)opcodes[i],
			      "%s: opcode %d, want %d", what, wc.opcode,
			      opcodes[i]);
	}
	CHECK(!memcmp(b.buf, shadow, LEN), "%s: B's memory is not as expected",
	      what);
	CHECK_EQ(ibv_destroy_qp(c->qa), 0);
	CHECK_EQ(ibv_destroy_qp(c->qb), 0);
	printf("# ok: %s\n", what);
}

static const int aw_op[] = { IBV_WC_ATOMIC_WRITE };
static const int fl_op[] = { SOFTRMADV_WC_FLUSH };

static void atomic_write_case(int access, uint32_t rkey, uint64_t off,
			      enum ibv_wc_status status, const char *what)
{
	struct conn c = connect_ab(access);
	uint64_t v = 0x1122334455667788ULL ^ off;

	ibv_wr_atomic_write(next_wr(&c), rkey, (uintptr_t)b.buf + off, &v);
	if (status == IBV_WC_SUCCESS)
		memcpy(shadow + off, &v, sizeof(v));
	run(&c, status, aw_op, what);
}

static void atomic_write_cases(void)
{
	int access = DATA_ACCESS | IBV_ACCESS_REMOTE_ATOMIC;

	atomic_write_case(access, b.mr->rkey, 64, IBV_WC_SUCCESS,
			  "ATOMIC WRITE lands 8 bytes");
	atomic_write_case(access, b.mr->rkey, LEN - 8, IBV_WC_SUCCESS,
			  "ATOMIC WRITE at the MR's last 8 bytes");
	atomic_write_case(access, b.mr->rkey, 68, IBV_WC_REM_INV_REQ_ERR,
			  "unaligned ATOMIC WRITE: invalid request");
	atomic_write_case(access, b.mr->rkey, LEN, IBV_WC_REM_ACCESS_ERR,
			  "ATOMIC WRITE past the MR: access error");
	atomic_write_case(access, b.mr->rkey ^ 0x80, 64, IBV_WC_REM_ACCESS_ERR,
			  "ATOMIC WRITE with a wrong rkey: access error");
	atomic_write_case(access, b.mr_ro->rkey, 64, IBV_WC_REM_ACCESS_ERR,
			  "ATOMIC WRITE to a read-only MR: access error");
	atomic_write_case(IBV_ACCESS_REMOTE_READ, b.mr->rkey, 64,
			  IBV_WC_REM_INV_REQ_ERR,
			  "ATOMIC WRITE to a QP without remote write: invalid request");
}

/* ibv_post_send(IBV_WR_ATOMIC_WRITE): the 8 bytes are the one SGE's. */
static void atomic_write_post_send(void)
{
	struct conn c = connect_ab(DATA_ACCESS);
	uint64_t v = 0xfeedfacecafebeefULL;
	struct ibv_sge sge = { (uintptr_t)&v, sizeof(v), 0 };
	struct ibv_send_wr wr = {
		.wr_id = 0, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_ATOMIC_WRITE, .send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { (uintptr_t)b.buf + 128, b.mr->rkey },
	}, *bad;

	ibv_wr_abort(c.qx);
	sge.length = 4;
	CHECK_EQ(ibv_post_send(c.qa, &wr, &bad), EINVAL);
	sge.length = sizeof(v);
	CHECK_EQ(ibv_post_send(c.qa, &wr, &bad), 0);
	v = 0;		/* taken at post time */
	memcpy(shadow + 128, &(uint64_t){ 0xfeedfacecafebeefULL }, 8);
	ibv_wr_start(c.qx);
	c.n = 1;
	run(&c, IBV_WC_SUCCESS, aw_op, "ATOMIC WRITE through ibv_post_send");
}

static void flush_case(int access, uint32_t rkey, uint64_t off, size_t len,
		       uint8_t type, uint8_t level, enum ibv_wc_status status,
		       const char *what)
{
	struct conn c = connect_ab(access);

	softrmadv_wr_flush(next_wr(&c), rkey, (uintptr_t)b.buf + off, len,
			   type, level);
	run(&c, status, fl_op, what);
}

static void flush_cases(void)
{
	int access = DATA_ACCESS | FLUSH_ACCESS;
	struct conn c;

	flush_case(access, b.mr->rkey, 4096, 8192, SOFTRMADV_FLUSH_GLOBAL,
		   SOFTRMADV_FLUSH_RANGE, IBV_WC_SUCCESS, "FLUSH GLOBAL of a range");
	flush_case(access, b.mr->rkey, 0, 0, SOFTRMADV_FLUSH_GLOBAL,
		   SOFTRMADV_FLUSH_MR, IBV_WC_SUCCESS, "FLUSH GLOBAL of the MR");
	flush_case(access, b.mr->rkey, LEN - 8, 16, SOFTRMADV_FLUSH_GLOBAL,
		   SOFTRMADV_FLUSH_RANGE, IBV_WC_REM_ACCESS_ERR,
		   "FLUSH past the MR: access error");
	flush_case(access, b.mr_ro->rkey, 0, 64, SOFTRMADV_FLUSH_GLOBAL,
		   SOFTRMADV_FLUSH_RANGE, IBV_WC_REM_ACCESS_ERR,
		   "FLUSH of an MR without FLUSH rights: access error");
	flush_case(access, b.mr->rkey ^ 0x80, 0, 64, SOFTRMADV_FLUSH_GLOBAL,
		   SOFTRMADV_FLUSH_MR, IBV_WC_REM_ACCESS_ERR,
		   "FLUSH with a wrong rkey: access error");
	flush_case(access, b.mr->rkey, 0, 64, SOFTRMADV_FLUSH_PERSISTENT,
		   SOFTRMADV_FLUSH_RANGE, IBV_WC_REM_ACCESS_ERR,
		   "FLUSH PERSISTENT of a GLOBAL-only MR: access error");
	flush_case(DATA_ACCESS, b.mr->rkey, 0, 64, SOFTRMADV_FLUSH_GLOBAL,
		   SOFTRMADV_FLUSH_RANGE, IBV_WC_REM_INV_REQ_ERR,
		   "FLUSH to a QP without FLUSH rights: invalid request");

	/* What the requester can tell is wrong is refused at posting. */
	c = connect_ab(access);
	softrmadv_wr_flush(next_wr(&c), b.mr->rkey, (uintptr_t)b.buf, 64, 3,
			   SOFTRMADV_FLUSH_RANGE);
	CHECK_EQ(ibv_wr_complete(c.qx), EINVAL);
	ibv_wr_start(c.qx);
	c.n = 0;
	softrmadv_wr_flush(next_wr(&c), b.mr->rkey, (uintptr_t)b.buf, 64,
			   SOFTRMADV_FLUSH_GLOBAL, 2);
	CHECK_EQ(ibv_wr_complete(c.qx), EINVAL);
	ibv_wr_start(c.qx);
	c.n = 0;
	run(&c, IBV_WC_SUCCESS, NULL, "FLUSH with a bad type or level: EINVAL");
}

/*
 * As librpma persists: WRITE data, FLUSH it, ATOMIC WRITE a pointer to it,
 * FLUSH that, READ all of it back.  Each completes in order.
 */
static void persist_batch(void)
{
	static const int ops[] = {
		IBV_WC_RDMA_WRITE, SOFTRMADV_WC_FLUSH, IBV_WC_ATOMIC_WRITE,
		SOFTRMADV_WC_FLUSH, IBV_WC_RDMA_READ,
	};
	struct conn c = connect_ab(DATA_ACCESS | FLUSH_ACCESS);
	uint64_t ptr = 0x2000;
	uintptr_t rb = (uintptr_t)b.buf;

	for (int i = 0; i < 4096; i++)
		a.buf[i] = i * 7 + 1;
	memcpy(shadow + 0x2000, a.buf, 4096);
	memcpy(shadow + 0x1000, &ptr, sizeof(ptr));
	memset(a.buf + 0x8000, 0, 0x2000);

	ibv_wr_rdma_write(next_wr(&c), b.mr->rkey, rb + 0x2000);
	ibv_wr_set_sge(c.qx, a.mr->lkey, (uintptr_t)a.buf, 4096);
	softrmadv_wr_flush(next_wr(&c), b.mr->rkey, rb + 0x2000, 4096,
			   SOFTRMADV_FLUSH_GLOBAL, SOFTRMADV_FLUSH_RANGE);
	ibv_wr_atomic_write(next_wr(&c), b.mr->rkey, rb + 0x1000, &ptr);
	softrmadv_wr_flush(next_wr(&c), b.mr->rkey, rb + 0x1000, 8,
			   SOFTRMADV_FLUSH_GLOBAL, SOFTRMADV_FLUSH_RANGE);
	ibv_wr_rdma_read(next_wr(&c), b.mr->rkey, rb + 0x1000);
	ibv_wr_set_sge(c.qx, a.mr->lkey, (uintptr_t)a.buf + 0x8000, 0x2000);
	run(&c, IBV_WC_SUCCESS, ops, "WRITE, FLUSH, ATOMIC WRITE, FLUSH, READ");
	CHECK(!memcmp(a.buf + 0x8000, shadow + 0x1000, 0x2000),
	      "the READ did not see what the batch wrote");
}

static void check_caps(struct side *s)
{
	struct ibv_device_attr_ex attr;
	uint64_t caps = 7ULL << 38;	/* FLUSH_GLOBAL, _PERSISTENT, ATOMIC_WRITE */

	CHECK_EQ(ibv_query_device_ex(s->ctx, NULL, &attr), 0);
	CHECK((attr.device_cap_flags_ex & caps) == caps,
	      "device_cap_flags_ex %#lx lacks FLUSH or ATOMIC WRITE",
	      (unsigned long)attr.device_cap_flags_ex);
}

/* FLUSH PERSISTENT rights need persistent memory, as rdma_rxe says too. */
static void persistent_needs_pmem(void)
{
	struct ibv_mr *mr = ibv_reg_mr(b.pd, b.buf, LEN, DATA_ACCESS |
				       SOFTRMADV_ACCESS_FLUSH_PERSISTENT);

	CHECK(!mr && errno == EINVAL, "FLUSH_PERSISTENT on DRAM: %s",
	      mr ? "registered" : strerror(errno));
	printf("# ok: FLUSH_PERSISTENT rights on DRAM: EINVAL\n");
}

/* UC has neither: the QP cannot be created with them. */
static void uc_refuses(void)
{
	struct ibv_qp_init_attr_ex init = {
		.qp_type = IBV_QPT_UC, .send_cq = a.cq, .recv_cq = a.cq,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = a.pd, .send_ops_flags = IBV_QP_EX_WITH_ATOMIC_WRITE,
	};

	CHECK(!ibv_create_qp_ex(a.ctx, &init) && errno == EOPNOTSUPP,
	      "a UC QP with ATOMIC WRITE");
	init.send_ops_flags = SOFTRMADV_QP_EX_WITH_FLUSH;
	CHECK(!ibv_create_qp_ex(a.ctx, &init) && errno == EOPNOTSUPP,
	      "a UC QP with FLUSH");
	printf("# ok: UC QPs refuse ATOMIC WRITE and FLUSH: EOPNOTSUPP\n");
}

int main(int argc, char **argv)
{
	if (argc != 3 && argc != 5) {
		fprintf(stderr, "usage: %s DEV_A IPV4_A [DEV_B IPV4_B]\n", argv[0]);
		return KSFT_FAIL;
	}
	side_init(&a, argv[1], argv[2], NULL);
	side_init(&b, argc == 5 ? argv[3] : argv[1],
		  argc == 5 ? argv[4] : argv[2], argc == 5 ? NULL : &a);
	memcpy(shadow, b.buf, LEN);
	if (a.softrma) {
		flush_ops = SOFTRMADV_QP_EX_WITH_FLUSH;
		check_caps(&a);
		uc_refuses();
		atomic_write_post_send();
	}
	if (b.softrma)
		check_caps(&b);
	persistent_needs_pmem();
	atomic_write_cases();
	if (a.softrma) {
		flush_cases();
		persist_batch();
	} else {
		printf("# skip: FLUSH: %s is not softrma, and rdma-core 44 has no ibv_wr_flush\n",
		       argv[1]);
	}
	printf("# rma_ext: all passed\n");
	return KSFT_PASS;
}
