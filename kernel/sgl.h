/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The SGL mover (sgl.c): scatter/gather lists resolved to MRs or to kernel
 * memory, and the one copy between two of them, with the cache hooks of
 * each page the device touches.
 */
#ifndef SOFTRMA_SGL_H
#define SOFTRMA_SGL_H

#include <linux/compiler.h>
#include <linux/types.h>
#include <rdma/ib_verbs.h>
#include <rdma/softrma-abi.h>

#include "limits.h"

struct softrma_dev;
struct softrma_mr;

/* A scatter/gather list resolved to MRs (referenced) or to kernel memory. */
struct softrma_seg {
	struct softrma_mr *mr;		/* NULL: kaddr */
	void *kaddr;
	u64 addr;			/* iova within mr */
	u32 key;			/* mr's key and generation when */
	u32 gen;			/* the list was made */
	u32 len;
};

/*
 * The segments live where the list's owner keeps them (seg, max): one in
 * the list itself (softrma_sgl_init_one(), SOFTRMA_SGL_ONE()) for a buffer
 * or an MR the responder names, SOFTRMA_MAX_SGE beside the lists that
 * resolve work requests' SGEs.
 */
struct softrma_sgl {
	u32 num;
	u32 max;
	u64 length;
	struct softrma_seg *seg;
	struct softrma_seg one;
	/*
	 * A packet's payload, copied where the receive path would wait: a
	 * copy to or from it does not fault ODP pages in (struct
	 * softrma_odp_hold) and returns -EAGAIN.
	 */
	bool nofault;
};

/* Declares @name, a list of at most one segment. */
#define SOFTRMA_SGL_ONE(name) \
	struct softrma_sgl name = { .max = 1, .seg = &(name).one }

static inline void softrma_sgl_init(struct softrma_sgl *sgl,
				    struct softrma_seg *seg, u32 max)
{
	*sgl = (struct softrma_sgl) { .seg = seg, .max = max };
}

static inline void softrma_sgl_init_one(struct softrma_sgl *sgl)
{
	softrma_sgl_init(sgl, &sgl->one, 1);
}

int softrma_sgl_resolve(struct softrma_sgl *sgl, struct softrma_dev *sdev,
			struct ib_pd *pd, const struct softrma_sge *sge,
			u32 num, int access);
int softrma_sgl_resolve_recv(struct softrma_sgl *sgl, struct softrma_dev *sdev,
			     struct ib_pd *pd, const struct softrma_sge *sge,
			     u32 num);
void softrma_sgl_init_kbuf(struct softrma_sgl *sgl, void *buf, u32 len);
void softrma_sgl_init_packet(struct softrma_sgl *sgl, const void *payload,
			     u32 len);
void softrma_sgl_init_mr(struct softrma_sgl *sgl, struct softrma_mr *mr,
			 u64 iova, u32 len);
void softrma_sgl_release(struct softrma_sgl *sgl);
int __must_check softrma_sgl_copy_at(struct softrma_sgl *dst, u64 dst_off,
				     const struct softrma_sgl *src, u64 src_off,
				     u64 len);

static inline int __must_check softrma_sgl_copy(struct softrma_sgl *dst,
						const struct softrma_sgl *src,
						u64 len)
{
	return softrma_sgl_copy_at(dst, 0, src, 0, len);
}

#endif /* SOFTRMA_SGL_H */
