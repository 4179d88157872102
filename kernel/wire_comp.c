// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The completer of RC QPs on the wire: acknowledgements, NAKs, READ
 * responses and atomic acknowledgements retire the WQEs in flight, oldest
 * first.  Whatever the peer has not acknowledged is sent again from the
 * oldest unacknowledged PSN (go-back-N): after a PSN sequence NAK, an RNR
 * NAK (once its timer ran out), missing READ responses, or the
 * retransmission timer.  Acknowledgements for PSNs never sent are ignored.
 */

#include "trace.h"
#include "wire.h"

static struct softrma_wqe *softrma_wire_head(struct softrma_qp *qp)
{
	if (qp->sq.index == qp->wire->next_index)
		return NULL;
	return softrma_wire_wqe(qp, qp->sq.index);
}

/*
 * After a loss the window grows back by one packet per window acknowledged,
 * as TCP's does in congestion avoidance.  By one per acknowledgement, a
 * READ's responses, each one, doubled it every round trip, back into the
 * losses of a link that cannot take that burst.
 */
static void softrma_wire_grow(struct softrma_wire *w, u32 acked)
{
	if (w->window == SOFTRMA_WIRE_PSNS)
		return;
	w->window_acked += acked;
	if (w->window_acked >= w->window) {
		w->window_acked = 0;
		w->window++;
	}
}

static void softrma_wire_progress(struct softrma_qp *qp, u32 comp_psn)
{
	struct softrma_wire *w = qp->wire;

	softrma_wire_grow(w, roce_psn_diff(comp_psn, w->comp_psn));
	w->comp_psn = comp_psn;
	w->retry_left = qp->attr.retry_cnt;
	w->rewound = false;
	w->probed = false;
	softrma_wire_arm_timer(qp, true);
}

/* Makes the requester send everything from the oldest unacknowledged PSN. */
static void softrma_wire_rewind(struct softrma_qp *qp)
{
	struct softrma_wire *w = qp->wire;
	struct softrma_wqe *wqe;

	trace_softrma_rewind(qp, w->comp_psn, w->window);
	w->rewound = true;
	for (u32 i = qp->sq.index; i != w->next_index; i++) {
		wqe = softrma_wire_wqe(qp, i);
		if (roce_psn_diff(w->comp_psn, wqe->first_psn) > 0 &&
		    roce_psn_diff(w->comp_psn, wqe->last_psn) <= 0)
			wqe->next_psn = w->comp_psn;
		else if (roce_psn_diff(wqe->next_psn, w->comp_psn) > 0)
			wqe->next_psn = wqe->first_psn;
	}
	w->noack_pkts = 0;
	/* What asked beyond comp_psn may never have arrived: it asks again. */
	w->ackreq_psn = roce_psn_add(w->comp_psn, -1);
}

/*
 * A loss: rewinds once until the next progress unless @again, and halves
 * the window on the first.
 */
static void softrma_wire_go_back(struct softrma_qp *qp, bool again)
{
	struct softrma_wire *w = qp->wire;

	if (w->rewound && !again)
		return;
	if (!w->rewound) {
		w->window = max_t(u32, w->window / 2, SOFTRMA_WIRE_MIN_WINDOW);
		w->window_acked = 0;
	}
	softrma_wire_rewind(qp);
}

/* Retires the WQEs that the peer acknowledged up to and including @psn. */
static void softrma_wire_acked(struct softrma_qp *qp, u32 psn)
{
	struct softrma_wire *w = qp->wire;
	struct softrma_wqe *wqe;

	while ((wqe = softrma_wire_head(qp)) && wqe->status == IB_WC_SUCCESS) {
		if (softrma_wqe_waits_response(wqe)) {
			/* Acknowledged beyond it: its responses were lost. */
			if (roce_psn_diff(psn, wqe->last_psn) >= 0)
				softrma_wire_go_back(qp, false);
			return;
		}
		if (roce_psn_diff(psn, wqe->last_psn) < 0) {
			if (roce_psn_diff(psn, w->comp_psn) >= 0)
				softrma_wire_progress(qp, roce_psn_add(psn, 1));
			return;
		}
		softrma_wire_progress(qp, roce_psn_add(wqe->last_psn, 1));
		softrma_wire_complete_head(qp, IB_WC_SUCCESS);
	}
}

/* An acknowledgement may name the PSN before the oldest, up to the last sent. */
static bool softrma_wire_psn_valid(struct softrma_wire *w, u32 psn)
{
	return roce_psn_diff(psn, w->comp_psn) >= -1 &&
	       roce_psn_diff(psn, w->max_psn) < 0;
}

static void softrma_wire_count(struct softrma_qp *qp, enum softrma_counter c)
{
	softrma_count(to_sdev(qp->ibqp.device), c);
}

/* A NAK for @psn: everything before it was executed. */
static void softrma_wire_nak(struct softrma_qp *qp, u32 psn, u8 syndrome)
{
	struct softrma_wire *w = qp->wire;
	u8 value = roce_aeth_value(syndrome);

	trace_softrma_nak(qp, psn, syndrome, false);
	softrma_wire_acked(qp, roce_psn_add(psn, -1));
	if (!softrma_wire_head(qp))
		return;
	if (roce_aeth_kind(syndrome) == ROCE_AETH_KIND_RNR) {
		softrma_wire_count(qp, SOFTRMA_CNT_RCVD_RNR_NAK);
		if (!softrma_sq_rnr_wait(qp, value)) {
			softrma_wire_complete_head(qp, IB_WC_RNR_RETRY_EXC_ERR);
			return;
		}
		/*
		 * The peer lacks receives: no loss, and no ACK timeout while
		 * it is waited out.  The packets sent again start the timer.
		 */
		cancel_delayed_work(&w->retrans_work);
		softrma_wire_rewind(qp);
		return;
	}
	if (value != 0) {
		softrma_wire_complete_head(qp, softrma_nak_status(syndrome));
		return;
	}
	softrma_wire_count(qp, SOFTRMA_CNT_RCVD_SEQ_NAK);
	/*
	 * The first NAK of a gap costs a retry.  The responder NAKs again
	 * only when what was sent again went missing as well; without
	 * progress, the timer counts those retries.
	 */
	if (!w->rewound) {
		if (!w->retry_left) {
			softrma_wire_complete_head(qp, IB_WC_RETRY_EXC_ERR);
			return;
		}
		w->retry_left--;
	}
	softrma_wire_go_back(qp, true);
}

static void softrma_wire_ack(struct softrma_qp *qp, const struct roce_pkt *pkt)
{
	switch (roce_aeth_kind(pkt->syndrome)) {
	case ROCE_AETH_KIND_ACK:
		softrma_wire_acked(qp, pkt->psn);
		break;
	case ROCE_AETH_KIND_RNR:
	case ROCE_AETH_KIND_NAK:
		softrma_wire_nak(qp, pkt->psn, pkt->syndrome);
		break;
	default:
		break;
	}
}

/*
 * The oldest WQE, when it waits for the response @pkt and @pkt is the
 * response it expects next; a gap sends the READ again from what is missing.
 */
static struct softrma_wqe *softrma_wire_responded(struct softrma_qp *qp,
						  const struct roce_pkt *pkt)
{
	struct softrma_wire *w = qp->wire;
	struct softrma_wqe *wqe;

	softrma_wire_acked(qp, roce_psn_add(pkt->psn, -1));
	wqe = softrma_wire_head(qp);
	if (!wqe || wqe->status != IB_WC_SUCCESS ||
	    !softrma_wqe_waits_response(wqe) ||
	    roce_psn_diff(pkt->psn, wqe->first_psn) < 0 ||
	    roce_psn_diff(pkt->psn, wqe->last_psn) > 0)
		return NULL;
	if (pkt->psn != w->comp_psn) {
		if (roce_psn_diff(pkt->psn, w->comp_psn) > 0)
			softrma_wire_go_back(qp, false);
		return NULL;
	}
	return wqe;
}

/* FLUSH and ATOMIC WRITE are answered by an empty READ response. */
static void softrma_wire_rma_ext_resp(struct softrma_qp *qp,
				      struct softrma_wqe *wqe,
				      const struct roce_pkt *pkt)
{
	if ((pkt->opcode & 0x1f) != ROCE_READ_RESP_ONLY || pkt->payload_len) {
		softrma_drop(to_sdev(qp->ibqp.device),
			     SOFTRMA_CNT_RCVD_MALFORMED);
		return;
	}
	softrma_wire_progress(qp, roce_psn_add(pkt->psn, 1));
	softrma_wire_complete_head(qp, IB_WC_SUCCESS);
}

/*
 * True when a response's payload did not land in the requester's memory
 * (@err from the copy): an MR gone or out of reach fails the WQE; for an
 * ODP page that is not there the packet is dropped while a work faults
 * the page in, and the request goes again at once.
 */
static bool softrma_wire_resp_unplaced(struct softrma_qp *qp, int err)
{
	if (err == -EAGAIN) {
		softrma_drop(to_sdev(qp->ibqp.device), SOFTRMA_CNT_RCVD_DROPPED);
		softrma_wire_go_back(qp, true);
	} else if (err) {
		softrma_wire_complete_head(qp, IB_WC_LOC_PROT_ERR);
	}
	return err;
}

static void softrma_wire_read_resp(struct softrma_qp *qp,
				   const struct roce_pkt *pkt,
				   const u8 *payload)
{
	struct softrma_wqe *wqe = softrma_wire_responded(qp, pkt);
	u32 mtu = qp->wire->mtu;
	SOFTRMA_SGL_ONE(data);
	u64 off;
	int err;

	if (!wqe || roce_wr_op(wqe->msg.opcode)->kind == ROCE_KIND_ATOMIC)
		return;
	if (!softrma_wqe_is_read(wqe)) {
		softrma_wire_rma_ext_resp(qp, wqe, pkt);
		return;
	}
	off = (u64)roce_psn_diff(pkt->psn, wqe->first_psn) * mtu;
	if (pkt->payload_len != min_t(u64, mtu, wqe->msg.length - off)) {
		softrma_drop(to_sdev(qp->ibqp.device),
			     SOFTRMA_CNT_RCVD_MALFORMED);
		return;
	}
	softrma_sgl_init_packet(&data, payload, pkt->payload_len);
	err = softrma_sgl_copy_at(&wqe->sgl, off, &data, 0, pkt->payload_len);
	if (softrma_wire_resp_unplaced(qp, err))
		return;
	softrma_wire_progress(qp, roce_psn_add(pkt->psn, 1));
	if (pkt->psn == wqe->last_psn)
		softrma_wire_complete_head(qp, IB_WC_SUCCESS);
}

static void softrma_wire_atomic_ack(struct softrma_qp *qp,
				    const struct roce_pkt *pkt)
{
	struct softrma_wqe *wqe = softrma_wire_responded(qp, pkt);
	u64 orig = pkt->atomic_orig;
	SOFTRMA_SGL_ONE(data);

	if (!wqe || roce_wr_op(wqe->msg.opcode)->kind != ROCE_KIND_ATOMIC)
		return;
	softrma_sgl_init_packet(&data, &orig, sizeof(orig));
	if (softrma_wire_resp_unplaced(qp, softrma_sgl_copy(&wqe->sgl, &data,
							  sizeof(orig))))
		return;
	softrma_wire_progress(qp, roce_psn_add(pkt->psn, 1));
	softrma_wire_complete_head(qp, IB_WC_SUCCESS);
}

static void softrma_wire_comp_take(struct softrma_qp *qp,
				   const struct roce_pkt *pkt,
				   const u8 *payload,
				   const struct softrma_av *from)
{
	u8 op = pkt->opcode & 0x1f;

	if (!softrma_state_sends(softrma_qp_state(qp)) ||
	    !softrma_qp_from_peer(qp, from) ||
	    !softrma_wire_psn_valid(qp->wire, pkt->psn))
		return;
	/* READ responses and atomic ACKs may carry a NAK in their AETH too. */
	if (op == ROCE_ACK ||
	    roce_aeth_kind(pkt->syndrome) != ROCE_AETH_KIND_ACK)
		softrma_wire_ack(qp, pkt);
	else if (op == ROCE_ATOMIC_ACK)
		softrma_wire_atomic_ack(qp, pkt);
	else
		softrma_wire_read_resp(qp, pkt, payload);
	if (softrma_state_sends(softrma_qp_state(qp)))
		softrma_wire_send_run(qp, SOFTRMA_WIRE_COMP_BUDGET);
}

/*
 * A response packet from the peer of the RC QP @qp; in the receive softirq
 * (@now), false when a process holds the requester.
 */
bool softrma_wire_comp_packet(struct softrma_qp *qp,
			      const struct roce_pkt *pkt, const u8 *payload,
			      const struct softrma_av *from, bool now)
{
	bool taken;

	if (!now) {
		softrma_qp_lock_sq(qp);
		softrma_wire_comp_take(qp, pkt, payload, from);
		mutex_unlock(&qp->sq_lock);
		return true;
	}
	taken = softrma_qp_enter(qp, &qp->sq_lock);
	if (taken)
		softrma_wire_comp_take(qp, pkt, payload, from);
	softrma_qp_leave(qp);
	return taken;
}

/* The retransmission timer: nothing acknowledged for the QP's timeout. */
void softrma_wire_retrans_work(struct work_struct *work)
{
	struct softrma_wire *w = container_of(to_delayed_work(work),
					      struct softrma_wire,
					      retrans_work);
	struct softrma_qp *qp = w->qp;

	softrma_qp_lock_sq(qp);
	if (!softrma_state_sends(softrma_qp_state(qp)) || qp->dying || qp->head_wait ||
	    roce_psn_diff(w->max_psn, w->comp_psn) <= 0 ||
	    !softrma_wire_head(qp))
		goto out;
	if (time_before(jiffies, w->retrans_at)) {
		/* There was progress since it was started. */
		queue_delayed_work(softrma_wq, &w->retrans_work,
				   w->retrans_at - jiffies);
		goto out;
	}
	if (softrma_wire_ask_ack(qp)) {
		softrma_wire_arm_timer(qp, true);
		goto out;
	}
	softrma_wire_count(qp, SOFTRMA_CNT_ACK_TIMEOUT);
	trace_softrma_ack_timeout(qp, w->comp_psn, w->retry_left);
	if (!w->retry_left) {
		softrma_wire_complete_head(qp, IB_WC_RETRY_EXC_ERR);
		goto out;
	}
	w->retry_left--;
	w->rewound = false;		/* a timeout is a loss of its own */
	softrma_wire_go_back(qp, true);
	softrma_wire_send_run(qp, SOFTRMA_WIRE_RUN_PKTS);
	softrma_wire_arm_timer(qp, true);
out:
	mutex_unlock(&qp->sq_lock);
}
