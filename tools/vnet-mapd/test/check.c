// SPDX-License-Identifier: GPL-2.0
/*
 * What "converged" means for the simulated cluster (sim.h), and the
 * questions the tests ask of it.  The cheap checks (who leads, which
 * version) go first, so that a cluster still converging costs a pass
 * over the nodes; the table and every NIC's routes are compared only
 * once those agree.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

struct table_copy {
	struct mapd_entry *e;
	uint32_t n;
	uint64_t hash;
};

static void copy_fn(void *arg, const struct mapd_member *mb)
{
	struct table_copy *t = arg;
	const struct mapd_entry *e = &mb->e;

	if (!e->state)
		return;
	if (t->e)
		t->e[t->n] = *e;
	t->n++;
	t->hash = (t->hash ^ e->boot ^ ((uint64_t)e->id << 48) ^
		   ((uint64_t)e->state << 40) ^ ((uint64_t)e->mac[4] << 8) ^
		   e->mac[5] ^ ((uint64_t)e->mac[0] << 32)) *
		  0x100000001b3ULL;
}

static bool fail(char *why, uint32_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return false;
}

static bool agree(struct sim *s, struct mapd_status *ref, char *why,
		  uint32_t len)
{
	uint32_t i, leaders = 0;
	bool first = true;

	for (i = 0; i < s->o.n; i++) {
		struct mapd_status st;

		if (!s->node[i].up)
			continue;
		mapd_get_status(s->node[i].m, &st);
		if (!st.have_leader)
			return fail(why, len, "node %u has no leader", i);
		if (first) {
			*ref = st;
			first = false;
		} else if (memcmp(st.leader, ref->leader, 6)) {
			return fail(why, len, "node %u follows %02x%02x, another %02x%02x",
				    i, st.leader[4], st.leader[5],
				    ref->leader[4], ref->leader[5]);
		} else if (st.term != ref->term || st.version != ref->version ||
			   memcmp(st.table_leader, ref->table_leader, 6)) {
			return fail(why, len, "node %u has table %u.%u, another %u.%u",
				    i, st.term, st.version, ref->term,
				    ref->version);
		}
		leaders += st.is_leader;
	}
	if (first)
		return fail(why, len, "no node is up");
	if (leaders != 1)
		return fail(why, len, "%u nodes lead", leaders);
	if (memcmp(ref->table_leader, ref->leader, 6))
		return fail(why, len, "the table is not the leader's");
	return true;
}

/* The table against the nodes: who is up, with which boot and id. */
static bool table_matches(struct sim *s, const struct table_copy *t,
			  int32_t *listed, char *why, uint32_t len)
{
	uint64_t *ids = calloc(65536 / 64, sizeof(*ids));
	uint32_t i;
	bool ok = true;

	if (!ids)
		abort();
	for (i = 0; i < s->o.n; i++)
		listed[i] = -1;
	for (i = 0; i < t->n && ok; i++) {
		const struct mapd_entry *e = &t->e[i];
		int32_t k = sim_find(s, e->mac);
		const struct sim_node *n = k >= 0 ? &s->node[k] : NULL;
		bool live = n && n->up && n->boot_id == e->boot;

		if (e->state == MAPD_DEAD) {
			if (n && n->up)
				ok = fail(why, len, "node %d is up but DEAD", k);
			continue;
		}
		if (!live) {
			ok = fail(why, len, "entry %02x%02x is %s but not up",
				  e->mac[4], e->mac[5],
				  e->state == MAPD_ALIVE ? "ALIVE" : "CONFLICT");
			continue;
		}
		listed[k] = (int32_t)i;
		if (e->state != MAPD_ALIVE)
			continue;
		if (ids[e->id / 64] & (1ULL << (e->id % 64)))
			ok = fail(why, len, "id %u is ALIVE twice", e->id);
		ids[e->id / 64] |= 1ULL << (e->id % 64);
	}
	free(ids);
	for (i = 0; i < s->o.n && ok; i++)
		if (s->node[i].up && listed[i] < 0)
			ok = fail(why, len, "node %u is up but not listed", i);
	return ok;
}

/* Node @i: its table is @t, its id is its entry's, its routes the rest. */
static bool node_matches(struct sim *s, uint32_t i, const struct table_copy *t,
			 int32_t listed, uint32_t alive, char *why,
			 uint32_t len)
{
	const struct sim_node *n = &s->node[i];
	const struct mapd_entry *self = &t->e[listed];
	struct table_copy mine = { 0 };
	uint32_t want, j;

	mapd_foreach_member(n->m, sim_now_ms(s), copy_fn, &mine);
	if (mine.n != t->n || mine.hash != t->hash)
		return fail(why, len, "node %u's table differs", i);
	if (self->state == MAPD_ALIVE) {
		if (sim_id(s, i) != self->id || n->nic_id != self->id)
			return fail(why, len, "node %u: id %u, NIC %u, table %u",
				    i, sim_id(s, i), n->nic_id, self->id);
	} else if (sim_id(s, i) != MAPD_NO_ID) {
		return fail(why, len, "node %u refused but has id %u", i,
			    sim_id(s, i));
	}
	want = alive - (self->state == MAPD_ALIVE);
	/*
	 * A node refused an id a live node holds keeps it on its NIC (the
	 * operator's --nic-id), and the kernel routes no peer by the NIC's
	 * own id: the holder is the one node it cannot reach.
	 */
	for (j = 0; j < t->n && self->state == MAPD_CONFLICT; j++)
		if (t->e[j].state == MAPD_ALIVE && t->e[j].id == n->nic_id)
			want--;
	if (n->nroutes != want)
		return fail(why, len, "node %u has %u routes, not %u", i,
			    n->nroutes, want);
	for (j = 0; j < t->n; j++) {
		const struct mapd_entry *e = &t->e[j];

		if (e->state != MAPD_ALIVE || j == (uint32_t)listed ||
		    (self->state == MAPD_CONFLICT && e->id == n->nic_id))
			continue;
		if (!sim_has_route(s, i, e->id, e->mac))
			return fail(why, len, "node %u lacks the route to %u",
				    i, e->id);
	}
	return true;
}

bool sim_converged(struct sim *s, char *why, uint32_t len)
{
	struct table_copy t = { 0 };
	struct mapd_status ref;
	int32_t lead, *listed;
	uint32_t i, alive = 0;
	bool ok;

	if (!agree(s, &ref, why, len))
		return false;
	lead = sim_find(s, ref.leader);
	if (lead < 0 || !s->node[lead].up)
		return fail(why, len, "the leader is not a node that is up");
	t.e = calloc(s->o.max_members, sizeof(*t.e));
	listed = calloc(s->o.n, sizeof(*listed));
	if (!t.e || !listed)
		abort();
	mapd_foreach_member(s->node[lead].m, sim_now_ms(s), copy_fn, &t);
	ok = table_matches(s, &t, listed, why, len);
	for (i = 0; i < t.n; i++)
		alive += t.e[i].state == MAPD_ALIVE;
	for (i = 0; i < s->o.n && ok; i++)
		if (s->node[i].up)
			ok = node_matches(s, i, &t, listed[i], alive, why, len);
	if (ok && s->anomalies)
		ok = fail(why, len, "%s", s->anomaly);
	free(t.e);
	free(listed);
	return ok;
}

int64_t sim_run_until_converged(struct sim *s, uint64_t limit_ms,
				uint64_t step_ms, char *why, uint32_t len)
{
	while (sim_now_ms(s) < limit_ms) {
		sim_run_for(s, step_ms);
		if (sim_converged(s, why, len))
			return (int64_t)sim_now_ms(s);
	}
	return -1;
}

uint32_t sim_id(const struct sim *s, uint32_t i)
{
	struct mapd_status st;

	if (!s->node[i].up)
		return MAPD_NO_ID;
	mapd_get_status(s->node[i].m, &st);
	return st.id;
}

int32_t sim_leader(const struct sim *s)
{
	struct mapd_status st;
	int32_t lead = -1;
	uint32_t i;

	for (i = 0; i < s->o.n; i++) {
		int32_t k;

		if (!s->node[i].up)
			continue;
		mapd_get_status(s->node[i].m, &st);
		k = st.have_leader ? sim_find(s, st.leader) : -1;
		if (k < 0 || (lead >= 0 && k != lead))
			return -1;
		lead = k;
	}
	return lead;
}

uint32_t sim_leaders(const struct sim *s)
{
	struct mapd_status st;
	uint32_t i, n = 0;

	for (i = 0; i < s->o.n; i++) {
		if (!s->node[i].up)
			continue;
		mapd_get_status(s->node[i].m, &st);
		n += st.is_leader;
	}
	return n;
}

bool sim_has_route(const struct sim *s, uint32_t i, uint32_t peer_id,
		   const uint8_t *mac)
{
	static const uint8_t zero[6];
	const uint8_t *r;

	if (peer_id >= s->id_limit)
		return false;
	r = s->node[i].route[peer_id];
	return memcmp(r, zero, 6) && (!mac || !memcmp(r, mac, 6));
}

bool sim_anyone_routes(const struct sim *s, uint32_t peer_id)
{
	uint32_t i;

	for (i = 0; i < s->o.n; i++)
		if (s->node[i].up && sim_has_route(s, i, peer_id, NULL))
			return true;
	return false;
}

struct find_entry {
	const uint8_t *mac;
	struct mapd_entry e;
	bool found;
};

static void find_fn(void *arg, const struct mapd_member *mb)
{
	struct find_entry *f = arg;

	if (mb->e.state && !memcmp(mb->e.mac, f->mac, 6)) {
		f->e = mb->e;
		f->found = true;
	}
}

bool sim_entry(const struct sim *s, uint32_t i, const uint8_t mac[6],
	       struct mapd_entry *e)
{
	struct find_entry f = { .mac = mac };

	if (!s->node[i].up)
		return false;
	mapd_foreach_member(s->node[i].m, sim_now_ms(s), find_fn, &f);
	if (f.found)
		*e = f.e;
	return f.found;
}

void sim_pick(struct sim *s, uint32_t k, uint32_t *out)
{
	int32_t lead = sim_leader(s);
	uint32_t got = 0, i;

	while (got < k) {
		uint32_t c = sim_rand(s) % s->o.n;

		if (!s->node[c].up || (int32_t)c == lead)
			continue;
		for (i = 0; i < got && out[i] != c; i++)
			;
		if (i == got)
			out[got++] = c;
	}
}

uint64_t sim_bound(const struct sim *s, enum mapd_bound b)
{
	uint32_t i;

	for (i = 0; i < s->o.n; i++)
		if (s->node[i].up)
			return mapd_bound_ms(s->node[i].m, b);
	return 0;
}

uint32_t *sim_ids(const struct sim *s)
{
	uint32_t *ids = calloc(s->o.n, sizeof(*ids)), i;

	if (!ids)
		abort();
	for (i = 0; i < s->o.n; i++)
		ids[i] = sim_id(s, i);
	return ids;
}
