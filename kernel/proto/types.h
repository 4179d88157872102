/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The protocol code in this directory uses no kernel API, so that it also
 * builds in user space for unit tests and fuzzing.  This maps its types.
 */
#ifndef SOFTRMA_PROTO_TYPES_H
#define SOFTRMA_PROTO_TYPES_H

#ifdef __KERNEL__
#include <linux/string.h>
#include <linux/types.h>
#else
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
#endif

#endif /* SOFTRMA_PROTO_TYPES_H */
