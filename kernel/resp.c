// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The responder: every request that reaches a QP, whatever carried it, is
 * checked and executed here.  Nothing moves before the checks pass: QP
 * state, the QP's remote access rights, then key, PD, access and bounds of
 * the target memory, and alignment for atomics.
 */

#include "proto/net_hdr.h"
#include "msg.h"
#include "view.h"

/*
 * Receive WQEs come from the QP's own RQ, or from an SRQ, which the
 * responders of every QP that uses it share under the SRQ's lock: the QP's
 * own, or for an XRC TGT QP the one the request at hand names (xrc.c).  A
 * receive WQE is either left in its ring or completed: never taken and
 * dropped.
 */
static struct softrma_srq *softrma_resp_srq(struct softrma_qp *qp)
{
	if (softrma_qp_is_xrc_tgt(qp))
		return qp->resp.xsrq;
	return qp->ibqp.srq ? to_ssrq(qp->ibqp.srq) : NULL;
}

static bool softrma_resp_shares_recv(struct softrma_qp *qp)
{
	return qp->ibqp.srq || softrma_qp_is_xrc_tgt(qp);
}

static struct softrma_queue *softrma_resp_recv_queue(struct softrma_qp *qp)
{
	struct softrma_srq *srq = softrma_resp_srq(qp);

	return srq ? &srq->queue : &qp->rq;
}

static void softrma_resp_lock_recv(struct softrma_qp *qp)
{
	struct softrma_srq *srq = softrma_resp_srq(qp);

	if (srq)
		mutex_lock(&srq->lock);
}

static void softrma_resp_unlock_recv(struct softrma_qp *qp)
{
	struct softrma_srq *srq = softrma_resp_srq(qp);

	if (srq)
		mutex_unlock(&srq->lock);
}

static u32 softrma_resp_max_recv_sge(struct softrma_qp *qp)
{
	struct softrma_srq *srq = softrma_resp_srq(qp);

	return srq ? srq->max_sge : qp->cap.max_recv_sge;
}

/* An XRC TGT QP has no CQ: its receives complete in their SRQ's. */
static struct softrma_cq *softrma_resp_recv_cq(struct softrma_qp *qp)
{
	if (softrma_qp_is_xrc_tgt(qp))
		return to_scq(qp->resp.xsrq->ibsrq.ext.cq);
	return to_scq(qp->ibqp.recv_cq);
}

/* Receive WQEs posted: -EAGAIN when none, -EPROTO when the ring is corrupt. */
static int softrma_resp_recv_pending(struct softrma_qp *qp)
{
	int pending = softrma_queue_pending(softrma_resp_recv_queue(qp));

	return pending ? pending : -EAGAIN;
}

/* Copies the head receive WQE into qp->rqe; it stays in the ring. */
static int softrma_resp_fetch_rqe(struct softrma_qp *qp)
{
	struct softrma_queue *q = softrma_resp_recv_queue(qp);
	int pending = softrma_resp_recv_pending(qp);

	if (pending < 0)
		return pending;
	memcpy(qp->rqe, softrma_queue_entry(q, q->index), q->stride);
	return 0;
}

static enum rdma_network_type softrma_av_network_type(const struct softrma_av *av)
{
	return roce_net_hdr_is_ipv4(av->sgid.raw, av->dgid.raw) ?
		RDMA_NETWORK_IPV4 : RDMA_NETWORK_IPV6;
}

/* Takes the fetched receive WQE out of its ring. */
static void softrma_resp_consume_rqe(struct softrma_qp *qp)
{
	struct softrma_srq *srq = softrma_resp_srq(qp);

	softrma_queue_consume(softrma_resp_recv_queue(qp));
	if (srq)
		softrma_srq_check_limit(srq);
}

/*
 * Completes the held receive WQE; false when the receive CQ overflowed.
 * A transport that asks for it (msg->recv_cqe) gets the completion, to post
 * with softrma_resp_post_recv().
 */
static bool softrma_resp_complete_rqe(struct softrma_qp *qp,
				      const struct softrma_msg *msg,
				      enum ib_wc_status status, u64 length)
{
	struct softrma_cqe cqe = {
		.wr_id = qp->rqe->wr_id,
		.status = status,
		.opcode = IB_WC_RECV,
		.byte_len = length,
		.qp_num = qp->ibqp.qp_num,
	};
	bool solicited = status != IB_WC_SUCCESS;

	softrma_qp_assert_rq(qp);
	softrma_sgl_release(&qp->resp.rqe_sgl);
	qp->resp.rqe_held = false;
	if (msg) {
		const struct roce_wr_op *op = roce_wr_op(msg->opcode);

		if (status == IB_WC_SUCCESS)
			cqe.opcode = op->recv_wc_opcode;
		cqe.src_qp = msg->src_qpn;
		if (msg->av) {
			cqe.wc_flags |= IB_WC_GRH;
			cqe.network_hdr_type = softrma_av_network_type(msg->av);
		}
		if (op->imm) {
			cqe.imm_data = msg->imm_data;
			cqe.wc_flags |= IB_WC_WITH_IMM;
		}
		if (op->inv) {
			cqe.invalidate_rkey = msg->inv_rkey;
			cqe.wc_flags |= SOFTRMA_WC_WITH_INV;
		}
		solicited |= !!(msg->send_flags & IB_SEND_SOLICITED);
		if (msg->recv_cqe) {
			*msg->recv_cqe = (struct softrma_recv_cqe) {
				.cqe = cqe,
				.cq = softrma_resp_recv_cq(qp),
				.xsrq = qp->resp.xsrq,
				.solicited = solicited,
				.held = true,
			};
			if (qp->resp.xsrq)
				softrma_users_hold(&qp->resp.xsrq->users);
			return true;
		}
	}
	return softrma_cq_post(softrma_resp_recv_cq(qp), qp, &cqe, solicited);
}

/**
 * softrma_resp_post_recv() - Posts the receive completion a request left.
 * @qp: the responder
 * @rc: the request's msg->recv_cqe, which may hold nothing
 *
 * The request has its answer already, which a receive CQ that overflowed
 * can no longer turn into a NAK: it puts an RC QP in error all the same.
 *
 * Context: Under @qp's rq_lock.
 */
void softrma_resp_post_recv(struct softrma_qp *qp, struct softrma_recv_cqe *rc)
{
	softrma_qp_assert_rq(qp);
	if (!rc->held)
		return;
	rc->held = false;
	if (!softrma_cq_post(rc->cq, qp, &rc->cqe, rc->solicited) &&
	    softrma_qp_is_reliable(qp))
		softrma_qp_set_error(qp);
	if (rc->xsrq)
		softrma_users_put(&rc->xsrq->users);
}

/*
 * Resolves the memory of the receive WQE in qp->rqe as far as it passes its
 * checks (a zero-length SEND takes a receive whatever memory it names, as
 * libfabric's fi_shared_ctx relies on): a completion status.
 */
static enum ib_wc_status softrma_resp_resolve_rqe(struct softrma_qp *qp)
{
	const struct softrma_rqe *rqe = qp->rqe;
	struct softrma_resp_state *rs = &qp->resp;
	int ret;

	if (rqe->num_sge > softrma_resp_max_recv_sge(qp))
		return IB_WC_LOC_QP_OP_ERR;
	ret = softrma_sgl_resolve_recv(&rs->rqe_sgl, to_sdev(qp->ibqp.device),
				       softrma_qp_resp_pd(qp), rqe->sge,
				       rqe->num_sge);
	if (ret < 0)
		return IB_WC_LOC_LEN_ERR;
	rs->rqe_cut = ret;
	return IB_WC_SUCCESS;
}

/*
 * The receive WQE of @msg's message: the one held already, or the next,
 * taken out of its ring so that an SRQ shared by several QPs hands each
 * message its own.  It is held until the message ends, and a message
 * dropped on the way leaves it for the next.  A bad WQE completes at once.
 */
static enum softrma_resp_result softrma_resp_hold_rqe(struct softrma_qp *qp,
						      struct softrma_msg *msg)
{
	struct softrma_resp_state *rs = &qp->resp;
	enum ib_wc_status status;
	int err;

	if (rs->rqe_held)
		return SOFTRMA_RESP_ACK;
	softrma_resp_lock_recv(qp);
	err = softrma_resp_fetch_rqe(qp);
	if (!err)
		softrma_resp_consume_rqe(qp);
	softrma_resp_unlock_recv(qp);
	if (!err && softrma_qp_is_xrc_tgt(qp))
		softrma_xrc_note_rqe(qp);
	if (err == -EAGAIN) {
		msg->rnr_timer = qp->attr.min_rnr_timer;
		return SOFTRMA_RESP_RNR_NAK;
	}
	if (err)
		return SOFTRMA_RESP_NAK_OP;
	rs->rqe_held = true;
	status = softrma_resp_resolve_rqe(qp);
	if (status == IB_WC_SUCCESS)
		return SOFTRMA_RESP_ACK;
	softrma_resp_complete_rqe(qp, msg, status, 0);
	return SOFTRMA_RESP_NAK_OP;
}

/*
 * A UD receive gets the packet's network header in front of the payload.
 * Returns its length, 0 for connected QPs.
 */
static u32 softrma_resp_net_hdr(const struct softrma_msg *msg,
				u8 hdr[ROCE_NET_HDR_LEN])
{
	const struct softrma_av *av = msg->av;
	struct roce_net_hdr_info info;

	if (!av)
		return 0;
	info = (struct roce_net_hdr_info) {
		.traffic_class = av->traffic_class,
		.hop_limit = av->hop_limit,
		.flow_label = av->flow_label,
		.msg_len = msg->length,
		.has_imm = roce_wr_op(msg->opcode)->imm,
	};
	memcpy(info.sgid, av->sgid.raw, sizeof(info.sgid));
	memcpy(info.dgid, av->dgid.raw, sizeof(info.dgid));
	roce_net_hdr_build(hdr, &info);
	return ROCE_NET_HDR_LEN;
}

/* Whether @qp grants what @wr_opcode needs. */
static bool softrma_resp_allowed(struct softrma_qp *qp, u32 wr_opcode)
{
	int need = roce_wr_op(wr_opcode)->remote_access;

	return (qp->attr.qp_access_flags & need) == need;
}

/**
 * softrma_resp_target() - The MR a request names, checked.
 * @qp: the responder
 * @rkey: the request's key
 * @va: the address it names
 * @length: the bytes it names
 * @wr_opcode: the request's opcode, for the right it needs
 *
 * Context: Process context; takes the device's MR xarray lock.
 * Return: the MR, in use until softrma_mr_put(), or NULL when key, PD,
 * access or bounds do not hold.
 */
struct softrma_mr *softrma_resp_target(struct softrma_qp *qp, u32 rkey,
				       u64 va, u64 length, u32 wr_opcode)
{
	struct softrma_mr *mr;

	mr = softrma_mr_get_remote(&qp->ibqp, rkey, va, length,
				   roce_wr_op(wr_opcode)->remote_access);
	return IS_ERR(mr) ? NULL : mr;
}

/*
 * The memory an RDMA WRITE or READ names, as a list in @sgl (an empty one
 * for an empty request): a NAK for a length above the maximum message, or
 * a key, PD, access or bounds that do not hold.
 */
static enum softrma_resp_result softrma_resp_rdma_target(struct softrma_qp *qp,
							 const struct softrma_msg *msg,
							 struct softrma_sgl *sgl)
{
	struct softrma_mr *mr;

	if (msg->length > SOFTRMA_MAX_MSG_SZ)
		return SOFTRMA_RESP_NAK_INV_REQ;
	if (!msg->length) {
		softrma_sgl_init_kbuf(sgl, NULL, 0);
		return SOFTRMA_RESP_ACK;
	}
	mr = softrma_resp_target(qp, msg->rkey, msg->remote_addr, msg->length,
				 msg->opcode);
	if (!mr)
		return SOFTRMA_RESP_NAK_ACCESS;
	softrma_sgl_init_mr(sgl, mr, msg->remote_addr, msg->length);
	softrma_mr_put(mr);
	return SOFTRMA_RESP_ACK;
}

/*
 * Moves @len bytes between the requester's memory (msg->local, from its
 * start) and @mem at @mem_off: into @mem when @to_mem.  An MR of the
 * requester that is gone is its own error: the request is dropped and the
 * requester told (local_gone).  One of the responder's is a NAK.  A packet's
 * payload waits for an ODP page that is not there with an RNR NAK.
 */
static enum softrma_resp_result softrma_resp_move(struct softrma_msg *msg,
						  struct softrma_sgl *mem,
						  u64 mem_off, bool to_mem,
						  u64 len)
{
	int err;

	if (to_mem)
		err = softrma_sgl_copy_at(mem, mem_off, msg->local, 0, len);
	else
		err = softrma_sgl_copy_at(msg->local, 0, mem, mem_off, len);
	if (!err)
		return SOFTRMA_RESP_ACK;
	if (err == -EAGAIN)		/* an ODP page, faulted in apart */
		return SOFTRMA_RESP_RNR_NAK;
	if (err == (to_mem ? -EFAULT : -EACCES)) {
		msg->local_gone = true;
		return SOFTRMA_RESP_DROPPED;
	}
	return SOFTRMA_RESP_NAK_ACCESS;
}

/**
 * softrma_resp_end_msg() - Ends the message in progress.
 * @qp: the responder
 *
 * A held receive stays for the next message.
 *
 * Context: Under @qp's rq_lock.
 */
void softrma_resp_end_msg(struct softrma_qp *qp)
{
	softrma_qp_assert_rq(qp);
	softrma_sgl_release(&qp->resp.target);
	qp->resp.offset = 0;
	qp->resp.length = 0;
}

/**
 * softrma_resp_abandon() - Drops the message in progress and its receive.
 * @qp: the responder
 * @flush: the QP is in error: the held receive completes with WR_FLUSH_ERR
 *	(an XRC TGT QP's, unless its SRQ is gone); otherwise (reset, destroy)
 *	it is forgotten with its queue
 *
 * Context: Under @qp's rq_lock, outside a request of an XRC TGT QP.
 */
void softrma_resp_abandon(struct softrma_qp *qp, bool flush)
{
	bool entered = false;

	softrma_resp_end_msg(qp);
	if (!qp->resp.rqe_held)
		return;
	if (flush && softrma_qp_is_xrc_tgt(qp))
		flush = entered = softrma_xrc_enter_held(qp);
	if (flush) {
		softrma_resp_complete_rqe(qp, NULL, IB_WC_WR_FLUSH_ERR, 0);
	} else {
		softrma_sgl_release(&qp->resp.rqe_sgl);
		qp->resp.rqe_held = false;
	}
	if (entered)
		softrma_xrc_leave(qp);
}

/*
 * A SEND's payload lands in its receive, behind a UD receive's network
 * header; the memory a receive names must hold all of it, and pass its
 * checks as far as the payload goes.
 */
static enum softrma_resp_result softrma_resp_place_send(struct softrma_qp *qp,
							struct softrma_msg *msg)
{
	struct softrma_resp_state *rs = &qp->resp;
	u8 hdr[ROCE_NET_HDR_LEN];
	SOFTRMA_SGL_ONE(hdr_sgl);
	u32 hdr_len = 0;

	if (softrma_msg_begins(msg))
		hdr_len = softrma_resp_net_hdr(msg, hdr);
	if (rs->offset + hdr_len + msg->local->length > rs->rqe_sgl.length) {
		if (rs->rqe_cut) {
			softrma_resp_complete_rqe(qp, msg, IB_WC_LOC_PROT_ERR, 0);
			return SOFTRMA_RESP_NAK_OP;
		}
		softrma_resp_complete_rqe(qp, msg, IB_WC_LOC_LEN_ERR, 0);
		return SOFTRMA_RESP_NAK_INV_REQ;
	}
	softrma_sgl_init_kbuf(&hdr_sgl, hdr, hdr_len);
	if (softrma_sgl_copy(&rs->rqe_sgl, &hdr_sgl, hdr_len)) {
		softrma_resp_complete_rqe(qp, msg, IB_WC_LOC_PROT_ERR, 0);
		return SOFTRMA_RESP_NAK_OP;
	}
	rs->offset += hdr_len;
	return SOFTRMA_RESP_ACK;
}

/*
 * A WRITE's first part names its memory, which every part fills in turn:
 * the parts add up to the length named, no more and no less.
 */
static enum softrma_resp_result softrma_resp_place_write(struct softrma_qp *qp,
							 struct softrma_msg *msg)
{
	struct softrma_resp_state *rs = &qp->resp;
	u64 end = rs->offset + msg->local->length;
	enum softrma_resp_result res;

	if (softrma_msg_begins(msg)) {
		res = softrma_resp_rdma_target(qp, msg, &rs->target);
		if (res != SOFTRMA_RESP_ACK)
			return res;
		rs->length = msg->length;
	}
	if (end > rs->length || (softrma_msg_ends(msg) && end != rs->length))
		return SOFTRMA_RESP_NAK_INV_REQ;
	return SOFTRMA_RESP_ACK;
}

/*
 * The payload of a SEND or WRITE, or of one part of it.  The memory is
 * checked before a receive is taken (a NAK leaves the receive posted), and
 * a receive must be there before anything moves (an RNR NAK leaves memory
 * untouched).  The last part invalidates the key a SEND with invalidate
 * names, then completes the receive.
 */
static enum softrma_resp_result softrma_resp_place(struct softrma_qp *qp,
						   struct softrma_msg *msg)
{
	const struct roce_wr_op *op = roce_wr_op(msg->opcode);
	struct softrma_resp_state *rs = &qp->resp;
	bool send = op->kind == ROCE_KIND_SEND;
	enum softrma_resp_result res;

	if (!send) {
		res = softrma_resp_place_write(qp, msg);
		if (res != SOFTRMA_RESP_ACK)
			return res;
	}
	if (op->recv) {
		res = softrma_resp_hold_rqe(qp, msg);
		if (res != SOFTRMA_RESP_ACK)
			return res;
	}
	if (send) {
		res = softrma_resp_place_send(qp, msg);
		if (res != SOFTRMA_RESP_ACK)
			return res;
	}

	res = softrma_resp_move(msg, send ? &rs->rqe_sgl : &rs->target,
				rs->offset, true, msg->local->length);
	if (res == SOFTRMA_RESP_NAK_ACCESS && send) {
		softrma_resp_complete_rqe(qp, msg, IB_WC_LOC_PROT_ERR, 0);
		return SOFTRMA_RESP_NAK_OP;
	}
	if (res != SOFTRMA_RESP_ACK)
		return res;
	rs->offset += msg->local->length;

	if (softrma_msg_ends(msg) && op->inv &&
	    softrma_mr_invalidate(&qp->ibqp, msg->inv_rkey)) {
		softrma_resp_complete_rqe(qp, msg, IB_WC_REM_INV_REQ_ERR, 0);
		softrma_resp_end_msg(qp);
		return SOFTRMA_RESP_NAK_INV_REQ;
	}
	if (softrma_msg_ends(msg) && op->recv &&
	    !softrma_resp_complete_rqe(qp, msg, IB_WC_SUCCESS,
				       send ? rs->offset : rs->length))
		res = SOFTRMA_RESP_NAK_OP;
	if (softrma_msg_ends(msg))
		softrma_resp_end_msg(qp);
	return res;
}

/* A part that fails ends its message, unless it waits for a receive. */
static enum softrma_resp_result softrma_resp_payload(struct softrma_qp *qp,
						     struct softrma_msg *msg)
{
	enum softrma_resp_result res = softrma_resp_place(qp, msg);

	if (res != SOFTRMA_RESP_ACK &&
	    (res != SOFTRMA_RESP_RNR_NAK || softrma_msg_begins(msg)))
		softrma_resp_end_msg(qp);
	return res;
}

/*
 * The target of an atomic or ATOMIC WRITE: 8 aligned bytes, checked.  The
 * core keeps an MR's iova and its memory at the same page offset, so an
 * aligned address is aligned memory.
 */
static enum softrma_resp_result softrma_resp_atomic_target(struct softrma_qp *qp,
							   const struct softrma_msg *msg,
							   struct softrma_mr **mr)
{
	if (!IS_ALIGNED(msg->remote_addr, sizeof(u64)))
		return SOFTRMA_RESP_NAK_INV_REQ;
	*mr = softrma_resp_target(qp, msg->rkey, msg->remote_addr, sizeof(u64),
				  msg->opcode);
	return *mr ? SOFTRMA_RESP_ACK : SOFTRMA_RESP_NAK_ACCESS;
}

/* Nothing executed on -EAGAIN: the request comes again (softrma_mr_atomic()). */
static enum softrma_resp_result softrma_resp_atomic_result(int err)
{
	if (err == -EAGAIN)
		return SOFTRMA_RESP_RNR_NAK;
	return err ? SOFTRMA_RESP_NAK_ACCESS : SOFTRMA_RESP_ACK;
}

/* Compare-and-swap or fetch-and-add, serialised with every other atomic. */
static enum softrma_resp_result softrma_resp_atomic(struct softrma_qp *qp,
						    const struct softrma_msg *msg)
{
	enum softrma_resp_result res;
	struct softrma_mr *mr;
	int err;

	res = softrma_resp_atomic_target(qp, msg, &mr);
	if (res != SOFTRMA_RESP_ACK)
		return res;
	err = softrma_mr_atomic(mr, msg->remote_addr,
				msg->opcode == IB_WR_ATOMIC_CMP_AND_SWP,
				msg->compare_add, msg->swap,
				&qp->resp.atomic_orig, msg->local->nofault);
	softrma_mr_put(mr);
	return softrma_resp_atomic_result(err);
}

/* ATOMIC WRITE: the 8 bytes it carries land at once. */
static enum softrma_resp_result softrma_resp_atomic_write(struct softrma_qp *qp,
							  struct softrma_msg *msg)
{
	enum softrma_resp_result res;
	SOFTRMA_SGL_ONE(value_sgl);
	struct softrma_mr *mr;
	u64 value;
	int err;

	if (msg->length != sizeof(value) || msg->local->length != sizeof(value))
		return SOFTRMA_RESP_NAK_INV_REQ;
	softrma_sgl_init_kbuf(&value_sgl, &value, sizeof(value));
	res = softrma_resp_move(msg, &value_sgl, 0, true, sizeof(value));
	if (res != SOFTRMA_RESP_ACK)
		return res;
	res = softrma_resp_atomic_target(qp, msg, &mr);
	if (res != SOFTRMA_RESP_ACK)
		return res;
	err = softrma_mr_atomic_write(mr, msg->remote_addr, value,
				      msg->local->nofault);
	softrma_mr_put(mr);
	return softrma_resp_atomic_result(err);
}

static int softrma_flush_access(u8 type)
{
	switch (type) {
	case SOFTRMA_FLUSH_GLOBAL:
		return SOFTRMA_ACCESS_FLUSH_GLOBAL;
	case SOFTRMA_FLUSH_PERSISTENT:
		return SOFTRMA_ACCESS_FLUSH_PERSISTENT;
	default:
		return 0;
	}
}

/*
 * RDMA FLUSH of a range or of the whole MR, with the placement type the QP
 * and the MR must grant.  What was placed before is global already (the
 * device writes with the CPU, and the cache hooks ran at placement);
 * persistence writes the range back from the CPU caches.  A checking
 * device reads the range as it would write it back: through its view.
 */
static enum softrma_resp_result softrma_resp_rdma_flush(struct softrma_qp *qp,
							const struct softrma_msg *msg)
{
	struct softrma_dev *sdev = to_sdev(qp->ibqp.device);
	int access = softrma_flush_access(msg->flush_type);
	u64 va = msg->remote_addr, len = msg->length;
	struct softrma_mr *mr;

	if (!access || msg->flush_level > SOFTRMA_FLUSH_MR ||
	    (qp->attr.qp_access_flags & access) != access)
		return SOFTRMA_RESP_NAK_INV_REQ;
	if (msg->flush_level == SOFTRMA_FLUSH_MR)
		mr = softrma_mr_get_whole(&qp->ibqp, msg->rkey, access);
	else
		mr = softrma_mr_get_remote(&qp->ibqp, msg->rkey, va, len,
					   access);
	if (IS_ERR_OR_NULL(mr))
		return SOFTRMA_RESP_NAK_ACCESS;
	if (msg->flush_level == SOFTRMA_FLUSH_MR) {
		va = mr->iova;
		len = mr->length;
	}
	softrma_mr_before_read(mr, va, len, NULL);
	if (msg->flush_type == SOFTRMA_FLUSH_PERSISTENT) {
		softrma_mr_writeback(mr, va, len);
		softrma_mr_durable(mr, va, len);
		softrma_count(sdev, SOFTRMA_CNT_FLUSH_PERSISTENT);
		softrma_count_add(sdev, SOFTRMA_CNT_WRITTEN_BACK_BYTES, len);
	} else
		smp_mb();	/* placement before this FLUSH is complete */
	softrma_mr_put(mr);
	return SOFTRMA_RESP_ACK;
}

/**
 * softrma_resp_admits() - Whether @qp takes requests, and from @from.
 * @qp: the responder
 * @from: the requester's address; a connected QP answers its peer only
 *
 * Context: Under @qp's rq_lock.
 * Return: false when the QP (an XRC INI QP) or its state takes no
 * requests, or the requester
 * is a stranger to a connected QP (counted).
 */
bool softrma_resp_admits(struct softrma_qp *qp, const struct softrma_av *from)
{
	softrma_qp_assert_rq(qp);
	if (!softrma_qp_responds(qp) ||
	    !softrma_state_responds(softrma_qp_state(qp)))
		return false;
	return softrma_qp_is_ud(qp) || softrma_qp_from_peer(qp, from);
}

/* softrma_resp_request() without the XRC SRQ. */
static enum softrma_resp_result softrma_resp_dispatch(struct softrma_qp *qp,
						      struct softrma_msg *msg)
{
	const struct roce_wr_op *op = roce_wr_op(msg->opcode);

	if (!(op->qp_types & BIT(softrma_qp_transport(qp))))
		return SOFTRMA_RESP_NAK_INV_REQ;
	if (softrma_msg_begins(msg) && !softrma_resp_allowed(qp, msg->opcode))
		return SOFTRMA_RESP_NAK_INV_REQ;

	switch (op->kind) {
	case ROCE_KIND_SEND:
	case ROCE_KIND_WRITE:
		return softrma_resp_payload(qp, msg);
	case ROCE_KIND_READ:
		return softrma_resp_rdma_target(qp, msg, &qp->resp.target);
	case ROCE_KIND_ATOMIC:
		return softrma_resp_atomic(qp, msg);
	case ROCE_KIND_ATOMIC_WRITE:
		return softrma_resp_atomic_write(qp, msg);
	case ROCE_KIND_FLUSH:
		return softrma_resp_rdma_flush(qp, msg);
	default:
		return SOFTRMA_RESP_NAK_INV_REQ;
	}
}

/**
 * softrma_resp_request() - Checks and executes a request, or a part of one.
 * @qp: the responder, which admitted it
 * @msg: the request: a whole message on this host, a packet's part on the
 *	wire, with its payload in msg->local
 *
 * The opcode must suit the QP's transport and the QP grant its right; then
 * by kind: a SEND or WRITE is placed (a WRITE's memory named by its first
 * part, a receive taken and completed when the opcode consumes one); a
 * READ's memory is checked and left in qp->resp.target; an atomic's answer
 * left in qp->resp.atomic_orig.  The transport sends those answers.  An
 * XRC TGT QP uses the SRQ the request names meanwhile.
 *
 * Context: Process context, under @qp's rq_lock; takes the SRQ's lock.
 * Return: what an ACK, NAK or RNR NAK would say, or SOFTRMA_RESP_DROPPED
 * when the requester's own memory was gone (msg->local_gone).
 */
enum softrma_resp_result softrma_resp_request(struct softrma_qp *qp,
					      struct softrma_msg *msg)
{
	enum softrma_resp_result res;

	softrma_qp_assert_rq(qp);
	if (!softrma_qp_is_xrc_tgt(qp))
		return softrma_resp_dispatch(qp, msg);
	res = softrma_xrc_enter(qp, msg);
	if (res == SOFTRMA_RESP_ACK)
		res = softrma_resp_dispatch(qp, msg);
	softrma_xrc_leave(qp);
	return res;
}

/**
 * softrma_resp_outcome() - What becomes of a request's result.
 * @qp: the responder
 * @res: the result of softrma_resp_request()
 *
 * UC and UD drop what they cannot execute, and the QP carries on; a NAK
 * puts an RC QP in error.
 *
 * Context: Under @qp's rq_lock.
 * Return: @res, or SOFTRMA_RESP_DROPPED for a QP that does not answer.
 */
enum softrma_resp_result softrma_resp_outcome(struct softrma_qp *qp,
					      enum softrma_resp_result res)
{
	softrma_qp_assert_rq(qp);
	if (!softrma_qp_is_reliable(qp) && res != SOFTRMA_RESP_ACK)
		return SOFTRMA_RESP_DROPPED;
	if (softrma_resp_fatal(res))
		softrma_qp_set_error(qp);
	return res;
}

/*
 * On this host a READ's or an atomic's answer goes straight into the
 * requester's memory: the one copy of a READ.
 */
static enum softrma_resp_result softrma_resp_answer(struct softrma_qp *qp,
						    struct softrma_msg *msg)
{
	const struct roce_wr_op *op = roce_wr_op(msg->opcode);
	enum softrma_resp_result res = SOFTRMA_RESP_ACK;
	SOFTRMA_SGL_ONE(orig);

	switch (op->kind) {
	case ROCE_KIND_READ:
		res = softrma_resp_move(msg, &qp->resp.target, 0, false,
					msg->length);
		softrma_resp_end_msg(qp);
		break;
	case ROCE_KIND_ATOMIC:
		softrma_sgl_init_kbuf(&orig, &qp->resp.atomic_orig,
				      sizeof(qp->resp.atomic_orig));
		res = softrma_resp_move(msg, &orig, 0, false, sizeof(u64));
		break;
	default:
		break;
	}
	return res;
}

/*
 * UD: a SEND with the QP's Q_Key lands in the next receive.  Whatever goes
 * wrong, the datagram is dropped, nobody is told and the QP carries on.
 */
static enum softrma_resp_result softrma_resp_datagram(struct softrma_qp *qp,
						      struct softrma_msg *msg)
{
	if (msg->qkey != qp->attr.qkey)
		return SOFTRMA_RESP_DROPPED;
	return softrma_resp_request(qp, msg);
}

/* The requester's connection, if the requester is @qp's peer QP. */
static const struct softrma_av *softrma_resp_peer_path(struct softrma_qp *qp,
						       const struct softrma_msg *msg)
{
	return msg->src_qpn == qp->attr.dest_qp_num ? msg->path : NULL;
}

/*
 * Whether a connected @qp's local requester is the QP that spoke to it
 * first since it was connected, not a later one that bears its number (the
 * local transport has no PSN); counts the request if not.
 */
static bool softrma_resp_same_peer(struct softrma_qp *qp,
				   const struct softrma_msg *msg)
{
	if (softrma_qp_is_ud(qp))
		return true;
	if (!qp->peer_serial)
		qp->peer_serial = msg->src_serial;
	if (qp->peer_serial == msg->src_serial)
		return true;
	softrma_drop(to_sdev(qp->ibqp.device), SOFTRMA_CNT_RCVD_NO_QP);
	return false;
}

/**
 * softrma_resp_execute_locked() - The responder of the local transport.
 * @qp: the QP the message is addressed to
 * @msg: the whole message, with the requester's memory
 *
 * Checks and executes @msg with one copy, answers included.
 *
 * Context: Process context, under @qp's rq_lock; takes its SRQ's lock.
 * Return: what an ACK, NAK or RNR NAK would say, or SOFTRMA_RESP_DROPPED.
 */
enum softrma_resp_result softrma_resp_execute_locked(struct softrma_qp *qp,
						     struct softrma_msg *msg)
{
	enum softrma_resp_result res;

	softrma_qp_assert_rq(qp);
	/*
	 * Not for this QP: requests of another transport, or of anyone when
	 * its peer speaks in packets.
	 */
	if (msg->qp_type != softrma_qp_transport(qp) || qp->on_wire)
		res = SOFTRMA_RESP_DROPPED;
	else if (!softrma_resp_admits(qp, softrma_resp_peer_path(qp, msg)) ||
		 !softrma_resp_same_peer(qp, msg))
		res = SOFTRMA_RESP_DROPPED;
	else if (softrma_qp_is_ud(qp))
		res = softrma_resp_datagram(qp, msg);
	else
		res = softrma_resp_request(qp, msg);
	if (res == SOFTRMA_RESP_ACK && roce_wr_op(msg->opcode)->response)
		res = softrma_resp_answer(qp, msg);
	return softrma_resp_outcome(qp, res);
}

/**
 * softrma_resp_execute() - softrma_resp_execute_locked(), taking the lock.
 * @qp: the QP the message is addressed to
 * @msg: the whole message, with the requester's memory
 *
 * Context: Process context; takes @qp's rq_lock (and its SRQ's lock).
 * Return: what an ACK, NAK or RNR NAK would say, or SOFTRMA_RESP_DROPPED.
 */
enum softrma_resp_result softrma_resp_execute(struct softrma_qp *qp,
					      struct softrma_msg *msg)
{
	enum softrma_resp_result res;

	softrma_qp_lock_rq(qp);
	res = softrma_resp_execute_locked(qp, msg);
	mutex_unlock(&qp->rq_lock);
	return res;
}

/**
 * softrma_resp_flush_err() - Completes the receives of a QP in error.
 * @qp: the responder
 *
 * Every posted receive completes with WR_FLUSH_ERR, the held one first.
 * An SRQ's receives belong to the SRQ, and stay for its other QPs: once
 * the held one is flushed the QP takes no more of them, and says so with
 * Last WQE Reached, which consumers wait for before they reset or destroy
 * it (IBA 10.3.1; ib_drain_qp() on 6.12).
 *
 * Context: Process context; takes @qp's rq_lock.
 */
void softrma_resp_flush_err(struct softrma_qp *qp)
{
	bool last_wqe = false;
	u32 done = 0;

	softrma_qp_lock_rq(qp);
	if (softrma_qp_state(qp) == IB_QPS_ERR) {
		if (qp->wire)
			softrma_wire_resp_reset(qp);
		softrma_resp_abandon(qp, true);
		last_wqe = softrma_resp_shares_recv(qp) &&
			   !qp->resp.last_wqe_reached;
		qp->resp.last_wqe_reached = true;
	}
	while (!softrma_resp_shares_recv(qp) &&
	       softrma_qp_state(qp) == IB_QPS_ERR &&
	       !softrma_resp_fetch_rqe(qp)) {
		/* A ring's worth at a time: the producer is the user's. */
		if (done++ == qp->rq.num) {
			softrma_qp_schedule(qp);
			break;
		}
		softrma_resp_consume_rqe(qp);
		if (!softrma_resp_complete_rqe(qp, NULL, IB_WC_WR_FLUSH_ERR, 0))
			break;
		cond_resched();
	}
	mutex_unlock(&qp->rq_lock);
	if (last_wqe)
		softrma_qp_event(qp, IB_EVENT_QP_LAST_WQE_REACHED);
}
