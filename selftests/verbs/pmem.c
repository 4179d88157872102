// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * RDMA FLUSH to persistent memory, and what a power failure leaves of it.
 * An MR over a devdax mapping (DAX) takes SOFTRMADV_ACCESS_FLUSH_PERSISTENT,
 * which DRAM refuses (EINVAL); a QP WRITEs 64 KiB into it and FLUSHes them
 * to persistence, as a range and as the whole MR: each completes, the data
 * is in the mapping, and the port counters flush_persistent and
 * written_back_bytes count each FLUSH and its bytes.
 *
 * With DOMAIN, the persistence domain the device was given (sysfs
 * persistence), the device's power_fail is triggered after each of these,
 * on memory the CPU filled with OLD_BYTE:
 *   cache  a WRITE (of bytes across pages, at an unaligned offset) without
 *          a FLUSH is lost; FLUSHed to persistence it survives, of the
 *          range or of the MR; partly FLUSHed, only the part survives; two
 *          WRITEs of the same bytes are both lost; a FLUSH to global
 *          visibility saves nothing; ATOMIC WRITE and fetch-and-add are
 *          lost, a compare-and-swap that does not swap writes nothing; the
 *          undo log overflows past 16 MiB, counted, and keeps what it
 *          holds;
 *   adr    a WRITE and an ATOMIC WRITE without a FLUSH survive;
 *   off    a power failure does nothing;
 *   noncoherent  cache on a non-coherent checking device: a WRITE without
 *          a FLUSH is lost even where a sync brought it to the CPU, which
 *          sees the old bytes again without a sync; FLUSHed, it survives
 *          and reaches the CPU at a sync; bytes put back leave no missing
 *          sync to report.
 * power_fail_lost_bytes counts exactly the bytes put back.  On the device
 * SOFTRMA_DEV, with the transport force_wire sets.
 *
 * usage: [SOFTRMA_DEV=softrma0] [SOFTRMA_IPV4=10.9.0.1] pmem /dev/daxX.Y [DOMAIN]
 * (DOMAIN noncoherent: the device is also checking, with persistence cache)
 */
#include "softrmadv.h"
#include <fcntl.h>
#include <unistd.h>
#include <sys/mman.h>

#include "test.h"

#define PM_LEN		(20 << 20)
#define LEN		65536
#define OFF		12288
#define SRC_LEN		(1 << 20)
#define OLD_BYTE	0x5a
#define POFF		(OFF + 100)		/* power failure cases */
#define PLEN		(3 * 4096 + 57)
#define AOFF		(OFF + 8 * 4096 + 64)
#define BIG		(2 << 20)		/* 17 MiB to overflow the log */
#define ACCESS		(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_ATOMIC | \
			 SOFTRMADV_ACCESS_FLUSH_GLOBAL | \
			 SOFTRMADV_ACCESS_FLUSH_PERSISTENT)

static const char *dev;
static struct ibv_context *ctx;
static struct ibv_cq *cq;
static struct ibv_qp_ex *qx;
static struct ibv_mr *pm_mr, *src_mr;
static uint8_t *pm, *src;

static struct ibv_qp *create_qp(struct ibv_pd *pd)
{
	struct ibv_qp_init_attr_ex init = {
		.qp_type = IBV_QPT_RC, .send_cq = cq, .recv_cq = cq,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = pd,
		.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE |
				  IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
				  IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD |
				  IBV_QP_EX_WITH_ATOMIC_WRITE |
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

/*
 * FLUSHes [addr, addr + len) (level RANGE) or the MR to @type: to
 * persistence, its counters move.
 */
static void flush(uint64_t addr, uint64_t len, uint8_t type, uint8_t level)
{
	unsigned long long n = test_port_counter(ctx, "flush_persistent");
	unsigned long long b = test_port_counter(ctx, "written_back_bytes");

	ibv_wr_start(qx);
	qx->wr_flags = IBV_SEND_SIGNALED;
	softrmadv_wr_flush(qx, pm_mr->rkey, addr, len, type, level);
	CHECK_EQ(ibv_wr_complete(qx), 0);
	complete(SOFTRMADV_WC_FLUSH);
	if (type != SOFTRMADV_FLUSH_PERSISTENT)
		return;
	expect_counter("flush_persistent", n + 1);
	expect_counter("written_back_bytes",
		       b + (level == SOFTRMADV_FLUSH_MR ? pm_mr->length : len));
}

static void flush_range(uint64_t off, uint64_t len)
{
	flush((uintptr_t)pm + off, len, SOFTRMADV_FLUSH_PERSISTENT,
	      SOFTRMADV_FLUSH_RANGE);
}

/* WRITEs src[0, len) to pm[off, off + len). */
static void write_pm(uint64_t off, uint32_t len)
{
	ibv_wr_start(qx);
	qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(qx, pm_mr->rkey, (uintptr_t)pm + off);
	ibv_wr_set_sge(qx, src_mr->lkey, (uintptr_t)src, len);
	CHECK_EQ(ibv_wr_complete(qx), 0);
	complete(IBV_WC_RDMA_WRITE);
}

enum atomic { CAS, FAA, ATOMIC_WRITE };

/* @op on the 8 bytes at pm[AOFF], the original value into src. */
static void atomic_pm(enum atomic op)
{
	uint64_t value = 0x1111111111111111ULL;

	ibv_wr_start(qx);
	qx->wr_flags = IBV_SEND_SIGNALED;
	if (op == CAS)		/* compares with what is not there */
		ibv_wr_atomic_cmp_swp(qx, pm_mr->rkey, (uintptr_t)pm + AOFF,
				      0, value);
	else if (op == FAA)
		ibv_wr_atomic_fetch_add(qx, pm_mr->rkey, (uintptr_t)pm + AOFF,
					value);
	else
		ibv_wr_atomic_write(qx, pm_mr->rkey, (uintptr_t)pm + AOFF,
				    &value);
	if (op != ATOMIC_WRITE)
		ibv_wr_set_sge(qx, src_mr->lkey, (uintptr_t)src, 8);
	CHECK_EQ(ibv_wr_complete(qx), 0);
	complete(op == CAS ? IBV_WC_COMP_SWAP :
		 op == FAA ? IBV_WC_FETCH_ADD : IBV_WC_ATOMIC_WRITE);
}

/* Writing @value to the device's sysfs @attr fails with @err. */
static void sysfs_refused(const char *attr, const char *value, int err)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/%s", dev, attr);
	f = fopen(path, "w");
	CHECK(f, "%s: %s", path, strerror(errno));
	fputs(value, f);
	CHECK(fclose(f) == EOF && errno == err, "%s took %s: %s", path, value,
	      strerror(errno));
}

static void power_fail(unsigned long long lost)
{
	unsigned long long got = test_power_fail(ctx);

	CHECK(got == lost, "power_fail_lost_bytes moved by %llu, want %llu",
	      got, lost);
}

/* pm[off, off + len) holds OLD_BYTE (@old) or src's bytes. */
static void expect_pm(uint64_t off, uint64_t len, int old, const char *what)
{
	for (uint64_t i = 0; i < len; i++) {
		uint8_t want = old ? OLD_BYTE : src[i % SRC_LEN];

		CHECK(pm[off + i] == want, "%s: byte %llu of the range is 0x%02x, want 0x%02x",
		      what, (unsigned long long)i, pm[off + i], want);
	}
}

static void refill(void)
{
	memset(pm, OLD_BYTE, PM_LEN);
}

static void cache_domain(void)
{
	unsigned long long overflows, lost;
	uint64_t v;

	write_pm(POFF, PLEN);
	expect_pm(POFF, PLEN, 0, "WRITE, before the power failure");
	power_fail(PLEN);
	expect_pm(POFF, PLEN, 1, "WRITE without FLUSH");

	write_pm(POFF, PLEN);
	flush_range(POFF, PLEN);
	power_fail(0);
	expect_pm(POFF, PLEN, 0, "WRITE, FLUSH");
	refill();

	write_pm(POFF, PLEN);
	flush((uintptr_t)pm, 0, SOFTRMADV_FLUSH_PERSISTENT, SOFTRMADV_FLUSH_MR);
	power_fail(0);
	expect_pm(POFF, PLEN, 0, "WRITE, FLUSH of the MR");
	refill();

	write_pm(POFF, PLEN);
	flush_range(POFF + 1000, 5000);
	power_fail(PLEN - 5000);
	expect_pm(POFF, 1000, 1, "WRITE, FLUSH of its middle: the head");
	CHECK(!memcmp(pm + POFF + 1000, src + 1000, 5000),
	      "WRITE, FLUSH of its middle: the middle is lost");
	expect_pm(POFF + 6000, PLEN - 6000, 1,
		  "WRITE, FLUSH of its middle: the tail");
	refill();

	write_pm(POFF, PLEN);
	src[0] ^= 0xff;
	write_pm(POFF, PLEN);
	src[0] ^= 0xff;
	power_fail(2 * PLEN);
	expect_pm(POFF, PLEN, 1, "two WRITEs without FLUSH");

	write_pm(POFF, PLEN);
	flush((uintptr_t)pm + POFF, PLEN, SOFTRMADV_FLUSH_GLOBAL,
	      SOFTRMADV_FLUSH_RANGE);
	power_fail(PLEN);
	expect_pm(POFF, PLEN, 1, "WRITE, FLUSH to global visibility");

	for (enum atomic op = CAS; op <= ATOMIC_WRITE; op++) {
		atomic_pm(op);
		power_fail(op == CAS ? 0 : 8);
		memcpy(&v, pm + AOFF, 8);
		CHECK(v == 0x5a5a5a5a5a5a5a5aULL, "atomic %d: 0x%llx survived",
		      op, (unsigned long long)v);
	}

	/*
	 * 17 MiB: the log takes at most 16 MiB with its entries, in the
	 * writes' order; what it holds is put back, and nothing else.
	 */
	overflows = test_port_counter(ctx, "undo_log_overflows");
	for (int i = 0; i < 17; i++)
		write_pm(BIG + (uint64_t)i * SRC_LEN, SRC_LEN);
	usleep(20000);
	CHECK(test_port_counter(ctx, "undo_log_overflows") > overflows,
	      "17 MiB in the undo log, and no overflow");
	lost = test_power_fail(ctx);
	CHECK(lost > 12 * SRC_LEN && lost < 16 * SRC_LEN,
	      "%llu bytes put back of 17 MiB", lost);
	expect_pm(BIG, lost, 1, "the writes the log held");
	for (uint64_t off = lost; off < 17 * SRC_LEN; off++)
		CHECK(pm[BIG + off] == src[off % SRC_LEN],
		      "byte %llu of 17 MiB: put back past the log",
		      (unsigned long long)off);
	refill();
}

static void sync_pm(uint64_t off, uint64_t len, enum softrmadv_sync_dir dir)
{
	CHECK_EQ(softrmadv_sync_mr(pm_mr, (uintptr_t)pm + off, len, dir), 0);
}

static void noncoherent_cache(void)
{
	unsigned long long unseen = test_port_counter(ctx, "missing_sync_to_cpu");

	write_pm(POFF, PLEN);
	sync_pm(POFF, PLEN, SOFTRMADV_SYNC_TO_CPU);
	expect_pm(POFF, PLEN, 0, "WRITE, synced to the CPU");
	power_fail(PLEN);
	expect_pm(POFF, PLEN, 1, "WRITE without FLUSH, synced to the CPU");

	write_pm(POFF, PLEN);
	power_fail(PLEN);
	sync_pm(POFF, PLEN, SOFTRMADV_SYNC_TO_DEVICE);
	expect_pm(POFF, PLEN, 1, "WRITE without FLUSH, not synced");

	write_pm(POFF, PLEN);
	flush_range(POFF, PLEN);
	power_fail(0);
	expect_pm(POFF, PLEN, 1, "WRITE, FLUSH, not synced to the CPU");
	sync_pm(POFF, PLEN, SOFTRMADV_SYNC_TO_CPU);
	expect_pm(POFF, PLEN, 0, "WRITE, FLUSH, synced to the CPU");
	usleep(20000);
	CHECK_EQ(test_port_counter(ctx, "missing_sync_to_cpu"), unseen);
}

static void adr_domain(void)
{
	uint64_t v;

	write_pm(POFF, PLEN);
	atomic_pm(ATOMIC_WRITE);
	power_fail(0);
	expect_pm(POFF, PLEN, 0, "WRITE without FLUSH");
	memcpy(&v, pm + AOFF, 8);
	CHECK(v == 0x1111111111111111ULL, "ATOMIC WRITE lost: 0x%llx",
	      (unsigned long long)v);
	refill();
}

int main(int argc, char **argv)
{
	const char *ipv4 = getenv("SOFTRMA_IPV4") ?: "10.9.0.1";
	const char *domain = argc == 3 ? argv[2] : NULL;
	struct ibv_qp *qa, *qb;
	struct ibv_pd *pd;
	int fd, gid_index;

	CHECK(argc == 2 || argc == 3, "usage: pmem /dev/daxX.Y [off|cache|adr]");
	dev = getenv("SOFTRMA_DEV") ?: "softrma0";
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
	refill();
	pm_mr = ibv_reg_mr(pd, pm, PM_LEN, ACCESS);
	CHECK(pm_mr, "reg_mr on %s with FLUSH_PERSISTENT: %s", argv[1],
	      strerror(errno));

	src = mmap(NULL, SRC_LEN, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(src != MAP_FAILED, "mmap");
	CHECK(!ibv_reg_mr(pd, src, SRC_LEN, ACCESS) && errno == EINVAL,
	      "FLUSH_PERSISTENT on DRAM: %s", strerror(errno));
	src_mr = ibv_reg_mr(pd, src, SRC_LEN, IBV_ACCESS_LOCAL_WRITE);
	CHECK(src_mr, "reg_mr: %s", strerror(errno));
	/* Never OLD_BYTE: a byte put back is told from one written. */
	for (int i = 0; i < SRC_LEN; i++)
		src[i] = (uint8_t)(i * 13 + 1) == OLD_BYTE ? 0 : i * 13 + 1;
	/* What a checking device needs, and any other takes. */
	CHECK_EQ(softrmadv_sync_mr(src_mr, (uintptr_t)src, SRC_LEN,
				   SOFTRMADV_SYNC_TO_DEVICE), 0);

	qa = create_qp(pd);
	qb = create_qp(pd);
	test_connect_rc(ctx, qa, gid_index, qb->qp_num, 7);
	test_connect_rc(ctx, qb, gid_index, qa->qp_num, 7);
	qx = ibv_qp_to_qp_ex(qa);

	/* What the CPU sees of the device's writes: a checking device's later. */
	if (!domain || strcmp(domain, "noncoherent")) {
		write_pm(OFF, LEN);
		flush_range(OFF, LEN);
		CHECK(!memcmp(pm + OFF, src, LEN), "the WRITE is not in %s",
		      argv[1]);
		flush((uintptr_t)pm, 0, SOFTRMADV_FLUSH_PERSISTENT,
		      SOFTRMADV_FLUSH_MR);
		refill();
	}
	if (domain)
		sysfs_refused("persistence", "off", EBUSY);
	if (domain && !strcmp(domain, "cache"))
		cache_domain();
	else if (domain && !strcmp(domain, "adr"))
		adr_domain();
	else if (domain && !strcmp(domain, "noncoherent"))
		noncoherent_cache();
	else if (domain) {
		CHECK(!strcmp(domain, "off"), "domain %s", domain);
		write_pm(POFF, PLEN);
		power_fail(0);
		expect_pm(POFF, PLEN, 0, "WRITE, not checked");
	}

	CHECK_EQ(ibv_destroy_qp(qa), 0);
	CHECK_EQ(ibv_destroy_qp(qb), 0);
	CHECK_EQ(ibv_dereg_mr(src_mr), 0);
	CHECK_EQ(ibv_dereg_mr(pm_mr), 0);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
	CHECK_EQ(ibv_dealloc_pd(pd), 0);
	CHECK_EQ(ibv_close_device(ctx), 0);
	printf("# %s: WRITE and FLUSH to persistence, of a range and of the MR%s%s\n",
	       argv[1], domain ? "; power failures, persistence " : "",
	       domain ?: "");
	return KSFT_PASS;
}
