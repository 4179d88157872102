/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Every difference between the kernels softrma supports (Debian 12's 6.1 and
 * 6.12) lives here.
 */
#ifndef SOFTRMA_COMPAT_H
#define SOFTRMA_COMPAT_H

#include <linux/version.h>
#include <rdma/ib_verbs.h>

#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 12, 0)
/* 6.12 remembers that "rdma link add" chose the name; 6.1 has no such flag. */
static inline void ib_mark_name_assigned_by_user(struct ib_device *ibdev)
{
}
#endif

/* 6.12 hands create_cq the whole attribute bundle instead of the udata. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
#include <rdma/uverbs_ioctl.h>
#define softrma_create_cq_arg uverbs_attr_bundle
static inline struct ib_udata *
softrma_create_cq_udata(struct uverbs_attr_bundle *attrs)
{
	return attrs ? &attrs->driver_udata : NULL;
}
#else
#define softrma_create_cq_arg ib_udata
static inline struct ib_udata *softrma_create_cq_udata(struct ib_udata *udata)
{
	return udata;
}
#endif

#endif /* SOFTRMA_COMPAT_H */
