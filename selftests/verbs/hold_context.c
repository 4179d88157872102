// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Hold a context and a PD open while the device goes away underneath
 * (rmmod, "rdma link delete" or the netdev's removal).  The application must
 * see IBV_EVENT_DEVICE_FATAL, further verbs must fail, and closing must work.
 *
 * usage: hold_context DEV   (prints "ready" once the PD exists)
 */
#include "test.h"

int main(int argc, char **argv)
{
	struct ibv_async_event event;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	int ret;

	CHECK(argc == 2, "usage: hold_context DEV");
	ctx = test_open_device(argv[1]);
	pd = ibv_alloc_pd(ctx);
	CHECK(pd, "ibv_alloc_pd: %s", strerror(errno));
	printf("ready\n");
	fflush(stdout);

	/* Port and GID events may come first when the netdev goes. */
	do {
		CHECK_EQ(ibv_get_async_event(ctx, &event), 0);
		printf("# async event: %s\n", ibv_event_type_str(event.event_type));
		ibv_ack_async_event(&event);
		CHECK(event.event_type == IBV_EVENT_DEVICE_FATAL ||
		      event.event_type == IBV_EVENT_GID_CHANGE ||
		      event.event_type == IBV_EVENT_PORT_ERR,
		      "unexpected event");
	} while (event.event_type != IBV_EVENT_DEVICE_FATAL);

	errno = 0;
	CHECK(!ibv_alloc_pd(ctx), "alloc_pd on a removed device succeeded");
	printf("# alloc_pd after removal: %s\n", strerror(errno));
	/* The PD died with the device: EIO is as good an answer as 0. */
	ret = ibv_dealloc_pd(pd);
	CHECK(ret == 0 || ret == EIO, "dealloc_pd: %s", strerror(ret));
	CHECK_EQ(ibv_close_device(ctx), 0);
	return KSFT_PASS;
}
