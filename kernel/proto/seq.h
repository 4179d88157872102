/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Messages of the connected transports (RC, UC) as packet sequences: the
 * opcode of each packet of a message, which opcode may follow which, the
 * payload each may carry, and what an AETH syndrome says.  Pure protocol
 * code: no kernel API.
 */
#ifndef ROCE_PROTO_SEQ_H
#define ROCE_PROTO_SEQ_H

#include "roce.h"

/* "No message in progress", in place of the last operation accepted. */
#define ROCE_OP_NONE	0xff

enum roce_msg {
	ROCE_MSG_SEND,
	ROCE_MSG_WRITE,
	ROCE_MSG_READ_RESP,
};

/* Packets of a message of @len bytes at path MTU @mtu (at least one). */
static inline u32 roce_num_pkts(u64 len, u32 mtu)
{
	return len ? (u32)((len + mtu - 1) / mtu) : 1;
}

/*
 * IBA 9.7.1: the PSNs from the oldest unacknowledged one (@oldest) to
 * before @end may span half the PSN space at most, or which comes first
 * can no longer be told.
 */
static inline bool roce_psn_span_ok(u32 oldest, u32 end)
{
	return ((end - oldest) & ROCE_PSN_MASK) <= ROCE_PSN_MASK / 2 + 1;
}

/*
 * The operation (low 5 bits) of a packet of a message: @first and @last
 * say where it is; @ext is the header its last packet adds, 0,
 * ROCE_HDR_IMMDT or (SEND only) ROCE_HDR_IETH.
 */
u8 roce_msg_op(enum roce_msg msg, unsigned int ext, bool first, bool last);

/* True when operation @op may follow @prev (ROCE_OP_NONE between messages). */
bool roce_seq_ok(u8 prev, u8 op);

/* True when @op ends its message (ONLY, LAST, and one-packet requests). */
bool roce_op_ends_msg(u8 op);

/*
 * True for requests answered with a response of their own (READ responses,
 * atomic acknowledgements) rather than an ACK: READ, the atomics, FLUSH and
 * ATOMIC WRITE.
 */
static inline bool roce_op_is_rd_atomic(u8 op)
{
	return op == ROCE_READ_REQ || op == ROCE_CMP_SWAP ||
	       op == ROCE_FETCH_ADD || op == ROCE_FLUSH ||
	       op == ROCE_ATOMIC_WRITE;
}

/*
 * True when @len bytes of payload suit @op at path MTU @mtu: FIRST and
 * MIDDLE packets are full, LAST packets carry 1 to @mtu bytes, ONLY
 * packets 0 to @mtu.
 */
bool roce_payload_ok(u8 op, u32 len, u32 mtu);

/* AETH syndromes: what kind, and the RNR timer or NAK code. */
enum roce_aeth_kind {
	ROCE_AETH_KIND_ACK,
	ROCE_AETH_KIND_RNR,
	ROCE_AETH_KIND_NAK,
	ROCE_AETH_KIND_RESERVED,
};

static inline enum roce_aeth_kind roce_aeth_kind(u8 syndrome)
{
	switch (syndrome >> 5) {
	case 0:
		return ROCE_AETH_KIND_ACK;
	case 1:
		return ROCE_AETH_KIND_RNR;
	case 3:
		return ROCE_AETH_KIND_NAK;
	default:
		return ROCE_AETH_KIND_RESERVED;
	}
}

static inline u8 roce_aeth_value(u8 syndrome)
{
	return syndrome & 0x1f;
}

#endif /* ROCE_PROTO_SEQ_H */
