// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What a responder's result becomes: the AETH syndrome that answers it on
 * the wire, the status the requester completes with (on this host directly,
 * elsewhere from the syndrome), and whether the responder's QP goes to
 * error as well; and that the numbers of proto/wr.h are the kernel's.
 */

#include "proto/roce.h"
#include "msg.h"

/* proto/wr.h's numbers are the kernel's. */
#define SOFTRMA_SAME(a, b) static_assert((int)(a) == (int)(b))
SOFTRMA_SAME(IB_WR_RDMA_WRITE, ROCE_WR_RDMA_WRITE);
SOFTRMA_SAME(IB_WR_RDMA_WRITE_WITH_IMM, ROCE_WR_RDMA_WRITE_WITH_IMM);
SOFTRMA_SAME(IB_WR_SEND, ROCE_WR_SEND);
SOFTRMA_SAME(IB_WR_SEND_WITH_IMM, ROCE_WR_SEND_WITH_IMM);
SOFTRMA_SAME(IB_WR_RDMA_READ, ROCE_WR_RDMA_READ);
SOFTRMA_SAME(IB_WR_ATOMIC_CMP_AND_SWP, ROCE_WR_ATOMIC_CMP_AND_SWP);
SOFTRMA_SAME(IB_WR_ATOMIC_FETCH_AND_ADD, ROCE_WR_ATOMIC_FETCH_AND_ADD);
SOFTRMA_SAME(IB_WR_LOCAL_INV, ROCE_WR_LOCAL_INV);
SOFTRMA_SAME(IB_WR_BIND_MW, ROCE_WR_BIND_MW);
SOFTRMA_SAME(IB_WR_SEND_WITH_INV, ROCE_WR_SEND_WITH_INV);
SOFTRMA_SAME(IB_WR_REG_MR, ROCE_WR_REG_MR);
SOFTRMA_SAME(SOFTRMA_WR_FLUSH, ROCE_WR_FLUSH);
SOFTRMA_SAME(SOFTRMA_WR_ATOMIC_WRITE, ROCE_WR_ATOMIC_WRITE);
SOFTRMA_SAME(IB_QPT_RC, ROCE_QPT_RC);
SOFTRMA_SAME(IB_QPT_UC, ROCE_QPT_UC);
SOFTRMA_SAME(IB_QPT_UD, ROCE_QPT_UD);
SOFTRMA_SAME(IB_ACCESS_LOCAL_WRITE, ROCE_ACCESS_LOCAL_WRITE);
SOFTRMA_SAME(IB_ACCESS_REMOTE_WRITE, ROCE_ACCESS_REMOTE_WRITE);
SOFTRMA_SAME(IB_ACCESS_REMOTE_READ, ROCE_ACCESS_REMOTE_READ);
SOFTRMA_SAME(IB_ACCESS_REMOTE_ATOMIC, ROCE_ACCESS_REMOTE_ATOMIC);
SOFTRMA_SAME(IB_ACCESS_MW_BIND, ROCE_ACCESS_MW_BIND);
SOFTRMA_SAME(IB_ZERO_BASED, ROCE_ACCESS_ZERO_BASED);
SOFTRMA_SAME(IB_WC_SEND, ROCE_WC_SEND);
SOFTRMA_SAME(IB_WC_RDMA_WRITE, ROCE_WC_RDMA_WRITE);
SOFTRMA_SAME(IB_WC_RDMA_READ, ROCE_WC_RDMA_READ);
SOFTRMA_SAME(IB_WC_COMP_SWAP, ROCE_WC_COMP_SWAP);
SOFTRMA_SAME(IB_WC_FETCH_ADD, ROCE_WC_FETCH_ADD);
SOFTRMA_SAME(IB_WC_BIND_MW, ROCE_WC_BIND_MW);
SOFTRMA_SAME(IB_WC_LOCAL_INV, ROCE_WC_LOCAL_INV);
SOFTRMA_SAME(SOFTRMA_WC_FLUSH, ROCE_WC_FLUSH);
SOFTRMA_SAME(SOFTRMA_WC_ATOMIC_WRITE, ROCE_WC_ATOMIC_WRITE);
SOFTRMA_SAME(IB_WC_RECV, ROCE_WC_RECV);
SOFTRMA_SAME(IB_WC_RECV_RDMA_WITH_IMM, ROCE_WC_RECV_RDMA_WITH_IMM);

/* A request's outcome: the answer on the wire and the requester's status. */
static const struct {
	u8 syndrome;
	enum ib_wc_status status;
	bool fatal;		/* the responder's QP goes to error */
} softrma_resp_results[] = {
	[SOFTRMA_RESP_ACK] = { ROCE_AETH_ACK, IB_WC_SUCCESS },
	[SOFTRMA_RESP_RNR_NAK] = { ROCE_AETH_RNR_NAK, IB_WC_RNR_RETRY_EXC_ERR },
	[SOFTRMA_RESP_NAK_INV_REQ] = {
		ROCE_AETH_NAK_INV_REQ, IB_WC_REM_INV_REQ_ERR, true,
	},
	[SOFTRMA_RESP_NAK_ACCESS] = {
		ROCE_AETH_NAK_REM_ACCESS, IB_WC_REM_ACCESS_ERR, true,
	},
	[SOFTRMA_RESP_NAK_OP] = {
		ROCE_AETH_NAK_REM_OP, IB_WC_REM_OP_ERR, true,
	},
	/* Nobody answers: the requester's retries run out. */
	[SOFTRMA_RESP_DROPPED] = { 0, IB_WC_RETRY_EXC_ERR },
};

/* The status a requester completes with when its request met @res. */
enum ib_wc_status softrma_resp_status(enum softrma_resp_result res)
{
	return softrma_resp_results[res].status;
}

/* The AETH syndrome (before any RNR timer) that answers @res. */
u8 softrma_resp_syndrome(enum softrma_resp_result res)
{
	return softrma_resp_results[res].syndrome;
}

/* Whether @res is a NAK that puts the responder's QP in error as well. */
bool softrma_resp_fatal(enum softrma_resp_result res)
{
	return softrma_resp_results[res].fatal;
}

/*
 * The status for a fatal NAK received with @syndrome; a code this side
 * does not send (invalid RD request, reserved) is an invalid request.
 */
enum ib_wc_status softrma_nak_status(u8 syndrome)
{
	for (int i = 0; i < ARRAY_SIZE(softrma_resp_results); i++)
		if (softrma_resp_results[i].fatal &&
		    softrma_resp_results[i].syndrome == syndrome)
			return softrma_resp_results[i].status;
	return IB_WC_REM_INV_REQ_ERR;
}
