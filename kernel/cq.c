// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Completion queues: a ring the provider polls without a system call, or
 * for kernel consumers a ring of struct ib_wc that poll_cq copies out.  The
 * kernel is the only producer; a consumer index it cannot believe counts as
 * a full ring, which overflows the CQ.
 */

#include <rdma/uverbs_ioctl.h>

#include "compat.h"
#include "proto/ring.h"
#include "verbs.h"

/* A resize copies outside the lock this many times, or until this many are left. */
#define SOFTRMA_CQ_PRECOPY_PASSES	4
#define SOFTRMA_CQ_PRECOPY_LEFT		64

/*
 * A ring of @num entries for a CQ: struct softrma_cqe for the process of
 * @udata, in @mem or mapped, or struct ib_wc for a kernel consumer.
 */
static int softrma_cq_queue_init(struct softrma_queue *q, u32 num,
				 struct ib_udata *udata,
				 const struct softrma_ring_mem *mem, u64 *mmap_key)
{
	struct softrma_ucontext *uctx;

	if (!udata)
		return softrma_queue_init(q, NULL, num, sizeof(struct ib_wc),
					  NULL, NULL);
	uctx = rdma_udata_to_drv_context(udata, struct softrma_ucontext, ibuc);
	return softrma_queue_init(q, &uctx->ibuc, num,
				  sizeof(struct softrma_cqe), mem, mmap_key);
}

static int softrma_cq_init_queue(struct softrma_cq *cq, u32 num,
				 struct ib_udata *udata)
{
	struct softrma_create_cq_resp resp = {};
	struct softrma_create_cq_cmd cmd = {};
	int err;

	if (udata) {
		err = softrma_udata_cmd(udata, &cmd, sizeof(cmd));
		if (err)
			return err;
		if (udata->outlen < sizeof(resp))
			return -EINVAL;
	}
	err = softrma_cq_queue_init(&cq->queue, num, udata, &cmd.ring,
				    &resp.mmap_key);
	if (err || !udata)
		return err;
	resp.num_entries = num;
	err = ib_copy_to_udata(udata, &resp, sizeof(resp));
	if (err)
		softrma_queue_destroy(&cq->queue);
	return err;
}

int softrma_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		      struct softrma_create_cq_arg *arg)
{
	struct softrma_dev *sdev = to_sdev(ibcq->device);
	struct softrma_cq *cq = to_scq(ibcq);
	u32 num;
	int err;

	if (attr->flags)
		return -EOPNOTSUPP;
	if (attr->cqe < 1 || attr->cqe > SOFTRMA_MAX_CQE ||
	    attr->comp_vector >= ibcq->device->num_comp_vectors)
		return -EINVAL;
	err = softrma_obj_add(sdev, SOFTRMA_OBJ_CQ);
	if (err)
		return err;
	spin_lock_init(&cq->lock);
	mutex_init(&cq->resize_lock);
	num = softrma_ring_entries(attr->cqe);
	err = softrma_cq_init_queue(cq, num, softrma_create_cq_udata(arg));
	if (err) {
		softrma_obj_del(sdev, SOFTRMA_OBJ_CQ);
		return err;
	}
	ibcq->cqe = num;
	return 0;
}

/*
 * Copies the completions of a process's CQ to @next outside the CQ's lock,
 * again while the producers add more, so that the switch under the lock,
 * with interrupts off, copies a few at most.  Not a kernel CQ's: its
 * entries move under the lock when a QP goes to RESET.  Returns 0 or as
 * softrma_queue_check_flight().
 */
static int softrma_cq_precopy(struct softrma_cq *cq, struct softrma_queue *next,
			      u32 max, struct softrma_queue_span *done)
{
	unsigned long irqflags;
	u32 first, last;
	int err;

	lockdep_assert_held(&cq->resize_lock);
	for (int pass = 0; pass < SOFTRMA_CQ_PRECOPY_PASSES; pass++) {
		spin_lock_irqsave(&cq->lock, irqflags);
		first = READ_ONCE(cq->queue.hdr->consumer);
		last = cq->queue.index;
		spin_unlock_irqrestore(&cq->lock, irqflags);
		err = softrma_queue_check_flight(&cq->queue, next, first, last,
						 max);
		if (err)
			return err;
		if (pass && last - done->last <= SOFTRMA_CQ_PRECOPY_LEFT)
			break;
		softrma_queue_copy(next, &cq->queue, done, first, last);
	}
	return 0;
}

/**
 * softrma_resize_cq - gives a CQ a new ring of at least @cqe entries
 * @ibcq: the CQ, of a process or of a kernel consumer
 * @cqe: the entries asked for
 * @udata: the process's response: where to map the new ring
 *
 * The completions not polled yet move to the new ring in order, most of
 * them before the switch under the producer's lock.  The response goes out
 * before the switch: one lost after it would leave the provider on a ring
 * that nothing fills any more.
 *
 * Return: 0; -EINVAL when @cqe is out of range or below the completions
 * the CQ holds; -EPROTO when the process's consumer index cannot be true;
 * -EOPNOTSUPP for a ring in the process's memory.
 */
int softrma_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata)
{
	struct softrma_resize_cq_resp resp = {};
	struct softrma_cq *cq = to_scq(ibcq);
	struct softrma_queue_span done = {};
	struct softrma_queue next;
	unsigned long irqflags;
	int err;

	if (cqe < 1 || cqe > SOFTRMA_MAX_CQE)
		return -EINVAL;
	if (cq->queue.umem)
		return -EOPNOTSUPP;
	if (udata && (!ib_is_udata_cleared(udata, 0, udata->inlen) ||
		      udata->outlen < sizeof(resp)))
		return -EINVAL;
	err = softrma_cq_queue_init(&next, softrma_ring_entries(cqe), udata,
				    NULL, &resp.mmap_key);
	if (err)
		return err;
	if (udata) {
		resp.num_entries = next.num;
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
	}
	mutex_lock(&cq->resize_lock);
	if (!err && udata)
		err = softrma_cq_precopy(cq, &next, cqe, &done);
	if (!err) {
		spin_lock_irqsave(&cq->lock, irqflags);
		err = softrma_queue_replace(&cq->queue, &next,
					    SOFTRMA_KERNEL_PRODUCES, cqe,
					    udata ? &done : NULL);
		if (!err)
			ibcq->cqe = cq->queue.num;
		spin_unlock_irqrestore(&cq->lock, irqflags);
	}
	mutex_unlock(&cq->resize_lock);
	softrma_queue_destroy(&next);
	return err;
}

/* Linux 6.1 destroys a CQ while "rdma resource show" may be reading it. */
int softrma_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct softrma_cq *cq = to_scq(ibcq);
	unsigned long flags;

	spin_lock_irqsave(&cq->lock, flags);
	cq->dying = true;
	spin_unlock_irqrestore(&cq->lock, flags);
	softrma_queue_destroy(&cq->queue);
	softrma_obj_del(to_sdev(ibcq->device), SOFTRMA_OBJ_CQ);
	return 0;
}

int softrma_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct softrma_cq *cq = to_scq(ibcq);
	unsigned long irqflags;
	int missed = 0;

	spin_lock_irqsave(&cq->lock, irqflags);
	/* Both flags, which no consumer should pass, ask for the wider one. */
	if (flags & IB_CQ_NEXT_COMP)
		cq->notify = IB_CQ_NEXT_COMP;
	else if (cq->notify != IB_CQ_NEXT_COMP)
		cq->notify = flags & IB_CQ_SOLICITED;
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
 * Fails @cq as an overflow does (fault.c): IB_EVENT_CQ_ERR once, and the
 * QPs that complete into it from now on fail.
 */
void softrma_cq_fail(struct softrma_cq *cq)
{
	unsigned long irqflags;
	bool first;

	spin_lock_irqsave(&cq->lock, irqflags);
	first = !cq->overflowed;
	cq->overflowed = true;
	spin_unlock_irqrestore(&cq->lock, irqflags);
	if (first)
		softrma_cq_overflow_event(cq);
}

/* Kernel consumers: the ring holds ib_wc, and the kernel owns both indices. */
int softrma_poll_cq(struct ib_cq *ibcq, int num, struct ib_wc *wc)
{
	struct softrma_cq *cq = to_scq(ibcq);
	struct softrma_queue *q = &cq->queue;
	unsigned long flags;
	int n;

	spin_lock_irqsave(&cq->lock, flags);
	for (n = 0; n < num && q->hdr->consumer != q->index; n++) {
		memcpy(&wc[n], softrma_queue_entry(q, q->hdr->consumer),
		       sizeof(*wc));
		q->hdr->consumer++;
	}
	spin_unlock_irqrestore(&cq->lock, flags);
	return n;
}

static void softrma_cqe_to_wc(struct ib_wc *wc, const struct softrma_cqe *cqe,
			      struct softrma_qp *qp)
{
	*wc = (struct ib_wc) {
		.wr_id = cqe->wr_id,
		.status = cqe->status,
		.opcode = cqe->opcode,
		.vendor_err = cqe->vendor_err,
		.byte_len = cqe->byte_len,
		.qp = &qp->ibqp,
		.ex.imm_data = (__force __be32)cqe->imm_data,
		.src_qp = cqe->src_qp,
		/* IB_WC_GRH and IB_WC_WITH_IMM have their ibv_wc values. */
		.wc_flags = cqe->wc_flags & (IB_WC_GRH | IB_WC_WITH_IMM),
		.pkey_index = cqe->pkey_index,
		.port_num = SOFTRMA_PORT,
	};
	if (cqe->wc_flags & SOFTRMA_WC_WITH_INV)
		wc->wc_flags |= IB_WC_WITH_INVALIDATE;
	if (cqe->wc_flags & IB_WC_GRH) {
		wc->wc_flags |= IB_WC_WITH_NETWORK_HDR_TYPE;
		wc->network_hdr_type = cqe->network_hdr_type;
	}
}

static void softrma_cq_write(struct softrma_cq *cq, struct softrma_qp *qp,
			     const struct softrma_cqe *cqe)
{
	void *entry = softrma_queue_entry(&cq->queue, cq->queue.index);

	if (!softrma_queue_is_user(&cq->queue))
		softrma_cqe_to_wc(entry, cqe, qp);
	else
		memcpy(entry, cqe, sizeof(*cqe));
	softrma_queue_produce(&cq->queue);
}

/*
 * Adds @cqe of @qp to @cq and raises the completion event it is armed for.
 * Returns false when the CQ has overflowed: the caller's QP must fail.
 */
bool softrma_cq_post(struct softrma_cq *cq, struct softrma_qp *qp,
		     const struct softrma_cqe *cqe, bool solicited)
{
	bool notify = false, first_overflow = false, ok;
	unsigned long irqflags;

	spin_lock_irqsave(&cq->lock, irqflags);
	if (cq->overflowed || softrma_queue_full(&cq->queue)) {
		first_overflow = !cq->overflowed;
		cq->overflowed = true;
	} else {
		softrma_cq_write(cq, qp, cqe);
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
