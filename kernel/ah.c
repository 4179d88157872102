// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Address handles.  Each has a number that UD send entries name it by; the
 * requester copies the address vector out under the table's lock, so an AH
 * destroyed while a send that names it is queued fails that send cleanly.
 * Kernel users create and destroy AHs in atomic context, so the table's lock
 * is taken with interrupts saved everywhere.
 */

#include <rdma/ib_cache.h>

#include "verbs.h"

void softrma_av_init(struct softrma_av *av, const struct rdma_ah_attr *attr)
{
	const struct ib_global_route *grh = rdma_ah_read_grh(attr);

	av->dgid = grh->dgid;
	av->sgid = grh->sgid_attr->gid;
	av->traffic_class = grh->traffic_class;
	av->hop_limit = grh->hop_limit;
	av->flow_label = grh->flow_label;
}

static int softrma_ah_publish(struct softrma_dev *sdev, struct softrma_ah *ah,
			      bool sleepable)
{
	unsigned long flags;
	int err;

	err = softrma_obj_add(sdev, SOFTRMA_OBJ_AH);
	if (err)
		return err;
	xa_lock_irqsave(&sdev->ah_xa, flags);
	err = __xa_alloc_cyclic(&sdev->ah_xa, &ah->num, ah,
				XA_LIMIT(1, SOFTRMA_AH_NUM_MAX), &sdev->ah_next,
				sleepable ? GFP_KERNEL : GFP_ATOMIC);
	xa_unlock_irqrestore(&sdev->ah_xa, flags);
	if (err < 0) {
		softrma_obj_del(sdev, SOFTRMA_OBJ_AH);
		return err == -EBUSY ? -ENOMEM : err;
	}
	return 0;
}

int softrma_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		      struct ib_udata *udata)
{
	struct softrma_dev *sdev = to_sdev(ibah->device);
	struct softrma_ah *ah = to_sah(ibah);
	struct softrma_create_ah_resp resp = {};
	int err;

	/* RoCE: the core insists on a GRH and resolved the sgid attribute. */
	if (!(rdma_ah_get_ah_flags(init->ah_attr) & IB_AH_GRH))
		return -EINVAL;
	if (udata && udata->outlen && udata->outlen < sizeof(resp))
		return -EINVAL;
	softrma_av_init(&ah->av, init->ah_attr);
	err = softrma_ah_publish(sdev, ah,
				 init->flags & RDMA_CREATE_AH_SLEEPABLE);
	if (err)
		return err;
	if (udata && udata->outlen) {
		resp.ah_num = ah->num;
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err) {
			softrma_destroy_ah(ibah, 0);
			return err;
		}
	}
	return 0;
}

int softrma_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	struct softrma_dev *sdev = to_sdev(ibah->device);
	unsigned long irqflags;

	xa_lock_irqsave(&sdev->ah_xa, irqflags);
	__xa_erase(&sdev->ah_xa, to_sah(ibah)->num);
	xa_unlock_irqrestore(&sdev->ah_xa, irqflags);
	softrma_obj_del(sdev, SOFTRMA_OBJ_AH);
	return 0;
}

/* Copies the address vector of AH @num of @pd into @av. */
int softrma_ah_read(struct softrma_dev *sdev, struct ib_pd *pd, u32 num,
		    struct softrma_av *av)
{
	struct softrma_ah *ah;
	unsigned long flags;
	int err = -EINVAL;

	xa_lock_irqsave(&sdev->ah_xa, flags);
	ah = xa_load(&sdev->ah_xa, num);
	if (ah && ah->ibah.pd == pd) {
		*av = ah->av;
		err = 0;
	}
	xa_unlock_irqrestore(&sdev->ah_xa, flags);
	return err;
}
