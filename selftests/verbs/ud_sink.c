// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A UD QP that reports what reaches it: prints "qpn N", then for SECONDS
 * every completion ("recv STATUS LEN SRC_QP PAYLOAD"), then "received N".
 * The receive buffers start as 0xee, so a payload that arrives half-written
 * shows.  For tests that send packets from outside (selftests/wire/craft.py).
 *
 * usage: ud_sink DEV IPV4 QKEY SECONDS
 */
#include <ctype.h>
#include <unistd.h>

#include "test.h"

#define NRECV 16
#define RBUF (40 + 4096)

int main(int argc, char **argv)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 1, .max_recv_wr = NRECV,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	struct timespec start, now;
	unsigned char *buf;
	int received = 0;

	CHECK(argc == 5, "usage: ud_sink DEV IPV4 QKEY SECONDS");
	ctx = test_open_device(argv[1]);
	test_find_ipv4_gid(ctx, argv[2]);
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, NRECV, NULL, NULL, 0);
	CHECK(pd && cq, "pd, cq");
	init.send_cq = init.recv_cq = cq;
	qp = ibv_create_qp(pd, &init);
	CHECK(qp, "create_qp: %s", strerror(errno));
	attr.qkey = strtoul(argv[3], NULL, 0);
	CHECK_EQ(ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			       IBV_QP_PORT | IBV_QP_QKEY), 0);
	attr.qp_state = IBV_QPS_RTR;
	CHECK_EQ(ibv_modify_qp(qp, &attr, IBV_QP_STATE), 0);
	buf = malloc(NRECV * RBUF);
	CHECK(buf, "malloc");
	memset(buf, 0xee, NRECV * RBUF);
	mr = ibv_reg_mr(pd, buf, NRECV * RBUF, IBV_ACCESS_LOCAL_WRITE);
	CHECK(mr, "reg_mr");
	for (int i = 0; i < NRECV; i++) {
		struct ibv_sge sge = { .addr = (uintptr_t)buf + i * RBUF,
				       .length = RBUF, .lkey = mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge,
					  .num_sge = 1 }, *bad;

		CHECK_EQ(ibv_post_recv(qp, &wr, &bad), 0);
	}
	printf("qpn %u\n", qp->qp_num);
	fflush(stdout);

	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		struct ibv_wc wc;
		char text[64] = "";

		if (ibv_poll_cq(cq, 1, &wc) == 1) {
			const unsigned char *p = buf + wc.wr_id * RBUF + 40;
			unsigned int n = wc.byte_len > 40 ? wc.byte_len - 40 : 0;

			for (unsigned int i = 0; i < n && i < sizeof(text) - 1; i++)
				text[i] = isprint(p[i]) ? p[i] : '.';
			printf("recv %d %u %u %s\n", wc.status, wc.byte_len,
			       wc.src_qp, text);
			received++;
		}
		usleep(1000);
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (now.tv_sec - start.tv_sec < atoi(argv[4]));
	printf("received %d\n", received);

	CHECK_EQ(ibv_destroy_qp(qp), 0);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
	CHECK_EQ(ibv_dereg_mr(mr), 0);
	CHECK_EQ(ibv_dealloc_pd(pd), 0);
	CHECK_EQ(ibv_close_device(ctx), 0);
	free(buf);
	return KSFT_PASS;
}
