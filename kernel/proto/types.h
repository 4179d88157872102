/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The protocol code in this directory uses no kernel API, so that it also
 * builds in user space for unit tests and fuzzing.  This maps its types.
 */
#ifndef ROCE_PROTO_TYPES_H
#define ROCE_PROTO_TYPES_H

#ifdef __KERNEL__
#include <linux/crc32.h>
#include <linux/nospec.h>
#include <linux/string.h>
#include <linux/types.h>

/* @index (< @size) clamped under speculation: it comes from user space. */
#define roce_index_nospec(index, size) array_index_nospec(index, size)

/* CRC-32 (reflected 0xEDB88320), no pre- or post-inversion. */
static inline u32 roce_crc32(u32 crc, const u8 *p, u32 len)
{
	return crc32_le(crc, p, len);
}
#else
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;

#define roce_index_nospec(index, size) (index)

static inline u32 roce_crc32(u32 crc, const u8 *p, u32 len)
{
	while (len--) {
		crc ^= *p++;
		for (int i = 0; i < 8; i++)
			crc = crc >> 1 ^ (crc & 1 ? 0xedb88320U : 0);
	}
	return crc;
}
#endif

#endif /* ROCE_PROTO_TYPES_H */
