// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The device's object limits and the memory cgroup charge of its rings,
 * through plain libibverbs.
 *
 *   limits DEV fill KIND N      the device holds N more KIND (pd qp cq srq mr
 *                               mw ah) than before this program: creating them
 *                               succeeds that often, then fails with ENOMEM;
 *                               one freed makes room for one more
 *   limits DEV rings N          creates up to N QPs with 2 x 16384-entry
 *                               rings, prints "created K" and "charged B":
 *                               what the first added to this process's
 *                               memory cgroup; a creation refused with
 *                               ENOMEM ends it early, any other error fails
 *   limits DEV resize N         up to N times, creates a CQ and an SRQ of one
 *                               entry and resizes them to max_cqe and
 *                               max_srq_wr, prints "resized K" and "charged
 *                               B": what the first two resizes added to this
 *                               process's memory cgroup; a resize refused
 *                               with ENOMEM ends it early, any other error
 *                               fails
 *   limits DEV churn SECONDS QPS MRS
 *                               creates and destroys QPS QPs and MRS MRs
 *                               over and over; errors after the device is
 *                               gone end it quietly (exit 0)
 */
#include <unistd.h>

#include "test.h"

#define MAX_OBJS 100000

enum kind { PD, QP, CQ, SRQ, MR, MW, AH };
static const char *const kind_names[] = { "pd", "qp", "cq", "srq", "mr", "mw",
					  "ah" };

struct res {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	char *buf;
	struct ibv_ah_attr ah_attr;
};

static void *create(struct res *r, enum kind kind)
{
	struct ibv_qp_init_attr qp_init = {
		.qp_type = IBV_QPT_UD, .send_cq = r->cq, .recv_cq = r->cq,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_srq_init_attr srq_init = {
		.attr = { .max_wr = 1, .max_sge = 1 },
	};

	switch (kind) {
	case PD: return ibv_alloc_pd(r->ctx);
	case QP: return ibv_create_qp(r->pd, &qp_init);
	case CQ: return ibv_create_cq(r->ctx, 1, NULL, NULL, 0);
	case SRQ: return ibv_create_srq(r->pd, &srq_init);
	case MR: return ibv_reg_mr(r->pd, r->buf, 4096, IBV_ACCESS_LOCAL_WRITE);
	case MW: return ibv_alloc_mw(r->pd, IBV_MW_TYPE_2);
	case AH: return ibv_create_ah(r->pd, &r->ah_attr);
	}
	return NULL;
}

static int destroy(enum kind kind, void *obj)
{
	switch (kind) {
	case PD: return ibv_dealloc_pd(obj);
	case QP: return ibv_destroy_qp(obj);
	case CQ: return ibv_destroy_cq(obj);
	case SRQ: return ibv_destroy_srq(obj);
	case MR: return ibv_dereg_mr(obj);
	case MW: return ibv_dealloc_mw(obj);
	case AH: return ibv_destroy_ah(obj);
	}
	return -1;
}

static void res_init(struct res *r, const char *dev)
{
	int gid_index;

	r->ctx = test_open_device(dev);
	r->pd = ibv_alloc_pd(r->ctx);
	CHECK(r->pd, "alloc_pd: %s", strerror(errno));
	r->cq = ibv_create_cq(r->ctx, 16, NULL, NULL, 0);
	CHECK(r->cq, "create_cq: %s", strerror(errno));
	r->buf = aligned_alloc(4096, 4096);
	CHECK(r->buf, "aligned_alloc");
	gid_index = test_find_ipv4_gid(r->ctx, "10.9.0.1");
	r->ah_attr = (struct ibv_ah_attr) {
		.is_global = 1, .port_num = 1,
		.grh = { .sgid_index = gid_index, .hop_limit = 64 },
	};
	CHECK_EQ(ibv_query_gid(r->ctx, 1, gid_index, &r->ah_attr.grh.dgid), 0);
}

static int fill(struct res *r, enum kind kind, long want)
{
	static void *objs[MAX_OBJS];
	long n = 0;
	void *extra;

	want -= kind == PD || kind == CQ;	/* res_init()'s own */
	while (n < MAX_OBJS && (objs[n] = create(r, kind)))
		n++;
	CHECK(n < MAX_OBJS, "%s: %d created, no limit", kind_names[kind], MAX_OBJS);
	CHECK(errno == ENOMEM, "%s number %ld: %s, want ENOMEM",
	      kind_names[kind], n + 1, strerror(errno));
	CHECK_EQ(n, want);
	CHECK_EQ(destroy(kind, objs[n - 1]), 0);
	objs[n - 1] = create(r, kind);
	CHECK(objs[n - 1], "%s after one was freed: %s", kind_names[kind],
	      strerror(errno));
	extra = create(r, kind);
	CHECK(!extra && errno == ENOMEM, "%s over the limit again",
	      kind_names[kind]);
	while (n)
		CHECK_EQ(destroy(kind, objs[--n]), 0);
	printf("# %s: %ld more, then ENOMEM\n", kind_names[kind], want);
	return KSFT_PASS;
}

/* This process's memory cgroup's memory.current. */
static long long cgroup_memory(void)
{
	char line[4096], path[4200];
	long long bytes = -1;
	FILE *f = fopen("/proc/self/cgroup", "r");

	CHECK(f, "/proc/self/cgroup");
	CHECK(fgets(line, sizeof(line), f), "/proc/self/cgroup is empty");
	fclose(f);
	line[strcspn(line, "\n")] = 0;
	CHECK(!strncmp(line, "0::", 3), "not cgroup v2: %s", line);
	snprintf(path, sizeof(path), "/sys/fs/cgroup%s/memory.current", line + 3);
	f = fopen(path, "r");
	CHECK(f, "%s: %s", path, strerror(errno));
	CHECK(fscanf(f, "%lld", &bytes) == 1, "%s", path);
	fclose(f);
	return bytes;
}

static int rings(struct res *r, int want)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC, .send_cq = r->cq, .recv_cq = r->cq,
		.cap = { .max_send_wr = 16384, .max_recv_wr = 16384,
			 .max_send_sge = 16, .max_recv_sge = 16 },
	};
	long long before = cgroup_memory(), charged = 0;
	int n;

	for (n = 0; n < want; n++) {
		struct ibv_qp_init_attr attr = init;

		if (!ibv_create_qp(r->pd, &attr)) {
			CHECK(errno == ENOMEM, "create_qp %d: %s", n + 1,
			      strerror(errno));
			break;
		}
		if (!n)
			charged = cgroup_memory() - before;
	}
	printf("created %d\ncharged %lld\n", n, charged);
	fflush(stdout);
	return KSFT_PASS;
}

static int resize(struct res *r, int want)
{
	struct ibv_device_attr dev;
	long long before, charged = 0;
	int n, ret;

	CHECK_EQ(ibv_query_device(r->ctx, &dev), 0);
	before = cgroup_memory();
	for (n = 0; n < want; n++) {
		struct ibv_srq_attr attr = { .max_wr = dev.max_srq_wr };
		struct ibv_cq *cq = create(r, CQ);
		struct ibv_srq *srq = create(r, SRQ);

		CHECK(cq && srq, "create %d: %s", n + 1, strerror(errno));
		ret = ibv_resize_cq(cq, dev.max_cqe);
		if (!ret)
			ret = ibv_modify_srq(srq, &attr, IBV_SRQ_MAX_WR);
		if (ret) {
			CHECK(ret == ENOMEM, "resize %d: %s", n + 1, strerror(ret));
			break;
		}
		if (!n)
			charged = cgroup_memory() - before;
	}
	printf("resized %d\ncharged %lld\n", n, charged);
	fflush(stdout);
	return KSFT_PASS;
}

/* Only a device that went away may refuse. */
static int churn_gone(long rounds)
{
	CHECK(errno == EIO || errno == ENODEV, "churn: %s", strerror(errno));
	printf("# churn: the device went away after %ld rounds\n", rounds);
	return KSFT_PASS;
}

static int churn(struct res *r, int seconds, int nqp, int nmr)
{
	static void *qps[MAX_OBJS], *mrs[MAX_OBJS];
	time_t end = time(NULL) + seconds;
	long rounds = 0;

	CHECK(nqp <= MAX_OBJS && nmr <= MAX_OBJS, "at most %d", MAX_OBJS);
	while (time(NULL) < end) {
		for (int i = 0; i < nqp; i++)
			if (!(qps[i] = create(r, QP)))
				return churn_gone(rounds);
		for (int i = 0; i < nmr; i++)
			if (!(mrs[i] = create(r, MR)))
				return churn_gone(rounds);
		for (int i = 0; i < nqp; i++)
			if ((errno = destroy(QP, qps[i])))
				return churn_gone(rounds);
		for (int i = 0; i < nmr; i++)
			if ((errno = destroy(MR, mrs[i])))
				return churn_gone(rounds);
		rounds++;
	}
	printf("# churn: %ld rounds of %d QPs and %d MRs\n", rounds, nqp, nmr);
	return KSFT_PASS;
}

int main(int argc, char **argv)
{
	struct res r;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 3)
		FAIL("usage: limits DEV fill KIND N | rings N | resize N | churn SECONDS QPS MRS");
	res_init(&r, argv[1]);
	if (!strcmp(argv[2], "fill") && argc == 5) {
		for (unsigned int k = 0; k < sizeof(kind_names) / sizeof(*kind_names); k++)
			if (!strcmp(argv[3], kind_names[k]))
				return fill(&r, k, atol(argv[4]));
		FAIL("no such kind: %s", argv[3]);
	}
	if (!strcmp(argv[2], "rings") && argc == 4)
		return rings(&r, atoi(argv[3]));
	if (!strcmp(argv[2], "resize") && argc == 4)
		return resize(&r, atoi(argv[3]));
	if (!strcmp(argv[2], "churn") && argc == 6)
		return churn(&r, atoi(argv[3]), atoi(argv[4]), atoi(argv[5]));
	FAIL("bad arguments");
}
