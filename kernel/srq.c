// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Shared receive queues: a receive ring that the responders of every QP
 * attached to it (or, for an XRC SRQ, of every XRC TGT QP whose requests
 * name it: xrc.c) consume under the SRQ's lock, its resizing, and the
 * limit event.
 */

#include <rdma/uverbs_ioctl.h>

#include "proto/ring.h"
#include "verbs.h"

int softrma_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		       struct ib_udata *udata)
{
	struct softrma_srq *srq = to_ssrq(ibsrq);
	struct softrma_create_srq_resp resp = {};
	struct ib_srq_attr *attr = &init->attr;
	struct softrma_create_srq_cmd cmd;
	struct softrma_ucontext *uctx;
	int err;

	if (!udata || (init->srq_type != IB_SRQT_BASIC &&
		       init->srq_type != IB_SRQT_XRC))
		return -EOPNOTSUPP;
	if (!attr->max_wr || attr->max_wr > SOFTRMA_MAX_QP_WR ||
	    attr->max_sge > SOFTRMA_MAX_SGE || udata->outlen < sizeof(resp))
		return -EINVAL;
	err = softrma_udata_cmd(udata, &cmd, sizeof(cmd));
	if (err)
		return err;

	err = softrma_obj_add(to_sdev(ibsrq->device), SOFTRMA_OBJ_SRQ);
	if (err)
		return err;

	uctx = rdma_udata_to_drv_context(udata, struct softrma_ucontext, ibuc);
	mutex_init(&srq->lock);
	srq->max_sge = max(attr->max_sge, 1U);
	srq->limit = 0;
	err = softrma_queue_init(&srq->queue, &uctx->ibuc,
				 softrma_ring_entries(attr->max_wr),
				 softrma_rqe_bytes(srq->max_sge), &cmd.ring,
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
	if (init->srq_type == IB_SRQT_XRC) {
		err = softrma_xsrq_publish(srq);
		if (err)
			goto err_queue;
	}
	return 0;

err_queue:
	softrma_queue_destroy(&srq->queue);
err_count:
	softrma_obj_del(to_sdev(ibsrq->device), SOFTRMA_OBJ_SRQ);
	return err;
}

/*
 * A ring of @max_wr receives to replace @srq's.  modify_srq has no
 * response: where to map it goes to the address in the provider's command,
 * before the switch, for the reason softrma_resize_cq() gives.
 */
static int softrma_srq_next_queue(struct softrma_srq *srq, u32 max_wr,
				  struct ib_udata *udata,
				  struct softrma_queue *next)
{
	struct softrma_modify_srq_resp resp = {};
	struct softrma_modify_srq_cmd cmd;
	struct softrma_ucontext *uctx;
	int err;

	if (!max_wr || max_wr > SOFTRMA_MAX_QP_WR)
		return -EINVAL;
	if (srq->queue.umem)
		return -EOPNOTSUPP;
	/* A provider that cannot map a new ring sends no address. */
	if (udata->inlen < sizeof(cmd))
		return -EOPNOTSUPP;
	err = softrma_udata_cmd(udata, &cmd, sizeof(cmd));
	if (err)
		return err;

	uctx = rdma_udata_to_drv_context(udata, struct softrma_ucontext, ibuc);
	err = softrma_queue_init(next, &uctx->ibuc, softrma_ring_entries(max_wr),
				 softrma_rqe_bytes(srq->max_sge), NULL,
				 &resp.mmap_key);
	if (err)
		return err;
	resp.num_entries = next->num;
	resp.stride = next->stride;
	if (copy_to_user(u64_to_user_ptr(cmd.resp_addr), &resp, sizeof(resp))) {
		softrma_queue_destroy(next);
		return -EFAULT;
	}
	return 0;
}

/**
 * softrma_modify_srq - resizes an SRQ, arms its limit, or both
 * @ibsrq: the SRQ
 * @attr: max_wr with IB_SRQ_MAX_WR, srq_limit with IB_SRQ_LIMIT
 * @mask: what to change
 * @udata: with IB_SRQ_MAX_WR, struct softrma_modify_srq_cmd
 *
 * A resize moves the receives not taken yet to a new ring in order, under
 * the lock of the responders that take them; an armed limit stays armed.
 *
 * Return: 0; -EINVAL when max_wr is out of range or below the receives
 * posted, or the limit would exceed the SRQ's size; -EPROTO when the
 * process's producer index cannot be true; -EOPNOTSUPP for a resize from
 * a provider that sends no struct softrma_modify_srq_cmd, or of a ring in
 * the process's memory.
 */
int softrma_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		       enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct softrma_srq *srq = to_ssrq(ibsrq);
	bool resize = mask & IB_SRQ_MAX_WR;
	struct softrma_queue next;
	u32 limit;
	int err = 0;

	if (mask & ~(IB_SRQ_MAX_WR | IB_SRQ_LIMIT))
		return -EOPNOTSUPP;
	if (resize) {
		err = softrma_srq_next_queue(srq, attr->max_wr, udata, &next);
		if (err)
			return err;
	}

	mutex_lock(&srq->lock);
	limit = mask & IB_SRQ_LIMIT ? attr->srq_limit : srq->limit;
	if (limit > (resize ? next.num : srq->queue.num))
		err = -EINVAL;
	else if (resize)
		err = softrma_queue_replace(&srq->queue, &next,
					    SOFTRMA_KERNEL_CONSUMES,
					    attr->max_wr, NULL);
	if (!err)
		srq->limit = limit;
	mutex_unlock(&srq->lock);

	if (resize)
		softrma_queue_destroy(&next);
	return err;
}

int softrma_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct softrma_srq *srq = to_ssrq(ibsrq);

	mutex_lock(&srq->lock);
	attr->srq_limit = srq->limit;
	attr->max_wr = srq->queue.num;
	mutex_unlock(&srq->lock);
	attr->max_sge = srq->max_sge;
	return 0;
}

int softrma_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	if (ibsrq->srq_type == IB_SRQT_XRC)
		softrma_xsrq_unpublish(to_ssrq(ibsrq));
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
