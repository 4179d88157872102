// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * user/abi.c lays the provider out as each rdma-core release's libibverbs
 * has it: the slots of struct verbs_context_ops and the bytes in front of
 * struct verbs_context, against the figures of rdma-core's own headers
 * (compiled and printed per release: Documentation/design.md).  With
 * ABI 34 it also tells the loaded libibverbs' struct verbs_qp layout:
 * "abi_test RELEASE" names the rdma-core release of the libibverbs it runs
 * with (44: comp_mask at 352; 45 to 56: at 360; 34 to 43, ABI 34 too, are
 * older layouts, which the provider does not serve).
 *
 * Then, with a stand-in libibverbs that has each layout and larger ones (a
 * release of the same ABI that grew struct verbs_context or struct
 * verbs_context_ops again), softrma_abi_alloc_context() and
 * softrma_abi_set_ops(): libibverbs writes and reads no byte outside what the
 * provider hands it (ASan), the known layouts are taken with every op in its
 * slot, and a larger struct verbs_context is refused.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "softrma.h"
#include "softrmadv.h"

static int failures;

#define EXPECT_EQ(got, want, what) do {					\
	unsigned long long g = (got), w = (want);			\
	if (g != w) {							\
		printf("# FAIL %s: %s = %llu, want %llu\n", what, #got, g, w); \
		failures++;						\
	}								\
} while (0)

/* abi.c sets it as a QP's wr_flush. */
void softrmadv_wr_flush(struct ibv_qp_ex *qp, uint32_t rkey,
			uint64_t remote_addr, size_t len, uint8_t type,
			uint8_t level)
{
}

#define SLOT(member) offsetof(struct verbs_context_ops, member)

/*
 * A libibverbs of the provider's private ABI whose struct verbs_context is
 * lib_vctx_size bytes and whose struct verbs_context_ops lib_ops_size:
 * these stand in for the installed libibverbs' functions of the same names
 * (abi.c binds to them), and do what rdma-core's libibverbs/device.c does
 * with its own layout, whatever the provider expects.  A struct
 * verbs_context grows at its front, struct ibv_context stays its last
 * member and sz just before it, and verbs_init_context() writes all of
 * it (verbs_set_ops() of its dummy ops fills every op it has).
 */
static size_t lib_vctx_size, lib_ops_size;
static int lib_contexts;		/* initialised, not yet uninitialised */
static unsigned char *lib_ops;		/* what verbs_set_ops() read */
static struct ibv_device lib_device;
#define LIB_CMD_FD 1000			/* never used as a descriptor */

static struct ibv_context *lib_context(struct verbs_context *vctx)
{
	return (struct ibv_context *)((char *)vctx + lib_vctx_size -
				      sizeof(struct ibv_context));
}

static void **lib_priv(struct verbs_context *vctx)
{
	return (void **)((char *)vctx + lib_vctx_size -
			 (sizeof(*vctx) - offsetof(struct verbs_context, priv)));
}

void *_verbs_init_and_alloc_context(struct ibv_device *device, int cmd_fd,
				    size_t alloc_size,
				    struct verbs_context *context_offset,
				    uint32_t driver_id)
{
	char *drv = calloc(1, alloc_size);
	struct verbs_context *vctx = (void *)(drv + (uintptr_t)context_offset);
	struct ibv_context *context = lib_context(vctx);

	if (!drv)
		return NULL;
	memset(vctx, 0xa5, lib_vctx_size);
	memset(context, 0, sizeof(*context));
	context->device = device;
	context->cmd_fd = cmd_fd;
	context->async_fd = -1;
	context->abi_compat = __VERBS_ABI_IS_EXTENDED;
	*(size_t *)((char *)context - sizeof(size_t)) = lib_vctx_size;
	*lib_priv(vctx) = calloc(1, 64);
	lib_contexts++;
	return drv;
}

void verbs_uninit_context(struct verbs_context *vctx)
{
	struct ibv_context *context = lib_context(vctx);

	if (context->device != &lib_device || context->cmd_fd != LIB_CMD_FD) {
		printf("# FAIL verbs_uninit_context: not the context it made\n");
		failures++;
	}
	free(*lib_priv(vctx));
	lib_contexts--;
}

void verbs_set_ops(struct verbs_context *vctx, const struct verbs_context_ops *ops)
{
	free(lib_ops);
	lib_ops = malloc(lib_ops_size);
	memcpy(lib_ops, ops, lib_ops_size);
}

/* The op that rdma-core 44 has at @slot, as the provider gives them below. */
static uintptr_t op_at(size_t slot)
{
	return 0x1000 + slot / sizeof(void *);
}

static uintptr_t lib_op(size_t slot)
{
	uintptr_t op;

	memcpy(&op, lib_ops + slot, sizeof(op));
	return op;
}

static const struct {
	unsigned int release;
	size_t vctx_prefix;
	size_t alloc_mw, create_cq, dealloc_pd, free_context, post_send,
	       query_qp, reg_mr, req_notify_cq, unimport_pd;
} layouts[] = {
	{ 44, 0, 16, 120, 208, 312, 440, 488, 544, 552, 600 },
	{ 45, 0, 16, 120, 208, 312, 440, 488, 544, 552, 600 },
	{ 59, 24, 24, 128, 224, 328, 456, 504, 560, 576, 624 },
	{ 62, 32, 24, 128, 224, 336, 464, 520, 576, 592, 640 },
	{ 64, 48, 32, 136, 232, 352, 480, 536, 592, 608, 656 },
};

int main(int argc, char **argv)
{
	for (size_t i = 0; i < ARRAY_SIZE(layouts); i++) {
		char what[32];

		snprintf(what, sizeof(what), "rdma-core %u", layouts[i].release);
		softrma_abi_init(layouts[i].release);
		EXPECT_EQ(softrma_abi.vctx_prefix, layouts[i].vctx_prefix, what);
		EXPECT_EQ(softrma_abi_op_slot(SLOT(alloc_mw)), layouts[i].alloc_mw, what);
		EXPECT_EQ(softrma_abi_op_slot(SLOT(create_cq)), layouts[i].create_cq, what);
		EXPECT_EQ(softrma_abi_op_slot(SLOT(dealloc_pd)), layouts[i].dealloc_pd, what);
		EXPECT_EQ(softrma_abi_op_slot(SLOT(free_context)), layouts[i].free_context, what);
		EXPECT_EQ(softrma_abi_op_slot(SLOT(post_send)), layouts[i].post_send, what);
		EXPECT_EQ(softrma_abi_op_slot(SLOT(query_qp)), layouts[i].query_qp, what);
		EXPECT_EQ(softrma_abi_op_slot(SLOT(reg_mr)), layouts[i].reg_mr, what);
		EXPECT_EQ(softrma_abi_op_slot(SLOT(req_notify_cq)), layouts[i].req_notify_cq, what);
		EXPECT_EQ(softrma_abi_op_slot(SLOT(unimport_pd)), layouts[i].unimport_pd, what);
	}
	/*
	 * A context for each layout, and for a libibverbs of the same ABI
	 * with a struct verbs_context a little smaller, as large, a little
	 * larger, or larger by up to SOFTRMA_VCTX_SLACK: only the one it
	 * knows is taken, and none is written out of bounds (ASan).  Its ops
	 * land in their slots, and a libibverbs with up to SOFTRMA_OPS_SLACK
	 * more ops reads NULL for them.
	 */
	static const ssize_t vctx_growth[] = {
		-(ssize_t)sizeof(void *), 0, sizeof(void *),
		6 * sizeof(void *), SOFTRMA_VCTX_SLACK,
	};
	static const size_t ops_growth[] = { 0, 1, 7, SOFTRMA_OPS_SLACK };
	struct verbs_context_ops ops;
	uintptr_t op_values[sizeof(ops) / sizeof(void *)];

	for (size_t i = 0; i < ARRAY_SIZE(op_values); i++)
		op_values[i] = op_at(i * sizeof(void *));
	memcpy(&ops, op_values, sizeof(ops));
	for (size_t i = 0; i < ARRAY_SIZE(layouts); i++) {
		softrma_abi_init(layouts[i].release);
		for (size_t g = 0; g < ARRAY_SIZE(vctx_growth); g++) {
			struct softrma_context *ctx;
			char what[64];

			snprintf(what, sizeof(what), "rdma-core %u, verbs_context %+zd",
				 layouts[i].release, vctx_growth[g]);
			lib_vctx_size = sizeof(struct verbs_context) +
					layouts[i].vctx_prefix + vctx_growth[g];
			errno = 0;
			ctx = softrma_abi_alloc_context(&lib_device, LIB_CMD_FD);
			if (vctx_growth[g]) {
				EXPECT_EQ(ctx == NULL, 1, what);
				EXPECT_EQ(errno, EOPNOTSUPP, what);
				continue;
			}
			if (!ctx) {
				printf("# FAIL %s: refused (%d)\n", what, errno);
				failures++;
				continue;
			}
			EXPECT_EQ((uintptr_t)&ctx->vctx.context,
				  (uintptr_t)lib_context(softrma_lib_vctx(ctx)), what);
			for (size_t o = 0; o < ARRAY_SIZE(ops_growth); o++) {
				size_t known = layouts[i].unimport_pd + sizeof(void *);

				snprintf(what, sizeof(what), "rdma-core %u, %zu more ops",
					 layouts[i].release, ops_growth[o]);
				lib_ops_size = known + ops_growth[o] * sizeof(void *);
				softrma_abi_set_ops(ctx, &ops);
				EXPECT_EQ(lib_op(layouts[i].alloc_mw), op_at(SLOT(alloc_mw)), what);
				EXPECT_EQ(lib_op(layouts[i].free_context), op_at(SLOT(free_context)), what);
				EXPECT_EQ(lib_op(layouts[i].post_send), op_at(SLOT(post_send)), what);
				EXPECT_EQ(lib_op(layouts[i].req_notify_cq), op_at(SLOT(req_notify_cq)), what);
				EXPECT_EQ(lib_op(layouts[i].unimport_pd), op_at(SLOT(unimport_pd)), what);
				for (size_t at = known; at < lib_ops_size; at += sizeof(void *))
					EXPECT_EQ(lib_op(at), 0, what);
			}
			verbs_uninit_context(softrma_lib_vctx(ctx));
			free(ctx);
		}
	}
	EXPECT_EQ(lib_contexts, 0, "contexts left initialised");
	free(lib_ops);

	if (argc > 1) {
		unsigned long release = strtoul(argv[1], NULL, 0);

		EXPECT_EQ(softrma_abi_loaded_release(),
			  release >= 45 ? 45 : release == 44 ? 44 : 0,
			  "the loaded libibverbs");
	}
	printf("# %zu layouts, contexts and ops for larger ones%s: %s\n",
	       ARRAY_SIZE(layouts), argc > 1 ? ", the loaded libibverbs" : "",
	       failures ? "FAIL" : "as rdma-core's headers have them");
	return failures ? 1 : 0;
}
