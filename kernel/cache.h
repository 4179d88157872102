/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Cache maintenance around the device's own accesses to user pages.  No-ops
 * on coherent architectures; on aliasing-cache ones they make what the
 * device wrote visible through user mappings and vice versa.
 */
#ifndef SOFTRMA_CACHE_H
#define SOFTRMA_CACHE_H

#include <linux/highmem.h>

static inline void softrma_cache_before_device_read(struct page *page)
{
	flush_dcache_page(page);
}

static inline void softrma_cache_after_device_write(struct page *page)
{
	flush_dcache_page(page);
}

#endif /* SOFTRMA_CACHE_H */
