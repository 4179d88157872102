// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Posting work requests.  User QPs write their rings themselves and ring the
 * send doorbell with an empty list.  Kernel QPs have the same rings in
 * kernel memory: posting writes an entry as the provider would, and the
 * requester runs from a work item, because kernel consumers post from
 * atomic context.
 */

#include "net.h"

static int softrma_sqe_set_dest(struct softrma_qp *qp, struct softrma_sqe *sqe,
				const struct ib_send_wr *wr)
{
	switch (roce_wr_op(wr->opcode)->kind) {
	case ROCE_KIND_SEND:
		if (softrma_qp_is_ud(qp)) {
			sqe->wr.ud.ah = to_sah(ud_wr(wr)->ah)->num;
			sqe->wr.ud.remote_qpn = ud_wr(wr)->remote_qpn;
			sqe->wr.ud.remote_qkey = ud_wr(wr)->remote_qkey;
		}
		return 0;
	case ROCE_KIND_WRITE:
	case ROCE_KIND_READ:
		sqe->wr.rdma.remote_addr = rdma_wr(wr)->remote_addr;
		sqe->wr.rdma.rkey = rdma_wr(wr)->rkey;
		return softrma_qp_is_ud(qp) ? -EINVAL : 0;
	case ROCE_KIND_ATOMIC:
		sqe->wr.atomic.remote_addr = atomic_wr(wr)->remote_addr;
		sqe->wr.atomic.compare_add = atomic_wr(wr)->compare_add;
		sqe->wr.atomic.swap = atomic_wr(wr)->swap;
		sqe->wr.atomic.rkey = atomic_wr(wr)->rkey;
		return softrma_qp_is_ud(qp) ? -EINVAL : 0;
	case ROCE_KIND_REG_MR:
		/* The key's index names the MR the entry registers. */
		if (reg_wr(wr)->key >> 8 != reg_wr(wr)->mr->lkey >> 8)
			return -EINVAL;
		sqe->wr.reg.key = reg_wr(wr)->key;
		sqe->wr.reg.access = reg_wr(wr)->access;
		return 0;
	case ROCE_KIND_LOCAL_INV:
		return 0;
	default:
		return -EINVAL;
	}
}

/* Inline data is copied now: the caller may reuse its buffers at once. */
static int softrma_sqe_set_inline(struct softrma_qp *qp,
				  struct softrma_sqe *sqe,
				  const struct ib_send_wr *wr)
{
	u8 *p = (u8 *)sqe->sge;

	for (int i = 0; i < wr->num_sge; i++) {
		if (wr->sg_list[i].length >
		    qp->cap.max_inline_data - sqe->inline_len)
			return -EINVAL;
		memcpy(p + sqe->inline_len,
		       (void *)(uintptr_t)wr->sg_list[i].addr,
		       wr->sg_list[i].length);
		sqe->inline_len += wr->sg_list[i].length;
	}
	return 0;
}

static void softrma_sge_copy(struct softrma_sge *dst, const struct ib_sge *src,
			     int num)
{
	for (int i = 0; i < num; i++)
		dst[i] = (struct softrma_sge) {
			.addr = src[i].addr,
			.length = src[i].length,
			.lkey = src[i].lkey,
		};
}

static int softrma_sqe_build(struct softrma_qp *qp, struct softrma_sqe *sqe,
			     const struct ib_send_wr *wr)
{
	int err;

	if (wr->num_sge < 0 || wr->num_sge > qp->cap.max_send_sge)
		return -EINVAL;
	memset(sqe, 0, sizeof(*sqe));
	sqe->wr_id = wr->wr_id;
	sqe->opcode = wr->opcode;
	sqe->send_flags = wr->send_flags;
	sqe->imm_data = (__force u32)wr->ex.imm_data;	/* or invalidate_rkey */
	err = softrma_sqe_set_dest(qp, sqe, wr);
	if (err)
		return err;
	if (wr->send_flags & IB_SEND_INLINE)
		return softrma_sqe_set_inline(qp, sqe, wr);
	sqe->num_sge = wr->num_sge;
	softrma_sge_copy(sqe->sge, wr->sg_list, wr->num_sge);
	return 0;
}

static int softrma_post_kernel_send(struct softrma_qp *qp,
				    const struct ib_send_wr *wr,
				    const struct ib_send_wr **bad_wr)
{
	struct softrma_sqe *sqe;
	unsigned long flags;
	int err = 0;

	if (softrma_qp_state(qp) < IB_QPS_RTS) {
		*bad_wr = wr;
		return -EINVAL;
	}
	spin_lock_irqsave(&qp->post_lock, flags);
	for (; wr; wr = wr->next) {
		sqe = softrma_kqueue_next(&qp->sq);
		err = sqe ? softrma_sqe_build(qp, sqe, wr) : -ENOMEM;
		if (err)
			break;
		softrma_kqueue_publish(&qp->sq);
	}
	spin_unlock_irqrestore(&qp->post_lock, flags);
	if (err)
		*bad_wr = wr;
	softrma_qp_schedule(qp);
	return err;
}

/*
 * The doorbell of user QPs (an empty list) runs the send queue in the
 * caller's context; kernel QPs post here.
 */
int softrma_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		      const struct ib_send_wr **bad_wr)
{
	struct softrma_qp *qp = to_sqp(ibqp);

	if (softrma_qp_is_kernel(qp))
		return softrma_post_kernel_send(qp, wr, bad_wr);
	if (wr || softrma_qp_is_xrc_tgt(qp)) {
		*bad_wr = wr;
		return -EINVAL;
	}
	softrma_count(to_sdev(ibqp->device), SOFTRMA_CNT_DOORBELLS);
	if (READ_ONCE(qp->on_wire))
		softrma_net_doorbell(qp);
	else
		softrma_sq_doorbell(qp);
	return 0;
}

static int softrma_rqe_build(struct softrma_qp *qp, struct softrma_rqe *rqe,
			     const struct ib_recv_wr *wr)
{
	if (wr->num_sge < 0 || wr->num_sge > qp->cap.max_recv_sge)
		return -EINVAL;
	rqe->wr_id = wr->wr_id;
	rqe->num_sge = wr->num_sge;
	softrma_sge_copy(rqe->sge, wr->sg_list, wr->num_sge);
	return 0;
}

/*
 * User QPs post receives into their rings with no system call.  Kernel QPs
 * post here; in the error state a receive is flushed at once, as
 * ib_drain_rq() expects.
 */
int softrma_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		      const struct ib_recv_wr **bad_wr)
{
	struct softrma_qp *qp = to_sqp(ibqp);
	struct softrma_rqe *rqe;
	unsigned long flags;
	int err = 0;

	if (!softrma_qp_is_kernel(qp) || ibqp->srq || !softrma_qp_responds(qp) ||
	    softrma_qp_state(qp) == IB_QPS_RESET) {
		*bad_wr = wr;
		return -EINVAL;
	}
	spin_lock_irqsave(&qp->post_lock, flags);
	for (; wr; wr = wr->next) {
		rqe = softrma_kqueue_next(&qp->rq);
		err = rqe ? softrma_rqe_build(qp, rqe, wr) : -ENOMEM;
		if (err)
			break;
		softrma_kqueue_publish(&qp->rq);
	}
	spin_unlock_irqrestore(&qp->post_lock, flags);
	if (err)
		*bad_wr = wr;
	/*
	 * Either the flush that an error schedules sees these receives, or
	 * this sees the error.  Pairs with queue_work() after
	 * softrma_qp_set_error() stored it: its test-and-set of the pending
	 * bit is fully ordered, and a worker clears that bit, behind a full
	 * barrier, before it runs the work.
	 */
	smp_mb();
	if (softrma_qp_state(qp) == IB_QPS_ERR)
		softrma_qp_schedule(qp);
	return err;
}
