// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * SQD: a drained send queue keeps what is in flight, takes nothing new,
 * and goes on at RTS.  kselftest_harness.h cases:
 *
 *   sqd.sends_read_atomic_across_sqd
 *            two QPs, ROUNDS times: SENDs of three packets RNR NAKed by a
 *            peer without receives, a READ of 8 KiB and a fetch-and-add in
 *            flight, then SQD, more SENDs posted in SQD, SQD->RTS and the
 *            receives.  Every message arrives exactly once and in order,
 *            the READ and the atomic return what the peer held, and every
 *            WQE completes.
 *   sqd.drained_event_once
 *            two QPs: a READ, an atomic and a SEND in flight, then SQD with
 *            the drained event asked for: IBV_EVENT_SQ_DRAINED comes for
 *            that QP, once, after all three completed; a SEND posted in SQD
 *            goes at RTS.
 *   sqd_crafted.read_in_flight_across_sqd
 *            on the wire, a QP whose peer is wire/craft_resp.py: a READ of
 *            4 KiB (PSNs 0..3) is in flight when the QP goes to SQD; a SEND
 *            posted in SQD rings the doorbell and must not go; an SQD->SQD
 *            path change that would leave the wire is EBUSY while the READ
 *            is in flight; then RTS, "qpn N" and "ready" are printed, and
 *            the script sends the READ's responses among stale ones and
 *            acknowledges PSN 4, then "go" on standard input.  The READ
 *            must complete with exactly the responses' data, and the SEND
 *            after it.  Skipped unless SOFTRMA_SQD_CRAFTED is set: only
 *            device/sqd_wire.sh plays that peer.
 *
 * The cases of sqd run on both transports, the fixture's variants "local"
 * and "wire" (force_wire: RoCEv2 packets through lo).
 *
 * usage: [SOFTRMA_DEV=softrma0] [SOFTRMA_IPV4=10.9.0.1] [SOFTRMA_SQD_CRAFTED=1]
 *        sqd [HARNESS OPTIONS]
 * (-h: -l lists the cases, -f sqd runs one fixture,
 * -r sqd.wire.drained_event_once one case)
 */
#include <fcntl.h>
#include <poll.h>

#include "pair.h"
#include "transport.h"

#define ROUNDS	20

/* What a case built: teardown destroys it. */
FIXTURE(sqd) {
	struct pair p;
};

TRANSPORT_VARIANTS(sqd);

FIXTURE_SETUP(sqd)
{
	ctx = transport_open_device(&gid_index);
	if (!transport_set(variant->force_wire))
		SKIP(return, "%s: %s", FORCE_WIRE, strerror(errno));
	pair_init(&self->p, ALL_ACCESS, 7);
}

/*
 * The harness runs this after a case's body returned, not after a failed
 * check: that exit()s the case's process (test.h), which releases what the
 * case built.
 */
FIXTURE_TEARDOWN(sqd)
{
	pair_fini(&self->p);
	CHECK_EQ(ibv_close_device(ctx), 0);
	transport_put_back();
}

/* A QP on the wire whose peer, wire/craft_resp.py, the script plays. */
FIXTURE(sqd_crafted) {
	struct side s;
};

FIXTURE_SETUP(sqd_crafted)
{
	if (!getenv("SOFTRMA_SQD_CRAFTED"))
		SKIP(return, "SOFTRMA_SQD_CRAFTED is not set: only sqd_wire.sh plays the peer");
	ctx = transport_open_device(&gid_index);
	if (!transport_set(1))
		SKIP(return, "%s: %s", FORCE_WIRE, strerror(errno));
	side_init(&self->s, NULL, ALL_ACCESS, NULL);
}

FIXTURE_TEARDOWN(sqd_crafted)
{
	side_fini(&self->s, 1);
	CHECK_EQ(ibv_close_device(ctx), 0);
	transport_put_back();
}

static void modify_state(struct ibv_qp *qp, enum ibv_qp_state state)
{
	struct ibv_qp_attr attr = { .qp_state = state };

	CHECK_EQ(ibv_modify_qp(qp, &attr, IBV_QP_STATE), 0);
	CHECK_EQ(test_qp_state(qp), state);
}

static unsigned char resp_byte(size_t i)
{
	return (unsigned char)(i * 13 + 5);
}

TEST_F(sqd_crafted, read_in_flight_across_sqd)
{
	struct side *s = &self->s;
	struct ibv_sge sge;
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_qp_attr attr;
	union ibv_gid gid;
	struct ibv_wc wc;
	char line[16];

	CHECK_EQ(ibv_query_gid(ctx, 1, gid_index, &gid), 0);
	test_connect_timeout(s->qp, gid_index, &gid, 0xfffff0, 7, 0);	/* no resends */

	wr.wr_id = 1;
	wr.opcode = IBV_WR_RDMA_READ;
	sge = (struct ibv_sge) { (uintptr_t)s->buf, 4096, s->mr->lkey };
	wr.wr.rdma.remote_addr = 0x10000;
	wr.wr.rdma.rkey = 0x1234;
	CHECK_EQ(ibv_post_send(s->qp, &wr, &bad), 0);
	usleep(100000);
	modify_state(s->qp, IBV_QPS_SQD);

	wr.wr_id = 2;
	wr.opcode = IBV_WR_SEND;
	sge = (struct ibv_sge) { (uintptr_t)s->buf + 8192, 64, s->mr->lkey };
	CHECK_EQ(ibv_post_send(s->qp, &wr, &bad), 0);
	usleep(100000);
	CHECK_EQ(ibv_poll_cq(s->cq, 1, &wc), 0);

	/* The same GID, now owned locally: the path would leave the wire. */
	CHECK(force_wire_set(0), "%s: %s", FORCE_WIRE, strerror(errno));
	attr = (struct ibv_qp_attr) { .qp_state = IBV_QPS_SQD,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .dgid = gid, .sgid_index = gid_index,
				      .hop_limit = 64 } } };
	CHECK_EQ(ibv_modify_qp(s->qp, &attr, IBV_QP_STATE | IBV_QP_AV), EBUSY);
	CHECK(force_wire_set(1), "%s: %s", FORCE_WIRE, strerror(errno));
	CHECK_EQ(test_qp_state(s->qp), IBV_QPS_SQD);

	modify_state(s->qp, IBV_QPS_RTS);
	/* For the script, which reads them in a file: not left in a buffer. */
	printf("qpn %u\nready\n", s->qp->qp_num);
	fflush(stdout);
	CHECK(fgets(line, sizeof(line), stdin), "no go line");

	wc = test_poll_one(s->cq, 10);
	CHECK_EQ(wc.wr_id, 1);
	if (wc.status != IBV_WC_SUCCESS)
		FAIL("READ: %s", ibv_wc_status_str(wc.status));
	for (size_t i = 0; i < 4096; i++)
		CHECK(resp_byte(i) == (unsigned char)s->buf[i], "READ data at %zu", i);
	wc = test_poll_one(s->cq, 10);
	CHECK_EQ(wc.wr_id, 2);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(ibv_poll_cq(s->cq, 1, &wc), 0);
}

#define SENDS	3
#define LATE	2
#define MSG	3000	/* three packets of the 1024-byte MTU */

static void peer_round(struct pair *p, unsigned int round)
{
	struct ibv_sge sge, rsge;
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_recv_wr rwr = { .sg_list = &rsge, .num_sge = 1 }, *rbad;
	uint64_t *counter = (uint64_t *)(p->b.buf + 65536);
	char *rbuf = p->b.buf + 131072;
	int seen[SENDS + LATE + 2] = { 0 };
	struct ibv_wc wc;
	uint64_t wr_id;

	*counter = round;
	fill(p->b.buf, 8192, round);
	for (int i = 0; i < SENDS + LATE; i++)
		fill(p->a.buf + 16384 + i * 4096, MSG, round * 8 + i);
	memset(rbuf, 0, (SENDS + LATE) * 4096);

	wr.opcode = IBV_WR_SEND;
	for (int i = 0; i < SENDS; i++) {
		wr.wr_id = i;
		sge = (struct ibv_sge) { (uintptr_t)p->a.buf + 16384 + i * 4096, MSG,
					 p->a.mr->lkey };
		CHECK_EQ(ibv_post_send(p->a.qp, &wr, &bad), 0);
	}
	wr.wr_id = SENDS + LATE;
	wr.opcode = IBV_WR_RDMA_READ;
	sge = (struct ibv_sge) { (uintptr_t)p->a.buf + 65536, 8192, p->a.mr->lkey };
	wr.wr.rdma.remote_addr = (uintptr_t)p->b.buf;
	wr.wr.rdma.rkey = p->b.mr->rkey;
	CHECK_EQ(ibv_post_send(p->a.qp, &wr, &bad), 0);
	wr.wr_id = SENDS + LATE + 1;
	wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	sge = (struct ibv_sge) { (uintptr_t)p->a.buf + 8, 8, p->a.mr->lkey };
	wr.wr.atomic.remote_addr = (uintptr_t)counter;
	wr.wr.atomic.rkey = p->b.mr->rkey;
	wr.wr.atomic.compare_add = 1000;
	CHECK_EQ(ibv_post_send(p->a.qp, &wr, &bad), 0);

	modify_state(p->a.qp, IBV_QPS_SQD);
	wr.opcode = IBV_WR_SEND;
	for (int i = SENDS; i < SENDS + LATE; i++) {
		wr.wr_id = i;
		sge = (struct ibv_sge) { (uintptr_t)p->a.buf + 16384 + i * 4096, MSG,
					 p->a.mr->lkey };
		CHECK_EQ(ibv_post_send(p->a.qp, &wr, &bad), 0);
	}
	usleep(20000);
	modify_state(p->a.qp, IBV_QPS_RTS);
	for (int i = 0; i < SENDS + LATE; i++) {
		rwr.wr_id = 100 + i;
		rsge = (struct ibv_sge) { (uintptr_t)rbuf + i * 4096, 4096, p->b.mr->lkey };
		CHECK_EQ(ibv_post_recv(p->b.qp, &rwr, &rbad), 0);
	}

	for (int i = 0; i < SENDS + LATE + 2; i++) {
		wc = test_poll_one(p->a.cq, 20);
		if (wc.status != IBV_WC_SUCCESS)
			FAIL("round %u, WR %llu: %s", round,
			     (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status));
		wr_id = wc.wr_id;
		CHECK(wr_id < SENDS + LATE + 2 && !seen[wr_id]++, "WR %llu again",
		      (unsigned long long)wr_id);
	}
	for (int i = 0; i < SENDS + LATE; i++) {
		wc = test_poll_one(p->b.cq, 10);
		CHECK_EQ(wc.status, IBV_WC_SUCCESS);
		CHECK_EQ(wc.wr_id, 100 + i);
		CHECK_EQ(wc.byte_len, MSG);
		CHECK(!memcmp(rbuf + i * 4096, p->a.buf + 16384 + i * 4096, MSG),
		      "round %u: message %d", round, i);
	}
	usleep(50000);
	CHECK_EQ(ibv_poll_cq(p->b.cq, 1, &wc), 0);
	CHECK(!memcmp(p->a.buf + 65536, p->b.buf, 8192), "round %u: READ data", round);
	CHECK_EQ(*(uint64_t *)(p->a.buf + 8), round);
	CHECK_EQ(*counter, round + 1000);
}

/* ROUNDS rounds, with room for a wait of 20 s (test_poll_one()) in the last. */
TEST_F_TIMEOUT(sqd, sends_read_atomic_across_sqd, 120)
{
	for (unsigned int r = 0; r < ROUNDS; r++)
		peer_round(&self->p, r);
}

/* The next async event within @ms milliseconds; false when none came. */
static bool next_async_event(struct ibv_async_event *ev, int ms)
{
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };

	if (poll(&pfd, 1, ms) != 1)
		return false;
	CHECK_EQ(ibv_get_async_event(ctx, ev), 0);
	ibv_ack_async_event(ev);
	return true;
}

TEST_F_TIMEOUT(sqd, drained_event_once, 60)
{
	struct ibv_sge sge, rsge;
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_recv_wr rwr = { .sg_list = &rsge, .num_sge = 1 }, *rbad;
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_SQD,
				    .en_sqd_async_notify = 1 };
	struct ibv_async_event ev;
	struct pair *p = &self->p;
	struct ibv_wc wc;
	int flags;

	for (int i = 0; i < 65536; i++)
		p->b.buf[65536 + i] = (char)(i * 7 + 1);
	flags = fcntl(ctx->async_fd, F_GETFL);
	CHECK_EQ(fcntl(ctx->async_fd, F_SETFL, flags | O_NONBLOCK), 0);
	for (int i = 0; i < 2; i++) {
		rwr.wr_id = 100 + i;
		rsge = (struct ibv_sge) { (uintptr_t)p->b.buf + i * 4096, 4096,
					  p->b.mr->lkey };
		CHECK_EQ(ibv_post_recv(p->b.qp, &rwr, &rbad), 0);
	}
	wr.wr_id = 1;
	wr.opcode = IBV_WR_RDMA_READ;
	sge = (struct ibv_sge) { (uintptr_t)p->a.buf + 65536, 65536, p->a.mr->lkey };
	wr.wr.rdma.remote_addr = (uintptr_t)p->b.buf + 65536;
	wr.wr.rdma.rkey = p->b.mr->rkey;
	CHECK_EQ(ibv_post_send(p->a.qp, &wr, &bad), 0);
	wr.wr_id = 2;
	wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	sge = (struct ibv_sge) { (uintptr_t)p->a.buf, 8, p->a.mr->lkey };
	wr.wr.atomic.remote_addr = (uintptr_t)p->b.buf + 16384;
	wr.wr.atomic.rkey = p->b.mr->rkey;
	wr.wr.atomic.compare_add = 1;
	CHECK_EQ(ibv_post_send(p->a.qp, &wr, &bad), 0);
	wr.wr_id = 3;
	wr.opcode = IBV_WR_SEND;
	sge = (struct ibv_sge) { (uintptr_t)p->a.buf + 8192, 3000, p->a.mr->lkey };
	CHECK_EQ(ibv_post_send(p->a.qp, &wr, &bad), 0);

	CHECK_EQ(ibv_modify_qp(p->a.qp, &attr, IBV_QP_STATE |
			       IBV_QP_EN_SQD_ASYNC_NOTIFY), 0);
	wr.wr_id = 4;
	CHECK_EQ(ibv_post_send(p->a.qp, &wr, &bad), 0);

	CHECK(next_async_event(&ev, 20000), "no SQ drained event within 20 s");
	CHECK_EQ(ev.event_type, IBV_EVENT_SQ_DRAINED);
	CHECK(ev.element.qp == p->a.qp, "the event is for another QP");
	for (uint64_t id = 1; id <= 3; id++) {
		CHECK_EQ(ibv_poll_cq(p->a.cq, 1, &wc), 1);
		CHECK_EQ(wc.wr_id, id);
		CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	}
	CHECK_EQ(ibv_poll_cq(p->a.cq, 1, &wc), 0);
	CHECK(!next_async_event(&ev, 200), "a second event: %s",
	      ibv_event_type_str(ev.event_type));

	modify_state(p->a.qp, IBV_QPS_RTS);
	wc = test_poll_one(p->a.cq, 10);
	CHECK_EQ(wc.wr_id, 4);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	for (int i = 0; i < 2; i++) {
		wc = test_poll_one(p->b.cq, 10);
		CHECK_EQ(wc.wr_id, 100 + i);
		CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	}
	CHECK(!memcmp(p->a.buf + 65536, p->b.buf + 65536, 65536), "READ data");
}

TRANSPORT_HARNESS_MAIN
