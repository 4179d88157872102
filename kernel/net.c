// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * RoCEv2 on the wire: the UDP socket on port 4791, transmit and receive.
 *
 * Each network namespace with softrma devices gets one socket, opened with
 * its first device and closed with its last (or when the namespace goes).
 * Only receiving needs it; when the port is taken (rdma_rxe binds it in
 * init_net) the devices still work, locally and for sending.
 *
 * Transmit builds the IP and UDP headers here, so that the ICRC covers the
 * headers as they go out, and hands the packet to ip_local_out().  Receive
 * processes the common packet in the softirq of its arrival: an in-order
 * request of an RC QP, or a response, when no process holds the half of
 * the QP it needs (softrma_qp_enter()) and the packet needs nothing that
 * sleeps.  Any other packet, and every packet behind one, waits for
 * process context: a work item, or, as NAPI's busy polling does, the
 * doorbell of a QP on the wire, whose application waits for these packets
 * anyway and would otherwise wait for the work to be scheduled too.  One
 * context at a time processes a namespace's packets, so that each QP's
 * stay in order.  Responses (acknowledgements, READ responses) wait in a
 * queue of their own that goes first: an ACK queued behind the window of
 * requests it answers would hold the requester back until they are all
 * placed.
 *
 * Datagrams (UD, GSI) are sent and delivered here; packets of connected
 * QPs go to the wire transport (wire.c), over IPv4 and IPv6 alike.
 */

#include <linux/hash.h>
#include <linux/ip.h>
#include <linux/module.h>
#include <linux/random.h>
#include <linux/udp.h>
#include <net/ip.h>
#include <net/ip6_route.h>
#include <net/ipv6.h>
#include <net/route.h>
#include <net/udp_tunnel.h>
#include <rdma/ib_addr.h>

#include "compat.h"
#include "wire.h"

struct softrma_netsock {
	struct list_head list;		/* on softrma_netsocks */
	refcount_t ref;			/* one per device */
	struct net *net;		/* not held: the socket goes with it */
	struct socket *sock4;		/* NULL: port taken, or the net is gone */
	struct socket *sock6;
	spinlock_t rx_lock;		/* of both queues */
	struct sk_buff_head rxq;	/* requests, datagrams */
	struct sk_buff_head rxq_resp;	/* responses: these go first */
	atomic_t rx_bytes;		/* truesize of the two queues */
	atomic64_t rx_backlog_dropped;	/* for want of room in them */
	unsigned long rx_flags;		/* SOFTRMA_NET_RX_BUSY */
	struct task_struct *rx_owner;	/* the context that holds it */
	atomic_t rx_doorbells;		/* that claim it after they send */
	atomic_t rx_waiters;		/* of those, spinning for it */
	bool rx_yields;			/* its holder leaves requests to them */
	struct list_head rx_acks;	/* the claim's: QPs' deferred ACKs */
	struct softrma_bh rx_ack_bh;	/* sends those the softirq deferred */
	struct work_struct rx_work;
};

/* A context processes the namespace's received packets. */
#define SOFTRMA_NET_RX_BUSY	0

static bool force_wire;
module_param(force_wire, bool, 0644);
MODULE_PARM_DESC(force_wire,
		 "send on the wire even to destinations on this host (testing)");

static bool rx_softirq = true;
module_param(rx_softirq, bool, 0644);
MODULE_PARM_DESC(rx_softirq,
		 "process the common received packet in the softirq of its arrival (0: every packet in process context)");

static bool rxe_flush_icrc;
module_param(rxe_flush_icrc, bool, 0644);
MODULE_PARM_DESC(rxe_flush_icrc,
		 "give FLUSH packets the ICRC rdma_rxe (6.2 to at least 6.12) expects, not the IBA's");

static LIST_HEAD(softrma_netsocks);
static DEFINE_MUTEX(softrma_netsocks_lock);

/*
 * Received packets waiting for the work item, at most, by their truesize:
 * room for the windows of many QPs, and a bound on what a flood parks.
 */
#define SOFTRMA_NET_RX_BYTES	(32 << 20)

/* Received packets a doorbell processes at most, and a batch's. */
#define SOFTRMA_NET_POLL_PKTS	64U

/* Bytes in front of the RoCE headers of a packet we build. */
#define SOFTRMA_NET_HEADROOM	(sizeof(struct ipv6hdr) + sizeof(struct udphdr))

static bool softrma_net_rx_one(struct softrma_netsock *ns, struct sk_buff *skb,
			      bool now);

/*
 * The next packet for the claim's holder.  With @owed, the holder yields:
 * once it has taken the *@owed requests it found, it takes only responses
 * while a doorbell spins for the claim (softrma_net_rx_drain()).
 */
static struct sk_buff *softrma_net_rx_next(struct softrma_netsock *ns,
					   u32 *owed)
{
	struct sk_buff *skb;

	/*
	 * Under one lock: a request must not go before a response that came
	 * before it, and both could come between two dequeues.
	 */
	spin_lock_bh(&ns->rx_lock);
	skb = __skb_dequeue(&ns->rxq_resp);
	if (!skb && (!owed || *owed || !atomic_read(&ns->rx_waiters))) {
		skb = __skb_dequeue(&ns->rxq);
		if (skb && owed && *owed)
			(*owed)--;
	}
	spin_unlock_bh(&ns->rx_lock);
	if (skb)
		atomic_sub(skb->truesize, &ns->rx_bytes);
	return skb;
}

static bool softrma_net_rx_pending(const struct softrma_netsock *ns)
{
	return !skb_queue_empty_lockless(&ns->rxq_resp) ||
	       !skb_queue_empty_lockless(&ns->rxq);
}

/*
 * Queued packets are taken by the context that holds the claim, or by a
 * doorbell that claims once it has sent (softrma_net_doorbell()), or else
 * by the work.  After a full barrier that follows their queueing.
 */
static void softrma_net_rx_wake(struct softrma_netsock *ns)
{
	if (!test_bit(SOFTRMA_NET_RX_BUSY, &ns->rx_flags) &&
	    !atomic_read(&ns->rx_doorbells))
		queue_work(softrma_wq, &ns->rx_work);
}

/* Makes the caller the context that processes received packets, if none is. */
static bool softrma_net_rx_claim(struct softrma_netsock *ns)
{
	if (test_and_set_bit_lock(SOFTRMA_NET_RX_BUSY, &ns->rx_flags))
		return false;
	WRITE_ONCE(ns->rx_owner, current);
	return true;
}

/**
 * softrma_net_rx_defer_ack() - Has the responder's ACK sent with the batch's.
 * @qp: a QP on the wire whose responder defers an ACK
 *
 * The process context that processes received packets sends the deferred
 * ACKs once it has processed SOFTRMA_NET_POLL_PKTS of them, or all there
 * were; the softirq, once the round of softirqs that delivered the packets
 * is over (softrma_net_rx_ack_bh()).
 *
 * Context: Under @qp's rq_lock, or its gate.
 * Return: false when this is not that context: the ACK goes now.
 */
bool softrma_net_rx_defer_ack(struct softrma_qp *qp)
{
	struct softrma_dev *sdev = to_sdev(qp->ibqp.device);
	struct softrma_wire *w = qp->wire;

	softrma_qp_assert_rq(qp);
	if (!softrma_net_in_rx(sdev))
		return false;
	if (list_empty(&w->ack_entry)) {
		if (!softrma_users_get(&qp->users))
			return false;
		list_add_tail(&w->ack_entry, &sdev->netsock->rx_acks);
	}
	return true;
}

static void softrma_net_rx_send_acks(struct softrma_netsock *ns)
{
	struct softrma_wire *w, *next;

	list_for_each_entry_safe(w, next, &ns->rx_acks, ack_entry) {
		list_del_init(&w->ack_entry);
		softrma_wire_answer_flush(w->qp, true);
		softrma_qp_put(w->qp);
	}
}

/*
 * Gives up the claim; what arrived while it kept the work from being
 * queued, or was left to a doorbell that then stopped waiting, is left to
 * the work, unless a doorbell is to claim next.
 */
static void softrma_net_rx_release(struct softrma_netsock *ns)
{
	WRITE_ONCE(ns->rx_yields, false);
	WRITE_ONCE(ns->rx_owner, NULL);
	clear_bit_unlock(SOFTRMA_NET_RX_BUSY, &ns->rx_flags);
	smp_mb__after_atomic();		/* the flag, then the queues */
	wake_up_bit(&ns->rx_flags, SOFTRMA_NET_RX_BUSY);
	if (softrma_net_rx_pending(ns))
		softrma_net_rx_wake(ns);
}

/*
 * Processes at most @budget received packets, in batches that end with
 * their deferred ACKs, and gives up the claim, leaving the rest to the
 * work.  A batch's ACKs may come back through lo: the next batch takes them.
 *
 * A doorbell's drain (@yields) takes the requests queued when it began,
 * its own among them, and then leaves the later ones to a doorbell that
 * spins for the claim (softrma_net_rx_await_claim()): so in a ping-pong
 * each side's request is processed in that side's system call, as rdma_rxe
 * processes it in the poster's context, and neither side returns to its
 * application only after the other's exchange too.
 */
static void softrma_net_rx_drain(struct softrma_netsock *ns, u32 budget,
				 bool yields)
{
	u32 owed = skb_queue_len_lockless(&ns->rxq);
	u32 *yield = yields ? &owed : NULL;
	struct sk_buff *skb;
	u32 batch;

	WRITE_ONCE(ns->rx_yields, yields);
	do {
		for (batch = 0; batch < min(budget, SOFTRMA_NET_POLL_PKTS) &&
				(skb = softrma_net_rx_next(ns, yield)); batch++) {
			softrma_net_rx_one(ns, skb, false);
			kfree_skb(skb);
			cond_resched();
		}
		softrma_net_rx_send_acks(ns);
		budget -= batch;
	} while (batch && budget);
	softrma_net_rx_release(ns);
}

/*
 * The ACKs that softirqs deferred: NAPI has delivered what the NIC had by
 * the time this runs, so one ACK answers all of a QP's.  A context that
 * holds the claim sends them itself.
 */
static void softrma_net_rx_ack_bh(struct softrma_bh *bh)
{
	struct softrma_netsock *ns = container_of(bh, struct softrma_netsock,
						  rx_ack_bh);

	if (!softrma_net_rx_claim(ns))
		return;
	softrma_net_rx_send_acks(ns);
	softrma_net_rx_release(ns);
}

/*
 * How long a doorbell that has sent spins at most for the claim held by a
 * doorbell's drain that leaves the requests to it: about the time that
 * drain takes for the requests it owes and the responses, a few packets.
 */
#define SOFTRMA_NET_AWAIT_CLAIM_NS	(50 * NSEC_PER_USEC)

/*
 * Spins as a mutex's waiter spins for its owner: while the holder runs on
 * a CPU (a task is freed after a grace period), and not past a resched.
 */
static bool softrma_net_rx_await_claim(struct softrma_netsock *ns)
{
	u64 until = ktime_get_ns() + SOFTRMA_NET_AWAIT_CLAIM_NS;
	struct task_struct *owner;
	bool claimed = false;

	rcu_read_lock();
	atomic_inc(&ns->rx_waiters);
	for (;;) {
		if (!test_bit(SOFTRMA_NET_RX_BUSY, &ns->rx_flags) &&
		    softrma_net_rx_claim(ns)) {
			claimed = true;
			break;
		}
		owner = READ_ONCE(ns->rx_owner);
		if (!READ_ONCE(ns->rx_yields) || !owner ||
		    !owner_on_cpu(owner) || need_resched() ||
		    ktime_get_ns() > until)
			break;
		cpu_relax();
	}
	atomic_dec(&ns->rx_waiters);
	rcu_read_unlock();
	return claimed;
}

static void softrma_net_rx_work(struct work_struct *work)
{
	struct softrma_netsock *ns = container_of(work, struct softrma_netsock,
						  rx_work);

	if (softrma_net_rx_claim(ns))
		softrma_net_rx_drain(ns, U32_MAX, false);
}

/**
 * softrma_net_doorbell() - Runs the send queue of a QP on the wire.
 * @qp: the QP whose application rang its doorbell
 *
 * Then processes what the namespace received meanwhile, the answers to what
 * was sent among it, unless another context is doing so: with the claim
 * taken first, the packets sent do not wake the work for their answers.
 * When another context holds it (the peer's doorbell, on another CPU,
 * finishing its own exchange), the doorbell counts itself in
 * ns->rx_doorbells while it sends, which keeps its packets from waking the
 * work, and claims once it has sent, spinning a while if the holder is a
 * doorbell's drain, which leaves it its requests (softrma_net_rx_drain()).
 * If another context still holds the claim then, that context finds the
 * packets when it gives the claim up.
 *
 * Context: Process context, no locks held.
 */
void softrma_net_doorbell(struct softrma_qp *qp)
{
	struct softrma_netsock *ns = to_sdev(qp->ibqp.device)->netsock;
	bool claimed = softrma_net_rx_claim(ns);

	if (claimed) {
		softrma_net_rx_send_acks(ns);	/* the softirqs' */
		softrma_sq_run(qp);
	} else {
		atomic_inc(&ns->rx_doorbells);
		softrma_sq_run(qp);
		claimed = softrma_net_rx_await_claim(ns);
		atomic_dec(&ns->rx_doorbells);
		smp_mb__after_atomic();	/* the count, then the flag */
		claimed = claimed || softrma_net_rx_claim(ns);
	}
	if (claimed)
		softrma_net_rx_drain(ns, SOFTRMA_NET_POLL_PKTS, true);
}

/*
 * Whether this is a context that processes @sdev's received packets, on
 * which every RoCE packet of its namespace waits: nothing in it may wait
 * for a user's accesses.  A softirq that holds the claim is its owner
 * (rather than the task it interrupted) till it gives the claim up.
 */
bool softrma_net_in_rx(const struct softrma_dev *sdev)
{
	return READ_ONCE(sdev->netsock->rx_owner) == current;
}

u64 softrma_net_backlog_dropped(const struct softrma_netsock *ns)
{
	return atomic64_read(&ns->rx_backlog_dropped);
}

/* Whether @skb, at its UDP header, carries an RC response opcode. */
static bool softrma_net_is_response(const struct sk_buff *skb)
{
	u8 buf;
	const u8 *op = skb_header_pointer(skb, skb_transport_offset(skb) +
					  sizeof(struct udphdr), 1, &buf);

	return op && roce_opcode_is_response(*op);
}

/*
 * Keeps a received packet for the context that processes them, unless that
 * is so far behind (a flood) that it must be dropped, as a full NIC ring
 * would drop it.
 */
static void softrma_net_rx_queue(struct softrma_netsock *ns, struct sk_buff *skb)
{
	lockdep_assert_in_softirq();
	if (atomic_add_return(skb->truesize, &ns->rx_bytes) > SOFTRMA_NET_RX_BYTES) {
		atomic_sub(skb->truesize, &ns->rx_bytes);
		atomic64_inc(&ns->rx_backlog_dropped);
		kfree_skb(skb);
		return;
	}
	spin_lock(&ns->rx_lock);
	__skb_queue_tail(softrma_net_is_response(skb) ? &ns->rxq_resp : &ns->rxq,
			 skb);
	spin_unlock(&ns->rx_lock);
	smp_mb();			/* the queue, then the flag and the count */
	softrma_net_rx_wake(ns);
}

/*
 * Processes @skb at once when no context processes the namespace's packets
 * and none is queued; else queues it, before a later packet can claim.
 */
static void softrma_net_rx_now(struct softrma_netsock *ns, struct sk_buff *skb)
{
	if (!READ_ONCE(rx_softirq) || !softrma_net_rx_claim(ns)) {
		softrma_net_rx_queue(ns, skb);
		return;
	}
	if (!softrma_net_rx_pending(ns) && softrma_net_rx_one(ns, skb, true))
		consume_skb(skb);
	else
		softrma_net_rx_queue(ns, skb);
	softrma_net_rx_release(ns);
	/*
	 * Only after the release: a BH that ran before it found the claim
	 * taken and left the list to this holder.  One that runs after finds
	 * the list or a newer holder, who flushes it or schedules a BH again.
	 */
	if (!list_empty(&ns->rx_acks))
		softrma_bh_schedule(&ns->rx_ack_bh);
}

static int softrma_net_encap_rcv(struct sock *sk, struct sk_buff *skb)
{
	struct softrma_netsock *ns = rcu_dereference_sk_user_data(sk);

	if (ns)
		softrma_net_rx_now(ns, skb);
	else
		kfree_skb(skb);
	return 0;
}

static struct socket *softrma_net_open(struct softrma_netsock *ns, int family)
{
	struct udp_port_cfg port = {
		.family = family,
		.local_ip6 = IN6ADDR_ANY_INIT,
		.ipv6_v6only = 1,
		.local_udp_port = htons(ROCE_UDP_PORT),
	};
	struct udp_tunnel_sock_cfg cfg = {
		.sk_user_data = ns,
		.encap_type = 1,
		.encap_rcv = softrma_net_encap_rcv,
	};
	struct socket *sock;
	int err;

	err = udp_sock_create(ns->net, &port, &sock);
	if (err) {
		pr_info("UDP port %u (IPv%d) is taken (rdma_rxe?): no RoCEv2 receive in this namespace\n",
			ROCE_UDP_PORT, family == AF_INET ? 4 : 6);
		return NULL;
	}
	setup_udp_tunnel_sock(ns->net, sock, &cfg);
	return sock;
}

/* Closes the socket, then lets no packet of it be processed any more. */
static void softrma_net_close(struct softrma_netsock *ns)
{
	struct socket *sock4 = ns->sock4, *sock6 = ns->sock6;
	struct sk_buff *skb;

	/* Looped-back packets see the sockets gone before they are. */
	WRITE_ONCE(ns->sock4, NULL);
	WRITE_ONCE(ns->sock6, NULL);
	if (sock4)
		udp_tunnel_sock_release(sock4);
	if (sock6)
		udp_tunnel_sock_release(sock6);
	synchronize_rcu();
	/* Nothing is queued any more: wait for the context processing it. */
	wait_on_bit_lock(&ns->rx_flags, SOFTRMA_NET_RX_BUSY,
			 TASK_UNINTERRUPTIBLE);
	while ((skb = softrma_net_rx_next(ns, NULL)))
		kfree_skb(skb);
	softrma_net_rx_send_acks(ns);
	clear_bit_unlock(SOFTRMA_NET_RX_BUSY, &ns->rx_flags);
	softrma_bh_kill(&ns->rx_ack_bh);
	cancel_work_sync(&ns->rx_work);
}

struct softrma_netsock *softrma_net_get(struct net *net)
{
	struct softrma_netsock *ns;

	mutex_lock(&softrma_netsocks_lock);
	list_for_each_entry(ns, &softrma_netsocks, list)
		if (ns->net == net) {
			refcount_inc(&ns->ref);
			goto out;
		}
	ns = kzalloc(sizeof(*ns), GFP_KERNEL);
	if (ns) {
		refcount_set(&ns->ref, 1);
		ns->net = net;
		spin_lock_init(&ns->rx_lock);
		__skb_queue_head_init(&ns->rxq);
		__skb_queue_head_init(&ns->rxq_resp);
		INIT_LIST_HEAD(&ns->rx_acks);
		softrma_bh_init(&ns->rx_ack_bh, softrma_net_rx_ack_bh);
		INIT_WORK(&ns->rx_work, softrma_net_rx_work);
		ns->sock4 = softrma_net_open(ns, AF_INET);
		ns->sock6 = softrma_net_open(ns, AF_INET6);
		list_add(&ns->list, &softrma_netsocks);
	}
out:
	mutex_unlock(&softrma_netsocks_lock);
	return ns;
}

void softrma_net_put(struct softrma_netsock *ns)
{
	mutex_lock(&softrma_netsocks_lock);
	if (refcount_dec_and_test(&ns->ref)) {
		list_del(&ns->list);
		softrma_net_close(ns);
		kfree(ns);
	}
	mutex_unlock(&softrma_netsocks_lock);
}

/* A namespace that goes takes its socket; devices still in it keep @ns. */
static void __net_exit softrma_net_exit(struct net *net)
{
	struct softrma_netsock *ns;

	mutex_lock(&softrma_netsocks_lock);
	list_for_each_entry(ns, &softrma_netsocks, list)
		if (ns->net == net) {
			softrma_net_close(ns);
			WRITE_ONCE(ns->net, NULL);
		}
	mutex_unlock(&softrma_netsocks_lock);
}

static struct pernet_operations softrma_net_ops = {
	.exit = softrma_net_exit,
};

int softrma_net_init(void)
{
	return register_pernet_subsys(&softrma_net_ops);
}

void softrma_net_cleanup(void)
{
	unregister_pernet_subsys(&softrma_net_ops);
}

/* UDP source port: entropy for ECMP from the QPN, as rxe does. */
static __be16 softrma_net_sport(u32 qpn)
{
	return htons(0xc000 | (hash_32(qpn, 14) & 0x3fff));
}

static void softrma_net_push_udp(struct sk_buff *skb, u32 src_qpn)
{
	struct udphdr *uh = skb_push(skb, sizeof(*uh));

	skb_reset_transport_header(skb);
	uh->source = softrma_net_sport(src_qpn);
	uh->dest = htons(ROCE_UDP_PORT);
	uh->len = htons(skb->len);
	uh->check = 0;			/* RoCEv2 sends no UDP checksum */
}

static bool softrma_gid_is_ipv4(const union ib_gid *gid)
{
	return ipv6_addr_v4mapped((const struct in6_addr *)gid->raw);
}

/*
 * The routes of @av: looked up, or taken from @cache (NULL: none) when it
 * holds one still valid.  BH off, for the cache's per-CPU entries.
 */
static struct dst_entry *softrma_net_route4(struct net *net,
					    struct net_device *ndev,
					    const struct softrma_av *av,
					    struct dst_cache *cache,
					    struct flowi4 *fl)
{
	struct dst_entry *dst = cache ? dst_cache_get(cache) : NULL;
	struct rtable *rt;

	lockdep_assert_in_softirq();
	memcpy(&fl->saddr, &av->sgid.raw[12], sizeof(fl->saddr));
	memcpy(&fl->daddr, &av->dgid.raw[12], sizeof(fl->daddr));
	if (dst)
		return dst;
	fl->flowi4_proto = IPPROTO_UDP;
	if (ipv4_is_multicast(fl->daddr))
		fl->flowi4_oif = ndev->ifindex;	/* the device's port */
	rt = ip_route_output_key(net, fl);
	if (IS_ERR(rt))
		return NULL;
	if (cache)
		dst_cache_set_ip4(cache, &rt->dst, fl->saddr);
	return &rt->dst;
}

static struct dst_entry *softrma_net_route6(struct net *net,
					    struct net_device *ndev,
					    const struct softrma_av *av,
					    struct dst_cache *cache,
					    struct flowi6 *fl)
{
	struct dst_entry *dst = cache ? dst_cache_get(cache) : NULL;

	lockdep_assert_in_softirq();
	memcpy(&fl->saddr, av->sgid.raw, sizeof(fl->saddr));
	memcpy(&fl->daddr, av->dgid.raw, sizeof(fl->daddr));
	if (dst)
		return dst;
	fl->flowi6_proto = IPPROTO_UDP;
	fl->flowi6_oif = ndev->ifindex;		/* link-local GIDs */
	dst = ip6_dst_lookup_flow(net, NULL, fl, NULL);
	if (IS_ERR(dst))
		return NULL;
	if (cache)
		dst_cache_set_ip6(cache, dst, &fl->saddr);
	return dst;
}

static void softrma_net_push_ipv4(struct sk_buff *skb, struct net *net,
				  const struct softrma_av *av,
				  const struct flowi4 *fl)
{
	struct iphdr *iph = skb_push(skb, sizeof(*iph));

	skb_reset_network_header(skb);
	*iph = (struct iphdr) {
		.version = 4,
		.ihl = sizeof(*iph) / 4,
		.tos = av->traffic_class,
		.tot_len = htons(skb->len),
		.frag_off = htons(IP_DF),
		.ttl = av->hop_limit,
		.protocol = IPPROTO_UDP,
		.saddr = fl->saddr,
		.daddr = fl->daddr,
	};
	__ip_select_ident(net, iph, 1);
	ip_send_check(iph);
	skb->protocol = htons(ETH_P_IP);
	memset(IPCB(skb), 0, sizeof(*IPCB(skb)));
}

static void softrma_net_push_ipv6(struct sk_buff *skb,
				  const struct softrma_av *av,
				  const struct flowi6 *fl)
{
	struct ipv6hdr *ip6h = skb_push(skb, sizeof(*ip6h));

	skb_reset_network_header(skb);
	ip6_flow_hdr(ip6h, av->traffic_class, htonl(av->flow_label));
	ip6h->payload_len = htons(skb->len - sizeof(*ip6h));
	ip6h->nexthdr = IPPROTO_UDP;
	ip6h->hop_limit = av->hop_limit;
	ip6h->saddr = fl->saddr;
	ip6h->daddr = fl->daddr;
	skb->protocol = htons(ETH_P_IPV6);
	memset(IP6CB(skb), 0, sizeof(*IP6CB(skb)));
}

/* Fills the ICRC, the last 4 bytes of the finished IP packet of @opcode. */
static void softrma_net_set_icrc(struct sk_buff *skb, bool ipv6, u8 opcode)
{
	u32 (*icrc_of)(const u8 *ip, bool ipv6, const u8 *udp, u32 udp_len) =
		opcode == (ROCE_RC | ROCE_FLUSH) && READ_ONCE(rxe_flush_icrc) ?
		roce_icrc_rxe_flush : roce_icrc;
	u32 icrc = icrc_of(skb_network_header(skb), ipv6,
			   skb_transport_header(skb),
			   skb->len - skb_network_header_len(skb));
	u8 *p = skb_tail_pointer(skb) - ROCE_ICRC_LEN;

	/* Little-endian on the wire. */
	p[0] = icrc;
	p[1] = icrc >> 8;
	p[2] = icrc >> 16;
	p[3] = icrc >> 24;
}

/*
 * Datagrams go on the wire when no device of the sender's namespace owns
 * the destination (other namespaces are reached through their netdevs),
 * and with force_wire always.
 */
bool softrma_net_forced(void)
{
	return READ_ONCE(force_wire);
}

/*
 * The RoCE headers of @pkt, pkt->payload_len bytes of @payload from @off,
 * the pad and room for the ICRC.  With @nofault the payload's ODP pages are
 * not faulted in (struct softrma_odp_hold): -EAGAIN when one is not there.
 */
static struct sk_buff *softrma_net_build(struct dst_entry *dst,
					 const struct roce_pkt *pkt,
					 const struct softrma_sgl *payload,
					 u64 off, bool nofault)
{
	unsigned int hdr_len = roce_hdr_len(pkt->opcode);
	unsigned int headroom = LL_RESERVED_SPACE(dst->dev) +
				SOFTRMA_NET_HEADROOM;
	u32 len = pkt->payload_len;
	SOFTRMA_SGL_ONE(data);
	struct sk_buff *skb;
	int err;

	skb = alloc_skb(headroom + hdr_len + len + pkt->pad + ROCE_ICRC_LEN,
			in_softirq() ? GFP_ATOMIC : GFP_KERNEL);
	if (!skb)
		return ERR_PTR(-ENOMEM);
	skb_reserve(skb, headroom);
	roce_build(skb_put(skb, hdr_len), pkt);
	softrma_sgl_init_kbuf(&data, skb_put(skb, len), len);
	data.nofault = nofault;
	err = softrma_sgl_copy_at(&data, 0, payload, off, len);
	if (err) {
		kfree_skb(skb);		/* deregistered, or ODP and unmapped */
		return ERR_PTR(err == -EAGAIN ? -EAGAIN : -EFAULT);
	}
	memset(skb_put(skb, pkt->pad), 0, pkt->pad);
	skb_put(skb, ROCE_ICRC_LEN);		/* the lengths include it */
	return skb;
}

/*
 * A packet whose route ends on this host, for the port this namespace's
 * socket holds, goes to the receive queue as the IP stack would put it
 * there, without passing through it (rdma_rxe's loopback does the same).
 * Its ICRC stays: the receiver checks it as it checks every packet's.
 * Returns false when the packet must take the stack: its route leaves the
 * host, another socket (rdma_rxe's) holds the port, or someone captures
 * on the loopback device and should see it.
 */
static bool softrma_net_loop(struct softrma_netsock *ns, struct net *net,
			     struct dst_entry *dst, struct sk_buff *skb,
			     bool ipv4)
{
	bool looped = false;

	if (!(dst->dev->flags & IFF_LOOPBACK) || dev_nit_active(dst->dev))
		return false;
	/* BH off: softrma_net_close() waits out this section. */
	local_bh_disable();
	if (READ_ONCE(ns->net) == net &&
	    (ipv4 ? READ_ONCE(ns->sock4) : READ_ONCE(ns->sock6))) {
		skb->skb_iif = dst->dev->ifindex;	/* as lo would give it */
		dst_release(dst);
		softrma_net_rx_queue(ns, skb);
		looped = true;
	}
	local_bh_enable();
	return looped;
}

/* Hands @skb, routed by @dst, to the receive queue or to the IP stack. */
static bool softrma_net_out(struct softrma_dev *sdev, struct net *net,
			    struct dst_entry *dst, struct sk_buff *skb,
			    bool ipv4)
{
	if (softrma_net_loop(sdev->netsock, net, dst, skb, ipv4))
		return true;
	skb_dst_set(skb, dst);
	return (ipv4 ? ip_local_out(net, NULL, skb) :
		       ip6_local_out(net, NULL, skb)) >= 0;
}

/* A packet that fault injection held (fault.c), on its way at last. */
void softrma_net_send_held(struct softrma_dev *sdev, struct sk_buff *skb)
{
	struct dst_entry *dst = dst_clone(skb_dst(skb));

	skb_dst_drop(skb);
	memset(skb->cb, 0, sizeof(skb->cb));
	softrma_net_out(sdev, dev_net(sdev->netdev), dst, skb,
			skb->protocol == htons(ETH_P_IP));
}

/*
 * What fault injection (fault.c) makes of @skb: true when it is gone (lost
 * on the way, or held to go later), having gone out once already when
 * duplicated.  A corrupted packet has one bit of its UDP payload flipped,
 * after its ICRC.
 */
static bool softrma_net_fault(struct softrma_dev *sdev, struct net *net,
			      struct dst_entry *dst, struct sk_buff *skb,
			      bool ipv4)
{
	unsigned int from = skb_transport_offset(skb) + sizeof(struct udphdr);
	enum softrma_fault_pkt fault = softrma_fault_packet(sdev);
	struct sk_buff *copy;
	u32 bit;

	switch (fault) {
	case SOFTRMA_FAULT_DROP:
		kfree_skb(skb);
		dst_release(dst);
		return true;
	case SOFTRMA_FAULT_DUPLICATE:
		copy = skb_copy(skb, GFP_ATOMIC);
		if (copy)
			softrma_net_out(sdev, net, dst_clone(dst), copy, ipv4);
		return false;
	case SOFTRMA_FAULT_CORRUPT:
		bit = get_random_u32_below((skb->len - from) * BITS_PER_BYTE);
		skb->data[from + bit / BITS_PER_BYTE] ^= 1 << (bit % BITS_PER_BYTE);
		return false;
	case SOFTRMA_FAULT_DELAY:
	case SOFTRMA_FAULT_REORDER:
		skb_dst_set(skb, dst);
		softrma_fault_hold(sdev, skb, fault);
		return true;
	default:
		return false;
	}
}

/*
 * The packet @pkt of @qp, on its way to @av.  Returns 0, or -EFAULT when
 * its payload's memory is gone, -EAGAIN when an RC QP's payload is in an
 * ODP page that is not there (it holds a lock that the receive path
 * needs: a work faults the page in), another negative errno when it
 * cannot go out.
 */
static int softrma_net_send(struct softrma_qp *qp, const struct softrma_av *av,
			    const struct roce_pkt *pkt,
			    const struct softrma_sgl *payload, u64 off)
{
	struct softrma_dev *sdev = to_sdev(qp->ibqp.device);
	struct net *net = dev_net(sdev->netdev);
	bool ipv4 = softrma_gid_is_ipv4(&av->sgid);
	struct dst_cache *cache = NULL;
	struct dst_entry *dst;
	struct sk_buff *skb;
	bool sent;
	struct flowi4 fl4 = {};
	struct flowi6 fl6 = {};

	if (ipv4 != softrma_gid_is_ipv4(&av->dgid))
		return -EAFNOSUPPORT;
	/* A connected QP sends only on its path, whose route it keeps. */
	if (qp->wire && av == &qp->path)
		cache = &qp->wire->route;
	local_bh_disable();
	dst = ipv4 ? softrma_net_route4(net, sdev->netdev, av, cache, &fl4) :
		     softrma_net_route6(net, sdev->netdev, av, cache, &fl6);
	local_bh_enable();
	if (!dst)
		return -EHOSTUNREACH;
	skb = softrma_net_build(dst, pkt, payload, off,
				softrma_qp_is_reliable(qp));
	if (IS_ERR(skb)) {
		dst_release(dst);
		return PTR_ERR(skb);
	}
	softrma_net_push_udp(skb, qp->ibqp.qp_num);
	if (ipv4)
		softrma_net_push_ipv4(skb, net, av, &fl4);
	else
		softrma_net_push_ipv6(skb, av, &fl6);
	softrma_net_set_icrc(skb, !ipv4, pkt->opcode);
	if (softrma_net_fault(sdev, net, dst, skb, ipv4))
		return 0;
	sent = softrma_net_out(sdev, net, dst, skb, ipv4);
	softrma_fault_release_reordered(sdev);
	return sent ? 0 : -ENOBUFS;
}

/*
 * Sends @pkt of @qp to @av, with pkt->payload_len bytes of @payload from
 * @off.  Returns 0; -EFAULT when the payload's memory is gone; -EAGAIN
 * when an ODP page of it is not there yet (RC); another negative errno
 * when it cannot go out (no route, no memory).
 */
int softrma_net_xmit(struct softrma_qp *qp, const struct softrma_av *av,
		     struct roce_pkt *pkt, const struct softrma_sgl *payload,
		     u64 off)
{
	struct softrma_dev *sdev = to_sdev(qp->ibqp.device);
	int err;

	pkt->pkey = ROCE_DEFAULT_PKEY;
	pkt->pad = roce_pad(pkt->payload_len);
	err = softrma_net_send(qp, av, pkt, payload, off);
	if (err) {
		if (err != -EAGAIN)	/* not sent yet, not dropped */
			softrma_drop(sdev, SOFTRMA_CNT_SEND_ERR);
		return err;
	}
	softrma_count(sdev, SOFTRMA_CNT_SENT_PKTS);
	softrma_count_add(sdev, SOFTRMA_CNT_SENT_BYTES,
			  roce_hdr_len(pkt->opcode) + pkt->payload_len +
			  pkt->pad + ROCE_ICRC_LEN);
	return 0;
}

/* Sends the datagram @msg of @qp (UD, GSI) as one RoCEv2 packet. */
bool softrma_net_xmit_datagram(struct softrma_qp *qp, struct softrma_msg *msg)
{
	struct roce_pkt pkt = {
		.opcode = ROCE_UD | (roce_wr_op(msg->opcode)->imm ?
				     ROCE_SEND_ONLY_IMM : ROCE_SEND_ONLY),
		.se = msg->send_flags & IB_SEND_SOLICITED,
		.dqpn = msg->dest_qpn,
		.psn = qp->attr.sq_psn,
		.qkey = msg->qkey,
		.sqpn = msg->src_qpn,
		.imm = msg->imm_data,
		.payload_len = msg->length,
	};

	qp->attr.sq_psn = roce_psn_add(qp->attr.sq_psn, 1);
	return !softrma_net_xmit(qp, msg->av, &pkt, msg->local, 0);
}

/*
 * A datagram from the wire, to the responder of the QP of @sdev it names.
 * Returns the counter of a drop, or SOFTRMA_CNT_NUM.
 */
static int softrma_net_rx_datagram(struct softrma_dev *sdev,
				   const struct roce_pkt *pkt,
				   struct softrma_av *av, u8 *payload)
{
	struct softrma_msg msg = {
		.opcode = (pkt->opcode & 0x1f) == ROCE_SEND_ONLY_IMM ?
			  IB_WR_SEND_WITH_IMM : IB_WR_SEND,
		.send_flags = pkt->se ? IB_SEND_SOLICITED : 0,
		.imm_data = pkt->imm,
		.qp_type = IB_QPT_UD,
		.src_qpn = pkt->sqpn,
		.dest_qpn = pkt->dqpn,
		.dgid = &av->dgid,
		.av = av,
		.qkey = pkt->qkey,
		.length = pkt->payload_len,
	};
	enum softrma_resp_result res;
	SOFTRMA_SGL_ONE(sgl);
	struct softrma_qp *qp;

	softrma_sgl_init_packet(&sgl, payload, pkt->payload_len);
	msg.local = &sgl;
	if (rdma_is_multicast_addr((struct in6_addr *)av->dgid.raw)) {
		if (pkt->dqpn != SOFTRMA_MCAST_QPN)
			return SOFTRMA_CNT_RCVD_NO_QP;
		return softrma_mcast_deliver(sdev, &msg) ?
			SOFTRMA_CNT_NUM : SOFTRMA_CNT_RCVD_DROPPED;
	}
	qp = softrma_qp_get(sdev, pkt->dqpn);
	if (!qp)
		return SOFTRMA_CNT_RCVD_NO_QP;
	res = softrma_resp_execute(qp, &msg);
	softrma_qp_put(qp);
	return res == SOFTRMA_RESP_ACK ? SOFTRMA_CNT_NUM : SOFTRMA_CNT_RCVD_DROPPED;
}

/* Not processed in the softirq (@now): for process context. */
#define SOFTRMA_NET_RX_LATER	(-1)

/* An RC or UC packet from @from, for the QP of @sdev it names. */
static int softrma_net_rx_connected(struct softrma_dev *sdev,
				    const struct roce_pkt *pkt,
				    const u8 *payload,
				    const struct softrma_av *from, bool now)
{
	struct softrma_qp *qp;
	int drop = SOFTRMA_CNT_NUM;

	qp = softrma_qp_get(sdev, pkt->dqpn);
	if (!qp)
		return SOFTRMA_CNT_RCVD_NO_QP;
	if (softrma_wire_group(qp) != roce_opcode_group(pkt->opcode) ||
	    !READ_ONCE(qp->on_wire))
		drop = SOFTRMA_CNT_RCVD_NO_QP;
	else if (!softrma_wire_rx(qp, pkt, payload, from, now))
		drop = SOFTRMA_NET_RX_LATER;
	softrma_qp_put(qp);
	return drop;
}

/* The addresses of an IPv4 or IPv6 packet as GIDs; false if not RoCEv2. */
static bool softrma_net_rx_addrs(struct sk_buff *skb, struct softrma_av *av)
{
	if (skb->protocol == htons(ETH_P_IP)) {
		const struct iphdr *iph = ip_hdr(skb);

		if (iph->ihl != sizeof(*iph) / 4)
			return false;		/* IP options: not RoCEv2 */
		ipv6_addr_set_v4mapped(iph->saddr, (struct in6_addr *)av->sgid.raw);
		ipv6_addr_set_v4mapped(iph->daddr, (struct in6_addr *)av->dgid.raw);
		av->traffic_class = iph->tos;
		av->hop_limit = iph->ttl;
		return true;
	}
	if (skb->protocol == htons(ETH_P_IPV6)) {
		const struct ipv6hdr *ip6h = ipv6_hdr(skb);

		if (ip6h->nexthdr != IPPROTO_UDP)
			return false;		/* extension headers */
		memcpy(av->sgid.raw, &ip6h->saddr, sizeof(av->sgid));
		memcpy(av->dgid.raw, &ip6h->daddr, sizeof(av->dgid));
		av->traffic_class = ip6_tclass(ip6_flowinfo(ip6h));
		av->flow_label = be32_to_cpu(ip6_flowlabel(ip6h));
		av->hop_limit = ip6h->hop_limit;
		return true;
	}
	return false;
}

/*
 * A packet for @sdev: lengths first, the ICRC, the transport headers, then
 * the transport.  Returns the counter of a drop, SOFTRMA_CNT_NUM, or
 * SOFTRMA_NET_RX_LATER, having counted nothing.
 */
static int softrma_net_rx_packet(struct softrma_dev *sdev, struct sk_buff *skb,
				 struct softrma_av *av, bool now)
{
	struct udphdr *uh = udp_hdr(skb);
	u32 udp_len = ntohs(uh->len);
	struct roce_pkt pkt;
	u8 *bth;
	int drop;

	if (udp_len < sizeof(*uh) + ROCE_BTH_LEN + ROCE_ICRC_LEN ||
	    (u8 *)uh + udp_len > skb_tail_pointer(skb))
		return SOFTRMA_CNT_RCVD_MALFORMED;
	bth = (u8 *)(uh + 1);
	if (!roce_icrc_ok(skb_network_header(skb),
			  skb->protocol == htons(ETH_P_IPV6),
			  (const u8 *)uh, udp_len))
		drop = SOFTRMA_CNT_RCVD_ICRC_ERR;
	else if (roce_parse(&pkt, bth, udp_len - sizeof(*uh)) != ROCE_OK)
		drop = SOFTRMA_CNT_RCVD_MALFORMED;
	else if (roce_opcode_group(pkt.opcode) != ROCE_UD)
		drop = softrma_net_rx_connected(sdev, &pkt,
						bth + roce_hdr_len(pkt.opcode),
						av, now);
	else if (now)
		drop = SOFTRMA_NET_RX_LATER;
	else
		drop = softrma_net_rx_datagram(sdev, &pkt, av,
					       bth + roce_hdr_len(pkt.opcode));
	if (drop != SOFTRMA_NET_RX_LATER)
		softrma_count_add(sdev, SOFTRMA_CNT_RCVD_BYTES,
				  udp_len - sizeof(*uh));
	return drop;
}

/*
 * One received packet, for the device that owns its destination address;
 * in the softirq (@now), false when it is left for process context.
 */
static bool softrma_net_rx_one(struct softrma_netsock *ns, struct sk_buff *skb,
			       bool now)
{
	struct softrma_av av = {};
	struct softrma_dev *sdev;
	int drop;

	if (skb_linearize(skb) || !softrma_net_rx_addrs(skb, &av))
		return true;
	/* A multicast is for the device of the netdev it came in on. */
	if (rdma_is_multicast_addr((struct in6_addr *)av.dgid.raw)) {
		if (now)
			return false;
		sdev = softrma_get_dev_by_ifindex(ns->net, skb->skb_iif);
	} else {
		sdev = softrma_get_dev_by_gid(ns->net, &av.dgid);
	}
	if (!sdev)
		return true;
	/* A netdev that moved: its device still has the old namespace's claim. */
	if (now && sdev->netsock != ns) {
		ib_device_put(&sdev->ib_dev);
		return false;
	}
	drop = softrma_net_rx_packet(sdev, skb, &av, now);
	if (drop != SOFTRMA_NET_RX_LATER) {
		softrma_count(sdev, SOFTRMA_CNT_RCVD_PKTS);
		if (now)
			softrma_count(sdev, SOFTRMA_CNT_RCVD_SOFTIRQ);
		if (drop != SOFTRMA_CNT_NUM)
			softrma_drop(sdev, drop);
	}
	ib_device_put(&sdev->ib_dev);
	return drop != SOFTRMA_NET_RX_LATER;
}
