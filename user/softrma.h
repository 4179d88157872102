/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#ifndef SOFTRMA_PROVIDER_H
#define SOFTRMA_PROVIDER_H

#include <pthread.h>
#include <stdatomic.h>
#include <rdma/rdma_user_ioctl_cmds.h>

#include "../kernel/proto/wr.h"
#include "provider-abi.h"
#include "ring.h"

/* The largest message, as the device reports max_msg_sz. */
#define SOFTRMA_MAX_MSG_LEN	0x80000000U

#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/*
 * What a later libibverbs puts in front of struct verbs_context (abi.c):
 * 48 bytes as of rdma-core 64.
 */
#define SOFTRMA_VCTX_PREFIX_MAX	(16 * sizeof(void *))
/*
 * A release that grows struct verbs_context again without a new ABI number
 * lays it out from where abi.c expects its start, so it ends past ours, and
 * libibverbs initialises all of it before softrma_abi_alloc_context() can
 * see its size and refuse it: room for up to this much more.
 */
#define SOFTRMA_VCTX_SLACK	(128 * sizeof(void *))
/*
 * verbs_set_ops() reads as many ops as the loaded libibverbs' struct
 * verbs_context_ops has: abi.c hands it this many more, NULL, than the
 * layouts it knows have.
 */
#define SOFTRMA_OPS_SLACK	128

struct softrma_device {
	struct verbs_device vdev;
	char fw_ver[64];	/* the kernel's fw_ver sysfs string */
};

struct softrma_context {
	uint8_t vctx_prefix[SOFTRMA_VCTX_PREFIX_MAX];	/* abi.c */
	struct verbs_context vctx;
	uint8_t vctx_slack[SOFTRMA_VCTX_SLACK];
	/*
	 * ibv_import_device()'s: its file may have been opened by another
	 * process, whose write() commands the kernel refuses to this one.
	 */
	bool imported;
};

static inline struct softrma_context *to_sctx(struct ibv_context *ibctx)
{
	return container_of(ibctx, struct softrma_context, vctx.context);
}

/*
 * A PD, or a parent domain (ibv_alloc_parent_domain()): a wrapper of a PD,
 * with its handle, whose allocator gives the rings of the QPs, CQs and
 * SRQs created on it.
 */
struct softrma_pd {
	struct ibv_pd ibpd;
	struct softrma_pd *protection_domain;	/* a parent domain's; else NULL */
	void *pd_context;
	void *(*alloc)(struct ibv_pd *pd, void *pd_context, size_t size,
		       size_t alignment, uint64_t resource_type);
	void (*free)(struct ibv_pd *pd, void *pd_context, void *ptr,
		     uint64_t resource_type);
	/* A PD's parent domains; a parent domain's QPs, CQs and SRQs. */
	atomic_uint users;
};

struct softrma_cq {
	union {
		struct ibv_cq ibcq;
		struct verbs_cq vcq;	/* from ibv_create_cq_ex() */
	};
	struct softrma_ring ring;
	pthread_spinlock_t lock;	/* ring; held from start_poll to end_poll */
	struct softrma_cqe *cur;	/* start_poll/next_poll: the entry read */
	struct softrma_pd *parent;	/* held: IBV_CQ_INIT_ATTR_MASK_PD's */
};

struct softrma_qp {
	union {
		struct ibv_qp ibqp;
		struct verbs_qp vqp;	/* from ibv_create_qp_ex() */
	};
	struct softrma_ring sq;
	struct softrma_ring rq;
	struct ibv_qp_cap cap;
	enum ibv_qp_state state;	/* as last modified: both locks */
	pthread_spinlock_t sq_lock;	/* sq, doorbell */
	pthread_spinlock_t rq_lock;
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_post_send cmd;
	} doorbell;
	struct ib_uverbs_post_send_resp doorbell_resp;
	/* An imported context's: the same command through ioctl(). */
	struct {
		struct ib_uverbs_ioctl_hdr hdr;
		struct ib_uverbs_attr attrs[3];
	} doorbell_ioctl;
	/* ibv_wr_start() to ibv_wr_complete(), under sq_lock */
	uint32_t wr_first;		/* sq.index at ibv_wr_start() */
	struct softrma_sqe *wr_cur;	/* the entry the setters fill */
	int wr_err;			/* first error, reported by complete */
	uint64_t send_ops;		/* IBV_QP_EX_WITH_* it was created with */
	struct softrma_pd *parent;	/* held: the parent domain it is on */
};

struct softrma_srq {
	union {
		struct ibv_srq ibsrq;
		struct verbs_srq vsrq;	/* the XRC SRQ number, ... */
	};
	struct softrma_ring ring;
	uint32_t max_sge;
	pthread_spinlock_t lock;
	struct softrma_pd *parent;	/* held: the parent domain it is on */
};

struct softrma_ah {
	struct ibv_ah ibah;
	uint32_t num;		/* the kernel's name for it in UD send entries */
};

static inline struct softrma_pd *to_spd(struct ibv_pd *ibpd)
{
	return container_of(ibpd, struct softrma_pd, ibpd);
}

static inline struct softrma_ah *to_sah(struct ibv_ah *ibah)
{
	return container_of(ibah, struct softrma_ah, ibah);
}

static inline struct softrma_srq *to_ssrq(struct ibv_srq *ibsrq)
{
	return container_of(ibsrq, struct softrma_srq, ibsrq);
}

static inline struct softrma_cq *to_scq(struct ibv_cq *ibcq)
{
	return container_of(ibcq, struct softrma_cq, ibcq);
}

static inline struct softrma_qp *to_sqp(struct ibv_qp *ibqp)
{
	return container_of(ibqp, struct softrma_qp, ibqp);
}

static inline struct softrma_device *to_sdev(struct ibv_device *ibdev)
{
	return container_of(ibdev, struct softrma_device, vdev.device);
}

/* abi.c: the layout of the loaded libibverbs */
struct softrma_abi {
	unsigned int release;	/* the oldest rdma-core release with it */
	size_t vctx_prefix;	/* bytes it has in front of struct verbs_context */
};
extern struct softrma_abi softrma_abi;

unsigned int softrma_abi_loaded_release(void);
void softrma_abi_init(unsigned int release);
size_t softrma_abi_op_slot(size_t slot);
struct softrma_context *softrma_abi_alloc_context(struct ibv_device *ibdev,
						  int cmd_fd);
void softrma_abi_set_ops(struct softrma_context *ctx,
			 const struct verbs_context_ops *ops);
void softrma_abi_enable_qp_ex(struct softrma_qp *qp);

/* The context's struct verbs_context as libibverbs sees it. */
static inline struct verbs_context *softrma_lib_vctx(struct softrma_context *ctx)
{
	return (struct verbs_context *)((uint8_t *)&ctx->vctx -
					softrma_abi.vctx_prefix);
}

/* verbs.c */
int softrma_query_device_ex(struct ibv_context *ctx,
			    const struct ibv_query_device_ex_input *input,
			    struct ibv_device_attr_ex *attr, size_t attr_size);
int softrma_query_port(struct ibv_context *ctx, uint8_t port,
		       struct ibv_port_attr *attr);
struct ibv_mr *softrma_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
			      uint64_t hca_va, int access);
int softrma_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
		     void *addr, size_t length, int access);
int softrma_dereg_mr(struct verbs_mr *vmr);
struct ibv_mr *softrma_import_mr(struct ibv_pd *pd, uint32_t mr_handle);
void softrma_unimport_mr(struct ibv_mr *mr);
int softrma_driver_method(struct ibv_context *ctx, uint16_t object,
			  uint16_t method, const struct ib_uverbs_attr *attrs,
			  uint16_t num);
struct ibv_mw *softrma_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type);
int softrma_dealloc_mw(struct ibv_mw *mw);

/* pd.c */
struct ibv_pd *softrma_alloc_pd(struct ibv_context *ctx);
struct ibv_pd *softrma_alloc_parent_domain(struct ibv_context *ctx,
					   struct ibv_parent_domain_init_attr *attr);
int softrma_dealloc_pd(struct ibv_pd *pd);
struct ibv_pd *softrma_import_pd(struct ibv_context *ctx, uint32_t pd_handle);
void softrma_unimport_pd(struct ibv_pd *pd);
struct softrma_pd *softrma_parent_domain_get(struct ibv_pd *pd);
void softrma_parent_domain_put(struct softrma_pd *parent);

struct ibv_xrcd *softrma_open_xrcd(struct ibv_context *ctx,
				   struct ibv_xrcd_init_attr *attr);
int softrma_close_xrcd(struct ibv_xrcd *xrcd);

/* ah.c */
struct ibv_ah *softrma_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr);
int softrma_destroy_ah(struct ibv_ah *ibah);

/* cq.c */
struct ibv_cq *softrma_create_cq(struct ibv_context *ctx, int cqe,
				 struct ibv_comp_channel *channel,
				 int comp_vector);
struct ibv_cq_ex *softrma_create_cq_ex(struct ibv_context *ctx,
				       struct ibv_cq_init_attr_ex *attr);
int softrma_resize_cq(struct ibv_cq *ibcq, int cqe);
int softrma_destroy_cq(struct ibv_cq *ibcq);
int softrma_poll_cq(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc);

/* qp.c */
struct ibv_qp *softrma_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr);
struct ibv_qp *softrma_create_qp_ex(struct ibv_context *ctx,
				    struct ibv_qp_init_attr_ex *attr);
struct ibv_qp *softrma_open_qp(struct ibv_context *ctx,
			       struct ibv_qp_open_attr *attr);
int softrma_destroy_qp(struct ibv_qp *ibqp);
int softrma_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		      int attr_mask);
int softrma_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		     int attr_mask, struct ibv_qp_init_attr *init_attr);
int softrma_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		      struct ibv_send_wr **bad_wr);
int softrma_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		      struct ibv_recv_wr **bad_wr);
int softrma_bind_mw(struct ibv_qp *ibqp, struct ibv_mw *mw,
		    struct ibv_mw_bind *bind);
int softrma_ring_post_recv(struct softrma_ring *rq, uint32_t max_sge,
			   struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);
int softrma_qp_can_send(struct softrma_qp *qp);
uint64_t softrma_send_ops(enum ibv_qp_type type);
int softrma_opcode_takes_inline(uint32_t opcode);
struct softrma_sqe *softrma_sqe_claim(struct softrma_qp *qp, uint64_t wr_id,
				      uint32_t opcode, uint32_t flags);
int softrma_sqe_add_inline(struct softrma_qp *qp, struct softrma_sqe *sqe,
			   const void *addr, size_t len);
void softrma_sqe_set_atomic_write_dest(struct softrma_sqe *sqe, uint32_t rkey,
				       uint64_t remote_addr, const void *value);
int softrma_sqe_set_sges(struct softrma_qp *qp, struct softrma_sqe *sqe,
			 const struct ibv_sge *sg, size_t num);
void softrma_sqe_set_ud(struct softrma_qp *qp, struct softrma_sqe *sqe,
			struct ibv_ah *ah, uint32_t remote_qpn,
			uint32_t remote_qkey);
int softrma_sqe_set_bind(struct softrma_sqe *sqe, struct ibv_mw *mw,
			 uint32_t rkey, const struct ibv_mw_bind_info *info);
int softrma_sq_publish(struct softrma_qp *qp);

/* wr.c */
int softrma_wr_init(struct softrma_qp *qp, enum ibv_qp_type type,
		    uint64_t send_ops_flags);

/* srq.c */
struct ibv_srq *softrma_create_srq(struct ibv_pd *pd,
				   struct ibv_srq_init_attr *attr);
struct ibv_srq *softrma_create_srq_ex(struct ibv_context *ctx,
				      struct ibv_srq_init_attr_ex *attr);
int softrma_get_srq_num(struct ibv_srq *ibsrq, uint32_t *srq_num);
int softrma_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr,
		       int attr_mask);
int softrma_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr);
int softrma_destroy_srq(struct ibv_srq *ibsrq);
int softrma_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
			  struct ibv_recv_wr **bad_wr);

#endif /* SOFTRMA_PROVIDER_H */
