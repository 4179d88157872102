// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The wire's half of the responder of connected QPs: PSNs, duplicates,
 * the opcode sequence of a message's packets and their payload lengths,
 * and the answers.  A packet with the expected PSN becomes a request, or a
 * part of one, for the responder (resp.c), which checks and executes it;
 * RC answers it as the requester asked (wire_answer.c) and NAKs what the
 * responder refused.  READs, atomics, FLUSHes and ATOMIC WRITEs are kept as
 * responder resources; a duplicate of one is answered again only when it
 * asks for what was accepted, and nothing executes twice.  Duplicate SENDs
 * and WRITEs are acknowledged again; a PSN beyond the expected one gets a
 * sequence NAK.  UC drops the message in progress on any gap or error.
 */

#include "wire.h"

static void softrma_wire_resp_count(struct softrma_qp *qp,
				    enum softrma_counter c)
{
	softrma_count(to_sdev(qp->ibqp.device), c);
}

/* Ends the message in progress; a held receive stays for the next one. */
static void softrma_wire_resp_end_msg(struct softrma_qp *qp)
{
	softrma_resp_end_msg(qp);
	qp->wire->resp.last_op = ROCE_OP_NONE;
}

/**
 * softrma_wire_resp_reset() - Forgets the answers and the packet sequence.
 * @qp: the responder, whose message in progress is abandoned with it
 *	(softrma_resp_abandon())
 *
 * Context: Under @qp's rq_lock.
 */
void softrma_wire_resp_reset(struct softrma_qp *qp)
{
	softrma_qp_assert_rq(qp);
	softrma_wire_answer_reset(qp);
	qp->wire->resp.last_op = ROCE_OP_NONE;
}

/* The request, or the part of one, that @pkt carries with @payload. */
static bool softrma_wire_resp_msg(struct softrma_qp *qp,
				  const struct roce_pkt *pkt,
				  struct softrma_sgl *payload,
				  struct softrma_msg *msg)
{
	u8 op = pkt->opcode & 0x1f;

	*msg = (struct softrma_msg) {
		.send_flags = pkt->se ? IB_SEND_SOLICITED : 0,
		.imm_data = pkt->imm,
		.inv_rkey = pkt->inv_rkey,
		.qp_type = softrma_qp_transport(qp),
		.src_qpn = qp->attr.dest_qp_num,
		.xrc_srqn = pkt->xrc_srqn,
		.remote_addr = pkt->va,
		.rkey = pkt->rkey,
		.length = pkt->dma_len,
		/* The AtomicETH's "swap or add" is fetch-and-add's operand. */
		.compare_add = op == ROCE_CMP_SWAP ? pkt->compare :
						     pkt->swap_add,
		.swap = pkt->swap_add,
		/* FETH: placement type (bits 3:0) and selectivity (5:4) */
		.flush_type = pkt->feth & 0xf,
		.flush_level = (pkt->feth >> 4) & 3,
		.local = payload,
	};
	return roce_wr_of_pkt(op, &msg->opcode, &msg->part);
}

/*
 * Keeps the accepted request @pkt as a responder resource (with an
 * atomic's result), and answers it in its turn.
 */
static void softrma_wire_resp_keep(struct softrma_qp *qp,
				   const struct roce_pkt *pkt)
{
	struct softrma_wire_resp *r = &qp->wire->resp;

	/* A READ's memory is checked again as it is read. */
	softrma_resp_end_msg(qp);
	r->msn = roce_psn_add(r->msn, 1);
	roce_rsrc_add(&r->rsrc, pkt, qp->wire->mtu, r->msn,
		      qp->resp.atomic_orig);
	softrma_wire_answer_run(qp, SOFTRMA_WIRE_COMP_BUDGET);
}

/*
 * The packet with the expected PSN.  A receive it completes waits in @recv
 * when the caller asks for it (it is not NULL).
 */
static enum softrma_resp_result softrma_wire_resp_execute(struct softrma_qp *qp,
							  const struct roce_pkt *pkt,
							  const u8 *payload,
							  struct softrma_recv_cqe *recv)
{
	u8 op = pkt->opcode & 0x1f;
	enum softrma_resp_result res;
	SOFTRMA_SGL_ONE(data);
	struct softrma_msg msg;

	if (!roce_seq_ok(qp->wire->resp.last_op, op) ||
	    !roce_payload_ok(op, pkt->payload_len, qp->wire->mtu))
		return SOFTRMA_RESP_NAK_INV_REQ;
	softrma_sgl_init_packet(&data, payload, pkt->payload_len);
	if (!softrma_wire_resp_msg(qp, pkt, &data, &msg))
		return SOFTRMA_RESP_NAK_INV_REQ;	/* SEND with invalidate */
	msg.recv_cqe = recv;
	qp->resp.atomic_orig = 0;
	res = softrma_resp_request(qp, &msg);
	if (res == SOFTRMA_RESP_ACK && roce_wr_op(msg.opcode)->response)
		softrma_wire_resp_keep(qp, pkt);
	return res;
}

/* After @pkt executed: the next expected PSN and the message state. */
static void softrma_wire_resp_advance(struct softrma_qp *qp,
				      const struct roce_pkt *pkt)
{
	struct softrma_wire_resp *r = &qp->wire->resp;
	u8 op = pkt->opcode & 0x1f;

	if (op == ROCE_READ_REQ) {
		r->epsn = roce_psn_add(r->epsn,
				       roce_num_pkts(pkt->dma_len, qp->wire->mtu));
		return;
	}
	r->epsn = roce_psn_add(r->epsn, 1);
	if (roce_op_is_rd_atomic(op))
		return;
	if (roce_op_ends_msg(op)) {
		r->last_op = ROCE_OP_NONE;
		r->msn = roce_psn_add(r->msn, 1);
	} else {
		r->last_op = op;
	}
}

static void softrma_wire_resp_duplicate(struct softrma_qp *qp,
					const struct roce_pkt *pkt)
{
	struct softrma_wire_resp *r = &qp->wire->resp;

	softrma_wire_resp_count(qp, SOFTRMA_CNT_DUP_REQ);
	if (roce_op_is_rd_atomic(pkt->opcode & 0x1f)) {
		if (roce_rsrc_again(&r->rsrc, pkt, qp->wire->mtu))
			softrma_wire_answer_run(qp, SOFTRMA_WIRE_COMP_BUDGET);
		return;
	}
	/* As for new packets, only those that ask are acknowledged. */
	if (pkt->ackreq)
		softrma_wire_answer_ack(qp, ROCE_AETH_ACK,
					roce_psn_add(r->epsn, -1));
}

/*
 * A PSN beyond the expected one: something was lost.  One NAK says so, and
 * another goes only when the requester went back (a PSN lower than the
 * last one beyond) and its packet was lost again, or when many packets
 * arrived since, as when the NAK itself was lost.
 */
static void softrma_wire_resp_out_of_seq(struct softrma_qp *qp, u32 psn)
{
	struct softrma_wire_resp *r = &qp->wire->resp;

	softrma_drop(to_sdev(qp->ibqp.device), SOFTRMA_CNT_OUT_OF_SEQ);
	if (!r->nak_sent || roce_psn_diff(psn, r->oos_psn) < 0 ||
	    ++r->oos_pkts >= SOFTRMA_WIRE_ACK_EVERY) {
		softrma_wire_answer_ack(qp, ROCE_AETH_NAK_PSN_SEQ, r->epsn);
		r->nak_sent = true;
		r->oos_pkts = 0;
	}
	r->oos_psn = psn;
}

/*
 * A receive that the packet completes goes to its CQ once the packet is
 * answered: the application it wakes may send at once, and that request
 * must not overtake the acknowledgement, or its answer would complete at
 * the requester before the request it answers.
 */
static void softrma_wire_resp_rc(struct softrma_qp *qp,
				 const struct roce_pkt *pkt, const u8 *payload)
{
	struct softrma_wire_resp *r = &qp->wire->resp;
	int d = roce_psn_diff(pkt->psn, r->epsn);
	struct softrma_recv_cqe recv = {};
	enum softrma_resp_result res;
	u8 op = pkt->opcode & 0x1f;

	if (d < 0) {
		softrma_wire_resp_duplicate(qp, pkt);
		return;
	}
	if (d > 0) {
		softrma_wire_resp_out_of_seq(qp, pkt->psn);
		return;
	}
	r->nak_sent = false;
	res = softrma_resp_outcome(qp, softrma_wire_resp_execute(qp, pkt,
								 payload,
								 &recv));
	switch (res) {
	case SOFTRMA_RESP_ACK:
		softrma_wire_resp_advance(qp, pkt);
		if (roce_op_is_rd_atomic(op))
			break;
		if (pkt->ackreq)
			softrma_wire_answer_ack(qp, ROCE_AETH_ACK, pkt->psn);
		else if (roce_op_ends_msg(op))
			softrma_wire_answer_owe(qp, pkt->psn);
		break;
	case SOFTRMA_RESP_RNR_NAK:
		/* It comes again, with the message's state as it was. */
		softrma_wire_resp_count(qp, SOFTRMA_CNT_SENT_RNR_NAK);
		softrma_wire_answer_ack(qp, softrma_resp_syndrome(res) |
					qp->attr.min_rnr_timer, pkt->psn);
		break;
	default:			/* the QP is in error */
		softrma_wire_answer_ack(qp, softrma_resp_syndrome(res),
					pkt->psn);
		break;
	}
	softrma_resp_post_recv(qp, &recv);
}

/* UC: a gap or an error drops the message in progress, and only that. */
static void softrma_wire_resp_uc(struct softrma_qp *qp,
				 const struct roce_pkt *pkt, const u8 *payload)
{
	struct softrma_wire_resp *r = &qp->wire->resp;

	if (pkt->psn != r->epsn) {
		softrma_drop(to_sdev(qp->ibqp.device), SOFTRMA_CNT_OUT_OF_SEQ);
		softrma_wire_resp_end_msg(qp);
		r->epsn = pkt->psn;
	}
	if (softrma_resp_outcome(qp, softrma_wire_resp_execute(qp, pkt, payload,
							       NULL)) ==
	    SOFTRMA_RESP_ACK) {
		softrma_wire_resp_advance(qp, pkt);
		return;
	}
	softrma_drop(to_sdev(qp->ibqp.device), SOFTRMA_CNT_RCVD_DROPPED);
	softrma_wire_resp_end_msg(qp);
	r->epsn = roce_psn_add(pkt->psn, 1);
}

static void softrma_wire_resp_take(struct softrma_qp *qp,
				   const struct roce_pkt *pkt,
				   const u8 *payload,
				   const struct softrma_av *from)
{
	if (!softrma_resp_admits(qp, from))
		return;
	if (softrma_qp_is_reliable(qp))
		softrma_wire_resp_rc(qp, pkt, payload);
	else
		softrma_wire_resp_uc(qp, pkt, payload);
}

/*
 * A request packet from the peer of @qp.  The receive softirq (@now) takes
 * only the one with the expected PSN, for a QP with a receive queue of its
 * own (an SRQ's lock is a mutex): false for any other.
 */
bool softrma_wire_resp_packet(struct softrma_qp *qp,
			      const struct roce_pkt *pkt, const u8 *payload,
			      const struct softrma_av *from, bool now)
{
	bool taken;

	if (!now) {
		softrma_qp_lock_rq(qp);
		softrma_wire_resp_take(qp, pkt, payload, from);
		mutex_unlock(&qp->rq_lock);
		return true;
	}
	if (qp->ibqp.srq)
		return false;
	taken = softrma_qp_enter(qp, &qp->rq_lock) &&
		pkt->psn == qp->wire->resp.epsn;
	if (taken)
		softrma_wire_resp_take(qp, pkt, payload, from);
	softrma_qp_leave(qp);
	return taken;
}
