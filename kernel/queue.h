/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Rings shared with user space (struct softrma_ring_hdr, then entries).
 * The kernel's own index lives in struct softrma_queue; the one in the
 * shared header is only ever written from it.  The other side's index is
 * read once per use and checked against the ring size.
 */
#ifndef SOFTRMA_QUEUE_H
#define SOFTRMA_QUEUE_H

#include <rdma/ib_verbs.h>
#include <rdma/softrma-abi.h>

struct softrma_queue {
	struct softrma_ring_hdr *hdr;
	void *entries;
	u32 num;		/* entries, a power of two */
	u32 stride;		/* bytes per entry */
	u32 index;		/* the kernel's index: consumer or producer */
	struct softrma_mmap_entry *mmap;	/* a process's ring, to map */
	struct ib_umem *umem;	/* a ring in the process's own memory */
};

/* Which of a ring's indices is the kernel's. */
enum softrma_queue_side {
	SOFTRMA_KERNEL_PRODUCES,	/* CQ */
	SOFTRMA_KERNEL_CONSUMES,	/* SQ, RQ, SRQ */
};

/* The entries [first, last) of a ring that a new ring holds already. */
struct softrma_queue_span {
	u32 first;
	u32 last;
};

int softrma_queue_init(struct softrma_queue *q, struct ib_ucontext *uctx,
		       u32 num, u32 stride, const struct softrma_ring_mem *mem,
		       u64 *mmap_key);
int softrma_udata_cmd(struct ib_udata *udata, void *cmd, size_t len);
int softrma_queue_check_flight(const struct softrma_queue *q,
			       const struct softrma_queue *next,
			       u32 first, u32 last, u32 max);
void softrma_queue_copy(struct softrma_queue *next, struct softrma_queue *q,
			struct softrma_queue_span *done, u32 first, u32 last);
int softrma_queue_replace(struct softrma_queue *q, struct softrma_queue *next,
			  enum softrma_queue_side side, u32 max,
			  struct softrma_queue_span *done);
void softrma_queue_destroy(struct softrma_queue *q);
u32 softrma_queue_remove(struct softrma_queue *q,
			 bool (*match)(const void *entry, const void *arg),
			 const void *arg);

/* A ring of a process, not of a kernel consumer. */
static inline bool softrma_queue_is_user(const struct softrma_queue *q)
{
	return q->mmap || q->umem;
}

static inline void *softrma_queue_entry(struct softrma_queue *q, u32 index)
{
	return q->entries + (size_t)(index & (q->num - 1)) * q->stride;
}

/*
 * Entries the producer has published and the kernel not consumed yet, or
 * -EPROTO when the producer index cannot be true.
 */
static inline int softrma_queue_pending(struct softrma_queue *q)
{
	u32 n = smp_load_acquire(&q->hdr->producer) - q->index;

	return n > q->num ? -EPROTO : n;
}

static inline void softrma_queue_consume(struct softrma_queue *q)
{
	q->index++;
	smp_store_release(&q->hdr->consumer, q->index);
}

/* True when the kernel may not produce: full, or a consumer index out of range. */
static inline bool softrma_queue_full(struct softrma_queue *q)
{
	return q->index - READ_ONCE(q->hdr->consumer) >= q->num;
}

static inline void softrma_queue_produce(struct softrma_queue *q)
{
	q->index++;
	smp_store_release(&q->hdr->producer, q->index);
}

static inline bool softrma_queue_empty(struct softrma_queue *q)
{
	return READ_ONCE(q->hdr->consumer) == q->index;
}

/*
 * Rings of kernel QPs, whose producer is kernel code too: the entry to fill
 * next, or NULL when the ring is full; then publish it.  Posters serialise.
 */
static inline void *softrma_kqueue_next(struct softrma_queue *q)
{
	u32 prod = q->hdr->producer;

	if (prod - READ_ONCE(q->hdr->consumer) >= q->num)
		return NULL;
	return softrma_queue_entry(q, prod);
}

static inline void softrma_kqueue_publish(struct softrma_queue *q)
{
	smp_store_release(&q->hdr->producer, q->hdr->producer + 1);
}

int softrma_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma);
void softrma_mmap_free(struct rdma_user_mmap_entry *rentry);

#endif /* SOFTRMA_QUEUE_H */
