/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#ifndef SOFTRMA_H
#define SOFTRMA_H

#include <linux/completion.h>
#include <linux/list.h>
#include <linux/netdevice.h>
#include <linux/refcount.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>

#define SOFTRMA_PORT		1
#define SOFTRMA_GID_TBL_LEN	1024
#define SOFTRMA_MAX_PD		0x7ff0
#define SOFTRMA_MAX_MSG_SZ	0x80000000U
#define SOFTRMA_MAX_MR		0x100000
#define SOFTRMA_MAX_MR_SIZE	(1ULL << 36)
#define SOFTRMA_FW_VER		"0.1.0"

struct softrma_dev {
	struct ib_device ib_dev;	/* first: allocated by ib_alloc_device() */
	struct net_device *netdev;	/* held until dealloc_driver */
	netdevice_tracker netdev_tracker;
	struct list_head list;		/* on softrma_devices, see main.c */
	enum ib_port_state port_state;	/* last state reported; under RTNL */
	atomic_t num_pd;
	struct xarray mr_xa;		/* key index -> softrma_mr */
	u32 mr_next;			/* cyclic allocation cursor of mr_xa */
};

struct softrma_ucontext {
	struct ib_ucontext ibuc;
};

struct softrma_pd {
	struct ib_pd ibpd;
};

struct softrma_mr {
	struct ib_mr ibmr;
	struct ib_umem *umem;
	struct page **pages;		/* the pinned pages, in order */
	unsigned long npages;
	unsigned int page_offset;	/* of iova within pages[0] */
	u64 iova;
	u64 length;
	int access;
	refcount_t refcnt;		/* registration + operations in flight */
	struct completion released;	/* refcnt reached zero */
};

static inline struct softrma_mr *to_smr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct softrma_mr, ibmr);
}

static inline struct softrma_dev *to_sdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct softrma_dev, ib_dev);
}

/* main.c: the device list */
void softrma_list_del(struct softrma_dev *sdev);

/* device.c */
struct softrma_dev *softrma_dev_create(const char *name, struct net_device *ndev);
enum ib_port_state softrma_port_state(struct net_device *ndev);
void softrma_port_event(struct softrma_dev *sdev);

/* pd.c */
int softrma_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int softrma_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);

/* mr.c */
struct ib_mr *softrma_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				  u64 iova, int access, struct ib_udata *udata);
int softrma_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);
void softrma_mr_put(struct softrma_mr *mr);

#endif /* SOFTRMA_H */
