// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Memory regions: user pages pinned through the core's umem API (so that
 * RLIMIT_MEMLOCK and pinned-page accounting are the kernel's own), a page
 * array for constant-time access by offset, and keys.
 *
 * A key is an index into the device's MR xarray (upper 24 bits) and a random
 * byte.  Indices are allocated cyclically, so a deregistered key cannot match
 * again until its index comes round, and then with a fresh random byte.
 */

#include <linux/mm.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <rdma/ib_umem.h>

#include "softrma.h"

#define SOFTRMA_MR_INDEX_MAX	((1U << 24) - 1)
/* What reg_user_mr accepts; ODP and the rest are refused with EOPNOTSUPP. */
#define SOFTRMA_MR_ACCESS	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
				 IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC | \
				 IB_ACCESS_RELAXED_ORDERING)

static int softrma_mr_collect_pages(struct softrma_mr *mr)
{
	struct sg_page_iter iter;
	unsigned long i = 0;

	mr->npages = ib_umem_num_pages(mr->umem);
	mr->pages = kvmalloc_array(mr->npages, sizeof(*mr->pages), GFP_KERNEL);
	if (!mr->pages)
		return -ENOMEM;
	for_each_sgtable_page(&mr->umem->sgt_append.sgt, &iter, 0) {
		if (WARN_ON_ONCE(i >= mr->npages))
			return -EFAULT;
		mr->pages[i++] = sg_page_iter_page(&iter);
	}
	return i == mr->npages ? 0 : -EFAULT;
}

static int softrma_mr_assign_key(struct softrma_dev *sdev,
				 struct softrma_mr *mr)
{
	u32 index;
	int err;

	err = xa_alloc_cyclic(&sdev->mr_xa, &index, mr,
			      XA_LIMIT(1, SOFTRMA_MR_INDEX_MAX),
			      &sdev->mr_next, GFP_KERNEL);
	if (err < 0)
		return err == -EBUSY ? -ENOMEM : err;
	mr->ibmr.lkey = index << 8 | get_random_u8();
	mr->ibmr.rkey = mr->ibmr.lkey;
	return 0;
}

static void softrma_mr_free(struct softrma_mr *mr)
{
	kvfree(mr->pages);
	if (!IS_ERR_OR_NULL(mr->umem))
		ib_umem_release(mr->umem);
	kfree(mr);
}

struct ib_mr *softrma_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				  u64 iova, int access, struct ib_udata *udata)
{
	struct softrma_dev *sdev = to_sdev(ibpd->device);
	struct softrma_mr *mr;
	int err;

	if (access & ~SOFTRMA_MR_ACCESS)
		return ERR_PTR(-EOPNOTSUPP);
	if (!length || length > SOFTRMA_MAX_MR_SIZE || iova + length < iova)
		return ERR_PTR(-EINVAL);

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->umem = ib_umem_get(ibpd->device, start, length, access);
	if (IS_ERR(mr->umem)) {
		err = PTR_ERR(mr->umem);
		goto err_free;
	}
	err = softrma_mr_collect_pages(mr);
	if (err)
		goto err_free;
	mr->page_offset = ib_umem_offset(mr->umem);
	mr->iova = iova;
	mr->length = length;
	mr->access = access;
	refcount_set(&mr->refcnt, 1);
	init_completion(&mr->released);

	err = softrma_mr_assign_key(sdev, mr);
	if (err)
		goto err_free;
	return &mr->ibmr;

err_free:
	softrma_mr_free(mr);
	return ERR_PTR(err);
}

void softrma_mr_put(struct softrma_mr *mr)
{
	if (refcount_dec_and_test(&mr->refcnt))
		complete(&mr->released);
}

/* Unpublishes the key, waits for operations in flight, then unpins. */
int softrma_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct softrma_mr *mr = to_smr(ibmr);

	xa_erase(&to_sdev(ibmr->device)->mr_xa, ibmr->lkey >> 8);
	softrma_mr_put(mr);
	wait_for_completion(&mr->released);
	softrma_mr_free(mr);
	return 0;
}
