// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The layout of the private provider ABI that the loaded libibverbs has.
 * The provider is written against rdma-core 44's (provider-abi.h); later
 * releases changed three things, not always with a new ABI number:
 *
 *  - rdma-core 45 appended wr_flush to struct ibv_qp_ex, inside ABI 34, which
 *    moved struct verbs_qp's comp_mask and xrcd;
 *  - new ops go into struct verbs_context_ops in its alphabetical order,
 *    moving the slots after them;
 *  - most of them also go in front of struct verbs_context, whose
 *    struct ibv_context stays its last member: ABI 59 (rdma-core 59 to 61
 *    and, without a new ABI number, 62 and 63) and 64.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <rdma/ib_user_ioctl_verbs.h>

#include "softrma.h"
#include "softrmadv.h"

struct softrma_abi softrma_abi;

#define PABI_SLOT(member) (offsetof(struct verbs_context_ops, member))

/* The ops rdma-core added after 44 (as of 64). */
static const struct softrma_newer_op {
	size_t before;		/* the slot of rdma-core 44 it is inserted before */
	unsigned int since;	/* the rdma-core release that added it */
	bool in_vctx;		/* also put in front of struct verbs_context */
} softrma_newer_ops[] = {
	{ PABI_SLOT(alloc_dm), 64, true },	/* alloc_buf */
	{ PABI_SLOT(alloc_mw), 59, true },	/* alloc_dmah */
	{ PABI_SLOT(dealloc_mw), 59, true },	/* dealloc_dmah */
	{ PABI_SLOT(free_context), 62, true },	/* dm_export_dmabuf_fd */
	{ PABI_SLOT(free_context), 64, true },	/* free_buf */
	{ PABI_SLOT(query_qp), 62, false },	/* query_port_speed */
	{ PABI_SLOT(req_notify_cq), 59, true },	/* reg_mr_ex */
};

#define SOFTRMA_OPS_44	(sizeof(struct verbs_context_ops) / sizeof(void *))
#define SOFTRMA_OPS_MAX	(SOFTRMA_OPS_44 + ARRAY_SIZE(softrma_newer_ops))
#define SOFTRMA_OPS_OUT	(SOFTRMA_OPS_MAX + SOFTRMA_OPS_SLACK)

/*
 * The oldest rdma-core release whose layout the loaded libibverbs has:
 * 44 or 45 for ABI 34, told by where libibverbs' own ibv_qp_to_qp_ex()
 * looks for comp_mask (rdma-core 34 to 43 have ABI 34 too, with a shorter
 * struct ibv_qp_ex and fewer ops: 0, not served); 45 for 57; 59 or 62 for
 * 59, told by ibv_query_port_speed, which 62 added; 64 for 64.
 */
unsigned int softrma_abi_loaded_release(void)
{
#if SOFTRMA_PABI == 34
	struct verbs_qp probe;

	memset(&probe, 0, sizeof(probe));
	probe.v45.comp_mask = VERBS_QP_EX;
	if (ibv_qp_to_qp_ex(&probe.qp))
		return 45;
	memset(&probe, 0, sizeof(probe));
	probe.v44.comp_mask = VERBS_QP_EX;
	return ibv_qp_to_qp_ex(&probe.qp) ? 44 : 0;
#elif SOFTRMA_PABI == 57
	return 45;
#elif SOFTRMA_PABI == 59
	void *lib = dlopen("libibverbs.so.1", RTLD_LAZY | RTLD_NOLOAD);
	unsigned int release = 59;

	if (lib && dlvsym(lib, "ibv_query_port_speed", "IBVERBS_1.16"))
		release = 62;
	if (lib)
		dlclose(lib);
	return release;
#else
	return 64;
#endif
}

/* Lays the provider out for libibverbs of rdma-core release @release. */
void softrma_abi_init(unsigned int release)
{
	softrma_abi.release = release;
	softrma_abi.vctx_prefix = 0;
	for (size_t i = 0; i < ARRAY_SIZE(softrma_newer_ops); i++)
		if (softrma_newer_ops[i].in_vctx &&
		    softrma_newer_ops[i].since <= softrma_abi.release)
			softrma_abi.vctx_prefix += sizeof(void *);
}

/* Where the loaded libibverbs has the op of rdma-core 44's slot @slot. */
size_t softrma_abi_op_slot(size_t slot)
{
	size_t moved = slot;

	for (size_t i = 0; i < ARRAY_SIZE(softrma_newer_ops); i++)
		if (softrma_newer_ops[i].since <= softrma_abi.release &&
		    softrma_newer_ops[i].before <= slot)
			moved += sizeof(void *);
	return moved;
}

/*
 * The context, with libibverbs' struct verbs_context in it initialised by
 * libibverbs; NULL with errno.  A libibverbs whose struct verbs_context is
 * larger than abi.c knows writes into vctx_slack before it is refused here.
 */
struct softrma_context *softrma_abi_alloc_context(struct ibv_device *ibdev,
						  int cmd_fd)
{
	struct softrma_context *ctx;

	/* libibverbs' struct verbs_context ends where ours does. */
	ctx = _verbs_init_and_alloc_context(ibdev, cmd_fd, sizeof(*ctx),
		(struct verbs_context *)(offsetof(struct softrma_context, vctx) -
					 softrma_abi.vctx_prefix),
		RDMA_DRIVER_UNKNOWN);
	if (!ctx)
		return NULL;
	/* A release that changed the layout again, without a new ABI number. */
	if (ctx->vctx.sz != sizeof(ctx->vctx) + softrma_abi.vctx_prefix) {
		verbs_uninit_context(softrma_lib_vctx(ctx));
		free(ctx);
		errno = EOPNOTSUPP;
		return NULL;
	}
	return ctx;
}

/*
 * verbs_set_ops() with @ops laid out as the loaded libibverbs reads them.
 * It reads every op its struct verbs_context_ops has, and a release newer
 * than abi.c knows may have more: SOFTRMA_OPS_SLACK NULL ones keep that
 * read inside out[].  (The slots such a release moves are not known here:
 * that takes an entry in softrma_newer_ops.)
 */
void softrma_abi_set_ops(struct softrma_context *ctx,
			 const struct verbs_context_ops *ops)
{
	void (*in[SOFTRMA_OPS_44])(void);
	void (*out[SOFTRMA_OPS_OUT])(void);

	static_assert(sizeof(in) == sizeof(*ops), "ops are pointers");
	memcpy(in, ops, sizeof(in));
	memset(out, 0, sizeof(out));
	for (size_t i = 0; i < SOFTRMA_OPS_44; i++)
		out[softrma_abi_op_slot(i * sizeof(void *)) / sizeof(void *)] = in[i];
	verbs_set_ops(softrma_lib_vctx(ctx), (const void *)out);
}

/* ibv_qp_to_qp_ex() returns the QP's struct ibv_qp_ex from now on. */
void softrma_abi_enable_qp_ex(struct softrma_qp *qp)
{
	if (softrma_abi.release >= 45) {
		qp->vqp.v45.wr_flush = softrmadv_wr_flush;
		qp->vqp.v45.comp_mask |= VERBS_QP_EX;
	} else {
		qp->vqp.v44.comp_mask |= VERBS_QP_EX;
	}
}
