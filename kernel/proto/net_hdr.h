/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The network header a UD receive finds in the first 40 bytes of its buffer
 * (RoCEv2, IBA annex A17.4.5.2): for IPv4 GIDs 20 zero bytes and the IPv4
 * header, otherwise the IPv6 header, which has the layout of a GRH.
 */
#ifndef ROCE_PROTO_NET_HDR_H
#define ROCE_PROTO_NET_HDR_H

#include "types.h"

#define ROCE_NET_HDR_LEN	40

struct roce_net_hdr_info {
	u8 sgid[16];
	u8 dgid[16];
	u8 traffic_class;
	u8 hop_limit;
	u32 flow_label;
	u32 msg_len;		/* UD payload bytes */
	bool has_imm;
};

/*
 * True when the packet between @sgid and @dgid is IPv4: both are
 * IPv4-mapped IPv6 addresses (::ffff:a.b.c.d).
 */
bool roce_net_hdr_is_ipv4(const u8 sgid[16], const u8 dgid[16]);

/*
 * Writes the network header of the packet that would carry @info's message.
 * Returns true for an IPv4 header, false for IPv6.
 */
bool roce_net_hdr_build(u8 hdr[ROCE_NET_HDR_LEN],
			const struct roce_net_hdr_info *info);

#endif /* ROCE_PROTO_NET_HDR_H */
