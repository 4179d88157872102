// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Print the file name of the provider library that libibverbs chose for a
 * device: the library that holds the device's verbs_device_ops.
 *
 * usage: which_provider DEV
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <libgen.h>

#include "test.h"
#include "provider-abi.h"

int main(int argc, char **argv)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	Dl_info info;

	CHECK(argc == 2, "usage: which_provider DEV");
	CHECK(list, "ibv_get_device_list: %s", strerror(errno));
	for (int i = 0; list[i]; i++) {
		struct verbs_device *vdev = (struct verbs_device *)list[i];

		if (strcmp(ibv_get_device_name(list[i]), argv[1]))
			continue;
		CHECK(dladdr(vdev->ops, &info) && info.dli_fname,
		      "no library holds the ops of %s", argv[1]);
		printf("%s\n", basename((char *)info.dli_fname));
		ibv_free_device_list(list);
		return KSFT_PASS;
	}
	FAIL("no device %s", argv[1]);
}
