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

void softrmadv_wr_flush(struct ibv_qp_ex *qp, uint32_t rkey,
			uint64_t remote_addr, size_t len, uint8_t type,
			uint8_t level);

#ifdef __cplusplus
}
#endif

#endif /* SOFTRMADV_H */
