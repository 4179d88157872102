// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Completion queues: a ring the provider polls without a system call.  The
 * kernel is the only producer; a consumer index it cannot believe counts as
 * a full ring, which overflows the CQ.
 */

#include <rdma/uverbs_ioctl.h>

#include "compat.h"
#include "softrma.h"

int softrma_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		      struct softrma_create_cq_arg *arg)
{
	struct ib_udata *udata = softrma_create_cq_udata(arg);
	struct softrma_cq *cq = to_scq(ibcq);
	struct softrma_create_cq_resp resp = {};
	struct softrma_ucontext *uctx;
	int err;

	if (!udata)
		return -EOPNOTSUPP;	/* kernel CQs come with kernel QPs */
	if (attr->flags)
		return -EOPNOTSUPP;
	if (attr->cqe < 1 || attr->cqe > SOFTRMA_MAX_CQE ||
	    attr->comp_vector >= ibcq->device->num_comp_vectors)
		return -EINVAL;
	if (!ib_is_udata_cleared(udata, 0, udata->inlen) ||
	    udata->outlen < sizeof(resp))
		return -EINVAL;

	uctx = rdma_udata_to_drv_context(udata, struct softrma_ucontext, ibuc);
	spin_lock_init(&cq->lock);
	err = softrma_queue_init(&cq->queue, &uctx->ibuc,
				 roundup_pow_of_two(attr->cqe),
				 sizeof(struct softrma_cqe), &resp.mmap_key);
	if (err)
		return err;
	ibcq->cqe = cq->queue.num;
	resp.num_entries = cq->queue.num;
	err = ib_copy_to_udata(udata, &resp, sizeof(resp));
	if (err)
		softrma_queue_destroy(&cq->queue);
	return err;
}

int softrma_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	softrma_queue_destroy(&to_scq(ibcq)->queue);
	return 0;
}

int softrma_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct softrma_cq *cq = to_scq(ibcq);
	unsigned long irqflags;
	int missed = 0;

	spin_lock_irqsave(&cq->lock, irqflags);
	if (cq->notify != IB_CQ_NEXT_COMP)
		cq->notify = flags & IB_CQ_SOLICITED_MASK;
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) &&
	    !softrma_queue_empty(&cq->queue))
		missed = 1;
	spin_unlock_irqrestore(&cq->lock, irqflags);
	return missed;
}

static void softrma_cq_overflow_event(struct softrma_cq *cq)
{
	struct ib_event event = {
		.device = cq->ibcq.device,
		.event = IB_EVENT_CQ_ERR,
		.element.cq = &cq->ibcq,
	};

	if (cq->ibcq.event_handler)
		cq->ibcq.event_handler(&event, cq->ibcq.cq_context);
}

/*
 * Adds @cqe to @cq and raises the completion event it is armed for.
 * Returns false when the CQ has overflowed: the caller's QP must fail.
 */
bool softrma_cq_post(struct softrma_cq *cq, const struct softrma_cqe *cqe,
		     bool solicited)
{
	bool notify = false, first_overflow = false, ok;
	unsigned long irqflags;

	spin_lock_irqsave(&cq->lock, irqflags);
	if (cq->overflowed || softrma_queue_full(&cq->queue)) {
		first_overflow = !cq->overflowed;
		cq->overflowed = true;
	} else {
		memcpy(softrma_queue_entry(&cq->queue, cq->queue.index), cqe,
		       sizeof(*cqe));
		softrma_queue_produce(&cq->queue);
		if (cq->notify == IB_CQ_NEXT_COMP ||
		    (cq->notify == IB_CQ_SOLICITED && solicited)) {
			cq->notify = 0;
			notify = true;
		}
	}
	ok = !cq->overflowed;
	spin_unlock_irqrestore(&cq->lock, irqflags);

	if (first_overflow)
		softrma_cq_overflow_event(cq);
	if (notify)
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
	return ok;
}
