/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The device's accesses to an MR's memory, as the memory mover reports
 * them: the cache hooks of a coherent device, or on a non-coherent checking
 * device (view.c) the device's own view of the MR; and for an MR over
 * persistent memory whose persistence is checked, its undo log (persist.c).
 */
#ifndef SOFTRMA_VIEW_H
#define SOFTRMA_VIEW_H

#include <linux/sizes.h>
#include <linux/spinlock.h>

#include "cache.h"
#include "verbs.h"

/*
 * What a checking device sees of an MR: pages of its own (the MR's pages[]
 * while the view exists) beside the pinned ones.
 */
struct softrma_view {
	struct softrma_dev *sdev;
	struct page **cpu;		/* the pinned pages, as the CPU sees them */
	unsigned long npages;
	/* A bit per byte the device wrote and no sync has brought to the CPU. */
	unsigned long *written;
	spinlock_t lock;		/* written, and both views at a sync */
};

/* The largest MR a checking device takes: a bit of written per byte. */
#define SOFTRMA_VIEW_MAX_MR_SIZE	(SZ_4G - PAGE_SIZE)

int softrma_view_attach(struct softrma_dev *sdev, struct softrma_mr *mr);
void softrma_view_retire(struct softrma_mr *mr);
void softrma_view_detach(struct softrma_mr *mr);
void softrma_view_read(const struct softrma_mr *mr, u64 iova, u64 len);
void softrma_view_wrote(const struct softrma_mr *mr, u64 iova, u64 len);
void softrma_view_sync(const struct softrma_mr *mr, u64 iova, u64 len,
		       enum softrma_sync_dir dir);
void softrma_view_put_back(const struct softrma_mr *mr, u64 pos, u64 len);

/* The MR whose pages @mr, entered, lends: a window's, or itself. */
static inline const struct softrma_mr *softrma_mr_owner(const struct softrma_mr *mr)
{
	return mr->mw_type ? mr->parent : mr;
}

/*
 * Before the device reads [@iova, @iova + @len) of @mr, mapped from @page
 * (NULL: no mapping, as for a FLUSH, or kernel memory).
 */
static inline void softrma_mr_before_read(const struct softrma_mr *mr,
					  u64 iova, u64 len, struct page *page)
{
	const struct softrma_mr *owner = softrma_mr_owner(mr);

	if (unlikely(owner->view))
		softrma_view_read(owner, iova, len);
	else if (page)
		softrma_cache_before_device_read(page);
}

/* Before the device writes [@iova, @iova + @len) of @mr, mapped at @addr. */
static inline void softrma_mr_before_write(const struct softrma_mr *mr,
					   u64 iova, u64 len, const void *addr)
{
	const struct softrma_mr *owner = softrma_mr_owner(mr);

	if (unlikely(owner->persist))
		softrma_persist_before_write(owner, iova, len, addr);
}

/*
 * After the device wrote [@iova, @iova + @len) of @mr at @addr, mapped
 * from @page.
 */
static inline void softrma_mr_after_write(const struct softrma_mr *mr,
					  u64 iova, u64 len, void *addr,
					  struct page *page)
{
	const struct softrma_mr *owner = softrma_mr_owner(mr);

	if (unlikely(owner->view)) {
		softrma_view_wrote(owner, iova, len);
		return;
	}
	if (page)
		softrma_cache_after_device_write(page);
	if (unlikely(owner->persist))
		softrma_persist_placed(owner, addr, len);
}

/* A FLUSH to persistence of [@iova, @iova + @len) of @mr is done. */
static inline void softrma_mr_durable(const struct softrma_mr *mr, u64 iova,
				      u64 len)
{
	const struct softrma_mr *owner = softrma_mr_owner(mr);

	if (owner->persist)
		softrma_persist_durable(owner, iova, len);
}

#endif /* SOFTRMA_VIEW_H */
