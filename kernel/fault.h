/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Fault injection (fault.c): what an administrator asks a device to get
 * wrong, through its fault_* sysfs attributes, so that applications can
 * test their error paths.
 */
#ifndef SOFTRMA_FAULT_H
#define SOFTRMA_FAULT_H

#include <linux/device.h>
#include <linux/skbuff.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>

#include "limits.h"

struct softrma_dev;
struct softrma_qp;

/* What happens to a RoCEv2 packet the device sends. */
enum softrma_fault_pkt {
	SOFTRMA_FAULT_PASS,
	SOFTRMA_FAULT_DROP,
	SOFTRMA_FAULT_DUPLICATE,
	SOFTRMA_FAULT_CORRUPT,
	SOFTRMA_FAULT_DELAY,		/* held for delay_ms */
	SOFTRMA_FAULT_REORDER,		/* held until the next one has gone */
	SOFTRMA_FAULT_PKT_NUM
};

struct softrma_fault {
	u32 pkt_ppm[SOFTRMA_FAULT_PKT_NUM];	/* per million packets sent */
	u32 delay_ms;
	struct sk_buff_head held;	/* delayed and reordered packets */
	struct delayed_work release_work;	/* sends them when due */
	atomic_t fail_create[SOFTRMA_OBJ_NUM];	/* creations still to fail */
	bool port_down;			/* reported DOWN; set under RTNL */
};

void softrma_fault_init(struct softrma_dev *sdev);
void softrma_fault_fini(struct softrma_dev *sdev);
bool softrma_fault_create(struct softrma_dev *sdev, enum softrma_obj obj);
enum softrma_fault_pkt softrma_fault_packet(struct softrma_dev *sdev);
void softrma_fault_hold(struct softrma_dev *sdev, struct sk_buff *skb,
			enum softrma_fault_pkt why);
void softrma_fault_release_reordered(struct softrma_dev *sdev);
bool softrma_fault_lossy(const struct softrma_dev *sdev);
enum ib_wc_status softrma_fault_wc_status(struct softrma_qp *qp,
					  enum ib_wc_status status);

extern struct device_attribute dev_attr_fault_drop;
extern struct device_attribute dev_attr_fault_duplicate;
extern struct device_attribute dev_attr_fault_corrupt;
extern struct device_attribute dev_attr_fault_delay;
extern struct device_attribute dev_attr_fault_reorder;
extern struct device_attribute dev_attr_fault_fail_create;
extern struct device_attribute dev_attr_fault_event;
extern struct device_attribute dev_attr_fault_wc_status;

#endif /* SOFTRMA_FAULT_H */
