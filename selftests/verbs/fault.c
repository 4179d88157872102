// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Fault injection through a device's fault_* attributes (kernel/fault.c),
 * and what the application sees of each:
 *
 *  create   "TYPE 1" in fault_fail_create: the next PD, CQ, QP, SRQ, MR,
 *	     MW, AH creation fails with ENOMEM, the one after succeeds;
 *  wc       "QPN STATUS 1" in fault_wc_status: the next RDMA WRITE
 *	     completes with that status although its data arrived, the QP
 *	     is in error and the next request is flushed; a status out of
 *	     range, or a QP that does not exist, is refused;
 *  events   "qp_fatal N", "qp_req_err N", "qp_access_err N": the event of
 *	     that QP, which is in error; "port_err" and "port_active": the
 *	     events, and the port DOWN between them; "device_fatal": the
 *	     event and every QP in error; "cq_err N": the CQ's event, and a
 *	     QP completing into it fails; unknown names and numbers are
 *	     refused;
 *  race     "qp_fatal N" while another thread moves QP N between RTS and
 *	     SQD: when both are done the QP is in error, 300 times; a
 *	     modify_qp that began before the error never takes it back;
 *  packets  with 2% of the packets lost, 2% corrupted and 5% sent twice
 *	     (which puts QPs of one host on packets), 200 RDMA WRITEs of 4 KiB and 200
 *	     SENDs all complete, every byte in place: only the counters tell
 *	     (at 20% loss a 4 KiB WRITE, four packets and an ACK, runs out
 *	     of its 7 retries now and then, as it would on such a link);
 *  reorder  the same traffic with 10% of the packets held until the next
 *	     one has gone, then with 5% held for 20 ms: each time all in
 *	     place and some requests out of sequence; malformed and
 *	     out-of-range values refused.
 *
 * usage: fault create|wc|events|race|packets|reorder  (SOFTRMA_DEV, SOFTRMA_IPV4)
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>

#include "pair.h"

static const char *dev;

static const char *fault_path(const char *attr)
{
	static char path[256];

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/fault_%s", dev,
		 attr);
	return path;
}

static int fault_write(const char *attr, const char *value)
{
	const char *path = fault_path(attr);
	ssize_t n;
	int fd;

	fd = open(path, O_WRONLY);
	CHECK(fd >= 0, "%s: %s", path, strerror(errno));
	n = write(fd, value, strlen(value));
	close(fd);
	return n < 0 ? errno : 0;
}

static void fault_set(const char *attr, const char *value)
{
	int err = fault_write(attr, value);

	CHECK(!err, "fault_%s \"%s\": %s", attr, value, strerror(err));
}

/* Creates one object of @type on @pd; 0 or its errno.  Frees it again. */
static int create_one(const char *type, struct ibv_pd *pd, struct ibv_cq *cq,
		      void *buf)
{
	struct ibv_qp_init_attr qpa = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_srq_init_attr srqa = { .attr = { .max_wr = 1, .max_sge = 1 } };
	struct ibv_xrcd_init_attr xrcda = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = -1, .oflags = O_CREAT,
	};
	struct ibv_ah_attr aha = {
		.is_global = 1, .port_num = 1,
		.grh = { .sgid_index = gid_index, .hop_limit = 1 },
	};
	void *obj;

	errno = 0;
	if (!strcmp(type, "pd")) {
		obj = ibv_alloc_pd(ctx);
		if (obj)
			CHECK_EQ(ibv_dealloc_pd(obj), 0);
	} else if (!strcmp(type, "cq")) {
		obj = ibv_create_cq(ctx, 1, NULL, NULL, 0);
		if (obj)
			CHECK_EQ(ibv_destroy_cq(obj), 0);
	} else if (!strcmp(type, "qp")) {
		obj = ibv_create_qp(pd, &qpa);
		if (obj)
			CHECK_EQ(ibv_destroy_qp(obj), 0);
	} else if (!strcmp(type, "srq")) {
		obj = ibv_create_srq(pd, &srqa);
		if (obj)
			CHECK_EQ(ibv_destroy_srq(obj), 0);
	} else if (!strcmp(type, "mr")) {
		obj = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE);
		if (obj)
			CHECK_EQ(ibv_dereg_mr(obj), 0);
	} else if (!strcmp(type, "xrcd")) {
		obj = ibv_open_xrcd(ctx, &xrcda);
		if (obj)
			CHECK_EQ(ibv_close_xrcd(obj), 0);
	} else if (!strcmp(type, "mw")) {
		obj = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
		if (obj)
			CHECK_EQ(ibv_dealloc_mw(obj), 0);
	} else {
		CHECK_EQ(ibv_query_gid(ctx, 1, gid_index, &aha.grh.dgid), 0);
		obj = ibv_create_ah(pd, &aha);
		if (obj)
			CHECK_EQ(ibv_destroy_ah(obj), 0);
	}
	return obj ? 0 : errno;
}

static void test_create(void)
{
	static const char *const types[] = { "pd", "cq", "qp", "srq", "mr",
					     "mw", "ah", "xrcd" };
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	void *buf = calloc(1, 4096);
	char value[16];

	CHECK(pd && cq && buf, "setup: %s", strerror(errno));
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		snprintf(value, sizeof(value), "%s 1", types[i]);
		fault_set("fail_create", value);
		CHECK_EQ(create_one(types[i], pd, cq, buf), ENOMEM);
		CHECK_EQ(create_one(types[i], pd, cq, buf), 0);
		printf("# %s: the next creation failed with ENOMEM, then one worked\n",
		       types[i]);
	}
	CHECK_EQ(fault_write("fail_create", "wq 1"), EINVAL);
	CHECK_EQ(fault_write("fail_create", "qp -1"), EINVAL);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
	CHECK_EQ(ibv_dealloc_pd(pd), 0);
	free(buf);
}

static struct ibv_send_wr write_wr(struct pair *p, struct ibv_sge *sge,
				   uint32_t off, uint32_t len)
{
	*sge = (struct ibv_sge) { (uintptr_t)p->a.buf + off, len, p->a.mr->lkey };
	return (struct ibv_send_wr) {
		.wr_id = off, .sg_list = sge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE,
		.wr.rdma = { (uintptr_t)p->b.buf + off, p->b.mr->rkey },
	};
}

static void test_wc(void)
{
	struct ibv_qp_attr attr;
	struct ibv_qp_init_attr init;
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct ibv_wc wc;
	struct pair p;
	char value[32];

	pair_init(&p, ALL_ACCESS, 7);
	fill(p.a.buf, 4096, 5);
	snprintf(value, sizeof(value), "%u %d 1", p.a.qp->qp_num,
		 IBV_WC_RETRY_EXC_ERR);
	fault_set("wc_status", value);
	wr = write_wr(&p, &sge, 0, 4096);
	wc = post_wait(&p.a, &wr);
	CHECK_EQ(wc.status, IBV_WC_RETRY_EXC_ERR);
	CHECK(wait_data(p.b.buf, p.a.buf, 4096), "the data did not arrive");
	CHECK_EQ(ibv_query_qp(p.a.qp, &attr, IBV_QP_STATE, &init), 0);
	CHECK_EQ(attr.qp_state, IBV_QPS_ERR);
	wr = write_wr(&p, &sge, 4096, 64);
	wc = post_wait(&p.a, &wr);
	CHECK_EQ(wc.status, IBV_WC_WR_FLUSH_ERR);
	printf("# an injected %s, the data in place, the QP in error\n",
	       ibv_wc_status_str(IBV_WC_RETRY_EXC_ERR));

	snprintf(value, sizeof(value), "%u 0", p.b.qp->qp_num);
	CHECK_EQ(fault_write("wc_status", value), EINVAL);
	snprintf(value, sizeof(value), "%u 22", p.b.qp->qp_num);
	CHECK_EQ(fault_write("wc_status", value), EINVAL);
	CHECK_EQ(fault_write("wc_status", "16777000 12"), ENOENT);
	CHECK_EQ(fault_write("wc_status", "nonsense"), EINVAL);
	pair_fini(&p);
}

/* The next async event, which must be @type (of @qp, if given). */
static void expect_event(int type, struct ibv_qp *qp)
{
	struct ibv_qp *got = NULL;
	int seen;

	/* The port's GID events of a port going down or up may come first. */
	do {
		seen = test_async_event_of(ctx, test_bound(5) * 1000,
					   qp ? &got : NULL);
	} while (seen == IBV_EVENT_GID_CHANGE && seen != type);
	CHECK(seen == type, "event %d (%s), want %s", seen,
	      seen < 0 ? "none" : ibv_event_type_str(seen),
	      ibv_event_type_str(type));
	CHECK(!qp || got == qp, "the event of another QP");
}

static enum ibv_qp_state qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;

	CHECK_EQ(ibv_query_qp(qp, &attr, IBV_QP_STATE, &init), 0);
	return attr.qp_state;
}

static enum ibv_port_state port_state(void)
{
	struct ibv_port_attr attr;

	CHECK_EQ(ibv_query_port(ctx, 1, &attr), 0);
	return attr.state;
}

/* The number "rdma resource show" gives this process's only CQ. */
static unsigned int only_cqn(void)
{
	char cmd[128], line[512];
	unsigned int cqn = 0, n = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "rdma resource show cq dev %s pid %d", dev,
		 (int)getpid());
	f = popen(cmd, "r");
	CHECK(f, "popen");
	while (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, " cqn ");

		if (p && sscanf(p, " cqn %u", &cqn) == 1)
			n++;
	}
	CHECK_EQ(pclose(f), 0);
	CHECK_EQ(n, 1);
	return cqn;
}

/* cq_err: the CQ's event, and a QP that completes into it fails. */
static void cq_err(void)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	char value[32];
	struct pair p;

	CHECK(cq, "create_cq: %s", strerror(errno));
	snprintf(value, sizeof(value), "cq_err %u", only_cqn());
	side_init(&p.a, NULL, ALL_ACCESS, NULL);
	side_init(&p.b, NULL, ALL_ACCESS, NULL);
	CHECK_EQ(ibv_destroy_qp(p.a.qp), 0);
	p.a.qp = test_create_qp(p.a.pd, cq, NULL, IBV_QPT_RC, ALL_ACCESS);
	connect_qp(p.a.qp, p.b.qp->qp_num, 7);
	connect_qp(p.b.qp, p.a.qp->qp_num, 7);
	fault_set("event", value);
	expect_event(IBV_EVENT_CQ_ERR, NULL);
	wr = write_wr(&p, &sge, 0, 64);
	wr.send_flags = IBV_SEND_SIGNALED;
	{
		struct ibv_send_wr *bad;

		CHECK_EQ(ibv_post_send(p.a.qp, &wr, &bad), 0);
	}
	for (int i = 0; i < 5000 && qp_state(p.a.qp) != IBV_QPS_ERR; i++)
		usleep(1000);
	CHECK_EQ(ibv_query_qp(p.a.qp, &attr, IBV_QP_STATE, &init), 0);
	CHECK_EQ(attr.qp_state, IBV_QPS_ERR);
	printf("# cq_err: the CQ's event, and the QP completing into it failed\n");
	pair_fini(&p);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
}

static void test_events(void)
{
	static const struct { const char *name; int type; } qp_events[] = {
		{ "qp_fatal", IBV_EVENT_QP_FATAL },
		{ "qp_req_err", IBV_EVENT_QP_REQ_ERR },
		{ "qp_access_err", IBV_EVENT_QP_ACCESS_ERR },
	};
	char value[32];
	struct pair p;

	for (size_t i = 0; i < sizeof(qp_events) / sizeof(qp_events[0]); i++) {
		pair_init(&p, ALL_ACCESS, 7);
		snprintf(value, sizeof(value), "%s %u", qp_events[i].name,
			 p.b.qp->qp_num);
		fault_set("event", value);
		expect_event(qp_events[i].type, p.b.qp);
		CHECK_EQ(qp_state(p.b.qp), IBV_QPS_ERR);
		CHECK_EQ(qp_state(p.a.qp), IBV_QPS_RTS);
		printf("# %s: the event of that QP, which is in error\n",
		       qp_events[i].name);
		pair_fini(&p);
	}

	CHECK_EQ(port_state(), IBV_PORT_ACTIVE);
	fault_set("event", "port_err");
	expect_event(IBV_EVENT_PORT_ERR, NULL);
	CHECK_EQ(port_state(), IBV_PORT_DOWN);
	fault_set("event", "port_active");
	expect_event(IBV_EVENT_PORT_ACTIVE, NULL);
	CHECK_EQ(port_state(), IBV_PORT_ACTIVE);
	printf("# port_err, port_active: the events, the port DOWN between\n");

	pair_init(&p, ALL_ACCESS, 7);
	fault_set("event", "device_fatal");
	expect_event(IBV_EVENT_DEVICE_FATAL, NULL);
	CHECK_EQ(qp_state(p.a.qp), IBV_QPS_ERR);
	CHECK_EQ(qp_state(p.b.qp), IBV_QPS_ERR);
	printf("# device_fatal: the event, every QP in error\n");
	pair_fini(&p);

	cq_err();

	CHECK_EQ(fault_write("event", "qp_fatal 16777000"), ENOENT);
	CHECK_EQ(fault_write("event", "cq_err 16777000"), ENOENT);
	CHECK_EQ(fault_write("event", "meltdown"), EINVAL);
	CHECK_EQ(fault_write("event", "port_err 3"), EINVAL);
}

static atomic_int cycling;

/*
 * Moves the QP between RTS and SQD until told to stop or refused; returns
 * 0 or the error that refused it.
 */
static void *cycle_sqd(void *arg)
{
	static const enum ibv_qp_state states[] = { IBV_QPS_SQD, IBV_QPS_RTS };
	struct ibv_qp_attr attr = { 0 };
	struct ibv_qp *qp = arg;
	int err = 0;

	for (unsigned int i = 0; !err && atomic_load(&cycling); i++) {
		attr.qp_state = states[i % 2];
		err = ibv_modify_qp(qp, &attr, IBV_QP_STATE);
	}
	return (void *)(intptr_t)err;
}

static void test_race(void)
{
	char value[32];
	pthread_t thread;
	struct pair p;
	int state;
	void *err;

	for (unsigned int i = 0; i < 300; i++) {
		pair_init(&p, ALL_ACCESS, 7);
		snprintf(value, sizeof(value), "qp_fatal %u", p.b.qp->qp_num);
		atomic_store(&cycling, 1);
		CHECK_EQ(pthread_create(&thread, NULL, cycle_sqd, p.b.qp), 0);
		usleep(i % 50);
		fault_set("event", value);
		expect_event(IBV_EVENT_QP_FATAL, p.b.qp);
		atomic_store(&cycling, 0);
		CHECK_EQ(pthread_join(thread, &err), 0);
		/* Only the error state refuses the cycle. */
		CHECK(!err || (intptr_t)err == EINVAL, "round %u: modify_qp: %s",
		      i, strerror((intptr_t)err));
		state = qp_state(p.b.qp);
		CHECK(state == IBV_QPS_ERR, "round %u: QP in state %d after qp_fatal",
		      i, state);
		pair_fini(&p);
	}
	printf("# qp_fatal racing modify_qp 300 times: the QP in error each time\n");
}

/* 200 WRITEs of 4 KiB and 200 SENDs of 256 bytes, each checked. */
static void traffic(void)
{
	struct ibv_recv_wr rwr, *rbad;
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct ibv_wc wc;
	struct pair p;

	/* The faults are set before the QPs connect: they take packets. */
	pair_init(&p, ALL_ACCESS, 7);
	fill(p.a.buf, PAIR_BUF_LEN, 9);
	for (uint32_t i = 0; i < 200; i++) {
		wr = write_wr(&p, &sge, i * 4096, 4096);
		wc = post_wait(&p.a, &wr);
		CHECK(wc.status == IBV_WC_SUCCESS, "write %u: %s", i,
		      ibv_wc_status_str(wc.status));
	}
	CHECK(!memcmp(p.a.buf, p.b.buf, 200 * 4096), "the writes' data");
	for (uint32_t i = 0; i < 200; i++) {
		memset(p.b.buf, 0, 256);
		sge = (struct ibv_sge) { (uintptr_t)p.b.buf, 256, p.b.mr->lkey };
		rwr = (struct ibv_recv_wr) { .sg_list = &sge, .num_sge = 1 };
		CHECK_EQ(ibv_post_recv(p.b.qp, &rwr, &rbad), 0);
		sge = (struct ibv_sge) { (uintptr_t)p.a.buf + i, 256,
					 p.a.mr->lkey };
		wr = (struct ibv_send_wr) { .sg_list = &sge, .num_sge = 1,
					    .opcode = IBV_WR_SEND };
		wc = post_wait(&p.a, &wr);
		CHECK(wc.status == IBV_WC_SUCCESS, "send %u: %s", i,
		      ibv_wc_status_str(wc.status));
		wc = test_poll_one(p.b.cq, 5);
		CHECK(wc.status == IBV_WC_SUCCESS && wc.byte_len == 256,
		      "receive %u: %s", i, ibv_wc_status_str(wc.status));
		CHECK(!memcmp(p.b.buf, p.a.buf + i, 256), "send %u's data", i);
	}
	pair_fini(&p);
}

static void test_packets(void)
{
	fault_set("drop", "20000");
	fault_set("duplicate", "50000");
	fault_set("corrupt", "20000");
	traffic();
	fault_set("drop", "0");
	fault_set("duplicate", "0");
	fault_set("corrupt", "0");
	printf("# 200 WRITEs and 200 SENDs through 2%% loss, 2%% corruption "
	       "and 5%% duplicates: all complete, every byte in place\n");
	CHECK_EQ(fault_write("drop", "1000001"), ERANGE);
}

/* The traffic through one packet fault: some requests out of sequence. */
static void traffic_out_of_seq(const char *attr, const char *value)
{
	unsigned long long before = test_port_counter(ctx, "out_of_seq_request");

	fault_set(attr, value);
	traffic();
	/* The counters are cached for 10 ms. */
	usleep(20000);
	CHECK(test_port_counter(ctx, "out_of_seq_request") > before,
	      "fault_%s \"%s\": no request arrived out of sequence", attr, value);
}

static void test_reorder(void)
{
	char value[32];
	FILE *f;

	traffic_out_of_seq("reorder", "100000");
	fault_set("reorder", "0");
	traffic_out_of_seq("delay", "50000 20");
	f = fopen(fault_path("delay"), "r");
	CHECK(f && fgets(value, sizeof(value), f), "read fault_delay");
	fclose(f);
	CHECK(!strcmp(value, "50000 20\n"), "fault_delay reads %s", value);
	fault_set("delay", "0 1");
	printf("# 200 WRITEs and 200 SENDs with 10%% of the packets reordered, "
	       "then with 5%% delayed by 20 ms: all complete, every byte in "
	       "place, some requests out of sequence\n");
	CHECK_EQ(fault_write("delay", "1000001 5"), ERANGE);
	CHECK_EQ(fault_write("delay", "1000 0"), ERANGE);
	CHECK_EQ(fault_write("delay", "1000 1001"), ERANGE);
	CHECK_EQ(fault_write("delay", "1000"), EINVAL);
	CHECK_EQ(fault_write("reorder", "1000001"), ERANGE);
}

int main(int argc, char **argv)
{
	const char *ipv4 = getenv("SOFTRMA_IPV4");

	dev = getenv("SOFTRMA_DEV");
	CHECK(argc == 2 && dev && ipv4,
	      "usage: fault create|wc|events|race|packets|reorder (SOFTRMA_DEV, SOFTRMA_IPV4)");
	ctx = test_open_device(dev);
	gid_index = test_find_ipv4_gid(ctx, ipv4);
	if (!strcmp(argv[1], "create"))
		test_create();
	else if (!strcmp(argv[1], "wc"))
		test_wc();
	else if (!strcmp(argv[1], "events"))
		test_events();
	else if (!strcmp(argv[1], "race"))
		test_race();
	else if (!strcmp(argv[1], "packets"))
		test_packets();
	else if (!strcmp(argv[1], "reorder"))
		test_reorder();
	else
		FAIL("no test %s", argv[1]);
	CHECK_EQ(ibv_close_device(ctx), 0);
	return KSFT_PASS;
}
