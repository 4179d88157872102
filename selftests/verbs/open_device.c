// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Open a softrma device with plain libibverbs calls and check what the
 * device, its port, GID table and PDs report, and the QP depths it takes;
 * verbs the device does not implement must fail with EOPNOTSUPP.
 *
 * usage: open_device DEV IPV4 ACTIVE_MTU_BYTES
 */
#include <arpa/inet.h>
#include <endian.h>

#include "test.h"

#define NUM_PDS 64

static void check_device(struct ibv_context *ctx)
{
	struct ibv_device_attr attr;

	CHECK_EQ(ibv_query_device(ctx, &attr), 0);
	CHECK_EQ(attr.phys_port_cnt, 1);
	CHECK(attr.max_pd >= NUM_PDS, "max_pd %d", attr.max_pd);
	CHECK(!strcmp(attr.fw_ver, "0.1.0"), "fw_ver '%s'", attr.fw_ver);
	CHECK_EQ(attr.node_guid, ibv_get_device_guid(ctx->device));
	CHECK(attr.node_guid != 0, "node_guid is zero");
	CHECK_EQ(attr.sys_image_guid, attr.node_guid);
	CHECK_EQ(attr.max_pkeys, 1);
	/* IBTA A3.3.1: a vendor without an OUI of its own, as rdma_rxe. */
	CHECK_EQ(attr.vendor_id, 0xffffff);
	CHECK(attr.max_qp > 0 && attr.max_cq > 0, "max_qp %d max_cq %d",
	      attr.max_qp, attr.max_cq);
	CHECK(attr.max_sge >= 16, "max_sge %d", attr.max_sge);
	CHECK_EQ(attr.atomic_cap, IBV_ATOMIC_HCA);
	CHECK(attr.max_srq > 0, "max_srq %d", attr.max_srq);
	CHECK(attr.max_mw > 0, "max_mw %d", attr.max_mw);
	CHECK((attr.device_cap_flags & IBV_DEVICE_MEM_WINDOW) &&
	      (attr.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B),
	      "device_cap_flags %#x: no memory windows", attr.device_cap_flags);
	CHECK(attr.max_ah > 0, "max_ah %d", attr.max_ah);
	CHECK(attr.max_mr > 0, "max_mr %d", attr.max_mr);
	CHECK(attr.max_mr_size >= 0x80000000ULL, "max_mr_size %#llx",
	      (unsigned long long)attr.max_mr_size);
}

/*
 * A QP of @type whose send or receive queue holds @send_wr or @recv_wr
 * entries; the entries it was given, or -errno.
 */
static int create_qp(struct ibv_pd *pd, struct ibv_cq *cq, enum ibv_qp_type type,
		     uint32_t send_wr, uint32_t recv_wr, struct ibv_qp_cap *cap)
{
	struct ibv_qp_init_attr init = {
		.qp_type = type, .send_cq = cq, .recv_cq = cq,
		.cap = { .max_send_wr = send_wr, .max_recv_wr = recv_wr,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &init);

	if (!qp)
		return -errno;
	*cap = init.cap;
	CHECK_EQ(ibv_destroy_qp(qp), 0);
	return 0;
}

/*
 * Queue depths from 0 (qperf's server has no send queue, its client no
 * receive queue) to max_qp_wr, and one more refused.
 */
static void check_qp_depths(struct ibv_context *ctx)
{
	struct ibv_device_attr attr;
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	uint32_t max;
	struct ibv_qp_cap cap;

	CHECK(pd && cq, "alloc_pd, create_cq");
	CHECK_EQ(ibv_query_device(ctx, &attr), 0);
	max = attr.max_qp_wr;
	for (int t = 0; t < 2; t++) {
		enum ibv_qp_type type = t ? IBV_QPT_UD : IBV_QPT_RC;

		CHECK_EQ(create_qp(pd, cq, type, 0, 1024, &cap), 0);
		CHECK(cap.max_recv_wr >= 1024, "max_recv_wr %u", cap.max_recv_wr);
		CHECK_EQ(create_qp(pd, cq, type, 1024, 0, &cap), 0);
		CHECK(cap.max_send_wr >= 1024, "max_send_wr %u", cap.max_send_wr);
		CHECK_EQ(create_qp(pd, cq, type, max, max, &cap), 0);
		CHECK(cap.max_send_wr >= max && cap.max_recv_wr >= max,
		      "%u/%u of %u", cap.max_send_wr, cap.max_recv_wr, max);
		CHECK_EQ(create_qp(pd, cq, type, max + 1, 1, &cap), -EINVAL);
		CHECK_EQ(create_qp(pd, cq, type, 1, max + 1, &cap), -EINVAL);
	}
	CHECK_EQ(ibv_destroy_cq(cq), 0);
	CHECK_EQ(ibv_dealloc_pd(pd), 0);
}

static int mtu_bytes_of(enum ibv_mtu mtu)
{
	return mtu >= IBV_MTU_256 && mtu <= IBV_MTU_4096 ? 128 << mtu : -1;
}

static void check_port(struct ibv_context *ctx, int mtu_bytes)
{
	struct ibv_port_attr port;

	CHECK_EQ(ibv_query_port(ctx, 1, &port), 0);
	CHECK_EQ(port.state, IBV_PORT_ACTIVE);
	CHECK_EQ(port.phys_state, 5 /* LinkUp */);
	CHECK_EQ(port.link_layer, IBV_LINK_LAYER_ETHERNET);
	CHECK_EQ(port.max_mtu, IBV_MTU_4096);
	CHECK_EQ(mtu_bytes_of(port.active_mtu), mtu_bytes);
	CHECK_EQ(port.pkey_tbl_len, 1);
	CHECK(port.gid_tbl_len >= 16, "gid_tbl_len %d", port.gid_tbl_len);
	CHECK_EQ(port.max_msg_sz, 0x80000000U);
	CHECK(ibv_query_port(ctx, 2, &port) != 0, "port 2 exists");
}

/* The core fills the GID table from the netdev's addresses: find IPV4. */
static void check_gid(struct ibv_context *ctx, const char *ipv4)
{
	struct ibv_port_attr port;
	union ibv_gid want = {}, gid;
	struct ibv_gid_entry entry;
	uint16_t pkey;
	int i;

	want.raw[10] = 0xff;
	want.raw[11] = 0xff;
	CHECK(inet_pton(AF_INET, ipv4, &want.raw[12]) == 1, "bad address %s", ipv4);
	CHECK_EQ(ibv_query_port(ctx, 1, &port), 0);
	for (i = 0; i < port.gid_tbl_len; i++)
		if (!ibv_query_gid(ctx, 1, i, &gid) && !memcmp(&gid, &want, sizeof(gid)))
			break;
	CHECK(i < port.gid_tbl_len, "no GID for %s", ipv4);
	CHECK_EQ(ibv_query_gid_ex(ctx, 1, i, &entry, 0), 0);
	CHECK_EQ(entry.gid_type, IBV_GID_TYPE_ROCE_V2);
	CHECK(entry.ndev_ifindex != 0, "GID without a netdev");
	printf("# GID[%d] = ::ffff:%s, RoCE v2\n", i, ipv4);

	CHECK_EQ(ibv_query_pkey(ctx, 1, 0, &pkey), 0);
	CHECK_EQ(be16toh(pkey), 0xffff);
}

static void check_pds(struct ibv_context *ctx)
{
	struct ibv_pd *pd[NUM_PDS];

	for (int i = 0; i < NUM_PDS; i++) {
		pd[i] = ibv_alloc_pd(ctx);
		CHECK(pd[i], "ibv_alloc_pd #%d: %s", i, strerror(errno));
	}
	for (int i = 0; i < NUM_PDS; i++)
		CHECK_EQ(ibv_dealloc_pd(pd[i]), 0);
}

static void check_unsupported(struct ibv_context *ctx)
{
	struct ibv_qp_init_attr qp_attr = { .qp_type = IBV_QPT_RAW_PACKET,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1,
			 .max_recv_sge = 1 } };
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);

	CHECK(pd && cq, "ibv_alloc_pd, ibv_create_cq");
	errno = 0;
	qp_attr.send_cq = qp_attr.recv_cq = cq;
	CHECK(!ibv_create_qp(pd, &qp_attr), "raw packet QP created");
	CHECK_EQ(errno, EOPNOTSUPP);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
	CHECK_EQ(ibv_dealloc_pd(pd), 0);
}

int main(int argc, char **argv)
{
	struct ibv_context *ctx;

	if (argc != 4) {
		fprintf(stderr, "usage: %s DEV IPV4 ACTIVE_MTU_BYTES\n", argv[0]);
		return KSFT_FAIL;
	}
	ctx = test_open_device(argv[1]);
	check_device(ctx);
	check_qp_depths(ctx);
	check_port(ctx, atoi(argv[3]));
	check_gid(ctx, argv[2]);
	check_pds(ctx);
	check_unsupported(ctx);
	CHECK_EQ(ibv_close_device(ctx), 0);
	printf("# %s: device, port, GID, pkey, PD and unsupported verbs as expected\n",
	       argv[1]);
	return KSFT_PASS;
}
