/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * softrma's direct verbs: what the installed rdma-core has no verb for yet.
 *
 * RDMA FLUSH (IBA 1.5) arrived in rdma-core 45 as ibv_wr_flush(), which
 * softrma implements; with rdma-core 44 it is softrmadv_wr_flush(), the
 * same function (a QP's wr_flush from rdma-core 45 on), with the same
 * arguments and meaning, between ibv_wr_start() and ibv_wr_complete() on an RC QP that
 * was created with SOFTRMADV_QP_EX_WITH_FLUSH in send_ops_flags.  The
 * target QP and MR need the matching SOFTRMADV_ACCESS_FLUSH_* flag in
 * ibv_modify_qp()'s qp_access_flags and ibv_reg_mr()'s access; its
 * completion has opcode SOFTRMADV_WC_FLUSH.
 *
 * The functions live in the provider library of the installed libibverbs'
 * private ABI: link with -L<libdir>/libibverbs -l:libsoftrma-rdmav34.so
 * for rdma-core 44 to 56 (-rdmav57.so, -rdmav59.so, -rdmav64.so later).
 */
#ifndef SOFTRMADV_H
#define SOFTRMADV_H

#include <stddef.h>
#include <stdint.h>
#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The values of rdma-core 45's IBV_ACCESS_FLUSH_*, IBV_FLUSH_*, ... */
#define SOFTRMADV_ACCESS_FLUSH_GLOBAL		(1 << 8)
#define SOFTRMADV_ACCESS_FLUSH_PERSISTENT	(1 << 9)
#define SOFTRMADV_QP_EX_WITH_FLUSH		(1ULL << 11)
#define SOFTRMADV_WC_FLUSH			8

enum softrmadv_flush_type {
	SOFTRMADV_FLUSH_GLOBAL = 1,		/* visible to all */
	SOFTRMADV_FLUSH_PERSISTENT = 2,		/* persistent memory only */
};

enum softrmadv_flush_level {
	SOFTRMADV_FLUSH_RANGE = 0,		/* [remote_addr, + len) */
	SOFTRMADV_FLUSH_MR = 1,			/* the whole MR of rkey */
};

/* True when @ctx is a softrma device's. */
int softrmadv_is_softrma(struct ibv_context *ctx);

/*
 * uDAPL's cache sync of registered memory (dat_lmr_sync_rdma_read() and
 * dat_lmr_sync_rdma_write()), for platforms whose device is not coherent
 * with the CPU's caches, and for softrma's non-coherent checking device
 * (/sys/class/infiniband/DEV/noncoherent), which makes a missing one
 * visible on any machine: softrmadv_sync_mr(3).
 */
enum softrmadv_sync_dir {
	/* After the CPU wrote, before the device reads (dat_lmr_sync_rdma_read) */
	SOFTRMADV_SYNC_TO_DEVICE = 1,
	/* After the device wrote, before the CPU reads (dat_lmr_sync_rdma_write) */
	SOFTRMADV_SYNC_TO_CPU = 2,
};

/*
 * Syncs [addr, addr + length) of @mr (addresses as in its SGEs): 0, or an
 * errno value (also in errno): EINVAL for a range outside the MR or a bad
 * @dir, ENOENT for an MR of another context, EBUSY while another thread
 * re-registers or deregisters it, EOPNOTSUPP off softrma.
 */
int softrmadv_sync_mr(struct ibv_mr *mr, uint64_t addr, size_t length,
		      enum softrmadv_sync_dir dir);

/*
 * The resource_type a parent domain's allocator (ibv_alloc_parent_domain(3),
 * IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) is called with: the ring of a CQ
 * created by ibv_create_cq_ex() with IBV_CQ_INIT_ATTR_MASK_PD, the send and
 * receive rings of a QP and the ring of an SRQ created on the parent
 * domain.  Each ring is asked for in whole pages, page-aligned; the device
 * pins it while the object lives, and the free function gets it back after
 * the object is destroyed.  IBV_ALLOCATOR_USE_DEFAULT gives the ring the
 * kernel allocates, as without a parent domain.  A ring in the caller's
 * memory cannot be resized (EOPNOTSUPP): softrmadv(7).
 */
#define SOFTRMADV_RES_TYPE_BASE	(0x534f4654ULL << 32)	/* "SOFT" */

enum softrmadv_res_type {
	SOFTRMADV_RES_TYPE_CQ = SOFTRMADV_RES_TYPE_BASE + 1,
	SOFTRMADV_RES_TYPE_SQ,
	SOFTRMADV_RES_TYPE_RQ,
	SOFTRMADV_RES_TYPE_SRQ,
};

void softrmadv_wr_flush(struct ibv_qp_ex *qp, uint32_t rkey,
			uint64_t remote_addr, size_t len, uint8_t type,
			uint8_t level);

#ifdef __cplusplus
}
#endif

#endif /* SOFTRMADV_H */
