// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Protection domains and parent domains.  A parent domain is the
 * provider's alone: it carries its PD's handle, so every command names the
 * PD, and its allocator gives the memory of the rings of the QPs, CQs and
 * SRQs created on it, which the kernel then pins instead of allocating.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "softrma.h"
#include "softrmadv.h"

struct ibv_pd *softrma_alloc_pd(struct ibv_context *ctx)
{
	struct ib_uverbs_alloc_pd_resp resp;
	struct ibv_alloc_pd cmd;
	struct softrma_pd *pd;
	int ret;

	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;
	ret = ibv_cmd_alloc_pd(ctx, &pd->ibpd, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (ret) {
		free(pd);
		errno = ret;
		return NULL;
	}
	return &pd->ibpd;
}

/*
 * The PD of @pd_handle in @ctx's file (an imported context's, typically),
 * once the kernel has found it there.
 */
struct ibv_pd *softrma_import_pd(struct ibv_context *ctx, uint32_t pd_handle)
{
	const struct ib_uverbs_attr attr = {
		.attr_id = SOFTRMA_IB_ATTR_PD_QUERY_HANDLE,
		.flags = UVERBS_ATTR_F_MANDATORY,
		.data = pd_handle,
	};
	struct softrma_pd *pd;
	int ret;

	ret = softrma_driver_method(ctx, UVERBS_OBJECT_PD,
				    SOFTRMA_IB_METHOD_PD_QUERY, &attr, 1);
	if (ret) {
		errno = ret;
		return NULL;
	}
	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;
	pd->ibpd.context = ctx;
	pd->ibpd.handle = pd_handle;
	return &pd->ibpd;
}

/* The kernel's PD stays, with what was created on it. */
void softrma_unimport_pd(struct ibv_pd *ibpd)
{
	free(to_spd(ibpd));
}

#define SOFTRMA_PARENT_DOMAIN_MASK (IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS | \
				    IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT)

/* softrma has no thread domains: a TD can only be another device's. */
struct ibv_pd *softrma_alloc_parent_domain(struct ibv_context *ctx,
					   struct ibv_parent_domain_init_attr *attr)
{
	struct softrma_pd *pd, *parent;

	if (!attr->pd || attr->pd->context != ctx || attr->td ||
	    (attr->comp_mask & ~SOFTRMA_PARENT_DOMAIN_MASK)) {
		errno = EINVAL;
		return NULL;
	}
	pd = to_spd(attr->pd);
	if (pd->protection_domain) {
		errno = EINVAL;
		return NULL;
	}
	if ((attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) &&
	    (!attr->alloc || !attr->free)) {
		errno = EINVAL;
		return NULL;
	}
	parent = calloc(1, sizeof(*parent));
	if (!parent)
		return NULL;
	parent->ibpd.context = ctx;
	parent->ibpd.handle = pd->ibpd.handle;
	parent->protection_domain = pd;
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT)
		parent->pd_context = attr->pd_context;
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) {
		parent->alloc = attr->alloc;
		parent->free = attr->free;
	}
	atomic_fetch_add(&pd->users, 1);
	return &parent->ibpd;
}

/* EBUSY while a PD has parent domains, or a parent domain objects. */
int softrma_dealloc_pd(struct ibv_pd *ibpd)
{
	struct softrma_pd *pd = to_spd(ibpd);
	int ret;

	if (atomic_load(&pd->users))
		return EBUSY;
	if (pd->protection_domain) {
		atomic_fetch_sub(&pd->protection_domain->users, 1);
	} else {
		ret = ibv_cmd_dealloc_pd(ibpd);
		if (ret)
			return ret;
	}
	free(pd);
	return 0;
}

/* The parent domain @ibpd is, held for an object created on it; or NULL. */
struct softrma_pd *softrma_parent_domain_get(struct ibv_pd *ibpd)
{
	struct softrma_pd *pd = to_spd(ibpd);

	if (!pd->protection_domain)
		return NULL;
	atomic_fetch_add(&pd->users, 1);
	return pd;
}

void softrma_parent_domain_put(struct softrma_pd *parent)
{
	if (parent)
		atomic_fetch_sub(&parent->users, 1);
}

/*
 * Memory for a ring of @num entries of @stride bytes from @parent's
 * allocator, named in @mem for the kernel; @mem stays zero, for a ring of
 * the kernel's, without an allocator or when it says to use the default.
 * EINVAL for a ring larger than any the kernel makes.
 */
int softrma_ring_alloc(struct softrma_ring *ring, struct softrma_pd *parent,
		       uint64_t type, uint32_t num, uint64_t stride,
		       struct softrma_ring_mem *mem)
{
	size_t page = sysconf(_SC_PAGESIZE);
	uint64_t len = softrma_ring_pages_bytes(num, stride, page);
	void *buf;

	*ring = (struct softrma_ring) {};
	*mem = (struct softrma_ring_mem) {};
	if (!parent || !parent->alloc)
		return 0;
	if (!num || stride > UINT32_MAX || len > SIZE_MAX)
		return EINVAL;
	buf = parent->alloc(&parent->ibpd, parent->pd_context, len, page, type);
	if (buf == IBV_ALLOCATOR_USE_DEFAULT)
		return 0;
	if (!buf)
		return ENOMEM;
	ring->map = buf;
	ring->map_len = len;
	ring->mem_owner = parent;
	ring->mem_type = type;
	mem->addr = (uintptr_t)buf;
	mem->len = len;
	return 0;
}

/* XRC domains: the kernel's, shared between processes through a file. */
struct ibv_xrcd *softrma_open_xrcd(struct ibv_context *ctx,
				   struct ibv_xrcd_init_attr *attr)
{
	struct ib_uverbs_open_xrcd_resp resp;
	struct verbs_xrcd *xrcd;
	struct ibv_open_xrcd cmd;
	int ret;

	xrcd = calloc(1, sizeof(*xrcd));
	if (!xrcd)
		return NULL;
	ret = ibv_cmd_open_xrcd(ctx, xrcd, sizeof(*xrcd), attr, &cmd,
				sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		free(xrcd);
		errno = ret;
		return NULL;
	}
	return &xrcd->xrcd;
}

int softrma_close_xrcd(struct ibv_xrcd *ibxrcd)
{
	struct verbs_xrcd *xrcd = container_of(ibxrcd, struct verbs_xrcd, xrcd);
	int ret = ibv_cmd_close_xrcd(xrcd);

	if (!ret)
		free(xrcd);
	return ret;
}
