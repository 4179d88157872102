// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What "rdma resource show qp|mr -dd" shows of softrma's objects beyond the
 * core's attributes: how a QP reaches its peer, how far its requester has
 * taken its SQ, and on the wire its PSNs and what is in flight; an MR's
 * pinned pages; a CQ's ring and whether it is armed.  What would help a
 * stranger reach another user's memory or connection (an MR's iova, the
 * live PSNs) is shown only to CAP_NET_ADMIN, as the core shows keys.
 */

#include <linux/capability.h>
#include <rdma/restrack.h>

#include "wire.h"

static const char *softrma_qp_transport_name(struct softrma_qp *qp)
{
	if (softrma_qp_is_ud(qp))
		return "datagram";
	return qp->on_wire ? "wire" : "local";
}

/* Whether the task dumping may see addresses and PSNs. */
static bool softrma_res_privileged(void)
{
	return ns_capable_noaudit(&init_user_ns, CAP_NET_ADMIN);
}

static int softrma_fill_wire(struct sk_buff *msg, struct softrma_qp *qp)
{
	struct softrma_wire *w = qp->wire;
	int err;

	softrma_qp_assert_sq(qp);
	if (rdma_nl_put_driver_u32(msg, "wqes_in_flight",
				   w->next_index - qp->sq.index) ||
	    rdma_nl_put_driver_u32(msg, "window", w->window) ||
	    rdma_nl_put_driver_u32(msg, "retries_left", w->retry_left))
		return -EMSGSIZE;
	if (!softrma_res_privileged())
		return 0;
	if (rdma_nl_put_driver_u32(msg, "send_psn", w->send_psn) ||
	    rdma_nl_put_driver_u32(msg, "unacked_psn", w->comp_psn))
		return -EMSGSIZE;
	softrma_qp_lock_rq(qp);
	err = rdma_nl_put_driver_u32(msg, "expected_psn", w->resp.epsn) ||
	      rdma_nl_put_driver_u32(msg, "msn", w->resp.msn) ? -EMSGSIZE : 0;
	mutex_unlock(&qp->rq_lock);
	return err;
}

/*
 * Context: process.  The core's reference on the restrack entry does not
 * keep destroy_qp away on every kernel: a dying QP's wire state may be gone,
 * so it shows its transport only.
 */
int softrma_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp)
{
	struct softrma_qp *qp = to_sqp(ibqp);
	struct nlattr *table;
	int err = -EMSGSIZE;

	table = nla_nest_start(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!table)
		return -EMSGSIZE;
	softrma_qp_lock_sq(qp);
	if (rdma_nl_put_driver_string(msg, "transport",
				      softrma_qp_transport_name(qp)))
		goto out;
	if (!qp->dying &&
	    (rdma_nl_put_driver_u32(msg, "sq_taken", qp->sq.index) ||
	     rdma_nl_put_driver_u32(msg, "head_wait", qp->head_wait) ||
	     (qp->on_wire && softrma_fill_wire(msg, qp))))
		goto out;
	err = 0;
out:
	mutex_unlock(&qp->sq_lock);
	if (err) {
		nla_nest_cancel(msg, table);
		return err;
	}
	nla_nest_end(msg, table);
	return 0;
}

static const char *const softrma_cq_armed_names[] = {
	[0] = "no",
	[IB_CQ_SOLICITED] = "solicited",
	[IB_CQ_NEXT_COMP] = "next",
};

/*
 * A process's consumer index is its own to write: "held" is what the ring
 * holds if that index is true.
 */
int softrma_fill_res_cq_entry(struct sk_buff *msg, struct ib_cq *ibcq)
{
	struct softrma_cq *cq = to_scq(ibcq);
	struct nlattr *table;
	unsigned long flags;
	int err;

	table = nla_nest_start(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!table)
		return -EMSGSIZE;
	spin_lock_irqsave(&cq->lock, flags);
	err = !cq->dying &&
	      (rdma_nl_put_driver_u32(msg, "ring_entries", cq->queue.num) ||
	      rdma_nl_put_driver_u32(msg, "produced", cq->queue.index) ||
	      rdma_nl_put_driver_u32(msg, "held", cq->queue.index -
				     READ_ONCE(cq->queue.hdr->consumer)) ||
	      rdma_nl_put_driver_string(msg, "armed",
					softrma_cq_armed_names[cq->notify]) ||
	      rdma_nl_put_driver_string(msg, "overflowed",
					cq->overflowed ? "yes" : "no"));
	spin_unlock_irqrestore(&cq->lock, flags);
	if (err) {
		nla_nest_cancel(msg, table);
		return -EMSGSIZE;
	}
	nla_nest_end(msg, table);
	return 0;
}

int softrma_fill_res_mr_entry(struct sk_buff *msg, struct ib_mr *ibmr)
{
	struct softrma_mr *mr = to_smr(ibmr);
	struct nlattr *table;

	table = nla_nest_start(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!table)
		return -EMSGSIZE;
	if (softrma_mr_is_fast_reg(mr) ?
	    rdma_nl_put_driver_u64(msg, "mapped_pages", mr->npages) ||
	    rdma_nl_put_driver_string(msg, "state",
				      READ_ONCE(mr->valid) ? "valid" : "free") :
	    rdma_nl_put_driver_u64(msg, "pinned_pages", mr->npages)) {
		nla_nest_cancel(msg, table);
		return -EMSGSIZE;
	}
	if (softrma_res_privileged() &&
	    rdma_nl_put_driver_u64_hex(msg, "iova", mr->iova)) {
		nla_nest_cancel(msg, table);
		return -EMSGSIZE;
	}
	nla_nest_end(msg, table);
	return 0;
}
