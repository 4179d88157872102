/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * The user/kernel ABI of softrma, shared by softrma.ko and the rdma-core
 * provider libsoftrma.
 */
#ifndef SOFTRMA_ABI_USER_H
#define SOFTRMA_ABI_USER_H

/* uverbs_abi_ver of the device; the provider matches exactly this value. */
#define SOFTRMA_ABI_VERSION 1

/*
 * Contents of /sys/class/infiniband/<dev>/hca_type.  The provider matches
 * softrma devices by this file, so that renamed devices still match.
 */
#define SOFTRMA_HCA_TYPE "softrma"

#endif /* SOFTRMA_ABI_USER_H */
