// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Shared receive queues, basic and XRC: receives go straight into the
 * shared ring.
 */
#include <errno.h>
#include <stdlib.h>

#include "softrma.h"
#include "softrmadv.h"

/* What the SRQ holds besides the kernel's SRQ, once that is gone. */
static void softrma_srq_free(struct softrma_srq *srq)
{
	softrma_ring_unmap(&srq->ring);
	softrma_parent_domain_put(srq->parent);
	free(srq);
}

#define SOFTRMA_SRQ_INIT_MASK (IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | \
			       IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ)

/* An XRC SRQ needs its domain and CQ; every SRQ its PD. */
static int softrma_srq_check(struct ibv_context *ctx,
			     const struct ibv_srq_init_attr_ex *attr)
{
	enum ibv_srq_type type = attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE ?
				 attr->srq_type : IBV_SRQT_BASIC;

	if ((attr->comp_mask & ~SOFTRMA_SRQ_INIT_MASK) ||
	    (type != IBV_SRQT_BASIC && type != IBV_SRQT_XRC))
		return EOPNOTSUPP;
	if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_PD) || !attr->pd ||
	    attr->pd->context != ctx)
		return EINVAL;
	if (type == IBV_SRQT_XRC &&
	    (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_XRCD) || !attr->xrcd ||
	     !(attr->comp_mask & IBV_SRQ_INIT_ATTR_CQ) || !attr->cq))
		return EINVAL;
	return 0;
}

struct ibv_srq *softrma_create_srq_ex(struct ibv_context *ctx,
				      struct ibv_srq_init_attr_ex *attr)
{
	struct {
		struct ib_uverbs_create_srq_resp ibv;
		struct softrma_create_srq_resp drv;
	} resp;
	struct {
		struct ibv_create_xsrq ibv;
		struct softrma_create_srq_cmd drv;
	} cmd = {};
	struct softrma_srq *srq;
	int ret;

	ret = softrma_srq_check(ctx, attr);
	if (ret) {
		errno = ret;
		return NULL;
	}
	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return NULL;
	srq->parent = softrma_parent_domain_get(attr->pd);
	ret = softrma_ring_alloc(&srq->ring, srq->parent, SOFTRMADV_RES_TYPE_SRQ,
				 softrma_ring_entries(attr->attr.max_wr),
				 softrma_rqe_bytes(attr->attr.max_sge),
				 &cmd.drv.ring);
	if (ret)
		goto err_free;
	ret = ibv_cmd_create_srq_ex(ctx, &srq->vsrq, attr, &cmd.ibv, sizeof(cmd),
				    &resp.ibv, sizeof(resp));
	if (ret)
		goto err_free;
	ret = softrma_ring_map(&srq->ring, ctx->cmd_fd,
			       resp.drv.mmap_key, resp.drv.num_entries,
			       resp.drv.stride,
			       softrma_rqe_bytes(attr->attr.max_sge));
	if (ret) {
		ibv_cmd_destroy_srq(&srq->ibsrq);
		goto err_free;
	}
	srq->max_sge = attr->attr.max_sge;
	/* libibverbs sets these only on ibv_create_srq()'s path (before 58). */
	srq->ibsrq.pd = attr->pd;
	srq->ibsrq.srq_context = attr->srq_context;
	pthread_spin_init(&srq->lock, PTHREAD_PROCESS_PRIVATE);
	return &srq->ibsrq;

err_free:
	softrma_srq_free(srq);
	errno = ret;
	return NULL;
}

struct ibv_srq *softrma_create_srq(struct ibv_pd *pd,
				   struct ibv_srq_init_attr *attr)
{
	struct ibv_srq_init_attr_ex ex = {
		.srq_context = attr->srq_context,
		.attr = attr->attr,
		.comp_mask = IBV_SRQ_INIT_ATTR_PD,
		.pd = pd,
	};
	struct ibv_srq *srq = softrma_create_srq_ex(pd->context, &ex);

	if (srq)
		attr->attr = ex.attr;
	return srq;
}

int softrma_get_srq_num(struct ibv_srq *ibsrq, uint32_t *srq_num)
{
	struct softrma_srq *srq = to_ssrq(ibsrq);

	if (srq->vsrq.srq_type != IBV_SRQT_XRC)
		return EOPNOTSUPP;
	*srq_num = srq->vsrq.srq_num;
	return 0;
}

/* A resize moves the SRQ to the ring the kernel writes into resp. */
int softrma_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr,
		       int attr_mask)
{
	struct softrma_srq *srq = to_ssrq(ibsrq);
	struct softrma_modify_srq_resp resp = {};
	struct {
		struct ibv_modify_srq ibv;
		struct softrma_modify_srq_cmd drv;
	} cmd = { .drv.resp_addr = (uintptr_t)&resp };
	int ret;

	if (!(attr_mask & IBV_SRQ_MAX_WR))
		return ibv_cmd_modify_srq(ibsrq, attr, attr_mask, &cmd.ibv,
					  sizeof(cmd));
	pthread_spin_lock(&srq->lock);
	ret = ibv_cmd_modify_srq(ibsrq, attr, attr_mask, &cmd.ibv, sizeof(cmd));
	if (!ret)
		ret = softrma_ring_remap(&srq->ring, ibsrq->context->cmd_fd,
					 resp.mmap_key, resp.num_entries,
					 resp.stride,
					 softrma_rqe_bytes(srq->max_sge));
	pthread_spin_unlock(&srq->lock);
	return ret;
}

int softrma_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr)
{
	struct ibv_query_srq cmd;

	return ibv_cmd_query_srq(ibsrq, attr, &cmd, sizeof(cmd));
}

int softrma_destroy_srq(struct ibv_srq *ibsrq)
{
	struct softrma_srq *srq = to_ssrq(ibsrq);
	int ret = ibv_cmd_destroy_srq(ibsrq);

	if (ret)
		return ret;
	pthread_spin_destroy(&srq->lock);
	softrma_srq_free(srq);
	return 0;
}

int softrma_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
			  struct ibv_recv_wr **bad_wr)
{
	struct softrma_srq *srq = to_ssrq(ibsrq);
	int ret;

	pthread_spin_lock(&srq->lock);
	ret = softrma_ring_post_recv(&srq->ring, srq->max_sge, wr, bad_wr);
	pthread_spin_unlock(&srq->lock);
	return ret;
}
