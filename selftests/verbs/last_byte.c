// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The last byte of an RDMA WRITE is stored once, after the rest.  Programs
 * poll the last byte of a WRITE's target and then write there themselves
 * (perftest's ib_write_lat, riostream, MPI eager buffers): a device that
 * stored that byte again after they saw it would undo their write.
 * x86's memcpy() stores 4, 8 and 16-byte copies' last bytes twice, so a
 * copy of 16 bytes whose CPU stops between the two stores (a vCPU the host
 * preempts) did just that, and riostream hung (issue 27).
 *
 * A writer WRITEs 16 inline bytes to a page-aligned target, the last one
 * a marker, and waits until a poller thread has seen it; the poller waits
 * for the marker, overwrites it with 0 at once, and counts every time the
 * marker came back before the next WRITE's.  The window is two
 * instructions of the writer's CPU: a quiet guest seldom opens it, a guest
 * whose host is busy does.
 *
 * usage: last_byte DEV IPV4 ITERS
 */
#include <pthread.h>
#include <stdatomic.h>

#include "pair.h"

#define WRITE_LEN	16

static struct pair p;
static volatile uint8_t *target;
static atomic_long seen = -1;	/* the last iteration the poller saw */
static long iters, undone;

static uint8_t marker(long i)
{
	return i % 255 + 1;
}

/* Overwrites marker @i once it is there; counts a marker @i - 1 seen again. */
static void *poll_last_byte(void *arg)
{
	(void)arg;
	for (long i = 0; i < iters; i++) {
		uint8_t v;

		while ((v = target[WRITE_LEN - 1]) != marker(i)) {
			/* Not over WRITE i's marker, if it came meanwhile. */
			if (i && v == marker(i - 1) &&
			    __atomic_compare_exchange_n(&target[WRITE_LEN - 1], &v, 0,
							0, __ATOMIC_SEQ_CST,
							__ATOMIC_SEQ_CST))
				undone++;
		}
		target[WRITE_LEN - 1] = 0;
		atomic_store(&seen, i);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	uint8_t src[WRITE_LEN];
	struct ibv_sge sge = { .addr = (uintptr_t)src, .length = WRITE_LEN };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_WRITE,
				  .send_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED },
			   *bad;
	pthread_t poller;
	struct ibv_wc wc;

	CHECK(argc == 4, "usage: last_byte DEV IPV4 ITERS");
	ctx = test_open_device(argv[1]);
	gid_index = test_find_ipv4_gid(ctx, argv[2]);
	iters = atol(argv[3]);
	pair_init(&p, ALL_ACCESS, 7);
	target = (volatile uint8_t *)(((uintptr_t)p.b.buf + 4095) & ~4095UL);
	wr.wr.rdma.remote_addr = (uintptr_t)target;
	wr.wr.rdma.rkey = p.b.mr->rkey;

	CHECK_EQ(pthread_create(&poller, NULL, poll_last_byte, NULL), 0);
	for (long i = 0; i < iters; i++) {
		memset(src, 0x5a, sizeof(src));
		src[WRITE_LEN - 1] = marker(i);
		CHECK_EQ(ibv_post_send(p.a.qp, &wr, &bad), 0);
		wc = test_poll_one(p.a.cq, 30);
		CHECK(wc.status == IBV_WC_SUCCESS, "WRITE %ld: %s", i,
		      ibv_wc_status_str(wc.status));
		while (atomic_load(&seen) != i)
			;
	}
	CHECK_EQ(pthread_join(poller, NULL), 0);
	undone += target[WRITE_LEN - 1] != 0;
	printf("# %ld WRITEs of %d bytes: the last byte stored again after the program overwrote it %ld times\n",
	       iters, WRITE_LEN, undone);
	pair_fini(&p);
	return undone ? KSFT_FAIL : KSFT_PASS;
}
