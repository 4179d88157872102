// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Remote persistence the way Debian's librpma 1.2 does it.  Built on
 * rdma-core 44, which has no FLUSH verb, librpma makes a write durable on a
 * server that declares direct write to persistent memory
 * (rpma_peer_cfg_set_direct_write_to_pmem()) with a READ after it: right
 * where the device places writes durably (persistence "adr", DDIO off),
 * wrong where they land in the CPU caches ("cache", DDIO on), which
 * librpma's documentation leaves to the administrator.
 *
 * A server thread registers a devdax mapping (DAX) as a WRITE destination
 * to flush to persistence, declares direct write to pmem, and gives its
 * MR's and peer configuration's descriptors to the client in the
 * connection's private data; the client thread WRITEs LEN bytes at OFF,
 * rpma_flush()es them to persistence, waits for the flush's completion and
 * disconnects.  With the server's MR still registered, the device's power
 * fails: with "adr" every byte survives and nothing is put back; with
 * "cache" the LEN bytes are put back (power_fail_lost_bytes) and the
 * mapping holds what it held before the WRITE.
 *
 * usage: rpma_persist DAX IPV4 PORT adr|cache
 */
#include <librpma.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>

#include "test.h"

#define PM_LEN		(2 << 20)
#define OFF		8192
#define LEN		20000
#define OLD_BYTE	0x5a

#define TRY(call) do {							\
	int ret_ = (call);						\
	CHECK(!ret_, "%s", rpma_err_2str(ret_));			\
} while (0)

static const char *addr, *port;
static uint8_t *pm;
static struct rpma_peer *peer;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
enum stage { STARTING, LISTENING, CLOSED, POWER_FAILED };
static enum stage stage;

static void set_stage(enum stage next)
{
	pthread_mutex_lock(&lock);
	stage = next;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
}

static void wait_stage(enum stage want)
{
	pthread_mutex_lock(&lock);
	while (stage < want)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
}

static void expect_event(struct rpma_conn *conn, enum rpma_conn_event want)
{
	enum rpma_conn_event ev;

	TRY(rpma_conn_next_event(conn, &ev));
	CHECK(ev == want, "connection event %s, want %s",
	      rpma_utils_conn_event_2str(ev), rpma_utils_conn_event_2str(want));
}

/* Private data: the MR descriptor's size, it, the peer configuration's. */
static void *serve(void *arg)
{
	struct rpma_conn_private_data pdata;
	struct rpma_peer_cfg *pcfg;
	struct rpma_mr_local *mr;
	struct rpma_conn_req *req;
	struct rpma_conn *conn;
	struct rpma_ep *ep;
	size_t mr_size, cfg_size;
	uint8_t desc[255];

	(void)arg;
	TRY(rpma_mr_reg(peer, pm, PM_LEN, RPMA_MR_USAGE_WRITE_DST |
			RPMA_MR_USAGE_FLUSH_TYPE_PERSISTENT, &mr));
	TRY(rpma_peer_cfg_new(&pcfg));
	TRY(rpma_peer_cfg_set_direct_write_to_pmem(pcfg, true));
	TRY(rpma_mr_get_descriptor_size(mr, &mr_size));
	TRY(rpma_peer_cfg_get_descriptor_size(pcfg, &cfg_size));
	CHECK(1 + mr_size + cfg_size <= sizeof(desc), "descriptors of %zu bytes",
	      mr_size + cfg_size);
	desc[0] = mr_size;
	TRY(rpma_mr_get_descriptor(mr, desc + 1));
	TRY(rpma_peer_cfg_get_descriptor(pcfg, desc + 1 + mr_size));
	pdata.ptr = desc;
	pdata.len = 1 + mr_size + cfg_size;

	TRY(rpma_ep_listen(peer, addr, port, &ep));
	set_stage(LISTENING);
	TRY(rpma_ep_next_conn_req(ep, NULL, &req));
	TRY(rpma_conn_req_connect(&req, &pdata, &conn));
	expect_event(conn, RPMA_CONN_ESTABLISHED);
	expect_event(conn, RPMA_CONN_CLOSED);
	TRY(rpma_conn_disconnect(conn));
	TRY(rpma_conn_delete(&conn));
	TRY(rpma_ep_shutdown(&ep));
	TRY(rpma_peer_cfg_delete(&pcfg));
	set_stage(CLOSED);
	wait_stage(POWER_FAILED);
	TRY(rpma_mr_dereg(&mr));
	return NULL;
}

static void client(void)
{
	struct rpma_conn_private_data pdata;
	struct rpma_mr_local *src_mr;
	struct rpma_mr_remote *dst;
	struct rpma_peer_cfg *pcfg;
	struct rpma_conn_req *req;
	struct rpma_conn *conn;
	struct rpma_cq *cq;
	struct ibv_wc wc;
	size_t mr_size;
	uint8_t *src;
	int got;

	src = malloc(LEN);
	CHECK(src, "malloc");
	/* Never OLD_BYTE: a byte put back is told from one written. */
	for (int i = 0; i < LEN; i++)
		src[i] = (uint8_t)(i * 13 + 1) == OLD_BYTE ? 0 : i * 13 + 1;
	TRY(rpma_mr_reg(peer, src, LEN, RPMA_MR_USAGE_WRITE_SRC, &src_mr));
	TRY(rpma_conn_req_new(peer, addr, port, NULL, &req));
	TRY(rpma_conn_req_connect(&req, NULL, &conn));
	expect_event(conn, RPMA_CONN_ESTABLISHED);
	TRY(rpma_conn_get_private_data(conn, &pdata));
	CHECK(pdata.len > 1, "private data of %u bytes", pdata.len);
	mr_size = *(uint8_t *)pdata.ptr;
	CHECK(1 + mr_size < pdata.len, "private data of %u bytes", pdata.len);
	TRY(rpma_mr_remote_from_descriptor((uint8_t *)pdata.ptr + 1, mr_size,
					   &dst));
	TRY(rpma_peer_cfg_from_descriptor((uint8_t *)pdata.ptr + 1 + mr_size,
					  pdata.len - 1 - mr_size, &pcfg));
	TRY(rpma_conn_apply_remote_peer_cfg(conn, pcfg));

	TRY(rpma_write(conn, dst, OFF, src_mr, 0, LEN,
		       RPMA_F_COMPLETION_ON_ERROR, NULL));
	TRY(rpma_flush(conn, dst, OFF, LEN, RPMA_FLUSH_TYPE_PERSISTENT,
		       RPMA_F_COMPLETION_ALWAYS, NULL));
	TRY(rpma_conn_get_cq(conn, &cq));
	TRY(rpma_cq_wait(cq));
	TRY(rpma_cq_get_wc(cq, 1, &wc, &got));
	CHECK(got == 1 && wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RDMA_READ,
	      "flush: %d completions, %s, opcode %d", got,
	      ibv_wc_status_str(wc.status), wc.opcode);
	CHECK(!memcmp(pm + OFF, src, LEN), "the WRITE is not in the mapping");

	TRY(rpma_conn_disconnect(conn));
	expect_event(conn, RPMA_CONN_CLOSED);
	TRY(rpma_conn_delete(&conn));
	TRY(rpma_mr_remote_delete(&dst));
	TRY(rpma_peer_cfg_delete(&pcfg));
	TRY(rpma_mr_dereg(&src_mr));
	free(src);
}

int main(int argc, char **argv)
{
	unsigned long long lost;
	struct ibv_context *ctx;
	pthread_t server;
	int fd, adr, old = 0;

	CHECK(argc == 5 && (!strcmp(argv[4], "adr") || !strcmp(argv[4], "cache")),
	      "usage: rpma_persist DAX IPV4 PORT adr|cache");
	addr = argv[2];
	port = argv[3];
	adr = !strcmp(argv[4], "adr");
	fd = open(argv[1], O_RDWR);
	CHECK(fd >= 0, "%s: %s", argv[1], strerror(errno));
	pm = mmap(NULL, PM_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(pm != MAP_FAILED, "mmap %s: %s", argv[1], strerror(errno));
	memset(pm, OLD_BYTE, PM_LEN);

	TRY(rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_LOCAL, &ctx));
	TRY(rpma_peer_new(ctx, &peer));
	CHECK(!pthread_create(&server, NULL, serve, NULL), "pthread_create");
	wait_stage(LISTENING);
	client();
	wait_stage(CLOSED);

	lost = test_power_fail(ctx);
	for (int i = 0; i < LEN; i++)
		old += pm[OFF + i] == OLD_BYTE;
	printf("# persistence %s: %d bytes written by rpma_write(), rpma_flush()ed to persistence, "
	       "%llu put back by the power failure, %d of them hold the old bytes\n",
	       argv[4], LEN, lost, old);
	CHECK(lost == (adr ? 0 : LEN), "power_fail_lost_bytes moved by %llu", lost);
	CHECK(old == (adr ? 0 : LEN), "%d bytes hold the old bytes", old);

	set_stage(POWER_FAILED);
	CHECK(!pthread_join(server, NULL), "pthread_join");
	TRY(rpma_peer_delete(&peer));
	munmap(pm, PM_LEN);
	close(fd);
	return KSFT_PASS;
}
