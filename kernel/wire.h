/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The connected transports (RC, UC, XRC) on the wire.  The requester
 * (wire_req.c) takes SQ entries into a window of in-flight WQEs and sends
 * their packets, the completer (wire_comp.c) retires them on
 * acknowledgements and READ responses and goes back to the oldest
 * unacknowledged PSN on a NAK or a timeout, and the responder
 * (wire_resp.c) executes requests packet by packet.
 */
#ifndef SOFTRMA_WIRE_H
#define SOFTRMA_WIRE_H

#include <net/dst_cache.h>

#include "proto/rsrc.h"
#include "proto/seq.h"
#include "net.h"

#define SOFTRMA_WIRE_WQES	32	/* SQ entries in flight at once */
/*
 * Packets unacknowledged at once, at most.  A responder serves its QPs in
 * turn, so the last packet of a window waits behind the other QPs' windows:
 * with 512, four QPs' READs under TCG waited past perftest's 67 ms ACK
 * timeout over a thousand times a run; with 128 none did, at 3.5 times the
 * throughput.  128 packets of 4 KiB still cover a LAN's bandwidth-delay
 * product.
 */
#define SOFTRMA_WIRE_PSNS	128
#define SOFTRMA_WIRE_MIN_WINDOW	16	/* ... and at least, after losses */
#define SOFTRMA_WIRE_READ_PKTS	256	/* response packets per READ request */
#define SOFTRMA_WIRE_ACK_EVERY	64	/* AckReq at least this often */
#define SOFTRMA_WIRE_COMP_BUDGET 16	/* packets the completer sends itself */
#define SOFTRMA_WIRE_RUN_PKTS	1024	/* packets one run sends, then a work */
#define SOFTRMA_WIRE_ANSWER_PKTS 64	/* answers a run of the answer work sends */

/* An SQ entry on the wire, from the time it is taken until it completes. */
struct softrma_wqe {
	struct softrma_sqe *sqe;	/* kernel copy */
	struct softrma_msg msg;		/* its request, prepared */
	struct softrma_sgl sgl;		/* its local memory, held */
	struct softrma_seg segs[SOFTRMA_MAX_SGE];
	enum ib_wc_status status;	/* not SUCCESS: failed before sending */
	u32 first_psn;
	u32 last_psn;			/* READ: of its last response */
	u32 next_psn;			/* the next of its packets to send */
	u32 read_end;			/* READ: after its request's responses */
};

/* The responder's packet sequence and answers (its message: qp->resp). */
struct softrma_wire_resp {
	u32 epsn;			/* the PSN expected next */
	u32 msn;			/* messages completed, 24 bits */
	u8 last_op;			/* of the message in progress */
	bool nak_sent;			/* a sequence NAK is out for epsn */
	u32 oos_psn;			/* the last PSN beyond epsn seen */
	u32 oos_pkts;			/* beyond epsn since the last NAK */
	/* answers: READ responses and acknowledgements, in PSN order */
	struct roce_rsrc_table rsrc;
	struct softrma_sgl src;		/* the memory of resource src_id */
	u32 src_id;
	bool src_held;
	bool ack_waits;			/* behind the resources' answers */
	u8 ack_syndrome;
	u32 ack_psn;			/* of the ACK or NAK that waits */
	/*
	 * An ACK held till the receive batch ends.  Its own lock, not
	 * rq_lock: the requester sends it before a request of its own, and
	 * the batch's end may come in a softirq.
	 */
	spinlock_t deferred_lock;
	bool ack_deferred;
	bool ack_owed;			/* unasked: only before a request */
	u32 deferred_psn;
	u32 deferred_msn;
};

struct softrma_wire {
	struct softrma_qp *qp;
	u32 mtu;			/* path MTU in bytes */
	struct dst_cache route;		/* of qp->path; BH off around it */
	/* requester and completer: under sq_lock */
	void *sqes;			/* the kernel copies of wqe[].sqe */
	u32 next_index;			/* SQ index of the next entry to take */
	u32 send_psn;			/* PSN of the next new packet */
	u32 max_psn;			/* beyond the last PSN ever sent */
	u32 comp_psn;			/* the oldest PSN not acknowledged */
	u32 noack_pkts;			/* sent since the last AckReq */
	u32 ackreq_psn;			/* the last PSN that asked for an answer */
	u32 window;			/* packets unacknowledged at once, now */
	u32 window_acked;		/* PSNs acknowledged since it last grew */
	u8 retry_left;
	bool rewound;			/* since the last progress */
	bool probed;			/* since the last progress */
	unsigned long retrans_at;	/* jiffies: the ACK timeout's deadline */
	struct delayed_work retrans_work;
	struct work_struct send_work;	/* the requester, kicked by the completer */
	struct work_struct answer_work;	/* the responder's answers left to send */
	struct list_head ack_entry;	/* on the namespace's deferred ACKs */
	struct softrma_wqe wqe[SOFTRMA_WIRE_WQES];
	/* responder: under rq_lock */
	struct softrma_wire_resp resp;
};

static inline struct softrma_wqe *softrma_wire_wqe(struct softrma_qp *qp,
						   u32 index)
{
	return &qp->wire->wqe[index % SOFTRMA_WIRE_WQES];
}

static inline bool softrma_wqe_is_read(const struct softrma_wqe *wqe)
{
	return roce_wr_op(wqe->msg.opcode)->kind == ROCE_KIND_READ;
}

static inline bool softrma_wqe_waits_response(const struct softrma_wqe *wqe)
{
	return roce_wr_op(wqe->msg.opcode)->response;
}

/* wire.c */
u8 softrma_wire_group(struct softrma_qp *qp);
bool softrma_wire_rx(struct softrma_qp *qp, const struct roce_pkt *pkt,
		     const u8 *payload, const struct softrma_av *from, bool now);

/* net.c */
int softrma_net_xmit(struct softrma_qp *qp, const struct softrma_av *av,
		     struct roce_pkt *pkt, const struct softrma_sgl *payload,
		     u64 off);
bool softrma_net_rx_defer_ack(struct softrma_qp *qp);

/* wire_req.c */
bool softrma_wire_send(struct softrma_qp *qp, u32 budget);
void softrma_wire_send_run(struct softrma_qp *qp, u32 budget);
void softrma_wire_send_work(struct work_struct *work);
void softrma_wire_kick(struct softrma_qp *qp);
void softrma_wire_arm_timer(struct softrma_qp *qp, bool restart);
bool softrma_wire_ask_ack(struct softrma_qp *qp);
void softrma_wire_complete_head(struct softrma_qp *qp,
				enum ib_wc_status status);

/* wire_comp.c */
bool softrma_wire_comp_packet(struct softrma_qp *qp,
			      const struct roce_pkt *pkt, const u8 *payload,
			      const struct softrma_av *from, bool now);
void softrma_wire_retrans_work(struct work_struct *work);

/* wire_answer.c */
void softrma_wire_answer_ack(struct softrma_qp *qp, u8 syndrome, u32 psn);
void softrma_wire_answer_owe(struct softrma_qp *qp, u32 psn);
void softrma_wire_answer_run(struct softrma_qp *qp, u32 budget);
void softrma_wire_answer_work(struct work_struct *work);
void softrma_wire_answer_reset(struct softrma_qp *qp);
bool softrma_wire_answer_pending(struct softrma_qp *qp);

/* wire_resp.c */
bool softrma_wire_resp_packet(struct softrma_qp *qp,
			      const struct roce_pkt *pkt, const u8 *payload,
			      const struct softrma_av *from, bool now);

#endif /* SOFTRMA_WIRE_H */
