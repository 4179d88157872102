// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What each work request opcode is: what it does (its kind, which picks the
 * handler of every half), the QPs that may post it, the rights it needs at
 * the target and of its own memory, whether it consumes a receive, carries
 * immediate data or is answered by a response, its request packet, and how
 * it completes, at the requester and at the receiver.  The requester, the
 * responder and both transports read this table instead of asking the
 * opcode; the wire reads the requests in packets with the second table.
 */

#include <linux/nospec.h>

#include "msg.h"
#include "proto/roce.h"

#define RC BIT(IB_QPT_RC)
#define UC BIT(IB_QPT_UC)
#define UD BIT(IB_QPT_UD)

static const struct softrma_wr_op softrma_wr_ops[] = {
	[IB_WR_SEND] = {
		.kind = SOFTRMA_OP_SEND, .qp_types = RC | UC | UD, .recv = true,
		.wc_opcode = IB_WC_SEND, .recv_wc_opcode = IB_WC_RECV,
	},
	[IB_WR_SEND_WITH_IMM] = {
		.kind = SOFTRMA_OP_SEND, .qp_types = RC | UC | UD, .recv = true,
		.imm = true, .wc_opcode = IB_WC_SEND, .recv_wc_opcode = IB_WC_RECV,
	},
	[IB_WR_RDMA_WRITE] = {
		.kind = SOFTRMA_OP_WRITE, .qp_types = RC | UC,
		.remote_access = IB_ACCESS_REMOTE_WRITE,
		.wc_opcode = IB_WC_RDMA_WRITE,
	},
	[IB_WR_RDMA_WRITE_WITH_IMM] = {
		.kind = SOFTRMA_OP_WRITE, .qp_types = RC | UC, .recv = true,
		.imm = true, .remote_access = IB_ACCESS_REMOTE_WRITE,
		.wc_opcode = IB_WC_RDMA_WRITE,
		.recv_wc_opcode = IB_WC_RECV_RDMA_WITH_IMM,
	},
	[IB_WR_RDMA_READ] = {
		.kind = SOFTRMA_OP_READ, .qp_types = RC, .response = true,
		.remote_access = IB_ACCESS_REMOTE_READ,
		.local_access = IB_ACCESS_LOCAL_WRITE,
		.roce_op = ROCE_READ_REQ, .wc_opcode = IB_WC_RDMA_READ,
	},
	[IB_WR_ATOMIC_CMP_AND_SWP] = {
		.kind = SOFTRMA_OP_ATOMIC, .qp_types = RC, .response = true,
		.length = sizeof(u64),
		.remote_access = IB_ACCESS_REMOTE_ATOMIC,
		.local_access = IB_ACCESS_LOCAL_WRITE,
		.roce_op = ROCE_CMP_SWAP, .wc_opcode = IB_WC_COMP_SWAP,
	},
	[IB_WR_ATOMIC_FETCH_AND_ADD] = {
		.kind = SOFTRMA_OP_ATOMIC, .qp_types = RC, .response = true,
		.length = sizeof(u64),
		.remote_access = IB_ACCESS_REMOTE_ATOMIC,
		.local_access = IB_ACCESS_LOCAL_WRITE,
		.roce_op = ROCE_FETCH_ADD, .wc_opcode = IB_WC_FETCH_ADD,
	},
	/* FLUSH's rights are the target MR's FLUSH access, checked there. */
	[SOFTRMA_WR_FLUSH] = {
		.kind = SOFTRMA_OP_FLUSH, .qp_types = RC, .response = true,
		.roce_op = ROCE_FLUSH, .wc_opcode = SOFTRMA_WC_FLUSH,
	},
	[SOFTRMA_WR_ATOMIC_WRITE] = {
		.kind = SOFTRMA_OP_ATOMIC_WRITE, .qp_types = RC, .response = true,
		.length = sizeof(u64),
		.remote_access = IB_ACCESS_REMOTE_WRITE,
		.roce_op = ROCE_ATOMIC_WRITE, .wc_opcode = SOFTRMA_WC_ATOMIC_WRITE,
	},
};

/* An opcode not in the table is valid on no QP. */
const struct softrma_wr_op *softrma_wr_op(u32 wr_opcode)
{
	static const struct softrma_wr_op invalid;

	if (wr_opcode >= ARRAY_SIZE(softrma_wr_ops))
		return &invalid;
	return &softrma_wr_ops[array_index_nospec(wr_opcode,
						  ARRAY_SIZE(softrma_wr_ops))];
}

/* The request packets: the work request each is (a part of). */
static const struct {
	bool valid;
	u8 part;			/* enum softrma_msg_part */
	u8 wr_opcode;
} softrma_pkt_ops[32] = {
#define PKT(op, p, wr) [op] = { true, SOFTRMA_MSG_##p, wr }
	PKT(ROCE_SEND_FIRST, FIRST, IB_WR_SEND),
	PKT(ROCE_SEND_MIDDLE, MIDDLE, IB_WR_SEND),
	PKT(ROCE_SEND_LAST, LAST, IB_WR_SEND),
	PKT(ROCE_SEND_LAST_IMM, LAST, IB_WR_SEND_WITH_IMM),
	PKT(ROCE_SEND_ONLY, WHOLE, IB_WR_SEND),
	PKT(ROCE_SEND_ONLY_IMM, WHOLE, IB_WR_SEND_WITH_IMM),
	PKT(ROCE_WRITE_FIRST, FIRST, IB_WR_RDMA_WRITE),
	PKT(ROCE_WRITE_MIDDLE, MIDDLE, IB_WR_RDMA_WRITE),
	PKT(ROCE_WRITE_LAST, LAST, IB_WR_RDMA_WRITE),
	PKT(ROCE_WRITE_LAST_IMM, LAST, IB_WR_RDMA_WRITE_WITH_IMM),
	PKT(ROCE_WRITE_ONLY, WHOLE, IB_WR_RDMA_WRITE),
	PKT(ROCE_WRITE_ONLY_IMM, WHOLE, IB_WR_RDMA_WRITE_WITH_IMM),
	PKT(ROCE_READ_REQ, WHOLE, IB_WR_RDMA_READ),
	PKT(ROCE_CMP_SWAP, WHOLE, IB_WR_ATOMIC_CMP_AND_SWP),
	PKT(ROCE_FETCH_ADD, WHOLE, IB_WR_ATOMIC_FETCH_AND_ADD),
	PKT(ROCE_FLUSH, WHOLE, SOFTRMA_WR_FLUSH),
	PKT(ROCE_ATOMIC_WRITE, WHOLE, SOFTRMA_WR_ATOMIC_WRITE),
#undef PKT
};

/*
 * The work request opcode and the part of its message that a request
 * packet with operation @roce_op (its low 5 bits) carries; false for one
 * softrma does not execute (SEND with invalidate).
 */
bool softrma_wr_op_of_pkt(u8 roce_op, u32 *wr_opcode, u8 *part)
{
	if (roce_op >= ARRAY_SIZE(softrma_pkt_ops) ||
	    !softrma_pkt_ops[roce_op].valid)
		return false;
	*wr_opcode = softrma_pkt_ops[roce_op].wr_opcode;
	*part = softrma_pkt_ops[roce_op].part;
	return true;
}
