/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Minimal helpers for softrma's C selftests: diagnostics go out as TAP "#". */
#ifndef SOFTRMA_TEST_H
#define SOFTRMA_TEST_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

#define KSFT_PASS 0
#define KSFT_FAIL 1
#define KSFT_SKIP 4

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

#endif /* SOFTRMA_TEST_H */
