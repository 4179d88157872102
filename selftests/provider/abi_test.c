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
 */
#include <stdio.h>
#include <stdlib.h>

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
	if (argc > 1) {
		unsigned long release = strtoul(argv[1], NULL, 0);

		EXPECT_EQ(softrma_abi_loaded_release(),
			  release >= 45 ? 45 : release == 44 ? 44 : 0,
			  "the loaded libibverbs");
	}
	printf("# %zu layouts%s: %s\n", ARRAY_SIZE(layouts),
	       argc > 1 ? " and the loaded libibverbs" : "",
	       failures ? "FAIL" : "as rdma-core's headers have them");
	return failures ? 1 : 0;
}
