/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the scenario tests share: the default timing, and a converged
 * cluster to start from.  After kselftest_harness.h, whose ASSERTs these
 * use.
 */
#ifndef VNET_MAPD_CLUSTER_H
#define VNET_MAPD_CLUSTER_H

#include "sim.h"

#define H		MAPD_HEARTBEAT_MS
#define D		MAPD_DEAD_MS
#define TICK		(H / 4)
#define POLL		5	/* ms between looks, when timing a bound */
#define LATENCY		2	/* the sim's largest latency, rounded up */
#define PPM		10000	/* one percent */

/* For the tests that play a host on the segment. */
static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

/* A made-up host's address: locally administered, never a node's. */
static inline void fake_mac(uint8_t mac[6], uint32_t k)
{
	mac[0] = 0x06;
	mac[1] = 0x66;
	mac[2] = k >> 24;
	mac[3] = k >> 16;
	mac[4] = k >> 8;
	mac[5] = k;
}

static inline void converge(struct __test_metadata *_metadata, struct sim *s,
			    uint64_t within_ms)
{
	char why[256] = "";
	int64_t t = sim_run_until_converged(s, sim_now_ms(s) + within_ms, 50,
					    why, sizeof(why));

	if (t < 0)
		TH_LOG("not converged at %llu ms: %s",
		       (unsigned long long)sim_now_ms(s), why);
	ASSERT_LE(0, t);
}

/* A cluster of @o->n nodes (booted over a heartbeat), converged. */
static inline struct sim *cluster(struct __test_metadata *_metadata,
				  struct sim_opts *o)
{
	struct sim *s;

	if (!o->start_spread_ms)
		o->start_spread_ms = H;
	s = sim_new(o);
	converge(_metadata, s, 30000);
	return s;
}

#endif /* VNET_MAPD_CLUSTER_H */
