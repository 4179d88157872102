// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The non-coherent checking device.  On it the device sees each user MR
 * through pages of its own, loaded from the pinned ones at registration, as
 * a DMA engine without cache coherence sees memory while the CPU works in
 * its caches: the device's accesses (softrma_mr_map()) reach only its
 * pages, and data crosses between the two views only at a sync
 * (softrmadv_sync_mr(), sync.c).  What a non-coherent platform would get
 * wrong silently is counted and traced (softrma_missing_sync):
 *  - a device read of bytes the CPU changed since they last crossed: a sync
 *    towards the device was missing, and the device used stale data;
 *  - device writes that never crossed to the CPU before a sync towards the
 *    device or the end of the registration overwrote them: a sync towards
 *    the CPU was missing, and the CPU never saw them.
 * Bytes the device wrote differ between the views because of the device;
 * a bit per byte of the MR (written) remembers them until they cross.
 *
 * Positions are bytes of the page array (softrma_mr_pos()).
 */

#include <linux/bitmap.h>
#include <linux/highmem.h>
#include <linux/libnvdimm.h>
#include <linux/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>

#include "trace.h"
#include "view.h"

#define SOFTRMA_VIEW_GFP	(GFP_KERNEL_ACCOUNT | __GFP_NOWARN)

static const enum softrma_counter softrma_missing_sync_counter[] = {
	[SOFTRMA_SYNC_TO_DEVICE] = SOFTRMA_CNT_MISSING_SYNC_TO_DEVICE,
	[SOFTRMA_SYNC_TO_CPU] = SOFTRMA_CNT_MISSING_SYNC_TO_CPU,
};

/*
 * Adjacent ranges of one kind, reported as one: a message or a sync that
 * crosses pages is taken page by page.
 */
struct softrma_view_run {
	const struct softrma_mr *mr;
	enum softrma_sync_dir missing;
	u64 pos;
	u64 len;
};

static void softrma_view_report(struct softrma_view_run *run)
{
	const struct softrma_mr *mr = run->mr;
	struct softrma_dev *sdev = mr->view->sdev;

	if (!run->len)
		return;
	softrma_count(sdev, softrma_missing_sync_counter[run->missing]);
	trace_softrma_missing_sync(sdev, mr->key, run->pos - mr->page_offset,
				   run->len, run->missing);
	run->len = 0;
}

static void softrma_view_run_add(struct softrma_view_run *run, u64 pos,
				 u64 len)
{
	if (run->len && run->pos + run->len == pos) {
		run->len += len;
		return;
	}
	softrma_view_report(run);
	run->pos = pos;
	run->len = len;
}

/* Adds the device's writes in [pos, end) to @run and forgets them. */
static void softrma_view_drop_written(struct softrma_view *view,
				      struct softrma_view_run *run, u64 pos,
				      u64 end)
{
	unsigned long start, stop;

	for (start = find_next_bit(view->written, end, pos); start < end;
	     start = find_next_bit(view->written, end, stop)) {
		stop = find_next_zero_bit(view->written, end, start);
		softrma_view_run_add(run, start, stop - start);
		bitmap_clear(view->written, start, stop - start);
	}
}

static void softrma_view_free(struct softrma_view *view, struct page **pages)
{
	for (unsigned long i = 0; pages && i < view->npages && pages[i]; i++)
		__free_page(pages[i]);
	kvfree(pages);
	kvfree(view->written);
	kfree(view);
}

/**
 * softrma_view_attach() - Gives @mr, pinned, the device's view of it.
 * @sdev: its device, in checking mode
 * @mr: a user MR whose pages[] are the pinned pages
 *
 * The view is a copy of the pages as they are now, and takes their place
 * in @mr->pages; it costs as much memory again, and a bit per byte, charged
 * to the caller's memory cgroup.
 *
 * Return: 0, -ENOMEM, or -EINTR when the caller was killed.
 */
int softrma_view_attach(struct softrma_dev *sdev, struct softrma_mr *mr)
{
	struct softrma_view *view;
	struct page **pages;
	int err = -ENOMEM;

	view = kzalloc(sizeof(*view), GFP_KERNEL_ACCOUNT);
	if (!view)
		return -ENOMEM;
	view->sdev = sdev;
	view->npages = mr->npages;
	spin_lock_init(&view->lock);
	pages = kvcalloc(mr->npages, sizeof(*pages), SOFTRMA_VIEW_GFP);
	view->written = kvcalloc(BITS_TO_LONGS(mr->npages << PAGE_SHIFT),
				 sizeof(long), SOFTRMA_VIEW_GFP);
	if (!pages || !view->written)
		goto err;
	for (unsigned long i = 0; i < mr->npages; i++) {
		if (fatal_signal_pending(current)) {
			err = -EINTR;
			goto err;
		}
		pages[i] = alloc_page(SOFTRMA_VIEW_GFP | __GFP_HIGHMEM);
		if (!pages[i])
			goto err;
		softrma_cache_before_device_read(mr->pages[i]);
		copy_highpage(pages[i], mr->pages[i]);
		cond_resched();
	}
	view->cpu = mr->pages;
	mr->pages = pages;
	mr->view = view;
	return 0;

err:
	softrma_view_free(view, pages);
	return err;
}

/*
 * Ends what the device wrote into @mr, which nothing accesses any more (a
 * deregistration, a rereg that replaces its pages): what no sync brought to
 * the CPU is reported.
 */
void softrma_view_retire(struct softrma_mr *mr)
{
	struct softrma_view *view = mr->view;
	struct softrma_view_run run = { .mr = mr,
					.missing = SOFTRMA_SYNC_TO_CPU };

	if (!view)
		return;
	softrma_view_drop_written(view, &run, 0, view->npages << PAGE_SHIFT);
	softrma_view_report(&run);
}

/* Gives @mr its pinned pages back and frees the view. */
void softrma_view_detach(struct softrma_mr *mr)
{
	struct softrma_view *view = mr->view;
	struct page **pages = mr->pages;

	mr->pages = view->cpu;
	mr->view = NULL;
	softrma_view_free(view, pages);
}

/* How much of [pos, end) lies in pos's page. */
static u64 softrma_view_piece(u64 pos, u64 end)
{
	return min_t(u64, end - pos, PAGE_SIZE - offset_in_page(pos));
}

/* Whether the CPU's and the device's bytes differ in [pos, pos + n). */
static bool softrma_view_differ(const u8 *cpu, const u8 *dev, u64 n,
				u64 *first, u64 *last)
{
	u64 i, j;

	if (!memcmp(cpu, dev, n))
		return false;
	for (i = 0; cpu[i] == dev[i]; i++)
		;
	for (j = n - 1; cpu[j] == dev[j]; j--)
		;
	*first = i;
	*last = j;
	return true;
}

/*
 * Before the device reads [iova, iova + len) of @mr: reports what the CPU
 * changed there since it last crossed, leaving aside what the device wrote
 * itself.  Each page's changes are reported as one range, from the first
 * changed byte to the last.
 */
void softrma_view_read(const struct softrma_mr *mr, u64 iova, u64 len)
{
	struct softrma_view *view = mr->view;
	struct softrma_view_run run = { .mr = mr,
					.missing = SOFTRMA_SYNC_TO_DEVICE };
	u64 pos = softrma_mr_pos(mr, iova), end = pos + len, n;
	u64 lo, hi, first, last;
	unsigned long start, stop;
	struct page *page;
	u8 *cpu, *dev;

	for (; pos < end; pos += n) {
		n = softrma_view_piece(pos, end);
		lo = U64_MAX;
		hi = 0;
		page = view->cpu[pos >> PAGE_SHIFT];
		softrma_cache_before_device_read(page);
		spin_lock_bh(&view->lock);
		cpu = kmap_local_page(page);
		dev = kmap_local_page(mr->pages[pos >> PAGE_SHIFT]);
		for (start = find_next_zero_bit(view->written, pos + n, pos);
		     start < pos + n;
		     start = find_next_zero_bit(view->written, pos + n, stop)) {
			stop = find_next_bit(view->written, pos + n, start);
			if (softrma_view_differ(cpu + offset_in_page(start),
						dev + offset_in_page(start),
						stop - start, &first, &last)) {
				lo = min(lo, start + first);
				hi = start + last;
			}
		}
		kunmap_local(dev);
		kunmap_local(cpu);
		spin_unlock_bh(&view->lock);
		if (lo != U64_MAX)
			softrma_view_run_add(&run, lo, hi + 1 - lo);
	}
	softrma_view_report(&run);
}

/* After the device wrote [iova, iova + len) of @mr. */
void softrma_view_wrote(const struct softrma_mr *mr, u64 iova, u64 len)
{
	struct softrma_view *view = mr->view;

	spin_lock_bh(&view->lock);
	bitmap_set(view->written, softrma_mr_pos(mr, iova), len);
	spin_unlock_bh(&view->lock);
}

/*
 * A power failure put [pos, pos + len) of @mr's view, within a page, back
 * as it was: the CPU's caches went with it, so the CPU sees those bytes as
 * the device does, and nothing the device wrote there is left to cross.
 */
void softrma_view_put_back(const struct softrma_mr *mr, u64 pos, u64 len)
{
	struct softrma_view *view = mr->view;
	struct page *page = view->cpu[pos >> PAGE_SHIFT];
	u8 *cpu, *dev;

	spin_lock_bh(&view->lock);
	bitmap_clear(view->written, pos, len);
	cpu = kmap_local_page(page);
	dev = kmap_local_page(mr->pages[pos >> PAGE_SHIFT]);
	memcpy(cpu + offset_in_page(pos), dev + offset_in_page(pos), len);
	arch_wb_cache_pmem(cpu + offset_in_page(pos), len);
	kunmap_local(dev);
	kunmap_local(cpu);
	spin_unlock_bh(&view->lock);
	softrma_cache_after_device_write(page);
}

/*
 * Towards the CPU: the device's writes in the range become the CPU's; the
 * rest of the CPU's view, which the device did not write, stays as it is.
 */
static void softrma_view_sync_to_cpu(struct softrma_view *view, u64 pos,
				     u64 n, struct page *cpu_page,
				     struct page *dev_page)
{
	u64 end = pos + n;
	unsigned long start, stop;
	u8 *cpu, *dev;

	cpu = kmap_local_page(cpu_page);
	dev = kmap_local_page(dev_page);
	for (start = find_next_bit(view->written, end, pos); start < end;
	     start = find_next_bit(view->written, end, stop)) {
		stop = find_next_zero_bit(view->written, end, start);
		memcpy(cpu + offset_in_page(start), dev + offset_in_page(start),
		       stop - start);
		bitmap_clear(view->written, start, stop - start);
	}
	kunmap_local(dev);
	kunmap_local(cpu);
}

/*
 * Towards the device: the CPU's bytes replace the device's, and what the
 * device wrote there and the CPU never saw is lost and reported.
 */
static void softrma_view_sync_to_device(struct softrma_view *view,
					struct softrma_view_run *lost,
					u64 pos, u64 n, struct page *cpu_page,
					struct page *dev_page)
{
	u8 *cpu, *dev;

	softrma_view_drop_written(view, lost, pos, pos + n);
	cpu = kmap_local_page(cpu_page);
	dev = kmap_local_page(dev_page);
	memcpy(dev + offset_in_page(pos), cpu + offset_in_page(pos), n);
	kunmap_local(dev);
	kunmap_local(cpu);
}

/*
 * Syncs [iova, iova + len) of @mr, in use and checked by the caller,
 * between the CPU's and the device's views.  May sleep.
 */
void softrma_view_sync(const struct softrma_mr *mr, u64 iova, u64 len,
		       enum softrma_sync_dir dir)
{
	struct softrma_view *view = mr->view;
	struct softrma_view_run lost = { .mr = mr,
					 .missing = SOFTRMA_SYNC_TO_CPU };
	u64 pos = softrma_mr_pos(mr, iova), end = pos + len, n;
	struct page *cpu, *dev;

	for (; pos < end; pos += n) {
		n = softrma_view_piece(pos, end);
		cpu = view->cpu[pos >> PAGE_SHIFT];
		dev = mr->pages[pos >> PAGE_SHIFT];
		if (dir == SOFTRMA_SYNC_TO_DEVICE)
			softrma_cache_before_device_read(cpu);
		spin_lock_bh(&view->lock);
		if (dir == SOFTRMA_SYNC_TO_CPU)
			softrma_view_sync_to_cpu(view, pos, n, cpu, dev);
		else
			softrma_view_sync_to_device(view, &lost, pos, n, cpu,
						    dev);
		spin_unlock_bh(&view->lock);
		if (dir == SOFTRMA_SYNC_TO_CPU)
			softrma_cache_after_device_write(cpu);
		cond_resched();
	}
	softrma_view_report(&lost);
}
