/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Work requests: what each opcode is, read by the kernel's requester and
 * responder, by both transports, and by the provider's checks at post
 * time; and which work request each request packet carries.  The opcodes,
 * QP types, access flags and completion opcodes are the numbers both the
 * kernel (ib_verbs.h) and libibverbs (verbs.h) use: each asserts so.
 */
#ifndef ROCE_PROTO_WR_H
#define ROCE_PROTO_WR_H

#include "roce.h"

enum roce_wr_opcode {
	ROCE_WR_RDMA_WRITE = 0,
	ROCE_WR_RDMA_WRITE_WITH_IMM = 1,
	ROCE_WR_SEND = 2,
	ROCE_WR_SEND_WITH_IMM = 3,
	ROCE_WR_RDMA_READ = 4,
	ROCE_WR_ATOMIC_CMP_AND_SWP = 5,
	ROCE_WR_ATOMIC_FETCH_AND_ADD = 6,
	ROCE_WR_LOCAL_INV = 7,
	ROCE_WR_BIND_MW = 8,
	ROCE_WR_SEND_WITH_INV = 9,
	ROCE_WR_FLUSH = 14,
	ROCE_WR_ATOMIC_WRITE = 15,
	ROCE_WR_REG_MR = 0x20,		/* the kernel's only: no uAPI number */
};

enum roce_qp_type {
	ROCE_QPT_RC = 2,
	ROCE_QPT_UC = 3,
	ROCE_QPT_UD = 4,
	/* XRC: both ends, INI (XRC_SEND) and TGT (XRC_RECV), by INI's number */
	ROCE_QPT_XRC = 9,
};

enum roce_access {
	ROCE_ACCESS_LOCAL_WRITE = 1,
	ROCE_ACCESS_REMOTE_WRITE = 2,
	ROCE_ACCESS_REMOTE_READ = 4,
	ROCE_ACCESS_REMOTE_ATOMIC = 8,
	ROCE_ACCESS_MW_BIND = 16,
	ROCE_ACCESS_ZERO_BASED = 32,
};

enum roce_wc_opcode {
	ROCE_WC_SEND = 0,
	ROCE_WC_RDMA_WRITE = 1,
	ROCE_WC_RDMA_READ = 2,
	ROCE_WC_COMP_SWAP = 3,
	ROCE_WC_FETCH_ADD = 4,
	ROCE_WC_BIND_MW = 5,
	ROCE_WC_LOCAL_INV = 6,
	ROCE_WC_FLUSH = 8,
	ROCE_WC_ATOMIC_WRITE = 9,
	ROCE_WC_RECV = 128,
	ROCE_WC_RECV_RDMA_WITH_IMM = 129,
};

/*
 * What a work request does, whatever its variant (immediate data, ...):
 * the requester, the responder and the wire each have one handler per kind.
 */
enum roce_wr_kind {
	ROCE_KIND_NONE,			/* not an opcode softrma executes */
	ROCE_KIND_SEND,
	ROCE_KIND_WRITE,
	ROCE_KIND_READ,
	ROCE_KIND_ATOMIC,		/* compare-and-swap, fetch-and-add */
	ROCE_KIND_ATOMIC_WRITE,
	ROCE_KIND_FLUSH,
	ROCE_KIND_REG_MR,		/* fast registration of an MR */
	ROCE_KIND_LOCAL_INV,		/* of an MR or a type 2B window */
	ROCE_KIND_BIND_MW,
};

/* What a work request opcode is; a row of zeros when it is invalid. */
struct roce_wr_op {
	u8 kind;			/* enum roce_wr_kind */
	u16 qp_types;			/* 1 << ROCE_QPT_*: may post it */
	u8 remote_access;		/* ROCE_ACCESS_REMOTE_* at the target */
	u8 local_access;		/* of its SGEs: results land there */
	bool recv;			/* consumes a receive at the target */
	bool imm;			/* carries immediate data */
	bool inv;			/* carries a key the target invalidates */
	/*
	 * Executed by the requester alone, in order, once everything before
	 * it has completed: no message, no packet.
	 */
	bool local;
	bool kernel;			/* posted by kernel consumers only */
	bool inline_ok;			/* its SGEs' bytes may be inline */
	/*
	 * Answered with a response of its own rather than an ACK: it uses
	 * the responder's resources and is limited by max_rd_atomic.
	 */
	bool response;
	u8 length;			/* if not 0: the only length it may have */
	u8 roce_op;			/* of a one-packet request (READ, ...) */
	u8 wc_opcode;			/* of the requester's completion, but
					 * REG_MR's, whose number differs
					 * between kernels */
	u8 recv_wc_opcode;		/* of the receive it consumes */
};

const struct roce_wr_op *roce_wr_op(u32 opcode);

/* The header the last packet of a SEND or WRITE adds: ImmDt, IETH or none. */
static inline unsigned int roce_wr_last_hdr(const struct roce_wr_op *op)
{
	return op->imm ? ROCE_HDR_IMMDT : op->inv ? ROCE_HDR_IETH : 0;
}

/* Which part of its message a request is: on one host always the whole. */
enum roce_msg_part {
	ROCE_PART_WHOLE,
	ROCE_PART_FIRST,
	ROCE_PART_MIDDLE,
	ROCE_PART_LAST,
};

/*
 * The work request opcode and the part of its message that a request
 * packet with operation @op (the low 5 bits of its opcode) carries; false
 * for what is not a request.
 */
bool roce_wr_of_pkt(u8 op, u32 *opcode, u8 *part);

#endif /* ROCE_PROTO_WR_H */
