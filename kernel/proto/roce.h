/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The RoCEv2 transport headers (IBA vol. 1 ch. 9, annex A17): opcodes, the
 * BTH and its extension headers, parsing with every length checked, building,
 * PSN arithmetic and the ICRC.  Pure protocol code: no kernel API.
 */
#ifndef ROCE_PROTO_ROCE_H
#define ROCE_PROTO_ROCE_H

#include "types.h"

#define ROCE_UDP_PORT		4791
#define ROCE_BTH_LEN		12
#define ROCE_ICRC_LEN		4
#define ROCE_PSN_MASK		0xffffffU
#define ROCE_DEFAULT_PKEY	0xffff

/* Transport groups (high 3 bits of the opcode). */
enum {
	ROCE_RC = 0x00,
	ROCE_UC = 0x20,
	ROCE_UD = 0x60,
	ROCE_XRC = 0xa0,
};

/* The group of an opcode, one of the above, and its operation. */
static inline u8 roce_opcode_group(u8 opcode)
{
	return opcode & 0xe0;
}

/* Operations (low 5 bits of the opcode). */
enum roce_op {
	ROCE_SEND_FIRST = 0x00,
	ROCE_SEND_MIDDLE = 0x01,
	ROCE_SEND_LAST = 0x02,
	ROCE_SEND_LAST_IMM = 0x03,
	ROCE_SEND_ONLY = 0x04,
	ROCE_SEND_ONLY_IMM = 0x05,
	ROCE_WRITE_FIRST = 0x06,
	ROCE_WRITE_MIDDLE = 0x07,
	ROCE_WRITE_LAST = 0x08,
	ROCE_WRITE_LAST_IMM = 0x09,
	ROCE_WRITE_ONLY = 0x0a,
	ROCE_WRITE_ONLY_IMM = 0x0b,
	ROCE_READ_REQ = 0x0c,
	ROCE_READ_RESP_FIRST = 0x0d,
	ROCE_READ_RESP_MIDDLE = 0x0e,
	ROCE_READ_RESP_LAST = 0x0f,
	ROCE_READ_RESP_ONLY = 0x10,
	ROCE_ACK = 0x11,
	ROCE_ATOMIC_ACK = 0x12,
	ROCE_CMP_SWAP = 0x13,
	ROCE_FETCH_ADD = 0x14,
	ROCE_SEND_LAST_INV = 0x16,
	ROCE_SEND_ONLY_INV = 0x17,
	ROCE_FLUSH = 0x1c,
	ROCE_ATOMIC_WRITE = 0x1d,
};

/* True for what a responder sends: READ responses and acknowledgements. */
static inline bool roce_op_is_response(u8 op)
{
	return op >= ROCE_READ_RESP_FIRST && op <= ROCE_ATOMIC_ACK;
}

/* Whether @opcode is a response of a connected transport that has them. */
static inline bool roce_opcode_is_response(u8 opcode)
{
	u8 group = roce_opcode_group(opcode);

	return (group == ROCE_RC || group == ROCE_XRC) &&
	       roce_op_is_response(opcode & 0x1f);
}

/* Extension headers, in wire order. */
enum {
	ROCE_HDR_DETH = 1 << 0,
	ROCE_HDR_XRCETH = 1 << 9,	/* XRC requests; after DETH, before FETH */
	ROCE_HDR_RETH = 1 << 1,		/* FETH comes first when both */
	ROCE_HDR_FETH = 1 << 2,
	ROCE_HDR_ATMETH = 1 << 3,
	ROCE_HDR_AETH = 1 << 4,
	ROCE_HDR_ATMACK = 1 << 5,
	ROCE_HDR_IMMDT = 1 << 6,
	ROCE_HDR_IETH = 1 << 7,
	ROCE_HDR_PAYLOAD = 1 << 8,	/* the opcode carries data */
};

/* AETH syndromes. */
enum {
	ROCE_AETH_ACK = 0x1f,		/* ACK, "unlimited credits" as rxe sends */
	ROCE_AETH_RNR_NAK = 0x20,	/* | timer code */
	ROCE_AETH_NAK_PSN_SEQ = 0x60,
	ROCE_AETH_NAK_INV_REQ = 0x61,
	ROCE_AETH_NAK_REM_ACCESS = 0x62,
	ROCE_AETH_NAK_REM_OP = 0x63,
};

/* Why a packet was refused; each has its own drop counter. */
enum roce_parse_err {
	ROCE_OK = 0,
	ROCE_ERR_TRUNCATED,		/* shorter than its headers and ICRC */
	ROCE_ERR_OPCODE,		/* unknown or not for this transport */
	ROCE_ERR_VERSION,		/* BTH TVer is not 0 */
	ROCE_ERR_PKEY,			/* not the default partition's P_Key */
	ROCE_ERR_PAD,			/* pad count larger than the payload */
	ROCE_ERR_ICRC,
};

/* One packet's transport fields, in host order (ImmDt stays as sent). */
struct roce_pkt {
	u8 opcode;
	bool se;
	bool mig;
	bool ackreq;
	u8 pad;
	u16 pkey;
	u32 dqpn;
	u32 psn;
	u32 qkey;			/* DETH */
	u32 sqpn;			/* DETH */
	u32 xrc_srqn;			/* XRCETH */
	u64 va;				/* RETH, AtomicETH */
	u32 rkey;			/* RETH, AtomicETH */
	u32 dma_len;			/* RETH */
	u64 swap_add;			/* AtomicETH */
	u64 compare;			/* AtomicETH */
	u8 syndrome;			/* AETH */
	u32 msn;			/* AETH */
	u64 atomic_orig;		/* AtomicAckETH */
	u32 imm;			/* ImmDt, network order as on the wire */
	u32 inv_rkey;			/* IETH */
	u32 feth;			/* FETH */
	u32 payload_len;		/* without pad and ICRC */
};

/* The extension headers of @opcode, 0 for an opcode softrma does not know. */
unsigned int roce_opcode_hdrs(u8 opcode);

/* BTH plus extension headers of @opcode. */
unsigned int roce_hdr_len(u8 opcode);

/*
 * Parses the UDP payload @buf of @len bytes into @pkt; the payload starts
 * at roce_hdr_len(pkt->opcode).  The ICRC is checked separately.
 */
enum roce_parse_err roce_parse(struct roce_pkt *pkt, const u8 *buf, u32 len);

/* Writes BTH and extension headers; returns their length. */
unsigned int roce_build(u8 *buf, const struct roce_pkt *pkt);

/* Bytes of padding after @payload_len bytes of payload. */
static inline u8 roce_pad(u32 payload_len)
{
	return -payload_len & 3;
}

/* @a - @b as a signed 24-bit distance. */
static inline int roce_psn_diff(u32 a, u32 b)
{
	return (int)((a - b) << 8) >> 8;
}

static inline u32 roce_psn_add(u32 psn, u32 n)
{
	return (psn + n) & ROCE_PSN_MASK;
}

/*
 * The ICRC of a packet: @ip is its IPv4 (20 bytes) or IPv6 (40 bytes)
 * header, @udp the UDP datagram of @udp_len bytes (UDP header, transport
 * headers, payload, pad and the 4 ICRC bytes, which are not covered).
 * Returns the value as it goes on the wire (little-endian bytes).
 */
u32 roce_icrc(const u8 *ip, bool ipv6, const u8 *udp, u32 udp_len);

/*
 * The ICRC rdma_rxe gives FLUSH packets (Linux 6.2 to at least 6.12): its
 * opcode table has no payload offset for FLUSH, so the CRC goes on over
 * BTH, FETH and RETH a second time, as if they were payload.  rxe drops
 * FLUSH packets that carry the ICRC of the specification.
 */
u32 roce_icrc_rxe_flush(const u8 *ip, bool ipv6, const u8 *udp, u32 udp_len);

/*
 * Checks the ICRC in the last 4 bytes of @udp; a FLUSH may also carry
 * rdma_rxe's form of it.
 */
bool roce_icrc_ok(const u8 *ip, bool ipv6, const u8 *udp, u32 udp_len);

#endif /* ROCE_PROTO_ROCE_H */
