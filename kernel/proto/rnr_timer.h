/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* IBA RNR NAK timer encoding (table 45): pure protocol, no kernel API. */
#ifndef ROCE_PROTO_RNR_TIMER_H
#define ROCE_PROTO_RNR_TIMER_H

/* Microseconds an RNR NAK with timer field @code asks the requester to wait. */
static inline unsigned int roce_rnr_timer_us(unsigned int code)
{
	static const unsigned int us[32] = {
		655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640,
		960, 1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480,
		30720, 40960, 61440, 81920, 122880, 163840, 245760, 327680,
		491520,
	};

	return us[code & 31];
}

#endif /* ROCE_PROTO_RNR_TIMER_H */
