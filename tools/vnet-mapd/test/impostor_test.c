// SPDX-License-Identifier: GPL-2.0
/*
 * What one host on the segment that runs no mapper can do by saying
 * things: claim a live node's id, and more.  Each test says what must not
 * happen; the protocol has no authentication, so Documentation/vnet/mapd.rst
 * lists what such a host can still do.
 */
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "cluster.h"
#include "wire.h"

static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

/* A made-up host's address: locally administered, never a node's. */
static void fake_mac(uint8_t mac[6], uint32_t k)
{
	mac[0] = 0x06;
	mac[1] = 0x66;
	mac[2] = k >> 24;
	mac[3] = k >> 16;
	mac[4] = k >> 8;
	mac[5] = k;
}

/* Up nodes other than @skip that route @id (to @mac, if not NULL). */
static uint32_t routing(struct sim *s, uint32_t id, const uint8_t *mac,
			int32_t skip)
{
	uint32_t i, n = 0;

	for (i = 0; i < s->o.n; i++)
		if ((int32_t)i != skip && s->node[i].up &&
		    sim_has_route(s, i, id, mac))
			n++;
	return n;
}

static void hello(struct sim *s, const uint8_t host[6], uint64_t boot,
		  const struct mapd_hello *h)
{
	uint8_t buf[MAPD_MTU];

	sim_inject(s, host, bcast, buf, mapd_wire_hello(buf, boot, h));
}

/* A HELLO with a configured id from a made-up host takes no live node's. */
TEST(configured_claim_does_not_take_a_live_id)
{
	struct sim_opts o = { .n = 8, .seed = 7 };
	struct sim *s = cluster(_metadata, &o);
	struct mapd_hello h = { .flags = MAPD_HELLO_CONFIGURED };
	uint32_t victim, id, k;
	struct mapd_entry e;
	uint8_t host[6];

	sim_pick(s, 1, &victim);
	id = sim_id(s, victim);
	fake_mac(host, 1);
	h.id = id;
	for (k = 0; k < 8; k++) {
		hello(s, host, 42, &h);
		sim_run_for(s, H);
	}
	TH_LOG("victim node %u had id %u, now %u; %u of %u others route it to the made-up host",
	       victim, id, sim_id(s, victim), routing(s, id, host, victim),
	       s->o.n - 1);
	EXPECT_EQ(id, sim_id(s, victim));
	EXPECT_EQ(id, s->node[victim].nic_id);
	EXPECT_EQ(0, routing(s, id, host, victim));
	EXPECT_EQ(s->o.n - 1, routing(s, id, s->node[victim].mac, victim));
	ASSERT_TRUE(sim_entry(s, sim_leader(s), host, &e));
	EXPECT_EQ(MAPD_CONFLICT, e.state);
	EXPECT_EQ(0, s->node[victim].refused);
	sim_free(s);
}

TEST_HARNESS_MAIN
