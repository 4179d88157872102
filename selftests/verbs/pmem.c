// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * RDMA FLUSH to persistent memory.  An MR over a devdax mapping (DAX) takes
 * SOFTRMADV_ACCESS_FLUSH_PERSISTENT, which DRAM refuses (EINVAL); a QP
 * WRITEs 64 KiB into it and FLUSHes them to persistence, as a range and as
 * the whole MR: each completes, the data is in the mapping, and the port
 * counters flush_persistent and written_back_bytes count each FLUSH and
 * its bytes.  On the device SOFTRMA_DEV, with the transport force_wire
 * sets.
 *
 * usage: [SOFTRMA_DEV=softrma0] [SOFTRMA_IPV4=10.9.0.1] pmem /dev/daxX.Y
 */
#include "softrmadv.h"
#include <fcntl.h>
#include <unistd.h>
#include <sys/mman.h>

#include "test.h"

#define PM_LEN		(2 << 20)
#define LEN		65536
#define OFF		12288
#define ACCESS		(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 SOFTRMADV_ACCESS_FLUSH_GLOBAL | \
			 SOFTRMADV_ACCESS_FLUSH_PERSISTENT)

static struct ibv_context *ctx;
static struct ibv_cq *cq;

static struct ibv_qp *create_qp(struct ibv_pd *pd)
{
	struct ibv_qp_init_attr_ex init = {
		.qp_type = IBV_QPT_RC, .send_cq = cq, .recv_cq = cq,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = pd,
		.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE |
				  SOFTRMADV_QP_EX_WITH_FLUSH,
	};
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = ACCESS,
	};
	struct ibv_qp *qp = ibv_create_qp_ex(ctx, &init);

	CHECK(qp, "create_qp_ex: %s", strerror(errno));
	CHECK_EQ(ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			       IBV_QP_PORT | IBV_QP_ACCESS_FLAGS), 0);
	return qp;
}

static void complete(enum ibv_wc_opcode opcode)
{
	struct ibv_wc wc = test_poll_one(cq, 10);

	CHECK(wc.status == IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	CHECK_EQ(wc.opcode, opcode);
}

/*
 * Waits for the counter @name to reach @want: the core keeps what it read
 * for a lifespan of 10 ms.
 */
static void expect_counter(const char *name, unsigned long long want)
{
	unsigned long long got = 0;

	for (int i = 0; i < 100 * test_bound(2); i++) {
		got = test_port_counter(ctx, name);
		if (got >= want)
			break;
		usleep(10000);
	}
	CHECK(got == want, "%s = %llu, want %llu", name, got, want);
}

/* FLUSHes [addr, addr + len) (level RANGE) or the MR: its counters move. */
static void flush(struct ibv_qp_ex *qx, struct ibv_mr *mr, uint64_t addr,
		  uint64_t len, uint8_t level)
{
	unsigned long long n = test_port_counter(ctx, "flush_persistent");
	unsigned long long b = test_port_counter(ctx, "written_back_bytes");

	ibv_wr_start(qx);
	qx->wr_flags = IBV_SEND_SIGNALED;
	softrmadv_wr_flush(qx, mr->rkey, addr, len, SOFTRMADV_FLUSH_PERSISTENT,
			   level);
	CHECK_EQ(ibv_wr_complete(qx), 0);
	complete(SOFTRMADV_WC_FLUSH);
	expect_counter("flush_persistent", n + 1);
	expect_counter("written_back_bytes",
		       b + (level == SOFTRMADV_FLUSH_MR ? mr->length : len));
}

int main(int argc, char **argv)
{
	const char *dev = getenv("SOFTRMA_DEV") ?: "softrma0";
	const char *ipv4 = getenv("SOFTRMA_IPV4") ?: "10.9.0.1";
	struct ibv_mr *pm_mr, *src_mr;
	struct ibv_qp *qa, *qb;
	struct ibv_qp_ex *qx;
	uint8_t *pm, *src;
	struct ibv_pd *pd;
	int fd, gid_index;

	CHECK(argc == 2, "usage: pmem /dev/daxX.Y");
	ctx = test_open_device(dev);
	gid_index = test_find_ipv4_gid(ctx, ipv4);
	pd = ibv_alloc_pd(ctx);
	CHECK(pd, "alloc_pd");
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	CHECK(cq, "create_cq");

	fd = open(argv[1], O_RDWR);
	CHECK(fd >= 0, "%s: %s", argv[1], strerror(errno));
	pm = mmap(NULL, PM_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(pm != MAP_FAILED, "mmap %s: %s", argv[1], strerror(errno));
	memset(pm, 0, PM_LEN);
	pm_mr = ibv_reg_mr(pd, pm, PM_LEN, ACCESS);
	CHECK(pm_mr, "reg_mr on %s with FLUSH_PERSISTENT: %s", argv[1],
	      strerror(errno));

	src = mmap(NULL, LEN, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(src != MAP_FAILED, "mmap");
	CHECK(!ibv_reg_mr(pd, src, LEN, ACCESS) && errno == EINVAL,
	      "FLUSH_PERSISTENT on DRAM: %s", strerror(errno));
	src_mr = ibv_reg_mr(pd, src, LEN, IBV_ACCESS_LOCAL_WRITE);
	CHECK(src_mr, "reg_mr: %s", strerror(errno));
	for (int i = 0; i < LEN; i++)
		src[i] = (uint8_t)(i * 13 + 1);

	qa = create_qp(pd);
	qb = create_qp(pd);
	test_connect_rc(ctx, qa, gid_index, qb->qp_num, 7);
	test_connect_rc(ctx, qb, gid_index, qa->qp_num, 7);
	qx = ibv_qp_to_qp_ex(qa);

	ibv_wr_start(qx);
	qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(qx, pm_mr->rkey, (uintptr_t)pm + OFF);
	ibv_wr_set_sge(qx, src_mr->lkey, (uintptr_t)src, LEN);
	CHECK_EQ(ibv_wr_complete(qx), 0);
	complete(IBV_WC_RDMA_WRITE);
	flush(qx, pm_mr, (uintptr_t)pm + OFF, LEN, SOFTRMADV_FLUSH_RANGE);
	CHECK(!memcmp(pm + OFF, src, LEN), "the WRITE is not in %s", argv[1]);
	flush(qx, pm_mr, (uintptr_t)pm, 0, SOFTRMADV_FLUSH_MR);

	CHECK_EQ(ibv_destroy_qp(qa), 0);
	CHECK_EQ(ibv_destroy_qp(qb), 0);
	CHECK_EQ(ibv_dereg_mr(src_mr), 0);
	CHECK_EQ(ibv_dereg_mr(pm_mr), 0);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
	CHECK_EQ(ibv_dealloc_pd(pd), 0);
	CHECK_EQ(ibv_close_device(ctx), 0);
	printf("# %s: WRITE and FLUSH to persistence, of a range and of the MR\n",
	       argv[1]);
	return KSFT_PASS;
}
