/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Inside the protocol core: the state struct mapd_create() allocates once,
 * shared by core.c (input, ticks, election), view.c (peers heard),
 * table.c (the table's invariants), member.c (taking and installing
 * tables) and leader.c (reconciling and publishing them).
 */
#ifndef VNET_MAPD_CORE_H
#define VNET_MAPD_CORE_H

#include <string.h>

#include "mapd.h"
#include "wire.h"

/* A peer heard on the segment. */
struct mapd_peer {
	uint64_t boot;
	uint64_t prev_boot;		/* HELLOs still in flight from the */
					/* incarnation before are dropped */
	uint64_t last_heard;
	uint64_t left_at;		/* when it said LEAVE */
	uint64_t merge_until;		/* its MERGE hints are taken until */
	uint64_t merge_boot;		/* the incarnation that had a window */
	uint32_t merges;		/* datagrams in the window */
	uint32_t term;			/* its last HELLO */
	uint32_t version;
	uint32_t slot;			/* its place in mapd_view.slot */
	uint16_t id;
	uint8_t mac[6];
	uint8_t leader[6];		/* of its table */
	uint8_t follows[6];
	uint8_t flags;			/* MAPD_HELLO_* */
	bool gone;			/* said LEAVE: dead until it says */
					/* HELLO again, well after */
	bool dead;			/* was past dead_ms at the last tick */
};

/*
 * Peers in a dense array, found by MAC through an open-addressing hash
 * keyed with a secret, so crafted MACs cannot make long probe chains.
 * At most half the slots are used.
 */
struct mapd_view {
	struct mapd_peer *peer;
	uint32_t n, cap;
	uint32_t *slot;			/* peer index + 1; 0: free */
	uint32_t mask;
	uint64_t key;
};

int mapd_view_init(struct mapd_view *v, uint32_t cap, uint64_t key);
void mapd_view_free(struct mapd_view *v);
struct mapd_peer *mapd_view_find(const struct mapd_view *v,
				 const uint8_t mac[6]);
struct mapd_peer *mapd_view_add(struct mapd_view *v, const uint8_t mac[6]);
/* Peer @i goes; the last peer takes its index. */
void mapd_view_remove(struct mapd_view *v, uint32_t i);

/* A table: entries sorted by MAC, room for max_members of them. */
struct mapd_table {
	struct mapd_entry *e;
	uint32_t n;
	uint32_t term;
	uint32_t version;
	uint8_t leader[6];
	uint64_t boot;			/* the leader's, when it published */
};

static inline int mapd_mac_cmp(const uint8_t *a, const uint8_t *b)
{
	return memcmp(a, b, 6);
}

int32_t mapd_table_find(const struct mapd_table *t, const uint8_t mac[6]);
bool mapd_entry_equal(const struct mapd_entry *a, const struct mapd_entry *b);
bool mapd_table_same(const struct mapd_table *a, const struct mapd_table *b);
/* Sorted by MAC, ids as leader.c leaves them; @idx has room for t->n. */
bool mapd_table_check(const struct mapd_table *t, uint32_t *idx);

typedef int (*mapd_cmp_fn)(const void *ctx, uint32_t a, uint32_t b);
/* Heapsort: no allocation, n log n whatever the input. */
void mapd_sort(uint32_t *idx, uint32_t n, mapd_cmp_fn cmp, const void *ctx);

/* A route the core put on the NIC (or found there). */
struct mapd_route {
	uint64_t boot;
	uint16_t id;
	uint8_t mac[6];
	bool preset;			/* found at start: boot unknown */
	bool del_failed;
};

#define MAPD_CHUNK_WORDS	((MAPD_MAX_CHUNKS + 63) / 64)

struct mapd {
	struct mapd_config cfg;
	struct mapd_ops ops;
	void *ctx;
	uint32_t tick_ms;		/* heartbeat / 4 */
	uint32_t discovery_ms;		/* cold start: 2 heartbeats */
	uint32_t resend_ms;		/* heartbeat / 2 */
	uint32_t retry_ms;		/* failed route and id calls */
	uint32_t suspect_ms;		/* 2 heartbeats, for display */
	uint32_t forget_ms;		/* a dead peer leaves the view */
	uint64_t now;
	uint64_t started;
	uint64_t next_tick;
	uint64_t next_hello;
	uint64_t next_retry;
	bool eligible;
	bool hello_now;			/* flags changed: HELLO at the tick */

	struct mapd_view view;

	/* Election. */
	bool have_leader;
	bool am_leader;
	bool takeover;			/* became leader: new term at tick */
	uint8_t leader[6];
	uint32_t max_term;		/* highest of the tables installed */
	uint32_t pub_version;		/* last version this node published */

	/* The installed table and what it says of this node. */
	struct mapd_table inst;
	uint32_t self_id;		/* MAPD_NO_ID unless ALIVE in it */
	uint32_t applied_id;		/* the NIC's id: nic_id_now, then */
					/* what set_id last succeeded with */
	bool refused;

	/* Member: the version being assembled from chunks. */
	struct mapd_table pend;
	bool pending;
	uint32_t pend_got;
	uint64_t pend_have[MAPD_CHUNK_WORDS];
	bool merge_due;			/* stepped down: send MERGE hints */
	uint32_t nmerge;		/* hints waiting in stage, to send */
	uint64_t merge_at;		/* when to send them again */

	/* Leader. */
	struct mapd_table next;		/* reconcile's output */
	struct mapd_entry *stage;	/* newcomers and hints, to merge */
	uint32_t nhints;		/* MERGE entries waiting, in pend.e */
	bool resend;
	uint64_t sent_at;
	uint32_t full_reported;
	uint8_t *cls;			/* reconcile: each entry's class, */
					/* then each staged one's */

	/* The NIC's routes, sorted by id. */
	struct mapd_route *routes;
	struct mapd_route *routes_next;
	uint32_t nroutes;
	bool routes_retry;

	uint32_t *idx;			/* scratch, max_members + 1 */
	uint32_t *idx2;
	uint64_t *ids;			/* bitmap of ids 0..65535 */
	uint8_t buf[MAPD_MTU];		/* the datagram being built */
	struct mapd_stats stats;
};

extern const uint8_t mapd_broadcast[6];

static inline bool mapd_is_self(const struct mapd *m, const uint8_t mac[6])
{
	return !mapd_mac_cmp(mac, m->cfg.mac);
}

static inline bool mapd_peer_alive(const struct mapd *m,
				   const struct mapd_peer *p)
{
	return !p->gone && m->now - p->last_heard < m->cfg.dead_ms;
}

void mapd_emit(struct mapd *m, struct mapd_event *ev);
void mapd_send_hello(struct mapd *m, const uint8_t to[6]);
void mapd_elect(struct mapd *m);

/* member.c */
void mapd_member_table(struct mapd *m, const uint8_t src[6],
		       const struct mapd_msg *msg);
void mapd_install(struct mapd *m, struct mapd_table *t);
void mapd_routes_sync(struct mapd *m);
void mapd_apply_id(struct mapd *m);
/* @again: keep them for the copy a tick later. */
void mapd_send_merge(struct mapd *m, bool again);

/* leader.c */
void mapd_leader_tick(struct mapd *m);
void mapd_leader_merge(struct mapd *m, const uint8_t src[6],
		       const struct mapd_msg *msg);
void mapd_leader_heard(struct mapd *m, const struct mapd_peer *p,
		       bool fresh);

#endif /* VNET_MAPD_CORE_H */
