// SPDX-License-Identifier: GPL-2.0
/*
 * NIC ids on a simulated segment: two nodes configured with one id are
 * both refused, and what happens next; a configured id waits for a live
 * node the leader assigned it to, and beats a dead node's reservation; an operator's change
 * of a node's id moves its route.
 */
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "cluster.h"

/* Every up node but @owner routes @id to @owner; @owner has it. */
static bool routed_everywhere(struct sim *s, uint32_t id, uint32_t owner)
{
	uint32_t i;

	if (sim_id(s, owner) != id || s->node[owner].nic_id != id)
		return false;
	for (i = 0; i < s->o.n; i++)
		if (s->node[i].up && i != owner &&
		    !sim_has_route(s, i, id, s->node[owner].mac))
			return false;
	return true;
}

static uint8_t state_of(struct sim *s, uint32_t node)
{
	struct mapd_entry e;
	int32_t lead = sim_leader(s);

	if (lead < 0 || !sim_entry(s, lead, s->node[node].mac, &e))
		return 0;
	return e.state;
}

TEST(two_nodes_claiming_one_id_are_both_refused)
{
	struct sim_opts o = { .n = 33, .booted = 32, .seed = 20,
			      .loss_ppm = PPM, .start_spread_ms = H };
	uint32_t a = 0, b = 32, i;
	struct sim *s = sim_new(&o);

	s->node[a].nic_id_cfg = 42;
	converge(_metadata, s, 30000);
	ASSERT_TRUE(routed_everywhere(s, 42, a));

	/* A second node comes up configured with the same id. */
	s->node[b].nic_id_cfg = 42;
	sim_boot(s, b);
	converge(_metadata, s, 5000);
	TH_LOG("both claim 42: refused on a %u time(s), on b %u time(s)",
	       s->node[a].refused, s->node[b].refused);
	EXPECT_EQ(1, s->node[a].refused);
	EXPECT_EQ(1, s->node[b].refused);
	EXPECT_EQ(MAPD_CONFLICT, state_of(s, a));
	EXPECT_EQ(MAPD_CONFLICT, state_of(s, b));
	EXPECT_EQ(MAPD_NO_ID, sim_id(s, a));
	EXPECT_EQ(MAPD_NO_ID, sim_id(s, b));
	EXPECT_FALSE(sim_anyone_routes(s, 42));
	/* Nobody else was given 42 meanwhile. */
	for (i = 0; i < s->o.n; i++)
		EXPECT_NE(42, sim_id(s, i));

	/* It stays so while both are up... */
	sim_run_for(s, 5 * D);
	EXPECT_FALSE(sim_anyone_routes(s, 42));
	EXPECT_EQ(1, s->node[a].refused);
	/* ...and when one goes, the other gets the id. */
	sim_kill(s, b);
	converge(_metadata, s, D + 2 * H);
	EXPECT_TRUE(routed_everywhere(s, 42, a));
	EXPECT_EQ(MAPD_ALIVE, state_of(s, a));
	sim_free(s);
}

TEST(duplicate_ids_at_cold_start_are_refused)
{
	struct sim_opts o = { .n = 16, .seed = 21, .start_spread_ms = H };
	struct sim *s = sim_new(&o);
	uint32_t i;

	s->node[3].nic_id_cfg = 7;
	s->node[9].nic_id_cfg = 7;
	converge(_metadata, s, 30000);
	EXPECT_EQ(1, s->node[3].refused);
	EXPECT_EQ(1, s->node[9].refused);
	EXPECT_EQ(MAPD_CONFLICT, state_of(s, 3));
	EXPECT_EQ(MAPD_CONFLICT, state_of(s, 9));
	EXPECT_FALSE(sim_anyone_routes(s, 7));
	for (i = 0; i < s->o.n; i++) {
		EXPECT_NE(7, sim_id(s, i));
		if (i != 3 && i != 9)
			EXPECT_NE(MAPD_NO_ID, sim_id(s, i));
	}
	sim_free(s);
}

/*
 * Live ownership is sticky: a node configured with an id the leader gave
 * another, alive, is refused (alone) until the holder is gone; then it
 * gets the id, and the old holder a new one when it is back.
 */
TEST(configured_id_waits_for_an_assigned_holder)
{
	struct sim_opts o = { .n = 33, .booted = 32, .seed = 22,
			      .loss_ppm = PPM };
	struct sim *s = cluster(_metadata, &o);
	uint32_t *ids = sim_ids(s), holder = 0, i;

	for (i = 0; i < 32; i++)
		if (ids[i] == 5)
			holder = i;
	ASSERT_EQ(5, ids[holder]);
	s->node[32].nic_id_cfg = 5;
	sim_boot(s, 32);
	converge(_metadata, s, 5000);
	/* Everyone but the claimant, whose NIC still has 5, routes it. */
	s->node[32].up = false;
	EXPECT_TRUE(routed_everywhere(s, 5, holder));
	s->node[32].up = true;
	EXPECT_FALSE(sim_has_route(s, holder == 0, 5, s->node[32].mac));
	EXPECT_EQ(MAPD_CONFLICT, state_of(s, 32));
	EXPECT_EQ(MAPD_NO_ID, sim_id(s, 32));
	EXPECT_EQ(1, s->node[32].refused);
	EXPECT_EQ(0, s->node[holder].refused);
	for (i = 0; i < 32; i++)
		EXPECT_EQ(ids[i], sim_id(s, i));

	/* The holder stops: the claimant gets the id. */
	sim_stop(s, holder);
	converge(_metadata, s, 2 * H);
	EXPECT_TRUE(routed_everywhere(s, 5, 32));
	sim_boot(s, holder);
	converge(_metadata, s, 5000);
	TH_LOG("node %u had 5 by assignment: back with %u", holder,
	       sim_id(s, holder));
	EXPECT_NE(5, sim_id(s, holder));
	EXPECT_NE(MAPD_NO_ID, sim_id(s, holder));
	EXPECT_TRUE(routed_everywhere(s, 5, 32));
	free(ids);
	sim_free(s);
}

/*
 * A dead node's id is kept for it, but an operator who configures that id
 * elsewhere gets it; the dead node comes back with a new one.
 */
TEST(configured_id_beats_a_dead_nodes_reservation)
{
	struct sim_opts o = { .n = 33, .booted = 32, .seed = 23 };
	struct sim *s = cluster(_metadata, &o);
	uint32_t victim, id, i;

	sim_pick(s, 1, &victim);
	id = sim_id(s, victim);
	sim_kill(s, victim);
	converge(_metadata, s, D + 2 * H);
	EXPECT_EQ(MAPD_DEAD, state_of(s, victim));
	s->node[32].nic_id_cfg = id;
	sim_boot(s, 32);
	converge(_metadata, s, 5000);
	EXPECT_TRUE(routed_everywhere(s, id, 32));
	EXPECT_EQ(0, state_of(s, victim));
	sim_boot(s, victim);
	converge(_metadata, s, 5000);
	EXPECT_NE(id, sim_id(s, victim));
	for (i = 0; i < s->o.n; i++)
		EXPECT_NE(MAPD_NO_ID, sim_id(s, i));
	sim_free(s);
}

/* The operator reboots a node with another --nic-id: the route follows. */
TEST(reconfigured_id_moves_the_route)
{
	struct sim_opts o = { .n = 16, .seed = 24 };
	struct sim *s = sim_new(&o);

	s->node[4].nic_id_cfg = 100;
	converge(_metadata, s, 30000);
	ASSERT_TRUE(routed_everywhere(s, 100, 4));
	sim_kill(s, 4);
	s->node[4].nic_id_cfg = 200;
	sim_boot(s, 4);
	converge(_metadata, s, 5000);
	EXPECT_TRUE(routed_everywhere(s, 200, 4));
	EXPECT_FALSE(sim_anyone_routes(s, 100));
	sim_free(s);
}

TEST_HARNESS_MAIN
