// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A thread that moves the user's ring indices under the kernel's feet.
 *
 *   sq_err    the SQ producer is kept a ring ahead of the consumer of a QP
 *             in error for RACE seconds: the doorbell must return within
 *             BOUND seconds all the same.
 *   rq_err    the RQ producer of a QP in error is kept a ring ahead and its
 *             CQ consumer at the producer: destroying the QP meanwhile must
 *             finish within BOUND seconds.
 *   write_imm the RQ producer flips between "none" and "one more" while
 *             WRITE_WITH_IMMs of 16 MiB land: the one receive really posted
 *             completes once, never again (its wr_id reread after the data
 *             moved).  A flip behind the consumer is an impossible producer
 *             and ends the run with REM_OP_ERR, the QP in error.
 *   drain_lie the SQ's SOFTRMA_RING_DRAINING is kept set by a thread: the
 *             provider rings no doorbell and the kernel, which never reads
 *             the flag, runs none of that QP's entries; another QP of the
 *             process completes its work meanwhile, and the first post
 *             after the flag is cleared runs both entries, in order.
 *   drain_stream
 *             STREAM_N 64-byte WRITEs posted one by one in bursts, the last
 *             of each waited for: each completes within BOUND seconds (no
 *             entry is left behind by a doorbell the provider skipped) and
 *             the target holds the last sequence number written to each
 *             slot; three times as the kernel sets and clears the flag,
 *             once with a thread that clears it all along (more doorbells,
 *             nothing lost).
 *
 * usage: ring_racer DEV IPV4 sq_err|rq_err|write_imm|drain_lie|drain_stream
 */
#include <inttypes.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>

#define PAIR_BUF_LEN (32 << 20)
#include "pair.h"
#include "softrma.h"	/* the provider's rings */

#define RACE	5
#define BOUND	2

static struct softrma_ring *race_ring;
static struct softrma_ring *race_cq;	/* rq_err: its consumer follows */
static atomic_int race_mode, race_stop;
static sigjmp_buf race_fault;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The racer touches rings that destroy_qp unmaps under it. */
static void race_segv(int sig)
{
	(void)sig;
	siglongjmp(race_fault, 1);
}

static void *racer(void *arg)
{
	struct softrma_ring_hdr *hdr = race_ring->hdr;
	double end = now() + RACE;
	volatile unsigned int flip = 0;

	(void)arg;
	if (sigsetjmp(race_fault, 1))
		return NULL;
	/* Flipping goes on until stopped: a WRITE may wait for "one more". */
	while (!atomic_load(&race_stop) && (atomic_load(&race_mode) || now() < end)) {
		uint32_t c = softrma_ring_load(&hdr->consumer);

		if (atomic_load(&race_mode))
			softrma_ring_store(&hdr->producer, c + (flip ^= 1));
		else
			softrma_ring_store(&hdr->producer, c + race_ring->num);
		if (race_cq)
			softrma_ring_store(&race_cq->hdr->consumer,
					   softrma_ring_load(&race_cq->hdr->producer));
	}
	return NULL;
}

static pthread_t race_start(struct softrma_ring *ring, struct softrma_ring *cq,
			    int flip)
{
	pthread_t t;

	race_ring = ring;
	race_cq = cq;
	atomic_store(&race_mode, flip);
	atomic_store(&race_stop, 0);
	CHECK_EQ(pthread_create(&t, NULL, racer, NULL), 0);
	return t;
}

/*
 * Gives @s a QP of the largest rings, in INIT, on the largest CQ: the
 * longer the kernel takes to drain a ring, the surer the racer refills it
 * first, and a flush never stops on a full CQ, which the racer empties.
 */
static void big_rings(struct side *s)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC, .send_cq = s->cq, .recv_cq = s->cq,
		.cap = { .max_send_wr = 16384, .max_recv_wr = 16384,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = ALL_ACCESS,
	};

	CHECK_EQ(ibv_destroy_qp(s->qp), 0);
	CHECK_EQ(ibv_destroy_cq(s->cq), 0);
	s->cq = ibv_create_cq(ctx, 65536, NULL, NULL, 0);
	CHECK(s->cq, "create_cq: %s", strerror(errno));
	init.send_cq = init.recv_cq = s->cq;
	s->qp = ibv_create_qp(s->pd, &init);
	CHECK(s->qp, "create_qp: %s", strerror(errno));
	CHECK_EQ(ibv_modify_qp(s->qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			       IBV_QP_PORT | IBV_QP_ACCESS_FLAGS), 0);
}

static void to_error(struct ibv_qp *qp)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };

	CHECK_EQ(ibv_modify_qp(qp, &attr, IBV_QP_STATE), 0);
}

static void test_sq_err(void)
{
	struct softrma_qp *sqp;
	struct pair p;
	pthread_t t;
	double t0;

	pair_init(&p, ALL_ACCESS, 0);
	big_rings(&p.a);
	sqp = container_of(p.a.qp, struct softrma_qp, ibqp);
	to_error(p.a.qp);
	t = race_start(&sqp->sq, NULL, 0);
	usleep(100000);
	t0 = now();
	CHECK_EQ(write(ctx->cmd_fd, &sqp->doorbell, sizeof(sqp->doorbell)),
		 (ssize_t)sizeof(sqp->doorbell));
	t0 = now() - t0;
	atomic_store(&race_stop, 1);
	pthread_join(t, NULL);
	CHECK(t0 < test_bound(BOUND), "the doorbell took %.1f s against a racing producer", t0);
	printf("# SQ producer racing in error: the doorbell returned after %.3f s\n", t0);
	pair_fini(&p);
}

static void test_rq_err(void)
{
	struct softrma_qp *sqp;
	struct pair p;
	pthread_t t;
	double t0;

	pair_init(&p, ALL_ACCESS, 0);
	big_rings(&p.b);
	sqp = container_of(p.b.qp, struct softrma_qp, ibqp);
	signal(SIGSEGV, race_segv);
	t = race_start(&sqp->rq, &to_scq(p.b.cq)->ring, 0);
	to_error(p.b.qp);
	usleep(500000);
	t0 = now();
	CHECK_EQ(ibv_destroy_qp(p.b.qp), 0);
	t0 = now() - t0;
	atomic_store(&race_stop, 1);
	pthread_join(t, NULL);
	signal(SIGSEGV, SIG_DFL);
	CHECK(t0 < test_bound(BOUND), "destroy_qp took %.1f s against a racing RQ producer", t0);
	printf("# RQ producer and CQ consumer racing in error: destroy_qp returned after %.3f s\n",
	       t0);
	CHECK_EQ(ibv_destroy_cq(p.b.cq), 0);
	CHECK_EQ(ibv_dereg_mr(p.b.mr), 0);
	CHECK_EQ(ibv_dealloc_pd(p.b.pd), 0);
	free(p.b.buf);
	side_fini(&p.a, 1);
}

static void test_write_imm(void)
{
	struct ibv_sge sge, rsge;
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_WRITE_WITH_IMM };
	struct ibv_recv_wr rwr = { .wr_id = 1, .sg_list = &rsge, .num_sge = 1 }, *rbad;
	int first = 0, n = 0;
	struct ibv_wc wc;
	struct pair p;
	pthread_t t;

	pair_init(&p, ALL_ACCESS, 7);
	rsge = (struct ibv_sge) { (uintptr_t)p.b.buf, 16, p.b.mr->lkey };
	CHECK_EQ(ibv_post_recv(p.b.qp, &rwr, &rbad), 0);
	sge = (struct ibv_sge) { (uintptr_t)p.a.buf, 16 << 20, p.a.mr->lkey };
	wr.wr.rdma.remote_addr = (uintptr_t)p.b.buf + (16 << 20);
	wr.wr.rdma.rkey = p.b.mr->rkey;
	CHECK_EQ(post_wait(&p.a, &wr).status, IBV_WC_SUCCESS);

	t = race_start(&container_of(p.b.qp, struct softrma_qp, ibqp)->rq, NULL, 1);
	for (int i = 0; i < 10; i++) {
		wc = post_wait(&p.a, &wr);
		if (wc.status == IBV_WC_REM_OP_ERR)
			break;
		CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	}
	atomic_store(&race_stop, 1);
	pthread_join(t, NULL);
	while (ibv_poll_cq(p.b.cq, 1, &wc) > 0) {
		if (wc.status != IBV_WC_SUCCESS)
			continue;	/* flushed once the QP went to error */
		first += wc.wr_id == 1;
		n++;
	}
	CHECK(first == 1, "the one receive posted completed %d times", first);
	printf("# RQ producer flipping under WRITE_WITH_IMM: %d receives, the posted one once\n", n);
	pair_fini(&p);
}

static atomic_uint flag_value;

/* Stores flag_value into the SQ's consumer_flags until stopped. */
static void *flag_racer(void *arg)
{
	_Atomic uint32_t *flags = (_Atomic uint32_t *)&race_ring->hdr->consumer_flags;

	(void)arg;
	while (!atomic_load(&race_stop))
		atomic_store(flags, atomic_load(&flag_value));
	return NULL;
}

static pthread_t flag_start(struct ibv_qp *qp, uint32_t value)
{
	pthread_t t;

	race_ring = &container_of(qp, struct softrma_qp, ibqp)->sq;
	atomic_store(&flag_value, value);
	atomic_store(&race_stop, 0);
	CHECK_EQ(pthread_create(&t, NULL, flag_racer, NULL), 0);
	return t;
}

static void flag_stop(pthread_t t)
{
	atomic_store(&race_stop, 1);
	pthread_join(t, NULL);
}

static void write_wr(struct pair *p, struct ibv_send_wr *wr, struct ibv_sge *sge,
		     size_t off, uint32_t len)
{
	*sge = (struct ibv_sge) { (uintptr_t)p->a.buf + off, len, p->a.mr->lkey };
	*wr = (struct ibv_send_wr) { .sg_list = sge, .num_sge = 1,
				     .opcode = IBV_WR_RDMA_WRITE };
	wr->wr.rdma.remote_addr = (uintptr_t)p->b.buf + off;
	wr->wr.rdma.rkey = p->b.mr->rkey;
}

static void test_drain_lie(void)
{
	struct ibv_send_wr wr, *bad;
	struct pair p, other;
	struct ibv_sge sge;
	struct ibv_wc wc;
	pthread_t t;

	pair_init(&p, ALL_ACCESS, 0);
	pair_init(&other, ALL_ACCESS, 0);
	fill(p.a.buf, 8192, 1);
	t = flag_start(p.a.qp, SOFTRMA_RING_DRAINING);
	usleep(10000);
	write_wr(&p, &wr, &sge, 0, 4096);
	wr.wr_id = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	CHECK_EQ(ibv_post_send(p.a.qp, &wr, &bad), 0);

	/* The liar's own QP waits; another QP does not. */
	fill(other.a.buf, 4096, 2);
	write_wr(&other, &wr, &sge, 0, 4096);
	CHECK_EQ(post_wait(&other.a, &wr).status, IBV_WC_SUCCESS);
	CHECK(!memcmp(other.b.buf, other.a.buf, 4096), "the other QP's WRITE");
	usleep(200000);
	CHECK_EQ(ibv_poll_cq(p.a.cq, 1, &wc), 0);
	for (int i = 0; i < 4096; i++)
		CHECK(!p.b.buf[i], "an entry ran without a doorbell");

	flag_stop(t);
	atomic_store((_Atomic uint32_t *)&race_ring->hdr->consumer_flags, 0);
	write_wr(&p, &wr, &sge, 4096, 4096);
	wr.wr_id = 2;
	wr.send_flags = IBV_SEND_SIGNALED;
	CHECK_EQ(ibv_post_send(p.a.qp, &wr, &bad), 0);
	for (uint64_t id = 1; id <= 2; id++) {
		wc = test_poll_one(p.a.cq, BOUND);
		CHECK_EQ(wc.status, IBV_WC_SUCCESS);
		CHECK(wc.wr_id == id, "completion %" PRIu64 " came as %" PRIu64,
		      id, (uint64_t)wc.wr_id);
	}
	CHECK(!memcmp(p.b.buf, p.a.buf, 8192), "the two WRITEs' data");
	printf("# SQ flag set by the process: its entries wait for a doorbell, another QP's do not\n");
	pair_fini(&other);
	pair_fini(&p);
}

#define STREAM_N	98304
#define STREAM_WINDOW	64	/* test_create_qp()'s send queue */
#define STREAM_SLOTS	4096

/*
 * Posts STREAM_N WRITEs of slot sequence numbers in bursts of 1 to
 * STREAM_WINDOW, the last of each signaled and waited for: an entry the
 * kernel left behind after the provider skipped its doorbell is the one
 * waited for, sooner or later.
 */
static void stream(struct pair *p)
{
	unsigned long long db = test_port_counter(ctx, "doorbells");
	struct ibv_send_wr wr, *bad;
	uint32_t posted = 0, seed = 1;
	struct ibv_sge sge;
	struct ibv_wc wc;

	while (posted < STREAM_N) {
		uint32_t burst = 1 + (seed = seed * 1103515245 + 12345) % STREAM_WINDOW;

		for (uint32_t i = 0; i < burst && posted < STREAM_N; i++, posted++) {
			size_t off = (size_t)(posted % STREAM_SLOTS) * 64;

			memcpy(p->a.buf + off, &posted, sizeof(posted));
			write_wr(p, &wr, &sge, off, 64);
			wr.wr_id = posted;
			wr.send_flags = i == burst - 1 || posted == STREAM_N - 1 ?
					IBV_SEND_SIGNALED : 0;
			CHECK_EQ(ibv_post_send(p->a.qp, &wr, &bad), 0);
		}
		wc = test_poll_one(p->a.cq, BOUND);
		CHECK_EQ(wc.status, IBV_WC_SUCCESS);
		CHECK(wc.wr_id == posted - 1, "completion of %" PRIu64 " after %u posted",
		      (uint64_t)wc.wr_id, posted);
	}
	for (uint32_t slot = 0; slot < STREAM_SLOTS; slot++) {
		uint32_t want = STREAM_N - 1 - (STREAM_N - 1 - slot) % STREAM_SLOTS, got;

		memcpy(&got, p->b.buf + (size_t)slot * 64, sizeof(got));
		CHECK(got == want, "slot %u holds %u, not %u", slot, got, want);
	}
	printf("# %u WRITEs, %llu doorbells\n", STREAM_N,
	       test_port_counter(ctx, "doorbells") - db);
}

static void test_drain_stream(void)
{
	struct pair p;
	pthread_t t;

	pair_init(&p, ALL_ACCESS, 0);
	for (int i = 0; i < 3; i++)
		stream(&p);
	t = flag_start(p.a.qp, 0);
	stream(&p);
	flag_stop(t);
	printf("# streamed WRITEs all landed, with the flag as the kernel keeps it and cleared by a thread\n");
	pair_fini(&p);
}

int main(int argc, char **argv)
{
	CHECK(argc == 4, "usage: ring_racer DEV IPV4 sq_err|rq_err|write_imm|drain_lie|drain_stream");
	setvbuf(stdout, NULL, _IOLBF, 0);
	ctx = test_open_device(argv[1]);
	gid_index = test_find_ipv4_gid(ctx, argv[2]);
	if (!strcmp(argv[3], "sq_err"))
		test_sq_err();
	else if (!strcmp(argv[3], "rq_err"))
		test_rq_err();
	else if (!strcmp(argv[3], "write_imm"))
		test_write_imm();
	else if (!strcmp(argv[3], "drain_lie"))
		test_drain_lie();
	else if (!strcmp(argv[3], "drain_stream"))
		test_drain_stream();
	else
		FAIL("unknown case %s", argv[3]);
	CHECK_EQ(ibv_close_device(ctx), 0);
	return KSFT_PASS;
}
