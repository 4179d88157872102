/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Minimal helpers for softrma's C selftests: diagnostics go out as TAP "#". */
#ifndef SOFTRMA_TEST_H
#define SOFTRMA_TEST_H

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#define KSFT_PASS 0
#define KSFT_FAIL 1
#define KSFT_SKIP 4

/*
 * A failed check ends the test's process with KSFT_FAIL: under
 * kselftest_harness.h (rc_ops.c) the process of one case, reported "not ok".
 */
#define FAIL(fmt, ...) do {						\
	printf("# FAIL %s:%d: " fmt "\n", __FILE__, __LINE__, ##__VA_ARGS__); \
	exit(KSFT_FAIL);						\
} while (0)

#define CHECK(cond, fmt, ...) do {					\
	if (!(cond))							\
		FAIL("%s: " fmt, #cond, ##__VA_ARGS__);			\
} while (0)

#define CHECK_EQ(got, want) do {					\
	long long g_ = (long long)(got), w_ = (long long)(want);	\
	if (g_ != w_)							\
		FAIL("%s = %lld, want %lld", #got, g_, w_);		\
} while (0)

/* Opens the named device through the ordinary libibverbs calls. */
static inline struct ibv_context *test_open_device(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;

	CHECK(list, "ibv_get_device_list: %s", strerror(errno));
	for (int i = 0; list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	CHECK(ctx, "cannot open %s: %s", name, strerror(errno));
	return ctx;
}


/* Whether @gid is an IPv4-mapped IPv6 address (::ffff:a.b.c.d). */
static inline int test_gid_is_ipv4(const union ibv_gid *gid)
{
	static const unsigned char prefix[12] = {
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff,
	};

	return !memcmp(gid->raw, prefix, sizeof(prefix));
}

/* The index of the RoCE v2 GID of IPv4 address @ipv4 on port 1. */
static inline int test_find_ipv4_gid(struct ibv_context *ctx, const char *ipv4)
{
	union ibv_gid want = {}, gid;

	want.raw[10] = want.raw[11] = 0xff;
	CHECK(inet_pton(AF_INET, ipv4, &want.raw[12]) == 1, "address %s", ipv4);
	for (int i = 0; i < 1024; i++)
		if (!ibv_query_gid(ctx, 1, i, &gid) && !memcmp(&gid, &want, 16))
			return i;
	FAIL("no GID for %s", ipv4);
}

/* The most SGEs and inline bytes a QP has on softrma (and rdma_rxe). */
#define TEST_MAX_SGE	32
#define TEST_MAX_INLINE	512

/*
 * A connected (RC or UC) QP on @cq in INIT, with room for TEST_MAX_SGE SGEs
 * and TEST_MAX_INLINE inline bytes.
 */
static inline struct ibv_qp *test_create_qp(struct ibv_pd *pd, struct ibv_cq *cq,
					    struct ibv_srq *srq,
					    enum ibv_qp_type type, int access)
{
	struct ibv_qp_init_attr init = {
		.qp_type = type, .send_cq = cq, .recv_cq = cq, .srq = srq,
		.cap = { .max_send_wr = 64, .max_recv_wr = 64,
			 .max_send_sge = TEST_MAX_SGE,
			 .max_recv_sge = TEST_MAX_SGE,
			 .max_inline_data = TEST_MAX_INLINE },
	};
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = access,
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &init);

	CHECK(qp, "create_qp: %s", strerror(errno));
	CHECK(init.cap.max_inline_data >= TEST_MAX_INLINE, "max_inline %u",
	      init.cap.max_inline_data);
	CHECK_EQ(ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			       IBV_QP_PORT | IBV_QP_ACCESS_FLAGS), 0);
	return qp;
}

/* A UD QP on @cq in RTS with Q_Key @qkey, 16 WRs and 2 SGEs each way. */
static inline struct ibv_qp *test_create_ud_qp(struct ibv_pd *pd,
					       struct ibv_cq *cq, uint32_t qkey)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_UD, .send_cq = cq, .recv_cq = cq,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 2, .max_recv_sge = 2 },
	};
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = qkey,
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &init);

	CHECK(qp, "create_qp UD: %s", strerror(errno));
	CHECK_EQ(ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			       IBV_QP_PORT | IBV_QP_QKEY), 0);
	attr.qp_state = IBV_QPS_RTR;
	CHECK_EQ(ibv_modify_qp(qp, &attr, IBV_QP_STATE), 0);
	attr.qp_state = IBV_QPS_RTS;
	attr.sq_psn = 0;
	CHECK_EQ(ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN), 0);
	return qp;
}

/* How many times slower this kernel runs the tests (selftests/slowdown.sh). */
static inline int test_slowdown(void)
{
	const char *s = getenv("SOFTRMA_SLOWDOWN");
	int factor = s ? atoi(s) : 1;

	return factor > 0 ? factor : 1;
}

/*
 * Moves @qp to RTS, connected from GID @gid_index to QP @dest behind
 * @dgid, with the ACK timeout @timeout (0: wait forever).  UC takes only
 * the attributes it has.
 */
static inline void test_connect_timeout(struct ibv_qp *qp, int gid_index,
					const union ibv_gid *dgid, uint32_t dest,
					int rnr_retry, int timeout)
{
	int uc = qp->qp_type == IBV_QPT_UC;
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
		.dest_qp_num = dest, .rq_psn = 0, .max_dest_rd_atomic = 16,
		.min_rnr_timer = 1,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .dgid = *dgid, .sgid_index = gid_index,
				      .hop_limit = 64 } },
	};

	CHECK_EQ(ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_AV |
			       IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			       (uc ? 0 : IBV_QP_MAX_DEST_RD_ATOMIC |
					 IBV_QP_MIN_RNR_TIMER)), 0);
	attr = (struct ibv_qp_attr) {
		.qp_state = IBV_QPS_RTS, .timeout = timeout, .retry_cnt = 7,
		.rnr_retry = rnr_retry, .sq_psn = 0, .max_rd_atomic = 16,
	};
	CHECK_EQ(ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN |
			       (uc ? 0 : IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
					 IBV_QP_RNR_RETRY |
					 IBV_QP_MAX_QP_RD_ATOMIC)), 0);
}

/*
 * The ACK timeout 14 (67 ms), made as much longer as this kernel is slower
 * (SOFTRMA_SLOWDOWN, as lib.sh's ack_timeout): seven in a row end a
 * connection, and the debug kernel answers six times slower.
 */
static inline int test_ack_timeout(void)
{
	int timeout = 14;

	for (int f = 1; f < test_slowdown(); f *= 2)
		timeout++;
	return timeout;
}

/* As test_connect_timeout(), with test_ack_timeout(). */
static inline void test_connect_to(struct ibv_qp *qp, int gid_index,
				   const union ibv_gid *dgid, uint32_t dest,
				   int rnr_retry)
{
	test_connect_timeout(qp, gid_index, dgid, dest, rnr_retry,
			     test_ack_timeout());
}

/* Moves @qp to RTS, connected to QP @dest of the same port. */
static inline void test_connect_rc(struct ibv_context *ctx, struct ibv_qp *qp,
				   int gid_index, uint32_t dest, int rnr_retry)
{
	union ibv_gid gid;

	CHECK_EQ(ibv_query_gid(ctx, 1, gid_index, &gid), 0);
	test_connect_to(qp, gid_index, &gid, dest, rnr_retry);
}

/* This process's VmPin in kB: the memory it has pinned (the device's pins). */
static inline long test_pinned_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[128];
	long kb = -1;

	CHECK(f, "/proc/self/status: %s", strerror(errno));
	while (kb < 0 && fgets(line, sizeof(line), f))
		sscanf(line, "VmPin: %ld", &kb);
	fclose(f);
	CHECK(kb >= 0, "no VmPin");
	return kb;
}

/* Port 1's counter @name (rdma statistic, in sysfs's hw_counters). */
static inline unsigned long long test_port_counter(struct ibv_context *ctx,
						   const char *name)
{
	unsigned long long value;
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path),
		 "/sys/class/infiniband/%s/ports/1/hw_counters/%s",
		 ibv_get_device_name(ctx->device), name);
	f = fopen(path, "r");
	CHECK(f, "%s: %s", path, strerror(errno));
	CHECK(fscanf(f, "%llu", &value) == 1, "%s: no number", path);
	fclose(f);
	return value;
}

/*
 * The power of @ctx's device fails (sysfs power_fail, root only): returns
 * the bytes put back (power_fail_lost_bytes), read once the counters' 10 ms
 * cache has gone.
 */
static inline unsigned long long test_power_fail(struct ibv_context *ctx)
{
	unsigned long long before = test_port_counter(ctx,
						      "power_fail_lost_bytes");
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/power_fail",
		 ibv_get_device_name(ctx->device));
	f = fopen(path, "w");
	CHECK(f, "%s: %s", path, strerror(errno));
	CHECK(fputs("1\n", f) >= 0 && fclose(f) == 0, "%s: %s", path,
	      strerror(errno));
	usleep(20000);
	return test_port_counter(ctx, "power_fail_lost_bytes") - before;
}

/*
 * A limit of @seconds on Debian's kernels, on this kernel: the suite sets
 * SOFTRMA_SLOWDOWN (selftests/slowdown.sh) where everything runs slower.
 */
static inline int test_bound(int seconds)
{
	return seconds * test_slowdown();
}

/* Waits up to @seconds (test_bound) for one completion. */
static inline struct ibv_wc test_poll_one(struct ibv_cq *cq, int seconds)
{
	struct timespec start, now;
	struct ibv_wc wc;

	seconds = test_bound(seconds);
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		int n = ibv_poll_cq(cq, 1, &wc);

		CHECK(n >= 0, "poll_cq");
		if (n)
			return wc;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - start.tv_sec >= seconds)
			FAIL("no completion within %d s", seconds);
		sched_yield();
	}
}

/*
 * Waits up to @ms for an async event of @ctx: its type, or -1 when none
 * came; a QP event's QP in @qp unless it is NULL.
 */
static inline int test_async_event_of(struct ibv_context *ctx, int ms,
				      struct ibv_qp **qp)
{
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;
	int type;

	if (poll(&pfd, 1, ms) != 1)
		return -1;
	CHECK_EQ(ibv_get_async_event(ctx, &ev), 0);
	type = ev.event_type;
	if (qp)
		*qp = ev.element.qp;
	ibv_ack_async_event(&ev);
	return type;
}

static inline int test_async_event(struct ibv_context *ctx, int ms)
{
	return test_async_event_of(ctx, ms, NULL);
}

/* The state @qp is in, as the kernel reports it. */
static inline int test_qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;

	CHECK_EQ(ibv_query_qp(qp, &attr, IBV_QP_STATE, &init), 0);
	return attr.qp_state;
}

#endif /* SOFTRMA_TEST_H */

