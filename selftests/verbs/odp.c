// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * On-demand paging: MRs registered with IBV_ACCESS_ON_DEMAND pin nothing;
 * the device faults their pages in as it needs them and lets go of them
 * when the process's mappings change.  What it reports, traffic of every
 * kind into and out of memory never touched before, ibv_advise_mr(), and
 * the hostile cases: a range unmapped, mapped again, read-only (a file's
 * page cache among them), protected after use or copied by fork() under
 * the MR; pages taken back while a stream of WRITEs goes on, and faster
 * than a fault completes while other QPs carry on; two MRs over
 * the same bytes copied both ways at once; a window that would lend ODP
 * pages.  One kselftest_harness.h case per behaviour, each on the local
 * transport (variant "local") and in RoCEv2 packets through lo ("wire").
 *
 * usage: [SOFTRMA_DEV=softrma0] [SOFTRMA_IPV4=10.9.0.1] odp [HARNESS OPTIONS]
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pair.h"
#include "transport.h"

#define ODP_ACCESS (ALL_ACCESS | IBV_ACCESS_ON_DEMAND)
#define REGION (4 << 20)

FIXTURE(odp) {
	struct pair p;
	void *mem[2];		/* REGION each, for a's and b's ODP MRs */
	struct ibv_mr *mr[2];
};

TRANSPORT_VARIANTS(odp);

FIXTURE_SETUP(odp)
{
	ctx = transport_open_device(&gid_index);
	if (!transport_set(variant->force_wire))
		SKIP(return, "%s: %s", FORCE_WIRE, strerror(errno));
}

FIXTURE_TEARDOWN(odp)
{
	for (int i = 0; i < 2; i++) {
		if (self->mr[i])
			CHECK_EQ(ibv_dereg_mr(self->mr[i]), 0);
		if (self->mem[i])
			munmap(self->mem[i], REGION);
	}
	if (self->p.a.qp)
		pair_fini(&self->p);
	transport_put_back();
}

/* Anonymous memory that nothing has touched yet. */
static void *fresh(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	CHECK(p != MAP_FAILED, "mmap: %s", strerror(errno));
	return p;
}

static struct ibv_mr *reg_odp(struct ibv_pd *pd, void *addr, size_t len,
			      int access)
{
	struct ibv_mr *mr = ibv_reg_mr(pd, addr, len, access);

	CHECK(mr, "ODP reg_mr: %s", strerror(errno));
	return mr;
}

/* A connected pair, each side with an ODP MR over fresh memory. */
static void odp_init(FIXTURE_DATA(odp) *self)
{
	pair_init(&self->p, ALL_ACCESS, 7);
	for (int i = 0; i < 2; i++) {
		self->mem[i] = fresh(REGION);
		self->mr[i] = reg_odp(i ? self->p.b.pd : self->p.a.pd,
				      self->mem[i], REGION, ODP_ACCESS);
	}
}

/*
 * After an error put the QPs in error: a new pair, and the ODP MRs
 * registered again over the same memory.
 */
static void odp_reconnect(FIXTURE_DATA(odp) *self)
{
	for (int i = 0; i < 2; i++)
		if (self->mr[i])
			CHECK_EQ(ibv_dereg_mr(self->mr[i]), 0);
	pair_fini(&self->p);
	pair_init(&self->p, ALL_ACCESS, 7);
	for (int i = 0; i < 2; i++)
		if (self->mr[i])
			self->mr[i] = reg_odp(i ? self->p.b.pd : self->p.a.pd,
					      self->mem[i], REGION, ODP_ACCESS);
}

/* A port counter, read once its 10 ms cache has gone. */
static unsigned long long counter(const char *name)
{
	usleep(20000);
	return test_port_counter(ctx, name);
}

/* Posts one signaled WR of a's and waits @seconds for its completion. */
static struct ibv_wc rma_within(struct side *a, enum ibv_wr_opcode opcode,
				struct ibv_mr *mr, void *addr, uint32_t len,
				struct ibv_mr *rmr, void *raddr, int seconds)
{
	struct ibv_sge sge = { (uintptr_t)addr, len, mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .opcode = opcode,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	if (opcode == IBV_WR_ATOMIC_FETCH_AND_ADD ||
	    opcode == IBV_WR_ATOMIC_CMP_AND_SWP) {
		wr.wr.atomic.remote_addr = (uintptr_t)raddr;
		wr.wr.atomic.rkey = rmr->rkey;
		/* FETCH_ADD adds 5, CMP_SWP swaps 15 for 0x5a5a. */
		wr.wr.atomic.compare_add =
			opcode == IBV_WR_ATOMIC_CMP_AND_SWP ? 15 : 5;
		wr.wr.atomic.swap = 0x5a5a;
	} else if (rmr) {
		wr.wr.rdma.remote_addr = (uintptr_t)raddr;
		wr.wr.rdma.rkey = rmr->rkey;
	}
	CHECK_EQ(ibv_post_send(a->qp, &wr, &bad), 0);
	return test_poll_one(a->cq, seconds);
}

static struct ibv_wc rma(struct side *a, enum ibv_wr_opcode opcode,
			 struct ibv_mr *mr, void *addr, uint32_t len,
			 struct ibv_mr *rmr, void *raddr)
{
	return rma_within(a, opcode, mr, addr, len, rmr, raddr, 5);
}

static void expect_status(struct ibv_wc wc, enum ibv_wc_status want,
			  const char *what)
{
	CHECK(wc.status == want, "%s: %s, want %s", what,
	      ibv_wc_status_str(wc.status), ibv_wc_status_str(want));
}

static void post_recv_into(struct side *b, struct ibv_mr *mr, void *addr,
			   uint32_t len)
{
	struct ibv_sge sge = { (uintptr_t)addr, len, mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = 0xb, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	CHECK_EQ(ibv_post_recv(b->qp, &wr, &bad), 0);
}

/*
 * Explicit and implicit ODP (the whole address space, registered as
 * NULL..SIZE_MAX at iova 0) for every RC operation.
 */
TEST_F(odp, caps)
{
	const uint32_t rc = IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV |
			    IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_READ |
			    IBV_ODP_SUPPORT_ATOMIC | IBV_ODP_SUPPORT_SRQ_RECV;
	struct ibv_device_attr_ex attr;
	struct ibv_pd *pd;

	CHECK_EQ(ibv_query_device_ex(ctx, NULL, &attr), 0);
	CHECK_EQ(attr.odp_caps.general_caps,
		 IBV_ODP_SUPPORT | IBV_ODP_SUPPORT_IMPLICIT);
	CHECK_EQ(attr.odp_caps.per_transport_caps.rc_odp_caps, rc);
	CHECK_EQ(attr.odp_caps.per_transport_caps.ud_odp_caps,
		 IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV |
		 IBV_ODP_SUPPORT_SRQ_RECV);
	CHECK_EQ(attr.xrc_odp_caps, rc & ~IBV_ODP_SUPPORT_RECV);
	pd = ibv_alloc_pd(ctx);
	CHECK(pd, "alloc_pd");
	errno = 0;
	CHECK(!ibv_reg_mr_iova(pd, NULL, SIZE_MAX, 4096, ODP_ACCESS),
	      "implicit ODP MR at iova 4096");
	CHECK(errno == EINVAL, "implicit ODP at iova 4096: %s", strerror(errno));
	CHECK(!ibv_reg_mr(pd, NULL, SIZE_MAX, ALL_ACCESS), "pinned, SIZE_MAX");
	CHECK_EQ(ibv_dealloc_pd(pd), 0);
}

/* Both sides' implicit ODP MRs (0 when not yet registered). */
static void implicit_init(FIXTURE_DATA(odp) *self)
{
	for (int i = 0; i < 2; i++)
		self->mr[i] = reg_odp(i ? self->p.b.pd : self->p.a.pd, NULL,
				      SIZE_MAX, ODP_ACCESS);
}

/*
 * Implicit ODP MRs on both sides: WRITE, READ, SEND and an atomic between
 * any memory of the process, the stack (the top chunk of user space) among
 * it, through the one key of each side; every byte checked.
 */
TEST_F(odp, implicit_every_operation)
{
	char stack[8192], *a, *b;
	uint64_t *t;
	struct ibv_wc wc;

	pair_init(&self->p, ALL_ACCESS, 7);
	implicit_init(self);
	self->mem[0] = a = fresh(REGION);
	self->mem[1] = b = fresh(REGION);
	fill(a, REGION, 0x91);
	expect_status(rma(&self->p.a, IBV_WR_RDMA_WRITE, self->mr[0], a + 5,
			  REGION - 10, self->mr[1], b + 3), IBV_WC_SUCCESS,
		      "WRITE through implicit MRs");
	CHECK(!memcmp(b + 3, a + 5, REGION - 10), "WRITE data");
	memset(stack, 0, sizeof(stack));
	expect_status(rma(&self->p.a, IBV_WR_RDMA_WRITE, self->mr[0], a,
			  sizeof(stack), self->mr[1], stack), IBV_WC_SUCCESS,
		      "WRITE into the stack");
	CHECK(!memcmp(stack, a, sizeof(stack)), "WRITE data on the stack");
	expect_status(rma(&self->p.a, IBV_WR_RDMA_READ, self->mr[0],
			  a + REGION / 2, 100000, self->mr[1], b + 3),
		      IBV_WC_SUCCESS, "READ");
	CHECK(!memcmp(a + REGION / 2, a + 5, 100000), "READ data");
	post_recv_into(&self->p.b, self->mr[1], b + 1000, 70000);
	expect_status(rma(&self->p.a, IBV_WR_SEND, self->mr[0], a + 7, 65537,
			  NULL, NULL), IBV_WC_SUCCESS, "SEND");
	wc = test_poll_one(self->p.b.cq, 5);
	expect_status(wc, IBV_WC_SUCCESS, "RECV");
	CHECK(!memcmp(b + 1000, a + 7, 65537), "SEND data");
	t = (uint64_t *)(b + REGION - 8);
	*t = 10;
	expect_status(rma(&self->p.a, IBV_WR_ATOMIC_FETCH_AND_ADD, self->mr[0],
			  a + 64, 8, self->mr[1], t), IBV_WC_SUCCESS,
		      "FETCH_ADD");
	CHECK(*t == 15, "FETCH_ADD: %llu", (unsigned long long)*t);
}

/*
 * Through an implicit MR, addresses with nothing behind them: the zero
 * page, a range unmapped, the kernel's half: IBV_WC_REM_ACCESS_ERR, and
 * nothing written.
 */
TEST_F(odp, implicit_nothing_there)
{
	char *const targets[] = {
		NULL, (char *)0x10000, (char *)0xffff888000000000ULL,
		(char *)0x800000000000ULL - 4096,
	};
	char *hole;

	pair_init(&self->p, ALL_ACCESS, 7);
	hole = fresh(REGION);
	CHECK_EQ(munmap(hole, REGION), 0);
	fill(self->p.a.buf, 4096, 0xa1);
	for (unsigned int i = 0; i <= sizeof(targets) / sizeof(targets[0]); i++) {
		char *t = i < sizeof(targets) / sizeof(targets[0]) ?
			  targets[i] : hole + 8192;

		if (i) {
			CHECK_EQ(ibv_dereg_mr(self->mr[1]), 0);
			CHECK_EQ(ibv_dereg_mr(self->mr[0]), 0);
			pair_fini(&self->p);
			pair_init(&self->p, ALL_ACCESS, 7);
			fill(self->p.a.buf, 4096, 0xa1);
		}
		implicit_init(self);
		expect_status(rma(&self->p.a, IBV_WR_RDMA_WRITE, self->p.a.mr,
				  self->p.a.buf, 4096, self->mr[1], t),
			      IBV_WC_REM_ACCESS_ERR, "WRITE to nothing");
	}
}

/*
 * The module's ODP MRs together register at most 16 times the RAM (the
 * core's lists of each take 16 bytes per page registered, unaccounted): MRs
 * of 64 GiB over nothing end in ENOMEM within that, and once they are gone
 * the next one registers.
 */
TEST_F(odp, budget)
{
	const uint64_t ram = (uint64_t)sysconf(_SC_PHYS_PAGES) *
			     sysconf(_SC_PAGESIZE);
	const size_t len = 64ULL << 30;
	struct ibv_mr *mrs[64];
	struct ibv_pd *pd;
	int n = 0;
	void *va;

	va = mmap(NULL, len, PROT_NONE,
		  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	CHECK(va != MAP_FAILED, "mmap: %s", strerror(errno));
	pd = ibv_alloc_pd(ctx);
	CHECK(pd, "alloc_pd");
	for (errno = 0; n < 64; n++) {
		mrs[n] = ibv_reg_mr(pd, va, len, ODP_ACCESS);
		if (!mrs[n])
			break;
	}
	CHECK(n < 64 && errno == ENOMEM, "%d ODP MRs of 64 GiB, then %s", n,
	      strerror(errno));
	CHECK((uint64_t)n * len <= 16 * ram,
	      "%d ODP MRs of 64 GiB with %llu MiB of RAM", n,
	      (unsigned long long)(ram >> 20));
	while (n--)
		CHECK_EQ(ibv_dereg_mr(mrs[n]), 0);
	mrs[0] = reg_odp(pd, va, 4 << 20, ODP_ACCESS);
	CHECK_EQ(ibv_dereg_mr(mrs[0]), 0);
	CHECK_EQ(ibv_dealloc_pd(pd), 0);
	munmap(va, len);
}

/*
 * Registration pins nothing and needs no mapping: a range unmapped when it
 * is registered takes WRITEs once it is mapped.
 */
TEST_F(odp, nothing_pinned)
{
	struct ibv_mr *big;
	long before;
	char *hole, *src;

	pair_init(&self->p, ALL_ACCESS, 7);
	before = test_pinned_kb();
	self->mem[0] = fresh(REGION);
	big = reg_odp(self->p.a.pd, self->mem[0], REGION, ODP_ACCESS);
	CHECK_EQ(test_pinned_kb(), before);
	CHECK_EQ(ibv_dereg_mr(big), 0);

	hole = fresh(REGION);
	CHECK_EQ(munmap(hole, REGION), 0);
	self->mr[1] = reg_odp(self->p.b.pd, hole, REGION, ODP_ACCESS);
	CHECK(mmap(hole, REGION, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == hole,
	      "mmap at the hole: %s", strerror(errno));
	self->mem[1] = hole;
	src = self->p.a.buf;
	fill(src, 8192, 0x11);
	expect_status(rma(&self->p.a, IBV_WR_RDMA_WRITE, self->p.a.mr, src,
			  8192, self->mr[1], hole + 4096), IBV_WC_SUCCESS,
		      "WRITE into a range mapped after registration");
	CHECK(!memcmp(hole + 4096, src, 8192), "WRITE data");
	CHECK_EQ(test_pinned_kb(), before);
}

/*
 * WRITE, READ, SEND and both atomics between ODP MRs over memory never
 * touched: every byte lands, and pages were faulted in.
 */
TEST_F(odp, every_operation)
{
	unsigned long long faults = counter("odp_faults");
	char *a, *b;
	uint64_t *t, *r;
	struct ibv_wc wc;

	odp_init(self);
	a = self->mem[0];
	b = self->mem[1];
	fill(a, REGION / 2, 0x21);
	expect_status(rma(&self->p.a, IBV_WR_RDMA_WRITE, self->mr[0], a,
			  REGION / 2, self->mr[1], b + 12345), IBV_WC_SUCCESS,
		      "WRITE");
	CHECK(!memcmp(b + 12345, a, REGION / 2), "WRITE data");
	expect_status(rma(&self->p.a, IBV_WR_RDMA_READ, self->mr[0],
			  a + REGION / 2, 100000, self->mr[1], b + 12345),
		      IBV_WC_SUCCESS, "READ");
	CHECK(!memcmp(a + REGION / 2, a, 100000), "READ data");

	post_recv_into(&self->p.b, self->mr[1], b + REGION - 70000, 70000);
	expect_status(rma(&self->p.a, IBV_WR_SEND, self->mr[0], a + 3, 65537,
			  NULL, NULL), IBV_WC_SUCCESS, "SEND");
	wc = test_poll_one(self->p.b.cq, 5);
	expect_status(wc, IBV_WC_SUCCESS, "RECV");
	CHECK_EQ(wc.byte_len, 65537);
	CHECK(!memcmp(b + REGION - 70000, a + 3, 65537), "SEND data");

	t = (uint64_t *)(b + REGION - 4096);
	r = (uint64_t *)(a + REGION - 4096);
	*t = 10;
	expect_status(rma(&self->p.a, IBV_WR_ATOMIC_FETCH_AND_ADD, self->mr[0],
			  r, 8, self->mr[1], t), IBV_WC_SUCCESS, "FETCH_ADD");
	CHECK(*t == 15 && *r == 10, "FETCH_ADD: %llu, returned %llu",
	      (unsigned long long)*t, (unsigned long long)*r);
	expect_status(rma(&self->p.a, IBV_WR_ATOMIC_CMP_AND_SWP, self->mr[0],
			  r, 8, self->mr[1], t), IBV_WC_SUCCESS, "CMP_SWP");
	CHECK(*t == 0x5a5a && *r == 15, "CMP_SWP: %#llx, returned %llu",
	      (unsigned long long)*t, (unsigned long long)*r);
	CHECK(counter("odp_faults") > faults, "no ODP fault counted");
}

/*
 * The target range, whose pages the device mapped, is unmapped under the
 * MR: WRITE, READ and atomics there get IBV_WC_REM_ACCESS_ERR (a device
 * that kept the freed pages would write into them), and the pages that
 * left were let go of.  Mapped again at the same address, the range takes
 * the next WRITE.
 */
TEST_F(odp, unmapped_then_mapped_again)
{
	static const enum ibv_wr_opcode ops[] = {
		IBV_WR_RDMA_WRITE, IBV_WR_RDMA_READ, IBV_WR_ATOMIC_FETCH_AND_ADD,
	};
	unsigned long long inval;
	char *b;

	odp_init(self);
	b = self->mem[1];
	memset(b, 0x33, REGION);	/* mapped, then taken away */
	fill(self->mem[0], 4096, 0x31);
	expect_status(rma(&self->p.a, IBV_WR_RDMA_WRITE, self->mr[0],
			  self->mem[0], 4096, self->mr[1], b + 8192),
		      IBV_WC_SUCCESS, "WRITE before munmap");
	inval = counter("odp_invalidations");
	CHECK_EQ(munmap(b, REGION), 0);
	CHECK(counter("odp_invalidations") > inval, "munmap invalidated nothing");
	for (unsigned int i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		if (i)
			odp_reconnect(self);
		expect_status(rma(&self->p.a, ops[i], self->mr[0], self->mem[0],
				  ops[i] == IBV_WR_ATOMIC_FETCH_AND_ADD ? 8 : 4096,
				  self->mr[1], b + 8192),
			      IBV_WC_REM_ACCESS_ERR, "access to an unmapped range");
	}
	CHECK(mmap(b, REGION, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == b,
	      "mmap again: %s", strerror(errno));
	odp_reconnect(self);
	expect_status(rma(&self->p.a, IBV_WR_RDMA_WRITE, self->mr[0],
			  self->mem[0], 4096, self->mr[1], b + 8192),
		      IBV_WC_SUCCESS, "WRITE after mmap again");
	CHECK(!memcmp(b + 8192, self->mem[0], 4096), "WRITE data");
	for (int i = 0; i < 8192; i++)
		CHECK(!b[i], "byte %d of the new mapping changed", i);
}

/*
 * The MR stays valid across munmap and mmap: a WRITE lands in the new
 * pages, not in the ones the device had mapped before.
 */
TEST_F(odp, same_mr_across_munmap)
{
	char *b;

	odp_init(self);
	b = self->mem[1];
	memset(b, 0x44, REGION);
	expect_status(rma(&self->p.a, IBV_WR_RDMA_WRITE, self->mr[0],
			  self->mem[0], 4096, self->mr[1], b + 4096),
		      IBV_WC_SUCCESS, "WRITE before munmap");
	CHECK_EQ(munmap(b, REGION), 0);
	CHECK(mmap(b, REGION, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == b,
	      "mmap again: %s", strerror(errno));
	fill(self->mem[0], 4096, 0x41);
	expect_status(rma(&self->p.a, IBV_WR_RDMA_WRITE, self->mr[0],
			  self->mem[0], 4096, self->mr[1], b + 4096),
		      IBV_WC_SUCCESS, "WRITE into the new pages");
	CHECK(!memcmp(b + 4096, self->mem[0], 4096), "WRITE data");
	CHECK(!b[0] && !b[8192], "bytes outside the WRITE");
}

/*
 * An ODP MR with REMOTE_WRITE over read-only memory registers (nothing is
 * faulted yet), but no WRITE or atomic gets through: a file opened
 * read-only and mapped shared keeps its bytes, and READ works.
 */
TEST_F(odp, read_only_mapping)
{
	char path[] = "/tmp/softrma-odp-XXXXXX", *ro;
	char page[4096];
	int fd;

	pair_init(&self->p, ALL_ACCESS, 7);
	fd = mkstemp(path);
	CHECK(fd >= 0, "mkstemp: %s", strerror(errno));
	memset(page, 'F', sizeof(page));
	for (int i = 0; i < REGION / 4096; i++)
		CHECK_EQ(write(fd, page, sizeof(page)), (ssize_t)sizeof(page));
	close(fd);
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0, "open: %s", strerror(errno));
	ro = mmap(NULL, REGION, PROT_READ, MAP_SHARED, fd, 0);
	CHECK(ro != MAP_FAILED, "mmap: %s", strerror(errno));
	close(fd);
	self->mem[1] = ro;
	self->mr[1] = reg_odp(self->p.b.pd, ro, REGION, ODP_ACCESS);

	expect_status(rma(&self->p.a, IBV_WR_RDMA_READ, self->p.a.mr,
			  self->p.a.buf, 4096, self->mr[1], ro + 4096),
		      IBV_WC_SUCCESS, "READ of a read-only file");
	CHECK(!memcmp(self->p.a.buf, page, 4096), "READ data");
	memset(self->p.a.buf, 'W', 4096);
	expect_status(rma(&self->p.a, IBV_WR_RDMA_WRITE, self->p.a.mr,
			  self->p.a.buf, 4096, self->mr[1], ro + 4096),
		      IBV_WC_REM_ACCESS_ERR, "WRITE into a read-only file");
	odp_reconnect(self);
	expect_status(rma(&self->p.a, IBV_WR_ATOMIC_FETCH_AND_ADD,
			  self->p.a.mr, self->p.a.buf, 8, self->mr[1], ro),
		      IBV_WC_REM_ACCESS_ERR, "atomic on a read-only file");
	for (int i = 0; i < REGION; i++)
		CHECK(ro[i] == 'F', "byte %d of the read-only file is %#x", i,
		      ro[i]);
	CHECK_EQ(unlink(path), 0);
}

/* Written through the MR, then mprotect()ed read-only: WRITEs stop. */
TEST_F(odp, protected_after_write)
{
	char *b;

	odp_init(self);
	b = self->mem[1];
	fill(self->mem[0], 4096, 0x51);
	expect_status(rma(&self->p.a, IBV_WR_RDMA_WRITE, self->mr[0],
			  self->mem[0], 4096, self->mr[1], b), IBV_WC_SUCCESS,
		      "WRITE before mprotect");
	CHECK_EQ(mprotect(b, REGION, PROT_READ), 0);
	fill(self->mem[0], 4096, 0x52);
	expect_status(rma(&self->p.a, IBV_WR_RDMA_WRITE, self->mr[0],
			  self->mem[0], 4096, self->mr[1], b),
		      IBV_WC_REM_ACCESS_ERR, "WRITE after mprotect");
	fill(self->mem[0], 4096, 0x51);
	CHECK(!memcmp(b, self->mem[0], 4096), "the protected page changed");
}

/*
 * fork() shares the parent's private pages with the child, write-protected:
 * a WRITE after it lands in the parent's own copy and never in the page
 * the child sees.
 */
TEST_F(odp, fork_keeps_child_apart)
{
	int go[2], done[2];
	char *b, c;
	pid_t child;
	int status;

	odp_init(self);
	b = self->mem[1];
	memset(b, 'P', REGION);
	fill(self->mem[0], 4096, 0x61);
	expect_status(rma(&self->p.a, IBV_WR_RDMA_WRITE, self->mr[0],
			  self->mem[0], 4096, self->mr[1], b), IBV_WC_SUCCESS,
		      "WRITE before fork");	/* mapped writable */
	memset(b, 'P', 4096);
	CHECK_EQ(pipe(go), 0);
	CHECK_EQ(pipe(done), 0);
	child = fork();
	CHECK(child >= 0, "fork: %s", strerror(errno));
	if (!child) {
		if (read(go[0], &c, 1) != 1)
			_exit(2);
		for (int i = 0; i < REGION; i++)
			if (b[i] != 'P')
				_exit(1);
		_exit(0);
	}
	memset(self->mem[0], 'W', 4096);
	expect_status(rma(&self->p.a, IBV_WR_RDMA_WRITE, self->mr[0],
			  self->mem[0], 4096, self->mr[1], b), IBV_WC_SUCCESS,
		      "WRITE after fork");
	CHECK_EQ(write(go[1], "g", 1), 1);
	CHECK_EQ(waitpid(child, &status, 0), child);
	CHECK(WIFEXITED(status) && !WEXITSTATUS(status),
	      "the child saw the parent's WRITE (status %#x)", status);
	for (int i = 0; i < 4096; i++)
		CHECK(b[i] == 'W', "byte %d of the parent's page: %#x", i, b[i]);
}

/*
 * ibv_advise_mr(): a synchronous PREFETCH_WRITE faults the range in, so
 * that a WRITE into it faults nothing; its refusals.
 */
TEST_F(odp, advise)
{
	struct ibv_sge sge;
	unsigned long long faults;
	struct ibv_mr *ro;
	char *hole;

	odp_init(self);
	sge = (struct ibv_sge) { (uintptr_t)self->mem[1], REGION,
				 self->mr[1]->lkey };
	faults = counter("odp_faults");
	CHECK_EQ(ibv_advise_mr(self->p.b.pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
			       IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1), 0);
	CHECK(counter("odp_faults") > faults, "the prefetch faulted nothing");
	fill(self->p.a.buf, 65536, 0x71);
	faults = counter("odp_faults");
	expect_status(rma(&self->p.a, IBV_WR_RDMA_WRITE, self->p.a.mr,
			  self->p.a.buf, 65536, self->mr[1], self->mem[1]),
		      IBV_WC_SUCCESS, "WRITE into prefetched pages");
	CHECK_EQ(counter("odp_faults"), faults);
	CHECK(!memcmp(self->mem[1], self->p.a.buf, 65536), "WRITE data");
	for (int a = IBV_ADVISE_MR_ADVICE_PREFETCH;
	     a <= IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT; a++) {
		CHECK_EQ(ibv_advise_mr(self->p.b.pd, (enum ibv_advise_mr_advice)a,
				       0, &sge, 1), 0);
		CHECK_EQ(ibv_advise_mr(self->p.b.pd, (enum ibv_advise_mr_advice)a,
				       IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1), 0);
	}

	CHECK_EQ(ibv_advise_mr(self->p.b.pd, (enum ibv_advise_mr_advice)3, 0,
			       &sge, 1), EOPNOTSUPP);
	CHECK_EQ(ibv_advise_mr(self->p.a.pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0,
			       &sge, 1), EINVAL);	/* another PD */
	sge.length = REGION + 1;
	CHECK_EQ(ibv_advise_mr(self->p.b.pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0,
			       &sge, 1), EINVAL);	/* beyond the MR */
	sge = (struct ibv_sge) { (uintptr_t)self->p.b.buf, 4096,
				 self->p.b.mr->lkey };
	CHECK_EQ(ibv_advise_mr(self->p.b.pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0,
			       &sge, 1), ENOENT);	/* pinned, not ODP */
	ro = reg_odp(self->p.b.pd, self->mem[1], REGION,
		     IBV_ACCESS_REMOTE_READ | IBV_ACCESS_ON_DEMAND);
	sge = (struct ibv_sge) { (uintptr_t)self->mem[1], 4096, ro->lkey };
	CHECK_EQ(ibv_advise_mr(self->p.b.pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
			       IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1), EPERM);
	CHECK_EQ(ibv_dereg_mr(ro), 0);

	hole = (char *)self->mem[1] + REGION - 8192;
	CHECK_EQ(munmap(hole, 8192), 0);
	sge = (struct ibv_sge) { (uintptr_t)hole - 4096, 8192,
				 self->mr[1]->lkey };
	CHECK_EQ(ibv_advise_mr(self->p.b.pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
			       IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1), EFAULT);
	CHECK_EQ(ibv_advise_mr(self->p.b.pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
			       0, &sge, 1), 0);	/* a hint fails silently */
}

/* A window cannot lend an ODP MR's pages: the bind fails. */
TEST_F(odp, window_refused)
{
	struct ibv_mw *mw;
	struct ibv_mw_bind bind;
	struct ibv_wc wc;

	pair_init(&self->p, ALL_ACCESS, 7);
	self->mem[1] = fresh(REGION);
	self->mr[1] = reg_odp(self->p.b.pd, self->mem[1], REGION,
			      ODP_ACCESS | IBV_ACCESS_MW_BIND);
	mw = ibv_alloc_mw(self->p.b.pd, IBV_MW_TYPE_1);
	CHECK(mw, "alloc_mw: %s", strerror(errno));
	bind = (struct ibv_mw_bind) {
		.wr_id = 7, .send_flags = IBV_SEND_SIGNALED,
		.bind_info = { .mr = self->mr[1],
			       .addr = (uintptr_t)self->mem[1],
			       .length = 4096,
			       .mw_access_flags = IBV_ACCESS_REMOTE_READ },
	};
	CHECK_EQ(ibv_bind_mw(self->p.b.qp, mw, &bind), 0);
	wc = test_poll_one(self->p.b.cq, 5);
	expect_status(wc, IBV_WC_MW_BIND_ERR, "bind to an ODP MR");
	CHECK_EQ(ibv_dealloc_mw(mw), 0);
}

struct dontneed {
	char *mem;
	size_t len;		/* from mem; 0: REGION */
	useconds_t pause;	/* between two rounds */
	volatile int stop;
	unsigned long rounds;
};

static void *dontneed_loop(void *arg)
{
	struct dontneed *d = arg;

	while (!d->stop) {
		CHECK_EQ(madvise(d->mem, d->len ? d->len : REGION,
				 MADV_DONTNEED), 0);
		d->rounds++;
		if (d->pause)
			usleep(d->pause);
	}
	return NULL;
}

/*
 * The target's pages are taken back (MADV_DONTNEED) over and over while
 * 16 WRITEs of 1 MiB go into them: each completes (within a minute: how
 * soon depends on how often a fault wins the race), and once the loop
 * stops a WRITE lands whole.  In packets the loop does not pause: the
 * responder answers RNR NAKs while a work faults the pages in, rather than
 * leave the requester to time out.  Locally the poster faults them in
 * itself, for 5 s at most, and the loop leaves 1 ms between rounds
 * (Documentation/admin-guide.md, ODP).
 */
TEST_F_TIMEOUT(odp, pages_taken_back_during_writes, 600)
{
	struct dontneed d = { .pause = variant->force_wire ? 0 : 1000 };
	unsigned long long inval;
	pthread_t thread;

	odp_init(self);
	fill(self->mem[0], REGION, 0x81);
	d.mem = self->mem[1];
	inval = counter("odp_invalidations");
	CHECK_EQ(pthread_create(&thread, NULL, dontneed_loop, &d), 0);
	for (int i = 0; i < 16; i++)
		expect_status(rma_within(&self->p.a, IBV_WR_RDMA_WRITE,
					 self->mr[0],
					 self->mem[0] + (i % 4) * (1 << 20),
					 1 << 20, self->mr[1],
					 (char *)self->mem[1] + (i % 3) * (1 << 20),
					 60),
			      IBV_WC_SUCCESS, "WRITE while pages go");
	d.stop = 1;
	CHECK_EQ(pthread_join(thread, NULL), 0);
	CHECK(counter("odp_invalidations") > inval, "nothing was invalidated");
	expect_status(rma(&self->p.a, IBV_WR_RDMA_WRITE, self->mr[0],
			  self->mem[0], 1 << 20, self->mr[1], self->mem[1]),
		      IBV_WC_SUCCESS, "the last WRITE");
	CHECK(!memcmp(self->mem[1], self->mem[0], 1 << 20), "WRITE data");
	printf("# %lu rounds of MADV_DONTNEED\n", d.rounds);
}

struct rma_loop {
	struct side *s;
	struct ibv_mr *mr, *rmr;
	char *mem, *rmem;
	volatile int *stop;
	enum ibv_wc_status status;	/* the first that is not success */
	unsigned long ops;
};

/*
 * WRITEs of 1 MiB from mem to rmem and READs back, in turn, from and to
 * each MiB of the buffers, until *stop or one fails; each may wait for as
 * long as the pages are taken back.
 */
static void *rma_loop(void *arg)
{
	struct rma_loop *l = arg;
	struct ibv_wc wc;

	for (int i = 0; !*l->stop; i++) {
		wc = rma_within(l->s, i % 2 ? IBV_WR_RDMA_READ :
					      IBV_WR_RDMA_WRITE,
				l->mr, l->mem + (i % 4) * (1 << 20), 1 << 20,
				l->rmr, l->rmem + (i % 3) * (1 << 20), 120);
		if (wc.status != IBV_WC_SUCCESS) {
			l->status = wc.status;
			break;
		}
		l->ops++;
	}
	return NULL;
}

/*
 * A process takes the pages of both its ODP MRs back without a pause while
 * WRITEs of 1 MiB go from one into the other and READs come back, and one
 * page of the target in another thread, faster than a fault completes (an
 * invalidation of any page of an MR makes a fault in progress in it start
 * again).  The device faults apart from the traffic of other QPs, which
 * goes on (20 WRITEs of another pair complete while the loops run); the
 * WRITEs and READs complete, and a WRITE after the loops lands whole.
 */
TEST_F_TIMEOUT(odp, others_flow_while_pages_go, 180)
{
	struct dontneed d[3] = {};
	struct rma_loop l;
	pthread_t loop[3], mover;
	struct pair q = {};

	odp_init(self);
	pair_init(&q, ALL_ACCESS, 7);
	fill(self->mem[0], REGION, 0x95);
	d[0].mem = self->mem[1];
	d[1].mem = (char *)self->mem[1] + REGION - 4096;
	d[1].len = 4096;
	d[2].mem = self->mem[0];
	l = (struct rma_loop) { .s = &self->p.a, .mr = self->mr[0],
				.rmr = self->mr[1], .mem = self->mem[0],
				.rmem = self->mem[1], .stop = &d[0].stop,
				.status = IBV_WC_SUCCESS };
	for (int i = 0; i < 3; i++)
		CHECK_EQ(pthread_create(&loop[i], NULL, dontneed_loop, &d[i]),
			 0);
	CHECK_EQ(pthread_create(&mover, NULL, rma_loop, &l), 0);
	sleep(1);
	for (int i = 0; i < 20; i++) {
		fill(q.a.buf, 4096, i);
		expect_status(rma(&q.a, IBV_WR_RDMA_WRITE, q.a.mr, q.a.buf,
				  4096, q.b.mr, q.b.buf),
			      IBV_WC_SUCCESS, "another pair's WRITE");
		CHECK(!memcmp(q.b.buf, q.a.buf, 4096), "another pair's data");
	}
	for (int i = 0; i < 3; i++) {
		d[i].stop = 1;
		CHECK_EQ(pthread_join(loop[i], NULL), 0);
	}
	CHECK_EQ(pthread_join(mover, NULL), 0);
	expect_status((struct ibv_wc) { .status = l.status }, IBV_WC_SUCCESS,
		      "a WRITE or READ of the pages taken back");
	fill(self->mem[0], 1 << 20, 0x96);
	expect_status(rma(&self->p.a, IBV_WR_RDMA_WRITE, self->mr[0],
			  self->mem[0], 1 << 20, self->mr[1], self->mem[1]),
		      IBV_WC_SUCCESS, "the last WRITE");
	CHECK(!memcmp(self->mem[1], self->mem[0], 1 << 20), "WRITE data");
	pair_fini(&q);
	printf("# %lu, %lu and %lu rounds of MADV_DONTNEED, %lu WRITEs and READs during them\n",
	       d[0].rounds, d[1].rounds, d[2].rounds, l.ops);
}

struct stream {
	struct side *s;
	struct ibv_mr *mr, *rmr;
	char *from, *to;
};

static void *write_stream(void *arg)
{
	struct stream *st = arg;

	for (int i = 0; i < 100; i++)
		expect_status(rma(st->s, IBV_WR_RDMA_WRITE, st->mr, st->from,
				  256 << 10, st->rmr, st->to),
			      IBV_WC_SUCCESS, "WRITE between MRs over one buffer");
	return NULL;
}

/*
 * Two ODP MRs over the same bytes, of two PDs: a streams WRITEs from the
 * first half to the second, b from the second to the first, at once.  The
 * device holds both MRs' pages for each piece, always in the same order.
 */
TEST_F(odp, two_mrs_one_buffer_both_ways)
{
	struct stream ab, ba;
	pthread_t thread;
	char *m;

	odp_init(self);
	CHECK_EQ(ibv_dereg_mr(self->mr[1]), 0);
	m = self->mem[0];
	self->mr[1] = reg_odp(self->p.b.pd, m, REGION, ODP_ACCESS);
	ab = (struct stream) { &self->p.a, self->mr[0], self->mr[1], m,
			       m + REGION / 2 };
	ba = (struct stream) { &self->p.b, self->mr[1], self->mr[0],
			       m + REGION / 2, m };
	CHECK_EQ(pthread_create(&thread, NULL, write_stream, &ba), 0);
	write_stream(&ab);
	CHECK_EQ(pthread_join(thread, NULL), 0);
}

TRANSPORT_HARNESS_MAIN
