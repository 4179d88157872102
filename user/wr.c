// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The extended send API (ibv_wr_start() ... ibv_wr_complete()) over the same
 * SQ ring as ibv_post_send(): each ibv_wr_<op>() claims an entry, the setters
 * fill it, and complete publishes them all with one doorbell.  The first
 * error is kept and reported by complete, which then posts nothing.
 */
#include <errno.h>

#include "softrma.h"
#include "softrmadv.h"

static struct softrma_qp *qpx_to_sqp(struct ibv_qp_ex *qpx)
{
	return container_of(qpx, struct softrma_qp, vqp.qp_ex);
}

static void softrma_wr_fail(struct softrma_qp *qp, int err)
{
	if (!qp->wr_err)
		qp->wr_err = err;
}

/* Claims the entry of the next work request, or records why not. */
static struct softrma_sqe *softrma_wr_begin(struct ibv_qp_ex *qpx,
					    uint32_t opcode)
{
	struct softrma_qp *qp = qpx_to_sqp(qpx);

	qp->wr_cur = NULL;
	if (qp->wr_err)
		return NULL;
	qp->wr_cur = softrma_sqe_claim(qp, qpx->wr_id, opcode, qpx->wr_flags);
	if (!qp->wr_cur)
		softrma_wr_fail(qp, ENOMEM);
	return qp->wr_cur;
}

static void softrma_wr_start(struct ibv_qp_ex *qpx)
{
	struct softrma_qp *qp = qpx_to_sqp(qpx);

	pthread_spin_lock(&qp->sq_lock);
	qp->wr_first = qp->sq.index;
	qp->wr_cur = NULL;
	qp->wr_err = softrma_qp_can_send(qp) ? 0 : EINVAL;
}

static int softrma_wr_complete(struct ibv_qp_ex *qpx)
{
	struct softrma_qp *qp = qpx_to_sqp(qpx);
	int ret = qp->wr_err;

	if (ret)
		qp->sq.index = qp->wr_first;
	else if (qp->sq.index != qp->wr_first)
		ret = softrma_sq_publish(qp);
	pthread_spin_unlock(&qp->sq_lock);
	return ret;
}

static void softrma_wr_abort(struct ibv_qp_ex *qpx)
{
	struct softrma_qp *qp = qpx_to_sqp(qpx);

	qp->sq.index = qp->wr_first;
	pthread_spin_unlock(&qp->sq_lock);
}

static void softrma_wr_send(struct ibv_qp_ex *qpx)
{
	softrma_wr_begin(qpx, IBV_WR_SEND);
}

static void softrma_wr_send_imm(struct ibv_qp_ex *qpx, __be32 imm_data)
{
	struct softrma_sqe *sqe = softrma_wr_begin(qpx, IBV_WR_SEND_WITH_IMM);

	if (sqe)
		sqe->imm_data = imm_data;
}

static void softrma_wr_send_inv(struct ibv_qp_ex *qpx, uint32_t invalidate_rkey)
{
	struct softrma_sqe *sqe = softrma_wr_begin(qpx, IBV_WR_SEND_WITH_INV);

	if (sqe)
		sqe->invalidate_rkey = invalidate_rkey;
}

static void softrma_wr_local_inv(struct ibv_qp_ex *qpx,
				 uint32_t invalidate_rkey)
{
	struct softrma_sqe *sqe = softrma_wr_begin(qpx, IBV_WR_LOCAL_INV);

	if (sqe)
		sqe->invalidate_rkey = invalidate_rkey;
}

static void softrma_wr_bind_mw(struct ibv_qp_ex *qpx, struct ibv_mw *mw,
			       uint32_t rkey,
			       const struct ibv_mw_bind_info *bind_info)
{
	struct softrma_sqe *sqe = softrma_wr_begin(qpx, IBV_WR_BIND_MW);

	if (sqe && softrma_sqe_set_bind(sqe, mw, rkey, bind_info))
		softrma_wr_fail(qpx_to_sqp(qpx), EINVAL);
}

static void softrma_wr_rdma(struct ibv_qp_ex *qpx, uint32_t opcode,
			    uint32_t rkey, uint64_t remote_addr,
			    __be32 imm_data)
{
	struct softrma_sqe *sqe = softrma_wr_begin(qpx, opcode);

	if (!sqe)
		return;
	sqe->wr.rdma.remote_addr = remote_addr;
	sqe->wr.rdma.rkey = rkey;
	sqe->imm_data = imm_data;
}

static void softrma_wr_rdma_write(struct ibv_qp_ex *qpx, uint32_t rkey,
				  uint64_t remote_addr)
{
	softrma_wr_rdma(qpx, IBV_WR_RDMA_WRITE, rkey, remote_addr, 0);
}

static void softrma_wr_rdma_write_imm(struct ibv_qp_ex *qpx, uint32_t rkey,
				      uint64_t remote_addr, __be32 imm_data)
{
	softrma_wr_rdma(qpx, IBV_WR_RDMA_WRITE_WITH_IMM, rkey, remote_addr,
			imm_data);
}

static void softrma_wr_rdma_read(struct ibv_qp_ex *qpx, uint32_t rkey,
				 uint64_t remote_addr)
{
	softrma_wr_rdma(qpx, IBV_WR_RDMA_READ, rkey, remote_addr, 0);
}

static void softrma_wr_atomic(struct ibv_qp_ex *qpx, uint32_t opcode,
			      uint32_t rkey, uint64_t remote_addr,
			      uint64_t compare_add, uint64_t swap)
{
	struct softrma_sqe *sqe = softrma_wr_begin(qpx, opcode);

	if (!sqe)
		return;
	sqe->wr.atomic.remote_addr = remote_addr;
	sqe->wr.atomic.rkey = rkey;
	sqe->wr.atomic.compare_add = compare_add;
	sqe->wr.atomic.swap = swap;
}

static void softrma_wr_atomic_cmp_swp(struct ibv_qp_ex *qpx, uint32_t rkey,
				      uint64_t remote_addr, uint64_t compare,
				      uint64_t swap)
{
	softrma_wr_atomic(qpx, IBV_WR_ATOMIC_CMP_AND_SWP, rkey, remote_addr,
			  compare, swap);
}

static void softrma_wr_atomic_fetch_add(struct ibv_qp_ex *qpx, uint32_t rkey,
					uint64_t remote_addr, uint64_t add)
{
	softrma_wr_atomic(qpx, IBV_WR_ATOMIC_FETCH_AND_ADD, rkey, remote_addr,
			  add, 0);
}

static void softrma_wr_atomic_write(struct ibv_qp_ex *qpx, uint32_t rkey,
				    uint64_t remote_addr, const void *atomic_wr)
{
	struct softrma_sqe *sqe = softrma_wr_begin(qpx, IBV_WR_ATOMIC_WRITE);

	if (sqe)
		softrma_sqe_set_atomic_write_dest(sqe, rkey, remote_addr,
						  atomic_wr);
}

void softrmadv_wr_flush(struct ibv_qp_ex *qpx, uint32_t rkey,
			uint64_t remote_addr, size_t len, uint8_t type,
			uint8_t level)
{
	struct softrma_qp *qp = qpx_to_sqp(qpx);
	struct softrma_sqe *sqe;

	if (!(qp->send_ops & SOFTRMADV_QP_EX_WITH_FLUSH) ||
	    len > SOFTRMA_MAX_MSG_LEN ||
	    (type != SOFTRMADV_FLUSH_GLOBAL &&
	     type != SOFTRMADV_FLUSH_PERSISTENT) ||
	    level > SOFTRMADV_FLUSH_MR) {
		softrma_wr_fail(qp, EINVAL);
		return;
	}
	sqe = softrma_wr_begin(qpx, SOFTRMA_WR_FLUSH);
	if (!sqe)
		return;
	sqe->wr.flush.remote_addr = remote_addr;
	sqe->wr.flush.rkey = rkey;
	sqe->wr.flush.length = len;
	sqe->wr.flush.type = type;
	sqe->wr.flush.level = level;
}

/* The entry the setters fill, or NULL (and an error) when there is none. */
static struct softrma_sqe *softrma_wr_current(struct softrma_qp *qp)
{
	if (!qp->wr_cur)
		softrma_wr_fail(qp, EINVAL);
	return qp->wr_err ? NULL : qp->wr_cur;
}

static void softrma_wr_set_sge_list(struct ibv_qp_ex *qpx, size_t num_sge,
				    const struct ibv_sge *sg_list)
{
	struct softrma_qp *qp = qpx_to_sqp(qpx);
	struct softrma_sqe *sqe = softrma_wr_current(qp);

	if (sqe && softrma_sqe_set_sges(qp, sqe, sg_list, num_sge))
		softrma_wr_fail(qp, EINVAL);
}

static void softrma_wr_set_sge(struct ibv_qp_ex *qpx, uint32_t lkey,
			       uint64_t addr, uint32_t length)
{
	struct ibv_sge sge = { .addr = addr, .length = length, .lkey = lkey };

	softrma_wr_set_sge_list(qpx, 1, &sge);
}

static void softrma_wr_set_inline_data_list(struct ibv_qp_ex *qpx,
					    size_t num_buf,
					    const struct ibv_data_buf *buf_list)
{
	struct softrma_qp *qp = qpx_to_sqp(qpx);
	struct softrma_sqe *sqe = softrma_wr_current(qp);

	if (!sqe)
		return;
	if (!softrma_opcode_takes_inline(sqe->opcode)) {
		softrma_wr_fail(qp, EINVAL);
		return;
	}
	for (size_t i = 0; i < num_buf; i++)
		if (softrma_sqe_add_inline(qp, sqe, buf_list[i].addr,
					   buf_list[i].length))
			softrma_wr_fail(qp, EINVAL);
}

static void softrma_wr_set_inline_data(struct ibv_qp_ex *qpx, void *addr,
				       size_t length)
{
	struct ibv_data_buf buf = { .addr = addr, .length = length };

	softrma_wr_set_inline_data_list(qpx, 1, &buf);
}

static void softrma_wr_set_ud_addr(struct ibv_qp_ex *qpx, struct ibv_ah *ah,
				   uint32_t remote_qpn, uint32_t remote_qkey)
{
	struct softrma_qp *qp = qpx_to_sqp(qpx);
	struct softrma_sqe *sqe = softrma_wr_current(qp);

	if (sqe && ah)
		softrma_sqe_set_ud(qp, sqe, ah, remote_qpn, remote_qkey);
	else if (sqe)
		softrma_wr_fail(qp, EINVAL);
}

static void softrma_wr_set_xrc_srqn(struct ibv_qp_ex *qpx, uint32_t remote_srqn)
{
	struct softrma_sqe *sqe = softrma_wr_current(qpx_to_sqp(qpx));

	if (sqe)
		sqe->xrc_srqn = remote_srqn;
}

/* Offers the operations of @send_ops_flags, or EOPNOTSUPP. */
int softrma_wr_init(struct softrma_qp *qp, enum ibv_qp_type type,
		    uint64_t send_ops_flags)
{
	struct ibv_qp_ex *qpx = &qp->vqp.qp_ex;
	uint64_t ops = softrma_send_ops(type);

	if (send_ops_flags & ~ops)
		return EOPNOTSUPP;
	qpx->wr_start = softrma_wr_start;
	qpx->wr_complete = softrma_wr_complete;
	qpx->wr_abort = softrma_wr_abort;
	qpx->wr_send = softrma_wr_send;
	qpx->wr_send_imm = softrma_wr_send_imm;
	if (ops & IBV_QP_EX_WITH_SEND_WITH_INV)
		qpx->wr_send_inv = softrma_wr_send_inv;
	qpx->wr_local_inv = softrma_wr_local_inv;
	if (ops & IBV_QP_EX_WITH_BIND_MW)
		qpx->wr_bind_mw = softrma_wr_bind_mw;
	if (ops & IBV_QP_EX_WITH_RDMA_WRITE) {
		qpx->wr_rdma_write = softrma_wr_rdma_write;
		qpx->wr_rdma_write_imm = softrma_wr_rdma_write_imm;
	}
	if (ops & IBV_QP_EX_WITH_RDMA_READ) {
		qpx->wr_rdma_read = softrma_wr_rdma_read;
		qpx->wr_atomic_cmp_swp = softrma_wr_atomic_cmp_swp;
		qpx->wr_atomic_fetch_add = softrma_wr_atomic_fetch_add;
		qpx->wr_atomic_write = softrma_wr_atomic_write;
	}
	qp->send_ops = send_ops_flags;
	qpx->wr_set_sge = softrma_wr_set_sge;
	qpx->wr_set_sge_list = softrma_wr_set_sge_list;
	qpx->wr_set_inline_data = softrma_wr_set_inline_data;
	qpx->wr_set_inline_data_list = softrma_wr_set_inline_data_list;
	qpx->wr_set_ud_addr = softrma_wr_set_ud_addr;
	qpx->wr_set_xrc_srqn = softrma_wr_set_xrc_srqn;
	return 0;
}
