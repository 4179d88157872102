// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The provider maps a ring only when the geometry the kernel returned holds
 * the entries it will write (user/ring.h): a power-of-two count, and a
 * stride that takes the SGEs or inline data the QP's capabilities allow;
 * and sizes a ring in its own memory as the kernel will
 * (kernel/proto/ring.h).
 */
#include <stdio.h>

#include "ring.h"

static int failures;

#define EXPECT(cond, what) do {						\
	if (!(cond)) {							\
		printf("# FAIL %s:%d: %s: %s\n", __FILE__, __LINE__, #cond, what); \
		failures++;						\
	}								\
} while (0)

int main(void)
{
	size_t sqe = sizeof(struct softrma_sqe), rqe = sizeof(struct softrma_rqe);
	size_t sge = sizeof(struct softrma_sge);

	EXPECT(softrma_sqe_bytes(4, 0) == sqe + 4 * sge, "SGEs");
	EXPECT(softrma_sqe_bytes(1, 200) == sqe + 200, "inline beyond the SGEs");
	EXPECT(softrma_sqe_bytes(0xffffffff, 0) == sqe + 0xffffffffULL * sge,
	       "no 32-bit wrap");
	EXPECT(softrma_rqe_bytes(2) == rqe + 2 * sge, "RQ entry");
	EXPECT(softrma_sqe_bytes(0, 0) == softrma_sqe_bytes(1, 0), "one SGE at least");
	EXPECT(softrma_rqe_bytes(0) == rqe + sge, "one receive SGE at least");

	EXPECT(softrma_ring_entries(0) == 1, "one entry at least");
	EXPECT(softrma_ring_entries(5) == 8, "rounded up");
	EXPECT(softrma_ring_entries(1U << 31) == 1U << 31, "the largest");
	EXPECT(softrma_ring_entries((1U << 31) + 1) == 0, "none beyond");
	EXPECT(softrma_ring_pages_bytes(1, 64, 4096) == 4096, "one page");
	EXPECT(softrma_ring_pages_bytes(64, 64, 4096) ==
	       (sizeof(struct softrma_ring_hdr) + 64 * 64 + 4095) / 4096 * 4096,
	       "header and entries in whole pages");
	EXPECT(softrma_ring_pages_bytes(1U << 31, 1ULL << 32, 4096) ==
	       sizeof(struct softrma_ring_hdr) + (1ULL << 63) + 4096 -
	       sizeof(struct softrma_ring_hdr), "no 64-bit wrap short of it");

	EXPECT(softrma_ring_geometry_ok(1, sqe + sge, softrma_sqe_bytes(1, 0)), "smallest");
	EXPECT(softrma_ring_geometry_ok(1U << 31, 4096, 4096), "largest count");
	EXPECT(softrma_ring_geometry_ok(16, 4096, 100), "a larger stride");
	EXPECT(!softrma_ring_geometry_ok(0, 4096, 100), "no entries");
	EXPECT(!softrma_ring_geometry_ok(24, 4096, 100), "not a power of two");
	EXPECT(!softrma_ring_geometry_ok(0xffffffff, 4096, 100), "all ones");
	EXPECT(!softrma_ring_geometry_ok(16, softrma_sqe_bytes(4, 0) - 1,
					 softrma_sqe_bytes(4, 0)),
	       "a stride one byte short of the SGEs");
	EXPECT(!softrma_ring_geometry_ok(16, 0, rqe), "stride 0");
	printf("# ring geometry: power-of-two counts, strides that hold the entries\n");
	return failures ? 1 : 0;
}
