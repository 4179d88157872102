// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What softrmadv_sync_mr() costs: ITERS syncs of LEN bytes of a registered
 * buffer towards the device, then as many towards the CPU, on DEV, and as
 * many getppid() calls (a system call that does nothing) for scale.
 * Prints microseconds per call.
 *
 * usage: sync_cost DEV LEN ITERS
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "softrmadv.h"

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static double per_sync(struct ibv_mr *mr, size_t len, int iters,
		       enum softrmadv_sync_dir dir)
{
	double start = now_us();

	for (int i = 0; i < iters; i++)
		if (softrmadv_sync_mr(mr, (uintptr_t)mr->addr, len, dir)) {
			perror("softrmadv_sync_mr");
			exit(1);
		}
	return (now_us() - start) / iters;
}

int main(int argc, char **argv)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	struct ibv_mr *mr;
	struct ibv_pd *pd;
	size_t len;
	double start, sys;
	void *buf;
	int iters;

	if (argc != 4 || !list) {
		fprintf(stderr, "usage: sync_cost DEV LEN ITERS\n");
		return 2;
	}
	len = strtoul(argv[2], NULL, 0);
	iters = atoi(argv[3]);
	for (int i = 0; list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), argv[1]))
			ctx = ibv_open_device(list[i]);
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	if (!pd || posix_memalign(&buf, 4096, len)) {
		fprintf(stderr, "sync_cost: no %s\n", argv[1]);
		return 1;
	}
	memset(buf, 1, len);
	mr = ibv_reg_mr(pd, buf, len, IBV_ACCESS_LOCAL_WRITE);
	if (!mr) {
		perror("ibv_reg_mr");
		return 1;
	}
	start = now_us();
	for (int i = 0; i < iters; i++)
		getppid();
	sys = (now_us() - start) / iters;
	printf("%s %zu B: to_device %.2f us, to_cpu %.2f us, getppid %.2f us\n",
	       argv[1], len, per_sync(mr, len, iters, SOFTRMADV_SYNC_TO_DEVICE),
	       per_sync(mr, len, iters, SOFTRMADV_SYNC_TO_CPU), sys);
	ibv_dereg_mr(mr);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return 0;
}
