// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Shared PDs: a second context on a duplicate of a context's file
 * (ibv_import_device), its PD and MR imported into it by handle, and a QP
 * of the imported context on them that moves data both ways.
 *
 * Bad cases: a handle that names nothing, an object of another type or of
 * another file is refused at import; the PD cannot be deallocated through
 * the import while its MR lives; unimporting leaves the kernel's objects
 * to the first context, and a QP destroyed after its PD was unimported is
 * fine; a child that imports its parent's context and is killed while its
 * QP writes into the parent's memory leaves the parent's QP and MR working
 * (what the child created stays in the file until the parent closes it).
 *
 * usage: import   (SOFTRMA_DEV, SOFTRMA_IPV4 name the device and its GID)
 */
#include <signal.h>
#include <sys/wait.h>

#include "pair.h"

#define LEN 4096

static struct ibv_qp *qp_on(struct ibv_context *c, struct ibv_pd *pd,
			    struct ibv_cq **cq)
{
	*cq = ibv_create_cq(c, 64, NULL, NULL, 0);
	CHECK(*cq, "create_cq: %s", strerror(errno));
	return test_create_qp(pd, *cq, NULL, IBV_QPT_RC, ALL_ACCESS);
}

static void write_wait(struct ibv_qp *qp, struct ibv_cq *cq, struct ibv_mr *src,
		       void *from, struct ibv_mr *dst, void *to, uint32_t len)
{
	struct ibv_sge sge = { (uintptr_t)from, len, src->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { (uintptr_t)to, dst->rkey },
	}, *bad;
	struct ibv_wc wc;

	CHECK_EQ(ibv_post_send(qp, &wr, &bad), 0);
	wc = test_poll_one(cq, 5);
	CHECK(wc.status == IBV_WC_SUCCESS, "write: %s",
	      ibv_wc_status_str(wc.status));
}

/* Handles that name nothing in @ictx's file, or not a PD or not an MR. */
static void check_refused(struct ibv_context *ictx, struct ibv_pd *ipd,
			  struct ibv_pd *pd, struct ibv_mr *mr,
			  uint32_t foreign)
{
	const struct { const char *what; uint32_t handle; int mr; } bad[] = {
		{ "a PD handle that names nothing", 0xfffffff0, 0 },
		{ "an MR's handle as a PD", mr->handle, 0 },
		{ "a handle of another file", foreign, 0 },
		{ "an MR handle that names nothing", 0xfffffff0, 1 },
		{ "a PD's handle as an MR", pd->handle, 1 },
		{ "an MR handle of another file", foreign, 1 },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		void *got;

		errno = 0;
		got = bad[i].mr ? (void *)ibv_import_mr(ipd, bad[i].handle) :
				  (void *)ibv_import_pd(ictx, bad[i].handle);
		CHECK(!got, "import of %s succeeded", bad[i].what);
		CHECK(errno, "import of %s: no errno", bad[i].what);
		printf("# import of %s: %s\n", bad[i].what, strerror(errno));
	}
}

/*
 * A child imports the context through its inherited file and, once the
 * parent's QP @qp is connected to its own, writes into the parent's memory
 * until it is killed.
 */
static pid_t writer_child(struct ibv_context *c, struct ibv_pd *pd,
			  struct ibv_mr *mr, char *buf, struct ibv_qp *peer)
{
	int up[2], down[2];
	uint32_t qpn;
	char go;
	pid_t pid;

	CHECK(!pipe(up) && !pipe(down), "pipe");
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (!pid) {
		struct ibv_context *cctx = ibv_import_device(c->cmd_fd);
		struct ibv_pd *cpd;
		struct ibv_mr *cmr;
		struct ibv_cq *cq;
		struct ibv_qp *qp;

		CHECK(cctx, "child: import_device: %s", strerror(errno));
		cpd = ibv_import_pd(cctx, pd->handle);
		CHECK(cpd, "child: import_pd: %s", strerror(errno));
		cmr = ibv_import_mr(cpd, mr->handle);
		CHECK(cmr, "child: import_mr: %s", strerror(errno));
		qp = qp_on(cctx, cpd, &cq);
		ctx = cctx;
		connect_qp(qp, peer->qp_num, 7);
		CHECK_EQ(write(up[1], &qp->qp_num, 4), 4);
		CHECK_EQ(read(down[0], &go, 1), 1);
		for (;;)
			write_wait(qp, cq, cmr, buf, cmr, buf + LEN, LEN);
	}
	CHECK_EQ(read(up[0], &qpn, 4), 4);
	connect_qp(peer, qpn, 7);
	CHECK_EQ(write(down[1], "g", 1), 1);
	close(up[0]);
	close(up[1]);
	close(down[0]);
	close(down[1]);
	return pid;
}

int main(void)
{
	const char *dev = getenv("SOFTRMA_DEV"), *ipv4 = getenv("SOFTRMA_IPV4");
	struct ibv_context *ictx, *other;
	struct ibv_pd *pd, *ipd, *opd[4];
	struct ibv_cq *cq_a, *cq_b, *cq_c;
	struct ibv_qp *qp_a, *qp_b, *qp_c;
	struct ibv_mr *mr, *imr, *mr_a;
	char *buf, *buf_a;
	int status;
	pid_t pid;

	CHECK(dev && ipv4, "SOFTRMA_DEV and SOFTRMA_IPV4 must be set");
	ctx = test_open_device(dev);
	gid_index = test_find_ipv4_gid(ctx, ipv4);
	buf = calloc(1, 2 * LEN);
	buf_a = calloc(1, 2 * LEN);
	CHECK(buf && buf_a, "calloc");
	pd = ibv_alloc_pd(ctx);
	CHECK(pd, "alloc_pd: %s", strerror(errno));
	mr = ibv_reg_mr(pd, buf, 2 * LEN, ALL_ACCESS);
	CHECK(mr, "reg_mr: %s", strerror(errno));

	ictx = ibv_import_device(dup(ctx->cmd_fd));
	CHECK(ictx, "import_device: %s", strerror(errno));
	ipd = ibv_import_pd(ictx, pd->handle);
	CHECK(ipd, "import_pd: %s", strerror(errno));
	CHECK_EQ(ipd->handle, pd->handle);
	imr = ibv_import_mr(ipd, mr->handle);
	CHECK(imr, "import_mr: %s", strerror(errno));
	CHECK_EQ(imr->lkey, mr->lkey);
	CHECK_EQ(imr->rkey, mr->rkey);
	CHECK_EQ(imr->length, mr->length);
	printf("# PD %u and MR %u imported: lkey, rkey, length as registered\n",
	       pd->handle, mr->handle);

	/* Handles past those of this file: another file's. */
	other = test_open_device(dev);
	for (int i = 0; i < 4; i++) {
		opd[i] = ibv_alloc_pd(other);
		CHECK(opd[i], "alloc_pd: %s", strerror(errno));
	}
	CHECK(opd[3]->handle > mr->handle, "handle %u", opd[3]->handle);
	check_refused(ictx, ipd, pd, mr, opd[3]->handle);

	/* A of the first context, B of the imported one on its PD and MR. */
	qp_a = qp_on(ctx, pd, &cq_a);
	qp_b = qp_on(ictx, ipd, &cq_b);
	mr_a = ibv_reg_mr(pd, buf_a, 2 * LEN, ALL_ACCESS);
	CHECK(mr_a, "reg_mr: %s", strerror(errno));
	connect_qp(qp_a, qp_b->qp_num, 7);
	connect_qp(qp_b, qp_a->qp_num, 7);
	fill(buf_a, LEN, 1);
	write_wait(qp_a, cq_a, mr_a, buf_a, imr, buf, LEN);
	CHECK(!memcmp(buf, buf_a, LEN), "A's write through the imported rkey");
	fill(buf + LEN, LEN, 2);
	write_wait(qp_b, cq_b, imr, buf + LEN, mr_a, buf_a + LEN, LEN);
	CHECK(!memcmp(buf + LEN, buf_a + LEN, LEN),
	      "B's write from the imported lkey");
	printf("# writes both ways between the first and the imported context\n");

	CHECK_EQ(ibv_dealloc_pd(ipd), EBUSY);

	/* pyverbs' order: unimport, then destroy what was created on them. */
	ibv_unimport_mr(imr);
	ibv_unimport_pd(ipd);
	CHECK_EQ(ibv_destroy_qp(qp_b), 0);
	CHECK_EQ(ibv_destroy_cq(cq_b), 0);
	fill(buf_a, LEN, 3);
	qp_b = qp_on(ctx, pd, &cq_b);
	CHECK_EQ(ibv_destroy_qp(qp_a), 0);
	qp_a = qp_on(ctx, pd, &cq_c);
	CHECK_EQ(ibv_destroy_cq(cq_a), 0);
	cq_a = cq_c;
	connect_qp(qp_a, qp_b->qp_num, 7);
	connect_qp(qp_b, qp_a->qp_num, 7);
	write_wait(qp_a, cq_a, mr_a, buf_a, mr, buf, LEN);
	CHECK(!memcmp(buf, buf_a, LEN), "the MR after its unimport");
	CHECK_EQ(ibv_close_device(ictx), 0);
	printf("# unimported PD and MR, closed import: the first context's work\n");

	/* A child that imports the context, killed mid-write. */
	qp_c = qp_on(ctx, pd, &cq_c);
	pid = writer_child(ctx, pd, mr, buf, qp_c);
	usleep(200 * 1000);
	CHECK_EQ(kill(pid, SIGKILL), 0);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFSIGNALED(status), "child status %#x", status);
	fill(buf_a, LEN, 4);
	write_wait(qp_a, cq_a, mr_a, buf_a, mr, buf, LEN);
	CHECK(!memcmp(buf, buf_a, LEN), "the parent's QP after the child died");
	printf("# a child that imported the context killed mid-write\n");

	CHECK_EQ(ibv_destroy_qp(qp_c), 0);
	CHECK_EQ(ibv_destroy_cq(cq_c), 0);
	CHECK_EQ(ibv_destroy_qp(qp_a), 0);
	CHECK_EQ(ibv_destroy_qp(qp_b), 0);
	CHECK_EQ(ibv_destroy_cq(cq_a), 0);
	CHECK_EQ(ibv_destroy_cq(cq_b), 0);
	CHECK_EQ(ibv_dereg_mr(mr_a), 0);
	CHECK_EQ(ibv_dereg_mr(mr), 0);
	CHECK_EQ(ibv_dealloc_pd(pd), EBUSY);	/* the child's QP is on it */
	for (int i = 0; i < 4; i++)
		CHECK_EQ(ibv_dealloc_pd(opd[i]), 0);
	CHECK_EQ(ibv_close_device(other), 0);
	CHECK_EQ(ibv_close_device(ctx), 0);
	free(buf);
	free(buf_a);
	printf("# shared PDs: imports, refusals, unimports, a killed importer\n");
	return KSFT_PASS;
}
