/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The verbs objects of a softrma device, and the entry points the RDMA core
 * calls (one file per object).
 */
#ifndef SOFTRMA_VERBS_H
#define SOFTRMA_VERBS_H

#include <linux/completion.h>
#include <linux/highmem.h>
#include <linux/list.h>
#include <linux/netdevice.h>
#include <linux/refcount.h>
#include <linux/rwsem.h>
#include <linux/xarray.h>
#include <linux/mutex.h>
#include <linux/workqueue.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

#include "fault.h"
#include "limits.h"
#include "persist.h"
#include "queue.h"
#include "sgl.h"

/*
 * Users of an object that lookups can find (MRs by key, QPs by number): its
 * registration holds one reference and every operation in flight another.
 * Teardown unpublishes the object first, then drains its users.
 */
struct softrma_users {
	refcount_t count;
	struct completion idle;		/* count reached zero */
};

static inline void softrma_users_init(struct softrma_users *users)
{
	refcount_set(&users->count, 1);
	init_completion(&users->idle);
}

static inline bool softrma_users_get(struct softrma_users *users)
{
	return refcount_inc_not_zero(&users->count);
}

static inline void softrma_users_put(struct softrma_users *users)
{
	if (refcount_dec_and_test(&users->count))
		complete(&users->idle);
}

/* Another use, by a user that holds one already. */
static inline void softrma_users_hold(struct softrma_users *users)
{
	refcount_inc(&users->count);
}

/* Drops the registration's reference and waits for the last user. */
static inline void softrma_users_drain(struct softrma_users *users)
{
	softrma_users_put(users);
	wait_for_completion(&users->idle);
}

/* The port's counters (stats.c). */
enum softrma_counter {
	SOFTRMA_CNT_SENT_PKTS,
	SOFTRMA_CNT_RCVD_PKTS,
	SOFTRMA_CNT_SENT_BYTES,		/* UDP payloads: RoCE headers on */
	SOFTRMA_CNT_RCVD_BYTES,
	SOFTRMA_CNT_SEND_ERR,		/* no route, no memory */
	SOFTRMA_CNT_RCVD_ICRC_ERR,
	SOFTRMA_CNT_RCVD_MALFORMED,	/* lengths, opcode, version, pad */
	SOFTRMA_CNT_RCVD_NO_QP,		/* no such QP, or it cannot receive */
	SOFTRMA_CNT_RCVD_DROPPED,	/* UD, UC: the QP dropped the request;
					 * RC: a response's ODP page was not there */
	SOFTRMA_CNT_DUP_REQ,		/* responder: PSN already executed */
	SOFTRMA_CNT_OUT_OF_SEQ,		/* responder: PSN beyond the expected */
	SOFTRMA_CNT_SENT_RNR_NAK,	/* responder: no receive posted, or an
					 * ODP page not there */
	SOFTRMA_CNT_COALESCED_ACKS,	/* responder: covered by a later ACK */
	SOFTRMA_CNT_RCVD_SEQ_NAK,	/* requester: go back on a NAK */
	SOFTRMA_CNT_RCVD_RNR_NAK,
	SOFTRMA_CNT_ACK_TIMEOUT,	/* requester: go back on the timer */
	SOFTRMA_CNT_RETRANS_PKTS,	/* requester: packets sent again */
	SOFTRMA_CNT_LOCAL_SENT_MSGS,	/* local transport: requests */
	SOFTRMA_CNT_LOCAL_RCVD_MSGS,
	SOFTRMA_CNT_LOCAL_SENT_BYTES,	/* payload; a READ's is the responder's */
	SOFTRMA_CNT_LOCAL_RCVD_BYTES,
	SOFTRMA_CNT_FLUSH_PERSISTENT,	/* responder: FLUSHes to persistence */
	SOFTRMA_CNT_WRITTEN_BACK_BYTES,	/* and the bytes they wrote back */
	SOFTRMA_CNT_POWER_FAIL_LOST_BYTES,	/* persist.c */
	SOFTRMA_CNT_UNDO_LOG_OVERFLOWS,
	SOFTRMA_CNT_MISSING_SYNC_TO_DEVICE,	/* checking device: view.c */
	SOFTRMA_CNT_MISSING_SYNC_TO_CPU,
	SOFTRMA_CNT_DOORBELLS,		/* user QPs' send doorbells: post.c */
	SOFTRMA_CNT_DOORBELL_HANDOVERS,	/* of those, handed to the QP's work */
	SOFTRMA_CNT_INJECTED_FAULTS,	/* fault.c */
	SOFTRMA_CNT_ODP_FAULTS,		/* odp.c: ranges faulted in */
	SOFTRMA_CNT_ODP_INVALIDATIONS,	/* ranges the mm took back */
	SOFTRMA_CNT_RCVD_SOFTIRQ,	/* of rcvd_pkts, those processed in
					 * the softirq of their arrival */
	SOFTRMA_CNT_NUM
};

/*
 * After the device's counters, its namespace's: datagrams dropped because
 * the namespace's receive backlog was full, before any device was known.
 */
enum {
	SOFTRMA_STAT_NS_BACKLOG_DROPPED = SOFTRMA_CNT_NUM,
	SOFTRMA_STAT_NUM
};

struct softrma_dev {
	struct ib_device ib_dev;	/* first: allocated by ib_alloc_device() */
	struct net_device *netdev;	/* held until dealloc_driver */
	netdevice_tracker netdev_tracker;
	struct list_head list;		/* on softrma_devices, see main.c */
	enum ib_port_state port_state;	/* last state reported; under RTNL */
	atomic_t objs[SOFTRMA_OBJ_NUM];	/* see limits.c */
	struct xarray mr_xa;		/* key index -> softrma_mr */
	u32 mr_next;			/* cyclic allocation cursor of mr_xa */
	struct xarray qp_xa;		/* QPN -> softrma_qp, once usable */
	u32 qp_next;
	struct xarray srq_xa;		/* XRC SRQ number -> softrma_srq: xrc.c */
	u32 srq_next;
	struct xarray ah_xa;		/* AH number -> softrma_ah; see ah.c */
	u32 ah_next;
	struct list_head mcg_list;	/* multicast groups; see mcast.c */
	struct mutex mcg_lock;
	u32 num_mcg;
	struct softrma_netsock *netsock;	/* the UDP socket of its netns */
	/*
	 * A non-coherent checking device (view.c); changes only while it has
	 * no user MR, and their registrations hold mode_sem for reading.
	 */
	bool noncoherent;
	/* Persistence checking (persist.c), chosen in the same way. */
	enum softrma_persistence persistence;
	atomic64_t undo_bytes;		/* in its MRs' undo logs */
	struct rw_semaphore mode_sem;
	atomic_t user_mrs;
	atomic_t odp_mrs;		/* none: the softirq receives (wire.c) */
	atomic64_t counters[SOFTRMA_CNT_NUM];
	struct softrma_fault fault;
};

static inline void softrma_count(struct softrma_dev *sdev,
				 enum softrma_counter c)
{
	atomic64_inc(&sdev->counters[c]);
}

static inline void softrma_count_add(struct softrma_dev *sdev,
				     enum softrma_counter c, u64 n)
{
	atomic64_add(n, &sdev->counters[c]);
}

struct softrma_ucontext {
	struct ib_ucontext ibuc;
};

struct softrma_pd {
	struct ib_pd ibpd;
};

struct softrma_xrcd {
	struct ib_xrcd ibxrcd;
};

/* Where a UD request comes from and goes to: what its GRH would carry. */
struct softrma_av {
	union ib_gid sgid;
	union ib_gid dgid;
	u32 flow_label;
	u8 traffic_class;
	u8 hop_limit;
};

struct softrma_ah {
	struct ib_ah ibah;
	struct softrma_av av;
	u32 num;			/* in ah_xa; named by UD send entries */
};

/*
 * What a key names: a user MR, a DMA MR (no pages) over kernel virtual
 * addresses, a kernel consumer's fast-registration MR, whose pages, range,
 * access and key are given by ib_map_mr_sg() and an IB_WR_REG_MR, and
 * which is valid from that work request until an invalidation, or a memory
 * window (mw.c), valid while bound.  Deregistration and invalidation wait
 * for the accesses in progress (users), which are the CPU's own work,
 * never for the network: WQEs and messages in flight on the wire keep only
 * the object (ref), and find it dead or its key changed at their next
 * access.
 */
struct softrma_mr {
	struct ib_mr ibmr;
	struct ib_umem *umem;
	struct page **pages;		/* the pinned pages, in order, or view's */
	struct softrma_view *view;	/* a checking device's own view */
	struct softrma_persist *persist;	/* persistent memory, checked */
	unsigned long npages;
	struct xarray odp_children;	/* implicit ODP: umems by chunk */
	unsigned int page_offset;	/* of iova within pages[0] */
	u64 iova;
	u64 length;
	int access;
	/*
	 * The key that names it while it is valid; a fast-registration MR's
	 * changes with each IB_WR_REG_MR.  Under the MR xarray's lock.
	 */
	u32 key;
	bool valid;
	/*
	 * Counts the times it became valid (softrma_mr_publish()): a list
	 * made before the last rereg, registration, bind or invalidation,
	 * even under the same key, no longer enters it.
	 */
	u32 gen;
	/*
	 * Fast registration: pages[] and map_pages[] hold max_pages each;
	 * ib_map_mr_sg() fills map_pages[] for the next IB_WR_REG_MR, which
	 * swaps it in, so that a consumer may map while the MR is still
	 * valid and an invalidation is queued before the registration.
	 */
	u32 max_pages;
	struct page **map_pages;
	unsigned long map_npages;
	unsigned int map_page_offset;
	/*
	 * A memory window (mw_type set): bound, it lends its range of the MR
	 * it is bound to (parent) that MR's pages, and a type 2B window
	 * serves only the QP it was bound through (its serial: a QPN comes
	 * round again, and would give a later QP the window).
	 */
	u8 mw_type;
	struct softrma_mr *parent;
	u64 qp_serial;
	struct mutex bind_lock;		/* window: bind, invalidate, dealloc */
	atomic_t windows;		/* MR: windows bound to it */
	struct softrma_users users;	/* registration + accesses in progress */
	struct work_struct free_work;	/* softrma_mr_unref() */
	refcount_t ref;			/* registration + scatter/gather lists */
	unsigned long odp_faulting;	/* bit 0: a work faults pages in */
	unsigned long odp_failed;	/* the page its last fault failed at */
};

/* The core's memory window; the key's object is the window proper. */
struct softrma_mw {
	struct ib_mw ibmw;
	struct softrma_mr *win;
};

static inline struct softrma_mw *to_smw(struct ib_mw *ibmw)
{
	return container_of(ibmw, struct softrma_mw, ibmw);
}

static inline bool softrma_mr_is_odp(const struct softrma_mr *mr)
{
	return mr->umem && mr->umem->is_odp;
}

/* Implicit ODP: the whole address space, registered as 0..U64_MAX. */
static inline bool softrma_mr_range_is_implicit(u64 start, u64 length)
{
	return !start && length == U64_MAX;
}

/* The MR of kernel virtual addresses: neither pages nor ODP. */
static inline bool softrma_mr_is_dma(const struct softrma_mr *mr)
{
	return !mr->pages && !softrma_mr_is_odp(mr);
}

/*
 * The ODP umems a piece of a copy or an atomic holds locked (odp.c); the
 * holder sets nofault where other QPs wait for it.
 */
struct softrma_odp_hold {
	struct ib_umem_odp *odp[2];
	bool nofault;
};

#if IS_ENABLED(CONFIG_INFINIBAND_ON_DEMAND_PAGING)
int softrma_odp_get(struct softrma_mr *mr, struct ib_device *ibdev, u64 start,
		    u64 length, int access);
void softrma_odp_put(struct softrma_mr *mr);
int softrma_odp_hold(struct softrma_odp_hold *h, struct softrma_mr *dst,
		     u64 dst_iova, u64 dst_ahead, struct softrma_mr *src,
		     u64 src_iova, u64 src_ahead);
void softrma_odp_release(struct softrma_odp_hold *h);
void *softrma_odp_map(struct softrma_mr *mr, u64 iova, u64 *len,
		      struct page **page);
int softrma_advise_mr(struct ib_pd *pd, enum ib_uverbs_advise_mr_advice advice,
		      u32 flags, struct ib_sge *sg_list, u32 num_sge,
		      struct uverbs_attr_bundle *attrs);
void softrma_odp_caps(struct ib_device_attr *attr);
#else
/* A kernel without ODP: no MR is ODP, and none can be registered. */
static inline int softrma_odp_get(struct softrma_mr *mr,
				  struct ib_device *ibdev, u64 start,
				  u64 length, int access)
{
	return -EOPNOTSUPP;
}

static inline void softrma_odp_put(struct softrma_mr *mr)
{
}

static inline int softrma_odp_hold(struct softrma_odp_hold *h,
				   struct softrma_mr *dst, u64 dst_iova,
				   u64 dst_ahead, struct softrma_mr *src,
				   u64 src_iova, u64 src_ahead)
{
	return 0;
}

static inline void softrma_odp_release(struct softrma_odp_hold *h)
{
}

static inline void *softrma_odp_map(struct softrma_mr *mr, u64 iova,
				    u64 *len, struct page **page)
{
	return NULL;
}

static inline int softrma_advise_mr(struct ib_pd *pd,
				    enum ib_uverbs_advise_mr_advice advice,
				    u32 flags, struct ib_sge *sg_list,
				    u32 num_sge,
				    struct uverbs_attr_bundle *attrs)
{
	return -EOPNOTSUPP;
}

static inline void softrma_odp_caps(struct ib_device_attr *attr)
{
}
#endif

/* The byte @iova of @mr (checked by the caller) in its page array. */
static inline u64 softrma_mr_pos(const struct softrma_mr *mr, u64 iova)
{
	return iova - mr->iova + mr->page_offset;
}

/*
 * Maps the byte at @iova of @mr (checked by the caller); *len is how much
 * lies in the mapping, *page the page to unmap, NULL for kernel memory.
 */
static inline void *softrma_mr_map(struct softrma_mr *mr, u64 iova,
				   u64 *len, struct page **page)
{
	u64 pos = softrma_mr_pos(mr, iova);

	if (softrma_mr_is_dma(mr)) {
		*page = NULL;
		return (void *)(uintptr_t)iova;
	}
	if (softrma_mr_is_odp(mr))
		return softrma_odp_map(mr, iova, len, page);
	*page = mr->pages[pos >> PAGE_SHIFT];
	*len = min_t(u64, *len, PAGE_SIZE - offset_in_page(pos));
	return kmap_local_page(*page) + offset_in_page(pos);
}

static inline bool softrma_mr_is_fast_reg(const struct softrma_mr *mr)
{
	return mr->max_pages;
}

static inline void softrma_mr_unmap(void *addr, struct page *page)
{
	if (page)
		kunmap_local(addr);
}

/*
 * A user CQ's ring holds struct softrma_cqe; a kernel CQ's holds struct
 * ib_wc, ready for poll_cq.
 */
struct softrma_cq {
	struct ib_cq ibcq;
	struct softrma_queue queue;
	spinlock_t lock;		/* producer side of queue, notify */
	struct mutex resize_lock;	/* one resize at a time */
	u8 notify;			/* IB_CQ_NEXT_COMP, IB_CQ_SOLICITED or 0 */
	bool overflowed;
	bool dying;			/* its ring is going */
};

struct softrma_srq {
	struct ib_srq ibsrq;
	struct softrma_queue queue;
	struct mutex lock;		/* consumers: every attached QP's responder */
	u32 max_sge;
	u32 limit;			/* armed limit; 0: not armed */
	/* XRC: number lookup + XRC TGT responders at work (xrc.c) */
	struct softrma_users users;
	u64 serial;			/* which XRC SRQ of the module's lifetime */
};

/* The responder's message in progress, and its answer; under rq_lock. */
struct softrma_resp_state {
	u64 offset;			/* bytes of the message placed */
	u64 length;			/* WRITE: the length its RETH names */
	struct softrma_sgl target;	/* WRITE, READ: the memory it names */
	u64 atomic_orig;		/* an atomic's answer: what was there */
	bool rqe_held;			/* qp->rqe is out of its ring, ours */
	struct softrma_sgl rqe_sgl;	/* the held receive's memory */
	bool rqe_cut;			/* rqe_sgl ends at an SGE that failed */
	bool last_wqe_reached;		/* raised since the QP entered error */
	struct softrma_seg rqe_segs[SOFTRMA_MAX_SGE];
	/*
	 * XRC TGT: the SRQ the request at hand names, in use while it is
	 * executed (xrc.c), and the one the held receive came from.
	 */
	struct softrma_srq *xsrq;
	u32 rqe_srqn;
	u64 rqe_srq_serial;
};

/* The QP's work runs its send queue for a doorbell (sq.c). */
#define SOFTRMA_SQ_DRAINING	0

struct softrma_qp {
	struct ib_qp ibqp;
	struct softrma_queue sq;
	struct softrma_queue rq;
	struct softrma_sqe *sqe;	/* kernel copy of the SQ entry at work */
	struct softrma_rqe *rqe;	/* kernel copy of the RQ/SRQ entry at work */
	struct mutex sq_lock;		/* the requester: sq, sqe, rnr_* */
	struct mutex rq_lock;		/* the responder: rq, rqe */
	spinlock_t gate;		/* the receive softirq's: softrma_qp_enter() */
	spinlock_t post_lock;		/* kernel QPs: producers of sq and rq */
	spinlock_t state_lock;		/* state's writers; innermost */
	u64 serial;			/* which QP of the module's lifetime */
	u64 peer_serial;		/* the local peer that spoke first; rq_lock */
	enum ib_qp_state state;
	struct ib_qp_attr attr;		/* as last modified */
	struct ib_qp_cap cap;
	bool sig_all;
	bool kernel;			/* created by a kernel ULP: post.c posts */
	bool dying;			/* destroy started: re-arm nothing */
	struct softrma_sgl sq_sgl;	/* the SQ head's memory; sq_lock */
	struct softrma_seg sq_segs[SOFTRMA_MAX_SGE];
	struct softrma_resp_state resp;
	struct softrma_av sq_av;	/* UD: the SQ head's destination */
	struct softrma_av path;		/* RC, UC: the connection's GIDs */
	u8 rnr_left;			/* RNR retries left for the SQ head */
	u8 retry_left;			/* local: ACK timeouts left for it */
	bool head_retried;		/* the SQ head is being tried again */
	bool head_wait;			/* it waits out an RNR NAK or timeout */
	bool sqd_notify;		/* SQ_DRAINED asked for; sq_lock */
	atomic_t fault_wc_left;		/* completions to fail: fault.c */
	u32 fault_wc_status;
	struct delayed_work retry_work;	/* ends head_wait */
	struct work_struct work;	/* runs the SQ; in error flushes the RQ */
	unsigned long sq_drain;		/* SOFTRMA_SQ_DRAINING: sq.c */
	u32 sq_inline_runs;		/* doorbells run inline since a handover */
	u64 sq_probe_at_us;		/* the last handover probe: sq.c */
	u64 sq_probe_idle_us;		/* the CPUs' idle time then */
	struct softrma_users users;	/* QPN lookup + responders at work */
	struct softrma_wire *wire;	/* RC, UC: the wire transport's state */
	bool on_wire;			/* the peer is reached in packets */
};

static inline struct softrma_cq *to_scq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct softrma_cq, ibcq);
}

static inline struct softrma_srq *to_ssrq(struct ib_srq *ibsrq)
{
	return container_of(ibsrq, struct softrma_srq, ibsrq);
}

static inline struct softrma_qp *to_sqp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct softrma_qp, ibqp);
}

static inline struct softrma_ah *to_sah(struct ib_ah *ibah)
{
	return container_of(ibah, struct softrma_ah, ibah);
}

/*
 * Whether the requester of a QP in @state sends: in RTS, and in SQD, where
 * what is in flight drains (responses, retransmissions) and nothing new is
 * taken.
 */
static inline bool softrma_state_sends(enum ib_qp_state state)
{
	return state == IB_QPS_RTS || state == IB_QPS_SQD;
}

/* The responder executes requests and answers them from RTR to SQD. */
static inline bool softrma_state_responds(enum ib_qp_state state)
{
	return state == IB_QPS_RTR || state == IB_QPS_RTS || state == IB_QPS_SQD;
}

static inline bool softrma_qp_is_ud(struct softrma_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_UD || qp->ibqp.qp_type == IB_QPT_GSI;
}

static inline bool softrma_qp_is_xrc_tgt(const struct softrma_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_XRC_TGT;
}

/*
 * The transport of @qp's requests: RC, UC, UD (the GSI QP is UD) or XRC,
 * named by its initiator's type, IB_QPT_XRC_INI, at both ends.
 */
static inline enum ib_qp_type softrma_qp_transport(struct softrma_qp *qp)
{
	switch (qp->ibqp.qp_type) {
	case IB_QPT_GSI:
		return IB_QPT_UD;
	case IB_QPT_XRC_TGT:
		return IB_QPT_XRC_INI;
	default:
		return qp->ibqp.qp_type;
	}
}

/* RC and XRC: acknowledged; UC and UD are not, and never NAK. */
/*
 * The responder's state belongs to whoever holds rq_lock, the requester's
 * to whoever holds sq_lock: a process, or the receive softirq, which may
 * not sleep and so takes the QP's gate instead, when it finds the mutex
 * free (softrma_qp_enter()), and keeps it while it works.  A process that
 * takes one of the mutexes waits at the gate for the softirq to leave.
 */
static inline void softrma_qp_lock(struct softrma_qp *qp, struct mutex *lock)
{
	mutex_lock(lock);
	spin_lock_bh(&qp->gate);
	spin_unlock_bh(&qp->gate);
}

static inline void softrma_qp_lock_rq(struct softrma_qp *qp)
{
	softrma_qp_lock(qp, &qp->rq_lock);
}

static inline void softrma_qp_lock_sq(struct softrma_qp *qp)
{
	softrma_qp_lock(qp, &qp->sq_lock);
}

/*
 * In the receive softirq: takes the gate, and tells whether the state
 * that @lock guards is free (no process holds @lock).
 */
static inline bool softrma_qp_enter(struct softrma_qp *qp, struct mutex *lock)
	__acquires(&qp->gate)
{
	lockdep_assert_in_softirq();
	spin_lock(&qp->gate);
	if (mutex_is_locked(lock))
		return false;
	smp_acquire__after_ctrl_dep();	/* what its last holder wrote */
	return true;
}

static inline void softrma_qp_leave(struct softrma_qp *qp)
	__releases(&qp->gate)
{
	spin_unlock(&qp->gate);
}

#define softrma_qp_assert_rq(qp)					\
	lockdep_assert(lockdep_is_held(&(qp)->rq_lock) ||		\
		       lockdep_is_held(&(qp)->gate))
#define softrma_qp_assert_sq(qp)					\
	lockdep_assert(lockdep_is_held(&(qp)->sq_lock) ||		\
		       lockdep_is_held(&(qp)->gate))

static inline bool softrma_qp_is_reliable(struct softrma_qp *qp)
{
	enum ib_qp_type transport = softrma_qp_transport(qp);

	return transport == IB_QPT_RC || transport == IB_QPT_XRC_INI;
}

/* An XRC INI QP only sends; an XRC TGT QP only responds. */
static inline bool softrma_qp_responds(struct softrma_qp *qp)
{
	return qp->ibqp.qp_type != IB_QPT_XRC_INI;
}

/*
 * The PD of the memory @qp's responder reaches: an XRC TGT QP has none of
 * its own, and uses that of the XRC SRQ its request names (xrc.c).
 */
static inline struct ib_pd *softrma_qp_resp_pd(struct softrma_qp *qp)
{
	if (softrma_qp_is_xrc_tgt(qp))
		return qp->resp.xsrq ? qp->resp.xsrq->ibsrq.pd : NULL;
	return qp->ibqp.pd;
}

static inline bool softrma_qp_is_kernel(struct softrma_qp *qp)
{
	return qp->kernel;
}

static inline struct softrma_mr *to_smr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct softrma_mr, ibmr);
}

static inline struct softrma_dev *to_sdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct softrma_dev, ib_dev);
}

/*
 * ODP pins nothing, so it has no page that a checking device could copy
 * into its view, or that a persistence domain could check.
 */
static inline bool softrma_dev_takes_odp(const struct softrma_dev *sdev)
{
	return !sdev->noncoherent && !sdev->persistence;
}

/* The network namespace of @qp's device. */
static inline struct net *softrma_qp_net(struct softrma_qp *qp)
{
	return dev_net(to_sdev(qp->ibqp.device)->netdev);
}

/* main.c: the device list, and the workqueue of every work item */
extern struct workqueue_struct *softrma_wq;
extern struct workqueue_struct *softrma_odp_wq;
void softrma_list_del(struct softrma_dev *sdev);
struct softrma_dev *softrma_get_dev_by_gid(struct net *net,
					   const union ib_gid *gid);
struct softrma_dev *softrma_get_dev_by_ifindex(struct net *net, int ifindex);

/* stats.c */
struct rdma_hw_stats *softrma_alloc_hw_port_stats(struct ib_device *ibdev,
						  u32 port);
int softrma_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
			 u32 port, int index);
void softrma_drop(struct softrma_dev *sdev, enum softrma_counter reason);

/* device.c */
struct softrma_dev *softrma_dev_create(const char *name, struct net_device *ndev);
enum ib_port_state softrma_port_state(const struct softrma_dev *sdev);
u32 softrma_port_mtu(struct softrma_dev *sdev);
enum ib_mtu softrma_port_active_mtu(struct softrma_dev *sdev);
void softrma_port_event(struct softrma_dev *sdev);

/* pd.c */
int softrma_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int softrma_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
extern const struct uapi_definition softrma_pd_uapi_defs[];

/* xrc.c: XRC domains and the XRC SRQs their TGT QPs' requests name */
int softrma_alloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata);
int softrma_dealloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata);
int softrma_xsrq_publish(struct softrma_srq *srq);
void softrma_xsrq_unpublish(struct softrma_srq *srq);

/* ah.c */
int softrma_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		      struct ib_udata *udata);
int softrma_destroy_ah(struct ib_ah *ibah, u32 flags);
int softrma_ah_read(struct softrma_dev *sdev, struct ib_pd *pd, u32 num,
		    struct softrma_av *av);
void softrma_av_init(struct softrma_av *av, const struct rdma_ah_attr *attr);

/* mr.c */
int softrma_umem_pages(struct ib_umem *umem, struct page **pages,
		       unsigned long npages);
struct ib_mr *softrma_get_dma_mr(struct ib_pd *ibpd, int access);
struct ib_mr *softrma_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				  u64 iova, int access, struct ib_udata *udata);
struct ib_mr *softrma_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				    u64 length, u64 iova, int access,
				    struct ib_pd *pd, struct ib_udata *udata);
int softrma_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);
struct ib_mr *softrma_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			       u32 max_num_sg);
int softrma_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		      unsigned int *sg_offset);
int softrma_mr_fast_reg(struct softrma_dev *sdev, struct ib_pd *pd, u32 key,
			int access);
int softrma_mr_invalidate(struct ib_qp *qp, u32 key);
int softrma_mr_assign_key(struct softrma_dev *sdev, struct softrma_mr *mr,
			  enum softrma_obj obj);
void softrma_mr_wait_users(struct softrma_mr *mr);
bool softrma_mr_enter(struct softrma_mr *mr, u32 key, u32 gen);
void softrma_mr_publish(struct softrma_mr *mr);
void softrma_mr_put(struct softrma_mr *mr);
void softrma_mr_unref(struct softrma_mr *mr);
struct softrma_mr *softrma_mr_get(struct softrma_dev *sdev, struct ib_pd *pd,
				  u32 key, u64 iova, u64 len, int access);
struct softrma_mr *softrma_mr_get_remote(struct ib_qp *qp, u32 key, u64 iova,
					 u64 len, int access);
struct softrma_mr *softrma_mr_get_whole(struct ib_qp *qp, u32 key, int access);
int softrma_mr_atomic(struct softrma_mr *mr, u64 iova, bool cmp_swap,
		      u64 compare_add, u64 swap, u64 *orig, bool nofault);
int softrma_mr_atomic_write(struct softrma_mr *mr, u64 iova, u64 value,
			    bool nofault);
void softrma_mr_writeback(struct softrma_mr *mr, u64 iova, u64 len);

/* sync.c */
extern const struct uapi_definition softrma_mr_uapi_defs[];

/* mw.c */
int softrma_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata);
int softrma_dealloc_mw(struct ib_mw *ibmw);
int softrma_mw_bind(struct ib_qp *qp, const struct softrma_sqe *sqe);
int softrma_mw_invalidate(struct ib_qp *qp, struct softrma_mr *win, u32 key);

/* cq.c */
struct softrma_create_cq_arg;
int softrma_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		      struct softrma_create_cq_arg *arg);
int softrma_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata);
int softrma_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);
int softrma_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);
int softrma_poll_cq(struct ib_cq *ibcq, int num, struct ib_wc *wc);
void softrma_cq_fail(struct softrma_cq *cq);
bool softrma_cq_post(struct softrma_cq *cq, struct softrma_qp *qp,
		     const struct softrma_cqe *cqe, bool solicited);

/* qp.c */
int softrma_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		      struct ib_udata *udata);
int softrma_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		      struct ib_udata *udata);
int softrma_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		     struct ib_qp_init_attr *init);
int softrma_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);
enum ib_qp_state softrma_qp_state(struct softrma_qp *qp);
void softrma_qp_schedule(struct softrma_qp *qp);
void softrma_qp_set_error(struct softrma_qp *qp);
void softrma_qp_event(struct softrma_qp *qp, enum ib_event_type type);
void softrma_qp_check_drained(struct softrma_qp *qp);
bool softrma_qp_from_peer(struct softrma_qp *qp, const struct softrma_av *from);
void softrma_qp_put(struct softrma_qp *qp);
struct softrma_qp *softrma_qp_get(struct softrma_dev *sdev, u32 qpn);

/* srq.c */
int softrma_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		       struct ib_udata *udata);
int softrma_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		       enum ib_srq_attr_mask mask, struct ib_udata *udata);
int softrma_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr);
int softrma_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata);
void softrma_srq_check_limit(struct softrma_srq *srq);

/* post.c: posting work requests */
int softrma_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		      const struct ib_send_wr **bad_wr);
int softrma_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		      const struct ib_recv_wr **bad_wr);

/* restrack.c: driver details for "rdma resource show -dd" */
int softrma_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp);
int softrma_fill_res_mr_entry(struct sk_buff *msg, struct ib_mr *ibmr);
int softrma_fill_res_cq_entry(struct sk_buff *msg, struct ib_cq *ibcq);

/* mcast.c: UD multicast */
int softrma_attach_mcast(struct ib_qp *ibqp, union ib_gid *mgid, u16 lid);
int softrma_detach_mcast(struct ib_qp *ibqp, union ib_gid *mgid, u16 lid);
void softrma_mcast_detach_qp(struct softrma_qp *qp);

/* wire.c: connected QPs on the wire */
int softrma_wire_create(struct softrma_qp *qp);
int softrma_wire_check_path(struct softrma_qp *qp,
			    const struct ib_qp_attr *attr, int mask);
void softrma_wire_modify(struct softrma_qp *qp, const struct ib_qp_attr *attr,
			 int mask, enum ib_qp_state next);
void softrma_wire_destroy(struct softrma_qp *qp);
bool softrma_wire_sq_busy(struct softrma_qp *qp);
void softrma_wire_resp_reset(struct softrma_qp *qp);
void softrma_wire_answer_flush(struct softrma_qp *qp, bool owed);

#endif /* SOFTRMA_VERBS_H */
