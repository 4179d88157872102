// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * RC operations between two QPs of one softrma device: every opcode and
 * size with data checks, unaligned WRITE/READ with guard bytes, and the
 * errors: bad keys, bounds, rights, alignment, RNR, states, SQ overflow and
 * garbage in the shared send ring; and a shared receive queue.
 *
 * usage: rc_ops DEV IPV4 [TEST]   (TEST: ops, unaligned, errors, hostile, srq)
 */
#include <poll.h>
#include <stdint.h>
#include <unistd.h>

#define BIG (16 << 20)
#define GUARD 64
#define PAIR_BUF_LEN (BIG + 2 * GUARD)
#include "pair.h"
#include "softrma.h"	/* the provider's QP, to reach the shared ring */

static void check_ops_at(struct pair *p, uint32_t len)
{
	struct ibv_sge sge[16], rsge[16];
	struct ibv_recv_wr rwr = { .wr_id = 2, .sg_list = rsge }, *rbad;
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = sge };
	char *src = p->a.buf + GUARD, *dst = p->b.buf + GUARD;
	struct ibv_wc wc;
	int ops[] = { IBV_WR_SEND, IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_WRITE,
		      IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_READ };

	for (size_t o = 0; o < sizeof(ops) / sizeof(ops[0]); o++) {
		int read = ops[o] == IBV_WR_RDMA_READ;
		int recv = ops[o] != IBV_WR_RDMA_WRITE && !read;

		fill(read ? dst : src, len, len + o);
		memset(read ? src : dst, 0, len);
		wr.opcode = ops[o];
		wr.num_sge = split_sges(sge, 3, src, len, p->a.mr);
		wr.imm_data = htonl(0x1234 + o);
		wr.wr.rdma.remote_addr = (uintptr_t)dst;
		wr.wr.rdma.rkey = p->b.mr->rkey;
		if (recv) {
			rwr.num_sge = split_sges(rsge, 4, dst, len, p->b.mr);
			CHECK_EQ(ibv_post_recv(p->b.qp, &rwr, &rbad), 0);
		}
		wc = post_wait(&p->a, &wr);
		if (wc.status != IBV_WC_SUCCESS)
			FAIL("op %d len %u: %s", ops[o], len, ibv_wc_status_str(wc.status));
		CHECK_EQ(wc.byte_len, len);
		CHECK(!memcmp(src, dst, len), "op %d len %u: data differs", ops[o], len);
		if (recv) {
			wc = test_poll_one(p->b.cq, 5);
			CHECK_EQ(wc.status, IBV_WC_SUCCESS);
			CHECK_EQ(wc.wr_id, 2);
			CHECK_EQ(wc.byte_len, len);
			CHECK_EQ(wc.src_qp, p->a.qp->qp_num);
			if (ops[o] != IBV_WR_SEND) {
				CHECK(wc.wc_flags & IBV_WC_WITH_IMM, "no imm");
				CHECK_EQ(ntohl(wc.imm_data), 0x1234 + o);
			}
			CHECK_EQ(wc.opcode, ops[o] == IBV_WR_RDMA_WRITE_WITH_IMM ?
				 IBV_WC_RECV_RDMA_WITH_IMM : IBV_WC_RECV);
		}
	}
}

static void check_inline_and_atomics(struct pair *p)
{
	uint64_t *target = (uint64_t *)(p->b.buf + GUARD), *result = (uint64_t *)p->a.buf;
	struct ibv_sge sge = { (uintptr_t)p->a.buf, 200, p->a.mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1 };
	char msg[200];

	fill(msg, sizeof(msg), 99);
	sge.addr = (uintptr_t)msg;	/* inline data needs no MR */
	sge.lkey = 0;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_INLINE;
	wr.wr.rdma.remote_addr = (uintptr_t)target;
	wr.wr.rdma.rkey = p->b.mr->rkey;
	CHECK_EQ(post_wait(&p->a, &wr).status, IBV_WC_SUCCESS);
	CHECK(!memcmp(target, msg, sizeof(msg)), "inline write");

	*target = 40;
	sge = (struct ibv_sge) { (uintptr_t)result, 8, p->a.mr->lkey };
	wr = (struct ibv_send_wr) { .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD };
	wr.wr.atomic.remote_addr = (uintptr_t)target;
	wr.wr.atomic.rkey = p->b.mr->rkey;
	wr.wr.atomic.compare_add = 2;
	CHECK_EQ(post_wait(&p->a, &wr).status, IBV_WC_SUCCESS);
	CHECK_EQ(*result, 40);
	CHECK_EQ(*target, 42);
	wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
	wr.wr.atomic.compare_add = 41;	/* mismatch: no swap */
	wr.wr.atomic.swap = 7;
	CHECK_EQ(post_wait(&p->a, &wr).status, IBV_WC_SUCCESS);
	CHECK_EQ(*result, 42);
	CHECK_EQ(*target, 42);
	wr.wr.atomic.compare_add = 42;
	CHECK_EQ(post_wait(&p->a, &wr).status, IBV_WC_SUCCESS);
	CHECK_EQ(*target, 7);
}

static void test_ops(void)
{
	static const uint32_t sizes[] = { 0, 1, 63, 64, 4095, 4096, 4097, 65536,
					  (1 << 20) + 3, BIG };
	struct pair p;

	pair_init(&p, ALL_ACCESS, 7);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		check_ops_at(&p, sizes[i]);
	check_inline_and_atomics(&p);
	pair_fini(&p);
	printf("# every opcode at every size, multi-SGE, inline, atomics: data verified\n");
}

/*
 * WRITE and READ at every offset 0..63 and length 1..130: exactly the
 * target range of the written side changes, not a byte around it.
 */
static void test_unaligned(void)
{
	struct ibv_sge sge;
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1 };
	char want[512];
	struct pair p;
	int n = 0;

	pair_init(&p, ALL_ACCESS, 7);
	for (int read = 0; read < 2; read++)
		for (int off = 0; off < 64; off++)
			for (uint32_t len = 1; len <= 130; len++) {
				char *local = p.a.buf + GUARD + (read ? off : (off * 5) % 64);
				char *remote = p.b.buf + GUARD + (read ? (off * 5) % 64 : off);
				char *src = read ? remote : local, *dst = read ? local : remote;
				char *dst_buf = read ? p.a.buf : p.b.buf;

				memset(p.a.buf, 0xa5, sizeof(want));
				memset(p.b.buf, 0x5a, sizeof(want));
				fill(src, len, off + len);
				memcpy(want, dst_buf, sizeof(want));
				memcpy(want + (dst - dst_buf), src, len);

				sge = (struct ibv_sge) { (uintptr_t)local, len, p.a.mr->lkey };
				wr.opcode = read ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE;
				wr.wr.rdma.remote_addr = (uintptr_t)remote;
				wr.wr.rdma.rkey = p.b.mr->rkey;
				CHECK_EQ(post_wait(&p.a, &wr).status, IBV_WC_SUCCESS);
				if (memcmp(dst_buf, want, sizeof(want)))
					FAIL("%s off %d len %u: wrong bytes at or around the target",
					     read ? "READ" : "WRITE", off, len);
				n++;
			}
	pair_fini(&p);
	printf("# %d unaligned WRITE/READ: head and tail exact\n", n);
}

/* Posts one WR on a fresh pair and checks status, target and QP states. */
struct bad_case {
	const char *name;
	int opcode;
	int b_access;		/* b's QP access flags */
	int mr_access;		/* b's target MR (0: the default, all rights) */
	int other_pd;		/* target MR in another PD */
	int dereg;		/* target MR deregistered first */
	int64_t offset;		/* remote address relative to the target MR */
	uint32_t len;
	int bad_lkey;
	uint32_t rkey_xor;
	enum ibv_wc_status want;
};

static void run_bad_case(const struct bad_case *c)
{
	struct ibv_sge sge;
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = c->opcode };
	struct ibv_pd *pd2 = NULL;
	struct ibv_mr *tmr;
	char *target;
	struct ibv_wc wc;
	struct pair p;

	pair_init(&p, c->b_access ? c->b_access : ALL_ACCESS, 7);
	target = p.b.buf + 4096;
	memset(p.b.buf, 0x77, BIG + 2 * GUARD);
	if (c->other_pd)
		pd2 = ibv_alloc_pd(ctx);
	tmr = ibv_reg_mr(pd2 ? pd2 : p.b.pd, target, 4096,
			 c->mr_access ? c->mr_access : ALL_ACCESS);
	CHECK(tmr, "reg target");
	wr.wr.rdma.remote_addr = (uintptr_t)target + c->offset;
	wr.wr.rdma.rkey = tmr->rkey ^ c->rkey_xor;
	wr.wr.atomic.remote_addr = wr.wr.rdma.remote_addr;
	wr.wr.atomic.rkey = wr.wr.rdma.rkey;
	if (c->dereg)
		CHECK_EQ(ibv_dereg_mr(tmr), 0);
	fill(p.a.buf, 8192, 3);
	sge = (struct ibv_sge) { (uintptr_t)p.a.buf, c->len,
				 p.a.mr->lkey ^ (c->bad_lkey ? 0x100 : 0) };

	wc = post_wait(&p.a, &wr);
	if (wc.status != c->want)
		FAIL("%s: %s, want %s", c->name, ibv_wc_status_str(wc.status),
		     ibv_wc_status_str(c->want));
	for (size_t i = 0; i < BIG + 2 * GUARD; i++)
		if (p.b.buf[i] != 0x77)
			FAIL("%s: target byte %zu written", c->name, i);
	CHECK_EQ(test_qp_state(p.a.qp), IBV_QPS_ERR);

	/* Everything posted afterwards is flushed. */
	wr.opcode = IBV_WR_RDMA_WRITE;
	sge.lkey = p.a.mr->lkey;
	CHECK_EQ(post_wait(&p.a, &wr).status, IBV_WC_WR_FLUSH_ERR);
	if (!c->dereg)
		CHECK_EQ(ibv_dereg_mr(tmr), 0);
	if (pd2)
		CHECK_EQ(ibv_dealloc_pd(pd2), 0);
	pair_fini(&p);
	printf("# %s: %s, target untouched, QP in error\n", c->name,
	       ibv_wc_status_str(wc.status));
}

static void test_errors(void)
{
	const int W = IBV_WR_RDMA_WRITE, R = IBV_WR_RDMA_READ,
		  A = IBV_WR_ATOMIC_FETCH_AND_ADD;
	const struct bad_case cases[] = {
		{ "wrong rkey", W, .len = 64, .rkey_xor = 0x1, .want = IBV_WC_REM_ACCESS_ERR },
		{ "rkey of a deregistered MR", W, .len = 64, .dereg = 1, .want = IBV_WC_REM_ACCESS_ERR },
		{ "MR of another PD", W, .len = 64, .other_pd = 1, .want = IBV_WC_REM_ACCESS_ERR },
		{ "one byte past the end", W, .len = 64, .offset = 4096 - 63, .want = IBV_WC_REM_ACCESS_ERR },
		{ "one byte before the start", W, .len = 64, .offset = -1, .want = IBV_WC_REM_ACCESS_ERR },
		{ "address + length wraps", W, .len = 64, .offset = -(int64_t)(uintptr_t)0 - 1 - 4096, .want = IBV_WC_REM_ACCESS_ERR },
		{ "READ past the end", R, .len = 4097, .want = IBV_WC_REM_ACCESS_ERR },
		{ "MR without REMOTE_WRITE", W, .len = 64, .mr_access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ, .want = IBV_WC_REM_ACCESS_ERR },
		{ "MR without REMOTE_READ", R, .len = 64, .mr_access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, .want = IBV_WC_REM_ACCESS_ERR },
		{ "MR without REMOTE_ATOMIC", A, .len = 8, .mr_access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, .want = IBV_WC_REM_ACCESS_ERR },
		{ "QP without REMOTE_WRITE", W, .len = 64, .b_access = IBV_ACCESS_REMOTE_READ, .want = IBV_WC_REM_INV_REQ_ERR },
		{ "unaligned atomic", A, .len = 8, .offset = 4, .want = IBV_WC_REM_INV_REQ_ERR },
		{ "atomic of 4 bytes", A, .len = 4, .want = IBV_WC_LOC_LEN_ERR },
		{ "bad lkey", W, .len = 64, .bad_lkey = 1, .want = IBV_WC_LOC_PROT_ERR },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_bad_case(&cases[i]);
}

/* RNR, short receive buffer, posting in bad states, SQ overflow. */
/*
 * A zero-based MR (ibv_reg_mr_iova with iova 0): remote addresses count from
 * 0, and its bounds hold.  ibv_rereg_mr is refused and leaves the MR as it was.
 */
static void test_zero_based(void)
{
	struct ibv_sge sge;
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_WRITE,
				  .send_flags = IBV_SEND_SIGNALED };
	struct ibv_mr *zmr;
	struct pair p;
	char *base;

	pair_init(&p, ALL_ACCESS, 0);
	/* The core wants the address and iova at the same offset in a page. */
	base = (char *)(((uintptr_t)p.b.buf + 4095) & ~4095UL);
	zmr = ibv_reg_mr_iova(p.b.pd, base, 8192, 0, ALL_ACCESS);
	CHECK(zmr, "reg_mr_iova: %s", strerror(errno));
	fill(p.a.buf, 100, 7);
	sge = (struct ibv_sge) { (uintptr_t)p.a.buf, 100, p.a.mr->lkey };
	wr.wr.rdma.remote_addr = 8000;
	wr.wr.rdma.rkey = zmr->rkey;
	CHECK_EQ(post_wait(&p.a, &wr).status, IBV_WC_SUCCESS);
	CHECK(!memcmp(base + 8000, p.a.buf, 100), "zero-based WRITE data");
	CHECK_EQ(base[7999], 0);

	CHECK(ibv_rereg_mr(zmr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			   IBV_ACCESS_LOCAL_WRITE), "rereg_mr succeeded");
	wr.wr.rdma.remote_addr = 8100;			/* 8100 + 100 > 8192 */
	CHECK_EQ(post_wait(&p.a, &wr).status, IBV_WC_REM_ACCESS_ERR);
	CHECK_EQ(base[8100], 0);
	CHECK_EQ(ibv_dereg_mr(zmr), 0);
	pair_fini(&p);
	printf("# zero-based MR: addresses from 0, bounds hold; rereg_mr refused\n");
}

/*
 * UC: SEND and WRITE carry data; nothing is acknowledged, so a WRITE with a
 * bad rkey or a SEND without a receive completes at the sender, is dropped
 * at the target, and both QPs carry on.  READ and atomics are refused.
 */
/* Waits up to 5 s for @len bytes at @dst to equal @src. */
static void test_uc(void)
{
	struct ibv_sge sge, rsge;
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_recv_wr rwr = { .wr_id = 9, .sg_list = &rsge, .num_sge = 1 }, *rbad;
	struct pair p;
	struct ibv_wc wc;

	side_init_type(&p.a, NULL, IBV_QPT_UC, ALL_ACCESS, NULL);
	side_init_type(&p.b, NULL, IBV_QPT_UC, ALL_ACCESS, NULL);
	connect_qp(p.a.qp, p.b.qp->qp_num, 0);
	connect_qp(p.b.qp, p.a.qp->qp_num, 0);
	fill(p.a.buf, 4096, 3);
	sge = (struct ibv_sge) { (uintptr_t)p.a.buf, 4096, p.a.mr->lkey };

	/*
	 * A UC completion says sent, not arrived: the good WRITE, sent after
	 * the two that are dropped, is awaited, and shows they were handled.
	 */
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.wr.rdma.remote_addr = (uintptr_t)p.b.buf + 16384;
	wr.wr.rdma.rkey = p.b.mr->rkey ^ 0x80;
	CHECK_EQ(post_wait(&p.a, &wr).status, IBV_WC_SUCCESS);
	wr.opcode = IBV_WR_SEND;
	CHECK_EQ(post_wait(&p.a, &wr).status, IBV_WC_SUCCESS);	/* no receive */

	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.wr.rdma.remote_addr = (uintptr_t)p.b.buf;
	wr.wr.rdma.rkey = p.b.mr->rkey;
	CHECK_EQ(post_wait(&p.a, &wr).status, IBV_WC_SUCCESS);
	CHECK(wait_data(p.b.buf, p.a.buf, 4096), "UC WRITE data");
	for (int i = 16384; i < 16384 + 4096; i++)
		CHECK_EQ(p.b.buf[i], 0);
	CHECK_EQ(test_qp_state(p.a.qp), IBV_QPS_RTS);
	CHECK_EQ(test_qp_state(p.b.qp), IBV_QPS_RTS);
	rsge = (struct ibv_sge) { (uintptr_t)p.b.buf + 8192, 4096, p.b.mr->lkey };
	CHECK_EQ(ibv_post_recv(p.b.qp, &rwr, &rbad), 0);
	wr.opcode = IBV_WR_SEND;
	CHECK_EQ(post_wait(&p.a, &wr).status, IBV_WC_SUCCESS);
	wc = test_poll_one(p.b.cq, 5);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(wc.wr_id, 9);
	CHECK(!memcmp(p.b.buf + 8192, p.a.buf, 4096), "UC SEND data");

	wr.opcode = IBV_WR_RDMA_READ;
	CHECK_EQ(ibv_post_send(p.a.qp, &wr, &bad), EINVAL);
	wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	CHECK_EQ(ibv_post_send(p.a.qp, &wr, &bad), EINVAL);
	pair_fini(&p);
	printf("# UC: WRITE and SEND data; bad rkey and missing receive dropped, QPs carry on; READ, atomics refused\n");
}

static void test_queue_errors(void)
{
	struct ibv_sge sge, rsge;
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND },
			   wrs[80], *bad;
	struct ibv_recv_wr rwr = { .sg_list = &rsge, .num_sge = 1 }, *rbad;
	struct ibv_qp_init_attr init = { .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1,
			 .max_recv_sge = 1 } };
	struct ibv_qp *qp;
	struct pair p;
	struct ibv_wc wc;

	pair_init(&p, ALL_ACCESS, 0);
	sge = (struct ibv_sge) { (uintptr_t)p.a.buf, 64, p.a.mr->lkey };
	CHECK_EQ(post_wait(&p.a, &wr).status, IBV_WC_RNR_RETRY_EXC_ERR);
	CHECK_EQ(test_qp_state(p.a.qp), IBV_QPS_ERR);
	pair_fini(&p);
	printf("# SEND without a receive, rnr_retry 0: RNR_RETRY_EXC_ERR\n");

	pair_init(&p, ALL_ACCESS, 3);
	sge = (struct ibv_sge) { (uintptr_t)p.a.buf, 64, p.a.mr->lkey };
	CHECK_EQ(ibv_post_send(p.a.qp, &wr, &bad), 0);	/* waits out RNR NAKs */
	usleep(100);
	rsge = (struct ibv_sge) { (uintptr_t)p.b.buf, 64, p.b.mr->lkey };
	CHECK_EQ(ibv_post_recv(p.b.qp, &rwr, &rbad), 0);
	wc = test_poll_one(p.a.cq, 5);
	if (wc.status != IBV_WC_SUCCESS && wc.status != IBV_WC_RNR_RETRY_EXC_ERR)
		FAIL("RNR retry: %s", ibv_wc_status_str(wc.status));
	printf("# SEND before the receive, rnr_retry 3: %s\n", ibv_wc_status_str(wc.status));
	pair_fini(&p);

	pair_init(&p, ALL_ACCESS, 7);
	rsge.length = 16;
	rsge.addr = (uintptr_t)p.b.buf;
	rsge.lkey = p.b.mr->lkey;
	memset(p.b.buf, 0x77, 64);
	CHECK_EQ(ibv_post_recv(p.b.qp, &rwr, &rbad), 0);
	sge = (struct ibv_sge) { (uintptr_t)p.a.buf, 64, p.a.mr->lkey };
	CHECK_EQ(post_wait(&p.a, &wr).status, IBV_WC_REM_INV_REQ_ERR);
	CHECK_EQ(test_poll_one(p.b.cq, 5).status, IBV_WC_LOC_LEN_ERR);
	for (int i = 0; i < 64; i++)
		CHECK(p.b.buf[i] == 0x77, "short receive buffer written");
	pair_fini(&p);
	printf("# SEND larger than the receive: REM_INV_REQ_ERR / LOC_LEN_ERR, nothing written\n");

	side_init(&p.a, NULL, ALL_ACCESS, NULL);
	init.send_cq = init.recv_cq = p.a.cq;
	qp = ibv_create_qp(p.a.pd, &init);
	CHECK(qp, "create_qp");
	sge = (struct ibv_sge) { (uintptr_t)p.a.buf, 8, p.a.mr->lkey };
	errno = 0;
	CHECK_EQ(ibv_post_send(qp, &wr, &bad), EINVAL);	/* RESET */
	CHECK(bad == &wr, "bad_wr");
	CHECK_EQ(ibv_destroy_qp(qp), 0);
	CHECK_EQ(ibv_post_send(p.a.qp, &wr, &bad), EINVAL);	/* INIT */
	connect_qp(p.a.qp, 0xffffff, 7);	/* nobody there */
	CHECK_EQ(post_wait(&p.a, &wr).status, IBV_WC_RETRY_EXC_ERR);
	side_fini(&p.a, 1);
	printf("# post in RESET/INIT: EINVAL; no peer: RETRY_EXC_ERR\n");

	/*
	 * SQ overflow: the provider rings once per list, so a list of 80
	 * meets a ring of 64 that nothing has drained yet.
	 */
	pair_init(&p, ALL_ACCESS, 7);
	sge = (struct ibv_sge) { (uintptr_t)p.a.buf, 8, p.a.mr->lkey };
	for (int i = 0; i < 80; i++)
		wrs[i] = (struct ibv_send_wr) { .wr_id = i, .sg_list = &sge,
			.num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
			.next = i < 79 ? &wrs[i + 1] : NULL,
			.wr.rdma = { (uintptr_t)p.b.buf, p.b.mr->rkey } };
	CHECK_EQ(ibv_post_send(p.a.qp, wrs, &bad), ENOMEM);
	CHECK(bad == &wrs[64], "bad_wr is #%ld, want #64", (long)(bad - wrs));
	/* On the wire, the ring drains as acknowledgements arrive. */
	wr = wrs[0];
	wr.next = NULL;
	wr.send_flags = IBV_SEND_SIGNALED;
	for (int i = 0; i < 5000 && ibv_post_send(p.a.qp, &wr, &bad) == ENOMEM; i++)
		usleep(1000);
	CHECK_EQ(test_poll_one(p.a.cq, 5).status, IBV_WC_SUCCESS);
	pair_fini(&p);
	printf("# SQ overflow: ENOMEM at WR 64 of 80, the QP goes on\n");
}

/*
 * A path MTU the port cannot carry (above the active MTU that the netdev's
 * MTU gives, or no IB MTU at all) is EINVAL at RTR and leaves the QP in
 * INIT; the active MTU itself is taken.
 */
static void test_path_mtu(void)
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
	struct ibv_port_attr port;
	struct side s;

	CHECK_EQ(ibv_query_port(ctx, 1, &port), 0);
	CHECK(port.active_mtu < IBV_MTU_4096,
	      "active MTU %d: the test needs a netdev MTU below 4192", port.active_mtu);
	side_init(&s, NULL, ALL_ACCESS, NULL);
	attr.dest_qp_num = s.qp->qp_num;
	CHECK_EQ(ibv_query_gid(ctx, 1, gid_index, &attr.ah_attr.grh.dgid), 0);
	for (int mtu = 0; mtu <= IBV_MTU_4096 + 1; mtu++) {
		if (mtu >= IBV_MTU_256 && mtu <= (int)port.active_mtu)
			continue;
		attr.path_mtu = mtu;
		CHECK_EQ(ibv_modify_qp(s.qp, &attr, mask), EINVAL);
		CHECK_EQ(test_qp_state(s.qp), IBV_QPS_INIT);
	}
	attr.path_mtu = port.active_mtu;
	CHECK_EQ(ibv_modify_qp(s.qp, &attr, mask), 0);
	CHECK_EQ(test_qp_state(s.qp), IBV_QPS_RTR);
	side_fini(&s, 1);
	printf("# path MTU above the port's %d bytes, or none: EINVAL at RTR, QP stays in INIT\n",
	       128 << port.active_mtu);
}

/* Garbage in the shared send ring must end in an error, never an oops. */
static void test_hostile(void)
{
	struct ibv_sge sge;
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE };
	struct softrma_qp *sqp;
	struct softrma_sqe *sqe;
	struct pair p;
	struct ibv_wc wc;
	int n;

	for (int round = 0; round < 5; round++) {
		pair_init(&p, ALL_ACCESS, 7);
		sqp = container_of(p.a.qp, struct softrma_qp, ibqp);
		sge = (struct ibv_sge) { (uintptr_t)p.a.buf, 64, p.a.mr->lkey };
		wr.wr.rdma.remote_addr = (uintptr_t)p.b.buf;
		wr.wr.rdma.rkey = p.b.mr->rkey;
		CHECK_EQ(post_wait(&p.a, &wr).status, IBV_WC_SUCCESS);

		sqe = softrma_ring_entry(&sqp->sq, sqp->sq.index);
		memset(sqe, 0xff, sqp->sq.stride);
		switch (round) {
		case 0: sqe->num_sge = 1000; sqe->opcode = IBV_WR_SEND; break;
		case 1: sqe->opcode = 77; break;
		case 2: sqe->send_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED;
			sqe->opcode = IBV_WR_SEND; sqe->inline_len = 1 << 30; break;
		case 3: sqe->opcode = IBV_WR_RDMA_WRITE; sqe->num_sge = 2; break;
		case 4: break;	/* a producer index that cannot be true */
		}
		if (round == 4)
			sqp->sq.hdr->producer = sqp->sq.index + 100000;
		else
			sqp->sq.hdr->producer = ++sqp->sq.index;
		/* Ring the doorbell as the provider does, with nothing else posted. */
		CHECK_EQ(write(ctx->cmd_fd, &sqp->doorbell, sizeof(sqp->doorbell)),
			 (ssize_t)sizeof(sqp->doorbell));
		n = 0;
		while (ibv_poll_cq(p.a.cq, 1, &wc) > 0)
			n++;
		usleep(10000);
		while (ibv_poll_cq(p.a.cq, 1, &wc) > 0)
			n++;
		CHECK_EQ(test_qp_state(p.a.qp), IBV_QPS_ERR);
		pair_fini(&p);
		printf("# hostile SQ ring, case %d: QP in error, %d completions\n", round, n);
	}
}

static void srq_post(struct ibv_srq *srq, struct side *s, int n)
{
	for (int i = 0; i < n; i++) {
		struct ibv_sge sge = { (uintptr_t)s->buf + i * 4096, 4096, s->mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = 100 + i, .sg_list = &sge,
					  .num_sge = 1 }, *bad;

		CHECK_EQ(ibv_post_srq_recv(srq, &wr, &bad), 0);
	}
}

/* SEND from @from to @to, whose SRQ receives point into @rbufs's buffer. */
static void srq_send(struct side *from, struct side *to, struct side *rbufs,
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
	CHECK(!memcmp(rbufs->buf + (wc.wr_id - 100) * 4096, from->buf, len),
	      "SRQ receive %lu: data differs", (unsigned long)wc.wr_id);
}

/* Waits up to @ms for an async event; -1 when none came. */
static int async_event(int ms)
{
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;
	int type;

	if (poll(&pfd, 1, ms) != 1)
		return -1;
	CHECK_EQ(ibv_get_async_event(ctx, &ev), 0);
	type = ev.event_type;
	ibv_ack_async_event(&ev);
	return type;
}

/*
 * Two receivers share one SRQ: each takes from it, the limit event fires
 * once when fewer than the armed limit remain, and an error on one QP
 * leaves the SRQ's receives to the other.
 */
static void test_srq(void)
{
	struct ibv_srq_init_attr init = { .attr = { .max_wr = 16, .max_sge = 1 } };
	struct ibv_srq_attr attr = { .srq_limit = 5 };
	struct side a1, a2, b1, b2;
	struct ibv_pd *pd;
	struct ibv_srq *srq;

	pd = ibv_alloc_pd(ctx);
	CHECK(pd, "alloc_pd");
	srq = ibv_create_srq(pd, &init);
	CHECK(srq, "create_srq: %s", strerror(errno));
	CHECK(init.attr.max_wr >= 16, "max_wr %u", init.attr.max_wr);
	side_init(&a1, pd, ALL_ACCESS, NULL);
	side_init(&a2, pd, ALL_ACCESS, NULL);
	side_init(&b1, pd, ALL_ACCESS, srq);
	side_init(&b2, pd, ALL_ACCESS, srq);
	connect_qp(a1.qp, b1.qp->qp_num, 7);
	connect_qp(b1.qp, a1.qp->qp_num, 7);
	connect_qp(a2.qp, b2.qp->qp_num, 7);
	connect_qp(b2.qp, a2.qp->qp_num, 7);

	srq_post(srq, &b1, 10);
	attr.max_wr = 0;
	CHECK_EQ(ibv_modify_srq(srq, &attr, IBV_SRQ_MAX_WR), EOPNOTSUPP);
	CHECK_EQ(ibv_modify_srq(srq, &attr, IBV_SRQ_LIMIT), 0);
	CHECK_EQ(ibv_query_srq(srq, &attr), 0);
	CHECK_EQ(attr.srq_limit, 5);

	for (int i = 0; i < 5; i++)	/* 10 - 5 = 5 left: not below 5 */
		srq_send(i % 2 ? &a2 : &a1, i % 2 ? &b2 : &b1, &b1, 100 + i);
	CHECK_EQ(async_event(200), -1);
	srq_send(&a1, &b1, &b1, 7);	/* 4 left: below the limit */
	CHECK_EQ(async_event(2000), IBV_EVENT_SRQ_LIMIT_REACHED);
	CHECK_EQ(ibv_query_srq(srq, &attr), 0);
	CHECK_EQ(attr.srq_limit, 0);	/* disarmed */
	srq_send(&a2, &b2, &b1, 9);
	CHECK_EQ(async_event(200), -1);	/* fires once */

	/* b1 fails (a write with a bad rkey): the SRQ still serves b2. */
	{
		struct ibv_sge sge = { (uintptr_t)a1.buf, 8, a1.mr->lkey };
		struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
			.opcode = IBV_WR_RDMA_WRITE,
			.wr.rdma = { (uintptr_t)b1.buf, b1.mr->rkey ^ 1 } };
		struct ibv_wc wc;

		CHECK_EQ(post_wait(&a1, &wr).status, IBV_WC_REM_ACCESS_ERR);
		usleep(100000);
		CHECK_EQ(test_qp_state(b1.qp), IBV_QPS_ERR);
		CHECK_EQ(ibv_poll_cq(b1.cq, 1, &wc), 0);	/* nothing flushed */
	}
	for (int i = 0; i < 3; i++)
		srq_send(&a2, &b2, &b1, 64);
	while (async_event(0) >= 0)
		;	/* e.g. the QP error event of b1 */

	side_fini(&a1, 0);
	side_fini(&a2, 0);
	side_fini(&b1, 0);
	side_fini(&b2, 0);
	CHECK_EQ(ibv_destroy_srq(srq), 0);
	CHECK_EQ(ibv_dealloc_pd(pd), 0);
	printf("# SRQ shared by two QPs: data, one limit event, survives a QP error\n");
}

int main(int argc, char **argv)
{
	const char *which = argc > 3 ? argv[3] : "all";

	CHECK(argc >= 3, "usage: rc_ops DEV IPV4 [ops|unaligned|errors|hostile|srq]");
	ctx = test_open_device(argv[1]);
	gid_index = test_find_ipv4_gid(ctx, argv[2]);
	if (!strcmp(which, "all") || !strcmp(which, "ops"))
		test_ops();
	if (!strcmp(which, "all") || !strcmp(which, "unaligned"))
		test_unaligned();
	if (!strcmp(which, "all") || !strcmp(which, "errors")) {
		test_errors();
		test_zero_based();
		test_uc();
		test_queue_errors();
		test_path_mtu();
	}
	if (!strcmp(which, "all") || !strcmp(which, "hostile"))
		test_hostile();
	if (!strcmp(which, "all") || !strcmp(which, "srq"))
		test_srq();
	CHECK_EQ(ibv_close_device(ctx), 0);
	return KSFT_PASS;
}
