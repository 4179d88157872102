// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Responder resources: a ring of the newest @num accepted READs, atomics,
 * FLUSHes and ATOMIC WRITEs, indexed by the count of resources added.
 */

#include "rsrc.h"

static struct roce_rsrc *roce_rsrc_at(struct roce_rsrc_table *t, u32 id)
{
	return &t->rsrc[id % t->num];
}

/* Resources the table holds: the newest @num of those added. */
static u32 roce_rsrc_held(const struct roce_rsrc_table *t)
{
	return t->head < t->num ? t->head : t->num;
}

void roce_rsrc_reset(struct roce_rsrc_table *t, u32 num)
{
	memset(t, 0, sizeof(*t));
	t->num = num < 1 ? 1 : num > ROCE_RSRC_MAX ? ROCE_RSRC_MAX : num;
}

struct roce_rsrc *roce_rsrc_add(struct roce_rsrc_table *t,
				const struct roce_pkt *pkt, u32 mtu, u32 msn,
				u64 orig)
{
	u8 op = pkt->opcode & 0x1f;
	struct roce_rsrc *res = roce_rsrc_at(t, t->head);

	*res = (struct roce_rsrc) {
		.id = t->head,
		.op = op,
		.psn = pkt->psn,
		.npsn = op == ROCE_READ_REQ ? roce_num_pkts(pkt->dma_len, mtu) : 1,
		.msn = msn,
		.va = pkt->va,
		.rkey = pkt->rkey,
		.xrc_srqn = pkt->xrc_srqn,
		.len = op == ROCE_READ_REQ ? pkt->dma_len : 0,
		.orig = orig,
	};
	t->head++;
	if (t->head - t->send > t->num)
		t->send = t->head - t->num;
	return res;
}

/* True when the duplicate @pkt asks for @res's answers from its PSN on. */
static bool roce_rsrc_matches(const struct roce_rsrc *res,
			      const struct roce_pkt *pkt, u32 mtu, u32 d)
{
	u64 off = (u64)d * mtu;

	if ((pkt->opcode & 0x1f) != res->op || pkt->rkey != res->rkey ||
	    pkt->xrc_srqn != res->xrc_srqn)
		return false;
	if (res->op != ROCE_READ_REQ)
		return pkt->va == res->va;
	return pkt->va == res->va + off && (u64)pkt->dma_len + off == res->len;
}

struct roce_rsrc *roce_rsrc_again(struct roce_rsrc_table *t,
				  const struct roce_pkt *pkt, u32 mtu)
{
	for (u32 i = 1; i <= roce_rsrc_held(t); i++) {
		struct roce_rsrc *res = roce_rsrc_at(t, t->head - i);
		int d = roce_psn_diff(pkt->psn, res->psn);

		if (d < 0 || (u32)d >= res->npsn)
			continue;
		if (!roce_rsrc_matches(res, pkt, mtu, d))
			return NULL;
		if (res->next > (u32)d || res->next == res->npsn) {
			res->start = d;
			res->next = d;
		}
		if ((int)(res->id - t->send) < 0)
			t->send = res->id;
		return res;
	}
	return NULL;
}

struct roce_rsrc *roce_rsrc_pending(struct roce_rsrc_table *t)
{
	for (; t->send != t->head; t->send++) {
		struct roce_rsrc *res = roce_rsrc_at(t, t->send);

		if (res->next < res->npsn)
			return res;
	}
	return NULL;
}

void roce_rsrc_answer(struct roce_rsrc *res, u32 mtu, struct roce_pkt *pkt,
		      u64 *off)
{
	u32 i = res->next++;

	pkt->psn = roce_psn_add(res->psn, i);
	pkt->syndrome = ROCE_AETH_ACK;
	pkt->msn = res->msn;
	*off = 0;
	switch (res->op) {
	case ROCE_READ_REQ:
		*off = (u64)i * mtu;
		pkt->opcode = roce_msg_op(ROCE_MSG_READ_RESP, 0,
					  i == res->start, i == res->npsn - 1);
		pkt->payload_len = res->len - *off < mtu ? res->len - *off : mtu;
		break;
	case ROCE_CMP_SWAP:
	case ROCE_FETCH_ADD:
		pkt->opcode = ROCE_ATOMIC_ACK;
		pkt->atomic_orig = res->orig;
		break;
	default:			/* FLUSH, ATOMIC WRITE: empty */
		pkt->opcode = ROCE_READ_RESP_ONLY;
		break;
	}
}

void roce_rsrc_unanswer(struct roce_rsrc *res)
{
	if (res->next > res->start)
		res->next--;
}
