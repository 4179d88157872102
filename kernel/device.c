// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The softrma ib_device: its ops table, attributes, port and user context.
 */

#include <linux/sysfs.h>
#include <net/addrconf.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_mad.h>
#include <rdma/softrma-abi.h>

#include "compat.h"
#include "net.h"

/*
 * The largest IB MTU whose packets fit in @ndev's MTU, 0 if none does.  The
 * core's RoCE helper reserves room for the largest headers (IPv6, UDP, BTH,
 * XRC, AtomicETH, ICRC: 96 bytes), so no opcode can overflow the netdev.
 */
static enum ib_mtu softrma_netdev_ib_mtu(struct net_device *ndev)
{
	return iboe_get_mtu(READ_ONCE(ndev->mtu));
}

/* Bytes of payload in one packet at the port's active MTU. */
u32 softrma_port_mtu(struct softrma_dev *sdev)
{
	return ib_mtu_enum_to_int(softrma_netdev_ib_mtu(sdev->netdev));
}

enum ib_port_state softrma_port_state(const struct softrma_dev *sdev)
{
	struct net_device *ndev = sdev->netdev;

	if (netif_running(ndev) && netif_carrier_ok(ndev) &&
	    softrma_netdev_ib_mtu(ndev) && !READ_ONCE(sdev->fault.port_down))
		return IB_PORT_ACTIVE;
	return IB_PORT_DOWN;
}

/* The port's active MTU, as softrma_query_port() reports it; takes no lock. */
enum ib_mtu softrma_port_active_mtu(struct softrma_dev *sdev)
{
	if (softrma_port_state(sdev) != IB_PORT_ACTIVE)
		return IB_MTU_256;
	return softrma_netdev_ib_mtu(sdev->netdev);
}

/* Reports a change of port state to the core; called under RTNL. */
void softrma_port_event(struct softrma_dev *sdev)
{
	enum ib_port_state state = softrma_port_state(sdev);
	struct ib_event event = {
		.device = &sdev->ib_dev,
		.element.port_num = SOFTRMA_PORT,
	};

	ASSERT_RTNL();
	if (state == sdev->port_state)
		return;
	sdev->port_state = state;
	event.event = state == IB_PORT_ACTIVE ? IB_EVENT_PORT_ACTIVE :
						IB_EVENT_PORT_ERR;
	ib_dispatch_event(&event);
}

static int softrma_query_device(struct ib_device *ibdev,
				struct ib_device_attr *attr,
				struct ib_udata *udata)
{
	if (udata->inlen || udata->outlen)
		return -EINVAL;

	memset(attr, 0, sizeof(*attr));
	attr->sys_image_guid = ibdev->node_guid;
	attr->vendor_id = SOFTRMA_VENDOR_ID;
	attr->max_pd = softrma_limit(SOFTRMA_OBJ_PD);
	attr->max_mr = softrma_limit(SOFTRMA_OBJ_MR);
	attr->max_mr_size = SOFTRMA_MAX_MR_SIZE;
	attr->page_size_cap = PAGE_SIZE;
	attr->max_qp = softrma_limit(SOFTRMA_OBJ_QP);
	attr->max_qp_wr = SOFTRMA_MAX_QP_WR;
	attr->max_send_sge = SOFTRMA_MAX_SGE;
	attr->max_recv_sge = SOFTRMA_MAX_SGE;
	attr->max_sge_rd = SOFTRMA_MAX_SGE;
	attr->max_cq = softrma_limit(SOFTRMA_OBJ_CQ);
	attr->max_cqe = SOFTRMA_MAX_CQE;
	attr->max_qp_rd_atom = SOFTRMA_MAX_RD_ATOMIC;
	attr->max_qp_init_rd_atom = SOFTRMA_MAX_RD_ATOMIC;
	attr->max_res_rd_atom = min_t(u64, (u64)SOFTRMA_MAX_RD_ATOMIC *
					   attr->max_qp, INT_MAX);
	attr->atomic_cap = IB_ATOMIC_HCA;
	attr->max_srq = softrma_limit(SOFTRMA_OBJ_SRQ);
	attr->max_srq_wr = SOFTRMA_MAX_QP_WR;
	attr->max_srq_sge = SOFTRMA_MAX_SGE;
	attr->device_cap_flags = IB_DEVICE_RC_RNR_NAK_GEN |
				 IB_DEVICE_MEM_MGT_EXTENSIONS |
				 IB_DEVICE_MEM_WINDOW |
				 IB_DEVICE_MEM_WINDOW_TYPE_2B |
				 IB_DEVICE_SRQ_RESIZE |
				 IB_DEVICE_XRC |
				 SOFTRMA_DEVICE_CAP_RMA_EXT;
	attr->max_fast_reg_page_list_len = SOFTRMA_MAX_FAST_REG_PAGES;
	attr->max_mw = softrma_limit(SOFTRMA_OBJ_MW);
	attr->max_ah = softrma_limit(SOFTRMA_OBJ_AH);
	attr->max_pkeys = 1;
	attr->max_mcast_grp = SOFTRMA_MAX_MCAST_GRP;
	attr->max_mcast_qp_attach = SOFTRMA_MAX_MCAST_QP_ATTACH;
	attr->max_total_mcast_qp_attach = SOFTRMA_MAX_MCAST_GRP *
					  SOFTRMA_MAX_MCAST_QP_ATTACH;
	attr->kernel_cap_flags = IBK_ALLOW_USER_UNREG;
	softrma_odp_caps(attr);
	if (!softrma_dev_takes_odp(to_sdev(ibdev)))
		attr->odp_caps = (struct ib_odp_caps) {};
	return 0;
}

static int softrma_query_port(struct ib_device *ibdev, u32 port,
			      struct ib_port_attr *attr)
{
	struct softrma_dev *sdev = to_sdev(ibdev);

	attr->state = softrma_port_state(sdev);
	attr->phys_state = attr->state == IB_PORT_ACTIVE ?
			   IB_PORT_PHYS_STATE_LINK_UP :
			   IB_PORT_PHYS_STATE_DISABLED;
	attr->active_mtu = softrma_port_active_mtu(sdev);
	attr->max_mtu = IB_MTU_4096;
	attr->gid_tbl_len = SOFTRMA_GID_TBL_LEN;
	attr->pkey_tbl_len = 1;
	attr->max_msg_sz = SOFTRMA_MAX_MSG_SZ;
	attr->max_vl_num = 1;
	return ib_get_eth_speed(ibdev, port, &attr->active_speed,
				&attr->active_width);
}

static int softrma_query_pkey(struct ib_device *ibdev, u32 port, u16 index,
			      u16 *pkey)
{
	if (index)
		return -EINVAL;
	*pkey = IB_DEFAULT_PKEY_FULL;
	return 0;
}

static int softrma_get_port_immutable(struct ib_device *ibdev, u32 port,
				      struct ib_port_immutable *immutable)
{
	struct ib_port_attr attr;
	int err;

	/* ib_query_port() needs the core caps to know this is a RoCE port. */
	immutable->core_cap_flags = RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
	err = ib_query_port(ibdev, port, &attr);
	if (err)
		return err;
	immutable->pkey_tbl_len = attr.pkey_tbl_len;
	immutable->gid_tbl_len = attr.gid_tbl_len;
	immutable->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

static enum rdma_link_layer softrma_get_link_layer(struct ib_device *ibdev,
						   u32 port)
{
	return IB_LINK_LAYER_ETHERNET;
}

static void softrma_get_fw_str(struct ib_device *ibdev, char *str)
{
	snprintf(str, IB_FW_VERSION_NAME_MAX, "%s", SOFTRMA_FW_VER);
}

static int softrma_alloc_ucontext(struct ib_ucontext *ibuc,
				  struct ib_udata *udata)
{
	/* No request fields are defined yet: insist that none are used. */
	if (!ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EOPNOTSUPP;
	return 0;
}

static void softrma_dealloc_ucontext(struct ib_ucontext *ibuc)
{
}

/*
 * ibv_import_device() on a duplicate of the context's file: the core
 * answers what the context is; softrma's has nothing more to tell.
 */
static int softrma_query_ucontext(struct ib_ucontext *ibuc,
				  struct uverbs_attr_bundle *attrs)
{
	return 0;
}

static const struct uapi_definition softrma_uapi_defs[] = {
	UAPI_DEF_CHAIN(softrma_mr_uapi_defs),
	UAPI_DEF_CHAIN(softrma_pd_uapi_defs),
	{},
};

/*
 * Nothing of a user context lives outside kernel memory that the core
 * tracks: the core destroys its objects and zaps its mappings, so the device
 * may go away while an application still holds the file open.
 */
static void softrma_disassociate_ucontext(struct ib_ucontext *ibuc)
{
}

static void softrma_dealloc_driver(struct ib_device *ibdev)
{
	struct softrma_dev *sdev = to_sdev(ibdev);

	softrma_list_del(sdev);
	softrma_fault_fini(sdev);
	softrma_objs_check_empty(sdev);
	flush_workqueue(softrma_wq);		/* MRs that softirq let go of */
	WARN_ON(!xa_empty(&sdev->mr_xa));
	xa_destroy(&sdev->mr_xa);
	WARN_ON(!xa_empty(&sdev->qp_xa));
	xa_destroy(&sdev->qp_xa);
	WARN_ON(!xa_empty(&sdev->srq_xa));
	xa_destroy(&sdev->srq_xa);
	WARN_ON(!xa_empty(&sdev->ah_xa));
	xa_destroy(&sdev->ah_xa);
	WARN_ON(!list_empty(&sdev->mcg_list));
	mutex_destroy(&sdev->mcg_lock);
	if (sdev->netsock)
		softrma_net_put(sdev->netsock);
	netdev_put(sdev->netdev, &sdev->netdev_tracker);
}

static ssize_t hca_type_show(struct device *device,
			     struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n", SOFTRMA_HCA_TYPE);
}
static DEVICE_ATTR_RO(hca_type);

static struct softrma_dev *softrma_dev_of(struct device *device)
{
	return rdma_device_to_drv_device(device, struct softrma_dev, ib_dev);
}

/*
 * The checking modes: the non-coherent checking device (view.c) and the
 * persistence domain (persist.c), alone or together.  Both are chosen while
 * the device has no user MR; a negative @noncoherent or @persistence keeps
 * what is set.
 */
static int softrma_dev_set_checking(struct softrma_dev *sdev, int noncoherent,
				    int persistence)
{
	int err = 0;

	down_write(&sdev->mode_sem);
	if (noncoherent < 0)
		noncoherent = sdev->noncoherent;
	if (persistence < 0)
		persistence = sdev->persistence;
	if (atomic_read(&sdev->user_mrs)) {
		err = -EBUSY;
	} else {
		WRITE_ONCE(sdev->noncoherent, noncoherent);
		WRITE_ONCE(sdev->persistence, persistence);
	}
	up_write(&sdev->mode_sem);
	return err;
}

static ssize_t noncoherent_show(struct device *device,
				struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n",
			  READ_ONCE(softrma_dev_of(device)->noncoherent));
}

static ssize_t noncoherent_store(struct device *device,
				 struct device_attribute *attr,
				 const char *buf, size_t count)
{
	bool on;
	int err = kstrtobool(buf, &on) ?:
		  softrma_dev_set_checking(softrma_dev_of(device), on, -1);

	return err ?: count;
}
static DEVICE_ATTR_RW(noncoherent);

static ssize_t persistence_show(struct device *device,
				struct device_attribute *attr, char *buf)
{
	struct softrma_dev *sdev = softrma_dev_of(device);

	return sysfs_emit(buf, "%s\n",
			  softrma_persistence_name(READ_ONCE(sdev->persistence)));
}

static ssize_t persistence_store(struct device *device,
				 struct device_attribute *attr,
				 const char *buf, size_t count)
{
	int domain = softrma_persistence_parse(buf);
	int err = domain < 0 ? domain :
		  softrma_dev_set_checking(softrma_dev_of(device), -1, domain);

	return err ?: count;
}
static DEVICE_ATTR_RW(persistence);

static ssize_t power_fail_store(struct device *device,
				struct device_attribute *attr,
				const char *buf, size_t count)
{
	bool fail;
	int err = kstrtobool(buf, &fail);

	if (err)
		return err;
	if (fail)
		softrma_persist_power_fail(softrma_dev_of(device));
	return count;
}
static DEVICE_ATTR_WO(power_fail);

static struct attribute *softrma_dev_attrs[] = {
	&dev_attr_hca_type.attr,
	&dev_attr_noncoherent.attr,
	&dev_attr_persistence.attr,
	&dev_attr_power_fail.attr,
	&dev_attr_fault_drop.attr,
	&dev_attr_fault_duplicate.attr,
	&dev_attr_fault_corrupt.attr,
	&dev_attr_fault_delay.attr,
	&dev_attr_fault_reorder.attr,
	&dev_attr_fault_fail_create.attr,
	&dev_attr_fault_event.attr,
	&dev_attr_fault_wc_status.attr,
	NULL
};

static const struct attribute_group softrma_dev_attr_group = {
	.attrs = softrma_dev_attrs,
};

static const struct ib_device_ops softrma_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_UNKNOWN,
	.uverbs_abi_ver = SOFTRMA_ABI_VERSION,

	.advise_mr = softrma_advise_mr,
	.alloc_hw_port_stats = softrma_alloc_hw_port_stats,
	.alloc_mr = softrma_alloc_mr,
	.alloc_mw = softrma_alloc_mw,
	.alloc_pd = softrma_alloc_pd,
	.alloc_ucontext = softrma_alloc_ucontext,
	.alloc_xrcd = softrma_alloc_xrcd,
	.attach_mcast = softrma_attach_mcast,
	.create_ah = softrma_create_ah,
	.create_cq = softrma_create_cq,
	.create_qp = softrma_create_qp,
	.create_srq = softrma_create_srq,
	.create_user_ah = softrma_create_ah,
	.dealloc_driver = softrma_dealloc_driver,
	.dealloc_mw = softrma_dealloc_mw,
	.dealloc_pd = softrma_dealloc_pd,
	.dealloc_ucontext = softrma_dealloc_ucontext,
	.dealloc_xrcd = softrma_dealloc_xrcd,
	.dereg_mr = softrma_dereg_mr,
	.destroy_ah = softrma_destroy_ah,
	.destroy_cq = softrma_destroy_cq,
	.destroy_qp = softrma_destroy_qp,
	.destroy_srq = softrma_destroy_srq,
	.detach_mcast = softrma_detach_mcast,
	.device_group = &softrma_dev_attr_group,
	.disassociate_ucontext = softrma_disassociate_ucontext,
	.fill_res_cq_entry = softrma_fill_res_cq_entry,
	.fill_res_mr_entry = softrma_fill_res_mr_entry,
	.fill_res_qp_entry = softrma_fill_res_qp_entry,
	.get_dev_fw_str = softrma_get_fw_str,
	.get_dma_mr = softrma_get_dma_mr,
	.get_hw_stats = softrma_get_hw_stats,
	.get_link_layer = softrma_get_link_layer,
	.get_port_immutable = softrma_get_port_immutable,
	.map_mr_sg = softrma_map_mr_sg,
	.mmap = softrma_mmap,
	.mmap_free = softrma_mmap_free,
	.modify_qp = softrma_modify_qp,
	.modify_srq = softrma_modify_srq,
	.poll_cq = softrma_poll_cq,
	.post_recv = softrma_post_recv,
	.post_send = softrma_post_send,
	.query_device = softrma_query_device,
	.query_pkey = softrma_query_pkey,
	.query_port = softrma_query_port,
	.query_qp = softrma_query_qp,
	.query_srq = softrma_query_srq,
	.query_ucontext = softrma_query_ucontext,
	.reg_user_mr = softrma_reg_user_mr,
	.req_notify_cq = softrma_req_notify_cq,
	.rereg_user_mr = softrma_rereg_user_mr,
	.resize_cq = softrma_resize_cq,

	INIT_RDMA_OBJ_SIZE(ib_ah, softrma_ah, ibah),
	INIT_RDMA_OBJ_SIZE(ib_cq, softrma_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_mw, softrma_mw, ibmw),
	INIT_RDMA_OBJ_SIZE(ib_pd, softrma_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_qp, softrma_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_srq, softrma_srq, ibsrq),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, softrma_ucontext, ibuc),
	INIT_RDMA_OBJ_SIZE(ib_xrcd, softrma_xrcd, ibxrcd),
};

static void softrma_init_ib_dev(struct softrma_dev *sdev,
				struct net_device *ndev)
{
	struct ib_device *ibdev = &sdev->ib_dev;

	INIT_LIST_HEAD(&sdev->list);
	xa_init_flags(&sdev->mr_xa, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_BH);
	xa_init_flags(&sdev->qp_xa, XA_FLAGS_ALLOC | XA_FLAGS_LOCK_BH);
	xa_init_flags(&sdev->srq_xa, XA_FLAGS_ALLOC1);
	xa_init_flags(&sdev->ah_xa, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_IRQ);
	INIT_LIST_HEAD(&sdev->mcg_list);
	mutex_init(&sdev->mcg_lock);
	init_rwsem(&sdev->mode_sem);
	softrma_fault_init(sdev);
	netdev_hold(ndev, &sdev->netdev_tracker, GFP_KERNEL);
	sdev->netdev = ndev;
	sdev->port_state = softrma_port_state(sdev);

	ibdev->node_type = RDMA_NODE_IB_CA;
	ibdev->phys_port_cnt = 1;
	ibdev->num_comp_vectors = 1;
	/* Legacy write() commands the core only offers on request. */
	ibdev->uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_POST_SEND) |
				  BIT_ULL(IB_USER_VERBS_CMD_REQ_NOTIFY_CQ);
	strscpy(ibdev->node_desc, "softrma", sizeof(ibdev->node_desc));
	addrconf_addr_eui48((unsigned char *)&ibdev->node_guid,
			    ndev->dev_addr);
	ib_set_device_ops(ibdev, &softrma_dev_ops);
	ibdev->driver_def = softrma_uapi_defs;
}

/* Creates and registers a device on @ndev; the caller publishes it. */
struct softrma_dev *softrma_dev_create(const char *name,
				       struct net_device *ndev)
{
	struct softrma_dev *sdev;
	int err;

	sdev = ib_alloc_device(softrma_dev, ib_dev);
	if (!sdev)
		return ERR_PTR(-ENOMEM);
	softrma_init_ib_dev(sdev, ndev);
	sdev->netsock = softrma_net_get(dev_net(ndev));
	if (!sdev->netsock) {
		err = -ENOMEM;
		goto err_dealloc;
	}

	err = ib_device_set_netdev(&sdev->ib_dev, ndev, SOFTRMA_PORT);
	if (err)
		goto err_dealloc;
	ib_mark_name_assigned_by_user(&sdev->ib_dev);
	err = ib_register_device(&sdev->ib_dev, name, NULL);
	if (err)
		goto err_dealloc;
	return sdev;

err_dealloc:
	/* Calls softrma_dealloc_driver(), which drops the netdev. */
	ib_dealloc_device(&sdev->ib_dev);
	return ERR_PTR(err);
}
