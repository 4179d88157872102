// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The responder of connected QPs on the wire, packet by packet.  A packet
 * with the expected PSN is checked (opcode sequence, payload length, then
 * the QP's rights and the target memory) and executed; RC answers it as the
 * requester asked (wire_answer.c) and NAKs what it cannot execute.  READs,
 * atomics, FLUSHes and ATOMIC WRITEs are kept as responder resources; a
 * duplicate of one is answered again only when it asks for what was
 * accepted, and nothing executes twice.  Duplicate SENDs and WRITEs are
 * acknowledged again; a PSN beyond the expected one gets a sequence NAK.
 * UC drops the message in progress on any gap or error.
 *
 * A SEND takes its receive WQE out of the ring with its first packet, so
 * that an SRQ shared by several QPs hands each message its own.  A UC
 * message that is dropped keeps its receive for the next message.
 */

#include "wire.h"

static void softrma_wire_resp_count(struct softrma_qp *qp,
				    enum softrma_counter c)
{
	softrma_count(to_sdev(qp->ibqp.device), c);
}

/* Ends the message in progress; a held receive stays for the next one. */
static void softrma_wire_resp_end_msg(struct softrma_wire_resp *r)
{
	softrma_sgl_release(&r->target);
	r->last_op = ROCE_OP_NONE;
	r->offset = 0;
}

/*
 * Drops the message in progress.  With @flush (the QP is in error) its
 * receive completes with WR_FLUSH_ERR; otherwise (reset, destroy) it is
 * forgotten with the queue.
 */
void softrma_wire_resp_abandon(struct softrma_qp *qp, bool flush)
{
	struct softrma_wire_resp *r = &qp->wire->resp;

	lockdep_assert_held(&qp->rq_lock);
	softrma_wire_answer_reset(qp);
	softrma_wire_resp_end_msg(r);
	if (!r->rqe_held)
		return;
	softrma_sgl_release(&r->rqe_sgl);
	r->rqe_held = false;
	if (flush)
		softrma_resp_post_recv_cqe(qp, NULL, IB_WC_WR_FLUSH_ERR,
					   IB_WC_RECV, 0);
}

/* The request a completion reports: who sent it, immediate data, SE. */
static struct softrma_msg softrma_wire_resp_msg(struct softrma_qp *qp,
						const struct roce_pkt *pkt,
						u32 wr_opcode)
{
	return (struct softrma_msg) {
		.opcode = wr_opcode,
		.send_flags = pkt->se ? IB_SEND_SOLICITED : 0,
		.imm_data = pkt->imm,
		.qp_type = qp->ibqp.qp_type,
		.src_qpn = qp->attr.dest_qp_num,
	};
}

/* Completes the held receive; false when the receive CQ overflowed. */
static bool softrma_wire_resp_complete(struct softrma_qp *qp,
				       const struct roce_pkt *pkt,
				       u32 wr_opcode, enum ib_wc_status status,
				       enum ib_wc_opcode wc_opcode, u64 len)
{
	struct softrma_msg msg = softrma_wire_resp_msg(qp, pkt, wr_opcode);
	struct softrma_wire_resp *r = &qp->wire->resp;

	softrma_sgl_release(&r->rqe_sgl);
	r->rqe_held = false;
	return softrma_resp_post_recv_cqe(qp, &msg, status, wc_opcode, len);
}

/* The receive WQE for the message of @pkt: the held one, or the next. */
static enum softrma_resp_result softrma_wire_resp_hold_rqe(struct softrma_qp *qp,
							   const struct roce_pkt *pkt)
{
	struct softrma_wire_resp *r = &qp->wire->resp;
	struct softrma_msg msg = softrma_wire_resp_msg(qp, pkt, IB_WR_SEND);
	int err;

	if (r->rqe_held)
		return SOFTRMA_RESP_ACK;
	err = softrma_resp_take_rqe(qp, &r->rqe_sgl, &msg);
	if (err == -EAGAIN)
		return SOFTRMA_RESP_RNR_NAK;
	if (err)
		return SOFTRMA_RESP_NAK_OP;
	r->rqe_held = true;
	return SOFTRMA_RESP_ACK;
}

static bool softrma_pkt_has_imm(const struct roce_pkt *pkt)
{
	return roce_opcode_hdrs(pkt->opcode) & ROCE_HDR_IMMDT;
}

/*
 * The payload of @pkt, at the message's offset in @dst; false when an MR of
 * @dst was deregistered since the message began.
 */
static bool softrma_wire_resp_place(struct softrma_wire_resp *r,
				    struct softrma_sgl *dst,
				    const struct roce_pkt *pkt,
				    const u8 *payload)
{
	struct softrma_sgl data;

	softrma_sgl_init_kbuf(&data, (void *)payload, pkt->payload_len);
	if (softrma_sgl_copy_at(dst, r->offset, &data, 0, pkt->payload_len))
		return false;
	r->offset += pkt->payload_len;
	return true;
}

/* A SEND packet: the first takes a receive, the last completes it. */
static enum softrma_resp_result softrma_wire_resp_send(struct softrma_qp *qp,
						       const struct roce_pkt *pkt,
						       const u8 *payload, u8 op)
{
	struct softrma_wire_resp *r = &qp->wire->resp;
	u32 wr_op = softrma_pkt_has_imm(pkt) ? IB_WR_SEND_WITH_IMM : IB_WR_SEND;
	enum softrma_resp_result res;

	if (r->last_op == ROCE_OP_NONE) {
		res = softrma_wire_resp_hold_rqe(qp, pkt);
		if (res != SOFTRMA_RESP_ACK)
			return res;
	}
	if (r->offset + pkt->payload_len > r->rqe_sgl.length) {
		softrma_wire_resp_complete(qp, pkt, wr_op, IB_WC_LOC_LEN_ERR,
					   IB_WC_RECV, 0);
		return SOFTRMA_RESP_NAK_INV_REQ;
	}
	if (!softrma_wire_resp_place(r, &r->rqe_sgl, pkt, payload)) {
		softrma_wire_resp_complete(qp, pkt, wr_op, IB_WC_LOC_PROT_ERR,
					   IB_WC_RECV, 0);
		return SOFTRMA_RESP_NAK_OP;
	}
	if (roce_op_ends_msg(op) &&
	    !softrma_wire_resp_complete(qp, pkt, wr_op, IB_WC_SUCCESS,
					IB_WC_RECV, r->offset))
		return SOFTRMA_RESP_NAK_OP;
	return SOFTRMA_RESP_ACK;
}

/* The first packet of a WRITE: its RETH names the target memory. */
static enum softrma_resp_result softrma_wire_resp_start_write(struct softrma_qp *qp,
							      const struct roce_pkt *pkt)
{
	struct softrma_wire_resp *r = &qp->wire->resp;

	if (!softrma_resp_allowed(qp, IB_WR_RDMA_WRITE))
		return SOFTRMA_RESP_NAK_INV_REQ;
	r->length = pkt->dma_len;
	r->offset = 0;
	return softrma_resp_rdma_target(qp, pkt->rkey, pkt->va, r->length,
					IB_WR_RDMA_WRITE, &r->target);
}

/*
 * A WRITE packet.  One that ends with immediate data needs a receive before
 * anything of it lands, and completes it.
 */
static enum softrma_resp_result softrma_wire_resp_write(struct softrma_qp *qp,
							const struct roce_pkt *pkt,
							const u8 *payload, u8 op)
{
	struct softrma_wire_resp *r = &qp->wire->resp;
	bool last = roce_op_ends_msg(op);
	enum softrma_resp_result res;

	if (r->last_op == ROCE_OP_NONE) {
		res = softrma_wire_resp_start_write(qp, pkt);
		if (res != SOFTRMA_RESP_ACK)
			return res;
	}
	if (r->offset + pkt->payload_len > r->length ||
	    (last && r->offset + pkt->payload_len != r->length))
		return SOFTRMA_RESP_NAK_INV_REQ;
	if (softrma_pkt_has_imm(pkt)) {
		res = softrma_wire_resp_hold_rqe(qp, pkt);
		if (res != SOFTRMA_RESP_ACK)
			return res;
	}
	if (!softrma_wire_resp_place(r, &r->target, pkt, payload))
		return SOFTRMA_RESP_NAK_ACCESS;
	if (softrma_pkt_has_imm(pkt) &&
	    !softrma_wire_resp_complete(qp, pkt, IB_WR_RDMA_WRITE_WITH_IMM,
					IB_WC_SUCCESS,
					IB_WC_RECV_RDMA_WITH_IMM, r->length))
		return SOFTRMA_RESP_NAK_OP;
	return SOFTRMA_RESP_ACK;
}

/*
 * Keeps the accepted request @pkt as a responder resource (with an
 * atomic's result @orig), and answers it in its turn.
 */
static enum softrma_resp_result softrma_wire_resp_keep(struct softrma_qp *qp,
						       const struct roce_pkt *pkt,
						       u64 orig)
{
	struct softrma_wire_resp *r = &qp->wire->resp;

	r->msn = roce_psn_add(r->msn, 1);
	roce_rsrc_add(&r->rsrc, pkt, qp->wire->mtu, r->msn, orig);
	softrma_wire_answer_run(qp, SOFTRMA_WIRE_COMP_BUDGET);
	return SOFTRMA_RESP_ACK;
}

/* A READ request: its memory is checked now, and again as it is read. */
static enum softrma_resp_result softrma_wire_resp_read(struct softrma_qp *qp,
						       const struct roce_pkt *pkt)
{
	enum softrma_resp_result res;
	struct softrma_sgl source;

	if (!softrma_resp_allowed(qp, IB_WR_RDMA_READ))
		return SOFTRMA_RESP_NAK_INV_REQ;
	res = softrma_resp_rdma_target(qp, pkt->rkey, pkt->va, pkt->dma_len,
				       IB_WR_RDMA_READ, &source);
	if (res != SOFTRMA_RESP_ACK)
		return res;
	softrma_sgl_release(&source);
	return softrma_wire_resp_keep(qp, pkt, 0);
}

static enum softrma_resp_result softrma_wire_resp_atomic(struct softrma_qp *qp,
							 const struct roce_pkt *pkt,
							 u8 op)
{
	enum softrma_resp_result res;
	u64 orig;

	if (!softrma_resp_allowed(qp, IB_WR_ATOMIC_FETCH_AND_ADD))
		return SOFTRMA_RESP_NAK_INV_REQ;
	res = softrma_resp_atomic_exec(qp, pkt->rkey, pkt->va,
				       op == ROCE_CMP_SWAP,
				       op == ROCE_CMP_SWAP ? pkt->compare :
							     pkt->swap_add,
				       pkt->swap_add, &orig);
	if (res != SOFTRMA_RESP_ACK)
		return res;
	return softrma_wire_resp_keep(qp, pkt, orig);
}

/* FLUSH and ATOMIC WRITE, once executed, are kept like READs. */
static enum softrma_resp_result softrma_wire_resp_answered(struct softrma_qp *qp,
							   const struct roce_pkt *pkt,
							   enum softrma_resp_result res)
{
	if (res != SOFTRMA_RESP_ACK)
		return res;
	return softrma_wire_resp_keep(qp, pkt, 0);
}

/* ATOMIC WRITE: exactly 8 bytes, and a RETH that says so. */
static enum softrma_resp_result softrma_wire_resp_atomic_write(struct softrma_qp *qp,
							       const struct roce_pkt *pkt,
							       const u8 *payload)
{
	u64 value;

	if (!softrma_resp_allowed(qp, SOFTRMA_WR_ATOMIC_WRITE) ||
	    pkt->payload_len != sizeof(value) || pkt->dma_len != sizeof(value))
		return SOFTRMA_RESP_NAK_INV_REQ;
	memcpy(&value, payload, sizeof(value));
	return softrma_wire_resp_answered(qp, pkt,
		softrma_resp_atomic_write(qp, pkt->rkey, pkt->va, value));
}

/* FLUSH: the FETH's placement type (bits 3:0) and selectivity (5:4). */
static enum softrma_resp_result softrma_wire_resp_rdma_flush(struct softrma_qp *qp,
							const struct roce_pkt *pkt)
{
	return softrma_wire_resp_answered(qp, pkt,
		softrma_resp_rdma_flush(qp, pkt->rkey, pkt->va, pkt->dma_len,
					pkt->feth & 0xf, (pkt->feth >> 4) & 3));
}

/* The packet with the expected PSN. */
static enum softrma_resp_result softrma_wire_resp_execute(struct softrma_qp *qp,
							  const struct roce_pkt *pkt,
							  const u8 *payload)
{
	struct softrma_wire_resp *r = &qp->wire->resp;
	u8 op = pkt->opcode & 0x1f;

	if (!roce_seq_ok(r->last_op, op) ||
	    !roce_payload_ok(op, pkt->payload_len, qp->wire->mtu))
		return SOFTRMA_RESP_NAK_INV_REQ;
	switch (op) {
	case ROCE_SEND_FIRST ... ROCE_SEND_ONLY_IMM:
		return softrma_wire_resp_send(qp, pkt, payload, op);
	case ROCE_WRITE_FIRST ... ROCE_WRITE_ONLY_IMM:
		return softrma_wire_resp_write(qp, pkt, payload, op);
	case ROCE_READ_REQ:
		return softrma_wire_resp_read(qp, pkt);
	case ROCE_CMP_SWAP:
	case ROCE_FETCH_ADD:
		return softrma_wire_resp_atomic(qp, pkt, op);
	case ROCE_ATOMIC_WRITE:
		return softrma_wire_resp_atomic_write(qp, pkt, payload);
	case ROCE_FLUSH:
		return softrma_wire_resp_rdma_flush(qp, pkt);
	default:			/* SEND with invalidate */
		return SOFTRMA_RESP_NAK_INV_REQ;
	}
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
		softrma_wire_resp_end_msg(r);
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

static void softrma_wire_resp_rc(struct softrma_qp *qp,
				 const struct roce_pkt *pkt, const u8 *payload)
{
	struct softrma_wire_resp *r = &qp->wire->resp;
	int d = roce_psn_diff(pkt->psn, r->epsn);
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
	res = softrma_wire_resp_execute(qp, pkt, payload);
	switch (res) {
	case SOFTRMA_RESP_ACK:
		softrma_wire_resp_advance(qp, pkt);
		if (pkt->ackreq && !roce_op_is_rd_atomic(op))
			softrma_wire_answer_ack(qp, ROCE_AETH_ACK, pkt->psn);
		break;
	case SOFTRMA_RESP_RNR_NAK:
		/* It comes again: a message it began is not begun. */
		if (r->last_op == ROCE_OP_NONE)
			softrma_wire_resp_end_msg(r);
		softrma_wire_resp_count(qp, SOFTRMA_CNT_SENT_RNR_NAK);
		softrma_wire_answer_ack(qp, softrma_resp_syndrome(res) |
					qp->attr.min_rnr_timer, pkt->psn);
		break;
	default:
		softrma_wire_answer_ack(qp, softrma_resp_syndrome(res),
					pkt->psn);
		softrma_qp_set_error(qp);
		break;
	}
}

/* UC: a gap or an error drops the message in progress, and only that. */
static void softrma_wire_resp_uc(struct softrma_qp *qp,
				 const struct roce_pkt *pkt, const u8 *payload)
{
	struct softrma_wire_resp *r = &qp->wire->resp;

	if (pkt->psn != r->epsn) {
		softrma_drop(to_sdev(qp->ibqp.device), SOFTRMA_CNT_OUT_OF_SEQ);
		softrma_wire_resp_end_msg(r);
		r->epsn = pkt->psn;
	}
	if (softrma_wire_resp_execute(qp, pkt, payload) == SOFTRMA_RESP_ACK) {
		softrma_wire_resp_advance(qp, pkt);
		return;
	}
	softrma_drop(to_sdev(qp->ibqp.device), SOFTRMA_CNT_RCVD_DROPPED);
	softrma_wire_resp_end_msg(r);
	r->epsn = roce_psn_add(pkt->psn, 1);
}

/* A request packet from the peer of @qp. */
void softrma_wire_resp_packet(struct softrma_qp *qp,
			      const struct roce_pkt *pkt, const u8 *payload,
			      const struct softrma_av *from)
{
	mutex_lock(&qp->rq_lock);
	if (softrma_state_responds(softrma_qp_state(qp)) &&
	    softrma_qp_from_peer(qp, from)) {
		if (softrma_qp_is_reliable(qp))
			softrma_wire_resp_rc(qp, pkt, payload);
		else
			softrma_wire_resp_uc(qp, pkt, payload);
	}
	mutex_unlock(&qp->rq_lock);
}
