// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Memory windows (IBA 10.6.7), type 1 and type 2B: a (the requester)
 * reaches b's memory through a window that b binds over a part of one of
 * its MRs.  What a window grants lands exactly there; what it does not
 * (past its end, rights it lacks, after an unbind, an invalidation or its
 * deallocation, from a QP it is not bound through) completes in error at
 * a with b's memory untouched.  Binds that break a rule of the IBA
 * complete with IBV_WC_MW_BIND_ERR, as on rdma_rxe.
 *
 * One kselftest_harness.h case per behaviour, each on fresh QPs, in the
 * variants "local" and "wire" (force_wire: RoCEv2 packets through lo).
 *
 * usage: [SOFTRMA_DEV=softrma0] [SOFTRMA_IPV4=10.9.0.1] mw [HARNESS OPTIONS]
 */
#include <pthread.h>
#include <stdint.h>
#include <time.h>

#define PAIR_BUF_LEN	(64 << 10)
#include "pair.h"
#include "transport.h"

#define WIN_OFF		(4096 + 100)	/* where b binds its windows */
#define WIN_LEN		8192
#define MR_ACCESS	(ALL_ACCESS | IBV_ACCESS_MW_BIND)
#define WIN_ACCESS	(IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
			 IBV_ACCESS_REMOTE_ATOMIC)

FIXTURE(mw) {
	struct pair p;
	struct ibv_mr *mr;		/* b's buffer, with MW_BIND */
	struct ibv_mw *mw;
	char shadow[PAIR_BUF_LEN];	/* what b's buffer must hold */
};

TRANSPORT_VARIANTS(mw);

static void world_init(FIXTURE_DATA(mw) *self)
{
	pair_init(&self->p, ALL_ACCESS, 0);
	self->mr = ibv_reg_mr(self->p.b.pd, self->p.b.buf, PAIR_BUF_LEN,
			      MR_ACCESS);
	CHECK(self->mr, "reg_mr with MW_BIND: %s", strerror(errno));
	memset(self->p.b.buf, 0x5a, PAIR_BUF_LEN);
	memcpy(self->shadow, self->p.b.buf, PAIR_BUF_LEN);
	fill(self->p.a.buf, PAIR_BUF_LEN, 3);
}

static void world_fini(FIXTURE_DATA(mw) *self)
{
	if (self->mw)
		CHECK_EQ(ibv_dealloc_mw(self->mw), 0);
	if (self->mr)
		CHECK_EQ(ibv_dereg_mr(self->mr), 0);
	if (self->p.a.qp)
		pair_fini(&self->p);
	self->mw = NULL;
	self->mr = NULL;
	memset(&self->p, 0, sizeof(self->p));
}

FIXTURE_SETUP(mw)
{
	ctx = transport_open_device(&gid_index);
	if (!transport_set(variant->force_wire))
		SKIP(return, "%s: %s", FORCE_WIRE, strerror(errno));
	world_init(self);
}

FIXTURE_TEARDOWN(mw)
{
	world_fini(self);
	transport_put_back();
}

static struct ibv_mw *alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct ibv_mw *mw = ibv_alloc_mw(pd, type);

	CHECK(mw, "alloc_mw type %d: %s", type, strerror(errno));
	return mw;
}

/* b binds its type 1 window over [off, off + len) of @mr with @access. */
static struct ibv_wc bind1(FIXTURE_DATA(mw) *self, struct ibv_mr *mr,
			   int access, uint64_t off, uint64_t len)
{
	struct ibv_mw_bind bind = {
		.wr_id = 1, .send_flags = IBV_SEND_SIGNALED,
		.bind_info = {
			.mr = mr, .addr = (uintptr_t)self->p.b.buf + off,
			.length = len, .mw_access_flags = access,
		},
	};

	CHECK_EQ(ibv_bind_mw(self->p.b.qp, self->mw, &bind), 0);
	return test_poll_one(self->p.b.cq, 5);
}

/* b posts the bind of a type 2B window on @s's QP; *rkey: its new key. */
static struct ibv_wc bind2_on(FIXTURE_DATA(mw) *self, struct side *s,
			      int access, uint64_t addr, uint64_t len,
			      uint32_t *rkey)
{
	struct ibv_send_wr wr = {
		.wr_id = 2, .opcode = IBV_WR_BIND_MW,
		.bind_mw = {
			.mw = self->mw, .rkey = ibv_inc_rkey(self->mw->rkey),
			.bind_info = {
				.mr = self->mr, .addr = addr, .length = len,
				.mw_access_flags = access,
			},
		},
	};

	*rkey = wr.bind_mw.rkey;
	return post_wait(s, &wr);
}

static struct ibv_wc bind2(FIXTURE_DATA(mw) *self, int access, uint64_t off,
			   uint64_t len, uint32_t *rkey)
{
	return bind2_on(self, &self->p.b, access,
			(uintptr_t)self->p.b.buf + off, len, rkey);
}

static void check_wc(struct ibv_wc wc, enum ibv_wc_status status,
		     enum ibv_wc_opcode opcode)
{
	CHECK(wc.status == status, "status %s, want %s",
	      ibv_wc_status_str(wc.status), ibv_wc_status_str(status));
	if (status == IBV_WC_SUCCESS)
		CHECK_EQ(wc.opcode, opcode);
}

/* a's @opcode of a.buf[0, len) to @addr under @rkey, from @s. */
static struct ibv_wc rdma_from(struct side *s, enum ibv_wr_opcode opcode,
			       uint32_t rkey, uint64_t addr, uint32_t len)
{
	struct ibv_sge sge = { (uintptr_t)s->buf, len, s->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 3, .opcode = opcode, .sg_list = &sge, .num_sge = 1,
		.wr.rdma = { .remote_addr = addr, .rkey = rkey },
	};

	return post_wait(s, &wr);
}

static struct ibv_wc rdma(FIXTURE_DATA(mw) *self, enum ibv_wr_opcode opcode,
			  uint32_t rkey, uint64_t addr, uint32_t len)
{
	return rdma_from(&self->p.a, opcode, rkey, addr, len);
}

/* a writes @len bytes to b's buffer at @off (through the window there). */
static void write_lands(FIXTURE_DATA(mw) *self, uint32_t rkey, uint64_t addr,
			uint64_t off, uint32_t len)
{
	check_wc(rdma(self, IBV_WR_RDMA_WRITE, rkey, addr, len),
		 IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE);
	memcpy(self->shadow + off, self->p.a.buf, len);
	CHECK(!memcmp(self->p.b.buf, self->shadow, PAIR_BUF_LEN),
	      "b's buffer is not what the WRITE makes it");
}

/* a's WRITE of @len bytes to @addr is refused; b's memory is untouched. */
static void write_refused(FIXTURE_DATA(mw) *self, uint32_t rkey, uint64_t addr,
			  uint32_t len)
{
	check_wc(rdma(self, IBV_WR_RDMA_WRITE, rkey, addr, len),
		 IBV_WC_REM_ACCESS_ERR, 0);
	CHECK(!memcmp(self->p.b.buf, self->shadow, PAIR_BUF_LEN),
	      "a refused WRITE changed b's buffer");
}

static uint64_t b_addr(FIXTURE_DATA(mw) *self, uint64_t off)
{
	return (uintptr_t)self->p.b.buf + off;
}

TEST_F(mw, type1_write_and_read)
{
	self->mw = alloc_mw(self->p.b.pd, IBV_MW_TYPE_1);
	check_wc(bind1(self, self->mr, WIN_ACCESS, WIN_OFF, WIN_LEN),
		 IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	write_lands(self, self->mw->rkey, b_addr(self, WIN_OFF), WIN_OFF,
		    WIN_LEN);
	memset(self->p.a.buf, 0, WIN_LEN);
	check_wc(rdma(self, IBV_WR_RDMA_READ, self->mw->rkey,
		      b_addr(self, WIN_OFF), WIN_LEN),
		 IBV_WC_SUCCESS, IBV_WC_RDMA_READ);
	CHECK(!memcmp(self->p.a.buf, self->shadow + WIN_OFF, WIN_LEN),
	      "READ through the window");
}

TEST_F(mw, type1_fetch_and_add)
{
	uint64_t off = (WIN_OFF + 7) & ~7ULL, *target = (void *)(self->p.b.buf + off);
	struct ibv_sge sge = { (uintptr_t)self->p.a.buf, 8, self->p.a.mr->lkey };
	struct ibv_send_wr wr = {
		.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD, .sg_list = &sge,
		.num_sge = 1,
	};

	self->mw = alloc_mw(self->p.b.pd, IBV_MW_TYPE_1);
	check_wc(bind1(self, self->mr, WIN_ACCESS, WIN_OFF, WIN_LEN),
		 IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	*target = 40;
	wr.wr.atomic.remote_addr = b_addr(self, off);
	wr.wr.atomic.rkey = self->mw->rkey;
	wr.wr.atomic.compare_add = 2;
	check_wc(post_wait(&self->p.a, &wr), IBV_WC_SUCCESS,
		 IBV_WC_FETCH_ADD);
	CHECK_EQ(*target, 42);
	CHECK_EQ(*(uint64_t *)self->p.a.buf, 40);
}

TEST_F(mw, type1_past_its_end_refused)
{
	self->mw = alloc_mw(self->p.b.pd, IBV_MW_TYPE_1);
	check_wc(bind1(self, self->mr, WIN_ACCESS, WIN_OFF, WIN_LEN),
		 IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	write_refused(self, self->mw->rkey, b_addr(self, WIN_OFF + 1), WIN_LEN);
}

TEST_F(mw, type1_before_its_start_refused)
{
	self->mw = alloc_mw(self->p.b.pd, IBV_MW_TYPE_1);
	check_wc(bind1(self, self->mr, WIN_ACCESS, WIN_OFF, WIN_LEN),
		 IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	write_refused(self, self->mw->rkey, b_addr(self, WIN_OFF - 1), 2);
}

TEST_F(mw, type1_missing_right_refused)
{
	self->mw = alloc_mw(self->p.b.pd, IBV_MW_TYPE_1);
	check_wc(bind1(self, self->mr, IBV_ACCESS_REMOTE_READ, WIN_OFF,
		       WIN_LEN), IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	write_refused(self, self->mw->rkey, b_addr(self, WIN_OFF), 8);
}

TEST_F(mw, type1_unbind)
{
	uint32_t bound;

	self->mw = alloc_mw(self->p.b.pd, IBV_MW_TYPE_1);
	check_wc(bind1(self, self->mr, WIN_ACCESS, WIN_OFF, WIN_LEN),
		 IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	bound = self->mw->rkey;
	check_wc(bind1(self, self->mr, 0, 0, 0), IBV_WC_SUCCESS,
		 IBV_WC_BIND_MW);
	CHECK(self->mw->rkey != bound, "unbinding kept the key");
	write_refused(self, bound, b_addr(self, WIN_OFF), 8);
}

TEST_F(mw, type1_rebind_moves_it)
{
	uint32_t first;

	self->mw = alloc_mw(self->p.b.pd, IBV_MW_TYPE_1);
	check_wc(bind1(self, self->mr, WIN_ACCESS, WIN_OFF, WIN_LEN),
		 IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	first = self->mw->rkey;
	check_wc(bind1(self, self->mr, WIN_ACCESS, 2 * WIN_OFF, 64),
		 IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	CHECK((first >> 8) == (self->mw->rkey >> 8) && first != self->mw->rkey,
	      "keys %#x then %#x", first, self->mw->rkey);
	write_lands(self, self->mw->rkey, b_addr(self, 2 * WIN_OFF),
		    2 * WIN_OFF, 64);
	write_refused(self, first, b_addr(self, 2 * WIN_OFF), 8);
}

TEST_F(mw, type1_zero_based_refused)
{
	struct ibv_mw_bind bind = {
		.send_flags = IBV_SEND_SIGNALED,
		.bind_info = {
			.mr = NULL, .addr = (uintptr_t)self->p.b.buf,
			.length = WIN_LEN,
			.mw_access_flags = WIN_ACCESS | IBV_ACCESS_ZERO_BASED,
		},
	};

	self->mw = alloc_mw(self->p.b.pd, IBV_MW_TYPE_1);
	bind.bind_info.mr = self->mr;
	CHECK_EQ(ibv_bind_mw(self->p.b.qp, self->mw, &bind), EINVAL);
}

TEST_F(mw, type1_invalidate_refused)
{
	struct ibv_send_wr wr = { .opcode = IBV_WR_LOCAL_INV };

	self->mw = alloc_mw(self->p.b.pd, IBV_MW_TYPE_1);
	check_wc(bind1(self, self->mr, WIN_ACCESS, WIN_OFF, WIN_LEN),
		 IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	wr.invalidate_rkey = self->mw->rkey;
	check_wc(post_wait(&self->p.b, &wr), IBV_WC_LOC_QP_OP_ERR, 0);
}

TEST_F(mw, mr_without_bind_right_refused)
{
	self->mw = alloc_mw(self->p.b.pd, IBV_MW_TYPE_1);
	check_wc(bind1(self, self->p.b.mr, WIN_ACCESS, WIN_OFF, WIN_LEN),
		 IBV_WC_MW_BIND_ERR, 0);
}

TEST_F(mw, range_past_mr_refused)
{
	self->mw = alloc_mw(self->p.b.pd, IBV_MW_TYPE_1);
	check_wc(bind1(self, self->mr, WIN_ACCESS, PAIR_BUF_LEN - 8, 16),
		 IBV_WC_MW_BIND_ERR, 0);
}

/* C10-74: remote writers need an MR the device may write. */
TEST_F(mw, writable_window_of_read_only_mr_refused)
{
	struct ibv_mr *ro = ibv_reg_mr(self->p.b.pd, self->p.b.buf,
				       PAIR_BUF_LEN, IBV_ACCESS_MW_BIND);

	CHECK(ro, "reg_mr: %s", strerror(errno));
	self->mw = alloc_mw(self->p.b.pd, IBV_MW_TYPE_1);
	check_wc(bind1(self, ro, IBV_ACCESS_REMOTE_WRITE, WIN_OFF, WIN_LEN),
		 IBV_WC_MW_BIND_ERR, 0);
	CHECK_EQ(ibv_dereg_mr(ro), 0);
}

/* A window's key is no local key. */
TEST_F(mw, window_key_as_lkey_refused)
{
	struct ibv_sge sge = { (uintptr_t)self->p.b.buf + WIN_OFF, 8, 0 };
	struct ibv_send_wr wr = {
		.opcode = IBV_WR_RDMA_WRITE, .sg_list = &sge, .num_sge = 1,
		.wr.rdma = { .remote_addr = (uintptr_t)self->p.a.buf,
			     .rkey = self->p.a.mr->rkey },
	};

	self->mw = alloc_mw(self->p.b.pd, IBV_MW_TYPE_1);
	check_wc(bind1(self, self->mr, WIN_ACCESS, WIN_OFF, WIN_LEN),
		 IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	sge.lkey = self->mw->rkey;
	check_wc(post_wait(&self->p.b, &wr), IBV_WC_LOC_PROT_ERR, 0);
}

/*
 * IBA 10.6.7.2.6: an MR with windows bound to it stays registered, and
 * stays as it is.
 */
TEST_F(mw, dereg_of_bound_mr_refused)
{
	self->mw = alloc_mw(self->p.b.pd, IBV_MW_TYPE_1);
	check_wc(bind1(self, self->mr, WIN_ACCESS, WIN_OFF, WIN_LEN),
		 IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	CHECK(ibv_dereg_mr(self->mr) != 0, "MR deregistered under a window");
	CHECK(ibv_rereg_mr(self->mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			   MR_ACCESS) != 0, "MR re-registered under a window");
	write_lands(self, self->mw->rkey, b_addr(self, WIN_OFF), WIN_OFF, 8);
	CHECK_EQ(ibv_dealloc_mw(self->mw), 0);
	self->mw = NULL;
	CHECK_EQ(ibv_dereg_mr(self->mr), 0);
	self->mr = NULL;
}

TEST_F(mw, type1_dealloc)
{
	uint32_t rkey;

	self->mw = alloc_mw(self->p.b.pd, IBV_MW_TYPE_1);
	check_wc(bind1(self, self->mr, WIN_ACCESS, WIN_OFF, WIN_LEN),
		 IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	rkey = self->mw->rkey;
	CHECK_EQ(ibv_dealloc_mw(self->mw), 0);
	self->mw = NULL;
	write_refused(self, rkey, b_addr(self, WIN_OFF), 8);
}

TEST_F(mw, type2_write_then_local_invalidate)
{
	struct ibv_send_wr inv = { .opcode = IBV_WR_LOCAL_INV };
	uint32_t rkey;

	self->mw = alloc_mw(self->p.b.pd, IBV_MW_TYPE_2);
	check_wc(bind2(self, WIN_ACCESS, WIN_OFF, WIN_LEN, &rkey),
		 IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	write_lands(self, rkey, b_addr(self, WIN_OFF), WIN_OFF, WIN_LEN);
	inv.invalidate_rkey = rkey;
	check_wc(post_wait(&self->p.b, &inv), IBV_WC_SUCCESS,
		 IBV_WC_LOCAL_INV);
	write_refused(self, rkey, b_addr(self, WIN_OFF), 8);
}

TEST_F(mw, type2_remote_invalidate)
{
	struct ibv_sge rsge = { (uintptr_t)self->p.b.buf, 64, self->p.b.mr->lkey };
	struct ibv_recv_wr rwr = { .wr_id = 9, .sg_list = &rsge, .num_sge = 1 };
	struct ibv_send_wr wr = { .opcode = IBV_WR_SEND_WITH_INV };
	struct ibv_recv_wr *bad;
	struct ibv_wc wc;
	uint32_t rkey;

	self->mw = alloc_mw(self->p.b.pd, IBV_MW_TYPE_2);
	check_wc(bind2(self, WIN_ACCESS, WIN_OFF, WIN_LEN, &rkey),
		 IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	CHECK_EQ(ibv_post_recv(self->p.b.qp, &rwr, &bad), 0);
	wr.invalidate_rkey = rkey;
	check_wc(post_wait(&self->p.a, &wr), IBV_WC_SUCCESS, IBV_WC_SEND);
	wc = test_poll_one(self->p.b.cq, 5);
	check_wc(wc, IBV_WC_SUCCESS, IBV_WC_RECV);
	CHECK(wc.wc_flags & IBV_WC_WITH_INV, "receive without WITH_INV");
	CHECK_EQ(wc.invalidated_rkey, rkey);
	write_refused(self, rkey, b_addr(self, WIN_OFF), 8);
}

TEST_F(mw, type2_bound_twice_refused)
{
	uint32_t rkey, again;

	self->mw = alloc_mw(self->p.b.pd, IBV_MW_TYPE_2);
	check_wc(bind2(self, WIN_ACCESS, WIN_OFF, WIN_LEN, &rkey),
		 IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	self->mw->rkey = rkey;
	check_wc(bind2(self, WIN_ACCESS, 0, 64, &again), IBV_WC_MW_BIND_ERR, 0);
}

TEST_F(mw, type2_zero_length_refused)
{
	uint32_t rkey;

	self->mw = alloc_mw(self->p.b.pd, IBV_MW_TYPE_2);
	check_wc(bind2(self, WIN_ACCESS, WIN_OFF, 0, &rkey),
		 IBV_WC_MW_BIND_ERR, 0);
}

TEST_F(mw, type2_zero_based)
{
	uint32_t rkey;

	self->mw = alloc_mw(self->p.b.pd, IBV_MW_TYPE_2);
	check_wc(bind2(self, WIN_ACCESS | IBV_ACCESS_ZERO_BASED, WIN_OFF,
		       WIN_LEN, &rkey), IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	write_lands(self, rkey, 100, WIN_OFF + 100, 4000);
	write_refused(self, rkey, WIN_LEN - 4, 8);
}

/* Only the QP a type 2B window was bound through reaches it. */
TEST_F(mw, type2_other_qp_refused)
{
	struct side c = {}, d = {};
	uint32_t rkey;
	struct ibv_wc wc;

	side_init(&c, NULL, ALL_ACCESS, NULL);
	side_init(&d, self->p.b.pd, ALL_ACCESS, NULL);
	connect_qp(c.qp, d.qp->qp_num, 0);
	connect_qp(d.qp, c.qp->qp_num, 0);
	self->mw = alloc_mw(self->p.b.pd, IBV_MW_TYPE_2);
	check_wc(bind2(self, WIN_ACCESS, WIN_OFF, WIN_LEN, &rkey),
		 IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	wc = rdma_from(&c, IBV_WR_RDMA_WRITE, rkey, b_addr(self, WIN_OFF), 8);
	check_wc(wc, IBV_WC_REM_ACCESS_ERR, 0);
	CHECK(!memcmp(self->p.b.buf, self->shadow, PAIR_BUF_LEN),
	      "a refused WRITE changed b's buffer");
	side_fini(&c, 1);
	side_fini(&d, 0);
}

/* C10-72: a type 2B window is bound through a QP of its own PD. */
TEST_F(mw, type2_bind_through_other_pd_refused)
{
	uint32_t rkey;

	self->mw = alloc_mw(self->p.a.pd, IBV_MW_TYPE_2);
	check_wc(bind2(self, WIN_ACCESS, WIN_OFF, WIN_LEN, &rkey),
		 IBV_WC_MW_BIND_ERR, 0);
}

TEST_F(mw, type2_dealloc)
{
	uint32_t rkey;

	self->mw = alloc_mw(self->p.b.pd, IBV_MW_TYPE_2);
	check_wc(bind2(self, WIN_ACCESS, WIN_OFF, WIN_LEN, &rkey),
		 IBV_WC_SUCCESS, IBV_WC_BIND_MW);
	CHECK_EQ(ibv_dealloc_mw(self->mw), 0);
	self->mw = NULL;
	write_refused(self, rkey, b_addr(self, WIN_OFF), 8);
}

/* pyverbs' test_qp_ex_rc_bind_mw: a window without remote rights. */
TEST_F(mw, type2_ext_api_bind_without_rights)
{
	struct ibv_qp_init_attr_ex init = {
		.qp_type = IBV_QPT_RC, .send_cq = self->p.b.cq,
		.recv_cq = self->p.b.cq, .pd = self->p.b.pd,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = IBV_QP_EX_WITH_BIND_MW,
	};
	struct ibv_mw_bind_info info = {
		.mr = self->mr, .addr = b_addr(self, WIN_OFF), .length = WIN_LEN,
		.mw_access_flags = IBV_ACCESS_LOCAL_WRITE,
	};
	struct ibv_qp *qp = ibv_create_qp_ex(ctx, &init);
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_RESET };
	struct ibv_qp_ex *qpx;
	uint32_t rkey;

	CHECK(qp, "create_qp_ex with BIND_MW: %s", strerror(errno));
	CHECK_EQ(ibv_destroy_qp(self->p.b.qp), 0);
	self->p.b.qp = qp;
	CHECK_EQ(ibv_modify_qp(self->p.a.qp, &attr, IBV_QP_STATE), 0);
	attr = (struct ibv_qp_attr) {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = ALL_ACCESS,
	};
	CHECK_EQ(ibv_modify_qp(self->p.a.qp, &attr, IBV_QP_STATE |
			       IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			       IBV_QP_ACCESS_FLAGS), 0);
	CHECK_EQ(ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			       IBV_QP_PORT | IBV_QP_ACCESS_FLAGS), 0);
	connect_qp(qp, self->p.a.qp->qp_num, 0);
	connect_qp(self->p.a.qp, qp->qp_num, 0);
	self->mw = alloc_mw(self->p.b.pd, IBV_MW_TYPE_2);
	rkey = ibv_inc_rkey(self->mw->rkey);
	qpx = ibv_qp_to_qp_ex(qp);
	ibv_wr_start(qpx);
	qpx->wr_id = 4;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_bind_mw(qpx, self->mw, rkey, &info);
	CHECK_EQ(ibv_wr_complete(qpx), 0);
	check_wc(test_poll_one(self->p.b.cq, 5), IBV_WC_SUCCESS,
		 IBV_WC_BIND_MW);
	write_refused(self, rkey, b_addr(self, WIN_OFF), 8);
}

/* Hostile binds straight from the ring's fields: each refused, none lands. */
TEST_F(mw, hostile_binds_refused)
{
	const struct {
		uint64_t addr, len;
		int key_delta;		/* of the new key's index */
		int access;
	} bad[] = {
		{ -4096ULL, 8192, 0, WIN_ACCESS },		/* wraps */
		{ 0, ~0ULL, 0, WIN_ACCESS },			/* huge */
		{ WIN_OFF, WIN_LEN, 1, WIN_ACCESS },		/* index moves */
		{ WIN_OFF, WIN_LEN, 0, 1 << 20 },		/* unknown right */
		{ WIN_OFF, WIN_LEN, 0, IBV_ACCESS_MW_BIND },	/* not a window's */
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint64_t addr = bad[i].addr == -4096ULL || !bad[i].addr ?
				bad[i].addr : b_addr(self, bad[i].addr);
		struct ibv_send_wr wr = {
			.opcode = IBV_WR_BIND_MW,
			.bind_mw = {
				.bind_info = {
					.addr = addr,
					.length = bad[i].len,
					.mw_access_flags = bad[i].access,
				},
			},
		};

		if (i) {
			world_fini(self);
			world_init(self);
		}
		self->mw = alloc_mw(self->p.b.pd, IBV_MW_TYPE_2);
		wr.bind_mw.mw = self->mw;
		wr.bind_mw.rkey = ibv_inc_rkey(self->mw->rkey) +
				  (bad[i].key_delta << 8);
		wr.bind_mw.bind_info.mr = self->mr;
		check_wc(post_wait(&self->p.b, &wr), IBV_WC_MW_BIND_ERR, 0);
		CHECK(!memcmp(self->p.b.buf, self->shadow, PAIR_BUF_LEN),
		      "b's buffer changed");
	}
}

/* @qp, in error after a failed bind, back to RTS towards @dest. */
static void qp_restart(struct ibv_qp *qp, uint32_t dest)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_RESET };

	CHECK_EQ(ibv_modify_qp(qp, &attr, IBV_QP_STATE), 0);
	attr = (struct ibv_qp_attr) {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = ALL_ACCESS,
	};
	CHECK_EQ(ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			       IBV_QP_PORT | IBV_QP_ACCESS_FLAGS), 0);
	connect_qp(qp, dest, 0);
}

static void spin_ns(long ns)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do
		clock_gettime(CLOCK_MONOTONIC, &t);
	while ((t.tv_sec - t0.tv_sec) * 1000000000L + t.tv_nsec - t0.tv_nsec < ns);
}

struct rereg_race {
	pthread_barrier_t start;
	struct ibv_mr *mr;
	void *to;		/* where the rereg moves the MR */
	int ret;
};

static void *rereg_racer(void *arg)
{
	struct rereg_race *r = arg;

	pthread_barrier_wait(&r->start);
	r->ret = ibv_rereg_mr(r->mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL,
			      r->to, PAIR_BUF_LEN, MR_ACCESS);
	return NULL;
}

/*
 * A bind over b's buffer and a rereg that moves its MR to other memory,
 * started together (the bind later by 0 to 100 us, so that its checks meet
 * the rereg's at some point), never both succeed: a bind that came first
 * makes the rereg fail (a window is bound), one that came after finds its
 * range outside the MR.  Both succeeding leaves the window on the page array
 * the rereg freed (security review 2, G3; a KASAN kernel reports it).
 */
TEST_F(mw, bind_races_rereg)
{
	struct rereg_race r = { .mr = self->mr };
	int iterations = 1000 * test_bound(1), both = 0;
	char *other = calloc(1, PAIR_BUF_LEN);
	struct ibv_wc wc;
	pthread_t t;

	CHECK(other, "calloc");
	CHECK_EQ(pthread_barrier_init(&r.start, NULL, 2), 0);
	self->mw = alloc_mw(self->p.b.pd, IBV_MW_TYPE_1);
	for (int i = 0; i < iterations; i++) {
		r.to = other;
		CHECK_EQ(pthread_create(&t, NULL, rereg_racer, &r), 0);
		pthread_barrier_wait(&r.start);
		spin_ns(i % 1000 * 100);
		wc = bind1(self, self->mr, WIN_ACCESS, 0, 4096);
		pthread_join(t, NULL);
		CHECK(wc.status == IBV_WC_SUCCESS || wc.status == IBV_WC_MW_BIND_ERR,
		      "bind: %s", ibv_wc_status_str(wc.status));
		both += wc.status == IBV_WC_SUCCESS && !r.ret;
		if (wc.status == IBV_WC_SUCCESS)
			check_wc(bind1(self, self->mr, WIN_ACCESS, 0, 0),
				 IBV_WC_SUCCESS, IBV_WC_BIND_MW);
		else
			qp_restart(self->p.b.qp, self->p.a.qp->qp_num);
		if (!r.ret) {
			r.to = self->p.b.buf;
			CHECK_EQ(ibv_rereg_mr(self->mr,
					      IBV_REREG_MR_CHANGE_TRANSLATION,
					      NULL, r.to, PAIR_BUF_LEN,
					      MR_ACCESS), 0);
		}
	}
	CHECK(!both, "%d of %d binds and reregs both succeeded", both,
	      iterations);
	check_wc(bind1(self, self->mr, WIN_ACCESS, 0, 4096), IBV_WC_SUCCESS,
		 IBV_WC_BIND_MW);
	write_lands(self, self->mw->rkey, b_addr(self, 0), 0, 4096);
	pthread_barrier_destroy(&r.start);
	free(other);
}

TEST_F(mw, wrong_type_refused)
{
	errno = 0;
	CHECK(!ibv_alloc_mw(self->p.b.pd, 3), "a window of type 3");
	CHECK(errno == EINVAL || errno == EOPNOTSUPP, "errno %d", errno);
}

TRANSPORT_HARNESS_MAIN
