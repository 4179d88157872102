// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests of kernel/proto/roce.c in user space: header round trips for
 * every opcode, every truncation refused, unknown opcodes and transports,
 * pad counts, PSN arithmetic, message segmentation and sequencing
 * (kernel/proto/seq.c), the responder resources (kernel/proto/rsrc.c),
 * the work request table against the packets (kernel/proto/wr.c),
 * and the ICRC of packets built by an
 * independent implementation (icrc_vectors.py, zlib) on standard input, or
 * of packets captured on a link (--capture).
 */
#include <stdio.h>
#include <stdlib.h>

#include "rsrc.h"
#include "seq.h"
#include "wr.h"

static int failures;

#define EXPECT(cond, ...) do {						\
	if (!(cond)) {							\
		printf("# FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);	\
		printf(__VA_ARGS__);					\
		printf("\n");						\
		failures++;						\
	}								\
} while (0)

static struct roce_pkt sample(u8 opcode, u32 payload)
{
	return (struct roce_pkt) {
		.opcode = opcode, .se = true, .ackreq = true,
		.pad = roce_pad(payload), .pkey = 0xffff, .dqpn = 0xabcdef,
		.psn = 0xfffffe, .qkey = 0x80010000, .sqpn = 0x123456,
		.va = 0x1122334455667788ULL, .rkey = 0xdeadbeef,
		.dma_len = 0x10000, .swap_add = 0x0102030405060708ULL,
		.compare = 0x8877665544332211ULL, .syndrome = 0x1f,
		.xrc_srqn = 0xfedcba,
		.msn = 0x654321, .atomic_orig = 42, .imm = 0x78563412,
		.inv_rkey = 0xcafe, .feth = 0x11, .payload_len = payload,
	};
}

static bool same_fields(const struct roce_pkt *a, const struct roce_pkt *b,
			unsigned int hdrs)
{
	return a->opcode == b->opcode && a->se == b->se &&
	       a->ackreq == b->ackreq && a->pad == b->pad &&
	       a->pkey == b->pkey && a->dqpn == b->dqpn && a->psn == b->psn &&
	       a->payload_len == b->payload_len &&
	       (!(hdrs & ROCE_HDR_DETH) ||
		(a->qkey == b->qkey && a->sqpn == b->sqpn)) &&
	       (!(hdrs & ROCE_HDR_XRCETH) || a->xrc_srqn == b->xrc_srqn) &&
	       (!(hdrs & (ROCE_HDR_RETH | ROCE_HDR_ATMETH)) ||
		(a->va == b->va && a->rkey == b->rkey)) &&
	       (!(hdrs & ROCE_HDR_RETH) || a->dma_len == b->dma_len) &&
	       (!(hdrs & ROCE_HDR_ATMETH) ||
		(a->swap_add == b->swap_add && a->compare == b->compare)) &&
	       (!(hdrs & ROCE_HDR_AETH) ||
		(a->syndrome == b->syndrome && a->msn == b->msn)) &&
	       (!(hdrs & ROCE_HDR_ATMACK) || a->atomic_orig == b->atomic_orig) &&
	       (!(hdrs & ROCE_HDR_IMMDT) || a->imm == b->imm) &&
	       (!(hdrs & ROCE_HDR_IETH) || a->inv_rkey == b->inv_rkey) &&
	       (!(hdrs & ROCE_HDR_FETH) || a->feth == b->feth);
}

static void test_round_trips(void)
{
	int known = 0;

	for (int opcode = 0; opcode < 256; opcode++) {
		unsigned int hdrs = roce_opcode_hdrs(opcode);
		u32 payload = hdrs & ROCE_HDR_PAYLOAD ? 37 : 0;
		struct roce_pkt in = sample(opcode, payload), out;
		u8 buf[256] = {};
		unsigned int len;

		if (!hdrs) {
			buf[0] = opcode;
			EXPECT(roce_parse(&out, buf, sizeof(buf)) == ROCE_ERR_OPCODE,
			       "opcode 0x%02x accepted", opcode);
			continue;
		}
		known++;
		len = roce_build(buf, &in);
		EXPECT(len == roce_hdr_len(opcode), "opcode 0x%02x: %u", opcode, len);
		len += payload + in.pad + ROCE_ICRC_LEN;
		EXPECT(roce_parse(&out, buf, len) == ROCE_OK, "opcode 0x%02x", opcode);
		EXPECT(same_fields(&in, &out, hdrs), "opcode 0x%02x fields", opcode);
		/* Every shorter packet is refused, never read past. */
		for (unsigned int n = 0; n < len - payload - in.pad; n++)
			EXPECT(roce_parse(&out, buf, n) != ROCE_OK,
			       "opcode 0x%02x truncated to %u", opcode, n);
	}
	/* RC 25 operations, UC 12, UD 2, XRC 25. */
	EXPECT(known == 64, "%d opcodes known", known);
	printf("# %d opcodes: build/parse round trip, every truncation refused\n", known);
}

static void test_malformed(void)
{
	struct roce_pkt pkt = sample(ROCE_UD | ROCE_SEND_ONLY, 0), out;
	u8 buf[64] = {};
	unsigned int len = roce_build(buf, &pkt) + ROCE_ICRC_LEN;

	buf[1] |= 0x01;				/* TVer 1 */
	EXPECT(roce_parse(&out, buf, len) == ROCE_ERR_VERSION, "TVer");
	buf[1] &= ~0x0f;
	buf[2] = 0x7f;				/* P_Key 0x7fff: a limited member */
	EXPECT(roce_parse(&out, buf, len) == ROCE_OK, "P_Key 0x7fff");
	buf[3] = 0xfe;				/* P_Key 0x7ffe: another partition */
	EXPECT(roce_parse(&out, buf, len) == ROCE_ERR_PKEY, "P_Key");
	buf[2] = buf[3] = 0xff;
	buf[1] |= 0x30;				/* pad 3, no payload */
	EXPECT(roce_parse(&out, buf, len) == ROCE_ERR_PAD, "pad > payload");

	pkt = sample(ROCE_RC | ROCE_ACK, 0);
	len = roce_build(buf, &pkt) + ROCE_ICRC_LEN;
	EXPECT(roce_parse(&out, buf, len + 4) != ROCE_OK, "payload on an ACK");
	buf[1] |= 0x10;
	EXPECT(roce_parse(&out, buf, len) == ROCE_ERR_PAD, "pad on an ACK");
	EXPECT(!roce_opcode_hdrs(ROCE_UC | ROCE_READ_REQ), "UC READ");
	EXPECT(!roce_opcode_hdrs(ROCE_UD | ROCE_WRITE_ONLY), "UD WRITE");
	EXPECT(!roce_opcode_hdrs(0x40 | ROCE_SEND_ONLY), "RD");
	EXPECT(roce_hdr_len(ROCE_XRC | ROCE_SEND_ONLY) == ROCE_BTH_LEN + 4 &&
	       roce_hdr_len(ROCE_XRC | ROCE_WRITE_ONLY) ==
	       roce_hdr_len(ROCE_RC | ROCE_WRITE_ONLY) + 4 &&
	       roce_hdr_len(ROCE_XRC | ROCE_ACK) == roce_hdr_len(ROCE_RC | ROCE_ACK),
	       "XRCETH in XRC requests only");
	pkt = sample(ROCE_XRC | ROCE_WRITE_ONLY, 0);
	len = roce_build(buf, &pkt);
	EXPECT(buf[ROCE_BTH_LEN] == 0 && buf[ROCE_BTH_LEN + 1] == 0xfe &&
	       buf[ROCE_BTH_LEN + 3] == 0xba && buf[ROCE_BTH_LEN + 4] == 0x11,
	       "XRCETH between BTH and RETH");
	printf("# TVer, P_Key of another partition, pad, payload on ACK, opcodes of the wrong transport: refused; XRCETH where IBA puts it\n");
}

static void test_psn(void)
{
	EXPECT(roce_psn_diff(0, 0xffffff) == 1, "wrap forward");
	EXPECT(roce_psn_diff(0xffffff, 0) == -1, "wrap back");
	EXPECT(roce_psn_diff(0x7fffff, 0) == 0x7fffff, "half");
	EXPECT(roce_psn_diff(0x800000, 0) == -0x800000, "half + 1");
	EXPECT(roce_psn_add(0xfffffe, 3) == 1, "add");
	EXPECT(roce_psn_span_ok(5, 5) && roce_psn_span_ok(0xfffff0, 0x7ffff0),
	       "spans up to half the space, across the wrap");
	EXPECT(!roce_psn_span_ok(0xfffff0, 0x7ffff1) && !roce_psn_span_ok(5, 4),
	       "spans beyond half the space");
	printf("# PSN arithmetic with 24-bit wrap; outstanding spans up to 2^23\n");
}

static int unhex(const char *s, u8 *buf, int max)
{
	int n = 0;
	unsigned int b;

	while (n < max && sscanf(s + 2 * n, "%2x", &b) == 1)
		buf[n++] = b;
	return n;
}

/*
 * Packets on standard input (from icrc_vectors.py, or captured): the ICRC
 * matches, and a flipped bit does not.
 */
static void test_icrc_vectors(int min)
{
	char line[4096];
	int count = 0;

	while (fgets(line, sizeof(line), stdin)) {
		u8 pkt[2048];
		int version = line[0] - '0';
		int len = unhex(line + 2, pkt, sizeof(pkt));
		int ip_len = version == 6 ? 40 : 20;
		const u8 *udp = pkt + ip_len;
		u32 udp_len = len - ip_len;
		struct roce_pkt out;

		EXPECT(roce_parse(&out, udp + 8, udp_len - 8) == ROCE_OK,
		       "vector %d parses", count);
		EXPECT(roce_icrc_ok(pkt, version == 6, udp, udp_len),
		       "vector %d: ICRC", count);
		pkt[len - 5] ^= 0x01;
		EXPECT(!roce_icrc_ok(pkt, version == 6, udp, udp_len),
		       "vector %d: flipped bit accepted", count);
		count++;
	}
	EXPECT(count >= min, "%d packets, want %d", count, min);
	printf("# ICRC of %d packets matches\n", count);
}

static void put_icrc(u8 *p, u32 icrc)
{
	for (int i = 0; i < 4; i++)
		p[i] = icrc >> (8 * i);
}

/*
 * rdma_rxe's FLUSH ICRC is accepted for FLUSH and for nothing else; the
 * specification's is accepted for both.
 */
static void test_icrc_rxe_flush(void)
{
	static const u8 ops[] = { ROCE_RC | ROCE_FLUSH, ROCE_RC | ROCE_WRITE_ONLY };

	for (unsigned int i = 0; i < sizeof(ops); i++) {
		u8 pkt[20 + 8 + 64] = { 0x45 };
		u8 *udp = pkt + 20;
		struct roce_pkt p = sample(ops[i], 0);
		u32 udp_len = 8 + roce_build(udp + 8, &p) + ROCE_ICRC_LEN;
		u32 spec, rxe;

		spec = roce_icrc(pkt, false, udp, udp_len);
		rxe = roce_icrc_rxe_flush(pkt, false, udp, udp_len);
		EXPECT(spec != rxe, "opcode %#x: the two forms differ", ops[i]);
		put_icrc(udp + udp_len - 4, spec);
		EXPECT(roce_icrc_ok(pkt, false, udp, udp_len),
		       "opcode %#x: the IBA's ICRC", ops[i]);
		put_icrc(udp + udp_len - 4, rxe);
		EXPECT(roce_icrc_ok(pkt, false, udp, udp_len) == (i == 0),
		       "opcode %#x: rdma_rxe's FLUSH ICRC", ops[i]);
	}
	printf("# rdma_rxe's FLUSH ICRC: for FLUSH only\n");
}

/* Segments @npkts packets of @msg the way the requester does. */
static void segment(enum roce_msg msg, unsigned int ext, int npkts, u8 *ops)
{
	for (int i = 0; i < npkts; i++)
		ops[i] = roce_msg_op(msg, ext, i == 0, i == npkts - 1);
}

static bool is_first_or_middle(u8 op)
{
	return op == ROCE_SEND_FIRST || op == ROCE_SEND_MIDDLE ||
	       op == ROCE_WRITE_FIRST || op == ROCE_WRITE_MIDDLE;
}

static void test_seq(void)
{
	static const enum roce_msg msgs[] = { ROCE_MSG_SEND, ROCE_MSG_WRITE };
	static const unsigned int exts[] = { 0, ROCE_HDR_IMMDT, ROCE_HDR_IETH };
	u8 ops[5];

	/* Every segmented message is a valid sequence, whatever came before. */
	for (int m = 0; m < 2; m++)
		for (int e = 0; e < 3 - m; e++)	/* no WRITE with IETH */
			for (int n = 1; n <= 5; n++) {
				u8 prev = ROCE_OP_NONE;

				segment(msgs[m], exts[e], n, ops);
				for (int i = 0; i < n; i++) {
					EXPECT(roce_seq_ok(prev, ops[i]),
					       "msg %d ext %#x: packet %d of %d (0x%x after 0x%x)",
					       m, exts[e], i, n, ops[i], prev);
					prev = roce_op_ends_msg(ops[i]) ? ROCE_OP_NONE : ops[i];
				}
				EXPECT(prev == ROCE_OP_NONE, "msg %d of %d ends", m, n);
			}
	EXPECT(roce_msg_op(ROCE_MSG_SEND, ROCE_HDR_IMMDT, true, true) == ROCE_SEND_ONLY_IMM, "SEND_ONLY_IMM");
	EXPECT(roce_msg_op(ROCE_MSG_SEND, ROCE_HDR_IETH, false, true) == ROCE_SEND_LAST_INV, "SEND_LAST_INV");
	EXPECT(roce_msg_op(ROCE_MSG_SEND, ROCE_HDR_IETH, true, true) == ROCE_SEND_ONLY_INV, "SEND_ONLY_INV");
	EXPECT(roce_msg_op(ROCE_MSG_WRITE, ROCE_HDR_IMMDT, false, true) == ROCE_WRITE_LAST_IMM, "WRITE_LAST_IMM");
	EXPECT(roce_msg_op(ROCE_MSG_READ_RESP, 0, true, false) == ROCE_READ_RESP_FIRST, "READ_RESP_FIRST");

	/* Exhaustively: inside a message only its continuation; between
	 * messages anything but a continuation. */
	for (int prev = 0; prev < 32; prev++)
		for (int op = 0; op < 32; op++) {
			bool in_send = prev == ROCE_SEND_FIRST || prev == ROCE_SEND_MIDDLE;
			bool in_write = prev == ROCE_WRITE_FIRST || prev == ROCE_WRITE_MIDDLE;
			bool cont_send = op == ROCE_SEND_MIDDLE || op == ROCE_SEND_LAST ||
					 op == ROCE_SEND_LAST_IMM || op == ROCE_SEND_LAST_INV;
			bool cont_write = op == ROCE_WRITE_MIDDLE || op == ROCE_WRITE_LAST ||
					  op == ROCE_WRITE_LAST_IMM;
			bool want = in_send ? cont_send : in_write ? cont_write :
				    !cont_send && !cont_write;

			EXPECT(roce_seq_ok(in_send || in_write ? prev : ROCE_OP_NONE,
					   op) == want, "0x%x after 0x%x", op, prev);
		}

	for (int op = 0; op < 32; op++) {
		if (is_first_or_middle(op)) {
			EXPECT(roce_payload_ok(op, 1024, 1024) && !roce_payload_ok(op, 1023, 1024) &&
			       !roce_payload_ok(op, 1025, 1024), "full packets only: 0x%x", op);
		}
		EXPECT(!roce_payload_ok(op, 1025, 1024), "beyond the MTU: 0x%x", op);
	}
	EXPECT(!roce_payload_ok(ROCE_SEND_LAST, 0, 1024), "empty LAST");
	EXPECT(roce_payload_ok(ROCE_SEND_ONLY, 0, 1024), "empty ONLY");
	EXPECT(roce_num_pkts(0, 1024) == 1 && roce_num_pkts(1024, 1024) == 1 &&
	       roce_num_pkts(1025, 1024) == 2 && roce_num_pkts(1ULL << 31, 256) == 1U << 23,
	       "packet counts");
	EXPECT(roce_aeth_kind(0x1f) == ROCE_AETH_KIND_ACK &&
	       roce_aeth_kind(0x2e) == ROCE_AETH_KIND_RNR && roce_aeth_value(0x2e) == 0x0e &&
	       roce_aeth_kind(0x60) == ROCE_AETH_KIND_NAK &&
	       roce_aeth_kind(0x40) == ROCE_AETH_KIND_RESERVED, "AETH syndromes");
	EXPECT(roce_op_is_response(ROCE_ACK) && roce_op_is_response(ROCE_READ_RESP_MIDDLE) &&
	       !roce_op_is_response(ROCE_READ_REQ) && !roce_op_is_response(ROCE_CMP_SWAP),
	       "responses");
	printf("# segmentation, opcode sequences (all 32 x 32), payload lengths, AETH kinds\n");
}

/*
 * The work request table and the packets agree: every packet of every
 * segmented SEND and WRITE maps back to its opcode (the immediate on the
 * last packet only) and its place in the message; one-packet requests
 * map back to the row that names them; nothing else is a request.
 */
static void test_wr(void)
{
	static const u32 data_wrs[] = {
		ROCE_WR_SEND, ROCE_WR_SEND_WITH_IMM, ROCE_WR_SEND_WITH_INV,
		ROCE_WR_RDMA_WRITE, ROCE_WR_RDMA_WRITE_WITH_IMM,
	};
	bool request[32] = { false };
	u32 opcode;
	u8 part;

	for (int i = 0; i < 5; i++) {
		const struct roce_wr_op *op = roce_wr_op(data_wrs[i]);
		bool send = op->kind == ROCE_KIND_SEND;
		enum roce_msg msg = send ? ROCE_MSG_SEND : ROCE_MSG_WRITE;

		for (int first = 0; first < 2; first++)
			for (int last = 0; last < 2; last++) {
				u8 pkt = roce_msg_op(msg, roce_wr_last_hdr(op), first, last);
				u8 want = first ? (last ? ROCE_PART_WHOLE : ROCE_PART_FIRST) :
					  (last ? ROCE_PART_LAST : ROCE_PART_MIDDLE);
				/* Only the last packet tells the variant. */
				u32 want_wr = last ? data_wrs[i] :
					      send ? ROCE_WR_SEND : ROCE_WR_RDMA_WRITE;

				EXPECT(roce_wr_of_pkt(pkt, &opcode, &part) &&
				       opcode == want_wr && part == want,
				       "packet 0x%x: wr %u part %u", pkt, opcode, part);
				request[pkt] = true;
			}
	}
	for (u32 wr = 0; wr < 32; wr++) {
		const struct roce_wr_op *op = roce_wr_op(wr);

		if (!op->roce_op)
			continue;
		EXPECT(op->response && roce_op_is_rd_atomic(op->roce_op) &&
		       roce_wr_of_pkt(op->roce_op, &opcode, &part) &&
		       opcode == wr && part == ROCE_PART_WHOLE,
		       "wr %u <-> packet 0x%x", wr, op->roce_op);
		request[op->roce_op] = true;
	}
	for (int pkt = 0; pkt < 256; pkt++)
		EXPECT((pkt < 32 && request[pkt]) == roce_wr_of_pkt(pkt, &opcode, &part),
		       "packet 0x%x is a request softrma executes: %d", pkt,
		       pkt < 32 && request[pkt]);
	EXPECT(roce_wr_op(10)->kind == ROCE_KIND_NONE && !roce_wr_op(10)->qp_types &&
	       !roce_wr_op(0xffffffff)->qp_types, "invalid opcodes");
	for (u32 wr = 0; wr <= ROCE_WR_REG_MR; wr++) {
		const struct roce_wr_op *op = roce_wr_op(wr);

		EXPECT(!op->local || (!op->roce_op && !op->recv && !op->response),
		       "wr %u: a local operation sends nothing", wr);
		EXPECT(!op->inv || (op->kind == ROCE_KIND_SEND &&
				    op->qp_types == (1 << ROCE_QPT_RC |
						     1 << ROCE_QPT_XRC)),
		       "wr %u: only RC and XRC SENDs invalidate (IBA 9.4.1.2)", wr);
		EXPECT(!(op->qp_types & 1 << ROCE_QPT_RC) ||
		       op->kind == ROCE_KIND_BIND_MW ||
		       (op->qp_types & 1 << ROCE_QPT_XRC),
		       "wr %u: XRC posts what RC posts, but binds no window", wr);
	}
	EXPECT(roce_wr_op(ROCE_WR_SEND)->qp_types & 1 << ROCE_QPT_UD &&
	       !(roce_wr_op(ROCE_WR_RDMA_WRITE)->qp_types & 1 << ROCE_QPT_UD) &&
	       !(roce_wr_op(ROCE_WR_RDMA_READ)->qp_types & 1 << ROCE_QPT_UC),
	       "QP types");
	printf("# work request table against the packets: the packets of SEND and WRITE with and without immediate, the one-packet requests, all 256 opcodes\n");
}

static struct roce_pkt read_req(u32 psn, u64 va, u32 len)
{
	return (struct roce_pkt) { .opcode = ROCE_READ_REQ, .psn = psn,
				   .va = va, .rkey = 7, .dma_len = len };
}

/* Sends every answer left; returns how many, and checks they are in order. */
static int answer_all(struct roce_rsrc_table *t, u32 *psns, int max)
{
	struct roce_rsrc *res;
	struct roce_pkt pkt;
	int n = 0;
	u64 off;

	while ((res = roce_rsrc_pending(t)) && n < max) {
		roce_rsrc_answer(res, 1024, &pkt, &off);
		psns[n++] = pkt.psn;
	}
	return n;
}

static void test_rsrc(void)
{
	struct roce_rsrc_table t;
	struct roce_rsrc *res;
	struct roce_pkt pkt, dup, atomic = { .opcode = ROCE_FETCH_ADD,
		.psn = 0xffffff, .va = 64, .rkey = 7 };
	u32 psns[64];
	u64 off;
	int n;

	roce_rsrc_reset(&t, 0);
	EXPECT(t.num == 1, "max_dest_rd_atomic 0 keeps one resource");
	roce_rsrc_reset(&t, 4);
	EXPECT(!roce_rsrc_pending(&t), "a new table has nothing to send");

	/* A READ of 3000 bytes at MTU 1024: FIRST, MIDDLE, LAST. */
	pkt = read_req(0xfffffe, 4096, 3000);
	roce_rsrc_add(&t, &pkt, 1024, 5, 0);
	res = roce_rsrc_pending(&t);
	roce_rsrc_answer(res, 1024, &pkt, &off);
	EXPECT(pkt.opcode == ROCE_READ_RESP_FIRST && pkt.psn == 0xfffffe &&
	       pkt.payload_len == 1024 && off == 0 && pkt.msn == 5, "first");
	roce_rsrc_answer(res, 1024, &pkt, &off);
	EXPECT(pkt.opcode == ROCE_READ_RESP_MIDDLE && pkt.psn == 0xffffff, "middle");
	roce_rsrc_unanswer(res);
	EXPECT(roce_rsrc_pending(&t) == res, "one that did not go is left");
	roce_rsrc_answer(res, 1024, &pkt, &off);
	EXPECT(pkt.opcode == ROCE_READ_RESP_MIDDLE && pkt.psn == 0xffffff &&
	       off == 1024, "and goes again");
	roce_rsrc_answer(res, 1024, &pkt, &off);
	EXPECT(pkt.opcode == ROCE_READ_RESP_LAST && pkt.psn == 0 &&
	       pkt.payload_len == 952 && off == 2048, "last, across the PSN wrap");
	EXPECT(!roce_rsrc_pending(&t), "all sent");

	/* The requester asks again for the last two, as softrma's does. */
	dup = read_req(0xffffff, 4096 + 1024, 3000 - 1024);
	EXPECT(roce_rsrc_again(&t, &dup, 1024) == res, "a duplicate of its tail");
	roce_rsrc_answer(roce_rsrc_pending(&t), 1024, &pkt, &off);
	EXPECT(pkt.opcode == ROCE_READ_RESP_FIRST && pkt.psn == 0xffffff &&
	       off == 1024, "answered again from its PSN, as a new message");
	roce_rsrc_answer(res, 1024, &pkt, &off);
	EXPECT(pkt.opcode == ROCE_READ_RESP_LAST && !roce_rsrc_pending(&t), "to its end");

	/* Duplicates that ask for anything else get nothing. */
	dup = read_req(0xffffff, 4096, 3000 - 1024);
	EXPECT(!roce_rsrc_again(&t, &dup, 1024), "another address");
	dup = read_req(0xffffff, 4096 + 1024, 3000);
	EXPECT(!roce_rsrc_again(&t, &dup, 1024), "beyond the READ");
	dup = read_req(0xfffffe, 4096, 3000);
	dup.rkey = 8;
	EXPECT(!roce_rsrc_again(&t, &dup, 1024), "another key");
	dup = read_req(0xfffffe, 4096, 3000);
	dup.xrc_srqn = 3;
	EXPECT(!roce_rsrc_again(&t, &dup, 1024), "another XRC SRQ");
	dup = read_req(1, 4096, 3000);
	EXPECT(!roce_rsrc_again(&t, &dup, 1024), "a PSN no READ took");
	dup = atomic;
	dup.psn = 0xfffffe;
	EXPECT(!roce_rsrc_again(&t, &dup, 1024), "an atomic at a READ's PSN");
	EXPECT(!roce_rsrc_pending(&t), "none of them is answered");

	/* An atomic: its result again, never executed twice. */
	roce_rsrc_add(&t, &atomic, 1024, 6, 99);
	n = answer_all(&t, psns, 64);
	EXPECT(n == 1 && psns[0] == 0xffffff, "the atomic's answer");
	EXPECT(roce_rsrc_again(&t, &atomic, 1024), "its duplicate");
	res = roce_rsrc_pending(&t);
	roce_rsrc_answer(res, 1024, &pkt, &off);
	EXPECT(pkt.opcode == ROCE_ATOMIC_ACK && pkt.atomic_orig == 99, "the saved result");

	/* Answers in order, the oldest restarted first; one duplicate of
	 * a READ whose answers are still to come changes nothing. */
	roce_rsrc_reset(&t, 4);
	for (u32 i = 0; i < 3; i++) {
		pkt = read_req(10 * i, 0, 2048);
		roce_rsrc_add(&t, &pkt, 1024, i, 0);
	}
	dup = read_req(11, 1024, 1024);
	EXPECT(roce_rsrc_again(&t, &dup, 1024), "a READ not answered yet");
	n = answer_all(&t, psns, 64);
	EXPECT(n == 6 && psns[0] == 0 && psns[2] == 10 && psns[5] == 21,
	       "each answer once, in order: %d", n);
	dup = read_req(1, 1024, 1024);
	roce_rsrc_again(&t, &dup, 1024);
	n = answer_all(&t, psns, 64);
	EXPECT(n == 1 && psns[0] == 1, "a restart answers only what was asked");

	/* The table keeps max_dest_rd_atomic resources: a fifth READ pushes
	 * out the first, answered or not. */
	for (u32 i = 3; i < 5; i++) {
		pkt = read_req(10 * i, 0, 2048);
		roce_rsrc_add(&t, &pkt, 1024, i, 0);
	}
	dup = read_req(0, 0, 2048);
	EXPECT(!roce_rsrc_again(&t, &dup, 1024), "the oldest is gone");
	n = answer_all(&t, psns, 64);
	EXPECT(n == 4 && psns[0] == 30, "the two new ones: %d", n);
	roce_rsrc_reset(&t, 2);
	for (u32 i = 0; i < 3; i++) {
		pkt = read_req(10 * i, 0, 2048);
		roce_rsrc_add(&t, &pkt, 1024, i, 0);
	}
	n = answer_all(&t, psns, 64);
	EXPECT(n == 4 && psns[0] == 10, "an unanswered oldest leaves unanswered: %d", n);
	printf("# responder resources: answers in order, duplicates only of what was accepted\n");
}

/* usage: roce_test < vectors, or roce_test --capture N < captured packets */
int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--capture")) {
		test_icrc_vectors(atoi(argv[2]));
		return failures ? 1 : 0;
	}
	test_round_trips();
	test_malformed();
	test_psn();
	test_seq();
	test_wr();
	test_rsrc();
	test_icrc_rxe_flush();
	test_icrc_vectors(100);
	return failures ? 1 : 0;
}
