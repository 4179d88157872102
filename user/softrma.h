/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#ifndef SOFTRMA_PROVIDER_H
#define SOFTRMA_PROVIDER_H

#include "provider-abi.h"

#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

struct softrma_device {
	struct verbs_device vdev;
	char fw_ver[64];	/* the kernel's fw_ver sysfs string */
};

struct softrma_context {
	struct verbs_context vctx;
};

static inline struct softrma_device *to_sdev(struct ibv_device *ibdev)
{
	return container_of(ibdev, struct softrma_device, vdev.device);
}

/* verbs.c */
int softrma_query_device_ex(struct ibv_context *ctx,
			    const struct ibv_query_device_ex_input *input,
			    struct ibv_device_attr_ex *attr, size_t attr_size);
int softrma_query_port(struct ibv_context *ctx, uint8_t port,
		       struct ibv_port_attr *attr);
struct ibv_pd *softrma_alloc_pd(struct ibv_context *ctx);
int softrma_dealloc_pd(struct ibv_pd *pd);
struct ibv_mr *softrma_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
			      uint64_t hca_va, int access);
int softrma_dereg_mr(struct verbs_mr *vmr);

#endif /* SOFTRMA_PROVIDER_H */
