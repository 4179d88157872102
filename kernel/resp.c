// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The responder: every request that reaches a QP, whatever carried it, is
 * checked and executed here.  Nothing moves before the checks pass: QP
 * state, the QP's remote access rights, then key, PD, access and bounds of
 * the target memory, and alignment for atomics.
 */

#include "proto/net_hdr.h"
#include "msg.h"

/*
 * Receive WQEs come from the QP's own RQ, or from its SRQ, which the
 * responders of every attached QP share under the SRQ's lock.  A receive WQE
 * is either left in its ring or completed: never taken and dropped.
 */
static struct softrma_queue *softrma_resp_recv_queue(struct softrma_qp *qp)
{
	return qp->ibqp.srq ? &to_ssrq(qp->ibqp.srq)->queue : &qp->rq;
}

static void softrma_resp_lock_recv(struct softrma_qp *qp)
{
	if (qp->ibqp.srq)
		mutex_lock(&to_ssrq(qp->ibqp.srq)->lock);
}

static void softrma_resp_unlock_recv(struct softrma_qp *qp)
{
	if (qp->ibqp.srq)
		mutex_unlock(&to_ssrq(qp->ibqp.srq)->lock);
}

static u32 softrma_resp_max_recv_sge(struct softrma_qp *qp)
{
	return qp->ibqp.srq ? to_ssrq(qp->ibqp.srq)->max_sge :
			      qp->cap.max_recv_sge;
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
	softrma_queue_consume(softrma_resp_recv_queue(qp));
	if (qp->ibqp.srq)
		softrma_srq_check_limit(to_ssrq(qp->ibqp.srq));
}

/**
 * softrma_resp_post_recv_cqe() - Completes the receive WQE in qp->rqe.
 * @qp: the responder, whose receive WQE is out of its ring already
 * @msg: the message it received (source, immediate, SE), or NULL
 * @status: the completion status
 * @opcode: the completion opcode
 * @length: bytes received
 *
 * Context: Under @qp's rq_lock; does not sleep.
 * Return: false when the receive CQ overflowed.
 */
bool softrma_resp_post_recv_cqe(struct softrma_qp *qp,
				const struct softrma_msg *msg,
				enum ib_wc_status status,
				enum ib_wc_opcode opcode, u64 length)
{
	struct softrma_cqe cqe = {
		.wr_id = qp->rqe->wr_id,
		.status = status,
		.opcode = opcode,
		.byte_len = length,
		.qp_num = qp->ibqp.qp_num,
	};
	bool solicited = status != IB_WC_SUCCESS;

	lockdep_assert_held(&qp->rq_lock);
	if (msg) {
		cqe.src_qp = msg->src_qpn;
		if (msg->av) {
			cqe.wc_flags |= IB_WC_GRH;
			cqe.network_hdr_type = softrma_av_network_type(msg->av);
		}
		if (softrma_wr_op(msg->opcode)->imm) {
			cqe.imm_data = msg->imm_data;
			cqe.wc_flags |= IB_WC_WITH_IMM;
		}
		solicited |= !!(msg->send_flags & IB_SEND_SOLICITED);
	}
	return softrma_cq_post(to_scq(qp->ibqp.recv_cq), qp, &cqe, solicited);
}

/* Completes the fetched receive WQE; false when the receive CQ overflowed. */
static bool softrma_resp_complete_rqe(struct softrma_qp *qp,
				      const struct softrma_msg *msg,
				      enum ib_wc_status status,
				      enum ib_wc_opcode opcode, u64 length)
{
	softrma_resp_consume_rqe(qp);
	return softrma_resp_post_recv_cqe(qp, msg, status, opcode, length);
}

/* Resolves the memory of the receive WQE in qp->rqe: a completion status. */
static enum ib_wc_status softrma_resp_resolve_rqe(struct softrma_qp *qp,
						  struct softrma_sgl *sgl)
{
	const struct softrma_rqe *rqe = qp->rqe;
	int err;

	if (rqe->num_sge > softrma_resp_max_recv_sge(qp))
		return IB_WC_LOC_QP_OP_ERR;
	err = softrma_sgl_resolve(sgl, to_sdev(qp->ibqp.device), qp->ibqp.pd,
				  rqe->sge, rqe->num_sge, IB_ACCESS_LOCAL_WRITE);
	if (err)
		return err == -EINVAL ? IB_WC_LOC_LEN_ERR : IB_WC_LOC_PROT_ERR;
	return IB_WC_SUCCESS;
}

/**
 * softrma_resp_take_rqe() - Takes a receive WQE for a message in packets.
 * @qp: the responder
 * @sgl: the WQE's memory, resolved (and held)
 * @msg: the message it is for, reported if the WQE is bad
 *
 * Context: Process context, under @qp's rq_lock; takes the SRQ's lock.
 * Return: 0 with the WQE out of its ring in qp->rqe; -EAGAIN when none is
 * posted, -EPROTO when the ring is corrupt, -EACCES when the WQE was bad
 * and has been completed with an error.
 */
int softrma_resp_take_rqe(struct softrma_qp *qp, struct softrma_sgl *sgl,
			  const struct softrma_msg *msg)
{
	enum ib_wc_status status;
	int err;

	lockdep_assert_held(&qp->rq_lock);
	softrma_resp_lock_recv(qp);
	err = softrma_resp_fetch_rqe(qp);
	if (!err)
		softrma_resp_consume_rqe(qp);
	softrma_resp_unlock_recv(qp);
	if (err)
		return err;
	status = softrma_resp_resolve_rqe(qp, sgl);
	if (status == IB_WC_SUCCESS)
		return 0;
	softrma_resp_post_recv_cqe(qp, msg, status, IB_WC_RECV, 0);
	return -EACCES;
}

static enum softrma_resp_result softrma_resp_no_rqe(struct softrma_qp *qp,
						    struct softrma_msg *msg,
						    int err)
{
	if (err != -EAGAIN)
		return SOFTRMA_RESP_NAK_OP;
	msg->rnr_timer = qp->attr.min_rnr_timer;
	return SOFTRMA_RESP_RNR_NAK;
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
		.has_imm = softrma_wr_op(msg->opcode)->imm,
	};
	memcpy(info.sgid, av->sgid.raw, sizeof(info.sgid));
	memcpy(info.dgid, av->dgid.raw, sizeof(info.dgid));
	roce_net_hdr_build(hdr, &info);
	return ROCE_NET_HDR_LEN;
}

/*
 * Moves @len bytes between the requester's memory (msg->local, from its
 * start) and @mem at @mem_off: into @mem when @to_mem.  An MR of the
 * requester that is gone is its own error: the request is dropped and the
 * requester told (local_gone).  One of the responder's is a NAK.
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
	if (err == (to_mem ? -EFAULT : -EACCES)) {
		msg->local_gone = true;
		return SOFTRMA_RESP_DROPPED;
	}
	return SOFTRMA_RESP_NAK_ACCESS;
}

static enum softrma_resp_result softrma_resp_receive(struct softrma_qp *qp,
						     struct softrma_msg *msg)
{
	struct softrma_sgl *sgl = &qp->resp_sgl, hdr_sgl;
	u8 hdr[ROCE_NET_HDR_LEN];
	enum softrma_resp_result res;
	enum ib_wc_status status;
	u32 hdr_len;
	int err;

	err = softrma_resp_fetch_rqe(qp);
	if (err)
		return softrma_resp_no_rqe(qp, msg, err);
	status = softrma_resp_resolve_rqe(qp, sgl);
	if (status != IB_WC_SUCCESS) {
		softrma_resp_complete_rqe(qp, msg, status, IB_WC_RECV, 0);
		return SOFTRMA_RESP_NAK_OP;
	}
	hdr_len = softrma_resp_net_hdr(msg, hdr);
	if (hdr_len + msg->length > sgl->length) {
		softrma_sgl_release(sgl);
		softrma_resp_complete_rqe(qp, msg, IB_WC_LOC_LEN_ERR, IB_WC_RECV, 0);
		return SOFTRMA_RESP_NAK_INV_REQ;
	}
	softrma_sgl_init_kbuf(&hdr_sgl, hdr, hdr_len);
	if (softrma_sgl_copy(sgl, &hdr_sgl, hdr_len))
		res = SOFTRMA_RESP_NAK_ACCESS;
	else
		res = softrma_resp_move(msg, sgl, hdr_len, true, msg->length);
	softrma_sgl_release(sgl);
	if (res == SOFTRMA_RESP_DROPPED)	/* the receive stays posted */
		return res;
	if (res != SOFTRMA_RESP_ACK) {
		softrma_resp_complete_rqe(qp, msg, IB_WC_LOC_PROT_ERR, IB_WC_RECV, 0);
		return SOFTRMA_RESP_NAK_OP;
	}
	return softrma_resp_complete_rqe(qp, msg, IB_WC_SUCCESS, IB_WC_RECV,
					 hdr_len + msg->length) ?
		SOFTRMA_RESP_ACK : SOFTRMA_RESP_NAK_OP;
}

static enum softrma_resp_result softrma_resp_send(struct softrma_qp *qp,
						  struct softrma_msg *msg)
{
	enum softrma_resp_result res;

	softrma_resp_lock_recv(qp);
	res = softrma_resp_receive(qp, msg);
	softrma_resp_unlock_recv(qp);
	return res;
}

/**
 * softrma_resp_allowed() - Whether @qp grants what @wr_opcode needs.
 * @qp: the responder
 * @wr_opcode: the request's work request opcode
 *
 * Context: Any.
 * Return: true when the QP's remote access flags hold the opcode's right.
 */
bool softrma_resp_allowed(struct softrma_qp *qp, u32 wr_opcode)
{
	int need = softrma_wr_op(wr_opcode)->remote_access;

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

	mr = softrma_mr_get(to_sdev(qp->ibqp.device), qp->ibqp.pd, rkey, va,
			    length, softrma_wr_op(wr_opcode)->remote_access);
	return IS_ERR(mr) ? NULL : mr;
}

/**
 * softrma_resp_rdma_target() - The memory of an RDMA WRITE or READ.
 * @qp: the responder
 * @rkey: the request's key
 * @va: the address it names
 * @len: its length
 * @wr_opcode: IB_WR_RDMA_WRITE (or with immediate) or IB_WR_RDMA_READ
 * @sgl: the memory as a list (an empty one for an empty request)
 *
 * Context: Process context; takes the device's MR xarray lock.
 * Return: SOFTRMA_RESP_ACK with @sgl to release; a NAK for a length above
 * the maximum message or a key, PD, access or bounds that do not hold.
 */
enum softrma_resp_result softrma_resp_rdma_target(struct softrma_qp *qp,
						  u32 rkey, u64 va, u64 len,
						  u32 wr_opcode,
						  struct softrma_sgl *sgl)
{
	struct softrma_mr *mr;

	if (len > SOFTRMA_MAX_MSG_SZ)
		return SOFTRMA_RESP_NAK_INV_REQ;
	if (!len) {
		softrma_sgl_init_kbuf(sgl, NULL, 0);
		return SOFTRMA_RESP_ACK;
	}
	mr = softrma_resp_target(qp, rkey, va, len, wr_opcode);
	if (!mr)
		return SOFTRMA_RESP_NAK_ACCESS;
	softrma_sgl_init_mr(sgl, mr, va, len);
	softrma_mr_put(mr);
	return SOFTRMA_RESP_ACK;
}

/* RDMA WRITE into the target MR, or RDMA READ out of it. */
static enum softrma_resp_result softrma_resp_rdma(struct softrma_qp *qp,
						  struct softrma_msg *msg)
{
	enum softrma_resp_result res;

	res = softrma_resp_rdma_target(qp, msg->rkey, msg->remote_addr,
				       msg->length, msg->opcode, &qp->resp_sgl);
	if (res != SOFTRMA_RESP_ACK)
		return res;
	res = softrma_resp_move(msg, &qp->resp_sgl, 0,
				softrma_wr_op(msg->opcode)->kind == SOFTRMA_OP_WRITE,
				msg->length);
	softrma_sgl_release(&qp->resp_sgl);
	return res;
}

/*
 * The receive must exist before anything moves (an RNR NAK leaves memory
 * untouched), and the memory must pass its checks before the receive is
 * taken (a NAK leaves the receive posted).
 */
static enum softrma_resp_result softrma_resp_write_imm(struct softrma_qp *qp,
						       struct softrma_msg *msg)
{
	enum softrma_resp_result res;
	int err;

	softrma_resp_lock_recv(qp);
	err = softrma_resp_fetch_rqe(qp);
	if (err) {
		res = softrma_resp_no_rqe(qp, msg, err);
		goto out;
	}
	res = softrma_resp_rdma(qp, msg);
	if (res != SOFTRMA_RESP_ACK)
		goto out;
	if (!softrma_resp_complete_rqe(qp, msg, IB_WC_SUCCESS,
				       IB_WC_RECV_RDMA_WITH_IMM, msg->length))
		res = SOFTRMA_RESP_NAK_OP;
out:
	softrma_resp_unlock_recv(qp);
	return res;
}

/*
 * The target of an atomic (@wr_opcode) at @va: aligned and checked, or why
 * not in *res.  The core keeps an MR's iova and its memory at the same page
 * offset, so an aligned @va is aligned memory.
 */
static struct softrma_mr *softrma_resp_atomic_target(struct softrma_qp *qp,
						     u32 rkey, u64 va,
						     u32 wr_opcode,
						     enum softrma_resp_result *res)
{
	struct softrma_mr *mr;

	*res = SOFTRMA_RESP_NAK_INV_REQ;
	if (!IS_ALIGNED(va, sizeof(u64)))
		return NULL;
	mr = softrma_resp_target(qp, rkey, va, sizeof(u64), wr_opcode);
	*res = mr ? SOFTRMA_RESP_ACK : SOFTRMA_RESP_NAK_ACCESS;
	return mr;
}

/**
 * softrma_resp_atomic_exec() - Executes compare-and-swap or fetch-and-add.
 * @qp: the responder, whose rights the caller checked
 * @rkey: the request's key
 * @va: the 8 aligned bytes it names
 * @cmp_swap: compare-and-swap rather than fetch-and-add
 * @compare_add: the value compared, or added
 * @swap: the value swapped in
 * @orig: what the target held
 *
 * Context: Process context; serialised with every other atomic of softrma.
 * Return: SOFTRMA_RESP_ACK, or the NAK of a bad key, range or alignment.
 */
enum softrma_resp_result softrma_resp_atomic_exec(struct softrma_qp *qp,
						  u32 rkey, u64 va,
						  bool cmp_swap,
						  u64 compare_add, u64 swap,
						  u64 *orig)
{
	enum softrma_resp_result res;
	struct softrma_mr *mr;

	mr = softrma_resp_atomic_target(qp, rkey, va, IB_WR_ATOMIC_FETCH_AND_ADD,
					&res);
	if (!mr)
		return res;
	*orig = softrma_mr_atomic(mr, va, cmp_swap, compare_add, swap);
	softrma_mr_put(mr);
	return SOFTRMA_RESP_ACK;
}

static enum softrma_resp_result softrma_resp_atomic(struct softrma_qp *qp,
						    struct softrma_msg *msg)
{
	enum softrma_resp_result res;
	u64 orig;

	res = softrma_resp_atomic_exec(qp, msg->rkey, msg->remote_addr,
				       msg->opcode == IB_WR_ATOMIC_CMP_AND_SWP,
				       msg->compare_add, msg->swap, &orig);
	if (res != SOFTRMA_RESP_ACK)
		return res;
	softrma_sgl_init_kbuf(&qp->resp_sgl, &orig, sizeof(orig));
	return softrma_resp_move(msg, &qp->resp_sgl, 0, false, sizeof(orig));
}

/**
 * softrma_resp_atomic_write() - Executes an ATOMIC WRITE.
 * @qp: the responder, whose rights the caller checked
 * @rkey: the request's key
 * @va: the 8 aligned bytes @value lands in at once
 * @value: what it writes
 *
 * Context: Process context.
 * Return: SOFTRMA_RESP_ACK, or the NAK of a bad key, range or alignment.
 */
enum softrma_resp_result softrma_resp_atomic_write(struct softrma_qp *qp,
						   u32 rkey, u64 va, u64 value)
{
	enum softrma_resp_result res;
	struct softrma_mr *mr;

	mr = softrma_resp_atomic_target(qp, rkey, va, SOFTRMA_WR_ATOMIC_WRITE,
					&res);
	if (!mr)
		return res;
	softrma_mr_atomic_write(mr, va, value);
	softrma_mr_put(mr);
	return SOFTRMA_RESP_ACK;
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

/**
 * softrma_resp_rdma_flush() - Executes an RDMA FLUSH.
 * @qp: the responder
 * @rkey: the request's key
 * @va: the range's start
 * @len: its length
 * @type: the placement type; the QP and the MR must grant it
 * @level: the selectivity: the range, or the whole MR
 *
 * What was placed before is global already (the device writes with the
 * CPU, and the cache hooks ran at placement); persistence writes the range
 * back from the CPU caches.
 *
 * Context: Process context.
 * Return: SOFTRMA_RESP_ACK, or the NAK of a bad request, key or range.
 */
enum softrma_resp_result softrma_resp_rdma_flush(struct softrma_qp *qp,
						 u32 rkey, u64 va, u64 len,
						 u8 type, u8 level)
{
	struct softrma_dev *sdev = to_sdev(qp->ibqp.device);
	int access = softrma_flush_access(type);
	struct softrma_mr *mr;

	if (!access || level > SOFTRMA_FLUSH_MR ||
	    (qp->attr.qp_access_flags & access) != access)
		return SOFTRMA_RESP_NAK_INV_REQ;
	if (level == SOFTRMA_FLUSH_MR)
		mr = softrma_mr_get_whole(sdev, qp->ibqp.pd, rkey, access);
	else
		mr = softrma_mr_get(sdev, qp->ibqp.pd, rkey, va, len, access);
	if (IS_ERR_OR_NULL(mr))
		return SOFTRMA_RESP_NAK_ACCESS;
	if (level == SOFTRMA_FLUSH_MR) {
		va = mr->iova;
		len = mr->length;
	}
	if (type == SOFTRMA_FLUSH_PERSISTENT)
		softrma_mr_writeback(mr, va, len);
	else
		smp_mb();	/* placement before this FLUSH is complete */
	softrma_mr_put(mr);
	return SOFTRMA_RESP_ACK;
}

/* ATOMIC WRITE of the 8 bytes the request carries. */
static enum softrma_resp_result softrma_resp_local_atomic_write(struct softrma_qp *qp,
								struct softrma_msg *msg)
{
	enum softrma_resp_result res;
	struct softrma_sgl value_sgl;
	u64 value;

	softrma_sgl_init_kbuf(&value_sgl, &value, sizeof(value));
	res = softrma_resp_move(msg, &value_sgl, 0, true, sizeof(value));
	if (res != SOFTRMA_RESP_ACK)
		return res;
	return softrma_resp_atomic_write(qp, msg->rkey, msg->remote_addr, value);
}

/*
 * UD: a SEND with the QP's Q_Key lands in the next receive.  Whatever goes
 * wrong, the datagram is dropped, nobody is told and the QP carries on.
 */
static enum softrma_resp_result softrma_resp_datagram(struct softrma_qp *qp,
						      struct softrma_msg *msg)
{
	if (!(softrma_wr_op(msg->opcode)->qp_types & BIT(IB_QPT_UD)) ||
	    msg->qkey != qp->attr.qkey)
		return SOFTRMA_RESP_DROPPED;
	return softrma_resp_send(qp, msg) == SOFTRMA_RESP_ACK ?
		SOFTRMA_RESP_ACK : SOFTRMA_RESP_DROPPED;
}

/* The requester's connection, if the requester is @qp's peer QP. */
static const struct softrma_av *softrma_resp_peer_path(struct softrma_qp *qp,
						       const struct softrma_msg *msg)
{
	return msg->src_qpn == qp->attr.dest_qp_num ? msg->path : NULL;
}

static enum softrma_resp_result softrma_resp_dispatch(struct softrma_qp *qp,
						      struct softrma_msg *msg)
{
	enum ib_qp_type type = softrma_qp_transport(qp);
	const struct softrma_wr_op *op;

	/* Requests of another transport are not for this QP. */
	if (msg->qp_type != type)
		return SOFTRMA_RESP_DROPPED;
	if (type == IB_QPT_UD)
		return softrma_resp_datagram(qp, msg);
	/* A connected QP answers its peer only: a stranger gets nothing. */
	if (!softrma_qp_from_peer(qp, softrma_resp_peer_path(qp, msg)))
		return SOFTRMA_RESP_DROPPED;

	if (!softrma_resp_allowed(qp, msg->opcode))
		return SOFTRMA_RESP_NAK_INV_REQ;

	op = softrma_wr_op(msg->opcode);
	switch (op->kind) {
	case SOFTRMA_OP_SEND:
		return softrma_resp_send(qp, msg);
	case SOFTRMA_OP_WRITE:
		if (op->recv)
			return softrma_resp_write_imm(qp, msg);
		return softrma_resp_rdma(qp, msg);
	case SOFTRMA_OP_READ:
		return softrma_resp_rdma(qp, msg);
	case SOFTRMA_OP_ATOMIC:
		return softrma_resp_atomic(qp, msg);
	case SOFTRMA_OP_ATOMIC_WRITE:
		return softrma_resp_local_atomic_write(qp, msg);
	case SOFTRMA_OP_FLUSH:
		return softrma_resp_rdma_flush(qp, msg->rkey, msg->remote_addr,
					       msg->length, msg->flush_type,
					       msg->flush_level);
	default:
		return SOFTRMA_RESP_NAK_INV_REQ;
	}
}

/**
 * softrma_resp_execute() - The responder of the local transport.
 * @qp: the QP the message is addressed to
 * @msg: the message, with the requester's memory
 *
 * Checks and executes @msg with one copy.  UC drops what it cannot
 * execute; a NAK puts @qp in error.
 *
 * Context: Process context; takes @qp's rq_lock (and its SRQ's lock).
 * Return: what an ACK, NAK or RNR NAK would say, or SOFTRMA_RESP_DROPPED.
 */
enum softrma_resp_result softrma_resp_execute(struct softrma_qp *qp,
					      struct softrma_msg *msg)
{
	enum softrma_resp_result res;

	mutex_lock(&qp->rq_lock);
	if (!softrma_state_responds(softrma_qp_state(qp)))
		res = SOFTRMA_RESP_DROPPED;	/* a QP that cannot receive */
	else if (qp->on_wire)
		res = SOFTRMA_RESP_DROPPED;	/* its peer speaks in packets */
	else
		res = softrma_resp_dispatch(qp, msg);

	/* UC drops what it cannot execute, and the QP carries on. */
	if (!softrma_qp_is_reliable(qp) && res != SOFTRMA_RESP_ACK)
		res = SOFTRMA_RESP_DROPPED;
	/* A NAKed request takes the responder down as well. */
	if (softrma_resp_fatal(res))
		softrma_qp_set_error(qp);
	mutex_unlock(&qp->rq_lock);
	return res;
}

/**
 * softrma_resp_flush_err() - Completes the receives of a QP in error.
 * @qp: the responder
 *
 * Every posted receive completes with WR_FLUSH_ERR, and so does the
 * receive a message in packets was filling.  An SRQ's receives belong to
 * the SRQ, and stay for its other QPs.
 *
 * Context: Process context; takes @qp's rq_lock.
 */
void softrma_resp_flush_err(struct softrma_qp *qp)
{
	u32 done = 0;

	mutex_lock(&qp->rq_lock);
	if (qp->wire && softrma_qp_state(qp) == IB_QPS_ERR)
		softrma_wire_resp_abandon(qp, true);
	while (!qp->ibqp.srq && softrma_qp_state(qp) == IB_QPS_ERR &&
	       !softrma_resp_fetch_rqe(qp)) {
		/* A ring's worth at a time: the producer is the user's. */
		if (done++ == qp->rq.num) {
			softrma_qp_schedule(qp);
			break;
		}
		if (!softrma_resp_complete_rqe(qp, NULL, IB_WC_WR_FLUSH_ERR,
					       IB_WC_RECV, 0))
			break;
		cond_resched();
	}
	mutex_unlock(&qp->rq_lock);
}
