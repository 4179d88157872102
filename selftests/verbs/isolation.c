// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A connected QP takes requests only from its peer.  The victim connects an
 * RC and a UC pair on this host, posts receives on its receiving QPs and
 * prints "rc N", "uc N" (their QPNs), "rkey K", "addr A" and "ready", then
 * waits for a line on stdin while a stranger (another process, another
 * uid) aims QPs of its own at those QPNs and sends: SENDs, a WRITE with
 * the right rkey and address, a WRITE with a wrong rkey, a READ.  Then the
 * victim checks that nothing arrived (no completion, memory unchanged),
 * that its QPs are still in RTS, and that its real peers still get through.
 *
 * usage: isolation DEV IPV4 victim
 *        isolation DEV IPV4 stranger RC_QPN UC_QPN RKEY ADDR
 */
#include "pair.h"

static void post_recvs(struct side *s, int n)
{
	struct ibv_sge sge = { (uintptr_t)s->buf + 4096, 4096, s->mr->lkey };
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;

	for (int i = 0; i < n; i++) {
		wr.wr_id = 100 + i;
		CHECK_EQ(ibv_post_recv(s->qp, &wr, &bad), 0);
	}
}

static void victim(void)
{
	struct ibv_sge sge;
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1 };
	struct pair rc, uc;
	struct ibv_wc wc;
	char line[16];

	pair_init(&rc, ALL_ACCESS, 0);
	side_init_type(&uc.a, NULL, IBV_QPT_UC, ALL_ACCESS, NULL);
	side_init_type(&uc.b, NULL, IBV_QPT_UC, ALL_ACCESS, NULL);
	connect_qp(uc.a.qp, uc.b.qp->qp_num, 0);
	connect_qp(uc.b.qp, uc.a.qp->qp_num, 0);
	fill(rc.b.buf, PAIR_BUF_LEN, 1);
	fill(uc.b.buf, PAIR_BUF_LEN, 1);
	post_recvs(&rc.b, 4);
	post_recvs(&uc.b, 4);
	printf("rc %u\nuc %u\nrkey %u\naddr %llu\nready\n", rc.b.qp->qp_num,
	       uc.b.qp->qp_num, rc.b.mr->rkey,
	       (unsigned long long)(uintptr_t)rc.b.buf);
	fflush(stdout);
	CHECK(fgets(line, sizeof(line), stdin), "no go line");

	CHECK_EQ(ibv_poll_cq(rc.b.cq, 1, &wc), 0);
	CHECK_EQ(ibv_poll_cq(uc.b.cq, 1, &wc), 0);
	CHECK_EQ(test_qp_state(rc.b.qp), IBV_QPS_RTS);
	CHECK_EQ(test_qp_state(uc.b.qp), IBV_QPS_RTS);
	fill(rc.a.buf, PAIR_BUF_LEN, 1);
	CHECK(!memcmp(rc.b.buf, rc.a.buf, PAIR_BUF_LEN), "the stranger changed RC memory");
	CHECK(!memcmp(uc.b.buf, rc.a.buf, PAIR_BUF_LEN), "the stranger changed UC memory");
	printf("# the stranger's requests: no completion, memory unchanged, RC and UC QPs in RTS\n");

	/* The real peers still get through. */
	fill(rc.a.buf, 64, 9);
	sge = (struct ibv_sge) { (uintptr_t)rc.a.buf, 64, rc.a.mr->lkey };
	wr.opcode = IBV_WR_SEND;
	CHECK_EQ(post_wait(&rc.a, &wr).status, IBV_WC_SUCCESS);
	wc = test_poll_one(rc.b.cq, 5);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(wc.wr_id, 100);
	CHECK_EQ(wc.src_qp, rc.a.qp->qp_num);
	CHECK(!memcmp(rc.b.buf + 4096, rc.a.buf, 64), "RC SEND data");
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.wr.rdma.remote_addr = (uintptr_t)rc.b.buf;
	wr.wr.rdma.rkey = rc.b.mr->rkey;
	CHECK_EQ(post_wait(&rc.a, &wr).status, IBV_WC_SUCCESS);
	CHECK(!memcmp(rc.b.buf, rc.a.buf, 64), "RC WRITE data");
	fill(uc.a.buf, 64, 9);
	sge = (struct ibv_sge) { (uintptr_t)uc.a.buf, 64, uc.a.mr->lkey };
	wr.opcode = IBV_WR_SEND;
	CHECK_EQ(post_wait(&uc.a, &wr).status, IBV_WC_SUCCESS);
	wc = test_poll_one(uc.b.cq, 5);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(wc.src_qp, uc.a.qp->qp_num);
	printf("# the real peers: RC SEND and WRITE, UC SEND arrive\n");
	pair_fini(&rc);
	pair_fini(&uc);
}

/* Posts @wr on a QP of its own aimed at @dest; returns the completion. */
static struct ibv_wc stranger_post(enum ibv_qp_type type, uint32_t dest,
				   struct ibv_send_wr *wr)
{
	struct side s;
	struct ibv_wc wc;

	side_init_type(&s, NULL, type, ALL_ACCESS, NULL);
	connect_qp(s.qp, dest, 0);
	wr->sg_list->lkey = s.mr->lkey;
	wr->sg_list->addr = (uintptr_t)s.buf;
	wc = post_wait(&s, wr);
	side_fini(&s, 1);
	return wc;
}

static void stranger(uint32_t rc_qpn, uint32_t uc_qpn, uint32_t rkey,
		     uint64_t addr)
{
	struct ibv_sge sge = { .length = 64 };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1 };
	static const struct {
		enum ibv_wr_opcode opcode;
		uint32_t rkey_xor;
		const char *what;
	} reqs[] = {
		{ IBV_WR_SEND, 0, "SEND" },
		{ IBV_WR_SEND_WITH_IMM, 0, "SEND with immediate" },
		{ IBV_WR_RDMA_WRITE, 0, "WRITE, right rkey and address" },
		{ IBV_WR_RDMA_WRITE_WITH_IMM, 0, "WRITE with immediate" },
		{ IBV_WR_RDMA_WRITE, 0x80, "WRITE, wrong rkey" },
		{ IBV_WR_RDMA_READ, 0, "READ" },
	};

	for (size_t i = 0; i < sizeof(reqs) / sizeof(reqs[0]); i++) {
		for (int uc = 0; uc < 2; uc++) {
			struct ibv_wc wc;

			if (uc && reqs[i].opcode == IBV_WR_RDMA_READ)
				continue;
			wr.opcode = reqs[i].opcode;
			wr.wr.rdma.remote_addr = addr;
			wr.wr.rdma.rkey = rkey ^ reqs[i].rkey_xor;
			wc = stranger_post(uc ? IBV_QPT_UC : IBV_QPT_RC,
					   uc ? uc_qpn : rc_qpn, &wr);
			printf("# stranger, %s %s: %s\n", uc ? "UC" : "RC",
			       reqs[i].what, ibv_wc_status_str(wc.status));
		}
	}
}

int main(int argc, char **argv)
{
	CHECK(argc >= 4, "usage: isolation DEV IPV4 victim | stranger RC UC RKEY ADDR");
	ctx = test_open_device(argv[1]);
	gid_index = test_find_ipv4_gid(ctx, argv[2]);
	if (!strcmp(argv[3], "victim"))
		victim();
	else if (!strcmp(argv[3], "stranger") && argc == 8)
		stranger(strtoul(argv[4], NULL, 0), strtoul(argv[5], NULL, 0),
			 strtoul(argv[6], NULL, 0), strtoull(argv[7], NULL, 0));
	else
		FAIL("unknown case %s", argv[3]);
	CHECK_EQ(ibv_close_device(ctx), 0);
	return KSFT_PASS;
}
