// SPDX-License-Identifier: GPL-2.0
/*
 * Taking the leader's table: chunks assembled into a version, the version
 * checked whole, then installed: what changed is reported, this node's id
 * applied, and the NIC's routes made the table's.
 */
#include <errno.h>

#include "core.h"

static bool newer(uint32_t term, uint32_t version, const struct mapd_table *t)
{
	return term > t->term || (term == t->term && version > t->version);
}

static void pend_start(struct mapd *m, const uint8_t leader[6],
		       const struct mapd_msg *msg)
{
	m->pending = true;
	m->pend_got = 0;
	memset(m->pend_have, 0, sizeof(m->pend_have));
	memcpy(m->pend.leader, leader, 6);
	m->pend.boot = msg->boot;
	m->pend.term = msg->table.term;
	m->pend.version = msg->table.version;
	m->pend.n = msg->table.entries;
}

/*
 * Whether a table from the node this one follows replaces the installed
 * one.  A leader's own tables go by (term, version); a table from another
 * leader, or another incarnation of it, is taken whatever its term, since
 * this node elected its publisher: terms of different leaders are not
 * compared, so two halves of a healed partition at one term converge, and
 * a term nobody can go past (MAPD_TERM_LIMIT) stops nothing.
 */
static bool replaces(const struct mapd *m, const uint8_t src[6],
		     const struct mapd_msg *msg)
{
	if (mapd_mac_cmp(src, m->inst.leader) || msg->boot != m->inst.boot)
		return true;
	return newer(msg->table.term, msg->table.version, &m->inst);
}

/*
 * A TABLE chunk.  Only the node this one believes leads may send one, as
 * the incarnation this one heard; anything else is a stale or forged
 * table and goes.  Chunks of one version may come in any order and any
 * number of times; a newer version abandons the one being assembled.
 */
void mapd_member_table(struct mapd *m, const uint8_t src[6],
		       const struct mapd_msg *msg)
{
	const struct mapd_peer *p;
	uint32_t i, base, chunk = msg->table.chunk;
	uint64_t bit = 1ULL << (chunk % 64);

	if (m->am_leader || !m->have_leader || mapd_mac_cmp(src, m->leader)) {
		m->stats.rx_forged++;
		return;
	}
	p = mapd_view_find(&m->view, src);
	if (!p || p->boot != msg->boot || !replaces(m, src, msg)) {
		m->stats.rx_stale++;
		return;
	}
	if (msg->table.entries > m->cfg.max_members) {
		m->stats.tables_bad++;
		return;
	}
	if (!m->pending || mapd_mac_cmp(m->pend.leader, src) ||
	    newer(msg->table.term, msg->table.version, &m->pend)) {
		pend_start(m, src, msg);
	} else if (msg->table.term != m->pend.term ||
		   msg->table.version != m->pend.version) {
		m->stats.rx_stale++;
		return;
	} else if (msg->table.entries != m->pend.n) {
		m->stats.rx_bad++;
		return;
	}
	if (m->pend_have[chunk / 64] & bit)
		return;
	base = chunk * MAPD_CHUNK_ENTRIES;
	for (i = 0; i < msg->table.count; i++) {
		if (!mapd_wire_entry(msg->table.data, i, &m->pend.e[base + i])) {
			m->stats.tables_bad++;
			m->pending = false;
			return;
		}
	}
	m->pend_have[chunk / 64] |= bit;
	if (++m->pend_got < mapd_chunks(m->pend.n))
		return;
	m->pending = false;
	if (!mapd_table_check(&m->pend, m->idx)) {
		m->stats.tables_bad++;
		return;
	}
	mapd_install(m, &m->pend);
}

static void emit_entry(struct mapd *m, enum mapd_event_kind kind,
		       const struct mapd_entry *e, uint32_t old_id)
{
	struct mapd_event ev = { .kind = kind, .id = e->id, .old_id = old_id };

	memcpy(ev.mac, e->mac, 6);
	mapd_emit(m, &ev);
}

/* The first other entry of @t claiming @e's id, for a conflict's message. */
static const struct mapd_entry *rival(const struct mapd_table *t,
				      const struct mapd_entry *e)
{
	uint32_t i;

	for (i = 0; i < t->n; i++)
		if (t->e[i].id == e->id && mapd_mac_cmp(t->e[i].mac, e->mac))
			return &t->e[i];
	return e;
}

/* The entry that holds @e's id while @e's claim on it is refused, if any. */
static const struct mapd_entry *holder(const struct mapd_table *t,
				       const struct mapd_entry *e)
{
	uint32_t i;

	for (i = 0; i < t->n; i++)
		if (t->e[i].id == e->id && t->e[i].state != MAPD_CONFLICT)
			return &t->e[i];
	return NULL;
}

static void emit_conflict(struct mapd *m, const struct mapd_table *t,
			  const struct mapd_entry *e, enum mapd_event_kind kind)
{
	const struct mapd_entry *h = holder(t, e);
	struct mapd_event ev = { .kind = kind, .id = e->id };

	if (h)
		ev.kind = kind == MAPD_EV_REFUSED ? MAPD_EV_REFUSED_HELD :
			  MAPD_EV_HELD;
	memcpy(ev.mac, e->mac, 6);
	memcpy(ev.other, (h ? h : rival(t, e))->mac, 6);
	mapd_emit(m, &ev);
}

static void entry_changed(struct mapd *m, const struct mapd_table *t,
			  const struct mapd_entry *a,
			  const struct mapd_entry *b)
{
	switch (b->state) {
	case MAPD_ALIVE:
		if (a && a->state == MAPD_ALIVE && a->id != b->id)
			emit_entry(m, MAPD_EV_RENUMBERED, b, a->id);
		if (!a || a->state != MAPD_ALIVE)
			emit_entry(m, MAPD_EV_JOINED, b, 0);
		else if (a->boot != b->boot)
			emit_entry(m, MAPD_EV_REBOOTED, b, 0);
		break;
	case MAPD_DEAD:
		if (a && a->state != MAPD_DEAD)
			emit_entry(m, MAPD_EV_DIED, b, 0);
		break;
	case MAPD_CONFLICT:
		/*
		 * Once per id from the claimant with the lowest MAC; once per
		 * claimant when a live holder keeps the id.
		 */
		if ((!a || a->state != MAPD_CONFLICT || a->id != b->id) &&
		    (holder(t, b) || mapd_mac_cmp(b->mac, rival(t, b)->mac) < 0))
			emit_conflict(m, t, b, MAPD_EV_CONFLICT);
		break;
	}
}

/* One event per entry that changed between @old and @t. */
static void report_changes(struct mapd *m, const struct mapd_table *old,
			   const struct mapd_table *t)
{
	uint32_t i = 0, j = 0;

	while (i < old->n || j < t->n) {
		int c = i == old->n ? 1 : j == t->n ? -1 :
			mapd_mac_cmp(old->e[i].mac, t->e[j].mac);

		if (c < 0) {
			emit_entry(m, MAPD_EV_FORGOTTEN, &old->e[i++], 0);
		} else if (c > 0) {
			entry_changed(m, t, NULL, &t->e[j++]);
		} else {
			if (!mapd_entry_equal(&old->e[i], &t->e[j]))
				entry_changed(m, t, &old->e[i], &t->e[j]);
			i++;
			j++;
		}
	}
}

/* What @t says of this node: its id, or that its claim is refused. */
static void self_entry(struct mapd *m, const struct mapd_table *t)
{
	int32_t k = mapd_table_find(t, m->cfg.mac);
	const struct mapd_entry *e = k >= 0 ? &t->e[k] : NULL;
	bool mine = e && e->boot == m->cfg.boot_id;
	uint32_t id = mine && e->state == MAPD_ALIVE ? e->id : MAPD_NO_ID;
	bool refused = mine && e->state == MAPD_CONFLICT;

	if (refused && !m->refused)
		emit_conflict(m, t, e, MAPD_EV_REFUSED);
	m->refused = refused;
	if (id != m->self_id) {
		struct mapd_event ev = { .kind = MAPD_EV_SELF_ID, .id = id,
					 .old_id = m->self_id };

		m->self_id = id;
		m->hello_now = true;
		if (id != MAPD_NO_ID) {
			memcpy(ev.mac, m->cfg.mac, 6);
			mapd_emit(m, &ev);
		}
	}
}

/*
 * A leader that stepped down hands the one that took over the DEAD
 * entries its table lacks: nodes that died on this side of a partition,
 * whose ids should wait for them.  The new leader takes them only after
 * the HELLO that said this node stepped down (core.c sent it when it did),
 * which the first copy may overtake: they are sent now and again a tick
 * later, from stage (a leader's buffer, idle on a member).
 */
static void stage_merge(struct mapd *m, const struct mapd_table *t)
{
	uint32_t i;

	m->merge_due = false;
	m->nmerge = 0;
	for (i = 0; i < m->inst.n; i++) {
		const struct mapd_entry *e = &m->inst.e[i];

		if (e->state == MAPD_DEAD && mapd_table_find(t, e->mac) < 0)
			m->stage[m->nmerge++] = *e;
	}
	m->merge_at = m->now + m->tick_ms;
	mapd_send_merge(m, true);
}

void mapd_send_merge(struct mapd *m, bool again)
{
	const struct mapd_entry *batch[MAPD_CHUNK_ENTRIES];
	uint32_t i, k = 0;

	for (i = 0; i < m->nmerge && m->have_leader; i++) {
		batch[k++] = &m->stage[i];
		if (k == MAPD_CHUNK_ENTRIES || i + 1 == m->nmerge) {
			size_t len = mapd_wire_merge(m->buf, m->cfg.boot_id,
						     batch, k);

			m->ops.send(m->ctx, m->leader, m->buf, len);
			m->stats.tx_merge++;
			k = 0;
		}
	}
	if (!again)
		m->nmerge = 0;
}

void mapd_install(struct mapd *m, struct mapd_table *t)
{
	struct mapd_entry *old_e = m->inst.e;
	bool first = !m->inst.term;
	struct mapd_event ev = { .term = t->term, .version = t->version };

	if (first) {
		ev.kind = MAPD_EV_SYNCED;
		ev.count = t->n;
		mapd_emit(m, &ev);
	} else {
		report_changes(m, &m->inst, t);
	}
	if ((first || mapd_mac_cmp(m->inst.leader, t->leader)) &&
	    !mapd_is_self(m, t->leader)) {
		ev.kind = MAPD_EV_LEADER;
		memcpy(ev.mac, t->leader, 6);
		mapd_emit(m, &ev);
	}
	self_entry(m, t);
	if (m->merge_due && !mapd_is_self(m, t->leader))
		stage_merge(m, t);

	m->inst.e = t->e;
	m->inst.n = t->n;
	m->inst.term = t->term;
	m->inst.version = t->version;
	m->inst.boot = t->boot;
	memcpy(m->inst.leader, t->leader, 6);
	if (t->term > m->max_term)
		m->max_term = t->term;
	t->e = old_e;
	t->n = 0;
	m->stats.installs++;

	mapd_routes_sync(m);
	if (!m->eligible) {
		m->eligible = true;
		m->hello_now = true;
		mapd_elect(m);
	}
}

void mapd_apply_id(struct mapd *m)
{
	if (m->self_id == MAPD_NO_ID || m->self_id == m->applied_id)
		return;
	if (!m->ops.set_id(m->ctx, m->self_id))
		m->applied_id = m->self_id;
	else
		m->stats.route_errors++;
}

static int by_id(const void *ctx, uint32_t a, uint32_t b)
{
	const struct mapd_entry *e = ctx;

	return (int)e[a].id - (int)e[b].id;
}

/* A route the table wants where the NIC has @r: keep it as it is? */
static bool route_keeps(const struct mapd_route *r, const struct mapd_entry *d)
{
	return !mapd_mac_cmp(r->mac, d->mac) && (r->preset || r->boot == d->boot);
}

static void route_push(struct mapd *m, uint32_t *n, const struct mapd_entry *d)
{
	struct mapd_route *r = &m->routes_next[(*n)++];

	r->id = d->id;
	memcpy(r->mac, d->mac, 6);
	r->boot = d->boot;
	r->preset = false;
	r->del_failed = false;
}

static void route_add(struct mapd *m, uint32_t *n, const struct mapd_entry *d)
{
	if (!m->ops.route_add(m->ctx, d->id, d->mac)) {
		route_push(m, n, d);
	} else {
		m->routes_retry = true;
		m->stats.route_errors++;
	}
}

static void route_del(struct mapd *m, struct mapd_route *r)
{
	r->del_failed = m->ops.route_del(m->ctx, r->id) != 0;
	if (r->del_failed) {
		m->routes_retry = true;
		m->stats.route_errors++;
	}
}

/*
 * Make the NIC's routes the installed table's ALIVE entries but this
 * node's own, and its id the table's.  Every deletion goes before the id
 * and any addition: an id that moved to another MAC is deleted before it
 * is added again, this NIC takes an id only once it routes no peer by it,
 * and a NIC near max_peers makes room before it is asked for more.  A
 * route whose node rebooted is deleted and added, so what was in flight
 * to the old incarnation comes back unreachable instead of waiting out
 * retries.
 */
void mapd_routes_sync(struct mapd *m)
{
	const struct mapd_entry *e = m->inst.e;
	uint32_t *want = m->idx2, nwant = 0, pass, a, b, n = 0;
	struct mapd_route *swap;

	for (a = 0; a < m->inst.n; a++)
		if (e[a].state == MAPD_ALIVE && !mapd_is_self(m, e[a].mac))
			want[nwant++] = a;
	mapd_sort(want, nwant, by_id, e);
	m->routes_retry = false;

	for (pass = 0; pass < 2; pass++) {
		if (pass)
			mapd_apply_id(m);
		for (a = 0, b = 0; a < m->nroutes || b < nwant;) {
			struct mapd_route *r = a < m->nroutes ? &m->routes[a] : NULL;
			const struct mapd_entry *d = b < nwant ? &e[want[b]] : NULL;

			if (r && (!d || r->id < d->id)) {
				if (!pass)
					route_del(m, r);
				else if (r->del_failed)
					m->routes_next[n++] = *r;
				a++;
			} else if (!r || r->id > d->id) {
				/*
				 * The NIC still has the id the table gives
				 * another node (a placeholder, or an id this
				 * node is about to lose): the kernel would
				 * refuse it; try again when the id moves.
				 */
				if (pass && d->id == m->applied_id)
					m->routes_retry = true;
				else if (pass)
					route_add(m, &n, d);
				b++;
			} else {
				if (route_keeps(r, d)) {
					r->del_failed = false;
					if (pass)
						route_push(m, &n, d);
				} else if (!pass) {
					route_del(m, r);
				} else if (r->del_failed) {
					m->routes_next[n++] = *r;
				} else {
					route_add(m, &n, d);
				}
				a++;
				b++;
			}
		}
	}
	swap = m->routes;
	m->routes = m->routes_next;
	m->routes_next = swap;
	m->nroutes = n;
}

int mapd_preset_route(struct mapd *m, uint32_t peer_id, const uint8_t mac[6])
{
	uint32_t i;

	if (peer_id == MAPD_NO_ID || peer_id > MAPD_MAX_ID)
		return -EINVAL;
	for (i = 0; i < m->nroutes && m->routes[i].id < peer_id; i++)
		;
	if (i < m->nroutes && m->routes[i].id == peer_id)
		return -EEXIST;
	if (m->nroutes == m->cfg.max_members)
		return -ENOSPC;
	memmove(&m->routes[i + 1], &m->routes[i],
		(m->nroutes - i) * sizeof(*m->routes));
	m->nroutes++;
	memset(&m->routes[i], 0, sizeof(m->routes[i]));
	m->routes[i].id = peer_id;
	memcpy(m->routes[i].mac, mac, 6);
	m->routes[i].preset = true;
	return 0;
}
