// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The requester and completer of a send queue: each SQ entry is copied out
 * of the shared ring, checked, turned into a request that carries what a
 * packet would, handed to its QP's transport, and completed.  The
 * transport (struct softrma_transport) is chosen in one place,
 * softrma_sq_transport(), from what was decided when the QP's path was set
 * (wire.c): connected QPs whose peer is elsewhere go on the wire
 * (wire_req.c: a window of WQEs in flight); the others take the local
 * transport (local.c), which walks the queue entry by entry with
 * softrma_sq_walk(), as the flush of a QP in error does.
 */

#include <linux/sched/signal.h>
#include <linux/tick.h>

#include "proto/rnr_timer.h"
#include "wire.h"

/*
 * RC, UC, XRC: the destination is the QP's path and its peer, and for XRC
 * the SRQ the entry names there.
 */
static void softrma_sq_set_connected_dest(struct softrma_qp *qp,
					   const struct softrma_sqe *sqe,
					   struct softrma_msg *msg)
{
	msg->path = &qp->path;
	msg->dgid = &qp->path.dgid;
	msg->dest_qpn = qp->attr.dest_qp_num;
	if (softrma_qp_transport(qp) == IB_QPT_XRC_INI)
		msg->xrc_srqn = sqe->xrc_srqn & 0xffffff;
}

/* UD: the destination is the entry's AH, QPN and Q_Key. */
static enum ib_wc_status softrma_sq_set_datagram_dest(struct softrma_qp *qp,
							const struct softrma_sqe *sqe,
							struct softrma_msg *msg)
{
	u32 qkey = sqe->wr.ud.remote_qkey;

	if (softrma_ah_read(to_sdev(qp->ibqp.device), qp->ibqp.pd,
			    sqe->wr.ud.ah, &qp->sq_av))
		return IB_WC_LOC_QP_OP_ERR;
	msg->av = &qp->sq_av;
	msg->dgid = &qp->sq_av.dgid;
	msg->dest_qpn = sqe->wr.ud.remote_qpn & 0xffffff;
	/* IBA 10.2.5: a Q_Key with the high bit set means the QP's own. */
	msg->qkey = qkey & 0x80000000 ? qp->attr.qkey : qkey;
	return IB_WC_SUCCESS;
}

static enum ib_wc_status softrma_sq_set_dest(struct softrma_qp *qp,
					      const struct softrma_sqe *sqe,
					      struct softrma_msg *msg)
{
	if (softrma_qp_is_ud(qp))
		return softrma_sq_set_datagram_dest(qp, sqe, msg);
	softrma_sq_set_connected_dest(qp, sqe, msg);
	return IB_WC_SUCCESS;
}

/* A UD message fits one packet of the port's MTU. */
static u64 softrma_sq_max_length(struct softrma_qp *qp)
{
	return softrma_qp_is_ud(qp) ?
		softrma_port_mtu(to_sdev(qp->ibqp.device)) : SOFTRMA_MAX_MSG_SZ;
}

/*
 * FLUSH and ATOMIC WRITE carry everything in the entry: ATOMIC WRITE's
 * 8 bytes are its payload, and FLUSH has none.
 */
static enum ib_wc_status softrma_sq_prepare_rma_ext(const struct softrma_sqe *sqe,
						     struct softrma_msg *msg,
						     struct softrma_sgl *sgl)
{
	if (roce_wr_op(sqe->opcode)->kind == ROCE_KIND_ATOMIC_WRITE) {
		msg->remote_addr = sqe->wr.atomic_write.remote_addr;
		msg->rkey = sqe->wr.atomic_write.rkey;
		softrma_sgl_init_kbuf(sgl, (void *)&sqe->wr.atomic_write.value,
				      sizeof(u64));
		msg->length = sizeof(u64);
		return IB_WC_SUCCESS;
	}
	msg->remote_addr = sqe->wr.flush.remote_addr;
	msg->rkey = sqe->wr.flush.rkey;
	msg->length = sqe->wr.flush.length;
	msg->flush_type = sqe->wr.flush.type;
	msg->flush_level = sqe->wr.flush.level;
	softrma_sgl_init_kbuf(sgl, NULL, 0);
	return msg->length > SOFTRMA_MAX_MSG_SZ ? IB_WC_LOC_LEN_ERR :
						  IB_WC_SUCCESS;
}

/* Whether @qp may post @op: its type, and what only kernel consumers post. */
static bool softrma_sq_posts(struct softrma_qp *qp, const struct roce_wr_op *op)
{
	return (op->qp_types & BIT(softrma_qp_transport(qp))) &&
	       (!op->kernel || softrma_qp_is_kernel(qp));
}

/*
 * REG_MR, LOCAL_INV and BIND_MW, executed as the entry is taken: both
 * transports take one only once everything before it has completed.
 */
static enum ib_wc_status softrma_sq_local_op(struct softrma_qp *qp,
					      const struct softrma_sqe *sqe)
{
	struct softrma_dev *sdev = to_sdev(qp->ibqp.device);
	int err;

	switch (roce_wr_op(sqe->opcode)->kind) {
	case ROCE_KIND_REG_MR:
		err = softrma_mr_fast_reg(sdev, qp->ibqp.pd, sqe->wr.reg.key,
					  sqe->wr.reg.access);
		break;
	case ROCE_KIND_BIND_MW:
		return softrma_mw_bind(&qp->ibqp, sqe) ? IB_WC_MW_BIND_ERR :
							 IB_WC_SUCCESS;
	default:
		err = softrma_mr_invalidate(&qp->ibqp, sqe->invalidate_rkey);
		break;
	}
	return err ? IB_WC_LOC_QP_OP_ERR : IB_WC_SUCCESS;
}

/**
 * softrma_sq_prepare() - The message of an SQ entry, for either transport.
 * @qp: the requester
 * @sqe: a kernel copy of the SQ entry
 * @msg: filled from @sqe and the opcode table
 * @sgl: @sqe's memory, resolved (and held) for @msg to name
 *
 * A local operation (proto/wr.c) is executed here, and its message is
 * empty.
 *
 * Context: Process context, under @qp's sq_lock.
 * Return: IB_WC_SUCCESS, or the status the entry completes with.
 */
enum ib_wc_status softrma_sq_prepare(struct softrma_qp *qp,
				      const struct softrma_sqe *sqe,
				      struct softrma_msg *msg,
				      struct softrma_sgl *sgl)
{
	const struct roce_wr_op *op = roce_wr_op(sqe->opcode);
	enum ib_wc_status status;
	int err;

	*msg = (struct softrma_msg) {
		.opcode = sqe->opcode,
		.send_flags = sqe->send_flags,
		.imm_data = sqe->imm_data,
		.qp_type = softrma_qp_transport(qp),
		.src_qpn = qp->ibqp.qp_num,
		.src_serial = qp->serial,
		.local = sgl,
	};
	if (!softrma_sq_posts(qp, op))
		return IB_WC_LOC_QP_OP_ERR;
	if (op->local)
		return softrma_sq_local_op(qp, sqe);
	if (op->inv)
		msg->inv_rkey = sqe->invalidate_rkey;
	status = softrma_sq_set_dest(qp, sqe, msg);
	if (status != IB_WC_SUCCESS)
		return status;
	switch (op->kind) {
	case ROCE_KIND_READ:
	case ROCE_KIND_WRITE:
		msg->remote_addr = sqe->wr.rdma.remote_addr;
		msg->rkey = sqe->wr.rdma.rkey;
		break;
	case ROCE_KIND_ATOMIC:
		msg->remote_addr = sqe->wr.atomic.remote_addr;
		msg->rkey = sqe->wr.atomic.rkey;
		msg->compare_add = sqe->wr.atomic.compare_add;
		msg->swap = sqe->wr.atomic.swap;
		break;
	case ROCE_KIND_FLUSH:
	case ROCE_KIND_ATOMIC_WRITE:
		return softrma_sq_prepare_rma_ext(sqe, msg, sgl);
	default:
		break;
	}

	if (sqe->send_flags & IB_SEND_INLINE) {
		if (!op->inline_ok ||
		    sqe->inline_len > qp->cap.max_inline_data)
			return IB_WC_LOC_QP_OP_ERR;
		softrma_sgl_init_kbuf(sgl, (void *)sqe->sge, sqe->inline_len);
	} else {
		if (sqe->num_sge > qp->cap.max_send_sge)
			return IB_WC_LOC_QP_OP_ERR;
		err = softrma_sgl_resolve(sgl, to_sdev(qp->ibqp.device),
					  qp->ibqp.pd, sqe->sge, sqe->num_sge,
					  op->local_access);
		if (err)
			return err == -EINVAL ? IB_WC_LOC_LEN_ERR :
						IB_WC_LOC_PROT_ERR;
	}
	msg->length = sgl->length;
	if ((op->length && msg->length != op->length) ||
	    msg->length > softrma_sq_max_length(qp)) {
		softrma_sgl_release(sgl);
		return IB_WC_LOC_LEN_ERR;
	}
	return IB_WC_SUCCESS;
}

/**
 * softrma_sq_ack_timeout() - The QP's ACK timeout, in jiffies.
 * @qp: the requester
 *
 * IBA 9.7.6.1.3: 4.096 us << timeout, rounded up.
 *
 * Return: the timeout, or 0 for a QP that waits forever (timeout 0).
 */
unsigned long softrma_sq_ack_timeout(const struct softrma_qp *qp)
{
	u8 t = qp->attr.timeout;

	if (!t)
		return 0;
	return msecs_to_jiffies(DIV_ROUND_UP_ULL(4096ULL << t, NSEC_PER_MSEC));
}

/* The SQ head's retry counters start when it is first tried again. */
static void softrma_sq_head_retried(struct softrma_qp *qp)
{
	if (qp->head_retried)
		return;
	qp->head_retried = true;
	qp->rnr_left = qp->attr.rnr_retry;
	qp->retry_left = qp->attr.retry_cnt;
}

/* The SQ head waits @delay jiffies; 0 waits until the QP is in error. */
static void softrma_sq_head_wait(struct softrma_qp *qp, unsigned long delay)
{
	qp->head_wait = true;
	if (delay && !qp->dying)
		queue_delayed_work(softrma_wq, &qp->retry_work, delay);
}

/**
 * softrma_sq_rnr_wait() - Waits out an RNR NAK of the SQ head.
 * @qp: the requester
 * @timer: the NAK's RNR timer code
 *
 * Context: Under @qp's sq_lock; does not sleep.
 * Return: true when the SQ head waits and is tried again, false when its
 * RNR retries are used up (rnr_retry 7 means retry forever).
 */
bool softrma_sq_rnr_wait(struct softrma_qp *qp, u8 timer)
{
	softrma_qp_assert_sq(qp);
	softrma_sq_head_retried(qp);
	if (qp->attr.rnr_retry != 7) {
		if (!qp->rnr_left)
			return false;
		qp->rnr_left--;
	}
	softrma_sq_head_wait(qp, usecs_to_jiffies(roce_rnr_timer_us(timer)));
	return true;
}

/**
 * softrma_sq_lost_wait() - Waits out the ACK timeout of an unanswered head.
 * @qp: the requester, on the local transport
 *
 * A request that no QP took (none there, or one not yet in RTR) is lost,
 * as its packet would be: the SQ head is sent again after each of
 * retry_cnt ACK timeouts, each counted, and a QP with timeout 0 waits for
 * an answer forever, as on the wire.
 *
 * Context: Under @qp's sq_lock; does not sleep.
 * Return: true when the SQ head waits and is tried again, false when its
 * retries are used up.
 */
bool softrma_sq_lost_wait(struct softrma_qp *qp)
{
	unsigned long timeout = softrma_sq_ack_timeout(qp);

	softrma_qp_assert_sq(qp);
	softrma_sq_head_retried(qp);
	if (timeout) {
		softrma_count(to_sdev(qp->ibqp.device), SOFTRMA_CNT_ACK_TIMEOUT);
		if (!qp->retry_left)
			return false;
		qp->retry_left--;
	}
	softrma_sq_head_wait(qp, timeout);
	return true;
}

/* The kernel's IB_WC_REG_MR differs between kernels: the table has no number. */
static u8 softrma_sq_wc_opcode(const struct roce_wr_op *op)
{
	return op->kind == ROCE_KIND_REG_MR ? IB_WC_REG_MR : op->wc_opcode;
}

/**
 * softrma_sq_complete() - Completes the SQ head, on either transport.
 * @qp: the requester
 * @sqe: the SQ head's kernel copy
 * @status: its completion status
 * @length: bytes it moved, reported on success
 *
 * Its slot is free before the completion is seen, so that a consumer may
 * post again as soon as it polls it.
 *
 * Context: Under @qp's sq_lock; does not sleep.
 * Return: false when the send CQ overflowed.
 */
static bool softrma_sq_complete(struct softrma_qp *qp,
				const struct softrma_sqe *sqe,
				enum ib_wc_status status, u64 length)
{
	bool ok = true;

	softrma_qp_assert_sq(qp);
	softrma_queue_consume(&qp->sq);
	qp->head_retried = false;
	if (status != IB_WC_SUCCESS || qp->sig_all ||
	    (sqe->send_flags & IB_SEND_SIGNALED)) {
		struct softrma_cqe cqe = {
			.wr_id = sqe->wr_id,
			.status = status,
			.opcode = softrma_sq_wc_opcode(roce_wr_op(sqe->opcode)),
			.byte_len = status == IB_WC_SUCCESS ? length : 0,
			.qp_num = qp->ibqp.qp_num,
		};

		ok = softrma_cq_post(to_scq(qp->ibqp.send_cq), qp, &cqe, false);
	}
	softrma_qp_check_drained(qp);
	return ok;
}

/**
 * softrma_sq_finish() - Completes the SQ head, and fails the QP if it must.
 * @qp: the requester
 * @sqe: the SQ head's kernel copy
 * @status: its completion status, unless an injected one replaces it
 * @length: bytes it moved, reported on success
 *
 * A failed entry, or one whose completion overflowed the send CQ, puts the
 * QP in error.
 *
 * Context: Under @qp's sq_lock; does not sleep.
 */
void softrma_sq_finish(struct softrma_qp *qp, const struct softrma_sqe *sqe,
		       enum ib_wc_status status, u64 length)
{
	status = softrma_fault_wc_status(qp, status);
	if (!softrma_sq_complete(qp, sqe, status, length) ||
	    status != IB_WC_SUCCESS)
		softrma_qp_set_error(qp);
}

/* The same for the SQ head that a walk executes. */
void softrma_sq_complete_head(struct softrma_qp *qp, enum ib_wc_status status,
			      u64 length)
{
	softrma_sq_finish(qp, qp->sqe, status, length);
}

/**
 * softrma_sq_fetch() - Copies a posted SQ entry, for either transport.
 * @qp: the requester
 * @index: the entry's index in the send queue
 * @sqe: its kernel copy
 *
 * The producer index is the user's: a corrupt one puts @qp in error.
 *
 * Context: Under @qp's sq_lock; does not sleep.
 * Return: true when the entry at @index is posted and copied.
 */
bool softrma_sq_fetch(struct softrma_qp *qp, u32 index, struct softrma_sqe *sqe)
{
	int pending = softrma_queue_pending(&qp->sq);

	softrma_qp_assert_sq(qp);
	if (pending < 0)
		softrma_qp_set_error(qp);
	if (pending <= 0 || index - qp->sq.index >= (u32)pending)
		return false;
	memcpy(sqe, softrma_queue_entry(&qp->sq, index), qp->sq.stride);
	return true;
}

/*
 * What one run of the send queue does at most before it leaves the rest to
 * the QP's work: the ring indices are the user's, and the doorbell's caller
 * must get back to user space (and die when killed) whatever they say.
 */
#define SOFTRMA_SQ_RUN_BYTES	(256ULL << 20)

static bool softrma_sq_run_over(struct softrma_qp *qp, u32 done, u64 moved)
{
	return done >= qp->sq.num || moved >= SOFTRMA_SQ_RUN_BYTES ||
	       fatal_signal_pending(current);
}

/**
 * softrma_sq_walk() - Walks the send queue from its head, entry by entry.
 * @qp: the requester
 * @execute: executes the head entry (in qp->sqe), adds the bytes it moved
 *	to *@moved and completes it with softrma_sq_complete_head(); or
 *	returns -EAGAIN when it has to wait
 *
 * The walk stops when the queue is empty, the head waits, or a run's worth
 * is done; the QP's work goes on from there.
 *
 * Context: Process context, under @qp's sq_lock.
 */
void softrma_sq_walk(struct softrma_qp *qp,
		     int (*execute)(struct softrma_qp *qp, u64 *moved))
{
	u64 moved = 0;
	u32 done = 0;

	softrma_qp_assert_sq(qp);
	while (!qp->head_wait && softrma_sq_fetch(qp, qp->sq.index, qp->sqe)) {
		if (softrma_sq_run_over(qp, done, moved)) {
			softrma_qp_schedule(qp);
			break;
		}
		if (execute(qp, &moved) == -EAGAIN)
			break;
		done++;
		cond_resched();
	}
	/* What the walk completed was never in flight on the wire. */
	if (qp->wire)
		qp->wire->next_index = qp->sq.index;
}

static int softrma_sq_flush_head(struct softrma_qp *qp, u64 *moved)
{
	softrma_sq_complete_head(qp, IB_WC_WR_FLUSH_ERR, 0);
	return 0;
}

/* The transport of @qp's requests: chosen when its path was set. */
static const struct softrma_transport *softrma_sq_transport(struct softrma_qp *qp)
{
	return qp->on_wire ? &softrma_wire_transport : &softrma_local_transport;
}

/**
 * softrma_sq_run() - Runs the send queue on its transport.
 * @qp: the requester
 *
 * In RTS and SQD the transport sends what it may; in error, it lets go of
 * what it has in flight and every entry left completes with WR_FLUSH_ERR.
 * Called from the doorbell, after the head's wait and from the QP's work.
 *
 * Context: Process context; takes @qp's sq_lock.
 * Return: the number of entries the run took from the ring.
 */
u32 softrma_sq_run(struct softrma_qp *qp)
{
	const struct softrma_transport *t;
	u32 first;

	softrma_qp_lock_sq(qp);
	first = qp->sq.index;
	t = softrma_sq_transport(qp);
	if (softrma_state_sends(softrma_qp_state(qp)))
		t->send(qp);
	if (softrma_qp_state(qp) == IB_QPS_ERR) {
		qp->head_wait = false;	/* nothing is tried again in error */
		t->flush_err(qp);
		softrma_sq_walk(qp, softrma_sq_flush_head);
	}
	first = qp->sq.index - first;
	mutex_unlock(&qp->sq_lock);
	return first;
}

/*
 * Doorbell suppression.  A user QP's doorbell on the local transport runs
 * the send queue in the caller's context, which keeps the latency of one
 * request at a system call.  With doorbell_handover set it may instead hand
 * the queue to the QP's work and set SOFTRMA_RING_DRAINING in the ring, so
 * that the provider stops ringing while the work runs on another CPU: a
 * poster that streams then pays no system call per request.  Which one is
 * learnt per QP: after SOFTRMA_SQ_PROBE_EVERY doorbells run inline one is
 * handed over, if a CPU was idle enough since the last probe, and the QP
 * keeps handing over as long as the work takes more than one entry; a work
 * that takes one (a poster that waits for each answer) sends the QP back
 * to running its doorbells itself.  It is off by default because a work
 * that has to take turns with busy-polling processes is slower than the
 * doorbell (Documentation/design.md).
 *
 * What the kernel goes by is its own bit: the ring's flag is the user's to
 * overwrite, and a provider that sets it only keeps its own entries from
 * being run.
 */
static bool doorbell_handover;
module_param(doorbell_handover, bool, 0644);
MODULE_PARM_DESC(doorbell_handover,
		 "let streaming posters' doorbells hand the send queue to a work item (local transport)");

#define SOFTRMA_SQ_PROBE_EVERY	64U
#define SOFTRMA_SQ_STREAMING	(SOFTRMA_SQ_PROBE_EVERY + 1)

/*
 * Whether the CPUs, together, were idle for a quarter of the time since the
 * QP's last probe at least: a queue handed over then finds a CPU at once.
 * Where every CPU is busy the work waits for a time slice, milliseconds,
 * and every probe would cost a poster that waits for each answer as much.
 */
static bool softrma_sq_cpu_to_spare(struct softrma_qp *qp)
{
	u64 now = ktime_to_us(ktime_get()), idle = 0, was_idle, was_at;
	int cpu;

	for_each_online_cpu(cpu) {
		u64 t = get_cpu_idle_time_us(cpu, NULL);

		if (t == (u64)-1)	/* no idle accounting (nohz off) */
			return false;
		idle += t;
	}
	was_idle = READ_ONCE(qp->sq_probe_idle_us);
	was_at = READ_ONCE(qp->sq_probe_at_us);
	WRITE_ONCE(qp->sq_probe_idle_us, idle);
	WRITE_ONCE(qp->sq_probe_at_us, now);
	return idle - was_idle >= (now - was_at) / 4;
}

void softrma_sq_doorbell(struct softrma_qp *qp)
{
	u32 runs = READ_ONCE(qp->sq_inline_runs);

	if (test_bit(SOFTRMA_SQ_DRAINING, &qp->sq_drain))
		return;
	if (!READ_ONCE(doorbell_handover)) {
		softrma_sq_run(qp);
		return;
	}
	if (runs == SOFTRMA_SQ_STREAMING ||
	    (runs == SOFTRMA_SQ_PROBE_EVERY && softrma_sq_cpu_to_spare(qp))) {
		if (test_and_set_bit(SOFTRMA_SQ_DRAINING, &qp->sq_drain))
			return;
		softrma_count(to_sdev(qp->ibqp.device),
			      SOFTRMA_CNT_DOORBELL_HANDOVERS);
		WRITE_ONCE(qp->sq.hdr->consumer_flags, SOFTRMA_RING_DRAINING);
		softrma_qp_schedule(qp);
		return;
	}
	WRITE_ONCE(qp->sq_inline_runs,
		   runs < SOFTRMA_SQ_PROBE_EVERY ? runs + 1 : 0);
	softrma_sq_run(qp);
}

/**
 * softrma_sq_drain() - Runs the send queue for the QP's work.
 * @qp: the requester
 *
 * For a doorbell the queue is run with the flag set, then once more after
 * the flag is cleared: an entry published before the provider could see it
 * clear is taken by that second run, any later one comes with a doorbell.
 *
 * Context: Process context; takes @qp's sq_lock.
 */
void softrma_sq_drain(struct softrma_qp *qp)
{
	u32 taken;

	if (!test_bit(SOFTRMA_SQ_DRAINING, &qp->sq_drain)) {
		softrma_sq_run(qp);
		return;
	}
	taken = softrma_sq_run(qp);
	WRITE_ONCE(qp->sq.hdr->consumer_flags, 0);
	clear_bit_unlock(SOFTRMA_SQ_DRAINING, &qp->sq_drain);
	smp_mb__after_atomic();		/* the flag, then the producer */
	taken += softrma_sq_run(qp);
	WRITE_ONCE(qp->sq_inline_runs, taken > 1 ? SOFTRMA_SQ_STREAMING : 0);
}

void softrma_sq_retry_work(struct work_struct *work)
{
	struct softrma_qp *qp = container_of(to_delayed_work(work),
					     struct softrma_qp, retry_work);

	softrma_qp_lock_sq(qp);
	qp->head_wait = false;
	mutex_unlock(&qp->sq_lock);
	softrma_sq_run(qp);
}
