/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The message: what a requester hands a responder, whatever carries it, and
 * what becomes of it.  The facts about work request opcodes (proto/wr.c)
 * and results (nak.c), the requester (sq.c), the local transport (local.c)
 * and the responder (resp.c).
 */
#ifndef SOFTRMA_MSG_H
#define SOFTRMA_MSG_H

#include "proto/wr.h"
#include "verbs.h"

/*
 * The completion of a receive that a request consumed, left by the
 * responder for its transport to post once the request is answered.
 */
struct softrma_recv_cqe {
	struct softrma_cqe cqe;
	struct softrma_cq *cq;
	struct softrma_srq *xsrq;	/* XRC: in use until posted, for cq */
	bool solicited;
	bool held;
};

/* What a requester asks of a responder: a message, or a packet of one. */
struct softrma_msg {
	u32 opcode;			/* enum ib_wr_opcode */
	u8 part;			/* enum roce_msg_part */
	u32 send_flags;
	u32 imm_data;			/* network order */
	u32 inv_rkey;			/* SEND_WITH_INV: the target invalidates it */
	enum ib_qp_type qp_type;	/* the transport: RC, UC or UD */
	u32 src_qpn;
	u64 src_serial;			/* on this host: the requester QP's serial */
	u32 dest_qpn;
	const union ib_gid *dgid;	/* of the destination port */
	const struct softrma_av *av;	/* UD only: the GRH's contents */
	const struct softrma_av *path;	/* RC, UC: the requester's connection */
	u32 qkey;			/* UD only */
	u32 xrc_srqn;			/* XRC only: the target's SRQ */
	u64 remote_addr;
	u32 rkey;
	u64 compare_add;
	u64 swap;
	u64 length;			/* of the message; FLUSH: of the range */
	u8 flush_type;			/* enum softrma_flush_type */
	u8 flush_level;			/* enum softrma_flush_level */
	/* the payload (of this part), or where the answer of a READ or an atomic goes */
	struct softrma_sgl *local;
	u8 rnr_timer;			/* out: the responder's RNR NAK timer */
	bool local_gone;		/* out: an MR of local was deregistered */
	/* set: a receive's completion waits there, not in the CQ */
	struct softrma_recv_cqe *recv_cqe;
};

static inline bool softrma_msg_begins(const struct softrma_msg *msg)
{
	return msg->part == ROCE_PART_WHOLE || msg->part == ROCE_PART_FIRST;
}

static inline bool softrma_msg_ends(const struct softrma_msg *msg)
{
	return msg->part == ROCE_PART_WHOLE || msg->part == ROCE_PART_LAST;
}

enum softrma_resp_result {
	SOFTRMA_RESP_ACK,
	SOFTRMA_RESP_RNR_NAK,
	SOFTRMA_RESP_NAK_INV_REQ,
	SOFTRMA_RESP_NAK_ACCESS,
	SOFTRMA_RESP_NAK_OP,
	SOFTRMA_RESP_DROPPED,		/* nobody answers: retries run out */
};

/* nak.c: what a responder's result becomes */
enum ib_wc_status softrma_resp_status(enum softrma_resp_result res);
u8 softrma_resp_syndrome(enum softrma_resp_result res);
bool softrma_resp_fatal(enum softrma_resp_result res);
enum ib_wc_status softrma_nak_status(u8 syndrome);

/* sq.c: the requester and completer of the send queue */
enum ib_wc_status softrma_sq_prepare(struct softrma_qp *qp,
				      const struct softrma_sqe *sqe,
				      struct softrma_msg *msg,
				      struct softrma_sgl *sgl);
bool softrma_sq_fetch(struct softrma_qp *qp, u32 index, struct softrma_sqe *sqe);
void softrma_sq_finish(struct softrma_qp *qp, const struct softrma_sqe *sqe,
		       enum ib_wc_status status, u64 length);
void softrma_sq_complete_head(struct softrma_qp *qp, enum ib_wc_status status,
			      u64 length);
unsigned long softrma_sq_ack_timeout(const struct softrma_qp *qp);
bool softrma_sq_rnr_wait(struct softrma_qp *qp, u8 timer);
bool softrma_sq_lost_wait(struct softrma_qp *qp);
void softrma_sq_walk(struct softrma_qp *qp,
		     int (*execute)(struct softrma_qp *qp, u64 *moved));
u32 softrma_sq_run(struct softrma_qp *qp);
void softrma_sq_doorbell(struct softrma_qp *qp);
void softrma_sq_drain(struct softrma_qp *qp);
void softrma_sq_retry_work(struct work_struct *work);

/* resp.c: the responder */
bool softrma_resp_admits(struct softrma_qp *qp, const struct softrma_av *from);
enum softrma_resp_result softrma_resp_request(struct softrma_qp *qp,
					      struct softrma_msg *msg);
enum softrma_resp_result softrma_resp_outcome(struct softrma_qp *qp,
					      enum softrma_resp_result res);
void softrma_resp_end_msg(struct softrma_qp *qp);
void softrma_resp_abandon(struct softrma_qp *qp, bool flush);
void softrma_resp_post_recv(struct softrma_qp *qp, struct softrma_recv_cqe *rc);
enum softrma_resp_result softrma_resp_execute_locked(struct softrma_qp *qp,
						     struct softrma_msg *msg);
enum softrma_resp_result softrma_resp_execute(struct softrma_qp *qp,
					      struct softrma_msg *msg);
void softrma_resp_flush_err(struct softrma_qp *qp);
struct softrma_mr *softrma_resp_target(struct softrma_qp *qp, u32 rkey,
				       u64 va, u64 length, u32 wr_opcode);

/* xrc.c: the XRC SRQ of a request for an XRC TGT QP */
enum softrma_resp_result softrma_xrc_enter(struct softrma_qp *qp,
					   const struct softrma_msg *msg);
bool softrma_xrc_take(struct softrma_qp *qp, u32 srqn, u64 serial);
bool softrma_xrc_enter_held(struct softrma_qp *qp);
void softrma_xrc_leave(struct softrma_qp *qp);
void softrma_xrc_note_rqe(struct softrma_qp *qp);

/*
 * A requester's transport, chosen per QP by sq.c, which calls it under
 * sq_lock: in RTS and SQD it sends from the SQ head as far as it may and
 * completes what is done; in error it completes what it has in flight with
 * WR_FLUSH_ERR (sq.c flushes the rest).
 */
struct softrma_transport {
	void (*send)(struct softrma_qp *qp);
	void (*flush_err)(struct softrma_qp *qp);
};

/* local.c: to a QP on this host, or a datagram in a packet */
extern const struct softrma_transport softrma_local_transport;
struct softrma_dev *softrma_local_dev(struct softrma_qp *qp,
				      const union ib_gid *dgid);

/* wire_req.c: connected QPs in packets */
extern const struct softrma_transport softrma_wire_transport;

/* mcast.c: a datagram to every QP of its group */
int softrma_mcast_deliver(struct softrma_dev *sdev, struct softrma_msg *msg);

#endif /* SOFTRMA_MSG_H */
