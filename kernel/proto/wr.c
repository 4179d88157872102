// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "roce.h"
#include "wr.h"

#define RC (1 << ROCE_QPT_RC)
#define UC (1 << ROCE_QPT_UC)
#define UD (1 << ROCE_QPT_UD)
#define XRC (1 << ROCE_QPT_XRC)

static const struct roce_wr_op roce_wr_ops[] = {
	[ROCE_WR_SEND] = {
		.kind = ROCE_KIND_SEND, .qp_types = RC | UC | UD | XRC, .recv = true,
		.inline_ok = true, .wc_opcode = ROCE_WC_SEND,
		.recv_wc_opcode = ROCE_WC_RECV,
	},
	[ROCE_WR_SEND_WITH_IMM] = {
		.kind = ROCE_KIND_SEND, .qp_types = RC | UC | UD | XRC, .recv = true,
		.imm = true, .inline_ok = true, .wc_opcode = ROCE_WC_SEND,
		.recv_wc_opcode = ROCE_WC_RECV,
	},
	[ROCE_WR_SEND_WITH_INV] = {
		.kind = ROCE_KIND_SEND, .qp_types = RC | XRC, .recv = true,
		.inv = true, .inline_ok = true, .wc_opcode = ROCE_WC_SEND,
		.recv_wc_opcode = ROCE_WC_RECV,
	},
	[ROCE_WR_RDMA_WRITE] = {
		.kind = ROCE_KIND_WRITE, .qp_types = RC | UC | XRC,
		.remote_access = ROCE_ACCESS_REMOTE_WRITE, .inline_ok = true,
		.wc_opcode = ROCE_WC_RDMA_WRITE,
	},
	[ROCE_WR_RDMA_WRITE_WITH_IMM] = {
		.kind = ROCE_KIND_WRITE, .qp_types = RC | UC | XRC, .recv = true,
		.imm = true, .remote_access = ROCE_ACCESS_REMOTE_WRITE,
		.inline_ok = true, .wc_opcode = ROCE_WC_RDMA_WRITE,
		.recv_wc_opcode = ROCE_WC_RECV_RDMA_WITH_IMM,
	},
	[ROCE_WR_RDMA_READ] = {
		.kind = ROCE_KIND_READ, .qp_types = RC | XRC, .response = true,
		.remote_access = ROCE_ACCESS_REMOTE_READ,
		.local_access = ROCE_ACCESS_LOCAL_WRITE,
		.roce_op = ROCE_READ_REQ, .wc_opcode = ROCE_WC_RDMA_READ,
	},
	[ROCE_WR_ATOMIC_CMP_AND_SWP] = {
		.kind = ROCE_KIND_ATOMIC, .qp_types = RC | XRC, .response = true,
		.length = sizeof(u64),
		.remote_access = ROCE_ACCESS_REMOTE_ATOMIC,
		.local_access = ROCE_ACCESS_LOCAL_WRITE,
		.roce_op = ROCE_CMP_SWAP, .wc_opcode = ROCE_WC_COMP_SWAP,
	},
	[ROCE_WR_ATOMIC_FETCH_AND_ADD] = {
		.kind = ROCE_KIND_ATOMIC, .qp_types = RC | XRC, .response = true,
		.length = sizeof(u64),
		.remote_access = ROCE_ACCESS_REMOTE_ATOMIC,
		.local_access = ROCE_ACCESS_LOCAL_WRITE,
		.roce_op = ROCE_FETCH_ADD, .wc_opcode = ROCE_WC_FETCH_ADD,
	},
	/* FLUSH's rights are the target MR's FLUSH access, checked there. */
	[ROCE_WR_FLUSH] = {
		.kind = ROCE_KIND_FLUSH, .qp_types = RC | XRC, .response = true,
		.roce_op = ROCE_FLUSH, .wc_opcode = ROCE_WC_FLUSH,
	},
	[ROCE_WR_ATOMIC_WRITE] = {
		.kind = ROCE_KIND_ATOMIC_WRITE, .qp_types = RC | XRC, .response = true,
		.length = sizeof(u64),
		.remote_access = ROCE_ACCESS_REMOTE_WRITE,
		.roce_op = ROCE_ATOMIC_WRITE, .wc_opcode = ROCE_WC_ATOMIC_WRITE,
	},
	[ROCE_WR_LOCAL_INV] = {
		.kind = ROCE_KIND_LOCAL_INV, .qp_types = RC | UC | UD | XRC,
		.local = true, .wc_opcode = ROCE_WC_LOCAL_INV,
	},
	[ROCE_WR_BIND_MW] = {
		.kind = ROCE_KIND_BIND_MW, .qp_types = RC | UC, .local = true,
		.wc_opcode = ROCE_WC_BIND_MW,
	},
	[ROCE_WR_REG_MR] = {
		.kind = ROCE_KIND_REG_MR, .qp_types = RC | UC | UD | XRC,
		.local = true, .kernel = true,
	},
};

#define ROCE_WR_OPS (sizeof(roce_wr_ops) / sizeof(roce_wr_ops[0]))

/* An opcode not in the table is valid on no QP. */
const struct roce_wr_op *roce_wr_op(u32 opcode)
{
	static const struct roce_wr_op invalid;

	if (opcode >= ROCE_WR_OPS)
		return &invalid;
	return &roce_wr_ops[roce_index_nospec(opcode, ROCE_WR_OPS)];
}

/* The request packets: the work request each is (a part of). */
static const struct {
	bool valid;
	u8 part;			/* enum roce_msg_part */
	u8 opcode;			/* enum roce_wr_opcode */
} roce_pkt_wrs[32] = {
#define PKT(op, p, wr) [op] = { true, ROCE_PART_##p, ROCE_WR_##wr }
	PKT(ROCE_SEND_FIRST, FIRST, SEND),
	PKT(ROCE_SEND_MIDDLE, MIDDLE, SEND),
	PKT(ROCE_SEND_LAST, LAST, SEND),
	PKT(ROCE_SEND_LAST_IMM, LAST, SEND_WITH_IMM),
	PKT(ROCE_SEND_ONLY, WHOLE, SEND),
	PKT(ROCE_SEND_ONLY_IMM, WHOLE, SEND_WITH_IMM),
	PKT(ROCE_SEND_LAST_INV, LAST, SEND_WITH_INV),
	PKT(ROCE_SEND_ONLY_INV, WHOLE, SEND_WITH_INV),
	PKT(ROCE_WRITE_FIRST, FIRST, RDMA_WRITE),
	PKT(ROCE_WRITE_MIDDLE, MIDDLE, RDMA_WRITE),
	PKT(ROCE_WRITE_LAST, LAST, RDMA_WRITE),
	PKT(ROCE_WRITE_LAST_IMM, LAST, RDMA_WRITE_WITH_IMM),
	PKT(ROCE_WRITE_ONLY, WHOLE, RDMA_WRITE),
	PKT(ROCE_WRITE_ONLY_IMM, WHOLE, RDMA_WRITE_WITH_IMM),
	PKT(ROCE_READ_REQ, WHOLE, RDMA_READ),
	PKT(ROCE_CMP_SWAP, WHOLE, ATOMIC_CMP_AND_SWP),
	PKT(ROCE_FETCH_ADD, WHOLE, ATOMIC_FETCH_AND_ADD),
	PKT(ROCE_FLUSH, WHOLE, FLUSH),
	PKT(ROCE_ATOMIC_WRITE, WHOLE, ATOMIC_WRITE),
#undef PKT
};

bool roce_wr_of_pkt(u8 op, u32 *opcode, u8 *part)
{
	if (op >= sizeof(roce_pkt_wrs) / sizeof(roce_pkt_wrs[0]) ||
	    !roce_pkt_wrs[op].valid)
		return false;
	*opcode = roce_pkt_wrs[op].opcode;
	*part = roce_pkt_wrs[op].part;
	return true;
}
