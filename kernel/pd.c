// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Protection domains. */

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
