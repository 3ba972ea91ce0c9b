/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The mapper's protocol core: one instance per NIC, a state machine driven
 * by mapd_input() (a datagram arrived), mapd_tick() (time passed) and
 * mapd_leave() (shutting down).  It reads no clock, does no I/O and
 * allocates only in mapd_create(): what it does to the world goes through
 * struct mapd_ops.  vnet-mapd.c runs it on a NIC's privileged endpoint,
 * test/sim.c runs a thousand of them on a simulated segment.
 *
 * The protocol (wire.h has the datagrams):
 *
 * Membership.  Every node broadcasts a HELLO each heartbeat_ms.  A node
 * believes a peer alive while it has heard from it within dead_ms.
 *
 * Election.  A node is *eligible* to lead once it has installed a table,
 * or, on a cold start (no peer it hears is eligible), once it has listened
 * for two heartbeats and hears no lower MAC.  The leader is the eligible node with the lowest MAC
 * among those a node believes alive, itself included.  Every node computes
 * this from its own view; the views agree once the HELLOs of the last
 * dead_ms have arrived, so the rule needs no votes.  A newcomer with the
 * lowest MAC first takes the table as a member and only then takes over,
 * so no leader ever starts from less than the table it replaces.  A node
 * that becomes leader takes term = 1 + the highest term of the tables it
 * installed (never one a HELLO reports: anyone can say any term), and
 * stays at MAPD_TERM_LIMIT - 1 once there.  A member takes a table only
 * from the node it believes leads: any table of another leader, or of
 * another incarnation of it, since it elected that leader; of the same
 * one only a newer (term, version).  Terms of different leaders are never
 * compared, so after a partition heals every node takes the surviving
 * leader's table whatever the terms of the two halves, and a leader that
 * a member follows but whose table that member lacks (its HELLO names the
 * table's leader) sends it again.
 *
 * Table.  The leader owns the table: one entry per MAC it knows, sorted by
 * MAC, with the NIC id, the boot id, the state (ALIVE, DEAD, CONFLICT) and
 * whether the id was configured by the operator.  It reconciles the table
 * with its view every tick and publishes a new (term, version) when it
 * changed, in chunks of 55 entries; a member installs a version once it
 * has every chunk of it, by the rule above.
 *
 * Ids.  An entry keeps its id while the table lists its MAC, dead or
 * alive, so a node that reboots (same MAC, new boot id) gets its id back,
 * from whichever leader holds the table by then.  A node without an id
 * gets the lowest free one; one started with --nic-id claims that one.
 * An id claimed by two alive nodes' configurations is given to neither
 * (both entries CONFLICT, no route to it anywhere) until one of them is
 * gone or configured otherwise; then the other gets it.  Live ownership
 * of an assigned id is sticky: a configured claim on an id the leader
 * assigned to a node that is alive is refused to the claimant alone
 * (CONFLICT beside the holder's ALIVE entry) until the holder is dead or
 * has left; then the claimant gets it, and the old holder a new id when
 * it is back.  A configured claim on a free id, or on a dead node's, gets
 * it at once.  (Without this, any host could take any node's id with one
 * HELLO.)  Ids held by two halves of a healed partition: the one the leader's
 * table already had keeps it, the other is renumbered; the leader that
 * stepped down sends its DEAD entries along (MERGE), so the dead of its
 * half keep theirs too.
 *
 * Routes.  Every node, leader included, makes the NIC's routes the ALIVE
 * entries other than its own: deletions first, then the NIC's new id,
 * then additions, and a route deleted and added again when its node
 * rebooted, so that messages in flight to the old incarnation come back
 * unreachable at once.
 *
 * Bounds (H = heartbeat_ms, D = dead_ms, ticks every H/4): a dead node is
 * marked DEAD by the leader within D + H/4 of its last HELLO, and the new
 * version reaches every member then, or one resend (at most H + H/4)
 * later per chunk it lost: a member's HELLO names the leader it follows
 * and the version it has, and the leader resends to one that lags.  A
 * dead leader is replaced within D + H/4, and a member whose tick had not
 * yet given up on the old one takes the new leader's table within another
 * H/2 + H/4.  See mapd_bound_ms().
 */
#ifndef VNET_MAPD_H
#define VNET_MAPD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MAPD_MTU		1024	/* VNET_MAPPER_MTU */
#define MAPD_MAX_MEMBERS	4096	/* table entries and peers heard */
#define MAPD_NO_ID		0	/* ids are 1..65535: 0 is every */
					/* host's loopback NIC */
#define MAPD_MAX_ID		65535

#define MAPD_HEARTBEAT_MS	500
#define MAPD_DEAD_MS		2000

struct mapd_config {
	uint8_t mac[6];			/* the NIC's Ethernet address */
	uint64_t boot_id;		/* nonzero; new when the host boots */
	uint64_t hash_key;		/* random and secret: keys the hash */
					/* of peers, against crafted MACs */
	uint32_t nic_id;		/* the operator's id, or MAPD_NO_ID; */
					/* the host gives it the NIC at once */
	uint32_t nic_id_now;		/* the id the NIC has at start */
	uint32_t heartbeat_ms;		/* 0: MAPD_HEARTBEAT_MS */
	uint32_t dead_ms;		/* 0: MAPD_DEAD_MS */
	uint32_t max_members;		/* 0: MAPD_MAX_MEMBERS */
};

enum mapd_state {
	MAPD_ALIVE = 1,
	MAPD_DEAD = 2,
	MAPD_CONFLICT = 3,		/* configured with an id another */
					/* alive node claims or holds: */
					/* refused */
};

#define MAPD_ENTRY_CONFIGURED	0x01	/* the id is the operator's */

/* One table entry. */
struct mapd_entry {
	uint64_t boot;
	uint16_t id;
	uint8_t mac[6];
	uint8_t state;			/* enum mapd_state */
	uint8_t flags;			/* MAPD_ENTRY_* */
};

enum mapd_event_kind {
	MAPD_EV_SYNCED,		/* first table installed: n members */
	MAPD_EV_LEADER,		/* the table now comes from mac (term) */
	MAPD_EV_LEADING,	/* this node took over as leader (term) */
	MAPD_EV_JOINED,		/* mac is alive with id (new or back) */
	MAPD_EV_DIED,		/* mac (id) is dead: its route withdrawn */
	MAPD_EV_REBOOTED,	/* mac (id) came back with a new boot id */
	MAPD_EV_RENUMBERED,	/* mac moved from old_id to id */
	MAPD_EV_FORGOTTEN,	/* mac's entry (id) left the table */
	MAPD_EV_CONFLICT,	/* mac and other both claim id: refused */
	MAPD_EV_SELF_ID,	/* this node's id is now id */
	MAPD_EV_REFUSED,	/* this node's claim on id is refused: */
				/* other claims it too */
	MAPD_EV_FULL,		/* leader: count newcomers not admitted, */
				/* the table is full */
	MAPD_EV_HELD,		/* mac's configured id is other's, which */
				/* is alive and keeps it: mac refused */
	MAPD_EV_REFUSED_HELD,	/* this node's configured id is other's, */
				/* alive: refused to this node */
	MAPD_EV_STALLED,	/* this process did not run for count ms */
				/* (at least dead_ms / 2), not counted as */
				/* the peers' silence */
};

struct mapd_event {
	enum mapd_event_kind kind;
	uint8_t mac[6];
	uint8_t other[6];
	uint32_t id;
	uint32_t old_id;
	uint32_t term;
	uint32_t version;
	uint32_t count;
};

/*
 * What the core does to the world.  @send gets a broadcast address
 * (ff:ff:ff:ff:ff:ff) or a peer's.  The route and id calls return 0 or a
 * negative errno; a failed one is tried again every few heartbeats.
 * route_del of a route the NIC does not have must return 0.
 */
struct mapd_ops {
	void (*send)(void *ctx, const uint8_t to[6], const void *buf,
		     size_t len);
	int (*route_add)(void *ctx, uint32_t peer_id, const uint8_t mac[6]);
	int (*route_del)(void *ctx, uint32_t peer_id);
	int (*set_id)(void *ctx, uint32_t id);
	void (*event)(void *ctx, const struct mapd_event *ev);
};

struct mapd;

/* NULL, or why @cfg cannot run (after defaults are applied). */
const char *mapd_config_error(const struct mapd_config *cfg);

/* NULL on a bad config (see mapd_config_error()) or no memory. */
struct mapd *mapd_create(const struct mapd_config *cfg,
			 const struct mapd_ops *ops, void *ctx, uint64_t now);
void mapd_destroy(struct mapd *m);

/*
 * A route the NIC already had when the daemon started: the first table
 * installed keeps it if the table agrees, instead of deleting and adding
 * it again.  Before the first mapd_input(); -ENOSPC past max_members.
 */
int mapd_preset_route(struct mapd *m, uint32_t peer_id, const uint8_t mac[6]);

/* One datagram from @src; any bytes at all. */
void mapd_input(struct mapd *m, uint64_t now, const uint8_t src[6],
		const void *buf, size_t len);

/* Time passed: returns when it wants to be called next. */
uint64_t mapd_tick(struct mapd *m, uint64_t now);

/* Say goodbye, so the others withdraw this node's routes at once. */
void mapd_leave(struct mapd *m, uint64_t now);

enum mapd_bound {
	MAPD_BOUND_DEAD,	/* last HELLO to the leader's new version */
	MAPD_BOUND_RESEND,	/* a member that lost a chunk gets it again */
	MAPD_BOUND_ELECTION,	/* last HELLO of a leader to its successor */
				/* publishing */
	MAPD_BOUND_SWITCH,	/* a member that still followed the old */
				/* leader then gets the successor's table */
};

/* The bounds the header comment gives, for @m's parameters. */
uint64_t mapd_bound_ms(const struct mapd *m, enum mapd_bound b);

struct mapd_stats {
	uint64_t rx;		/* datagrams given to mapd_input() */
	uint64_t rx_bad;	/* malformed: wire.c refused them */
	uint64_t rx_forged;	/* tables from a node that is not the */
				/* leader, merges to a non-leader */
	uint64_t rx_stale;	/* old versions, old incarnations */
	uint64_t rx_dropped;	/* no room for a new peer */
	uint64_t tx_hello;
	uint64_t tx_table;	/* chunks */
	uint64_t tx_merge;
	uint64_t tables_bad;	/* complete tables that failed checks */
	uint64_t installs;
	uint64_t publishes;
	uint64_t resends;
	uint64_t route_errors;
};

struct mapd_status {
	uint8_t mac[6];
	uint8_t leader[6];	/* who this node believes leads */
	bool have_leader;
	bool is_leader;
	bool eligible;
	bool refused;		/* own entry CONFLICT */
	uint32_t id;		/* from the table, or MAPD_NO_ID */
	uint32_t term;		/* of the installed table */
	uint32_t version;
	uint8_t table_leader[6];
	uint32_t entries;	/* in the installed table */
	uint32_t peers;		/* heard, alive or not */
	uint32_t routes;
	uint32_t heartbeat_ms;
	uint32_t dead_ms;
	struct mapd_stats stats;
};

void mapd_get_status(const struct mapd *m, struct mapd_status *st);

enum mapd_local_state {
	MAPD_LOCAL_ALIVE,	/* ALIVE, heard within two heartbeats */
	MAPD_LOCAL_SUSPECT,	/* ALIVE in the table, but silent */
	MAPD_LOCAL_DEAD,
	MAPD_LOCAL_REFUSED,	/* CONFLICT */
	MAPD_LOCAL_JOINING,	/* heard, not in the table yet */
};

struct mapd_member {
	struct mapd_entry e;	/* e.id == 0, e.state == 0 for JOINING */
	enum mapd_local_state local;
	bool self;
	bool heard;		/* last_heard is valid */
	uint64_t last_heard;	/* time of its last HELLO */
};

typedef void (*mapd_member_fn)(void *arg, const struct mapd_member *mb);

/*
 * The installed table's entries, then the nodes heard that it does not
 * list yet (this one included): for the state file and the tests.
 */
void mapd_foreach_member(const struct mapd *m, uint64_t now,
			 mapd_member_fn fn, void *arg);

#endif /* VNET_MAPD_H */
