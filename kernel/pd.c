// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Protection domains, and the driver method with which ibv_import_pd()
 * checks that a handle names a PD of the caller's context.
 */

#define UVERBS_MODULE_NAME softrma_ib
#include <rdma/uverbs_named_ioctl.h>

#include "verbs.h"

int softrma_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	return softrma_obj_add(to_sdev(ibpd->device), SOFTRMA_OBJ_PD);
}

int softrma_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	softrma_obj_del(to_sdev(ibpd->device), SOFTRMA_OBJ_PD);
	return 0;
}

/* The core found the PD, or refused the handle: nothing more to do. */
static int UVERBS_HANDLER(SOFTRMA_IB_METHOD_PD_QUERY)(
	struct uverbs_attr_bundle *attrs)
{
	return 0;
}

DECLARE_UVERBS_NAMED_METHOD(
	SOFTRMA_IB_METHOD_PD_QUERY,
	UVERBS_ATTR_IDR(SOFTRMA_IB_ATTR_PD_QUERY_HANDLE, UVERBS_OBJECT_PD,
			UVERBS_ACCESS_READ, UA_MANDATORY));

ADD_UVERBS_METHODS(softrma_pd, UVERBS_OBJECT_PD,
		   &UVERBS_METHOD(SOFTRMA_IB_METHOD_PD_QUERY));

const struct uapi_definition softrma_pd_uapi_defs[] = {
	UAPI_DEF_CHAIN_OBJ_TREE(UVERBS_OBJECT_PD, &softrma_pd),
	{},
};
