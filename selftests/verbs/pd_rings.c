// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Parent domains, and rings in memory their allocators give (user/pd.c,
 * kernel/queue.c):
 *
 *  rings    an allocator called for a QP's SQ and RQ, an extended CQ's ring
 *	     and an SRQ's, whole pages, page-aligned; the rings really are
 *	     there (the producer indices move in that memory); data moves;
 *	     each ring handed back to free once, after its object is gone;
 *	     USE_DEFAULT gives the kernel's rings and no free; NULL is
 *	     ENOMEM; resizing such a CQ or SRQ is EOPNOTSUPP and they work
 *	     on; dealloc of a parent domain with objects, or of a PD with a
 *	     parent domain, is EBUSY; bad attributes are EINVAL;
 *  hostile  rings in memory the process may not write (read-only
 *	     anonymous memory, a read-only shared mapping of a read-only
 *	     file, whose bytes must not change), not page-aligned, or not
 *	     all mapped, are refused; an RQ whose memory the process unmaps
 *	     still takes the receives it holds; a child killed while its
 *	     rings live in its memory leaves the device working;
 *  memlock  (run unprivileged) pinned rings count against RLIMIT_MEMLOCK:
 *	     past it the create fails with ENOMEM, the kernel's own rings
 *	     still work.
 *
 * usage: pd_rings rings|hostile|memlock  (SOFTRMA_DEV, SOFTRMA_IPV4)
 */
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>

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

static struct ibv_cq_ex *cq_on(struct ibv_pd *parent, uint32_t cqe)
{
	struct ibv_cq_init_attr_ex attr = {
		.cqe = cqe, .wc_flags = IBV_WC_STANDARD_FLAGS,
		.comp_mask = IBV_CQ_INIT_ATTR_MASK_PD, .parent_domain = parent,
	};

	return ibv_create_cq_ex(ctx, &attr);
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

/* The producer index in the ring header at @ring. */
static uint32_t producer(const void *ring)
{
	return __atomic_load_n((const uint32_t *)ring, __ATOMIC_ACQUIRE);
}

static void to_init(struct ibv_qp *qp)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = ALL_ACCESS,
	};

	CHECK_EQ(ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			       IBV_QP_PORT | IBV_QP_ACCESS_FLAGS), 0);
}

static void post_recv(struct ibv_qp *qp, struct ibv_srq *srq, struct ibv_mr *mr,
		      void *buf, uint32_t len)
{
	struct ibv_sge sge = { (uintptr_t)buf, len, mr->lkey };
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;

	if (srq)
		CHECK_EQ(ibv_post_srq_recv(srq, &wr, &bad), 0);
	else
		CHECK_EQ(ibv_post_recv(qp, &wr, &bad), 0);
}

static void send_wait(struct ibv_qp *qp, struct ibv_cq *cq, struct ibv_mr *mr,
		      void *buf, uint32_t len)
{
	struct ibv_sge sge = { (uintptr_t)buf, len, mr->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ibv_wc wc;

	CHECK_EQ(ibv_post_send(qp, &wr, &bad), 0);
	wc = test_poll_one(cq, 5);
	CHECK(wc.status == IBV_WC_SUCCESS, "send: %s",
	      ibv_wc_status_str(wc.status));
}

static void bad_parent_domains(struct ibv_pd *pd, struct ibv_pd *parent)
{
	struct ibv_parent_domain_init_attr attr = { .pd = pd };

	attr.pd = NULL;
	CHECK(!ibv_alloc_parent_domain(ctx, &attr) && errno == EINVAL, "no PD");
	attr.pd = parent;
	CHECK(!ibv_alloc_parent_domain(ctx, &attr) && errno == EINVAL,
	      "a parent domain's parent domain");
	attr.pd = pd;
	attr.td = (struct ibv_td *)pd;
	CHECK(!ibv_alloc_parent_domain(ctx, &attr) && errno == EINVAL, "a TD");
	attr.td = NULL;
	attr.comp_mask = 1 << 7;
	CHECK(!ibv_alloc_parent_domain(ctx, &attr) && errno == EINVAL,
	      "an unknown comp_mask bit");
	attr.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS;
	CHECK(!ibv_alloc_parent_domain(ctx, &attr) && errno == EINVAL,
	      "allocators without functions");
	printf("# bad parent domain attributes refused with EINVAL\n");
}

static void test_rings(void)
{
	struct ring_log log_a = { .source = aligned_pages }, log_b = log_a;
	struct ibv_pd *pd = ibv_alloc_pd(ctx), *pa, *pb;
	struct ibv_srq_init_attr srqa = { .attr = { .max_wr = 16, .max_sge = 1 } };
	struct ibv_srq_attr sattr = { .max_wr = 64 };
	struct ibv_cq_ex *cqa, *cqb;
	struct ibv_qp *qpa, *qpb;
	struct ibv_srq *srq;
	struct ibv_mr *mr;
	struct ibv_wc wc;
	char *buf = calloc(1, 8192);

	CHECK(pd && buf, "setup");
	pa = parent_on(pd, &log_a);
	pb = parent_on(pd, &log_b);
	bad_parent_domains(pd, pa);
	mr = ibv_reg_mr(pa, buf, 8192, ALL_ACCESS);
	CHECK(mr, "reg_mr on a parent domain: %s", strerror(errno));
	cqa = cq_on(pa, 64);
	cqb = cq_on(pb, 64);
	CHECK(cqa && cqb, "create_cq_ex on a parent domain: %s", strerror(errno));
	srq = ibv_create_srq(pb, &srqa);
	CHECK(srq, "create_srq: %s", strerror(errno));
	qpa = qp_on(pa, ibv_cq_ex_to_cq(cqa), 16);
	CHECK(qpa, "create_qp: %s", strerror(errno));
	{
		struct ibv_qp_init_attr attr = {
			.send_cq = ibv_cq_ex_to_cq(cqb),
			.recv_cq = ibv_cq_ex_to_cq(cqb), .srq = srq,
			.qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = 16, .max_send_sge = 1 },
		};

		qpb = ibv_create_qp(pb, &attr);
		CHECK(qpb, "create_qp with an SRQ: %s", strerror(errno));
	}
	CHECK_EQ(log_a.allocs, 3);
	CHECK_EQ(log_a.type[0], SOFTRMADV_RES_TYPE_CQ);
	CHECK_EQ(log_a.type[1], SOFTRMADV_RES_TYPE_SQ);
	CHECK_EQ(log_a.type[2], SOFTRMADV_RES_TYPE_RQ);
	CHECK_EQ(log_b.allocs, 4);
	CHECK_EQ(log_b.type[1], SOFTRMADV_RES_TYPE_SRQ);
	printf("# the allocator gave the CQ, SQ, RQ and SRQ rings, in pages\n");

	to_init(qpa);
	to_init(qpb);
	connect_qp(qpa, qpb->qp_num, 7);
	connect_qp(qpb, qpa->qp_num, 7);
	post_recv(qpb, srq, mr, buf + 4096, 4096);
	CHECK_EQ(producer(log_b.ptr[1]), 1);		/* the SRQ's */
	fill(buf, 512, 3);
	send_wait(qpa, ibv_cq_ex_to_cq(cqa), mr, buf, 512);
	CHECK_EQ(producer(log_a.ptr[1]), 1);		/* the SQ's */
	CHECK_EQ(producer(log_a.ptr[0]), 1);		/* the CQ's */
	wc = test_poll_one(ibv_cq_ex_to_cq(cqb), 5);
	CHECK(wc.status == IBV_WC_SUCCESS && wc.byte_len == 512, "receive");
	CHECK(!memcmp(buf, buf + 4096, 512), "the SEND's data");
	printf("# the rings are in the allocator's memory, and data moves\n");

	CHECK_EQ(ibv_resize_cq(ibv_cq_ex_to_cq(cqa), 256), EOPNOTSUPP);
	CHECK_EQ(ibv_modify_srq(srq, &sattr, IBV_SRQ_MAX_WR), EOPNOTSUPP);
	post_recv(qpb, srq, mr, buf + 4096, 4096);
	send_wait(qpa, ibv_cq_ex_to_cq(cqa), mr, buf, 64);
	wc = test_poll_one(ibv_cq_ex_to_cq(cqb), 5);
	CHECK(wc.status == IBV_WC_SUCCESS, "receive after the refused resizes");
	printf("# resizing rings in caller memory: EOPNOTSUPP, and they work on\n");

	CHECK_EQ(ibv_dealloc_pd(pa), EBUSY);
	CHECK_EQ(ibv_dealloc_pd(pd), EBUSY);
	CHECK_EQ(ibv_destroy_qp(qpa), 0);
	CHECK_EQ(log_a.frees, 2);
	CHECK_EQ(ibv_destroy_qp(qpb), 0);
	CHECK_EQ(ibv_destroy_srq(srq), 0);
	CHECK_EQ(ibv_destroy_cq(ibv_cq_ex_to_cq(cqa)), 0);
	CHECK_EQ(ibv_destroy_cq(ibv_cq_ex_to_cq(cqb)), 0);
	CHECK_EQ(log_a.frees, 3);
	CHECK_EQ(log_b.frees, 4);
	CHECK_EQ(ibv_dereg_mr(mr), 0);
	CHECK_EQ(ibv_dealloc_pd(pa), 0);
	printf("# every ring freed once, after its object; EBUSY while in use\n");

	/* The default, and an allocator that has nothing. */
	log_b = (struct ring_log) { .parent = pb };
	qpb = qp_on(pb, ibv_cq_ex_to_cq(cqb = cq_on(pb, 64)), 16);
	CHECK(qpb && cqb, "with USE_DEFAULT: %s", strerror(errno));
	CHECK_EQ(ibv_resize_cq(ibv_cq_ex_to_cq(cqb), 256), 0);
	CHECK_EQ(ibv_destroy_qp(qpb), 0);
	CHECK_EQ(ibv_destroy_cq(ibv_cq_ex_to_cq(cqb)), 0);
	CHECK_EQ(log_b.frees, 0);
	CHECK(!cq_on(pd, 64) && errno == EINVAL, "a PD, not a parent domain, as the CQ's");
	printf("# USE_DEFAULT: the kernel's rings, resizable, nothing freed\n");
	CHECK_EQ(ibv_dealloc_pd(pb), 0);
	CHECK_EQ(ibv_dealloc_pd(pd), 0);
	free(buf);
}

static void *no_memory(size_t size)
{
	(void)size;
	return NULL;
}

static int ro_fd = -1;

static void *read_only_anon(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static void *read_only_file(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ, MAP_SHARED, ro_fd, 0);

	return p == MAP_FAILED ? NULL : p;
}

static void *unaligned(size_t size)
{
	return (char *)aligned_pages(size + page) + 64;
}

static void *half_mapped(size_t size)
{
	char *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	CHECK(p != MAP_FAILED && size > page, "size %zu", size);
	CHECK_EQ(munmap(p + page, size - page), 0);
	return p;
}

/* The error of creating a CQ, then a QP, on @parent whose rings come from @src. */
static void expect_refused(struct ibv_pd *parent, struct ring_log *log,
			   void *(*src)(size_t), int want, const char *what)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	struct ibv_cq_ex *cqx;
	struct ibv_qp *qp;

	log->source = src;
	errno = 0;
	cqx = cq_on(parent, 512);
	CHECK(!cqx, "a CQ in %s was created", what);
	CHECK(errno == want, "CQ in %s: %s, want %s", what, strerror(errno),
	      strerror(want));
	errno = 0;
	qp = qp_on(parent, cq, 512);
	CHECK(!qp, "a QP in %s was created", what);
	CHECK(errno == want, "QP in %s: %s, want %s", what, strerror(errno),
	      strerror(want));
	CHECK_EQ(ibv_destroy_cq(cq), 0);
	printf("# rings in %s: %s\n", what, strerror(want));
}

static void *mapped_pages(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static void rq_unmapped(struct ibv_pd *pd)
{
	struct ring_log log = { .source = mapped_pages };
	struct ibv_pd *parent = parent_on(pd, &log);
	struct ibv_cq *cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	struct ibv_qp *qpa = qp_on(pd, cq, 16), *qpb = qp_on(parent, cq, 16);
	char *buf = calloc(1, 65536);
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, 65536, ALL_ACCESS);
	struct ibv_wc wc;
	size_t rq_len;

	CHECK(cq && qpa && qpb && buf && mr, "setup: %s", strerror(errno));
	to_init(qpa);
	to_init(qpb);
	connect_qp(qpa, qpb->qp_num, 7);
	connect_qp(qpb, qpa->qp_num, 7);
	for (int i = 0; i < 4; i++)
		post_recv(qpb, NULL, mr, buf + 32768 + i * 4096, 4096);
	/* The RQ's memory goes from the process: the kernel keeps its pages. */
	rq_len = page;		/* 16 receives of one SGE fit in a page */
	CHECK_EQ(log.type[1], SOFTRMADV_RES_TYPE_RQ);
	CHECK_EQ(munmap(log.ptr[1], rq_len), 0);
	fill(buf, 4 * 4096, 11);
	for (int i = 0; i < 4; i++) {
		send_wait(qpa, cq, mr, buf + i * 4096, 4096);
		do
			wc = test_poll_one(cq, 5);
		while (wc.opcode != IBV_WC_RECV);
		CHECK(wc.status == IBV_WC_SUCCESS, "receive %d: %s", i,
		      ibv_wc_status_str(wc.status));
	}
	CHECK(!memcmp(buf, buf + 32768, 4 * 4096), "the receives' data");
	CHECK_EQ(ibv_destroy_qp(qpb), 0);
	CHECK_EQ(ibv_destroy_qp(qpa), 0);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
	CHECK_EQ(ibv_dereg_mr(mr), 0);
	CHECK_EQ(ibv_dealloc_pd(parent), 0);
	free(buf);
	printf("# an RQ unmapped by its process took the 4 receives it held\n");
}

/* A child with rings in its memory and traffic in flight, killed. */
static void killed_child(void)
{
	int status, ready[2];
	pid_t pid;
	char c;

	CHECK_EQ(pipe(ready), 0);
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (!pid) {
		struct ring_log log = { .source = aligned_pages };
		struct ibv_pd *pd, *parent;
		struct ibv_cq *cq;
		struct ibv_qp *a, *b;
		struct ibv_mr *mr;
		char *buf;

		ctx = test_open_device(getenv("SOFTRMA_DEV"));
		pd = ibv_alloc_pd(ctx);
		parent = parent_on(pd, &log);
		cq = ibv_cq_ex_to_cq(cq_on(parent, 64));
		a = qp_on(parent, cq, 64);
		b = qp_on(parent, cq, 64);
		buf = calloc(1, 1 << 20);
		mr = ibv_reg_mr(parent, buf, 1 << 20, ALL_ACCESS);
		CHECK(a && b && mr, "child setup: %s", strerror(errno));
		to_init(a);
		to_init(b);
		connect_qp(a, b->qp_num, 7);
		connect_qp(b, a->qp_num, 7);
		CHECK_EQ(write(ready[1], "r", 1), 1);
		for (;;) {
			struct ibv_sge sge = { (uintptr_t)buf, 1 << 19, mr->lkey };
			struct ibv_send_wr wr = {
				.sg_list = &sge, .num_sge = 1,
				.opcode = IBV_WR_RDMA_WRITE,
				.wr.rdma = { (uintptr_t)buf + (1 << 19), mr->rkey },
			}, *bad;
			struct ibv_wc wc;

			ibv_post_send(a, &wr, &bad);
			ibv_poll_cq(cq, 1, &wc);
		}
	}
	CHECK_EQ(read(ready[0], &c, 1), 1);
	usleep(100 * 1000);
	CHECK_EQ(kill(pid, SIGKILL), 0);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFSIGNALED(status), "child status %#x", status);
	close(ready[0]);
	close(ready[1]);
	printf("# a child killed with its rings in its own memory\n");
}

static void test_hostile(void)
{
	static const char pattern[] = "a read-only file's page cache";
	struct ring_log log = {};
	struct ibv_pd *pd = ibv_alloc_pd(ctx), *parent;
	char path[] = "/tmp/pd_rings.XXXXXX", *back;
	size_t flen = 64 * page;
	int fd;

	CHECK(pd, "alloc_pd");
	parent = parent_on(pd, &log);
	fd = mkstemp(path);
	CHECK(fd >= 0, "mkstemp");
	back = malloc(flen);
	for (size_t i = 0; i < flen; i++)
		back[i] = pattern[i % (sizeof(pattern) - 1)];
	CHECK_EQ(write(fd, back, flen), (ssize_t)flen);
	close(fd);
	ro_fd = open(path, O_RDONLY);
	CHECK(ro_fd >= 0, "open");

	expect_refused(parent, &log, no_memory, ENOMEM, "no memory (NULL)");
	expect_refused(parent, &log, read_only_anon, EFAULT,
		       "read-only anonymous memory");
	expect_refused(parent, &log, read_only_file, EFAULT,
		       "a read-only mapping of a read-only file");
	expect_refused(parent, &log, unaligned, EINVAL,
		       "memory not page-aligned");
	expect_refused(parent, &log, half_mapped, EFAULT,
		       "memory not all mapped");
	{
		char *now = malloc(flen);

		CHECK_EQ(pread(ro_fd, now, flen, 0), (ssize_t)flen);
		CHECK(!memcmp(now, back, flen), "the read-only file changed");
		free(now);
	}
	printf("# the read-only file is as it was\n");
	close(ro_fd);
	unlink(path);
	free(back);
	log.allocs = 0;		/* nothing was created: nothing to free */
	CHECK_EQ(ibv_dealloc_pd(parent), 0);
	rq_unmapped(pd);
	killed_child();
	CHECK_EQ(ibv_dealloc_pd(pd), 0);
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

int main(int argc, char **argv)
{
	const char *dev = getenv("SOFTRMA_DEV"), *ipv4 = getenv("SOFTRMA_IPV4");

	CHECK(argc == 2 && dev && ipv4,
	      "usage: pd_rings rings|hostile|memlock (SOFTRMA_DEV, SOFTRMA_IPV4)");
	page = sysconf(_SC_PAGESIZE);
	ctx = test_open_device(dev);
	gid_index = test_find_ipv4_gid(ctx, ipv4);
	if (!strcmp(argv[1], "rings"))
		test_rings();
	else if (!strcmp(argv[1], "hostile"))
		test_hostile();
	else if (!strcmp(argv[1], "memlock"))
		test_memlock();
	else
		FAIL("no test %s", argv[1]);
	CHECK_EQ(ibv_close_device(ctx), 0);
	return KSFT_PASS;
}
