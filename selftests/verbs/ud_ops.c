// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * UD between QPs of one softrma device: delivery with the network header in
 * front of the payload (IPv4 with a valid checksum, IPv6 for IPv6 GIDs),
 * immediate data, and the datagram rules: a wrong Q_Key or a missing receive
 * drops silently, a short receive fails only the receive, a message above
 * the MTU fails the send, an AH of another PD fails the send, RDMA opcodes
 * are refused at post time.  One kselftest_harness.h case per behaviour, each
 * run on both transports: the fixture's variants "local" and "wire"
 * (force_wire: every datagram a RoCEv2 packet through lo).
 *
 * usage: [SOFTRMA_DEV=softrma0] [SOFTRMA_IPV4=10.9.0.1] ud_ops [HARNESS OPTIONS]
 * (-h: -l lists the cases, -v wire runs one variant, -r ud.wire.ipv6_header
 * one case)
 */
#include <stdint.h>
#include <unistd.h>

#include "transport.h"

#define QKEY 0x11223344
#define HDR 40
#define BUF 8192

static struct ibv_context *ctx;
static int v4;		/* the index of SOFTRMA_IPV4's GID */
static int mtu;

struct ud {
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	unsigned char *buf;
	struct ibv_mr *mr;
};

static int find_gid(const union ibv_gid *prefix, int len)
{
	union ibv_gid gid;

	for (int i = 0; i < 1024; i++)
		if (!ibv_query_gid(ctx, 1, i, &gid) && !memcmp(&gid, prefix, len))
			return i;
	return -1;
}

static void ud_init(struct ud *u, struct ibv_pd *pd)
{
	u->pd = pd;
	u->cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	CHECK(u->cq, "create_cq: %s", strerror(errno));
	u->qp = test_create_ud_qp(pd, u->cq, QKEY);
	u->buf = calloc(1, BUF);
	CHECK(u->buf, "calloc");
	u->mr = ibv_reg_mr(pd, u->buf, BUF, IBV_ACCESS_LOCAL_WRITE);
	CHECK(u->mr, "reg_mr: %s", strerror(errno));
}

static void ud_fini(struct ud *u)
{
	CHECK_EQ(ibv_destroy_qp(u->qp), 0);
	CHECK_EQ(ibv_destroy_cq(u->cq), 0);
	CHECK_EQ(ibv_dereg_mr(u->mr), 0);
	free(u->buf);
}

static struct ibv_ah *make_ah(struct ibv_pd *pd, int sgid_index)
{
	struct ibv_ah_attr attr = {
		.is_global = 1, .port_num = 1,
		.grh = { .sgid_index = sgid_index, .hop_limit = 64,
			 .traffic_class = 0x20 },
	};
	struct ibv_ah *ah;

	CHECK_EQ(ibv_query_gid(ctx, 1, sgid_index, &attr.grh.dgid), 0);
	ah = ibv_create_ah(pd, &attr);
	CHECK(ah, "create_ah: %s", strerror(errno));
	return ah;
}

/* Polls for up to @ms milliseconds; returns 0 when nothing came. */
static int poll_wait(struct ibv_cq *cq, struct ibv_wc *wc, int ms)
{
	for (int i = 0; i < ms * 10; i++) {
		int n = ibv_poll_cq(cq, 1, wc);

		CHECK(n >= 0, "poll_cq");
		if (n)
			return 1;
		usleep(100);
	}
	return 0;
}

static void post_recv(struct ud *u, uint64_t wr_id, uint32_t len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)u->buf, .length = len, .lkey = u->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	memset(u->buf, 0xee, BUF);
	CHECK_EQ(ibv_post_recv(u->qp, &wr, &bad), 0);
}

static int post_send(struct ud *from, struct ibv_ah *ah, uint32_t qpn,
		     uint32_t qkey, uint32_t len, int opcode)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)from->buf, .length = len,
		.lkey = from->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 7, .sg_list = &sge, .num_sge = 1, .opcode = opcode,
		.send_flags = IBV_SEND_SIGNALED, .imm_data = htonl(0xabcd),
		.wr = { .ud = { .ah = ah, .remote_qpn = qpn, .remote_qkey = qkey } },
	};
	struct ibv_send_wr *bad;

	for (uint32_t i = 0; i < len; i++)
		from->buf[i] = i * 7 + len;
	return ibv_post_send(from->qp, &wr, &bad);
}

/* Sends and expects the send to complete with @status. */
static void send_expect(struct ud *from, struct ibv_ah *ah, uint32_t qpn,
			uint32_t qkey, uint32_t len, int opcode, int status)
{
	struct ibv_wc wc;

	CHECK_EQ(post_send(from, ah, qpn, qkey, len, opcode), 0);
	wc = test_poll_one(from->cq, 5);
	CHECK_EQ(wc.status, status);
	CHECK_EQ(wc.wr_id, 7);
	if (status == IBV_WC_SUCCESS)
		CHECK_EQ(wc.opcode, IBV_WC_SEND);
}

static uint16_t ipv4_csum(const unsigned char *h)
{
	uint32_t sum = 0;

	for (int i = 0; i < 20; i += 2)
		sum += h[i] << 8 | h[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return sum;
}

/* UDP header, BTH, DETH, ImmDt, padded payload, ICRC. */
static uint32_t udp_len(uint32_t len, int opcode)
{
	return 8 + 12 + 8 + (opcode == IBV_WR_SEND_WITH_IMM ? 4 : 0) +
	       ((len + 3) & ~3) + 4;
}

static void check_ipv4_hdr(const unsigned char *grh, const union ibv_gid *gid,
			   uint32_t len, int opcode)
{
	const unsigned char *ip = grh + 20;

	for (int i = 0; i < 20; i++)
		CHECK_EQ(grh[i], 0);
	CHECK_EQ(ip[0], 0x45);
	CHECK_EQ(ip[1], 0x20);				/* traffic class */
	CHECK_EQ(ip[2] << 8 | ip[3], 20 + udp_len(len, opcode));
	CHECK_EQ(ip[8], 64);				/* hop limit */
	CHECK_EQ(ip[9], 17);				/* UDP */
	CHECK_EQ(ipv4_csum(ip), 0xffff);
	CHECK(!memcmp(ip + 12, &gid->raw[12], 4), "source address");
	CHECK(!memcmp(ip + 16, &gid->raw[12], 4), "destination address");
}

static void check_ipv6_hdr(const unsigned char *grh, const union ibv_gid *gid,
			   uint32_t len, int opcode)
{
	CHECK_EQ(grh[0] >> 4, 6);
	CHECK_EQ((grh[0] & 0xf) << 4 | grh[1] >> 4, 0x20);
	CHECK_EQ(grh[4] << 8 | grh[5], udp_len(len, opcode));
	CHECK_EQ(grh[6], 17);
	CHECK_EQ(grh[7], 64);
	CHECK(!memcmp(grh + 8, gid->raw, 16), "source GID");
	CHECK(!memcmp(grh + 24, gid->raw, 16), "destination GID");
}

/* One datagram of @len from @a to @b through @ah, checked end to end. */
static void deliver(struct ud *a, struct ud *b, struct ibv_ah *ah,
		    int gid_index, uint32_t len, int opcode)
{
	union ibv_gid gid;
	struct ibv_wc wc;

	CHECK_EQ(ibv_query_gid(ctx, 1, gid_index, &gid), 0);
	post_recv(b, len, HDR + len);
	send_expect(a, ah, b->qp->qp_num, QKEY, len, opcode, IBV_WC_SUCCESS);
	wc = test_poll_one(b->cq, 5);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(wc.wr_id, len);
	CHECK_EQ(wc.opcode, IBV_WC_RECV);
	CHECK_EQ(wc.byte_len, HDR + len);
	CHECK_EQ(wc.src_qp, a->qp->qp_num);
	CHECK(wc.wc_flags & IBV_WC_GRH, "no GRH flag");
	if (opcode == IBV_WR_SEND_WITH_IMM) {
		CHECK(wc.wc_flags & IBV_WC_WITH_IMM, "no IMM flag");
		CHECK_EQ(ntohl(wc.imm_data), 0xabcd);
	}
	/* Not raw[10] alone: a link-local GID has a MAC byte there. */
	if (test_gid_is_ipv4(&gid))
		check_ipv4_hdr(b->buf, &gid, len, opcode);
	else
		check_ipv6_hdr(b->buf, &gid, len, opcode);
	CHECK(!memcmp(b->buf + HDR, a->buf, len), "payload of %u bytes", len);
	CHECK_EQ(b->buf[HDR + len], 0xee);
}

static void expect_nothing(struct ud *u)
{
	struct ibv_wc wc;

	CHECK(!poll_wait(u->cq, &wc, 200), "unexpected completion, status %d",
	      wc.status);
}

/* What a case built: teardown destroys it. */
FIXTURE(ud) {
	struct ibv_pd *pd;
	struct ud a, b;		/* a sends to b through ah */
	struct ibv_ah *ah;
	struct ibv_pd *other_pd;
	struct ud c;		/* in pd, sends through foreign_ah */
	struct ibv_ah *foreign_ah;
};

TRANSPORT_VARIANTS(ud);

FIXTURE_SETUP(ud)
{
	struct ibv_port_attr port;

	ctx = transport_open_device(&v4);
	if (!transport_set(variant->force_wire))
		SKIP(return, "%s: %s", FORCE_WIRE, strerror(errno));
	CHECK_EQ(ibv_query_port(ctx, 1, &port), 0);
	mtu = 128 << port.active_mtu;
	self->pd = ibv_alloc_pd(ctx);
	CHECK(self->pd, "alloc_pd");
	ud_init(&self->a, self->pd);
	ud_init(&self->b, self->pd);
	self->ah = make_ah(self->pd, v4);
}

/*
 * The harness runs this after a case's body returned, not after a failed
 * check: that exit()s the case's process (test.h), which releases what the
 * case built.
 */
FIXTURE_TEARDOWN(ud)
{
	if (self->foreign_ah)
		CHECK_EQ(ibv_destroy_ah(self->foreign_ah), 0);
	if (self->c.qp)
		ud_fini(&self->c);
	if (self->other_pd)
		CHECK_EQ(ibv_dealloc_pd(self->other_pd), 0);
	CHECK_EQ(ibv_destroy_ah(self->ah), 0);
	ud_fini(&self->b);
	ud_fini(&self->a);
	CHECK_EQ(ibv_dealloc_pd(self->pd), 0);
	CHECK_EQ(ibv_close_device(ctx), 0);
	transport_put_back();
}

/* Datagrams of @opcode from a to b at 0..MTU bytes, with the IPv4 header. */
static void deliver_every_size(struct ud *a, struct ud *b, struct ibv_ah *ah,
			       int opcode)
{
	const uint32_t sizes[] = { 0, 1, 63, 100, 1000, mtu };

	for (size_t i = 0; i < ARRAY_SIZE(sizes); i++)
		deliver(a, b, ah, v4, sizes[i], opcode);
	printf("# sizes 0..%d: the port's active MTU\n", mtu);
}

TEST_F(ud, send_every_size)
{
	deliver_every_size(&self->a, &self->b, self->ah, IBV_WR_SEND);
}

TEST_F(ud, send_with_imm_every_size)
{
	deliver_every_size(&self->a, &self->b, self->ah, IBV_WR_SEND_WITH_IMM);
}

TEST_F(ud, ipv6_header)
{
	union ibv_gid ll = { .raw = { 0xfe, 0x80 } };
	int v6 = find_gid(&ll, 8);
	struct ibv_ah *ah6;

	if (v6 < 0)
		SKIP(return, "no link-local GID: no IPv6 header to check");
	ah6 = make_ah(self->pd, v6);
	deliver(&self->a, &self->b, ah6, v6, 100, IBV_WR_SEND);
	CHECK_EQ(ibv_destroy_ah(ah6), 0);
}

TEST_F(ud, wrong_qkey_dropped)
{
	struct ud *a = &self->a, *b = &self->b;
	struct ibv_wc wc;

	post_recv(b, 1, BUF);
	send_expect(a, self->ah, b->qp->qp_num, QKEY + 1, 10, IBV_WR_SEND,
		    IBV_WC_SUCCESS);
	expect_nothing(b);
	/* The receive is still there, for the next datagram (11 bytes). */
	send_expect(a, self->ah, b->qp->qp_num, QKEY, 11, IBV_WR_SEND,
		    IBV_WC_SUCCESS);
	wc = test_poll_one(b->cq, 5);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(wc.wr_id, 1);
	CHECK_EQ(wc.byte_len, HDR + 11);
}

/* The high bit selects the sender's own Q_Key, which matches. */
TEST_F(ud, high_bit_qkey_takes_senders)
{
	struct ud *a = &self->a, *b = &self->b;
	struct ibv_wc wc;

	post_recv(b, 1, BUF);
	send_expect(a, self->ah, b->qp->qp_num, 0x80000000, 10, IBV_WR_SEND,
		    IBV_WC_SUCCESS);
	wc = test_poll_one(b->cq, 5);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(wc.wr_id, 1);
}

TEST_F(ud, missing_receive_dropped)
{
	struct ud *a = &self->a, *b = &self->b;

	send_expect(a, self->ah, b->qp->qp_num, QKEY, 10, IBV_WR_SEND,
		    IBV_WC_SUCCESS);
	expect_nothing(b);
	/* Dropped, not kept for the next receive. */
	post_recv(b, 1, BUF);
	expect_nothing(b);
}

TEST_F(ud, unknown_qpn_dropped)
{
	struct ud *a = &self->a, *b = &self->b;

	post_recv(b, 1, BUF);
	send_expect(a, self->ah, 0xfffff0, QKEY, 10, IBV_WR_SEND, IBV_WC_SUCCESS);
	expect_nothing(b);
}

/* A short receive fails; nothing is written and the QP stays usable. */
TEST_F(ud, short_receive_fails_alone)
{
	struct ud *a = &self->a, *b = &self->b;

	post_recv(b, 2, HDR + 50);
	send_expect(a, self->ah, b->qp->qp_num, QKEY, 51, IBV_WR_SEND,
		    IBV_WC_SUCCESS);
	CHECK_EQ(test_poll_one(b->cq, 5).status, IBV_WC_LOC_LEN_ERR);
	for (int i = HDR; i < BUF; i++)
		CHECK(b->buf[i] == 0xee, "short receive: byte %d written", i);
	CHECK_EQ(test_qp_state(b->qp), IBV_QPS_RTS);
	deliver(a, b, self->ah, v4, 50, IBV_WR_SEND);
}

TEST_F(ud, above_mtu_fails_send)
{
	struct ud *a = &self->a, *b = &self->b;

	post_recv(b, 3, BUF);
	send_expect(a, self->ah, b->qp->qp_num, QKEY, mtu + 1, IBV_WR_SEND,
		    IBV_WC_LOC_LEN_ERR);
	expect_nothing(b);
}

/* RDMA and atomics do not exist on UD. */
TEST_F(ud, rdma_write_refused)
{
	CHECK_EQ(post_send(&self->b, self->ah, self->a.qp->qp_num, QKEY, 8,
			   IBV_WR_RDMA_WRITE), EINVAL);
}

TEST_F(ud, atomic_refused)
{
	CHECK_EQ(post_send(&self->b, self->ah, self->a.qp->qp_num, QKEY, 8,
			   IBV_WR_ATOMIC_FETCH_AND_ADD), EINVAL);
}

/* An AH of another PD names nothing for this QP. */
TEST_F(ud, ah_of_other_pd_fails_send)
{
	struct ud *b = &self->b, *c = &self->c;

	self->other_pd = ibv_alloc_pd(ctx);
	CHECK(self->other_pd, "alloc_pd");
	ud_init(c, self->pd);
	self->foreign_ah = make_ah(self->other_pd, v4);
	post_recv(b, 3, BUF);
	send_expect(c, self->foreign_ah, b->qp->qp_num, QKEY, 10, IBV_WR_SEND,
		    IBV_WC_LOC_QP_OP_ERR);
	expect_nothing(b);
}

TRANSPORT_HARNESS_MAIN
