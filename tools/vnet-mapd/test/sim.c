// SPDX-License-Identifier: GPL-2.0
/*
 * The simulated segment (sim.h).  One event heap holds every node's next
 * tick and every datagram in flight; a broadcast is one event delivered
 * to each node in turn, each delivery lost or not on its own.  Latencies
 * are drawn per datagram, so datagrams from one sender overtake each
 * other, and a duplicated one arrives twice at different times.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"
#include "wire.h"

enum { EV_WAKE, EV_DELIVER, EV_BOOT };

#define INJECTED	UINT32_MAX

struct sim_pkt {
	uint32_t refs;
	uint32_t src;			/* node, or INJECTED */
	uint32_t group;
	uint8_t from[6];
	uint8_t to[6];
	uint16_t len;
	uint8_t data[MAPD_MTU];
};

struct sim_ev {
	uint64_t t;
	uint64_t seq;
	uint32_t kind;
	uint32_t node;
	uint64_t gen;
	struct sim_pkt *pkt;
};

static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

uint64_t sim_rand(struct sim *s)
{
	uint64_t x = (s->rng += 0x9e3779b97f4a7c15ULL);

	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static bool ev_before(const struct sim_ev *a, const struct sim_ev *b)
{
	return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static void push(struct sim *s, struct sim_ev ev)
{
	uint32_t i;

	if (s->nheap == s->heap_cap) {
		s->heap_cap = s->heap_cap ? 2 * s->heap_cap : 1024;
		s->heap = realloc(s->heap, s->heap_cap * sizeof(*s->heap));
		if (!s->heap)
			abort();
	}
	ev.seq = s->seq++;
	for (i = s->nheap++; i && ev_before(&ev, &s->heap[(i - 1) / 2]);
	     i = (i - 1) / 2)
		s->heap[i] = s->heap[(i - 1) / 2];
	s->heap[i] = ev;
}

static struct sim_ev pop(struct sim *s)
{
	struct sim_ev top = s->heap[0], last = s->heap[--s->nheap];
	uint32_t i = 0;

	for (;;) {
		uint32_t c = 2 * i + 1;

		if (c >= s->nheap)
			break;
		if (c + 1 < s->nheap && ev_before(&s->heap[c + 1], &s->heap[c]))
			c++;
		if (!ev_before(&s->heap[c], &last))
			break;
		s->heap[i] = s->heap[c];
		i = c;
	}
	if (s->nheap)
		s->heap[i] = last;
	return top;
}

static bool chance(struct sim *s, uint32_t ppm)
{
	return ppm && sim_rand(s) % 1000000 < ppm;
}

static uint64_t latency(struct sim *s)
{
	return s->o.lat_min_us +
	       sim_rand(s) % (s->o.lat_max_us - s->o.lat_min_us + 1);
}

static void put_pkt(struct sim_pkt *p)
{
	if (!--p->refs)
		free(p);
}

static void drop_backlog(struct sim_node *n)
{
	while (n->nbacklog)
		put_pkt(n->backlog[--n->nbacklog]);
}

static void transmit(struct sim *s, uint32_t src, uint32_t group,
		     const uint8_t from[6], const uint8_t to[6],
		     const void *buf, size_t len)
{
	struct sim_pkt *p = malloc(sizeof(*p));
	struct sim_ev ev = { .kind = EV_DELIVER };

	if (!p || len > MAPD_MTU)
		abort();
	p->refs = 1;
	p->src = src;
	p->group = group;
	memcpy(p->from, from, 6);
	memcpy(p->to, to, 6);
	p->len = len;
	memcpy(p->data, buf, len);
	s->datagrams++;
	s->bytes += len;
	if (len >= MAPD_HDR_LEN && p->data[3] < 5)
		s->by_type[p->data[3]]++;
	ev.pkt = p;
	ev.t = s->now_us + latency(s);
	push(s, ev);
	if (chance(s, s->o.dup_ppm)) {
		p->refs++;
		ev.t = s->now_us + latency(s);
		push(s, ev);
	}
}

static void anomaly(struct sim *s, const struct sim_node *n, const char *what,
		    uint32_t id)
{
	if (!s->anomalies++)
		snprintf(s->anomaly, sizeof(s->anomaly),
			 "node %u at %llu ms: %s %u", n->index,
			 (unsigned long long)sim_now_ms(s), what, id);
}

static void op_send(void *ctx, const uint8_t to[6], const void *buf,
		    size_t len)
{
	struct sim_node *n = ctx;

	n->sent++;
	transmit(n->sim, n->index, n->group, n->mac, to, buf, len);
}

/* The kernel's ROUTE_ADD: EINVAL for its own id, a slot per peer id. */
static int op_route_add(void *ctx, uint32_t peer, const uint8_t mac[6])
{
	struct sim_node *n = ctx;
	static const uint8_t zero[6];

	n->route_ops++;
	if (peer == MAPD_NO_ID || peer >= n->sim->id_limit) {
		anomaly(n->sim, n, "route to an id out of range", peer);
		return -EINVAL;
	}
	if (peer == n->nic_id) {
		anomaly(n->sim, n, "route to its own id", peer);
		return -EINVAL;
	}
	if (!memcmp(n->route[peer], zero, 6))
		n->nroutes++;
	memcpy(n->route[peer], mac, 6);
	return 0;
}

static int op_route_del(void *ctx, uint32_t peer)
{
	struct sim_node *n = ctx;
	static const uint8_t zero[6];

	n->route_ops++;
	if (peer >= n->sim->id_limit || !memcmp(n->route[peer], zero, 6)) {
		anomaly(n->sim, n, "deleting a route it does not have", peer);
		return 0;
	}
	memset(n->route[peer], 0, 6);
	n->nroutes--;
	return 0;
}

static int op_set_id(void *ctx, uint32_t id)
{
	struct sim_node *n = ctx;

	if (id < n->sim->id_limit && n->route[id][0] | n->route[id][1] |
	    n->route[id][2] | n->route[id][3] | n->route[id][4] |
	    n->route[id][5])
		anomaly(n->sim, n, "own id while routing it", id);
	n->nic_id = id;
	return 0;
}

static void op_event(void *ctx, const struct mapd_event *ev)
{
	struct sim_node *n = ctx;

	if (ev->kind == MAPD_EV_REFUSED || ev->kind == MAPD_EV_REFUSED_HELD)
		n->refused++;
	if (ev->kind == MAPD_EV_LEADING)
		n->leading++;
	if (ev->kind == MAPD_EV_FULL)
		n->full++;
	if (n->sim->verbose)
		fprintf(stderr, "%8llu node %u: event %d %02x:%02x id %u old %u term %u.%u count %u\n",
			(unsigned long long)sim_now_ms(n->sim), n->index,
			ev->kind, ev->mac[4], ev->mac[5], ev->id, ev->old_id,
			ev->term, ev->version, ev->count);
}

static const struct mapd_ops sim_ops = {
	.send = op_send,
	.route_add = op_route_add,
	.route_del = op_route_del,
	.set_id = op_set_id,
	.event = op_event,
};

static void wake_now(struct sim *s, struct sim_node *n)
{
	struct sim_ev ev = { .kind = EV_WAKE, .node = n->index, .gen = n->gen,
			     .t = s->now_us };

	push(s, ev);
}

static void start_core(struct sim *s, struct sim_node *n)
{
	struct mapd_config cfg = {
		.boot_id = n->boot_id,
		.hash_key = sim_rand(s),
		.nic_id = n->nic_id_cfg,
		.nic_id_now = n->nic_id,
		.heartbeat_ms = s->o.heartbeat_ms,
		.dead_ms = s->o.dead_ms,
		.max_members = s->o.max_members,
	};

	memcpy(cfg.mac, n->mac, 6);
	mapd_destroy(n->m);
	n->m = mapd_create(&cfg, &sim_ops, n, sim_now_ms(s));
	if (!n->m)
		abort();
	n->up = true;
	n->gen++;
	wake_now(s, n);
}

void sim_boot(struct sim *s, uint32_t i)
{
	struct sim_node *n = &s->node[i];

	do {
		n->boot_id = sim_rand(s);
	} while (!n->boot_id);
	/* A fresh attach: configured id or none yet, no routes. */
	n->nic_id = n->nic_id_cfg;
	memset(n->route, 0, s->id_limit * sizeof(*n->route));
	n->nroutes = 0;
	start_core(s, n);
}

void sim_restart_daemon(struct sim *s, uint32_t i)
{
	struct sim_node *n = &s->node[i];
	static const uint8_t zero[6];
	uint32_t id;

	start_core(s, n);
	for (id = 1; id < s->id_limit; id++)
		if (memcmp(n->route[id], zero, 6) &&
		    mapd_preset_route(n->m, id, n->route[id]))
			abort();
}

void sim_kill(struct sim *s, uint32_t i)
{
	struct sim_node *n = &s->node[i];

	n->up = false;
	n->gen++;
	n->stalled_until_us = 0;
	drop_backlog(n);
	mapd_destroy(n->m);
	n->m = NULL;
}

void sim_stall(struct sim *s, uint32_t i, uint64_t ms)
{
	s->node[i].stalled_until_us = s->now_us + ms * 1000;
}

void sim_stop(struct sim *s, uint32_t i)
{
	mapd_leave(s->node[i].m, sim_now_ms(s));
	sim_kill(s, i);
}

void sim_partition(struct sim *s, const uint32_t *group)
{
	uint32_t i;

	for (i = 0; i < s->o.n; i++)
		s->node[i].group = group[i];
}

void sim_heal(struct sim *s)
{
	uint32_t i;

	for (i = 0; i < s->o.n; i++)
		s->node[i].group = 0;
}

void sim_inject(struct sim *s, const uint8_t from[6], const uint8_t to[6],
		const void *buf, uint32_t len)
{
	transmit(s, INJECTED, 0, from, to, buf, len);
}

int32_t sim_find(const struct sim *s, const uint8_t mac[6])
{
	uint32_t v = (uint32_t)mac[4] << 8 | mac[5];

	if (mac[0] != 0x02 || mac[1] != 0x4d || mac[2] || mac[3] || !v ||
	    v > s->o.n)
		return -1;
	return (int32_t)s->by_mac[v - 1];
}

static void deliver_to(struct sim *s, struct sim_node *n,
		       struct sim_pkt *p)
{
	if (!n->up || n->index == p->src)
		return;
	if (p->src != INJECTED && n->group != p->group)
		return;
	if (chance(s, s->o.loss_ppm)) {
		s->lost++;
		return;
	}
	s->deliveries++;
	if (n->stalled_until_us > s->now_us) {
		if (n->nbacklog == n->backlog_cap) {
			n->backlog_cap = n->backlog_cap ? 2 * n->backlog_cap : 64;
			n->backlog = realloc(n->backlog, n->backlog_cap *
					     sizeof(*n->backlog));
			if (!n->backlog)
				abort();
		}
		p->refs++;
		n->backlog[n->nbacklog++] = p;
		return;
	}
	mapd_input(n->m, sim_now_ms(s), p->from, p->data, p->len);
}

static void deliver(struct sim *s, struct sim_pkt *p)
{
	uint32_t i;

	/* The group it was sent in: a partition cuts what is in flight. */
	if (p->src != INJECTED && s->node[p->src].group != p->group)
		return;
	if (!memcmp(p->to, bcast, 6)) {
		for (i = 0; i < s->o.n; i++)
			deliver_to(s, &s->node[i], p);
	} else {
		int32_t k = sim_find(s, p->to);

		if (k >= 0)
			deliver_to(s, &s->node[k], p);
	}
}

static void wake(struct sim *s, struct sim_node *n, uint64_t gen)
{
	struct sim_ev ev = { .kind = EV_WAKE, .node = n->index, .gen = gen };
	uint64_t next;

	if (!n->up || gen != n->gen)
		return;
	if (n->stalled_until_us > s->now_us) {
		ev.t = n->stalled_until_us;
		push(s, ev);
		return;
	}
	next = mapd_tick(n->m, sim_now_ms(s)) * 1000;
	if (n->nbacklog) {
		uint32_t i;

		for (i = 0; i < n->nbacklog; i++)
			mapd_input(n->m, sim_now_ms(s), n->backlog[i]->from,
				   n->backlog[i]->data, n->backlog[i]->len);
		drop_backlog(n);
		next = mapd_tick(n->m, sim_now_ms(s)) * 1000;
	}
	ev.t = next > s->now_us ? next : s->now_us + 1000;
	push(s, ev);
}

void sim_run_until(struct sim *s, uint64_t ms)
{
	uint64_t limit = ms * 1000;

	while (s->nheap && s->heap[0].t <= limit) {
		struct sim_ev ev = pop(s);

		s->now_us = ev.t;
		if (ev.kind == EV_WAKE) {
			wake(s, &s->node[ev.node], ev.gen);
		} else if (ev.kind == EV_BOOT) {
			sim_boot(s, ev.node);
		} else {
			deliver(s, ev.pkt);
			put_pkt(ev.pkt);
		}
	}
	if (limit > s->now_us)
		s->now_us = limit;
}

void sim_run_for(struct sim *s, uint64_t ms)
{
	sim_run_until(s, sim_now_ms(s) + ms);
}

struct sim *sim_new(const struct sim_opts *o)
{
	struct sim *s = calloc(1, sizeof(*s));
	const char *v = getenv("SIM_VERBOSE");
	uint32_t i;

	if (!s)
		abort();
	s->o = *o;
	if (!s->o.max_members)
		s->o.max_members = o->n + 64;
	if (!s->o.lat_min_us && !s->o.lat_max_us) {
		s->o.lat_min_us = 50;
		s->o.lat_max_us = 1500;
	}
	s->verbose = v && *v == '1';
	s->rng = o->seed;
	s->id_limit = s->o.max_members + 1024;
	s->node = calloc(o->n, sizeof(*s->node));
	s->by_mac = calloc(o->n, sizeof(*s->by_mac));
	if (!s->node || !s->by_mac)
		abort();
	/* MAC numbers 1..n in a random order: MAC order is not index order. */
	for (i = 0; i < o->n; i++)
		s->by_mac[i] = i;
	for (i = o->n; i > 1; i--) {
		uint32_t j = sim_rand(s) % i, t = s->by_mac[i - 1];

		s->by_mac[i - 1] = s->by_mac[j];
		s->by_mac[j] = t;
	}
	for (i = 0; i < o->n; i++) {
		struct sim_node *n = &s->node[s->by_mac[i]];

		n->mac[0] = 0x02;
		n->mac[1] = 0x4d;
		n->mac[4] = (i + 1) >> 8;
		n->mac[5] = (i + 1) & 0xff;
	}
	for (i = 0; i < o->n; i++) {
		struct sim_node *n = &s->node[i];

		n->sim = s;
		n->index = i;
		n->route = calloc(s->id_limit, sizeof(*n->route));
		if (!n->route)
			abort();
	}
	for (i = 0; i < (o->booted ? o->booted : o->n); i++) {
		struct sim_ev ev = { .kind = EV_BOOT, .node = i };

		if (o->start_spread_ms)
			ev.t = sim_rand(s) % (o->start_spread_ms * 1000ULL);
		push(s, ev);
	}
	return s;
}

void sim_free(struct sim *s)
{
	uint32_t i;

	while (s->nheap) {
		struct sim_ev ev = pop(s);

		if (ev.kind == EV_DELIVER)
			put_pkt(ev.pkt);
	}
	for (i = 0; i < s->o.n; i++) {
		drop_backlog(&s->node[i]);
		free(s->node[i].backlog);
		mapd_destroy(s->node[i].m);
		free(s->node[i].route);
	}
	free(s->heap);
	free(s->node);
	free(s->by_mac);
	free(s);
}
