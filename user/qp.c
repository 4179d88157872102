// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Queue pairs: work requests go straight into the shared rings; one
 * POST_SEND write() with no work requests rings the send doorbell (through
 * ioctl() on an imported context).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <rdma/ib_user_ioctl_cmds.h>

#include "softrma.h"
#include "softrmadv.h"

static void softrma_qp_init_doorbell(struct softrma_qp *qp)
{
	qp->doorbell.hdr.command = IB_USER_VERBS_CMD_POST_SEND;
	qp->doorbell.hdr.in_words = sizeof(qp->doorbell) / 4;
	qp->doorbell.hdr.out_words = sizeof(qp->doorbell_resp) / 4;
	qp->doorbell.cmd.response = (uintptr_t)&qp->doorbell_resp;
	qp->doorbell.cmd.qp_handle = qp->ibqp.handle;
	qp->doorbell.cmd.wqe_size = sizeof(struct ib_uverbs_send_wr);
	if (!to_sctx(qp->ibqp.context)->imported)
		return;
	qp->doorbell_ioctl.hdr = (struct ib_uverbs_ioctl_hdr) {
		.length = sizeof(qp->doorbell_ioctl),
		.object_id = UVERBS_OBJECT_DEVICE,
		.method_id = UVERBS_METHOD_INVOKE_WRITE,
		.num_attrs = ARRAY_SIZE(qp->doorbell_ioctl.attrs),
	};
	qp->doorbell_ioctl.attrs[0] = (struct ib_uverbs_attr) {
		.attr_id = UVERBS_ATTR_WRITE_CMD, .len = sizeof(uint64_t),
		.flags = UVERBS_ATTR_F_MANDATORY,
		.data = IB_USER_VERBS_CMD_POST_SEND,
	};
	qp->doorbell_ioctl.attrs[1] = (struct ib_uverbs_attr) {
		.attr_id = UVERBS_ATTR_CORE_IN, .len = sizeof(qp->doorbell.cmd),
		.flags = UVERBS_ATTR_F_MANDATORY,
		.data = (uintptr_t)&qp->doorbell.cmd,
	};
	qp->doorbell_ioctl.attrs[2] = (struct ib_uverbs_attr) {
		.attr_id = UVERBS_ATTR_CORE_OUT, .len = sizeof(qp->doorbell_resp),
		.flags = UVERBS_ATTR_F_MANDATORY,
		.data = (uintptr_t)&qp->doorbell_resp,
	};
}

/* What ibv_create_qp_ex() offers beyond the kernel's create_qp. */
#define SOFTRMA_QP_INIT_MASK (IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_XRCD | \
			      IBV_QP_INIT_ATTR_SEND_OPS_FLAGS | \
			      IBV_QP_INIT_ATTR_CREATE_FLAGS)

/*
 * An XRC receive QP has no queues: the kernel shares it between the
 * processes that open it, and its receives come from XRC SRQs.
 */
static int softrma_qp_has_rings(enum ibv_qp_type type)
{
	return type != IBV_QPT_XRC_RECV;
}

/* The QP's rings, in @qp->parent's memory when its allocator gives some. */
static int softrma_qp_alloc_rings(struct softrma_qp *qp,
				  const struct ibv_qp_cap *cap,
				  struct softrma_create_qp_cmd *drv)
{
	int ret;

	ret = softrma_ring_alloc(&qp->sq, qp->parent, SOFTRMADV_RES_TYPE_SQ,
				 softrma_ring_entries(cap->max_send_wr),
				 softrma_sqe_bytes(cap->max_send_sge,
						   cap->max_inline_data),
				 &drv->sq);
	if (!ret)
		ret = softrma_ring_alloc(&qp->rq, qp->parent,
					 SOFTRMADV_RES_TYPE_RQ,
					 softrma_ring_entries(cap->max_recv_wr),
					 softrma_rqe_bytes(cap->max_recv_sge),
					 &drv->rq);
	return ret;
}

static int softrma_qp_map(struct softrma_qp *qp, int cmd_fd,
			  const struct softrma_create_qp_resp *drv,
			  const struct ibv_qp_cap *cap)
{
	int ret;

	ret = softrma_ring_map(&qp->sq, cmd_fd, drv->sq_mmap_key,
			       drv->sq_entries, drv->sq_stride,
			       softrma_sqe_bytes(cap->max_send_sge,
						 cap->max_inline_data));
	if (!ret)
		ret = softrma_ring_map(&qp->rq, cmd_fd, drv->rq_mmap_key,
				       drv->rq_entries, drv->rq_stride,
				       softrma_rqe_bytes(cap->max_recv_sge));
	return ret;
}

/* What the QP holds besides the kernel's QP, once that is gone. */
static void softrma_qp_free(struct softrma_qp *qp)
{
	softrma_ring_unmap(&qp->rq);
	softrma_ring_unmap(&qp->sq);
	softrma_parent_domain_put(qp->parent);
	free(qp);
}

struct ibv_qp *softrma_create_qp_ex(struct ibv_context *ctx,
				    struct ibv_qp_init_attr_ex *attr)
{
	struct {
		struct ib_uverbs_create_qp_resp ibv;
		struct softrma_create_qp_resp drv;
	} resp;
	struct {
		struct ibv_create_qp ibv;
		struct softrma_create_qp_cmd drv;
	} cmd = {};
	struct ibv_qp_init_attr_ex core = *attr;
	struct softrma_qp *qp;
	int ret;

	/* softrma has none of the create flags. */
	if ((attr->comp_mask & ~SOFTRMA_QP_INIT_MASK) ||
	    ((attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) &&
	     attr->create_flags)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_PD) &&
	    (!attr->pd || attr->pd->context != ctx)) {
		errno = EINVAL;
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		ret = softrma_wr_init(qp, attr->qp_type, attr->send_ops_flags);
		if (ret)
			goto err_free;
	}
	if (attr->comp_mask & IBV_QP_INIT_ATTR_PD)
		qp->parent = softrma_parent_domain_get(attr->pd);
	if (softrma_qp_has_rings(attr->qp_type)) {
		ret = softrma_qp_alloc_rings(qp, &attr->cap, &cmd.drv);
		if (ret)
			goto err_free;
	}
	core.comp_mask &= IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_XRCD;
	ret = ibv_cmd_create_qp_ex(ctx, &qp->vqp, &core, &cmd.ibv, sizeof(cmd),
				   &resp.ibv, sizeof(resp));
	if (ret)
		goto err_free;
	attr->cap = core.cap;
	/* Set after the command, which initialises comp_mask. */
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)
		softrma_abi_enable_qp_ex(qp);
	if (softrma_qp_has_rings(attr->qp_type)) {
		ret = softrma_qp_map(qp, ctx->cmd_fd, &resp.drv, &core.cap);
		if (ret)
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
	softrma_qp_free(qp);
	errno = ret;
	return NULL;
}

struct ibv_qp *softrma_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_init_attr_ex ex = {};
	struct ibv_qp *qp;

	/* The leading members match (the padding after them does not). */
	memcpy(&ex, attr, offsetof(struct ibv_qp_init_attr, sq_sig_all) +
			  sizeof(attr->sq_sig_all));
	ex.comp_mask = IBV_QP_INIT_ATTR_PD;
	ex.pd = pd;
	qp = softrma_create_qp_ex(pd->context, &ex);
	if (qp)
		attr->cap = ex.cap;
	return qp;
}

/* Another handle of an XRC receive QP, which has no rings. */
struct ibv_qp *softrma_open_qp(struct ibv_context *ctx,
			       struct ibv_qp_open_attr *attr)
{
	struct ib_uverbs_create_qp_resp resp;
	struct ibv_open_qp cmd;
	struct softrma_qp *qp;
	int ret;

	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;
	ret = ibv_cmd_open_qp(ctx, &qp->vqp, sizeof(qp->vqp), attr, &cmd,
			      sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		free(qp);
		errno = ret;
		return NULL;
	}
	pthread_spin_init(&qp->sq_lock, PTHREAD_PROCESS_PRIVATE);
	pthread_spin_init(&qp->rq_lock, PTHREAD_PROCESS_PRIVATE);
	return &qp->ibqp;
}

int softrma_destroy_qp(struct ibv_qp *ibqp)
{
	struct softrma_qp *qp = to_sqp(ibqp);
	int ret = ibv_cmd_destroy_qp(ibqp);

	if (ret)
		return ret;
	pthread_spin_destroy(&qp->sq_lock);
	pthread_spin_destroy(&qp->rq_lock);
	softrma_qp_free(qp);
	return 0;
}

/*
 * Takes the completions of QP @qp_num out of @ibcq.  The kernel, which
 * produces into the ring while this runs, adds none for a QP in RESET and
 * writes only past the producer index read here; the entries kept move
 * towards it in their order, and the consumer index skips those freed.
 */
static void softrma_cq_clean(struct ibv_cq *ibcq, uint32_t qp_num)
{
	struct softrma_cq *cq = to_scq(ibcq);
	struct softrma_ring *ring = &cq->ring;
	uint32_t i, freed = 0;

	pthread_spin_lock(&cq->lock);
	for (i = softrma_ring_load(&ring->hdr->producer); i != ring->index;) {
		struct softrma_cqe *cqe = softrma_ring_entry(ring, --i);

		if (cqe->qp_num == qp_num)
			freed++;
		else if (freed)
			memcpy(softrma_ring_entry(ring, i + freed), cqe,
			       sizeof(*cqe));
	}
	if (freed) {
		ring->index += freed;
		softrma_ring_store(&ring->hdr->consumer, ring->index);
	}
	pthread_spin_unlock(&cq->lock);
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

	/*
	 * Its completions go with them, as mlx5's do (rdma-core's test_mr);
	 * an XRC receive QP's are its SRQs', and stay.
	 */
	if (attr->qp_state == IBV_QPS_RESET) {
		if (ibqp->send_cq)
			softrma_cq_clean(ibqp->send_cq, ibqp->qp_num);
		if (ibqp->recv_cq && ibqp->recv_cq != ibqp->send_cq)
			softrma_cq_clean(ibqp->recv_cq, ibqp->qp_num);
	}
	return 0;
}

int softrma_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		     int attr_mask, struct ibv_qp_init_attr *init_attr)
{
	struct ibv_query_qp cmd;

	return ibv_cmd_query_qp(ibqp, attr, attr_mask, init_attr, &cmd,
				sizeof(cmd));
}

/* Posting is allowed from RTS on (and flushes once in error). */
int softrma_qp_can_send(struct softrma_qp *qp)
{
	return qp->state != IBV_QPS_RESET && qp->state != IBV_QPS_INIT &&
	       qp->state != IBV_QPS_RTR;
}

/*
 * Claims the next SQ entry, unpublished until softrma_sq_publish(); NULL
 * when the ring is full.  The caller holds sq_lock.
 */
struct softrma_sqe *softrma_sqe_claim(struct softrma_qp *qp, uint64_t wr_id,
				      uint32_t opcode, uint32_t flags)
{
	struct softrma_sqe *sqe;

	if (softrma_ring_full(&qp->sq))
		return NULL;
	sqe = softrma_ring_entry(&qp->sq, qp->sq.index++);
	memset(sqe, 0, sizeof(*sqe));
	sqe->wr_id = wr_id;
	sqe->opcode = opcode;
	sqe->send_flags = flags & ~IBV_SEND_INLINE;
	return sqe;
}

int softrma_sqe_add_inline(struct softrma_qp *qp, struct softrma_sqe *sqe,
			   const void *addr, size_t len)
{
	if (len > qp->cap.max_inline_data - sqe->inline_len)
		return EINVAL;
	memcpy((char *)sqe->sge + sqe->inline_len, addr, len);
	sqe->inline_len += len;
	sqe->send_flags |= IBV_SEND_INLINE;
	return 0;
}

static int softrma_copy_sges(struct softrma_sge *dst, const struct ibv_sge *src,
			     size_t num, uint32_t max)
{
	if (num > max)
		return EINVAL;
	for (size_t i = 0; i < num; i++)
		dst[i] = (struct softrma_sge) {
			.addr = src[i].addr,
			.length = src[i].length,
			.lkey = src[i].lkey,
		};
	return 0;
}

int softrma_sqe_set_sges(struct softrma_qp *qp, struct softrma_sqe *sqe,
			 const struct ibv_sge *sg, size_t num)
{
	if (softrma_copy_sges(sqe->sge, sg, num, qp->cap.max_send_sge))
		return EINVAL;
	sqe->num_sge = num;
	return 0;
}

void softrma_sqe_set_ud(struct softrma_qp *qp, struct softrma_sqe *sqe,
			struct ibv_ah *ah, uint32_t remote_qpn,
			uint32_t remote_qkey)
{
	sqe->wr.ud.ah = to_sah(ah)->num;
	sqe->wr.ud.remote_qpn = remote_qpn;
	sqe->wr.ud.remote_qkey = remote_qkey;
}

static int softrma_sqe_set_data(struct softrma_qp *qp, struct softrma_sqe *sqe,
				const struct ibv_send_wr *wr, int inline_src)
{
	if (!inline_src || !(wr->send_flags & IBV_SEND_INLINE))
		return softrma_sqe_set_sges(qp, sqe, wr->sg_list, wr->num_sge);
	for (int i = 0; i < wr->num_sge; i++)
		if (softrma_sqe_add_inline(qp, sqe,
					   (void *)(uintptr_t)wr->sg_list[i].addr,
					   wr->sg_list[i].length))
			return EINVAL;
	return 0;
}

/* A bind of @mw, under its next key @rkey, to what @info names. */
int softrma_sqe_set_bind(struct softrma_sqe *sqe, struct ibv_mw *mw,
			 uint32_t rkey, const struct ibv_mw_bind_info *info)
{
	if (!mw)
		return EINVAL;
	sqe->wr.bind.addr = info->addr;
	sqe->wr.bind.length = info->length;
	sqe->wr.bind.mw_key = mw->rkey;
	sqe->wr.bind.new_key = rkey;
	sqe->wr.bind.mr_lkey = info->mr ? info->mr->lkey : 0;
	sqe->wr.bind.access = info->mw_access_flags;
	return 0;
}

static int softrma_sqe_set_remote(struct softrma_qp *qp, struct softrma_sqe *sqe,
				  const struct ibv_send_wr *wr)
{
	switch (roce_wr_op(wr->opcode)->kind) {
	case ROCE_KIND_SEND:
		if (qp->ibqp.qp_type == IBV_QPT_UD) {
			if (!wr->wr.ud.ah)
				return EINVAL;
			softrma_sqe_set_ud(qp, sqe, wr->wr.ud.ah,
					   wr->wr.ud.remote_qpn,
					   wr->wr.ud.remote_qkey);
		}
		return 0;
	case ROCE_KIND_WRITE:
	case ROCE_KIND_READ:
		sqe->wr.rdma.remote_addr = wr->wr.rdma.remote_addr;
		sqe->wr.rdma.rkey = wr->wr.rdma.rkey;
		return 0;
	case ROCE_KIND_ATOMIC:
		sqe->wr.atomic.remote_addr = wr->wr.atomic.remote_addr;
		sqe->wr.atomic.compare_add = wr->wr.atomic.compare_add;
		sqe->wr.atomic.swap = wr->wr.atomic.swap;
		sqe->wr.atomic.rkey = wr->wr.atomic.rkey;
		return 0;
	case ROCE_KIND_BIND_MW:
		return softrma_sqe_set_bind(sqe, wr->bind_mw.mw, wr->bind_mw.rkey,
					    &wr->bind_mw.bind_info);
	case ROCE_KIND_LOCAL_INV:
		return 0;
	default:
		return EINVAL;
	}
}

/* ATOMIC WRITE takes its 8 bytes from the one SGE, at post time. */
static int softrma_sqe_set_atomic_write(struct softrma_sqe *sqe,
					const struct ibv_send_wr *wr)
{
	if (wr->num_sge != 1 || wr->sg_list[0].length != sizeof(uint64_t))
		return EINVAL;
	softrma_sqe_set_atomic_write_dest(sqe, wr->wr.rdma.rkey,
					  wr->wr.rdma.remote_addr,
					  (const void *)(uintptr_t)wr->sg_list[0].addr);
	return 0;
}

void softrma_sqe_set_atomic_write_dest(struct softrma_sqe *sqe, uint32_t rkey,
				       uint64_t remote_addr, const void *value)
{
	sqe->wr.atomic_write.remote_addr = remote_addr;
	sqe->wr.atomic_write.rkey = rkey;
	memcpy(&sqe->wr.atomic_write.value, value, sizeof(uint64_t));
}

/* proto/wr.h's numbers are libibverbs'. */
#define SOFTRMA_SAME(a, b) static_assert((int)(a) == (int)(b), #a)
SOFTRMA_SAME(IBV_WR_RDMA_WRITE, ROCE_WR_RDMA_WRITE);
SOFTRMA_SAME(IBV_WR_RDMA_WRITE_WITH_IMM, ROCE_WR_RDMA_WRITE_WITH_IMM);
SOFTRMA_SAME(IBV_WR_SEND, ROCE_WR_SEND);
SOFTRMA_SAME(IBV_WR_SEND_WITH_IMM, ROCE_WR_SEND_WITH_IMM);
SOFTRMA_SAME(IBV_WR_RDMA_READ, ROCE_WR_RDMA_READ);
SOFTRMA_SAME(IBV_WR_ATOMIC_CMP_AND_SWP, ROCE_WR_ATOMIC_CMP_AND_SWP);
SOFTRMA_SAME(IBV_WR_ATOMIC_FETCH_AND_ADD, ROCE_WR_ATOMIC_FETCH_AND_ADD);
SOFTRMA_SAME(IBV_WR_LOCAL_INV, ROCE_WR_LOCAL_INV);
SOFTRMA_SAME(IBV_WR_BIND_MW, ROCE_WR_BIND_MW);
SOFTRMA_SAME(IBV_WC_BIND_MW, ROCE_WC_BIND_MW);
SOFTRMA_SAME(IBV_ACCESS_MW_BIND, ROCE_ACCESS_MW_BIND);
SOFTRMA_SAME(IBV_ACCESS_ZERO_BASED, ROCE_ACCESS_ZERO_BASED);
SOFTRMA_SAME(IBV_WR_SEND_WITH_INV, ROCE_WR_SEND_WITH_INV);
SOFTRMA_SAME(IBV_WR_ATOMIC_WRITE, ROCE_WR_ATOMIC_WRITE);
SOFTRMA_SAME(SOFTRMA_WR_FLUSH, ROCE_WR_FLUSH);
SOFTRMA_SAME(IBV_QPT_RC, ROCE_QPT_RC);
SOFTRMA_SAME(IBV_QPT_UC, ROCE_QPT_UC);
SOFTRMA_SAME(IBV_QPT_UD, ROCE_QPT_UD);
SOFTRMA_SAME(IBV_QPT_XRC_SEND, ROCE_QPT_XRC);

/* Up to SEND_WITH_INV, the bits of ibv_post_send opcodes line up. */
static_assert(IBV_QP_EX_WITH_SEND == 1 << IBV_WR_SEND, "send");
static_assert(IBV_QP_EX_WITH_SEND_WITH_IMM == 1 << IBV_WR_SEND_WITH_IMM, "imm");
static_assert(IBV_QP_EX_WITH_RDMA_WRITE == 1 << IBV_WR_RDMA_WRITE, "write");
static_assert(IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM ==
	      1 << IBV_WR_RDMA_WRITE_WITH_IMM, "write imm");
static_assert(IBV_QP_EX_WITH_RDMA_READ == 1 << IBV_WR_RDMA_READ, "read");
static_assert(IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP ==
	      1 << IBV_WR_ATOMIC_CMP_AND_SWP, "cmp swap");
static_assert(IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD ==
	      1 << IBV_WR_ATOMIC_FETCH_AND_ADD, "fetch add");
static_assert(IBV_QP_EX_WITH_LOCAL_INV == 1 << IBV_WR_LOCAL_INV, "local inv");
static_assert(IBV_QP_EX_WITH_BIND_MW == 1 << IBV_WR_BIND_MW, "bind mw");
static_assert(IBV_QP_EX_WITH_SEND_WITH_INV == 1 << IBV_WR_SEND_WITH_INV,
	      "send inv");

/* The IBV_QP_EX_WITH_* bit of a work request opcode. */
static uint64_t softrma_qp_ex_op(uint32_t opcode)
{
	if (opcode == ROCE_WR_ATOMIC_WRITE)
		return IBV_QP_EX_WITH_ATOMIC_WRITE;
	if (opcode == ROCE_WR_FLUSH)
		return SOFTRMADV_QP_EX_WITH_FLUSH;
	return 1ULL << opcode;
}

/* Kernel consumers' own operations (REG_MR, ...) are not the provider's. */
static int softrma_opcode_posts_on(uint32_t opcode, enum ibv_qp_type type)
{
	const struct roce_wr_op *op = roce_wr_op(opcode);

	return type < 16 && (op->qp_types & 1u << type) && !op->kernel;
}

/*
 * The operations a QP type has, as IBV_QP_EX_WITH_* bits: those of the
 * opcodes it may post (proto/wr.c).
 */
uint64_t softrma_send_ops(enum ibv_qp_type type)
{
	uint64_t ops = 0;

	for (uint32_t opcode = 0; opcode <= ROCE_WR_ATOMIC_WRITE; opcode++)
		if (softrma_opcode_posts_on(opcode, type))
			ops |= softrma_qp_ex_op(opcode);
	return ops;
}

int softrma_opcode_takes_inline(uint32_t opcode)
{
	return roce_wr_op(opcode)->inline_ok;
}

/* ibv_post_send: FLUSH has no ibv_send_wr form, only ibv_wr_flush(). */
static int softrma_opcode_ok(enum ibv_qp_type type, uint32_t opcode)
{
	return opcode != ROCE_WR_FLUSH && softrma_opcode_posts_on(opcode, type);
}

static int softrma_build_sqe(struct softrma_qp *qp, const struct ibv_send_wr *wr)
{
	int inline_src = softrma_opcode_takes_inline(wr->opcode);
	struct softrma_sqe *sqe;

	if (!softrma_opcode_ok(qp->ibqp.qp_type, wr->opcode))
		return EINVAL;
	sqe = softrma_sqe_claim(qp, wr->wr_id, wr->opcode, wr->send_flags);
	if (!sqe)
		return ENOMEM;
	sqe->imm_data = wr->imm_data;		/* or invalidate_rkey */
	if (qp->ibqp.qp_type == IBV_QPT_XRC_SEND)
		sqe->xrc_srqn = wr->qp_type.xrc.remote_srqn;
	if (wr->opcode == IBV_WR_ATOMIC_WRITE) {
		if (softrma_sqe_set_atomic_write(sqe, wr)) {
			qp->sq.index--;
			return EINVAL;
		}
		return 0;
	}
	if (softrma_sqe_set_remote(qp, sqe, wr) ||
	    (!roce_wr_op(wr->opcode)->local &&
	     softrma_sqe_set_data(qp, sqe, wr, inline_src))) {
		qp->sq.index--;
		return EINVAL;
	}
	return 0;
}

static int softrma_ring_doorbell(struct softrma_qp *qp)
{
	int fd = qp->ibqp.context->cmd_fd;

	if (qp->doorbell_ioctl.hdr.length)
		return ioctl(fd, RDMA_VERBS_IOCTL, &qp->doorbell_ioctl) ? errno : 0;
	if (write(fd, &qp->doorbell, sizeof(qp->doorbell)) !=
	    sizeof(qp->doorbell))
		return errno;
	return 0;
}

/*
 * Publishes the claimed entries and rings the doorbell, unless the kernel
 * says it is draining the queue (SOFTRMA_RING_DRAINING); sq_lock held.
 */
int softrma_sq_publish(struct softrma_qp *qp)
{
	softrma_ring_store(&qp->sq.hdr->producer, qp->sq.index);
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit((_Atomic uint32_t *)&qp->sq.hdr->consumer_flags,
				 memory_order_relaxed) & SOFTRMA_RING_DRAINING)
		return 0;
	return softrma_ring_doorbell(qp);
}

int softrma_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		      struct ibv_send_wr **bad_wr)
{
	struct softrma_qp *qp = to_sqp(ibqp);
	struct ibv_send_wr *first = wr;
	int ret = 0;

	/* An XRC RECV QP has no send queue. */
	if (!softrma_qp_has_rings(ibqp->qp_type)) {
		*bad_wr = wr;
		return EINVAL;
	}
	pthread_spin_lock(&qp->sq_lock);
	if (!softrma_qp_can_send(qp)) {
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
	/* After a bad WR the ones before it were posted: ring for them. */
	if (wr != first) {
		int err = softrma_sq_publish(qp);

		if (err && !ret) {
			ret = err;
			*bad_wr = first;
		}
	}
out:
	pthread_spin_unlock(&qp->sq_lock);
	return ret;
}

/*
 * ibv_bind_mw(): a type 1 window's bind goes through the send queue; the
 * window takes its next key now, and keeps it if the bind fails.
 */
int softrma_bind_mw(struct ibv_qp *ibqp, struct ibv_mw *mw,
		    struct ibv_mw_bind *bind)
{
	struct ibv_send_wr wr = {
		.wr_id = bind->wr_id,
		.opcode = IBV_WR_BIND_MW,
		.send_flags = bind->send_flags,
		.bind_mw = {
			.mw = mw,
			.rkey = ibv_inc_rkey(mw->rkey),
			.bind_info = bind->bind_info,
		},
	};
	struct ibv_send_wr *bad_wr;
	int ret;

	/* o10-36.2.2: a type 1 window is never zero-based. */
	if (bind->bind_info.mw_access_flags & IBV_ACCESS_ZERO_BASED)
		return EINVAL;
	ret = softrma_post_send(ibqp, &wr, &bad_wr);
	if (!ret)
		mw->rkey = wr.bind_mw.rkey;
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
	if (qp->state == IBV_QPS_RESET || ibqp->srq ||
	    ibqp->qp_type == IBV_QPT_XRC_SEND ||
	    ibqp->qp_type == IBV_QPT_XRC_RECV) {
		*bad_wr = wr;
		ret = EINVAL;
	} else {
		ret = softrma_ring_post_recv(&qp->rq, qp->cap.max_recv_sge, wr,
					     bad_wr);
	}
	pthread_spin_unlock(&qp->rq_lock);
	return ret;
}
