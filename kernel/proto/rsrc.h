/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The responder resources of an RC or XRC QP (IBA 9.7.5.1.4, 9.7.5.2.8):
 * each READ, atomic, FLUSH and ATOMIC WRITE the responder accepted, newest
 * max_dest_rd_atomic of them, with what their answers need.  Answers go out
 * oldest first; a duplicate request is answered again only when it asks
 * for what was accepted (its PSN, key, range inside a resource's and XRC
 * SRQ), from its PSN on.  Pure protocol code: no kernel API.
 */
#ifndef ROCE_PROTO_RSRC_H
#define ROCE_PROTO_RSRC_H

#include "seq.h"

#define ROCE_RSRC_MAX	128

struct roce_rsrc {
	u32 id;				/* the table's count when it was added */
	u8 op;				/* of its request */
	u32 psn;			/* of its request, and of its first answer */
	u32 npsn;			/* PSNs its answers take */
	u32 start;			/* the answer the last (re)start began at */
	u32 next;			/* the answer to send next; npsn: all sent */
	u32 msn;
	u64 va;
	u32 rkey;
	u32 xrc_srqn;			/* XRC: the SRQ whose PD has the memory */
	u32 len;
	u64 orig;			/* atomics: what the target held */
};

struct roce_rsrc_table {
	struct roce_rsrc rsrc[ROCE_RSRC_MAX];
	u32 num;			/* resources kept, 1..ROCE_RSRC_MAX */
	u32 head;			/* resources added since the reset */
	u32 send;			/* id of the oldest that may have answers left */
};

/* Forgets every resource; @num (max_dest_rd_atomic) are kept from now on. */
void roce_rsrc_reset(struct roce_rsrc_table *t, u32 num);

/*
 * Adds the accepted request @pkt (READ, atomic, FLUSH or ATOMIC WRITE) at
 * path MTU @mtu; the oldest resource leaves the table, with any answers it
 * had not sent.  @orig is an atomic's result.
 */
struct roce_rsrc *roce_rsrc_add(struct roce_rsrc_table *t,
				const struct roce_pkt *pkt, u32 mtu, u32 msn,
				u64 orig);

/*
 * The resource that the duplicate @pkt asks for again, restarted at its
 * PSN unless that answer is still to come; NULL when @pkt asks for
 * anything no resource holds.
 */
struct roce_rsrc *roce_rsrc_again(struct roce_rsrc_table *t,
				  const struct roce_pkt *pkt, u32 mtu);

/* The oldest resource with answers left to send; NULL when none has. */
struct roce_rsrc *roce_rsrc_pending(struct roce_rsrc_table *t);

/*
 * The next answer of @res: fills @pkt's opcode (without transport), PSN,
 * AETH and AtomicAckETH, and for READ responses the payload's length and
 * its offset @off in the READ's range.
 */
void roce_rsrc_answer(struct roce_rsrc *res, u32 mtu, struct roce_pkt *pkt,
		      u64 *off);

/* The last answer of @res did not go out: it is the next again. */
void roce_rsrc_unanswer(struct roce_rsrc *res);

#endif /* ROCE_PROTO_RSRC_H */
