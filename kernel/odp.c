// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * On-demand paging: an MR registered with IB_ACCESS_ON_DEMAND pins nothing.
 * The core's ODP umem tracks its range with an mmu interval notifier; the
 * device faults the pages an access needs in (hmm_range_fault(), through
 * ib_umem_odp_map_dma_and_lock()) and touches them only under the umem's
 * mutex, after checking that they are still mapped with the rights it
 * needs.  The invalidation callback takes the same mutex: once it returns,
 * the device neither touches the pages that left nor writes to a page
 * write-protected since (as fork() does to its parent's private pages).
 *
 * An implicit ODP MR (0..U64_MAX at iova 0: the whole address space) has
 * the core's implicit umem, which maps nothing, and a child umem for each
 * chunk of the address space an access reaches, made on first use and
 * kept until the MR goes.
 *
 * The device's addresses of an ODP umem (ib_uses_virt_dma()) are kernel
 * virtual addresses of its pages, in dma_list with the rights in the low
 * bits.  A piece of a copy lies within one page of each side; both sides
 * may be ODP, each umem locked once, in address order.  Nothing allocates
 * or faults under a umem mutex: the invalidation runs from reclaim.
 */

#include <linux/hmm.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/wait_bit.h>
#include <rdma/ib_umem_odp.h>

#include "verbs.h"

/* Faults at most this much ahead of a piece, of what the access needs. */
#define SOFTRMA_ODP_FAULT_AHEAD	(256U << 10)

/*
 * How long a piece waits for its pages to stay mapped while the process
 * takes them away again and again (a MADV_DONTNEED loop): then it fails.
 */
#define SOFTRMA_ODP_HOLD_MS	5000

/* An implicit MR's chunks: 64 MiB, whose child's lists take 256 KiB. */
#define SOFTRMA_ODP_CHUNK_SHIFT	26

/*
 * The core's lists of an ODP umem take 16 bytes per page registered,
 * unaccounted, whether or not anything is mapped: the module's ODP MRs
 * together may register 16 times the RAM, so that the lists never hold
 * more than a 16th of it.
 */
#define SOFTRMA_ODP_RAM_FACTOR	16
static atomic64_t softrma_odp_pages = ATOMIC64_INIT(0);

static bool softrma_odp_charge(unsigned long pages)
{
	u64 max = (u64)totalram_pages() * SOFTRMA_ODP_RAM_FACTOR;

	if (atomic64_add_return(pages, &softrma_odp_pages) <= max)
		return true;
	atomic64_sub(pages, &softrma_odp_pages);
	return false;
}

static void softrma_odp_uncharge(unsigned long pages)
{
	atomic64_sub(pages, &softrma_odp_pages);
}

/* What a umem over [@start, @start + @length) is charged: its 4 KiB pages. */
static unsigned long softrma_odp_pages_of(u64 start, u64 length)
{
	return (PAGE_ALIGN(start + length) - round_down(start, PAGE_SIZE)) >>
	       PAGE_SHIFT;
}

/* The user virtual address of @iova, a byte of @mr. */
static u64 softrma_odp_va(const struct softrma_mr *mr, u64 iova)
{
	return mr->umem->address + (iova - mr->iova);
}

static u64 softrma_odp_rights(bool write)
{
	return ODP_READ_ALLOWED_BIT | (write ? ODP_WRITE_ALLOWED_BIT : 0);
}

/* The dma_list entry of the page of @va: its address and rights. */
static dma_addr_t softrma_odp_entry(struct ib_umem_odp *odp, u64 va)
{
	lockdep_assert_held(&odp->umem_mutex);
	return odp->dma_list[(va - ib_umem_start(odp)) >> odp->page_shift];
}

static bool softrma_odp_invalidate(struct mmu_interval_notifier *mni,
				   const struct mmu_notifier_range *range,
				   unsigned long cur_seq)
{
	struct ib_umem_odp *odp = container_of(mni, struct ib_umem_odp,
					       notifier);

	if (!mmu_notifier_range_blockable(range))
		return false;
	mutex_lock(&odp->umem_mutex);
	mmu_interval_set_seq(mni, cur_seq);
	ib_umem_odp_unmap_dma_pages(odp, max(ib_umem_start(odp), range->start),
				    min(ib_umem_end(odp), range->end));
	mutex_unlock(&odp->umem_mutex);
	softrma_count(to_sdev(odp->umem.ibdev), SOFTRMA_CNT_ODP_INVALIDATIONS);
	return true;
}

static const struct mmu_interval_notifier_ops softrma_odp_ops = {
	.invalidate = softrma_odp_invalidate,
};

/*
 * The child of an implicit @root for the chunk of @va, made now (charged
 * to the budget) if there is none; the chunk ends at the top of user space.
 */
static struct ib_umem_odp *softrma_odp_child(struct softrma_mr *mr,
					     struct ib_umem_odp *root, u64 va)
{
	unsigned long idx = va >> SOFTRMA_ODP_CHUNK_SHIFT;
	u64 top = root->umem.owning_mm->task_size;
	u64 start = (u64)idx << SOFTRMA_ODP_CHUNK_SHIFT;
	struct ib_umem_odp *child, *old;
	u64 size;

	child = xa_load(&mr->odp_children, idx);
	if (child)
		return child;
	if (va >= top)
		return ERR_PTR(-EFAULT);
	size = min_t(u64, BIT_ULL(SOFTRMA_ODP_CHUNK_SHIFT), top - start);
	if (!softrma_odp_charge(softrma_odp_pages_of(start, size)))
		return ERR_PTR(-ENOMEM);
	child = ib_umem_odp_alloc_child(root, start, size, &softrma_odp_ops);
	if (IS_ERR(child)) {
		softrma_odp_uncharge(softrma_odp_pages_of(start, size));
		return child;
	}
	old = xa_cmpxchg(&mr->odp_children, idx, NULL, child, GFP_KERNEL);
	if (!old)
		return child;
	/* Another access made it first, or the xarray had no memory. */
	ib_umem_odp_release(child);
	softrma_odp_uncharge(softrma_odp_pages_of(start, size));
	return xa_is_err(old) ? ERR_PTR(xa_err(old)) : old;
}

/*
 * The umem that holds @va of ODP @mr: its own, or an implicit MR's child;
 * NULL for a MR that is not ODP.
 */
static struct ib_umem_odp *softrma_odp_umem(struct softrma_mr *mr, u64 va)
{
	struct ib_umem_odp *odp;

	if (!mr || !softrma_mr_is_odp(mr))
		return NULL;
	odp = to_ib_umem_odp(mr->umem);
	return odp->is_implicit_odp ? softrma_odp_child(mr, odp, va) : odp;
}

/* Implicit: the core's implicit umem, which holds the process's mm. */
static int softrma_odp_get_implicit(struct softrma_mr *mr,
				    struct ib_device *ibdev, int access)
{
	struct ib_umem_odp *root;

	root = ib_umem_odp_alloc_implicit(ibdev, access);
	if (IS_ERR(root))
		return PTR_ERR(root);
	mmgrab(root->umem.owning_mm);
	xa_init(&mr->odp_children);
	mr->umem = &root->umem;
	return 0;
}

/* Explicit: the range's umem, its lists charged to the module's budget. */
static int softrma_odp_get_range(struct softrma_mr *mr, struct ib_device *ibdev,
				 u64 start, u64 length, int access)
{
	struct ib_umem_odp *odp;
	unsigned long pages;

	/* Charged first: the lists are allocated at once. */
	pages = softrma_odp_pages_of(start, length);
	if (!softrma_odp_charge(pages))
		return -ENOMEM;
	odp = ib_umem_odp_get(ibdev, start, length, access, &softrma_odp_ops);
	if (IS_ERR(odp)) {
		softrma_odp_uncharge(pages);
		return PTR_ERR(odp);
	}
	mr->umem = &odp->umem;
	mr->page_offset = ib_umem_offset(mr->umem);
	return 0;
}

/**
 * softrma_odp_get() - Registers @mr's range on demand: nothing is pinned.
 * @mr: the MR
 * @ibdev: its device
 * @start: the user address of its first byte (implicit: 0)
 * @length: its length (implicit: U64_MAX)
 * @access: its rights; the pages are faulted writable if they allow writes
 *
 * Context: Process context, in the registering process.
 * Return: 0 or a negative errno (-ENOMEM past the module's ODP budget);
 * the MR's umem is set on success.
 */
int softrma_odp_get(struct softrma_mr *mr, struct ib_device *ibdev, u64 start,
		    u64 length, int access)
{
	int err = softrma_mr_range_is_implicit(start, length) ?
		  softrma_odp_get_implicit(mr, ibdev, access) :
		  softrma_odp_get_range(mr, ibdev, start, length, access);

	if (!err)
		atomic_inc(&to_sdev(ibdev)->odp_mrs);
	return err;
}

/**
 * softrma_odp_put() - Lets go of @mr's ODP umems and their share of the
 * budget.
 * @mr: an ODP MR that nothing accesses any more
 *
 * Context: Process context; waits for an invalidation in progress.
 */
void softrma_odp_put(struct softrma_mr *mr)
{
	struct ib_umem_odp *odp = to_ib_umem_odp(mr->umem), *child;
	struct mm_struct *mm = odp->umem.owning_mm;
	unsigned long idx;

	atomic_dec(&to_sdev(odp->umem.ibdev)->odp_mrs);
	if (!odp->is_implicit_odp) {
		softrma_odp_uncharge(softrma_odp_pages_of(odp->umem.address,
							  odp->umem.length));
		ib_umem_odp_release(odp);
		return;
	}
	xa_for_each(&mr->odp_children, idx, child) {
		softrma_odp_uncharge(softrma_odp_pages_of(child->umem.address,
							  child->umem.length));
		ib_umem_odp_release(child);
	}
	xa_destroy(&mr->odp_children);
	ib_umem_odp_release(odp);
	mmdrop(mm);
}

/*
 * Faults in [@va, @va + @len) of @odp (at most to its end) with @rights,
 * or fewer bytes if an invalidation comes between: the caller checks again
 * under the mutex.
 */
static int softrma_odp_fault(struct ib_umem_odp *odp, u64 va, u64 len,
			     u64 rights)
{
	int ret;

	len = min_t(u64, len, ib_umem_end(odp) - va);
	ret = ib_umem_odp_map_dma_and_lock(odp, va, len, rights, true);
	if (ret < 0)
		return ret;
	mutex_unlock(&odp->umem_mutex);
	softrma_count(to_sdev(odp->umem.ibdev), SOFTRMA_CNT_ODP_FAULTS);
	return 0;
}

/* One side of a piece: at @iova of @mr, @ahead bytes from there needed. */
struct softrma_odp_side {
	struct softrma_mr *mr;
	u64 iova;
	u64 ahead;
	bool write;
	int err;		/* what its failure returns */
	struct ib_umem_odp *odp;	/* the umem of the piece, or NULL */
	u64 va;
};

/*
 * A range that a piece of a packet's copy left to fault in, with an
 * access to its MR that deregistration waits for.
 */
struct softrma_odp_later {
	struct work_struct work;
	struct softrma_mr *mr;
	struct ib_umem_odp *odp;
	u64 va;
	u64 len;
	u64 rights;
};

/* How odp_failed names the page of @va: never 0, which names none. */
static unsigned long softrma_odp_failed_mark(u64 va)
{
	return (unsigned long)(va & PAGE_MASK) | 1;
}

/*
 * Whether the last fault of @s's MR that a work made failed at @s's page:
 * the access fails, once; the next one asks for a fault again.
 */
static bool softrma_odp_failed(const struct softrma_odp_side *s)
{
	unsigned long mark = softrma_odp_failed_mark(s->va);

	return READ_ONCE(s->mr->odp_failed) == mark &&
	       cmpxchg(&s->mr->odp_failed, mark, 0) == mark;
}

static void softrma_odp_later_work(struct work_struct *work)
{
	struct softrma_odp_later *l = container_of(work, struct softrma_odp_later,
						   work);
	struct softrma_mr *mr = l->mr;
	int err;

	/*
	 * Of a range that cannot be faulted in whole, the page the request
	 * needs first; when that fails too, so does the request on its return,
	 * unless the pages were there but went again each time, for as long
	 * as the core tries (-EBUSY): then it waits, as for a fault to come.
	 */
	err = softrma_odp_fault(l->odp, l->va, l->len, l->rights);
	if (err)
		err = softrma_odp_fault(l->odp, l->va, 1, l->rights);
	WRITE_ONCE(mr->odp_failed, err && err != -EBUSY ?
				   softrma_odp_failed_mark(l->va) : 0);
	clear_bit_unlock(0, &mr->odp_faulting);
	smp_mb__after_atomic();
	wake_up_var(&mr->odp_faulting);
	softrma_mr_put(mr);
	kfree(l);
}

/*
 * Hands @s's range to a work that faults it in, unless one is at it for
 * the MR already; without memory for it the request's next try asks again.
 */
static void softrma_odp_fault_later(const struct softrma_odp_side *s)
{
	struct softrma_odp_later *l;

	if (test_and_set_bit_lock(0, &s->mr->odp_faulting))
		return;
	l = kmalloc(sizeof(*l), GFP_KERNEL);
	if (!l) {
		clear_bit_unlock(0, &s->mr->odp_faulting);
		return;
	}
	*l = (struct softrma_odp_later) {
		.mr = s->mr, .odp = s->odp, .va = s->va, .len = s->ahead,
		.rights = softrma_odp_rights(s->write),
	};
	INIT_WORK(&l->work, softrma_odp_later_work);
	softrma_users_hold(&s->mr->users);
	queue_work(softrma_odp_wq, &l->work);
}

static bool softrma_odp_present(const struct softrma_odp_side *s)
{
	u64 rights = softrma_odp_rights(s->write);

	return !s->odp ||
	       (softrma_odp_entry(s->odp, s->va) & rights) == rights;
}

static void softrma_odp_lock(struct softrma_odp_hold *h)
{
	if (h->odp[0])
		mutex_lock(&h->odp[0]->umem_mutex);
	if (h->odp[1])
		mutex_lock_nested(&h->odp[1]->umem_mutex, SINGLE_DEPTH_NESTING);
}

/**
 * softrma_odp_release() - Ends a piece that softrma_odp_hold() began.
 * @h: its hold
 */
void softrma_odp_release(struct softrma_odp_hold *h)
{
	if (h->odp[1])
		mutex_unlock(&h->odp[1]->umem_mutex);
	if (h->odp[0])
		mutex_unlock(&h->odp[0]->umem_mutex);
}

/*
 * Where a packet's copy would wait (nofault): a work faults @s's range
 * in, and the piece waits for it once, a jiffy at most.  Returns 0 to look
 * again, -EAGAIN to come back later, or the side's error when the work
 * could not fault its page in.
 */
static int softrma_odp_fault_apart(struct softrma_odp_side *s, bool *waited)
{
	unsigned long *faulting = &s->mr->odp_faulting;

	if (softrma_odp_failed(s))
		return s->err;
	softrma_odp_fault_later(s);
	if (*waited)
		return -EAGAIN;
	*waited = true;
	wait_var_event_timeout(faulting, !test_bit(0, faulting), 1);
	return 0;
}

static int softrma_odp_hold_sides(struct softrma_odp_hold *h,
				  struct softrma_odp_side *side)
{
	unsigned long until = jiffies + msecs_to_jiffies(SOFTRMA_ODP_HOLD_MS);
	struct softrma_odp_side *missing;
	bool waited = false;
	int err;

	for (int i = 0; i < 2; i++) {
		side[i].odp = softrma_odp_umem(side[i].mr, side[i].va);
		if (IS_ERR(side[i].odp))
			return side[i].err;
		h->odp[i] = side[i].odp;
	}
	if (h->odp[0] == h->odp[1])
		h->odp[1] = NULL;
	else if (!h->odp[0] || (h->odp[1] && h->odp[1] < h->odp[0]))
		swap(h->odp[0], h->odp[1]);
	if (!h->odp[0])
		return 0;
	for (;;) {
		softrma_odp_lock(h);
		missing = !softrma_odp_present(&side[0]) ? &side[0] :
			  !softrma_odp_present(&side[1]) ? &side[1] : NULL;
		if (!missing)
			return 0;
		softrma_odp_release(h);
		if (h->nofault) {
			err = softrma_odp_fault_apart(missing, &waited);
			if (err)
				return err;
			continue;
		}
		if (time_after(jiffies, until) || fatal_signal_pending(current))
			return missing->err;
		err = softrma_odp_fault(missing->odp, missing->va,
					missing->ahead,
					softrma_odp_rights(missing->write));
		/* hmm_range_fault() gave up on a range invalidated all along. */
		if (err && err != -EBUSY)
			return missing->err;
		/* Lost again: from now on fault in its own page only. */
		missing->ahead = min_t(u64, missing->ahead,
				       PAGE_SIZE - offset_in_page(missing->va));
	}
}

/**
 * softrma_odp_hold() - Begins a piece of a copy between ODP MRs, or not.
 * @h: the hold, ended with softrma_odp_release() after a 0 return; with
 *	h->nofault set the caller does not fault (below)
 * @dst: the MR written (NULL: none)
 * @dst_iova: the piece's first byte in it
 * @dst_ahead: the bytes from there that the access writes in that MR
 * @src: the MR read (NULL: none)
 * @src_iova: the piece's first byte in it
 * @src_ahead: the bytes from there that the access reads in that MR
 *
 * The piece lies within one page of each side.  The ODP sides' pages are
 * faulted in as needed and locked mapped until the release.  A copy to or
 * from a packet (softrma_sgl.nofault) sets h->nofault: it runs in the
 * receive path, which every QP of a namespace waits for, or under an RC
 * QP's lock that the receive path needs, and the core's fault of a range
 * starts again whenever its process invalidates a page of the MR, for as
 * long as that goes on; so a work faults the pages in instead, and the
 * piece waits for it a jiffy at most.
 *
 * Context: Process context; may sleep and fault; holds the umem mutexes.
 * Return: 0; -EACCES when @dst, -EFAULT when @src cannot be faulted in
 * with the rights the access needs (unmapped, read-only, its process gone);
 * -EAGAIN with h->nofault when pages are not there: try again later.
 */
int softrma_odp_hold(struct softrma_odp_hold *h, struct softrma_mr *dst,
		     u64 dst_iova, u64 dst_ahead, struct softrma_mr *src,
		     u64 src_iova, u64 src_ahead)
{
	struct softrma_odp_side side[2] = {
		{ .mr = dst, .iova = dst_iova, .write = true, .err = -EACCES,
		  .ahead = min_t(u64, dst_ahead, SOFTRMA_ODP_FAULT_AHEAD) },
		{ .mr = src, .iova = src_iova, .err = -EFAULT,
		  .ahead = min_t(u64, src_ahead, SOFTRMA_ODP_FAULT_AHEAD) },
	};

	for (int i = 0; i < 2; i++) {
		if (!side[i].mr || !softrma_mr_is_odp(side[i].mr))
			continue;
		/*
		 * The receive softirq, with an MR registered since it looked:
		 * an implicit MR's chunk is made, and every umem locked, asleep.
		 */
		if (in_softirq())
			return -EAGAIN;
		side[i].va = softrma_odp_va(side[i].mr, side[i].iova);
	}
	return softrma_odp_hold_sides(h, side);
}

/**
 * softrma_odp_map() - Maps the byte at @iova of an ODP MR, held.
 * @mr: the MR
 * @iova: the byte
 * @len: in: what the caller wants; out: what lies in the mapping
 * @page: out: the page to unmap
 *
 * Context: Under the umem's mutex (softrma_odp_hold()).
 * Return: the mapping.
 */
void *softrma_odp_map(struct softrma_mr *mr, u64 iova, u64 *len,
		      struct page **page)
{
	u64 va = softrma_odp_va(mr, iova);
	struct ib_umem_odp *odp = to_ib_umem_odp(mr->umem);
	void *kva;

	if (odp->is_implicit_odp)	/* held: made already */
		odp = xa_load(&mr->odp_children, va >> SOFTRMA_ODP_CHUNK_SHIFT);

	kva = (void *)(uintptr_t)(softrma_odp_entry(odp, va) & ODP_DMA_ADDR_MASK) +
	      (va & (BIT_ULL(odp->page_shift) - 1));
	*page = virt_to_page(kva);
	*len = min_t(u64, *len, PAGE_SIZE - offset_in_page(kva));
	return kmap_local_page(*page) + offset_in_page(kva);
}

/* The ODP MR of @pd that @sge names whole, for advise_mr. */
static struct softrma_mr *softrma_odp_advised(struct ib_pd *pd,
					      const struct ib_sge *sge,
					      bool write)
{
	struct softrma_mr *mr;

	mr = softrma_mr_get(to_sdev(pd->device), pd, sge->lkey, sge->addr,
			    sge->length, 0);
	if (IS_ERR_OR_NULL(mr))
		return ERR_PTR(-EINVAL);
	if (!softrma_mr_is_odp(mr)) {
		softrma_mr_put(mr);
		return ERR_PTR(-ENOENT);
	}
	if (write && !mr->umem->writable) {
		softrma_mr_put(mr);
		return ERR_PTR(-EPERM);
	}
	return mr;
}

/*
 * Faults in, or maps what is there (PREFETCH_NO_FAULT), [@addr,
 * @addr + @len) of @mr, umem by umem.
 */
static int softrma_odp_prefetch(struct softrma_mr *mr, u64 addr, u64 len,
				u32 advice)
{
	u64 va = softrma_odp_va(mr, addr), n;
	struct ib_umem_odp *odp;
	int ret;

	for (; len; va += n, len -= n) {
		odp = softrma_odp_umem(mr, va);
		if (IS_ERR(odp))
			return PTR_ERR(odp);
		n = min_t(u64, len, ib_umem_end(odp) - va);
		if (advice != IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT) {
			ret = softrma_odp_fault(odp, va, n, softrma_odp_rights(
				advice == IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE));
			if (ret)
				return ret;
			continue;
		}
		ret = ib_umem_odp_map_dma_and_lock(odp, va, n,
						   ODP_READ_ALLOWED_BIT, false);
		if (ret < 0)
			return ret;
		mutex_unlock(&odp->umem_mutex);
	}
	return 0;
}

/**
 * softrma_advise_mr() - ibv_advise_mr(): prefetches ranges of ODP MRs.
 * @pd: the PD the MRs must belong to
 * @advice: PREFETCH (for reading), PREFETCH_WRITE or PREFETCH_NO_FAULT
 *	(map what is already there)
 * @flags: IB_UVERBS_ADVISE_MR_FLAG_FLUSH: the pages are there on return,
 *	or the error says why; without it the advice is a hint, done before
 *	the return all the same, whose failures are not reported
 * @sg_list: the ranges: lkeys of ODP MRs of @pd, each range within its MR
 * @num_sge: how many
 * @attrs: unused
 *
 * Context: Process context, in the MRs' process; sleeps.
 * Return: 0; -EOPNOTSUPP for an unknown advice; -EINVAL for a key or range
 * that names no valid MR of @pd, -ENOENT for an MR that is not ODP, -EPERM
 * for PREFETCH_WRITE of an MR that the device cannot write; with FLUSH the
 * error of a page that cannot be faulted in.
 */
int softrma_advise_mr(struct ib_pd *pd, enum ib_uverbs_advise_mr_advice advice,
		      u32 flags, struct ib_sge *sg_list, u32 num_sge,
		      struct uverbs_attr_bundle *attrs)
{
	bool write = advice == IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE;
	struct softrma_mr *mr;
	int err;

	if (advice != IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH && !write &&
	    advice != IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT)
		return -EOPNOTSUPP;
	for (u32 i = 0; i < num_sge; i++) {
		mr = softrma_odp_advised(pd, &sg_list[i], write);
		if (IS_ERR(mr))
			return PTR_ERR(mr);
		err = softrma_odp_prefetch(mr, sg_list[i].addr,
					   sg_list[i].length, advice);
		softrma_mr_put(mr);
		if (err && (flags & IB_UVERBS_ADVISE_MR_FLAG_FLUSH))
			return err;
		cond_resched();
	}
	return 0;
}

/**
 * softrma_odp_caps() - What query_device reports of ODP.
 * @attr: the attributes
 *
 * Explicit and implicit ODP MRs, for every operation of RC, UC, UD and XRC
 * that reaches memory.
 */
void softrma_odp_caps(struct ib_device_attr *attr)
{
	const u32 rc = IB_ODP_SUPPORT_SEND | IB_ODP_SUPPORT_RECV |
		       IB_ODP_SUPPORT_WRITE | IB_ODP_SUPPORT_READ |
		       IB_ODP_SUPPORT_ATOMIC | IB_ODP_SUPPORT_SRQ_RECV;

	attr->kernel_cap_flags |= IBK_ON_DEMAND_PAGING;
	attr->odp_caps.general_caps = IB_ODP_SUPPORT | IB_ODP_SUPPORT_IMPLICIT;
	attr->odp_caps.per_transport_caps.rc_odp_caps = rc;
	attr->odp_caps.per_transport_caps.uc_odp_caps =
		IB_ODP_SUPPORT_SEND | IB_ODP_SUPPORT_RECV |
		IB_ODP_SUPPORT_WRITE | IB_ODP_SUPPORT_SRQ_RECV;
	attr->odp_caps.per_transport_caps.ud_odp_caps =
		IB_ODP_SUPPORT_SEND | IB_ODP_SUPPORT_RECV |
		IB_ODP_SUPPORT_SRQ_RECV;
	attr->odp_caps.per_transport_caps.xrc_odp_caps =
		rc & ~IB_ODP_SUPPORT_RECV;
}
