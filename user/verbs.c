// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The verbs of the softrma provider. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <rdma/rdma_user_ioctl_cmds.h>

#include "softrma.h"
#include "softrmadv.h"

int softrma_query_device_ex(struct ibv_context *ctx,
			    const struct ibv_query_device_ex_input *input,
			    struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ib_uverbs_ex_query_device_resp resp;
	size_t resp_size = sizeof(resp);
	int ret;

	ret = ibv_cmd_query_device_any(ctx, input, attr, attr_size, &resp,
				       &resp_size);
	if (ret)
		return ret;
	snprintf(attr->orig_attr.fw_ver, sizeof(attr->orig_attr.fw_ver), "%s",
		 to_sdev(ctx->device)->fw_ver);
	return 0;
}

int softrma_query_port(struct ibv_context *ctx, uint8_t port,
		       struct ibv_port_attr *attr)
{
	struct ibv_query_port cmd;

	return ibv_cmd_query_port(ctx, port, attr, &cmd, sizeof(cmd));
}

/*
 * FLUSH rights go to the kernel in the driver's part of the command: the
 * core of Linux 6.1 refuses access bits it does not know.
 */
struct ibv_mr *softrma_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
			      uint64_t hca_va, int access)
{
	struct ib_uverbs_reg_mr_resp resp;
	struct {
		struct ibv_reg_mr ibv_cmd;
		struct softrma_reg_mr_cmd drv;
	} cmd = { .drv.access = access & SOFTRMA_ACCESS_FLUSH };
	struct verbs_mr *vmr;
	int ret;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr)
		return NULL;
	ret = ibv_cmd_reg_mr(pd, addr, length, hca_va,
			     access & ~SOFTRMA_ACCESS_FLUSH, vmr, &cmd.ibv_cmd,
			     sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		free(vmr);
		errno = ret;
		return NULL;
	}
	return &vmr->ibv_mr;
}

/*
 * The kernel changes the MR in place: its handle, lkey and rkey stay
 * (libibverbs copies back what the kernel answers all the same).
 */
int softrma_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
		     void *addr, size_t length, int access)
{
	struct ib_uverbs_rereg_mr_resp resp;
	struct {
		struct ibv_rereg_mr ibv_cmd;
		struct softrma_reg_mr_cmd drv;
	} cmd = {};

	if (flags & IBV_REREG_MR_CHANGE_ACCESS)
		cmd.drv.access = access & SOFTRMA_ACCESS_FLUSH;
	return ibv_cmd_rereg_mr(vmr, flags, addr, length, (uintptr_t)addr,
				access & ~SOFTRMA_ACCESS_FLUSH, pd, &cmd.ibv_cmd,
				sizeof(cmd), &resp, sizeof(resp));
}

int softrma_dereg_mr(struct verbs_mr *vmr)
{
	int ret = ibv_cmd_dereg_mr(vmr);

	if (ret)
		return ret;
	free(vmr);
	return 0;
}

_Static_assert((int)SOFTRMADV_SYNC_TO_DEVICE == (int)SOFTRMA_SYNC_TO_DEVICE &&
	       (int)SOFTRMADV_SYNC_TO_CPU == (int)SOFTRMA_SYNC_TO_CPU,
	       "sync directions");

/*
 * Calls the driver method @method of the kernel's object @object with
 * @num (at most 4) attributes: 0 or an errno value.
 */
int softrma_driver_method(struct ibv_context *ctx, uint16_t object,
			  uint16_t method, const struct ib_uverbs_attr *attrs,
			  uint16_t num)
{
	struct {
		struct ib_uverbs_ioctl_hdr hdr;
		struct ib_uverbs_attr attrs[4];
	} cmd = {
		.hdr = {
			.length = sizeof(cmd.hdr) + num * sizeof(*attrs),
			.object_id = object,
			.method_id = method,
			.num_attrs = num,
			.driver_id = RDMA_DRIVER_UNKNOWN,
		},
	};

	if (num > ARRAY_SIZE(cmd.attrs))
		return EINVAL;
	memcpy(cmd.attrs, attrs, num * sizeof(*attrs));
	return ioctl(ctx->cmd_fd, RDMA_VERBS_IOCTL, &cmd) ? errno : 0;
}

/* The kernel's driver method of the MR object (kernel/sync.c). */
int softrmadv_sync_mr(struct ibv_mr *mr, uint64_t addr, size_t length,
		      enum softrmadv_sync_dir dir)
{
	const struct ib_uverbs_attr attrs[] = {
		{ .attr_id = SOFTRMA_IB_ATTR_MR_SYNC_HANDLE,
		  .flags = UVERBS_ATTR_F_MANDATORY, .data = mr->handle },
		{ .attr_id = SOFTRMA_IB_ATTR_MR_SYNC_ADDR,
		  .len = sizeof(uint64_t),
		  .flags = UVERBS_ATTR_F_MANDATORY, .data = addr },
		{ .attr_id = SOFTRMA_IB_ATTR_MR_SYNC_LENGTH,
		  .len = sizeof(uint64_t),
		  .flags = UVERBS_ATTR_F_MANDATORY, .data = length },
		{ .attr_id = SOFTRMA_IB_ATTR_MR_SYNC_DIR,
		  .len = sizeof(uint64_t),
		  .flags = UVERBS_ATTR_F_MANDATORY, .data = dir },
	};
	int ret;

	if (!softrmadv_is_softrma(mr->context))
		return errno = EOPNOTSUPP;
	ret = softrma_driver_method(mr->context, UVERBS_OBJECT_MR,
				    SOFTRMA_IB_METHOD_MR_SYNC, attrs,
				    ARRAY_SIZE(attrs));
	if (ret)
		errno = ret;
	return ret;
}

/* The MR of @mr_handle in @pd's context, as the kernel describes it. */
struct ibv_mr *softrma_import_mr(struct ibv_pd *pd, uint32_t mr_handle)
{
	struct verbs_mr *vmr = calloc(1, sizeof(*vmr));
	int ret;

	if (!vmr)
		return NULL;
	ret = ibv_cmd_query_mr(pd, vmr, mr_handle);
	if (ret) {
		free(vmr);
		errno = ret;
		return NULL;
	}
	return &vmr->ibv_mr;
}

void softrma_unimport_mr(struct ibv_mr *mr)
{
	free(container_of(mr, struct verbs_mr, ibv_mr));
}

struct ibv_mw *softrma_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct ib_uverbs_alloc_mw_resp resp;
	struct ibv_alloc_mw cmd;
	struct ibv_mw *mw;
	int ret;

	mw = calloc(1, sizeof(*mw));
	if (!mw)
		return NULL;
	ret = ibv_cmd_alloc_mw(pd, type, mw, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (ret) {
		free(mw);
		errno = ret;
		return NULL;
	}
	return mw;
}

int softrma_dealloc_mw(struct ibv_mw *mw)
{
	int ret = ibv_cmd_dealloc_mw(mw);

	if (ret)
		return ret;
	free(mw);
	return 0;
}
