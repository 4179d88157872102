// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer harness for the responder resources of kernel/proto/rsrc.c: the
 * input is a script of table operations (reset, accept a request, a
 * duplicate, send answers, one of them twice) on requests the responder could have accepted
 * (a READ of at most 2 GiB, an MTU of 256..4096).  Whatever the script,
 * every answer lies inside its resource (PSN, offset, length), a READ's
 * answers are MTU-sized but the last, and a duplicate is answered only for
 * the same opcode and key.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rsrc.h"

#define CHECK(cond) do { if (!(cond)) abort(); } while (0)

/* max_msg_sz: a longer READ is refused before it reaches the table. */
#define MAX_READ_LEN	0x80000000U

static const u8 rd_atomic_ops[] = {
	ROCE_READ_REQ, ROCE_CMP_SWAP, ROCE_FETCH_ADD, ROCE_FLUSH,
	ROCE_ATOMIC_WRITE,
};

struct script {
	const u8 *data;
	size_t left;
};

static u64 take(struct script *s, unsigned int bytes)
{
	u64 v = 0;

	while (bytes-- && s->left) {
		v = v << 8 | *s->data++;
		s->left--;
	}
	return v;
}

static void take_request(struct script *s, struct roce_pkt *pkt, u32 psn_base)
{
	memset(pkt, 0, sizeof(*pkt));
	pkt->opcode = rd_atomic_ops[take(s, 1) % sizeof(rd_atomic_ops)];
	/* Near the last PSN, so that scripts cross the wrap. */
	pkt->psn = (psn_base + (u32)take(s, 1)) & ROCE_PSN_MASK;
	pkt->va = take(s, 1) % 4 ? take(s, 2) * 64 : take(s, 8);
	pkt->rkey = (u32)take(s, 1) % 3;
	pkt->dma_len = (u32)take(s, 4) % ((u64)MAX_READ_LEN + 1);
}

/* Sends the next answer of @res, checking it. */
static void answer(struct roce_rsrc *res, u32 mtu)
{
	u32 index = res->next;
	struct roce_pkt pkt;
	u64 off;

	memset(&pkt, 0, sizeof(pkt));
	roce_rsrc_answer(res, mtu, &pkt, &off);
	CHECK(res->next == index + 1 && index < res->npsn);
	CHECK(pkt.psn == ((res->psn + index) & ROCE_PSN_MASK));
	if (res->op != ROCE_READ_REQ)
		return;
	CHECK(off == (u64)index * mtu);
	CHECK(off + pkt.payload_len <= res->len);
	CHECK(index + 1 == res->npsn ? off + pkt.payload_len == res->len :
				       pkt.payload_len == mtu);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const u32 mtus[] = { 256, 512, 1024, 2048, 4096 };
	struct script s = { data, size };
	static struct roce_rsrc_table t;
	u32 mtu = mtus[take(&s, 1) % 5];
	u32 psn_base = ROCE_PSN_MASK - 128;
	struct roce_rsrc *res;
	struct roce_pkt pkt;

	roce_rsrc_reset(&t, (u32)take(&s, 1));
	while (s.left) {
		switch (take(&s, 1) % 5) {
		case 0:
			roce_rsrc_reset(&t, (u32)take(&s, 1));
			break;
		case 1:
			take_request(&s, &pkt, psn_base);
			res = roce_rsrc_add(&t, &pkt, mtu, (u32)take(&s, 3), 0);
			CHECK(res->npsn >= 1 && res->next == 0);
			break;
		case 2:
			take_request(&s, &pkt, psn_base);
			res = roce_rsrc_again(&t, &pkt, mtu);
			if (res) {
				CHECK(res->op == pkt.opcode && res->rkey == pkt.rkey);
				CHECK(res->next < res->npsn);
			}
			break;
		case 3:
			/* A budget of answers, as the kernel sends them. */
			for (u32 n = 1 + (u32)take(&s, 2); n &&
			     (res = roce_rsrc_pending(&t)); n--)
				answer(res, mtu);
			break;
		case 4:
			/* One that did not go out (ODP): sent again next. */
			res = roce_rsrc_pending(&t);
			if (res) {
				answer(res, mtu);
				roce_rsrc_unanswer(res);
				CHECK(roce_rsrc_pending(&t) == res);
				answer(res, mtu);
			}
			break;
		}
	}
	return 0;
}
