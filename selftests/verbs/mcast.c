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
 *
 * usage: mcast DEV IPV4 GROUP_IPV4
 */
#include <arpa/inet.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"

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
};

static struct ibv_context *ctx;
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

/*
 * A process that exits with a QP attached to the group next to ours: the
 * core detaches it as it cleans up, and the device leaves the IP group.
 */
static void exit_attached(const char *dev)
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
		struct ibv_context *c = test_open_device(dev);
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
	printf("# ok: a process that exits attached leaves its group\n");
}

static void check_rules(struct member *m, int gid_index)
{
	struct ibv_qp *rc = test_create_qp(pd, m->cq, NULL, IBV_QPT_RC, 0);
	struct member extra[ATTACH_MAX];
	union ibv_gid own;

	CHECK_EQ(ibv_attach_mcast(rc, &group, 0), EINVAL);
	CHECK_EQ(ibv_destroy_qp(rc), 0);
	CHECK_EQ(ibv_query_gid(ctx, 1, gid_index, &own), 0);
	CHECK_EQ(ibv_attach_mcast(m[0].qp, &own, 0), EINVAL);
	CHECK_EQ(ibv_detach_mcast(m[2].qp, &group, 0), EINVAL);
	printf("# ok: RC QP, unicast GID, detach of a non-member: EINVAL\n");

	/* members 0 and 1 are in; fill the group, then one more */
	for (int i = 0; i < ATTACH_MAX - 2; i++) {
		member_init(&extra[i]);
		CHECK_EQ(ibv_attach_mcast(extra[i].qp, &group, 0), 0);
	}
	member_init(&extra[ATTACH_MAX - 2]);
	CHECK_EQ(ibv_attach_mcast(extra[ATTACH_MAX - 2].qp, &group, 0), ENOMEM);
	CHECK_EQ(ibv_destroy_qp(extra[0].qp), EBUSY);
	for (int i = 0; i <= ATTACH_MAX - 2; i++) {
		if (i < ATTACH_MAX - 2)
			CHECK_EQ(ibv_detach_mcast(extra[i].qp, &group, 0), 0);
		CHECK_EQ(ibv_destroy_qp(extra[i].qp), 0);
		CHECK_EQ(ibv_destroy_cq(extra[i].cq), 0);
		CHECK_EQ(ibv_dereg_mr(extra[i].mr), 0);
	}
	printf("# ok: %d QPs per group, then ENOMEM; an attached QP is EBUSY to destroy\n",
	       ATTACH_MAX);
}

int main(int argc, char **argv)
{
	struct member s, m[MEMBERS];
	struct ibv_ah_attr ah_attr = { .is_global = 1, .port_num = 1 };
	struct ibv_ah *ah;
	int gid_index;

	CHECK(argc == 4, "usage: mcast DEV IPV4 GROUP_IPV4");
	CHECK(inet_pton(AF_INET, argv[3], &group_addr) == 1, "group address");
	memset(&group, 0, sizeof(group));
	group.raw[10] = group.raw[11] = 0xff;
	memcpy(&group.raw[12], &group_addr, 4);
	ctx = test_open_device(argv[1]);
	gid_index = test_find_ipv4_gid(ctx, argv[2]);
	pd = ibv_alloc_pd(ctx);
	CHECK(pd, "alloc_pd");
	member_init(&s);
	for (int i = 0; i < MEMBERS; i++)
		member_init(&m[i]);
	ah_attr.grh = (struct ibv_global_route) {
		.dgid = group, .sgid_index = gid_index, .hop_limit = 1,
	};
	ah = ibv_create_ah(pd, &ah_attr);
	CHECK(ah, "create_ah to the group: %s", strerror(errno));

	CHECK(!igmp_member(), "in the IP group before any attach");
	for (int i = 0; i < MEMBERS; i++)
		CHECK_EQ(ibv_attach_mcast(m[i].qp, &group, 0), 0);
	CHECK_EQ(ibv_attach_mcast(m[0].qp, &group, 0), 0);
	CHECK(igmp_member(), "not in the IP group with members");
	for (int k = 0; k < 3; k++) {
		for (int i = 0; i < MEMBERS; i++)
			post_recv(&m[i]);
		send_to_group(&s, ah, QKEY, 0x40 + k);
		for (int i = 0; i < MEMBERS; i++)
			expect_message(&m[i], &s, 0x40 + k, i);
	}
	expect_nothing(&m[0], 0, "a second copy (attached twice)");
	printf("# ok: 3 messages reach each of %d members, once\n", MEMBERS);

	CHECK_EQ(ibv_detach_mcast(m[2].qp, &group, 0), 0);
	for (int i = 0; i < MEMBERS; i++)
		post_recv(&m[i]);
	send_to_group(&s, ah, QKEY, 0x50);
	expect_message(&m[0], &s, 0x50, 0);
	expect_message(&m[1], &s, 0x50, 1);
	expect_nothing(&m[2], 2, "after its detach");
	send_to_group(&s, ah, QKEY ^ 1, 0x60);
	for (int i = 0; i < 2; i++)
		expect_nothing(&m[i], i, "with a wrong Q_Key");
	printf("# ok: a detached QP and a wrong Q_Key get nothing\n");

	check_rules(m, gid_index);
	exit_attached(argv[1]);
	CHECK_EQ(ibv_detach_mcast(m[0].qp, &group, 0), 0);
	CHECK(igmp_member(), "left the IP group with a member left");
	CHECK_EQ(ibv_detach_mcast(m[1].qp, &group, 0), 0);
	CHECK(!igmp_member(), "still in the IP group without members");
	printf("# ok: the IP group is joined while there are members\n");

	CHECK_EQ(ibv_destroy_ah(ah), 0);
	for (int i = 0; i < MEMBERS; i++) {
		CHECK_EQ(ibv_destroy_qp(m[i].qp), 0);
		CHECK_EQ(ibv_destroy_cq(m[i].cq), 0);
		CHECK_EQ(ibv_dereg_mr(m[i].mr), 0);
	}
	CHECK_EQ(ibv_destroy_qp(s.qp), 0);
	CHECK_EQ(ibv_destroy_cq(s.cq), 0);
	CHECK_EQ(ibv_dereg_mr(s.mr), 0);
	CHECK_EQ(ibv_dealloc_pd(pd), 0);
	CHECK_EQ(ibv_close_device(ctx), 0);
	printf("# mcast: all passed\n");
	return KSFT_PASS;
}
