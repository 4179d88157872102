// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libsoftrma: the rdma-core provider for softrma devices.  This file finds
 * the devices and opens contexts; verbs.c implements the verbs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <rdma/softrma-abi.h>

#include "softrma.h"
#include "softrmadv.h"

/* Reads a sysfs attribute of the device, without its trailing newline. */
static int read_dev_attr(struct verbs_sysfs_dev *sysfs_dev, const char *name,
			 char *buf, size_t size)
{
	int len = ibv_read_ibdev_sysfs_file(buf, size, sysfs_dev, "%s", name);

	if (len <= 0)
		return -1;
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* Matches by the driver's hca_type, so renamed devices are still ours. */
static bool softrma_match_device(struct verbs_sysfs_dev *sysfs_dev)
{
	char type[32];

	return !read_dev_attr(sysfs_dev, "hca_type", type, sizeof(type)) &&
	       !strcmp(type, SOFTRMA_HCA_TYPE);
}

static struct verbs_device *softrma_alloc_device(struct verbs_sysfs_dev *sysfs_dev)
{
	struct softrma_device *dev = calloc(1, sizeof(*dev));

	if (!dev)
		return NULL;
	if (read_dev_attr(sysfs_dev, "fw_ver", dev->fw_ver, sizeof(dev->fw_ver)))
		dev->fw_ver[0] = '\0';
	return &dev->vdev;
}

static void softrma_uninit_device(struct verbs_device *vdev)
{
	free(container_of(vdev, struct softrma_device, vdev));
}

static void softrma_free_context(struct ibv_context *ibctx)
{
	struct softrma_context *ctx = to_sctx(ibctx);

	verbs_uninit_context(softrma_lib_vctx(ctx));
	free(ctx);
}

static const struct verbs_context_ops softrma_ctx_ops = {
	.advise_mr = ibv_cmd_advise_mr,
	.alloc_mw = softrma_alloc_mw,
	.alloc_parent_domain = softrma_alloc_parent_domain,
	.alloc_pd = softrma_alloc_pd,
	.attach_mcast = ibv_cmd_attach_mcast,
	.bind_mw = softrma_bind_mw,
	.create_ah = softrma_create_ah,
	.create_cq = softrma_create_cq,
	.create_cq_ex = softrma_create_cq_ex,
	.create_qp = softrma_create_qp,
	.create_qp_ex = softrma_create_qp_ex,
	.close_xrcd = softrma_close_xrcd,
	.create_srq = softrma_create_srq,
	.create_srq_ex = softrma_create_srq_ex,
	.dealloc_mw = softrma_dealloc_mw,
	.dealloc_pd = softrma_dealloc_pd,
	.dereg_mr = softrma_dereg_mr,
	.destroy_ah = softrma_destroy_ah,
	.destroy_cq = softrma_destroy_cq,
	.destroy_qp = softrma_destroy_qp,
	.destroy_srq = softrma_destroy_srq,
	.detach_mcast = ibv_cmd_detach_mcast,
	.free_context = softrma_free_context,
	.get_srq_num = softrma_get_srq_num,
	.import_mr = softrma_import_mr,
	.import_pd = softrma_import_pd,
	.modify_qp = softrma_modify_qp,
	.modify_srq = softrma_modify_srq,
	.open_qp = softrma_open_qp,
	.open_xrcd = softrma_open_xrcd,
	.poll_cq = softrma_poll_cq,
	.post_recv = softrma_post_recv,
	.post_send = softrma_post_send,
	.post_srq_recv = softrma_post_srq_recv,
	.query_device_ex = softrma_query_device_ex,
	.query_port = softrma_query_port,
	.query_qp = softrma_query_qp,
	.query_srq = softrma_query_srq,
	.reg_mr = softrma_reg_mr,
	.rereg_mr = softrma_rereg_mr,
	.req_notify_cq = ibv_cmd_req_notify_cq,
	.resize_cq = softrma_resize_cq,
	.unimport_mr = softrma_unimport_mr,
	.unimport_pd = softrma_unimport_pd,
};

static int softrma_get_context(struct softrma_context *ctx)
{
	struct ib_uverbs_get_context_resp resp;
	struct ibv_get_context cmd;

#if SOFTRMA_PABI >= 57
	return ibv_cmd_get_context(softrma_lib_vctx(ctx), &cmd, sizeof(cmd), NULL,
				   &resp, sizeof(resp));
#else
	return ibv_cmd_get_context(softrma_lib_vctx(ctx), &cmd, sizeof(cmd),
				   &resp, sizeof(resp));
#endif
}

/*
 * A context on @cmd_fd: a new one, or with @import the one the file has
 * already (ibv_import_device() of a duplicate of another context's file),
 * which the kernel only describes.
 */
static struct verbs_context *softrma_open_context(struct ibv_device *ibdev,
						  int cmd_fd, bool import)
{
	struct softrma_context *ctx;
	int ret;

	ctx = softrma_abi_alloc_context(ibdev, cmd_fd);
	if (!ctx)
		return NULL;
	ret = import ? ibv_cmd_query_context(&ctx->vctx.context, NULL) :
		       softrma_get_context(ctx);
	if (ret)
		goto err;
	ctx->imported = import;
	softrma_abi_set_ops(ctx, &softrma_ctx_ops);
	return softrma_lib_vctx(ctx);

err:
	verbs_uninit_context(softrma_lib_vctx(ctx));
	free(ctx);
	errno = ret;
	return NULL;
}

static struct verbs_context *softrma_alloc_context(struct ibv_device *ibdev,
						   int cmd_fd,
						   void *private_data)
{
	return softrma_open_context(ibdev, cmd_fd, false);
}

static struct verbs_context *softrma_import_context(struct ibv_device *ibdev,
						    int cmd_fd)
{
	return softrma_open_context(ibdev, cmd_fd, true);
}

/*
 * Empty: softrma_match_device() decides.  libibverbs walks the table of every
 * provider for devices that carry a driver id (rxe's, for one), so it must
 * exist even though no entry can match.
 */
static const struct verbs_match_ent softrma_match_table[] = {
	{ .kind = VERBS_MATCH_SENTINEL },
};

static const struct verbs_device_ops softrma_dev_ops = {
	.name = "softrma",
	.match_min_abi_version = SOFTRMA_ABI_VERSION,
	.match_max_abi_version = SOFTRMA_ABI_VERSION,
	.match_table = softrma_match_table,
	.match_device = softrma_match_device,
	.alloc_device = softrma_alloc_device,
	.uninit_device = softrma_uninit_device,
	.alloc_context = softrma_alloc_context,
	.import_context = softrma_import_context,
};

static void __attribute__((constructor)) softrma_register_driver(void)
{
	unsigned int release = softrma_abi_loaded_release();

	if (!release)
		return;
	softrma_abi_init(release);
	SOFTRMA_REGISTER_DRIVER(SOFTRMA_PABI)(&softrma_dev_ops);
}

int softrmadv_is_softrma(struct ibv_context *ctx)
{
	struct verbs_device *vdev = container_of(ctx->device,
						 struct verbs_device, device);

	return vdev->ops == &softrma_dev_ops;
}
