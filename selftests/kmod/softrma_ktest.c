// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softrma_ktest: the kernel verbs that NVMe-oF, iSER and NFS/RDMA use for
 * fast registration (IB_WR_REG_MR) and invalidation (IB_WR_LOCAL_INV,
 * IB_WR_SEND_WITH_INV), ib_resize_cq(), and the flush of a receive posted
 * as the QP goes to error, run in module init against one RDMA device:
 *
 *	insmod softrma_ktest.ko dev=<ib device> [gid_index=N] [cases=SUBSTR]
 *		[slowdown=N]
 *
 * Each case gets a fresh PD and two RC QPs connected to each other through
 * the device's own RoCEv2 IPv4 GID, and checks completion statuses and the
 * bytes of every buffer involved (guard bytes around each registered range
 * included).  Results go to the kernel log as KTAP; init fails with -EINVAL
 * if a case failed, so that insmod fails.  Every wait is bounded (5 s times
 * slowdown=).
 *
 * What rdma_rxe gives in the error cases on Debian's 6.1.0-56 and
 * 6.12.117 (the requester's status unless said otherwise):
 *
 *	case					6.1		6.12
 *	frwr_key_update_old_rkey_refused	REM_ACCESS_ERR	REM_ACCESS_ERR
 *	local_inv_remote_write_refused		REM_ACCESS_ERR	REM_ACCESS_ERR
 *	local_inv_lkey_refused			LOC_QP_OP_ERR*	WR_FLUSH_ERR*
 *	send_with_inv_invalidates_rkey		REM_ACCESS_ERR	REM_ACCESS_ERR
 *	frwr_reregister_after_invalidate	REM_ACCESS_ERR	REM_ACCESS_ERR
 *	frwr_map_while_valid_then_reregister	(not run)	REM_ACCESS_ERR
 *	reg_mr_of_valid_mr_refused		LOC_QP_OP_ERR	WR_FLUSH_ERR*
 *	frwr_remote_read_only_write_refused	REM_ACCESS_ERR	REM_ACCESS_ERR
 *	frwr_write_past_length_refused		REM_ACCESS_ERR	REM_ACCESS_ERR
 *	local_inv_wrong_key_refused		LOC_QP_OP_ERR	WR_FLUSH_ERR*
 *	send_with_inv_unknown_rkey_refused	SUCCESS, the receive REM_INV_REQ_ERR
 *	send_with_inv_other_pd_rkey_refused	SUCCESS, the receive SUCCESS, and
 *						the other PD's MR invalidated*
 *	reg_mr_other_pd_refused			LOC_QP_OP_ERR	WR_FLUSH_ERR*
 *	map_mr_sg_over_max_num_sg		ib_map_mr_sg() maps 2 of 4 entries
 *
 * (*) rdma_rxe deviates from the IBA, and the cases expect the IBA's
 * behaviour; on rdma_rxe, and only there, these known deviations are an
 * XFAIL that says what was seen:
 *  - a local data segment whose L_Key is not valid is a Local Protection
 *    Error, not a Local QP Operation Error;
 *  - the work request that fails completes with its error, only those
 *    after it as flushed (6.12's rdma_rxe moves the QP to the error state
 *    before it completes the failing one);
 *  - an invalidation takes only a region of the QP's own PD (rdmavt and
 *    siw check that too).
 * Where the IBA names no verbs status (a refused REG_MR or LOCAL_INV is a
 * failed local memory management operation), LOC_QP_OP_ERR and LOC_PROT_ERR
 * are both taken; a refused SEND_WITH_INV must complete its receive in
 * error, and its sender may see success or an error NAK.
 *
 * The CPU reads and writes registered memory while it is mapped, which
 * needs a device that uses virtual DMA (ib_uses_virt_dma(): rdma_rxe, siw,
 * softrma); on any other device every case is skipped.
 */
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/etherdevice.h>
#include <linux/jiffies.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/kprobes.h>
#include <linux/kthread.h>
#include <net/ipv6.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

static char *kt_devname;
module_param_named(dev, kt_devname, charp, 0444);
MODULE_PARM_DESC(dev, "RDMA device to test (required)");

static int gid_index = -1;
module_param(gid_index, int, 0444);
MODULE_PARM_DESC(gid_index, "GID index to use (default: the first RoCEv2 IPv4 GID)");

static char *cases;
module_param(cases, charp, 0444);
MODULE_PARM_DESC(cases, "run only the cases whose name contains this");

static unsigned int slowdown = 1;
module_param(slowdown, uint, 0444);
MODULE_PARM_DESC(slowdown, "multiply every time limit by this (default 1)");

#define KT_PORT		1
#define KT_WAIT_MS	5000
#define KT_CQE		32
#define KT_MAX_WR	16
#define KT_MAX_PAGES	4
#define KT_BUF_LEN	(4 * PAGE_SIZE)
#define KT_GUARD	0xa5	/* what registered pages hold outside any write */
#define KT_SINK		0x5a	/* what a local sink buffer holds before a transfer */
#define KT_PSN		0x1234
#define KT_ACCESS_ALL	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
			 IB_ACCESS_REMOTE_READ)

/* The device under test, found by name as an ib_client. */
static struct {
	struct ib_device *ibdev;
	union ib_gid gid;
	int gid_index;
	u8 mac[ETH_ALEN];
	struct completion done;
} kt_dev;

struct kt_cq {
	struct ib_cq *cq;
	unsigned int pending;	/* work requests posted, completions not polled */
};

/* Two RC QPs of one PD connected to each other: 0 initiates, 1 is the target. */
struct kt_pair {
	struct ib_pd *pd;
	struct ib_qp *qp[2];
	struct kt_cq scq[2];
	struct kt_cq rcq[2];
};

/* A local buffer, reached through the PD's local_dma_lkey. */
struct kt_buf {
	u8 *va;
	u64 dma;
};

/* The part of a page that one scatterlist entry covers. */
struct kt_seg {
	unsigned int page;
	unsigned int off;
	unsigned int len;
};

/*
 * Pages registered through a fast-registration MR.  shadow holds what
 * every byte of the pages must be; bytes outside the MR stay KT_GUARD.
 */
struct kt_region {
	struct page *page[KT_MAX_PAGES];
	unsigned int npages;
	unsigned int order;		/* of one allocation of all pages, or 0 */
	struct kt_seg seg[KT_MAX_PAGES];
	struct scatterlist sg[KT_MAX_PAGES];
	unsigned int nseg;
	bool sg_mapped;
	unsigned int sg_offset;		/* where the MR starts in seg[0] */
	unsigned int nmapped;		/* segments the MR covers */
	u8 *shadow;
	struct ib_mr *mr;
};

/* One case's fixture, and what it found. */
struct kt {
	const char *name;
	struct ib_device *ibdev;
	struct ib_pd *pd;
	struct ib_pd *pd2;		/* another PD, for the cases that need one */
	struct kt_pair p;		/* the pair every case uses */
	struct kt_pair q;		/* a second pair, for some cases */
	struct kt_region r[2];
	struct kt_buf src;
	struct kt_buf dst;
	u64 wr_id;
	char why[160];			/* the first failure */
	char xfail[160];		/* a known rdma_rxe deviation that was seen */
};

static __printf(2, 3) int kt_fail(struct kt *t, const char *fmt, ...)
{
	va_list ap;

	if (!t->why[0]) {
		va_start(ap, fmt);
		vsnprintf(t->why, sizeof(t->why), fmt, ap);
		va_end(ap);
	}
	return -EIO;
}

static unsigned long kt_timeout(void)
{
	return msecs_to_jiffies(KT_WAIT_MS * max(slowdown, 1U));
}

static bool kt_is_rxe(struct ib_device *ibdev)
{
	return ibdev->ops.driver_id == RDMA_DRIVER_RXE;
}

static u8 kt_pat(unsigned int seed, u64 off)
{
	return seed * 31 + off * 7 + (off >> 8);
}

/* Waits for the next completion of @c, which must be work request @wr_id. */
static int kt_wait(struct kt *t, struct kt_cq *c, u64 wr_id, struct ib_wc *wc,
		   const char *what)
{
	unsigned long deadline = jiffies + kt_timeout();
	int n;

	for (;;) {
		n = ib_poll_cq(c->cq, 1, wc);
		if (n < 0)
			return kt_fail(t, "%s: ib_poll_cq: %d", what, n);
		if (n)
			break;
		if (time_after(jiffies, deadline))
			return kt_fail(t, "%s: no completion within %u ms", what,
				       KT_WAIT_MS * max(slowdown, 1U));
		usleep_range(100, 200);
	}
	c->pending--;
	if (wc->wr_id != wr_id)
		return kt_fail(t, "%s: completion of work request %llu, want %llu",
			       what, wc->wr_id, wr_id);
	return 0;
}

/* @wc has status @want and, if that is success, opcode @op. */
static int kt_status(struct kt *t, const char *what, const struct ib_wc *wc,
		     enum ib_wc_status want, enum ib_wc_opcode op)
{
	if (wc->status != IB_WC_SUCCESS)
		pr_info("# %s: %s: %s\n", t->name, what, ib_wc_status_msg(wc->status));
	if (wc->status != want)
		return kt_fail(t, "%s: status '%s', want '%s'", what,
			       ib_wc_status_msg(wc->status), ib_wc_status_msg(want));
	if (want == IB_WC_SUCCESS && wc->opcode != op)
		return kt_fail(t, "%s: opcode %d, want %d", what, wc->opcode, op);
	return 0;
}

/*
 * A work request that fails on its own QP (not at the responder) completes
 * with @want: that request with its error, those after it as flushed.
 * rdma_rxe's known deviations are an XFAIL that names them: it gives
 * LOC_QP_OP_ERR for any such failure, and 6.12's moves the QP to the error
 * state before it completes the request, which then completes as flushed.
 */
static int kt_status_local(struct kt *t, const char *what, const struct ib_wc *wc,
			   enum ib_wc_status want)
{
	if (wc->status != want && kt_is_rxe(t->ibdev) &&
	    (wc->status == IB_WC_LOC_QP_OP_ERR || wc->status == IB_WC_WR_FLUSH_ERR)) {
		pr_info("# %s: %s: %s\n", t->name, what, ib_wc_status_msg(wc->status));
		if (wc->status == IB_WC_WR_FLUSH_ERR)
			snprintf(t->xfail, sizeof(t->xfail),
				 "%s: rdma_rxe completes it as flushed, the IBA with its error",
				 what);
		else
			snprintf(t->xfail, sizeof(t->xfail),
				 "%s: rdma_rxe gives '%s', the IBA '%s'", what,
				 ib_wc_status_msg(wc->status), ib_wc_status_msg(want));
		return 0;
	}
	return kt_status(t, what, wc, want, IB_WC_SEND);
}

/*
 * A refused local memory management operation (REG_MR, LOCAL_INV): the
 * IBA has no verbs status of its own for it, LOC_QP_OP_ERR and LOC_PROT_ERR
 * both say it.
 */
static int kt_local_op_refused(struct kt *t, const char *what, const struct ib_wc *wc)
{
	if (wc->status == IB_WC_LOC_PROT_ERR)
		return kt_status(t, what, wc, IB_WC_LOC_PROT_ERR, IB_WC_SEND);
	return kt_status_local(t, what, wc, IB_WC_LOC_QP_OP_ERR);
}

static int kt_pd_alloc(struct kt *t, struct ib_pd **pd)
{
	*pd = ib_alloc_pd(t->ibdev, 0);
	if (IS_ERR(*pd)) {
		int ret = PTR_ERR(*pd);

		*pd = NULL;
		return kt_fail(t, "ib_alloc_pd: %d", ret);
	}
	return 0;
}

static int kt_cq_alloc(struct kt *t, struct kt_cq *c)
{
	c->cq = ib_alloc_cq(t->ibdev, NULL, KT_CQE, 0, IB_POLL_DIRECT);
	if (IS_ERR(c->cq)) {
		int ret = PTR_ERR(c->cq);

		c->cq = NULL;
		return kt_fail(t, "ib_alloc_cq: %d", ret);
	}
	return 0;
}

static int kt_qp_rts(struct kt *t, struct ib_qp *qp, u32 dest_qpn)
{
	struct ib_qp_attr attr = {};
	int ret;

	attr.qp_state = IB_QPS_INIT;
	attr.port_num = KT_PORT;
	attr.qp_access_flags = IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ;
	ret = ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_PORT |
			   IB_QP_ACCESS_FLAGS);
	if (ret)
		return kt_fail(t, "QP to INIT: %d", ret);

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IB_QPS_RTR;
	attr.path_mtu = IB_MTU_1024;
	attr.dest_qp_num = dest_qpn;
	attr.rq_psn = KT_PSN;
	attr.max_dest_rd_atomic = 1;
	attr.min_rnr_timer = 12;
	attr.ah_attr.type = rdma_ah_find_type(t->ibdev, KT_PORT);
	rdma_ah_set_port_num(&attr.ah_attr, KT_PORT);
	rdma_ah_set_grh(&attr.ah_attr, &kt_dev.gid, 0, kt_dev.gid_index, 64, 0);
	ether_addr_copy(attr.ah_attr.roce.dmac, kt_dev.mac);
	ret = ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU |
			   IB_QP_DEST_QPN | IB_QP_RQ_PSN | IB_QP_MAX_DEST_RD_ATOMIC |
			   IB_QP_MIN_RNR_TIMER);
	if (ret)
		return kt_fail(t, "QP to RTR: %d", ret);

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IB_QPS_RTS;
	attr.timeout = 16;		/* 268 ms */
	attr.retry_cnt = 3;
	attr.rnr_retry = 3;
	attr.sq_psn = KT_PSN;
	attr.max_rd_atomic = 1;
	ret = ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_TIMEOUT | IB_QP_RETRY_CNT |
			   IB_QP_RNR_RETRY | IB_QP_SQ_PSN | IB_QP_MAX_QP_RD_ATOMIC);
	if (ret)
		return kt_fail(t, "QP to RTS: %d", ret);
	return 0;
}

static int kt_pair_create(struct kt *t, struct ib_pd *pd, struct kt_pair *p)
{
	struct ib_qp_init_attr init = {
		.qp_type = IB_QPT_RC,
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.cap = {
			.max_send_wr = KT_MAX_WR,
			.max_recv_wr = KT_MAX_WR,
			.max_send_sge = 2,
			.max_recv_sge = 2,
		},
	};
	int i, ret;

	p->pd = pd;
	for (i = 0; i < 2; i++) {
		ret = kt_cq_alloc(t, &p->scq[i]);
		if (!ret)
			ret = kt_cq_alloc(t, &p->rcq[i]);
		if (ret)
			return ret;
		init.send_cq = p->scq[i].cq;
		init.recv_cq = p->rcq[i].cq;
		p->qp[i] = ib_create_qp(pd, &init);
		if (IS_ERR(p->qp[i])) {
			ret = PTR_ERR(p->qp[i]);
			p->qp[i] = NULL;
			return kt_fail(t, "ib_create_qp: %d", ret);
		}
	}
	ret = kt_qp_rts(t, p->qp[0], p->qp[1]->qp_num);
	if (!ret)
		ret = kt_qp_rts(t, p->qp[1], p->qp[0]->qp_num);
	return ret;
}

/* Polls what is still pending on @c, as the QP in error flushes it. */
static void kt_cq_flush(struct kt *t, struct kt_cq *c)
{
	unsigned long deadline = jiffies + kt_timeout();
	struct ib_wc wc;
	int n;

	while (c->pending) {
		n = ib_poll_cq(c->cq, 1, &wc);
		if (n < 0)
			break;
		if (n) {
			c->pending--;
			continue;
		}
		if (time_after(jiffies, deadline))
			break;
		usleep_range(100, 200);
	}
	if (c->pending)
		kt_fail(t, "teardown: %u work requests not flushed", c->pending);
}

/* Moves both QPs to the error state, polls their flush completions, frees. */
static void kt_pair_destroy(struct kt *t, struct kt_pair *p)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	int i;

	for (i = 0; i < 2; i++)
		if (p->qp[i] && ib_modify_qp(p->qp[i], &attr, IB_QP_STATE))
			kt_fail(t, "teardown: QP to ERR failed");
	for (i = 0; i < 2; i++) {
		if (p->qp[i]) {
			kt_cq_flush(t, &p->scq[i]);
			kt_cq_flush(t, &p->rcq[i]);
			ib_destroy_qp(p->qp[i]);
		}
		if (p->scq[i].cq)
			ib_free_cq(p->scq[i].cq);
		if (p->rcq[i].cq)
			ib_free_cq(p->rcq[i].cq);
	}
}

static int kt_buf_init(struct kt *t, struct kt_buf *b)
{
	b->va = kmalloc(KT_BUF_LEN, GFP_KERNEL);
	if (!b->va)
		return kt_fail(t, "no memory");
	b->dma = ib_dma_map_single(t->ibdev, b->va, KT_BUF_LEN, DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(t->ibdev, b->dma)) {
		kfree(b->va);
		b->va = NULL;
		return kt_fail(t, "ib_dma_map_single failed");
	}
	return 0;
}

static void kt_buf_free(struct kt *t, struct kt_buf *b)
{
	if (!b->va)
		return;
	ib_dma_unmap_single(t->ibdev, b->dma, KT_BUF_LEN, DMA_BIDIRECTIONAL);
	kfree(b->va);
}

/* @b holds @len bytes of pattern @seed (from @pat_off on) at @off. */
static int kt_buf_check(struct kt *t, const char *what, const struct kt_buf *b,
			size_t off, size_t len, unsigned int seed, u64 pat_off)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (b->va[off + i] != kt_pat(seed, pat_off + i))
			return kt_fail(t, "%s: byte %zu is 0x%02x, want 0x%02x", what, i,
				       b->va[off + i], kt_pat(seed, pat_off + i));
	return 0;
}

/* Outside [@from, @to) @b still holds KT_SINK. */
static int kt_buf_guard(struct kt *t, const char *what, const struct kt_buf *b,
			size_t from, size_t to)
{
	size_t i;

	for (i = 0; i < KT_BUF_LEN; i++)
		if ((i < from || i >= to) && b->va[i] != KT_SINK)
			return kt_fail(t, "%s: byte %zu outside the transfer changed to 0x%02x",
				       what, i, b->va[i]);
	return 0;
}

static void kt_buf_fill(struct kt_buf *b, size_t off, size_t len, unsigned int seed,
			u64 pat_off)
{
	size_t i;

	for (i = 0; i < len; i++)
		b->va[off + i] = kt_pat(seed, pat_off + i);
}

/*
 * Allocates @npages pages for @r (one allocation if @contiguous, else
 * separate pages in descending physical order, so that no two are
 * adjacent in the MR), builds its scatterlist from @seg, DMA-maps it and
 * allocates an MR of @max_num_sg entries in @pd.
 */
static int kt_region_init(struct kt *t, struct kt_region *r, struct ib_pd *pd,
			  unsigned int npages, bool contiguous,
			  const struct kt_seg *seg, unsigned int nseg, u32 max_num_sg)
{
	struct page *tmp;
	unsigned int i, j;
	int ret;

	r->npages = npages;
	if (contiguous) {
		r->order = get_order(npages * PAGE_SIZE);
		r->page[0] = alloc_pages(GFP_KERNEL, r->order);
		if (!r->page[0])
			return kt_fail(t, "no memory");
		for (i = 1; i < npages; i++)
			r->page[i] = nth_page(r->page[0], i);
	} else {
		for (i = 0; i < npages; i++) {
			r->page[i] = alloc_page(GFP_KERNEL);
			if (!r->page[i])
				return kt_fail(t, "no memory");
			for (j = i; j > 0 && page_to_pfn(r->page[j - 1]) <
					     page_to_pfn(r->page[j]); j--) {
				tmp = r->page[j - 1];
				r->page[j - 1] = r->page[j];
				r->page[j] = tmp;
			}
		}
	}
	r->shadow = kmalloc_array(npages, PAGE_SIZE, GFP_KERNEL);
	if (!r->shadow)
		return kt_fail(t, "no memory");
	memset(r->shadow, KT_GUARD, npages * PAGE_SIZE);
	for (i = 0; i < npages; i++)
		memset(page_address(r->page[i]), KT_GUARD, PAGE_SIZE);

	memcpy(r->seg, seg, nseg * sizeof(*seg));
	r->nseg = nseg;
	sg_init_table(r->sg, nseg);
	for (i = 0; i < nseg; i++)
		sg_set_page(&r->sg[i], r->page[seg[i].page], seg[i].len, seg[i].off);
	if (ib_dma_map_sg(t->ibdev, r->sg, nseg, DMA_BIDIRECTIONAL) != nseg)
		return kt_fail(t, "ib_dma_map_sg failed");
	r->sg_mapped = true;

	r->mr = ib_alloc_mr(pd, IB_MR_TYPE_MEM_REG, max_num_sg);
	if (IS_ERR(r->mr)) {
		ret = PTR_ERR(r->mr);
		r->mr = NULL;
		return kt_fail(t, "ib_alloc_mr(%u): %d", max_num_sg, ret);
	}
	return 0;
}

static void kt_region_free(struct kt *t, struct kt_region *r)
{
	unsigned int i;

	if (r->mr && ib_dereg_mr(r->mr))
		kt_fail(t, "teardown: ib_dereg_mr failed");
	if (r->sg_mapped)
		ib_dma_unmap_sg(t->ibdev, r->sg, r->nseg, DMA_BIDIRECTIONAL);
	kfree(r->shadow);
	if (r->order) {
		if (r->page[0])
			__free_pages(r->page[0], r->order);
		return;
	}
	for (i = 0; i < r->npages; i++)
		if (r->page[i])
			__free_page(r->page[i]);
}

/*
 * ib_map_mr_sg() of @r's scatterlist, starting @sg_offset bytes into its
 * first entry with 4K pages.  Returns how many entries the MR covers, and
 * checks the MR's iova and length for them.
 */
static int kt_region_map(struct kt *t, struct kt_region *r, unsigned int sg_offset)
{
	unsigned int off = sg_offset;
	u64 length = 0;
	int i, n;

	n = ib_map_mr_sg(r->mr, r->sg, r->nseg, sg_offset ? &off : NULL, SZ_4K);
	if (n <= 0)
		return kt_fail(t, "ib_map_mr_sg: %d", n);
	r->sg_offset = sg_offset;
	r->nmapped = n;
	for (i = 0; i < n; i++)
		length += r->seg[i].len;
	length -= sg_offset;
	if (r->mr->iova != sg_dma_address(&r->sg[0]) + sg_offset)
		return kt_fail(t, "ib_map_mr_sg: iova %#llx, want %#llx", r->mr->iova,
			       sg_dma_address(&r->sg[0]) + sg_offset);
	if (r->mr->length != length)
		return kt_fail(t, "ib_map_mr_sg: length %llu, want %llu",
			       r->mr->length, length);
	return n;
}

/* Maps all of @r's scatterlist: every entry must be taken. */
static int kt_region_map_all(struct kt *t, struct kt_region *r, unsigned int sg_offset)
{
	int n = kt_region_map(t, r, sg_offset);

	if (n < 0)
		return n;
	if (n != (int)r->nseg)
		return kt_fail(t, "ib_map_mr_sg mapped %d of %u entries", n, r->nseg);
	return 0;
}

/* The byte at offset @off of @r's MR, and its index in the shadow. */
static u8 *kt_region_byte(struct kt_region *r, u64 off, size_t *idx)
{
	unsigned int i;

	off += r->sg_offset;
	for (i = 0; i < r->nmapped; i++) {
		if (off < r->seg[i].len) {
			*idx = r->seg[i].page * PAGE_SIZE + r->seg[i].off + off;
			return (u8 *)page_address(r->page[r->seg[i].page]) +
			       r->seg[i].off + off;
		}
		off -= r->seg[i].len;
	}
	return NULL;
}

/* From now on, @len bytes at @off of the MR must hold pattern @seed. */
static void kt_region_expect(struct kt_region *r, u64 off, size_t len, unsigned int seed)
{
	size_t i, idx;

	for (i = 0; i < len; i++)
		if (kt_region_byte(r, off + i, &idx))
			r->shadow[idx] = kt_pat(seed, off + i);
}

/* The CPU writes pattern @seed into @len bytes at @off of the MR. */
static void kt_region_fill(struct kt_region *r, u64 off, size_t len, unsigned int seed)
{
	size_t i, idx;
	u8 *b;

	for (i = 0; i < len; i++) {
		b = kt_region_byte(r, off + i, &idx);
		if (b)
			*b = r->shadow[idx] = kt_pat(seed, off + i);
	}
}

/* Every byte of @r's pages is what its shadow says. */
static int kt_region_verify(struct kt *t, struct kt_region *r, const char *what)
{
	unsigned int i, j;
	const u8 *va;
	u8 want;

	for (i = 0; i < r->npages; i++) {
		va = page_address(r->page[i]);
		for (j = 0; j < PAGE_SIZE; j++) {
			want = r->shadow[i * PAGE_SIZE + j];
			if (va[j] != want)
				return kt_fail(t, "%s: page %u byte %u is 0x%02x, want 0x%02x%s",
					       what, i, j, va[j], want,
					       want == KT_GUARD ? " (outside the write)" : "");
		}
	}
	return 0;
}

/* Posts @wr on @side of @p and waits for its completion. */
static int kt_exec(struct kt *t, struct kt_pair *p, int side, struct ib_send_wr *wr,
		   struct ib_wc *wc, const char *what)
{
	const struct ib_send_wr *bad;
	int ret;

	wr->wr_id = ++t->wr_id;
	wr->send_flags |= IB_SEND_SIGNALED;
	ret = ib_post_send(p->qp[side], wr, &bad);
	if (ret)
		return kt_fail(t, "%s: ib_post_send: %d", what, ret);
	p->scq[side].pending++;
	return kt_wait(t, &p->scq[side], wr->wr_id, wc, what);
}

/* IB_WR_REG_MR of @r's MR on @side of @p, with its current key. */
static int kt_reg(struct kt *t, struct kt_pair *p, int side, struct kt_region *r,
		  int access, struct ib_wc *wc)
{
	struct ib_reg_wr wr = {
		.wr.opcode = IB_WR_REG_MR,
		.mr = r->mr,
		.key = r->mr->rkey,
		.access = access,
	};

	return kt_exec(t, p, side, &wr.wr, wc, "REG_MR");
}

static int kt_reg_ok(struct kt *t, struct kt_pair *p, int side, struct kt_region *r,
		     int access)
{
	struct ib_wc wc;

	return kt_reg(t, p, side, r, access, &wc) ?:
	       kt_status(t, "REG_MR", &wc, IB_WC_SUCCESS, IB_WC_REG_MR);
}

static int kt_local_inv(struct kt *t, struct kt_pair *p, int side, u32 key,
			struct ib_wc *wc)
{
	struct ib_send_wr wr = {
		.opcode = IB_WR_LOCAL_INV,
		.ex.invalidate_rkey = key,
	};

	return kt_exec(t, p, side, &wr, wc, "LOCAL_INV");
}

/* An RDMA WRITE or READ of @len bytes at @off of t->src or t->dst from QP 0. */
static int kt_rdma(struct kt *t, struct kt_pair *p, enum ib_wr_opcode op, u32 len,
		   size_t off, u64 raddr, u32 rkey, struct ib_wc *wc)
{
	struct kt_buf *b = op == IB_WR_RDMA_WRITE ? &t->src : &t->dst;
	struct ib_sge sge = {
		.addr = b->dma + off,
		.length = len,
		.lkey = p->pd->local_dma_lkey,
	};
	struct ib_rdma_wr wr = {
		.wr.opcode = op,
		.wr.sg_list = &sge,
		.wr.num_sge = 1,
		.remote_addr = raddr,
		.rkey = rkey,
	};

	return kt_exec(t, p, 0, &wr.wr, wc, op == IB_WR_RDMA_WRITE ? "WRITE" : "READ");
}

/*
 * QP 0 of @p writes pattern @seed into @len bytes at @off of @r's MR
 * through @rkey; the status must be @want, and only a successful write
 * may change @r's pages, exactly where it was aimed.
 */
static int kt_write(struct kt *t, struct kt_pair *p, struct kt_region *r, u64 off,
		    u32 len, unsigned int seed, u32 rkey, enum ib_wc_status want)
{
	struct ib_wc wc;
	int ret;

	kt_buf_fill(&t->src, 0, len, seed, off);
	ret = kt_rdma(t, p, IB_WR_RDMA_WRITE, len, 0, r->mr->iova + off, rkey, &wc) ?:
	      kt_status(t, "WRITE", &wc, want, IB_WC_RDMA_WRITE);
	if (ret)
		return ret;
	if (want == IB_WC_SUCCESS)
		kt_region_expect(r, off, len, seed);
	return kt_region_verify(t, r, want == IB_WC_SUCCESS ? "written MR" : "refused MR");
}

/*
 * QP 0 of @p reads @len bytes at @off of @r's MR into t->dst at 64; they
 * must be what @r's shadow holds there, and nothing else in t->dst may
 * change, nor anything in @r.
 */
static int kt_read(struct kt *t, struct kt_pair *p, struct kt_region *r, u64 off,
		   u32 len)
{
	struct ib_wc wc;
	size_t i, idx;
	int ret;

	memset(t->dst.va, KT_SINK, KT_BUF_LEN);
	ret = kt_rdma(t, p, IB_WR_RDMA_READ, len, 64, r->mr->iova + off, r->mr->rkey, &wc) ?:
	      kt_status(t, "READ", &wc, IB_WC_SUCCESS, IB_WC_RDMA_READ);
	if (ret)
		return ret;
	for (i = 0; i < len; i++) {
		if (!kt_region_byte(r, off + i, &idx))
			return kt_fail(t, "READ: offset %llu is outside the MR", off + i);
		if (t->dst.va[64 + i] != r->shadow[idx])
			return kt_fail(t, "READ data: byte %zu is 0x%02x, want 0x%02x", i,
				       t->dst.va[64 + i], r->shadow[idx]);
	}
	return kt_buf_guard(t, "READ sink", &t->dst, 64, 64 + len) ?:
	       kt_region_verify(t, r, "read MR");
}

/* Posts a receive of KT_BUF_LEN - 128 bytes into t->dst at 128 on @side. */
static int kt_post_recv(struct kt *t, struct kt_pair *p, int side, u64 *wr_id)
{
	struct ib_sge sge = {
		.addr = t->dst.dma + 128,
		.length = KT_BUF_LEN - 128,
		.lkey = p->pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = {
		.wr_id = ++t->wr_id,
		.sg_list = &sge,
		.num_sge = 1,
	};
	const struct ib_recv_wr *bad;
	int ret;

	memset(t->dst.va, KT_SINK, KT_BUF_LEN);
	ret = ib_post_recv(p->qp[side], &wr, &bad);
	if (ret)
		return kt_fail(t, "ib_post_recv: %d", ret);
	p->rcq[side].pending++;
	*wr_id = wr.wr_id;
	return 0;
}

/*
 * QP 0 sends @len bytes of pattern @seed from t->src, with invalidation of
 * @inv_rkey if @inv; QP 1 has a receive posted in t->dst.
 */
static int kt_send_inv(struct kt *t, struct kt_pair *p, bool inv, u32 inv_rkey,
		       u32 len, unsigned int seed, struct ib_wc *swc, struct ib_wc *rwc)
{
	struct ib_sge sge = {
		.addr = t->src.dma,
		.length = len,
		.lkey = p->pd->local_dma_lkey,
	};
	struct ib_send_wr wr = {
		.opcode = inv ? IB_WR_SEND_WITH_INV : IB_WR_SEND,
		.sg_list = &sge,
		.num_sge = 1,
		.ex.invalidate_rkey = inv_rkey,
	};
	u64 recv_id;

	kt_buf_fill(&t->src, 0, len, seed, 0);
	return kt_post_recv(t, p, 1, &recv_id) ?:
	       kt_exec(t, p, 0, &wr, swc, inv ? "SEND_WITH_INV" : "SEND") ?:
	       kt_wait(t, &p->rcq[1], recv_id, rwc, "RECV");
}

/* A contiguous 2-page region with the MR over 4096 bytes from offset 256. */
static int kt_region_two_pages(struct kt *t, struct kt_region *r, struct ib_pd *pd)
{
	static const struct kt_seg seg[] = { { 0, 256, 4096 } };

	return kt_region_init(t, r, pd, 2, true, seg, ARRAY_SIZE(seg), KT_MAX_PAGES) ?:
	       kt_region_map_all(t, r, 0);
}

/* ---- the cases ---- */

static int frwr_write_lands_in_range(struct kt *t)
{
	struct kt_region *r = &t->r[0];

	return kt_region_two_pages(t, r, t->pd) ?:
	       kt_reg_ok(t, &t->p, 1, r, KT_ACCESS_ALL) ?:
	       kt_write(t, &t->p, r, 0, 4096, 1, r->mr->rkey, IB_WC_SUCCESS) ?:
	       kt_write(t, &t->p, r, 3700, 300, 2, r->mr->rkey, IB_WC_SUCCESS) ?:
	       kt_write(t, &t->p, r, 4095, 1, 3, r->mr->rkey, IB_WC_SUCCESS);
}

static int frwr_read_returns_registered_bytes(struct kt *t)
{
	struct kt_region *r = &t->r[0];
	int ret;

	ret = kt_region_two_pages(t, r, t->pd);
	if (ret)
		return ret;
	kt_region_fill(r, 0, 4096, 4);
	return kt_reg_ok(t, &t->p, 1, r, IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ) ?:
	       kt_read(t, &t->p, r, 0, 4096) ?:
	       kt_read(t, &t->p, r, 3800, 100);
}

static int frwr_three_separate_pages_first_offset(struct kt *t)
{
	static const struct kt_seg seg[] = {
		{ 0, 512, 4096 - 512 }, { 1, 0, 4096 }, { 2, 0, 1000 },
	};
	struct kt_region *r = &t->r[0];

	return kt_region_init(t, r, t->pd, 3, false, seg, ARRAY_SIZE(seg), KT_MAX_PAGES) ?:
	       kt_region_map_all(t, r, 0) ?:
	       kt_reg_ok(t, &t->p, 1, r, KT_ACCESS_ALL) ?:
	       kt_write(t, &t->p, r, 0, 8680, 5, r->mr->rkey, IB_WC_SUCCESS) ?:
	       kt_read(t, &t->p, r, 3000, 5000) ?:
	       kt_write(t, &t->p, r, 7580, 200, 6, r->mr->rkey, IB_WC_SUCCESS) ?:
	       kt_read(t, &t->p, r, 0, 8680);
}

static int frwr_two_entries_sg_offset(struct kt *t)
{
	static const struct kt_seg seg[] = { { 0, 0, 4096 }, { 1, 0, 2048 } };
	struct kt_region *r = &t->r[0];

	return kt_region_init(t, r, t->pd, 2, false, seg, ARRAY_SIZE(seg), KT_MAX_PAGES) ?:
	       kt_region_map_all(t, r, 100) ?:
	       kt_reg_ok(t, &t->p, 1, r, KT_ACCESS_ALL) ?:
	       kt_write(t, &t->p, r, 0, 6044, 7, r->mr->rkey, IB_WC_SUCCESS) ?:
	       kt_read(t, &t->p, r, 0, 6044);
}

static int frwr_key_update_old_rkey_refused(struct kt *t)
{
	struct kt_region *r = &t->r[0];
	u32 old;
	int ret;

	ret = kt_region_two_pages(t, r, t->pd);
	if (ret)
		return ret;
	old = r->mr->rkey;
	ib_update_fast_reg_key(r->mr, ib_inc_rkey(old) & 0xff);
	if (r->mr->rkey == old || r->mr->lkey != r->mr->rkey ||
	    (r->mr->rkey & ~0xffU) != (old & ~0xffU))
		return kt_fail(t, "ib_update_fast_reg_key: rkey %#x lkey %#x from %#x",
			       r->mr->rkey, r->mr->lkey, old);
	return kt_reg_ok(t, &t->p, 1, r, KT_ACCESS_ALL) ?:
	       kt_write(t, &t->p, r, 0, 4096, 8, r->mr->rkey, IB_WC_SUCCESS) ?:
	       kt_write(t, &t->p, r, 0, 4096, 9, old, IB_WC_REM_ACCESS_ERR);
}

static int local_inv_remote_write_refused(struct kt *t)
{
	struct kt_region *r = &t->r[0];
	struct ib_wc wc;

	return kt_region_two_pages(t, r, t->pd) ?:
	       kt_reg_ok(t, &t->p, 1, r, KT_ACCESS_ALL) ?:
	       kt_write(t, &t->p, r, 0, 4096, 10, r->mr->rkey, IB_WC_SUCCESS) ?:
	       kt_local_inv(t, &t->p, 1, r->mr->rkey, &wc) ?:
	       kt_status(t, "LOCAL_INV", &wc, IB_WC_SUCCESS, IB_WC_LOCAL_INV) ?:
	       kt_write(t, &t->p, r, 0, 4096, 11, r->mr->rkey, IB_WC_REM_ACCESS_ERR);
}

/*
 * QP 1 sends 64 bytes at @off of @r's MR through its lkey to QP 0, which
 * has a receive @recv_id posted.
 */
static int kt_send_from_mr(struct kt *t, struct kt_region *r, u64 off, u64 *recv_id,
			   struct ib_wc *wc)
{
	struct ib_sge sge = {
		.addr = r->mr->iova + off,
		.length = 64,
		.lkey = r->mr->lkey,
	};
	struct ib_send_wr wr = {
		.opcode = IB_WR_SEND,
		.sg_list = &sge,
		.num_sge = 1,
	};

	return kt_post_recv(t, &t->p, 0, recv_id) ?:
	       kt_exec(t, &t->p, 1, &wr, wc, "SEND through the lkey");
}

static int local_inv_lkey_refused(struct kt *t)
{
	struct kt_region *r = &t->r[0];
	struct ib_wc wc;
	u64 recv_id;
	int ret;

	ret = kt_region_two_pages(t, r, t->pd);
	if (ret)
		return ret;
	kt_region_fill(r, 0, 4096, 12);
	return kt_reg_ok(t, &t->p, 1, r, KT_ACCESS_ALL) ?:
	       kt_send_from_mr(t, r, 1000, &recv_id, &wc) ?:
	       kt_status(t, "SEND through the lkey", &wc, IB_WC_SUCCESS, IB_WC_SEND) ?:
	       kt_wait(t, &t->p.rcq[0], recv_id, &wc, "RECV") ?:
	       kt_status(t, "RECV", &wc, IB_WC_SUCCESS, IB_WC_RECV) ?:
	       kt_buf_check(t, "RECV data", &t->dst, 128, 64, 12, 1000) ?:
	       kt_buf_guard(t, "RECV sink", &t->dst, 128, 128 + 64) ?:
	       kt_local_inv(t, &t->p, 1, r->mr->lkey, &wc) ?:
	       kt_status(t, "LOCAL_INV", &wc, IB_WC_SUCCESS, IB_WC_LOCAL_INV) ?:
	       kt_send_from_mr(t, r, 1000, &recv_id, &wc) ?:
	       kt_status_local(t, "SEND through the invalidated lkey", &wc,
			       IB_WC_LOC_PROT_ERR) ?:
	       kt_buf_guard(t, "receive buffer", &t->dst, 0, 0) ?:
	       kt_region_verify(t, r, "MR");
}

static int send_with_inv_invalidates_rkey(struct kt *t)
{
	struct kt_region *r = &t->r[0];
	struct ib_wc swc, rwc;
	int ret;

	ret = kt_region_two_pages(t, r, t->pd) ?:
	      kt_reg_ok(t, &t->p, 1, r, KT_ACCESS_ALL) ?:
	      kt_write(t, &t->p, r, 0, 4096, 13, r->mr->rkey, IB_WC_SUCCESS) ?:
	      kt_send_inv(t, &t->p, true, r->mr->rkey, 32, 14, &swc, &rwc) ?:
	      kt_status(t, "SEND_WITH_INV", &swc, IB_WC_SUCCESS, IB_WC_SEND) ?:
	      kt_status(t, "RECV", &rwc, IB_WC_SUCCESS, IB_WC_RECV);
	if (ret)
		return ret;
	if (rwc.byte_len != 32)
		return kt_fail(t, "RECV: byte_len %u, want 32", rwc.byte_len);
	if (!(rwc.wc_flags & IB_WC_WITH_INVALIDATE))
		return kt_fail(t, "RECV: no IB_WC_WITH_INVALIDATE (wc_flags %#x)",
			       rwc.wc_flags);
	if (rwc.ex.invalidate_rkey != r->mr->rkey)
		return kt_fail(t, "RECV: invalidate_rkey %#x, want %#x",
			       rwc.ex.invalidate_rkey, r->mr->rkey);
	return kt_buf_check(t, "RECV data", &t->dst, 128, 32, 14, 0) ?:
	       kt_buf_guard(t, "RECV sink", &t->dst, 128, 128 + 32) ?:
	       kt_write(t, &t->p, r, 0, 4096, 15, r->mr->rkey, IB_WC_REM_ACCESS_ERR);
}

static int frwr_reregister_after_invalidate(struct kt *t)
{
	struct kt_region *r = &t->r[0];
	struct ib_wc wc;
	u32 old;
	int ret;

	ret = kt_region_two_pages(t, r, t->pd) ?:
	      kt_reg_ok(t, &t->p, 1, r, KT_ACCESS_ALL) ?:
	      kt_write(t, &t->p, r, 0, 4096, 16, r->mr->rkey, IB_WC_SUCCESS) ?:
	      kt_local_inv(t, &t->p, 1, r->mr->rkey, &wc) ?:
	      kt_status(t, "LOCAL_INV", &wc, IB_WC_SUCCESS, IB_WC_LOCAL_INV);
	if (ret)
		return ret;
	/* Again, 512 bytes further on, with the next key. */
	old = r->mr->rkey;
	ib_update_fast_reg_key(r->mr, ib_inc_rkey(old) & 0xff);
	ret = kt_region_map(t, r, 512);
	if (ret < 0)
		return ret;
	return kt_reg_ok(t, &t->p, 1, r, KT_ACCESS_ALL) ?:
	       kt_write(t, &t->p, r, 0, 4096 - 512, 17, r->mr->rkey, IB_WC_SUCCESS) ?:
	       kt_read(t, &t->p, r, 0, 4096 - 512) ?:
	       kt_write(t, &t->p, r, 0, 64, 18, old, IB_WC_REM_ACCESS_ERR);
}

/*
 * As ib_srp does: the next registration's pages are mapped while the MR is
 * still valid, then LOCAL_INV and REG_MR follow; the mapping waits for the
 * REG_MR, and the old registration stays as it was until the LOCAL_INV.
 */
static int frwr_map_while_valid_then_reregister(struct kt *t)
{
	struct kt_region *r = &t->r[0];
	struct ib_wc wc;
	u32 old;
	int ret;

	ret = kt_region_two_pages(t, r, t->pd) ?:
	      kt_reg_ok(t, &t->p, 1, r, KT_ACCESS_ALL) ?:
	      kt_write(t, &t->p, r, 0, 4096, 22, r->mr->rkey, IB_WC_SUCCESS);
	if (ret)
		return ret;
	old = r->mr->rkey;
	ib_update_fast_reg_key(r->mr, ib_inc_rkey(old) & 0xff);
	ret = kt_region_map(t, r, 512);
	if (ret < 0)
		return ret;
	return kt_local_inv(t, &t->p, 1, old, &wc) ?:
	       kt_status(t, "LOCAL_INV", &wc, IB_WC_SUCCESS, IB_WC_LOCAL_INV) ?:
	       kt_reg_ok(t, &t->p, 1, r, KT_ACCESS_ALL) ?:
	       kt_write(t, &t->p, r, 0, 4096 - 512, 23, r->mr->rkey, IB_WC_SUCCESS) ?:
	       kt_read(t, &t->p, r, 0, 4096 - 512) ?:
	       kt_write(t, &t->p, r, 0, 64, 24, old, IB_WC_REM_ACCESS_ERR);
}

/* A second pair in @pd writes through @r's rkey: @r is still registered. */
static int kt_still_valid(struct kt *t, struct ib_pd *pd, struct kt_region *r,
			  unsigned int seed)
{
	return kt_pair_create(t, pd, &t->q) ?:
	       kt_write(t, &t->q, r, 0, 4096, seed, r->mr->rkey, IB_WC_SUCCESS);
}

static int reg_mr_of_valid_mr_refused(struct kt *t)
{
	struct kt_region *r = &t->r[0];
	struct ib_wc wc;

	return kt_region_two_pages(t, r, t->pd) ?:
	       kt_reg_ok(t, &t->p, 1, r, KT_ACCESS_ALL) ?:
	       kt_reg(t, &t->p, 1, r, KT_ACCESS_ALL, &wc) ?:
	       kt_local_op_refused(t, "REG_MR of a valid MR", &wc) ?:
	       kt_region_verify(t, r, "MR") ?:
	       kt_still_valid(t, t->pd, r, 19);
}

static int frwr_remote_read_only_write_refused(struct kt *t)
{
	struct kt_region *r = &t->r[0];
	int ret;

	ret = kt_region_two_pages(t, r, t->pd);
	if (ret)
		return ret;
	kt_region_fill(r, 0, 4096, 20);
	return kt_reg_ok(t, &t->p, 1, r, IB_ACCESS_REMOTE_READ) ?:
	       kt_read(t, &t->p, r, 0, 4096) ?:
	       kt_write(t, &t->p, r, 0, 64, 21, r->mr->rkey, IB_WC_REM_ACCESS_ERR);
}

static int frwr_write_past_length_refused(struct kt *t)
{
	struct kt_region *r = &t->r[0];

	return kt_region_two_pages(t, r, t->pd) ?:
	       kt_reg_ok(t, &t->p, 1, r, KT_ACCESS_ALL) ?:
	       kt_write(t, &t->p, r, 4096 - 32, 32, 22, r->mr->rkey, IB_WC_SUCCESS) ?:
	       kt_write(t, &t->p, r, 4096 - 32, 64, 23, r->mr->rkey, IB_WC_REM_ACCESS_ERR);
}

static int local_inv_wrong_key_refused(struct kt *t)
{
	struct kt_region *r = &t->r[0];
	struct ib_wc wc;

	return kt_region_two_pages(t, r, t->pd) ?:
	       kt_reg_ok(t, &t->p, 1, r, KT_ACCESS_ALL) ?:
	       kt_local_inv(t, &t->p, 1, ib_inc_rkey(r->mr->rkey), &wc) ?:
	       kt_local_op_refused(t, "LOCAL_INV with another key", &wc) ?:
	       kt_still_valid(t, t->pd, r, 24);
}

/*
 * A SEND_WITH_INV that names @rkey, which the receiver must refuse: its
 * receive completes in error; the sender may see success or an error NAK.
 * @rxe_invalidates: rdma_rxe is known to take it (an XFAIL there).
 */
static int kt_send_inv_refused(struct kt *t, u32 rkey, bool rxe_invalidates)
{
	struct ib_wc swc, rwc;
	int ret;

	ret = kt_send_inv(t, &t->p, true, rkey, 32, 25, &swc, &rwc);
	if (ret)
		return ret;
	pr_info("# %s: SEND_WITH_INV: %s, RECV: %s\n", t->name,
		ib_wc_status_msg(swc.status), ib_wc_status_msg(rwc.status));
	if (swc.status != IB_WC_SUCCESS && swc.status != IB_WC_REM_INV_REQ_ERR &&
	    swc.status != IB_WC_REM_ACCESS_ERR && swc.status != IB_WC_REM_OP_ERR)
		return kt_fail(t, "SEND_WITH_INV: status '%s'", ib_wc_status_msg(swc.status));
	if (rwc.status == IB_WC_SUCCESS || rwc.status == IB_WC_WR_FLUSH_ERR) {
		if (rwc.status == IB_WC_SUCCESS && rxe_invalidates && kt_is_rxe(t->ibdev)) {
			snprintf(t->xfail, sizeof(t->xfail),
				 "RECV: rdma_rxe completes it successfully (flags %#x), the IBA in error",
				 rwc.wc_flags);
			return 0;
		}
		return kt_fail(t, "RECV: status '%s', want an error",
			       ib_wc_status_msg(rwc.status));
	}
	return 0;
}

static int send_with_inv_unknown_rkey_refused(struct kt *t)
{
	struct kt_region *r = &t->r[0];

	/* The MR's index with another key: no MR has that rkey. */
	return kt_region_two_pages(t, r, t->pd) ?:
	       kt_reg_ok(t, &t->p, 1, r, KT_ACCESS_ALL) ?:
	       kt_send_inv_refused(t, ib_inc_rkey(r->mr->rkey), false) ?:
	       kt_buf_guard(t, "receive buffer", &t->dst, 128, 128 + 32) ?:
	       kt_still_valid(t, t->pd, r, 26);
}

static int send_with_inv_other_pd_rkey_refused(struct kt *t)
{
	struct kt_region *r = &t->r[0];
	struct ib_wc wc;
	int ret;

	/* The MR is registered in another PD, by a pair of that PD. */
	ret = kt_pd_alloc(t, &t->pd2) ?:
	      kt_region_two_pages(t, r, t->pd2) ?:
	      kt_pair_create(t, t->pd2, &t->q) ?:
	      kt_reg_ok(t, &t->q, 1, r, KT_ACCESS_ALL) ?:
	      kt_send_inv_refused(t, r->mr->rkey, true);
	if (ret)
		return ret;
	/* It must still be registered. */
	kt_buf_fill(&t->src, 0, 4096, 27, 0);
	ret = kt_rdma(t, &t->q, IB_WR_RDMA_WRITE, 4096, 0, r->mr->iova, r->mr->rkey, &wc);
	if (ret)
		return ret;
	if (wc.status == IB_WC_REM_ACCESS_ERR && kt_is_rxe(t->ibdev)) {
		pr_info("# %s: WRITE in the MR's own PD afterwards: %s\n", t->name,
			ib_wc_status_msg(wc.status));
		snprintf(t->xfail, sizeof(t->xfail),
			 "rdma_rxe invalidates an MR of another PD, the IBA refuses");
		return kt_region_verify(t, r, "MR");
	}
	ret = kt_status(t, "WRITE in the MR's own PD afterwards", &wc, IB_WC_SUCCESS,
			IB_WC_RDMA_WRITE);
	if (ret)
		return ret;
	kt_region_expect(r, 0, 4096, 27);
	return kt_region_verify(t, r, "MR");
}

static int reg_mr_other_pd_refused(struct kt *t)
{
	struct kt_region *r = &t->r[0];
	struct ib_wc wc;

	/* After the refusal, the MR must not be registered in its own PD. */
	return kt_pd_alloc(t, &t->pd2) ?:
	       kt_region_two_pages(t, r, t->pd2) ?:
	       kt_reg(t, &t->p, 1, r, KT_ACCESS_ALL, &wc) ?:
	       kt_local_op_refused(t, "REG_MR of another PD's MR", &wc) ?:
	       kt_pair_create(t, t->pd2, &t->q) ?:
	       kt_write(t, &t->q, r, 0, 64, 28, r->mr->rkey, IB_WC_REM_ACCESS_ERR);
}

static int map_mr_sg_over_max_num_sg(struct kt *t)
{
	static const struct kt_seg seg[] = {
		{ 0, 0, 4096 }, { 1, 0, 4096 }, { 2, 0, 4096 }, { 3, 0, 4096 },
	};
	struct kt_region *r = &t->r[0];
	int n;

	n = kt_region_init(t, r, t->pd, 4, false, seg, ARRAY_SIZE(seg), 2) ?:
	    kt_region_map(t, r, 0);
	if (n < 0)
		return n;
	pr_info("# %s: ib_map_mr_sg of 4 entries into max_num_sg 2: %d\n", t->name, n);
	if (n >= (int)ARRAY_SIZE(seg))
		return kt_fail(t, "ib_map_mr_sg mapped %d entries, max_num_sg is 2", n);
	/* What was mapped is registered, and only that. */
	return kt_reg_ok(t, &t->p, 1, r, KT_ACCESS_ALL) ?:
	       kt_write(t, &t->p, r, 0, n * 4096, 29, r->mr->rkey, IB_WC_SUCCESS) ?:
	       kt_write(t, &t->p, r, n * 4096 - 8, 16, 30, r->mr->rkey,
			IB_WC_REM_ACCESS_ERR);
}

static int dma_mr_send_recv(struct kt *t)
{
	struct ib_sge sge[2] = {
		{ .addr = t->src.dma + 100, .length = 1000, .lkey = t->pd->local_dma_lkey },
		{ .addr = t->src.dma + 5000, .length = 2000, .lkey = t->pd->local_dma_lkey },
	};
	struct ib_send_wr wr = {
		.opcode = IB_WR_SEND,
		.sg_list = sge,
		.num_sge = 2,
	};
	struct ib_wc swc, rwc;
	u64 recv_id;
	int ret;

	kt_buf_fill(&t->src, 100, 1000, 31, 0);
	kt_buf_fill(&t->src, 5000, 2000, 31, 1000);
	ret = kt_post_recv(t, &t->p, 1, &recv_id) ?:
	      kt_exec(t, &t->p, 0, &wr, &swc, "SEND") ?:
	      kt_status(t, "SEND", &swc, IB_WC_SUCCESS, IB_WC_SEND) ?:
	      kt_wait(t, &t->p.rcq[1], recv_id, &rwc, "RECV") ?:
	      kt_status(t, "RECV", &rwc, IB_WC_SUCCESS, IB_WC_RECV);
	if (ret)
		return ret;
	if (rwc.byte_len != 3000 || (rwc.wc_flags & IB_WC_WITH_INVALIDATE))
		return kt_fail(t, "RECV: byte_len %u, flags %#x", rwc.byte_len, rwc.wc_flags);
	return kt_buf_check(t, "RECV data", &t->dst, 128, 3000, 31, 0) ?:
	       kt_buf_guard(t, "RECV sink", &t->dst, 128, 128 + 3000);
}

/* @wr: a signaled SEND of 8 bytes from t->src, in @sge. */
static void kt_small_send(struct kt *t, struct ib_send_wr *wr, struct ib_sge *sge)
{
	*sge = (struct ib_sge) {
		.addr = t->src.dma,
		.length = 8,
		.lkey = t->pd->local_dma_lkey,
	};
	*wr = (struct ib_send_wr) {
		.opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED,
		.sg_list = sge,
		.num_sge = 1,
	};
}

/*
 * ib_resize_cq() of the send CQ of QP 0 and the receive CQ of QP 1 while
 * KT_MAX_WR SENDs complete into them, to a larger size and then to just
 * what they may hold: every completion comes out, in order.
 */
static int cq_resize_keeps_completions(struct kt *t)
{
	static const int sizes[] = { 4 * KT_CQE, KT_MAX_WR };
	struct ib_send_wr wr;
	struct ib_sge sge;
	struct kt_cq *cqs[] = { &t->p.scq[0], &t->p.rcq[1] };
	const struct ib_send_wr *bad;
	u64 first_recv, first_send, recv_id;
	struct ib_wc wc;
	unsigned int i, j, n;
	int ret;

	kt_small_send(t, &wr, &sge);
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		first_recv = t->wr_id + 1;
		for (n = 0; n < KT_MAX_WR; n++) {
			ret = kt_post_recv(t, &t->p, 1, &recv_id);
			if (ret)
				return ret;
		}
		first_send = t->wr_id + 1;
		for (n = 0; n < KT_MAX_WR; n++) {
			wr.wr_id = ++t->wr_id;
			ret = ib_post_send(t->p.qp[0], &wr, &bad);
			if (ret)
				return kt_fail(t, "ib_post_send: %d", ret);
			t->p.scq[0].pending++;
		}
		for (j = 0; j < ARRAY_SIZE(cqs); j++) {
			ret = ib_resize_cq(cqs[j]->cq, sizes[i]);
			if (ret)
				return kt_fail(t, "ib_resize_cq to %d: %d", sizes[i], ret);
			if (cqs[j]->cq->cqe < sizes[i])
				return kt_fail(t, "ib_resize_cq to %d: cqe %d",
					       sizes[i], cqs[j]->cq->cqe);
		}
		for (n = 0; n < KT_MAX_WR; n++) {
			ret = kt_wait(t, &t->p.scq[0], first_send + n, &wc, "SEND") ?:
			      kt_status(t, "SEND", &wc, IB_WC_SUCCESS, IB_WC_SEND) ?:
			      kt_wait(t, &t->p.rcq[1], first_recv + n, &wc, "RECV") ?:
			      kt_status(t, "RECV", &wc, IB_WC_SUCCESS, IB_WC_RECV);
			if (ret)
				return ret;
		}
	}
	return 0;
}

/*
 * A QP moved to RESET takes its completions out of its CQs: a SEND from
 * QP 0 to a receive of QP 1 completes on both sides, unpolled; both QPs go
 * through RESET to RTS, after which their CQs are empty and the next SEND
 * is the next completion of each.
 */
static int reset_drops_completions(struct kt *t)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_RESET };
	struct ib_send_wr wr;
	struct ib_sge sge;
	struct kt_cq *cqs[] = { &t->p.scq[0], &t->p.rcq[1] };
	const struct ib_send_wr *bad;
	struct ib_wc wc;
	u64 recv_id;
	int i, ret;

	kt_small_send(t, &wr, &sge);
	wr.wr_id = ++t->wr_id;
	ret = kt_post_recv(t, &t->p, 1, &recv_id) ?:
	      ib_post_send(t->p.qp[0], &wr, &bad);
	if (ret)
		return kt_fail(t, "post: %d", ret);
	/* Both complete, unpolled (ib_req_notify_cq() would arm a direct CQ). */
	msleep(200 * max(slowdown, 1U));
	for (i = 0; i < 2; i++)
		if (ib_modify_qp(t->p.qp[i], &attr, IB_QP_STATE))
			return kt_fail(t, "QP to RESET failed");
	t->p.rcq[1].pending--;
	ret = kt_qp_rts(t, t->p.qp[0], t->p.qp[1]->qp_num) ?:
	      kt_qp_rts(t, t->p.qp[1], t->p.qp[0]->qp_num);
	if (ret)
		return ret;
	for (i = 0; i < ARRAY_SIZE(cqs); i++)
		if (ib_poll_cq(cqs[i]->cq, 1, &wc))
			return kt_fail(t, "completion of work request %llu after RESET",
				       wc.wr_id);
	wr.wr_id = ++t->wr_id;
	return kt_post_recv(t, &t->p, 1, &recv_id) ?:
	       kt_exec(t, &t->p, 0, &wr, &wc, "SEND") ?:
	       kt_status(t, "SEND", &wc, IB_WC_SUCCESS, IB_WC_SEND) ?:
	       kt_wait(t, &t->p.rcq[1], recv_id, &wc, "RECV") ?:
	       kt_status(t, "RECV", &wc, IB_WC_SUCCESS, IB_WC_RECV);
}

/*
 * recv_posted_as_qp_fails_flushed: the poster is held where its receive's
 * post takes its first spinlock, between reading the QP's state and
 * publishing the receive, while another CPU moves the QP to error and the
 * error's flush empties the queue.
 */
static struct {
	struct task_struct *poster;
	struct kt *t;
	atomic_t armed;		/* the poster's next lock holds it */
	int go;			/* the QP may go to error now */
	int flushed;		/* it has, and its flush has run */
	bool in_time;		/* while the poster was held */
	int ret;
} kt_hold;

/* How long the poster is held at most: interrupts are off meanwhile. */
#define KT_HOLD_US	(2 * USEC_PER_SEC)

static int kt_hold_lock(struct kprobe *kp, struct pt_regs *regs)
{
	unsigned int us;

	if (current != kt_hold.poster || !atomic_xchg(&kt_hold.armed, 0))
		return 0;
	WRITE_ONCE(kt_hold.go, 1);
	/* In the probe's context: only a busy wait, bounded without jiffies. */
	for (us = 0; us < KT_HOLD_US && !READ_ONCE(kt_hold.flushed); us += 10)
		udelay(10);
	kt_hold.in_time = READ_ONCE(kt_hold.flushed);
	return 0;
}

/*
 * On another CPU: moves the QP to error when the poster is held, and waits
 * for the flush to complete the receive posted before, which tells that it
 * has run and found the queue empty after it.
 */
static int kt_hold_fail_qp(void *wr_id)
{
	static const char what[] = "the receive posted before the error";
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	struct kt *t = kt_hold.t;
	unsigned int ms;
	struct ib_wc wc;

	for (ms = 0; ms < 10 * MSEC_PER_SEC && !READ_ONCE(kt_hold.go); ms++)
		msleep(1);
	kt_hold.ret = ib_modify_qp(t->p.qp[1], &attr, IB_QP_STATE);
	if (!kt_hold.ret &&
	    !kt_wait(t, &t->p.rcq[1], *(u64 *)wr_id, &wc, what) &&
	    !kt_status(t, what, &wc, IB_WC_WR_FLUSH_ERR, IB_WC_RECV))
		WRITE_ONCE(kt_hold.flushed, 1);
	while (!kthread_should_stop())
		schedule_timeout_interruptible(1);
	return 0;
}

/*
 * A receive posted as another CPU moves the QP to error is flushed, with
 * no later post to find it: the poster is held by a kprobe on the lock
 * its post takes (the RT kernel's spinlock there), the moment when it has
 * read the state and not yet published the receive, until the error's
 * flush has run.
 */
static int recv_posted_as_qp_fails_flushed(struct kt *t)
{
	struct kprobe kp = {
		.symbol_name = IS_ENABLED(CONFIG_PREEMPT_RT) ? "rt_spin_lock" :
							      "_raw_spin_lock_irqsave",
		.pre_handler = kt_hold_lock,
	};
	struct ib_sge sge = {
		.addr = t->dst.dma,
		.length = 64,
		.lkey = t->pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = { .sg_list = &sge, .num_sge = 1 };
	const struct ib_recv_wr *bad;
	struct task_struct *fail_qp;
	u64 first_id;
	struct ib_wc wc;
	bool held;
	int ret;

	if (!IS_ENABLED(CONFIG_KPROBES))
		return kt_fail(t, "needs CONFIG_KPROBES");
	if (num_online_cpus() < 2)
		return kt_fail(t, "needs two CPUs");
	ret = kt_post_recv(t, &t->p, 1, &first_id);
	if (ret)
		return ret;
	kt_hold.poster = current;
	kt_hold.t = t;
	kt_hold.go = 0;
	kt_hold.flushed = 0;
	kt_hold.in_time = false;
	fail_qp = kthread_create(kt_hold_fail_qp, &first_id, "kt_fail_qp");
	if (IS_ERR(fail_qp))
		return kt_fail(t, "kthread_create: %ld", PTR_ERR(fail_qp));
	ret = register_kprobe(&kp);
	if (ret) {
		kthread_stop(fail_qp);
		return kt_fail(t, "register_kprobe(%s): %d", kp.symbol_name, ret);
	}
	/* The poster stays on its CPU, the kthread runs on another. */
	migrate_disable();
	kthread_bind(fail_qp, cpumask_any_but(cpu_online_mask, smp_processor_id()));
	wake_up_process(fail_qp);
	wr.wr_id = ++t->wr_id;
	/*
	 * No interrupt on this CPU may take a spinlock meanwhile and be held
	 * in the post's place.  (PREEMPT_RT runs interrupts in threads, and
	 * its spinlocks may sleep.)
	 */
	if (!IS_ENABLED(CONFIG_PREEMPT_RT))
		local_irq_disable();
	atomic_set(&kt_hold.armed, 1);
	ret = ib_post_recv(t->p.qp[1], &wr, &bad);
	held = !atomic_xchg(&kt_hold.armed, 0);
	if (!IS_ENABLED(CONFIG_PREEMPT_RT))
		local_irq_enable();
	migrate_enable();
	unregister_kprobe(&kp);
	WRITE_ONCE(kt_hold.go, 1);
	kthread_stop(fail_qp);
	if (ret)
		return kt_fail(t, "ib_post_recv: %d", ret);
	t->p.rcq[1].pending++;
	if (!held)
		return kt_fail(t, "the post took no %s: nothing held it", kp.symbol_name);
	if (kt_hold.ret)
		return kt_fail(t, "QP to ERR: %d", kt_hold.ret);
	if (!kt_hold.in_time)
		return kt_fail(t, "the error's flush did not run while the post was held");
	return kt_wait(t, &t->p.rcq[1], wr.wr_id, &wc, "the receive posted as the QP failed") ?:
	       kt_status(t, "the receive posted as the QP failed", &wc,
			 IB_WC_WR_FLUSH_ERR, IB_WC_RECV);
}

struct kt_case {
	const char *name;
	int (*run)(struct kt *t);
	bool frwr;		/* needs IB_DEVICE_MEM_MGT_EXTENSIONS */
};

#define KT_CASE(fn, frwr) { #fn, fn, frwr }

static const struct kt_case kt_cases[] = {
	KT_CASE(frwr_write_lands_in_range, true),
	KT_CASE(frwr_read_returns_registered_bytes, true),
	KT_CASE(frwr_three_separate_pages_first_offset, true),
	KT_CASE(frwr_two_entries_sg_offset, true),
	KT_CASE(frwr_key_update_old_rkey_refused, true),
	KT_CASE(local_inv_remote_write_refused, true),
	KT_CASE(local_inv_lkey_refused, true),
	KT_CASE(send_with_inv_invalidates_rkey, true),
	KT_CASE(frwr_reregister_after_invalidate, true),
	KT_CASE(frwr_map_while_valid_then_reregister, true),
	KT_CASE(reg_mr_of_valid_mr_refused, true),
	KT_CASE(frwr_remote_read_only_write_refused, true),
	KT_CASE(frwr_write_past_length_refused, true),
	KT_CASE(local_inv_wrong_key_refused, true),
	KT_CASE(send_with_inv_unknown_rkey_refused, true),
	KT_CASE(send_with_inv_other_pd_rkey_refused, true),
	KT_CASE(reg_mr_other_pd_refused, true),
	KT_CASE(map_mr_sg_over_max_num_sg, true),
	KT_CASE(dma_mr_send_recv, false),
	KT_CASE(cq_resize_keeps_completions, false),
	KT_CASE(reset_drops_completions, false),
	KT_CASE(recv_posted_as_qp_fails_flushed, false),
};

static void kt_teardown(struct kt *t)
{
	unsigned int i;

	kt_pair_destroy(t, &t->q);
	kt_pair_destroy(t, &t->p);
	for (i = 0; i < ARRAY_SIZE(t->r); i++)
		kt_region_free(t, &t->r[i]);
	kt_buf_free(t, &t->src);
	kt_buf_free(t, &t->dst);
	if (t->pd2)
		ib_dealloc_pd(t->pd2);
	if (t->pd)
		ib_dealloc_pd(t->pd);
}

/* Why @c cannot run on this device, or NULL. */
static const char *kt_skip_reason(const struct kt_case *c)
{
	struct ib_device *ibdev = kt_dev.ibdev;

	if (!ib_uses_virt_dma(ibdev))
		return "the device does not use virtual DMA";
	if (c->frwr && !(ibdev->attrs.device_cap_flags & IB_DEVICE_MEM_MGT_EXTENSIONS))
		return "the device lacks IB_DEVICE_MEM_MGT_EXTENSIONS";
	return NULL;
}

/* Runs case @c as test @n; false if it failed. */
static bool kt_run(const struct kt_case *c, unsigned int n)
{
	const char *skip = kt_skip_reason(c);
	struct kt *t;
	bool ok;
	int ret;

	if (skip) {
		pr_info("ok %u %s # SKIP %s\n", n, c->name, skip);
		return true;
	}
	t = kzalloc(sizeof(*t), GFP_KERNEL);
	if (!t) {
		pr_info("not ok %u %s # no memory\n", n, c->name);
		return false;
	}
	t->name = c->name;
	t->ibdev = kt_dev.ibdev;
	ret = kt_pd_alloc(t, &t->pd) ?:
	      kt_pair_create(t, t->pd, &t->p) ?:
	      kt_buf_init(t, &t->src) ?:
	      kt_buf_init(t, &t->dst) ?:
	      c->run(t);
	if (ret && !t->why[0])
		kt_fail(t, "error %d", ret);
	kt_teardown(t);
	ok = !t->why[0];
	if (!ok)
		pr_info("not ok %u %s # %s\n", n, c->name, t->why);
	else if (t->xfail[0])
		pr_info("ok %u %s # XFAIL %s\n", n, c->name, t->xfail);
	else
		pr_info("ok %u %s\n", n, c->name);
	kfree(t);
	return ok;
}

/* Finds the GID to use (gid_index=, or the first RoCEv2 IPv4 one) and its MAC. */
static int kt_find_gid(void)
{
	struct ib_device *ibdev = kt_dev.ibdev;
	const struct ib_gid_attr *attr;
	struct net_device *ndev;
	struct ib_port_attr pattr;
	int i, ret;

	if (!rdma_protocol_roce(ibdev, KT_PORT)) {
		pr_err("%s is not a RoCE device\n", dev_name(&ibdev->dev));
		return -EINVAL;
	}
	ret = ib_query_port(ibdev, KT_PORT, &pattr);
	if (ret)
		return ret;
	for (i = 0; i < pattr.gid_tbl_len; i++) {
		if (gid_index >= 0 && i != gid_index)
			continue;
		attr = rdma_get_gid_attr(ibdev, KT_PORT, i);
		if (IS_ERR(attr))
			continue;
		if (gid_index >= 0 ||
		    (attr->gid_type == IB_GID_TYPE_ROCE_UDP_ENCAP &&
		     ipv6_addr_v4mapped((const struct in6_addr *)attr->gid.raw))) {
			ret = -ENODEV;
			rcu_read_lock();
			ndev = rdma_read_gid_attr_ndev_rcu(attr);
			if (!IS_ERR(ndev)) {
				ether_addr_copy(kt_dev.mac, ndev->dev_addr);
				ret = 0;
			}
			rcu_read_unlock();
			kt_dev.gid = attr->gid;
			kt_dev.gid_index = i;
			rdma_put_gid_attr(attr);
			return ret;
		}
		rdma_put_gid_attr(attr);
	}
	pr_err("%s has no %s GID\n", dev_name(&ibdev->dev),
	       gid_index >= 0 ? "such" : "RoCEv2 IPv4");
	return -ENODEV;
}

static int kt_add(struct ib_device *ibdev)
{
	if (kt_dev.ibdev || strcmp(dev_name(&ibdev->dev), kt_devname))
		return -EOPNOTSUPP;
	kt_dev.ibdev = ibdev;
	return 0;
}

/* The device goes only once the cases that use it are done. */
static void kt_remove(struct ib_device *ibdev, void *client_data)
{
	wait_for_completion(&kt_dev.done);
}

static struct ib_client kt_client = {
	.name = "softrma_ktest",
	.add = kt_add,
	.remove = kt_remove,
};

static int __init kt_init(void)
{
	unsigned int i, n = 0, failed = 0;
	int ret;

	if (!kt_devname) {
		pr_err("dev=<RDMA device> is required\n");
		return -EINVAL;
	}
	init_completion(&kt_dev.done);
	ret = ib_register_client(&kt_client);
	if (ret)
		return ret;
	if (!kt_dev.ibdev) {
		pr_err("no RDMA device %s\n", kt_devname);
		ret = -ENODEV;
		goto out;
	}
	ret = kt_find_gid();
	if (ret)
		goto out;

	for (i = 0; i < ARRAY_SIZE(kt_cases); i++)
		if (!cases || strstr(kt_cases[i].name, cases))
			n++;
	pr_info("KTAP version 1\n");
	pr_info("1..%u\n", n);
	pr_info("# %s%s, GID %d %pI6c, MAC %pM\n", dev_name(&kt_dev.ibdev->dev),
		kt_is_rxe(kt_dev.ibdev) ? " (rdma_rxe)" : "",
		kt_dev.gid_index, kt_dev.gid.raw, kt_dev.mac);
	n = 0;
	for (i = 0; i < ARRAY_SIZE(kt_cases); i++)
		if (!cases || strstr(kt_cases[i].name, cases))
			failed += !kt_run(&kt_cases[i], ++n);
	pr_info("# %u of %u failed\n", failed, n);
	ret = failed ? -EINVAL : 0;
out:
	complete(&kt_dev.done);
	ib_unregister_client(&kt_client);
	return ret;
}

static void __exit kt_exit(void)
{
}

module_init(kt_init);
module_exit(kt_exit);

MODULE_AUTHOR("The softrma developers");
MODULE_DESCRIPTION("softrma_ktest: fast registration, invalidation and CQ resizing through kernel verbs");
MODULE_LICENSE("Dual BSD/GPL");
