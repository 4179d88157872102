// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Resizing CQs (ibv_resize_cq) and SRQs (ibv_modify_srq with
 * IBV_SRQ_MAX_WR) that hold work: QP a sends to QP b, a's completions go
 * to the CQ under test, b takes its receives from the SRQ under test.
 * Whatever is in a CQ or an SRQ when it is resized comes out of the new
 * ring, all of it, in order, and the new size holds; a size below what is
 * held, above the device's maximum or past the armed SRQ limit is EINVAL;
 * the limit event still fires after a resize; a ring index the process
 * corrupted makes the resize fail with EPROTO, and the queue works once
 * the index is put back; a new ring the provider cannot map leaves a CQ
 * empty and an SRQ full.  One kselftest_harness.h case per behaviour, each
 * run on both transports: the fixture's variants "local" and "wire"
 * (force_wire: RoCEv2 packets through lo), where completions and receives
 * are taken while the resize runs.
 *
 * usage: [SOFTRMA_DEV=softrma0] [SOFTRMA_IPV4=10.9.0.1] resize [HARNESS OPTIONS]
 * (-h: -l lists the cases, -v wire runs one variant,
 * -r resize.wire.cq_grow_keeps_completions one case)
 */
#include <stdint.h>
#include <sys/resource.h>
#include <unistd.h>

#include "softrma.h"	/* the provider's CQ and SRQ, to reach their rings */
#include "transport.h"

#define BUF_LEN		(1 << 20)
#define RECV_OFF	(BUF_LEN / 2)	/* receive j lands at RECV_OFF + j * SLOT */
#define SLOT		64
#define FIRST_RECV	100		/* wr_id of the SRQ's first receive */
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
	uint32_t posted;	/* receives posted to the SRQ */
	uint32_t sent;		/* SENDs a posted */
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

/* @n receives of one SGE each to the SRQ, numbered on from the last. */
static int post_recvs(FIXTURE_DATA(resize) *self, int n)
{
	for (int i = 0; i < n; i++, self->posted++) {
		struct ibv_sge sge = {
			(uintptr_t)self->buf + RECV_OFF + self->posted * SLOT,
			SLOT, self->mr->lkey,
		};
		struct ibv_recv_wr wr = { .wr_id = FIRST_RECV + self->posted,
					  .sg_list = &sge, .num_sge = 1 }, *bad;
		int ret = ibv_post_srq_recv(self->srq, &wr, &bad);

		if (ret)
			return ret;
	}
	return 0;
}

/* @n SENDs from a, each carrying its number, which is also its wr_id. */
static void post_sends(FIXTURE_DATA(resize) *self, int n)
{
	for (int i = 0; i < n; i++, self->sent++) {
		uint64_t *msg = self->buf + self->sent;
		struct ibv_sge sge = { (uintptr_t)msg, 8, self->mr->lkey };
		struct ibv_send_wr wr = {
			.wr_id = self->sent, .sg_list = &sge, .num_sge = 1,
			.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
		}, *bad;

		*msg = 0x5e0d0000 + self->sent;
		CHECK_EQ(ibv_post_send(self->a, &wr, &bad), 0);
	}
}

/*
 * The SENDs @first to @first + @n - 1 completed on both sides, message k
 * in receive k: b's completions are the SRQ's receives in the order they
 * were posted.
 */
static void check_sends(FIXTURE_DATA(resize) *self, uint32_t first, int n)
{
	struct ibv_wc wc;

	poll_in_order(self->cq, first, n);
	for (uint32_t k = first; k < first + n; k++) {
		wc = test_poll_one(self->cq_b, 5);
		if (wc.status != IBV_WC_SUCCESS)
			FAIL("receive %u: %s", k, ibv_wc_status_str(wc.status));
		CHECK_EQ(wc.wr_id, FIRST_RECV + k);
		CHECK_EQ(wc.byte_len, 8);
		CHECK_EQ(self->buf[(RECV_OFF + k * SLOT) / 8], 0x5e0d0000 + k);
	}
}

static void send_and_check(FIXTURE_DATA(resize) *self, int n)
{
	uint32_t first = self->sent;

	post_sends(self, n);
	check_sends(self, first, n);
}

static uint32_t srq_max_wr(struct ibv_srq *srq)
{
	struct ibv_srq_attr attr;

	CHECK_EQ(ibv_query_srq(srq, &attr), 0);
	return attr.max_wr;
}

static int srq_resize(struct ibv_srq *srq, uint32_t max_wr)
{
	struct ibv_srq_attr attr = { .max_wr = max_wr };

	return ibv_modify_srq(srq, &attr, IBV_SRQ_MAX_WR);
}

/*
 * An SRQ of 16 with 10 receives grows to 64 and takes 40 more: all 50 are
 * consumed, in order.
 */
TEST_F(resize, srq_grow_keeps_receives)
{
	connect_ab(self, 256, 0, 16);
	CHECK_EQ(post_recvs(self, 10), 0);
	CHECK_EQ(srq_resize(self->srq, 64), 0);
	CHECK_EQ(srq_max_wr(self->srq), 64);
	CHECK_EQ(post_recvs(self, 40), 0);
	send_and_check(self, 50);
}

/* An SRQ of 64 with 10 receives shrinks to 16, which then holds 16. */
TEST_F(resize, srq_shrink_keeps_receives)
{
	connect_ab(self, 256, 0, 64);
	CHECK_EQ(post_recvs(self, 10), 0);
	CHECK_EQ(srq_resize(self->srq, 16), 0);
	CHECK_EQ(srq_max_wr(self->srq), 16);
	CHECK_EQ(post_recvs(self, 6), 0);
	CHECK_EQ(post_recvs(self, 1), ENOMEM);
	send_and_check(self, 16);
}

/*
 * Resized to and fro while the responder takes its receives (on the wire,
 * packet by packet): every message lands in its own receive, in order.
 */
TEST_F(resize, srq_resize_while_receiving)
{
	static const uint32_t sizes[] = { 128, 64, 256, 64 };

	connect_ab(self, 256, 0, 64);
	CHECK_EQ(post_recvs(self, 60), 0);
	post_sends(self, 50);
	for (unsigned int i = 0; i < sizeof(sizes) / sizeof(*sizes); i++)
		CHECK_EQ(srq_resize(self->srq, sizes[i]), 0);
	check_sends(self, 0, 50);
	send_and_check(self, 10);	/* the 10 receives left */
}

/* Below the receives posted: EINVAL, and the SRQ is as it was. */
TEST_F(resize, srq_below_posted_refused)
{
	connect_ab(self, 256, 0, 64);
	CHECK_EQ(post_recvs(self, 10), 0);
	CHECK_EQ(srq_resize(self->srq, 9), EINVAL);
	CHECK_EQ(srq_max_wr(self->srq), 64);
	CHECK_EQ(srq_resize(self->srq, 10), 0);
	CHECK_EQ(srq_max_wr(self->srq), 16);
	send_and_check(self, 10);
}

/* 0 and max_srq_wr + 1: EINVAL; max_srq_wr works. */
TEST_F(resize, srq_size_out_of_range_refused)
{
	struct ibv_device_attr attr;

	CHECK_EQ(ibv_query_device(ctx, &attr), 0);
	CHECK(attr.device_cap_flags & IBV_DEVICE_SRQ_RESIZE,
	      "IBV_DEVICE_SRQ_RESIZE not advertised");
	connect_ab(self, 256, 0, 16);
	CHECK_EQ(post_recvs(self, 4), 0);
	CHECK_EQ(srq_resize(self->srq, 0), EINVAL);
	CHECK_EQ(srq_resize(self->srq, attr.max_srq_wr + 1), EINVAL);
	CHECK_EQ(srq_max_wr(self->srq), 16);
	CHECK_EQ(srq_resize(self->srq, attr.max_srq_wr), 0);
	CHECK_EQ(srq_max_wr(self->srq), attr.max_srq_wr);
	send_and_check(self, 4);
}

/*
 * An armed limit stays armed through a resize and fires once fewer
 * receives than it remain; a resize below the armed limit is EINVAL.
 */
TEST_F(resize, srq_limit_event_after_resize)
{
	struct ibv_srq_attr attr = { .srq_limit = 40 };

	connect_ab(self, 256, 0, 64);
	CHECK_EQ(post_recvs(self, 10), 0);
	CHECK_EQ(ibv_modify_srq(self->srq, &attr, IBV_SRQ_LIMIT), 0);
	CHECK_EQ(srq_resize(self->srq, 16), EINVAL);
	attr.srq_limit = 5;
	CHECK_EQ(ibv_modify_srq(self->srq, &attr, IBV_SRQ_LIMIT), 0);
	CHECK_EQ(srq_resize(self->srq, 16), 0);
	CHECK_EQ(ibv_query_srq(self->srq, &attr), 0);
	CHECK_EQ(attr.max_wr, 16);
	CHECK_EQ(attr.srq_limit, 5);

	send_and_check(self, 5);		/* 5 left: not below 5 */
	CHECK_EQ(test_async_event(ctx, 200), -1);
	send_and_check(self, 1);		/* 4 left: below the limit */
	CHECK_EQ(test_async_event(ctx, 2000), IBV_EVENT_SRQ_LIMIT_REACHED);
	CHECK_EQ(ibv_query_srq(self->srq, &attr), 0);
	CHECK_EQ(attr.srq_limit, 0);
}

/*
 * A producer index the process corrupted, far ahead of the receives or
 * behind the ones taken: the resize fails with EPROTO and changes nothing;
 * with the index put back it succeeds.
 */
TEST_F(resize, srq_corrupt_producer_refused)
{
	static const uint32_t bogus[] = { 100000, 0x80000000, -11 };
	struct softrma_ring *ring;
	uint32_t producer;

	connect_ab(self, 256, 0, 64);
	CHECK_EQ(post_recvs(self, 10), 0);
	ring = &to_ssrq(self->srq)->ring;
	producer = ring->hdr->producer;
	for (unsigned int i = 0; i < sizeof(bogus) / sizeof(*bogus); i++) {
		ring->hdr->producer = producer + bogus[i];
		CHECK_EQ(srq_resize(self->srq, 32), EPROTO);
		CHECK_EQ(srq_max_wr(self->srq), 64);
	}
	ring->hdr->producer = producer;
	CHECK_EQ(srq_resize(self->srq, 32), 0);
	send_and_check(self, 10);
}

/* As cq_unmappable_ring_left_empty: the SRQ is left full. */
TEST_F(resize, srq_unmappable_ring_left_full)
{
	struct ibv_device_attr attr;

	CHECK_EQ(ibv_query_device(ctx, &attr), 0);
	connect_ab(self, 256, 0, 16);
	CHECK_EQ(post_recvs(self, 4), 0);
	limit_address_space(64 << 10);
	CHECK_EQ(srq_resize(self->srq, attr.max_srq_wr), ENOMEM);
	CHECK_EQ(post_recvs(self, 1), ENOMEM);
}

TRANSPORT_HARNESS_MAIN
