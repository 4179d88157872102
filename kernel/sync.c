// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softrmadv_sync_mr(): uDAPL's dat_lmr_sync_rdma_read() (towards the device,
 * before it reads a range of an MR) and dat_lmr_sync_rdma_write() (towards
 * the CPU, after it wrote one), a driver method of the core's MR object, so
 * that only the MR's owner names it.  On a coherent device it runs the
 * architecture's cache maintenance of each page (none on x86); on a checking
 * device it moves the range between the CPU's and the device's views
 * (view.c).
 */

#define UVERBS_MODULE_NAME softrma_ib
#include <rdma/uverbs_named_ioctl.h>

#include "view.h"

static void softrma_sync_cache(const struct softrma_mr *mr, u64 iova,
			       u64 len, enum softrma_sync_dir dir)
{
	u64 pos = softrma_mr_pos(mr, iova);
	unsigned long last = (pos + len - 1) >> PAGE_SHIFT;

	for (unsigned long i = pos >> PAGE_SHIFT; i <= last; i++) {
		if (dir == SOFTRMA_SYNC_TO_DEVICE)
			softrma_cache_before_device_read(mr->pages[i]);
		else
			softrma_cache_after_device_write(mr->pages[i]);
	}
}

static int UVERBS_HANDLER(SOFTRMA_IB_METHOD_MR_SYNC)(struct uverbs_attr_bundle *attrs)
{
	struct ib_mr *ibmr = uverbs_attr_get_obj(attrs,
						 SOFTRMA_IB_ATTR_MR_SYNC_HANDLE);
	struct softrma_mr *mr;
	u64 iova, len;
	u32 dir;
	int err;

	err = uverbs_copy_from(&iova, attrs, SOFTRMA_IB_ATTR_MR_SYNC_ADDR) ?:
	      uverbs_copy_from(&len, attrs, SOFTRMA_IB_ATTR_MR_SYNC_LENGTH) ?:
	      uverbs_get_const(&dir, attrs, SOFTRMA_IB_ATTR_MR_SYNC_DIR);
	if (err)
		return err;
	if (dir != SOFTRMA_SYNC_TO_DEVICE && dir != SOFTRMA_SYNC_TO_CPU)
		return -EINVAL;
	if (!len)
		return 0;
	/* Valid (a failed rereg leaves it invalid), and the range in it. */
	mr = softrma_mr_get(to_sdev(ibmr->device), ibmr->pd, ibmr->lkey, iova,
			    len, 0);
	if (IS_ERR_OR_NULL(mr))
		return -EINVAL;
	if (softrma_mr_is_odp(mr))
		err = -EOPNOTSUPP;	/* only coherent devices take ODP */
	else if (mr->view)
		softrma_view_sync(mr, iova, len, dir);
	else
		softrma_sync_cache(mr, iova, len, dir);
	softrma_mr_put(mr);
	return err;
}

DECLARE_UVERBS_NAMED_METHOD(
	SOFTRMA_IB_METHOD_MR_SYNC,
	UVERBS_ATTR_IDR(SOFTRMA_IB_ATTR_MR_SYNC_HANDLE, UVERBS_OBJECT_MR,
			UVERBS_ACCESS_READ, UA_MANDATORY),
	UVERBS_ATTR_PTR_IN(SOFTRMA_IB_ATTR_MR_SYNC_ADDR, UVERBS_ATTR_TYPE(u64),
			   UA_MANDATORY),
	UVERBS_ATTR_PTR_IN(SOFTRMA_IB_ATTR_MR_SYNC_LENGTH,
			   UVERBS_ATTR_TYPE(u64), UA_MANDATORY),
	UVERBS_ATTR_CONST_IN(SOFTRMA_IB_ATTR_MR_SYNC_DIR,
			     enum softrma_sync_dir, UA_MANDATORY));

ADD_UVERBS_METHODS(softrma_mr, UVERBS_OBJECT_MR,
		   &UVERBS_METHOD(SOFTRMA_IB_METHOD_MR_SYNC));

const struct uapi_definition softrma_mr_uapi_defs[] = {
	UAPI_DEF_CHAIN_OBJ_TREE(UVERBS_OBJECT_MR, &softrma_mr),
	{},
};
