// SPDX-License-Identifier: GPL-2.0
/*
 * The mapper protocol on a simulated segment (sim.h), with the default
 * heartbeat (500 ms) and dead time (2 s): a thousand nodes converge
 * through loss, duplication and reordering; dead members and a dead
 * leader are noticed within the bounds mapd_bound_ms() gives; ids survive
 * reboots, daemon restarts and partitions; claims of one id by two
 * configurations are refused on both; and forged tables, garbage and
 * floods of made-up HELLOs change nothing that matters.  "Converged" is
 * sim_converged(): one leader, one table, a unique id per live node, and
 * every NIC routing exactly the other live nodes.
 */
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "cluster.h"

#ifndef BIG_N
#define BIG_N		1024
#endif

/*
 * The two longest tests run for a few seconds under ASan; the harness's
 * default of 30 s per test leaves too little room on a loaded machine.
 */
FIXTURE(long_run) {
	int unused;
};

FIXTURE_SETUP(long_run)
{
}

FIXTURE_TEARDOWN(long_run)
{
}

TEST_F_TIMEOUT(long_run, a_thousand_nodes_converge_through_loss, 300)
{
	struct sim_opts o = { .n = BIG_N, .seed = 1, .loss_ppm = PPM,
			      .dup_ppm = PPM / 2 };
	struct sim *s = cluster(_metadata, &o);
	uint32_t i, max_id = 0, terms = 0;

	for (i = 0; i < s->o.n; i++) {
		if (sim_id(s, i) > max_id)
			max_id = sim_id(s, i);
		terms += s->node[i].leading;
	}
	TH_LOG("%u nodes, 1%% loss: converged at %llu ms (%.1f heartbeats), %llu datagrams, %u leader(s) so far, ids 1..%u",
	       s->o.n, (unsigned long long)sim_now_ms(s),
	       (double)sim_now_ms(s) / H, (unsigned long long)s->datagrams,
	       terms, max_id);
	/* A cold start numbers the nodes 1..n, nothing left over. */
	EXPECT_EQ(s->o.n, max_id);
	sim_free(s);
}

/*
 * Every daemon started within 2H of the lowest MAC's, each heard by it
 * before it leads: its first table holds them all, numbered 1..n in MAC
 * order, and no later table renumbers anyone.  Several seeds: the boots
 * fall anywhere in the spread.
 */
TEST(cold_start_within_2h_numbers_in_mac_order)
{
	uint64_t seed;

	for (seed = 1; seed <= 8; seed++) {
		struct sim_opts o = { .n = 32, .seed = seed,
				      .start_spread_ms = 2 * H - 4 * LATENCY };
		struct sim *s = cluster(_metadata, &o);
		uint32_t k, terms = 0;

		for (k = 0; k < o.n; k++) {
			EXPECT_EQ(k + 1, sim_id(s, s->by_mac[k]))
				TH_LOG("seed %llu: MAC number %u has id %u",
				       (unsigned long long)seed, k + 1,
				       sim_id(s, s->by_mac[k]));
			terms += s->node[k].leading;
		}
		EXPECT_EQ(1, terms);
		sim_free(s);
	}
}

TEST(heavy_loss_duplication_and_reordering)
{
	struct sim_opts o = { .n = 64, .seed = 2, .loss_ppm = 10 * PPM,
			      .dup_ppm = 5 * PPM, .lat_min_us = 50,
			      .lat_max_us = 20000 };
	struct sim *s = cluster(_metadata, &o);

	TH_LOG("64 nodes, 10%% loss, 5%% duplicated, 50 us to 20 ms: converged at %llu ms",
	       (unsigned long long)sim_now_ms(s));
	sim_free(s);
}

/*
 * Kill three members at once; time until no survivor routes them.  Each
 * lost chunk or HELLO may cost a survivor one resend more.
 */
static void members_die(struct __test_metadata *_metadata, uint32_t loss_ppm,
			uint32_t resends)
{
	struct sim_opts o = { .n = 64, .seed = 3 + loss_ppm, .loss_ppm = loss_ppm };
	struct sim *s = cluster(_metadata, &o);
	uint32_t victim[3], id[3], i, *ids;
	uint64_t t0, gone[3] = { 0 }, limit;

	limit = sim_bound(s, MAPD_BOUND_DEAD) + resends * sim_bound(s, MAPD_BOUND_RESEND) +
		POLL + LATENCY;
	ids = sim_ids(s);
	sim_pick(s, 3, victim);
	for (i = 0; i < 3; i++) {
		id[i] = sim_id(s, victim[i]);
		sim_kill(s, victim[i]);
	}
	t0 = sim_now_ms(s);
	while (sim_now_ms(s) < t0 + 3 * limit) {
		sim_run_for(s, POLL);
		for (i = 0; i < 3; i++)
			if (!gone[i] && !sim_anyone_routes(s, id[i]))
				gone[i] = sim_now_ms(s) - t0;
		if (gone[0] && gone[1] && gone[2])
			break;
	}
	for (i = 0; i < 3; i++) {
		TH_LOG("loss %u ppm: id %u withdrawn everywhere %llu ms after its death (bound %llu)",
		       loss_ppm, id[i], (unsigned long long)gone[i],
		       (unsigned long long)limit);
		EXPECT_NE(0, gone[i]);
		EXPECT_LE(gone[i], limit);
	}
	converge(_metadata, s, 5000);
	/* The survivors' ids did not move. */
	for (i = 0; i < s->o.n; i++)
		if (s->node[i].up)
			EXPECT_EQ(ids[i], sim_id(s, i));
	free(ids);
	sim_free(s);
}

TEST(dead_members_withdrawn_within_bound)
{
	members_die(_metadata, 0, 0);
}

TEST(dead_members_withdrawn_within_bound_under_loss)
{
	members_die(_metadata, 2 * PPM, 3);
}

/*
 * Kill the leader; time until every survivor follows one new leader,
 * has its table, and routes the old one no more.
 */
static void leader_dies(struct __test_metadata *_metadata, uint32_t loss_ppm,
			uint32_t resends)
{
	struct sim_opts o = { .n = 64, .seed = 5 + loss_ppm, .loss_ppm = loss_ppm };
	struct sim *s = cluster(_metadata, &o);
	int32_t old = sim_leader(s), now_leads = -1;
	uint32_t old_id = sim_id(s, old), i;
	uint64_t t0, t = 0, limit;

	limit = sim_bound(s, MAPD_BOUND_ELECTION) + sim_bound(s, MAPD_BOUND_SWITCH) +
		resends * sim_bound(s, MAPD_BOUND_RESEND) + POLL + LATENCY;
	sim_kill(s, old);
	t0 = sim_now_ms(s);
	while (!t && sim_now_ms(s) < t0 + 3 * limit) {
		struct mapd_status ref, st;
		bool done = !sim_anyone_routes(s, old_id) && sim_leaders(s) == 1;

		sim_run_for(s, POLL);
		now_leads = sim_leader(s);
		if (!done || now_leads < 0)
			continue;
		mapd_get_status(s->node[now_leads].m, &ref);
		for (i = 0; done && i < s->o.n; i++) {
			if (!s->node[i].up)
				continue;
			mapd_get_status(s->node[i].m, &st);
			done = st.term == ref.term && st.version == ref.version &&
			       !memcmp(st.table_leader, ref.mac, 6);
		}
		if (done)
			t = sim_now_ms(s) - t0;
	}
	TH_LOG("loss %u ppm: node %d took over from node %d, its table everywhere %llu ms after the death (bound %llu)",
	       loss_ppm, now_leads, old, (unsigned long long)t,
	       (unsigned long long)limit);
	EXPECT_NE(0, t);
	EXPECT_LE(t, limit);
	converge(_metadata, s, 5000);
	sim_free(s);
}

TEST(dead_leader_replaced_within_bound)
{
	leader_dies(_metadata, 0, 0);
}

TEST(dead_leader_replaced_within_bound_under_loss)
{
	leader_dies(_metadata, 2 * PPM, 3);
}

TEST(graceful_leave_withdraws_at_once)
{
	struct sim_opts o = { .n = 32, .seed = 7 };
	struct sim *s = cluster(_metadata, &o);
	uint32_t k, id;
	uint64_t t0;

	sim_pick(s, 1, &k);
	id = sim_id(s, k);
	sim_stop(s, k);
	t0 = sim_now_ms(s);
	while (sim_anyone_routes(s, id) && sim_now_ms(s) < t0 + D)
		sim_run_for(s, POLL);
	TH_LOG("a node that said LEAVE: withdrawn after %llu ms (a tick is %u)",
	       (unsigned long long)(sim_now_ms(s) - t0), TICK);
	EXPECT_LE(sim_now_ms(s) - t0, TICK + POLL + LATENCY);
	converge(_metadata, s, 3000);
	sim_free(s);
}

/* Reboots (a new boot id each) within dead_ms and after; same ids. */
TEST(rebooted_nodes_keep_their_ids)
{
	struct sim_opts o = { .n = 64, .seed = 8, .loss_ppm = PPM };
	struct sim *s = cluster(_metadata, &o);
	uint32_t *ids = sim_ids(s), k[4], i;
	uint64_t boot[4];

	sim_pick(s, 4, k);
	for (i = 0; i < 4; i++) {
		boot[i] = s->node[k[i]].boot_id;
		sim_kill(s, k[i]);
	}
	/* Two come back before anyone counts them dead. */
	sim_run_for(s, D / 4);
	sim_boot(s, k[0]);
	sim_boot(s, k[1]);
	sim_run_for(s, D + 4 * H);
	/* The other two are gone from every route table by now. */
	EXPECT_FALSE(sim_anyone_routes(s, ids[k[2]]));
	EXPECT_FALSE(sim_anyone_routes(s, ids[k[3]]));
	sim_boot(s, k[2]);
	sim_boot(s, k[3]);
	converge(_metadata, s, 5000);
	for (i = 0; i < s->o.n; i++)
		EXPECT_EQ(ids[i], sim_id(s, i));
	for (i = 0; i < 4; i++)
		EXPECT_NE(boot[i], s->node[k[i]].boot_id);
	free(ids);
	sim_free(s);
}

/* The leader reboots: another leads meanwhile, then it takes over again. */
TEST(rebooted_leader_keeps_ids_and_leads_again)
{
	struct sim_opts o = { .n = 64, .seed = 9, .loss_ppm = PPM };
	struct sim *s = cluster(_metadata, &o);
	uint32_t *ids = sim_ids(s), i;
	int32_t lead = sim_leader(s);

	sim_kill(s, lead);
	sim_run_for(s, D + 4 * H);
	EXPECT_NE(lead, sim_leader(s));
	EXPECT_FALSE(sim_anyone_routes(s, ids[lead]));
	sim_boot(s, lead);
	converge(_metadata, s, 5000);
	EXPECT_EQ(lead, sim_leader(s));
	for (i = 0; i < s->o.n; i++)
		EXPECT_EQ(ids[i], sim_id(s, i));
	free(ids);
	sim_free(s);
}

/* A restarted daemon (same boot id, routes on the NIC) changes no route. */
TEST(daemon_restart_changes_no_route)
{
	struct sim_opts o = { .n = 32, .seed = 10 };
	struct sim *s = cluster(_metadata, &o);
	uint64_t ops = 0, after = 0;
	uint32_t i, *ids = sim_ids(s);
	int32_t lead = sim_leader(s);

	for (i = 0; i < s->o.n; i++)
		ops += s->node[i].route_ops;
	/* The leader's, for the most churn: it steps down and back. */
	sim_restart_daemon(s, lead);
	converge(_metadata, s, 5000);
	for (i = 0; i < s->o.n; i++) {
		after += s->node[i].route_ops;
		EXPECT_EQ(ids[i], sim_id(s, i));
	}
	EXPECT_EQ(ops, after);
	EXPECT_EQ(lead, sim_leader(s));
	free(ids);
	sim_free(s);
}

/*
 * The leader's daemon dies (SIGKILL: no LEAVE) and is started again once
 * the others have counted it dead.  Having the lowest MAC, it takes the
 * table as a member and leads again at its next tick, which can come
 * before every member's HELLO does: under a VM host's load they come tens
 * of milliseconds late, so the latencies here are 10 to 100 ms.  A member
 * it has not heard yet has been silent for less than dead_ms as far as it
 * can tell, so the table it publishes must keep it ALIVE: no node may
 * lose a live node's route, even for a moment, or messages in flight to
 * it come back unreachable.
 */
TEST(restarted_leader_withdraws_no_live_route)
{
	struct sim_opts o = { .n = 32, .seed = 14, .lat_min_us = 10000,
			      .lat_max_us = 100000 };
	struct sim *s = cluster(_metadata, &o);
	int32_t lead = sim_leader(s);
	uint32_t i, j, lost = 0, *ids = sim_ids(s);
	uint64_t t0, first = 0;

	sim_kill(s, lead);
	sim_run_for(s, D + 4 * H);
	ASSERT_NE(lead, sim_leader(s));
	sim_restart_daemon(s, lead);
	t0 = sim_now_ms(s);
	while (sim_now_ms(s) < t0 + 2 * D) {
		sim_run_for(s, POLL);
		for (i = 0; i < s->o.n; i++)
			for (j = 0; j < s->o.n; j++)
				if (i != j && i != (uint32_t)lead &&
				    j != (uint32_t)lead &&
				    !sim_has_route(s, i, ids[j], NULL)) {
					lost++;
					first = first ? first : sim_now_ms(s);
				}
	}
	TH_LOG("the restarted leader's takeover: %u live routes missing, the first %llu ms after its start",
	       lost, (unsigned long long)(first ? first - t0 : 0));
	EXPECT_EQ(0, lost);
	converge(_metadata, s, 5000);
	EXPECT_EQ(lead, sim_leader(s));
	for (i = 0; i < s->o.n; i++)
		EXPECT_EQ(ids[i], sim_id(s, i));
	free(ids);
	sim_free(s);
}

/*
 * A member's daemon does not run for 1.5 dead_ms (its VM starved by the
 * host), while everyone else goes on.  The others count it dead, rightly:
 * it said nothing.  But when it runs again its first tick comes before it
 * has read the HELLOs that queued up meanwhile, and the silence it sees
 * was its own: it must count nobody dead, lead nothing, and keep every
 * route it had.
 */
TEST(stalled_member_counts_nobody_dead)
{
	struct sim_opts o = { .n = 16, .seed = 15 };
	struct sim *s = cluster(_metadata, &o);
	uint32_t k, j, lost = 0, leading, *ids = sim_ids(s);
	uint64_t t0;

	sim_pick(s, 1, &k);
	leading = s->node[k].leading;
	sim_stall(s, k, D + D / 2);
	t0 = sim_now_ms(s);
	while (sim_now_ms(s) < t0 + 3 * D) {
		sim_run_for(s, POLL);
		for (j = 0; j < s->o.n; j++)
			if (j != k && !sim_has_route(s, k, ids[j], NULL))
				lost++;
	}
	TH_LOG("a member stalled for %u ms: %u of its routes missing in %u looks, led %u times",
	       D + D / 2, lost, 3 * D / POLL, s->node[k].leading - leading);
	EXPECT_EQ(0, lost);
	EXPECT_EQ(leading, s->node[k].leading);
	converge(_metadata, s, 5000);
	for (j = 0; j < s->o.n; j++)
		EXPECT_EQ(ids[j], sim_id(s, j));
	free(ids);
	sim_free(s);
}

/*
 * systemctl restart: the daemon says LEAVE, and the new one starts on the
 * same boot a moment later.  It is back within a few heartbeats, not
 * after its peers forget the one that left, with the same id and no
 * route changed but its own withdrawal and return.
 */
TEST(daemon_restart_after_leave_is_back_at_once)
{
	struct sim_opts o = { .n = 32, .seed = 13 };
	struct sim *s = cluster(_metadata, &o);
	uint32_t k, id;
	uint64_t t0;

	sim_pick(s, 1, &k);
	id = sim_id(s, k);
	sim_stop(s, k);
	sim_run_for(s, H);
	EXPECT_FALSE(sim_anyone_routes(s, id));
	t0 = sim_now_ms(s);
	sim_restart_daemon(s, k);
	converge(_metadata, s, D);
	TH_LOG("restarted after a LEAVE: back everywhere after %llu ms",
	       (unsigned long long)(sim_now_ms(s) - t0));
	EXPECT_EQ(id, sim_id(s, k));
	sim_free(s);
}

/* Every up node of partition @g agrees on one leader and one version. */
static bool side_agrees(struct sim *s, uint32_t g)
{
	struct mapd_status ref = { 0 }, st;
	uint32_t i, leaders = 0;
	bool first = true;

	for (i = 0; i < s->o.n; i++) {
		if (!s->node[i].up || s->node[i].group != g)
			continue;
		mapd_get_status(s->node[i].m, &st);
		if (!first && (memcmp(st.leader, ref.leader, 6) ||
			       st.term != ref.term || st.version != ref.version))
			return false;
		if (first)
			ref = st;
		first = false;
		leaders += st.is_leader;
	}
	return leaders == 1;
}

static bool sides_agree(struct sim *s, uint64_t within_ms)
{
	uint64_t end = sim_now_ms(s) + within_ms;

	while (sim_now_ms(s) < end) {
		sim_run_for(s, 50);
		if (side_agrees(s, 0) && side_agrees(s, 1))
			return true;
	}
	return false;
}

/*
 * Two halves, each with a leader and newcomers the other half never sees:
 * two on the far side, one of which dies there, then one on the near side,
 * which gets the lowest free id as the far side's first newcomer did.
 * After the heal: one leader, one table, the original ids unchanged, the
 * near newcomer's id kept and the far one's clashing id moved, and the
 * dead one's id waiting for it (the far leader's MERGE), which it gets
 * back when it boots.
 */
TEST(partition_heals_to_one_leader_and_one_table)
{
	struct sim_opts o = { .n = 67, .booted = 64, .seed = 11,
			      .loss_ppm = PPM };
	struct sim *s = cluster(_metadata, &o);
	uint32_t *ids = sim_ids(s), group[67], i, near = 64, far = 65;
	uint32_t doomed = 66, doomed_id, near_id, far_id;
	int32_t lead = sim_leader(s);
	struct mapd_entry e;

	for (i = 0; i < 64; i++)
		group[i] = sim_rand(s) % 2;
	group[lead] = 0;
	group[near] = 0;
	group[far] = 1;
	group[doomed] = 1;
	sim_partition(s, group);
	sim_run_for(s, D + 2 * H);
	sim_boot(s, far);
	sim_run_for(s, 2 * H);
	sim_boot(s, doomed);
	sim_boot(s, near);
	ASSERT_TRUE(sides_agree(s, 10000));
	near_id = sim_id(s, near);
	far_id = sim_id(s, far);
	doomed_id = sim_id(s, doomed);
	TH_LOG("partitioned: newcomers got %u (near), %u (far), %u (far, dies)",
	       near_id, far_id, doomed_id);
	ASSERT_EQ(near_id, far_id);
	ASSERT_NE(near_id, doomed_id);
	sim_kill(s, doomed);
	sim_run_for(s, D + 2 * H);
	ASSERT_TRUE(sides_agree(s, 5000));

	sim_heal(s);
	converge(_metadata, s, 10000);
	EXPECT_EQ(1, sim_leaders(s));
	EXPECT_EQ(lead, sim_leader(s));
	for (i = 0; i < 64; i++)
		EXPECT_EQ(ids[i], sim_id(s, i));
	EXPECT_EQ(near_id, sim_id(s, near));
	EXPECT_NE(far_id, sim_id(s, far));
	ASSERT_TRUE(sim_entry(s, lead, s->node[doomed].mac, &e));
	TH_LOG("healed at %llu ms: far newcomer now %u; the dead one is %s with %u",
	       (unsigned long long)sim_now_ms(s), sim_id(s, far),
	       e.state == MAPD_DEAD ? "DEAD" : "not DEAD", e.id);
	EXPECT_EQ(MAPD_DEAD, e.state);
	EXPECT_EQ(doomed_id, e.id);
	sim_boot(s, doomed);
	converge(_metadata, s, 5000);
	EXPECT_EQ(doomed_id, sim_id(s, doomed));
	free(ids);
	sim_free(s);
}

/*
 * Ten rounds of partitions into two or three groups, with deaths and
 * reboots while split: after every heal, exactly one leader and one
 * table, and nobody's id moved.
 */
TEST(random_partitions_heal_to_one_leader)
{
	struct sim_opts o = { .n = 48, .seed = 12, .loss_ppm = 2 * PPM,
			      .dup_ppm = PPM };
	struct sim *s = cluster(_metadata, &o);
	uint32_t *ids = sim_ids(s), group[48], round, i;

	for (round = 0; round < 10; round++) {
		uint32_t groups = 2 + round % 2;
		uint64_t t0;

		for (i = 0; i < s->o.n; i++)
			group[i] = sim_rand(s) % groups;
		sim_partition(s, group);
		sim_run_for(s, H + sim_rand(s) % (3 * D));
		for (i = 0; i < 3; i++) {
			uint32_t k = sim_rand(s) % s->o.n;

			if (s->node[k].up)
				sim_kill(s, k);
			else
				sim_boot(s, k);
		}
		sim_run_for(s, sim_rand(s) % (2 * D));
		sim_heal(s);
		t0 = sim_now_ms(s);
		converge(_metadata, s, 15000);
		TH_LOG("round %u: %u groups, one leader again %llu ms after the heal",
		       round, groups, (unsigned long long)(sim_now_ms(s) - t0));
		EXPECT_EQ(1, sim_leaders(s));
		for (i = 0; i < s->o.n; i++)
			if (s->node[i].up)
				EXPECT_EQ(ids[i], sim_id(s, i));
	}
	free(ids);
	sim_free(s);
}

/*
 * Chaos, twenty seeds: forty nodes, two of them configured with one id,
 * 3% loss, 2% duplicated, latencies to 30 ms, a cap just above the
 * cluster; rounds of up to six random events (deaths, reboots, clean
 * stops, daemon restarts, partitions into two to four groups, heals, the
 * leader's death) a random time apart, then a heal: every round must end
 * converged.
 */
TEST_F_TIMEOUT(long_run, chaos_converges_after_every_round, 300)
{
	uint32_t group[40], seed, rounds = 0;

	for (seed = 100; seed < 120; seed++) {
		struct sim_opts o = { .n = 40, .seed = seed, .loss_ppm = 3 * PPM,
				      .dup_ppm = 2 * PPM, .lat_min_us = 50,
				      .lat_max_us = 30000,
				      .start_spread_ms = 3000,
				      .max_members = 42 };
		struct sim *s = sim_new(&o);
		uint32_t round, e, i;

		s->node[1].nic_id_cfg = 7;
		s->node[2].nic_id_cfg = 7;
		for (round = 0; round < 15; round++, rounds++) {
			uint32_t events = 1 + sim_rand(s) % 6;

			for (e = 0; e < events; e++) {
				uint32_t k = sim_rand(s) % 40, g;
				int32_t lead;

				switch (sim_rand(s) % 6) {
				case 0:
					if (s->node[k].up)
						sim_kill(s, k);
					else
						sim_boot(s, k);
					break;
				case 1:
					if (s->node[k].up)
						sim_stop(s, k);
					break;
				case 2:
					if (s->node[k].up)
						sim_restart_daemon(s, k);
					break;
				case 3:
					g = 2 + sim_rand(s) % 3;
					for (i = 0; i < 40; i++)
						group[i] = sim_rand(s) % g;
					sim_partition(s, group);
					break;
				case 4:
					sim_heal(s);
					break;
				case 5:
					lead = sim_leader(s);
					if (lead >= 0)
						sim_kill(s, lead);
					break;
				}
				sim_run_for(s, sim_rand(s) % 1500);
			}
			sim_heal(s);
			converge(_metadata, s, 20000);
		}
		sim_free(s);
	}
	TH_LOG("%u rounds of chaos, each converged after its heal", rounds);
}

TEST_HARNESS_MAIN
