// SPDX-License-Identifier: GPL-2.0
/*
 * Hosts that do not play along: tables from nodes that do not lead, or
 * from the leader's address but another incarnation; garbage and almost
 * valid datagrams through a cold start; a flood of HELLOs from ten
 * thousand made-up addresses; and one core fed a quarter of a million
 * random and mutated datagrams, checked against its own table after each.
 */
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "cluster.h"
#include "wire.h"

/* A one-chunk table of @n entries that routes real ids to @to. */
static size_t forged_table(struct sim *s, uint8_t *buf, uint64_t boot,
			   uint32_t term, uint32_t n, const uint8_t to[6])
{
	struct mapd_entry e[MAPD_CHUNK_ENTRIES];
	uint32_t i;

	memset(e, 0, sizeof(e));
	for (i = 0; i < n; i++) {
		fake_mac(e[i].mac, 1000 + i);
		if (to && i == 0)
			memcpy(e[i].mac, to, 6);
		e[i].id = i + 1;
		e[i].boot = sim_rand(s) | 1;
		e[i].state = MAPD_ALIVE;
	}
	/* Sorted, as a real one would be, so only its source gives it away. */
	if (to && n > 1 && memcmp(e[0].mac, e[1].mac, 6) > 0)
		e[0].mac[0] = 0x02;
	return mapd_wire_table(buf, boot, term, 1, n, 0, e);
}

static void status_all(struct sim *s, struct mapd_status *st)
{
	uint32_t i;

	for (i = 0; i < s->o.n; i++)
		mapd_get_status(s->node[i].m, &st[i]);
}

TEST(tables_from_a_non_leader_are_ignored)
{
	struct sim_opts o = { .n = 32, .seed = 30 };
	struct sim *s = cluster(_metadata, &o);
	struct mapd_status before[32], after[32];
	int32_t lead = sim_leader(s);
	uint8_t buf[MAPD_MTU], host[6];
	uint32_t i, member;
	size_t len;

	status_all(s, before);
	sim_pick(s, 1, &member);
	fake_mac(host, 1);
	for (i = 0; i < 100; i++) {
		uint32_t term = before[0].term + 1 + i;

		/* From a host that is no member at all... */
		len = forged_table(s, buf, 0x1234, term, 40, host);
		sim_inject(s, host, bcast, buf, len);
		/* ...from a member, with its real boot id... */
		len = forged_table(s, buf, s->node[member].boot_id, term, 40,
				   s->node[member].mac);
		sim_inject(s, s->node[member].mac, bcast, buf, len);
		/* ...and from the leader's address, another incarnation. */
		len = forged_table(s, buf, s->node[lead].boot_id ^ 1, term, 40,
				   s->node[lead].mac);
		sim_inject(s, s->node[lead].mac, bcast, buf, len);
		sim_run_for(s, 10);
	}
	sim_run_for(s, 2 * H);
	status_all(s, after);
	for (i = 0; i < s->o.n; i++) {
		EXPECT_EQ(before[i].term, after[i].term);
		EXPECT_EQ(before[i].version, after[i].version);
		if (i != (uint32_t)member)
			EXPECT_LE(before[i].stats.rx_forged + 100,
				  after[i].stats.rx_forged);
		if (i != (uint32_t)lead)
			EXPECT_LE(before[i].stats.rx_stale + 100,
				  after[i].stats.rx_stale);
	}
	converge(_metadata, s, 1000);
	sim_free(s);
}

/* Random bytes, a valid header over random bytes, or a mutated datagram. */
static size_t garbage(struct sim *s, uint8_t *buf)
{
	uint64_t r = sim_rand(s);
	size_t len = sim_rand(s) % (MAPD_MTU + 1), i;
	struct mapd_hello h = { .flags = MAPD_HELLO_ELIGIBLE };

	for (i = 0; i < len; i++)
		buf[i] = sim_rand(s);
	switch (r % 4) {
	case 0:
		break;
	case 1:
		if (len >= MAPD_HDR_LEN)
			mapd_wire_leave(buf, sim_rand(s) | 1);
		if (len > 3)
			buf[3] = 1 + sim_rand(s) % 4;
		break;
	case 2:
		/* A real HELLO, cut short or padded. */
		mapd_wire_hello(buf, 7, &h);
		len = MAPD_HELLO_LEN + (sim_rand(s) % 2 ? 1 : -1) *
		      (1 + sim_rand(s) % 8);
		break;
	case 3:
		/* A real chunk with one byte changed. */
		len = forged_table(s, buf, 7, 3, 1 + sim_rand(s) % 55, NULL);
		buf[sim_rand(s) % len] ^= 1 + sim_rand(s) % 255;
		break;
	}
	return len;
}

TEST(garbage_through_a_cold_start)
{
	struct sim_opts o = { .n = 32, .seed = 31, .loss_ppm = PPM,
			      .start_spread_ms = H };
	struct sim *s = sim_new(&o);
	uint8_t buf[MAPD_MTU], host[6];
	uint64_t bad = 0, k;
	struct mapd_status st;
	uint32_t i;

	/* One a millisecond for five seconds, from made-up addresses. */
	for (k = 0; k < 5000; k++) {
		size_t len = garbage(s, buf);

		fake_mac(host, sim_rand(s) % 100);
		sim_inject(s, host, sim_rand(s) % 2 ? bcast : s->node[k % 32].mac,
			   buf, len);
		sim_run_for(s, 1);
	}
	converge(_metadata, s, D + 4 * H);
	for (i = 0; i < s->o.n; i++) {
		mapd_get_status(s->node[i].m, &st);
		bad += st.stats.rx_bad;
	}
	TH_LOG("5000 datagrams of garbage: %llu deliveries dropped as malformed",
	       (unsigned long long)bad);
	EXPECT_LT(30000, bad);
	sim_free(s);
}

/*
 * Ten thousand made-up nodes say HELLO within two seconds.  Nobody holds
 * more than max_members peers or entries at any time; once the flood
 * ends, the made-up ones die and are forgotten, and a real newcomer gets
 * in.
 */
TEST(hello_flood_is_bounded)
{
	struct sim_opts o = { .n = 17, .booted = 16, .seed = 32,
			      .max_members = 64 };
	struct sim *s = cluster(_metadata, &o);
	struct mapd_hello h = { 0 };
	uint8_t buf[MAPD_MTU], host[6];
	uint32_t k, i, most_peers = 0, most_entries = 0, full = 0;
	struct mapd_status st;

	for (k = 0; k < 10000; k++) {
		size_t len = mapd_wire_hello(buf, sim_rand(s) | 1, &h);

		fake_mac(host, 5000 + k);
		sim_inject(s, host, bcast, buf, len);
		if (k % 5)
			continue;
		sim_run_for(s, 1);
		for (i = 0; i < 16; i++) {
			mapd_get_status(s->node[i].m, &st);
			if (st.peers > most_peers)
				most_peers = st.peers;
			if (st.entries > most_entries)
				most_entries = st.entries;
		}
	}
	for (i = 0; i < 16; i++)
		full += s->node[i].full;
	TH_LOG("10000 made-up nodes: at most %u peers and %u entries held (max_members 64); %u \"table full\" reports",
	       most_peers, most_entries, full);
	EXPECT_GE(64, most_peers);
	EXPECT_GE(64, most_entries);
	EXPECT_LT(0, full);
	sim_boot(s, 16);
	converge(_metadata, s, 2 * D + D + 4 * H);
	EXPECT_NE(MAPD_NO_ID, sim_id(s, 16));
	sim_free(s);
}

TEST_HARNESS_MAIN
