// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Protection domains. */

#include "softrma.h"

int softrma_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct softrma_dev *sdev = to_sdev(ibpd->device);

	if (atomic_inc_return(&sdev->num_pd) > SOFTRMA_MAX_PD) {
		atomic_dec(&sdev->num_pd);
		return -ENOMEM;
	}
	return 0;
}

int softrma_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	atomic_dec(&to_sdev(ibpd->device)->num_pd);
	return 0;
}
