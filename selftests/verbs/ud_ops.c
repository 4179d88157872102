// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * UD between QPs of one softrma device: delivery with the network header in
 * front of the payload (IPv4 with a valid checksum, IPv6 for IPv6 GIDs),
 * immediate data, and the datagram rules: a wrong Q_Key or a missing receive
 * drops silently, a short receive fails only the receive, a message above
 * the MTU fails the send, an AH of another PD fails the send, RDMA opcodes
 * are refused at post time.
 *
 * usage: ud_ops DEV IPV4
 */
#include <stdint.h>
#include <unistd.h>

#include "test.h"

#define QKEY 0x11223344
#define HDR 40
#define BUF 8192

static struct ibv_context *ctx;
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

int main(int argc, char **argv)
{
	union ibv_gid ll = { .raw = { 0xfe, 0x80 } };
	struct ibv_port_attr port;
	struct ibv_pd *pd, *other_pd;
	struct ibv_ah *ah, *ah6, *foreign_ah;
	int v4, v6;
	struct ud a, b, c;

	CHECK(argc == 3, "usage: ud_ops DEV IPV4");
	ctx = test_open_device(argv[1]);
	CHECK_EQ(ibv_query_port(ctx, 1, &port), 0);
	mtu = 128 << port.active_mtu;
	v4 = test_find_ipv4_gid(ctx, argv[2]);
	pd = ibv_alloc_pd(ctx);
	other_pd = ibv_alloc_pd(ctx);
	CHECK(pd && other_pd, "alloc_pd");
	ud_init(&a, pd);
	ud_init(&b, pd);
	ah = make_ah(pd, v4);

	uint32_t sizes[] = { 0, 1, 63, 100, 1000, mtu };
	for (unsigned int i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		deliver(&a, &b, ah, v4, sizes[i], IBV_WR_SEND);
		deliver(&a, &b, ah, v4, sizes[i], IBV_WR_SEND_WITH_IMM);
	}
	printf("# delivery with IPv4 header, sizes 0..%d, with and without immediate\n", mtu);

	v6 = find_gid(&ll, 8);
	if (v6 >= 0) {
		ah6 = make_ah(pd, v6);
		deliver(&a, &b, ah6, v6, 100, IBV_WR_SEND);
		CHECK_EQ(ibv_destroy_ah(ah6), 0);
		printf("# delivery with IPv6 header\n");
	} else {
		printf("# no link-local GID: IPv6 header not checked\n");
	}

	/* Wrong Q_Key, then no receive posted: dropped, the sender is done. */
	post_recv(&b, 1, BUF);
	send_expect(&a, ah, b.qp->qp_num, QKEY + 1, 10, IBV_WR_SEND, IBV_WC_SUCCESS);
	expect_nothing(&b);
	/* The high bit selects the sender's own Q_Key, which matches. */
	send_expect(&a, ah, b.qp->qp_num, 0x80000000, 10, IBV_WR_SEND, IBV_WC_SUCCESS);
	CHECK_EQ(test_poll_one(b.cq, 5).wr_id, 1);
	send_expect(&a, ah, b.qp->qp_num, QKEY, 10, IBV_WR_SEND, IBV_WC_SUCCESS);
	expect_nothing(&b);
	send_expect(&a, ah, 0xfffff0, QKEY, 10, IBV_WR_SEND, IBV_WC_SUCCESS);
	printf("# wrong Q_Key, missing receive, unknown QPN: dropped; high-bit Q_Key\n");

	/* A short receive fails; the QP stays usable. */
	post_recv(&b, 2, HDR + 50);
	send_expect(&a, ah, b.qp->qp_num, QKEY, 51, IBV_WR_SEND, IBV_WC_SUCCESS);
	CHECK_EQ(test_poll_one(b.cq, 5).status, IBV_WC_LOC_LEN_ERR);
	for (int i = HDR; i < BUF; i++)
		CHECK(b.buf[i] == 0xee, "short receive: byte %d written", i);
	CHECK_EQ(test_qp_state(b.qp), IBV_QPS_RTS);
	deliver(&a, &b, ah, v4, 50, IBV_WR_SEND);
	printf("# short receive: LOC_LEN_ERR, nothing written, QP still RTS\n");

	/* Above the MTU: the send fails. */
	post_recv(&b, 3, BUF);
	send_expect(&a, ah, b.qp->qp_num, QKEY, mtu + 1, IBV_WR_SEND,
		    IBV_WC_LOC_LEN_ERR);
	expect_nothing(&b);
	printf("# MTU + 1 bytes: LOC_LEN_ERR\n");

	/* RDMA and atomics do not exist on UD. */
	CHECK_EQ(post_send(&b, ah, a.qp->qp_num, QKEY, 8, IBV_WR_RDMA_WRITE), EINVAL);
	CHECK_EQ(post_send(&b, ah, a.qp->qp_num, QKEY, 8, IBV_WR_ATOMIC_FETCH_AND_ADD),
		 EINVAL);
	printf("# RDMA WRITE and atomics on UD: EINVAL\n");

	/* An AH of another PD names nothing for this QP. */
	ud_init(&c, pd);
	foreign_ah = make_ah(other_pd, v4);
	send_expect(&c, foreign_ah, b.qp->qp_num, QKEY, 10, IBV_WR_SEND,
		    IBV_WC_LOC_QP_OP_ERR);
	expect_nothing(&b);
	printf("# AH of another PD: LOC_QP_OP_ERR, nothing delivered\n");

	CHECK_EQ(ibv_destroy_ah(foreign_ah), 0);
	CHECK_EQ(ibv_destroy_ah(ah), 0);
	ud_fini(&c);
	ud_fini(&b);
	ud_fini(&a);
	CHECK_EQ(ibv_dealloc_pd(other_pd), 0);
	CHECK_EQ(ibv_dealloc_pd(pd), 0);
	CHECK_EQ(ibv_close_device(ctx), 0);
	return KSFT_PASS;
}
