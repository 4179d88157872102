// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Connected QPs (RC, UC, XRC) on the wire: the choice of transport, made when
 * the path is set, and the lifetime of the state that the requester,
 * completer and responder keep between packets.  A QP goes on the wire when
 * no softrma device of its namespace owns the peer's GID, or with
 * force_wire; both ends of a local connection decide alike.
 */

#include <linux/slab.h>

#include "wire.h"

int softrma_wire_create(struct softrma_qp *qp)
{
	gfp_t gfp = softrma_gfp(!qp->kernel);
	struct softrma_wire *w;

	if (softrma_qp_is_ud(qp))
		return 0;
	w = kvzalloc(sizeof(*w), gfp);
	if (!w)
		return -ENOMEM;
	w->sqes = kvmalloc_array(SOFTRMA_WIRE_WQES, qp->sq.stride, gfp);
	if (!w->sqes || dst_cache_init(&w->route, gfp)) {
		kvfree(w->sqes);
		kvfree(w);
		return -ENOMEM;
	}
	for (int i = 0; i < SOFTRMA_WIRE_WQES; i++) {
		w->wqe[i].sqe = w->sqes + (size_t)i * qp->sq.stride;
		softrma_sgl_init(&w->wqe[i].sgl, w->wqe[i].segs,
				 SOFTRMA_MAX_SGE);
	}
	softrma_sgl_init_one(&w->resp.src);
	w->qp = qp;
	w->resp.last_op = ROCE_OP_NONE;
	spin_lock_init(&w->resp.deferred_lock);
	INIT_DELAYED_WORK(&w->retrans_work, softrma_wire_retrans_work);
	INIT_WORK(&w->send_work, softrma_wire_send_work);
	INIT_WORK(&w->answer_work, softrma_wire_answer_work);
	INIT_LIST_HEAD(&w->ack_entry);
	qp->wire = w;
	softrma_wire_answer_reset(qp);
	return 0;
}

/* A connected QP's transport: the wire unless its peer is on this host. */
static bool softrma_wire_wanted(struct softrma_qp *qp, const union ib_gid *dgid)
{
	struct softrma_dev *peer = softrma_local_dev(qp, dgid);

	if (!peer)
		return true;
	ib_device_put(&peer->ib_dev);
	return false;
}

/* Whether WQEs went onto the wire and have not completed. */
bool softrma_wire_sq_busy(struct softrma_qp *qp)
{
	softrma_qp_assert_sq(qp);
	return qp->on_wire && qp->sq.index != qp->wire->next_index;
}

/*
 * A path that takes a QP off the wire (SQD -> SQD) while anything is in
 * flight there would strand it: -EBUSY.
 */
int softrma_wire_check_path(struct softrma_qp *qp,
			    const struct ib_qp_attr *attr, int mask)
{
	const struct softrma_wire *w = qp->wire;

	softrma_qp_assert_sq(qp);
	softrma_qp_assert_rq(qp);
	if (!(mask & IB_QP_AV) || !qp->on_wire ||
	    softrma_wire_wanted(qp, &rdma_ah_read_grh(&attr->ah_attr)->dgid))
		return 0;
	if (softrma_wire_sq_busy(qp) || w->resp.last_op != ROCE_OP_NONE ||
	    qp->resp.rqe_held || softrma_wire_answer_pending(qp))
		return -EBUSY;
	return 0;
}

/* Lets go of the memory of every WQE in flight; nothing completes. */
static void softrma_wire_release(struct softrma_qp *qp)
{
	softrma_qp_assert_sq(qp);
	if (!qp->on_wire)
		return;
	for (u32 i = qp->sq.index; i != qp->wire->next_index; i++)
		softrma_sgl_release(&softrma_wire_wqe(qp, i)->sgl);
	qp->wire->next_index = qp->sq.index;
}

/* Before the queues are reset. */
void softrma_wire_modify(struct softrma_qp *qp, const struct ib_qp_attr *attr,
			 int mask, enum ib_qp_state next)
{
	struct softrma_wire *w = qp->wire;

	softrma_qp_assert_sq(qp);
	softrma_qp_assert_rq(qp);
	if (!w)
		return;
	if (mask & IB_QP_AV) {
		WRITE_ONCE(qp->on_wire, softrma_wire_wanted(qp, &qp->path.dgid));
		dst_cache_reset(&w->route);
	}
	if (mask & IB_QP_PATH_MTU)
		w->mtu = ib_mtu_enum_to_int(attr->path_mtu);
	if (mask & IB_QP_RQ_PSN) {
		w->resp.epsn = qp->attr.rq_psn;
		w->resp.nak_sent = false;
	}
	if (mask & (IB_QP_RQ_PSN | IB_QP_MAX_DEST_RD_ATOMIC))
		softrma_wire_answer_reset(qp);
	if (mask & IB_QP_SQ_PSN) {
		w->send_psn = qp->attr.sq_psn;
		w->comp_psn = w->send_psn;
		w->max_psn = w->send_psn;
		w->ackreq_psn = roce_psn_add(w->send_psn, -1);
		w->noack_pkts = 0;
		w->rewound = false;
		w->probed = false;
		w->next_index = qp->sq.index;
		w->window = SOFTRMA_WIRE_PSNS;
		w->window_acked = 0;
	}
	if (mask & (IB_QP_SQ_PSN | IB_QP_RETRY_CNT))
		w->retry_left = qp->attr.retry_cnt;
	/* The SQ drains once what is in flight is acknowledged. */
	if (next == IB_QPS_SQD)
		softrma_wire_ask_ack(qp);
	if (next == IB_QPS_RESET) {
		softrma_wire_release(qp);
		softrma_wire_resp_reset(qp);
		w->next_index = 0;
		WRITE_ONCE(qp->on_wire, false);
	}
}

/* After the QP's work is stopped: nothing runs on it any more. */
void softrma_wire_destroy(struct softrma_qp *qp)
{
	struct softrma_wire *w = qp->wire;

	if (!w)
		return;
	cancel_delayed_work_sync(&w->retrans_work);
	cancel_work_sync(&w->answer_work);	/* which queues send_work */
	cancel_work_sync(&w->send_work);
	softrma_qp_lock_sq(qp);
	softrma_qp_lock_rq(qp);
	softrma_wire_release(qp);
	softrma_wire_resp_reset(qp);
	mutex_unlock(&qp->rq_lock);
	mutex_unlock(&qp->sq_lock);
	dst_cache_destroy(&w->route);
	kvfree(w->sqes);
	kvfree(w);
	qp->wire = NULL;
}

/* The opcode group of each transport's packets. */
static const u8 softrma_wire_groups[] = {
	[IB_QPT_RC] = ROCE_RC,
	[IB_QPT_UC] = ROCE_UC,
	[IB_QPT_UD] = ROCE_UD,
	[IB_QPT_XRC_INI] = ROCE_XRC,
};

u8 softrma_wire_group(struct softrma_qp *qp)
{
	return softrma_wire_groups[softrma_qp_transport(qp)];
}

/*
 * The packets that the receive softirq processes itself: the others need
 * what sleeps (an invalidation, FLUSH's writeback) or are rare (atomics).
 */
static const bool softrma_wire_rx_now_ops[32] = {
	[ROCE_SEND_FIRST ... ROCE_ATOMIC_ACK] = true,
};

/*
 * Whether the receive softirq may process @pkt for @qp: an RC QP's, whose
 * memory needs no fault (the device has no ODP MR).
 */
static bool softrma_wire_rx_now_ok(struct softrma_qp *qp,
				   const struct roce_pkt *pkt)
{
	return softrma_wire_rx_now_ops[pkt->opcode & 0x1f] &&
	       qp->ibqp.qp_type == IB_QPT_RC &&
	       !atomic_read(&to_sdev(qp->ibqp.device)->odp_mrs);
}

/*
 * A packet with the addresses @from: responses to the completer (none for
 * an XRC TGT QP, which sends nothing), requests to the responder.  In the
 * receive softirq (@now), false when the packet is left for process context.
 */
bool softrma_wire_rx(struct softrma_qp *qp, const struct roce_pkt *pkt,
		     const u8 *payload, const struct softrma_av *from, bool now)
{
	if (now && !softrma_wire_rx_now_ok(qp, pkt))
		return false;
	if (!roce_op_is_response(pkt->opcode & 0x1f))
		return softrma_wire_resp_packet(qp, pkt, payload, from, now);
	if (!softrma_qp_is_xrc_tgt(qp))
		return softrma_wire_comp_packet(qp, pkt, payload, from, now);
	softrma_drop(to_sdev(qp->ibqp.device), SOFTRMA_CNT_RCVD_NO_QP);
	return true;
}
