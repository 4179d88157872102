// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softrma module glue: the "rdma link" type, the list of our devices and the
 * netdev notifier that ties each device's life and port state to its netdev.
 */

#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/rtnetlink.h>
#include <rdma/ib_cache.h>
#include <rdma/rdma_netlink.h>

#include "net.h"

/*
 * Changed under softrma_devices_lock, which nests inside RTNL; read under
 * RCU by the data path, which looks up a device by GID for every packet it
 * receives and every message of the local transport.
 */
static LIST_HEAD(softrma_devices);
static DEFINE_MUTEX(softrma_devices_lock);
/* Serialises newlink, so that one netdev never gets two devices. */
static DEFINE_MUTEX(softrma_link_lock);

static struct softrma_dev *softrma_find_locked(struct net_device *ndev)
{
	struct softrma_dev *sdev;

	lockdep_assert_held(&softrma_devices_lock);
	list_for_each_entry(sdev, &softrma_devices, list)
		if (sdev->netdev == ndev)
			return sdev;
	return NULL;
}

static bool softrma_netdev_has_dev(struct net_device *ndev)
{
	bool found;

	mutex_lock(&softrma_devices_lock);
	found = softrma_find_locked(ndev);
	mutex_unlock(&softrma_devices_lock);
	return found;
}

/*
 * Publish a registered device.  This is done under RTNL so that it cannot
 * miss the NETDEV_UNREGISTER of its netdev: either the notifier runs later
 * and finds the device, or the netdev is already going and so is the device.
 */
static int softrma_publish(struct softrma_dev *sdev)
{
	bool netdev_gone;

	rtnl_lock();
	mutex_lock(&softrma_devices_lock);
	list_add_tail_rcu(&sdev->list, &softrma_devices);
	mutex_unlock(&softrma_devices_lock);
	netdev_gone = sdev->netdev->reg_state != NETREG_REGISTERED;
	rtnl_unlock();

	if (netdev_gone) {
		ib_unregister_device(&sdev->ib_dev);
		return -ENODEV;
	}
	return 0;
}

/* No lookup finds @sdev, or its netdev, once this returns. */
void softrma_list_del(struct softrma_dev *sdev)
{
	mutex_lock(&softrma_devices_lock);
	list_del_rcu(&sdev->list);
	mutex_unlock(&softrma_devices_lock);
	synchronize_rcu();
}

/* The device in @net that owns @gid, with a registration reference. */
struct softrma_dev *softrma_get_dev_by_gid(struct net *net,
					   const union ib_gid *gid)
{
	const struct ib_gid_attr *attr;
	struct softrma_dev *sdev;

	rcu_read_lock();
	list_for_each_entry_rcu(sdev, &softrma_devices, list) {
		if (!net_eq(dev_net(sdev->netdev), net))
			continue;
		attr = rdma_find_gid_by_port(&sdev->ib_dev, gid,
					     IB_GID_TYPE_ROCE_UDP_ENCAP,
					     SOFTRMA_PORT, NULL);
		if (IS_ERR(attr))
			continue;
		rdma_put_gid_attr(attr);
		if (!ib_device_try_get(&sdev->ib_dev))
			sdev = NULL;
		goto out;
	}
	sdev = NULL;
out:
	rcu_read_unlock();
	return sdev;
}

static int softrma_newlink(const char *ibdev_name, struct net_device *ndev)
{
	struct softrma_dev *sdev;
	int err;

	mutex_lock(&softrma_link_lock);
	if (softrma_netdev_has_dev(ndev)) {
		err = -EEXIST;
		goto out;
	}
	sdev = softrma_dev_create(ibdev_name, ndev);
	if (IS_ERR(sdev)) {
		err = PTR_ERR(sdev);
		goto out;
	}
	err = softrma_publish(sdev);
out:
	mutex_unlock(&softrma_link_lock);
	return err;
}

static struct rdma_link_ops softrma_link_ops = {
	.type = "softrma",
	.newlink = softrma_newlink,
};

/* Takes a registration reference on the device bound to @ndev, if any. */
static struct softrma_dev *softrma_get_by_netdev(struct net_device *ndev)
{
	struct softrma_dev *sdev;

	mutex_lock(&softrma_devices_lock);
	sdev = softrma_find_locked(ndev);
	if (sdev && !ib_device_try_get(&sdev->ib_dev))
		sdev = NULL;
	mutex_unlock(&softrma_devices_lock);
	return sdev;
}

/* The device bound to the netdev @ifindex of @net, with a reference. */
struct softrma_dev *softrma_get_dev_by_ifindex(struct net *net, int ifindex)
{
	struct net_device *ndev = dev_get_by_index(net, ifindex);
	struct softrma_dev *sdev;

	if (!ndev)
		return NULL;
	sdev = softrma_get_by_netdev(ndev);
	dev_put(ndev);
	return sdev;
}

static int softrma_netdev_event(struct notifier_block *nb, unsigned long event,
				void *ptr)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(ptr);
	struct softrma_dev *sdev;

	switch (event) {
	case NETDEV_UNREGISTER:
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
	case NETDEV_CHANGEMTU:
		break;
	default:
		return NOTIFY_DONE;
	}

	sdev = softrma_get_by_netdev(ndev);
	if (!sdev)
		return NOTIFY_DONE;

	if (event == NETDEV_UNREGISTER)
		ib_unregister_device_queued(&sdev->ib_dev);
	else
		softrma_port_event(sdev);

	ib_device_put(&sdev->ib_dev);
	return NOTIFY_OK;
}

static struct notifier_block softrma_netdev_nb = {
	.notifier_call = softrma_netdev_event,
};

/*
 * Unregister our own devices one by one; ib_unregister_driver() would also
 * take every other driver that shares RDMA_DRIVER_UNKNOWN.  Unregistration is
 * fenced in the core, so a device that "rdma link delete" or the notifier is
 * removing at the same time is simply waited for.
 */
static void softrma_unregister_all(void)
{
	struct softrma_dev *sdev;

	for (;;) {
		mutex_lock(&softrma_devices_lock);
		sdev = list_first_entry_or_null(&softrma_devices,
						struct softrma_dev, list);
		if (sdev)
			get_device(&sdev->ib_dev.dev);
		mutex_unlock(&softrma_devices_lock);
		if (!sdev)
			break;

		ib_unregister_device(&sdev->ib_dev);
		put_device(&sdev->ib_dev.dev);
	}
}

/*
 * The data path runs in work items: received packets, the requester's runs,
 * the responder's answers, timers.  Applications busy-poll their CQs while
 * they wait for it, so its workers run at high priority, as a NIC's
 * interrupts and softirqs would, rather than take turns with the pollers.
 */
struct workqueue_struct *softrma_wq;

/*
 * ODP faults that the data path leaves (odp.c) run at the priority of the
 * processes whose pages they fault in: one can go on for as long as its
 * process takes the pages back.
 */
struct workqueue_struct *softrma_odp_wq;

static int __init softrma_init(void)
{
	int err;

	softrma_wq = alloc_workqueue("softrma", WQ_UNBOUND | WQ_HIGHPRI, 0);
	if (!softrma_wq)
		return -ENOMEM;
	softrma_odp_wq = alloc_workqueue("softrma_odp", WQ_UNBOUND, 0);
	if (!softrma_odp_wq) {
		err = -ENOMEM;
		goto err_wq;
	}
	err = softrma_net_init();
	if (err)
		goto err_odp_wq;
	err = register_netdevice_notifier(&softrma_netdev_nb);
	if (err)
		goto err_net;
	rdma_link_register(&softrma_link_ops);
	return 0;

err_net:
	softrma_net_cleanup();
err_odp_wq:
	destroy_workqueue(softrma_odp_wq);
err_wq:
	destroy_workqueue(softrma_wq);
	return err;
}

static void __exit softrma_exit(void)
{
	rdma_link_unregister(&softrma_link_ops);
	softrma_unregister_all();
	unregister_netdevice_notifier(&softrma_netdev_nb);
	softrma_net_cleanup();
	destroy_workqueue(softrma_odp_wq);
	destroy_workqueue(softrma_wq);
}

module_init(softrma_init);
module_exit(softrma_exit);

MODULE_AUTHOR("The softrma developers");
MODULE_DESCRIPTION("softrma: software RDMA (RoCEv2) device");
MODULE_LICENSE("Dual BSD/GPL");
MODULE_ALIAS_RDMA_LINK("softrma");
