// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Rings in memory a parent domain's allocator gives are pinned by the
 * device and count against RLIMIT_MEMLOCK: run unprivileged, past the
 * limit the create fails with ENOMEM, and the kernel's own rings
 * (IBV_ALLOCATOR_USE_DEFAULT) still work.  The rest of parent domains is
 * verbs/parent_domain.c's, which runs as root.
 *
 * usage: pd_memlock   (SOFTRMA_DEV, SOFTRMA_IPV4; not as root)
 */
#include <sys/resource.h>

#include "pair.h"
#include "softrmadv.h"

#define MAX_RINGS 16

static size_t page;

/* What the allocator gave, and what came back. */
struct ring_log {
	void *ptr[MAX_RINGS];
	uint64_t type[MAX_RINGS];
	int allocs, frees;
	void *(*source)(size_t size);	/* NULL: use the default */
	struct ibv_pd *parent;		/* the one it serves */
};

static void *aligned_pages(size_t size)
{
	void *p = NULL;

	CHECK(!posix_memalign(&p, page, size), "posix_memalign");
	memset(p, 0xa5, size);	/* the kernel must not count on zeroes */
	return p;
}

static void *log_alloc(struct ibv_pd *pd, void *pd_context, size_t size,
		       size_t alignment, uint64_t type)
{
	struct ring_log *log = pd_context;
	void *p;

	CHECK(pd == log->parent, "alloc for another PD");
	CHECK_EQ(alignment, page);
	CHECK(size && !(size % page), "size %zu", size);
	if (!log->source)
		return IBV_ALLOCATOR_USE_DEFAULT;
	p = log->source(size);
	if (p && p != IBV_ALLOCATOR_USE_DEFAULT && log->allocs < MAX_RINGS) {
		log->ptr[log->allocs] = p;
		log->type[log->allocs++] = type;
	}
	return p;
}

static void log_free(struct ibv_pd *pd, void *pd_context, void *ptr,
		     uint64_t type)
{
	struct ring_log *log = pd_context;

	CHECK(pd == log->parent, "free for another PD");
	for (int i = 0; i < log->allocs; i++) {
		if (log->ptr[i] == ptr) {
			CHECK_EQ(log->type[i], type);
			log->ptr[i] = NULL;
			log->frees++;
			return;
		}
	}
	FAIL("free of %p, which the allocator did not give", ptr);
}

static struct ibv_pd *parent_on(struct ibv_pd *pd, struct ring_log *log)
{
	struct ibv_parent_domain_init_attr attr = {
		.pd = pd, .alloc = log_alloc, .free = log_free, .pd_context = log,
		.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |
			     IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT,
	};
	struct ibv_pd *parent = ibv_alloc_parent_domain(ctx, &attr);

	CHECK(parent, "alloc_parent_domain: %s", strerror(errno));
	log->parent = parent;
	return parent;
}

static struct ibv_qp *qp_on(struct ibv_pd *pd, struct ibv_cq *cq, int wr)
{
	struct ibv_qp_init_attr attr = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = wr, .max_recv_wr = wr,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	return ibv_create_qp(pd, &attr);
}

static void test_memlock(void)
{
	struct rlimit lim = { 16 * 4096, 16 * 4096 };
	struct ring_log log = { .source = aligned_pages };
	struct ibv_pd *pd = ibv_alloc_pd(ctx), *parent;
	struct ibv_cq *cq;
	struct ibv_qp *qp;

	CHECK(getuid(), "memlock must run unprivileged");
	CHECK_EQ(setrlimit(RLIMIT_MEMLOCK, &lim), 0);
	parent = parent_on(pd, &log);
	cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	CHECK(pd && cq, "setup");
	errno = 0;
	qp = qp_on(parent, cq, 4096);
	CHECK(!qp && errno == ENOMEM, "a QP with rings past RLIMIT_MEMLOCK: %s",
	      strerror(errno));
	log.source = NULL;
	qp = qp_on(parent, cq, 4096);
	CHECK(qp, "the kernel's rings: %s", strerror(errno));
	CHECK_EQ(ibv_destroy_qp(qp), 0);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
	CHECK_EQ(ibv_dealloc_pd(parent), 0);
	CHECK_EQ(ibv_dealloc_pd(pd), 0);
	printf("# rings pinned past RLIMIT_MEMLOCK: ENOMEM; the kernel's: fine\n");
}

int main(void)
{
	const char *dev = getenv("SOFTRMA_DEV"), *ipv4 = getenv("SOFTRMA_IPV4");

	CHECK(dev && ipv4, "SOFTRMA_DEV and SOFTRMA_IPV4 must be set");
	page = sysconf(_SC_PAGESIZE);
	ctx = test_open_device(dev);
	gid_index = test_find_ipv4_gid(ctx, ipv4);
	test_memlock();
	CHECK_EQ(ibv_close_device(ctx), 0);
	return KSFT_PASS;
}
