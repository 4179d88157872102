// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The responder of connected QPs on the wire, packet by packet.  A packet
 * with the expected PSN is checked (opcode sequence, payload length, then
 * the QP's rights and the target memory) and executed; RC answers it as the
 * requester asked and NAKs what it cannot execute.  RC re-acknowledges
 * duplicate SENDs and WRITEs, executes duplicate READs again and replays
 * the saved result of duplicate atomics; a PSN beyond the expected one gets
 * a sequence NAK.  UC drops the message in progress on any gap or error.
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

/* An acknowledgement @op (ACK, ATOMIC_ACK) with @syndrome for @psn. */
static void softrma_wire_resp_answer(struct softrma_qp *qp, u8 op, u8 syndrome,
				     u32 psn, u64 atomic_orig)
{
	struct roce_pkt pkt = {
		.opcode = ROCE_RC | op,
		.dqpn = qp->attr.dest_qp_num,
		.psn = psn,
		.syndrome = syndrome,
		.msn = qp->wire->resp.msn,
		.atomic_orig = atomic_orig,
	};

	softrma_net_xmit(qp, &qp->path, &pkt, NULL, 0);
}

/* An ACK, RNR NAK or NAK (@syndrome) for @psn. */
static void softrma_wire_resp_ack(struct softrma_qp *qp, u8 syndrome, u32 psn)
{
	softrma_wire_resp_answer(qp, ROCE_ACK, syndrome, psn, 0);
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
 * forgotten with the queue.  Under rq_lock.
 */
void softrma_wire_resp_abandon(struct softrma_qp *qp, bool flush)
{
	struct softrma_wire_resp *r = &qp->wire->resp;

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
static struct softrma_req softrma_wire_resp_req(struct softrma_qp *qp,
						const struct roce_pkt *pkt,
						u32 wr_opcode)
{
	return (struct softrma_req) {
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
	struct softrma_req req = softrma_wire_resp_req(qp, pkt, wr_opcode);
	struct softrma_wire_resp *r = &qp->wire->resp;

	softrma_sgl_release(&r->rqe_sgl);
	r->rqe_held = false;
	return softrma_resp_post_recv_cqe(qp, &req, status, wc_opcode, len);
}

/* The receive WQE for the message of @pkt: the held one, or the next. */
static enum softrma_resp_result softrma_wire_resp_hold_rqe(struct softrma_qp *qp,
							   const struct roce_pkt *pkt)
{
	struct softrma_wire_resp *r = &qp->wire->resp;
	struct softrma_req req = softrma_wire_resp_req(qp, pkt, IB_WR_SEND);
	int err;

	if (r->rqe_held)
		return SOFTRMA_RESP_ACK;
	err = softrma_resp_take_rqe(qp, &r->rqe_sgl, &req);
	if (err == -EAGAIN)
		return SOFTRMA_RESP_RNR_NAK;
	if (err)
		return SOFTRMA_RESP_NAK_OP;
	r->rqe_held = true;
	return SOFTRMA_RESP_ACK;
}

static bool softrma_op_has_imm(u8 op)
{
	return op == ROCE_SEND_LAST_IMM || op == ROCE_SEND_ONLY_IMM ||
	       op == ROCE_WRITE_LAST_IMM || op == ROCE_WRITE_ONLY_IMM;
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
	u32 wr_op = softrma_op_has_imm(op) ? IB_WR_SEND_WITH_IMM : IB_WR_SEND;
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
	struct softrma_mr *mr;

	if (!softrma_resp_allowed(qp, IB_WR_RDMA_WRITE))
		return SOFTRMA_RESP_NAK_INV_REQ;
	r->length = pkt->dma_len;
	r->offset = 0;
	if (!r->length)
		return SOFTRMA_RESP_ACK;
	mr = softrma_resp_target(qp, pkt->rkey, pkt->va, r->length,
				 IB_WR_RDMA_WRITE);
	if (!mr)
		return SOFTRMA_RESP_NAK_ACCESS;
	softrma_sgl_init_mr(&r->target, mr, pkt->va, r->length);
	softrma_mr_put(mr);
	return SOFTRMA_RESP_ACK;
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
	if (softrma_op_has_imm(op)) {
		res = softrma_wire_resp_hold_rqe(qp, pkt);
		if (res != SOFTRMA_RESP_ACK)
			return res;
	}
	if (!softrma_wire_resp_place(r, &r->target, pkt, payload))
		return SOFTRMA_RESP_NAK_ACCESS;
	if (softrma_op_has_imm(op) &&
	    !softrma_wire_resp_complete(qp, pkt, IB_WR_RDMA_WRITE_WITH_IMM,
					IB_WC_SUCCESS,
					IB_WC_RECV_RDMA_WITH_IMM, r->length))
		return SOFTRMA_RESP_NAK_OP;
	return SOFTRMA_RESP_ACK;
}

/*
 * A READ request: the responses, with PSNs from the request's on.  A
 * duplicate is executed again; memory is checked again either way.
 */
static enum softrma_resp_result softrma_wire_resp_read(struct softrma_qp *qp,
						       const struct roce_pkt *pkt)
{
	struct softrma_wire *w = qp->wire;
	u32 n = roce_num_pkts(pkt->dma_len, w->mtu);
	struct softrma_mr *mr = NULL;
	struct softrma_sgl src = {};

	if (!softrma_resp_allowed(qp, IB_WR_RDMA_READ))
		return SOFTRMA_RESP_NAK_INV_REQ;
	if (pkt->dma_len) {
		mr = softrma_resp_target(qp, pkt->rkey, pkt->va, pkt->dma_len,
					 IB_WR_RDMA_READ);
		if (!mr)
			return SOFTRMA_RESP_NAK_ACCESS;
		softrma_sgl_init_mr(&src, mr, pkt->va, pkt->dma_len);
	}
	if (pkt->psn == w->resp.epsn)
		w->resp.msn = roce_psn_add(w->resp.msn, 1);
	for (u32 i = 0; i < n; i++) {
		u64 off = (u64)i * w->mtu;
		struct roce_pkt resp = {
			.opcode = ROCE_RC | roce_msg_op(ROCE_MSG_READ_RESP, false,
							i == 0, i == n - 1),
			.dqpn = qp->attr.dest_qp_num,
			.psn = roce_psn_add(pkt->psn, i),
			.syndrome = ROCE_AETH_ACK,
			.msn = w->resp.msn,
			.payload_len = min_t(u64, w->mtu, pkt->dma_len - off),
		};

		softrma_net_xmit(qp, &qp->path, &resp, &src, off);
		cond_resched();
	}
	softrma_sgl_release(&src);
	if (mr)
		softrma_mr_put(mr);
	return SOFTRMA_RESP_ACK;
}

static void softrma_wire_resp_atomic_ack(struct softrma_qp *qp, u32 psn,
					 u64 orig)
{
	softrma_wire_resp_answer(qp, ROCE_ATOMIC_ACK, ROCE_AETH_ACK, psn, orig);
}

/* An atomic executes once; its result is kept for duplicates. */
static enum softrma_resp_result softrma_wire_resp_atomic(struct softrma_qp *qp,
							 const struct roce_pkt *pkt,
							 u8 op)
{
	struct softrma_wire_resp *r = &qp->wire->resp;
	enum softrma_resp_result res;
	struct softrma_mr *mr;
	u32 slot;
	u64 orig;

	if (!softrma_resp_allowed(qp, IB_WR_ATOMIC_FETCH_AND_ADD))
		return SOFTRMA_RESP_NAK_INV_REQ;
	mr = softrma_resp_atomic_target(qp, pkt->rkey, pkt->va,
					IB_WR_ATOMIC_FETCH_AND_ADD, &res);
	if (!mr)
		return res;
	slot = r->atomic_next++ % SOFTRMA_MAX_RD_ATOMIC;
	orig = softrma_mr_atomic(mr, pkt->va, op == ROCE_CMP_SWAP,
				 op == ROCE_CMP_SWAP ? pkt->compare :
						       pkt->swap_add,
				 pkt->swap_add);
	softrma_mr_put(mr);
	r->atomic[slot].psn = pkt->psn;
	r->atomic[slot].orig = orig;
	r->atomic_valid = min_t(u32, r->atomic_valid + 1, SOFTRMA_MAX_RD_ATOMIC);
	r->msn = roce_psn_add(r->msn, 1);
	softrma_wire_resp_atomic_ack(qp, pkt->psn, orig);
	return SOFTRMA_RESP_ACK;
}

/* FLUSH and ATOMIC WRITE are answered by an empty READ response. */
static void softrma_wire_resp_empty_read_resp(struct softrma_qp *qp, u32 psn)
{
	softrma_wire_resp_answer(qp, ROCE_READ_RESP_ONLY, ROCE_AETH_ACK, psn, 0);
}

static enum softrma_resp_result softrma_wire_resp_answered(struct softrma_qp *qp,
							   const struct roce_pkt *pkt,
							   enum softrma_resp_result res)
{
	struct softrma_wire_resp *r = &qp->wire->resp;

	if (res == SOFTRMA_RESP_ACK) {
		r->msn = roce_psn_add(r->msn, 1);
		softrma_wire_resp_empty_read_resp(qp, pkt->psn);
	}
	return res;
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
static enum softrma_resp_result softrma_wire_resp_flush(struct softrma_qp *qp,
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
		return softrma_wire_resp_flush(qp, pkt);
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
	u8 op = pkt->opcode & 0x1f;

	softrma_wire_resp_count(qp, SOFTRMA_CNT_DUP_REQ);
	if (op == ROCE_READ_REQ) {
		softrma_wire_resp_read(qp, pkt);
		return;
	}
	if (op == ROCE_CMP_SWAP || op == ROCE_FETCH_ADD) {
		for (u32 i = 0; i < r->atomic_valid; i++)
			if (r->atomic[i].psn == pkt->psn)
				softrma_wire_resp_atomic_ack(qp, pkt->psn,
							     r->atomic[i].orig);
		return;
	}
	/* Executed once; answered again, as their responses may be lost. */
	if (op == ROCE_FLUSH || op == ROCE_ATOMIC_WRITE) {
		softrma_wire_resp_empty_read_resp(qp, pkt->psn);
		return;
	}
	/* As for new packets, only those that ask are acknowledged. */
	if (pkt->ackreq)
		softrma_wire_resp_ack(qp, ROCE_AETH_ACK,
				      roce_psn_add(r->epsn, -1));
}

static u8 softrma_wire_resp_nak_syndrome(enum softrma_resp_result res)
{
	switch (res) {
	case SOFTRMA_RESP_NAK_ACCESS:
		return ROCE_AETH_NAK_REM_ACCESS;
	case SOFTRMA_RESP_NAK_OP:
		return ROCE_AETH_NAK_REM_OP;
	default:
		return ROCE_AETH_NAK_INV_REQ;
	}
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

	softrma_wire_resp_count(qp, SOFTRMA_CNT_OUT_OF_SEQ);
	if (!r->nak_sent || roce_psn_diff(psn, r->oos_psn) < 0 ||
	    ++r->oos_pkts >= SOFTRMA_WIRE_ACK_EVERY) {
		softrma_wire_resp_ack(qp, ROCE_AETH_NAK_PSN_SEQ, r->epsn);
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
			softrma_wire_resp_ack(qp, ROCE_AETH_ACK, pkt->psn);
		break;
	case SOFTRMA_RESP_RNR_NAK:
		/* It comes again: a message it began is not begun. */
		if (r->last_op == ROCE_OP_NONE)
			softrma_wire_resp_end_msg(r);
		softrma_wire_resp_count(qp, SOFTRMA_CNT_SENT_RNR_NAK);
		softrma_wire_resp_ack(qp, ROCE_AETH_RNR_NAK |
				      qp->attr.min_rnr_timer, pkt->psn);
		break;
	default:
		softrma_wire_resp_ack(qp, softrma_wire_resp_nak_syndrome(res),
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
		softrma_wire_resp_count(qp, SOFTRMA_CNT_OUT_OF_SEQ);
		softrma_wire_resp_end_msg(r);
		r->epsn = pkt->psn;
	}
	if (softrma_wire_resp_execute(qp, pkt, payload) == SOFTRMA_RESP_ACK) {
		softrma_wire_resp_advance(qp, pkt);
		return;
	}
	softrma_wire_resp_count(qp, SOFTRMA_CNT_RCVD_DROPPED);
	softrma_wire_resp_end_msg(r);
	r->epsn = roce_psn_add(pkt->psn, 1);
}

/* A request packet from the peer of @qp. */
void softrma_wire_resp_packet(struct softrma_qp *qp,
			      const struct roce_pkt *pkt, const u8 *payload,
			      const struct softrma_av *from)
{
	enum ib_qp_state state;

	mutex_lock(&qp->rq_lock);
	state = softrma_qp_state(qp);
	if ((state == IB_QPS_RTR || state == IB_QPS_RTS ||
	     state == IB_QPS_SQD) && softrma_qp_from_peer(qp, from)) {
		if (softrma_qp_is_reliable(qp))
			softrma_wire_resp_rc(qp, pkt, payload);
		else
			softrma_wire_resp_uc(qp, pkt, payload);
	}
	mutex_unlock(&qp->rq_lock);
}
