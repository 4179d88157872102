// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The answers of the responder of RC QPs on the wire.  READ responses,
 * atomic acknowledgements and the empty responses of FLUSH and ATOMIC WRITE
 * come from the QP's responder resources (proto/rsrc.c) in PSN order; an
 * ACK, RNR NAK or sequence NAK waits behind them, as the requester takes
 * an acknowledgement to cover everything before it.  The receive worker
 * sends a few of them itself and leaves the rest to the QP's answer work,
 * which sends SOFTRMA_WIRE_ANSWER_PKTS a run and queues itself again behind
 * the other QPs' work: no request makes the receive worker send more than
 * a few packets, and no QP's READs hold up the others'.  While an
 * acknowledgement waits, the QP's requester sends nothing new: what the
 * application sends after a receive completes must not overtake the
 * acknowledgement of that receive's message.
 *
 * An ACK with nothing before it waits for the end of the batch of received
 * packets (net.c), in process context or in the softirq, so that one ACK
 * answers every request of the batch that asked for one.  Anything else
 * the responder sends, and any request of the QP's own requester, sends it
 * first: a requester learns that its message arrived before it sees what
 * its peer sent in reply.  Messages that did not ask are acknowledged only
 * before the QP's next request message, or by the next answer: a requester
 * that waits for that (a fence behind them) has it with the reply.
 */

#include <linux/build_bug.h>

#include "trace.h"
#include "wire.h"

static_assert(SOFTRMA_MAX_RD_ATOMIC <= ROCE_RSRC_MAX);

/*
 * Returns 0, or an error of softrma_net_xmit(): -EFAULT, memory gone;
 * -EAGAIN, an ODP page not there yet.
 */
static int softrma_wire_answer_put(struct softrma_qp *qp, struct roce_pkt *pkt,
				   const struct softrma_sgl *payload, u64 off)
{
	pkt->opcode |= softrma_wire_group(qp);
	pkt->dqpn = qp->attr.dest_qp_num;
	return softrma_net_xmit(qp, &qp->path, pkt, payload, off);
}

static void softrma_wire_answer_put_ack(struct softrma_qp *qp, u8 syndrome,
					u32 psn, u32 msn)
{
	struct roce_pkt pkt = {
		.opcode = ROCE_ACK,
		.psn = psn,
		.syndrome = syndrome,
		.msn = msn,
	};

	if (roce_aeth_kind(syndrome) != ROCE_AETH_KIND_ACK)
		trace_softrma_nak(qp, psn, syndrome, true);
	softrma_wire_answer_put(qp, &pkt, NULL, 0);
}

/**
 * softrma_wire_answer_flush() - Sends the ACK that waits for the batch's end.
 * @qp: whose responder deferred it, or did not (then nothing is sent)
 * @owed: the ACK owed for requests that did not ask goes too
 *
 * Sent under its lock, and cleared only once it has gone: a request of the
 * QP's requester that finds it clear goes after it (softrma_wire_xmit()).
 *
 * Context: Any; takes the deferred ACK's lock with BH off.
 */
void softrma_wire_answer_flush(struct softrma_qp *qp, bool owed)
{
	struct softrma_wire_resp *r = &qp->wire->resp;

	if (!smp_load_acquire(&r->ack_deferred) &&
	    !(owed && smp_load_acquire(&r->ack_owed)))
		return;
	spin_lock_bh(&r->deferred_lock);
	if (r->ack_deferred || (owed && r->ack_owed)) {
		if (softrma_state_responds(softrma_qp_state(qp)))
			softrma_wire_answer_put_ack(qp, ROCE_AETH_ACK,
						    r->deferred_psn,
						    r->deferred_msn);
		smp_store_release(&r->ack_owed, false);
		smp_store_release(&r->ack_deferred, false);
	}
	spin_unlock_bh(&r->deferred_lock);
}

/**
 * softrma_wire_answer_owe() - Notes a message that did not ask for an ACK.
 * @qp: whose responder executed it
 * @psn: the PSN of its last packet
 *
 * Its ACK goes before the first packet of the QP's next request message
 * (softrma_wire_answer_flush()), unless an answer that covers it goes first
 * (softrma_wire_answer_flush_before()): one ACK a message even when both
 * sides stream.
 *
 * Context: Under @qp's rq_lock, or its gate.
 */
void softrma_wire_answer_owe(struct softrma_qp *qp, u32 psn)
{
	struct softrma_wire_resp *r = &qp->wire->resp;

	softrma_qp_assert_rq(qp);
	if (roce_rsrc_pending(&r->rsrc) || r->ack_waits)
		return;			/* the answers that wait cover it */
	spin_lock_bh(&r->deferred_lock);
	r->deferred_psn = psn;
	r->deferred_msn = r->msn;
	WRITE_ONCE(r->ack_owed, true);
	spin_unlock_bh(&r->deferred_lock);
}

/*
 * Before an answer for @psn: a deferred ACK goes first.  An owed one does
 * not: the answer acknowledges what came before it, and an ACK beyond the
 * PSN of a READ answered again would tell the requester that the READ's
 * responses were lost.
 */
static void softrma_wire_answer_flush_before(struct softrma_qp *qp, u32 psn)
{
	struct softrma_wire_resp *r = &qp->wire->resp;

	if (smp_load_acquire(&r->ack_owed)) {
		spin_lock_bh(&r->deferred_lock);
		if (!r->ack_deferred) {
			if (roce_psn_diff(psn, r->deferred_psn) > 0)
				WRITE_ONCE(r->ack_owed, false);
			spin_unlock_bh(&r->deferred_lock);
			return;
		}
		spin_unlock_bh(&r->deferred_lock);
	}
	softrma_wire_answer_flush(qp, true);
}

static int softrma_wire_answer_xmit(struct softrma_qp *qp,
				    struct roce_pkt *pkt,
				    const struct softrma_sgl *payload, u64 off)
{
	softrma_wire_answer_flush_before(qp, pkt->psn);
	return softrma_wire_answer_put(qp, pkt, payload, off);
}

static void softrma_wire_answer_ack_now(struct softrma_qp *qp, u8 syndrome,
					u32 psn)
{
	softrma_wire_answer_flush_before(qp, psn);
	softrma_wire_answer_put_ack(qp, syndrome, psn, qp->wire->resp.msn);
}

/* An ACK for @psn, now or with the others of the receive batch. */
static void softrma_wire_answer_ack_soon(struct softrma_qp *qp, u32 psn)
{
	struct softrma_wire_resp *r = &qp->wire->resp;

	if (!softrma_net_rx_defer_ack(qp)) {
		softrma_wire_answer_ack_now(qp, ROCE_AETH_ACK, psn);
		return;
	}
	spin_lock_bh(&r->deferred_lock);
	if (r->ack_deferred)
		softrma_count(to_sdev(qp->ibqp.device),
			      SOFTRMA_CNT_COALESCED_ACKS);
	r->deferred_psn = psn;
	r->deferred_msn = r->msn;
	WRITE_ONCE(r->ack_deferred, true);
	spin_unlock_bh(&r->deferred_lock);
}

static void softrma_wire_answer_drop_source(struct softrma_wire_resp *r)
{
	softrma_sgl_release(&r->src);
	r->src_held = false;
}

/* The MR of READ @res, checked (an XRC TGT QP's, in its SRQ's PD). */
static struct softrma_mr *softrma_wire_answer_target(struct softrma_qp *qp,
						     const struct roce_rsrc *res)
{
	struct softrma_mr *mr;

	if (softrma_qp_is_xrc_tgt(qp) &&
	    !softrma_xrc_take(qp, res->xrc_srqn, 0))
		return NULL;
	mr = softrma_resp_target(qp, res->rkey, res->va, res->len,
				 IB_WR_RDMA_READ);
	softrma_xrc_leave(qp);
	return mr;
}

/* A READ whose memory went answers @psn with a NAK, the QP in error. */
static void softrma_wire_answer_gone(struct softrma_qp *qp, u32 psn)
{
	softrma_wire_answer_ack(qp, ROCE_AETH_NAK_REM_ACCESS, psn);
	softrma_qp_set_error(qp);
}

/*
 * The memory READ @res answers from, checked again as it may have gone
 * since the READ was accepted; false after a NAK, the QP in error.
 */
static bool softrma_wire_answer_source(struct softrma_qp *qp,
				       const struct roce_rsrc *res)
{
	struct softrma_wire_resp *r = &qp->wire->resp;
	struct softrma_mr *mr;

	if (!res->len || (r->src_held && r->src_id == res->id))
		return true;
	softrma_wire_answer_drop_source(r);
	mr = softrma_wire_answer_target(qp, res);
	if (!mr) {
		softrma_wire_answer_gone(qp, roce_psn_add(res->psn, res->next));
		return false;
	}
	softrma_sgl_init_mr(&r->src, mr, res->va, res->len);
	softrma_mr_put(mr);
	r->src_id = res->id;
	r->src_held = true;
	return true;
}

/*
 * Sends at most @budget answers, oldest first, then the acknowledgement
 * that waits behind them.  True when answers are left.
 */
static bool softrma_wire_answer_send(struct softrma_qp *qp, u32 budget)
{
	struct softrma_wire_resp *r = &qp->wire->resp;
	struct roce_rsrc *res;

	softrma_qp_assert_rq(qp);
	while ((res = roce_rsrc_pending(&r->rsrc))) {
		bool read = res->op == ROCE_READ_REQ;
		struct roce_pkt pkt = {};
		u64 off;
		int err;

		if (!budget--)
			return true;
		if (read && !softrma_wire_answer_source(qp, res))
			return false;
		roce_rsrc_answer(res, qp->wire->mtu, &pkt, &off);
		/*
		 * Its pages may go as it is read (ODP): -EFAULT.  One not
		 * there yet (-EAGAIN) is the next answer again, for the work.
		 */
		err = softrma_wire_answer_xmit(qp, &pkt, read ? &r->src : NULL,
					       off);
		if (err == -EAGAIN) {
			roce_rsrc_unanswer(res);
			return true;
		}
		if (err == -EFAULT) {
			softrma_wire_answer_gone(qp, pkt.psn);
			return false;
		}
	}
	softrma_wire_answer_drop_source(r);
	if (r->ack_waits) {
		softrma_wire_answer_ack_now(qp, r->ack_syndrome, r->ack_psn);
		/*
		 * Only once it has gone: a doorbell racing with this sends at
		 * once what the requester held back (softrma_wire_take()).
		 */
		smp_store_release(&r->ack_waits, false);
		if (!READ_ONCE(qp->dying))
			queue_work(softrma_wq, &qp->wire->send_work);
	}
	return false;
}

/*
 * An ACK, RNR NAK or sequence NAK goes behind the answers that wait; a NAK
 * that ends the connection goes at once, and nothing after it.  A NAK that
 * waits stands until a later PSN is answered: an ACK for a duplicate, or
 * another NAK for its PSN, would have the requester send again at once
 * rather than wait out an RNR NAK, or not at all.
 */
void softrma_wire_answer_ack(struct softrma_qp *qp, u8 syndrome, u32 psn)
{
	struct softrma_wire_resp *r = &qp->wire->resp;

	softrma_qp_assert_rq(qp);
	if (roce_aeth_kind(syndrome) == ROCE_AETH_KIND_NAK &&
	    roce_aeth_value(syndrome)) {
		softrma_wire_answer_reset(qp);
		softrma_wire_answer_ack_now(qp, syndrome, psn);
		return;
	}
	if (!roce_rsrc_pending(&r->rsrc)) {
		if (syndrome == ROCE_AETH_ACK)
			softrma_wire_answer_ack_soon(qp, psn);
		else
			softrma_wire_answer_ack_now(qp, syndrome, psn);
		return;
	}
	if (r->ack_waits &&
	    roce_aeth_kind(r->ack_syndrome) != ROCE_AETH_KIND_ACK &&
	    roce_psn_diff(psn, r->ack_psn) <= 0)
		return;
	WRITE_ONCE(r->ack_waits, true);
	r->ack_syndrome = syndrome;
	r->ack_psn = psn;
}

/* Sends at most @budget answers and leaves the rest to the answer work. */
void softrma_wire_answer_run(struct softrma_qp *qp, u32 budget)
{
	if (softrma_wire_answer_send(qp, budget) && !READ_ONCE(qp->dying))
		queue_work(softrma_wq, &qp->wire->answer_work);
}

void softrma_wire_answer_work(struct work_struct *work)
{
	struct softrma_wire *w = container_of(work, struct softrma_wire,
					      answer_work);
	struct softrma_qp *qp = w->qp;

	softrma_qp_lock_rq(qp);
	if (softrma_state_responds(softrma_qp_state(qp)))
		softrma_wire_answer_run(qp, SOFTRMA_WIRE_ANSWER_PKTS);
	mutex_unlock(&qp->rq_lock);
}

/* Forgets the resources and what they had to send, for a new connection too. */
void softrma_wire_answer_reset(struct softrma_qp *qp)
{
	struct softrma_wire_resp *r = &qp->wire->resp;

	roce_rsrc_reset(&r->rsrc, qp->attr.max_dest_rd_atomic);
	softrma_wire_answer_drop_source(r);
	WRITE_ONCE(r->ack_waits, false);
	spin_lock_bh(&r->deferred_lock);
	WRITE_ONCE(r->ack_deferred, false);
	WRITE_ONCE(r->ack_owed, false);
	spin_unlock_bh(&r->deferred_lock);
}

bool softrma_wire_answer_pending(struct softrma_qp *qp)
{
	struct softrma_wire_resp *r = &qp->wire->resp;

	return roce_rsrc_pending(&r->rsrc) || r->ack_waits ||
	       READ_ONCE(r->ack_deferred);
}
