/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Persistence checking of MRs over persistent memory (persist.c).
 */
#ifndef SOFTRMA_PERSIST_H
#define SOFTRMA_PERSIST_H

#include <linux/list.h>
#include <linux/sizes.h>
#include <linux/spinlock.h>

struct softrma_dev;
struct softrma_mr;

/* Where a device's writes into persistent memory become durable. */
enum softrma_persistence {
	SOFTRMA_PERSIST_OFF,	/* not checked */
	SOFTRMA_PERSIST_CACHE,	/* at a FLUSH to persistence, as with DDIO */
	SOFTRMA_PERSIST_ADR,	/* once placed, as with DDIO off */
	SOFTRMA_PERSIST_NUM
};

/* Undo log entries of all of a device's MRs, at most. */
#define SOFTRMA_UNDO_MAX_BYTES	SZ_16M

/* A checked MR over persistent memory. */
struct softrma_persist {
	struct softrma_dev *sdev;
	enum softrma_persistence domain;
	/* Cache: what the device's writes not yet durable overwrote. */
	spinlock_t lock;
	struct list_head undo;		/* newest first */
};

int softrma_persist_attach(struct softrma_dev *sdev, struct softrma_mr *mr);
void softrma_persist_detach(struct softrma_mr *mr);
void softrma_persist_before_write(const struct softrma_mr *mr, u64 iova,
				  u64 len, const void *addr);
void softrma_persist_placed(const struct softrma_mr *mr, void *addr, u64 len);
void softrma_persist_durable(const struct softrma_mr *mr, u64 iova, u64 len);
void softrma_persist_power_fail(struct softrma_dev *sdev);
const char *softrma_persistence_name(enum softrma_persistence domain);
int softrma_persistence_parse(const char *buf);

#endif /* SOFTRMA_PERSIST_H */
