// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Teardown while the peer holds things up.  Each case ends by deregistering
 * the memory that was in play, and prints "dereg done" once
 * ibv_dereg_mr() returned: the shell (device/wire_teardown.sh) bounds how
 * long that may take, since a dereg that waits for the network never
 * returns at all.
 *
 *   rnr_imm SECONDS  a 64-byte WRITE_WITH_IMM into a QP without a receive
 *                    (rnr_retry 7, timeout 18: 1.07 s, so that only an ACK
 *                    timer left running through the RNR waits expires, not
 *                    one whose NAK a loaded TCG guest answered late); the
 *                    receive is posted SECONDS later, and the WRITE must
 *                    then complete with success, its data and immediate in
 *                    place: an RNR wait is no ACK timeout.  Then the target
 *                    MR deregisters.
 *   stalled          RC QPs whose MR is registered after them, as rdma_cm
 *                    servers do, print "qpn N" (two of them), "rkey K",
 *                    "addr A" and "ready", then wait for a line on stdin:
 *                    meanwhile a hostile peer starts a WRITE into the MR
 *                    and a SEND into a posted receive, and goes silent.
 *                    Then the MR deregisters, and the QPs are destroyed.
 *   requester        WQEs that the peer keeps in flight: a WRITE to a QP
 *                    nobody answers with timeout 0 (wait forever), and a
 *                    SEND that is RNR NAKed forever (rnr_retry 7).  Their
 *                    source MRs deregister while the WQEs are in flight;
 *                    the QPs then flush.
 *
 * usage: teardown DEV IPV4 rnr_imm SECONDS | stalled | requester
 */
#include "pair.h"

static void dereg_bounded(struct ibv_mr *mr, const char *what)
{
	printf("# dereg %s\n", what);
	fflush(stdout);
	CHECK_EQ(ibv_dereg_mr(mr), 0);
	printf("# dereg done: %s\n", what);
	fflush(stdout);
}

static void test_rnr_imm(int seconds)
{
	struct ibv_sge sge, rsge;
	struct ibv_send_wr wr = { .wr_id = 5, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
				  .send_flags = IBV_SEND_SIGNALED,
				  .imm_data = htonl(0x5eed) }, *bad;
	struct ibv_recv_wr rwr = { .wr_id = 6, .sg_list = &rsge, .num_sge = 1 }, *rbad;
	union ibv_gid gid;
	struct ibv_wc wc;
	struct pair p;

	side_init(&p.a, NULL, ALL_ACCESS, NULL);
	side_init(&p.b, NULL, ALL_ACCESS, NULL);
	CHECK_EQ(ibv_query_gid(ctx, 1, gid_index, &gid), 0);
	test_connect_timeout(p.a.qp, gid_index, &gid, p.b.qp->qp_num, 7, 18);
	connect_qp(p.b.qp, p.a.qp->qp_num, 7);
	fill(p.a.buf, 64, 11);
	sge = (struct ibv_sge) { (uintptr_t)p.a.buf, 64, p.a.mr->lkey };
	wr.wr.rdma.remote_addr = (uintptr_t)p.b.buf + 128;
	wr.wr.rdma.rkey = p.b.mr->rkey;
	CHECK_EQ(ibv_post_send(p.a.qp, &wr, &bad), 0);
	sleep(seconds);
	CHECK_EQ(ibv_poll_cq(p.a.cq, 1, &wc), 0);
	for (int i = 0; i < 64; i++)
		CHECK(p.b.buf[128 + i] == 0, "WRITE_WITH_IMM landed without a receive");
	rsge = (struct ibv_sge) { (uintptr_t)p.b.buf, 16, p.b.mr->lkey };
	CHECK_EQ(ibv_post_recv(p.b.qp, &rwr, &rbad), 0);

	wc = test_poll_one(p.a.cq, 10);
	if (wc.status != IBV_WC_SUCCESS)
		FAIL("WRITE_WITH_IMM RNR NAKed for %d s: %s", seconds,
		     ibv_wc_status_str(wc.status));
	wc = test_poll_one(p.b.cq, 5);
	CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	CHECK_EQ(wc.wr_id, 6);
	CHECK_EQ(wc.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
	CHECK_EQ(ntohl(wc.imm_data), 0x5eed);
	CHECK(!memcmp(p.b.buf + 128, p.a.buf, 64), "WRITE_WITH_IMM data");
	printf("# WRITE_WITH_IMM RNR NAKed for %d s, then a receive: success, data and immediate\n",
	       seconds);
	dereg_bounded(p.b.mr, "the WRITE_WITH_IMM's target");
	CHECK_EQ(ibv_destroy_qp(p.b.qp), 0);
	CHECK_EQ(ibv_destroy_cq(p.b.cq), 0);
	CHECK_EQ(ibv_dealloc_pd(p.b.pd), 0);
	free(p.b.buf);
	side_fini(&p.a, 1);
}

static void test_stalled(void)
{
	struct ibv_qp *qp[2];
	struct ibv_sge rsge;
	struct ibv_recv_wr rwr = { .wr_id = 1, .sg_list = &rsge, .num_sge = 1 }, *rbad;
	union ibv_gid gid;
	struct ibv_mr *mr;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	char line[16], *buf;

	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	CHECK(pd && cq, "pd, cq");
	CHECK_EQ(ibv_query_gid(ctx, 1, gid_index, &gid), 0);
	for (int i = 0; i < 2; i++) {
		qp[i] = test_create_qp(pd, cq, NULL, IBV_QPT_RC, ALL_ACCESS);
		test_connect_to(qp[i], gid_index, &gid, 0xfffff0, 7);
	}
	buf = calloc(1, PAIR_BUF_LEN);
	CHECK(buf, "calloc");
	mr = ibv_reg_mr(pd, buf, PAIR_BUF_LEN, ALL_ACCESS);
	CHECK(mr, "reg_mr: %s", strerror(errno));
	rsge = (struct ibv_sge) { (uintptr_t)buf + 65536, 65536, mr->lkey };
	CHECK_EQ(ibv_post_recv(qp[1], &rwr, &rbad), 0);
	printf("qpn %u\nqpn %u\nrkey %u\naddr %llu\nready\n", qp[0]->qp_num,
	       qp[1]->qp_num, mr->rkey, (unsigned long long)(uintptr_t)buf);
	fflush(stdout);
	CHECK(fgets(line, sizeof(line), stdin), "no go line");

	dereg_bounded(mr, "the MR of a stalled WRITE and SEND");
	for (int i = 0; i < 2; i++)
		CHECK_EQ(ibv_destroy_qp(qp[i]), 0);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
	CHECK_EQ(ibv_dealloc_pd(pd), 0);
	free(buf);
}

/*
 * Deregisters the source of a WRITE or SEND that @p's peer keeps in flight,
 * then puts the QP in error, where the WQE flushes, and tears @p down.
 */
static void held_in_flight(struct pair *p, enum ibv_wr_opcode opcode,
			   const char *what)
{
	struct ibv_sge sge = { (uintptr_t)p->a.buf, 65536, p->a.mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
				  .opcode = opcode, .send_flags = IBV_SEND_SIGNALED,
				  .wr.rdma = { (uintptr_t)p->b.buf, p->b.mr->rkey } }, *bad;
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };
	struct ibv_wc wc;

	CHECK_EQ(ibv_post_send(p->a.qp, &wr, &bad), 0);
	usleep(200000);
	CHECK_EQ(ibv_poll_cq(p->a.cq, 1, &wc), 0);
	dereg_bounded(p->a.mr, what);
	CHECK_EQ(ibv_modify_qp(p->a.qp, &attr, IBV_QP_STATE), 0);
	wc = test_poll_one(p->a.cq, 5);
	CHECK_EQ(wc.status, IBV_WC_WR_FLUSH_ERR);
	CHECK_EQ(ibv_destroy_qp(p->a.qp), 0);
	CHECK_EQ(ibv_destroy_cq(p->a.cq), 0);
	CHECK_EQ(ibv_dealloc_pd(p->a.pd), 0);
	free(p->a.buf);
	side_fini(&p->b, 1);
}

static void test_requester(void)
{
	union ibv_gid gid;
	struct pair p;

	/* A WRITE nobody answers, with timeout 0: it waits forever. */
	side_init(&p.a, NULL, ALL_ACCESS, NULL);
	side_init(&p.b, NULL, ALL_ACCESS, NULL);
	CHECK_EQ(ibv_query_gid(ctx, 1, gid_index, &gid), 0);
	test_connect_timeout(p.a.qp, gid_index, &gid, p.b.qp->qp_num, 7, 0);
	held_in_flight(&p, IBV_WR_RDMA_WRITE,
		       "the source of a WRITE nobody answers (timeout 0)");

	/* A SEND that the peer RNR NAKs forever. */
	pair_init(&p, ALL_ACCESS, 7);
	held_in_flight(&p, IBV_WR_SEND, "the source of a SEND RNR NAKed forever");
}

int main(int argc, char **argv)
{
	CHECK(argc >= 4, "usage: teardown DEV IPV4 rnr_imm SECONDS | stalled | requester");
	setvbuf(stdout, NULL, _IOLBF, 0);
	ctx = test_open_device(argv[1]);
	gid_index = test_find_ipv4_gid(ctx, argv[2]);
	if (!strcmp(argv[3], "rnr_imm") && argc == 5)
		test_rnr_imm(atoi(argv[4]));
	else if (!strcmp(argv[3], "stalled"))
		test_stalled();
	else if (!strcmp(argv[3], "requester"))
		test_requester();
	else
		FAIL("unknown case %s", argv[3]);
	CHECK_EQ(ibv_close_device(ctx), 0);
	return KSFT_PASS;
}
