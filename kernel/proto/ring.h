/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The geometry of the rings the kernel shares with the provider
 * (softrma-abi.h): how many entries of how many bytes a request for a
 * queue gets.  The provider reads it too, to size a ring it allocates in
 * its own memory before the kernel answers.
 */
#ifndef ROCE_PROTO_RING_H
#define ROCE_PROTO_RING_H

#include "types.h"
#include <rdma/softrma-abi.h>

/*
 * Entries for a request of @max: the power of two at or above it, 1 at
 * least; 0 when there is none (above 2^31).
 */
static inline u32 softrma_ring_entries(u32 max)
{
	u32 num = 1;

	while (num && num < max)
		num <<= 1;
	return num;
}

/*
 * Bytes of an SQ entry for @max_sge SGEs (1 at least) or @max_inline bytes;
 * in 64 bits, since the provider sizes a ring before the kernel checked
 * the capabilities.
 */
static inline u64 softrma_sqe_bytes(u32 max_sge, u32 max_inline)
{
	u64 sges = (u64)(max_sge ? max_sge : 1) * sizeof(struct softrma_sge);

	return sizeof(struct softrma_sqe) + (sges > max_inline ? sges : max_inline);
}

/* Bytes of an RQ or SRQ entry for @max_sge SGEs (1 at least). */
static inline u64 softrma_rqe_bytes(u32 max_sge)
{
	return sizeof(struct softrma_rqe) +
	       (u64)(max_sge ? max_sge : 1) * sizeof(struct softrma_sge);
}

/* What a ring of @num entries of @stride bytes spans in pages of @page_size. */
static inline u64 softrma_ring_pages_bytes(u32 num, u64 stride, u64 page_size)
{
	return (SOFTRMA_RING_BYTES(num, stride) + page_size - 1) & ~(page_size - 1);
}

#endif /* ROCE_PROTO_RING_H */
