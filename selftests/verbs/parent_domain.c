// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Parent domains (ibv_alloc_parent_domain()) and the rings their
 * allocators give: attributes refused; EBUSY deallocs; one call per ring
 * (SOFTRMADV_RES_TYPE_*, whole pages, page-aligned), each ring freed once,
 * by the destroy of its own object; the rings really in the caller's
 * memory (producer indices and entries move there) under checked RC and
 * UD traffic; resizes refused; USE_DEFAULT, and no allocators; hostile
 * memory: none, read-only, a read-only file's mapping (whose bytes must
 * not change), not page-aligned, not all mapped; a CQ ring unmapped while
 * the kernel writes into it; a child killed with its rings in its memory.
 * One kselftest_harness.h case per behaviour, each run on both
 * transports: the fixture's variants "local" and "wire".
 *
 * usage: [SOFTRMA_DEV=softrma0] [SOFTRMA_IPV4=10.9.0.1] parent_domain [HARNESS OPTIONS]
 * (-h: -l lists the cases, -r parent_domain.wire.read_only_file one case)
 */
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <rdma/softrma-abi.h>	/* struct softrma_ring_hdr */

#include "pair.h"
#include "softrmadv.h"
#include "transport.h"

#define BUF_LEN		(1 << 20)
#define RECV_OFF	(256 << 10)
#define WRITE_OFF	(512 << 10)
#define RO_FILE_LEN	(1 << 20)
#define MAX_RINGS	32
#define MAX_CALLS	64
#define QKEY		0x11111111
#define T_CQ		SOFTRMADV_RES_TYPE_CQ
#define T_SQ		SOFTRMADV_RES_TYPE_SQ
#define T_RQ		SOFTRMADV_RES_TYPE_RQ
#define T_SRQ		SOFTRMADV_RES_TYPE_SRQ

/* Where the allocator takes the rings of a type from. */
enum src { SRC_PAGES, SRC_DEFAULT, SRC_NULL, SRC_RO_ANON, SRC_RO_FILE,
	   SRC_UNALIGNED, SRC_PARTLY };

static const char *const type_name[] = { "CQ", "SQ", "RQ", "SRQ" };
static const char *const src_name[] = { "pages", "USE_DEFAULT", "NULL",
	"read-only memory", "a read-only file", "unaligned memory",
	"memory not all mapped" };

struct ring {
	char *ptr;		/* what alloc returned */
	size_t size;
	void *map;		/* what free unmaps */
	size_t map_len;
	uint64_t type;
	enum src src;
	void *owner;		/* its object, once created */
	bool may_free;		/* no owner yet, or the owner being destroyed */
	bool freed;
	bool unmapped;		/* by the test: free must not touch it */
};

struct alloc_log {
	struct ibv_pd *parent;
	enum src src[4];	/* by type - T_CQ */
	uint64_t call[MAX_CALLS];
	int ncalls, allocs;
	struct ring ring[MAX_RINGS];
	int ro_fd;		/* SRC_RO_FILE's, RO_FILE_LEN bytes */
	long pin_max;		/* in destroy(): the most VmPin at a free */
};

static struct alloc_log *the_log;	/* the pd_context */
static size_t page;

static void *log_alloc(struct ibv_pd *pd, void *pd_context, size_t size,
		       size_t alignment, uint64_t type)
{
	int prot = PROT_READ | PROT_WRITE;
	struct alloc_log *log = pd_context;
	struct ring *r;
	char *p;

	CHECK(log == the_log, "alloc with pd_context %p", pd_context);
	CHECK(pd == log->parent, "alloc for %p, not the parent domain", pd);
	CHECK(type >= T_CQ && type <= T_SRQ, "type %#llx", (unsigned long long)type);
	CHECK_EQ(alignment, page);
	CHECK(size && !(size % page), "size %zu", size);
	CHECK(log->ncalls < MAX_CALLS && log->allocs < MAX_RINGS, "calls");
	log->call[log->ncalls++] = type;
	r = &log->ring[log->allocs];
	*r = (struct ring) { .size = size, .map_len = size, .type = type,
			     .src = log->src[type - T_CQ], .may_free = true };
	if (r->src == SRC_DEFAULT)
		return IBV_ALLOCATOR_USE_DEFAULT;
	if (r->src == SRC_NULL)
		return NULL;
	if (r->src == SRC_RO_ANON || r->src == SRC_RO_FILE)
		prot = PROT_READ;
	if (r->src == SRC_UNALIGNED)
		r->map_len += page;
	if (r->src == SRC_RO_FILE) {
		/* Past the file's end would fault for another reason. */
		CHECK(size <= RO_FILE_LEN, "size %zu", size);
		p = mmap(NULL, size, prot, MAP_SHARED, log->ro_fd, 0);
	} else {
		p = mmap(NULL, r->map_len, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	}
	CHECK(p != MAP_FAILED, "mmap: %s", strerror(errno));
	r->map = p;
	if (r->src == SRC_PAGES)
		memset(p, 0xa5, size);	/* the kernel must not count on zeroes */
	if (r->src == SRC_PARTLY) {
		CHECK(size >= 2 * page, "an %s ring of one page",
		      type_name[type - T_CQ]);
		CHECK_EQ(munmap(p + page, size - page), 0);
		r->map_len = page;
	}
	r->ptr = r->src == SRC_UNALIGNED ? p + 64 : p;
	log->allocs++;
	return r->ptr;
}

static void log_free(struct ibv_pd *pd, void *pd_context, void *ptr,
		     uint64_t type)
{
	struct alloc_log *log = pd_context;
	struct ring *r = NULL;

	CHECK(log == the_log, "free with pd_context %p", pd_context);
	CHECK(pd == log->parent, "free for %p, not the parent domain", pd);
	for (int i = log->allocs - 1; i >= 0 && !r; i--)
		if (log->ring[i].ptr == ptr)
			r = &log->ring[i];
	CHECK(r, "free of %p, which alloc did not return", ptr);
	CHECK(!r->freed, "%p freed twice", ptr);
	CHECK(r->may_free, "%p freed while its object lives", ptr);
	CHECK(log->pin_max < 0 || test_pinned_kb() <= log->pin_max,
	      "%p freed while the device still pins it", ptr);
	CHECK_EQ(type, r->type);
	r->freed = true;
	for (size_t i = 0; r->src == SRC_RO_ANON && i < r->size; i++)
		CHECK(!r->ptr[i], "read-only memory written at %zu", i);
	if (!r->unmapped)
		CHECK_EQ(munmap(r->map, r->map_len), 0);
}

/* Gives @obj, just created, the rings alloc returned since ring @from. */
static void *claim(struct alloc_log *log, void *obj, int from)
{
	CHECK(obj, "create: %s", strerror(errno));
	for (int i = from; i < log->allocs; i++) {
		CHECK(!log->ring[i].freed, "a ring freed as its object was created");
		log->ring[i].owner = obj;
		log->ring[i].may_free = false;
	}
	return obj;
}

#define CREATED(log, expr) ({						\
	int from_ = (log)->allocs;					\
	claim((log), (expr), from_);					\
})

static struct ring *ring_of(struct alloc_log *log, void *obj, uint64_t type)
{
	for (int i = 0; i < log->allocs; i++)
		if (log->ring[i].owner == obj && log->ring[i].type == type &&
		    !log->ring[i].freed)
			return &log->ring[i];
	FAIL("no %s ring in caller memory", type_name[type - T_CQ]);
}

enum kind { QP, CQ, SRQ };

/*
 * Destroys @obj: its rings, and only those, are freed meanwhile, once the
 * device has let go of all of them.
 */
static void destroy(struct alloc_log *log, void *obj, enum kind kind)
{
	long kb = 0;

	for (int i = 0; i < log->allocs; i++) {
		if (log->ring[i].owner != obj)
			continue;
		log->ring[i].may_free = true;
		kb += log->ring[i].size >> 10;
	}
	log->pin_max = test_pinned_kb() - kb;
	if (kind == QP)
		CHECK_EQ(ibv_destroy_qp(obj), 0);
	else if (kind == CQ)
		CHECK_EQ(ibv_destroy_cq(obj), 0);
	else
		CHECK_EQ(ibv_destroy_srq(obj), 0);
	log->pin_max = -1;
	for (int i = 0; i < log->allocs; i++) {
		if (log->ring[i].owner != obj)
			continue;
		CHECK(log->ring[i].freed, "the %s ring of a destroyed object",
		      type_name[log->ring[i].type - T_CQ]);
		log->ring[i].owner = NULL;
	}
}

/* The calls since call @from were for @n rings of @types. */
static void expect_calls(struct alloc_log *log, int from, const uint64_t *types,
			 int n)
{
	CHECK_EQ(log->ncalls - from, n);
	for (int i = 0; i < n; i++)
		CHECK_EQ(log->call[from + i], types[i]);
}

static struct ibv_pd *parent_on(struct ibv_pd *pd, uint32_t comp_mask)
{
	struct ibv_parent_domain_init_attr attr = {
		.pd = pd, .alloc = log_alloc, .free = log_free,
		.pd_context = the_log, .comp_mask = comp_mask,
	};

	return ibv_alloc_parent_domain(ctx, &attr);
}

static struct ibv_cq *cq_on(struct ibv_pd *parent, int cqe)
{
	struct ibv_cq_init_attr_ex attr = {
		.cqe = cqe, .wc_flags = IBV_WC_STANDARD_FLAGS,
		.comp_mask = IBV_CQ_INIT_ATTR_MASK_PD, .parent_domain = parent,
	};
	struct ibv_cq_ex *cq = ibv_create_cq_ex(ctx, &attr);

	return cq ? ibv_cq_ex_to_cq(cq) : NULL;
}

static struct ibv_srq *srq_on(struct ibv_pd *pd, uint32_t wr)
{
	struct ibv_srq_init_attr attr = { .attr = { .max_wr = wr, .max_sge = 1 } };

	return ibv_create_srq(pd, &attr);
}

static struct ibv_qp *qp_on(struct ibv_pd *pd, struct ibv_cq *cq, uint32_t wr)
{
	struct ibv_qp_init_attr attr = {
		.qp_type = IBV_QPT_RC, .send_cq = cq, .recv_cq = cq,
		.cap = { .max_send_wr = wr, .max_recv_wr = wr,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	return ibv_create_qp(pd, &attr);
}

/* What a case built: teardown destroys it. */
FIXTURE(parent_domain) {
	struct alloc_log log;
	struct ibv_pd *pd;
	struct ibv_pd *parent;	/* on pd, with log's allocators */
	char *buf;
	struct ibv_mr *mr;	/* on the parent domain */
	struct ibv_cq *plain_cq;
	struct ibv_cq *cq[2];
	struct ibv_qp *qp[2];	/* qp[0] sends to qp[1] */
	struct ibv_srq *srq;
};

TRANSPORT_VARIANTS(parent_domain);

static void domain_init(FIXTURE_DATA(parent_domain) *self)
{
	page = sysconf(_SC_PAGESIZE);
	self->log.ro_fd = -1;
	self->log.pin_max = -1;
	the_log = &self->log;
	self->pd = ibv_alloc_pd(ctx);
	CHECK(self->pd, "alloc_pd");
	self->parent = parent_on(self->pd, IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |
				 IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT);
	CHECK(self->parent, "alloc_parent_domain: %s", strerror(errno));
	self->log.parent = self->parent;
	self->buf = mmap(NULL, BUF_LEN, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(self->buf != MAP_FAILED, "mmap");
	self->mr = ibv_reg_mr(self->parent, self->buf, BUF_LEN, ALL_ACCESS);
	CHECK(self->mr, "reg_mr on the parent domain: %s", strerror(errno));
	self->plain_cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	CHECK(self->plain_cq, "create_cq: %s", strerror(errno));
	CHECK_EQ(self->log.ncalls, 0);	/* ibv_create_cq() has no PD */
}

FIXTURE_SETUP(parent_domain)
{
	ctx = transport_open_device(&gid_index);
	if (!transport_set(variant->force_wire))
		SKIP(return, "%s: %s", FORCE_WIRE, strerror(errno));
	domain_init(self);
}

static void fini_objects(FIXTURE_DATA(parent_domain) *self)
{
	for (int i = 0; i < 2; i++)
		if (self->qp[i])
			destroy(&self->log, self->qp[i], QP);
	if (self->srq)
		destroy(&self->log, self->srq, SRQ);
	for (int i = 0; i < 2; i++)
		if (self->cq[i])
			destroy(&self->log, self->cq[i], CQ);
	memset(self->qp, 0, sizeof(self->qp));
	memset(self->cq, 0, sizeof(self->cq));
	self->srq = NULL;
}

/* After a case that passed: every ring alloc returned was freed once. */
FIXTURE_TEARDOWN(parent_domain)
{
	fini_objects(self);
	CHECK_EQ(ibv_destroy_cq(self->plain_cq), 0);
	CHECK_EQ(ibv_dereg_mr(self->mr), 0);
	CHECK_EQ(ibv_dealloc_pd(self->parent), 0);
	CHECK_EQ(ibv_dealloc_pd(self->pd), 0);
	for (int i = 0; i < self->log.allocs; i++)
		CHECK(self->log.ring[i].freed, "the %s ring %d was never freed",
		      type_name[self->log.ring[i].type - T_CQ], i);
	CHECK_EQ(munmap(self->buf, BUF_LEN), 0);
	if (self->log.ro_fd >= 0)
		CHECK_EQ(close(self->log.ro_fd), 0);
	CHECK_EQ(ibv_close_device(ctx), 0);
	transport_put_back();
}

/* A CQ, an RC QP (on plain_cq) or an SRQ on the parent domain; big rings. */
static void *object_on(FIXTURE_DATA(parent_domain) *self, enum kind kind)
{
	if (kind == CQ)
		return cq_on(self->parent, 512);
	if (kind == SRQ)
		return srq_on(self->parent, 256);
	return qp_on(self->parent, self->plain_cq, 256);
}

/*
 * qp[0] and qp[1] on @pd, a parent domain, each on its own CQ on it: RC
 * connected (qp[1] on self->srq when there is one), or UD in RTS.
 */
static void two_qps(FIXTURE_DATA(parent_domain) *self, struct ibv_pd *pd,
		    enum ibv_qp_type type)
{
	struct alloc_log *log = &self->log;

	for (int i = 0; i < 2; i++) {
		self->cq[i] = CREATED(log, cq_on(pd, 64));
		self->qp[i] = CREATED(log, type == IBV_QPT_UD ?
			test_create_ud_qp(pd, self->cq[i], QKEY) :
			test_create_qp(pd, self->cq[i], i ? self->srq : NULL,
				       IBV_QPT_RC, ALL_ACCESS));
	}
	if (type == IBV_QPT_RC) {
		connect_qp(self->qp[0], self->qp[1]->qp_num, 7);
		connect_qp(self->qp[1], self->qp[0]->qp_num, 7);
	}
}

static void post_recv(FIXTURE_DATA(parent_domain) *self, uint64_t wr_id,
		      char *at, uint32_t len)
{
	struct ibv_sge sge = { (uintptr_t)at, len, self->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	if (self->qp[1]->srq)
		CHECK_EQ(ibv_post_srq_recv(self->qp[1]->srq, &wr, &bad), 0);
	else
		CHECK_EQ(ibv_post_recv(self->qp[1], &wr, &bad), 0);
}

/* From qp[0]: a SEND (to @ah on UD), or a WRITE to buf + WRITE_OFF. */
static void post_send(FIXTURE_DATA(parent_domain) *self, enum ibv_wr_opcode op,
		      uint64_t wr_id, char *at, uint32_t len, struct ibv_ah *ah)
{
	struct ibv_sge sge = { (uintptr_t)at, len, self->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1,
				  .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	if (op == IBV_WR_RDMA_WRITE) {
		wr.wr.rdma.remote_addr = (uintptr_t)self->buf + WRITE_OFF;
		wr.wr.rdma.rkey = self->mr->rkey;
	} else if (ah) {
		wr.wr.ud.ah = ah;
		wr.wr.ud.remote_qpn = self->qp[1]->qp_num;
		wr.wr.ud.remote_qkey = QKEY;
	}
	CHECK_EQ(ibv_post_send(self->qp[0], &wr, &bad), 0);
}

static struct ibv_wc poll_ok(struct ibv_cq *cq, uint64_t wr_id)
{
	struct ibv_wc wc = test_poll_one(cq, 5);

	CHECK(wc.status == IBV_WC_SUCCESS, "wr %llx: %s",
	      (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status));
	CHECK_EQ(wc.wr_id, wr_id);
	return wc;
}

static uint32_t producer(const struct ring *r)
{
	const struct softrma_ring_hdr *hdr = (const void *)r->ptr;

	return __atomic_load_n(&hdr->producer, __ATOMIC_ACQUIRE);
}

/* Each of @r's producer indices moved by @sq, @rq, @cq0, @cq1 since @was. */
static void moved(struct ring *const r[4], const uint32_t was[4], int sq,
		  int rq, int cq0, int cq1)
{
	const int want[4] = { sq, rq, cq0, cq1 };

	for (int i = 0; i < 4; i++)
		CHECK(producer(r[i]) - was[i] == (uint32_t)want[i],
		      "ring %d's producer moved by %u, want %d", i,
		      producer(r[i]) - was[i], want[i]);
}

/*
 * A SEND from qp[0] to qp[1], then on RC an RDMA WRITE: the data arrives.
 * With @rings, qp[0]'s SQ, qp[1]'s RQ or SRQ and both CQs are in caller
 * memory, where each producer index moves by what went through its ring.
 */
static void traffic(FIXTURE_DATA(parent_domain) *self, bool rings)
{
	static uint64_t id = 0x5eed0000c0de0000ULL;
	bool ud = self->qp[0]->qp_type == IBV_QPT_UD;
	uint32_t len = ud ? 512 : 4096, grh = ud ? 40 : 0, was[4];
	char *src = self->buf, *dst = self->buf + RECV_OFF;
	struct ibv_srq *srq = self->qp[1]->srq;
	struct ibv_ah *ah = NULL;
	struct ring *r[4];
	struct ibv_wc wc;

	id += 3;
	if (ud) {
		struct ibv_ah_attr attr = { .is_global = 1, .port_num = 1,
			.grh = { .sgid_index = gid_index, .hop_limit = 64 } };

		CHECK_EQ(ibv_query_gid(ctx, 1, gid_index, &attr.grh.dgid), 0);
		ah = ibv_create_ah(self->pd, &attr);
		CHECK(ah, "create_ah: %s", strerror(errno));
	}
	if (rings) {
		r[0] = ring_of(&self->log, self->qp[0], T_SQ);
		r[1] = srq ? ring_of(&self->log, srq, T_SRQ) :
			     ring_of(&self->log, self->qp[1], T_RQ);
		r[2] = ring_of(&self->log, self->cq[0], T_CQ);
		r[3] = ring_of(&self->log, self->cq[1], T_CQ);
		for (int i = 0; i < 4; i++)
			was[i] = producer(r[i]);
	}
	fill(src, len, id);
	memset(dst, 0, len + grh);
	post_recv(self, id, dst, len + grh);
	if (rings)
		moved(r, was, 0, 1, 0, 0);
	post_send(self, IBV_WR_SEND, id + 1, src, len, ah);
	if (rings)	/* the CQs' may have moved already */
		CHECK_EQ(producer(r[0]) - was[0], 1);
	poll_ok(self->cq[0], id + 1);
	wc = poll_ok(self->cq[1], id);
	CHECK_EQ(wc.opcode, IBV_WC_RECV);
	CHECK_EQ(wc.byte_len, len + grh);
	CHECK(!memcmp(dst + grh, src, len), "the SEND's data");
	if (rings)
		moved(r, was, 1, 1, 1, 1);
	if (ud) {
		CHECK_EQ(ibv_destroy_ah(ah), 0);
		return;
	}
	fill(src, len, id + 2);
	post_send(self, IBV_WR_RDMA_WRITE, id + 2, src, len, NULL);
	poll_ok(self->cq[0], id + 2);
	CHECK(!memcmp(self->buf + WRITE_OFF, src, len), "the WRITE's data");
	if (rings)
		moved(r, was, 2, 1, 2, 1);
}

/*
 * A parent domain, another context's PD or none as the PD, a TD, unknown
 * comp_mask bits: EINVAL.
 */
TEST_F(parent_domain, bad_attributes)
{
	struct ibv_context *other = test_open_device(ibv_get_device_name(ctx->device));
	struct ibv_pd *other_pd = ibv_alloc_pd(other), *p;
	struct ibv_td td = { .context = ctx };
	struct {
		struct ibv_parent_domain_init_attr attr;
		const char *what;
	} bad[] = {
		{ { .pd = self->parent }, "a parent domain as the PD" },
		{ { .pd = other_pd }, "another context's PD" },
		{ { .pd = NULL }, "no PD" },
		{ { .pd = self->pd, .td = &td }, "a TD" },
		{ { .pd = self->pd, .comp_mask = 1 << 2 }, "comp_mask bit 2" },
		{ { .pd = self->pd, .comp_mask = 1U << 31 }, "comp_mask bit 31" },
	};

	CHECK(other_pd, "alloc_pd: %s", strerror(errno));
	for (unsigned int i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		errno = 0;
		p = ibv_alloc_parent_domain(ctx, &bad[i].attr);
		CHECK(!p, "%s: allocated", bad[i].what);
		CHECK(errno == EINVAL, "%s: %s, want EINVAL", bad[i].what,
		      strerror(errno));
	}
	CHECK_EQ(self->log.ncalls, 0);
	CHECK_EQ(ibv_dealloc_pd(other_pd), 0);
	CHECK_EQ(ibv_close_device(other), 0);
}

/* EBUSY: a parent domain with a QP, a CQ or an SRQ, a PD with parent domains. */
TEST_F(parent_domain, dealloc_busy)
{
	struct ibv_pd *second;

	for (enum kind k = QP; k <= SRQ; k++) {
		void *obj = CREATED(&self->log, object_on(self, k));

		CHECK_EQ(ibv_dealloc_pd(self->parent), EBUSY);
		destroy(&self->log, obj, k);
	}
	second = parent_on(self->pd, 0);
	CHECK(second, "a second parent domain: %s", strerror(errno));
	CHECK_EQ(ibv_dealloc_pd(self->pd), EBUSY);
	CHECK_EQ(ibv_dealloc_pd(second), 0);
	CHECK_EQ(ibv_dealloc_pd(self->pd), EBUSY);
}

/*
 * One call per ring: CQ for ibv_create_cq_ex() on the parent domain, SQ
 * then RQ for ibv_create_qp() and ibv_create_qp_ex(), SRQ for an SRQ; a
 * PD, not a parent domain, as the CQ's is EINVAL.  Teardown destroys the
 * objects one by one, each freeing its own rings.
 */
TEST_F(parent_domain, allocator_calls)
{
	struct alloc_log *log = &self->log;
	struct ibv_qp_init_attr_ex ex = {
		.qp_type = IBV_QPT_RC,
		.send_cq = self->plain_cq, .recv_cq = self->plain_cq,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD, .pd = self->parent,
	};

	errno = 0;
	CHECK(!cq_on(self->pd, 16) && errno == EINVAL,
	      "a PD as the CQ's parent domain: %s", strerror(errno));
	expect_calls(log, 0, NULL, 0);
	self->cq[0] = CREATED(log, cq_on(self->parent, 16));
	expect_calls(log, 0, (uint64_t []){ T_CQ }, 1);
	self->qp[0] = CREATED(log, qp_on(self->parent, self->cq[0], 16));
	expect_calls(log, 1, (uint64_t []){ T_SQ, T_RQ }, 2);
	self->qp[1] = CREATED(log, ibv_create_qp_ex(ctx, &ex));
	expect_calls(log, 3, (uint64_t []){ T_SQ, T_RQ }, 2);
	self->srq = CREATED(log, srq_on(self->parent, 16));
	expect_calls(log, 5, (uint64_t []){ T_SRQ }, 1);
	CHECK_EQ(log->allocs, 6);
}

/* RC SEND and WRITE, all four rings in the allocator's memory. */
TEST_F(parent_domain, rc_rings_in_caller_memory)
{
	two_qps(self, self->parent, IBV_QPT_RC);
	/* The kernel zeroed the headers (alloc left 0xa5 there). */
	for (int i = 0; i < self->log.allocs; i++)
		CHECK_EQ(producer(&self->log.ring[i]), 0);
	traffic(self, true);
	traffic(self, true);
}

TEST_F(parent_domain, ud_rings_in_caller_memory)
{
	two_qps(self, self->parent, IBV_QPT_UD);
	traffic(self, true);
	traffic(self, true);
}

/*
 * Resizing a CQ or an SRQ in caller memory: EOPNOTSUPP, nothing freed,
 * and both work on in the same rings.
 */
TEST_F(parent_domain, resize_refused)
{
	struct ibv_srq_attr attr = { .max_wr = 256 };
	int cqe;

	self->srq = CREATED(&self->log, srq_on(self->parent, 64));
	two_qps(self, self->parent, IBV_QPT_RC);
	traffic(self, true);
	cqe = self->cq[0]->cqe;
	CHECK_EQ(ibv_resize_cq(self->cq[0], 256), EOPNOTSUPP);
	CHECK_EQ(self->cq[0]->cqe, cqe);
	CHECK_EQ(ibv_modify_srq(self->srq, &attr, IBV_SRQ_MAX_WR), EOPNOTSUPP);
	CHECK_EQ(ibv_query_srq(self->srq, &attr), 0);
	CHECK(attr.max_wr < 256, "max_wr %u", attr.max_wr);
	traffic(self, true);
}

/* Every ring USE_DEFAULT: the kernel's rings, resizable; nothing freed. */
TEST_F(parent_domain, use_default)
{
	struct ibv_srq_attr attr = { .max_wr = 256 };

	for (int t = 0; t < 4; t++)
		self->log.src[t] = SRC_DEFAULT;
	two_qps(self, self->parent, IBV_QPT_RC);
	self->srq = CREATED(&self->log, srq_on(self->parent, 16));
	expect_calls(&self->log, 0, (uint64_t []){ T_CQ, T_SQ, T_RQ, T_CQ, T_SQ,
						   T_RQ, T_SRQ }, 7);
	CHECK_EQ(self->log.allocs, 0);
	traffic(self, false);
	CHECK_EQ(ibv_resize_cq(self->cq[0], 256), 0);
	CHECK_EQ(ibv_modify_srq(self->srq, &attr, IBV_SRQ_MAX_WR), 0);
	traffic(self, false);
}

/*
 * A parent domain without allocators (comp_mask 0, alloc and free set
 * all the same): objects and traffic as on a PD, alloc never called.
 */
TEST_F(parent_domain, no_allocators)
{
	struct ibv_pd *plain = parent_on(self->pd, 0);

	CHECK(plain, "alloc_parent_domain: %s", strerror(errno));
	self->srq = CREATED(&self->log, srq_on(plain, 16));
	two_qps(self, plain, IBV_QPT_RC);
	traffic(self, false);
	CHECK_EQ(ibv_dealloc_pd(plain), EBUSY);
	fini_objects(self);
	CHECK_EQ(ibv_dealloc_pd(plain), 0);
	CHECK_EQ(self->log.ncalls, 0);
}

/*
 * Each ring type in turn from @src, the others in good pages: the create
 * fails with @want, the ring was asked for, nothing stays pinned, and all
 * alloc returned for it is freed.  Then the same objects in good pages work.
 */
static void refuse_each(FIXTURE_DATA(parent_domain) *self, enum src src,
			int want)
{
	static const enum kind kind_of[] = { CQ, QP, QP, SRQ };
	struct alloc_log *log = &self->log;

	for (int t = 0; t < 4; t++) {
		int from = log->allocs, calls = log->ncalls, asked = 0;
		long kb = test_pinned_kb();
		void *obj;

		log->src[t] = src;
		errno = 0;
		obj = object_on(self, kind_of[t]);
		log->src[t] = SRC_PAGES;
		CHECK(!obj, "%s ring in %s: created", type_name[t], src_name[src]);
		CHECK(errno == want, "%s ring in %s: %s, want %s", type_name[t],
		      src_name[src], strerror(errno), strerror(want));
		for (int i = calls; i < log->ncalls; i++)
			asked |= log->call[i] == T_CQ + t;
		CHECK(asked, "the %s ring was not asked for", type_name[t]);
		CHECK_EQ(test_pinned_kb(), kb);
		for (int i = from; i < log->allocs; i++)
			CHECK(log->ring[i].freed, "%s ring in %s: the %s ring leaked",
			      type_name[t], src_name[src],
			      type_name[log->ring[i].type - T_CQ]);
	}
	for (enum kind k = QP; k <= SRQ; k++)
		destroy(log, CREATED(log, object_on(self, k)), k);
}

TEST_F(parent_domain, alloc_null)
{
	refuse_each(self, SRC_NULL, ENOMEM);
}

/* log_free() checks that the memory still reads zero. */
TEST_F(parent_domain, read_only_anon)
{
	refuse_each(self, SRC_RO_ANON, EFAULT);
}

/* A MAP_SHARED PROT_READ mapping of a file opened O_RDONLY. */
TEST_F(parent_domain, read_only_file)
{
	char path[] = "/tmp/parent_domain.XXXXXX";
	char *pattern = malloc(RO_FILE_LEN), *now = malloc(RO_FILE_LEN);
	int fd = mkstemp(path);

	CHECK(fd >= 0 && pattern && now, "mkstemp: %s", strerror(errno));
	fill(pattern, RO_FILE_LEN, 0x3c);
	CHECK_EQ(write(fd, pattern, RO_FILE_LEN), RO_FILE_LEN);
	CHECK_EQ(close(fd), 0);
	self->log.ro_fd = open(path, O_RDONLY);
	CHECK(self->log.ro_fd >= 0, "open: %s", strerror(errno));
	CHECK_EQ(unlink(path), 0);
	refuse_each(self, SRC_RO_FILE, EFAULT);
	CHECK_EQ(pread(self->log.ro_fd, now, RO_FILE_LEN, 0), RO_FILE_LEN);
	for (size_t i = 0; i < RO_FILE_LEN; i++)
		CHECK(now[i] == pattern[i], "the file changed at byte %zu", i);
	free(pattern);
	free(now);
}

TEST_F(parent_domain, unaligned)
{
	refuse_each(self, SRC_UNALIGNED, EINVAL);
}

/* Only the first page of each ring (of 2 pages or more) mapped. */
TEST_F(parent_domain, partly_mapped)
{
	refuse_each(self, SRC_PARTLY, EFAULT);
}

/*
 * qp[1]'s CQ ring unmapped by the process: qp[0]'s SENDs still complete
 * (the kernel writes qp[1]'s completions into the pages it pinned), the
 * data arrives, and everything is destroyed; free gets the pointer and
 * leaves it alone.  qp[1]'s CQ is never polled.
 */
TEST_F(parent_domain, cq_ring_unmapped)
{
	struct ring *r;

	two_qps(self, self->parent, IBV_QPT_RC);
	for (int i = 0; i < 4; i++)
		post_recv(self, i, self->buf + RECV_OFF + i * 4096, 4096);
	r = ring_of(&self->log, self->cq[1], T_CQ);
	CHECK_EQ(munmap(r->map, r->map_len), 0);
	r->unmapped = true;
	fill(self->buf, 4 * 4096, 0x77);
	for (int i = 0; i < 4; i++) {
		post_send(self, IBV_WR_SEND, 100 + i, self->buf + i * 4096, 4096,
			  NULL);
		poll_ok(self->cq[0], 100 + i);
	}
	CHECK(!memcmp(self->buf + RECV_OFF, self->buf, 4 * 4096),
	      "the SENDs' data");
	fini_objects(self);
}

/* killed_child's child: a pair of its own, with traffic until killed. */
static void __attribute__((noreturn)) child_traffic(int ready)
{
	FIXTURE_DATA(parent_domain) c = {};

	ctx = transport_open_device(&gid_index);
	domain_init(&c);
	two_qps(&c, c.parent, IBV_QPT_RC);
	traffic(&c, true);
	CHECK_EQ(write(ready, "r", 1), 1);
	for (;;)
		traffic(&c, true);
}

/*
 * A child killed with its rings in its own memory and traffic in flight:
 * the device works on (the runner checks that the child left no object).
 */
TEST_F(parent_domain, killed_child)
{
	int ready[2], status;
	pid_t pid;
	char c;

	CHECK_EQ(pipe(ready), 0);
	pid = fork();
	CHECK(pid >= 0, "fork: %s", strerror(errno));
	if (!pid)
		child_traffic(ready[1]);
	CHECK_EQ(close(ready[1]), 0);
	CHECK_EQ(read(ready[0], &c, 1), 1);
	usleep(50 * 1000);
	CHECK_EQ(kill(pid, SIGKILL), 0);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
	      "child status %#x", status);
	CHECK_EQ(close(ready[0]), 0);
	two_qps(self, self->parent, IBV_QPT_RC);
	traffic(self, true);
}

TRANSPORT_HARNESS_MAIN
