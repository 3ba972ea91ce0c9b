// SPDX-License-Identifier: GPL-2.0
/*
 * The leader's side: every tick it rebuilds the table from what it hears
 * (reconcile()), and publishes a new version when that differs from the
 * installed one or its term had to go up.  A member that reports an older
 * version gets every chunk again, at most every resend_ms.
 *
 * reconcile() sorts each entry into a class, then settles each id:
 *   AC  alive, claims the id by configuration
 *   ACH alive, claims the id by configuration, and the table already
 *       gives it this id, ALIVE
 *   AI  alive, and the table already gave it this id
 *   AN  alive, brings an id from elsewhere (the other half of a healed
 *       partition) or has none yet
 *   DX  dead, in the table
 *   DH  dead, a MERGE hint from a leader that stepped down
 * Live ownership is sticky: an AI keeps its id, and every AC on it is
 * CONFLICT (refused to the claimant alone), since anyone on the segment
 * can say HELLO with a configured id and must not take a live node's.
 * Otherwise two or more AC/ACH on an id: all CONFLICT, nobody gets it (an
 * operator's mistake, shown on both).  One AC/ACH: it gets the id.
 * Otherwise the AN with the lowest MAC, or else the lowest DX, or else
 * the lowest DH.  Alive losers get the lowest free ids, in MAC order;
 * dead losers leave the table.
 */
#include "core.h"

enum cls { C_DROP, C_AC, C_ACH, C_AI, C_AN, C_DX, C_DH };

#define SELF_PEER	UINT32_MAX

/* What this node hears of @mac now; false if it is not alive. */
struct live {
	uint64_t boot;
	uint16_t id;			/* claimed or held; MAPD_NO_ID */
	bool configured;
};

static bool live_of(const struct mapd *m, const uint8_t mac[6],
		    struct live *l)
{
	const struct mapd_peer *p;

	if (mapd_is_self(m, mac)) {
		l->boot = m->cfg.boot_id;
		l->configured = m->cfg.nic_id != MAPD_NO_ID;
		l->id = l->configured ? m->cfg.nic_id : m->self_id;
		return true;
	}
	p = mapd_view_find(&m->view, mac);
	if (!p || !mapd_peer_alive(m, p))
		return false;
	l->boot = p->boot;
	l->configured = p->flags & MAPD_HELLO_CONFIGURED;
	l->id = p->flags & (MAPD_HELLO_CONFIGURED | MAPD_HELLO_HAS_ID) ?
		p->id : MAPD_NO_ID;
	return true;
}

/*
 * Not heard since this daemon started, less than dead_ms ago: as far as it
 * can tell, @mac has been silent for less than the dead_ms any node is
 * given.  A daemon restarted on the lowest MAC leads again at its first
 * tick after it has the table, which can be before every member's HELLO
 * has come; counting those dead would withdraw live nodes' routes, on
 * every node, for as long as it takes their HELLOs to arrive.
 */
static bool too_soon_to_tell(const struct mapd *m, const uint8_t mac[6])
{
	return m->now - m->started < m->cfg.dead_ms &&
	       !mapd_view_find(&m->view, mac);
}

/* The installed table's entries as they stand now, into next. */
static void carry_over(struct mapd *m)
{
	uint32_t i;

	m->next.n = 0;
	for (i = 0; i < m->inst.n; i++) {
		struct mapd_entry *e = &m->next.e[m->next.n];
		uint8_t *c = &m->cls[m->next.n];
		struct live l;

		*e = m->inst.e[i];
		if (e->state == MAPD_ALIVE && too_soon_to_tell(m, e->mac)) {
			/* As the table has it, until it is heard or D passes. */
			*c = e->flags & MAPD_ENTRY_CONFIGURED ? C_AC : C_AI;
			m->next.n++;
			continue;
		}
		if (!live_of(m, e->mac, &l)) {
			/* A refused claim held nothing to keep. */
			if (e->state == MAPD_CONFLICT)
				continue;
			e->state = MAPD_DEAD;
			*c = C_DX;
		} else if (l.configured) {
			*c = e->state == MAPD_ALIVE && e->id == l.id ?
			     C_ACH : C_AC;
			e->id = l.id;
			e->flags |= MAPD_ENTRY_CONFIGURED;
		} else {
			e->flags &= ~MAPD_ENTRY_CONFIGURED;
			*c = e->state == MAPD_CONFLICT ? C_AN : C_AI;
			if (e->state == MAPD_CONFLICT)
				e->id = MAPD_NO_ID;
		}
		if (*c != C_DX) {
			e->boot = l.boot;
			e->state = MAPD_ALIVE;
		}
		m->next.n++;
	}
}

static int newcomer_cmp(const void *ctx, uint32_t a, uint32_t b)
{
	const struct mapd *m = ctx;
	const uint8_t *ma = a == SELF_PEER ? m->cfg.mac : m->view.peer[a].mac;
	const uint8_t *mb = b == SELF_PEER ? m->cfg.mac : m->view.peer[b].mac;

	return mapd_mac_cmp(ma, mb);
}

static int hint_cmp(const void *ctx, uint32_t a, uint32_t b)
{
	const struct mapd_entry *e = ctx;

	return mapd_mac_cmp(e[a].mac, e[b].mac);
}

/* Merge the @n sorted entries in m->stage into the sorted next, in place. */
static void merge_staged(struct mapd *m, uint32_t n)
{
	struct mapd_entry *e = m->next.e, *stage = m->stage;
	uint8_t *cls = m->cls, *scls = cls + m->cfg.max_members;
	uint32_t i = m->next.n, j = n, k = m->next.n + n;

	while (j) {
		if (i && mapd_mac_cmp(e[i - 1].mac, stage[j - 1].mac) > 0) {
			e[--k] = e[--i];
			cls[k] = cls[i];
		} else {
			e[--k] = stage[--j];
			cls[k] = scls[j];
		}
	}
	m->next.n += n;
}

/* Room for @need more entries, making it from DEAD ones if it must. */
static uint32_t make_room(struct mapd *m, uint32_t need)
{
	uint32_t i, room = m->cfg.max_members - m->next.n, evicted = 0;

	/* A live node matters more than a dead one's reservation. */
	for (i = m->next.n; i-- > 0 && room + evicted < need;) {
		if (m->cls[i] == C_DX && !mapd_is_self(m, m->next.e[i].mac)) {
			m->cls[i] = C_DROP;
			evicted++;
		}
	}
	if (evicted) {
		uint32_t k = 0;

		for (i = 0; i < m->next.n; i++) {
			if (m->cls[i] == C_DROP)
				continue;
			m->next.e[k] = m->next.e[i];
			m->cls[k++] = m->cls[i];
		}
		m->next.n = k;
	}
	return m->cfg.max_members - m->next.n;
}

/* Alive nodes the table does not list yet, the lowest MACs first. */
static void admit_newcomers(struct mapd *m)
{
	struct mapd_entry *stage = m->stage;
	uint8_t *scls = m->cls + m->cfg.max_members;
	uint32_t *nc = m->idx, n = 0, i, room;

	if (mapd_table_find(&m->inst, m->cfg.mac) < 0)
		nc[n++] = SELF_PEER;
	for (i = 0; i < m->view.n; i++) {
		const struct mapd_peer *p = &m->view.peer[i];

		if (mapd_peer_alive(m, p) && mapd_table_find(&m->inst, p->mac) < 0)
			nc[n++] = i;
	}
	if (!n) {
		m->full_reported = 0;
		return;
	}
	mapd_sort(nc, n, newcomer_cmp, m);
	room = make_room(m, n);
	if (n > room && n - room != m->full_reported) {
		struct mapd_event ev = { .kind = MAPD_EV_FULL,
					 .count = n - room };

		mapd_emit(m, &ev);
	}
	m->full_reported = n > room ? n - room : 0;
	if (n > room)
		n = room;
	for (i = 0; i < n; i++) {
		const uint8_t *mac = nc[i] == SELF_PEER ? m->cfg.mac :
				     m->view.peer[nc[i]].mac;
		struct live l;

		live_of(m, mac, &l);
		memset(&stage[i], 0, sizeof(stage[i]));
		memcpy(stage[i].mac, mac, 6);
		stage[i].boot = l.boot;
		stage[i].id = l.id;
		stage[i].state = MAPD_ALIVE;
		stage[i].flags = l.configured ? MAPD_ENTRY_CONFIGURED : 0;
		scls[i] = l.configured ? C_AC : C_AN;
	}
	merge_staged(m, n);
}

/* MERGE hints for MACs the table lacks, while there is room. */
static void admit_hints(struct mapd *m)
{
	struct mapd_entry *stage = m->stage;
	uint8_t *scls = m->cls + m->cfg.max_members;
	const struct mapd_entry *h = m->pend.e;
	uint32_t *idx = m->idx, i, n = 0;
	uint32_t room = m->cfg.max_members - m->next.n;

	for (i = 0; i < m->nhints; i++)
		idx[i] = i;
	mapd_sort(idx, m->nhints, hint_cmp, h);
	for (i = 0; i < m->nhints && n < room; i++) {
		const struct mapd_entry *e = &h[idx[i]];

		if ((n && !mapd_mac_cmp(stage[n - 1].mac, e->mac)) ||
		    mapd_table_find(&m->next, e->mac) >= 0)
			continue;
		stage[n] = *e;
		scls[n++] = C_DH;
	}
	m->nhints = 0;
	merge_staged(m, n);
}

static int by_id_mac(const void *ctx, uint32_t a, uint32_t b)
{
	const struct mapd_entry *e = ctx;

	if (e[a].id != e[b].id)
		return (int)e[a].id - (int)e[b].id;
	return mapd_mac_cmp(e[a].mac, e[b].mac);
}

static bool cls_alive(uint8_t c)
{
	return c == C_AC || c == C_ACH || c == C_AI || c == C_AN;
}

static bool cls_claims(uint8_t c)
{
	return c == C_AC || c == C_ACH;
}

/* Settle the entries sharing one id, idx[from..to), sorted by MAC. */
static void settle_id(struct mapd *m, const uint32_t *idx, uint32_t from,
		      uint32_t to)
{
	static const uint8_t order[] = { C_AI, C_AN, C_DX, C_DH };
	struct mapd_entry *e = m->next.e;
	uint32_t i, k, ac = 0, winner = UINT32_MAX;
	bool held = false;

	for (i = from; i < to; i++) {
		ac += cls_claims(m->cls[idx[i]]);
		held |= m->cls[idx[i]] == C_AI;
	}
	for (k = 0; (!ac || held) && k < sizeof(order) && winner == UINT32_MAX;
	     k++)
		for (i = from; i < to && winner == UINT32_MAX; i++)
			if (m->cls[idx[i]] == order[k])
				winner = idx[i];
	for (i = from; i < to; i++) {
		uint32_t x = idx[i];

		if (cls_claims(m->cls[x]))
			e[x].state = ac > 1 || held ? MAPD_CONFLICT :
				     MAPD_ALIVE;
		else if (x == winner)
			continue;
		else if (cls_alive(m->cls[x]))
			e[x].id = MAPD_NO_ID;
		else
			m->cls[x] = C_DROP;
	}
}

static void id_set(uint64_t *ids, uint32_t id)
{
	ids[id / 64] |= 1ULL << (id % 64);
}

static bool id_used(const uint64_t *ids, uint32_t id)
{
	return ids[id / 64] & (1ULL << (id % 64));
}

static void settle_ids(struct mapd *m)
{
	struct mapd_entry *e = m->next.e;
	uint32_t *idx = m->idx, n = 0, i, j, k, cursor = 1;

	for (i = 0; i < m->next.n; i++)
		if (e[i].id != MAPD_NO_ID)
			idx[n++] = i;
	mapd_sort(idx, n, by_id_mac, e);
	for (i = 0; i < n; i = j) {
		for (j = i; j < n && e[idx[j]].id == e[idx[i]].id; j++)
			;
		settle_id(m, idx, i, j);
	}

	memset(m->ids, 0, (MAPD_MAX_ID + 1) / 8);
	id_set(m->ids, MAPD_NO_ID);
	for (i = 0; i < m->next.n; i++)
		if (m->cls[i] != C_DROP && e[i].id != MAPD_NO_ID)
			id_set(m->ids, e[i].id);
	for (i = 0, k = 0; i < m->next.n; i++) {
		if (m->cls[i] == C_DROP)
			continue;
		if (e[i].id == MAPD_NO_ID) {
			/* max_members < MAPD_MAX_ID: never runs out */
			while (id_used(m->ids, cursor))
				cursor++;
			e[i].id = cursor;
			id_set(m->ids, cursor);
		}
		e[k] = e[i];
		m->cls[k++] = m->cls[i];
	}
	m->next.n = k;
}

/* The table as it should be now, into m->next. */
static void reconcile(struct mapd *m)
{
	carry_over(m);
	admit_newcomers(m);
	admit_hints(m);
	settle_ids(m);
}

static void publish(struct mapd *m)
{
	uint32_t c, chunks = mapd_chunks(m->inst.n);

	for (c = 0; c < chunks; c++) {
		size_t len = mapd_wire_table(m->buf, m->cfg.boot_id,
					     m->inst.term, m->inst.version,
					     m->inst.n, c, m->inst.e);

		m->ops.send(m->ctx, mapd_broadcast, m->buf, len);
		m->stats.tx_table++;
	}
	m->sent_at = m->now;
	m->resend = false;
}

/*
 * The (term, version) of this leader's next table.  A takeover goes one
 * term above every table this node installed; at MAPD_TERM_LIMIT the term
 * stays, which is safe since members compare terms only between tables of
 * one leader.  The version goes above both the installed table's and the
 * last this node published, so a member still holding an older table of
 * this leader takes the new one even at the limit.
 */
static void next_term(struct mapd *m, uint32_t *term, uint32_t *version)
{
	uint32_t v = m->inst.version > m->pub_version ? m->inst.version :
		     m->pub_version;

	*term = m->inst.term;
	if (m->takeover)
		*term = m->max_term + 1 < MAPD_TERM_LIMIT ? m->max_term + 1 :
			MAPD_TERM_LIMIT - 1;
	if (v == UINT32_MAX && *term + 1 < MAPD_TERM_LIMIT) {
		++*term;
		v = 0;
	}
	*version = v == UINT32_MAX ? v : v + 1;
}

void mapd_leader_tick(struct mapd *m)
{
	uint32_t term, version;

	reconcile(m);
	if (m->takeover || !mapd_table_same(&m->next, &m->inst)) {
		next_term(m, &term, &version);
		if (m->takeover) {
			struct mapd_event ev = { .kind = MAPD_EV_LEADING,
						 .term = term };

			memcpy(ev.mac, m->cfg.mac, 6);
			mapd_emit(m, &ev);
			mapd_send_hello(m, mapd_broadcast);
			m->takeover = false;
		}
		m->next.term = term;
		m->next.version = version;
		m->next.boot = m->cfg.boot_id;
		memcpy(m->next.leader, m->cfg.mac, 6);
		m->pub_version = version;
		mapd_install(m, &m->next);
		m->stats.publishes++;
		publish(m);
	} else if (m->resend && m->now - m->sent_at >= m->resend_ms) {
		m->stats.resends++;
		publish(m);
	}
}

/*
 * A HELLO reached the leader.  A node heard for the first time gets a
 * HELLO straight back; a node that follows us but holds another leader's
 * table, or an older one of ours, lost a chunk or followed its old leader
 * when we published: it gets the table again.
 */
void mapd_leader_heard(struct mapd *m, const struct mapd_peer *p, bool fresh)
{
	if (fresh)
		mapd_send_hello(m, p->mac);
	if (!mapd_is_self(m, p->follows))
		return;
	if (!mapd_is_self(m, p->leader) || p->term < m->inst.term ||
	    (p->term == m->inst.term && p->version < m->inst.version))
		m->resend = true;
}

/* MERGE hints from a leader that stepped down, for the next reconcile. */
void mapd_leader_merge(struct mapd *m, const uint8_t src[6],
		       const struct mapd_msg *msg)
{
	struct mapd_peer *p = mapd_view_find(&m->view, src);
	struct mapd_entry e;
	uint32_t i;

	/*
	 * Only in the window core.c opened when @src said it stepped down,
	 * and no more datagrams than a whole table's chunks, twice.
	 */
	if (!m->am_leader || !p || !mapd_peer_alive(m, p) ||
	    p->boot != msg->boot || p->merge_boot != msg->boot ||
	    m->now >= p->merge_until ||
	    p->merges >= 2 * mapd_chunks(m->cfg.max_members)) {
		m->stats.rx_forged++;
		return;
	}
	p->merges++;
	for (i = 0; i < msg->merge.count; i++) {
		if (!mapd_wire_entry(msg->merge.data, i, &e)) {
			m->stats.rx_bad++;
			return;
		}
	}
	for (i = 0; i < msg->merge.count && m->nhints < m->cfg.max_members; i++) {
		mapd_wire_entry(msg->merge.data, i, &e);
		if (e.state == MAPD_DEAD && mapd_table_find(&m->inst, e.mac) < 0)
			m->pend.e[m->nhints++] = e;
	}
}
