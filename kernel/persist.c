// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Persistence checking: what a power failure would leave of the MRs over
 * persistent memory of a device whose persistence domain is set (sysfs
 * persistence).  With "cache" (DDIO) the device's writes land in the CPU
 * caches and become durable only at a FLUSH to persistence of their range;
 * with "adr" they are durable once placed, and the device writes them back
 * from the CPU caches as it places them.  In cache mode an undo log keeps,
 * for each device write into a checked MR, the bytes it overwrote, until a
 * FLUSH to persistence of the range drops them; a power failure (sysfs
 * power_fail) puts them back, newest first, and reports each range lost
 * (counter power_fail_lost_bytes, tracepoint softrma_lost_write).  The
 * log of a device holds SOFTRMA_UNDO_MAX_BYTES: a write it cannot keep is
 * counted (undo_log_overflows), and would survive a power failure that it
 * should not.
 *
 * On a non-coherent checking device (view.c) the log keeps what the device
 * overwrote in its view, the memory as the device sees it; what a power
 * failure puts back there the CPU sees too, as after a reboot.
 *
 * Positions are bytes of the page array (softrma_mr_pos()); an entry never
 * crosses a page, as the memory mover writes a page at a time.
 */

#include <linux/highmem.h>
#include <linux/libnvdimm.h>
#include <linux/slab.h>

#include "persist.h"
#include "trace.h"
#include "verbs.h"
#include "view.h"

struct softrma_undo_entry {
	struct list_head list;
	u64 pos;
	u32 len;
	u32 size;			/* charged to the device's log */
	u8 *old;			/* apart: a page's fills a slab of its size */
};

/* Taken as the device writes, which may be in atomic context. */
#define SOFTRMA_UNDO_GFP	(GFP_ATOMIC | __GFP_ACCOUNT | __GFP_NOWARN)

static const char *const softrma_persistence_names[] = {
	[SOFTRMA_PERSIST_OFF] = "off",
	[SOFTRMA_PERSIST_CACHE] = "cache",
	[SOFTRMA_PERSIST_ADR] = "adr",
};
static_assert(ARRAY_SIZE(softrma_persistence_names) == SOFTRMA_PERSIST_NUM);

const char *softrma_persistence_name(enum softrma_persistence domain)
{
	return softrma_persistence_names[domain];
}

/* The domain @buf names (a line of sysfs), or -EINVAL. */
int softrma_persistence_parse(const char *buf)
{
	return sysfs_match_string(softrma_persistence_names, buf);
}

static struct softrma_undo_entry *softrma_undo_new(struct softrma_dev *sdev,
						   u64 pos, u32 len)
{
	size_t size = sizeof(struct softrma_undo_entry) + len;
	struct softrma_undo_entry *e;

	if (atomic64_add_return(size, &sdev->undo_bytes) <=
	    SOFTRMA_UNDO_MAX_BYTES) {
		e = kmalloc(sizeof(*e), SOFTRMA_UNDO_GFP);
		if (e) {
			e->old = kmalloc(len, SOFTRMA_UNDO_GFP);
			if (e->old) {
				e->pos = pos;
				e->len = len;
				e->size = size;
				return e;
			}
			kfree(e);
		}
	}
	atomic64_sub(size, &sdev->undo_bytes);
	softrma_count(sdev, SOFTRMA_CNT_UNDO_LOG_OVERFLOWS);
	return NULL;
}

static void softrma_undo_free(struct softrma_dev *sdev,
			      struct softrma_undo_entry *e)
{
	list_del(&e->list);
	atomic64_sub(e->size, &sdev->undo_bytes);
	kfree(e->old);
	kfree(e);
}

/**
 * softrma_persist_attach() - Checks the persistence of @mr.
 * @sdev: its device, with a persistence domain
 * @mr: a user MR over persistent memory, pinned
 *
 * Return: 0 or -ENOMEM.
 */
int softrma_persist_attach(struct softrma_dev *sdev, struct softrma_mr *mr)
{
	struct softrma_persist *p = kzalloc(sizeof(*p), GFP_KERNEL_ACCOUNT);

	if (!p)
		return -ENOMEM;
	p->sdev = sdev;
	p->domain = READ_ONCE(sdev->persistence);
	spin_lock_init(&p->lock);
	INIT_LIST_HEAD(&p->undo);
	mr->persist = p;
	return 0;
}

/* Forgets what @mr's device writes overwrote: a power failure keeps them. */
void softrma_persist_detach(struct softrma_mr *mr)
{
	struct softrma_persist *p = mr->persist;
	struct softrma_undo_entry *e, *next;

	list_for_each_entry_safe(e, next, &p->undo, list)
		softrma_undo_free(p->sdev, e);
	kfree(p);
	mr->persist = NULL;
}

/* Before the device writes [iova, iova + len) of @mr, mapped at @addr. */
void softrma_persist_before_write(const struct softrma_mr *mr, u64 iova,
				  u64 len, const void *addr)
{
	struct softrma_persist *p = mr->persist;
	struct softrma_undo_entry *e;

	if (p->domain != SOFTRMA_PERSIST_CACHE)
		return;
	e = softrma_undo_new(p->sdev, softrma_mr_pos(mr, iova), len);
	if (!e)
		return;
	memcpy(e->old, addr, len);
	spin_lock_bh(&p->lock);
	list_add(&e->list, &p->undo);
	spin_unlock_bh(&p->lock);
}

/* After the device wrote @len bytes at @addr of @mr. */
void softrma_persist_placed(const struct softrma_mr *mr, void *addr, u64 len)
{
	if (mr->persist->domain == SOFTRMA_PERSIST_ADR)
		arch_wb_cache_pmem(addr, len);
}

/*
 * A FLUSH to persistence of [iova, iova + len) of @mr: the device's writes
 * there are durable, and only the rest of each entry is kept.
 */
void softrma_persist_durable(const struct softrma_mr *mr, u64 iova, u64 len)
{
	struct softrma_persist *p = mr->persist;
	u64 pos = softrma_mr_pos(mr, iova), end = pos + len;
	struct softrma_undo_entry *e, *next, *tail;

	spin_lock_bh(&p->lock);
	list_for_each_entry_safe(e, next, &p->undo, list) {
		u64 e_end = e->pos + e->len;

		if (e_end <= pos || e->pos >= end)
			continue;
		if (e->pos < pos && e_end > end) {
			/* The part after the range, as old as the entry. */
			tail = softrma_undo_new(p->sdev, end, e_end - end);
			if (tail) {
				memcpy(tail->old, e->old + (end - e->pos),
				       tail->len);
				list_add(&tail->list, &e->list);
			}
		}
		if (e->pos < pos) {
			e->len = pos - e->pos;
		} else if (e_end > end) {
			memmove(e->old, e->old + (end - e->pos), e_end - end);
			e->len = e_end - end;
			e->pos = end;
		} else {
			softrma_undo_free(p->sdev, e);
		}
	}
	spin_unlock_bh(&p->lock);
}

/* Reports the range [pos, pos + len) of @mr lost, if any. */
static void softrma_persist_report(struct softrma_mr *mr, u64 pos, u64 len)
{
	struct softrma_dev *sdev = mr->persist->sdev;

	if (!len)
		return;
	softrma_count_add(sdev, SOFTRMA_CNT_POWER_FAIL_LOST_BYTES, len);
	trace_softrma_lost_write(sdev, mr->key, pos - mr->page_offset, len);
}

/* Puts back what @mr's log holds; adjacent ranges are reported as one. */
static void softrma_persist_undo(struct softrma_mr *mr)
{
	struct softrma_persist *p = mr->persist;
	struct softrma_undo_entry *e, *next;
	u64 pos = 0, len = 0;
	void *addr;

	spin_lock_bh(&p->lock);
	list_for_each_entry_safe(e, next, &p->undo, list) {
		addr = kmap_local_page(mr->pages[e->pos >> PAGE_SHIFT]) +
		       offset_in_page(e->pos);
		memcpy(addr, e->old, e->len);
		if (mr->view)
			softrma_view_put_back(mr, e->pos, e->len);
		else
			arch_wb_cache_pmem(addr, e->len);
		kunmap_local(addr);
		if (e->pos + e->len == pos) {
			pos = e->pos;
			len += e->len;
		} else if (pos + len == e->pos) {
			len += e->len;
		} else {
			softrma_persist_report(mr, pos, len);
			pos = e->pos;
			len = e->len;
		}
		softrma_undo_free(p->sdev, e);
	}
	softrma_persist_report(mr, pos, len);
	spin_unlock_bh(&p->lock);
}

/**
 * softrma_persist_power_fail() - What a power failure leaves of @sdev's MRs.
 * @sdev: the device
 *
 * Puts back, in every valid MR it checks, what its writes not yet durable
 * overwrote.  An MR whose registration changes meanwhile keeps its data.
 */
void softrma_persist_power_fail(struct softrma_dev *sdev)
{
	struct softrma_mr *mr;
	unsigned long index;

	/* A valid MR's pages and log change only under the lock, or not at all. */
	xa_lock_bh(&sdev->mr_xa);
	xa_for_each(&sdev->mr_xa, index, mr)
		if (mr->valid && mr->persist)
			softrma_persist_undo(mr);
	xa_unlock_bh(&sdev->mr_xa);
}
