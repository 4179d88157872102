/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Two connected QPs of one device for the C selftests: "a" sends to "b",
 * each with its own PD, CQ and a registered buffer of PAIR_BUF_LEN bytes.
 * A test sets ctx and gid_index before it builds a pair.
 */
#ifndef SOFTRMA_PAIR_H
#define SOFTRMA_PAIR_H

#include <unistd.h>

#include "test.h"

#ifndef PAIR_BUF_LEN
#define PAIR_BUF_LEN (1 << 20)
#endif
#define ALL_ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

static struct ibv_context *ctx;
static int gid_index = -1;

struct side {
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	char *buf;
	struct ibv_mr *mr;
};

struct pair {
	struct side a, b;	/* a sends to b */
};

static inline void side_init_type(struct side *s, struct ibv_pd *pd,
			   enum ibv_qp_type type, int qp_access,
			   struct ibv_srq *srq)
{
	s->pd = pd ? pd : ibv_alloc_pd(ctx);
	CHECK(s->pd, "alloc_pd");
	s->cq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	CHECK(s->cq, "create_cq: %s", strerror(errno));
	s->qp = test_create_qp(s->pd, s->cq, srq, type, qp_access);
	s->buf = calloc(1, PAIR_BUF_LEN);
	CHECK(s->buf, "calloc");
	s->mr = ibv_reg_mr(s->pd, s->buf, PAIR_BUF_LEN, ALL_ACCESS);
	CHECK(s->mr, "reg_mr: %s", strerror(errno));
}

static inline void side_init(struct side *s, struct ibv_pd *pd, int qp_access,
		      struct ibv_srq *srq)
{
	side_init_type(s, pd, IBV_QPT_RC, qp_access, srq);
}

/* Moves @qp to RTS, connected to @dest on this device. */
static inline void connect_qp(struct ibv_qp *qp, uint32_t dest, int rnr_retry)
{
	test_connect_rc(ctx, qp, gid_index, dest, rnr_retry);
}

static inline void pair_init(struct pair *p, int b_access, int rnr_retry)
{
	side_init(&p->a, NULL, ALL_ACCESS, NULL);
	side_init(&p->b, NULL, b_access, NULL);
	connect_qp(p->a.qp, p->b.qp->qp_num, rnr_retry);
	connect_qp(p->b.qp, p->a.qp->qp_num, rnr_retry);
}

static inline void side_fini(struct side *s, int own_pd)
{
	CHECK_EQ(ibv_destroy_qp(s->qp), 0);
	CHECK_EQ(ibv_destroy_cq(s->cq), 0);
	CHECK_EQ(ibv_dereg_mr(s->mr), 0);
	if (own_pd)
		CHECK_EQ(ibv_dealloc_pd(s->pd), 0);
	free(s->buf);
}

static inline void pair_fini(struct pair *p)
{
	side_fini(&p->a, 1);
	side_fini(&p->b, 1);
}

/* Splits [addr, addr+len) into up to @n SGEs of @mr. */
static inline int split_sges(struct ibv_sge *sge, int n, char *addr, uint32_t len,
		      struct ibv_mr *mr)
{
	uint32_t chunk = len / n + 1, off = 0;
	int i;

	for (i = 0; off < len || i == 0; i++) {
		uint32_t l = len - off < chunk ? len - off : chunk;

		sge[i] = (struct ibv_sge) { (uintptr_t)addr + off, l, mr->lkey };
		off += l;
		if (!len)
			return 1;
	}
	return i;
}

static inline struct ibv_wc post_wait(struct side *s, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;

	wr->send_flags |= IBV_SEND_SIGNALED;
	CHECK_EQ(ibv_post_send(s->qp, wr, &bad), 0);
	return test_poll_one(s->cq, 5);
}

static inline void fill(char *p, size_t len, unsigned int seed)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (char)(seed + i * 7 + (i >> 9));
}

static inline int wait_data(const void *dst, const void *src, size_t len)
{
	for (int i = 0; i < 5000; i++) {
		if (!memcmp(dst, src, len))
			return 1;
		usleep(1000);
	}
	return 0;
}

#endif /* SOFTRMA_PAIR_H */
