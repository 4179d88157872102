// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Completion queues: polled from the shared ring, with no system call. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "softrma.h"

int softrma_ring_map(struct softrma_ring *ring, int cmd_fd, uint64_t key,
		     uint32_t num, uint32_t stride)
{
	size_t page = sysconf(_SC_PAGESIZE);

	if (!num || (num & (num - 1)))
		return EINVAL;
	ring->map_len = (sizeof(struct softrma_ring_hdr) + (size_t)num * stride +
			 page - 1) & ~(page - 1);
	ring->map = mmap(NULL, ring->map_len, PROT_READ | PROT_WRITE, MAP_SHARED,
			 cmd_fd, key);
	if (ring->map == MAP_FAILED)
		return errno;
	ring->hdr = ring->map;
	ring->entries = (char *)ring->map + sizeof(struct softrma_ring_hdr);
	ring->num = num;
	ring->stride = stride;
	ring->index = 0;
	return 0;
}

void softrma_ring_unmap(struct softrma_ring *ring)
{
	munmap(ring->map, ring->map_len);
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
	ret = softrma_ring_map(&cq->ring, ctx->cmd_fd, resp.drv.mmap_key,
			       resp.drv.num_entries, sizeof(struct softrma_cqe));
	if (ret) {
		ibv_cmd_destroy_cq(&cq->ibcq);
		goto err_free;
	}
	pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
	return &cq->ibcq;

err_free:
	free(cq);
	errno = ret;
	return NULL;
}

int softrma_destroy_cq(struct ibv_cq *ibcq)
{
	struct softrma_cq *cq = to_scq(ibcq);
	int ret = ibv_cmd_destroy_cq(ibcq);

	if (ret)
		return ret;
	softrma_ring_unmap(&cq->ring);
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
