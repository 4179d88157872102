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

#endif /* SOFTRMA_COMPAT_H */
