// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Queue pairs: work requests go straight into the shared rings; one
 * POST_SEND write() with no work requests rings the send doorbell.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "softrma.h"

static void softrma_qp_init_doorbell(struct softrma_qp *qp)
{
	qp->doorbell.hdr.command = IB_USER_VERBS_CMD_POST_SEND;
	qp->doorbell.hdr.in_words = sizeof(qp->doorbell) / 4;
	qp->doorbell.hdr.out_words = sizeof(qp->doorbell_resp) / 4;
	qp->doorbell.cmd.response = (uintptr_t)&qp->doorbell_resp;
	qp->doorbell.cmd.qp_handle = qp->ibqp.handle;
	qp->doorbell.cmd.wqe_size = sizeof(struct ib_uverbs_send_wr);
}

struct ibv_qp *softrma_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	struct {
		struct ib_uverbs_create_qp_resp ibv;
		struct softrma_create_qp_resp drv;
	} resp;
	struct ibv_create_qp cmd;
	struct softrma_qp *qp;
	int ret;

	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;
	ret = ibv_cmd_create_qp(pd, &qp->ibqp, attr, &cmd, sizeof(cmd),
				&resp.ibv, sizeof(resp));
	if (ret)
		goto err_free;
	ret = softrma_ring_map(&qp->sq, pd->context->cmd_fd, resp.drv.sq_mmap_key,
			       resp.drv.sq_entries, resp.drv.sq_stride);
	if (ret)
		goto err_destroy;
	ret = softrma_ring_map(&qp->rq, pd->context->cmd_fd, resp.drv.rq_mmap_key,
			       resp.drv.rq_entries, resp.drv.rq_stride);
	if (ret) {
		softrma_ring_unmap(&qp->sq);
		goto err_destroy;
	}
	qp->cap = attr->cap;
	pthread_spin_init(&qp->sq_lock, PTHREAD_PROCESS_PRIVATE);
	pthread_spin_init(&qp->rq_lock, PTHREAD_PROCESS_PRIVATE);
	softrma_qp_init_doorbell(qp);
	return &qp->ibqp;

err_destroy:
	ibv_cmd_destroy_qp(&qp->ibqp);
err_free:
	free(qp);
	errno = ret;
	return NULL;
}

int softrma_destroy_qp(struct ibv_qp *ibqp)
{
	struct softrma_qp *qp = to_sqp(ibqp);
	int ret = ibv_cmd_destroy_qp(ibqp);

	if (ret)
		return ret;
	softrma_ring_unmap(&qp->rq);
	softrma_ring_unmap(&qp->sq);
	pthread_spin_destroy(&qp->sq_lock);
	pthread_spin_destroy(&qp->rq_lock);
	free(qp);
	return 0;
}

int softrma_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		      int attr_mask)
{
	struct softrma_qp *qp = to_sqp(ibqp);
	struct ibv_modify_qp cmd;
	int ret;

	ret = ibv_cmd_modify_qp(ibqp, attr, attr_mask, &cmd, sizeof(cmd));
	if (ret || !(attr_mask & IBV_QP_STATE))
		return ret;

	/* The kernel empties both rings on RESET; so does the provider. */
	pthread_spin_lock(&qp->sq_lock);
	pthread_spin_lock(&qp->rq_lock);
	qp->state = attr->qp_state;
	if (attr->qp_state == IBV_QPS_RESET) {
		qp->sq.index = 0;
		qp->rq.index = 0;
	}
	pthread_spin_unlock(&qp->rq_lock);
	pthread_spin_unlock(&qp->sq_lock);
	return 0;
}

int softrma_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		     int attr_mask, struct ibv_qp_init_attr *init_attr)
{
	struct ibv_query_qp cmd;

	return ibv_cmd_query_qp(ibqp, attr, attr_mask, init_attr, &cmd,
				sizeof(cmd));
}

static int softrma_copy_inline(struct softrma_qp *qp, struct softrma_sqe *sqe,
			       const struct ibv_send_wr *wr)
{
	char *dst = (char *)sqe->sge;
	uint32_t len = 0;

	for (int i = 0; i < wr->num_sge; i++) {
		if (wr->sg_list[i].length > qp->cap.max_inline_data - len)
			return EINVAL;
		memcpy(dst + len, (void *)(uintptr_t)wr->sg_list[i].addr,
		       wr->sg_list[i].length);
		len += wr->sg_list[i].length;
	}
	sqe->inline_len = len;
	sqe->num_sge = 0;
	return 0;
}

static int softrma_copy_sges(struct softrma_sge *dst, const struct ibv_sge *src,
			     int num, uint32_t max)
{
	if (num < 0 || (uint32_t)num > max)
		return EINVAL;
	for (int i = 0; i < num; i++)
		dst[i] = (struct softrma_sge) {
			.addr = src[i].addr,
			.length = src[i].length,
			.lkey = src[i].lkey,
		};
	return 0;
}

static int softrma_build_sqe(struct softrma_qp *qp, const struct ibv_send_wr *wr)
{
	struct softrma_sqe *sqe;
	int inline_src = 0;

	if (softrma_ring_full(&qp->sq))
		return ENOMEM;
	/* Datagrams are SENDs: RDMA and atomics need a connection. */
	if (qp->ibqp.qp_type == IBV_QPT_UD && wr->opcode != IBV_WR_SEND &&
	    wr->opcode != IBV_WR_SEND_WITH_IMM)
		return EINVAL;
	sqe = softrma_ring_entry(&qp->sq, qp->sq.index);
	memset(sqe, 0, sizeof(*sqe));
	switch (wr->opcode) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
		inline_src = 1;
		if (qp->ibqp.qp_type == IBV_QPT_UD) {
			if (!wr->wr.ud.ah)
				return EINVAL;
			sqe->wr.ud.ah = to_sah(wr->wr.ud.ah)->num;
			sqe->wr.ud.remote_qpn = wr->wr.ud.remote_qpn;
			sqe->wr.ud.remote_qkey = wr->wr.ud.remote_qkey;
		}
		break;
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		inline_src = 1;
		/* fall through */
	case IBV_WR_RDMA_READ:
		sqe->wr.rdma.remote_addr = wr->wr.rdma.remote_addr;
		sqe->wr.rdma.rkey = wr->wr.rdma.rkey;
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		sqe->wr.atomic.remote_addr = wr->wr.atomic.remote_addr;
		sqe->wr.atomic.compare_add = wr->wr.atomic.compare_add;
		sqe->wr.atomic.swap = wr->wr.atomic.swap;
		sqe->wr.atomic.rkey = wr->wr.atomic.rkey;
		break;
	default:
		return EINVAL;
	}
	sqe->wr_id = wr->wr_id;
	sqe->opcode = wr->opcode;
	sqe->send_flags = wr->send_flags;
	sqe->imm_data = wr->imm_data;
	if (!inline_src)
		sqe->send_flags &= ~IBV_SEND_INLINE;
	if (sqe->send_flags & IBV_SEND_INLINE) {
		if (softrma_copy_inline(qp, sqe, wr))
			return EINVAL;
	} else {
		if (softrma_copy_sges(sqe->sge, wr->sg_list, wr->num_sge,
				      qp->cap.max_send_sge))
			return EINVAL;
		sqe->num_sge = wr->num_sge;
	}
	qp->sq.index++;
	return 0;
}

static int softrma_ring_doorbell(struct softrma_qp *qp)
{
	if (write(qp->ibqp.context->cmd_fd, &qp->doorbell,
		  sizeof(qp->doorbell)) != sizeof(qp->doorbell))
		return errno;
	return 0;
}

int softrma_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		      struct ibv_send_wr **bad_wr)
{
	struct softrma_qp *qp = to_sqp(ibqp);
	struct ibv_send_wr *first = wr;
	int ret = 0;

	pthread_spin_lock(&qp->sq_lock);
	if (qp->state == IBV_QPS_RESET || qp->state == IBV_QPS_INIT ||
	    qp->state == IBV_QPS_RTR) {
		ret = EINVAL;
		*bad_wr = wr;
		goto out;
	}
	for (; wr; wr = wr->next) {
		ret = softrma_build_sqe(qp, wr);
		if (ret) {
			*bad_wr = wr;
			break;
		}
	}
	if (wr != first) {
		softrma_ring_store(&qp->sq.hdr->producer, qp->sq.index);
		if (!ret) {
			ret = softrma_ring_doorbell(qp);
			if (ret)
				*bad_wr = first;
		}
		/* After a bad WR the ones before it were posted: ring for them. */
		else
			softrma_ring_doorbell(qp);
	}
out:
	pthread_spin_unlock(&qp->sq_lock);
	return ret;
}

/* Writes receive WRs into @rq (a QP's RQ or an SRQ); the caller locks it. */
int softrma_ring_post_recv(struct softrma_ring *rq, uint32_t max_sge,
			   struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	struct softrma_rqe *rqe;
	int ret = 0;

	for (; wr; wr = wr->next) {
		if (softrma_ring_full(rq)) {
			ret = ENOMEM;
		} else {
			rqe = softrma_ring_entry(rq, rq->index);
			rqe->wr_id = wr->wr_id;
			rqe->num_sge = wr->num_sge;
			ret = softrma_copy_sges(rqe->sge, wr->sg_list, wr->num_sge,
						max_sge);
		}
		if (ret) {
			*bad_wr = wr;
			break;
		}
		rq->index++;
	}
	softrma_ring_store(&rq->hdr->producer, rq->index);
	return ret;
}

int softrma_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		      struct ibv_recv_wr **bad_wr)
{
	struct softrma_qp *qp = to_sqp(ibqp);
	int ret;

	pthread_spin_lock(&qp->rq_lock);
	if (qp->state == IBV_QPS_RESET || ibqp->srq) {
		*bad_wr = wr;
		ret = EINVAL;
	} else {
		ret = softrma_ring_post_recv(&qp->rq, qp->cap.max_recv_sge, wr,
					     bad_wr);
	}
	pthread_spin_unlock(&qp->rq_lock);
	return ret;
}
