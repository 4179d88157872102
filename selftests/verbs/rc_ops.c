// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * RC operations between two QPs of one softrma device: every opcode and
 * size with data checks, unaligned WRITE/READ with guard bytes, and the
 * errors: bad keys, bounds, rights, alignment, RNR, states, SQ overflow and
 * garbage in the shared send ring; a zero-based MR, UC, and a shared
 * receive queue.  One kselftest_harness.h case per behaviour, each run on
 * both transports: the fixture's variants "local" and "wire" (force_wire:
 * RoCEv2 packets through lo).
 *
 * usage: [SOFTRMA_DEV=softrma0] [SOFTRMA_IPV4=10.9.0.1] rc_ops [HARNESS OPTIONS]
 * (-h: -l lists the cases, -v wire runs one variant, -r rc.wire.uc_send one case)
 */
#include <fcntl.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#define BIG (16 << 20)
#define GUARD 64
#define PAIR_BUF_LEN (BIG + 2 * GUARD)
#include "pair.h"
#include "softrma.h"	/* the provider's QP, to reach the shared ring */
#include "transport.h"

/* Two pairs in one PD whose receivers, b1 and b2, share an SRQ. */
struct srq_pairs {
	struct ibv_pd *pd;
	struct ibv_srq *srq;
	struct side a1, a2, b1, b2;	/* a1 sends to b1, a2 to b2 */
};

/* What a case built: teardown destroys it. */
FIXTURE(rc) {
	struct pair p;		/* a and b, or a alone */
	struct srq_pairs s;
};

TRANSPORT_VARIANTS(rc);

FIXTURE_SETUP(rc)
{
	ctx = transport_open_device(&gid_index);
	if (!transport_set(variant->force_wire))
		SKIP(return, "%s: %s", FORCE_WIRE, strerror(errno));
}

static void srq_pairs_fini(struct srq_pairs *s)
{
	side_fini(&s->a1, 0);
	side_fini(&s->a2, 0);
	side_fini(&s->b1, 0);
	side_fini(&s->b2, 0);
	CHECK_EQ(ibv_destroy_srq(s->srq), 0);
	CHECK_EQ(ibv_dealloc_pd(s->pd), 0);
}

/*
 * The harness runs this after a case's body returned, not after a failed
 * check: that exit()s the case's process (test.h), which releases what the
 * case built.
 */
FIXTURE_TEARDOWN(rc)
{
	if (self->p.a.qp)
		side_fini(&self->p.a, 1);
	if (self->p.b.qp)
		side_fini(&self->p.b, 1);
	if (self->s.srq)
		srq_pairs_fini(&self->s);
	CHECK_EQ(ibv_close_device(ctx), 0);
	transport_put_back();
}

static const uint32_t sizes[] = { 0, 1, 63, 64, 4095, 4096, 4097, 65536,
				  (1 << 20) + 3, BIG };

/*
 * @opcode from a to b at @len bytes, over up to 3 SGEs into a receive of up
 * to 4: the data arrives, and so do the receive's completion and immediate.
 */
static void check_op_at(struct pair *p, enum ibv_wr_opcode opcode, uint32_t len)
{
	struct ibv_sge sge[16], rsge[16];
	struct ibv_recv_wr rwr = { .wr_id = 2, .sg_list = rsge }, *rbad;
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = sge };
	char *src = p->a.buf + GUARD, *dst = p->b.buf + GUARD;
	int read = opcode == IBV_WR_RDMA_READ;
	int recv = opcode != IBV_WR_RDMA_WRITE && !read;
	struct ibv_wc wc;

	fill(read ? dst : src, len, len + opcode);
	memset(read ? src : dst, 0, len);
	wr.opcode = opcode;
	wr.num_sge = split_sges(sge, 3, src, len, p->a.mr);
	wr.imm_data = htonl(0x1234 + opcode);
	wr.wr.rdma.remote_addr = (uintptr_t)dst;
	wr.wr.rdma.rkey = p->b.mr->rkey;
	if (recv) {
		rwr.num_sge = split_sges(rsge, 4, dst, len, p->b.mr);
		CHECK_EQ(ibv_post_recv(p->b.qp, &rwr, &rbad), 0);
	}
	wc = post_wait(&p->a, &wr);
	if (wc.status != IBV_WC_SUCCESS)
		FAIL("op %d len %u: %s", opcode, len, ibv_wc_status_str(wc.status));
	CHECK_EQ(wc.byte_len, len);
	CHECK(!memcmp(src, dst, len), "op %d len %u: data differs", opcode, len);
	if (recv) {
		wc = test_poll_one(p->b.cq, 5);
		CHECK_EQ(wc.status, IBV_WC_SUCCESS);
		CHECK_EQ(wc.wr_id, 2);
		CHECK_EQ(wc.byte_len, len);
		CHECK_EQ(wc.src_qp, p->a.qp->qp_num);
		if (opcode != IBV_WR_SEND) {
			CHECK(wc.wc_flags & IBV_WC_WITH_IMM, "no imm");
			CHECK_EQ(ntohl(wc.imm_data), 0x1234 + opcode);
		}
		CHECK_EQ(wc.opcode, opcode == IBV_WR_RDMA_WRITE_WITH_IMM ?
			 IBV_WC_RECV_RDMA_WITH_IMM : IBV_WC_RECV);
	}
}

/* @opcode at every size in sizes[], one after the other on one pair. */
static void check_every_size(struct pair *p, enum ibv_wr_opcode opcode)
{
	pair_init(p, ALL_ACCESS, 7);
	for (size_t i = 0; i < ARRAY_SIZE(sizes); i++)
		check_op_at(p, opcode, sizes[i]);
}

TEST_F_TIMEOUT(rc, send_every_size, 60)
{
	check_every_size(&self->p, IBV_WR_SEND);
}

TEST_F_TIMEOUT(rc, send_with_imm_every_size, 60)
{
	check_every_size(&self->p, IBV_WR_SEND_WITH_IMM);
}

TEST_F_TIMEOUT(rc, write_every_size, 60)
{
	check_every_size(&self->p, IBV_WR_RDMA_WRITE);
}

TEST_F_TIMEOUT(rc, write_with_imm_every_size, 60)
{
	check_every_size(&self->p, IBV_WR_RDMA_WRITE_WITH_IMM);
}

TEST_F_TIMEOUT(rc, read_every_size, 60)
{
	check_every_size(&self->p, IBV_WR_RDMA_READ);
}

/* A WRITE of @len inline bytes (no MR) lands. */
static void check_write_inline(struct pair *p, uint32_t len)
{
	char msg[TEST_MAX_INLINE];
	struct ibv_sge sge = { (uintptr_t)msg, len, 0 };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_WRITE,
				  .send_flags = IBV_SEND_INLINE };

	pair_init(p, ALL_ACCESS, 7);
	fill(msg, len, len);
	wr.wr.rdma.remote_addr = (uintptr_t)p->b.buf + GUARD;
	wr.wr.rdma.rkey = p->b.mr->rkey;
	CHECK_EQ(post_wait(&p->a, &wr).status, IBV_WC_SUCCESS);
	CHECK(!memcmp(p->b.buf + GUARD, msg, len), "inline write");
}

TEST_F(rc, write_inline)
{
	check_write_inline(&self->p, 200);
}

TEST_F(rc, write_most_inline)
{
	check_write_inline(&self->p, TEST_MAX_INLINE);
}

/* A SEND gathered from the most SGEs, scattered into the most. */
TEST_F(rc, send_most_sges)
{
	struct ibv_sge sge[TEST_MAX_SGE], rsge[TEST_MAX_SGE];
	struct ibv_recv_wr rwr = { .sg_list = rsge }, *rbad;
	struct ibv_send_wr wr = { .sg_list = sge, .opcode = IBV_WR_SEND };
	struct pair *p = &self->p;
	uint32_t len = 100000;
	char *src, *dst;

	pair_init(p, ALL_ACCESS, 7);
	src = p->a.buf + GUARD;
	dst = p->b.buf + GUARD;
	fill(src, len, 5);
	wr.num_sge = split_sges(sge, TEST_MAX_SGE, src, len, p->a.mr);
	rwr.num_sge = split_sges(rsge, TEST_MAX_SGE, dst, len, p->b.mr);
	CHECK_EQ(wr.num_sge, TEST_MAX_SGE);
	CHECK_EQ(rwr.num_sge, TEST_MAX_SGE);
	CHECK_EQ(ibv_post_recv(p->b.qp, &rwr, &rbad), 0);
	CHECK_EQ(post_wait(&p->a, &wr).status, IBV_WC_SUCCESS);
	CHECK_EQ(test_poll_one(p->b.cq, 5).byte_len, len);
	CHECK(!memcmp(src, dst, len), "data differs");
}

/* What query_device advertises holds, and one more is refused. */
TEST_F(rc, caps_past_the_limits_refused)
{
	struct ibv_device_attr attr;
	struct ibv_qp_init_attr init = { .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_srq_init_attr srq_init = {
		.attr = { .max_wr = 1, .max_sge = TEST_MAX_SGE + 1 } };
	struct ibv_qp_init_attr bad;

	CHECK_EQ(ibv_query_device(ctx, &attr), 0);
	CHECK_EQ(attr.max_sge, TEST_MAX_SGE);
	CHECK_EQ(attr.max_sge_rd, TEST_MAX_SGE);
	CHECK_EQ(attr.max_srq_sge, TEST_MAX_SGE);
	side_init(&self->p.a, NULL, ALL_ACCESS, NULL);
	init.send_cq = init.recv_cq = self->p.a.cq;
	bad = init;
	bad.cap.max_send_sge = TEST_MAX_SGE + 1;
	CHECK(!ibv_create_qp(self->p.a.pd, &bad), "%d send SGEs", TEST_MAX_SGE + 1);
	bad = init;
	bad.cap.max_recv_sge = TEST_MAX_SGE + 1;
	CHECK(!ibv_create_qp(self->p.a.pd, &bad), "%d recv SGEs", TEST_MAX_SGE + 1);
	bad = init;
	bad.cap.max_inline_data = TEST_MAX_INLINE + 1;
	CHECK(!ibv_create_qp(self->p.a.pd, &bad), "%d inline bytes",
	      TEST_MAX_INLINE + 1);
	CHECK(!ibv_create_srq(self->p.a.pd, &srq_init), "%d SRQ SGEs",
	      TEST_MAX_SGE + 1);
}

/*
 * An atomic WR of @opcode on b's 8 bytes after the guard; the old value
 * lands in a's first 8.
 */
static struct ibv_send_wr atomic_wr(struct pair *p, struct ibv_sge *sge,
				    enum ibv_wr_opcode opcode)
{
	struct ibv_send_wr wr = { .sg_list = sge, .num_sge = 1, .opcode = opcode };

	*sge = (struct ibv_sge) { (uintptr_t)p->a.buf, 8, p->a.mr->lkey };
	wr.wr.atomic.remote_addr = (uintptr_t)p->b.buf + GUARD;
	wr.wr.atomic.rkey = p->b.mr->rkey;
	return wr;
}

TEST_F(rc, fetch_and_add)
{
	struct pair *p = &self->p;
	uint64_t *target, *result;
	struct ibv_send_wr wr;
	struct ibv_sge sge;

	pair_init(p, ALL_ACCESS, 7);
	target = (uint64_t *)(p->b.buf + GUARD);
	result = (uint64_t *)p->a.buf;
	*target = 40;
	wr = atomic_wr(p, &sge, IBV_WR_ATOMIC_FETCH_AND_ADD);
	wr.wr.atomic.compare_add = 2;
	CHECK_EQ(post_wait(&p->a, &wr).status, IBV_WC_SUCCESS);
	CHECK_EQ(*result, 40);
	CHECK_EQ(*target, 42);
}

TEST_F(rc, compare_and_swap)
{
	struct pair *p = &self->p;
	uint64_t *target, *result;
	struct ibv_send_wr wr;
	struct ibv_sge sge;

	pair_init(p, ALL_ACCESS, 7);
	target = (uint64_t *)(p->b.buf + GUARD);
	result = (uint64_t *)p->a.buf;
	*target = 42;
	wr = atomic_wr(p, &sge, IBV_WR_ATOMIC_CMP_AND_SWP);
	wr.wr.atomic.compare_add = 41;	/* mismatch: no swap */
	wr.wr.atomic.swap = 7;
	CHECK_EQ(post_wait(&p->a, &wr).status, IBV_WC_SUCCESS);
	CHECK_EQ(*result, 42);
	CHECK_EQ(*target, 42);
	wr.wr.atomic.compare_add = 42;
	CHECK_EQ(post_wait(&p->a, &wr).status, IBV_WC_SUCCESS);
	CHECK_EQ(*target, 7);
}

/*
 * WRITE or READ at every offset 0..63 and length 1..130: exactly the
 * target range of the written side changes, not a byte around it.
 */
static void check_unaligned(struct pair *p, int read)
{
	struct ibv_sge sge;
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .opcode = read ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE };
	char want[512];
	int n = 0;

	pair_init(p, ALL_ACCESS, 7);
	for (int off = 0; off < 64; off++)
		for (uint32_t len = 1; len <= 130; len++) {
			char *local = p->a.buf + GUARD + (read ? off : (off * 5) % 64);
			char *remote = p->b.buf + GUARD + (read ? (off * 5) % 64 : off);
			char *src = read ? remote : local, *dst = read ? local : remote;
			char *dst_buf = read ? p->a.buf : p->b.buf;

			memset(p->a.buf, 0xa5, sizeof(want));
			memset(p->b.buf, 0x5a, sizeof(want));
			fill(src, len, off + len);
			memcpy(want, dst_buf, sizeof(want));
			memcpy(want + (dst - dst_buf), src, len);

			sge = (struct ibv_sge) { (uintptr_t)local, len, p->a.mr->lkey };
			wr.wr.rdma.remote_addr = (uintptr_t)remote;
			wr.wr.rdma.rkey = p->b.mr->rkey;
			CHECK_EQ(post_wait(&p->a, &wr).status, IBV_WC_SUCCESS);
			if (memcmp(dst_buf, want, sizeof(want)))
				FAIL("off %d len %u: wrong bytes at or around the target",
				     off, len);
			n++;
		}
	printf("# %d unaligned %s: head and tail exact\n", n, read ? "READs" : "WRITEs");
}

TEST_F_TIMEOUT(rc, write_unaligned, 120)
{
	check_unaligned(&self->p, 0);
}

TEST_F_TIMEOUT(rc, read_unaligned, 120)
{
	check_unaligned(&self->p, 1);
}

/* One WR that must fail, and how. */
struct bad_case {
	enum ibv_wr_opcode opcode;
	int b_access;		/* b's QP access flags (0: all rights) */
	int mr_access;		/* b's target MR (0: all rights) */
	int other_pd;		/* target MR in another PD */
	int dereg;		/* target MR deregistered first */
	int64_t offset;		/* remote address relative to the target MR */
	uint32_t len;
	int bad_lkey;
	uint32_t rkey_xor;
	enum ibv_wc_status want;
};

/*
 * Posts @c's WR on a fresh pair: it completes with @c->want, the target is
 * untouched, the QP is in error and flushes what is posted after.
 */
static void check_bad_case(struct pair *p, const struct bad_case *c)
{
	struct ibv_sge sge;
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = c->opcode };
	struct ibv_pd *pd2 = NULL;
	struct ibv_mr *tmr;
	char *target;
	struct ibv_wc wc;

	pair_init(p, c->b_access ? c->b_access : ALL_ACCESS, 7);
	target = p->b.buf + 4096;
	memset(p->b.buf, 0x77, PAIR_BUF_LEN);
	if (c->other_pd)
		pd2 = ibv_alloc_pd(ctx);
	tmr = ibv_reg_mr(pd2 ? pd2 : p->b.pd, target, 4096,
			 c->mr_access ? c->mr_access : ALL_ACCESS);
	CHECK(tmr, "reg target");
	wr.wr.rdma.remote_addr = (uintptr_t)target + c->offset;
	wr.wr.rdma.rkey = tmr->rkey ^ c->rkey_xor;
	wr.wr.atomic.remote_addr = wr.wr.rdma.remote_addr;
	wr.wr.atomic.rkey = wr.wr.rdma.rkey;
	if (c->dereg)
		CHECK_EQ(ibv_dereg_mr(tmr), 0);
	fill(p->a.buf, 8192, 3);
	sge = (struct ibv_sge) { (uintptr_t)p->a.buf, c->len,
				 p->a.mr->lkey ^ (c->bad_lkey ? 0x100 : 0) };

	wc = post_wait(&p->a, &wr);
	if (wc.status != c->want)
		FAIL("%s, want %s", ibv_wc_status_str(wc.status),
		     ibv_wc_status_str(c->want));
	for (size_t i = 0; i < PAIR_BUF_LEN; i++)
		if (p->b.buf[i] != 0x77)
			FAIL("target byte %zu written", i);
	CHECK_EQ(test_qp_state(p->a.qp), IBV_QPS_ERR);

	/* Everything posted afterwards is flushed. */
	wr.opcode = IBV_WR_RDMA_WRITE;
	sge.lkey = p->a.mr->lkey;
	CHECK_EQ(post_wait(&p->a, &wr).status, IBV_WC_WR_FLUSH_ERR);
	if (!c->dereg)
		CHECK_EQ(ibv_dereg_mr(tmr), 0);
	if (pd2)
		CHECK_EQ(ibv_dealloc_pd(pd2), 0);
}

/* A case of one bad work request: its name and what check_bad_case() is given. */
#define BAD_CASE(name, ...)						\
	TEST_F(rc, name)						\
	{								\
		check_bad_case(&self->p, &(struct bad_case) { __VA_ARGS__ }); \
	}

BAD_CASE(write_wrong_rkey, .opcode = IBV_WR_RDMA_WRITE, .len = 64,
	 .rkey_xor = 0x1, .want = IBV_WC_REM_ACCESS_ERR)
BAD_CASE(write_rkey_of_deregistered_mr, .opcode = IBV_WR_RDMA_WRITE, .len = 64,
	 .dereg = 1, .want = IBV_WC_REM_ACCESS_ERR)
BAD_CASE(write_mr_of_other_pd, .opcode = IBV_WR_RDMA_WRITE, .len = 64,
	 .other_pd = 1, .want = IBV_WC_REM_ACCESS_ERR)
BAD_CASE(write_one_byte_past_mr, .opcode = IBV_WR_RDMA_WRITE, .len = 64,
	 .offset = 4096 - 63, .want = IBV_WC_REM_ACCESS_ERR)
BAD_CASE(write_one_byte_before_mr, .opcode = IBV_WR_RDMA_WRITE, .len = 64,
	 .offset = -1, .want = IBV_WC_REM_ACCESS_ERR)
BAD_CASE(write_4097_bytes_before_mr, .opcode = IBV_WR_RDMA_WRITE, .len = 64,
	 .offset = -4097, .want = IBV_WC_REM_ACCESS_ERR)
BAD_CASE(read_past_mr, .opcode = IBV_WR_RDMA_READ, .len = 4097,
	 .want = IBV_WC_REM_ACCESS_ERR)
BAD_CASE(write_mr_without_remote_write, .opcode = IBV_WR_RDMA_WRITE, .len = 64,
	 .mr_access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ,
	 .want = IBV_WC_REM_ACCESS_ERR)
BAD_CASE(read_mr_without_remote_read, .opcode = IBV_WR_RDMA_READ, .len = 64,
	 .mr_access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE,
	 .want = IBV_WC_REM_ACCESS_ERR)
BAD_CASE(atomic_mr_without_remote_atomic, .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
	 .len = 8, .mr_access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE,
	 .want = IBV_WC_REM_ACCESS_ERR)
BAD_CASE(write_qp_without_remote_write, .opcode = IBV_WR_RDMA_WRITE, .len = 64,
	 .b_access = IBV_ACCESS_REMOTE_READ, .want = IBV_WC_REM_INV_REQ_ERR)
BAD_CASE(atomic_unaligned, .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD, .len = 8,
	 .offset = 4, .want = IBV_WC_REM_INV_REQ_ERR)
BAD_CASE(atomic_of_4_bytes, .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD, .len = 4,
	 .want = IBV_WC_LOC_LEN_ERR)
BAD_CASE(write_bad_lkey, .opcode = IBV_WR_RDMA_WRITE, .len = 64, .bad_lkey = 1,
	 .want = IBV_WC_LOC_PROT_ERR)

/*
 * A zero-based MR (ibv_reg_mr_iova with iova 0): remote addresses count from
 * 0, and its bounds hold.
 */
TEST_F(rc, zero_based_mr)
{
	struct pair *p = &self->p;
	struct ibv_sge sge;
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_WRITE };
	struct ibv_mr *zmr;
	char *base;

	pair_init(p, ALL_ACCESS, 0);
	/* The core wants the address and iova at the same offset in a page. */
	base = (char *)(((uintptr_t)p->b.buf + 4095) & ~4095UL);
	zmr = ibv_reg_mr_iova(p->b.pd, base, 8192, 0, ALL_ACCESS);
	CHECK(zmr, "reg_mr_iova: %s", strerror(errno));
	fill(p->a.buf, 100, 7);
	sge = (struct ibv_sge) { (uintptr_t)p->a.buf, 100, p->a.mr->lkey };
	wr.wr.rdma.remote_addr = 8000;
	wr.wr.rdma.rkey = zmr->rkey;
	CHECK_EQ(post_wait(&p->a, &wr).status, IBV_WC_SUCCESS);
	CHECK(!memcmp(base + 8000, p->a.buf, 100), "zero-based WRITE data");
	CHECK_EQ(base[7999], 0);

	wr.wr.rdma.remote_addr = 8100;			/* 8100 + 100 > 8192 */
	CHECK_EQ(post_wait(&p->a, &wr).status, IBV_WC_REM_ACCESS_ERR);
	CHECK_EQ(base[8100], 0);
	CHECK_EQ(ibv_dereg_mr(zmr), 0);
}

/* A WRITE of 100 bytes from a to @dst through @rkey: its completion. */
static struct ibv_wc write_100(struct pair *p, char *dst, uint32_t rkey)
{
	struct ibv_sge sge = { (uintptr_t)p->a.buf, 100, p->a.mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_WRITE };

	fill(p->a.buf, 100, 7);
	wr.wr.rdma.remote_addr = (uintptr_t)dst;
	wr.wr.rdma.rkey = rkey;
	return post_wait(&p->a, &wr);
}

/*
 * ibv_rereg_mr of the translation: b's MR covers other memory (a page in
 * the middle of its buffer) under the keys it reports; WRITEs land there,
 * and the memory it covered before is no longer reached.
 */
TEST_F(rc, rereg_mr_translation)
{
	struct pair *p = &self->p;
	char *page;

	pair_init(p, ALL_ACCESS, 7);
	page = (char *)(((uintptr_t)p->b.buf + PAIR_BUF_LEN / 2) & ~4095UL);
	CHECK_EQ(ibv_rereg_mr(p->b.mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL,
			      page, 4096, 0), 0);
	CHECK_EQ(write_100(p, page + 3996, p->b.mr->rkey).status, IBV_WC_SUCCESS);
	CHECK(!memcmp(page + 3996, p->a.buf, 100), "WRITE data");
	CHECK_EQ(page[3995], 0);
	CHECK_EQ(write_100(p, p->b.buf, p->b.mr->rkey).status,
		 IBV_WC_REM_ACCESS_ERR);
	CHECK_EQ(p->b.buf[0], 0);
}

/*
 * ibv_rereg_mr changes an MR in place, as hardware does: its keys stay
 * (pyverbs' test_mr_rereg_access counts on it), whatever changes.
 */
TEST_F(rc, rereg_mr_keeps_keys)
{
	struct pair *p = &self->p;
	uint32_t lkey, rkey;
	char *page;

	pair_init(p, ALL_ACCESS, 7);
	lkey = p->b.mr->lkey;
	rkey = p->b.mr->rkey;
	CHECK_EQ(ibv_rereg_mr(p->b.mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			      ALL_ACCESS & ~IBV_ACCESS_REMOTE_ATOMIC), 0);
	page = (char *)(((uintptr_t)p->b.buf + PAIR_BUF_LEN / 2) & ~4095UL);
	CHECK_EQ(ibv_rereg_mr(p->b.mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL,
			      page, 4096, 0), 0);
	CHECK_EQ(p->b.mr->lkey, lkey);
	CHECK_EQ(p->b.mr->rkey, rkey);
	CHECK_EQ(write_100(p, page, rkey).status, IBV_WC_SUCCESS);
	CHECK(!memcmp(page, p->a.buf, 100), "WRITE data");
}

/* ibv_rereg_mr of the rights: a WRITE the MR no longer grants is refused. */
TEST_F(rc, rereg_mr_access)
{
	struct pair *p = &self->p;

	pair_init(p, ALL_ACCESS, 7);
	CHECK_EQ(write_100(p, p->b.buf, p->b.mr->rkey).status, IBV_WC_SUCCESS);
	memset(p->b.buf, 0, 100);
	CHECK_EQ(ibv_rereg_mr(p->b.mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ), 0);
	CHECK_EQ(write_100(p, p->b.buf, p->b.mr->rkey).status,
		 IBV_WC_REM_ACCESS_ERR);
	CHECK_EQ(p->b.buf[0], 0);
}

/* A SEND of 100 bytes from a into @buf through @lkey of b: b's completion. */
static struct ibv_wc send_100_into(struct pair *p, char *buf, uint32_t lkey)
{
	struct ibv_sge sge = { (uintptr_t)p->a.buf, 100, p->a.mr->lkey };
	struct ibv_sge rsge = { (uintptr_t)buf, 100, lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND };
	struct ibv_recv_wr rwr = { .sg_list = &rsge, .num_sge = 1 }, *rbad;

	memset(p->a.buf, 'B', 100);
	CHECK_EQ(ibv_post_recv(p->b.qp, &rwr, &rbad), 0);
	post_wait(&p->a, &wr);
	return test_poll_one(p->b.cq, 5);
}

/*
 * ibv_rereg_mr never grants writes on pages pinned for reading only: an MR
 * over a read-only MAP_SHARED file mapping, registered without rights, is
 * refused LOCAL_WRITE (pinning the pages for writing fails), keeps what it
 * had, and the file never changes.
 */
TEST_F(rc, rereg_mr_access_read_only_pin)
{
	char path[] = "/tmp/rc_ops_ro.XXXXXX", *ro;
	struct pair *p = &self->p;
	struct ibv_mr *mr;
	int fd, rereg;

	pair_init(p, ALL_ACCESS, 0);
	fd = mkstemp(path);
	CHECK(fd >= 0 && ftruncate(fd, 4096) == 0, "file");
	CHECK_EQ(pwrite(fd, "AAAA", 4, 0), 4);
	close(fd);
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0, "open");
	ro = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	CHECK(ro != MAP_FAILED, "mmap");
	mr = ibv_reg_mr(p->b.pd, ro, 4096, 0);
	/* 6.1's ib_umem_get() pins with FOLL_WRITE | FOLL_FORCE for reading. */
	if (!mr && errno == EFAULT) {
		TH_LOG("6.1: a read-only shared mapping is not registered at all");
		goto out;
	}
	CHECK(mr, "reg_mr of a read-only mapping: %s", strerror(errno));
	rereg = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			     IBV_ACCESS_LOCAL_WRITE);
	if (!rereg)
		send_100_into(p, ro, mr->lkey);
	CHECK(!memcmp(ro, "AAAA", 4), "the device wrote into a read-only file");
	CHECK(rereg, "LOCAL_WRITE granted on a read-only pin");
	CHECK_EQ(send_100_into(p, ro, mr->lkey).status, IBV_WC_LOC_PROT_ERR);
	CHECK(!memcmp(ro, "AAAA", 4), "the device wrote into a read-only file");
	CHECK_EQ(ibv_dereg_mr(mr), 0);
out:
	munmap(ro, 4096);
	close(fd);
	unlink(path);
}

/* ... and an MR of writable memory registered without rights gets them. */
TEST_F(rc, rereg_mr_access_pins_again)
{
	struct pair *p = &self->p;
	struct ibv_mr *mr;
	char *page;

	pair_init(p, ALL_ACCESS, 0);
	page = (char *)(((uintptr_t)p->b.buf + 4095) & ~4095UL);
	mr = ibv_reg_mr(p->b.pd, page, 4096, 0);
	CHECK(mr, "reg_mr: %s", strerror(errno));
	CHECK_EQ(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			      IBV_ACCESS_LOCAL_WRITE), 0);
	CHECK_EQ(send_100_into(p, page, mr->lkey).status, IBV_WC_SUCCESS);
	CHECK(!memcmp(page, p->a.buf, 100), "SEND data");
	CHECK_EQ(ibv_dereg_mr(mr), 0);
}

/*
 * ibv_rereg_mr of the PD: the MR leaves b's PD, so a's WRITE to b is
 * refused; moved back, the MR is b's to deregister.
 */
TEST_F(rc, rereg_mr_pd)
{
	struct pair *p = &self->p;
	struct ibv_pd *pd2;

	pair_init(p, ALL_ACCESS, 7);
	pd2 = ibv_alloc_pd(ctx);
	CHECK(pd2, "alloc_pd");
	CHECK_EQ(ibv_rereg_mr(p->b.mr, IBV_REREG_MR_CHANGE_PD, pd2, NULL, 0, 0), 0);
	CHECK_EQ(write_100(p, p->b.buf, p->b.mr->rkey).status,
		 IBV_WC_REM_ACCESS_ERR);
	CHECK_EQ(p->b.buf[0], 0);
	CHECK(ibv_dealloc_pd(pd2) != 0, "a PD with an MR deallocated");
	CHECK_EQ(ibv_rereg_mr(p->b.mr, IBV_REREG_MR_CHANGE_PD, p->b.pd, NULL, 0, 0), 0);
	CHECK_EQ(ibv_dealloc_pd(pd2), 0);
}

/*
 * UC: SEND and WRITE carry data; nothing is acknowledged, so a WRITE with a
 * bad rkey or a SEND without a receive completes at the sender, is dropped
 * at the target, and both QPs carry on.  READ and atomics are refused.
 * The SEND and WRITE WRs here take a's first 4096 bytes.
 */
static void uc_pair_init(struct pair *p, struct ibv_sge *sge)
{
	side_init_type(&p->a, NULL, IBV_QPT_UC, ALL_ACCESS, NULL);
	side_init_type(&p->b, NULL, IBV_QPT_UC, ALL_ACCESS, NULL);
	connect_qp(p->a.qp, p->b.qp->qp_num, 0);
	connect_qp(p->b.qp, p->a.qp->qp_num, 0);
	fill(p->a.buf, 4096, 3);
	*sge = (struct ibv_sge) { (uintptr_t)p->a.buf, 4096, p->a.mr->lkey };
}

/*
 * A UC completion says sent, not arrived: a good WRITE to the start of b's
 * buffer, sent after what is dropped and awaited, shows that was handled.
 */
static void uc_write_arrives(struct pair *p, struct ibv_send_wr *wr)
{
	wr->opcode = IBV_WR_RDMA_WRITE;
	wr->wr.rdma.remote_addr = (uintptr_t)p->b.buf;
	wr->wr.rdma.rkey = p->b.mr->rkey;
	CHECK_EQ(post_wait(&p->a, wr).status, IBV_WC_SUCCESS);
	CHECK(wait_data(p->b.buf, p->a.buf, 4096), "UC WRITE data");
	CHECK_EQ(test_qp_state(p->a.qp), IBV_QPS_RTS);
	CHECK_EQ(test_qp_state(p->b.qp), IBV_QPS_RTS);
}

/* A SEND into a receive at 8192 in b's buffer. */
static void uc_send_arrives(struct pair *p, struct ibv_send_wr *wr)
{
	struct ibv_sge rsge = { (uintptr_t)p->b.buf + 8192, 4096, p->b.mr->lkey };
	struct ibv_recv_wr rwr = { .wr_id = 9, .sg_list = &rsge, .num_sge = 1 }, *rbad;
	struct ibv_wc wc;

	CHECK_EQ(ibv_post_recv(p->b.qp, &rwr, &rbad), 0);
	wr->opcode = IBV_WR_SEND;
	CHECK_EQ(post_wait(&p->a, wr).status, IBV_WC_SUCCESS);
	wc = test_poll_one(p->b.cq, 5);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(wc.wr_id, 9);
	CHECK(!memcmp(p->b.buf + 8192, p->a.buf, 4096), "UC SEND data");
}

TEST_F(rc, uc_write)
{
	struct ibv_sge sge;
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1 };

	uc_pair_init(&self->p, &sge);
	uc_write_arrives(&self->p, &wr);
}

TEST_F(rc, uc_send)
{
	struct ibv_sge sge;
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1 };

	uc_pair_init(&self->p, &sge);
	uc_send_arrives(&self->p, &wr);
}

TEST_F(rc, uc_write_bad_rkey_dropped)
{
	struct pair *p = &self->p;
	struct ibv_sge sge;
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_WRITE };

	uc_pair_init(p, &sge);
	wr.wr.rdma.remote_addr = (uintptr_t)p->b.buf + 16384;
	wr.wr.rdma.rkey = p->b.mr->rkey ^ 0x80;
	CHECK_EQ(post_wait(&p->a, &wr).status, IBV_WC_SUCCESS);
	uc_write_arrives(p, &wr);
	for (int i = 16384; i < 16384 + 4096; i++)
		CHECK_EQ(p->b.buf[i], 0);
}

TEST_F(rc, uc_send_without_receive_dropped)
{
	struct pair *p = &self->p;
	struct ibv_sge sge;
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND };

	uc_pair_init(p, &sge);
	CHECK_EQ(post_wait(&p->a, &wr).status, IBV_WC_SUCCESS);
	uc_write_arrives(p, &wr);
	uc_send_arrives(p, &wr);
}

TEST_F(rc, uc_read_refused)
{
	struct ibv_sge sge;
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_READ }, *bad;

	uc_pair_init(&self->p, &sge);
	CHECK_EQ(ibv_post_send(self->p.a.qp, &wr, &bad), EINVAL);
}

TEST_F(rc, uc_atomic_refused)
{
	struct ibv_sge sge;
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD }, *bad;

	uc_pair_init(&self->p, &sge);
	CHECK_EQ(ibv_post_send(self->p.a.qp, &wr, &bad), EINVAL);
}

/* A signaled SEND of @len bytes from the start of a's buffer. */
static struct ibv_send_wr send_wr(struct side *a, struct ibv_sge *sge, uint32_t len)
{
	*sge = (struct ibv_sge) { (uintptr_t)a->buf, len, a->mr->lkey };
	return (struct ibv_send_wr) { .sg_list = sge, .num_sge = 1,
				      .opcode = IBV_WR_SEND,
				      .send_flags = IBV_SEND_SIGNALED };
}

TEST_F(rc, rnr_retry_exhausted)
{
	struct pair *p = &self->p;
	struct ibv_send_wr wr;
	struct ibv_sge sge;

	pair_init(p, ALL_ACCESS, 0);
	wr = send_wr(&p->a, &sge, 64);
	CHECK_EQ(post_wait(&p->a, &wr).status, IBV_WC_RNR_RETRY_EXC_ERR);
	CHECK_EQ(test_qp_state(p->a.qp), IBV_QPS_ERR);
}

/* rnr_retry 3, the receive posted while the SEND waits out RNR NAKs. */
TEST_F(rc, rnr_retry_then_receive)
{
	struct pair *p = &self->p;
	struct ibv_sge sge, rsge;
	struct ibv_recv_wr rwr = { .sg_list = &rsge, .num_sge = 1 }, *rbad;
	struct ibv_send_wr wr, *bad;
	struct ibv_wc wc;

	pair_init(p, ALL_ACCESS, 3);
	wr = send_wr(&p->a, &sge, 64);
	CHECK_EQ(ibv_post_send(p->a.qp, &wr, &bad), 0);
	usleep(100);
	rsge = (struct ibv_sge) { (uintptr_t)p->b.buf, 64, p->b.mr->lkey };
	CHECK_EQ(ibv_post_recv(p->b.qp, &rwr, &rbad), 0);
	wc = test_poll_one(p->a.cq, 5);
	if (wc.status != IBV_WC_SUCCESS && wc.status != IBV_WC_RNR_RETRY_EXC_ERR)
		FAIL("RNR retry: %s", ibv_wc_status_str(wc.status));
	printf("# SEND before the receive: %s\n", ibv_wc_status_str(wc.status));
}

TEST_F(rc, send_longer_than_receive)
{
	struct pair *p = &self->p;
	struct ibv_sge sge, rsge;
	struct ibv_recv_wr rwr = { .sg_list = &rsge, .num_sge = 1 }, *rbad;
	struct ibv_send_wr wr;

	pair_init(p, ALL_ACCESS, 7);
	rsge = (struct ibv_sge) { (uintptr_t)p->b.buf, 16, p->b.mr->lkey };
	memset(p->b.buf, 0x77, 64);
	CHECK_EQ(ibv_post_recv(p->b.qp, &rwr, &rbad), 0);
	wr = send_wr(&p->a, &sge, 64);
	CHECK_EQ(post_wait(&p->a, &wr).status, IBV_WC_REM_INV_REQ_ERR);
	CHECK_EQ(test_poll_one(p->b.cq, 5).status, IBV_WC_LOC_LEN_ERR);
	for (int i = 0; i < 64; i++)
		CHECK(p->b.buf[i] == 0x77, "short receive buffer written");
}

TEST_F(rc, post_send_in_reset)
{
	struct side *a = &self->p.a;
	struct ibv_qp_init_attr init = { .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1,
			 .max_recv_sge = 1 } };
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;
	struct ibv_qp *qp;

	side_init(a, NULL, ALL_ACCESS, NULL);
	init.send_cq = init.recv_cq = a->cq;
	qp = ibv_create_qp(a->pd, &init);
	CHECK(qp, "create_qp");
	wr = send_wr(a, &sge, 8);
	CHECK_EQ(ibv_post_send(qp, &wr, &bad), EINVAL);
	CHECK(bad == &wr, "bad_wr");
	CHECK_EQ(ibv_destroy_qp(qp), 0);
}

TEST_F(rc, post_send_in_init)
{
	struct side *a = &self->p.a;
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;

	side_init(a, NULL, ALL_ACCESS, NULL);
	wr = send_wr(a, &sge, 8);
	CHECK_EQ(ibv_post_send(a->qp, &wr, &bad), EINVAL);
}

/* The completions @cq holds, none taken (the provider's ring). */
static uint32_t cq_held(struct ibv_cq *cq)
{
	struct softrma_ring *ring = &to_scq(cq)->ring;

	return softrma_ring_load(&ring->hdr->producer) - ring->index;
}

/* Waits up to 5 s (test_bound) until @cq holds @n completions. */
static void wait_held(struct ibv_cq *cq, uint32_t n)
{
	for (int ms = 0; cq_held(cq) < n && ms < test_bound(5) * 1000; ms++)
		usleep(1000);
	CHECK_EQ(cq_held(cq), n);
}

/* A receive of @len bytes at @off in @s's buffer. */
static void post_recv_at(struct side *s, uint64_t wr_id, uint32_t off,
			 uint32_t len)
{
	struct ibv_sge sge = { (uintptr_t)s->buf + off, len, s->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	CHECK_EQ(ibv_post_recv(s->qp, &wr, &bad), 0);
}

/* RESET, then INIT to RTS again, connected to QP @dest. */
static void restart_qp(struct ibv_qp *qp, uint32_t dest)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_RESET };

	CHECK_EQ(ibv_modify_qp(qp, &attr, IBV_QP_STATE), 0);
	attr = (struct ibv_qp_attr) { .qp_state = IBV_QPS_INIT, .port_num = 1,
				      .qp_access_flags = ALL_ACCESS };
	CHECK_EQ(ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			       IBV_QP_PORT | IBV_QP_ACCESS_FLAGS), 0);
	connect_qp(qp, dest, 0);
}

/*
 * A QP that goes to RESET takes its completions out of its CQs, as mlx5's
 * do and as rdma-core's test_mr expects: a's SEND fails into a receive of
 * b whose MR left b's PD, which leaves b's failed receive and a's flushed
 * one unpolled.  Both QPs go through RESET to RTS again, and what each
 * polls next is the next SEND's completion.
 */
TEST_F(rc, reset_drops_completions)
{
	struct pair *p = &self->p;
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct ibv_pd *pd2;
	struct ibv_wc wc;

	pair_init(p, ALL_ACCESS, 0);
	pd2 = ibv_alloc_pd(ctx);
	CHECK(pd2, "alloc_pd");
	post_recv_at(&p->a, 0xa1, 0, 64);
	post_recv_at(&p->b, 0xb1, 0, 64);
	CHECK_EQ(ibv_rereg_mr(p->b.mr, IBV_REREG_MR_CHANGE_PD, pd2, NULL, 0, 0), 0);
	wr = send_wr(&p->a, &sge, 64);
	wr.wr_id = 0xa2;
	CHECK_EQ(post_wait(&p->a, &wr).status, IBV_WC_REM_OP_ERR);
	wait_held(p->a.cq, 1);		/* a's receive, flushed */
	wait_held(p->b.cq, 1);		/* b's receive, failed */
	CHECK_EQ(ibv_rereg_mr(p->b.mr, IBV_REREG_MR_CHANGE_PD, p->b.pd, NULL, 0, 0), 0);
	CHECK_EQ(ibv_dealloc_pd(pd2), 0);

	restart_qp(p->a.qp, p->b.qp->qp_num);
	restart_qp(p->b.qp, p->a.qp->qp_num);
	post_recv_at(&p->b, 0xb2, 0, 64);
	wr.wr_id = 0xa3;
	wc = post_wait(&p->a, &wr);
	CHECK(wc.wr_id == 0xa3 && wc.status == IBV_WC_SUCCESS,
	      "a polled wr_id %#llx: %s", (unsigned long long)wc.wr_id,
	      ibv_wc_status_str(wc.status));
	wc = test_poll_one(p->b.cq, 5);
	CHECK(wc.wr_id == 0xb2 && wc.status == IBV_WC_SUCCESS,
	      "b polled wr_id %#llx: %s", (unsigned long long)wc.wr_id,
	      ibv_wc_status_str(wc.status));
	CHECK_EQ(cq_held(p->a.cq), 0);
	CHECK_EQ(cq_held(p->b.cq), 0);
}

/*
 * ... and only its own: a and b on one CQ of 8 entries, whose ring has
 * moved 4 entries on so that the 6 it holds wrap around its end.  a's
 * RESET leaves b's 3 receives, in the order they completed.
 */
TEST_F(rc, reset_keeps_other_qps_completions)
{
	struct pair *p = &self->p;
	struct side a, b;
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct ibv_wc wc;

	pair_init(p, ALL_ACCESS, 0);
	a = (struct side) { .pd = p->a.pd, .buf = p->a.buf, .mr = p->a.mr };
	a.cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	CHECK(a.cq, "create_cq: %s", strerror(errno));
	a.qp = test_create_qp(a.pd, a.cq, NULL, IBV_QPT_RC, ALL_ACCESS);
	b = a;
	b.qp = test_create_qp(b.pd, b.cq, NULL, IBV_QPT_RC, ALL_ACCESS);
	connect_qp(a.qp, b.qp->qp_num, 0);
	connect_qp(b.qp, a.qp->qp_num, 0);
	wr = send_wr(&a, &sge, 64);
	for (int i = 0; i < 5; i++) {
		post_recv_at(&b, 0xb0 + i, 4096, 64);
		wr.wr_id = 0xa0 + i;
		if (i < 2) {		/* polled: the ring moves on */
			post_wait(&a, &wr);
			test_poll_one(b.cq, 5);
		} else {
			struct ibv_send_wr *bad;

			CHECK_EQ(ibv_post_send(a.qp, &wr, &bad), 0);
		}
	}
	wait_held(a.cq, 6);
	restart_qp(a.qp, b.qp->qp_num);
	for (int i = 2; i < 5; i++) {
		wc = test_poll_one(b.cq, 5);
		CHECK(wc.qp_num == b.qp->qp_num && wc.wr_id == 0xb0U + i &&
		      wc.status == IBV_WC_SUCCESS,
		      "polled QP %u wr_id %#llx: %s", wc.qp_num,
		      (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status));
	}
	CHECK_EQ(ibv_poll_cq(a.cq, 1, &wc), 0);
	CHECK_EQ(ibv_destroy_qp(a.qp), 0);
	CHECK_EQ(ibv_destroy_qp(b.qp), 0);
	CHECK_EQ(ibv_destroy_cq(a.cq), 0);
}

/* local_ack_timeout_err, read once the counters' 10 ms cache has gone. */
static unsigned long long ack_timeouts(void)
{
	usleep(20000);
	return test_port_counter(ctx, "local_ack_timeout_err");
}

/*
 * Nobody there: on either transport the request is lost, sent again after
 * each of retry_cnt (7) ACK timeouts and then completes with RETRY_EXC_ERR:
 * eight timeouts, counted, not timed.
 */
TEST_F(rc, no_peer_retry_exhausted)
{
	struct side *a = &self->p.a;
	unsigned long long timeouts;
	struct ibv_send_wr wr;
	struct ibv_sge sge;

	side_init(a, NULL, ALL_ACCESS, NULL);
	connect_qp(a->qp, 0xffffff, 7);	/* nobody there */
	wr = send_wr(a, &sge, 8);
	timeouts = ack_timeouts();
	CHECK_EQ(post_wait(a, &wr).status, IBV_WC_RETRY_EXC_ERR);
	CHECK_EQ(ack_timeouts() - timeouts, 8);
}

/*
 * B is still in INIT when A's SEND reaches it: the request is lost, as a
 * packet would be, and A sends it again after its ACK timeout.  B is
 * connected after the first timeout: the SEND lands, once.
 */
TEST_F(rc, peer_not_ready_then_rtr)
{
	struct pair *p = &self->p;
	struct ibv_sge sge, rsge;
	struct ibv_recv_wr rwr = { .wr_id = 0xb, .sg_list = &rsge, .num_sge = 1 }, *rbad;
	struct ibv_send_wr wr, *bad;
	unsigned long long timeouts;
	struct ibv_wc wc;
	int waited = 0;

	side_init(&p->a, NULL, ALL_ACCESS, NULL);
	side_init(&p->b, NULL, ALL_ACCESS, NULL);
	connect_qp(p->a.qp, p->b.qp->qp_num, 7);
	rsge = (struct ibv_sge) { (uintptr_t)p->b.buf, 4096, p->b.mr->lkey };
	CHECK_EQ(ibv_post_recv(p->b.qp, &rwr, &rbad), 0);
	fill(p->a.buf, 4096, 0x5e);
	wr = send_wr(&p->a, &sge, 4096);
	timeouts = ack_timeouts();
	CHECK_EQ(ibv_post_send(p->a.qp, &wr, &bad), 0);
	while (ack_timeouts() == timeouts) {
		CHECK(++waited < 500, "no ACK timeout of a SEND to a QP in INIT");
		CHECK_EQ(ibv_poll_cq(p->a.cq, 1, &wc), 0);
	}
	connect_qp(p->b.qp, p->a.qp->qp_num, 7);
	wc = test_poll_one(p->a.cq, 10);
	CHECK(wc.status == IBV_WC_SUCCESS, "SEND to a QP that was in INIT: %s",
	      ibv_wc_status_str(wc.status));
	wc = test_poll_one(p->b.cq, 5);
	CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == 0xb && wc.byte_len == 4096,
	      "receive: %s, wr_id %#llx, %u bytes", ibv_wc_status_str(wc.status),
	      (unsigned long long)wc.wr_id, wc.byte_len);
	CHECK(!memcmp(p->b.buf, p->a.buf, 4096), "SEND data");
	CHECK_EQ(ibv_poll_cq(p->b.cq, 1, &wc), 0);
}

/*
 * SQ overflow: the provider rings once per list, so a list of 80 meets a
 * ring of 64 that nothing has drained yet: ENOMEM at WR 64, and the QP goes
 * on.
 */
TEST_F(rc, sq_overflow)
{
	struct pair *p = &self->p;
	struct ibv_send_wr wrs[80], wr, *bad;
	struct ibv_sge sge;

	pair_init(p, ALL_ACCESS, 7);
	sge = (struct ibv_sge) { (uintptr_t)p->a.buf, 8, p->a.mr->lkey };
	for (int i = 0; i < 80; i++)
		wrs[i] = (struct ibv_send_wr) { .wr_id = i, .sg_list = &sge,
			.num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
			.next = i < 79 ? &wrs[i + 1] : NULL,
			.wr.rdma = { (uintptr_t)p->b.buf, p->b.mr->rkey } };
	CHECK_EQ(ibv_post_send(p->a.qp, wrs, &bad), ENOMEM);
	CHECK(bad == &wrs[64], "bad_wr is #%ld, want #64", (long)(bad - wrs));
	/* On the wire, the ring drains as acknowledgements arrive. */
	wr = wrs[0];
	wr.next = NULL;
	wr.send_flags = IBV_SEND_SIGNALED;
	for (int i = 0; i < 5000 && ibv_post_send(p->a.qp, &wr, &bad) == ENOMEM; i++)
		usleep(1000);
	CHECK_EQ(test_poll_one(p->a.cq, 5).status, IBV_WC_SUCCESS);
}

/*
 * A path MTU the port cannot carry (above the active MTU that the netdev's
 * MTU gives, or no IB MTU at all) is EINVAL at RTR and leaves the QP in
 * INIT; the active MTU itself is taken.
 */
TEST_F(rc, path_mtu_beyond_port)
{
	const int mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			 IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			 IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_RTR, .max_dest_rd_atomic = 1,
		.min_rnr_timer = 1,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .sgid_index = gid_index, .hop_limit = 64 } },
	};
	struct side *s = &self->p.a;
	struct ibv_port_attr port;

	CHECK_EQ(ibv_query_port(ctx, 1, &port), 0);
	CHECK(port.active_mtu < IBV_MTU_4096,
	      "active MTU %d: the test needs a netdev MTU below 4192", port.active_mtu);
	side_init(s, NULL, ALL_ACCESS, NULL);
	attr.dest_qp_num = s->qp->qp_num;
	CHECK_EQ(ibv_query_gid(ctx, 1, gid_index, &attr.ah_attr.grh.dgid), 0);
	for (int mtu = 0; mtu <= IBV_MTU_4096 + 1; mtu++) {
		if (mtu >= IBV_MTU_256 && mtu <= (int)port.active_mtu)
			continue;
		attr.path_mtu = mtu;
		CHECK_EQ(ibv_modify_qp(s->qp, &attr, mask), EINVAL);
		CHECK_EQ(test_qp_state(s->qp), IBV_QPS_INIT);
	}
	attr.path_mtu = port.active_mtu;
	CHECK_EQ(ibv_modify_qp(s->qp, &attr, mask), 0);
	CHECK_EQ(test_qp_state(s->qp), IBV_QPS_RTR);
	printf("# the port's active MTU: %d bytes\n", 128 << port.active_mtu);
}

/* What goes into the SQ entry after a good WRITE. */
enum hostile_sqe {
	TOO_MANY_SGES,
	UNKNOWN_OPCODE,
	HUGE_INLINE,
	ALL_ONES_SGES,
	PRODUCER_FAR_AHEAD,	/* a producer index that cannot be true */
};

/*
 * Garbage in the shared send ring, the doorbell rung as the provider does
 * with nothing else posted: it must end in an error, never an oops.
 */
static void check_hostile_sqe(struct pair *p, enum hostile_sqe garbage)
{
	struct ibv_sge sge;
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE };
	struct softrma_qp *sqp;
	struct softrma_sqe *sqe;
	struct ibv_wc wc;
	int n = 0;

	pair_init(p, ALL_ACCESS, 7);
	sqp = container_of(p->a.qp, struct softrma_qp, ibqp);
	sge = (struct ibv_sge) { (uintptr_t)p->a.buf, 64, p->a.mr->lkey };
	wr.wr.rdma.remote_addr = (uintptr_t)p->b.buf;
	wr.wr.rdma.rkey = p->b.mr->rkey;
	CHECK_EQ(post_wait(&p->a, &wr).status, IBV_WC_SUCCESS);

	sqe = softrma_ring_entry(&sqp->sq, sqp->sq.index);
	memset(sqe, 0xff, sqp->sq.stride);
	switch (garbage) {
	case TOO_MANY_SGES:
		sqe->num_sge = 1000;
		sqe->opcode = IBV_WR_SEND;
		break;
	case UNKNOWN_OPCODE:
		sqe->opcode = 77;
		break;
	case HUGE_INLINE:
		sqe->send_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED;
		sqe->opcode = IBV_WR_SEND;
		sqe->inline_len = 1 << 30;
		break;
	case ALL_ONES_SGES:
		sqe->opcode = IBV_WR_RDMA_WRITE;
		sqe->num_sge = 2;
		break;
	case PRODUCER_FAR_AHEAD:
		break;
	}
	if (garbage == PRODUCER_FAR_AHEAD)
		sqp->sq.hdr->producer = sqp->sq.index + 100000;
	else
		sqp->sq.hdr->producer = ++sqp->sq.index;
	CHECK_EQ(write(ctx->cmd_fd, &sqp->doorbell, sizeof(sqp->doorbell)),
		 (ssize_t)sizeof(sqp->doorbell));
	while (ibv_poll_cq(p->a.cq, 1, &wc) > 0)
		n++;
	usleep(10000);
	while (ibv_poll_cq(p->a.cq, 1, &wc) > 0)
		n++;
	CHECK_EQ(test_qp_state(p->a.qp), IBV_QPS_ERR);
	printf("# QP in error, %d completions\n", n);
}

TEST_F(rc, hostile_sqe_too_many_sges)
{
	check_hostile_sqe(&self->p, TOO_MANY_SGES);
}

TEST_F(rc, hostile_sqe_unknown_opcode)
{
	check_hostile_sqe(&self->p, UNKNOWN_OPCODE);
}

TEST_F(rc, hostile_sqe_huge_inline)
{
	check_hostile_sqe(&self->p, HUGE_INLINE);
}

TEST_F(rc, hostile_sqe_all_ones_sges)
{
	check_hostile_sqe(&self->p, ALL_ONES_SGES);
}

TEST_F(rc, hostile_sq_producer_far_ahead)
{
	check_hostile_sqe(&self->p, PRODUCER_FAR_AHEAD);
}

/*
 * Two receivers, b1 and b2, share one SRQ of 16 WRs with 10 receives
 * posted, which point into b1's buffer.
 */
static void srq_pairs_init(struct srq_pairs *s)
{
	struct ibv_srq_init_attr init = { .attr = { .max_wr = 16, .max_sge = 1 } };

	s->pd = ibv_alloc_pd(ctx);
	CHECK(s->pd, "alloc_pd");
	s->srq = ibv_create_srq(s->pd, &init);
	CHECK(s->srq, "create_srq: %s", strerror(errno));
	CHECK(init.attr.max_wr >= 16, "max_wr %u", init.attr.max_wr);
	side_init(&s->a1, s->pd, ALL_ACCESS, NULL);
	side_init(&s->a2, s->pd, ALL_ACCESS, NULL);
	side_init(&s->b1, s->pd, ALL_ACCESS, s->srq);
	side_init(&s->b2, s->pd, ALL_ACCESS, s->srq);
	connect_qp(s->a1.qp, s->b1.qp->qp_num, 7);
	connect_qp(s->b1.qp, s->a1.qp->qp_num, 7);
	connect_qp(s->a2.qp, s->b2.qp->qp_num, 7);
	connect_qp(s->b2.qp, s->a2.qp->qp_num, 7);

	for (int i = 0; i < 10; i++) {
		struct ibv_sge sge = { (uintptr_t)s->b1.buf + i * 4096, 4096,
				       s->b1.mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = 100 + i, .sg_list = &sge,
					  .num_sge = 1 }, *bad;

		CHECK_EQ(ibv_post_srq_recv(s->srq, &wr, &bad), 0);
	}
}

/* SEND from @from to @to, which takes a receive of the SRQ. */
static void srq_send(struct srq_pairs *s, struct side *from, struct side *to,
		     uint32_t len)
{
	struct ibv_sge sge = { (uintptr_t)from->buf, len, from->mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND };
	struct ibv_wc wc;

	fill(from->buf, len, len);
	CHECK_EQ(post_wait(from, &wr).status, IBV_WC_SUCCESS);
	wc = test_poll_one(to->cq, 5);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(wc.qp_num, to->qp->qp_num);
	CHECK_EQ(wc.byte_len, len);
	CHECK(!memcmp(s->b1.buf + (wc.wr_id - 100) * 4096, from->buf, len),
	      "SRQ receive %lu: data differs", (unsigned long)wc.wr_id);
}

/* Five SENDs, to b1 and b2 in turn: 5 of the 10 receives are left. */
static void srq_send_five(struct srq_pairs *s)
{
	for (int i = 0; i < 5; i++)
		srq_send(s, i % 2 ? &s->a2 : &s->a1, i % 2 ? &s->b2 : &s->b1,
			 100 + i);
}

TEST_F(rc, srq_shared_by_two_qps)
{
	srq_pairs_init(&self->s);
	srq_send_five(&self->s);
}

/* The limit event fires once, when fewer receives than the armed limit remain. */
TEST_F(rc, srq_limit_event_once)
{
	struct ibv_srq_attr attr = { .srq_limit = 5 };
	struct srq_pairs *s = &self->s;

	srq_pairs_init(s);
	CHECK_EQ(ibv_modify_srq(s->srq, &attr, IBV_SRQ_LIMIT), 0);
	CHECK_EQ(ibv_query_srq(s->srq, &attr), 0);
	CHECK_EQ(attr.srq_limit, 5);

	srq_send_five(s);		/* 5 left: not below 5 */
	CHECK_EQ(test_async_event(ctx, 200), -1);
	srq_send(s, &s->a1, &s->b1, 7);	/* 4 left: below the limit */
	CHECK_EQ(test_async_event(ctx, 2000), IBV_EVENT_SRQ_LIMIT_REACHED);
	CHECK_EQ(ibv_query_srq(s->srq, &attr), 0);
	CHECK_EQ(attr.srq_limit, 0);	/* disarmed */
	srq_send(s, &s->a2, &s->b2, 9);
	CHECK_EQ(test_async_event(ctx, 200), -1);	/* fires once */
}

/* b1 fails (a WRITE with a bad rkey): the SRQ still serves b2. */
TEST_F(rc, srq_survives_qp_error)
{
	struct srq_pairs *s = &self->s;
	struct ibv_sge sge;
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_WRITE };
	struct ibv_wc wc;

	srq_pairs_init(s);
	sge = (struct ibv_sge) { (uintptr_t)s->a1.buf, 8, s->a1.mr->lkey };
	wr.wr.rdma.remote_addr = (uintptr_t)s->b1.buf;
	wr.wr.rdma.rkey = s->b1.mr->rkey ^ 1;
	CHECK_EQ(post_wait(&s->a1, &wr).status, IBV_WC_REM_ACCESS_ERR);
	usleep(100000);
	CHECK_EQ(test_qp_state(s->b1.qp), IBV_QPS_ERR);
	CHECK_EQ(ibv_poll_cq(s->b1.cq, 1, &wc), 0);	/* nothing flushed */
	for (int i = 0; i < 3; i++)
		srq_send(s, &s->a2, &s->b2, 64);
	while (test_async_event(ctx, 0) >= 0)
		;	/* e.g. the QP error event of b1 */
}

/*
 * A QP of an SRQ that enters the error state raises Last WQE Reached once
 * it takes no more of the SRQ's receives (IBA 10.3.1: consumers wait for
 * it before they reset or destroy the QP; 6.12's ib_drain_qp() waits up to
 * 60 s): once per entry into the error state, for that QP only.
 */
TEST_F(rc, srq_last_wqe_reached)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };
	struct srq_pairs *s = &self->s;
	struct ibv_qp *qp = NULL;

	srq_pairs_init(s);
	srq_send_five(s);
	CHECK_EQ(ibv_modify_qp(s->b1.qp, &attr, IBV_QP_STATE), 0);
	CHECK_EQ(test_async_event_of(ctx, test_bound(5) * 1000, &qp),
		 IBV_EVENT_QP_LAST_WQE_REACHED);
	CHECK(qp == s->b1.qp, "Last WQE Reached of another QP");
	CHECK_EQ(test_async_event(ctx, 200), -1);	/* once */
	srq_send(s, &s->a2, &s->b2, 105);	/* the SRQ serves b2 still */
}

TRANSPORT_HARNESS_MAIN
