// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The local transport: a message for a QP on this host goes straight to
 * that QP's responder, and its payload moves once, from the requester's
 * pages to the responder's; a datagram for a device elsewhere goes in a
 * packet (net.c).  Either way the SQ entry is done when its execution
 * returns: the send queue is walked one entry at a time (sq.c).
 */

#include "net.h"

/**
 * softrma_local_dev() - The device on this host that a destination is on.
 * @qp: the requester, whose namespace is searched
 * @dgid: the destination GID
 *
 * With force_wire set every destination is elsewhere: it takes packets;
 * so does one where either device is to lose, duplicate or corrupt
 * packets (fault.c), so that the faults reach QPs of one host too.
 *
 * Context: Process context.
 * Return: the device, held until ib_device_put(), or NULL.
 */
struct softrma_dev *softrma_local_dev(struct softrma_qp *qp,
				      const union ib_gid *dgid)
{
	struct softrma_dev *sdev;

	if (softrma_net_forced() ||
	    softrma_fault_lossy(to_sdev(qp->ibqp.device)))
		return NULL;
	sdev = softrma_get_dev_by_gid(softrma_qp_net(qp), dgid);
	if (sdev && softrma_fault_lossy(sdev)) {
		ib_device_put(&sdev->ib_dev);
		return NULL;
	}
	return sdev;
}

/*
 * What the local transport counts, on the devices of both ends: each
 * request delivered, the payload it moved (a READ's from the responder to
 * the requester), and RNR NAKs, as the wire counts its packets.
 */
static void softrma_local_count(struct softrma_qp *qp, struct softrma_qp *peer,
				const struct softrma_msg *msg,
				enum softrma_resp_result res)
{
	struct softrma_dev *from = to_sdev(qp->ibqp.device);
	struct softrma_dev *to = to_sdev(peer->ibqp.device);

	softrma_count(from, SOFTRMA_CNT_LOCAL_SENT_MSGS);
	softrma_count(to, SOFTRMA_CNT_LOCAL_RCVD_MSGS);
	if (res == SOFTRMA_RESP_RNR_NAK) {
		softrma_count(to, SOFTRMA_CNT_SENT_RNR_NAK);
		softrma_count(from, SOFTRMA_CNT_RCVD_RNR_NAK);
	}
	if (res != SOFTRMA_RESP_ACK)
		return;
	if (roce_wr_op(msg->opcode)->kind == ROCE_KIND_READ)
		swap(from, to);
	softrma_count_add(from, SOFTRMA_CNT_LOCAL_SENT_BYTES, msg->length);
	softrma_count_add(to, SOFTRMA_CNT_LOCAL_RCVD_BYTES, msg->length);
}

/*
 * Completes the SQ head (qp->sqe), whose message @msg had the answer @res,
 * or returns -EAGAIN when an RNR NAK has it wait.
 */
static int softrma_local_complete(struct softrma_qp *qp,
				  const struct softrma_msg *msg,
				  enum softrma_resp_result res)
{
	enum ib_wc_status status = softrma_resp_status(res);

	softrma_sgl_release(&qp->sq_sgl);
	if (msg->local_gone)
		status = IB_WC_LOC_PROT_ERR;
	/* UC and UD are unacknowledged: sent is done. */
	else if (!softrma_qp_is_reliable(qp))
		status = IB_WC_SUCCESS;
	else if (res == SOFTRMA_RESP_RNR_NAK &&
		 softrma_sq_rnr_wait(qp, msg->rnr_timer))
		return -EAGAIN;
	else if (res == SOFTRMA_RESP_DROPPED && softrma_sq_lost_wait(qp))
		return -EAGAIN;
	softrma_sq_complete_head(qp, status, msg->length);
	return 0;
}

/*
 * Hands @msg to the QP it is addressed to, and completes the SQ head with
 * the answer before the receive that @msg consumed: as on the wire, where
 * the acknowledgement leaves first, whatever the peer's application sends
 * when its receive completes must not complete on this side before @msg.
 * A connected QP was given this transport when its path was set, and keeps
 * it; a datagram's destination is chosen per message.
 */
static int softrma_local_transmit(struct softrma_qp *qp,
				  struct softrma_msg *msg)
{
	struct softrma_recv_cqe recv = {};
	struct softrma_qp *peer = NULL;
	enum softrma_resp_result res;
	struct softrma_dev *sdev;
	int ret;

	if (softrma_qp_is_ud(qp)) {
		sdev = softrma_local_dev(qp, msg->dgid);
		if (!sdev)
			return softrma_local_complete(qp, msg,
				softrma_net_xmit_datagram(qp, msg) ?
				SOFTRMA_RESP_ACK : SOFTRMA_RESP_DROPPED);
	} else {
		sdev = softrma_get_dev_by_gid(softrma_qp_net(qp), msg->dgid);
	}
	if (sdev) {
		peer = softrma_qp_get(sdev, msg->dest_qpn);
		ib_device_put(&sdev->ib_dev);
	}
	if (!peer)
		return softrma_local_complete(qp, msg, SOFTRMA_RESP_DROPPED);
	msg->recv_cqe = &recv;
	softrma_qp_lock_rq(peer);
	res = softrma_resp_execute_locked(peer, msg);
	ret = softrma_local_complete(qp, msg, res);
	softrma_resp_post_recv(peer, &recv);
	mutex_unlock(&peer->rq_lock);
	softrma_local_count(qp, peer, msg, res);
	softrma_qp_put(peer);
	return ret;
}

/*
 * Executes the SQ head (qp->sqe) and completes it, or returns -EAGAIN when
 * it waits (an RNR NAK, or SQD).
 */
static int softrma_local_execute(struct softrma_qp *qp, u64 *moved)
{
	enum ib_qp_state state = softrma_qp_state(qp);
	enum ib_wc_status status;
	struct softrma_msg msg;

	/* In SQD only a head being tried again is still in flight. */
	if (state != IB_QPS_RTS && !(state == IB_QPS_SQD && qp->head_retried))
		return -EAGAIN;
	status = softrma_sq_prepare(qp, qp->sqe, &msg, &qp->sq_sgl);
	if (status != IB_WC_SUCCESS || roce_wr_op(msg.opcode)->local) {
		softrma_sq_complete_head(qp, status, 0);
		return 0;
	}
	*moved += msg.length;
	return softrma_local_transmit(qp, &msg);
}

static void softrma_local_send(struct softrma_qp *qp)
{
	softrma_sq_walk(qp, softrma_local_execute);
}

/* Nothing is in flight between two walks of the SQ. */
static void softrma_local_flush_err(struct softrma_qp *qp)
{
}

const struct softrma_transport softrma_local_transport = {
	.send = softrma_local_send,
	.flush_err = softrma_local_flush_err,
};
