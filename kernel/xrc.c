// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * XRC (IBA 1.2.1 annex A14): domains, the numbers of XRC SRQs, and which
 * SRQ a request for an XRC TGT QP goes to.  The requester (an XRC INI QP)
 * names the SRQ in each request (XRCETH); the TGT QP, which has no PD, no
 * receive queue and no CQ of its own, takes that SRQ's receives, checks
 * memory against that SRQ's PD and completes in that SRQ's CQ, provided
 * the SRQ belongs to the TGT QP's domain.
 *
 * An XRC SRQ can be destroyed whatever TGT QPs do (none holds it), so a
 * responder holds one only while it executes a request: it finds it by
 * number each time, and a receive it holds for a message in progress
 * remembers the SRQ's serial, so that a later SRQ with the same number is
 * never taken for it.
 */

#include "msg.h"

/* Serials of XRC SRQs, unique over every device: a number comes round. */
static atomic64_t softrma_xsrq_serial = ATOMIC64_INIT(0);

int softrma_alloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata)
{
	return softrma_obj_add(to_sdev(ibxrcd->device), SOFTRMA_OBJ_XRCD);
}

int softrma_dealloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata)
{
	softrma_obj_del(to_sdev(ibxrcd->device), SOFTRMA_OBJ_XRCD);
	return 0;
}

/* Numbers an XRC SRQ, which TGT QPs' requests may name from now on. */
int softrma_xsrq_publish(struct softrma_srq *srq)
{
	struct softrma_dev *sdev = to_sdev(srq->ibsrq.device);
	u32 srqn;
	int err;

	softrma_users_init(&srq->users);
	srq->serial = atomic64_inc_return(&softrma_xsrq_serial);
	err = xa_alloc_cyclic(&sdev->srq_xa, &srqn, srq,
			      XA_LIMIT(1, SOFTRMA_SRQN_MAX), &sdev->srq_next,
			      GFP_KERNEL);
	if (err < 0)
		return err == -EBUSY ? -ENOMEM : err;
	srq->ibsrq.ext.xrc.srq_num = srqn;
	return 0;
}

/* After it, no responder uses the SRQ. */
void softrma_xsrq_unpublish(struct softrma_srq *srq)
{
	xa_erase(&to_sdev(srq->ibsrq.device)->srq_xa,
		 srq->ibsrq.ext.xrc.srq_num);
	softrma_users_drain(&srq->users);
}

static struct softrma_srq *softrma_xsrq_get(struct softrma_dev *sdev, u32 srqn)
{
	struct softrma_srq *srq;

	xa_lock(&sdev->srq_xa);
	srq = xa_load(&sdev->srq_xa, srqn);
	if (srq && !softrma_users_get(&srq->users))
		srq = NULL;
	xa_unlock(&sdev->srq_xa);
	return srq;
}

/**
 * softrma_xrc_take() - An XRC SRQ for a TGT QP's responder, by number.
 * @qp: the XRC TGT QP, using no SRQ yet
 * @srqn: the SRQ's number
 * @serial: the SRQ's serial, or 0 for any
 *
 * Context: Under @qp's rq_lock.
 * Return: true with the SRQ in use as qp->resp.xsrq until
 * softrma_xrc_leave(); false when no XRC SRQ of @qp's domain has that
 * number (and serial).
 */
bool softrma_xrc_take(struct softrma_qp *qp, u32 srqn, u64 serial)
{
	struct softrma_srq *srq;

	softrma_qp_assert_rq(qp);
	srq = softrma_xsrq_get(to_sdev(qp->ibqp.device), srqn);
	if (!srq)
		return false;
	if (srq->ibsrq.ext.xrc.xrcd != qp->ibqp.xrcd ||
	    (serial && srq->serial != serial)) {
		softrma_users_put(&srq->users);
		return false;
	}
	qp->resp.xsrq = srq;
	return true;
}

/**
 * softrma_xrc_enter() - The XRC SRQ of a request for an XRC TGT QP.
 * @qp: the XRC TGT QP
 * @msg: the request, or a part of one, which names the SRQ
 *
 * A receive held for a message in progress must come from that SRQ; one
 * left over from a message that ended without it (its requester's memory
 * was gone) is flushed when the next message names another SRQ.
 *
 * Context: Under @qp's rq_lock, outside any other softrma_xrc_enter().
 * Return: SOFTRMA_RESP_ACK with the SRQ in use as qp->resp.xsrq until
 * softrma_xrc_leave(); a NAK when the request names no XRC SRQ of the
 * QP's domain, or another SRQ than the message's.
 */
enum softrma_resp_result softrma_xrc_enter(struct softrma_qp *qp,
					   const struct softrma_msg *msg)
{
	struct softrma_resp_state *rs = &qp->resp;

	if (!softrma_xrc_take(qp, msg->xrc_srqn, 0))
		return SOFTRMA_RESP_NAK_INV_REQ;
	if (!rs->rqe_held || rs->rqe_srq_serial == rs->xsrq->serial)
		return SOFTRMA_RESP_ACK;
	softrma_xrc_leave(qp);
	if (!softrma_msg_begins(msg))
		return SOFTRMA_RESP_NAK_INV_REQ;
	softrma_resp_abandon(qp, true);
	return softrma_xrc_take(qp, msg->xrc_srqn, 0) ?
		SOFTRMA_RESP_ACK : SOFTRMA_RESP_NAK_INV_REQ;
}

/*
 * Outside a request: the SRQ the receive @qp holds came from, in use as
 * its xsrq; false when that SRQ is gone, and with it its CQ.
 */
bool softrma_xrc_enter_held(struct softrma_qp *qp)
{
	struct softrma_resp_state *rs = &qp->resp;

	return softrma_xrc_take(qp, rs->rqe_srqn, rs->rqe_srq_serial);
}

void softrma_xrc_leave(struct softrma_qp *qp)
{
	softrma_qp_assert_rq(qp);
	if (!qp->resp.xsrq)
		return;
	softrma_users_put(&qp->resp.xsrq->users);
	qp->resp.xsrq = NULL;
}

/* The held receive came from the SRQ in use. */
void softrma_xrc_note_rqe(struct softrma_qp *qp)
{
	struct softrma_srq *srq = qp->resp.xsrq;

	qp->resp.rqe_srqn = srq->ibsrq.ext.xrc.srq_num;
	qp->resp.rqe_srq_serial = srq->serial;
}
