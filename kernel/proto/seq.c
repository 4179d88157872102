// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "seq.h"

/* FIRST, MIDDLE, then LAST and ONLY plain, with ImmDt and with IETH. */
static const u8 roce_msg_ops[][8] = {
	[ROCE_MSG_SEND] = { ROCE_SEND_FIRST, ROCE_SEND_MIDDLE,
			    ROCE_SEND_LAST, ROCE_SEND_LAST_IMM,
			    ROCE_SEND_LAST_INV, ROCE_SEND_ONLY,
			    ROCE_SEND_ONLY_IMM, ROCE_SEND_ONLY_INV },
	[ROCE_MSG_WRITE] = { ROCE_WRITE_FIRST, ROCE_WRITE_MIDDLE,
			     ROCE_WRITE_LAST, ROCE_WRITE_LAST_IMM, 0,
			     ROCE_WRITE_ONLY, ROCE_WRITE_ONLY_IMM, 0 },
	[ROCE_MSG_READ_RESP] = { ROCE_READ_RESP_FIRST, ROCE_READ_RESP_MIDDLE,
				 ROCE_READ_RESP_LAST, 0, 0,
				 ROCE_READ_RESP_ONLY, 0, 0 },
};

u8 roce_msg_op(enum roce_msg msg, unsigned int ext, bool first, bool last)
{
	const u8 *ops = roce_msg_ops[msg];
	unsigned int end = ext == ROCE_HDR_IMMDT ? 1 : ext == ROCE_HDR_IETH ? 2 : 0;

	if (first && last)
		return ops[5 + end];
	if (first)
		return ops[0];
	if (last)
		return ops[2 + end];
	return ops[1];
}

static bool roce_op_continues_send(u8 op)
{
	return op == ROCE_SEND_MIDDLE || op == ROCE_SEND_LAST ||
	       op == ROCE_SEND_LAST_IMM || op == ROCE_SEND_LAST_INV;
}

static bool roce_op_continues_write(u8 op)
{
	return op == ROCE_WRITE_MIDDLE || op == ROCE_WRITE_LAST ||
	       op == ROCE_WRITE_LAST_IMM;
}

bool roce_seq_ok(u8 prev, u8 op)
{
	switch (prev) {
	case ROCE_SEND_FIRST:
	case ROCE_SEND_MIDDLE:
		return roce_op_continues_send(op);
	case ROCE_WRITE_FIRST:
	case ROCE_WRITE_MIDDLE:
		return roce_op_continues_write(op);
	default:
		return !roce_op_continues_send(op) &&
		       !roce_op_continues_write(op);
	}
}

/* FIRST and MIDDLE packets: more of their message follows. */
static bool roce_op_is_first_or_middle(u8 op)
{
	switch (op) {
	case ROCE_SEND_FIRST:
	case ROCE_SEND_MIDDLE:
	case ROCE_WRITE_FIRST:
	case ROCE_WRITE_MIDDLE:
	case ROCE_READ_RESP_FIRST:
	case ROCE_READ_RESP_MIDDLE:
		return true;
	default:
		return false;
	}
}

bool roce_op_ends_msg(u8 op)
{
	return !roce_op_is_first_or_middle(op);
}

bool roce_payload_ok(u8 op, u32 len, u32 mtu)
{
	if (roce_op_is_first_or_middle(op))
		return len == mtu;
	switch (op) {
	case ROCE_SEND_LAST:
	case ROCE_SEND_LAST_IMM:
	case ROCE_SEND_LAST_INV:
	case ROCE_WRITE_LAST:
	case ROCE_WRITE_LAST_IMM:
	case ROCE_READ_RESP_LAST:
		return len >= 1 && len <= mtu;
	default:
		return len <= mtu;
	}
}
