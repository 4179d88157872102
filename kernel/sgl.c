// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The SGL mover: scatter/gather lists resolved to MRs (each segment keeps
 * its MR's object, not its registration) or to kernel memory, and the one
 * copy between two lists.  An MR is entered (its users count) only for the
 * copy itself, so that a deregistration waits for copies, never for lists.
 */

#include <linux/highmem.h>

#include "view.h"

void softrma_sgl_release(struct softrma_sgl *sgl)
{
	for (u32 i = 0; i < sgl->num; i++) {
		if (sgl->seg[i].mr)
			softrma_mr_unref(sgl->seg[i].mr);
		sgl->seg[i].mr = NULL;
	}
	sgl->num = 0;
}

/* Makes @mr, checked and in use by the caller, a segment of a list. */
static struct softrma_seg softrma_seg_mr(struct softrma_mr *mr, u64 iova,
					 u32 len)
{
	refcount_inc(&mr->ref);
	return (struct softrma_seg) {
		.mr = mr, .addr = iova, .key = mr->key, .gen = mr->gen,
		.len = len,
	};
}

/*
 * Resolves @num SGEs (a kernel copy) against the MRs of @pd with @access, in
 * order, up to the first whose key, PD, access or bounds do not hold: returns
 * how many were taken.  Zero-length SGEs name no memory and are skipped.
 */
static u32 softrma_sgl_take(struct softrma_sgl *sgl, struct softrma_dev *sdev,
			    struct ib_pd *pd, const struct softrma_sge *sge,
			    u32 num, int access)
{
	struct softrma_mr *mr;
	u32 i;

	sgl->num = 0;
	sgl->length = 0;
	for (i = 0; i < num; i++) {
		if (!sge[i].length)
			continue;
		mr = softrma_mr_get(sdev, pd, sge[i].lkey, sge[i].addr,
				    sge[i].length, access);
		if (IS_ERR_OR_NULL(mr))
			break;
		sgl->seg[sgl->num++] = softrma_seg_mr(mr, sge[i].addr,
						      sge[i].length);
		sgl->length += sge[i].length;
		softrma_mr_put(mr);
	}
	return i;
}

/* Whether @num SGEs fit in @sgl and in a message. */
static bool softrma_sgl_fits(const struct softrma_sgl *sgl,
			     const struct softrma_sge *sge, u32 num)
{
	u64 total = 0;

	if (num > sgl->max)
		return false;
	for (u32 i = 0; i < num; i++)
		total += sge[i].length;
	return total <= SOFTRMA_MAX_MSG_SZ;
}

/*
 * Resolves @num SGEs against the MRs of @pd with @access.  Returns -EINVAL
 * when they overflow the list or the message size limit, -EACCES on a bad
 * key or range.
 */
int softrma_sgl_resolve(struct softrma_sgl *sgl, struct softrma_dev *sdev,
			struct ib_pd *pd, const struct softrma_sge *sge,
			u32 num, int access)
{
	if (!softrma_sgl_fits(sgl, sge, num))
		return -EINVAL;
	if (softrma_sgl_take(sgl, sdev, pd, sge, num, access) == num)
		return 0;
	softrma_sgl_release(sgl);
	return -EACCES;
}

/*
 * As softrma_sgl_resolve(), for a receive, whose memory is checked only as
 * far as a message fills it (as rdma_rxe, siw and HCAs check it): the list
 * ends before the first SGE that fails its checks.  Returns -EINVAL as
 * softrma_sgl_resolve() does, 1 when the list ends early, else 0.
 */
int softrma_sgl_resolve_recv(struct softrma_sgl *sgl, struct softrma_dev *sdev,
			     struct ib_pd *pd, const struct softrma_sge *sge,
			     u32 num)
{
	if (!softrma_sgl_fits(sgl, sge, num))
		return -EINVAL;
	return softrma_sgl_take(sgl, sdev, pd, sge, num,
				IB_ACCESS_LOCAL_WRITE) < num;
}

/* A one-segment list over kernel memory: inline data, atomic results. */
void softrma_sgl_init_kbuf(struct softrma_sgl *sgl, void *buf, u32 len)
{
	sgl->seg[0] = (struct softrma_seg) { .kaddr = buf, .len = len };
	sgl->num = len ? 1 : 0;
	sgl->length = len;
}

/* A one-segment list over a received packet's payload (softrma_sgl.nofault). */
void softrma_sgl_init_packet(struct softrma_sgl *sgl, const void *payload,
			     u32 len)
{
	softrma_sgl_init_kbuf(sgl, (void *)payload, len);
	sgl->nofault = true;
}

/*
 * A one-segment list over an MR the responder has checked and uses; the
 * list references it until softrma_sgl_release().
 */
void softrma_sgl_init_mr(struct softrma_sgl *sgl, struct softrma_mr *mr,
			 u64 iova, u32 len)
{
	sgl->num = 0;
	sgl->length = len;
	if (len)
		sgl->seg[sgl->num++] = softrma_seg_mr(mr, iova, len);
}

struct softrma_cursor {
	const struct softrma_sgl *sgl;
	u32 seg;
	u32 off;		/* within the segment */
};

/*
 * The MR at the cursor, its byte there, and how much of the access from
 * there lies in that MR (@left of it in all): an ODP MR's pages to fault in.
 */
static struct softrma_mr *softrma_cursor_mr(const struct softrma_cursor *c,
					    u64 left, u64 *iova, u64 *ahead)
{
	const struct softrma_seg *seg = &c->sgl->seg[c->seg];

	*iova = seg->addr + c->off;
	*ahead = min_t(u64, seg->len - c->off, left);
	return seg->mr;
}

/*
 * Begins a piece at the cursors, @len bytes left: holds ODP MRs' pages.  A
 * packet's copy is one piece of a message that its MRs' segments hold:
 * what a work faults in for it goes on to their ends.
 */
static int softrma_cursor_hold(struct softrma_odp_hold *h,
			       const struct softrma_cursor *d,
			       const struct softrma_cursor *s, u64 len)
{
	bool nofault = d->sgl->nofault || s->sgl->nofault;
	u64 left = nofault ? U64_MAX : len, diova, dahead, siova, sahead;
	struct softrma_mr *dmr = softrma_cursor_mr(d, left, &diova, &dahead);
	struct softrma_mr *smr = softrma_cursor_mr(s, left, &siova, &sahead);

	h->nofault = nofault;
	return softrma_odp_hold(h, dmr, diova, dahead, smr, siova, sahead);
}

/* Maps the cursor's position; *len is how much lies in the mapping. */
static void *softrma_cursor_map(const struct softrma_cursor *c, u64 *len,
				struct page **page)
{
	const struct softrma_seg *seg = &c->sgl->seg[c->seg];

	*len = seg->len - c->off;
	if (!seg->mr) {
		*page = NULL;
		return seg->kaddr + c->off;
	}
	return softrma_mr_map(seg->mr, seg->addr + c->off, len, page);
}

/* The device reads @n bytes at the cursor, mapped from @page. */
static void softrma_cursor_reads(const struct softrma_cursor *c, u64 n,
				 struct page *page)
{
	const struct softrma_seg *seg = &c->sgl->seg[c->seg];

	if (page)
		softrma_mr_before_read(seg->mr, seg->addr + c->off, n, page);
}

/* The device writes @n bytes at the cursor, mapped at @addr from @page. */
static void softrma_cursor_writes(const struct softrma_cursor *c, u64 n,
				  const void *addr, struct page *page)
{
	const struct softrma_seg *seg = &c->sgl->seg[c->seg];

	if (page)
		softrma_mr_before_write(seg->mr, seg->addr + c->off, n, addr);
}

/* The device wrote @n bytes at the cursor, mapped at @addr from @page. */
static void softrma_cursor_wrote(const struct softrma_cursor *c, u64 n,
				 void *addr, struct page *page)
{
	const struct softrma_seg *seg = &c->sgl->seg[c->seg];

	if (page)
		softrma_mr_after_write(seg->mr, seg->addr + c->off, n, addr,
				       page);
}

static void softrma_cursor_advance(struct softrma_cursor *c, u32 n)
{
	c->off += n;
	if (c->off == c->sgl->seg[c->seg].len) {
		c->seg++;
		c->off = 0;
	}
}

/* False when the list ends first: its callers promised it would not. */
static bool softrma_cursor_valid(const struct softrma_cursor *c)
{
	return !WARN_ON_ONCE(c->seg >= c->sgl->num);
}

static bool softrma_cursor_seek(struct softrma_cursor *c, u64 off)
{
	u32 n;

	for (; off; off -= n) {
		if (!softrma_cursor_valid(c))
			return false;
		n = min_t(u64, c->sgl->seg[c->seg].len - c->off, off);
		softrma_cursor_advance(c, n);
	}
	return true;
}

/* Ends the accesses to the first @num segments of @sgl. */
static void softrma_sgl_exit(const struct softrma_sgl *sgl, u32 num)
{
	for (u32 i = 0; i < num; i++)
		if (sgl->seg[i].mr)
			softrma_mr_put(sgl->seg[i].mr);
}

/*
 * Begins an access to every MR of @sgl, which deregistration and
 * invalidation wait for; false, with none begun, when one is deregistered,
 * invalidated, registered again or bound again since the list was made.
 */
static bool softrma_sgl_enter(const struct softrma_sgl *sgl)
{
	const struct softrma_seg *seg = sgl->seg;

	for (u32 i = 0; i < sgl->num; i++) {
		if (seg[i].mr && !softrma_mr_enter(seg[i].mr, seg[i].key,
						   seg[i].gen)) {
			softrma_sgl_exit(sgl, i);
			return false;
		}
	}
	return true;
}

/* Both lists of a copy entered: 0, -EFAULT for @src, -EACCES for @dst. */
static int softrma_sgl_enter_copy(const struct softrma_sgl *dst,
				  const struct softrma_sgl *src)
{
	if (!softrma_sgl_enter(src))
		return -EFAULT;
	if (!softrma_sgl_enter(dst)) {
		softrma_sgl_exit(src, src->num);
		return -EACCES;
	}
	return 0;
}

static void softrma_sgl_exit_copy(const struct softrma_sgl *dst,
				  const struct softrma_sgl *src)
{
	softrma_sgl_exit(dst, dst->num);
	softrma_sgl_exit(src, src->num);
}

/*
 * A copy leaves its MRs and enters them again after this many bytes: an
 * invalidation, unbind or deregistration waits for that much of a message
 * at most, not for all of one (up to 2 GiB, and a local user can start one
 * after the other), while it may hold the QP's sq_lock that the receive
 * worker needs.
 */
#define SOFTRMA_SGL_ENTERED_BYTES	(1U << 20)

/*
 * The last piece of a copy: its final byte is stored once, after every
 * other byte of the copy.  Programs poll the last byte of an RDMA WRITE's
 * target (perftest's ib_write_lat, riostream, MPI eager buffers) and then
 * write next to it or over it; memcpy() stores some bytes twice (x86's
 * overlapping tail stores), so a byte it stored early could be stored
 * again after the program saw it and wrote its own.
 */
static void softrma_copy_last(u8 *dst, const u8 *src, u64 n)
{
	memcpy(dst, src, n - 1);
	smp_wmb();
	WRITE_ONCE(dst[n - 1], src[n - 1]);
}

/*
 * The one place softrma moves payload: @len bytes from @src_off bytes into
 * @src to @dst_off bytes into @dst, page by page, once.  Returns 0, or
 * -EACCES when an MR of @dst and -EFAULT when an MR of @src has been
 * deregistered or invalidated (before the copy or during it: then it stops
 * within SOFTRMA_SGL_ENTERED_BYTES) or is ODP and its page cannot be
 * faulted in, -EAGAIN when a list is a packet's (nofault) and an ODP page
 * is not there (a work faults it in; the bytes before it are copied), or
 * -EIO when a list does not hold what the offsets and @len name.  May
 * sleep and fault.
 */
int softrma_sgl_copy_at(struct softrma_sgl *dst, u64 dst_off,
			const struct softrma_sgl *src, u64 src_off, u64 len)
{
	struct softrma_cursor d = { .sgl = dst }, s = { .sgl = src };
	struct softrma_odp_hold hold;
	struct page *dpage, *spage;
	void *daddr, *saddr;
	u64 dlen, slen, n, entered = 0;
	int err;

	if (!len)
		return 0;
	err = softrma_sgl_enter_copy(dst, src);
	if (err)
		return err;
	if (!softrma_cursor_seek(&d, dst_off) ||
	    !softrma_cursor_seek(&s, src_off))
		err = -EIO;
	while (!err && len) {
		if (!softrma_cursor_valid(&d) || !softrma_cursor_valid(&s)) {
			err = -EIO;
			break;
		}
		if (entered >= SOFTRMA_SGL_ENTERED_BYTES) {
			softrma_sgl_exit_copy(dst, src);
			/* Messages go up to 2 GiB; callers run in process context. */
			cond_resched();
			err = softrma_sgl_enter_copy(dst, src);
			if (err)
				return err;
			entered = 0;
		}
		err = softrma_cursor_hold(&hold, &d, &s, len);
		if (err)
			break;
		daddr = softrma_cursor_map(&d, &dlen, &dpage);
		saddr = softrma_cursor_map(&s, &slen, &spage);
		n = min3(dlen, slen, len);
		softrma_cursor_reads(&s, n, spage);
		softrma_cursor_writes(&d, n, daddr, dpage);
		if (n == len)
			softrma_copy_last(daddr, saddr, n);
		else
			memcpy(daddr, saddr, n);
		softrma_cursor_wrote(&d, n, daddr, dpage);
		softrma_mr_unmap(saddr, spage);
		softrma_mr_unmap(daddr, dpage);
		softrma_odp_release(&hold);
		softrma_cursor_advance(&d, n);
		softrma_cursor_advance(&s, n);
		len -= n;
		entered += n;
	}
	softrma_sgl_exit_copy(dst, src);
	return err;
}
