/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What softrma's kselftest_harness.h tests share: every case runs on each
 * transport, as the fixture's variants "local" and "wire" (force_wire:
 * RoCEv2 packets through lo), on the device SOFTRMA_DEV (softrma0) with the
 * address SOFTRMA_IPV4 (10.9.0.1); force_wire is put back as the test found
 * it, and the harness's timeouts scale with SOFTRMA_SLOWDOWN.
 *
 * A test declares its FIXTURE(), then TRANSPORT_VARIANTS() of it, calls
 * transport_set() in its FIXTURE_SETUP() before it connects a QP or sends a
 * datagram, transport_put_back() in its FIXTURE_TEARDOWN(), and ends with
 * TRANSPORT_HARNESS_MAIN.  A test whose far side can be another device
 * declares TRANSPORT_PEER_VARIANTS() instead, which adds the variant
 * "peer": that side on SOFTRMA_PEER_DEV (transport_open_peer()).
 */
#ifndef SOFTRMA_TRANSPORT_H
#define SOFTRMA_TRANSPORT_H

#include <stdbool.h>

#include "kselftest_harness.h"
#include "test.h"

#define FORCE_WIRE "/sys/module/softrma/parameters/force_wire"

/* force_wire as 0 or 1; -1 when softrma is not loaded. */
static inline int force_wire_get(void)
{
	FILE *f = fopen(FORCE_WIRE, "r");
	int c;

	if (!f)
		return -1;
	c = fgetc(f);
	fclose(f);
	return c == 'Y';
}

/* Sets force_wire to @on; false with errno when this process may not. */
static inline bool force_wire_set(int on)
{
	FILE *f = fopen(FORCE_WIRE, "w");

	if (!f)
		return false;
	fprintf(f, "%d\n", on);
	return !fclose(f);
}

/* force_wire as the test found it. */
static int force_wire_found;

/* Puts force_wire back as the test found it; false with errno when it cannot. */
static inline bool force_wire_put_back(void)
{
	return force_wire_found < 0 || force_wire_get() == force_wire_found ||
	       force_wire_set(force_wire_found);
}

static inline void force_wire_put_back_at_exit(void)
{
	if (!force_wire_put_back())
		printf("# %s: %s\n", FORCE_WIRE, strerror(errno));
}

/* The variants "local" and "wire" of FIXTURE(@fixture). */
#define TRANSPORT_VARIANTS(fixture)					\
	FIXTURE_VARIANT(fixture) {					\
		int force_wire;						\
		bool peer;	/* the far side on SOFTRMA_PEER_DEV */	\
	};								\
	FIXTURE_VARIANT_ADD(fixture, local) {				\
		.force_wire = 0,					\
	};								\
	FIXTURE_VARIANT_ADD(fixture, wire) {				\
		.force_wire = 1,					\
	}

/*
 * "local", "wire" and "peer" of FIXTURE(@fixture).  In "peer" the far side
 * is a second device (rdma_rxe across a veth, say), reached as the two
 * devices reach each other: force_wire stays 0.
 */
#define TRANSPORT_PEER_VARIANTS(fixture)				\
	TRANSPORT_VARIANTS(fixture);					\
	FIXTURE_VARIANT_ADD(fixture, peer) {				\
		.force_wire = 0, .peer = true,				\
	}

/*
 * In a FIXTURE_SETUP(): force_wire as the variant wants it.  False with
 * errno EACCES when this process may not write it: the case is skipped.  A
 * connected QP takes its transport when it reaches RTR, a datagram when it
 * is sent.
 */
static inline bool transport_set(int force_wire)
{
	if (force_wire_get() == force_wire || force_wire_set(force_wire))
		return true;
	if (errno != EACCES)
		FAIL("%s: %s", FORCE_WIRE, strerror(errno));
	return false;
}

/*
 * In a FIXTURE_TEARDOWN().  The harness runs none after a failed check:
 * that exit()s the case's process (test.h), whose atexit() handler puts
 * force_wire back (transport_harness_run()).
 */
static inline void transport_put_back(void)
{
	CHECK(force_wire_put_back(), "%s: %s", FORCE_WIRE, strerror(errno));
}

/* Opens @dev; *@gid_index: the GID of @ipv4 on port 1. */
static inline struct ibv_context *transport_open(const char *dev,
						 const char *ipv4,
						 int *gid_index)
{
	struct ibv_context *ctx = test_open_device(dev);

	*gid_index = test_find_ipv4_gid(ctx, ipv4);
	return ctx;
}

/* Opens SOFTRMA_DEV; *@gid_index: the GID of SOFTRMA_IPV4 on port 1. */
static inline struct ibv_context *transport_open_device(int *gid_index)
{
	return transport_open(getenv("SOFTRMA_DEV") ?: "softrma0",
			      getenv("SOFTRMA_IPV4") ?: "10.9.0.1", gid_index);
}

#define TRANSPORT_NO_PEER "SOFTRMA_PEER_DEV is not set: no second device"

/*
 * In the variant "peer": opens SOFTRMA_PEER_DEV, *@gid_index the GID of
 * SOFTRMA_PEER_IPV4 on port 1.  NULL when SOFTRMA_PEER_DEV is not set: the
 * case is skipped, with the reason TRANSPORT_NO_PEER.
 */
static inline struct ibv_context *transport_open_peer(int *gid_index)
{
	const char *dev = getenv("SOFTRMA_PEER_DEV");
	const char *ipv4 = getenv("SOFTRMA_PEER_IPV4");

	if (!dev)
		return NULL;
	CHECK(ipv4, "SOFTRMA_PEER_DEV %s without SOFTRMA_PEER_IPV4", dev);
	return transport_open(dev, ipv4, gid_index);
}

static inline int transport_harness_run(int argc, char **argv)
{
	/* The harness kills a case after its timeout: scaled like test_bound(). */
	for (struct __fixture_metadata *f = __fixture_list; f; f = f->next)
		for (struct __test_metadata *t = f->tests; t; t = t->next)
			t->timeout = test_bound(t->timeout);
	force_wire_found = force_wire_get();
	atexit(force_wire_put_back_at_exit);
	return test_harness_run(argc, argv);
}

/* As the harness's TEST_HARNESS_MAIN. */
#define TRANSPORT_HARNESS_MAIN						\
	int main(int argc, char **argv)					\
	{								\
		return transport_harness_run(argc, argv);		\
	}

#endif /* SOFTRMA_TRANSPORT_H */
