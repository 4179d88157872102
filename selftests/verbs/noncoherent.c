// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The non-coherent checking device and softrmadv_sync_mr().  Every device
 * access path (SEND/RECV, WRITE, WRITE with immediate, READ, CAS, FAA,
 * ATOMIC WRITE, FLUSH, UD, several SGEs, offsets and lengths that are not
 * aligned and cross pages) runs three ways between QPs A and B of the
 * device SOFTRMA_DEV:
 *  - synced: every sync uDAPL requires; the data arrives and nothing is
 *    reported;
 *  - stale: the source range changed by the CPU and not synced towards the
 *    device: the device moves what it saw at the last sync (or at
 *    registration), and reports the source range (missing=sync_to_device);
 *  - unseen: the target not synced towards the CPU: the CPU still sees the
 *    old bytes, and a later sync towards the device, or the deregistration,
 *    reports the target range (missing=sync_to_cpu).
 * Reports are read from the tracepoint softrma_missing_sync (tracefs) and
 * the port counters missing_sync_to_device and missing_sync_to_cpu.  The
 * device reports an access piece by piece (a page of a copy, a packet):
 * adjacent reports of one MR and kind are merged before they are compared.
 *
 * The cases "sync_bad_input" and "coherent" need the device in normal mode,
 * the rest in checking mode (/sys/class/infiniband/DEV/noncoherent): each
 * skips on the other; device/noncoherent.sh runs both.  Each case runs on
 * the local transport ("local") and in RoCEv2 packets ("wire").
 *
 * usage: [SOFTRMA_DEV=softrma0] [SOFTRMA_IPV4=10.9.0.1] noncoherent [HARNESS OPTIONS]
 */
#include "softrmadv.h"
#include <pthread.h>
#include <stdatomic.h>
#include <sys/mman.h>

#include "transport.h"

#define LEN		(4 * 4096)
#define QKEY		0x11111111
#define GRH_LEN		40
#define TRACE		"/sys/kernel/tracing"
#define EVENT		TRACE "/events/softrma/softrma_missing_sync/enable"
#define ACCESS		(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC | \
			 SOFTRMADV_ACCESS_FLUSH_GLOBAL)
#define OPS		(IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE | \
			 IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | \
			 IBV_QP_EX_WITH_RDMA_READ | \
			 IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | \
			 IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | \
			 IBV_QP_EX_WITH_ATOMIC_WRITE | SOFTRMADV_QP_EX_WITH_FLUSH)
#define TO_DEV		SOFTRMADV_SYNC_TO_DEVICE
#define TO_CPU		SOFTRMADV_SYNC_TO_CPU

struct side {
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	uint8_t *buf;
	struct ibv_mr *mr;
};

static struct ibv_context *ctx;
static int gid_index;
static struct side a, b;

struct report {
	uint32_t key;
	uint64_t offset, length;
	enum softrmadv_sync_dir missing;
};

/* Whether SOFTRMA_DEV is in checking mode. */
static int device_noncoherent(void)
{
	char path[256];
	int on = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/noncoherent",
		 ibv_get_device_name(ctx->device));
	f = fopen(path, "r");
	CHECK(f, "%s: %s", path, strerror(errno));
	CHECK(fscanf(f, "%d", &on) == 1, "%s", path);
	fclose(f);
	return on;
}

static void write_file(const char *path, const char *s)
{
	FILE *f = fopen(path, "w");

	CHECK(f, "%s: %s", path, strerror(errno));
	fputs(s, f);
	CHECK_EQ(fclose(f), 0);
}

/* Turns the tracepoint on and forgets what it reported before. */
static void reports_start(void)
{
	write_file(EVENT, "1");
	write_file(TRACE "/trace", "");
}

/* The reports of SOFTRMA_DEV since reports_start(), adjacent ones merged. */
static int reports_read(struct report *r, int max)
{
	const char *dev = ibv_get_device_name(ctx->device);
	char line[512], name[64], missing[32];
	struct report one;
	FILE *f = fopen(TRACE "/trace", "r");
	const char *p;
	int n = 0;

	CHECK(f, "%s/trace: %s", TRACE, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		p = strstr(line, "softrma_missing_sync: ");
		if (!p)
			continue;
		CHECK(sscanf(p, "softrma_missing_sync: dev=%63s key=%x offset=%lu length=%lu missing=%31s",
			     name, &one.key, &one.offset, &one.length,
			     missing) == 5, "trace line: %s", line);
		if (strcmp(name, dev))
			continue;
		one.missing = strcmp(missing, "sync_to_cpu") ? TO_DEV : TO_CPU;
		if (n && r[n - 1].key == one.key &&
		    r[n - 1].missing == one.missing &&
		    r[n - 1].offset + r[n - 1].length == one.offset) {
			r[n - 1].length += one.length;
			continue;
		}
		CHECK(n < max, "more than %d reports", max);
		r[n++] = one;
	}
	fclose(f);
	return n;
}

static const char *dir_name(enum softrmadv_sync_dir d)
{
	return d == TO_CPU ? "sync_to_cpu" : "sync_to_device";
}

/* Exactly one report since reports_start(): @s's MR, [off, off + len). */
static void expect_report(struct side *s, uint64_t off, uint64_t len,
			  enum softrmadv_sync_dir missing)
{
	struct report r[16];
	int n = reports_read(r, 16);

	for (int i = 0; i < n; i++)
		printf("# report: key=0x%08x offset=%lu length=%lu missing=%s\n",
		       r[i].key, r[i].offset, r[i].length, dir_name(r[i].missing));
	CHECK(n == 1, "%d reports, want key=0x%08x offset=%lu length=%lu missing=%s",
	      n, s->mr->lkey, off, len, dir_name(missing));
	CHECK(r[0].key == s->mr->lkey && r[0].offset == off &&
	      r[0].length == len && r[0].missing == missing,
	      "want key=0x%08x offset=%lu length=%lu missing=%s", s->mr->lkey,
	      off, len, dir_name(missing));
	reports_start();
}

static void expect_no_report(void)
{
	struct report r[16];
	int n = reports_read(r, 16);

	for (int i = 0; i < n; i++)
		printf("# report: key=0x%08x offset=%lu length=%lu missing=%s\n",
		       r[i].key, r[i].offset, r[i].length, dir_name(r[i].missing));
	CHECK_EQ(n, 0);
}

static void sync_mr(struct side *s, uint64_t off, uint64_t len,
		    enum softrmadv_sync_dir dir)
{
	CHECK_EQ(softrmadv_sync_mr(s->mr, (uintptr_t)s->buf + off, len, dir), 0);
}

/* The CPU writes a pattern whose every byte differs from 0 and from @seed - 1's. */
static void cpu_fill(struct side *s, uint64_t off, uint64_t len, uint8_t seed)
{
	for (uint64_t i = 0; i < len; i++)
		s->buf[off + i] = (uint8_t)(1 + (seed * 2 + i) % 254);
}

static int cpu_holds(struct side *s, uint64_t off, uint64_t len, uint8_t seed)
{
	for (uint64_t i = 0; i < len; i++)
		if (s->buf[off + i] != (uint8_t)(1 + (seed * 2 + i) % 254))
			return 0;
	return 1;
}

static int cpu_zero(struct side *s, uint64_t off, uint64_t len)
{
	for (uint64_t i = 0; i < len; i++)
		if (s->buf[off + i])
			return 0;
	return 1;
}

static void side_init(struct side *s, enum ibv_qp_type type)
{
	struct ibv_qp_init_attr_ex init = {
		.qp_type = type,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 4, .max_recv_sge = 4 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = type == IBV_QPT_UD ? IBV_QP_EX_WITH_SEND : OPS,
	};
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = QKEY,
		.qp_access_flags = ACCESS,
	};

	s->pd = ibv_alloc_pd(ctx);
	CHECK(s->pd, "alloc_pd");
	s->cq = ibv_create_cq(ctx, 32, NULL, NULL, 0);
	CHECK(s->cq, "create_cq");
	init.pd = s->pd;
	init.send_cq = init.recv_cq = s->cq;
	s->qp = ibv_create_qp_ex(ctx, &init);
	CHECK(s->qp, "create_qp_ex: %s", strerror(errno));
	CHECK_EQ(ibv_modify_qp(s->qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			       IBV_QP_PORT | (type == IBV_QPT_UD ?
					      IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS)), 0);
	s->buf = mmap(NULL, LEN, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(s->buf != MAP_FAILED, "mmap");
	memset(s->buf, 0, LEN);
	s->mr = ibv_reg_mr(s->pd, s->buf, LEN, ACCESS);
	CHECK(s->mr, "reg_mr: %s", strerror(errno));
}

static void ud_ready(struct ibv_qp *qp)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_RTR };

	CHECK_EQ(ibv_modify_qp(qp, &attr, IBV_QP_STATE), 0);
	attr.qp_state = IBV_QPS_RTS;
	CHECK_EQ(ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN), 0);
}

static void side_fini(struct side *s)
{
	CHECK_EQ(ibv_destroy_qp(s->qp), 0);
	CHECK_EQ(ibv_destroy_cq(s->cq), 0);
	if (s->mr)
		CHECK_EQ(ibv_dereg_mr(s->mr), 0);
	CHECK_EQ(ibv_dealloc_pd(s->pd), 0);
	CHECK_EQ(munmap(s->buf, LEN), 0);
}

FIXTURE(nc) {
	struct ibv_ah *ah;
};

TRANSPORT_VARIANTS(nc);

static void setup(enum ibv_qp_type type, struct ibv_ah **ah)
{
	side_init(&a, type);
	side_init(&b, type);
	if (type == IBV_QPT_UD) {
		struct ibv_ah_attr attr = {
			.is_global = 1, .port_num = 1,
			.grh = { .sgid_index = gid_index, .hop_limit = 64 },
		};

		ud_ready(a.qp);
		ud_ready(b.qp);
		CHECK_EQ(ibv_query_gid(ctx, 1, gid_index, &attr.grh.dgid), 0);
		*ah = ibv_create_ah(a.pd, &attr);
		CHECK(*ah, "create_ah: %s", strerror(errno));
		return;
	}
	test_connect_rc(ctx, a.qp, gid_index, b.qp->qp_num, 7);
	test_connect_rc(ctx, b.qp, gid_index, a.qp->qp_num, 7);
}

FIXTURE_SETUP(nc)
{
	ctx = transport_open_device(&gid_index);
	if (!transport_set(variant->force_wire))
		SKIP(return, "%s: %s", FORCE_WIRE, strerror(errno));
	setup(strstr(_metadata->name, "ud_") ? IBV_QPT_UD : IBV_QPT_RC,
	      &self->ah);
	if (access(EVENT, W_OK))
		SKIP(return, "%s: %s", EVENT, strerror(errno));
	reports_start();
}

FIXTURE_TEARDOWN(nc)
{
	if (self->ah)
		CHECK_EQ(ibv_destroy_ah(self->ah), 0);
	side_fini(&a);
	side_fini(&b);
	CHECK_EQ(ibv_close_device(ctx), 0);
	transport_put_back();
}

#define NEED_CHECKING() do {						\
	if (device_noncoherent() != 1)					\
		SKIP(return, "%s is not in checking mode",		\
		     ibv_get_device_name(ctx->device));			\
} while (0)

/* Waits for one successful completion on @s's CQ with @opcode. */
static void complete(struct side *s, enum ibv_wc_opcode opcode)
{
	struct ibv_wc wc = test_poll_one(s->cq, 10);

	CHECK(wc.status == IBV_WC_SUCCESS, "status %s",
	      ibv_wc_status_str(wc.status));
	CHECK_EQ(wc.opcode, opcode);
}

static void post_recv(struct side *s, uint64_t off, uint32_t len)
{
	struct ibv_sge sge = { (uintptr_t)s->buf + off, len, s->mr->lkey };
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;

	CHECK_EQ(ibv_post_recv(s->qp, &wr, &bad), 0);
}

/*
 * The data paths: the device reads [so, so + len) of the source and writes
 * it to [to, to + len) of the target.
 */
enum path { SEND, WRITE, WRITE_IMM, READ, WRITE_SGES, UD_SEND };

struct move {
	struct side *src, *dst;
	uint64_t so, to;		/* to: where the data lands */
	uint32_t len;
};

static void run_path(enum path p, struct ibv_ah *ah, uint64_t so,
		     uint64_t to, uint32_t len)
{
	struct ibv_qp_ex *qx = ibv_qp_to_qp_ex(a.qp);
	struct ibv_sge sges[3];
	uint32_t third = len / 3;

	if (p == SEND || p == WRITE_IMM || p == UD_SEND)
		post_recv(&b, to, p == UD_SEND ? len + GRH_LEN : len);
	ibv_wr_start(qx);
	qx->wr_id = 1;
	qx->wr_flags = IBV_SEND_SIGNALED;
	switch (p) {
	case SEND:
	case UD_SEND:
		ibv_wr_send(qx);
		if (p == UD_SEND)
			ibv_wr_set_ud_addr(qx, ah, b.qp->qp_num, QKEY);
		break;
	case WRITE:
	case WRITE_SGES:
		ibv_wr_rdma_write(qx, b.mr->rkey, (uintptr_t)b.buf + to);
		break;
	case WRITE_IMM:
		ibv_wr_rdma_write_imm(qx, b.mr->rkey, (uintptr_t)b.buf + to,
				      htonl(7));
		break;
	case READ:
		ibv_wr_rdma_read(qx, b.mr->rkey, (uintptr_t)b.buf + so);
		ibv_wr_set_sge(qx, a.mr->lkey, (uintptr_t)a.buf + to, len);
		break;
	}
	if (p == WRITE_SGES) {
		for (int i = 0; i < 3; i++)
			sges[i] = (struct ibv_sge) {
				(uintptr_t)a.buf + so + i * third,
				i == 2 ? len - 2 * third : third, a.mr->lkey };
		ibv_wr_set_sge_list(qx, 3, sges);
	} else if (p != READ) {
		ibv_wr_set_sge(qx, a.mr->lkey, (uintptr_t)a.buf + so, len);
	}
	CHECK_EQ(ibv_wr_complete(qx), 0);
	complete(&a, p == READ ? IBV_WC_RDMA_READ :
		     p == SEND || p == UD_SEND ? IBV_WC_SEND : IBV_WC_RDMA_WRITE);
	if (p == SEND || p == WRITE_IMM || p == UD_SEND)
		complete(&b, p == WRITE_IMM ? IBV_WC_RECV_RDMA_WITH_IMM :
			     IBV_WC_RECV);
}

/* Not aligned, and across pages on both sides (a datagram: one MTU). */
#define SO	1003
#define TO	4091
#define PLEN	5001
#define UD_LEN	1001

static struct move path_move(enum path p)
{
	if (p == READ)
		return (struct move) { &b, &a, SO, TO, PLEN };
	if (p == UD_SEND)
		return (struct move) { &a, &b, SO, TO + GRH_LEN, UD_LEN };
	return (struct move) { &a, &b, SO, TO, PLEN };
}

static void path_synced(enum path p, struct ibv_ah *ah)
{
	struct move m = path_move(p);

	cpu_fill(m.src, m.so, m.len, 1);
	sync_mr(m.src, m.so, m.len, TO_DEV);
	run_path(p, ah, SO, TO, m.len);
	sync_mr(m.dst, m.to, m.len, TO_CPU);
	CHECK(cpu_holds(m.dst, m.to, m.len, 1), "the data did not arrive");
	expect_no_report();
}

static void path_stale(enum path p, struct ibv_ah *ah)
{
	struct move m = path_move(p);

	cpu_fill(m.src, m.so, m.len, 1);
	run_path(p, ah, SO, TO, m.len);
	sync_mr(m.dst, m.to, m.len, TO_CPU);
	CHECK(cpu_zero(m.dst, m.to, m.len),
	      "the device moved what the CPU never synced to it");
	expect_report(m.src, m.so, m.len, TO_DEV);
}

static void path_unseen(enum path p, struct ibv_ah *ah)
{
	struct move m = path_move(p);

	cpu_fill(m.src, m.so, m.len, 1);
	sync_mr(m.src, m.so, m.len, TO_DEV);
	run_path(p, ah, SO, TO, m.len);
	CHECK(cpu_zero(m.dst, m.to, m.len),
	      "the CPU saw what the device wrote before a sync");
	expect_no_report();
	cpu_fill(m.dst, m.to, m.len, 2);
	sync_mr(m.dst, m.to, m.len, TO_DEV);
	expect_report(m.dst, m.to, m.len, TO_CPU);
}

#define PATH_TESTS(name, p)						\
TEST_F(nc, name##_synced) { NEED_CHECKING(); path_synced(p, self->ah); } \
TEST_F(nc, name##_stale) { NEED_CHECKING(); path_stale(p, self->ah); } \
TEST_F(nc, name##_unseen) { NEED_CHECKING(); path_unseen(p, self->ah); }

PATH_TESTS(send, SEND)
PATH_TESTS(write, WRITE)
PATH_TESTS(write_imm, WRITE_IMM)
PATH_TESTS(read, READ)
PATH_TESTS(write_sges, WRITE_SGES)
PATH_TESTS(ud_send, UD_SEND)

/*
 * The atomics: the device reads and writes the 8 bytes at B's @off; a CAS
 * or FAA also writes the original value into A's @off.
 */
enum atomic { CAS, FAA, ATOMIC_WRITE };

#define AOFF	4096 + 64
#define OLD	0x0102030405060708ULL
#define ADD	0x1111111111111111ULL

static void run_atomic(enum atomic op, uint64_t compare)
{
	struct ibv_qp_ex *qx = ibv_qp_to_qp_ex(a.qp);
	uint64_t value = ADD;

	ibv_wr_start(qx);
	qx->wr_id = 1;
	qx->wr_flags = IBV_SEND_SIGNALED;
	if (op == CAS)
		ibv_wr_atomic_cmp_swp(qx, b.mr->rkey, (uintptr_t)b.buf + AOFF,
				      compare, ADD);
	else if (op == FAA)
		ibv_wr_atomic_fetch_add(qx, b.mr->rkey,
					(uintptr_t)b.buf + AOFF, ADD);
	else
		ibv_wr_atomic_write(qx, b.mr->rkey, (uintptr_t)b.buf + AOFF,
				    &value);
	if (op != ATOMIC_WRITE)
		ibv_wr_set_sge(qx, a.mr->lkey, (uintptr_t)a.buf + AOFF, 8);
	CHECK_EQ(ibv_wr_complete(qx), 0);
	complete(&a, op == CAS ? IBV_WC_COMP_SWAP :
		     op == FAA ? IBV_WC_FETCH_ADD : IBV_WC_ATOMIC_WRITE);
}

static uint64_t cpu_u64(struct side *s)
{
	uint64_t v;

	memcpy(&v, s->buf + AOFF, 8);
	return v;
}

static void cpu_set_u64(struct side *s, uint64_t v)
{
	memcpy(s->buf + AOFF, &v, 8);
}

/* What B holds after @op on OLD. */
static uint64_t atomic_result(enum atomic op)
{
	return op == FAA ? OLD + ADD : ADD;
}

static void atomic_synced(enum atomic op)
{
	cpu_set_u64(&b, OLD);
	sync_mr(&b, AOFF, 8, TO_DEV);
	run_atomic(op, OLD);
	sync_mr(&b, AOFF, 8, TO_CPU);
	CHECK(cpu_u64(&b) == atomic_result(op), "B holds 0x%lx", cpu_u64(&b));
	if (op != ATOMIC_WRITE) {
		sync_mr(&a, AOFF, 8, TO_CPU);
		CHECK(cpu_u64(&a) == OLD, "A got 0x%lx", cpu_u64(&a));
	}
	expect_no_report();
}

/* The operand B's CPU stored and never synced: the device used 0. */
static void atomic_stale(enum atomic op)
{
	cpu_set_u64(&b, OLD);
	run_atomic(op, 0);
	if (op == ATOMIC_WRITE) {
		/* It reads nothing: the new value is the device's. */
		expect_no_report();
		return;
	}
	sync_mr(&a, AOFF, 8, TO_CPU);
	CHECK(cpu_u64(&a) == 0, "A got 0x%lx", cpu_u64(&a));
	expect_report(&b, AOFF, 8, TO_DEV);
}

static void atomic_unseen(enum atomic op)
{
	cpu_set_u64(&b, OLD);
	sync_mr(&b, AOFF, 8, TO_DEV);
	run_atomic(op, OLD);
	CHECK(cpu_u64(&b) == OLD, "B's CPU saw 0x%lx", cpu_u64(&b));
	if (op != ATOMIC_WRITE)
		CHECK(cpu_u64(&a) == 0, "A's CPU saw 0x%lx", cpu_u64(&a));
	expect_no_report();
	sync_mr(&b, AOFF, 8, TO_DEV);
	expect_report(&b, AOFF, 8, TO_CPU);
}

#define ATOMIC_TESTS(name, op)						\
TEST_F(nc, name##_synced) { NEED_CHECKING(); atomic_synced(op); }	\
TEST_F(nc, name##_stale) { NEED_CHECKING(); atomic_stale(op); }	\
TEST_F(nc, name##_unseen) { NEED_CHECKING(); atomic_unseen(op); }

ATOMIC_TESTS(cas, CAS)
ATOMIC_TESTS(faa, FAA)
ATOMIC_TESTS(atomic_write, ATOMIC_WRITE)

/* FLUSH reads B's range as it would write it back. */
static void run_flush(uint64_t off, uint64_t len)
{
	struct ibv_qp_ex *qx = ibv_qp_to_qp_ex(a.qp);

	ibv_wr_start(qx);
	qx->wr_id = 1;
	qx->wr_flags = IBV_SEND_SIGNALED;
	softrmadv_wr_flush(qx, b.mr->rkey, (uintptr_t)b.buf + off, len,
			   SOFTRMADV_FLUSH_GLOBAL, SOFTRMADV_FLUSH_RANGE);
	CHECK_EQ(ibv_wr_complete(qx), 0);
	complete(&a, SOFTRMADV_WC_FLUSH);
}

TEST_F(nc, flush_synced)
{
	NEED_CHECKING();
	cpu_fill(&b, SO, PLEN, 3);
	sync_mr(&b, SO, PLEN, TO_DEV);
	run_flush(SO, PLEN);
	expect_no_report();
}

TEST_F(nc, flush_stale)
{
	NEED_CHECKING();
	cpu_fill(&b, SO, PLEN, 3);
	run_flush(SO, PLEN);
	expect_report(&b, SO, PLEN, TO_DEV);
}

/* What the device wrote and no sync brought to the CPU, at deregistration. */
TEST_F(nc, dereg_unseen)
{
	uint32_t key = b.mr->lkey;
	struct report r[4];

	NEED_CHECKING();
	cpu_fill(&a, 0, 100, 4);
	sync_mr(&a, 0, 100, TO_DEV);
	run_path(WRITE, NULL, 0, 200, 100);
	expect_no_report();
	CHECK_EQ(ibv_dereg_mr(b.mr), 0);
	b.mr = NULL;
	CHECK_EQ(reports_read(r, 4), 1);
	CHECK(r[0].key == key && r[0].offset == 200 && r[0].length == 100 &&
	      r[0].missing == TO_CPU, "key=0x%08x offset=%lu length=%lu",
	      r[0].key, r[0].offset, r[0].length);
}

/*
 * A checking device takes MRs of less than 4 GiB (a bit per byte of what
 * the device wrote); the refusal comes before anything is pinned.
 */
TEST_F(nc, huge_mr_refused)
{
	size_t len = 5UL << 30;
	void *p;

	NEED_CHECKING();
	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	CHECK(p != MAP_FAILED, "mmap");
	CHECK(!ibv_reg_mr(a.pd, p, len, IBV_ACCESS_LOCAL_WRITE) &&
	      errno == EINVAL, "5 GiB MR: %s", strerror(errno));
	CHECK_EQ(munmap(p, len), 0);
}

/* Both counters count what the tracepoint reports. */
TEST_F(nc, counters)
{
	unsigned long long dev0, cpu0;

	NEED_CHECKING();
	dev0 = test_port_counter(ctx, "missing_sync_to_device");
	cpu0 = test_port_counter(ctx, "missing_sync_to_cpu");
	path_stale(WRITE, NULL);
	CHECK(test_port_counter(ctx, "missing_sync_to_device") > dev0,
	      "missing_sync_to_device did not move");
	path_unseen(WRITE, NULL);
	CHECK(test_port_counter(ctx, "missing_sync_to_cpu") > cpu0,
	      "missing_sync_to_cpu did not move");
}

/* The mode holds while the device has MRs: this case's. */
TEST_F(nc, mode_fixed)
{
	char path[256];
	int on = device_noncoherent();
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/noncoherent",
		 ibv_get_device_name(ctx->device));
	f = fopen(path, "w");
	CHECK(f, "%s: %s", path, strerror(errno));
	fprintf(f, "%d\n", !on);
	CHECK(fclose(f) == EOF && errno == EBUSY, "changed with MRs: %s",
	      strerror(errno));
	CHECK_EQ(device_noncoherent(), on);
}

struct racer {
	struct ibv_mr *mr;
	uint64_t addr;
	atomic_bool stop;
	unsigned long syncs, refused, busy;
	int bad;			/* an errno the sync must not give */
};

/* Syncs the whole of [addr, addr + LEN), both ways, until told to stop. */
static void *sync_racer(void *arg)
{
	struct racer *r = arg;

	while (!atomic_load(&r->stop)) {
		int err = softrmadv_sync_mr(r->mr, r->addr, LEN,
					    r->syncs % 2 ? TO_CPU : TO_DEV);

		if (err == EINVAL)	/* the MR moved away, or is changing */
			r->refused++;
		else if (err == EBUSY)	/* a rereg has it */
			r->busy++;
		else if (err)
			r->bad = err;
		r->syncs++;
		sched_yield();	/* the rereg needs the MR object free at times */
	}
	return NULL;
}

/*
 * A thread syncs B's MR while another moves it between two buffers in
 * place (ibv_rereg_mr, same keys): the sync
 * only ever reaches the pages the MR has at that moment (0, or EINVAL when
 * its range is not there); a sync and a rereg that meet (the core's lock of
 * the MR object) give one of them EBUSY, never freed memory (a KASAN
 * kernel checks).
 */
TEST_F(nc, sync_races)
{
	struct racer r = { .mr = b.mr, .addr = (uintptr_t)b.buf };
	uint8_t *other = mmap(NULL, LEN, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned long moved = 0, busy = 0;
	pthread_t t;

	CHECK(other != MAP_FAILED, "mmap");
	memset(other, 0x5a, LEN);
	CHECK_EQ(pthread_create(&t, NULL, sync_racer, &r), 0);
	for (int i = 0; i < 400; i++) {
		void *to = i % 2 ? b.buf : other;

		/* Each move is tried until the sync lets it through. */
		while (ibv_rereg_mr(b.mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL,
				    to, LEN, 0)) {
			CHECK(errno == EBUSY, "rereg_mr: %s", strerror(errno));
			CHECK(++busy < 1000000UL, "rereg_mr: EBUSY %lu times", busy);
			sched_yield();
		}
		moved++;
	}
	atomic_store(&r.stop, true);
	CHECK_EQ(pthread_join(t, NULL), 0);
	printf("# %lu syncs (%lu outside the MR, %lu busy), %lu moves, %lu busy\n",
	       r.syncs, r.refused, r.busy, moved, busy);
	CHECK(!r.bad, "sync: %s", strerror(r.bad));
	/* 400 moves end where it began; the other buffer is no longer its. */
	CHECK_EQ(softrmadv_sync_mr(b.mr, (uintptr_t)b.buf, LEN, TO_CPU), 0);
	CHECK_EQ(softrmadv_sync_mr(b.mr, (uintptr_t)other, 1, TO_DEV), EINVAL);
	for (int i = 0; i < LEN; i++)
		CHECK(other[i] == 0x5a, "byte %d of a buffer the MR left changed", i);
	CHECK_EQ(munmap(other, LEN), 0);
}

/* On a normal device the data arrives without a sync, and none is reported. */
TEST_F(nc, coherent)
{
	if (device_noncoherent() != 0)
		SKIP(return, "%s is in checking mode",
		     ibv_get_device_name(ctx->device));
	cpu_fill(&a, SO, PLEN, 5);
	run_path(WRITE, NULL, SO, TO, PLEN);
	CHECK(!memcmp(b.buf + TO, a.buf + SO, PLEN), "no data");
	sync_mr(&b, TO, PLEN, TO_CPU);
	sync_mr(&a, SO, PLEN, TO_DEV);
	expect_no_report();
}

/* softrmadv_sync_mr()'s refusals, and what it takes. */
TEST_F(nc, sync_bad_input)
{
	uint64_t base = (uintptr_t)b.buf;
	struct ibv_context *other;
	struct ibv_mr copy, *mr;
	struct ibv_pd *pd;

	if (device_noncoherent() != 0)
		SKIP(return, "%s is in checking mode",
		     ibv_get_device_name(ctx->device));
	CHECK_EQ(softrmadv_sync_mr(b.mr, base, LEN, TO_DEV), 0);
	CHECK_EQ(softrmadv_sync_mr(b.mr, base + LEN - 1, 1, TO_CPU), 0);
	CHECK_EQ(softrmadv_sync_mr(b.mr, base + LEN, 0, TO_CPU), 0);
	/* Outside the MR, and lengths that wrap. */
	CHECK_EQ(softrmadv_sync_mr(b.mr, base - 1, 2, TO_DEV), EINVAL);
	CHECK_EQ(softrmadv_sync_mr(b.mr, base + LEN - 1, 2, TO_DEV), EINVAL);
	CHECK_EQ(softrmadv_sync_mr(b.mr, base + 8, SIZE_MAX, TO_CPU), EINVAL);
	CHECK_EQ(softrmadv_sync_mr(b.mr, UINT64_MAX, 2, TO_CPU), EINVAL);
	/* Directions that do not exist. */
	CHECK_EQ(softrmadv_sync_mr(b.mr, base, 8, 0), EINVAL);
	CHECK_EQ(softrmadv_sync_mr(b.mr, base, 8, 3), EINVAL);
	CHECK_EQ(softrmadv_sync_mr(b.mr, base, 8, -1), EINVAL);

	/*
	 * Handles are the context's own: one this context does not have
	 * (another context's MR, say) names nothing.
	 */
	other = ibv_open_device(ctx->device);
	CHECK(other, "open_device");
	pd = ibv_alloc_pd(other);
	CHECK(pd, "alloc_pd");
	mr = ibv_reg_mr(pd, a.buf, LEN, IBV_ACCESS_LOCAL_WRITE);
	CHECK(mr, "reg_mr");
	copy = *mr;
	copy.context = ctx;
	copy.handle = mr->handle + 100;
	CHECK_EQ(softrmadv_sync_mr(&copy, (uintptr_t)a.buf, 8, TO_DEV), ENOENT);
	/* A deregistered MR. */
	copy = *mr;
	CHECK_EQ(ibv_dereg_mr(mr), 0);
	CHECK_EQ(softrmadv_sync_mr(&copy, (uintptr_t)a.buf, 8, TO_DEV), ENOENT);
	CHECK_EQ(ibv_dealloc_pd(pd), 0);
	CHECK_EQ(ibv_close_device(other), 0);
	expect_no_report();
}

TRANSPORT_HARNESS_MAIN
