// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * XRC (IBA annex A14) between an XRC SEND QP (the INI, on a PD of its own)
 * and an XRC RECV QP (the TGT, which has no PD, receive queue or CQ) of
 * one device, connected to each other as an RC pair:
 * - domains: ibv_open_xrcd() with no file and O_CREAT; two opens of one
 *   file, in this process or in a forked child, are one domain (the child
 *   ibv_open_qp()s the TGT QP by number, a message to its own SRQ arrives,
 *   and the TGT QP lives on through its handle when ours is gone);
 *   ibv_close_xrcd() of a domain an XRC SRQ, a TGT QP or an opened QP
 *   handle uses is EBUSY;
 * - XRC SRQs (ibv_create_srq_ex()): numbered (ibv_get_srq_num()), EINVAL
 *   without a PD, a domain or a CQ, EOPNOTSUPP for a tag matching SRQ;
 *   ibv_get_srq_num() of a basic SRQ fails; a number of three bytes
 *   reaches its SRQ whole;
 * - SEND and SEND with immediate (wr.qp_type.xrc.remote_srqn, and
 *   ibv_wr_set_xrc_srqn()) land in the SRQ they name and complete in its
 *   CQ with the TGT QP's number; two SRQs behind one TGT QP each get
 *   exactly their messages; messages of 64 path MTUs; RNR until a receive
 *   is posted;
 * - RDMA WRITE (with immediate), READ and both atomics reach memory of the
 *   named SRQ's PD, and no other: through an SRQ of another PD, or with a
 *   key of the INI's PD, IBV_WC_REM_ACCESS_ERR and no byte changes;
 * - hostile SRQ numbers: another domain's SRQ, 0, 0xffffff, a destroyed
 *   SRQ's, the lower bytes of an SRQ's: IBV_WC_REM_INV_REQ_ERR, nothing
 *   completes in any SRQ's CQ, no byte changes, and the receives stay for
 *   the messages that may take them; a receive held by a message cut short
 *   (its sender's memory deregistered during the copy: the local
 *   transport only) never serves a message to another SRQ;
 * - an SRQ destroyed while a thread keeps sending into it (nothing
 *   completes in its CQ once the destroy returned), and a process killed
 *   in the middle of XRC traffic both ways;
 * - posting refused: receives on both QP types, sends on the TGT QP,
 *   memory window binds on the INI.
 * One kselftest_harness.h case per behaviour, each run on both transports:
 * the fixture's variants "local" and "wire" (force_wire: RoCEv2 packets,
 * with their XRCETH, through lo).  Every object a case makes is destroyed
 * by teardown, each destroy and close checked.
 *
 * usage: [SOFTRMA_DEV=softrma0] [SOFTRMA_IPV4=10.9.0.1] xrc [HARNESS OPTIONS]
 * (-h: -l lists the cases, -r xrc.wire.srq_of_another_domain one case)
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "pair.h"
#include "transport.h"

#define BUF_LEN		(1 << 20)
#define HALF		(BUF_LEN / 2)	/* receives below, RDMA targets above */
#define SINK		(HALF / 2)	/* of the INI's: READs and atomics */
#define MSG_LEN		3000
#define BIG_LEN		(64 << 10)	/* 64 path MTUs of 1024 bytes */
#define SRQ_WR		256
#define SRQ_SGE		2
#define MAX_OBJS	64
#define TGT_ACCESS	(IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
			 IBV_ACCESS_REMOTE_ATOMIC)
#define INI_OPS		(IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | \
			 IBV_QP_EX_WITH_RDMA_WRITE)

/*
 * Registered memory of three PDs: that of the SRQs, another that SRQs of
 * the same domain may have, and the INI's own.
 */
enum { R_SRQ, R_OTHER, R_INI, NR_REGIONS };

struct region {
	struct ibv_pd *pd;
	char *buf;
	struct ibv_mr *mr;
};

enum kind { QP, SRQ, CQ, XRCD };

struct obj {
	enum kind kind;
	void *p;		/* NULL once destroyed */
};

struct xsrq {
	struct ibv_srq *srq;
	struct ibv_cq *cq;	/* its own */
	uint32_t num;
	struct region *r;	/* memory of its PD */
};

/* An INI connected to a TGT, and back. */
struct chan {
	struct ibv_qp *ini;
	struct ibv_qp *tgt;
	uint32_t tgt_num;
	struct ibv_cq *cq;	/* the INI's */
};

FIXTURE(xrc) {
	struct region r[NR_REGIONS];
	struct ibv_xrcd *xrcd;	/* no file */
	char path[32];		/* of a file for shared domains */
	struct obj obj[MAX_OBJS];	/* teardown destroys them, last first */
	int nobj;
};

TRANSPORT_VARIANTS(xrc);

#define EXPECT_WC(wc, want) do {					\
	struct ibv_wc w_ = (wc);					\
	CHECK(w_.status == (want), "wr %#llx: %s, want %s",		\
	      (unsigned long long)w_.wr_id, ibv_wc_status_str(w_.status), \
	      ibv_wc_status_str(want));					\
} while (0)

static void *keep(FIXTURE_DATA(xrc) *self, enum kind kind, void *p)
{
	CHECK(p, "create: %s", strerror(errno));
	CHECK(self->nobj < MAX_OBJS, "more than %d objects", MAX_OBJS);
	self->obj[self->nobj++] = (struct obj) { kind, p };
	return p;
}

static int destroy(enum kind kind, void *p)
{
	switch (kind) {
	case QP:
		return ibv_destroy_qp(p);
	case SRQ:
		return ibv_destroy_srq(p);
	case CQ:
		return ibv_destroy_cq(p);
	default:
		return ibv_close_xrcd(p);
	}
}

/* Destroys @p, an object of the case, now. */
static void drop(FIXTURE_DATA(xrc) *self, void *p)
{
	for (int i = self->nobj - 1; i >= 0; i--) {
		if (self->obj[i].p != p)
			continue;
		CHECK_EQ(destroy(self->obj[i].kind, p), 0);
		self->obj[i].p = NULL;
		return;
	}
	FAIL("%p is no object of the case", p);
}

/* Objects depend only on older ones: the newest go first. */
static void drop_all(FIXTURE_DATA(xrc) *self)
{
	for (int i = self->nobj - 1; i >= 0; i--)
		if (self->obj[i].p)
			drop(self, self->obj[i].p);
	self->nobj = 0;
}

static void regions_init(FIXTURE_DATA(xrc) *self)
{
	for (int i = 0; i < NR_REGIONS; i++) {
		struct region *r = &self->r[i];

		r->pd = ibv_alloc_pd(ctx);
		CHECK(r->pd, "alloc_pd: %s", strerror(errno));
		r->buf = mmap(NULL, BUF_LEN, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		CHECK(r->buf != MAP_FAILED, "mmap: %s", strerror(errno));
		r->mr = ibv_reg_mr(r->pd, r->buf, BUF_LEN, ALL_ACCESS);
		CHECK(r->mr, "reg_mr: %s", strerror(errno));
	}
}

static void regions_fini(FIXTURE_DATA(xrc) *self)
{
	for (int i = 0; i < NR_REGIONS; i++) {
		CHECK_EQ(ibv_dereg_mr(self->r[i].mr), 0);
		CHECK_EQ(ibv_dealloc_pd(self->r[i].pd), 0);
		CHECK_EQ(munmap(self->r[i].buf, BUF_LEN), 0);
	}
}

static struct ibv_xrcd *open_xrcd(int fd, int oflags)
{
	struct ibv_xrcd_init_attr attr = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = fd, .oflags = oflags,
	};

	return ibv_open_xrcd(ctx, &attr);
}

/* The domain of the file at @path; the fd may go once it is open. */
static struct ibv_xrcd *open_file_xrcd(const char *path, int oflags)
{
	int fd = open(path, O_RDONLY);
	struct ibv_xrcd *xrcd;

	CHECK(fd >= 0, "%s: %s", path, strerror(errno));
	xrcd = open_xrcd(fd, oflags);
	CHECK_EQ(close(fd), 0);
	return xrcd;
}

FIXTURE_SETUP(xrc)
{
	int fd;

	ctx = transport_open_device(&gid_index);
	if (!transport_set(variant->force_wire))
		SKIP(return, "%s: %s", FORCE_WIRE, strerror(errno));
	regions_init(self);
	self->xrcd = keep(self, XRCD, open_xrcd(-1, O_CREAT));
	strcpy(self->path, "/tmp/xrc.XXXXXX");
	fd = mkstemp(self->path);
	CHECK(fd >= 0, "mkstemp: %s", strerror(errno));
	CHECK_EQ(close(fd), 0);
}

FIXTURE_TEARDOWN(xrc)
{
	drop_all(self);
	regions_fini(self);
	CHECK_EQ(unlink(self->path), 0);
	CHECK_EQ(ibv_close_device(ctx), 0);
	transport_put_back();
}

static struct ibv_srq *create_xsrq(struct ibv_xrcd *xrcd, struct ibv_pd *pd,
				   struct ibv_cq *cq, uint32_t comp_mask,
				   uint32_t max_sge)
{
	struct ibv_srq_init_attr_ex attr = {
		.attr = { .max_wr = SRQ_WR, .max_sge = max_sge },
		.comp_mask = comp_mask, .srq_type = IBV_SRQT_XRC,
		.pd = pd, .xrcd = xrcd, .cq = cq,
	};

	return ibv_create_srq_ex(ctx, &attr);
}

#define XSRQ_MASK (IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | \
		   IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ)

/* An XRC SRQ of @xrcd on @r's PD, with a CQ of its own. */
static struct xsrq xsrq_new_sge(FIXTURE_DATA(xrc) *self,
				struct ibv_xrcd *xrcd, struct region *r,
				uint32_t max_sge)
{
	struct xsrq x = { .r = r };

	x.cq = keep(self, CQ, ibv_create_cq(ctx, 2 * SRQ_WR, NULL, NULL, 0));
	x.srq = keep(self, SRQ, create_xsrq(xrcd, r->pd, x.cq, XSRQ_MASK,
					    max_sge));
	CHECK_EQ(ibv_get_srq_num(x.srq, &x.num), 0);
	return x;
}

static struct xsrq xsrq_new(FIXTURE_DATA(xrc) *self, struct ibv_xrcd *xrcd,
			    struct region *r)
{
	return xsrq_new_sge(self, xrcd, r, SRQ_SGE);
}

/* A receive of @len bytes at @off of the SRQ's memory. */
static void xsrq_recv(struct xsrq *x, uint64_t wr_id, uint32_t off,
		      uint32_t len)
{
	struct ibv_sge sge = { (uintptr_t)x->r->buf + off, len, x->r->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	CHECK_EQ(ibv_post_srq_recv(x->srq, &wr, &bad), 0);
}

/* After the sender's completion, a receive completion may still come. */
static void expect_no_wc(struct ibv_cq *cq, const char *what)
{
	struct ibv_wc wc;

	usleep(test_bound(50) * 1000);
	CHECK(ibv_poll_cq(cq, 1, &wc) == 0, "%s: wr %#llx completed (%s)",
	      what, (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status));
}

static void modify(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask)
{
	int ret = ibv_modify_qp(qp, attr, mask);

	CHECK(!ret, "modify_qp %u to state %d: %s", qp->qp_num,
	      attr->qp_state, strerror(ret));
}

static void to_init(struct ibv_qp *qp, int access)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = access,
	};

	modify(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
	       IBV_QP_ACCESS_FLAGS);
}

/* An XRC RECV QP of @xrcd in INIT, granting every remote access. */
static struct ibv_qp *tgt_new(FIXTURE_DATA(xrc) *self, struct ibv_xrcd *xrcd)
{
	struct ibv_qp_init_attr_ex init = {
		.qp_type = IBV_QPT_XRC_RECV,
		.comp_mask = IBV_QP_INIT_ATTR_XRCD, .xrcd = xrcd,
	};
	struct ibv_qp *qp = keep(self, QP, ibv_create_qp_ex(ctx, &init));

	to_init(qp, TGT_ACCESS);
	return qp;
}

/* An XRC SEND QP on the INI's PD in INIT; ibv_wr_*() with @send_ops. */
static struct ibv_qp *ini_new(FIXTURE_DATA(xrc) *self, struct ibv_cq *cq,
			      uint64_t send_ops)
{
	struct ibv_qp_init_attr_ex init = {
		.qp_type = IBV_QPT_XRC_SEND, .send_cq = cq, .recv_cq = cq,
		.cap = { .max_send_wr = 64, .max_send_sge = TEST_MAX_SGE,
			 .max_inline_data = 64 },
		.comp_mask = IBV_QP_INIT_ATTR_PD, .pd = self->r[R_INI].pd,
	};
	struct ibv_qp *qp;

	if (send_ops) {
		init.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		init.send_ops_flags = send_ops;
	}
	qp = keep(self, QP, ibv_create_qp_ex(ctx, &init));
	to_init(qp, 0);
	return qp;
}

/*
 * @qp to RTR, its peer QP @dest on this port: an XRC RECV QP has the
 * responder's attributes, which an XRC SEND QP must not be given.
 */
static void to_rtr(struct ibv_qp *qp, uint32_t dest)
{
	bool tgt = qp->qp_type == IBV_QPT_XRC_RECV;
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
		.dest_qp_num = dest, .rq_psn = 0, .max_dest_rd_atomic = 16,
		.min_rnr_timer = 1,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .sgid_index = gid_index, .hop_limit = 64 } },
	};

	CHECK_EQ(ibv_query_gid(ctx, 1, gid_index, &attr.ah_attr.grh.dgid), 0);
	modify(qp, &attr, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
	       IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
	       (tgt ? IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER : 0));
}

static void ini_to_rts(struct ibv_qp *qp, int rnr_retry)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_RTS, .timeout = test_ack_timeout(),
		.retry_cnt = 7, .rnr_retry = rnr_retry, .sq_psn = 0,
		.max_rd_atomic = 16,
	};

	modify(qp, &attr, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
	       IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

/* The INI's CQ, the INI, a TGT of @xrcd, connected to each other. */
static struct chan chan_new_ops(FIXTURE_DATA(xrc) *self,
				struct ibv_xrcd *xrcd, int rnr_retry,
				uint64_t send_ops)
{
	struct chan c;

	c.cq = keep(self, CQ, ibv_create_cq(ctx, 256, NULL, NULL, 0));
	c.ini = ini_new(self, c.cq, send_ops);
	c.tgt = tgt_new(self, xrcd);
	c.tgt_num = c.tgt->qp_num;
	to_rtr(c.tgt, c.ini->qp_num);
	to_rtr(c.ini, c.tgt_num);
	ini_to_rts(c.ini, rnr_retry);
	return c;
}

static struct chan chan_new(FIXTURE_DATA(xrc) *self, struct ibv_xrcd *xrcd,
			    int rnr_retry)
{
	return chan_new_ops(self, xrcd, rnr_retry, 0);
}

/* Posts @wr, signalled, to SRQ @srqn; without waiting. */
static void post_xrc(struct chan *c, struct ibv_send_wr *wr, uint32_t srqn)
{
	struct ibv_send_wr *bad;
	int ret;

	wr->qp_type.xrc.remote_srqn = srqn;
	wr->send_flags |= IBV_SEND_SIGNALED;
	ret = ibv_post_send(c->ini, wr, &bad);
	CHECK(!ret, "post_send: %s", strerror(ret));
}

static struct ibv_wc wait_xrc(struct chan *c, struct ibv_send_wr *wr,
			      uint32_t srqn)
{
	post_xrc(c, wr, srqn);
	return test_poll_one(c->cq, 10);
}

/*
 * A SEND (with immediate @imm unless it is 0) of @len bytes at @off of the
 * INI's memory to SRQ @srqn: the INI's completion.
 */
static struct ibv_wc xsend(FIXTURE_DATA(xrc) *self, struct chan *c,
			   uint32_t srqn, uint32_t off, uint32_t len,
			   uint32_t imm)
{
	struct region *r = &self->r[R_INI];
	struct ibv_sge sge = { (uintptr_t)r->buf + off, len, r->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 0x5e4d0000 + len, .sg_list = &sge, .num_sge = 1,
		.opcode = imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND,
		.imm_data = htonl(imm),
	};

	return wait_xrc(c, &wr, srqn);
}

/*
 * An RDMA or atomic @opcode through SRQ @srqn on @len bytes at HALF + @off
 * of @t's memory, with @key (@t's rkey when 0); the INI's memory at @off
 * (WRITE: from it) or SINK + @off (READ and atomics: into it).
 */
static struct ibv_wc xrdma(FIXTURE_DATA(xrc) *self, struct chan *c,
			   uint32_t srqn, enum ibv_wr_opcode opcode,
			   struct region *t, uint32_t key, uint32_t off,
			   uint32_t len, uint64_t compare_add, uint64_t swap)
{
	bool atomic = opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
		      opcode == IBV_WR_ATOMIC_FETCH_AND_ADD;
	bool from_ini = opcode == IBV_WR_RDMA_WRITE ||
			opcode == IBV_WR_RDMA_WRITE_WITH_IMM;
	struct region *r = &self->r[R_INI];
	struct ibv_sge sge = {
		(uintptr_t)r->buf + (from_ini ? 0 : SINK) + off,
		atomic ? 8 : len, r->mr->lkey,
	};
	uint64_t remote = (uintptr_t)t->buf + HALF + off;
	struct ibv_send_wr wr = {
		.wr_id = 0xd4a0000 + opcode, .sg_list = &sge, .num_sge = 1,
		.opcode = opcode, .imm_data = htonl(0x1d),
	};

	key = key ? key : t->mr->rkey;
	if (atomic)
		wr.wr.atomic = (typeof(wr.wr.atomic)) { remote, compare_add,
							swap, key };
	else
		wr.wr.rdma = (typeof(wr.wr.rdma)) { remote, key };
	return wait_xrc(c, &wr, srqn);
}

/* A receive completion of the TGT QP @tgt_num. */
static void check_recv(struct ibv_wc wc, uint64_t wr_id, uint32_t tgt_num,
		       uint32_t len, uint32_t imm)
{
	EXPECT_WC(wc, IBV_WC_SUCCESS);
	CHECK_EQ(wc.wr_id, wr_id);
	CHECK_EQ(wc.qp_num, tgt_num);
	CHECK_EQ(wc.byte_len, len);
	if (imm) {
		CHECK(wc.wc_flags & IBV_WC_WITH_IMM, "no immediate data");
		CHECK_EQ(ntohl(wc.imm_data), imm);
	} else {
		CHECK(!(wc.wc_flags & IBV_WC_WITH_IMM), "immediate data");
	}
}

/*
 * A SEND of @len bytes from the INI through @c into a receive posted for
 * it in @x (with no other receive): data, number, length and immediate.
 */
static void deliver(FIXTURE_DATA(xrc) *self, struct chan *c, struct xsrq *x,
		    uint32_t len, uint32_t imm)
{
	static unsigned int seed = 0x40;
	char *src = self->r[R_INI].buf, *dst = x->r->buf;
	uint64_t id = 0xdeed0000 + ++seed;
	struct ibv_wc wc;

	fill(src, len, seed);
	memset(dst, 0, len);
	xsrq_recv(x, id, 0, len);
	EXPECT_WC(xsend(self, c, x->num, 0, len, imm), IBV_WC_SUCCESS);
	wc = test_poll_one(x->cq, 10);
	check_recv(wc, id, c->tgt_num, len, imm);
	CHECK_EQ(wc.opcode, IBV_WC_RECV);
	CHECK(!memcmp(dst, src, len), "the SEND's data");
}

/* Copies of every region, to find what a refused request changed. */
struct snap {
	char *copy[NR_REGIONS];
};

static void snap_take(FIXTURE_DATA(xrc) *self, struct snap *s)
{
	for (int i = 0; i < NR_REGIONS; i++) {
		s->copy[i] = malloc(BUF_LEN);
		CHECK(s->copy[i], "malloc");
		memcpy(s->copy[i], self->r[i].buf, BUF_LEN);
	}
}

static void snap_same(FIXTURE_DATA(xrc) *self, struct snap *s,
		      const char *what)
{
	for (int i = 0; i < NR_REGIONS; i++) {
		for (size_t b = 0; b < BUF_LEN; b++)
			CHECK(self->r[i].buf[b] == s->copy[i][b],
			      "%s: byte %zu of region %d changed", what, b, i);
		free(s->copy[i]);
	}
}

/* The regions hold a pattern each, so that any write shows. */
static void regions_fill(FIXTURE_DATA(xrc) *self)
{
	for (int i = 0; i < NR_REGIONS; i++)
		fill(self->r[i].buf, BUF_LEN, 0x11 * (i + 1));
}

/* ibv_open_xrcd() with no file and O_CREAT: a domain of its own. */
TEST_F(xrc, domain_without_file)
{
	struct ibv_xrcd *x = keep(self, XRCD, open_xrcd(-1, O_CREAT));
	struct xsrq s = xsrq_new(self, x, &self->r[R_SRQ]);
	struct chan c = chan_new(self, x, 0);

	deliver(self, &c, &s, MSG_LEN, 0);
	drop(self, c.tgt);
	drop(self, s.srq);
	drop(self, x);
}

/*
 * A file opened twice is one domain: an SRQ of one handle is reached
 * through a TGT QP of the other, which the first can open by number.
 * O_CREAT | O_EXCL on it is EINVAL; a file without a domain needs O_CREAT.
 */
TEST_F(xrc, file_opened_twice_is_one_domain)
{
	struct ibv_xrcd *x1, *x2;
	struct ibv_qp_open_attr attr;
	struct ibv_qp *opened;
	struct xsrq s;
	struct chan c;

	errno = 0;
	CHECK(!open_file_xrcd(self->path, 0), "a domain without O_CREAT");
	CHECK(errno, "no errno");
	x1 = keep(self, XRCD, open_file_xrcd(self->path, O_CREAT));
	x2 = keep(self, XRCD, open_file_xrcd(self->path, 0));
	errno = 0;
	CHECK(!open_file_xrcd(self->path, O_CREAT | O_EXCL) && errno == EINVAL,
	      "O_CREAT | O_EXCL on a file with a domain: %s", strerror(errno));
	s = xsrq_new(self, x1, &self->r[R_SRQ]);
	c = chan_new(self, x2, 0);
	deliver(self, &c, &s, MSG_LEN, 0x0ce);
	attr = (struct ibv_qp_open_attr) {
		.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |
			     IBV_QP_OPEN_ATTR_TYPE,
		.qp_num = c.tgt_num, .xrcd = x1, .qp_type = IBV_QPT_XRC_RECV,
	};
	opened = keep(self, QP, ibv_open_qp(ctx, &attr));
	CHECK_EQ(opened->qp_num, c.tgt_num);
	CHECK_EQ(opened->qp_type, IBV_QPT_XRC_RECV);
	deliver(self, &c, &s, MSG_LEN, 0);
}

#define CHILD_SEED	0x3b

static void write_all(int fd, const void *p, size_t len)
{
	CHECK(write(fd, p, len) == (ssize_t)len, "write: %s", strerror(errno));
}

static void read_all(int fd, void *p, size_t len)
{
	CHECK(read(fd, p, len) == (ssize_t)len, "the other process is gone");
}

/*
 * shared_with_child's child: the domain of @path opened again, the TGT
 * QP @tgt_num opened by number, an SRQ of its own there; it checks the
 * message the parent sends to that SRQ, and keeps the TGT QP open until
 * the parent says so.
 */
static void __attribute__((noreturn)) child_opens(const char *path,
						  uint32_t tgt_num, int in,
						  int out)
{
	FIXTURE_DATA(xrc) c = {};
	struct ibv_qp_open_attr attr = {
		.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |
			     IBV_QP_OPEN_ATTR_TYPE,
		.qp_num = tgt_num, .qp_type = IBV_QPT_XRC_RECV,
	};
	char *want = malloc(MSG_LEN), go;
	struct ibv_qp *tgt;
	struct xsrq s;

	CHECK(want, "malloc");
	ctx = transport_open_device(&gid_index);
	regions_init(&c);
	attr.xrcd = keep(&c, XRCD, open_file_xrcd(path, 0));
	tgt = keep(&c, QP, ibv_open_qp(ctx, &attr));
	CHECK_EQ(tgt->qp_num, tgt_num);
	s = xsrq_new(&c, attr.xrcd, &c.r[R_SRQ]);
	xsrq_recv(&s, 0xc1d, 0, MSG_LEN);
	write_all(out, &s.num, sizeof(s.num));
	read_all(in, &go, 1);
	fill(want, MSG_LEN, CHILD_SEED);
	check_recv(test_poll_one(s.cq, 10), 0xc1d, tgt_num, MSG_LEN, 0);
	CHECK(!memcmp(c.r[R_SRQ].buf, want, MSG_LEN), "the SEND's data");
	write_all(out, "k", 1);
	read_all(in, &go, 1);
	drop_all(&c);
	regions_fini(&c);
	CHECK_EQ(ibv_close_device(ctx), 0);
	_exit(0);
}

/*
 * A forked child opens the file's domain and our TGT QP by number: a
 * message through that QP to the child's SRQ arrives there, and once our
 * handle of the TGT QP is gone, the child's keeps the QP, which takes our
 * messages to our SRQ as before.
 */
TEST_F(xrc, file_domain_shared_with_child)
{
	struct ibv_xrcd *x = keep(self, XRCD, open_file_xrcd(self->path, O_CREAT));
	struct xsrq s = xsrq_new(self, x, &self->r[R_SRQ]);
	struct chan c = chan_new(self, x, 0);
	int to_child[2], from_child[2], status;
	uint32_t child_srqn;
	pid_t pid;
	char ok;

	deliver(self, &c, &s, MSG_LEN, 0);
	CHECK(!pipe(to_child) && !pipe(from_child), "pipe: %s", strerror(errno));
	pid = fork();
	CHECK(pid >= 0, "fork: %s", strerror(errno));
	if (!pid)
		child_opens(self->path, c.tgt_num, to_child[0], from_child[1]);
	CHECK_EQ(close(to_child[0]), 0);
	CHECK_EQ(close(from_child[1]), 0);
	read_all(from_child[0], &child_srqn, sizeof(child_srqn));
	CHECK(child_srqn != s.num, "the child's SRQ has our SRQ's number");
	fill(self->r[R_INI].buf, MSG_LEN, CHILD_SEED);
	EXPECT_WC(xsend(self, &c, child_srqn, 0, MSG_LEN, 0), IBV_WC_SUCCESS);
	write_all(to_child[1], "g", 1);
	read_all(from_child[0], &ok, 1);
	expect_no_wc(s.cq, "our SRQ, after a message to the child's");
	drop(self, c.tgt);
	deliver(self, &c, &s, MSG_LEN, 0x7e);
	deliver(self, &c, &s, BIG_LEN, 0);
	write_all(to_child[1], "d", 1);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status) && !WEXITSTATUS(status), "child status %#x",
	      status);
	CHECK_EQ(close(to_child[1]), 0);
	CHECK_EQ(close(from_child[0]), 0);
}

/*
 * ibv_close_xrcd() is EBUSY while an XRC SRQ, a TGT QP or an opened
 * handle of one uses that handle of the domain; each handle of a file's
 * domain counts only its own.
 */
TEST_F(xrc, close_busy_domain)
{
	struct ibv_xrcd *x = keep(self, XRCD, open_xrcd(-1, O_CREAT));
	struct ibv_qp_open_attr attr = {
		.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |
			     IBV_QP_OPEN_ATTR_TYPE,
		.qp_type = IBV_QPT_XRC_RECV,
	};
	struct ibv_xrcd *x1, *x2;
	struct ibv_qp *t, *t1, *o2;
	struct xsrq s;

	s = xsrq_new(self, x, &self->r[R_SRQ]);
	CHECK_EQ(ibv_close_xrcd(x), EBUSY);
	drop(self, s.srq);
	t = tgt_new(self, x);
	CHECK_EQ(ibv_close_xrcd(x), EBUSY);

	x1 = keep(self, XRCD, open_file_xrcd(self->path, O_CREAT));
	x2 = keep(self, XRCD, open_file_xrcd(self->path, 0));
	t1 = tgt_new(self, x1);
	attr.qp_num = t1->qp_num;
	attr.xrcd = x2;
	o2 = keep(self, QP, ibv_open_qp(ctx, &attr));
	CHECK_EQ(ibv_close_xrcd(x2), EBUSY);
	drop(self, o2);
	drop(self, x2);
	CHECK_EQ(ibv_close_xrcd(x1), EBUSY);
	drop(self, t1);
	drop(self, x1);
	drop(self, t);
	drop(self, x);
}

/* XRC SRQs have numbers, distinct ones, and their size. */
TEST_F(xrc, srq_numbers)
{
	struct xsrq a = xsrq_new(self, self->xrcd, &self->r[R_SRQ]);
	struct xsrq b = xsrq_new(self, self->xrcd, &self->r[R_OTHER]);
	struct ibv_srq_attr attr;

	CHECK(a.num && a.num < 1 << 24, "SRQ number %#x", a.num);
	CHECK(b.num && b.num < 1 << 24, "SRQ number %#x", b.num);
	CHECK(a.num != b.num, "two SRQs numbered %#x", a.num);
	CHECK_EQ(ibv_query_srq(a.srq, &attr), 0);
	CHECK(attr.max_wr >= SRQ_WR, "max_wr %u", attr.max_wr);
}

/* Without a PD, a domain or a CQ: EINVAL, and nothing created. */
TEST_F(xrc, srq_without_pd_domain_or_cq)
{
	struct ibv_cq *cq = keep(self, CQ, ibv_create_cq(ctx, 16, NULL, NULL, 0));
	struct ibv_pd *pd = self->r[R_SRQ].pd;
	struct ibv_xrcd *x = self->xrcd;
	const struct {
		struct ibv_xrcd *xrcd;
		struct ibv_pd *pd;
		struct ibv_cq *cq;
		uint32_t comp_mask;
		const char *what;
	} bad[] = {
		{ x, pd, cq, XSRQ_MASK & ~IBV_SRQ_INIT_ATTR_XRCD, "no XRCD bit" },
		{ NULL, pd, cq, XSRQ_MASK, "a NULL XRCD" },
		{ x, pd, cq, XSRQ_MASK & ~IBV_SRQ_INIT_ATTR_CQ, "no CQ bit" },
		{ x, pd, NULL, XSRQ_MASK, "a NULL CQ" },
		{ x, NULL, cq, XSRQ_MASK, "a NULL PD" },
	};

	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct ibv_srq *srq;

		errno = 0;
		srq = create_xsrq(bad[i].xrcd, bad[i].pd, bad[i].cq,
				  bad[i].comp_mask, SRQ_SGE);
		CHECK(!srq, "%s: created", bad[i].what);
		CHECK(errno == EINVAL, "%s: %s, want EINVAL", bad[i].what,
		      strerror(errno));
	}
}

TEST_F(xrc, tag_matching_srq_refused)
{
	struct ibv_cq *cq = keep(self, CQ, ibv_create_cq(ctx, 16, NULL, NULL, 0));
	struct ibv_srq_init_attr_ex attr = {
		.attr = { .max_wr = 16, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_TM,
		.srq_type = IBV_SRQT_TM, .pd = self->r[R_SRQ].pd, .cq = cq,
		.tm_cap = { .max_num_tags = 16, .max_ops = 8 },
	};

	errno = 0;
	CHECK(!ibv_create_srq_ex(ctx, &attr), "a tag matching SRQ");
	CHECK(errno == EOPNOTSUPP, "%s, want EOPNOTSUPP", strerror(errno));
}

TEST_F(xrc, srq_num_of_basic_srq_refused)
{
	struct ibv_srq_init_attr attr = { .attr = { .max_wr = 16, .max_sge = 1 } };
	struct ibv_srq *srq = keep(self, SRQ, ibv_create_srq(self->r[R_SRQ].pd,
							    &attr));
	uint32_t num = 0x5a5a5a;

	CHECK(ibv_get_srq_num(srq, &num), "a basic SRQ has number %#x", num);
	CHECK_EQ(num, 0x5a5a5a);
}

/* SEND and SEND with immediate, posted as ibv_send_wr. */
TEST_F(xrc, send_to_named_srq)
{
	struct xsrq s = xsrq_new(self, self->xrcd, &self->r[R_SRQ]);
	struct chan c = chan_new(self, self->xrcd, 0);

	deliver(self, &c, &s, MSG_LEN, 0);
	deliver(self, &c, &s, MSG_LEN, 0xfeed);
	deliver(self, &c, &s, 0, 0x5);
	deliver(self, &c, &s, 1, 0);
}

/*
 * ibv_wr_set_xrc_srqn(): a batch of SEND with immediate to one SRQ, SEND
 * to another (of another PD), and WRITE into memory of the second's PD.
 */
TEST_F(xrc, send_through_wr_api)
{
	struct xsrq a = xsrq_new(self, self->xrcd, &self->r[R_SRQ]);
	struct xsrq b = xsrq_new(self, self->xrcd, &self->r[R_OTHER]);
	struct chan c = chan_new_ops(self, self->xrcd, 0, INI_OPS);
	struct ibv_qp_ex *q = ibv_qp_to_qp_ex(c.ini);
	struct region *ini = &self->r[R_INI], *other = &self->r[R_OTHER];
	struct ibv_wc wc;

	CHECK(q, "ibv_qp_to_qp_ex");
	fill(ini->buf, 3 * MSG_LEN, 0x9c);
	memset(self->r[R_SRQ].buf, 0, MSG_LEN);
	memset(other->buf, 0, BUF_LEN);
	xsrq_recv(&a, 0xa, 0, MSG_LEN);
	xsrq_recv(&b, 0xb, 0, MSG_LEN);
	ibv_wr_start(q);
	q->wr_id = 1;
	q->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send_imm(q, htonl(0xa11));
	ibv_wr_set_xrc_srqn(q, a.num);
	ibv_wr_set_sge(q, ini->mr->lkey, (uintptr_t)ini->buf, MSG_LEN);
	q->wr_id = 2;
	ibv_wr_send(q);
	ibv_wr_set_xrc_srqn(q, b.num);
	ibv_wr_set_sge(q, ini->mr->lkey, (uintptr_t)ini->buf + MSG_LEN,
		       MSG_LEN);
	q->wr_id = 3;
	ibv_wr_rdma_write(q, other->mr->rkey, (uintptr_t)other->buf + HALF);
	ibv_wr_set_xrc_srqn(q, b.num);
	ibv_wr_set_sge(q, ini->mr->lkey, (uintptr_t)ini->buf + 2 * MSG_LEN,
		       MSG_LEN);
	CHECK_EQ(ibv_wr_complete(q), 0);
	for (uint64_t id = 1; id <= 3; id++) {
		wc = test_poll_one(c.cq, 10);
		EXPECT_WC(wc, IBV_WC_SUCCESS);
		CHECK_EQ(wc.wr_id, id);
	}
	check_recv(test_poll_one(a.cq, 10), 0xa, c.tgt_num, MSG_LEN, 0xa11);
	check_recv(test_poll_one(b.cq, 10), 0xb, c.tgt_num, MSG_LEN, 0);
	CHECK(!memcmp(self->r[R_SRQ].buf, ini->buf, MSG_LEN), "a's data");
	CHECK(!memcmp(other->buf, ini->buf + MSG_LEN, MSG_LEN), "b's data");
	CHECK(!memcmp(other->buf + HALF, ini->buf + 2 * MSG_LEN, MSG_LEN),
	      "the WRITE's data");
}

/*
 * Two SRQs behind one TGT QP, messages to them interleaved: each SRQ's CQ
 * has exactly the messages that named it, in order, with their data.
 */
TEST_F(xrc, two_srqs_behind_one_tgt)
{
	static const int to_b[] = { 0, 1, 1, 0, 1, 0, 0, 1, 1, 1 };
	const int n = sizeof(to_b) / sizeof(to_b[0]);
	struct xsrq x[2] = {
		xsrq_new(self, self->xrcd, &self->r[R_SRQ]),
		xsrq_new(self, self->xrcd, &self->r[R_OTHER]),
	};
	struct chan c = chan_new(self, self->xrcd, 0);
	char *src = self->r[R_INI].buf;

	fill(src, n * MSG_LEN, 0x2e);
	for (int i = 0; i < n; i++)
		xsrq_recv(&x[to_b[i]], i, i * MSG_LEN, MSG_LEN);
	for (int i = 0; i < n; i++)
		EXPECT_WC(xsend(self, &c, x[to_b[i]].num, i * MSG_LEN, MSG_LEN,
				i + 1), IBV_WC_SUCCESS);
	for (int i = 0; i < n; i++) {
		struct xsrq *s = &x[to_b[i]];
		/* Each SRQ's receives in order: message i took receive i. */
		check_recv(test_poll_one(s->cq, 10), i, c.tgt_num, MSG_LEN,
			   i + 1);
		CHECK(!memcmp(s->r->buf + i * MSG_LEN, src + i * MSG_LEN,
			      MSG_LEN), "message %d's data", i);
	}
	expect_no_wc(x[0].cq, "SRQ a, after its messages");
	expect_no_wc(x[1].cq, "SRQ b, after its messages");
}

/* SEND, WRITE and READ of 64 path MTUs each. */
TEST_F(xrc, messages_of_many_mtus)
{
	struct xsrq s = xsrq_new(self, self->xrcd, &self->r[R_SRQ]);
	struct chan c = chan_new(self, self->xrcd, 0);
	struct region *ini = &self->r[R_INI], *t = &self->r[R_SRQ];

	deliver(self, &c, &s, BIG_LEN, 0x64);
	fill(ini->buf, BIG_LEN, 0x65);
	EXPECT_WC(xrdma(self, &c, s.num, IBV_WR_RDMA_WRITE, t, 0, 0, BIG_LEN,
			0, 0), IBV_WC_SUCCESS);
	CHECK(!memcmp(t->buf + HALF, ini->buf, BIG_LEN), "the WRITE's data");
	fill(t->buf + HALF, BIG_LEN, 0x66);
	EXPECT_WC(xrdma(self, &c, s.num, IBV_WR_RDMA_READ, t, 0, 0, BIG_LEN,
			0, 0), IBV_WC_SUCCESS);
	CHECK(!memcmp(ini->buf + SINK, t->buf + HALF, BIG_LEN),
	      "the READ's data");
}

/*
 * No receive posted: the INI retries (rnr_retry 7: for ever) until one
 * is, and the message completes then.
 */
TEST_F(xrc, rnr_until_receive_posted)
{
	struct xsrq s = xsrq_new(self, self->xrcd, &self->r[R_SRQ]);
	struct chan c = chan_new(self, self->xrcd, 7);
	char *src = self->r[R_INI].buf;
	struct ibv_sge sge = { (uintptr_t)src, MSG_LEN, self->r[R_INI].mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 0x4e4, .sg_list = &sge,
				  .num_sge = 1, .opcode = IBV_WR_SEND };
	struct ibv_wc wc;

	fill(src, MSG_LEN, 0x4e);
	post_xrc(&c, &wr, s.num);
	expect_no_wc(c.cq, "the INI with no receive posted");
	usleep(test_bound(200) * 1000);
	expect_no_wc(c.cq, "the INI with no receive posted");
	expect_no_wc(s.cq, "the SRQ with no receive posted");
	xsrq_recv(&s, 0x4e5, 0, MSG_LEN);
	wc = test_poll_one(c.cq, 10);
	EXPECT_WC(wc, IBV_WC_SUCCESS);
	CHECK_EQ(wc.wr_id, 0x4e4);
	check_recv(test_poll_one(s.cq, 10), 0x4e5, c.tgt_num, MSG_LEN, 0);
	CHECK(!memcmp(s.r->buf, src, MSG_LEN), "the SEND's data");
}

/*
 * Through an SRQ on the MR's PD, after one on another PD was numbered:
 * WRITE, WRITE with immediate (which takes a receive of that SRQ), READ,
 * compare and swap (equal, then not) and fetch and add.
 */
TEST_F(xrc, rdma_and_atomics_in_srq_pd)
{
	struct xsrq decoy = xsrq_new(self, self->xrcd, &self->r[R_OTHER]);
	struct xsrq s = xsrq_new(self, self->xrcd, &self->r[R_SRQ]);
	struct chan c = chan_new(self, self->xrcd, 0);
	struct region *ini = &self->r[R_INI], *t = &self->r[R_SRQ];
	uint64_t *target = (uint64_t *)(t->buf + HALF + 4096);
	uint64_t *orig = (uint64_t *)(ini->buf + SINK + 4096);

	fill(ini->buf, MSG_LEN, 0x71);
	EXPECT_WC(xrdma(self, &c, s.num, IBV_WR_RDMA_WRITE, t, 0, 0, MSG_LEN,
			0, 0), IBV_WC_SUCCESS);
	CHECK(!memcmp(t->buf + HALF, ini->buf, MSG_LEN), "the WRITE's data");

	fill(ini->buf, MSG_LEN, 0x72);
	xsrq_recv(&s, 0x1d, 0, 0);
	EXPECT_WC(xrdma(self, &c, s.num, IBV_WR_RDMA_WRITE_WITH_IMM, t, 0, 0,
			MSG_LEN, 0, 0), IBV_WC_SUCCESS);
	CHECK(!memcmp(t->buf + HALF, ini->buf, MSG_LEN), "the WRITE's data");
	{
		struct ibv_wc wc = test_poll_one(s.cq, 10);

		check_recv(wc, 0x1d, c.tgt_num, MSG_LEN, 0x1d);
		CHECK_EQ(wc.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
	}

	fill(t->buf + HALF, MSG_LEN, 0x73);
	EXPECT_WC(xrdma(self, &c, s.num, IBV_WR_RDMA_READ, t, 0, 0, MSG_LEN,
			0, 0), IBV_WC_SUCCESS);
	CHECK(!memcmp(ini->buf + SINK, t->buf + HALF, MSG_LEN),
	      "the READ's data");

	*target = 1000;
	EXPECT_WC(xrdma(self, &c, s.num, IBV_WR_ATOMIC_CMP_AND_SWP, t, 0, 4096,
			8, 1000, 2000), IBV_WC_SUCCESS);
	CHECK_EQ(*orig, 1000);
	CHECK_EQ(*target, 2000);
	EXPECT_WC(xrdma(self, &c, s.num, IBV_WR_ATOMIC_CMP_AND_SWP, t, 0, 4096,
			8, 1000, 3000), IBV_WC_SUCCESS);
	CHECK_EQ(*orig, 2000);
	CHECK_EQ(*target, 2000);
	EXPECT_WC(xrdma(self, &c, s.num, IBV_WR_ATOMIC_FETCH_AND_ADD, t, 0,
			4096, 8, 22, 0), IBV_WC_SUCCESS);
	CHECK_EQ(*orig, 2000);
	CHECK_EQ(*target, 2022);
	expect_no_wc(s.cq, "the SRQ after WRITE, READ and atomics");
	expect_no_wc(decoy.cq, "the SRQ of another PD");
}

static const struct {
	enum ibv_wr_opcode opcode;
	const char *name;
} rdma_ops[] = {
	{ IBV_WR_RDMA_WRITE, "WRITE" },
	{ IBV_WR_RDMA_READ, "READ" },
	{ IBV_WR_ATOMIC_CMP_AND_SWP, "compare and swap" },
	{ IBV_WR_ATOMIC_FETCH_AND_ADD, "fetch and add" },
};

/*
 * @key (@t's rkey when 0) through SRQ @srqn on a fresh INI and TGT of
 * @xrcd, each operation: the INI gets @want, and no byte of any region
 * changes (a READ's neither); no SRQ of @x completes anything.
 */
static void refused_each(FIXTURE_DATA(xrc) *self, struct ibv_xrcd *xrcd,
			 uint32_t srqn, struct region *t, uint32_t key,
			 enum ibv_wc_status want, struct xsrq *x, int nx)
{
	for (unsigned int i = 0; i < sizeof(rdma_ops) / sizeof(rdma_ops[0]); i++) {
		struct chan c = chan_new(self, xrcd, 0);
		struct ibv_wc wc;
		struct snap s;

		regions_fill(self);
		snap_take(self, &s);
		/* Compare what is there: a swap would change it. */
		wc = xrdma(self, &c, srqn, rdma_ops[i].opcode, t, key, 0,
			   MSG_LEN, *(uint64_t *)(t->buf + HALF), 1);
		CHECK(wc.status == want, "%s through SRQ %#x: %s, want %s",
		      rdma_ops[i].name, srqn, ibv_wc_status_str(wc.status),
		      ibv_wc_status_str(want));
		for (int j = 0; j < nx; j++)
			expect_no_wc(x[j].cq, rdma_ops[i].name);
		snap_same(self, &s, rdma_ops[i].name);
	}
}

/*
 * The key of an MR on the SRQs' PD through an SRQ of the same domain on
 * another PD; a key of the INI's PD through an SRQ on the SRQs' PD: both
 * IBV_WC_REM_ACCESS_ERR, and no byte changes.
 */
TEST_F(xrc, rdma_through_srq_of_another_pd)
{
	struct xsrq x[2] = {
		xsrq_new(self, self->xrcd, &self->r[R_SRQ]),
		xsrq_new(self, self->xrcd, &self->r[R_OTHER]),
	};

	refused_each(self, self->xrcd, x[1].num, &self->r[R_SRQ], 0,
		     IBV_WC_REM_ACCESS_ERR, x, 2);
	refused_each(self, self->xrcd, x[0].num, &self->r[R_INI], 0,
		     IBV_WC_REM_ACCESS_ERR, x, 2);
}

/*
 * An SRQ of another domain, with a receive posted: a SEND naming it is
 * IBV_WC_REM_INV_REQ_ERR and leaves the receive there; so is each RDMA
 * operation on memory of its PD; a SEND through its own domain then takes
 * that receive.
 */
TEST_F(xrc, srq_of_another_domain)
{
	struct ibv_xrcd *other = keep(self, XRCD, open_xrcd(-1, O_CREAT));
	struct xsrq theirs = xsrq_new(self, other, &self->r[R_OTHER]);
	struct xsrq ours = xsrq_new(self, self->xrcd, &self->r[R_SRQ]);
	struct chan c = chan_new(self, self->xrcd, 0);
	struct chan own;
	struct snap s;

	xsrq_recv(&theirs, 0x7e1, 0, MSG_LEN);
	xsrq_recv(&ours, 0x0e1, 0, MSG_LEN);
	regions_fill(self);
	snap_take(self, &s);
	EXPECT_WC(xsend(self, &c, theirs.num, 0, MSG_LEN, 0),
		  IBV_WC_REM_INV_REQ_ERR);
	expect_no_wc(theirs.cq, "the other domain's SRQ");
	expect_no_wc(ours.cq, "our SRQ");
	snap_same(self, &s, "SEND");
	refused_each(self, self->xrcd, theirs.num, &self->r[R_OTHER], 0,
		     IBV_WC_REM_INV_REQ_ERR, (struct xsrq []){ theirs, ours }, 2);
	own = chan_new(self, other, 0);
	fill(self->r[R_INI].buf, MSG_LEN, 0x7e);
	EXPECT_WC(xsend(self, &own, theirs.num, 0, MSG_LEN, 0x7e),
		  IBV_WC_SUCCESS);
	check_recv(test_poll_one(theirs.cq, 10), 0x7e1, own.tgt_num, MSG_LEN,
		   0x7e);
	CHECK(!memcmp(theirs.r->buf, self->r[R_INI].buf, MSG_LEN),
	      "the SEND's data");
	expect_no_wc(ours.cq, "our SRQ");
}

/* SRQ numbers of no SRQ: the lowest and the highest an XRCETH holds. */
TEST_F(xrc, srq_number_of_none)
{
	static const uint32_t none[] = { 0, 0xffffff };
	struct xsrq s = xsrq_new(self, self->xrcd, &self->r[R_SRQ]);

	xsrq_recv(&s, 0x0e1, 0, MSG_LEN);
	for (int i = 0; i < 2; i++) {
		struct chan c = chan_new(self, self->xrcd, 0);
		struct snap snap;

		CHECK(s.num != none[i], "an SRQ numbered %#x", s.num);
		regions_fill(self);
		snap_take(self, &snap);
		EXPECT_WC(xsend(self, &c, none[i], 0, MSG_LEN, 0),
			  IBV_WC_REM_INV_REQ_ERR);
		expect_no_wc(s.cq, "our SRQ");
		snap_same(self, &snap, "SEND");
		refused_each(self, self->xrcd, none[i], &self->r[R_SRQ], 0,
			     IBV_WC_REM_INV_REQ_ERR, &s, 1);
	}
}

/*
 * The number of a destroyed SRQ that had a receive posted, after another
 * SRQ was created: IBV_WC_REM_INV_REQ_ERR, nothing in either CQ, and the
 * new SRQ's receive stays for a message to it.
 */
TEST_F(xrc, srq_number_of_destroyed)
{
	struct xsrq gone = xsrq_new(self, self->xrcd, &self->r[R_SRQ]);
	struct chan c = chan_new(self, self->xrcd, 0);
	struct xsrq next;

	xsrq_recv(&gone, 0xdead, 0, MSG_LEN);
	drop(self, gone.srq);
	next = xsrq_new(self, self->xrcd, &self->r[R_SRQ]);
	xsrq_recv(&next, 0x0e1, 0, MSG_LEN);
	EXPECT_WC(xsend(self, &c, gone.num, 0, MSG_LEN, 0),
		  IBV_WC_REM_INV_REQ_ERR);
	expect_no_wc(gone.cq, "the destroyed SRQ's CQ");
	expect_no_wc(next.cq, "the next SRQ");
	refused_each(self, self->xrcd, gone.num, &self->r[R_SRQ], 0,
		     IBV_WC_REM_INV_REQ_ERR, &next, 1);
	c = chan_new(self, self->xrcd, 0);
	fill(self->r[R_INI].buf, MSG_LEN, 0x0e);
	EXPECT_WC(xsend(self, &c, next.num, 0, MSG_LEN, 0), IBV_WC_SUCCESS);
	check_recv(test_poll_one(next.cq, 10), 0x0e1, c.tgt_num, MSG_LEN, 0);
}

/*
 * softrma numbers SRQs in turn: SRQs made and destroyed until one has a
 * number of three bytes, which SENDs and WRITEs reach whole (the XRCETH
 * holds 24 bits); the numbers of its lower bytes name no SRQ.  A kernel
 * that runs the tests slower (the debug kernel: 5 ms an SRQ) goes to two
 * bytes only.
 */
TEST_F_TIMEOUT(xrc, srq_number_of_three_bytes, 120)
{
	struct ibv_cq *cq = keep(self, CQ, ibv_create_cq(ctx, 16, NULL, NULL, 0));
	uint32_t above = test_slowdown() > 1 ? 0xff : 0xffff;
	struct region *t = &self->r[R_SRQ];
	struct xsrq s;
	struct chan c;

	for (uint32_t num = 0; num < above;) {
		struct ibv_srq_init_attr_ex attr = {
			.attr = { .max_wr = 1, .max_sge = 1 },
			.comp_mask = XSRQ_MASK, .srq_type = IBV_SRQT_XRC,
			.pd = t->pd, .xrcd = self->xrcd, .cq = cq,
		};
		struct ibv_srq *srq = ibv_create_srq_ex(ctx, &attr);

		CHECK(srq, "SRQ after number %#x: %s", num, strerror(errno));
		CHECK_EQ(ibv_get_srq_num(srq, &num), 0);
		CHECK_EQ(ibv_destroy_srq(srq), 0);
	}
	s = xsrq_new(self, self->xrcd, t);
	CHECK(s.num > above && s.num <= 0xffffff, "SRQ number %#x", s.num);
	c = chan_new(self, self->xrcd, 0);
	deliver(self, &c, &s, MSG_LEN, 0x3b);
	fill(self->r[R_INI].buf, MSG_LEN, 0x3c);
	EXPECT_WC(xrdma(self, &c, s.num, IBV_WR_RDMA_WRITE, t, 0, 0, MSG_LEN,
			0, 0), IBV_WC_SUCCESS);
	CHECK(!memcmp(t->buf + HALF, self->r[R_INI].buf, MSG_LEN),
	      "the WRITE's data");
	xsrq_recv(&s, 0x3b, 0, MSG_LEN);
	for (uint32_t mask = 0xff; mask < s.num; mask = mask << 8 | 0xff) {
		c = chan_new(self, self->xrcd, 0);
		EXPECT_WC(xsend(self, &c, s.num & mask, 0, MSG_LEN, 0),
			  IBV_WC_REM_INV_REQ_ERR);
	}
	expect_no_wc(s.cq, "the SRQ, after SENDs to parts of its number");
}

/*
 * A receive held for a message that ended without it (its sender's memory
 * was deregistered while the message was copied) belongs to its SRQ: the
 * next message, to another SRQ, takes a receive of that one, and the held
 * one never completes there or as a success.  The local transport only:
 * on the wire the sender reads its memory before a packet leaves.
 */
struct cut_send {
	struct chan *c;
	struct ibv_sge sge[TEST_MAX_SGE];
	uint32_t srqn;
	struct ibv_wc wc;
};

static void *cut_send(void *arg)
{
	struct cut_send *cs = arg;
	struct ibv_send_wr wr = { .wr_id = 0xc07, .sg_list = cs->sge,
				  .num_sge = TEST_MAX_SGE, .opcode = IBV_WR_SEND };

	cs->wc = wait_xrc(cs->c, &wr, cs->srqn);
	return NULL;
}

TEST_F(xrc, cut_short_message_keeps_receive_in_its_srq)
{
	struct region *ini = &self->r[R_INI], *t = &self->r[R_SRQ];
	struct xsrq a = xsrq_new_sge(self, self->xrcd, t, TEST_MAX_SGE);
	struct xsrq b = xsrq_new(self, self->xrcd, &self->r[R_OTHER]);
	struct ibv_sge rsge[TEST_MAX_SGE];
	struct ibv_recv_wr rwr = { .wr_id = 0xa, .sg_list = rsge,
				   .num_sge = TEST_MAX_SGE }, *bad;
	struct cut_send cs = { .srqn = a.num };
	struct ibv_qp_attr reset = { .qp_state = IBV_QPS_RESET };
	struct timespec start, now;
	struct chan c;
	struct ibv_wc wc;
	pthread_t thread;
	int attempt;

	if (variant->force_wire)
		SKIP(return, "the local transport's case");
	fill(ini->buf, BUF_LEN, 0xc0);
	ini->buf[0] = 1;
	/*
	 * Each side names its 1 MiB TEST_MAX_SGE times: a copy of 32 MiB,
	 * which softrma enters again after each MiB.
	 */
	for (int i = 0; i < TEST_MAX_SGE; i++)
		rsge[i] = (struct ibv_sge) { (uintptr_t)t->buf, BUF_LEN,
					     t->mr->lkey };
	for (attempt = 0; attempt < 5; attempt++) {
		struct ibv_mr *mr = ibv_reg_mr(ini->pd, ini->buf, BUF_LEN,
					       IBV_ACCESS_LOCAL_WRITE);

		CHECK(mr, "reg_mr: %s", strerror(errno));
		c = chan_new(self, self->xrcd, 0);
		cs.c = &c;
		for (int i = 0; i < TEST_MAX_SGE; i++)
			cs.sge[i] = (struct ibv_sge) { (uintptr_t)ini->buf,
						       BUF_LEN, mr->lkey };
		memset(t->buf, 0, BUF_LEN);
		CHECK_EQ(ibv_post_srq_recv(a.srq, &rwr, &bad), 0);
		CHECK_EQ(pthread_create(&thread, NULL, cut_send, &cs), 0);
		clock_gettime(CLOCK_MONOTONIC, &start);
		while (!__atomic_load_n(&t->buf[0], __ATOMIC_RELAXED)) {
			clock_gettime(CLOCK_MONOTONIC, &now);
			CHECK(now.tv_sec - start.tv_sec < test_bound(10),
			      "the copy did not start");
		}
		CHECK_EQ(ibv_dereg_mr(mr), 0);
		CHECK_EQ(pthread_join(thread, NULL), 0);
		if (cs.wc.status == IBV_WC_LOC_PROT_ERR)
			break;
		/* The copy outran the deregistration: its receive is done. */
		printf("# attempt %d: the copy outran the deregistration\n",
		       attempt);
		EXPECT_WC(cs.wc, IBV_WC_SUCCESS);
		check_recv(test_poll_one(a.cq, 10), 0xa, c.tgt_num,
			   TEST_MAX_SGE * BUF_LEN, 0);
	}
	CHECK(attempt < 5, "the copy outran the deregistration 5 times");
	expect_no_wc(a.cq, "SRQ a, its receive held");

	/* The INI again, the same QP: the TGT QP takes it as before. */
	modify(c.ini, &reset, IBV_QP_STATE);
	to_init(c.ini, 0);
	to_rtr(c.ini, c.tgt_num);
	ini_to_rts(c.ini, 0);
	deliver(self, &c, &b, MSG_LEN, 0xb);
	wc = test_poll_one(a.cq, 10);
	CHECK_EQ(wc.wr_id, 0xa);
	CHECK(wc.status != IBV_WC_SUCCESS, "the held receive completed");
	expect_no_wc(a.cq, "SRQ a, after its held receive");
}

/* destroy_while_sending's sender thread: SENDs until one fails. */
struct sender {
	struct chan *c;
	struct ibv_sge sge;
	uint32_t srqn;
	int ok;				/* completed with success */
	enum ibv_wc_status first_err;
	bool done;			/* the thread returned */
};

static void *send_until_error(void *arg)
{
	struct sender *s = arg;
	struct ibv_send_wr wr = { .sg_list = &s->sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND };
	int outstanding = 0;
	bool failed = false;

	while (!failed || outstanding) {
		struct ibv_wc wc;

		for (; !failed && outstanding < 4; outstanding++) {
			wr.wr_id++;
			post_xrc(s->c, &wr, s->srqn);
		}
		wc = test_poll_one(s->c->cq, 20);
		outstanding--;
		if (wc.status == IBV_WC_SUCCESS) {
			CHECK(!failed, "a success after %s",
			      ibv_wc_status_str(s->first_err));
			s->ok++;
		} else if (!failed) {
			s->first_err = wc.status;
			failed = true;
		} else {
			EXPECT_WC(wc, IBV_WC_WR_FLUSH_ERR);
		}
	}
	__atomic_store_n(&s->done, true, __ATOMIC_RELEASE);
	return NULL;
}

/* Polls every completion @x's CQ has now: each a receive of @c's SEND. */
static int poll_recvs(struct xsrq *x, struct chan *c, uint32_t len)
{
	struct ibv_wc wc[16];
	int n, total = 0;

	while ((n = ibv_poll_cq(x->cq, 16, wc)) > 0) {
		for (int i = 0; i < n; i++) {
			EXPECT_WC(wc[i], IBV_WC_SUCCESS);
			CHECK_EQ(wc[i].qp_num, c->tgt_num);
			CHECK_EQ(wc[i].byte_len, len);
		}
		total += n;
	}
	CHECK(n == 0, "poll_cq: %d", n);
	return total;
}

/*
 * An SRQ destroyed while a thread keeps sending into it, from 1 to 3
 * receives in: every SEND until then succeeds and completes a receive in
 * its CQ, which has every such completion once the destroy returned and
 * none after; the next SEND is IBV_WC_REM_INV_REQ_ERR.  Big messages, so
 * that the destroy comes while one is copied.
 */
TEST_F_TIMEOUT(xrc, destroy_srq_while_sending, 120)
{
	uint32_t len = variant->force_wire ? BIG_LEN : HALF;
	struct region *ini = &self->r[R_INI];

	for (int round = 0; round < 3; round++) {
		struct xsrq x = xsrq_new(self, self->xrcd, &self->r[R_SRQ]);
		struct chan c = chan_new(self, self->xrcd, 7);
		struct sender s = {
			.c = &c, .srqn = x.num,
			.sge = { (uintptr_t)ini->buf, len, ini->mr->lkey },
		};
		int got = 0, late;
		pthread_t thread;

		for (int i = 0; i < SRQ_WR; i++)
			xsrq_recv(&x, i, 0, len);
		CHECK_EQ(pthread_create(&thread, NULL, send_until_error, &s), 0);
		while (got <= round &&
		       !__atomic_load_n(&s.done, __ATOMIC_ACQUIRE)) {
			got += poll_recvs(&x, &c, len);
			sched_yield();
		}
		CHECK(got > round, "the sender stopped (%s) after %d receives",
		      ibv_wc_status_str(s.first_err), got);
		usleep(round * 300);
		drop(self, x.srq);
		got += poll_recvs(&x, &c, len);
		CHECK_EQ(pthread_join(thread, NULL), 0);
		CHECK(s.done, "the sender thread died in the kernel");
		usleep(test_bound(50) * 1000);
		late = poll_recvs(&x, &c, len);
		CHECK(!late, "%d receive completions after the destroy returned",
		      late);
		CHECK(s.first_err == IBV_WC_REM_INV_REQ_ERR,
		      "the first SEND after the destroy: %s",
		      ibv_wc_status_str(s.first_err));
		CHECK(got == s.ok, "%d receive completions for %d SENDs", got,
		      s.ok);
	}
}

/*
 * killed_process_mid_traffic's child: an SRQ and a TGT QP of its own in
 * the domain of @path, for the parent's INI @ini_num, and an INI and TGT
 * of its own that send to the parent's SRQ @srqn, until it is killed.
 */
static void __attribute__((noreturn)) child_traffic(const char *path,
						    uint32_t ini_num,
						    uint32_t srqn, int out)
{
	FIXTURE_DATA(xrc) c = {};
	struct ibv_xrcd *x;
	struct ibv_qp *tgt;
	struct xsrq s;
	struct chan to_parent;
	uint32_t nums[3];
	struct ibv_wc wc;

	ctx = transport_open_device(&gid_index);
	regions_init(&c);
	fill(c.r[R_INI].buf, MSG_LEN, CHILD_SEED);
	x = keep(&c, XRCD, open_file_xrcd(path, 0));
	s = xsrq_new(&c, x, &c.r[R_SRQ]);
	for (int i = 0; i < SRQ_WR; i++)
		xsrq_recv(&s, i, 0, MSG_LEN);
	tgt = tgt_new(&c, x);
	to_rtr(tgt, ini_num);
	to_parent = chan_new(&c, x, 7);
	nums[0] = tgt->qp_num;
	nums[1] = s.num;
	nums[2] = to_parent.tgt_num;
	write_all(out, nums, sizeof(nums));
	for (;;) {
		EXPECT_WC(xsend(&c, &to_parent, srqn, 0, MSG_LEN, 0),
			  IBV_WC_SUCCESS);
		while (ibv_poll_cq(s.cq, 1, &wc) == 1) {
			EXPECT_WC(wc, IBV_WC_SUCCESS);
			xsrq_recv(&s, wc.wr_id, 0, MSG_LEN);
		}
	}
}

/*
 * A child sends to our SRQ through a TGT QP of its own and receives our
 * SENDs in its SRQ through another, which we hold open too; killed in
 * the middle of that, with the domain shared through a file: our SENDs
 * then fail with IBV_WC_REM_INV_REQ_ERR (its SRQ went with it), what it
 * sent us arrived whole, and our SRQ works on.
 */
TEST_F_TIMEOUT(xrc, killed_process_mid_traffic, 120)
{
	struct ibv_xrcd *x = keep(self, XRCD, open_file_xrcd(self->path, O_CREAT));
	struct xsrq ours = xsrq_new(self, x, &self->r[R_SRQ]);
	struct ibv_qp_open_attr attr = {
		.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |
			     IBV_QP_OPEN_ATTR_TYPE,
		.xrcd = x, .qp_type = IBV_QPT_XRC_RECV,
	};
	int from_child[2], status, sent = 0, got = 0;
	struct chan c = {}, fresh;
	uint32_t nums[3];
	struct ibv_wc wc;
	pid_t pid;

	for (int i = 0; i < SRQ_WR; i++)
		xsrq_recv(&ours, i, 0, MSG_LEN);
	c.cq = keep(self, CQ, ibv_create_cq(ctx, 256, NULL, NULL, 0));
	c.ini = ini_new(self, c.cq, 0);
	CHECK_EQ(pipe(from_child), 0);
	pid = fork();
	CHECK(pid >= 0, "fork: %s", strerror(errno));
	if (!pid)
		child_traffic(self->path, c.ini->qp_num, ours.num,
			      from_child[1]);
	CHECK_EQ(close(from_child[1]), 0);
	read_all(from_child[0], nums, sizeof(nums));
	attr.qp_num = nums[0];
	c.tgt = keep(self, QP, ibv_open_qp(ctx, &attr));
	c.tgt_num = nums[0];
	to_rtr(c.ini, c.tgt_num);
	ini_to_rts(c.ini, 7);
	while (sent < 10 || got < 10) {
		CHECK(sent < 1000, "%d of the child's SENDs for %d of ours", got,
		      sent);
		EXPECT_WC(xsend(self, &c, nums[1], 0, MSG_LEN, 0),
			  IBV_WC_SUCCESS);
		sent++;
		while (ibv_poll_cq(ours.cq, 1, &wc) == 1) {
			check_recv(wc, got, nums[2], MSG_LEN, 0);
			got++;
		}
	}
	CHECK_EQ(kill(pid, SIGKILL), 0);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
	      "child status %#x", status);
	CHECK_EQ(close(from_child[0]), 0);
	while (ibv_poll_cq(ours.cq, 1, &wc) == 1) {
		check_recv(wc, got, nums[2], MSG_LEN, 0);
		got++;
	}
	fill(self->r[R_INI].buf, MSG_LEN, CHILD_SEED);
	CHECK(!memcmp(self->r[R_SRQ].buf, self->r[R_INI].buf, MSG_LEN),
	      "the child's SENDs' data");
	EXPECT_WC(xsend(self, &c, nums[1], 0, MSG_LEN, 0),
		  IBV_WC_REM_INV_REQ_ERR);

	/* The child may have taken every receive: then one more. */
	if (got == SRQ_WR)
		xsrq_recv(&ours, got, 0, MSG_LEN);
	fresh = chan_new(self, x, 0);
	fill(self->r[R_INI].buf, MSG_LEN, 0xf5);
	EXPECT_WC(xsend(self, &fresh, ours.num, 0, MSG_LEN, 0), IBV_WC_SUCCESS);
	check_recv(test_poll_one(ours.cq, 10), got, fresh.tgt_num, MSG_LEN, 0);
	CHECK(!memcmp(self->r[R_SRQ].buf, self->r[R_INI].buf, MSG_LEN),
	      "the SEND's data");
}

static void expect_post_recv_refused(struct ibv_qp *qp, const char *what)
{
	struct ibv_sge sge = { (uintptr_t)ctx, 0, 0 };
	struct ibv_recv_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad = NULL;
	int ret = ibv_post_recv(qp, &wr, &bad);

	CHECK(ret, "post_recv on %s", what);
	CHECK(bad == &wr, "post_recv on %s: bad_wr %p", what, (void *)bad);
}

/* An XRC SEND QP has no receive queue: its own messages work on. */
TEST_F(xrc, post_recv_on_send_qp_refused)
{
	struct xsrq s = xsrq_new(self, self->xrcd, &self->r[R_SRQ]);
	struct chan c = chan_new(self, self->xrcd, 0);

	expect_post_recv_refused(c.ini, "an XRC SEND QP");
	deliver(self, &c, &s, MSG_LEN, 0);
	expect_no_wc(c.cq, "the INI after its SEND");
}

/* Nor an XRC RECV QP, whose receives are its SRQs'; in RTR and RTS. */
TEST_F(xrc, post_recv_on_recv_qp_refused)
{
	struct xsrq s = xsrq_new(self, self->xrcd, &self->r[R_SRQ]);
	struct chan c = chan_new(self, self->xrcd, 0);
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_RTS,
				    .timeout = test_ack_timeout() };

	expect_post_recv_refused(c.tgt, "an XRC RECV QP in RTR");
	modify(c.tgt, &attr, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_SQ_PSN);
	expect_post_recv_refused(c.tgt, "an XRC RECV QP in RTS");
	deliver(self, &c, &s, MSG_LEN, 0);
	expect_no_wc(s.cq, "the SRQ after its SEND");
}

/* An XRC RECV QP sends nothing, in RTR or in RTS. */
TEST_F(xrc, post_send_on_recv_qp_refused)
{
	struct xsrq s = xsrq_new(self, self->xrcd, &self->r[R_SRQ]);
	struct chan c = chan_new(self, self->xrcd, 0);
	struct region *r = &self->r[R_INI];
	struct ibv_sge sge = { (uintptr_t)r->buf, MSG_LEN, r->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 2, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_RTS,
				    .timeout = test_ack_timeout() };

	wr.qp_type.xrc.remote_srqn = s.num;
	bad = NULL;
	CHECK(ibv_post_send(c.tgt, &wr, &bad), "post_send on a RECV QP in RTR");
	CHECK(bad == &wr, "bad_wr %p", (void *)bad);
	modify(c.tgt, &attr, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_SQ_PSN);
	bad = NULL;
	CHECK(ibv_post_send(c.tgt, &wr, &bad), "post_send on a RECV QP in RTS");
	CHECK(bad == &wr, "bad_wr %p", (void *)bad);
	deliver(self, &c, &s, MSG_LEN, 0);
	expect_no_wc(c.cq, "the INI after its SEND");
}

/*
 * A window bind on an XRC SEND QP: ibv_post_send() refuses it (and posts
 * nothing), an XRC SEND QP with IBV_QP_EX_WITH_BIND_MW is EOPNOTSUPP.
 */
TEST_F(xrc, bind_mw_on_send_qp_refused)
{
	struct xsrq s = xsrq_new(self, self->xrcd, &self->r[R_SRQ]);
	struct chan c = chan_new(self, self->xrcd, 0);
	struct region *r = &self->r[R_INI];
	struct ibv_mr *mr = ibv_reg_mr(r->pd, r->buf, BUF_LEN,
				       ALL_ACCESS | IBV_ACCESS_MW_BIND);
	struct ibv_mw *mw = ibv_alloc_mw(r->pd, IBV_MW_TYPE_2);
	struct ibv_send_wr wr = {
		.wr_id = 3, .opcode = IBV_WR_BIND_MW,
		.send_flags = IBV_SEND_SIGNALED,
		.bind_mw = { .mw = mw, .rkey = mw ? ibv_inc_rkey(mw->rkey) : 0,
			     .bind_info = { .mr = mr, .addr = (uintptr_t)r->buf,
					    .length = 4096,
					    .mw_access_flags = IBV_ACCESS_REMOTE_WRITE } },
	}, *bad = NULL;
	struct ibv_qp_init_attr_ex init = {
		.qp_type = IBV_QPT_XRC_SEND, .send_cq = c.cq, .recv_cq = c.cq,
		.cap = { .max_send_wr = 4, .max_send_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = r->pd,
		.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_BIND_MW,
	};

	CHECK(mr, "reg_mr with MW_BIND: %s", strerror(errno));
	CHECK(mw, "alloc_mw: %s", strerror(errno));
	wr.qp_type.xrc.remote_srqn = s.num;
	CHECK(ibv_post_send(c.ini, &wr, &bad), "a bind posted on an XRC SEND QP");
	CHECK(bad == &wr, "bad_wr %p", (void *)bad);
	errno = 0;
	CHECK(!ibv_create_qp_ex(ctx, &init) && errno == EOPNOTSUPP,
	      "an XRC SEND QP with binds: %s", strerror(errno));
	deliver(self, &c, &s, MSG_LEN, 0);
	expect_no_wc(c.cq, "the INI after its SEND");
	CHECK_EQ(ibv_dealloc_mw(mw), 0);
	CHECK_EQ(ibv_dereg_mr(mr), 0);
}

TRANSPORT_HARNESS_MAIN
