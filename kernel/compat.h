/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Every difference between the kernels softrma supports (Debian 12's 6.1 and
 * 6.12) lives here.
 */
#ifndef SOFTRMA_COMPAT_H
#define SOFTRMA_COMPAT_H

#include <linux/version.h>
#include <rdma/ib_verbs.h>
#include <rdma/softrma-abi.h>

#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 3, 0)
#include <linux/mm.h>
/* 6.3 made the VMA's flags private to these helpers. */
static inline void vm_flags_set(struct vm_area_struct *vma, vm_flags_t flags)
{
	vma->vm_flags |= flags;
}
#endif

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

/*
 * FLUSH and ATOMIC WRITE came with 6.2.  softrma executes them on every
 * kernel, with the uAPI values of softrma-abi.h; uverbs passes 6.1 the
 * capability bits through unnamed.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
static_assert(IB_WR_FLUSH == SOFTRMA_WR_FLUSH);
static_assert(IB_WR_ATOMIC_WRITE == SOFTRMA_WR_ATOMIC_WRITE);
static_assert(IB_WC_FLUSH == SOFTRMA_WC_FLUSH);
static_assert(IB_WC_ATOMIC_WRITE == SOFTRMA_WC_ATOMIC_WRITE);
static_assert(IB_ACCESS_FLUSH_GLOBAL == SOFTRMA_ACCESS_FLUSH_GLOBAL);
static_assert(IB_ACCESS_FLUSH_PERSISTENT == SOFTRMA_ACCESS_FLUSH_PERSISTENT);
#define SOFTRMA_DEVICE_CAP_RMA_EXT	(IB_DEVICE_FLUSH_GLOBAL | \
					 IB_DEVICE_FLUSH_PERSISTENT | \
					 IB_DEVICE_ATOMIC_WRITE)
#else
#define SOFTRMA_DEVICE_CAP_RMA_EXT	(BIT_ULL(38) | BIT_ULL(39) | BIT_ULL(40))
#endif

/* 6.9's BH workqueues took over from tasklets, which 6.1 has alone. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 9, 0)
#include <linux/workqueue.h>
#define softrma_bh			work_struct
#define softrma_bh_init(bh, fn)		INIT_WORK(bh, fn)
#define softrma_bh_schedule(bh)		queue_work(system_bh_wq, bh)
#define softrma_bh_kill(bh)		cancel_work_sync(bh)
#else
#include <linux/interrupt.h>
#define softrma_bh			tasklet_struct
#define softrma_bh_init(bh, fn)		tasklet_setup(bh, fn)
#define softrma_bh_schedule(bh)		tasklet_schedule(bh)
#define softrma_bh_kill(bh)		tasklet_kill(bh)
#endif

/* owner_on_cpu() is SMP's: on one CPU, no other task runs while we spin. */
#ifndef CONFIG_SMP
static inline bool owner_on_cpu(struct task_struct *owner)
{
	return false;
}
#endif

#endif /* SOFTRMA_COMPAT_H */
