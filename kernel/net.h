/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* RoCEv2 packets: the UDP socket of a namespace, and datagrams (net.c). */
#ifndef SOFTRMA_NET_H
#define SOFTRMA_NET_H

#include "msg.h"

struct net;
struct softrma_netsock;

/* net.c: RoCEv2 packets */
int softrma_net_init(void);
void softrma_net_cleanup(void);
struct softrma_netsock *softrma_net_get(struct net *net);
void softrma_net_put(struct softrma_netsock *ns);
bool softrma_net_forced(void);
void softrma_net_doorbell(struct softrma_qp *qp);
bool softrma_net_in_rx(const struct softrma_dev *sdev);
u64 softrma_net_backlog_dropped(const struct softrma_netsock *ns);
bool softrma_net_xmit_datagram(struct softrma_qp *qp, struct softrma_msg *msg);
void softrma_net_send_held(struct softrma_dev *sdev, struct sk_buff *skb);

#endif /* SOFTRMA_NET_H */
