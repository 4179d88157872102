/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * The user/kernel ABI of softrma, shared by softrma.ko and the rdma-core
 * provider libsoftrma.
 */
#ifndef SOFTRMA_ABI_USER_H
#define SOFTRMA_ABI_USER_H

#include <linux/types.h>
#include <rdma/ib_user_ioctl_cmds.h>

/* uverbs_abi_ver of the device; the provider matches exactly this value. */
#define SOFTRMA_ABI_VERSION 2

/*
 * Contents of /sys/class/infiniband/<dev>/hca_type.  The provider matches
 * softrma devices by this file, so that renamed devices still match.
 */
#define SOFTRMA_HCA_TYPE "softrma"

/*
 * Every queue (SQ, RQ, CQ) is a ring mapped into the process: this header,
 * then a power-of-two number of fixed-size entries.  Indices run freely and
 * are masked by the number of entries.  The producer writes an entry, then
 * the producer index (release); the consumer reads the index (acquire), then
 * the entry, then publishes its own index.  The kernel keeps a private copy
 * of the index it owns and never trusts the other one beyond the ring size.
 */
struct softrma_ring_hdr {
	__u32 producer;
	__u32 reserved0[15];
	__u32 consumer;
	__u32 consumer_flags;	/* SOFTRMA_RING_* of the consumer; SQ only */
	__u32 reserved1[14];
};

/*
 * Set by the kernel in an SQ's consumer_flags while it has a context that
 * will run the send queue without a doorbell: a producer that publishes,
 * issues a full barrier and then finds it set need not ring.  The kernel
 * clears it, issues a full barrier and looks at the producer index once
 * more before that context ends.  A hint only: the kernel never reads it.
 */
#define SOFTRMA_RING_DRAINING	(1U << 0)

/* Bytes a ring of @num entries of @stride bytes spans, before page rounding. */
#define SOFTRMA_RING_BYTES(num, stride) \
	(sizeof(struct softrma_ring_hdr) + (__u64)(num) * (stride))

struct softrma_sge {
	__aligned_u64 addr;
	__u32 length;
	__u32 lkey;
};

/*
 * RDMA FLUSH and ATOMIC WRITE (IBA 1.5), which Linux 6.1's uAPI does not
 * name yet: the values of later kernels' IB_UVERBS_WR_*, IB_WC_* and
 * IB_ACCESS_FLUSH_*.  FLUSH permission travels in the access flags of the
 * QP (modify_qp) and, for MRs, in struct softrma_reg_mr_cmd.
 */
#define SOFTRMA_WR_FLUSH		14
#define SOFTRMA_WR_ATOMIC_WRITE		15
#define SOFTRMA_WC_FLUSH		8
#define SOFTRMA_WC_ATOMIC_WRITE		9
#define SOFTRMA_ACCESS_FLUSH_GLOBAL	(1 << 8)
#define SOFTRMA_ACCESS_FLUSH_PERSISTENT	(1 << 9)
#define SOFTRMA_ACCESS_FLUSH		(SOFTRMA_ACCESS_FLUSH_GLOBAL | \
					 SOFTRMA_ACCESS_FLUSH_PERSISTENT)

/* FLUSH placement types and selectivity levels, as in the FETH. */
enum softrma_flush_type {
	SOFTRMA_FLUSH_GLOBAL = 1,
	SOFTRMA_FLUSH_PERSISTENT = 2,
};

enum softrma_flush_level {
	SOFTRMA_FLUSH_RANGE = 0,
	SOFTRMA_FLUSH_MR = 1,
};

/* SQ entry: the fixed part, then num_sge SGEs or inline_len bytes. */
struct softrma_sqe {
	__aligned_u64 wr_id;
	__u32 opcode;		/* enum ib_uverbs_wr_opcode */
	__u32 send_flags;	/* enum ib_uverbs_send_flags */
	__u32 num_sge;
	__u32 inline_len;	/* with IB_UVERBS_SEND_INLINE */
	union {
		__u32 imm_data;		/* network order, passed through */
		__u32 invalidate_rkey;	/* SEND_WITH_INV, LOCAL_INV */
	};
	__u32 xrc_srqn;		/* XRC_SEND QPs: the SRQ at the target */
	union {
		struct {
			__aligned_u64 remote_addr;
			__u32 rkey;
			__u32 reserved;
		} rdma;
		struct {
			__aligned_u64 remote_addr;
			__aligned_u64 compare_add;
			__aligned_u64 swap;
			__u32 rkey;
			__u32 reserved;
		} atomic;
		struct {
			__aligned_u64 remote_addr;
			__aligned_u64 value;	/* the 8 bytes, as memory holds them */
			__u32 rkey;
			__u32 reserved;
		} atomic_write;
		struct {
			__aligned_u64 remote_addr;
			__u32 rkey;
			__u32 length;
			__u8 type;		/* enum softrma_flush_type */
			__u8 level;		/* enum softrma_flush_level */
			__u16 reserved0;
			__u32 reserved1;
		} flush;
		struct {			/* IB_UVERBS_WR_BIND_MW */
			__aligned_u64 addr;	/* in the MR: the window's start */
			__aligned_u64 length;	/* 0: unbinds a type 1 window */
			__u32 mw_key;		/* the window's key now */
			__u32 new_key;		/* its key once bound: same index */
			__u32 mr_lkey;
			__u32 access;		/* IB_UVERBS_ACCESS_* */
		} bind;
		struct {			/* IB_WR_REG_MR: kernel QPs only */
			__u32 key;		/* its index names the MR */
			__u32 access;
		} reg;
		struct {
			__u32 ah;		/* softrma_create_ah_resp.ah_num */
			__u32 remote_qpn;
			__u32 remote_qkey;	/* high bit set: the QP's own */
			__u32 reserved;
		} ud;
	} wr;
	struct softrma_sge sge[];
};

/* RQ entry: the fixed part, then num_sge SGEs. */
struct softrma_rqe {
	__aligned_u64 wr_id;
	__u32 num_sge;
	__u32 reserved;
	struct softrma_sge sge[];
};

/* IBV_WC_WITH_INV: the kernel's IB_WC_WITH_INVALIDATE has another value. */
#define SOFTRMA_WC_WITH_INV	(1 << 3)

/*
 * CQ entry; values as in struct ibv_wc.  A UD receive carries IBV_WC_GRH,
 * and its first 40 bytes hold the network header of network_hdr_type.
 */
struct softrma_cqe {
	__aligned_u64 wr_id;
	__u32 status;
	__u32 opcode;
	__u32 vendor_err;
	__u32 byte_len;
	union {
		__u32 imm_data;		/* network order, passed through */
		__u32 invalidate_rkey;	/* with SOFTRMA_WC_WITH_INV */
	};
	__u32 qp_num;
	__u32 src_qp;
	__u32 wc_flags;
	__u16 pkey_index;
	__u16 slid;
	__u8 sl;
	__u8 dlid_path_bits;
	__u8 port_num;
	__u8 network_hdr_type;	/* enum rdma_network_type, with IBV_WC_GRH */
};

/*
 * Follows struct ib_uverbs_reg_mr and struct ib_uverbs_rereg_mr; optional
 * (an older provider sends none).
 */
struct softrma_reg_mr_cmd {
	__u32 access;			/* SOFTRMA_ACCESS_FLUSH_* */
	__u32 reserved;
};

/*
 * A ring in the process's own memory instead of one the kernel allocates
 * for mmap (a parent domain's allocator, ibv_alloc_parent_domain(3)):
 * @addr page-aligned, writable, and @len at least the ring's bytes,
 * SOFTRMA_RING_BYTES() rounded up to whole pages, for the geometry the
 * kernel answers with (kernel/proto/ring.h).  The kernel pins the pages
 * (RLIMIT_MEMLOCK) until the object is destroyed.  @addr 0: the kernel's
 * ring, to mmap at the answered key.  Such a ring cannot be resized.
 */
struct softrma_ring_mem {
	__aligned_u64 addr;
	__aligned_u64 len;
};

/* Follow struct ib_uverbs_create_cq (or _ex_), _qp, _srq; optional. */
struct softrma_create_cq_cmd {
	struct softrma_ring_mem ring;
};

struct softrma_create_qp_cmd {
	struct softrma_ring_mem sq;
	struct softrma_ring_mem rq;
};

struct softrma_create_srq_cmd {
	struct softrma_ring_mem ring;
};

/* Follows struct ib_uverbs_create_cq_resp. */
struct softrma_create_cq_resp {
	__aligned_u64 mmap_key;		/* offset to mmap the ring at */
	__u32 num_entries;		/* a power of two */
	__u32 reserved;
};

/*
 * Follows struct ib_uverbs_resize_cq_resp: the CQ's new ring.  The
 * completions not polled yet are in it at the indices they had, so the
 * consumer index carries on; the old ring is no longer written.
 */
struct softrma_resize_cq_resp {
	__aligned_u64 mmap_key;
	__u32 num_entries;		/* a power of two */
	__u32 reserved;
};

/* Follows struct ib_uverbs_create_qp_resp. */
struct softrma_create_qp_resp {
	__aligned_u64 sq_mmap_key;
	__aligned_u64 rq_mmap_key;
	__u32 sq_entries;		/* powers of two */
	__u32 sq_stride;		/* bytes per SQ entry */
	__u32 rq_entries;
	__u32 rq_stride;
};

/* Follows struct ib_uverbs_create_srq_resp. */
struct softrma_create_srq_resp {
	__aligned_u64 mmap_key;
	__u32 num_entries;		/* a power of two */
	__u32 stride;			/* bytes per entry (struct softrma_rqe) */
};

/*
 * Follows struct ib_uverbs_modify_srq.  modify_srq has no response, so a
 * resize (IB_SRQ_MAX_WR) writes the SRQ's new ring, struct
 * softrma_modify_srq_resp, at resp_addr in the caller's memory; without
 * this struct a resize is EOPNOTSUPP.  The receives not taken yet are in
 * the new ring at the indices they had, so the producer index carries on.
 */
struct softrma_modify_srq_cmd {
	__aligned_u64 resp_addr;
};

struct softrma_modify_srq_resp {
	__aligned_u64 mmap_key;
	__u32 num_entries;		/* a power of two */
	__u32 stride;			/* bytes per entry, as before */
};

/* Follows struct ib_uverbs_create_ah_resp. */
struct softrma_create_ah_resp {
	__u32 ah_num;			/* names the AH in UD send entries */
	__u32 reserved;
};

/*
 * The driver method of UVERBS_OBJECT_MR that syncs a range of an MR
 * between the CPU's view of its memory and the device's, as uDAPL's
 * dat_lmr_sync_rdma_read() and dat_lmr_sync_rdma_write() do: softrmadv.h's
 * softrmadv_sync_mr().  ADDR and LENGTH are __u64 and name the range as
 * SGEs do (the MR's iova); DIR is an enum softrma_sync_dir.
 */
enum softrma_mr_methods {
	SOFTRMA_IB_METHOD_MR_SYNC = 1U << UVERBS_ID_NS_SHIFT,
};

enum softrma_mr_sync_attrs {
	SOFTRMA_IB_ATTR_MR_SYNC_HANDLE = 1U << UVERBS_ID_NS_SHIFT,
	SOFTRMA_IB_ATTR_MR_SYNC_ADDR,
	SOFTRMA_IB_ATTR_MR_SYNC_LENGTH,
	SOFTRMA_IB_ATTR_MR_SYNC_DIR,
};

/*
 * The driver method of UVERBS_OBJECT_PD that ibv_import_pd() calls: it
 * only finds the PD of HANDLE in the caller's context, so that an import
 * of a handle that names none fails there and then.
 */
enum softrma_pd_methods {
	SOFTRMA_IB_METHOD_PD_QUERY = 1U << UVERBS_ID_NS_SHIFT,
};

enum softrma_pd_query_attrs {
	SOFTRMA_IB_ATTR_PD_QUERY_HANDLE = 1U << UVERBS_ID_NS_SHIFT,
};

enum softrma_sync_dir {
	SOFTRMA_SYNC_TO_DEVICE = 1,	/* before the device reads it */
	SOFTRMA_SYNC_TO_CPU = 2,	/* after the device wrote it */
};

#endif /* SOFTRMA_ABI_USER_H */
