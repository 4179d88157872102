// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The port's hardware counters: "rdma statistic show link DEV/1". */

#include "net.h"
#include "trace.h"

static const struct rdma_stat_desc softrma_counter_descs[] = {
	[SOFTRMA_CNT_SENT_PKTS].name = "sent_pkts",
	[SOFTRMA_CNT_RCVD_PKTS].name = "rcvd_pkts",
	[SOFTRMA_CNT_SENT_BYTES].name = "sent_bytes",
	[SOFTRMA_CNT_RCVD_BYTES].name = "rcvd_bytes",
	[SOFTRMA_CNT_SEND_ERR].name = "send_err",
	[SOFTRMA_CNT_RCVD_ICRC_ERR].name = "rcvd_icrc_err",
	[SOFTRMA_CNT_RCVD_MALFORMED].name = "rcvd_malformed",
	[SOFTRMA_CNT_RCVD_NO_QP].name = "rcvd_no_qp",
	[SOFTRMA_CNT_RCVD_DROPPED].name = "rcvd_dropped",
	[SOFTRMA_CNT_DUP_REQ].name = "duplicate_request",
	[SOFTRMA_CNT_OUT_OF_SEQ].name = "out_of_seq_request",
	[SOFTRMA_CNT_SENT_RNR_NAK].name = "sent_rnr_nak",
	[SOFTRMA_CNT_COALESCED_ACKS].name = "coalesced_acks",
	[SOFTRMA_CNT_RCVD_SEQ_NAK].name = "rcvd_seq_err",
	[SOFTRMA_CNT_RCVD_RNR_NAK].name = "rcvd_rnr_err",
	[SOFTRMA_CNT_ACK_TIMEOUT].name = "local_ack_timeout_err",
	[SOFTRMA_CNT_RETRANS_PKTS].name = "retrans_pkts",
	[SOFTRMA_CNT_LOCAL_SENT_MSGS].name = "local_sent_msgs",
	[SOFTRMA_CNT_LOCAL_RCVD_MSGS].name = "local_rcvd_msgs",
	[SOFTRMA_CNT_LOCAL_SENT_BYTES].name = "local_sent_bytes",
	[SOFTRMA_CNT_LOCAL_RCVD_BYTES].name = "local_rcvd_bytes",
	[SOFTRMA_CNT_FLUSH_PERSISTENT].name = "flush_persistent",
	[SOFTRMA_CNT_WRITTEN_BACK_BYTES].name = "written_back_bytes",
	[SOFTRMA_CNT_POWER_FAIL_LOST_BYTES].name = "power_fail_lost_bytes",
	[SOFTRMA_CNT_UNDO_LOG_OVERFLOWS].name = "undo_log_overflows",
	[SOFTRMA_CNT_MISSING_SYNC_TO_DEVICE].name = "missing_sync_to_device",
	[SOFTRMA_CNT_MISSING_SYNC_TO_CPU].name = "missing_sync_to_cpu",
	[SOFTRMA_CNT_DOORBELLS].name = "doorbells",
	[SOFTRMA_CNT_DOORBELL_HANDOVERS].name = "doorbell_handovers",
	[SOFTRMA_CNT_INJECTED_FAULTS].name = "injected_faults",
	[SOFTRMA_CNT_ODP_FAULTS].name = "odp_faults",
	[SOFTRMA_CNT_ODP_INVALIDATIONS].name = "odp_invalidations",
	[SOFTRMA_CNT_RCVD_SOFTIRQ].name = "rcvd_in_softirq",
	[SOFTRMA_STAT_NS_BACKLOG_DROPPED].name = "ns_backlog_dropped",
};

static_assert(ARRAY_SIZE(softrma_counter_descs) == SOFTRMA_STAT_NUM);

struct rdma_hw_stats *softrma_alloc_hw_port_stats(struct ib_device *ibdev,
						  u32 port)
{
	return rdma_alloc_hw_stats_struct(softrma_counter_descs,
					  SOFTRMA_STAT_NUM,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

int softrma_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
			 u32 port, int index)
{
	struct softrma_dev *sdev = to_sdev(ibdev);

	for (int i = 0; i < SOFTRMA_CNT_NUM; i++)
		stats->value[i] = atomic64_read(&sdev->counters[i]);
	stats->value[SOFTRMA_STAT_NS_BACKLOG_DROPPED] =
		softrma_net_backlog_dropped(sdev->netsock);
	return SOFTRMA_STAT_NUM;
}

/* A packet or request dropped: counted, and traced with its counter. */
void softrma_drop(struct softrma_dev *sdev, enum softrma_counter reason)
{
	softrma_count(sdev, reason);
	trace_softrma_drop(sdev, reason);
}
