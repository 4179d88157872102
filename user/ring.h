/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The provider's view of a ring shared with softrma.ko (softrma-abi.h). */
#ifndef SOFTRMA_RING_H
#define SOFTRMA_RING_H

#include <stdatomic.h>
#include <stdint.h>
#include <rdma/softrma-abi.h>

#include "../kernel/proto/ring.h"

struct softrma_pd;

struct softrma_ring {
	void *map;
	size_t map_len;
	/* The parent domain whose allocator gave map, or NULL: mmap()ed. */
	struct softrma_pd *mem_owner;
	uint64_t mem_type;	/* enum softrmadv_res_type, for its free */
	struct softrma_ring_hdr *hdr;
	char *entries;
	uint32_t num;		/* a power of two */
	uint32_t stride;
	uint32_t index;		/* ours: producer of SQ/RQ, consumer of CQ */
};

/*
 * The kernel's geometry for a ring whose entries the provider fills up to
 * @entry_bytes: a power-of-two number of entries, each at least that large.
 * Anything else (another softrma.ko's ABI, a kernel bug) would have the
 * provider write past an entry, and past the mapping at the last one.
 */
static inline int softrma_ring_geometry_ok(uint32_t num, uint32_t stride,
					   size_t entry_bytes)
{
	return num && !(num & (num - 1)) && stride >= entry_bytes;
}

int softrma_ring_alloc(struct softrma_ring *ring, struct softrma_pd *parent,
		       uint64_t type, uint32_t num, uint64_t stride,
		       struct softrma_ring_mem *mem);
/*
 * EPROTO when the geometry does not hold entries of @entry_bytes, or not
 * in the memory softrma_ring_alloc() gave.
 */
int softrma_ring_map(struct softrma_ring *ring, int cmd_fd, uint64_t key,
		     uint32_t num, uint32_t stride, size_t entry_bytes);
int softrma_ring_remap(struct softrma_ring *ring, int cmd_fd, uint64_t key,
		       uint32_t num, uint32_t stride, size_t entry_bytes);
void softrma_ring_unmap(struct softrma_ring *ring);

static inline void *softrma_ring_entry(struct softrma_ring *ring, uint32_t index)
{
	return ring->entries + (size_t)(index & (ring->num - 1)) * ring->stride;
}

static inline uint32_t softrma_ring_load(uint32_t *index)
{
	return atomic_load_explicit((_Atomic uint32_t *)index, memory_order_acquire);
}

static inline void softrma_ring_store(uint32_t *index, uint32_t value)
{
	atomic_store_explicit((_Atomic uint32_t *)index, value, memory_order_release);
}

/* Producer side: room for one more entry? */
static inline int softrma_ring_full(struct softrma_ring *ring)
{
	return ring->index - softrma_ring_load(&ring->hdr->consumer) >= ring->num;
}

#endif /* SOFTRMA_RING_H */
