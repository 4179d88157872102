// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The requester of connected QPs on the wire.  SQ entries are taken into a
 * window of WQEs in flight (kernel copies, their memory resolved and held
 * until they complete), numbered with consecutive PSNs and sent as packets
 * of the path MTU.  RC keeps them until the completer retires them; it asks
 * for an acknowledgement at the end of each message whose completion is
 * signalled, at least every SOFTRMA_WIRE_ACK_EVERY packets and every half
 * SOFTRMA_WIRE_WQES messages, and keeps at most a window of packets
 * unacknowledged: SOFTRMA_WIRE_PSNS, halved on every loss, because going
 * back N costs the window, and grown back by one per window acknowledged.
 * A READ goes out as requests of at most SOFTRMA_WIRE_READ_PKTS responses,
 * one at a time, so that no request asks for more than the window; one sent
 * again for its missing responses keeps its end.  UC completes what it has
 * sent.
 */

#include "wire.h"

/*
 * Starts the retransmission timer, or restarts it after progress.  A
 * restart only moves the deadline, which the timer's work checks when it
 * runs (and waits again if it is not there yet): modifying the pending
 * timer on every acknowledgement was the costliest kernel function of a
 * stream of small messages.
 */
void softrma_wire_arm_timer(struct softrma_qp *qp, bool restart)
{
	unsigned long timeout = softrma_sq_ack_timeout(qp);
	struct softrma_wire *w = qp->wire;

	softrma_qp_assert_sq(qp);
	if (!timeout || qp->dying || !softrma_qp_is_reliable(qp))
		return;
	if (queue_delayed_work(softrma_wq, &w->retrans_work, timeout) || restart)
		w->retrans_at = jiffies + timeout;
}

/* Completes the oldest WQE in flight, and lets go of its memory. */
void softrma_wire_complete_head(struct softrma_qp *qp,
				enum ib_wc_status status)
{
	struct softrma_wqe *wqe = softrma_wire_wqe(qp, qp->sq.index);

	softrma_qp_assert_sq(qp);
	softrma_sgl_release(&wqe->sgl);
	softrma_sq_finish(qp, wqe->sqe, status, wqe->msg.length);
}

/*
 * A request packet of @wqe, with @payload from @off.  One that cannot go
 * out is lost, and sent again after the ACK timeout (its memory deregistered
 * or unmapped meanwhile: until the retries run out); one whose ODP pages
 * are not there yet is not sent at all (-EAGAIN): it goes later, from the
 * send work.
 */
static int softrma_wire_xmit(struct softrma_qp *qp,
			     const struct softrma_wqe *wqe,
			     struct roce_pkt *pkt,
			     const struct softrma_sgl *payload, u64 off)
{
	struct softrma_wire *w = qp->wire;
	int err;

	/*
	 * Its acknowledgement of what the peer sent goes first; one owed for
	 * messages that did not ask, before a message's first packet.
	 */
	softrma_wire_answer_flush(qp, pkt->psn == wqe->first_psn);
	pkt->opcode |= softrma_wire_group(qp);
	pkt->dqpn = qp->attr.dest_qp_num;
	pkt->xrc_srqn = wqe->msg.xrc_srqn;
	err = softrma_net_xmit(qp, &qp->path, pkt, payload, off);
	if (err == -EAGAIN)
		return err;
	if (roce_psn_diff(pkt->psn, w->max_psn) < 0)
		softrma_count(to_sdev(qp->ibqp.device),
			      SOFTRMA_CNT_RETRANS_PKTS);
	softrma_wire_arm_timer(qp, false);
	return 0;
}

/*
 * @pkt went out, and with it the PSNs before @end_psn.  The first request
 * that asks for an answer when none is outstanding restarts the timer: the
 * peer owed nothing for what went before it.  One sent again after a loss
 * does not: the rounds without progress stay counted.
 */
static void softrma_wire_sent(struct softrma_qp *qp,
			      const struct roce_pkt *pkt, u32 end_psn)
{
	struct softrma_wire *w = qp->wire;
	u32 last = roce_psn_add(end_psn, -1);

	if (roce_psn_diff(end_psn, w->max_psn) > 0)
		w->max_psn = end_psn;
	if (!pkt->ackreq) {
		w->noack_pkts++;
		return;
	}
	w->noack_pkts = 0;
	if (roce_psn_diff(w->ackreq_psn, w->comp_psn) < 0 && !w->rewound)
		softrma_wire_arm_timer(qp, true);
	if (roce_psn_diff(last, w->ackreq_psn) > 0)
		w->ackreq_psn = last;
}

/* Sends @pkt, the one PSN at next_psn of @wqe; false when it has to wait. */
static bool softrma_wire_send_next(struct softrma_qp *qp,
				   struct softrma_wqe *wqe, struct roce_pkt *pkt,
				   u64 off)
{
	if (softrma_wire_xmit(qp, wqe, pkt, &wqe->sgl, off))
		return false;
	softrma_wire_sent(qp, pkt, roce_psn_add(wqe->next_psn, 1));
	wqe->next_psn = roce_psn_add(wqe->next_psn, 1);
	return true;
}

/*
 * Whether the end of @wqe asks for an acknowledgement: when its completion
 * is signalled, when it makes half the WQEs that may be in flight (the
 * acknowledgement of the last retires them all), and when no timer would
 * ask later (timeout 0).  An unsignalled message needs none soon: the
 * peer's receive of it completes without one, the application waits for
 * nothing of it, and the next acknowledgement retires it too.
 */
static bool softrma_wire_wqe_wants_ack(struct softrma_qp *qp,
				       const struct softrma_wqe *wqe)
{
	return qp->sig_all || (wqe->msg.send_flags & IB_SEND_SIGNALED) ||
	       qp->wire->next_index - qp->sq.index >= SOFTRMA_WIRE_WQES / 2 ||
	       !softrma_sq_ack_timeout(qp);
}

/*
 * Asks for an acknowledgement at the end of a message that wants one, often
 * enough that the window never waits for one, and when a run sent again
 * reaches the last packet sent so far (a probe is one): one answer
 * acknowledges the run, or NAKs what it still lacks.  A run the window
 * stops short of it asks every half window.  What is left unacknowledged
 * behind the last that asked is asked for by softrma_wire_ask_ack().
 */
static bool softrma_wire_ackreq(struct softrma_qp *qp,
				const struct softrma_wqe *wqe, bool last)
{
	struct softrma_wire *w = qp->wire;
	u32 every = min_t(u32, SOFTRMA_WIRE_ACK_EVERY, w->window / 2);

	return softrma_qp_is_reliable(qp) &&
	       (roce_psn_diff(w->max_psn, wqe->next_psn) == 1 ||
		w->noack_pkts + 1 >= every ||
		(last && softrma_wire_wqe_wants_ack(qp, wqe)));
}

/* The next packet of a SEND or WRITE; false when it has to wait. */
static bool softrma_wire_send_data(struct softrma_qp *qp,
				   struct softrma_wqe *wqe)
{
	struct softrma_wire *w = qp->wire;
	const struct softrma_msg *msg = &wqe->msg;
	u32 idx = roce_psn_diff(wqe->next_psn, wqe->first_psn);
	u64 off = (u64)idx * w->mtu;
	bool first = !idx, last = wqe->next_psn == wqe->last_psn;
	const struct roce_wr_op *op = roce_wr_op(msg->opcode);
	bool write = op->kind == ROCE_KIND_WRITE;
	struct roce_pkt pkt = {
		.opcode = roce_msg_op(write ? ROCE_MSG_WRITE : ROCE_MSG_SEND,
				      roce_wr_last_hdr(op), first, last),
		.psn = wqe->next_psn,
		.payload_len = min_t(u64, w->mtu, msg->length - off),
		.ackreq = softrma_wire_ackreq(qp, wqe, last),
	};

	if (write && first) {
		pkt.va = msg->remote_addr;
		pkt.rkey = msg->rkey;
		pkt.dma_len = msg->length;
	}
	if (last) {
		pkt.se = msg->send_flags & IB_SEND_SOLICITED;
		pkt.imm = msg->imm_data;
		pkt.inv_rkey = msg->inv_rkey;
	}
	return softrma_wire_send_next(qp, wqe, &pkt, off);
}

/**
 * softrma_wire_ask_ack() - Asks for the acknowledgement of what is in flight.
 * @qp: the requester
 *
 * For when the requester must know: a fence, a local operation or the
 * error of a WQE that failed waits for what is in flight, the SQ drains
 * (SQD), or the retransmission timer ran out.  When none of the packets
 * outstanding asked for an acknowledgement (softrma_wire_ackreq()), sends
 * the last of them again, which asks: the peer's answer acknowledges them
 * all, or NAKs the first that it lacks.
 * Once until the next progress, and not while an RNR NAK is waited out.
 *
 * Return: whether it asked.
 */
bool softrma_wire_ask_ack(struct softrma_qp *qp)
{
	struct softrma_wire *w = qp->wire;
	u32 psn = roce_psn_add(w->max_psn, -1);
	struct softrma_wqe *wqe;

	softrma_qp_assert_sq(qp);
	if (!softrma_qp_is_reliable(qp) || w->probed || qp->head_wait ||
	    roce_psn_diff(w->ackreq_psn, w->comp_psn) >= 0 ||
	    roce_psn_diff(w->max_psn, w->comp_psn) <= 0)
		return false;
	w->probed = true;
	for (u32 i = qp->sq.index; i != w->next_index; i++) {
		wqe = softrma_wire_wqe(qp, i);
		if (wqe->next_psn == w->max_psn &&
		    roce_psn_diff(psn, wqe->first_psn) >= 0 &&
		    !softrma_wqe_waits_response(wqe)) {
			wqe->next_psn = psn;
			if (!softrma_wire_send_data(qp, wqe))
				softrma_wire_kick(qp);	/* ODP: once it is in */
			break;
		}
	}
	return true;
}

/* An atomic, FLUSH or ATOMIC WRITE: one packet, one PSN; false: it waits. */
static bool softrma_wire_send_single(struct softrma_qp *qp,
				     struct softrma_wqe *wqe)
{
	const struct softrma_msg *msg = &wqe->msg;
	const struct roce_wr_op *op = roce_wr_op(msg->opcode);
	struct roce_pkt pkt = {
		.opcode = op->roce_op,
		.psn = wqe->next_psn,
		.ackreq = true,
		.va = msg->remote_addr,
		.rkey = msg->rkey,
	};

	switch (op->kind) {
	case ROCE_KIND_ATOMIC:
		/* The AtomicETH's "swap or add" is fetch-and-add's operand. */
		if (op->roce_op == ROCE_CMP_SWAP) {
			pkt.swap_add = msg->swap;
			pkt.compare = msg->compare_add;
		} else {
			pkt.swap_add = msg->compare_add;
		}
		break;
	case ROCE_KIND_ATOMIC_WRITE:
		pkt.dma_len = sizeof(u64);
		pkt.payload_len = sizeof(u64);
		break;
	default:			/* FLUSH */
		pkt.dma_len = msg->length;
		pkt.feth = msg->flush_type | msg->flush_level << 4;
		break;
	}
	return softrma_wire_send_next(qp, wqe, &pkt, 0);
}

/*
 * The next READ request of @wqe, for the responses from next_psn on: once
 * every response before it has arrived.  False when it has to wait.
 */
static bool softrma_wire_send_read(struct softrma_qp *qp,
				   struct softrma_wqe *wqe)
{
	struct softrma_wire *w = qp->wire;
	const struct softrma_msg *msg = &wqe->msg;
	u32 idx = roce_psn_diff(wqe->next_psn, wqe->first_psn);
	u32 left = roce_psn_diff(wqe->last_psn, wqe->next_psn) + 1;
	u64 off = (u64)idx * w->mtu;
	struct roce_pkt pkt = {
		.opcode = ROCE_READ_REQ,
		.psn = wqe->next_psn,
		.ackreq = true,
		.va = msg->remote_addr + off,
		.rkey = msg->rkey,
	};
	u32 n;

	if (idx && w->comp_psn != wqe->next_psn)
		return false;
	/* Sent again, a request keeps the end it had: responders expect so. */
	if (roce_psn_diff(wqe->read_end, wqe->next_psn) > 0) {
		n = roce_psn_diff(wqe->read_end, wqe->next_psn);
	} else {
		n = min3(left, w->window, (u32)SOFTRMA_WIRE_READ_PKTS);
		wqe->read_end = roce_psn_add(wqe->next_psn, n);
	}
	pkt.dma_len = min_t(u64, msg->length - off, (u64)n * w->mtu);
	softrma_wire_xmit(qp, wqe, &pkt, NULL, 0);	/* no payload to wait for */
	wqe->next_psn = roce_psn_add(wqe->next_psn, n);
	softrma_wire_sent(qp, &pkt, wqe->next_psn);
	return true;
}

/*
 * Sends what @wqe has not sent, at most *@budget packets; false when the
 * rest has to wait.  A payload whose ODP pages are not there yet leaves no
 * budget: the send work tries again.
 */
static bool softrma_wire_send_wqe(struct softrma_qp *qp,
				  struct softrma_wqe *wqe, u32 *budget)
{
	struct softrma_wire *w = qp->wire;

	while (roce_psn_diff(wqe->next_psn, wqe->last_psn) <= 0) {
		if (!*budget)
			return false;
		if (softrma_qp_is_reliable(qp) &&
		    roce_psn_diff(wqe->next_psn, w->comp_psn) >= (int)w->window)
			return false;
		(*budget)--;
		if (softrma_wqe_is_read(wqe)) {
			if (!softrma_wire_send_read(qp, wqe))
				return false;
		} else if (!(softrma_wqe_waits_response(wqe) ?
			     softrma_wire_send_single(qp, wqe) :
			     softrma_wire_send_data(qp, wqe))) {
			*budget = 0;
			return false;
		}
	}
	return true;
}

/* READs and atomics in flight, against max_rd_atomic. */
static bool softrma_wire_rd_atomic_full(struct softrma_qp *qp)
{
	u32 n = 0;

	for (u32 i = qp->sq.index; i != qp->wire->next_index; i++)
		n += softrma_wqe_waits_response(softrma_wire_wqe(qp, i));
	return n >= max_t(u32, qp->attr.max_rd_atomic, 1);
}

static u32 softrma_wire_num_psns(struct softrma_qp *qp,
				 const struct softrma_wqe *wqe)
{
	if (roce_wr_op(wqe->msg.opcode)->local)
		return 0;
	if (softrma_wqe_waits_response(wqe) && !softrma_wqe_is_read(wqe))
		return 1;
	return roce_num_pkts(wqe->msg.length, qp->wire->mtu);
}

/*
 * Takes the next posted SQ entry into the window and numbers its packets.
 * False when there is none, no room, the QP drains (SQD), its responder's
 * acknowledgement waits to be sent (wire_answer.c), or it has to wait for
 * those before it (a fence, a local operation, max_rd_atomic, or PSNs that
 * would span more than half their space).
 */
static bool softrma_wire_take(struct softrma_qp *qp)
{
	struct softrma_wire *w = qp->wire;
	u32 taken = w->next_index - qp->sq.index, n;
	struct softrma_wqe *wqe = softrma_wire_wqe(qp, w->next_index);
	struct softrma_sqe *sqe = wqe->sqe;

	/* What SQD lets drain is sent: it drains once that is acknowledged. */
	if (softrma_qp_state(qp) == IB_QPS_SQD) {
		softrma_wire_ask_ack(qp);
		return false;
	}
	if (taken == SOFTRMA_WIRE_WQES || softrma_qp_state(qp) != IB_QPS_RTS ||
	    smp_load_acquire(&w->resp.ack_waits) ||
	    !softrma_sq_fetch(qp, w->next_index, sqe))
		return false;
	/*
	 * A fence waits for everything before it, not only READs and atomics,
	 * and so does a local operation: for their acknowledgement.
	 */
	if (taken && ((sqe->send_flags & IB_SEND_FENCE) ||
		      roce_wr_op(sqe->opcode)->local)) {
		softrma_wire_ask_ack(qp);
		return false;
	}
	/* An invalidation or a bind waits for the accesses in progress. */
	if (roce_wr_op(sqe->opcode)->local && softrma_net_in_rx(to_sdev(qp->ibqp.device))) {
		softrma_wire_kick(qp);
		return false;
	}
	if (roce_wr_op(sqe->opcode)->response &&
	    softrma_wire_rd_atomic_full(qp))
		return false;

	wqe->status = softrma_sq_prepare(qp, sqe, &wqe->msg, &wqe->sgl);
	n = wqe->status == IB_WC_SUCCESS ? softrma_wire_num_psns(qp, wqe) : 0;
	if (!roce_psn_span_ok(w->comp_psn, roce_psn_add(w->send_psn, n))) {
		softrma_sgl_release(&wqe->sgl);
		return false;
	}
	wqe->first_psn = w->send_psn;
	wqe->next_psn = w->send_psn;
	wqe->read_end = w->send_psn;
	wqe->last_psn = roce_psn_add(w->send_psn, n - 1);
	w->send_psn = roce_psn_add(w->send_psn, n);
	w->next_index++;
	return true;
}

/*
 * Sends what the window allows, at most @budget packets, taking new SQ
 * entries as it goes.  A WQE that failed before sending completes with its
 * error once it is the oldest.  True when the budget ran out.  In RTS or
 * SQD.
 */
bool softrma_wire_send(struct softrma_qp *qp, u32 budget)
{
	struct softrma_wire *w = qp->wire;
	struct softrma_wqe *wqe;

	softrma_qp_assert_sq(qp);
	if (qp->head_wait)
		return false;
	for (u32 i = qp->sq.index; ; i++) {
		if (i == w->next_index && !softrma_wire_take(qp))
			break;
		wqe = softrma_wire_wqe(qp, i);
		/* A local operation, executed when taken, sends nothing. */
		if (wqe->status == IB_WC_SUCCESS &&
		    roce_wr_op(wqe->msg.opcode)->local) {
			softrma_wire_complete_head(qp, IB_WC_SUCCESS);
			continue;
		}
		if (wqe->status != IB_WC_SUCCESS) {
			if (i == qp->sq.index)
				softrma_wire_complete_head(qp, wqe->status);
			else
				softrma_wire_ask_ack(qp);
			break;
		}
		if (!softrma_wire_send_wqe(qp, wqe, &budget))
			break;
		/*
		 * UC: sent is done, and so was everything before it; nothing
		 * is outstanding that the PSN span must wait for.
		 */
		if (!softrma_qp_is_reliable(qp)) {
			w->comp_psn = roce_psn_add(wqe->last_psn, 1);
			softrma_wire_complete_head(qp, IB_WC_SUCCESS);
		}
	}
	return !budget;
}

/*
 * The completer hands sending to a work item of the QP rather than sending
 * in the receive worker itself, so that packets are received while the
 * window's packets go out.
 */
void softrma_wire_kick(struct softrma_qp *qp)
{
	softrma_qp_assert_sq(qp);
	if (!qp->dying)
		queue_work(softrma_wq, &qp->wire->send_work);
}

/*
 * Sends at most @budget packets and leaves whatever is left to the send
 * work.  In RTS or SQD.
 */
void softrma_wire_send_run(struct softrma_qp *qp, u32 budget)
{
	softrma_qp_assert_sq(qp);
	if (softrma_wire_send(qp, budget))
		softrma_wire_kick(qp);
}

void softrma_wire_send_work(struct work_struct *work)
{
	struct softrma_wire *w = container_of(work, struct softrma_wire,
					      send_work);
	struct softrma_qp *qp = w->qp;

	softrma_qp_lock_sq(qp);
	if (softrma_state_sends(softrma_qp_state(qp)) && !qp->dying)
		softrma_wire_send_run(qp, SOFTRMA_WIRE_RUN_PKTS);
	mutex_unlock(&qp->sq_lock);
}

static void softrma_wire_send_queue(struct softrma_qp *qp)
{
	softrma_wire_send_run(qp, SOFTRMA_WIRE_RUN_PKTS);
}

/* In error: the WQEs in flight complete with WR_FLUSH_ERR. */
static void softrma_wire_flush_err(struct softrma_qp *qp)
{
	softrma_qp_assert_sq(qp);
	while (qp->sq.index != qp->wire->next_index)
		softrma_wire_complete_head(qp, IB_WC_WR_FLUSH_ERR);
}

const struct softrma_transport softrma_wire_transport = {
	.send = softrma_wire_send_queue,
	.flush_err = softrma_wire_flush_err,
};
