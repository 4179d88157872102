// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * How many objects of each kind a device may hold: module parameters, set
 * when the module is loaded, advertised by query_device and enforced when an
 * object is created.  One more than the limit is refused with -ENOMEM, IBA's
 * "insufficient resources".  The memory behind user objects is charged to
 * the memory cgroup of the process that creates them, which bounds what one
 * container can take; these limits bound what the device's numbering and
 * lookups must hold.
 */

#include <linux/moduleparam.h>

#include "verbs.h"

struct softrma_limit {
	u32 max;		/* advertised and enforced */
	u32 ceiling;		/* what the objects' numbering allows */
};

static struct softrma_limit softrma_limits[SOFTRMA_OBJ_NUM] = {
	[SOFTRMA_OBJ_PD] = { .max = 0x7ff0, .ceiling = INT_MAX },
	[SOFTRMA_OBJ_QP] = { .max = 0x10000, .ceiling = SOFTRMA_QPN_COUNT },
	[SOFTRMA_OBJ_CQ] = { .max = 0x10000, .ceiling = INT_MAX },
	[SOFTRMA_OBJ_SRQ] = { .max = 0x10000, .ceiling = INT_MAX },
	[SOFTRMA_OBJ_MR] = { .max = 0x100000, .ceiling = SOFTRMA_MR_INDEX_MAX },
	[SOFTRMA_OBJ_MW] = { .max = 0x10000, .ceiling = SOFTRMA_MR_INDEX_MAX },
	[SOFTRMA_OBJ_AH] = { .max = 0x10000, .ceiling = SOFTRMA_AH_NUM_MAX },
	[SOFTRMA_OBJ_XRCD] = { .max = 0x10000, .ceiling = INT_MAX },
};

static int softrma_limit_set(const char *val, const struct kernel_param *kp)
{
	struct softrma_limit *limit = kp->arg;
	u32 max;
	int err;

	err = kstrtou32(val, 0, &max);
	if (err)
		return err;
	if (!max || max > limit->ceiling)
		return -ERANGE;
	limit->max = max;
	return 0;
}

static int softrma_limit_get(char *buf, const struct kernel_param *kp)
{
	const struct softrma_limit *limit = kp->arg;

	return sysfs_emit(buf, "%u\n", limit->max);
}

static const struct kernel_param_ops softrma_limit_ops = {
	.set = softrma_limit_set,
	.get = softrma_limit_get,
};

#define SOFTRMA_LIMIT_PARAM(name, obj, what)				\
	module_param_cb(name, &softrma_limit_ops, &softrma_limits[obj], 0444); \
	MODULE_PARM_DESC(name, "most " what " a device holds")

SOFTRMA_LIMIT_PARAM(max_pd, SOFTRMA_OBJ_PD, "protection domains");
SOFTRMA_LIMIT_PARAM(max_qp, SOFTRMA_OBJ_QP, "queue pairs (the GSI QP included)");
SOFTRMA_LIMIT_PARAM(max_cq, SOFTRMA_OBJ_CQ, "completion queues");
SOFTRMA_LIMIT_PARAM(max_srq, SOFTRMA_OBJ_SRQ, "shared receive queues");
SOFTRMA_LIMIT_PARAM(max_mr, SOFTRMA_OBJ_MR, "memory regions");
SOFTRMA_LIMIT_PARAM(max_mw, SOFTRMA_OBJ_MW, "memory windows");
SOFTRMA_LIMIT_PARAM(max_ah, SOFTRMA_OBJ_AH, "address handles");
SOFTRMA_LIMIT_PARAM(max_xrcd, SOFTRMA_OBJ_XRCD, "XRC domains");

u32 softrma_limit(enum softrma_obj obj)
{
	return softrma_limits[obj].max;
}

/*
 * Counts a new object of @sdev, or -ENOMEM when the limit is reached or a
 * failure was injected.
 */
int softrma_obj_add(struct softrma_dev *sdev, enum softrma_obj obj)
{
	if (softrma_fault_create(sdev, obj))
		return -ENOMEM;
	if (atomic_inc_return(&sdev->objs[obj]) > softrma_limits[obj].max) {
		atomic_dec(&sdev->objs[obj]);
		return -ENOMEM;
	}
	return 0;
}

void softrma_obj_del(struct softrma_dev *sdev, enum softrma_obj obj)
{
	atomic_dec(&sdev->objs[obj]);
}

/* The core destroys every object before the device goes. */
void softrma_objs_check_empty(struct softrma_dev *sdev)
{
	for (int obj = 0; obj < SOFTRMA_OBJ_NUM; obj++)
		WARN_ON(atomic_read(&sdev->objs[obj]));
}
