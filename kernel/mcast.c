// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * UD multicast.  A device keeps its groups (MGID -> the QPNs attached) in a
 * list under a mutex.  The first QP to attach a group joins its IP
 * multicast group on the netdev (IGMP or MLD, which also programs the MAC
 * filter), the last to leave leaves it.  Multicast sends go on the wire,
 * to QPN 0xFFFFFF; the IP stack loops a copy back to this host when it is a
 * member, and every received copy is delivered to each QP attached on the
 * device it arrived at.
 */

#include <linux/igmp.h>
#include <linux/inetdevice.h>
#include <linux/slab.h>
#include <net/addrconf.h>
#include <net/ipv6.h>
#include <rdma/ib_addr.h>

#include "msg.h"

struct softrma_mcg {
	struct list_head list;		/* on softrma_dev.mcg_list */
	union ib_gid mgid;
	u32 num_qps;
	u32 qpn[SOFTRMA_MAX_MCAST_QP_ATTACH];
};

static struct softrma_mcg *softrma_mcg_find(struct softrma_dev *sdev,
					    const union ib_gid *mgid)
{
	struct softrma_mcg *mcg;

	list_for_each_entry(mcg, &sdev->mcg_list, list)
		if (!memcmp(&mcg->mgid, mgid, sizeof(*mgid)))
			return mcg;
	return NULL;
}

/* Joins (@join) or leaves the IP multicast group of @mgid on the netdev. */
static int softrma_mcg_ip(struct softrma_dev *sdev, const union ib_gid *mgid,
			  bool join)
{
	struct net_device *ndev = sdev->netdev;
	struct in6_addr *addr = (struct in6_addr *)mgid->raw;
	struct in_device *in_dev;
	int err = 0;

	if (!ipv6_addr_v4mapped(addr))
		return join ? ipv6_dev_mc_inc(ndev, addr) :
			      ipv6_dev_mc_dec(ndev, addr);
	rtnl_lock();
	in_dev = __in_dev_get_rtnl(ndev);
	if (!in_dev)
		err = -ENODEV;
	else if (join)
		ip_mc_inc_group(in_dev, addr->s6_addr32[3]);
	else
		ip_mc_dec_group(in_dev, addr->s6_addr32[3]);
	rtnl_unlock();
	return err;
}

static int softrma_mcg_index(const struct softrma_mcg *mcg, u32 qpn)
{
	for (u32 i = 0; i < mcg->num_qps; i++)
		if (mcg->qpn[i] == qpn)
			return i;
	return -1;
}

/* A new group, joined on the netdev. */
static struct softrma_mcg *softrma_mcg_create(struct softrma_dev *sdev,
					      const union ib_gid *mgid)
{
	struct softrma_mcg *mcg;
	int err;

	lockdep_assert_held(&sdev->mcg_lock);
	if (sdev->num_mcg >= SOFTRMA_MAX_MCAST_GRP)
		return ERR_PTR(-ENOMEM);
	mcg = kzalloc(sizeof(*mcg), GFP_KERNEL);
	if (!mcg)
		return ERR_PTR(-ENOMEM);
	mcg->mgid = *mgid;
	err = softrma_mcg_ip(sdev, mgid, true);
	if (err) {
		kfree(mcg);
		return ERR_PTR(err);
	}
	list_add(&mcg->list, &sdev->mcg_list);
	sdev->num_mcg++;
	return mcg;
}

static void softrma_mcg_destroy(struct softrma_dev *sdev,
				struct softrma_mcg *mcg)
{
	list_del(&mcg->list);
	sdev->num_mcg--;
	softrma_mcg_ip(sdev, &mcg->mgid, false);
	kfree(mcg);
}

/* Removes entry @i of @mcg, and the group with its last QP; mcg_lock. */
static void softrma_mcg_remove(struct softrma_dev *sdev,
			       struct softrma_mcg *mcg, int i)
{
	mcg->qpn[i] = mcg->qpn[--mcg->num_qps];
	if (!mcg->num_qps)
		softrma_mcg_destroy(sdev, mcg);
}

/* Attaching twice is no error: the QP is a member once. */
int softrma_attach_mcast(struct ib_qp *ibqp, union ib_gid *mgid, u16 lid)
{
	struct softrma_dev *sdev = to_sdev(ibqp->device);
	struct softrma_mcg *mcg;
	int err = 0;

	if (ibqp->qp_type != IB_QPT_UD ||
	    !rdma_is_multicast_addr((struct in6_addr *)mgid->raw))
		return -EINVAL;
	mutex_lock(&sdev->mcg_lock);
	mcg = softrma_mcg_find(sdev, mgid);
	if (!mcg)
		mcg = softrma_mcg_create(sdev, mgid);
	if (IS_ERR(mcg))
		err = PTR_ERR(mcg);
	else if (softrma_mcg_index(mcg, ibqp->qp_num) >= 0)
		err = 0;
	else if (mcg->num_qps == SOFTRMA_MAX_MCAST_QP_ATTACH)
		err = -ENOMEM;
	else
		mcg->qpn[mcg->num_qps++] = ibqp->qp_num;
	mutex_unlock(&sdev->mcg_lock);
	return err;
}

int softrma_detach_mcast(struct ib_qp *ibqp, union ib_gid *mgid, u16 lid)
{
	struct softrma_dev *sdev = to_sdev(ibqp->device);
	struct softrma_mcg *mcg;
	int i = -1;

	mutex_lock(&sdev->mcg_lock);
	mcg = softrma_mcg_find(sdev, mgid);
	if (mcg)
		i = softrma_mcg_index(mcg, ibqp->qp_num);
	if (i >= 0)
		softrma_mcg_remove(sdev, mcg, i);
	mutex_unlock(&sdev->mcg_lock);
	return i >= 0 ? 0 : -EINVAL;
}

/* A QP that goes leaves every group it is still in. */
void softrma_mcast_detach_qp(struct softrma_qp *qp)
{
	struct softrma_dev *sdev = to_sdev(qp->ibqp.device);
	struct softrma_mcg *mcg, *next;
	int i;

	if (qp->ibqp.qp_type != IB_QPT_UD)
		return;
	mutex_lock(&sdev->mcg_lock);
	list_for_each_entry_safe(mcg, next, &sdev->mcg_list, list) {
		i = softrma_mcg_index(mcg, qp->ibqp.qp_num);
		if (i >= 0)
			softrma_mcg_remove(sdev, mcg, i);
	}
	mutex_unlock(&sdev->mcg_lock);
}

/*
 * Delivers the datagram @msg, sent to the group of msg->dgid, to each QP of
 * @sdev attached to it.  Returns how many took it.
 */
int softrma_mcast_deliver(struct softrma_dev *sdev, struct softrma_msg *msg)
{
	u32 qpn[SOFTRMA_MAX_MCAST_QP_ATTACH];
	struct softrma_mcg *mcg;
	struct softrma_qp *qp;
	u32 n = 0;
	int took = 0;

	mutex_lock(&sdev->mcg_lock);
	mcg = softrma_mcg_find(sdev, msg->dgid);
	if (mcg) {
		n = mcg->num_qps;
		memcpy(qpn, mcg->qpn, n * sizeof(*qpn));
	}
	mutex_unlock(&sdev->mcg_lock);

	for (u32 i = 0; i < n; i++) {
		qp = softrma_qp_get(sdev, qpn[i]);
		if (!qp)
			continue;
		msg->dest_qpn = qpn[i];
		took += softrma_resp_execute(qp, msg) == SOFTRMA_RESP_ACK;
		softrma_qp_put(qp);
	}
	return took;
}
