// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Shared receive queues: a receive ring that the responders of every QP
 * attached to it consume under the SRQ's lock, and the limit event.
 */

#include <rdma/uverbs_ioctl.h>

#include "verbs.h"

int softrma_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		       struct ib_udata *udata)
{
	struct softrma_srq *srq = to_ssrq(ibsrq);
	struct softrma_create_srq_resp resp = {};
	struct ib_srq_attr *attr = &init->attr;
	struct softrma_ucontext *uctx;
	int err;

	if (!udata || init->srq_type != IB_SRQT_BASIC)
		return -EOPNOTSUPP;
	if (!attr->max_wr || attr->max_wr > SOFTRMA_MAX_QP_WR ||
	    attr->max_sge > SOFTRMA_MAX_SGE ||
	    !ib_is_udata_cleared(udata, 0, udata->inlen) ||
	    udata->outlen < sizeof(resp))
		return -EINVAL;

	err = softrma_obj_add(to_sdev(ibsrq->device), SOFTRMA_OBJ_SRQ);
	if (err)
		return err;

	uctx = rdma_udata_to_drv_context(udata, struct softrma_ucontext, ibuc);
	mutex_init(&srq->lock);
	srq->max_sge = max(attr->max_sge, 1U);
	srq->limit = 0;
	err = softrma_queue_init(&srq->queue, &uctx->ibuc,
				 roundup_pow_of_two(attr->max_wr),
				 sizeof(struct softrma_rqe) +
				 srq->max_sge * sizeof(struct softrma_sge),
				 &resp.mmap_key);
	if (err)
		goto err_count;
	attr->max_wr = srq->queue.num;
	attr->max_sge = srq->max_sge;
	resp.num_entries = srq->queue.num;
	resp.stride = srq->queue.stride;
	err = ib_copy_to_udata(udata, &resp, sizeof(resp));
	if (err)
		goto err_queue;
	return 0;

err_queue:
	softrma_queue_destroy(&srq->queue);
err_count:
	softrma_obj_del(to_sdev(ibsrq->device), SOFTRMA_OBJ_SRQ);
	return err;
}

/* Arming the limit is supported; resizing is not. */
int softrma_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		       enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct softrma_srq *srq = to_ssrq(ibsrq);

	if (mask & ~IB_SRQ_LIMIT)
		return -EOPNOTSUPP;
	if (attr->srq_limit > srq->queue.num)
		return -EINVAL;
	mutex_lock(&srq->lock);
	srq->limit = attr->srq_limit;
	mutex_unlock(&srq->lock);
	return 0;
}

int softrma_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct softrma_srq *srq = to_ssrq(ibsrq);

	mutex_lock(&srq->lock);
	attr->srq_limit = srq->limit;
	mutex_unlock(&srq->lock);
	attr->max_wr = srq->queue.num;
	attr->max_sge = srq->max_sge;
	return 0;
}

int softrma_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	softrma_queue_destroy(&to_ssrq(ibsrq)->queue);
	softrma_obj_del(to_sdev(ibsrq->device), SOFTRMA_OBJ_SRQ);
	return 0;
}

/*
 * After a receive was taken: once fewer than the armed limit remain, raise
 * IBV_EVENT_SRQ_LIMIT_REACHED and disarm, as the verbs say.  Under srq->lock.
 */
void softrma_srq_check_limit(struct softrma_srq *srq)
{
	struct ib_event event = {
		.device = srq->ibsrq.device,
		.event = IB_EVENT_SRQ_LIMIT_REACHED,
		.element.srq = &srq->ibsrq,
	};
	int pending;

	lockdep_assert_held(&srq->lock);
	if (!srq->limit)
		return;
	pending = softrma_queue_pending(&srq->queue);
	if (pending < 0 || pending >= srq->limit)
		return;
	srq->limit = 0;
	if (srq->ibsrq.event_handler)
		srq->ibsrq.event_handler(&event, srq->ibsrq.srq_context);
}
