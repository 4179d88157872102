// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Messages at the verbs limit: RDMA WRITE, RDMA READ and SEND of exactly
 * 2 GiB between two 2 GiB MRs, every byte checked, and one byte more
 * refused with LOC_LEN_ERR before anything moves.  Needs about 4.5 GiB of
 * memory.
 *
 * usage: big_msg DEV IPV4
 */
#include <stdint.h>
#include <sys/mman.h>

#include "test.h"

#define MAX_MSG (1UL << 31)
#define ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		IBV_ACCESS_REMOTE_READ)

struct side {
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	uint8_t *buf;
	struct ibv_mr *mr;
};

static struct ibv_context *ctx;
static struct ibv_pd *pd;

static void side_init(struct side *s)
{
	s->cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	CHECK(s->cq, "create_cq");
	s->qp = test_create_qp(pd, s->cq, NULL, IBV_QPT_RC, ACCESS);
	/* One extra page: the buffer for the MTU + 1 case. */
	s->buf = mmap(NULL, MAX_MSG + 4096, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	CHECK(s->buf != MAP_FAILED, "mmap 2 GiB: %s", strerror(errno));
	s->mr = ibv_reg_mr(pd, s->buf, MAX_MSG + 4096, ACCESS);
	CHECK(s->mr, "reg_mr 2 GiB: %s", strerror(errno));
}

static void post(struct side *s, enum ibv_wr_opcode opcode, uint64_t len,
		 struct side *peer)
{
	struct ibv_sge sge[2] = {
		{ .addr = (uintptr_t)s->buf, .length = len > MAX_MSG ? MAX_MSG : len,
		  .lkey = s->mr->lkey },
		{ .addr = (uintptr_t)s->buf + MAX_MSG, .length = len - sge[0].length,
		  .lkey = s->mr->lkey },
	};
	struct ibv_send_wr wr = {
		.wr_id = len, .sg_list = sge, .num_sge = len > MAX_MSG ? 2 : 1,
		.opcode = opcode, .send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = (uintptr_t)peer->buf,
			     .rkey = peer->mr->rkey },
	}, *bad;

	CHECK_EQ(ibv_post_send(s->qp, &wr, &bad), 0);
}

static void post_recv(struct side *s)
{
	struct ibv_sge sge = { .addr = (uintptr_t)s->buf, .length = MAX_MSG,
			       .lkey = s->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 }, *bad;

	CHECK_EQ(ibv_post_recv(s->qp, &wr, &bad), 0);
}

static void fill(uint8_t *p, unsigned int seed)
{
	uint64_t *w = (uint64_t *)p;

	for (uint64_t i = 0; i < MAX_MSG / 8; i++)
		w[i] = i * 0x9e3779b97f4a7c15ULL + seed;
}

static void expect_wc(struct ibv_cq *cq, int status, uint64_t byte_len)
{
	struct ibv_wc wc = test_poll_one(cq, 600);

	CHECK_EQ(wc.status, status);
	if (status == IBV_WC_SUCCESS)
		CHECK_EQ(wc.byte_len, byte_len);
}

int main(int argc, char **argv)
{
	struct side a, b;
	int gid_index;

	CHECK(argc == 3, "usage: big_msg DEV IPV4");
	ctx = test_open_device(argv[1]);
	gid_index = test_find_ipv4_gid(ctx, argv[2]);
	pd = ibv_alloc_pd(ctx);
	CHECK(pd, "alloc_pd");
	side_init(&a);
	side_init(&b);
	test_connect_rc(ctx, a.qp, gid_index, b.qp->qp_num, 7);
	test_connect_rc(ctx, b.qp, gid_index, a.qp->qp_num, 7);

	fill(a.buf, 1);
	memset(b.buf, 0, MAX_MSG);
	post(&a, IBV_WR_RDMA_WRITE, MAX_MSG, &b);
	expect_wc(a.cq, IBV_WC_SUCCESS, MAX_MSG);
	CHECK(!memcmp(a.buf, b.buf, MAX_MSG), "2 GiB RDMA WRITE data");
	printf("# RDMA WRITE of 2 GiB: every byte arrived\n");

	fill(b.buf, 2);
	post(&a, IBV_WR_RDMA_READ, MAX_MSG, &b);
	expect_wc(a.cq, IBV_WC_SUCCESS, MAX_MSG);
	CHECK(!memcmp(a.buf, b.buf, MAX_MSG), "2 GiB RDMA READ data");
	printf("# RDMA READ of 2 GiB: every byte arrived\n");

	fill(a.buf, 3);
	post_recv(&b);
	post(&a, IBV_WR_SEND, MAX_MSG, &b);
	expect_wc(a.cq, IBV_WC_SUCCESS, MAX_MSG);
	expect_wc(b.cq, IBV_WC_SUCCESS, MAX_MSG);
	CHECK(!memcmp(a.buf, b.buf, MAX_MSG), "2 GiB SEND data");
	printf("# SEND of 2 GiB: every byte arrived\n");

	b.buf[0] = 0x5a;
	post(&a, IBV_WR_RDMA_WRITE, MAX_MSG + 1, &b);
	expect_wc(a.cq, IBV_WC_LOC_LEN_ERR, 0);
	CHECK_EQ(b.buf[0], 0x5a);
	printf("# 2 GiB + 1 byte: LOC_LEN_ERR, nothing written\n");

	for (struct side *s = &a; s; s = s == &a ? &b : NULL) {
		CHECK_EQ(ibv_destroy_qp(s->qp), 0);
		CHECK_EQ(ibv_destroy_cq(s->cq), 0);
		CHECK_EQ(ibv_dereg_mr(s->mr), 0);
		munmap(s->buf, MAX_MSG + 4096);
	}
	CHECK_EQ(ibv_dealloc_pd(pd), 0);
	CHECK_EQ(ibv_close_device(ctx), 0);
	return KSFT_PASS;
}
