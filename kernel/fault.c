// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Fault injection, per device, through sysfs attributes that only root may
 * write (Documentation/admin-guide.md, "Testing your RDMA application's
 * error paths"):
 *
 *  fault_drop, fault_duplicate, fault_corrupt, fault_reorder
 *	RoCEv2 packets the device sends that are lost, sent twice, sent
 *	with one bit flipped after the ICRC was computed, or held until the
 *	device's next packet has gone, per million;
 *  fault_delay
 *	"PPM MS": packets held for MS milliseconds (1 to 1000), per million;
 *	while any packet fault is set, QPs of the device, or to it, that
 *	connect on one host take packets too (local.c);
 *  fault_fail_create
 *	"TYPE N": the next N creations of a TYPE (pd qp cq srq mr mw ah xrcd)
 *	fail with ENOMEM, as when the device runs out;
 *  fault_event
 *	"port_err", "port_active": the port reports DOWN until port_active,
 *	with the events; "device_fatal": IB_EVENT_DEVICE_FATAL and every QP
 *	in error; "qp_fatal N", "qp_req_err N", "qp_access_err N": that
 *	event of QP N, which goes to error; "cq_err N": IB_EVENT_CQ_ERR of
 *	the CQ that "rdma resource show cq" numbers N, which then fails the
 *	QPs that complete into it, as an overflowed one;
 *  fault_wc_status
 *	"QPN STATUS [COUNT]": the next COUNT (1) send work requests of the
 *	QP that would succeed complete with the ibv_wc_status STATUS
 *	instead, and the QP goes to error as after any failed request.
 *
 * Each fault injected counts in the port counter injected_faults.
 */

#include <linux/random.h>
#include <linux/rtnetlink.h>
#include <rdma/restrack.h>

#include "net.h"

#define SOFTRMA_FAULT_PPM	1000000U
#define SOFTRMA_FAULT_DELAY_MAX_MS	1000
/* A reordered packet waits this long at most for the next one. */
#define SOFTRMA_FAULT_REORDER_WAIT_MS	10

/* What a held packet's control block says: when it goes. */
struct softrma_fault_held {
	unsigned long due;		/* jiffies */
	bool after_next;		/* or once the next packet has gone */
};

static struct softrma_fault_held *softrma_fault_held(struct sk_buff *skb)
{
	BUILD_BUG_ON(sizeof(struct softrma_fault_held) > sizeof(skb->cb));
	return (struct softrma_fault_held *)skb->cb;
}

static struct softrma_dev *softrma_fault_dev(struct device *device)
{
	return rdma_device_to_drv_device(device, struct softrma_dev, ib_dev);
}

/*
 * Sends the held packets that are due, or (@after_next) that wait for a
 * packet that has gone, in the order they were held; then sets the work
 * for the next one due.
 */
static void softrma_fault_release(struct softrma_dev *sdev, bool after_next)
{
	struct sk_buff_head *held = &sdev->fault.held;
	unsigned long next = 0, now = jiffies;
	struct sk_buff_head due;
	struct sk_buff *skb, *tmp;
	bool more = false;

	__skb_queue_head_init(&due);
	spin_lock_bh(&held->lock);
	skb_queue_walk_safe(held, skb, tmp) {
		struct softrma_fault_held *h = softrma_fault_held(skb);

		if ((after_next && h->after_next) || time_after_eq(now, h->due)) {
			__skb_unlink(skb, held);
			__skb_queue_tail(&due, skb);
		} else if (!more || time_before(h->due, next)) {
			next = h->due;
			more = true;
		}
	}
	spin_unlock_bh(&held->lock);
	while ((skb = __skb_dequeue(&due)))
		softrma_net_send_held(sdev, skb);
	if (more)
		mod_delayed_work(softrma_wq, &sdev->fault.release_work,
				 next - now);
}

static void softrma_fault_release_work(struct work_struct *work)
{
	struct softrma_fault *fault = container_of(to_delayed_work(work),
						   struct softrma_fault,
						   release_work);

	softrma_fault_release(container_of(fault, struct softrma_dev, fault),
			      false);
}

/**
 * softrma_fault_hold() - Holds a packet that a fault delays or reorders.
 * @sdev: the device that sends it
 * @skb: the finished packet, its route in skb_dst()
 * @why: SOFTRMA_FAULT_DELAY or SOFTRMA_FAULT_REORDER
 *
 * It goes out from the device's work (softrma_net_send_held()) once its
 * delay has passed, or, reordered, once the device's next packet has gone
 * (softrma_fault_release_reordered()), or after a short wait for one.
 */
void softrma_fault_hold(struct softrma_dev *sdev, struct sk_buff *skb,
			enum softrma_fault_pkt why)
{
	struct softrma_fault_held *h = softrma_fault_held(skb);
	unsigned long delay;

	delay = msecs_to_jiffies(why == SOFTRMA_FAULT_DELAY ?
				 READ_ONCE(sdev->fault.delay_ms) :
				 SOFTRMA_FAULT_REORDER_WAIT_MS);
	h->due = jiffies + delay;
	h->after_next = why == SOFTRMA_FAULT_REORDER;
	skb_queue_tail(&sdev->fault.held, skb);
	/* Sooner than the work was set for: an unlocked look will do. */
	if (!delayed_work_pending(&sdev->fault.release_work) ||
	    time_before(h->due, sdev->fault.release_work.timer.expires))
		mod_delayed_work(softrma_wq, &sdev->fault.release_work, delay);
}

/* After a packet of @sdev went out: the reordered ones go behind it. */
void softrma_fault_release_reordered(struct softrma_dev *sdev)
{
	if (!skb_queue_empty_lockless(&sdev->fault.held))
		softrma_fault_release(sdev, true);
}

void softrma_fault_init(struct softrma_dev *sdev)
{
	skb_queue_head_init(&sdev->fault.held);
	INIT_DELAYED_WORK(&sdev->fault.release_work, softrma_fault_release_work);
}

/* The packets still held are lost with the device. */
void softrma_fault_fini(struct softrma_dev *sdev)
{
	cancel_delayed_work_sync(&sdev->fault.release_work);
	skb_queue_purge(&sdev->fault.held);
}

/* Whether the creation of an @obj of @sdev is to fail (softrma_obj_add()). */
bool softrma_fault_create(struct softrma_dev *sdev, enum softrma_obj obj)
{
	if (atomic_dec_if_positive(&sdev->fault.fail_create[obj]) < 0)
		return false;
	softrma_count(sdev, SOFTRMA_CNT_INJECTED_FAULTS);
	return true;
}

/*
 * Whether any packet fault is set on @sdev: packets lost, duplicated,
 * corrupted, delayed or reordered.
 */
bool softrma_fault_lossy(const struct softrma_dev *sdev)
{
	for (int f = SOFTRMA_FAULT_DROP; f < SOFTRMA_FAULT_PKT_NUM; f++)
		if (READ_ONCE(sdev->fault.pkt_ppm[f]))
			return true;
	return false;
}

/*
 * What becomes of the next packet @sdev sends; no dice are cast while no
 * packet fault is set.
 */
enum softrma_fault_pkt softrma_fault_packet(struct softrma_dev *sdev)
{
	u32 dice;

	if (!softrma_fault_lossy(sdev))
		return SOFTRMA_FAULT_PASS;
	dice = get_random_u32_below(SOFTRMA_FAULT_PPM);
	for (int f = SOFTRMA_FAULT_DROP; f < SOFTRMA_FAULT_PKT_NUM; f++) {
		u32 ppm = READ_ONCE(sdev->fault.pkt_ppm[f]);

		if (dice < ppm) {
			softrma_count(sdev, SOFTRMA_CNT_INJECTED_FAULTS);
			return f;
		}
		dice -= ppm;
	}
	return SOFTRMA_FAULT_PASS;
}

/* The status a send work request of @qp that ends with @status reports. */
enum ib_wc_status softrma_fault_wc_status(struct softrma_qp *qp,
					  enum ib_wc_status status)
{
	if (status != IB_WC_SUCCESS ||
	    atomic_dec_if_positive(&qp->fault_wc_left) < 0)
		return status;
	softrma_count(to_sdev(qp->ibqp.device), SOFTRMA_CNT_INJECTED_FAULTS);
	return READ_ONCE(qp->fault_wc_status);
}

static ssize_t softrma_fault_ppm_show(struct device *device, char *buf,
				      enum softrma_fault_pkt f)
{
	return sysfs_emit(buf, "%u\n",
			  READ_ONCE(softrma_fault_dev(device)->fault.pkt_ppm[f]));
}

static ssize_t softrma_fault_ppm_store(struct device *device, const char *buf,
				       size_t count, enum softrma_fault_pkt f)
{
	u32 ppm;
	int err = kstrtou32(buf, 0, &ppm);

	if (err)
		return err;
	if (ppm > SOFTRMA_FAULT_PPM)
		return -ERANGE;
	WRITE_ONCE(softrma_fault_dev(device)->fault.pkt_ppm[f], ppm);
	return count;
}

#define SOFTRMA_FAULT_PPM_ATTR(name, fault)				\
static ssize_t fault_##name##_show(struct device *device,		\
				   struct device_attribute *attr,	\
				   char *buf)				\
{									\
	return softrma_fault_ppm_show(device, buf, fault);		\
}									\
static ssize_t fault_##name##_store(struct device *device,		\
				    struct device_attribute *attr,	\
				    const char *buf, size_t count)	\
{									\
	return softrma_fault_ppm_store(device, buf, count, fault);	\
}									\
DEVICE_ATTR_RW(fault_##name)

SOFTRMA_FAULT_PPM_ATTR(drop, SOFTRMA_FAULT_DROP);
SOFTRMA_FAULT_PPM_ATTR(duplicate, SOFTRMA_FAULT_DUPLICATE);
SOFTRMA_FAULT_PPM_ATTR(corrupt, SOFTRMA_FAULT_CORRUPT);
SOFTRMA_FAULT_PPM_ATTR(reorder, SOFTRMA_FAULT_REORDER);

static ssize_t fault_delay_show(struct device *device,
				struct device_attribute *attr, char *buf)
{
	struct softrma_fault *fault = &softrma_fault_dev(device)->fault;

	return sysfs_emit(buf, "%u %u\n",
			  READ_ONCE(fault->pkt_ppm[SOFTRMA_FAULT_DELAY]),
			  READ_ONCE(fault->delay_ms));
}

static ssize_t fault_delay_store(struct device *device,
				 struct device_attribute *attr,
				 const char *buf, size_t count)
{
	struct softrma_fault *fault = &softrma_fault_dev(device)->fault;
	u32 ppm, ms;

	if (sscanf(buf, "%u %u", &ppm, &ms) != 2)
		return -EINVAL;
	if (ppm > SOFTRMA_FAULT_PPM || !ms || ms > SOFTRMA_FAULT_DELAY_MAX_MS)
		return -ERANGE;
	WRITE_ONCE(fault->delay_ms, ms);
	WRITE_ONCE(fault->pkt_ppm[SOFTRMA_FAULT_DELAY], ppm);
	return count;
}
DEVICE_ATTR_RW(fault_delay);

static const char *const softrma_obj_names[SOFTRMA_OBJ_NUM] = {
	[SOFTRMA_OBJ_PD] = "pd",
	[SOFTRMA_OBJ_QP] = "qp",
	[SOFTRMA_OBJ_CQ] = "cq",
	[SOFTRMA_OBJ_SRQ] = "srq",
	[SOFTRMA_OBJ_MR] = "mr",
	[SOFTRMA_OBJ_MW] = "mw",
	[SOFTRMA_OBJ_AH] = "ah",
	[SOFTRMA_OBJ_XRCD] = "xrcd",
};

static ssize_t fault_fail_create_show(struct device *device,
				      struct device_attribute *attr, char *buf)
{
	struct softrma_dev *sdev = softrma_fault_dev(device);
	int len = 0;

	for (int obj = 0; obj < SOFTRMA_OBJ_NUM; obj++)
		len += sysfs_emit_at(buf, len, "%s %d\n", softrma_obj_names[obj],
				     atomic_read(&sdev->fault.fail_create[obj]));
	return len;
}

static ssize_t fault_fail_create_store(struct device *device,
				       struct device_attribute *attr,
				       const char *buf, size_t count)
{
	struct softrma_dev *sdev = softrma_fault_dev(device);
	char type[8];
	int n;

	if (sscanf(buf, "%7s %d", type, &n) != 2 || n < 0)
		return -EINVAL;
	for (int obj = 0; obj < SOFTRMA_OBJ_NUM; obj++) {
		if (!strcmp(type, softrma_obj_names[obj])) {
			atomic_set(&sdev->fault.fail_create[obj], n);
			return count;
		}
	}
	return -EINVAL;
}
DEVICE_ATTR_RW(fault_fail_create);

/* The port as the netdev and an injected port_err have it. */
static int softrma_fault_port(struct softrma_dev *sdev, bool down)
{
	/* Unregistering holds RTNL while it waits for this attribute. */
	if (!rtnl_trylock())
		return restart_syscall();
	WRITE_ONCE(sdev->fault.port_down, down);
	softrma_port_event(sdev);
	rtnl_unlock();
	softrma_count(sdev, SOFTRMA_CNT_INJECTED_FAULTS);
	return 0;
}

static void softrma_fault_qp(struct softrma_qp *qp, enum ib_event_type type)
{
	softrma_qp_set_error(qp);
	softrma_qp_event(qp, type);
	softrma_count(to_sdev(qp->ibqp.device), SOFTRMA_CNT_INJECTED_FAULTS);
}

static int softrma_fault_device_fatal(struct softrma_dev *sdev)
{
	struct ib_event event = {
		.device = &sdev->ib_dev,
		.event = IB_EVENT_DEVICE_FATAL,
	};
	struct softrma_qp *qp;
	unsigned long qpn;
	void *entry;

	softrma_count(sdev, SOFTRMA_CNT_INJECTED_FAULTS);
	ib_dispatch_event(&event);
	xa_for_each(&sdev->qp_xa, qpn, entry) {
		qp = softrma_qp_get(sdev, qpn);
		if (qp) {
			softrma_qp_set_error(qp);
			softrma_qp_put(qp);
		}
	}
	return 0;
}

static const struct {
	const char *name;
	enum ib_event_type type;
} softrma_fault_qp_events[] = {
	{ "qp_fatal", IB_EVENT_QP_FATAL },
	{ "qp_req_err", IB_EVENT_QP_REQ_ERR },
	{ "qp_access_err", IB_EVENT_QP_ACCESS_ERR },
};

static int softrma_fault_qp_event(struct softrma_dev *sdev, const char *name,
				  u32 qpn)
{
	struct softrma_qp *qp;

	for (int i = 0; i < ARRAY_SIZE(softrma_fault_qp_events); i++) {
		if (strcmp(name, softrma_fault_qp_events[i].name))
			continue;
		qp = softrma_qp_get(sdev, qpn);
		if (!qp)
			return -ENOENT;
		softrma_fault_qp(qp, softrma_fault_qp_events[i].type);
		softrma_qp_put(qp);
		return 0;
	}
	return -EINVAL;
}

static int softrma_fault_cq_err(struct softrma_dev *sdev, u32 cqn)
{
	struct rdma_restrack_entry *res;

	res = rdma_restrack_get_byid(&sdev->ib_dev, RDMA_RESTRACK_CQ, cqn);
	if (IS_ERR(res))
		return -ENOENT;
	softrma_cq_fail(to_scq(container_of(res, struct ib_cq, res)));
	rdma_restrack_put(res);
	softrma_count(sdev, SOFTRMA_CNT_INJECTED_FAULTS);
	return 0;
}

static ssize_t fault_event_store(struct device *device,
				 struct device_attribute *attr,
				 const char *buf, size_t count)
{
	struct softrma_dev *sdev = softrma_fault_dev(device);
	char name[16];
	int err, n;
	u32 num;

	n = sscanf(buf, "%15s %u", name, &num);
	if (n == 1 && !strcmp(name, "port_err"))
		err = softrma_fault_port(sdev, true);
	else if (n == 1 && !strcmp(name, "port_active"))
		err = softrma_fault_port(sdev, false);
	else if (n == 1 && !strcmp(name, "device_fatal"))
		err = softrma_fault_device_fatal(sdev);
	else if (n == 2 && !strcmp(name, "cq_err"))
		err = softrma_fault_cq_err(sdev, num);
	else if (n == 2)
		err = softrma_fault_qp_event(sdev, name, num);
	else
		err = -EINVAL;
	return err ?: count;
}
DEVICE_ATTR_WO(fault_event);

static ssize_t fault_wc_status_store(struct device *device,
				     struct device_attribute *attr,
				     const char *buf, size_t count)
{
	struct softrma_dev *sdev = softrma_fault_dev(device);
	u32 qpn, status, times = 1;
	struct softrma_qp *qp;

	if (sscanf(buf, "%u %u %u", &qpn, &status, &times) < 2 ||
	    status == IB_WC_SUCCESS || status > IB_WC_GENERAL_ERR ||
	    times > INT_MAX)
		return -EINVAL;
	qp = softrma_qp_get(sdev, qpn);
	if (!qp)
		return -ENOENT;
	WRITE_ONCE(qp->fault_wc_status, status);
	atomic_set_release(&qp->fault_wc_left, times);
	softrma_qp_put(qp);
	return count;
}
DEVICE_ATTR_WO(fault_wc_status);
