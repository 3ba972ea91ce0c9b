// SPDX-License-Identifier: GPL-2.0
/*
 * The core's entry points: datagrams in, ticks, the election and the
 * HELLOs (mapd.h describes the protocol).  Per datagram the work is a
 * decode, a hash lookup and, for a table chunk, 55 entries; per tick it is
 * a pass over the peers and, on the leader, one reconcile: both bounded by
 * max_members.
 */
#include <errno.h>
#include <stdlib.h>

#include "core.h"

const uint8_t mapd_broadcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

static void apply_defaults(struct mapd_config *c)
{
	if (!c->heartbeat_ms)
		c->heartbeat_ms = MAPD_HEARTBEAT_MS;
	if (!c->dead_ms)
		c->dead_ms = MAPD_DEAD_MS;
	if (!c->max_members)
		c->max_members = MAPD_MAX_MEMBERS;
}

const char *mapd_config_error(const struct mapd_config *cfg)
{
	struct mapd_config c = *cfg;

	apply_defaults(&c);
	if (!mapd_mac_unicast(c.mac))
		return "the NIC's address is not a unicast Ethernet address";
	if (!c.boot_id)
		return "the boot id is zero";
	if (c.nic_id > MAPD_MAX_ID || c.nic_id_now > MAPD_MAX_ID)
		return "the NIC id is past 65535";
	if (c.heartbeat_ms < 20 || c.heartbeat_ms > 60000)
		return "the heartbeat must be 20 ms to 60 s";
	/* Two HELLOs lost in a row must not make a node dead. */
	if (c.dead_ms < 3 * c.heartbeat_ms || c.dead_ms > 600000)
		return "dead_ms must be at least 3 heartbeats, and at most 600 s";
	if (c.max_members < 2 || c.max_members > MAPD_MAX_MEMBERS)
		return "max_members must be 2 to 4096";
	return NULL;
}

void mapd_destroy(struct mapd *m)
{
	if (!m)
		return;
	mapd_view_free(&m->view);
	free(m->inst.e);
	free(m->pend.e);
	free(m->next.e);
	free(m->stage);
	free(m->cls);
	free(m->routes);
	free(m->routes_next);
	free(m->idx);
	free(m->idx2);
	free(m->ids);
	free(m);
}

struct mapd *mapd_create(const struct mapd_config *cfg,
			 const struct mapd_ops *ops, void *ctx, uint64_t now)
{
	struct mapd *m;
	size_t cap;

	if (mapd_config_error(cfg))
		return NULL;
	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->cfg = *cfg;
	apply_defaults(&m->cfg);
	m->ops = *ops;
	m->ctx = ctx;
	cap = m->cfg.max_members;
	/* inst, pend and next trade buffers: all three the same size. */
	m->inst.e = calloc(cap, sizeof(*m->inst.e));
	m->pend.e = calloc(cap, sizeof(*m->pend.e));
	m->next.e = calloc(cap, sizeof(*m->next.e));
	m->stage = calloc(cap, sizeof(*m->stage));
	m->cls = calloc(2 * cap, 1);
	/* Failed deletions stay beside the new routes: twice the table. */
	m->routes = calloc(2 * cap, sizeof(*m->routes));
	m->routes_next = calloc(2 * cap, sizeof(*m->routes_next));
	m->idx = calloc(cap + 1, sizeof(*m->idx));
	m->idx2 = calloc(cap + 1, sizeof(*m->idx2));
	m->ids = calloc((MAPD_MAX_ID + 1) / 64, sizeof(*m->ids));
	if (!m->inst.e || !m->pend.e || !m->next.e || !m->stage || !m->cls ||
	    !m->routes ||
	    !m->routes_next || !m->idx || !m->idx2 || !m->ids ||
	    mapd_view_init(&m->view, m->cfg.max_members, m->cfg.hash_key)) {
		mapd_destroy(m);
		return NULL;
	}
	m->tick_ms = m->cfg.heartbeat_ms / 4;
	m->discovery_ms = 2 * m->cfg.heartbeat_ms;
	m->resend_ms = m->cfg.heartbeat_ms / 2;
	m->retry_ms = 4 * m->cfg.heartbeat_ms;
	m->suspect_ms = 2 * m->cfg.heartbeat_ms;
	m->forget_ms = 2 * m->cfg.dead_ms;
	m->now = now;
	m->started = now;
	m->next_tick = now;
	m->next_hello = now;
	m->next_retry = now + m->retry_ms;
	m->applied_id = m->cfg.nic_id_now;
	return m;
}

void mapd_emit(struct mapd *m, struct mapd_event *ev)
{
	if (m->ops.event)
		m->ops.event(m->ctx, ev);
}

static bool candidate(const struct mapd *m, const struct mapd_peer *p)
{
	return (p->flags & MAPD_HELLO_ELIGIBLE) && mapd_peer_alive(m, p);
}

static void set_leader(struct mapd *m, const uint8_t *mac)
{
	bool self = mac && mapd_is_self(m, mac);

	/* Tell the new leader at once, so it knows whom to send its table. */
	if (mac && (!m->have_leader || mapd_mac_cmp(mac, m->leader)))
		m->hello_now = true;
	m->have_leader = mac != NULL;
	if (mac)
		memcpy(m->leader, mac, 6);
	if (self && !m->am_leader) {
		/* pend becomes the hint buffer, see leader.c */
		m->am_leader = true;
		m->nmerge = 0;
		m->takeover = true;
		m->pending = false;
		m->nhints = 0;
	} else if (!self && m->am_leader) {
		m->am_leader = false;
		m->takeover = false;
		m->nhints = 0;
		m->merge_due = true;
		/*
		 * Now, not at the tick: the new leader takes MERGE hints only
		 * from a node that said it stepped down (leader.c), and this
		 * HELLO must be on its way before this node installs the new
		 * leader's table and stops saying so.
		 */
		mapd_send_hello(m, mapd_broadcast);
	}
}

/* The lowest MAC of the eligible nodes believed alive, this one included. */
void mapd_elect(struct mapd *m)
{
	const uint8_t *best = m->eligible ? m->cfg.mac : NULL;
	uint32_t i;

	for (i = 0; i < m->view.n; i++) {
		const struct mapd_peer *p = &m->view.peer[i];

		if (candidate(m, p) && (!best || mapd_mac_cmp(p->mac, best) < 0))
			best = p->mac;
	}
	set_leader(m, best);
}

void mapd_send_hello(struct mapd *m, const uint8_t to[6])
{
	struct mapd_hello h = {
		.term = m->inst.term,
		.version = m->inst.version,
	};
	size_t len;

	if (m->inst.term)
		memcpy(h.leader, m->inst.leader, 6);
	if (m->have_leader)
		memcpy(h.follows, m->leader, 6);
	if (m->eligible)
		h.flags |= MAPD_HELLO_ELIGIBLE;
	if (m->am_leader)
		h.flags |= MAPD_HELLO_LEADER;
	if (m->cfg.nic_id != MAPD_NO_ID) {
		h.flags |= MAPD_HELLO_CONFIGURED;
		h.id = m->cfg.nic_id;
	} else if (m->self_id != MAPD_NO_ID) {
		h.flags |= MAPD_HELLO_HAS_ID;
		h.id = m->self_id;
	}
	len = mapd_wire_hello(m->buf, m->cfg.boot_id, &h);
	m->ops.send(m->ctx, to, m->buf, len);
	m->stats.tx_hello++;
}

/*
 * A leader that stepped down says so: its HELLO follows this node while
 * its installed table is still its own.  Its MERGE hints are taken for
 * dead_ms from then, once per incarnation; nobody else's are, so a host
 * that says HELLO cannot fill the table with made-up dead entries by
 * sending MERGE after MERGE.
 */
static void merge_window(struct mapd *m, struct mapd_peer *p,
			 const struct mapd_msg *msg)
{
	const struct mapd_hello *h = &msg->hello;

	if (!m->am_leader || !h->term || p->merge_boot == msg->boot ||
	    mapd_mac_cmp(h->leader, p->mac) || !mapd_is_self(m, h->follows))
		return;
	p->merge_boot = msg->boot;
	p->merge_until = m->now + m->cfg.dead_ms;
	p->merges = 0;
}

static void on_hello(struct mapd *m, const uint8_t src[6],
		     const struct mapd_msg *msg)
{
	const struct mapd_hello *h = &msg->hello;
	struct mapd_peer *p = mapd_view_find(&m->view, src);
	bool fresh = false;

	if (!p) {
		p = mapd_view_add(&m->view, src);
		if (!p) {
			m->stats.rx_dropped++;
			return;
		}
		p->boot = msg->boot;
		fresh = true;
	} else if (p->boot != msg->boot) {
		/* Still in flight from before the reboot we already saw? */
		if (msg->boot == p->prev_boot) {
			m->stats.rx_stale++;
			return;
		}
		p->prev_boot = p->boot;
		p->boot = msg->boot;
		p->gone = false;
		fresh = true;
	} else if (p->gone) {
		/*
		 * A HELLO overtaken by the LEAVE is stale; one well after it
		 * is the daemon started again on the same boot.
		 */
		if (m->now - p->left_at < m->resend_ms) {
			m->stats.rx_stale++;
			return;
		}
		p->gone = false;
		fresh = true;
	} else if (!mapd_peer_alive(m, p)) {
		fresh = true;
	}
	p->last_heard = m->now;
	p->dead = false;
	p->term = h->term;
	p->version = h->version;
	memcpy(p->leader, h->leader, 6);
	memcpy(p->follows, h->follows, 6);
	p->id = h->id;
	p->flags = h->flags;
	merge_window(m, p, msg);
	/*
	 * The term a HELLO reports feeds nothing here: anyone can say any
	 * term, and one near MAPD_TERM_LIMIT would stop every term after it.
	 */

	/* The election, kept current without a pass over every peer. */
	if (candidate(m, p)) {
		if (!m->have_leader || mapd_mac_cmp(p->mac, m->leader) < 0)
			set_leader(m, p->mac);
	} else if (m->have_leader && !mapd_mac_cmp(p->mac, m->leader)) {
		mapd_elect(m);
	}
	if (m->am_leader)
		mapd_leader_heard(m, p, fresh);
}

static void on_leave(struct mapd *m, const uint8_t src[6],
		     const struct mapd_msg *msg)
{
	struct mapd_peer *p = mapd_view_find(&m->view, src);

	if (!p || p->boot != msg->boot || p->gone) {
		m->stats.rx_stale++;
		return;
	}
	p->gone = true;
	p->left_at = m->now;
	if (m->have_leader && !mapd_mac_cmp(p->mac, m->leader))
		mapd_elect(m);
}

void mapd_input(struct mapd *m, uint64_t now, const uint8_t src[6],
		const void *buf, size_t len)
{
	struct mapd_msg msg;

	if (now > m->now)
		m->now = now;
	m->stats.rx++;
	if (!mapd_mac_unicast(src) || mapd_is_self(m, src) ||
	    mapd_wire_decode(buf, len, &msg) != MAPD_WIRE_OK) {
		m->stats.rx_bad++;
		return;
	}
	switch (msg.type) {
	case MAPD_MSG_HELLO:
		on_hello(m, src, &msg);
		break;
	case MAPD_MSG_TABLE:
		mapd_member_table(m, src, &msg);
		break;
	case MAPD_MSG_MERGE:
		mapd_leader_merge(m, src, &msg);
		break;
	case MAPD_MSG_LEAVE:
		on_leave(m, src, &msg);
		break;
	}
}

/* What a pass over the peers found. */
struct sweep {
	bool eligible_peer;		/* an alive peer is eligible */
	bool lower_peer;		/* an alive peer has a lower MAC */
};

/* Peers past dead_ms stop counting, past forget_ms they leave the view. */
static void expire_peers(struct mapd *m, struct sweep *sw)
{
	uint32_t i;

	memset(sw, 0, sizeof(*sw));
	for (i = m->view.n; i-- > 0;) {
		struct mapd_peer *p = &m->view.peer[i];

		if (mapd_peer_alive(m, p)) {
			sw->eligible_peer |= p->flags & MAPD_HELLO_ELIGIBLE;
			sw->lower_peer |= mapd_mac_cmp(p->mac, m->cfg.mac) < 0;
			continue;
		}
		p->dead = true;
		if (m->now - p->last_heard >= m->forget_ms)
			mapd_view_remove(&m->view, i);
	}
}

/*
 * This process did not run for @gap ms: a tick is that late.  What the
 * peers sent meanwhile may still be queued, unread, so their silence in
 * that time is ours, not theirs: it does not count against them, nor
 * against the cold start's listening.  Without this a daemon starved for
 * dead_ms (a VM whose host is busy) would count every peer dead at its
 * next tick, take over as leader and withdraw every route it has.
 */
static void not_running(struct mapd *m, uint64_t gap)
{
	struct mapd_event ev = { .kind = MAPD_EV_STALLED, .count = gap };
	uint32_t i;

	for (i = 0; i < m->view.n; i++) {
		struct mapd_peer *p = &m->view.peer[i];

		p->last_heard = p->last_heard + gap < m->now ?
				p->last_heard + gap : m->now;
	}
	m->started = m->started + gap < m->now ? m->started + gap : m->now;
	/* A VM's host that is merely busy skips a few hundred ms often. */
	if (gap >= m->cfg.dead_ms / 2)
		mapd_emit(m, &ev);
}

/*
 * A cold start: nobody has a table, nobody is eligible.  The node with the
 * lowest MAC it hears becomes eligible after discovery_ms and leads; the
 * others wait for its table, so the cluster starts with one leader rather
 * than a handful that each number the nodes their own way.  A lower MAC
 * that never becomes eligible (a broken or hostile host) holds the others
 * back for dead_ms more at most.
 */
static void cold_start(struct mapd *m, const struct sweep *sw)
{
	uint64_t waited = m->now - m->started;

	if (m->eligible || sw->eligible_peer || waited < m->discovery_ms)
		return;
	if (sw->lower_peer && waited < m->discovery_ms + m->cfg.dead_ms)
		return;
	m->eligible = true;
	m->hello_now = true;
}

uint64_t mapd_tick(struct mapd *m, uint64_t now)
{
	if (now > m->now)
		m->now = now;
	if (m->now >= m->next_tick) {
		struct sweep sw;

		/* Due every H/4: a heartbeat late is not a busy loop. */
		if (m->now - m->next_tick > m->cfg.heartbeat_ms)
			not_running(m, m->now - m->next_tick);
		expire_peers(m, &sw);
		cold_start(m, &sw);
		m->next_tick = m->now + m->tick_ms;
		mapd_elect(m);
		if (m->am_leader)
			mapd_leader_tick(m);
		else if (m->nmerge && m->now >= m->merge_at)
			mapd_send_merge(m, false);
		if (m->now >= m->next_retry) {
			m->next_retry = m->now + m->retry_ms;
			if (m->routes_retry)
				mapd_routes_sync(m);
			else
				mapd_apply_id(m);
		}
	}
	if (m->now >= m->next_hello || m->hello_now) {
		m->hello_now = false;
		m->next_hello = m->now + m->cfg.heartbeat_ms;
		mapd_send_hello(m, mapd_broadcast);
	}
	return m->next_tick < m->next_hello ? m->next_tick : m->next_hello;
}

void mapd_leave(struct mapd *m, uint64_t now)
{
	size_t len = mapd_wire_leave(m->buf, m->cfg.boot_id);

	if (now > m->now)
		m->now = now;
	/* Twice: one loss should not cost the others dead_ms. */
	m->ops.send(m->ctx, mapd_broadcast, m->buf, len);
	m->ops.send(m->ctx, mapd_broadcast, m->buf, len);
}

uint64_t mapd_bound_ms(const struct mapd *m, enum mapd_bound b)
{
	switch (b) {
	case MAPD_BOUND_DEAD:
	case MAPD_BOUND_ELECTION:
		return m->cfg.dead_ms + m->tick_ms;
	case MAPD_BOUND_RESEND:
		return m->cfg.heartbeat_ms + m->tick_ms;
	case MAPD_BOUND_SWITCH:
		return m->resend_ms + m->tick_ms;
	}
	return 0;
}

void mapd_get_status(const struct mapd *m, struct mapd_status *st)
{
	memset(st, 0, sizeof(*st));
	memcpy(st->mac, m->cfg.mac, 6);
	st->have_leader = m->have_leader;
	if (m->have_leader)
		memcpy(st->leader, m->leader, 6);
	st->is_leader = m->am_leader;
	st->eligible = m->eligible;
	st->refused = m->refused;
	st->id = m->self_id;
	st->term = m->inst.term;
	st->version = m->inst.version;
	memcpy(st->table_leader, m->inst.leader, 6);
	st->entries = m->inst.n;
	st->peers = m->view.n;
	st->routes = m->nroutes;
	st->heartbeat_ms = m->cfg.heartbeat_ms;
	st->dead_ms = m->cfg.dead_ms;
	st->stats = m->stats;
}

static enum mapd_local_state local_state(const struct mapd *m, uint64_t now,
					 const struct mapd_member *mb)
{
	switch (mb->e.state) {
	case MAPD_DEAD:
		return MAPD_LOCAL_DEAD;
	case MAPD_CONFLICT:
		return MAPD_LOCAL_REFUSED;
	case MAPD_ALIVE:
		if (mb->self || (mb->heard && now - mb->last_heard < m->suspect_ms))
			return MAPD_LOCAL_ALIVE;
		return MAPD_LOCAL_SUSPECT;
	}
	return MAPD_LOCAL_JOINING;
}

static void fill_heard(const struct mapd *m, struct mapd_member *mb)
{
	const struct mapd_peer *p = mapd_view_find(&m->view, mb->e.mac);

	mb->self = mapd_is_self(m, mb->e.mac);
	mb->heard = p && !p->gone;
	mb->last_heard = p ? p->last_heard : 0;
}

void mapd_foreach_member(const struct mapd *m, uint64_t now,
			 mapd_member_fn fn, void *arg)
{
	struct mapd_member mb;
	uint32_t i;

	for (i = 0; i < m->inst.n; i++) {
		memset(&mb, 0, sizeof(mb));
		mb.e = m->inst.e[i];
		fill_heard(m, &mb);
		mb.local = local_state(m, now, &mb);
		fn(arg, &mb);
	}
	if (mapd_table_find(&m->inst, m->cfg.mac) < 0) {
		memset(&mb, 0, sizeof(mb));
		memcpy(mb.e.mac, m->cfg.mac, 6);
		mb.e.boot = m->cfg.boot_id;
		mb.self = true;
		mb.local = MAPD_LOCAL_JOINING;
		fn(arg, &mb);
	}
	for (i = 0; i < m->view.n; i++) {
		const struct mapd_peer *p = &m->view.peer[i];

		if (!mapd_peer_alive(m, p) || mapd_table_find(&m->inst, p->mac) >= 0)
			continue;
		memset(&mb, 0, sizeof(mb));
		memcpy(mb.e.mac, p->mac, 6);
		mb.e.boot = p->boot;
		mb.heard = true;
		mb.last_heard = p->last_heard;
		mb.local = MAPD_LOCAL_JOINING;
		fn(arg, &mb);
	}
}
