// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Queue pairs: creation, the verbs state machine, lookup and destruction. */

#include <linux/log2.h>
#include <linux/slab.h>
#include <rdma/ib_cache.h>
#include <rdma/uverbs_ioctl.h>

#include "msg.h"
#include "proto/ring.h"
#include "trace.h"

/*
 * ON_DEMAND means nothing for a QP; its users set it there all the same
 * (pyverbs' ODP tests), and mlx5 and rdma_rxe take it.
 */
#define SOFTRMA_QP_ACCESS	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
				 IB_ACCESS_REMOTE_READ | \
				 IB_ACCESS_REMOTE_ATOMIC | SOFTRMA_ACCESS_FLUSH | \
				 IB_ACCESS_ON_DEMAND)

/* Serials of QPs, unique over every device: a QPN comes round again. */
static atomic64_t softrma_qp_serial = ATOMIC64_INIT(0);

/*
 * Read on every packet and every run of the send queue, without the lock:
 * what was set before the state (a path, the attributes of RTR) is seen
 * with it.
 */
enum ib_qp_state softrma_qp_state(struct softrma_qp *qp)
{
	return smp_load_acquire(&qp->state);
}

/*
 * The state modify_qp chose.  Fault injection moves a QP to error without
 * its locks: an error that came since modify_qp read the state stays, as
 * if it came after the modify, unless that was to RESET.
 */
static void softrma_qp_set_state(struct softrma_qp *qp, enum ib_qp_state state)
{
	enum ib_qp_state from;
	unsigned long flags;

	softrma_qp_assert_sq(qp);
	softrma_qp_assert_rq(qp);
	spin_lock_irqsave(&qp->state_lock, flags);
	from = qp->state;
	if (from != IB_QPS_ERR || state == IB_QPS_RESET) {
		smp_store_release(&qp->state, state);
		trace_softrma_qp_state(qp, from, state);
	}
	spin_unlock_irqrestore(&qp->state_lock, flags);
}

/* Runs the send queue (kernel QPs, flushes) and flushes receives in error. */
static void softrma_qp_work(struct work_struct *work)
{
	struct softrma_qp *qp = container_of(work, struct softrma_qp, work);

	softrma_sq_drain(qp);
	softrma_resp_flush_err(qp);
}

/* Runs the QP's work (send queue, receive flush) soon, unless it is dying. */
void softrma_qp_schedule(struct softrma_qp *qp)
{
	if (!READ_ONCE(qp->dying))
		queue_work(softrma_wq, &qp->work);
}

/* Moves @qp to the error state; its queues are flushed from a work item. */
void softrma_qp_set_error(struct softrma_qp *qp)
{
	enum ib_qp_state from;
	unsigned long flags;

	spin_lock_irqsave(&qp->state_lock, flags);
	from = qp->state;
	smp_store_release(&qp->state, IB_QPS_ERR);
	if (from != IB_QPS_ERR)
		trace_softrma_qp_state(qp, from, IB_QPS_ERR);
	spin_unlock_irqrestore(&qp->state_lock, flags);
	if (from != IB_QPS_ERR)
		softrma_qp_schedule(qp);
}

/*
 * Whether @from, the GIDs a request for the connected QP @qp came with, are
 * those of its connection the other way round; counts the request if not.
 * RoCE carries no source QPN: on the wire the addresses and the PSN are
 * all that tell the peer from a stranger.  Either lock, or the gate,
 * keeps the path still: modify_qp holds both locks.
 */
bool softrma_qp_from_peer(struct softrma_qp *qp, const struct softrma_av *from)
{
	const struct softrma_av *path = &qp->path;

	lockdep_assert(lockdep_is_held(&qp->sq_lock) ||
		       lockdep_is_held(&qp->rq_lock) ||
		       lockdep_is_held(&qp->gate));
	if (from && !memcmp(&from->sgid, &path->dgid, sizeof(path->dgid)) &&
	    !memcmp(&from->dgid, &path->sgid, sizeof(path->sgid)))
		return true;
	softrma_drop(to_sdev(qp->ibqp.device), SOFTRMA_CNT_RCVD_NO_QP);
	return false;
}

/* Takes a reference on the usable QP numbered @qpn of @sdev. */
struct softrma_qp *softrma_qp_get(struct softrma_dev *sdev, u32 qpn)
{
	struct softrma_qp *qp;

	xa_lock_bh(&sdev->qp_xa);
	qp = xa_load(&sdev->qp_xa, qpn);
	if (qp && !softrma_users_get(&qp->users))
		qp = NULL;
	xa_unlock_bh(&sdev->qp_xa);
	return qp;
}

void softrma_qp_put(struct softrma_qp *qp)
{
	softrma_users_put(&qp->users);
}

static int softrma_qp_check_cap(const struct ib_qp_cap *cap)
{
	if (cap->max_send_wr > SOFTRMA_MAX_QP_WR ||
	    cap->max_recv_wr > SOFTRMA_MAX_QP_WR ||
	    cap->max_send_sge > SOFTRMA_MAX_SGE ||
	    cap->max_recv_sge > SOFTRMA_MAX_SGE ||
	    cap->max_inline_data > SOFTRMA_MAX_INLINE)
		return -EINVAL;
	return 0;
}

static int softrma_qp_init_queues(struct softrma_qp *qp,
				  struct ib_qp_init_attr *init,
				  struct ib_udata *udata,
				  struct softrma_create_qp_resp *resp)
{
	struct softrma_ucontext *uctx =
		rdma_udata_to_drv_context(udata, struct softrma_ucontext, ibuc);
	struct ib_ucontext *ibuc = uctx ? &uctx->ibuc : NULL;
	struct softrma_create_qp_cmd cmd = {};
	struct ib_qp_cap *cap = &init->cap;
	gfp_t gfp = softrma_gfp(udata);
	u32 sq_stride, rq_stride;
	int err;

	if (udata) {
		err = softrma_udata_cmd(udata, &cmd, sizeof(cmd));
		if (err)
			return err;
	}
	cap->max_send_sge = max(cap->max_send_sge, 1U);
	cap->max_recv_sge = max(cap->max_recv_sge, 1U);
	sq_stride = softrma_sqe_bytes(cap->max_send_sge, cap->max_inline_data);
	rq_stride = softrma_rqe_bytes(cap->max_recv_sge);

	qp->sqe = kzalloc(sq_stride, gfp);
	/* Large enough for an SRQ's entries too. */
	qp->rqe = kzalloc(struct_size(qp->rqe, sge, SOFTRMA_MAX_SGE), gfp);
	if (!qp->sqe || !qp->rqe)
		return -ENOMEM;

	err = softrma_queue_init(&qp->sq, ibuc,
				 softrma_ring_entries(cap->max_send_wr),
				 sq_stride, &cmd.sq, &resp->sq_mmap_key);
	if (err)
		return err;
	err = softrma_queue_init(&qp->rq, ibuc,
				 softrma_ring_entries(cap->max_recv_wr),
				 rq_stride, &cmd.rq, &resp->rq_mmap_key);
	if (err) {
		softrma_queue_destroy(&qp->sq);
		return err;
	}
	cap->max_send_wr = qp->sq.num;
	cap->max_recv_wr = qp->rq.num;
	cap->max_inline_data = sq_stride - sizeof(struct softrma_sqe);
	resp->sq_entries = qp->sq.num;
	resp->sq_stride = sq_stride;
	resp->rq_entries = qp->rq.num;
	resp->rq_stride = rq_stride;
	return 0;
}

static int softrma_qp_check_type(enum ib_qp_type type, struct ib_udata *udata)
{
	switch (type) {
	case IB_QPT_RC:
	case IB_QPT_UC:
	case IB_QPT_UD:
	case IB_QPT_XRC_TGT:		/* always without udata: see below */
		return 0;
	case IB_QPT_GSI:
		return udata ? -EINVAL : 0;
	case IB_QPT_XRC_INI:		/* ib_send_wr cannot name an XRC SRQ */
		return udata ? 0 : -EOPNOTSUPP;
	default:
		return -EOPNOTSUPP;
	}
}

/* Reserves the QPN: 1 for the GSI QP, the next free one otherwise. */
static int softrma_qp_reserve_qpn(struct softrma_dev *sdev,
				  enum ib_qp_type type, u32 *qpn)
{
	int err;

	if (type == IB_QPT_GSI) {
		*qpn = 1;
		return xa_insert_bh(&sdev->qp_xa, *qpn, NULL, GFP_KERNEL);
	}
	err = xa_alloc_cyclic_bh(&sdev->qp_xa, qpn, NULL,
				 XA_LIMIT(SOFTRMA_FIRST_QPN, SOFTRMA_QPN_MAX),
				 &sdev->qp_next, GFP_KERNEL);
	return err < 0 ? err : 0;
}

int softrma_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		      struct ib_udata *udata)
{
	struct softrma_dev *sdev = to_sdev(ibqp->device);
	struct softrma_qp *qp = to_sqp(ibqp);
	struct softrma_create_qp_resp resp = {};
	u32 qpn;
	int err;

	err = softrma_qp_check_type(init->qp_type, udata);
	if (err)
		return err;
	/* It has no queues; the core passes on what the process asked. */
	if (init->qp_type == IB_QPT_XRC_TGT)
		init->cap = (struct ib_qp_cap) {};
	if (init->create_flags)
		return -EOPNOTSUPP;
	if (softrma_qp_check_cap(&init->cap))
		return -EINVAL;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;
	err = softrma_obj_add(sdev, SOFTRMA_OBJ_QP);
	if (err)
		return err;

	mutex_init(&qp->sq_lock);
	mutex_init(&qp->rq_lock);
	spin_lock_init(&qp->gate);
	spin_lock_init(&qp->state_lock);
	spin_lock_init(&qp->post_lock);
	INIT_DELAYED_WORK(&qp->retry_work, softrma_sq_retry_work);
	INIT_WORK(&qp->work, softrma_qp_work);
	softrma_sgl_init(&qp->sq_sgl, qp->sq_segs, SOFTRMA_MAX_SGE);
	softrma_sgl_init(&qp->resp.rqe_sgl, qp->resp.rqe_segs, SOFTRMA_MAX_SGE);
	softrma_sgl_init_one(&qp->resp.target);
	softrma_users_init(&qp->users);
	qp->state = IB_QPS_RESET;
	qp->sig_all = init->sq_sig_type == IB_SIGNAL_ALL_WR;
	/*
	 * The core creates an XRC TGT QP without udata for a process, to
	 * share it between processes: it posts nothing, and has no rings to
	 * map.
	 */
	qp->kernel = !udata && init->qp_type != IB_QPT_XRC_TGT;

	err = softrma_qp_init_queues(qp, init, udata, &resp);
	if (err)
		goto err_free;
	qp->cap = init->cap;
	err = softrma_wire_create(qp);
	if (err)
		goto err_queues;

	err = softrma_qp_reserve_qpn(sdev, init->qp_type, &qpn);
	if (err)
		goto err_queues;
	ibqp->qp_num = qpn;
	qp->serial = atomic64_inc_return(&softrma_qp_serial);
	if (udata) {
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto err_qpn;
	}
	xa_store_bh(&sdev->qp_xa, qpn, qp, GFP_KERNEL);
	return 0;

err_qpn:
	xa_erase_bh(&sdev->qp_xa, qpn);
err_queues:
	softrma_wire_destroy(qp);
	softrma_queue_destroy(&qp->rq);
	softrma_queue_destroy(&qp->sq);
err_free:
	kfree(qp->sqe);
	kfree(qp->rqe);
	softrma_obj_del(sdev, SOFTRMA_OBJ_QP);
	return err;
}

static int softrma_check_path(struct softrma_qp *qp, struct ib_qp_attr *attr,
			      int mask)
{
	if ((mask & IB_QP_PORT) && attr->port_num != SOFTRMA_PORT)
		return -EINVAL;
	if ((mask & IB_QP_PKEY_INDEX) && attr->pkey_index)
		return -EINVAL;
	if ((mask & IB_QP_AV) &&
	    !(rdma_ah_get_ah_flags(&attr->ah_attr) & IB_AH_GRH))
		return -EINVAL;
	/*
	 * Not ib_query_port(): it takes RTNL for the link speed, and the QP's
	 * locks are held here (RTNL -> rdma_cm's qp_mutex -> sq_lock).
	 */
	if ((mask & IB_QP_PATH_MTU) &&
	    (attr->path_mtu < IB_MTU_256 ||
	     attr->path_mtu > softrma_port_active_mtu(to_sdev(qp->ibqp.device))))
		return -EINVAL;
	return 0;
}

static int softrma_check_attr(struct softrma_qp *qp, struct ib_qp_attr *attr,
			      int mask)
{
	int err;

	if ((mask & IB_QP_ACCESS_FLAGS) &&
	    (attr->qp_access_flags & ~SOFTRMA_QP_ACCESS))
		return -EINVAL;
	if ((mask & IB_QP_MAX_QP_RD_ATOMIC) &&
	    attr->max_rd_atomic > SOFTRMA_MAX_RD_ATOMIC)
		return -EINVAL;
	if ((mask & IB_QP_MAX_DEST_RD_ATOMIC) &&
	    attr->max_dest_rd_atomic > SOFTRMA_MAX_RD_ATOMIC)
		return -EINVAL;
	if (((mask & IB_QP_RETRY_CNT) && attr->retry_cnt > 7) ||
	    ((mask & IB_QP_RNR_RETRY) && attr->rnr_retry > 7) ||
	    ((mask & IB_QP_MIN_RNR_TIMER) && attr->min_rnr_timer > 31) ||
	    ((mask & IB_QP_TIMEOUT) && attr->timeout > 31))
		return -EINVAL;
	if ((mask & IB_QP_CAP) &&
	    (attr->cap.max_send_wr > qp->cap.max_send_wr ||
	     attr->cap.max_recv_wr > qp->cap.max_recv_wr))
		return -EINVAL;
	err = softrma_check_path(qp, attr, mask);
	if (err)
		return err;
	return softrma_wire_check_path(qp, attr, mask);
}

/* Both queues restart empty, as the provider's do after RESET. */
static void softrma_qp_reset_queues(struct softrma_qp *qp)
{
	struct softrma_queue *queues[] = { &qp->sq, &qp->rq };

	for (int i = 0; i < ARRAY_SIZE(queues); i++) {
		queues[i]->index = 0;
		WRITE_ONCE(queues[i]->hdr->consumer, 0);
		WRITE_ONCE(queues[i]->hdr->producer, 0);
	}
	qp->head_wait = false;
	qp->head_retried = false;
	qp->resp.last_wqe_reached = false;
	softrma_resp_abandon(qp, false);
}

static bool softrma_wc_of_qp(const void *entry, const void *ibqp)
{
	const struct ib_wc *wc = entry;

	return wc->qp == ibqp;
}

static void softrma_cq_clean(struct ib_cq *ibcq, struct softrma_qp *qp)
{
	struct softrma_cq *cq = to_scq(ibcq);
	unsigned long flags;

	spin_lock_irqsave(&cq->lock, flags);
	softrma_queue_remove(&cq->queue, softrma_wc_of_qp, &qp->ibqp);
	spin_unlock_irqrestore(&cq->lock, flags);
}

/*
 * A kernel QP going to RESET takes its completions out of its CQs, as
 * mlx5 does, so that its consumer's next poll finds those of its next use.
 * Under both of its locks, with its queues emptied, it adds none meanwhile.
 * A process's CQ ring is the provider's to change, which does the same for
 * its QPs after the modify.
 */
static void softrma_qp_clean_cqs(struct softrma_qp *qp)
{
	softrma_qp_assert_sq(qp);
	softrma_qp_assert_rq(qp);
	softrma_cq_clean(qp->ibqp.send_cq, qp);
	if (qp->ibqp.recv_cq && qp->ibqp.recv_cq != qp->ibqp.send_cq)
		softrma_cq_clean(qp->ibqp.recv_cq, qp);
}

static void softrma_qp_copy_attr(struct softrma_qp *qp,
				 const struct ib_qp_attr *attr, int mask)
{
	struct ib_qp_attr *a = &qp->attr;

	if (mask & IB_QP_AV) {
		a->ah_attr = attr->ah_attr;
		softrma_av_init(&qp->path, &attr->ah_attr);
	}
	if (mask & IB_QP_PATH_MTU)
		a->path_mtu = attr->path_mtu;
	if (mask & IB_QP_DEST_QPN) {
		a->dest_qp_num = attr->dest_qp_num;
		qp->peer_serial = 0;
	}
	if (mask & IB_QP_SQ_PSN)
		a->sq_psn = attr->sq_psn & 0xffffff;
	if (mask & IB_QP_RQ_PSN)
		a->rq_psn = attr->rq_psn & 0xffffff;
	if (mask & IB_QP_ACCESS_FLAGS)
		a->qp_access_flags = attr->qp_access_flags;
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		a->max_rd_atomic = attr->max_rd_atomic;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		a->max_dest_rd_atomic = attr->max_dest_rd_atomic;
	if (mask & IB_QP_MIN_RNR_TIMER)
		a->min_rnr_timer = attr->min_rnr_timer;
	if (mask & IB_QP_RNR_RETRY)
		a->rnr_retry = attr->rnr_retry;
	if (mask & IB_QP_RETRY_CNT)
		a->retry_cnt = attr->retry_cnt;
	if (mask & IB_QP_TIMEOUT)
		a->timeout = attr->timeout;
	if (mask & IB_QP_PORT)
		a->port_num = attr->port_num;
	if (mask & IB_QP_PKEY_INDEX)
		a->pkey_index = attr->pkey_index;
	if (mask & IB_QP_QKEY)
		a->qkey = attr->qkey;
}

/* Raises the affiliated asynchronous event @type of @qp. */
void softrma_qp_event(struct softrma_qp *qp, enum ib_event_type type)
{
	struct ib_event event = {
		.device = qp->ibqp.device,
		.element.qp = &qp->ibqp,
		.event = type,
	};

	if (qp->ibqp.event_handler)
		qp->ibqp.event_handler(&event, qp->ibqp.qp_context);
}

/*
 * In SQD, once no WQE is in flight (none taken on the wire and not
 * completed, no head waiting out an RNR NAK), the SQ Drained event, if the
 * transition to SQD asked for it (IBA 11.6.3.1).
 */
void softrma_qp_check_drained(struct softrma_qp *qp)
{
	softrma_qp_assert_sq(qp);
	if (!qp->sqd_notify || softrma_qp_state(qp) != IB_QPS_SQD ||
	    qp->head_wait || softrma_wire_sq_busy(qp))
		return;
	qp->sqd_notify = false;
	softrma_qp_event(qp, IB_EVENT_SQ_DRAINED);
}

int softrma_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		      struct ib_udata *udata)
{
	struct softrma_qp *qp = to_sqp(ibqp);
	enum ib_qp_state state, cur, next;
	int err = 0;

	if (mask & ~IB_QP_ATTR_STANDARD_BITS)
		return -EOPNOTSUPP;

	softrma_qp_lock_sq(qp);
	softrma_qp_lock_rq(qp);
	state = softrma_qp_state(qp);
	cur = (mask & IB_QP_CUR_STATE) ? attr->cur_qp_state : state;
	next = (mask & IB_QP_STATE) ? attr->qp_state : cur;
	if (cur != state ||
	    !ib_modify_qp_is_ok(cur, next, ibqp->qp_type, mask)) {
		err = -EINVAL;
		goto out;
	}
	/* An ACK deferred to the peer goes before the path can change. */
	if (qp->wire)
		softrma_wire_answer_flush(qp, true);
	err = softrma_check_attr(qp, attr, mask);
	if (err)
		goto out;

	softrma_qp_copy_attr(qp, attr, mask);
	softrma_wire_modify(qp, attr, mask, next);
	if (next == IB_QPS_RESET && cur != IB_QPS_RESET) {
		softrma_qp_reset_queues(qp);
		if (qp->kernel)
			softrma_qp_clean_cqs(qp);
	}
	if (next == IB_QPS_ERR)
		softrma_qp_set_error(qp);
	else
		softrma_qp_set_state(qp, next);
	if (next != IB_QPS_SQD)
		qp->sqd_notify = false;
	else if (cur != IB_QPS_SQD)
		qp->sqd_notify = (mask & IB_QP_EN_SQD_ASYNC_NOTIFY) &&
				 attr->en_sqd_async_notify;
	softrma_qp_check_drained(qp);
out:
	mutex_unlock(&qp->rq_lock);
	mutex_unlock(&qp->sq_lock);

	/* Work posted before RTS (or during SQD) may go now. */
	if (!err && next == IB_QPS_RTS)
		softrma_sq_run(qp);
	return err;
}

int softrma_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		     struct ib_qp_init_attr *init)
{
	struct softrma_qp *qp = to_sqp(ibqp);

	softrma_qp_lock_sq(qp);
	*attr = qp->attr;
	mutex_unlock(&qp->sq_lock);
	attr->qp_state = softrma_qp_state(qp);
	attr->cur_qp_state = attr->qp_state;
	attr->cap = qp->cap;
	attr->sq_draining = 0;

	memset(init, 0, sizeof(*init));
	init->qp_type = ibqp->qp_type;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->cap = qp->cap;
	init->sq_sig_type = qp->sig_all ? IB_SIGNAL_ALL_WR : IB_SIGNAL_REQ_WR;
	return 0;
}

/*
 * Unpublish the QPN, wait until no responder works on the QP, stop the
 * requester's deferred work, then free the rings.
 */
int softrma_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct softrma_dev *sdev = to_sdev(ibqp->device);
	struct softrma_qp *qp = to_sqp(ibqp);

	softrma_mcast_detach_qp(qp);
	xa_erase_bh(&sdev->qp_xa, ibqp->qp_num);
	softrma_users_drain(&qp->users);

	/* Under sq_lock: a requester either re-armed already or sees dying. */
	softrma_qp_lock_sq(qp);
	WRITE_ONCE(qp->dying, true);
	mutex_unlock(&qp->sq_lock);
	cancel_work_sync(&qp->work);
	cancel_delayed_work_sync(&qp->retry_work);
	softrma_wire_destroy(qp);
	softrma_qp_lock_rq(qp);
	softrma_resp_abandon(qp, false);
	mutex_unlock(&qp->rq_lock);

	softrma_queue_destroy(&qp->rq);
	softrma_queue_destroy(&qp->sq);
	kfree(qp->sqe);
	kfree(qp->rqe);
	softrma_obj_del(sdev, SOFTRMA_OBJ_QP);
	return 0;
}
