// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Resizing CQs (ibv_resize_cq) that hold work: QP a sends to QP b, a's
 * completions go to the CQ under test.  Whatever is in a CQ when it is
 * resized comes out of the new ring, all of it, in order, and the new size
 * holds; a size below what is held or above the device's maximum is
 * EINVAL; a consumer index the process corrupted makes the resize fail
 * with EPROTO, and the CQ works once the index is put back; a new ring the
 * provider cannot map leaves the CQ empty.  One kselftest_harness.h case
 * per behaviour, each run on both transports: the fixture's variants
 * "local" and "wire" (force_wire: RoCEv2 packets through lo), where
 * completions arrive while the resize runs.
 *
 * usage: [SOFTRMA_DEV=softrma0] [SOFTRMA_IPV4=10.9.0.1] resize [HARNESS OPTIONS]
 * (-h: -l lists the cases, -v wire runs one variant,
 * -r resize.wire.cq_grow_keeps_completions one case)
 */
#include <stdint.h>
#include <sys/resource.h>
#include <unistd.h>

#include "softrma.h"	/* the provider's CQ, to reach its ring */
#include "transport.h"

#define BUF_LEN		(1 << 20)
#define ACCESS		(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE)

static struct ibv_context *ctx;
static int gid_index;

/* What a case built: teardown destroys it. */
FIXTURE(resize) {
	struct ibv_pd *pd;
	struct ibv_cq_ex *cqx;	/* a's CQ when extended, else NULL */
	struct ibv_cq *cq;	/* a's CQ: the one resized */
	struct ibv_cq *cq_b;
	struct ibv_srq *srq;	/* b's receives */
	struct ibv_qp *a, *b;
	uint64_t *buf;
	struct ibv_mr *mr;
};

TRANSPORT_VARIANTS(resize);

FIXTURE_SETUP(resize)
{
	ctx = transport_open_device(&gid_index);
	if (!transport_set(variant->force_wire))
		SKIP(return, "%s: %s", FORCE_WIRE, strerror(errno));
	self->pd = ibv_alloc_pd(ctx);
	CHECK(self->pd, "alloc_pd");
	self->buf = aligned_alloc(4096, BUF_LEN);
	CHECK(self->buf, "aligned_alloc");
	memset(self->buf, 0, BUF_LEN);
	self->mr = ibv_reg_mr(self->pd, self->buf, BUF_LEN, ACCESS);
	CHECK(self->mr, "reg_mr: %s", strerror(errno));
}

/*
 * The harness runs this after a case's body returned, not after a failed
 * check: that exit()s the case's process (test.h), which releases what the
 * case built.
 */
FIXTURE_TEARDOWN(resize)
{
	if (self->a) {
		CHECK_EQ(ibv_destroy_qp(self->a), 0);
		CHECK_EQ(ibv_destroy_qp(self->b), 0);
		CHECK_EQ(ibv_destroy_cq(self->cq), 0);
		CHECK_EQ(ibv_destroy_cq(self->cq_b), 0);
	}
	if (self->srq)
		CHECK_EQ(ibv_destroy_srq(self->srq), 0);
	CHECK_EQ(ibv_dereg_mr(self->mr), 0);
	free(self->buf);
	CHECK_EQ(ibv_dealloc_pd(self->pd), 0);
	CHECK_EQ(ibv_close_device(ctx), 0);
	transport_put_back();
}

/*
 * a and b connected, a's CQ of @cqe entries (extended with @ex), b on an
 * SRQ of @srq_wr receives, none posted.
 */
static void connect_ab(FIXTURE_DATA(resize) *self, int cqe, int ex,
		       uint32_t srq_wr)
{
	struct ibv_srq_init_attr srq_init = { .attr = { .max_wr = srq_wr,
							.max_sge = 1 } };
	struct ibv_cq_init_attr_ex cq_init = { .cqe = cqe };

	if (ex) {
		self->cqx = ibv_create_cq_ex(ctx, &cq_init);
		CHECK(self->cqx, "create_cq_ex: %s", strerror(errno));
		self->cq = ibv_cq_ex_to_cq(self->cqx);
	} else {
		self->cq = ibv_create_cq(ctx, cqe, NULL, NULL, 0);
		CHECK(self->cq, "create_cq: %s", strerror(errno));
	}
	self->cq_b = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	CHECK(self->cq_b, "create_cq: %s", strerror(errno));
	self->srq = ibv_create_srq(self->pd, &srq_init);
	CHECK(self->srq, "create_srq: %s", strerror(errno));
	self->a = test_create_qp(self->pd, self->cq, NULL, IBV_QPT_RC, ACCESS);
	self->b = test_create_qp(self->pd, self->cq_b, self->srq, IBV_QPT_RC,
				 ACCESS);
	test_connect_rc(ctx, self->a, gid_index, self->b->qp_num, 7);
	test_connect_rc(ctx, self->b, gid_index, self->a->qp_num, 7);
}

/* @n signaled WRITEs of 8 bytes from a, the first with wr_id @first. */
static void post_writes(FIXTURE_DATA(resize) *self, uint64_t first, int n)
{
	for (int i = 0; i < n; i++) {
		struct ibv_sge sge = { (uintptr_t)self->buf, 8, self->mr->lkey };
		struct ibv_send_wr wr = {
			.wr_id = first + i, .sg_list = &sge, .num_sge = 1,
			.opcode = IBV_WR_RDMA_WRITE,
			.send_flags = IBV_SEND_SIGNALED,
			.wr.rdma = { (uintptr_t)(self->buf + 1), self->mr->rkey },
		}, *bad;

		CHECK_EQ(ibv_post_send(self->a, &wr, &bad), 0);
	}
}

/* Completions in @cq's ring that the provider has not polled. */
static uint32_t cq_held(struct ibv_cq *cq)
{
	struct softrma_ring *ring = &to_scq(cq)->ring;

	return softrma_ring_load(&ring->hdr->producer) - ring->index;
}

/* Waits up to 5 s (test_bound) until @cq holds @n completions. */
static void wait_held(struct ibv_cq *cq, uint32_t n)
{
	int tries = test_bound(5) * 1000;

	while (cq_held(cq) != n) {
		CHECK(--tries, "the CQ holds %u completions, want %u",
		      cq_held(cq), n);
		usleep(1000);
	}
}

/*
 * The next @n completions of @cq are successes of the work requests
 * @first, @first + 1, ..., and nothing comes after them.
 */
static void poll_in_order(struct ibv_cq *cq, uint64_t first, int n)
{
	struct ibv_wc wc;

	for (int i = 0; i < n; i++) {
		wc = test_poll_one(cq, 5);
		if (wc.status != IBV_WC_SUCCESS)
			FAIL("completion %d: %s", i, ibv_wc_status_str(wc.status));
		CHECK_EQ(wc.wr_id, first + i);
	}
	usleep(10000);
	CHECK_EQ(ibv_poll_cq(cq, 1, &wc), 0);
}

/*
 * As poll_in_order(), through ibv_start_poll() on the extended CQ @cqx,
 * which holds the @n completions already.
 */
static void poll_ex_in_order(struct ibv_cq_ex *cqx, uint64_t first, int n)
{
	struct ibv_poll_cq_attr attr = {};

	CHECK_EQ(ibv_start_poll(cqx, &attr), 0);
	for (int i = 0; i < n; i++) {
		if (i)
			CHECK_EQ(ibv_next_poll(cqx), 0);
		CHECK_EQ(cqx->status, IBV_WC_SUCCESS);
		CHECK_EQ(cqx->wr_id, first + i);
	}
	CHECK_EQ(ibv_next_poll(cqx), ENOENT);
	ibv_end_poll(cqx);
}

/*
 * A CQ of 16 holding 12 completions grows to 64: the 12 come out in order,
 * and then it holds 40.
 */
TEST_F(resize, cq_grow_keeps_completions)
{
	connect_ab(self, 16, 0, 1);
	post_writes(self, 1, 12);
	wait_held(self->cq, 12);
	CHECK_EQ(ibv_resize_cq(self->cq, 64), 0);
	CHECK_EQ(self->cq->cqe, 64);
	poll_in_order(self->cq, 1, 12);
	post_writes(self, 13, 40);
	wait_held(self->cq, 40);
	poll_in_order(self->cq, 13, 40);
	CHECK_EQ(test_qp_state(self->a), IBV_QPS_RTS);
}

/* A CQ of 64 holding 12 completions shrinks to 16, which it then fills. */
TEST_F(resize, cq_shrink_keeps_completions)
{
	connect_ab(self, 64, 0, 1);
	post_writes(self, 1, 12);
	wait_held(self->cq, 12);
	CHECK_EQ(ibv_resize_cq(self->cq, 16), 0);
	CHECK_EQ(self->cq->cqe, 16);
	poll_in_order(self->cq, 1, 12);
	post_writes(self, 13, 16);
	wait_held(self->cq, 16);
	poll_in_order(self->cq, 13, 16);
	CHECK_EQ(test_qp_state(self->a), IBV_QPS_RTS);
}

/* The extended CQ, polled with ibv_start_poll(), resized both ways. */
TEST_F(resize, cq_ex_grow_and_shrink)
{
	connect_ab(self, 16, 1, 1);
	post_writes(self, 1, 12);
	wait_held(self->cq, 12);
	CHECK_EQ(ibv_resize_cq(self->cq, 64), 0);
	poll_ex_in_order(self->cqx, 1, 12);
	post_writes(self, 13, 40);
	wait_held(self->cq, 40);
	CHECK_EQ(ibv_resize_cq(self->cq, 40), 0);
	CHECK_EQ(self->cq->cqe, 64);
	poll_ex_in_order(self->cqx, 13, 40);
}

/*
 * Resized to and fro while its 48 completions arrive (on the wire, with
 * the acknowledgements): all of them come out, in order.
 */
TEST_F(resize, cq_resize_while_completing)
{
	static const int sizes[] = { 128, 48, 256, 64, 48 };
	uint32_t held = 0;

	connect_ab(self, 64, 0, 1);
	for (int round = 0; round < 5; round++) {
		post_writes(self, 1 + round * 48, 48);
		held += cq_held(self->cq);
		for (unsigned int i = 0; i < sizeof(sizes) / sizeof(*sizes); i++)
			CHECK_EQ(ibv_resize_cq(self->cq, sizes[i]), 0);
		poll_in_order(self->cq, 1 + round * 48, 48);
	}
	printf("# %u of 240 completions had come when their round's resizes began\n",
	       held);
}

/* Below the completions it holds: EINVAL, and the CQ is as it was. */
TEST_F(resize, cq_below_held_refused)
{
	connect_ab(self, 64, 0, 1);
	post_writes(self, 1, 8);
	wait_held(self->cq, 8);
	CHECK_EQ(ibv_resize_cq(self->cq, 7), EINVAL);
	CHECK_EQ(self->cq->cqe, 64);
	CHECK_EQ(ibv_resize_cq(self->cq, 8), 0);
	CHECK_EQ(self->cq->cqe, 8);
	poll_in_order(self->cq, 1, 8);
}

/* 0, a negative size and max_cqe + 1: EINVAL; max_cqe works. */
TEST_F(resize, cq_size_out_of_range_refused)
{
	struct ibv_device_attr attr;

	CHECK_EQ(ibv_query_device(ctx, &attr), 0);
	connect_ab(self, 16, 0, 1);
	CHECK_EQ(ibv_resize_cq(self->cq, 0), EINVAL);
	CHECK_EQ(ibv_resize_cq(self->cq, -1), EINVAL);
	CHECK_EQ(ibv_resize_cq(self->cq, attr.max_cqe + 1), EINVAL);
	CHECK_EQ(self->cq->cqe, 16);
	CHECK_EQ(ibv_resize_cq(self->cq, attr.max_cqe), 0);
	CHECK_EQ(self->cq->cqe, attr.max_cqe);
	post_writes(self, 1, 4);
	poll_in_order(self->cq, 1, 4);
}

/*
 * A consumer index the process corrupted, ahead of the producer or further
 * behind it than the ring holds: the resize fails with EPROTO and changes
 * nothing; with the index put back it succeeds.
 */
TEST_F(resize, cq_corrupt_consumer_refused)
{
	static const uint32_t bogus[] = { 1, 0x80000000, -65 };
	struct softrma_ring *ring;
	uint32_t consumer;

	connect_ab(self, 64, 0, 1);
	post_writes(self, 1, 4);
	wait_held(self->cq, 4);
	ring = &to_scq(self->cq)->ring;
	consumer = ring->hdr->consumer;
	for (unsigned int i = 0; i < sizeof(bogus) / sizeof(*bogus); i++) {
		ring->hdr->consumer = consumer + 4 + bogus[i];
		CHECK_EQ(ibv_resize_cq(self->cq, 32), EPROTO);
		CHECK_EQ(self->cq->cqe, 64);
	}
	ring->hdr->consumer = consumer;
	CHECK_EQ(ibv_resize_cq(self->cq, 32), 0);
	poll_in_order(self->cq, 1, 4);
	post_writes(self, 5, 4);
	poll_in_order(self->cq, 5, 4);
}

/* Leaves this process @room bytes of address space beyond what it uses. */
static void limit_address_space(size_t room)
{
	FILE *f = fopen("/proc/self/statm", "r");
	unsigned long pages;
	struct rlimit limit;

	CHECK(f, "/proc/self/statm");
	CHECK_EQ(fscanf(f, "%lu", &pages), 1);
	fclose(f);
	CHECK_EQ(getrlimit(RLIMIT_AS, &limit), 0);
	limit.rlim_cur = pages * sysconf(_SC_PAGESIZE) + room;
	CHECK_EQ(setrlimit(RLIMIT_AS, &limit), 0);
}

/*
 * A new ring of 3 MiB with 1 MiB of address space left: the kernel has
 * switched to it, the provider cannot map it, and the resize fails with
 * mmap's ENOMEM; the CQ is left empty, not on a ring nothing fills.
 */
TEST_F(resize, cq_unmappable_ring_left_empty)
{
	struct ibv_device_attr attr;
	struct ibv_wc wc;

	CHECK_EQ(ibv_query_device(ctx, &attr), 0);
	connect_ab(self, 16, 0, 1);
	post_writes(self, 1, 4);
	wait_held(self->cq, 4);
	limit_address_space(1 << 20);
	CHECK_EQ(ibv_resize_cq(self->cq, attr.max_cqe), ENOMEM);
	CHECK_EQ(ibv_poll_cq(self->cq, 1, &wc), 0);
}

TRANSPORT_HARNESS_MAIN
