// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "net_hdr.h"

#define UDP_HDR_LEN	8
#define BTH_LEN		12
#define DETH_LEN	8
#define IMMDT_LEN	4
#define ICRC_LEN	4
#define IPV4_HDR_LEN	20
#define IPPROTO_UDP_NUM	17

static bool roce_gid_is_ipv4(const u8 gid[16])
{
	static const u8 prefix[12] = { [10] = 0xff, [11] = 0xff };

	return !memcmp(gid, prefix, sizeof(prefix));
}

bool roce_net_hdr_is_ipv4(const u8 sgid[16], const u8 dgid[16])
{
	return roce_gid_is_ipv4(sgid) && roce_gid_is_ipv4(dgid);
}

static void put_be16(u8 *p, u16 v)
{
	p[0] = v >> 8;
	p[1] = v;
}

static void put_be32(u8 *p, u32 v)
{
	put_be16(p, v >> 16);
	put_be16(p + 2, v);
}

/* The UDP datagram: UDP header, BTH, DETH, ImmDt, payload padded to 4, ICRC. */
static u32 roce_udp_len(const struct roce_net_hdr_info *info)
{
	return UDP_HDR_LEN + BTH_LEN + DETH_LEN +
	       (info->has_imm ? IMMDT_LEN : 0) +
	       ((info->msg_len + 3) & ~3U) + ICRC_LEN;
}

static u16 roce_ipv4_csum(const u8 *hdr)
{
	u32 sum = 0;

	for (int i = 0; i < IPV4_HDR_LEN; i += 2)
		sum += (u32)hdr[i] << 8 | hdr[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return ~sum;
}

static void roce_ipv4_build(u8 *ip, const struct roce_net_hdr_info *info)
{
	ip[0] = 0x45;				/* version 4, 5 words */
	ip[1] = info->traffic_class;
	put_be16(ip + 2, IPV4_HDR_LEN + roce_udp_len(info));
	put_be16(ip + 6, 0x4000);		/* don't fragment */
	ip[8] = info->hop_limit;
	ip[9] = IPPROTO_UDP_NUM;
	memcpy(ip + 12, info->sgid + 12, 4);
	memcpy(ip + 16, info->dgid + 12, 4);
	put_be16(ip + 10, roce_ipv4_csum(ip));
}

static void roce_ipv6_build(u8 *ip, const struct roce_net_hdr_info *info)
{
	put_be32(ip, 6U << 28 | (u32)info->traffic_class << 20 |
		     (info->flow_label & 0xfffff));
	put_be16(ip + 4, roce_udp_len(info));
	ip[6] = IPPROTO_UDP_NUM;
	ip[7] = info->hop_limit;
	memcpy(ip + 8, info->sgid, 16);
	memcpy(ip + 24, info->dgid, 16);
}

bool roce_net_hdr_build(u8 hdr[ROCE_NET_HDR_LEN],
			const struct roce_net_hdr_info *info)
{
	bool ipv4 = roce_net_hdr_is_ipv4(info->sgid, info->dgid);

	memset(hdr, 0, ROCE_NET_HDR_LEN);
	if (ipv4)
		roce_ipv4_build(hdr + ROCE_NET_HDR_LEN - IPV4_HDR_LEN, info);
	else
		roce_ipv6_build(hdr, info);
	return ipv4;
}
