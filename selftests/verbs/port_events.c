// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Print the port events of a device, one name a line, until COUNT arrived
 * or nothing came for TIMEOUT_MS.
 *
 * usage: port_events DEV COUNT TIMEOUT_MS   (prints "ready" first)
 */
#include <poll.h>

#include "test.h"

int main(int argc, char **argv)
{
	struct ibv_async_event event;
	struct ibv_context *ctx;
	struct pollfd pfd;
	int count;

	CHECK(argc == 4, "usage: port_events DEV COUNT TIMEOUT_MS");
	ctx = test_open_device(argv[1]);
	count = atoi(argv[2]);
	pfd.fd = ctx->async_fd;
	pfd.events = POLLIN;
	printf("ready\n");
	fflush(stdout);

	while (count > 0 && poll(&pfd, 1, atoi(argv[3])) == 1) {
		CHECK_EQ(ibv_get_async_event(ctx, &event), 0);
		printf("%s port %d\n", ibv_event_type_str(event.event_type),
		       event.element.port_num);
		fflush(stdout);
		ibv_ack_async_event(&event);
		count--;
	}
	CHECK_EQ(ibv_close_device(ctx), 0);
	return count ? KSFT_FAIL : KSFT_PASS;
}
