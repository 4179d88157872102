// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * UD multicast on one device: ibv_attach_mcast() puts QPs in a group, and a
 * send to QPN 0xFFFFFF at the group's GID reaches every QP attached, with
 * the group's IPv4 header in front, and no other; a detached QP gets
 * nothing more; a wrong Q_Key reaches nobody.  The rules: an RC QP, a
 * unicast GID and a detach of what is not attached are EINVAL, attaching
 * twice is no error, the 57th QP of a group is ENOMEM, an attached QP
 * cannot be destroyed (EBUSY, from the core), and a process that exits
 * with QPs attached leaves its groups.  The device joins the IP group on
 * its netdev (/proc/net/igmp) while the group has members, and only then.
 * One kselftest_harness.h case per behaviour, each run on both transports:
 * the fixture's variants "local" and "wire" (force_wire: every datagram a
 * RoCEv2 packet).  The group is GROUP; a case's child process takes the
 * next one.
 *
 * usage: [SOFTRMA_DEV=softrma0] [SOFTRMA_IPV4=10.9.0.1] mcast [HARNESS OPTIONS]
 * (-h: -l lists the cases, -v wire runs one variant,
 * -r mcast.wire.group_full_enomem one case)
 */
#include <arpa/inet.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

#include "transport.h"

#define GROUP	"239.1.2.3"
#define QKEY	0x11223344
#define HDR	40
#define LEN	256
#define MEMBERS	3
#define ATTACH_MAX 56

struct member {
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	unsigned char buf[HDR + LEN];
	struct ibv_mr *mr;
	bool attached;		/* to the group */
};

static struct ibv_context *ctx;
static int gid_index;
static struct ibv_pd *pd;
static union ibv_gid group;
static struct in_addr group_addr;

static void member_init(struct member *m)
{
	m->cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	CHECK(m->cq, "create_cq");
	m->qp = test_create_ud_qp(pd, m->cq, QKEY);
	m->mr = ibv_reg_mr(pd, m->buf, sizeof(m->buf), IBV_ACCESS_LOCAL_WRITE);
	CHECK(m->mr, "reg_mr: %s", strerror(errno));
}

static void attach(struct member *m)
{
	CHECK_EQ(ibv_attach_mcast(m->qp, &group, 0), 0);
	m->attached = true;
}

static void detach(struct member *m)
{
	CHECK_EQ(ibv_detach_mcast(m->qp, &group, 0), 0);
	m->attached = false;
}

static void member_fini(struct member *m)
{
	if (m->attached)
		detach(m);
	CHECK_EQ(ibv_destroy_qp(m->qp), 0);
	CHECK_EQ(ibv_destroy_cq(m->cq), 0);
	CHECK_EQ(ibv_dereg_mr(m->mr), 0);
}

/* What a case built: teardown destroys it. */
FIXTURE(mcast) {
	struct member s, m[MEMBERS];	/* s sends to the group through ah */
	struct ibv_ah *ah;
	struct member extra[ATTACH_MAX + 1];
	int extras;			/* initialised */
};

TRANSPORT_VARIANTS(mcast);

FIXTURE_SETUP(mcast)
{
	struct ibv_ah_attr ah_attr = { .is_global = 1, .port_num = 1 };

	ctx = transport_open_device(&gid_index);
	if (!transport_set(variant->force_wire))
		SKIP(return, "%s: %s", FORCE_WIRE, strerror(errno));
	CHECK(inet_pton(AF_INET, GROUP, &group_addr) == 1, "group address");
	group.raw[10] = group.raw[11] = 0xff;
	memcpy(&group.raw[12], &group_addr, 4);
	pd = ibv_alloc_pd(ctx);
	CHECK(pd, "alloc_pd");
	member_init(&self->s);
	for (int i = 0; i < MEMBERS; i++)
		member_init(&self->m[i]);
	ah_attr.grh = (struct ibv_global_route) {
		.dgid = group, .sgid_index = gid_index, .hop_limit = 1,
	};
	self->ah = ibv_create_ah(pd, &ah_attr);
	CHECK(self->ah, "create_ah to the group: %s", strerror(errno));
}

/*
 * The harness runs this after a case's body returned, not after a failed
 * check: that exit()s the case's process (test.h), which releases what the
 * case built, and the core detaches its QPs.
 */
FIXTURE_TEARDOWN(mcast)
{
	CHECK_EQ(ibv_destroy_ah(self->ah), 0);
	for (int i = 0; i < self->extras; i++)
		member_fini(&self->extra[i]);
	for (int i = 0; i < MEMBERS; i++)
		member_fini(&self->m[i]);
	member_fini(&self->s);
	CHECK_EQ(ibv_dealloc_pd(pd), 0);
	CHECK_EQ(ibv_close_device(ctx), 0);
	transport_put_back();
}

static void post_recv(struct member *m)
{
	struct ibv_sge sge = { (uintptr_t)m->buf, sizeof(m->buf), m->mr->lkey };
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;

	memset(m->buf, 0xee, sizeof(m->buf));
	CHECK_EQ(ibv_post_recv(m->qp, &wr, &bad), 0);
}

static void send_to_group(struct member *s, struct ibv_ah *ah, uint32_t qkey,
			  unsigned char fill)
{
	struct ibv_sge sge = { (uintptr_t)s->buf, LEN, s->mr->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.ud = { .ah = ah, .remote_qpn = 0xffffff, .remote_qkey = qkey },
	}, *bad;
	struct ibv_wc wc;

	memset(s->buf, fill, LEN);
	CHECK_EQ(ibv_post_send(s->qp, &wr, &bad), 0);
	wc = test_poll_one(s->cq, 5);
	CHECK(wc.status == IBV_WC_SUCCESS, "send: %s", ibv_wc_status_str(wc.status));
}

/* True when a completion comes within half a second. */
static int received(struct member *m, struct ibv_wc *wc)
{
	for (int i = 0; i < 5000; i++) {
		int n = ibv_poll_cq(m->cq, 1, wc);

		CHECK(n >= 0, "poll_cq");
		if (n)
			return 1;
		usleep(100);
	}
	return 0;
}

/* @m got the message of @fill from @s, behind the group's IPv4 header. */
static void expect_message(struct member *m, struct member *s,
			   unsigned char fill, int i)
{
	struct ibv_wc wc;

	CHECK(received(m, &wc), "member %d got nothing", i);
	CHECK(wc.status == IBV_WC_SUCCESS, "member %d: %s", i,
	      ibv_wc_status_str(wc.status));
	CHECK_EQ(wc.byte_len, HDR + LEN);
	CHECK_EQ(wc.src_qp, s->qp->qp_num);
	CHECK(wc.wc_flags & IBV_WC_GRH, "member %d: no GRH", i);
	CHECK(!memcmp(m->buf + 20 + 16, &group_addr, 4),
	      "member %d: the IPv4 destination is not the group", i);
	for (int j = 0; j < LEN; j++)
		CHECK(m->buf[HDR + j] == fill, "member %d: byte %d", i, j);
}

static void expect_nothing(struct member *m, int i, const char *why)
{
	struct ibv_wc wc;

	CHECK(!received(m, &wc), "member %d received %s", i, why);
}

/* The device's netdev is in the IPv4 multicast group @addr. */
static int igmp_member_of(struct in_addr addr)
{
	char line[256];
	unsigned int g;
	int found = 0;
	FILE *f = fopen("/proc/net/igmp", "r");

	CHECK(f, "/proc/net/igmp");
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, " %8X", &g) == 1 && g == addr.s_addr)
			found = 1;
	fclose(f);
	return found;
}

static int igmp_member(void)
{
	return igmp_member_of(group_addr);
}

/* Each of three messages reaches each member. */
TEST_F(mcast, message_reaches_every_member)
{
	struct member *m = self->m;

	for (int i = 0; i < MEMBERS; i++)
		attach(&m[i]);
	for (int k = 0; k < 3; k++) {
		for (int i = 0; i < MEMBERS; i++)
			post_recv(&m[i]);
		send_to_group(&self->s, self->ah, QKEY, 0x40 + k);
		for (int i = 0; i < MEMBERS; i++)
			expect_message(&m[i], &self->s, 0x40 + k, i);
	}
}

/* Attaching twice is no error, and the QP gets one copy, not two. */
TEST_F(mcast, attached_twice_receives_once)
{
	struct member *m = &self->m[0];

	attach(m);
	attach(m);
	post_recv(m);
	post_recv(m);
	send_to_group(&self->s, self->ah, QKEY, 0x40);
	expect_message(m, &self->s, 0x40, 0);
	expect_nothing(m, 0, "a second copy (attached twice)");
}

TEST_F(mcast, detached_member_gets_nothing)
{
	struct member *m = self->m;

	for (int i = 0; i < MEMBERS; i++)
		attach(&m[i]);
	detach(&m[2]);
	for (int i = 0; i < MEMBERS; i++)
		post_recv(&m[i]);
	send_to_group(&self->s, self->ah, QKEY, 0x50);
	expect_message(&m[0], &self->s, 0x50, 0);
	expect_message(&m[1], &self->s, 0x50, 1);
	expect_nothing(&m[2], 2, "after its detach");
}

/* A wrong Q_Key reaches nobody, and leaves every receive posted. */
TEST_F(mcast, wrong_qkey_reaches_nobody)
{
	struct member *m = self->m;

	for (int i = 0; i < MEMBERS; i++) {
		attach(&m[i]);
		post_recv(&m[i]);
	}
	send_to_group(&self->s, self->ah, QKEY ^ 1, 0x60);
	for (int i = 0; i < MEMBERS; i++)
		expect_nothing(&m[i], i, "with a wrong Q_Key");
	send_to_group(&self->s, self->ah, QKEY, 0x61);
	for (int i = 0; i < MEMBERS; i++)
		expect_message(&m[i], &self->s, 0x61, i);
}

TEST_F(mcast, rc_qp_attach_einval)
{
	struct ibv_qp *rc = test_create_qp(pd, self->m[0].cq, NULL, IBV_QPT_RC, 0);

	CHECK_EQ(ibv_attach_mcast(rc, &group, 0), EINVAL);
	CHECK_EQ(ibv_destroy_qp(rc), 0);
}

TEST_F(mcast, unicast_gid_attach_einval)
{
	union ibv_gid own;

	CHECK_EQ(ibv_query_gid(ctx, 1, gid_index, &own), 0);
	CHECK_EQ(ibv_attach_mcast(self->m[0].qp, &own, 0), EINVAL);
}

/* In a group with a member: a QP never attached, and one detached. */
TEST_F(mcast, detach_of_non_member_einval)
{
	struct member *m = self->m;

	attach(&m[0]);
	CHECK_EQ(ibv_detach_mcast(m[2].qp, &group, 0), EINVAL);
	attach(&m[2]);
	detach(&m[2]);
	CHECK_EQ(ibv_detach_mcast(m[2].qp, &group, 0), EINVAL);
}

TEST_F(mcast, group_full_enomem)
{
	struct member *extra = self->extra;

	for (; self->extras <= ATTACH_MAX; self->extras++)
		member_init(&extra[self->extras]);
	for (int i = 0; i < ATTACH_MAX; i++)
		attach(&extra[i]);
	CHECK_EQ(ibv_attach_mcast(extra[ATTACH_MAX].qp, &group, 0), ENOMEM);
}

TEST_F(mcast, attached_qp_destroy_ebusy)
{
	attach(&self->m[0]);
	CHECK_EQ(ibv_destroy_qp(self->m[0].qp), EBUSY);
}

/*
 * A process that exits with a QP attached to the group next to ours: the
 * core detaches it as it cleans up, and the device leaves the IP group.
 */
TEST_F(mcast, exit_attached_leaves_group)
{
	union ibv_gid next = group;
	struct in_addr next_addr;
	int status;
	pid_t pid;

	next.raw[15]++;
	memcpy(&next_addr, &next.raw[12], 4);
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (!pid) {
		int child_gid_index;
		struct ibv_context *c = transport_open_device(&child_gid_index);
		struct ibv_pd *p = ibv_alloc_pd(c);
		struct ibv_cq *cq = ibv_create_cq(c, 4, NULL, NULL, 0);
		struct ibv_qp *qp = test_create_ud_qp(p, cq, QKEY);

		CHECK_EQ(ibv_attach_mcast(qp, &next, 0), 0);
		CHECK(igmp_member_of(next_addr), "the child's group is not joined");
		_exit(0);
	}
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status) && !WEXITSTATUS(status), "the child failed");
	CHECK(!igmp_member_of(next_addr), "the group of an exited process stays");
}

TEST_F(mcast, ip_group_joined_while_members)
{
	struct member *m = self->m;

	CHECK(!igmp_member(), "in the IP group before any attach");
	attach(&m[0]);
	attach(&m[1]);
	CHECK(igmp_member(), "not in the IP group with members");
	detach(&m[0]);
	CHECK(igmp_member(), "left the IP group with a member left");
	detach(&m[1]);
	CHECK(!igmp_member(), "still in the IP group without members");
}

TRANSPORT_HARNESS_MAIN
