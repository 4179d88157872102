// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Memory registration: sizes and alignments, keys that are unique and never
 * come back after deregistration, and the errors for bad access flags, bad
 * addresses and read-only memory.
 *
 * usage: reg_mr DEV            the checks above
 *        reg_mr DEV memlock    run with RLIMIT_MEMLOCK 64 KiB and no
 *                              CAP_IPC_LOCK: 1 MiB must fail with ENOMEM,
 *                              48 KiB registered again elsewhere must not
 *        reg_mr DEV hold N     register N MiB and exit without deregistering
 */
#include <sys/mman.h>
#include <unistd.h>

#include "test.h"

#define LIVE_MRS 256
#define CHURN 2000

static const size_t sizes[] = { 1, 63, 4095, 4096, 4097, 65536,
				(1 << 20) + 3, 16 << 20 };

static struct ibv_mr *must_reg(struct ibv_pd *pd, void *buf, size_t len,
			       int access)
{
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, len, access);

	CHECK(mr, "reg_mr(%p, %zu, %#x): %s", buf, len, access, strerror(errno));
	CHECK_EQ(mr->length, len);
	CHECK(mr->addr == buf, "addr %p, want %p", mr->addr, buf);
	CHECK_EQ(mr->lkey, mr->rkey);
	return mr;
}

static void expect_reg_error(struct ibv_pd *pd, void *buf, size_t len,
			     int access, int err)
{
	errno = 0;
	CHECK(!ibv_reg_mr(pd, buf, len, access),
	      "reg_mr(%p, %zu, %#x) succeeded", buf, len, access);
	if (errno != err)
		FAIL("reg_mr(%p, %zu, %#x): errno %d (%s), want %d", buf, len,
		     access, errno, strerror(errno), err);
}

static void check_sizes(struct ibv_pd *pd)
{
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		     IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	char *buf = malloc((16 << 20) + 8192);

	CHECK(buf, "malloc");
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		for (size_t off = 0; off < 8192; off += 4093) {
			struct ibv_mr *mr = must_reg(pd, buf + off, sizes[i], access);

			CHECK_EQ(ibv_dereg_mr(mr), 0);
		}
	free(buf);
}

static int key_seen(const uint32_t *keys, int n, uint32_t key)
{
	for (int i = 0; i < n; i++)
		if (keys[i] == key)
			return 1;
	return 0;
}

/* Live keys are unique; a deregistered key does not come back. */
static void check_keys(struct ibv_pd *pd)
{
	static uint32_t keys[LIVE_MRS + CHURN];
	struct ibv_mr *mr[LIVE_MRS];
	char buf[64];
	int n = 0;

	for (int i = 0; i < LIVE_MRS; i++) {
		mr[i] = must_reg(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
		CHECK(!key_seen(keys, n, mr[i]->rkey), "key %#x twice", mr[i]->rkey);
		keys[n++] = mr[i]->rkey;
	}
	for (int i = 0; i < LIVE_MRS; i++)
		CHECK_EQ(ibv_dereg_mr(mr[i]), 0);
	for (int i = 0; i < CHURN; i++) {
		struct ibv_mr *m = must_reg(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);

		CHECK(!key_seen(keys, n, m->rkey), "deregistered key %#x is back",
		      m->rkey);
		keys[n++] = m->rkey;
		CHECK_EQ(ibv_dereg_mr(m), 0);
	}
	printf("# %d keys, none repeated\n", n);
}

static void check_errors(struct ibv_pd *pd)
{
	long page = sysconf(_SC_PAGESIZE);
	char *ro, *hole, buf[64];

	expect_reg_error(pd, buf, sizeof(buf), IBV_ACCESS_REMOTE_WRITE, EINVAL);
	expect_reg_error(pd, buf, sizeof(buf), IBV_ACCESS_REMOTE_ATOMIC, EINVAL);
	/* The whole address space is implicit ODP's, from NULL only. */
	expect_reg_error(pd, buf, SIZE_MAX, IBV_ACCESS_ON_DEMAND, EINVAL);
	expect_reg_error(pd, buf, 0, IBV_ACCESS_LOCAL_WRITE, EINVAL);

	/* Unmapped memory (PROT_NONE is pinned read-only by the core). */
	hole = mmap(NULL, 2 * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(hole != MAP_FAILED, "mmap");
	munmap(hole, 2 * page);
	expect_reg_error(pd, hole, page, 0, EFAULT);
	expect_reg_error(pd, hole, page, IBV_ACCESS_LOCAL_WRITE, EFAULT);

	ro = mmap(NULL, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(ro != MAP_FAILED, "mmap");
	expect_reg_error(pd, ro, page, IBV_ACCESS_LOCAL_WRITE, EFAULT);
	CHECK_EQ(ibv_dereg_mr(must_reg(pd, ro, page, IBV_ACCESS_REMOTE_READ)), 0);
	munmap(ro, page);
}

/*
 * An MR of 48 KiB under a limit of 64 KiB is registered again over other
 * 48 KiB, and again with rights that need its pages pinned for writing:
 * the old pin goes before the new one is taken.
 */
static void check_memlock_rereg(struct ibv_pd *pd)
{
	const size_t len = 48 << 10;
	char *a = aligned_alloc(4096, len), *b = aligned_alloc(4096, len);
	struct ibv_mr *mr;

	CHECK(a && b, "aligned_alloc");
	mr = must_reg(pd, a, len, 0);
	CHECK_EQ(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, b, len,
			      0), 0);
	CHECK(mr->addr == b, "addr %p, want %p", mr->addr, b);
	CHECK_EQ(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			      IBV_ACCESS_LOCAL_WRITE), 0);
	CHECK_EQ(ibv_dereg_mr(mr), 0);
	free(a);
	free(b);
}

static void check_memlock(struct ibv_pd *pd)
{
	char *big = malloc(1 << 20), small[16384];

	CHECK(big, "malloc");
	expect_reg_error(pd, big, 1 << 20, IBV_ACCESS_LOCAL_WRITE, ENOMEM);
	CHECK_EQ(ibv_dereg_mr(must_reg(pd, small, sizeof(small),
				       IBV_ACCESS_LOCAL_WRITE)), 0);
	free(big);
	check_memlock_rereg(pd);
}

int main(int argc, char **argv)
{
	struct ibv_context *ctx;
	struct ibv_pd *pd;

	CHECK(argc >= 2, "usage: reg_mr DEV [memlock | hold N]");
	ctx = test_open_device(argv[1]);
	pd = ibv_alloc_pd(ctx);
	CHECK(pd, "alloc_pd: %s", strerror(errno));

	if (argc == 3 && !strcmp(argv[2], "memlock")) {
		check_memlock(pd);
	} else if (argc == 4 && !strcmp(argv[2], "hold")) {
		size_t len = (size_t)atoi(argv[3]) << 20;

		must_reg(pd, calloc(1, len), len, IBV_ACCESS_LOCAL_WRITE);
		printf("ready\n");
		fflush(stdout);
		pause();
	} else {
		check_sizes(pd);
		check_keys(pd);
		check_errors(pd);
	}
	CHECK_EQ(ibv_dealloc_pd(pd), 0);
	CHECK_EQ(ibv_close_device(ctx), 0);
	return KSFT_PASS;
}
