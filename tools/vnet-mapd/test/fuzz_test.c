// SPDX-License-Identifier: GPL-2.0
/*
 * One core fed a quarter of a million datagrams: valid HELLOs, LEAVEs and
 * tables from a pool of peers (some below its MAC, so they lead it, some
 * above, so it leads them when they are quiet), the same with a byte
 * changed, cut short or padded, and garbage, with time moving in random
 * steps.  After every one, whatever it accepted: its table keeps every
 * invariant, it holds no more than max_members of anything, and its NIC's
 * routes are exactly the table's other ALIVE entries.  ASan and UBSan
 * watch every read.
 */
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "wire.h"

#define POOL		80
#define CAP		64
#define ROUNDS		250000

struct fuzz {
	uint64_t rng;
	uint64_t now;
	uint8_t pool[POOL][6];
	uint64_t boot[POOL];
	uint32_t term, version;
	uint8_t (*route)[6];		/* by id */
	uint32_t nroutes;
	uint32_t nic_id;
	uint32_t bad_ops;
};

static uint64_t rnd(struct fuzz *f)
{
	uint64_t x = (f->rng += 0x9e3779b97f4a7c15ULL);

	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static const uint8_t zero[6];

static void op_send(void *ctx, const uint8_t to[6], const void *buf,
		    size_t len)
{
	struct mapd_msg msg;

	/* What the core sends must decode. */
	if (mapd_wire_decode(buf, len, &msg) != MAPD_WIRE_OK)
		((struct fuzz *)ctx)->bad_ops++;
}

static int op_route_add(void *ctx, uint32_t peer, const uint8_t mac[6])
{
	struct fuzz *f = ctx;

	if (!peer || peer > MAPD_MAX_ID || peer == f->nic_id) {
		f->bad_ops++;
		return -22;
	}
	if (!memcmp(f->route[peer], zero, 6))
		f->nroutes++;
	memcpy(f->route[peer], mac, 6);
	return 0;
}

static int op_route_del(void *ctx, uint32_t peer)
{
	struct fuzz *f = ctx;

	if (peer > MAPD_MAX_ID || !memcmp(f->route[peer], zero, 6)) {
		f->bad_ops++;
		return 0;
	}
	memset(f->route[peer], 0, 6);
	f->nroutes--;
	return 0;
}

static int op_set_id(void *ctx, uint32_t id)
{
	((struct fuzz *)ctx)->nic_id = id;
	return 0;
}

static const struct mapd_ops ops = {
	.send = op_send,
	.route_add = op_route_add,
	.route_del = op_route_del,
	.set_id = op_set_id,
};

static const uint8_t self_mac[6] = { 0x02, 0, 0, 0, 0, 40 };

static size_t hello(struct fuzz *f, uint8_t *buf, uint32_t k)
{
	static const uint8_t flags[] = {
		0, MAPD_HELLO_ELIGIBLE, MAPD_HELLO_ELIGIBLE | MAPD_HELLO_LEADER,
		MAPD_HELLO_ELIGIBLE | MAPD_HELLO_HAS_ID,
		MAPD_HELLO_CONFIGURED, MAPD_HELLO_ELIGIBLE | MAPD_HELLO_CONFIGURED,
	};
	struct mapd_hello h = { .flags = flags[rnd(f) % 6] };

	if (h.flags & (MAPD_HELLO_HAS_ID | MAPD_HELLO_CONFIGURED))
		h.id = 1 + rnd(f) % 100;
	if (rnd(f) % 2) {
		h.term = 1 + rnd(f) % (f->term + 2);
		h.version = 1 + rnd(f) % (f->version + 2);
		memcpy(h.leader, f->pool[rnd(f) % POOL], 6);
	}
	if (rnd(f) % 2)
		memcpy(h.follows, rnd(f) % 2 ? self_mac : f->pool[0], 6);
	return mapd_wire_hello(buf, f->boot[k], &h);
}

static int by_mac(const void *a, const void *b)
{
	return memcmp(a, b, 6);
}

/* A table that keeps the invariants, mostly; then its chunks, in turn. */
static struct mapd_entry table[2 * CAP];
static uint32_t table_n, table_chunk;

static void new_table(struct fuzz *f)
{
	uint32_t i, used[POOL + 1] = { 0 };

	table_n = 1 + rnd(f) % (CAP + 4);	/* a few too big */
	for (i = 0; i < table_n; i++) {
		struct mapd_entry *e = &table[i];
		uint32_t k = rnd(f) % (POOL + 1);

		while (used[k])
			k = (k + 1) % (POOL + 1);
		used[k] = 1;
		memset(e, 0, sizeof(*e));
		memcpy(e->mac, k == POOL ? self_mac : f->pool[k], 6);
		e->boot = k == POOL ? 1 : f->boot[k];
		e->id = i + 1 + (rnd(f) % 8 == 0 ? 1000 : 0);
		e->state = rnd(f) % 4 ? MAPD_ALIVE : MAPD_DEAD;
	}
	qsort(table, table_n, sizeof(table[0]), by_mac);
	/* Now and then a pair of refused claims, or one beside its holder. */
	if (table_n > 2 && rnd(f) % 4 == 0) {
		table[1].id = table[2].id;
		table[1].state = MAPD_CONFLICT;
		table[2].state = rnd(f) % 8 ? MAPD_CONFLICT : MAPD_ALIVE;
	}
	if (rnd(f) % 3)
		f->version++;
	else
		f->term++;
	table_chunk = 0;
}

static size_t chunk(struct fuzz *f, uint8_t *buf)
{
	uint32_t n = mapd_chunks(table_n);

	if (table_chunk >= n || rnd(f) % 16 == 0)
		new_table(f);
	n = mapd_chunks(table_n);
	return mapd_wire_table(buf, f->boot[rnd(f) % 4 ? 0 : 1], f->term,
			       f->version, table_n,
			       rnd(f) % 4 ? table_chunk++ : rnd(f) % n, table);
}

static size_t datagram(struct fuzz *f, uint8_t *buf, uint32_t *src)
{
	size_t len, i;

	*src = rnd(f) % 8 ? rnd(f) % 8 : rnd(f) % POOL;
	switch (rnd(f) % 8) {
	case 0:
		len = rnd(f) % (MAPD_MTU + 1);
		for (i = 0; i < len; i++)
			buf[i] = rnd(f);
		return len;
	case 1:
	case 2:
		len = hello(f, buf, *src);
		break;
	case 3:
		len = mapd_wire_leave(buf, f->boot[*src]);
		break;
	default:
		*src = rnd(f) % 8 ? 0 : rnd(f) % POOL;
		len = chunk(f, buf);
		break;
	}
	switch (rnd(f) % 8) {
	case 0:
		buf[rnd(f) % len] ^= 1 + rnd(f) % 255;
		break;
	case 1:
		len = rnd(f) % len;
		break;
	case 2:
		if (len < MAPD_MTU)
			buf[len++] = rnd(f);
		break;
	}
	return len;
}

struct seen {
	struct fuzz *f;
	struct mapd_entry prev;
	uint32_t n, alive, wrong;
	uint64_t ids[(MAPD_MAX_ID + 1) / 64];
};

static void check_fn(void *arg, const struct mapd_member *mb)
{
	struct seen *s = arg;
	const struct mapd_entry *e = &mb->e;

	if (!e->state)
		return;
	if (s->n && memcmp(s->prev.mac, e->mac, 6) >= 0)
		s->wrong++;
	s->prev = *e;
	s->n++;
	if (e->state != MAPD_ALIVE)
		return;
	if (s->ids[e->id / 64] & (1ULL << (e->id % 64)))
		s->wrong++;
	s->ids[e->id / 64] |= 1ULL << (e->id % 64);
	/*
	 * The NIC still has an id the table gives another (this node's entry
	 * left or was refused): the kernel routes no peer by the NIC's own id.
	 */
	if (mb->self || e->id == s->f->nic_id)
		return;
	s->alive++;
	if (memcmp(s->f->route[e->id], e->mac, 6))
		s->wrong++;
}

/* A few seconds under ASan: room for a loaded machine past the default 30. */
FIXTURE(long_run) {
	int unused;
};

FIXTURE_SETUP(long_run)
{
}

FIXTURE_TEARDOWN(long_run)
{
}

TEST_F_TIMEOUT(long_run, random_datagrams_into_one_core, 300)
{
	struct mapd_config cfg = { .boot_id = 1, .hash_key = 99,
				   .max_members = CAP };
	struct fuzz f = { .rng = 40, .now = 1000 };
	static struct seen seen;
	struct mapd_status st;
	uint8_t buf[MAPD_MTU];
	uint64_t installs = 0, led = 0;
	struct mapd *m;
	uint32_t i, src;

	f.route = calloc(MAPD_MAX_ID + 1, sizeof(*f.route));
	ASSERT_NE(NULL, f.route);
	for (i = 0; i < POOL; i++) {
		f.pool[i][0] = 0x02;
		f.pool[i][5] = 2 * i;	/* 0..39 below self, 41.. above */
		f.boot[i] = 1 + rnd(&f);
	}
	memcpy(cfg.mac, self_mac, 6);
	m = mapd_create(&cfg, &ops, &f, f.now);
	ASSERT_NE(NULL, m);
	for (i = 0; i < ROUNDS; i++) {
		size_t len = datagram(&f, buf, &src);
		uint8_t *copy = malloc(len ? len : 1);

		/* Exactly @len bytes on the heap: a read past them is caught. */
		ASSERT_NE(NULL, copy);
		memcpy(copy, buf, len);
		mapd_input(m, f.now, f.pool[src], copy, len);
		free(copy);
		if (rnd(&f) % 16 == 0) {
			f.now += rnd(&f) % 300;
			mapd_tick(m, f.now);
		}
		mapd_get_status(m, &st);
		ASSERT_GE(CAP, st.peers);
		ASSERT_GE(CAP, st.entries);
		memset(&seen, 0, sizeof(seen));
		seen.f = &f;
		mapd_foreach_member(m, f.now, check_fn, &seen);
		ASSERT_EQ(0, seen.wrong);
		ASSERT_EQ(seen.alive, f.nroutes);
		if (st.id)
			ASSERT_EQ(st.id, f.nic_id);
		ASSERT_EQ(0, f.bad_ops);
		installs = st.stats.installs;
		led += st.is_leader;
	}
	TH_LOG("%u datagrams: %llu malformed, %llu forged, %llu stale; %llu tables installed, %llu bad; led after %llu of them",
	       ROUNDS, (unsigned long long)st.stats.rx_bad,
	       (unsigned long long)st.stats.rx_forged,
	       (unsigned long long)st.stats.rx_stale,
	       (unsigned long long)installs,
	       (unsigned long long)st.stats.tables_bad,
	       (unsigned long long)led);
	/* The run went where it should: tables taken, some refused, led. */
	EXPECT_LT(100, installs);
	EXPECT_LT(20, st.stats.tables_bad);
	EXPECT_LT(0, led);
	mapd_destroy(m);
	free(f.route);
}

TEST_HARNESS_MAIN
