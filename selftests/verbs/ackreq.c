// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Which requests ask for an acknowledgement on the wire (force_wire: RoCEv2
 * packets through lo), and what becomes of those that do not.
 * kselftest_harness.h cases, two QPs of one device:
 *
 * All but the last case connect with the longest ACK timeout (31: 2.4
 * hours), so that the retransmission timer does nothing within them.
 *
 *   ackreq.unsignaled_stream_few_acks
 *            256 WRITEs of 64 bytes, one per post as perftest posts them,
 *            every 8th signalled and waited for: the peer answers at most
 *            one in four (the port's sent packets less the WRITEs: 32, one
 *            per signalled WRITE), where a requester that asks at the end
 *            of every message gets 256.
 *   ackreq.both_ways_few_acks
 *            a and b each stream 32 WRITEs of 16 packets to the other at
 *            once, every 8th signalled: an ACK that one side owes the
 *            other for the requests that did not ask goes before its next
 *            message, not before each of its packets (at most 88 ACKs,
 *            where 1024 packets could each have one in front).
 *   ackreq.unsignaled_tail_probed
 *            three unsignalled WRITEs, then SQD: the SQ Drained event comes,
 *            which needs the three acknowledged, though none asked: the
 *            requester asked at SQD by sending the last packet again (one
 *            retransmission, one duplicate at the peer).
 *   ackreq.unsignaled_then_fence
 *            an unsignalled WRITE, then a fenced, signalled SEND: the SEND
 *            waits for the WRITE's acknowledgement, which the requester
 *            asks for at once (one probe).
 *   ackreq.unsignaled_then_bad_wr
 *            an unsignalled WRITE, then a signalled WRITE with a bad lkey:
 *            its error completes once the WRITE before it is acknowledged,
 *            which the requester asks for at once (one probe), not after
 *            the ACK timeout.
 *   ackreq.unsignaled_request_acked_by_reply
 *            a sends b an unsignalled SEND, b replies with a SEND, then a
 *            sends a fenced SEND: the fence finds the first SEND already
 *            acknowledged, by the ACK that b sent before its reply, and
 *            nothing is sent again.
 *   ackreq.unsignaled_to_dead_peer
 *            an unsignalled WRITE to a QP that is gone completes with
 *            RETRY_EXC_ERR after the QP's retry_cnt + 1 ACK timeouts,
 *            exactly: the probe before them is not one of them.
 *
 * usage: [SOFTRMA_DEV=softrma0] [SOFTRMA_IPV4=10.9.0.1] ackreq [HARNESS OPTIONS]
 */
#include <assert.h>
#include <fcntl.h>
#include <pthread.h>

#include "pair.h"
#include "transport.h"

#define RETRY_CNT	7

FIXTURE(ackreq) {
	struct pair p;
};

FIXTURE_SETUP(ackreq)
{
	ctx = transport_open_device(&gid_index);
	if (!transport_set(1))
		SKIP(return, "%s: %s", FORCE_WIRE, strerror(errno));
	pair_init(&self->p, ALL_ACCESS, 7);
}

FIXTURE_TEARDOWN(ackreq)
{
	pair_fini(&self->p);
	CHECK_EQ(ibv_close_device(ctx), 0);
	transport_put_back();
}

/* Connects the pair again, with the ACK timeout @timeout. */
static void reconnect(struct pair *p, int timeout)
{
	struct ibv_qp *qps[] = { p->a.qp, p->b.qp };
	struct ibv_qp_attr attr;
	union ibv_gid gid;

	CHECK_EQ(ibv_query_gid(ctx, 1, gid_index, &gid), 0);
	for (int i = 0; i < 2; i++) {
		attr = (struct ibv_qp_attr) { .qp_state = IBV_QPS_RESET };
		CHECK_EQ(ibv_modify_qp(qps[i], &attr, IBV_QP_STATE), 0);
		attr = (struct ibv_qp_attr) { .qp_state = IBV_QPS_INIT,
					      .port_num = 1,
					      .qp_access_flags = ALL_ACCESS };
		CHECK_EQ(ibv_modify_qp(qps[i], &attr, IBV_QP_STATE |
				       IBV_QP_PORT | IBV_QP_PKEY_INDEX |
				       IBV_QP_ACCESS_FLAGS), 0);
	}
	test_connect_timeout(p->a.qp, gid_index, &gid, p->b.qp->qp_num, 7,
			     timeout);
	test_connect_timeout(p->b.qp, gid_index, &gid, p->a.qp->qp_num, 7,
			     timeout);
}

/* A WRITE of @len bytes at @off of @s's buffer to the same place of @peer's. */
static void post_write_len(struct side *s, struct side *peer, uint64_t id,
			   uint32_t off, uint32_t len, int signaled)
{
	struct ibv_sge sge = { (uintptr_t)s->buf + off, len, s->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = id, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE,
		.send_flags = signaled ? IBV_SEND_SIGNALED : 0,
		.wr.rdma = { (uintptr_t)peer->buf + off, peer->mr->rkey },
	}, *bad;

	CHECK_EQ(ibv_post_send(s->qp, &wr, &bad), 0);
}

static void post_write(struct pair *p, uint64_t id, uint32_t off, int signaled)
{
	post_write_len(&p->a, &p->b, id, off, 64, signaled);
}

/* What @name counted since it was @before, past the counters' 10 ms cache. */
static unsigned long long counter_delta(const char *name,
					unsigned long long before)
{
	usleep(20000);
	return test_port_counter(ctx, name) - before;
}

TEST_F(ackreq, unsignaled_stream_few_acks)
{
	unsigned long long sent = test_port_counter(ctx, "sent_pkts");
	unsigned long long retrans = test_port_counter(ctx, "retrans_pkts");
	unsigned long long acks;
	struct ibv_wc wc;

	reconnect(&self->p, 31);
	fill(self->p.a.buf, 256 * 64, 3);
	for (uint64_t i = 0; i < 256; i++) {
		post_write(&self->p, i, i * 64, i % 8 == 7);
		if (i % 8 != 7)
			continue;
		wc = test_poll_one(self->p.a.cq, 10);
		CHECK_EQ(wc.status, IBV_WC_SUCCESS);
		CHECK_EQ(wc.wr_id, i);
	}
	CHECK(!memcmp(self->p.a.buf, self->p.b.buf, 256 * 64),
	      "the WRITEs' data did not all arrive");
	CHECK_EQ(counter_delta("retrans_pkts", retrans), 0);
	acks = counter_delta("sent_pkts", sent) - 256;
	printf("# %llu acknowledgements for 256 WRITEs, 32 of them signalled\n",
	       acks);
	CHECK(acks <= 64, "%llu acknowledgements for 256 WRITEs", acks);
}

/* One direction of both_ways_few_acks: @s streams into @peer at @base. */
struct stream {
	struct side *s, *peer;
	uint32_t base;
	pthread_barrier_t *start;	/* both streams at once */
};

#define STREAM_MSGS	32
#define STREAM_MSG_LEN	16384	/* 16 packets of the pair's MTU, 1024 */

static void *stream_writes(void *arg)
{
	const struct stream *st = arg;
	struct ibv_wc wc;

	pthread_barrier_wait(st->start);
	for (uint64_t i = 0; i < STREAM_MSGS; i++) {
		post_write_len(st->s, st->peer, i,
			       st->base + i * STREAM_MSG_LEN, STREAM_MSG_LEN,
			       i % 8 == 7);
		if (i % 8 != 7)
			continue;
		wc = test_poll_one(st->s->cq, 10);
		CHECK_EQ(wc.status, IBV_WC_SUCCESS);
		CHECK_EQ(wc.wr_id, i);
	}
	return NULL;
}

TEST_F(ackreq, both_ways_few_acks)
{
	const uint32_t half = STREAM_MSGS * STREAM_MSG_LEN;
	/*
	 * Per direction: one per message, whose end each owes an ACK, and
	 * one per request that asks (every 8th message, every 64 packets).
	 */
	const unsigned long long most = 2 * (STREAM_MSGS + STREAM_MSGS / 8 +
					     half / 1024 / 64);
	unsigned long long sent = test_port_counter(ctx, "sent_pkts");
	unsigned long long retrans = test_port_counter(ctx, "retrans_pkts");
	struct pair *p = &self->p;
	pthread_barrier_t start;
	struct stream st[2] = { { &p->a, &p->b, 0, &start },
				{ &p->b, &p->a, half, &start } };
	unsigned long long acks;
	pthread_t t;

	static_assert(2 * STREAM_MSGS * STREAM_MSG_LEN <= PAIR_BUF_LEN);
	reconnect(p, 31);
	fill(p->a.buf, half, 7);
	fill(p->b.buf + half, half, 8);
	CHECK_EQ(pthread_barrier_init(&start, NULL, 2), 0);
	CHECK_EQ(pthread_create(&t, NULL, stream_writes, &st[1]), 0);
	stream_writes(&st[0]);
	CHECK_EQ(pthread_join(t, NULL), 0);
	CHECK_EQ(pthread_barrier_destroy(&start), 0);
	CHECK(!memcmp(p->a.buf, p->b.buf, 2 * half),
	      "the WRITEs' data did not all arrive");
	CHECK_EQ(counter_delta("retrans_pkts", retrans), 0);
	acks = counter_delta("sent_pkts", sent) - 2 * half / 1024;
	printf("# %llu acknowledgements for %u WRITEs of %u packets each way\n",
	       acks, STREAM_MSGS, STREAM_MSG_LEN / 1024);
	CHECK(acks <= most, "%llu acknowledgements, more than %llu", acks,
	      most);
}

TEST_F_TIMEOUT(ackreq, unsignaled_tail_probed, 60)
{
	unsigned long long retrans = test_port_counter(ctx, "retrans_pkts");
	unsigned long long dups = test_port_counter(ctx, "duplicate_request");
	unsigned long long timeouts =
		test_port_counter(ctx, "local_ack_timeout_err");
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_SQD,
				    .en_sqd_async_notify = 1 };
	struct ibv_qp *qp = NULL;
	struct ibv_wc wc;
	int flags;

	reconnect(&self->p, 31);
	flags = fcntl(ctx->async_fd, F_GETFL);
	CHECK_EQ(fcntl(ctx->async_fd, F_SETFL, flags | O_NONBLOCK), 0);
	fill(self->p.a.buf, 3 * 64, 5);
	for (uint64_t i = 0; i < 3; i++)
		post_write(&self->p, i, i * 64, 0);
	CHECK(wait_data(self->p.b.buf, self->p.a.buf, 3 * 64),
	      "the WRITEs' data did not arrive");
	CHECK_EQ(ibv_modify_qp(self->p.a.qp, &attr, IBV_QP_STATE |
			       IBV_QP_EN_SQD_ASYNC_NOTIFY), 0);
	CHECK_EQ(test_async_event_of(ctx, test_bound(20) * 1000, &qp),
		 IBV_EVENT_SQ_DRAINED);
	CHECK(qp == self->p.a.qp, "the event is for another QP");
	CHECK_EQ(ibv_poll_cq(self->p.a.cq, 1, &wc), 0);
	CHECK_EQ(counter_delta("retrans_pkts", retrans), 1);
	CHECK_EQ(counter_delta("duplicate_request", dups), 1);
	CHECK_EQ(counter_delta("local_ack_timeout_err", timeouts), 0);
}

TEST_F_TIMEOUT(ackreq, unsignaled_then_fence, 60)
{
	unsigned long long retrans = test_port_counter(ctx, "retrans_pkts");
	struct ibv_sge sge = { (uintptr_t)self->p.a.buf + 4096, 64,
			       self->p.a.mr->lkey };
	struct ibv_sge rsge = { (uintptr_t)self->p.b.buf + 4096, 64,
				self->p.b.mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 2, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED | IBV_SEND_FENCE,
	}, *bad;
	struct ibv_recv_wr rwr = { .wr_id = 3, .sg_list = &rsge,
				   .num_sge = 1 }, *rbad;
	struct ibv_wc wc;

	reconnect(&self->p, 31);
	CHECK_EQ(ibv_post_recv(self->p.b.qp, &rwr, &rbad), 0);
	post_write(&self->p, 1, 0, 0);
	CHECK_EQ(ibv_post_send(self->p.a.qp, &wr, &bad), 0);
	wc = test_poll_one(self->p.a.cq, 10);
	CHECK_EQ(wc.wr_id, 2);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	wc = test_poll_one(self->p.b.cq, 10);
	CHECK_EQ(wc.wr_id, 3);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(counter_delta("retrans_pkts", retrans), 1);
}

TEST_F_TIMEOUT(ackreq, unsignaled_then_bad_wr, 60)
{
	unsigned long long retrans = test_port_counter(ctx, "retrans_pkts");
	struct ibv_sge sge = { (uintptr_t)self->p.a.buf, 64,
			       self->p.a.mr->lkey + 1 };
	struct ibv_send_wr wr = {
		.wr_id = 2, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { (uintptr_t)self->p.b.buf, self->p.b.mr->rkey },
	}, *bad;
	struct ibv_wc wc;

	reconnect(&self->p, 31);
	post_write(&self->p, 1, 0, 0);
	CHECK_EQ(ibv_post_send(self->p.a.qp, &wr, &bad), 0);
	wc = test_poll_one(self->p.a.cq, 10);
	CHECK_EQ(wc.wr_id, 2);
	CHECK(wc.status == IBV_WC_LOC_PROT_ERR, "status %s",
	      ibv_wc_status_str(wc.status));
	CHECK_EQ(counter_delta("retrans_pkts", retrans), 1);
}

static void post_send(struct side *s, uint64_t id, uint32_t off, int flags)
{
	struct ibv_sge sge = { (uintptr_t)s->buf + off, 64, s->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = id, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = flags,
	}, *bad;

	CHECK_EQ(ibv_post_send(s->qp, &wr, &bad), 0);
}

static void post_recv(struct side *s, uint64_t id, uint32_t off)
{
	struct ibv_sge sge = { (uintptr_t)s->buf + off, 64, s->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	CHECK_EQ(ibv_post_recv(s->qp, &wr, &bad), 0);
}

/* The next completion of @s: @id, successful. */
static void expect_wc(struct side *s, uint64_t id)
{
	struct ibv_wc wc = test_poll_one(s->cq, 10);

	CHECK_EQ(wc.wr_id, id);
	CHECK(wc.status == IBV_WC_SUCCESS, "wr %llu: %s",
	      (unsigned long long)id, ibv_wc_status_str(wc.status));
}

TEST_F_TIMEOUT(ackreq, unsignaled_request_acked_by_reply, 60)
{
	unsigned long long retrans = test_port_counter(ctx, "retrans_pkts");
	struct pair *p = &self->p;

	reconnect(p, 31);
	post_recv(&p->b, 10, 0);
	post_recv(&p->b, 11, 64);
	post_recv(&p->a, 20, 0);
	post_send(&p->a, 1, 0, 0);
	expect_wc(&p->b, 10);
	post_send(&p->b, 2, 128, IBV_SEND_SIGNALED);
	expect_wc(&p->b, 2);
	expect_wc(&p->a, 20);
	post_send(&p->a, 3, 64, IBV_SEND_SIGNALED | IBV_SEND_FENCE);
	expect_wc(&p->a, 3);
	expect_wc(&p->b, 11);
	CHECK_EQ(counter_delta("retrans_pkts", retrans), 0);
}

TEST_F_TIMEOUT(ackreq, unsignaled_to_dead_peer, 120)
{
	unsigned long long timeouts =
		test_port_counter(ctx, "local_ack_timeout_err");
	struct ibv_wc wc;

	CHECK_EQ(ibv_destroy_qp(self->p.b.qp), 0);
	self->p.b.qp = test_create_qp(self->p.b.pd, self->p.b.cq, NULL,
				      IBV_QPT_RC, ALL_ACCESS);
	post_write(&self->p, 7, 0, 0);
	wc = test_poll_one(self->p.a.cq, 60);
	CHECK_EQ(wc.wr_id, 7);
	CHECK(wc.status == IBV_WC_RETRY_EXC_ERR, "status %s",
	      ibv_wc_status_str(wc.status));
	CHECK_EQ(counter_delta("local_ack_timeout_err", timeouts),
		 RETRY_CNT + 1);
}

TRANSPORT_HARNESS_MAIN
