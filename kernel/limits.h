/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What a device offers and enforces: its attributes' limits, and the count
 * of each kind of object against them (limits.c).
 */
#ifndef SOFTRMA_LIMITS_H
#define SOFTRMA_LIMITS_H

#include <linux/gfp.h>
#include <linux/types.h>

struct softrma_dev;

#define SOFTRMA_PORT		1
#define SOFTRMA_GID_TBL_LEN	1024
#define SOFTRMA_MAX_MSG_SZ	0x80000000U
#define SOFTRMA_MAX_MR_SIZE	(1ULL << 36)
/* libfabric RxM's default CQ: 1024 peers x (128 + 128) entries; 12 MiB */
#define SOFTRMA_MAX_CQE		0x40000
#define SOFTRMA_MAX_QP_WR	0x4000
#define SOFTRMA_MAX_SGE		32	/* as rdma_rxe */
#define SOFTRMA_MAX_INLINE	512	/* as rdma_rxe */
#define SOFTRMA_MAX_RD_ATOMIC	128
#define SOFTRMA_FIRST_QPN	16	/* below: reserved (QP0, QP1) */
#define SOFTRMA_MCAST_QPN	0xffffff	/* the destination of multicasts */
#define SOFTRMA_QPN_MAX		(SOFTRMA_MCAST_QPN - 1)
#define SOFTRMA_QPN_COUNT	(SOFTRMA_QPN_MAX - SOFTRMA_FIRST_QPN + 2) /* + GSI */
#define SOFTRMA_MAX_FAST_REG_PAGES	512	/* as rdma_rxe */
#define SOFTRMA_MR_INDEX_MAX	((1U << 24) - 1)	/* keys: index << 8 */
#define SOFTRMA_AH_NUM_MAX	((1U << 24) - 1)
#define SOFTRMA_SRQN_MAX	((1U << 24) - 1)	/* XRC SRQs: XRCETH */
#define SOFTRMA_MAX_MCAST_GRP	8192
#define SOFTRMA_MAX_MCAST_QP_ATTACH	56
#define SOFTRMA_FW_VER		"0.1.0"
#define SOFTRMA_VENDOR_ID	0xffffff	/* IBTA A3.3.1: no OUI of its own */

/*
 * Memory a user object needs (rings, page arrays, wire state): charged to
 * the creator's memory cgroup, and beyond its limit the verb fails with
 * ENOMEM instead of calling the OOM killer.  Kernel consumers' objects are
 * the kernel's.
 */
static inline gfp_t softrma_gfp(bool user)
{
	return user ? GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL | __GFP_NOWARN :
		      GFP_KERNEL;
}

/* Objects a device counts against its limits (limits.c). */
enum softrma_obj {
	SOFTRMA_OBJ_PD,
	SOFTRMA_OBJ_QP,
	SOFTRMA_OBJ_CQ,
	SOFTRMA_OBJ_SRQ,
	SOFTRMA_OBJ_MR,
	SOFTRMA_OBJ_MW,
	SOFTRMA_OBJ_AH,
	SOFTRMA_OBJ_XRCD,
	SOFTRMA_OBJ_NUM
};

/* limits.c */
u32 softrma_limit(enum softrma_obj obj);
int softrma_obj_add(struct softrma_dev *sdev, enum softrma_obj obj);
void softrma_obj_del(struct softrma_dev *sdev, enum softrma_obj obj);
void softrma_objs_check_empty(struct softrma_dev *sdev);

#endif /* SOFTRMA_LIMITS_H */
