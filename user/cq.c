// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Completion queues: polled from the shared ring, with no system call,
 * through ibv_poll_cq() or the extended ibv_start_poll() API.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "softrma.h"
#include "softrmadv.h"

int softrma_ring_map(struct softrma_ring *ring, int cmd_fd, uint64_t key,
		     uint32_t num, uint32_t stride, size_t entry_bytes)
{
	size_t page = sysconf(_SC_PAGESIZE);

	if (!softrma_ring_geometry_ok(num, stride, entry_bytes))
		return EPROTO;
	if (ring->mem_owner) {
		if (SOFTRMA_RING_BYTES(num, stride) > ring->map_len)
			return EPROTO;
	} else {
		ring->map_len = softrma_ring_pages_bytes(num, stride, page);
		ring->map = mmap(NULL, ring->map_len, PROT_READ | PROT_WRITE,
				 MAP_SHARED, cmd_fd, key);
		if (ring->map == MAP_FAILED) {
			ring->map = NULL;
			return errno;
		}
	}
	ring->hdr = ring->map;
	ring->entries = (char *)ring->map + sizeof(struct softrma_ring_hdr);
	ring->num = num;
	ring->stride = stride;
	ring->index = 0;
	return 0;
}

/*
 * Unmaps @ring, or gives its memory back to the allocator it came from:
 * the kernel no longer uses it (or never did).
 */
void softrma_ring_unmap(struct softrma_ring *ring)
{
	struct softrma_pd *owner = ring->mem_owner;

	if (owner)
		owner->free(&owner->ibpd, owner->pd_context, ring->map,
			    ring->mem_type);
	else if (ring->map)
		munmap(ring->map, ring->map_len);
	ring->map = NULL;
	ring->mem_owner = NULL;
}

/*
 * Moves @ring to the ring the kernel replaced it with (resize): the
 * entries in flight kept their indices there, so ours carries on.  The
 * kernel no longer uses the old ring, so when the new one cannot be mapped
 * @ring becomes a ring of no entries, always empty and always full: polls
 * find nothing and posts fail until the object is destroyed.
 */
int softrma_ring_remap(struct softrma_ring *ring, int cmd_fd, uint64_t key,
		       uint32_t num, uint32_t stride, size_t entry_bytes)
{
	static struct softrma_ring_hdr none;
	struct softrma_ring next = {};
	int ret;

	ret = softrma_ring_map(&next, cmd_fd, key, num, stride, entry_bytes);
	if (ret)
		next = (struct softrma_ring) { .hdr = &none };
	else
		next.index = ring->index;
	softrma_ring_unmap(ring);
	*ring = next;
	return ret;
}

static int softrma_cq_map(struct softrma_cq *cq, int cmd_fd,
			  const struct softrma_create_cq_resp *drv)
{
	int ret = softrma_ring_map(&cq->ring, cmd_fd, drv->mmap_key,
				   drv->num_entries, sizeof(struct softrma_cqe),
				   sizeof(struct softrma_cqe));

	if (!ret)
		pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
	return ret;
}

struct ibv_cq *softrma_create_cq(struct ibv_context *ctx, int cqe,
				 struct ibv_comp_channel *channel,
				 int comp_vector)
{
	struct {
		struct ib_uverbs_create_cq_resp ibv;
		struct softrma_create_cq_resp drv;
	} resp;
	struct ibv_create_cq cmd;
	struct softrma_cq *cq;
	int ret;

	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return NULL;
	ret = ibv_cmd_create_cq(ctx, cqe, channel, comp_vector, &cq->ibcq, &cmd,
				sizeof(cmd), &resp.ibv, sizeof(resp));
	if (ret)
		goto err_free;
	ret = softrma_cq_map(cq, ctx->cmd_fd, &resp.drv);
	if (ret) {
		ibv_cmd_destroy_cq(&cq->ibcq);
		goto err_free;
	}
	return &cq->ibcq;

err_free:
	free(cq);
	errno = ret;
	return NULL;
}

static struct softrma_cq *cqx_to_scq(struct ibv_cq_ex *cqx)
{
	return container_of(cqx, struct softrma_cq, vcq.cq_ex);
}

/* Makes the entry at the consumer index current; ENOENT when none. */
static int softrma_cqx_load(struct softrma_cq *cq)
{
	struct ibv_cq_ex *cqx = &cq->vcq.cq_ex;

	cq->cur = NULL;
	if (cq->ring.index == softrma_ring_load(&cq->ring.hdr->producer))
		return ENOENT;
	cq->cur = softrma_ring_entry(&cq->ring, cq->ring.index);
	cqx->wr_id = cq->cur->wr_id;
	cqx->status = cq->cur->status;
	return 0;
}

static int softrma_start_poll(struct ibv_cq_ex *cqx, struct ibv_poll_cq_attr *attr)
{
	struct softrma_cq *cq = cqx_to_scq(cqx);
	int ret;

	if (attr->comp_mask)
		return EINVAL;
	pthread_spin_lock(&cq->lock);
	ret = softrma_cqx_load(cq);
	if (ret)
		pthread_spin_unlock(&cq->lock);
	return ret;
}

static int softrma_next_poll(struct ibv_cq_ex *cqx)
{
	struct softrma_cq *cq = cqx_to_scq(cqx);

	cq->ring.index++;
	return softrma_cqx_load(cq);
}

static void softrma_end_poll(struct ibv_cq_ex *cqx)
{
	struct softrma_cq *cq = cqx_to_scq(cqx);

	if (cq->cur)
		cq->ring.index++;
	cq->cur = NULL;
	softrma_ring_store(&cq->ring.hdr->consumer, cq->ring.index);
	pthread_spin_unlock(&cq->lock);
}

static enum ibv_wc_opcode softrma_read_opcode(struct ibv_cq_ex *cqx)
{
	return cqx_to_scq(cqx)->cur->opcode;
}

static uint32_t softrma_read_vendor_err(struct ibv_cq_ex *cqx)
{
	return cqx_to_scq(cqx)->cur->vendor_err;
}

static uint32_t softrma_read_byte_len(struct ibv_cq_ex *cqx)
{
	return cqx_to_scq(cqx)->cur->byte_len;
}

static __be32 softrma_read_imm_data(struct ibv_cq_ex *cqx)
{
	return cqx_to_scq(cqx)->cur->imm_data;
}

static uint32_t softrma_read_qp_num(struct ibv_cq_ex *cqx)
{
	return cqx_to_scq(cqx)->cur->qp_num;
}

static uint32_t softrma_read_src_qp(struct ibv_cq_ex *cqx)
{
	return cqx_to_scq(cqx)->cur->src_qp;
}

static unsigned int softrma_read_wc_flags(struct ibv_cq_ex *cqx)
{
	return cqx_to_scq(cqx)->cur->wc_flags;
}

static uint32_t softrma_read_slid(struct ibv_cq_ex *cqx)
{
	return cqx_to_scq(cqx)->cur->slid;
}

static uint8_t softrma_read_sl(struct ibv_cq_ex *cqx)
{
	return cqx_to_scq(cqx)->cur->sl;
}

static uint8_t softrma_read_dlid_path_bits(struct ibv_cq_ex *cqx)
{
	return cqx_to_scq(cqx)->cur->dlid_path_bits;
}

/* The fields a softrma CQE has; timestamps, VLANs and flow tags it has not. */
static_assert(SOFTRMA_WC_WITH_INV == IBV_WC_WITH_INV, "wc flags");

#define SOFTRMA_WC_EX_FLAGS (IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM | \
			     IBV_WC_EX_WITH_QP_NUM | IBV_WC_EX_WITH_SRC_QP | \
			     IBV_WC_EX_WITH_SLID | IBV_WC_EX_WITH_SL | \
			     IBV_WC_EX_WITH_DLID_PATH_BITS)

static void softrma_cqx_init_ops(struct ibv_cq_ex *cqx)
{
	cqx->start_poll = softrma_start_poll;
	cqx->next_poll = softrma_next_poll;
	cqx->end_poll = softrma_end_poll;
	cqx->read_opcode = softrma_read_opcode;
	cqx->read_vendor_err = softrma_read_vendor_err;
	cqx->read_byte_len = softrma_read_byte_len;
	cqx->read_imm_data = softrma_read_imm_data;
	cqx->read_qp_num = softrma_read_qp_num;
	cqx->read_src_qp = softrma_read_src_qp;
	cqx->read_wc_flags = softrma_read_wc_flags;
	cqx->read_slid = softrma_read_slid;
	cqx->read_sl = softrma_read_sl;
	cqx->read_dlid_path_bits = softrma_read_dlid_path_bits;
}

#define SOFTRMA_CQ_INIT_MASK (IBV_CQ_INIT_ATTR_MASK_FLAGS | IBV_CQ_INIT_ATTR_MASK_PD)

/*
 * A single-threaded hint is welcome, other flags not; a PD must be a
 * parent domain.
 */
static int softrma_cqx_check(struct ibv_context *ctx,
			     const struct ibv_cq_init_attr_ex *attr)
{
	if (attr->wc_flags & ~(uint64_t)SOFTRMA_WC_EX_FLAGS ||
	    attr->comp_mask & ~(uint32_t)SOFTRMA_CQ_INIT_MASK)
		return EOPNOTSUPP;
	if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	    (attr->flags & ~(uint32_t)IBV_CREATE_CQ_ATTR_SINGLE_THREADED))
		return EOPNOTSUPP;
	if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) &&
	    (!attr->parent_domain ||
	     attr->parent_domain->context != ctx ||
	     !to_spd(attr->parent_domain)->protection_domain))
		return EINVAL;
	return 0;
}

struct ibv_cq_ex *softrma_create_cq_ex(struct ibv_context *ctx,
				       struct ibv_cq_init_attr_ex *attr)
{
	struct {
		struct ib_uverbs_ex_create_cq_resp ibv;
		struct softrma_create_cq_resp drv;
	} resp;
	struct {
		struct ibv_create_cq_ex ibv;
		struct softrma_create_cq_cmd drv;
	} cmd = {};
	struct ibv_cq_init_attr_ex core = *attr;
	struct softrma_cq *cq;
	int ret;

	ret = softrma_cqx_check(ctx, attr);
	if (ret) {
		errno = ret;
		return NULL;
	}
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return NULL;
	if (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD)
		cq->parent = softrma_parent_domain_get(attr->parent_domain);
	ret = softrma_ring_alloc(&cq->ring, cq->parent, SOFTRMADV_RES_TYPE_CQ,
				 softrma_ring_entries(attr->cqe),
				 sizeof(struct softrma_cqe), &cmd.drv.ring);
	if (ret)
		goto err_free;
	core.comp_mask = 0;
	core.flags = 0;
#if SOFTRMA_PABI >= 59
	ret = ibv_cmd_create_cq_ex(ctx, &core, NULL, &cq->vcq, &cmd.ibv,
				   sizeof(cmd), &resp.ibv, sizeof(resp), 0);
#else
	ret = ibv_cmd_create_cq_ex(ctx, &core, &cq->vcq, &cmd.ibv, sizeof(cmd),
				   &resp.ibv, sizeof(resp), 0);
#endif
	if (ret)
		goto err_free;
	ret = softrma_cq_map(cq, ctx->cmd_fd, &resp.drv);
	if (ret) {
		ibv_cmd_destroy_cq(&cq->ibcq);
		goto err_free;
	}
	softrma_cqx_init_ops(&cq->vcq.cq_ex);
	return &cq->vcq.cq_ex;

err_free:
	softrma_ring_unmap(&cq->ring);
	softrma_parent_domain_put(cq->parent);
	free(cq);
	errno = ret;
	return NULL;
}

int softrma_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	struct {
		struct ib_uverbs_resize_cq_resp ibv;
		struct softrma_resize_cq_resp drv;
	} resp;
	struct softrma_cq *cq = to_scq(ibcq);
	struct ibv_resize_cq cmd;
	int ret;

	pthread_spin_lock(&cq->lock);
	ret = ibv_cmd_resize_cq(ibcq, cqe, &cmd, sizeof(cmd), &resp.ibv,
				sizeof(resp));
	if (!ret)
		ret = softrma_ring_remap(&cq->ring, ibcq->context->cmd_fd,
					 resp.drv.mmap_key,
					 resp.drv.num_entries,
					 sizeof(struct softrma_cqe),
					 sizeof(struct softrma_cqe));
	pthread_spin_unlock(&cq->lock);
	return ret;
}

int softrma_destroy_cq(struct ibv_cq *ibcq)
{
	struct softrma_cq *cq = to_scq(ibcq);
	int ret = ibv_cmd_destroy_cq(ibcq);

	if (ret)
		return ret;
	softrma_ring_unmap(&cq->ring);
	softrma_parent_domain_put(cq->parent);
	pthread_spin_destroy(&cq->lock);
	free(cq);
	return 0;
}

static void softrma_cqe_to_wc(const struct softrma_cqe *cqe, struct ibv_wc *wc)
{
	*wc = (struct ibv_wc) {
		.wr_id = cqe->wr_id,
		.status = cqe->status,
		.opcode = cqe->opcode,
		.vendor_err = cqe->vendor_err,
		.byte_len = cqe->byte_len,
		.imm_data = cqe->imm_data,
		.qp_num = cqe->qp_num,
		.src_qp = cqe->src_qp,
		.wc_flags = cqe->wc_flags,
		.pkey_index = cqe->pkey_index,
		.slid = cqe->slid,
		.sl = cqe->sl,
		.dlid_path_bits = cqe->dlid_path_bits,
	};
}

int softrma_poll_cq(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc)
{
	struct softrma_cq *cq = to_scq(ibcq);
	struct softrma_ring *ring = &cq->ring;
	uint32_t producer;
	int n;

	pthread_spin_lock(&cq->lock);
	producer = softrma_ring_load(&ring->hdr->producer);
	for (n = 0; n < num_entries && ring->index != producer; n++)
		softrma_cqe_to_wc(softrma_ring_entry(ring, ring->index++), &wc[n]);
	if (n)
		softrma_ring_store(&ring->hdr->consumer, ring->index);
	pthread_spin_unlock(&cq->lock);
	return n;
}
