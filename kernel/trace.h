/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * softrma's tracepoints (events/softrma/ in tracefs): QP state changes,
 * memory registration, NAKs sent and received, retransmission, and every
 * drop that a port counter counts, with the counter as its reason.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM softrma

#if !defined(SOFTRMA_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define SOFTRMA_TRACE_H

#include <linux/tracepoint.h>

#include "verbs.h"

TRACE_DEFINE_ENUM(IB_QPS_RESET);
TRACE_DEFINE_ENUM(IB_QPS_INIT);
TRACE_DEFINE_ENUM(IB_QPS_RTR);
TRACE_DEFINE_ENUM(IB_QPS_RTS);
TRACE_DEFINE_ENUM(IB_QPS_SQD);
TRACE_DEFINE_ENUM(IB_QPS_SQE);
TRACE_DEFINE_ENUM(IB_QPS_ERR);

#define softrma_show_qp_state(s) __print_symbolic(s,			\
	{ IB_QPS_RESET, "RESET" }, { IB_QPS_INIT, "INIT" },		\
	{ IB_QPS_RTR, "RTR" }, { IB_QPS_RTS, "RTS" },			\
	{ IB_QPS_SQD, "SQD" }, { IB_QPS_SQE, "SQE" },			\
	{ IB_QPS_ERR, "ERR" })

TRACE_DEFINE_ENUM(SOFTRMA_CNT_SEND_ERR);
TRACE_DEFINE_ENUM(SOFTRMA_CNT_RCVD_ICRC_ERR);
TRACE_DEFINE_ENUM(SOFTRMA_CNT_RCVD_MALFORMED);
TRACE_DEFINE_ENUM(SOFTRMA_CNT_RCVD_NO_QP);
TRACE_DEFINE_ENUM(SOFTRMA_CNT_RCVD_DROPPED);
TRACE_DEFINE_ENUM(SOFTRMA_CNT_DUP_REQ);
TRACE_DEFINE_ENUM(SOFTRMA_CNT_OUT_OF_SEQ);

/* The drop reasons are the names of the port counters that count them. */
#define softrma_show_drop(c) __print_symbolic(c,			\
	{ SOFTRMA_CNT_SEND_ERR, "send_err" },				\
	{ SOFTRMA_CNT_RCVD_ICRC_ERR, "rcvd_icrc_err" },			\
	{ SOFTRMA_CNT_RCVD_MALFORMED, "rcvd_malformed" },		\
	{ SOFTRMA_CNT_RCVD_NO_QP, "rcvd_no_qp" },			\
	{ SOFTRMA_CNT_RCVD_DROPPED, "rcvd_dropped" },			\
	{ SOFTRMA_CNT_DUP_REQ, "duplicate_request" },			\
	{ SOFTRMA_CNT_OUT_OF_SEQ, "out_of_seq_request" })

TRACE_EVENT(softrma_qp_state,
	TP_PROTO(const struct softrma_qp *qp, enum ib_qp_state from,
		 enum ib_qp_state to),
	TP_ARGS(qp, from, to),
	TP_STRUCT__entry(
		__array(char, dev, IB_DEVICE_NAME_MAX)
		__field(u32, qpn)
		__field(int, from)
		__field(int, to)
	),
	TP_fast_assign(
		strscpy(__entry->dev, dev_name(&qp->ibqp.device->dev),
			IB_DEVICE_NAME_MAX);
		__entry->qpn = qp->ibqp.qp_num;
		__entry->from = from;
		__entry->to = to;
	),
	TP_printk("dev=%s qpn=0x%06x %s -> %s", __entry->dev, __entry->qpn,
		  softrma_show_qp_state(__entry->from),
		  softrma_show_qp_state(__entry->to))
);

/* The core sets ibmr.device only once registration returned. */
TRACE_EVENT(softrma_mr_reg,
	TP_PROTO(const struct softrma_dev *sdev, const struct softrma_mr *mr),
	TP_ARGS(sdev, mr),
	TP_STRUCT__entry(
		__array(char, dev, IB_DEVICE_NAME_MAX)
		__field(u32, key)
		__field(u64, iova)
		__field(u64, length)
		__field(int, access)
	),
	TP_fast_assign(
		strscpy(__entry->dev, dev_name(&sdev->ib_dev.dev),
			IB_DEVICE_NAME_MAX);
		__entry->key = mr->ibmr.lkey;
		__entry->iova = mr->iova;
		__entry->length = mr->length;
		__entry->access = mr->access;
	),
	TP_printk("dev=%s key=0x%08x iova=0x%llx length=%llu access=0x%x",
		  __entry->dev, __entry->key, __entry->iova, __entry->length,
		  __entry->access)
);

TRACE_EVENT(softrma_mr_dereg,
	TP_PROTO(const struct softrma_dev *sdev, const struct softrma_mr *mr),
	TP_ARGS(sdev, mr),
	TP_STRUCT__entry(
		__array(char, dev, IB_DEVICE_NAME_MAX)
		__field(u32, key)
	),
	TP_fast_assign(
		strscpy(__entry->dev, dev_name(&sdev->ib_dev.dev),
			IB_DEVICE_NAME_MAX);
		__entry->key = mr->ibmr.lkey;
	),
	TP_printk("dev=%s key=0x%08x", __entry->dev, __entry->key)
);

TRACE_DEFINE_ENUM(SOFTRMA_SYNC_TO_DEVICE);
TRACE_DEFINE_ENUM(SOFTRMA_SYNC_TO_CPU);

/*
 * A checking device's report (view.c): bytes [offset, offset + length) of
 * the MR of @key that a non-coherent device would have got wrong for want
 * of a sync towards the device or towards the CPU.
 */
TRACE_EVENT(softrma_missing_sync,
	TP_PROTO(const struct softrma_dev *sdev, u32 key, u64 offset,
		 u64 length, enum softrma_sync_dir missing),
	TP_ARGS(sdev, key, offset, length, missing),
	TP_STRUCT__entry(
		__array(char, dev, IB_DEVICE_NAME_MAX)
		__field(u32, key)
		__field(u64, offset)
		__field(u64, length)
		__field(int, missing)
	),
	TP_fast_assign(
		strscpy(__entry->dev, dev_name(&sdev->ib_dev.dev),
			IB_DEVICE_NAME_MAX);
		__entry->key = key;
		__entry->offset = offset;
		__entry->length = length;
		__entry->missing = missing;
	),
	TP_printk("dev=%s key=0x%08x offset=%llu length=%llu missing=%s",
		  __entry->dev, __entry->key, __entry->offset, __entry->length,
		  __print_symbolic(__entry->missing,
				   { SOFTRMA_SYNC_TO_DEVICE, "sync_to_device" },
				   { SOFTRMA_SYNC_TO_CPU, "sync_to_cpu" }))
);

/* A range of an MR over persistent memory that a power failure put back. */
TRACE_EVENT(softrma_lost_write,
	TP_PROTO(const struct softrma_dev *sdev, u32 key, u64 offset,
		 u64 length),
	TP_ARGS(sdev, key, offset, length),
	TP_STRUCT__entry(
		__array(char, dev, IB_DEVICE_NAME_MAX)
		__field(u32, key)
		__field(u64, offset)
		__field(u64, length)
	),
	TP_fast_assign(
		strscpy(__entry->dev, dev_name(&sdev->ib_dev.dev),
			IB_DEVICE_NAME_MAX);
		__entry->key = key;
		__entry->offset = offset;
		__entry->length = length;
	),
	TP_printk("dev=%s key=0x%08x offset=%llu length=%llu", __entry->dev,
		  __entry->key, __entry->offset, __entry->length)
);

/* An RNR NAK, a sequence NAK or a fatal NAK of @qp's connection. */
TRACE_EVENT(softrma_nak,
	TP_PROTO(const struct softrma_qp *qp, u32 psn, u8 syndrome, bool sent),
	TP_ARGS(qp, psn, syndrome, sent),
	TP_STRUCT__entry(
		__array(char, dev, IB_DEVICE_NAME_MAX)
		__field(u32, qpn)
		__field(u32, psn)
		__field(u8, syndrome)
		__field(bool, sent)
	),
	TP_fast_assign(
		strscpy(__entry->dev, dev_name(&qp->ibqp.device->dev),
			IB_DEVICE_NAME_MAX);
		__entry->qpn = qp->ibqp.qp_num;
		__entry->psn = psn;
		__entry->syndrome = syndrome;
		__entry->sent = sent;
	),
	TP_printk("dev=%s qpn=0x%06x %s psn=%u syndrome=0x%02x", __entry->dev,
		  __entry->qpn, __entry->sent ? "sent" : "received",
		  __entry->psn, __entry->syndrome)
);

/* Retransmission of @qp's requests from @psn, the oldest unacknowledged. */
DECLARE_EVENT_CLASS(softrma_retrans,
	TP_PROTO(const struct softrma_qp *qp, u32 psn, u32 value),
	TP_ARGS(qp, psn, value),
	TP_STRUCT__entry(
		__array(char, dev, IB_DEVICE_NAME_MAX)
		__field(u32, qpn)
		__field(u32, psn)
		__field(u32, value)
	),
	TP_fast_assign(
		strscpy(__entry->dev, dev_name(&qp->ibqp.device->dev),
			IB_DEVICE_NAME_MAX);
		__entry->qpn = qp->ibqp.qp_num;
		__entry->psn = psn;
		__entry->value = value;
	),
	TP_printk("dev=%s qpn=0x%06x psn=%u window=%u", __entry->dev,
		  __entry->qpn, __entry->psn, __entry->value)
);

/* The requester goes back, its window now @value packets. */
DEFINE_EVENT(softrma_retrans, softrma_rewind,
	TP_PROTO(const struct softrma_qp *qp, u32 psn, u32 value),
	TP_ARGS(qp, psn, value)
);

/* The retransmission timer ran out with @value retries left. */
DEFINE_EVENT_PRINT(softrma_retrans, softrma_ack_timeout,
	TP_PROTO(const struct softrma_qp *qp, u32 psn, u32 value),
	TP_ARGS(qp, psn, value),
	TP_printk("dev=%s qpn=0x%06x psn=%u retries_left=%u", __entry->dev,
		  __entry->qpn, __entry->psn, __entry->value)
);

TRACE_EVENT(softrma_drop,
	TP_PROTO(const struct softrma_dev *sdev, enum softrma_counter reason),
	TP_ARGS(sdev, reason),
	TP_STRUCT__entry(
		__array(char, dev, IB_DEVICE_NAME_MAX)
		__field(int, reason)
	),
	TP_fast_assign(
		strscpy(__entry->dev, dev_name(&sdev->ib_dev.dev),
			IB_DEVICE_NAME_MAX);
		__entry->reason = reason;
	),
	TP_printk("dev=%s reason=%s", __entry->dev,
		  softrma_show_drop(__entry->reason))
);

#endif /* SOFTRMA_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
