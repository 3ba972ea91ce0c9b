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

/*
 * Split 4/4 with the leader in A, churn in B so B's table moves on under
 * its own leader, heal: the time to converge, or -1.  With @poison a
 * made-up host first says HELLO with a table of term @term.
 */
static int64_t heal_after_split(struct __test_metadata *_metadata,
				bool poison, uint32_t term)
{
	struct sim_opts o = { .n = 8, .seed = 11 };
	struct sim *s = cluster(_metadata, &o);
	uint32_t group[8], i, lead, b[2], nb;
	char why[256] = "";
	int64_t t;

	if (poison) {
		struct mapd_hello h = { .term = term, .version = 1 };
		uint8_t host[6];

		fake_mac(host, 2);
		memcpy(h.leader, host, 6);
		hello(s, host, 43, &h);
		sim_run_for(s, H);
	}
	lead = sim_leader(s);
	for (i = 0; i < 8; i++)
		group[i] = 1;
	group[lead] = 0;
	for (i = 0, nb = 0; i < 8 && nb < 3; i++)
		if (i != lead) {
			group[i] = 0;
			nb++;
		}
	sim_partition(s, group);
	sim_run_for(s, 2 * D + 2 * H);
	for (i = 0, nb = 0; i < 8 && nb < 2; i++)
		if (group[i] == 1)
			b[nb++] = i;
	for (i = 0; i < 2; i++) {
		sim_kill(s, b[i]);
		sim_run_for(s, D + 2 * H);
		sim_boot(s, b[i]);
		sim_run_for(s, 2 * H);
	}
	sim_heal(s);
	t = sim_run_until_converged(s, sim_now_ms(s) + 20000, 50, why,
				    sizeof(why));
	TH_LOG("%s %#x: %s%s", poison ? "term said" : "no term said", term,
	       t < 0 ? "NOT converged 20 s after the heal: " : "converged",
	       t < 0 ? why : "");
	sim_free(s);
	return t;
}

TEST(heal_converges)
{
	EXPECT_LE(0, heal_after_split(_metadata, false, 0));
}

/* A term near MAPD_TERM_LIMIT in one HELLO stops no later term. */
TEST(term_in_a_hello_near_the_limit)
{
	EXPECT_LE(0, heal_after_split(_metadata, true, MAPD_TERM_LIMIT - 1));
	EXPECT_LE(0, heal_after_split(_metadata, true, MAPD_TERM_LIMIT - 2));
}

/* Nor does it raise any node's term. */
TEST(term_in_a_hello_is_not_taken)
{
	struct sim_opts o = { .n = 8, .seed = 12 };
	struct sim *s = cluster(_metadata, &o);
	struct mapd_hello h = { .term = 1000000, .version = 1 };
	struct mapd_status st;
	uint8_t host[6];
	int32_t lead;

	fake_mac(host, 2);
	memcpy(h.leader, host, 6);
	hello(s, host, 43, &h);
	sim_run_for(s, H);
	lead = sim_leader(s);
	sim_kill(s, lead);
	converge(_metadata, s, 2 * D);
	mapd_get_status(s->node[sim_leader(s)].m, &st);
	TH_LOG("after a HELLO with term 1000000 and a takeover: term %u",
	       st.term);
	EXPECT_GT(1000, st.term);
	sim_free(s);
}

/* 40 MERGEs of 55 made-up DEAD entries each to the leader, from @host. */
static uint32_t merge_flood(struct sim *s, const uint8_t host[6],
			    const struct mapd_hello *h)
{
	struct mapd_entry e[MAPD_CHUNK_ENTRIES];
	const struct mapd_entry *ep[MAPD_CHUNK_ENTRIES];
	uint32_t k, i, lead = sim_leader(s);
	uint8_t buf[MAPD_MTU];
	struct mapd_status st;

	for (k = 0; k < 40; k++) {
		hello(s, host, 45, h);
		sim_run_for(s, 5);
		for (i = 0; i < MAPD_CHUNK_ENTRIES; i++) {
			memset(&e[i], 0, sizeof(e[i]));
			fake_mac(e[i].mac, 100000 + k * 64 + i);
			e[i].id = 2000 + k * 64 + i;
			e[i].boot = 1;
			e[i].state = MAPD_DEAD;
			ep[i] = &e[i];
		}
		sim_inject(s, host, s->node[lead].mac, buf,
			   mapd_wire_merge(buf, 45, ep, MAPD_CHUNK_ENTRIES));
		sim_run_for(s, TICK);
	}
	sim_run_for(s, H);
	mapd_get_status(s->node[lead].m, &st);
	return st.entries;
}

/* MERGE hints are taken only from a leader that stepped down. */
TEST(merge_from_a_non_leader_is_dropped)
{
	struct sim_opts o = { .n = 8, .seed = 19, .max_members = 1024 };
	struct sim *s = cluster(_metadata, &o);
	struct mapd_hello h = { 0 };
	uint8_t host[6];
	uint32_t n;

	fake_mac(host, 3);
	n = merge_flood(s, host, &h);
	TH_LOG("40 MERGEs from a host that never led: %u entries (8 nodes)", n);
	EXPECT_EQ(9, n);
	sim_free(s);
}

/* ...within dead_ms of saying so, once per incarnation. */
TEST(merge_window_closes)
{
	struct sim_opts o = { .n = 8, .seed = 19, .max_members = 1024 };
	struct sim *s = cluster(_metadata, &o);
	struct mapd_hello h = { .term = 1, .version = 1 };
	int32_t lead = sim_leader(s);
	uint8_t host[6];
	uint32_t n;

	fake_mac(host, 3);
	memcpy(h.leader, host, 6);
	memcpy(h.follows, s->node[lead].mac, 6);
	hello(s, host, 45, &h);
	sim_run_for(s, D + H);
	n = merge_flood(s, host, &h);
	TH_LOG("40 MERGEs after the window: %u entries (8 nodes)", n);
	EXPECT_EQ(9, n);
	sim_free(s);
}

TEST_HARNESS_MAIN
