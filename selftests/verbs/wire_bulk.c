// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Bulk RC traffic between two devices, for lossy links: MIB MiB each of
 * RDMA WRITE, RDMA READ and SEND from A to B, sixteen messages of about
 * 4 MiB in flight at a time, every byte of every message checked, and the
 * bytes between messages checked untouched.  Then B's QP goes, and a WRITE
 * to it must end in RETRY_EXC_ERR after as many ACK timeouts as the QP's
 * retry count implies: retry_cnt + 1.
 *
 * usage: wire_bulk DEV_A IPV4_A DEV_B IPV4_B MIB
 */
#include <stdint.h>
#include <sys/mman.h>
#include <time.h>

#include "test.h"

#define PIECES		16
#define PIECE		(4UL << 20)
#define REGION		(PIECES * PIECE)
#define ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		IBV_ACCESS_REMOTE_READ)

struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	uint8_t *buf;
	struct ibv_mr *mr;
	int gid_index;
	union ibv_gid gid;
};

static void side_init(struct side *s, const char *dev, const char *ipv4)
{
	s->ctx = test_open_device(dev);
	s->gid_index = test_find_ipv4_gid(s->ctx, ipv4);
	CHECK_EQ(ibv_query_gid(s->ctx, 1, s->gid_index, &s->gid), 0);
	s->pd = ibv_alloc_pd(s->ctx);
	CHECK(s->pd, "alloc_pd");
	s->cq = ibv_create_cq(s->ctx, 64, NULL, NULL, 0);
	CHECK(s->cq, "create_cq");
	s->qp = test_create_qp(s->pd, s->cq, NULL, IBV_QPT_RC, ACCESS);
	s->buf = mmap(NULL, REGION, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	CHECK(s->buf != MAP_FAILED, "mmap: %s", strerror(errno));
	s->mr = ibv_reg_mr(s->pd, s->buf, REGION, ACCESS);
	CHECK(s->mr, "reg_mr: %s", strerror(errno));
}

static void side_fini(struct side *s)
{
	if (s->qp)
		CHECK_EQ(ibv_destroy_qp(s->qp), 0);
	CHECK_EQ(ibv_destroy_cq(s->cq), 0);
	CHECK_EQ(ibv_dereg_mr(s->mr), 0);
	CHECK_EQ(ibv_dealloc_pd(s->pd), 0);
	CHECK_EQ(ibv_close_device(s->ctx), 0);
	munmap(s->buf, REGION);
}

static void fill(uint8_t *p, uint64_t seed)
{
	uint64_t *w = (uint64_t *)p;

	for (uint64_t i = 0; i < REGION / 8; i++)
		w[i] = (i + seed) * 0x9e3779b97f4a7c15ULL;
}

/* Message @i of a round: at the start of its piece, 0 to 4095 bytes short. */
static uint32_t piece_len(unsigned int round, int i)
{
	return PIECE - ((round * 7919 + i * 104729) % 4096);
}

static void post(struct side *s, enum ibv_wr_opcode opcode, int i,
		 uint32_t len, struct side *peer)
{
	struct ibv_sge sge = { (uintptr_t)s->buf + i * PIECE, len, s->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = i, .sg_list = &sge, .num_sge = 1, .opcode = opcode,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { (uintptr_t)peer->buf + i * PIECE, peer->mr->rkey },
	}, *bad;

	CHECK_EQ(ibv_post_send(s->qp, &wr, &bad), 0);
}

static void post_recv(struct side *s, int i)
{
	struct ibv_sge sge = { (uintptr_t)s->buf + i * PIECE, PIECE, s->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 }, *bad;

	CHECK_EQ(ibv_post_recv(s->qp, &wr, &bad), 0);
}

static void expect_all(struct ibv_cq *cq, unsigned int round)
{
	for (int i = 0; i < PIECES; i++) {
		struct ibv_wc wc = test_poll_one(cq, 300);

		CHECK(wc.status == IBV_WC_SUCCESS, "round %u: status %s",
		      round, ibv_wc_status_str(wc.status));
		CHECK_EQ(wc.byte_len, piece_len(round, wc.wr_id));
	}
}

/* The messages arrived whole; the bytes after each are still zero. */
static void check(const uint8_t *src, const uint8_t *dst, unsigned int round,
		  const char *what)
{
	for (int i = 0; i < PIECES; i++) {
		uint64_t off = i * PIECE, len = piece_len(round, i);

		CHECK(!memcmp(src + off, dst + off, len), "%s round %u message %d data",
		      what, round, i);
		for (uint64_t j = off + len; j < off + PIECE; j++)
			CHECK(!dst[j], "%s round %u: byte %lu after message %d written",
			      what, round, (unsigned long)j, i);
	}
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static void run(struct side *a, struct side *b, enum ibv_wr_opcode opcode,
		const char *what, unsigned int rounds)
{
	/* WRITE and SEND move A's memory to B, READ B's to A. */
	struct side *src = opcode == IBV_WR_RDMA_READ ? b : a;
	struct side *dst = opcode == IBV_WR_RDMA_READ ? a : b;
	double start = now();

	for (unsigned int r = 0; r < rounds; r++) {
		fill(src->buf, r * 3 + opcode);
		memset(dst->buf, 0, REGION);
		for (int i = 0; i < PIECES; i++) {
			if (opcode == IBV_WR_SEND)
				post_recv(b, i);
			post(a, opcode, i, piece_len(r, i), b);
		}
		expect_all(a->cq, r);
		if (opcode == IBV_WR_SEND)
			expect_all(b->cq, r);
		check(src->buf, dst->buf, r, what);
	}
	printf("# %s: %u MiB in %u rounds of %d messages, every byte checked, %.1f s\n",
	       what, rounds * (unsigned int)(REGION >> 20), rounds, PIECES,
	       now() - start);
}

/*
 * B's QP is gone: A's WRITE is retried retry_cnt (7) times, each after its
 * ACK timeout, and then completes with RETRY_EXC_ERR: eight timeouts, not
 * fewer.  Counted, not timed: a TCG guest's timer ticks come late and in
 * bursts.
 */
static void dead_peer(struct side *a, struct side *b)
{
	unsigned long long timeouts = test_port_counter(a->ctx, "local_ack_timeout_err");
	struct ibv_wc wc;
	double start;

	CHECK_EQ(ibv_destroy_qp(b->qp), 0);
	b->qp = NULL;
	start = now();
	post(a, IBV_WR_RDMA_WRITE, 0, 4096, b);
	wc = test_poll_one(a->cq, 60);
	CHECK(wc.status == IBV_WC_RETRY_EXC_ERR, "dead peer: status %s",
	      ibv_wc_status_str(wc.status));
	timeouts = test_port_counter(a->ctx, "local_ack_timeout_err") - timeouts;
	CHECK(timeouts == 8, "dead peer: RETRY_EXC_ERR after %llu ACK timeouts, not 8",
	      timeouts);
	printf("# dead peer: RETRY_EXC_ERR after 8 ACK timeouts (%.2f s)\n",
	       now() - start);
}

int main(int argc, char **argv)
{
	unsigned int rounds;
	struct side a, b;

	CHECK(argc == 6, "usage: wire_bulk DEV_A IPV4_A DEV_B IPV4_B MIB");
	rounds = (atoi(argv[5]) + (REGION >> 20) - 1) / (REGION >> 20);
	side_init(&a, argv[1], argv[2]);
	side_init(&b, argv[3], argv[4]);
	test_connect_to(a.qp, a.gid_index, &b.gid, b.qp->qp_num, 7);
	test_connect_to(b.qp, b.gid_index, &a.gid, a.qp->qp_num, 7);

	run(&a, &b, IBV_WR_RDMA_WRITE, "RDMA WRITE", rounds);
	run(&a, &b, IBV_WR_RDMA_READ, "RDMA READ", rounds);
	run(&a, &b, IBV_WR_SEND, "SEND", rounds);
	dead_peer(&a, &b);

	side_fini(&a);
	side_fini(&b);
	return KSFT_PASS;
}
