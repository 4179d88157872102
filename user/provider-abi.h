/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * softrma's own declaration of the private libibverbs provider ABI, which
 * distributions do not ship: IBVERBS_PRIVATE_<SOFTRMA_PABI>, 34 (rdma-core
 * 44 to 56), 57 (57, 58), 59 (59 to 63) or 64 (64), one provider library
 * each.  The structs are rdma-core 44's; abi.c translates at run time to
 * what the loaded libibverbs has where later releases differ.  The asserts
 * at the end pin every size and offset the provider relies on.
 */
#ifndef SOFTRMA_PROVIDER_ABI_H
#define SOFTRMA_PROVIDER_ABI_H

#include <assert.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>

#ifndef SOFTRMA_PABI
#define SOFTRMA_PABI 34
#endif
#if SOFTRMA_PABI != 34 && SOFTRMA_PABI != 57 && SOFTRMA_PABI != 59 && \
	SOFTRMA_PABI != 64
#error "SOFTRMA_PABI: 34, 57, 59 or 64"
#endif

struct list_node {
	struct list_node *next, *prev;
};

enum {
	VERBS_MATCH_SENTINEL = 0,
	VERBS_MATCH_PCI = 1,
	VERBS_MATCH_MODALIAS = 2,
	VERBS_MATCH_DRIVER_ID = 3,
};

struct verbs_match_ent {
	void *driver_data;
	union {
		const char *modalias;
		uint64_t driver_id;
	} u;
	uint16_t vendor;
	uint16_t device;
	uint8_t kind;
};

struct verbs_sysfs_dev {
	struct list_node entry;
	void *provider_data;
	const struct verbs_match_ent *match;
	unsigned int flags;
	char sysfs_name[IBV_SYSFS_NAME_MAX];
	dev_t sysfs_cdev;
	char ibdev_name[IBV_SYSFS_NAME_MAX];
	char ibdev_path[IBV_SYSFS_PATH_MAX];
	char modalias[512];
	uint64_t node_guid;
	uint32_t driver_id;
	enum ibv_node_type node_type;
	int ibdev_idx;
	uint32_t num_ports;
	uint32_t abi_ver;
	struct timespec time_created;
};

struct verbs_device;

enum ibv_mr_type {
	IBV_MR_TYPE_MR,
	IBV_MR_TYPE_NULL_MR,
	IBV_MR_TYPE_IMPORTED_MR,
	IBV_MR_TYPE_DMABUF_MR,
};

struct verbs_mr {
	struct ibv_mr ibv_mr;
	enum ibv_mr_type mr_type;
	int access;
};

struct verbs_device_ops {
	const char *name;
	uint32_t match_min_abi_version;
	uint32_t match_max_abi_version;
	const struct verbs_match_ent *match_table;
	const struct verbs_device_ops **static_providers;
	bool (*match_device)(struct verbs_sysfs_dev *sysfs_dev);
	struct verbs_context *(*alloc_context)(struct ibv_device *device,
					       int cmd_fd, void *private_data);
	struct verbs_context *(*import_context)(struct ibv_device *device,
						int cmd_fd);
	struct verbs_device *(*alloc_device)(struct verbs_sysfs_dev *sysfs_dev);
	void (*uninit_device)(struct verbs_device *device);
};

struct verbs_device {
	struct ibv_device device;
	const struct verbs_device_ops *ops;
	atomic_int refcount;
	struct list_node entry;
	struct verbs_sysfs_dev *sysfs;
	uint64_t core_support;
};

/* Sorted by name: libibverbs copies each non-NULL member at its offset. */
struct verbs_context_ops {
	int (*advise_mr)(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
			 uint32_t flags, struct ibv_sge *sg_list,
			 uint32_t num_sges);
	struct ibv_dm *(*alloc_dm)(struct ibv_context *context,
				   struct ibv_alloc_dm_attr *attr);
	struct ibv_mw *(*alloc_mw)(struct ibv_pd *pd, enum ibv_mw_type type);
	struct ibv_mr *(*alloc_null_mr)(struct ibv_pd *pd);
	struct ibv_pd *(*alloc_parent_domain)(struct ibv_context *context,
				struct ibv_parent_domain_init_attr *attr);
	struct ibv_pd *(*alloc_pd)(struct ibv_context *context);
	struct ibv_td *(*alloc_td)(struct ibv_context *context,
				   struct ibv_td_init_attr *init_attr);
	void (*async_event)(struct ibv_context *context,
			    struct ibv_async_event *event);
	int (*attach_counters_point_flow)(struct ibv_counters *counters,
					  struct ibv_counter_attach_attr *attr,
					  struct ibv_flow *flow);
	int (*attach_mcast)(struct ibv_qp *qp, const union ibv_gid *gid,
			    uint16_t lid);
	int (*bind_mw)(struct ibv_qp *qp, struct ibv_mw *mw,
		       struct ibv_mw_bind *mw_bind);
	int (*close_xrcd)(struct ibv_xrcd *xrcd);
	void (*cq_event)(struct ibv_cq *cq);
	struct ibv_ah *(*create_ah)(struct ibv_pd *pd, struct ibv_ah_attr *attr);
	struct ibv_counters *(*create_counters)(struct ibv_context *context,
				struct ibv_counters_init_attr *init_attr);
	struct ibv_cq *(*create_cq)(struct ibv_context *context, int cqe,
				    struct ibv_comp_channel *channel,
				    int comp_vector);
	struct ibv_cq_ex *(*create_cq_ex)(struct ibv_context *context,
					  struct ibv_cq_init_attr_ex *init_attr);
	struct ibv_flow *(*create_flow)(struct ibv_qp *qp,
					struct ibv_flow_attr *flow_attr);
	struct ibv_flow_action *(*create_flow_action_esp)(
		struct ibv_context *context,
		struct ibv_flow_action_esp_attr *attr);
	struct ibv_qp *(*create_qp)(struct ibv_pd *pd,
				    struct ibv_qp_init_attr *attr);
	struct ibv_qp *(*create_qp_ex)(struct ibv_context *context,
				       struct ibv_qp_init_attr_ex *qp_init_attr_ex);
	struct ibv_rwq_ind_table *(*create_rwq_ind_table)(
		struct ibv_context *context,
		struct ibv_rwq_ind_table_init_attr *init_attr);
	struct ibv_srq *(*create_srq)(struct ibv_pd *pd,
				      struct ibv_srq_init_attr *srq_init_attr);
	struct ibv_srq *(*create_srq_ex)(struct ibv_context *context,
				struct ibv_srq_init_attr_ex *srq_init_attr_ex);
	struct ibv_wq *(*create_wq)(struct ibv_context *context,
				    struct ibv_wq_init_attr *wq_init_attr);
	int (*dealloc_mw)(struct ibv_mw *mw);
	int (*dealloc_pd)(struct ibv_pd *pd);
	int (*dealloc_td)(struct ibv_td *td);
	int (*dereg_mr)(struct verbs_mr *vmr);
	int (*destroy_ah)(struct ibv_ah *ah);
	int (*destroy_counters)(struct ibv_counters *counters);
	int (*destroy_cq)(struct ibv_cq *cq);
	int (*destroy_flow)(struct ibv_flow *flow);
	int (*destroy_flow_action)(struct ibv_flow_action *action);
	int (*destroy_qp)(struct ibv_qp *qp);
	int (*destroy_rwq_ind_table)(struct ibv_rwq_ind_table *rwq_ind_table);
	int (*destroy_srq)(struct ibv_srq *srq);
	int (*destroy_wq)(struct ibv_wq *wq);
	int (*detach_mcast)(struct ibv_qp *qp, const union ibv_gid *gid,
			    uint16_t lid);
	void (*free_context)(struct ibv_context *context);
	int (*free_dm)(struct ibv_dm *dm);
	int (*get_srq_num)(struct ibv_srq *srq, uint32_t *srq_num);
	struct ibv_dm *(*import_dm)(struct ibv_context *context,
				    uint32_t dm_handle);
	struct ibv_mr *(*import_mr)(struct ibv_pd *pd, uint32_t mr_handle);
	struct ibv_pd *(*import_pd)(struct ibv_context *context,
				    uint32_t pd_handle);
	int (*modify_cq)(struct ibv_cq *cq, struct ibv_modify_cq_attr *attr);
	int (*modify_flow_action_esp)(struct ibv_flow_action *action,
				      struct ibv_flow_action_esp_attr *attr);
	int (*modify_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			 int attr_mask);
	int (*modify_qp_rate_limit)(struct ibv_qp *qp,
				    struct ibv_qp_rate_limit_attr *attr);
	int (*modify_srq)(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
			  int srq_attr_mask);
	int (*modify_wq)(struct ibv_wq *wq, struct ibv_wq_attr *wq_attr);
	struct ibv_qp *(*open_qp)(struct ibv_context *context,
				  struct ibv_qp_open_attr *attr);
	struct ibv_xrcd *(*open_xrcd)(struct ibv_context *context,
				      struct ibv_xrcd_init_attr *xrcd_init_attr);
	int (*poll_cq)(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
	int (*post_recv)(struct ibv_qp *qp, struct ibv_recv_wr *wr,
			 struct ibv_recv_wr **bad_wr);
	int (*post_send)(struct ibv_qp *qp, struct ibv_send_wr *wr,
			 struct ibv_send_wr **bad_wr);
	int (*post_srq_ops)(struct ibv_srq *srq, struct ibv_ops_wr *op,
			    struct ibv_ops_wr **bad_op);
	int (*post_srq_recv)(struct ibv_srq *srq, struct ibv_recv_wr *recv_wr,
			     struct ibv_recv_wr **bad_recv_wr);
	int (*query_device_ex)(struct ibv_context *context,
			       const struct ibv_query_device_ex_input *input,
			       struct ibv_device_attr_ex *attr,
			       size_t attr_size);
	int (*query_ece)(struct ibv_qp *qp, struct ibv_ece *ece);
	int (*query_port)(struct ibv_context *context, uint8_t port_num,
			  struct ibv_port_attr *port_attr);
	int (*query_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			int attr_mask, struct ibv_qp_init_attr *init_attr);
	int (*query_qp_data_in_order)(struct ibv_qp *qp,
				      enum ibv_wr_opcode op, uint32_t flags);
	int (*query_rt_values)(struct ibv_context *context,
			       struct ibv_values_ex *values);
	int (*query_srq)(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr);
	int (*read_counters)(struct ibv_counters *counters,
			     uint64_t *counters_value, uint32_t ncounters,
			     uint32_t flags);
	struct ibv_mr *(*reg_dm_mr)(struct ibv_pd *pd, struct ibv_dm *dm,
				    uint64_t dm_offset, size_t length,
				    unsigned int access);
	struct ibv_mr *(*reg_dmabuf_mr)(struct ibv_pd *pd, uint64_t offset,
					size_t length, uint64_t iova, int fd,
					int access);
	struct ibv_mr *(*reg_mr)(struct ibv_pd *pd, void *addr, size_t length,
				 uint64_t hca_va, int access);
	int (*req_notify_cq)(struct ibv_cq *cq, int solicited_only);
	int (*rereg_mr)(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
			void *addr, size_t length, int access);
	int (*resize_cq)(struct ibv_cq *cq, int cqe);
	int (*set_ece)(struct ibv_qp *qp, struct ibv_ece *ece);
	void (*unimport_dm)(struct ibv_dm *dm);
	void (*unimport_mr)(struct ibv_mr *mr);
	void (*unimport_pd)(struct ibv_pd *pd);
};

/* Write-style command wrappers: header, then the kernel's core request. */
struct ibv_get_context {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_get_context core_payload;
};

struct ibv_query_port {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_query_port core_payload;
};

struct ibv_alloc_pd {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_alloc_pd core_payload;
};

struct ibv_reg_mr {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_reg_mr core_payload;
};

struct ibv_rereg_mr {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_rereg_mr core_payload;
};

struct ibv_alloc_mw {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_alloc_mw core_payload;
};

struct ibv_create_cq {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_create_cq core_payload;
};

struct ibv_resize_cq {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_resize_cq core_payload;
};

struct ex_hdr {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_ex_cmd_hdr ex_hdr;
};

struct ibv_create_cq_ex {
	struct ex_hdr hdr;
	struct ib_uverbs_ex_create_cq core_payload;
};

/* The wrappers the extended QP and CQ APIs convert to. */
enum verbs_qp_mask {
	VERBS_QP_XRCD = 1 << 0,
	VERBS_QP_EX = 1 << 1,	/* ibv_qp_to_qp_ex() returns &qp_ex */
};

struct verbs_xrcd {
	struct ibv_xrcd xrcd;
	uint32_t comp_mask;
	uint32_t handle;
};

struct verbs_srq {
	struct ibv_srq srq;
	enum ibv_srq_type srq_type;
	struct verbs_xrcd *xrcd;
	struct ibv_cq *cq;
	uint32_t srq_num;
};

/* rdma-core 44's struct ibv_qp_ex; 45 appended wr_flush. */
#define SOFTRMA_QP_EX_SIZE_44	352

/*
 * struct verbs_qp as rdma-core 44 and as 45 and later lay it out: wr_flush
 * moved comp_mask and xrcd by 8 bytes (abi.c says which one is in use).
 * struct ibv_qp_ex is the one of the headers the provider is built with.
 */
struct verbs_qp {
	union {
		struct ibv_qp qp;
		struct ibv_qp_ex qp_ex;
		struct {
			uint8_t qp_ex_44[SOFTRMA_QP_EX_SIZE_44];
			union {
				struct {
					uint32_t comp_mask; /* enum verbs_qp_mask */
					struct verbs_xrcd *xrcd;
				} v44;
				struct {
					void (*wr_flush)(struct ibv_qp_ex *qp,
							 uint32_t rkey,
							 uint64_t remote_addr,
							 size_t len, uint8_t type,
							 uint8_t level);
					uint32_t comp_mask;
					struct verbs_xrcd *xrcd;
				} v45;
			};
		};
	};
};

struct verbs_cq {
	union {
		struct ibv_cq cq;
		struct ibv_cq_ex cq_ex;
	};
};

struct ibv_create_qp {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_create_qp core_payload;
};

struct ibv_modify_qp {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_modify_qp core_payload;
};

struct ibv_query_qp {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_query_qp core_payload;
};

struct ibv_create_srq {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_create_srq core_payload;
};

struct ibv_create_xsrq {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_create_xsrq core_payload;
};

struct ibv_modify_srq {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_modify_srq core_payload;
};

struct ibv_open_xrcd {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_open_xrcd core_payload;
};

struct ibv_open_qp {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_open_qp core_payload;
};

struct ibv_query_srq {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_query_srq core_payload;
};

#define SOFTRMA_CONCAT(a, b) a##b
#define SOFTRMA_REGISTER_DRIVER(pabi) SOFTRMA_CONCAT(verbs_register_driver_, pabi)
void SOFTRMA_REGISTER_DRIVER(SOFTRMA_PABI)(const struct verbs_device_ops *ops);
void *_verbs_init_and_alloc_context(struct ibv_device *device, int cmd_fd,
				    size_t alloc_size,
				    struct verbs_context *context_offset,
				    uint32_t driver_id);
void verbs_uninit_context(struct verbs_context *context);
void verbs_set_ops(struct verbs_context *vctx,
		   const struct verbs_context_ops *ops);
int ibv_read_ibdev_sysfs_file(char *buf, size_t size,
			      struct verbs_sysfs_dev *sysfs_dev,
			      const char *fnfmt, ...)
	__attribute__((format(printf, 4, 5)));

#if SOFTRMA_PABI >= 57
struct ibv_fd_arr;
int ibv_cmd_get_context(struct verbs_context *context,
			struct ibv_get_context *cmd, size_t cmd_size,
			struct ibv_fd_arr *fd_arr,
			struct ib_uverbs_get_context_resp *resp,
			size_t resp_size);
#else
int ibv_cmd_get_context(struct verbs_context *context,
			struct ibv_get_context *cmd, size_t cmd_size,
			struct ib_uverbs_get_context_resp *resp,
			size_t resp_size);
#endif
struct ibv_command_buffer;
int ibv_cmd_query_context(struct ibv_context *ctx,
			  struct ibv_command_buffer *driver);
int ibv_cmd_query_mr(struct ibv_pd *pd, struct verbs_mr *vmr,
		     uint32_t mr_handle);
int ibv_cmd_query_device_any(struct ibv_context *context,
			     const struct ibv_query_device_ex_input *input,
			     struct ibv_device_attr_ex *attr, size_t attr_size,
			     struct ib_uverbs_ex_query_device_resp *resp,
			     size_t *resp_size);
int ibv_cmd_query_port(struct ibv_context *context, uint8_t port_num,
		       struct ibv_port_attr *port_attr,
		       struct ibv_query_port *cmd, size_t cmd_size);
int ibv_cmd_alloc_pd(struct ibv_context *context, struct ibv_pd *pd,
		     struct ibv_alloc_pd *cmd, size_t cmd_size,
		     struct ib_uverbs_alloc_pd_resp *resp, size_t resp_size);
int ibv_cmd_dealloc_pd(struct ibv_pd *pd);
int ibv_cmd_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
		      uint32_t flags, struct ibv_sge *sg_list, uint32_t num_sge);
int ibv_cmd_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
		   uint64_t hca_va, int access, struct verbs_mr *vmr,
		   struct ibv_reg_mr *cmd, size_t cmd_size,
		   struct ib_uverbs_reg_mr_resp *resp, size_t resp_size);
int ibv_cmd_rereg_mr(struct verbs_mr *vmr, uint32_t flags, void *addr,
		     size_t length, uint64_t hca_va, int access,
		     struct ibv_pd *pd, struct ibv_rereg_mr *cmd,
		     size_t cmd_sz, struct ib_uverbs_rereg_mr_resp *resp,
		     size_t resp_sz);
int ibv_cmd_dereg_mr(struct verbs_mr *vmr);
int ibv_cmd_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type,
		     struct ibv_mw *mw, struct ibv_alloc_mw *cmd,
		     size_t cmd_size, struct ib_uverbs_alloc_mw_resp *resp,
		     size_t resp_size);
int ibv_cmd_dealloc_mw(struct ibv_mw *mw);
int ibv_cmd_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
			 uint16_t lid);
int ibv_cmd_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
			 uint16_t lid);
int ibv_cmd_create_cq(struct ibv_context *context, int cqe,
		      struct ibv_comp_channel *channel, int comp_vector,
		      struct ibv_cq *cq, struct ibv_create_cq *cmd,
		      size_t cmd_size, struct ib_uverbs_create_cq_resp *resp,
		      size_t resp_size);
#if SOFTRMA_PABI >= 59
struct verbs_create_cq_prov_attr;
int ibv_cmd_create_cq_ex(struct ibv_context *context,
			 const struct ibv_cq_init_attr_ex *attr,
			 struct verbs_create_cq_prov_attr *prov_attr,
			 struct verbs_cq *cq, struct ibv_create_cq_ex *cmd,
			 size_t cmd_size,
			 struct ib_uverbs_ex_create_cq_resp *resp,
			 size_t resp_size, uint32_t cmd_flags);
#else
int ibv_cmd_create_cq_ex(struct ibv_context *context,
			 const struct ibv_cq_init_attr_ex *attr,
			 struct verbs_cq *cq, struct ibv_create_cq_ex *cmd,
			 size_t cmd_size,
			 struct ib_uverbs_ex_create_cq_resp *resp,
			 size_t resp_size, uint32_t cmd_flags);
#endif
int ibv_cmd_resize_cq(struct ibv_cq *cq, int cqe, struct ibv_resize_cq *cmd,
		      size_t cmd_size, struct ib_uverbs_resize_cq_resp *resp,
		      size_t resp_size);
int ibv_cmd_destroy_cq(struct ibv_cq *cq);
int ibv_cmd_req_notify_cq(struct ibv_cq *cq, int solicited_only);
int ibv_cmd_create_qp(struct ibv_pd *pd, struct ibv_qp *qp,
		      struct ibv_qp_init_attr *attr, struct ibv_create_qp *cmd,
		      size_t cmd_size, struct ib_uverbs_create_qp_resp *resp,
		      size_t resp_size);
int ibv_cmd_create_qp_ex(struct ibv_context *context, struct verbs_qp *qp,
			 struct ibv_qp_init_attr_ex *attr,
			 struct ibv_create_qp *cmd, size_t cmd_size,
			 struct ib_uverbs_create_qp_resp *resp, size_t resp_size);
int ibv_cmd_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		      int attr_mask, struct ibv_modify_qp *cmd, size_t cmd_size);
int ibv_cmd_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *qp_attr,
		     int attr_mask, struct ibv_qp_init_attr *qp_init_attr,
		     struct ibv_query_qp *cmd, size_t cmd_size);
int ibv_cmd_destroy_qp(struct ibv_qp *qp);
int ibv_cmd_create_ah(struct ibv_pd *pd, struct ibv_ah *ah,
		      struct ibv_ah_attr *attr,
		      struct ib_uverbs_create_ah_resp *resp, size_t resp_size);
int ibv_cmd_destroy_ah(struct ibv_ah *ah);
int ibv_cmd_create_srq(struct ibv_pd *pd, struct ibv_srq *srq,
		       struct ibv_srq_init_attr *attr, struct ibv_create_srq *cmd,
		       size_t cmd_size, struct ib_uverbs_create_srq_resp *resp,
		       size_t resp_size);
int ibv_cmd_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
		       int srq_attr_mask, struct ibv_modify_srq *cmd,
		       size_t cmd_size);
int ibv_cmd_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
		      struct ibv_query_srq *cmd, size_t cmd_size);
int ibv_cmd_destroy_srq(struct ibv_srq *srq);
int ibv_cmd_create_srq_ex(struct ibv_context *context, struct verbs_srq *srq,
			  struct ibv_srq_init_attr_ex *attr_ex,
			  struct ibv_create_xsrq *cmd, size_t cmd_size,
			  struct ib_uverbs_create_srq_resp *resp,
			  size_t resp_size);
int ibv_cmd_open_xrcd(struct ibv_context *context, struct verbs_xrcd *xrcd,
		      int vxrcd_size, struct ibv_xrcd_init_attr *attr,
		      struct ibv_open_xrcd *cmd, size_t cmd_size,
		      struct ib_uverbs_open_xrcd_resp *resp, size_t resp_size);
int ibv_cmd_close_xrcd(struct verbs_xrcd *xrcd);
int ibv_cmd_open_qp(struct ibv_context *context, struct verbs_qp *qp,
		    int vqp_sz, struct ibv_qp_open_attr *attr,
		    struct ibv_open_qp *cmd, size_t cmd_size,
		    struct ib_uverbs_create_qp_resp *resp, size_t resp_size);

#define PABI_SLOT(member) (offsetof(struct verbs_context_ops, member))
static_assert(sizeof(struct list_node) == 16, "list_node");
static_assert(sizeof(struct verbs_match_ent) == 24, "verbs_match_ent");
static_assert(offsetof(struct verbs_match_ent, kind) == 20, "match kind");
static_assert(sizeof(struct verbs_sysfs_dev) == 992, "verbs_sysfs_dev");
static_assert(offsetof(struct verbs_sysfs_dev, ibdev_path) == 176, "ibdev_path");
static_assert(offsetof(struct verbs_sysfs_dev, abi_ver) == 968, "abi_ver");
static_assert(sizeof(struct verbs_device_ops) == 72, "verbs_device_ops");
static_assert(offsetof(struct verbs_device_ops, alloc_device) == 56, "alloc_device");
static_assert(sizeof(struct ibv_device) == 664, "ibv_device");
static_assert(sizeof(struct verbs_device) == 712, "verbs_device");
static_assert(offsetof(struct verbs_device, sysfs) == 696, "sysfs");
static_assert(sizeof(struct verbs_context) == 648, "verbs_context");
static_assert(sizeof(struct verbs_context_ops) == 608, "verbs_context_ops");
static_assert(PABI_SLOT(alloc_pd) == 40, "alloc_pd slot");
static_assert(PABI_SLOT(create_cq) == 120, "create_cq slot");
static_assert(PABI_SLOT(create_qp) == 152, "create_qp slot");
static_assert(PABI_SLOT(dereg_mr) == 224, "dereg_mr slot");
static_assert(PABI_SLOT(free_context) == 312, "free_context slot");
static_assert(PABI_SLOT(poll_cq) == 424, "poll_cq slot");
static_assert(PABI_SLOT(post_send) == 440, "post_send slot");
static_assert(PABI_SLOT(query_device_ex) == 464, "query_device_ex slot");
static_assert(PABI_SLOT(query_port) == 480, "query_port slot");
static_assert(PABI_SLOT(reg_mr) == 544, "reg_mr slot");
static_assert(PABI_SLOT(req_notify_cq) == 552, "req_notify_cq slot");
static_assert(PABI_SLOT(unimport_pd) == 600, "unimport_pd slot");
static_assert(sizeof(struct ibv_get_context) == 16, "ibv_get_context");
static_assert(sizeof(struct ibv_query_port) == 24, "ibv_query_port");
static_assert(sizeof(struct ibv_alloc_pd) == 16, "ibv_alloc_pd");
static_assert(sizeof(struct ibv_reg_mr) == 48, "ibv_reg_mr");
static_assert(sizeof(struct verbs_mr) == 56, "verbs_mr");
static_assert(sizeof(struct ibv_create_cq) == 40, "ibv_create_cq");
static_assert(sizeof(struct ibv_resize_cq) == 24, "ibv_resize_cq");
static_assert(sizeof(struct ibv_create_qp) == 64, "ibv_create_qp");
static_assert(sizeof(struct ibv_modify_qp) == 120, "ibv_modify_qp");
static_assert(sizeof(struct ibv_query_qp) == 24, "ibv_query_qp");
static_assert(sizeof(struct ibv_create_srq) == 40, "ibv_create_srq");
static_assert(sizeof(struct ibv_modify_srq) == 24, "ibv_modify_srq");
static_assert(sizeof(struct ibv_query_srq) == 24, "ibv_query_srq");
static_assert(sizeof(struct ibv_create_xsrq) == 56, "ibv_create_xsrq");
static_assert(sizeof(struct ibv_open_xrcd) == 24, "ibv_open_xrcd");
static_assert(sizeof(struct ibv_open_qp) == 40, "ibv_open_qp");
static_assert(sizeof(struct verbs_xrcd) == 16, "verbs_xrcd");
static_assert(sizeof(struct verbs_srq) == 160, "verbs_srq");
static_assert(offsetof(struct verbs_mr, access) == 52, "verbs_mr.access");
static_assert(sizeof(struct ibv_create_cq_ex) == 56, "ibv_create_cq_ex");
static_assert(sizeof(struct verbs_cq) == 288, "verbs_cq");
static_assert(offsetof(struct ibv_qp_ex, wr_atomic_write) ==
	      SOFTRMA_QP_EX_SIZE_44 - 8, "ibv_qp_ex of rdma-core 44");
static_assert(sizeof(struct ibv_qp_ex) <= SOFTRMA_QP_EX_SIZE_44 + 8, "ibv_qp_ex");
static_assert(offsetof(struct verbs_qp, v44.comp_mask) == 352, "verbs_qp 44 comp_mask");
static_assert(offsetof(struct verbs_qp, v44.xrcd) == 360, "verbs_qp 44 xrcd");
static_assert(offsetof(struct verbs_qp, v45.wr_flush) == 352, "ibv_qp_ex 45 wr_flush");
static_assert(offsetof(struct verbs_qp, v45.comp_mask) == 360, "verbs_qp 45 comp_mask");
static_assert(offsetof(struct verbs_qp, v45.xrcd) == 368, "verbs_qp 45 xrcd");
static_assert(sizeof(struct verbs_qp) == 376, "verbs_qp");
static_assert(PABI_SLOT(create_cq_ex) == 16 * 8, "create_cq_ex slot");
static_assert(PABI_SLOT(create_qp_ex) == 20 * 8, "create_qp_ex slot");
#undef PABI_SLOT

#endif /* SOFTRMA_PROVIDER_ABI_H */
