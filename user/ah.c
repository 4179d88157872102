// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Address handles: the kernel resolves them and names each by a number. */
#include <errno.h>
#include <stdlib.h>

#include "softrma.h"

struct ibv_ah *softrma_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	struct {
		struct ib_uverbs_create_ah_resp ibv;
		struct softrma_create_ah_resp drv;
	} resp = {};
	struct softrma_ah *ah;
	int ret;

	ah = calloc(1, sizeof(*ah));
	if (!ah)
		return NULL;
	ret = ibv_cmd_create_ah(pd, &ah->ibah, attr, &resp.ibv, sizeof(resp));
	if (ret) {
		free(ah);
		errno = ret;
		return NULL;
	}
	ah->num = resp.drv.ah_num;
	return &ah->ibah;
}

int softrma_destroy_ah(struct ibv_ah *ibah)
{
	int ret = ibv_cmd_destroy_ah(ibah);

	if (ret)
		return ret;
	free(to_sah(ibah));
	return 0;
}
