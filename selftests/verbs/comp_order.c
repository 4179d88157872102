// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Completion order across an RC connection (issue 27): the client posts a
 * receive, then a SEND, and waits for the SEND's completion; the server
 * answers each SEND at once with a SEND of its own, which lands in that
 * receive.  The responder's acknowledgement leaves before anything its
 * application sends in reply, so the client's SEND completes before the
 * reply's receive does, every one of ITERS times.  Each side has a send
 * CQ and a receive CQ that share one completion channel, as in librpma's
 * example 12scch-receive-completion-queue; the client's messages take
 * four sizes in turn, of one to five packets of the path MTU.  With
 * READ_BYTES, the client reads that many bytes of the server's memory
 * before each SEND: the server's acknowledgement of the SEND waits behind
 * its READ responses, and its reply must wait behind that.
 *
 * How each side waits, CLIENT_WAIT and SERVER_WAIT:
 *   event  on its channel, then it polls the CQ of the event (librpma's
 *          rpma_conn_wait()): the client's first completion must be the
 *          SEND's;
 *   poll   it polls both CQs, the receive CQ first: the client finding
 *          the reply's receive completion must find the SEND's already.
 *
 * usage: comp_order CLIENT_DEV CLIENT_IPV4 SERVER_DEV SERVER_IPV4 ITERS
 *                   CLIENT_WAIT SERVER_WAIT [READ_BYTES]
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "test.h"

#define DEPTH		16	/* receives the server keeps posted */
#define MAX_MSG		5000
#define WAIT_S		10	/* for one completion, at most */
#define REPORT		5	/* misorders described, at most */

static const uint32_t sizes[] = { 8, 1024, 1500, MAX_MSG };

struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *channel;
	struct ibv_cq *send_cq, *recv_cq;
	struct ibv_qp *qp;
	uint8_t buf[2][MAX_MSG];	/* to send, to receive */
	struct ibv_mr *mr;
	uint8_t *rd;			/* READ_BYTES: read from, read into */
	struct ibv_mr *rd_mr;
	int gid_index;
	union ibv_gid gid;
	int event;			/* waits on its channel */
};

static struct side client, server;
static long iters;
static uint32_t read_bytes;

static void side_init(struct side *s, const char *dev, const char *ipv4,
		      const char *wait)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = DEPTH, .max_recv_wr = DEPTH,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ,
	};

	CHECK(!strcmp(wait, "event") || !strcmp(wait, "poll"),
	      "wait: event or poll, not %s", wait);
	s->event = !strcmp(wait, "event");
	s->ctx = test_open_device(dev);
	s->gid_index = test_find_ipv4_gid(s->ctx, ipv4);
	CHECK_EQ(ibv_query_gid(s->ctx, 1, s->gid_index, &s->gid), 0);
	s->pd = ibv_alloc_pd(s->ctx);
	CHECK(s->pd, "alloc_pd");
	s->channel = ibv_create_comp_channel(s->ctx);
	CHECK(s->channel, "create_comp_channel: %s", strerror(errno));
	s->send_cq = ibv_create_cq(s->ctx, 2 * DEPTH, NULL, s->channel, 0);
	s->recv_cq = ibv_create_cq(s->ctx, 2 * DEPTH, NULL, s->channel, 0);
	CHECK(s->send_cq && s->recv_cq, "create_cq: %s", strerror(errno));
	CHECK_EQ(ibv_req_notify_cq(s->send_cq, 0), 0);
	CHECK_EQ(ibv_req_notify_cq(s->recv_cq, 0), 0);
	init.send_cq = s->send_cq;
	init.recv_cq = s->recv_cq;
	s->qp = ibv_create_qp(s->pd, &init);
	CHECK(s->qp, "create_qp: %s", strerror(errno));
	CHECK_EQ(ibv_modify_qp(s->qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			       IBV_QP_PORT | IBV_QP_ACCESS_FLAGS), 0);
	s->mr = ibv_reg_mr(s->pd, s->buf, sizeof(s->buf), IBV_ACCESS_LOCAL_WRITE);
	CHECK(s->mr, "reg_mr: %s", strerror(errno));
	if (!read_bytes)
		return;
	s->rd = calloc(1, read_bytes);
	CHECK(s->rd, "calloc");
	s->rd_mr = ibv_reg_mr(s->pd, s->rd, read_bytes, IBV_ACCESS_LOCAL_WRITE |
			      IBV_ACCESS_REMOTE_READ);
	CHECK(s->rd_mr, "reg_mr: %s", strerror(errno));
}

static void side_fini(struct side *s)
{
	CHECK_EQ(ibv_destroy_qp(s->qp), 0);
	CHECK_EQ(ibv_destroy_cq(s->send_cq), 0);
	CHECK_EQ(ibv_destroy_cq(s->recv_cq), 0);
	CHECK_EQ(ibv_destroy_comp_channel(s->channel), 0);
	CHECK_EQ(ibv_dereg_mr(s->mr), 0);
	if (s->rd_mr)
		CHECK_EQ(ibv_dereg_mr(s->rd_mr), 0);
	free(s->rd);
	CHECK_EQ(ibv_dealloc_pd(s->pd), 0);
	CHECK_EQ(ibv_close_device(s->ctx), 0);
}

static void post_recv(struct side *s)
{
	struct ibv_sge sge = {
		(uintptr_t)s->buf[1], sizeof(s->buf[1]), s->mr->lkey,
	};
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;

	CHECK_EQ(ibv_post_recv(s->qp, &wr, &bad), 0);
}

/* A SEND of @len bytes that start with @seq. */
static void post_send(struct side *s, uint32_t seq, uint32_t len)
{
	struct ibv_sge sge = { (uintptr_t)s->buf[0], len, s->mr->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	memcpy(s->buf[0], &seq, sizeof(seq));
	CHECK_EQ(ibv_post_send(s->qp, &wr, &bad), 0);
}

/* An unsignaled READ of the server's READ_BYTES into the client's. */
static void post_read(void)
{
	struct ibv_sge sge = {
		(uintptr_t)client.rd, read_bytes, client.rd_mr->lkey,
	};
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_READ,
		.wr.rdma = { (uintptr_t)server.rd, server.rd_mr->rkey },
	}, *bad;

	CHECK_EQ(ibv_post_send(client.qp, &wr, &bad), 0);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Waits up to WAIT_S for an event on @s's channel: its CQ, armed again. */
static struct ibv_cq *wait_event(struct side *s)
{
	struct pollfd pfd = { .fd = s->channel->fd, .events = POLLIN };
	struct ibv_cq *cq;
	void *cq_ctx;

	CHECK(poll(&pfd, 1, test_bound(WAIT_S) * 1000) == 1,
	      "no completion event within %d s", test_bound(WAIT_S));
	CHECK_EQ(ibv_get_cq_event(s->channel, &cq, &cq_ctx), 0);
	ibv_ack_cq_events(cq, 1);
	CHECK_EQ(ibv_req_notify_cq(cq, 0), 0);
	return cq;
}

/*
 * The client's next completion: of the CQ whose event comes first on its
 * channel, as rpma_conn_wait() returns it; or, polling, of its receive CQ,
 * else of its send CQ.
 */
static struct ibv_wc next_wc(struct side *s)
{
	double end = now() + test_bound(WAIT_S);
	struct ibv_wc wc;

	for (;;) {
		if (s->event) {
			if (ibv_poll_cq(wait_event(s), 1, &wc) == 1)
				return wc;
		} else if (ibv_poll_cq(s->recv_cq, 1, &wc) == 1 ||
			   ibv_poll_cq(s->send_cq, 1, &wc) == 1) {
			return wc;
		}
		CHECK(now() < end, "no completion within %d s",
		      test_bound(WAIT_S));
	}
}

static void check_wc(const struct ibv_wc *wc)
{
	CHECK(wc->status == IBV_WC_SUCCESS, "%s completed with %s",
	      wc->opcode == IBV_WC_SEND ? "SEND" : "receive",
	      ibv_wc_status_str(wc->status));
	CHECK(wc->opcode == IBV_WC_SEND || wc->opcode == IBV_WC_RECV,
	      "opcode 0x%x", wc->opcode);
}

/*
 * Answers every SEND at once with its first 4 bytes, the sequence number.
 * Its send CQ comes first on every round: the client's next SEND may be
 * there each time the server looks.  Waiting on its channel, the server
 * looks at both CQs after each event: a CQ armed again after its event has
 * every completion seen.
 */
static void *serve(void *arg)
{
	double end = now() + test_bound(WAIT_S);
	long answered = 0, sent = 0;
	struct ibv_wc wc;
	uint32_t seq;

	(void)arg;
	for (int i = 0; i < DEPTH; i++)
		post_recv(&server);
	while (answered < iters || sent < iters) {
		if (ibv_poll_cq(server.send_cq, 1, &wc) == 1) {
			check_wc(&wc);
			CHECK_EQ(wc.opcode, IBV_WC_SEND);
			sent++;
			end = now() + test_bound(WAIT_S);
			continue;
		}
		if (ibv_poll_cq(server.recv_cq, 1, &wc) != 1) {
			CHECK(now() < end, "server: no completion within %d s",
			      test_bound(WAIT_S));
			if (server.event)
				wait_event(&server);
			continue;
		}
		end = now() + test_bound(WAIT_S);
		check_wc(&wc);
		CHECK_EQ(wc.opcode, IBV_WC_RECV);
		memcpy(&seq, server.buf[1], sizeof(seq));
		CHECK_EQ(seq, answered);
		post_send(&server, seq, sizeof(seq));
		answered++;
		if (answered + DEPTH <= iters)
			post_recv(&server);
	}
	return NULL;
}

/*
 * One ping-pong: true when the reply's receive completion came before the
 * SEND's.  Polling, the send CQ is looked at again right after the receive
 * CQ: a SEND completion that was there first is found.
 */
static int ping(uint32_t seq)
{
	int send_done = 0, recv_done = 0, misordered = 0;
	struct ibv_wc wc;
	uint32_t got;

	post_recv(&client);
	if (read_bytes)
		post_read();
	post_send(&client, seq, sizes[seq % 4]);
	while (!send_done || !recv_done) {
		wc = next_wc(&client);
		check_wc(&wc);
		if (wc.opcode == IBV_WC_SEND) {
			send_done = 1;
			continue;
		}
		recv_done = 1;
		memcpy(&got, client.buf[1], sizeof(got));
		CHECK_EQ(got, seq);
		CHECK_EQ(wc.byte_len, sizeof(got));
		if (!send_done && !client.event &&
		    ibv_poll_cq(client.send_cq, 1, &wc) == 1) {
			check_wc(&wc);
			CHECK_EQ(wc.opcode, IBV_WC_SEND);
			send_done = 1;
		}
		misordered = !send_done;
	}
	return misordered;
}

int main(int argc, char **argv)
{
	long misordered = 0;
	pthread_t thread;
	double start;

	CHECK(argc == 8 || argc == 9, "usage: comp_order CLIENT_DEV CLIENT_IPV4 "
	      "SERVER_DEV SERVER_IPV4 ITERS event|poll event|poll [READ_BYTES]");
	iters = atol(argv[5]);
	CHECK(iters > 0, "ITERS %s", argv[5]);
	read_bytes = argc == 9 ? atol(argv[8]) : 0;
	side_init(&client, argv[1], argv[2], argv[6]);
	side_init(&server, argv[3], argv[4], argv[7]);
	/*
	 * What is tested is order, not loss: an ACK timeout eight times the
	 * usual (537 ms) keeps three busy threads on a loaded TCG guest's two
	 * CPUs from ending a run in RETRY_EXC_ERR.
	 */
	test_connect_timeout(client.qp, client.gid_index, &server.gid,
			     server.qp->qp_num, 7, test_ack_timeout() + 3);
	test_connect_timeout(server.qp, server.gid_index, &client.gid,
			     client.qp->qp_num, 7, test_ack_timeout() + 3);

	start = now();
	CHECK_EQ(pthread_create(&thread, NULL, serve, NULL), 0);
	for (long i = 0; i < iters; i++) {
		if (!ping(i))
			continue;
		if (++misordered <= REPORT)
			printf("# ping %ld: the reply's receive completed before the SEND\n",
			       i);
	}
	CHECK_EQ(pthread_join(thread, NULL), 0);
	printf("# %ld ping-pongs in %.0f s (client %s, server %s, %u bytes read before each): %ld misordered\n",
	       iters, now() - start, argv[6], argv[7], read_bytes, misordered);

	side_fini(&client);
	side_fini(&server);
	return misordered ? KSFT_FAIL : KSFT_PASS;
}
