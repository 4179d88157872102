// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Shared rings and their user mappings. */

#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <rdma/ib_umem.h>

#include "compat.h"
#include "proto/ring.h"
#include "verbs.h"

/* Owns a user ring's buffer, so that a mapping in progress keeps it alive. */
struct softrma_mmap_entry {
	struct rdma_user_mmap_entry rentry;
	void *buf;
};

/*
 * The ring in the process's memory at @mem, @bytes of it pinned writable
 * (RLIMIT_MEMLOCK charged by the core) and mapped for the kernel.
 */
static void *softrma_queue_pin(struct softrma_queue *q, struct ib_device *ibdev,
			       const struct softrma_ring_mem *mem, size_t bytes)
{
	unsigned long npages = bytes >> PAGE_SHIFT;
	struct page **pages;
	void *buf = NULL;
	int err;

	if (!PAGE_ALIGNED(mem->addr) || mem->len < bytes)
		return ERR_PTR(-EINVAL);
	q->umem = ib_umem_get(ibdev, mem->addr, bytes, IB_ACCESS_LOCAL_WRITE);
	if (IS_ERR(q->umem)) {
		err = PTR_ERR(q->umem);
		q->umem = NULL;
		return ERR_PTR(err);
	}
	pages = kvmalloc_array(npages, sizeof(*pages), softrma_gfp(true));
	err = pages ? softrma_umem_pages(q->umem, pages, npages) : -ENOMEM;
	if (!err)
		buf = vmap(pages, npages, VM_MAP, PAGE_KERNEL);
	kvfree(pages);
	if (buf)
		return buf;
	ib_umem_release(q->umem);
	q->umem = NULL;
	return ERR_PTR(err ?: -ENOMEM);
}

/*
 * The provider's optional command of @len bytes after the core's: zeroes
 * where it sent less, -EINVAL when it sent more that is not zero.
 */
int softrma_udata_cmd(struct ib_udata *udata, void *cmd, size_t len)
{
	size_t n = min(udata->inlen, len);

	memset(cmd, 0, len);
	if (udata->inlen > len &&
	    !ib_is_udata_cleared(udata, len, udata->inlen - len))
		return -EINVAL;
	return n ? ib_copy_from_udata(cmd, udata, n) : 0;
}

/*
 * A ring of @num entries of @stride bytes: in the memory @mem names, when
 * it names some, else allocated here, and for a process (@uctx) inserted
 * for mmap at *@mmap_key.
 */
int softrma_queue_init(struct softrma_queue *q, struct ib_ucontext *uctx,
		       u32 num, u32 stride, const struct softrma_ring_mem *mem,
		       u64 *mmap_key)
{
	size_t bytes = softrma_ring_pages_bytes(num, stride, PAGE_SIZE);
	gfp_t gfp = softrma_gfp(uctx);
	void *buf;
	int err;

	q->num = num;
	q->stride = stride;
	q->index = 0;
	q->mmap = NULL;
	q->umem = NULL;
	if (mem && mem->addr) {
		buf = softrma_queue_pin(q, uctx->device, mem, bytes);
		if (IS_ERR(buf))
			return PTR_ERR(buf);
		memset(buf, 0, sizeof(*q->hdr));
	} else {
		buf = __vmalloc(bytes, gfp | __GFP_ZERO);
		if (!buf)
			return -ENOMEM;
	}
	q->hdr = buf;
	q->entries = buf + sizeof(struct softrma_ring_hdr);
	if (!uctx || q->umem)
		return 0;

	q->mmap = kzalloc(sizeof(*q->mmap), gfp);
	if (!q->mmap) {
		err = -ENOMEM;
		goto err_free;
	}
	q->mmap->buf = buf;
	err = rdma_user_mmap_entry_insert(uctx, &q->mmap->rentry, bytes);
	if (err)
		goto err_free;
	*mmap_key = rdma_user_mmap_get_offset(&q->mmap->rentry);
	return 0;

err_free:
	kfree(q->mmap);
	q->mmap = NULL;
	vfree(buf);
	return err;
}

/*
 * Whether the entries [@first, @last) of @q can move to @next: -EPROTO when
 * the indices cannot be true, -EINVAL when more than @max entries, or more
 * than @next holds, are in flight.
 */
int softrma_queue_check_flight(const struct softrma_queue *q,
			       const struct softrma_queue *next,
			       u32 first, u32 last, u32 max)
{
	if (last - first > q->num)
		return -EPROTO;
	if (last - first > min(max, next->num))
		return -EINVAL;
	return 0;
}

/**
 * softrma_queue_copy - copies a ring's entries [@first, @last) to a new ring
 * @next: the new ring, of @q's stride, with room for them
 * @q: the ring
 * @done: what @next holds already of @q's, from the last call; updated
 * @first: the first entry in flight
 * @last: after the last entry in flight
 *
 * The entries keep their indices.  What @done says @next holds is not
 * copied again when it starts the entries in flight still.
 */
void softrma_queue_copy(struct softrma_queue *next, struct softrma_queue *q,
			struct softrma_queue_span *done, u32 first, u32 last)
{
	u32 from = first;

	if (first - done->first <= done->last - done->first &&
	    done->last - first <= last - first)
		from = done->last;
	for (u32 i = from; i != last; i++)
		memcpy(softrma_queue_entry(next, i), softrma_queue_entry(q, i),
		       q->stride);
	*done = (struct softrma_queue_span) { .first = first, .last = last };
}

/**
 * softrma_queue_replace - moves a ring's entries in flight to a new ring
 * @q: the ring
 * @next: an empty ring of @q's stride from softrma_queue_init(); on success
 *	the old ring, for the caller to destroy once unlocked
 * @side: which of @q's indices is the kernel's
 * @max: the most entries in flight the caller accepts
 * @done: what softrma_queue_copy() put in @next already, or NULL; the other
 *	side's index may not go back behind it
 *
 * The entries between the consumer and the producer index keep their
 * indices in @next, so neither side's index changes: the other side goes
 * on from its own once it uses @next.  The other side's index is read once.
 *
 * Context: the caller holds the lock of the kernel's side of @q.
 *
 * Return: 0, or as softrma_queue_check_flight(); -EPROTO also when the
 * other side's index went back behind @done.
 */
int softrma_queue_replace(struct softrma_queue *q, struct softrma_queue *next,
			  enum softrma_queue_side side, u32 max,
			  struct softrma_queue_span *done)
{
	struct softrma_queue_span none = {};
	u32 first, last;
	int err;

	if (side == SOFTRMA_KERNEL_PRODUCES) {
		first = READ_ONCE(q->hdr->consumer);
		last = q->index;
	} else {
		first = q->index;
		last = smp_load_acquire(&q->hdr->producer);
	}
	err = softrma_queue_check_flight(q, next, first, last, max);
	if (err)
		return err;
	if (!done)
		done = &none;
	else if (first - done->first > last - done->first)
		return -EPROTO;

	softrma_queue_copy(next, q, done, first, last);
	next->hdr->consumer = first;
	next->hdr->producer = last;
	next->index = side == SOFTRMA_KERNEL_PRODUCES ? last : first;
	swap(*q, *next);
	return 0;
}

/**
 * softrma_queue_remove - takes entries out of a ring that the kernel alone uses
 * @q: a kernel consumer's ring that the kernel produces into (a kernel CQ)
 * @match: whether an entry goes
 * @arg: passed to @match
 *
 * The entries that stay keep their order and move towards the producer
 * index, which stays where it is; the consumer index skips what was freed.
 *
 * Context: the caller holds the lock of both of @q's indices.
 *
 * Return: the entries removed.
 */
u32 softrma_queue_remove(struct softrma_queue *q,
			 bool (*match)(const void *entry, const void *arg),
			 const void *arg)
{
	u32 consumer = q->hdr->consumer, freed = 0, i;
	void *entry;

	for (i = q->index; i != consumer;) {
		entry = softrma_queue_entry(q, --i);
		if (match(entry, arg))
			freed++;
		else if (freed)
			memcpy(softrma_queue_entry(q, i + freed), entry,
			       q->stride);
	}
	WRITE_ONCE(q->hdr->consumer, consumer + freed);
	return freed;
}

/* For a user ring the buffer goes with the last reference to its entry. */
void softrma_queue_destroy(struct softrma_queue *q)
{
	if (q->mmap) {
		rdma_user_mmap_entry_remove(&q->mmap->rentry);
	} else if (q->umem) {
		vunmap(q->hdr);
		ib_umem_release(q->umem);
		q->umem = NULL;
	} else {
		vfree(q->hdr);
	}
	q->hdr = NULL;
}

/*
 * What remap_vmalloc_range() does for vmalloc_user() memory, which cannot be
 * charged to a cgroup.  The core checked that the VMA is the entry's size.
 */
static int softrma_mmap_ring(struct vm_area_struct *vma, void *buf)
{
	unsigned long addr;
	int err;

	for (addr = vma->vm_start; addr < vma->vm_end; addr += PAGE_SIZE) {
		err = vm_insert_page(vma, addr, vmalloc_to_page(buf));
		if (err)
			return err;
		buf += PAGE_SIZE;
	}
	vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);
	return 0;
}

int softrma_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *rentry;
	struct softrma_mmap_entry *entry;
	int err;

	rentry = rdma_user_mmap_entry_get(uctx, vma);
	if (!rentry)
		return -EINVAL;
	entry = container_of(rentry, struct softrma_mmap_entry, rentry);
	err = softrma_mmap_ring(vma, entry->buf);
	rdma_user_mmap_entry_put(rentry);
	return err;
}

void softrma_mmap_free(struct rdma_user_mmap_entry *rentry)
{
	struct softrma_mmap_entry *entry =
		container_of(rentry, struct softrma_mmap_entry, rentry);

	vfree(entry->buf);
	kfree(entry);
}
