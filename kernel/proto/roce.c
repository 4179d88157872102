// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "roce.h"

#define ROCE_DETH_LEN	8
#define ROCE_XRCETH_LEN	4
#define ROCE_RETH_LEN	16
#define ROCE_FETH_LEN	4
#define ROCE_ATMETH_LEN	28
#define ROCE_AETH_LEN	4
#define ROCE_ATMACK_LEN	8
#define ROCE_IMMDT_LEN	4
#define ROCE_IETH_LEN	4

#define P	ROCE_HDR_PAYLOAD

/* Extension headers by operation (the low 5 bits), for RC and XRC. */
static const unsigned short roce_op_hdrs[32] = {
	[ROCE_SEND_FIRST] = P,
	[ROCE_SEND_MIDDLE] = P,
	[ROCE_SEND_LAST] = P,
	[ROCE_SEND_LAST_IMM] = ROCE_HDR_IMMDT | P,
	[ROCE_SEND_ONLY] = P,
	[ROCE_SEND_ONLY_IMM] = ROCE_HDR_IMMDT | P,
	[ROCE_WRITE_FIRST] = ROCE_HDR_RETH | P,
	[ROCE_WRITE_MIDDLE] = P,
	[ROCE_WRITE_LAST] = P,
	[ROCE_WRITE_LAST_IMM] = ROCE_HDR_IMMDT | P,
	[ROCE_WRITE_ONLY] = ROCE_HDR_RETH | P,
	[ROCE_WRITE_ONLY_IMM] = ROCE_HDR_RETH | ROCE_HDR_IMMDT | P,
	[ROCE_READ_REQ] = ROCE_HDR_RETH,
	[ROCE_READ_RESP_FIRST] = ROCE_HDR_AETH | P,
	[ROCE_READ_RESP_MIDDLE] = P,
	[ROCE_READ_RESP_LAST] = ROCE_HDR_AETH | P,
	[ROCE_READ_RESP_ONLY] = ROCE_HDR_AETH | P,
	[ROCE_ACK] = ROCE_HDR_AETH,
	[ROCE_ATOMIC_ACK] = ROCE_HDR_AETH | ROCE_HDR_ATMACK,
	[ROCE_CMP_SWAP] = ROCE_HDR_ATMETH,
	[ROCE_FETCH_ADD] = ROCE_HDR_ATMETH,
	[ROCE_SEND_LAST_INV] = ROCE_HDR_IETH | P,
	[ROCE_SEND_ONLY_INV] = ROCE_HDR_IETH | P,
	[ROCE_FLUSH] = ROCE_HDR_FETH | ROCE_HDR_RETH,
	[ROCE_ATOMIC_WRITE] = ROCE_HDR_RETH | P,
};

#undef P

unsigned int roce_opcode_hdrs(u8 opcode)
{
	u8 op = opcode & 0x1f;

	switch (opcode & 0xe0) {
	case ROCE_RC:
		return roce_op_hdrs[op];
	case ROCE_UC:
		return op <= ROCE_WRITE_ONLY_IMM ? roce_op_hdrs[op] : 0;
	case ROCE_UD:
		if (op == ROCE_SEND_ONLY || op == ROCE_SEND_ONLY_IMM)
			return roce_op_hdrs[op] | ROCE_HDR_DETH;
		return 0;
	case ROCE_XRC:
		/* Requests name the target's XRC SRQ; responses are RC's. */
		if (!roce_op_hdrs[op] || roce_op_is_response(op))
			return roce_op_hdrs[op];
		return roce_op_hdrs[op] | ROCE_HDR_XRCETH;
	default:
		return 0;
	}
}

unsigned int roce_hdr_len(u8 opcode)
{
	unsigned int hdrs = roce_opcode_hdrs(opcode);

	return ROCE_BTH_LEN +
	       (hdrs & ROCE_HDR_DETH ? ROCE_DETH_LEN : 0) +
	       (hdrs & ROCE_HDR_XRCETH ? ROCE_XRCETH_LEN : 0) +
	       (hdrs & ROCE_HDR_FETH ? ROCE_FETH_LEN : 0) +
	       (hdrs & ROCE_HDR_RETH ? ROCE_RETH_LEN : 0) +
	       (hdrs & ROCE_HDR_ATMETH ? ROCE_ATMETH_LEN : 0) +
	       (hdrs & ROCE_HDR_AETH ? ROCE_AETH_LEN : 0) +
	       (hdrs & ROCE_HDR_ATMACK ? ROCE_ATMACK_LEN : 0) +
	       (hdrs & ROCE_HDR_IMMDT ? ROCE_IMMDT_LEN : 0) +
	       (hdrs & ROCE_HDR_IETH ? ROCE_IETH_LEN : 0);
}

static u16 get16(const u8 *p)
{
	return (u16)p[0] << 8 | p[1];
}

static u32 get24(const u8 *p)
{
	return (u32)p[0] << 16 | (u32)p[1] << 8 | p[2];
}

static u32 get32(const u8 *p)
{
	return (u32)get16(p) << 16 | get16(p + 2);
}

static u64 get64(const u8 *p)
{
	return (u64)get32(p) << 32 | get32(p + 4);
}

static void put16(u8 *p, u16 v)
{
	p[0] = v >> 8;
	p[1] = v;
}

static void put24(u8 *p, u32 v)
{
	p[0] = v >> 16;
	put16(p + 1, v);
}

static void put32(u8 *p, u32 v)
{
	put16(p, v >> 16);
	put16(p + 2, v);
}

static void put64(u8 *p, u64 v)
{
	put32(p, v >> 32);
	put32(p + 4, v);
}

/* Reads the extension headers of @hdrs that follow the BTH at @p. */
static void roce_parse_ext(struct roce_pkt *pkt, unsigned int hdrs,
			   const u8 *p)
{
	if (hdrs & ROCE_HDR_DETH) {
		pkt->qkey = get32(p);
		pkt->sqpn = get24(p + 5);
		p += ROCE_DETH_LEN;
	}
	if (hdrs & ROCE_HDR_XRCETH) {
		pkt->xrc_srqn = get24(p + 1);
		p += ROCE_XRCETH_LEN;
	}
	if (hdrs & ROCE_HDR_FETH) {
		pkt->feth = get32(p);
		p += ROCE_FETH_LEN;
	}
	if (hdrs & ROCE_HDR_RETH) {
		pkt->va = get64(p);
		pkt->rkey = get32(p + 8);
		pkt->dma_len = get32(p + 12);
		p += ROCE_RETH_LEN;
	}
	if (hdrs & ROCE_HDR_ATMETH) {
		pkt->va = get64(p);
		pkt->rkey = get32(p + 8);
		pkt->swap_add = get64(p + 12);
		pkt->compare = get64(p + 20);
		p += ROCE_ATMETH_LEN;
	}
	if (hdrs & ROCE_HDR_AETH) {
		pkt->syndrome = p[0];
		pkt->msn = get24(p + 1);
		p += ROCE_AETH_LEN;
	}
	if (hdrs & ROCE_HDR_ATMACK) {
		pkt->atomic_orig = get64(p);
		p += ROCE_ATMACK_LEN;
	}
	if (hdrs & ROCE_HDR_IMMDT) {
		memcpy(&pkt->imm, p, sizeof(pkt->imm));
		p += ROCE_IMMDT_LEN;
	}
	if (hdrs & ROCE_HDR_IETH)
		pkt->inv_rkey = get32(p);
}

enum roce_parse_err roce_parse(struct roce_pkt *pkt, const u8 *buf, u32 len)
{
	unsigned int hdrs, hdr_len;

	memset(pkt, 0, sizeof(*pkt));
	if (len < ROCE_BTH_LEN + ROCE_ICRC_LEN)
		return ROCE_ERR_TRUNCATED;
	pkt->opcode = buf[0];
	hdrs = roce_opcode_hdrs(pkt->opcode);
	if (!hdrs)
		return ROCE_ERR_OPCODE;
	if (buf[1] & 0xf)
		return ROCE_ERR_VERSION;
	hdr_len = roce_hdr_len(pkt->opcode);
	if (len < hdr_len + ROCE_ICRC_LEN)
		return ROCE_ERR_TRUNCATED;

	pkt->se = buf[1] & 0x80;
	pkt->mig = buf[1] & 0x40;
	pkt->pad = (buf[1] >> 4) & 3;
	pkt->pkey = get16(buf + 2);
	/* IBA 10.9.3: the port's one P_Key, 0xffff, matches its partition's. */
	if ((pkt->pkey & 0x7fff) != (ROCE_DEFAULT_PKEY & 0x7fff))
		return ROCE_ERR_PKEY;
	pkt->dqpn = get24(buf + 5);
	pkt->ackreq = buf[8] & 0x80;
	pkt->psn = get24(buf + 9);
	roce_parse_ext(pkt, hdrs, buf + ROCE_BTH_LEN);

	pkt->payload_len = len - hdr_len - ROCE_ICRC_LEN;
	if (pkt->pad > pkt->payload_len ||
	    (pkt->pad && !(hdrs & ROCE_HDR_PAYLOAD)))
		return ROCE_ERR_PAD;
	pkt->payload_len -= pkt->pad;
	if (pkt->payload_len && !(hdrs & ROCE_HDR_PAYLOAD))
		return ROCE_ERR_TRUNCATED;
	return ROCE_OK;
}

unsigned int roce_build(u8 *buf, const struct roce_pkt *pkt)
{
	unsigned int hdrs = roce_opcode_hdrs(pkt->opcode);
	u8 *p = buf + ROCE_BTH_LEN;

	buf[0] = pkt->opcode;
	buf[1] = (pkt->se ? 0x80 : 0) | (pkt->mig ? 0x40 : 0) |
		 (pkt->pad & 3) << 4;
	put16(buf + 2, pkt->pkey);
	buf[4] = 0;
	put24(buf + 5, pkt->dqpn);
	buf[8] = pkt->ackreq ? 0x80 : 0;
	put24(buf + 9, pkt->psn);

	if (hdrs & ROCE_HDR_DETH) {
		put32(p, pkt->qkey);
		p[4] = 0;
		put24(p + 5, pkt->sqpn);
		p += ROCE_DETH_LEN;
	}
	if (hdrs & ROCE_HDR_XRCETH) {
		p[0] = 0;
		put24(p + 1, pkt->xrc_srqn);
		p += ROCE_XRCETH_LEN;
	}
	if (hdrs & ROCE_HDR_FETH) {
		put32(p, pkt->feth);
		p += ROCE_FETH_LEN;
	}
	if (hdrs & ROCE_HDR_RETH) {
		put64(p, pkt->va);
		put32(p + 8, pkt->rkey);
		put32(p + 12, pkt->dma_len);
		p += ROCE_RETH_LEN;
	}
	if (hdrs & ROCE_HDR_ATMETH) {
		put64(p, pkt->va);
		put32(p + 8, pkt->rkey);
		put64(p + 12, pkt->swap_add);
		put64(p + 20, pkt->compare);
		p += ROCE_ATMETH_LEN;
	}
	if (hdrs & ROCE_HDR_AETH) {
		p[0] = pkt->syndrome;
		put24(p + 1, pkt->msn);
		p += ROCE_AETH_LEN;
	}
	if (hdrs & ROCE_HDR_ATMACK) {
		put64(p, pkt->atomic_orig);
		p += ROCE_ATMACK_LEN;
	}
	if (hdrs & ROCE_HDR_IMMDT) {
		memcpy(p, &pkt->imm, sizeof(pkt->imm));
		p += ROCE_IMMDT_LEN;
	}
	if (hdrs & ROCE_HDR_IETH) {
		put32(p, pkt->inv_rkey);
		p += ROCE_IETH_LEN;
	}
	return p - buf;
}

#define ROCE_IPV4_LEN	20
#define ROCE_IPV6_LEN	40
#define ROCE_UDP_LEN	8
/* The CRC state after 8 bytes of 0xff: the masked LRH of IB. */
#define ROCE_ICRC_SEED	0xdebb20e3U

/*
 * IBA annex A17.8: the ICRC covers the IP and UDP headers with their
 * variant fields set to ones, the BTH with its FECN/BECN/reserved byte set
 * to ones, then everything up to the ICRC.
 */
/* The CRC of a packet's invariant fields, before the final inversion. */
static u32 roce_icrc_crc(const u8 *ip, bool ipv6, const u8 *udp, u32 udp_len)
{
	u8 hdr[ROCE_IPV6_LEN + ROCE_UDP_LEN + ROCE_BTH_LEN];
	u32 ip_len = ipv6 ? ROCE_IPV6_LEN : ROCE_IPV4_LEN;
	u32 n = ip_len + ROCE_UDP_LEN + ROCE_BTH_LEN, crc;

	memcpy(hdr, ip, ip_len);
	memcpy(hdr + ip_len, udp, ROCE_UDP_LEN + ROCE_BTH_LEN);
	if (ipv6) {
		hdr[0] |= 0x0f;			/* traffic class, flow label */
		hdr[1] = hdr[2] = hdr[3] = 0xff;
		hdr[7] = 0xff;			/* hop limit */
	} else {
		hdr[1] = 0xff;			/* TOS */
		hdr[8] = 0xff;			/* TTL */
		hdr[10] = hdr[11] = 0xff;	/* header checksum */
	}
	hdr[ip_len + 6] = hdr[ip_len + 7] = 0xff;	/* UDP checksum */
	hdr[ip_len + ROCE_UDP_LEN + 4] = 0xff;		/* FECN, BECN, resv6 */

	crc = roce_crc32(ROCE_ICRC_SEED, hdr, n);
	crc = roce_crc32(crc, udp + ROCE_UDP_LEN + ROCE_BTH_LEN,
			 udp_len - ROCE_UDP_LEN - ROCE_BTH_LEN - ROCE_ICRC_LEN);
	return crc;
}

u32 roce_icrc(const u8 *ip, bool ipv6, const u8 *udp, u32 udp_len)
{
	return ~roce_icrc_crc(ip, ipv6, udp, udp_len);
}

u32 roce_icrc_rxe_flush(const u8 *ip, bool ipv6, const u8 *udp, u32 udp_len)
{
	return ~roce_crc32(roce_icrc_crc(ip, ipv6, udp, udp_len),
			   udp + ROCE_UDP_LEN,
			   udp_len - ROCE_UDP_LEN - ROCE_ICRC_LEN);
}

bool roce_icrc_ok(const u8 *ip, bool ipv6, const u8 *udp, u32 udp_len)
{
	const u8 *p;
	u32 wire;

	if (udp_len < ROCE_UDP_LEN + ROCE_BTH_LEN + ROCE_ICRC_LEN)
		return false;
	p = udp + udp_len - ROCE_ICRC_LEN;
	wire = (u32)p[0] | (u32)p[1] << 8 | (u32)p[2] << 16 | (u32)p[3] << 24;
	if (roce_icrc(ip, ipv6, udp, udp_len) == wire)
		return true;
	return udp[ROCE_UDP_LEN] == (ROCE_RC | ROCE_FLUSH) &&
	       roce_icrc_rxe_flush(ip, ipv6, udp, udp_len) == wire;
}
