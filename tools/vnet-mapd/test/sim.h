/* SPDX-License-Identifier: GPL-2.0 */
/*
 * N mapper cores on one simulated broadcast segment, with a virtual clock:
 * per-delivery loss, duplicated datagrams, latencies that reorder them,
 * partitions, deaths, reboots and injected datagrams from hosts that run
 * no mapper.  Each node has a fake NIC that keeps its id and routes the way
 * the kernel would, and counts anything the kernel would refuse.  Every
 * run is determined by its seed.
 */
#ifndef VNET_MAPD_SIM_H
#define VNET_MAPD_SIM_H

#include <stdbool.h>
#include <stdint.h>

#include "mapd.h"

struct sim_opts {
	uint32_t n;
	uint64_t seed;
	uint32_t heartbeat_ms;		/* 0: the core's default */
	uint32_t dead_ms;
	uint32_t max_members;		/* 0: n + 64 */
	uint32_t loss_ppm;		/* per delivery to one node */
	uint32_t dup_ppm;		/* per datagram */
	uint32_t lat_min_us;		/* 0 and 0: 50 to 1500 us */
	uint32_t lat_max_us;
	uint32_t start_spread_ms;	/* boots spread over this */
	uint32_t booted;		/* nodes 0..booted-1 boot; 0: all */
};

struct sim_node {
	struct sim *sim;
	uint32_t index;
	uint8_t mac[6];
	uint64_t boot_id;
	struct mapd *m;
	bool up;
	uint32_t group;			/* partition */
	uint32_t nic_id_cfg;		/* --nic-id; MAPD_NO_ID */
	uint64_t gen;			/* wake-ups of a dead incarnation */
					/* are dropped */
	uint64_t stalled_until_us;	/* its daemon does not run until */
	struct sim_pkt **backlog;	/* what reached it meanwhile */
	uint32_t nbacklog, backlog_cap;

	/* The fake NIC. */
	uint32_t nic_id;
	uint8_t (*route)[6];		/* by peer id; zero: none */
	uint32_t nroutes;

	/* What its core told it. */
	uint32_t refused;		/* MAPD_EV_REFUSED */
	uint32_t leading;		/* MAPD_EV_LEADING */
	uint32_t full;			/* MAPD_EV_FULL */
	uint64_t sent;
	uint64_t route_ops;
};

struct sim_ev;
struct sim_pkt;

struct sim {
	struct sim_opts o;
	struct sim_node *node;
	uint32_t *by_mac;		/* MAC number - 1 -> node */
	uint32_t id_limit;		/* fake NICs take ids below this */
	uint64_t now_us;
	uint64_t rng;
	struct sim_ev *heap;
	uint32_t nheap, heap_cap;
	uint64_t seq;

	uint64_t datagrams;
	uint64_t bytes;
	uint64_t by_type[5];		/* datagrams by enum mapd_msg_type */
	uint64_t deliveries;
	uint64_t lost;
	uint32_t anomalies;		/* what the kernel would refuse */
	char anomaly[256];		/* the first of them */
	bool verbose;			/* events to stderr: SIM_VERBOSE=1 */
};

struct sim *sim_new(const struct sim_opts *o);
void sim_free(struct sim *s);

static inline uint64_t sim_now_ms(const struct sim *s)
{
	return s->now_us / 1000;
}

void sim_run_until(struct sim *s, uint64_t ms);
void sim_run_for(struct sim *s, uint64_t ms);

uint64_t sim_rand(struct sim *s);

/* Node @i boots with a new boot id, its NIC freshly attached. */
void sim_boot(struct sim *s, uint32_t i);
/* Node @i stops dead: no LEAVE. */
void sim_kill(struct sim *s, uint32_t i);
/* Node @i's daemon stops cleanly (LEAVE); the node stays down. */
void sim_stop(struct sim *s, uint32_t i);
/* The daemon restarts on a running node: same boot id, NIC as it was. */
void sim_restart_daemon(struct sim *s, uint32_t i);
/*
 * Node @i's daemon does not run for @ms (a starved VM): what reaches it
 * meanwhile waits in its queue, and when it runs again it ticks before it
 * reads the queue, the worst order.
 */
void sim_stall(struct sim *s, uint32_t i, uint64_t ms);

/* Node i goes to partition group[i]; sim_heal() joins them again. */
void sim_partition(struct sim *s, const uint32_t *group);
void sim_heal(struct sim *s);

/* A datagram from a host running no mapper; reaches every group. */
void sim_inject(struct sim *s, const uint8_t from[6], const uint8_t to[6],
		const void *buf, uint32_t len);

/*
 * True when the up nodes have converged: all agree on the leader and the
 * table version, exactly one of them leads, the table lists every up node
 * (ALIVE or CONFLICT) and no down one as ALIVE, ALIVE ids are unique,
 * every NIC has its table id, and every NIC's routes are exactly the
 * other ALIVE entries.  Otherwise false, and why in @why.
 */
bool sim_converged(struct sim *s, char *why, uint32_t len);

/*
 * Run until sim_converged(), checking every @step_ms; the virtual time
 * then, or -1 if @limit_ms passes first (the last reason in @why).
 */
int64_t sim_run_until_converged(struct sim *s, uint64_t limit_ms,
				uint64_t step_ms, char *why, uint32_t len);

/* The node with @mac, or -1. */
int32_t sim_find(const struct sim *s, const uint8_t mac[6]);
/* Node @i's id in its own installed table, or MAPD_NO_ID. */
uint32_t sim_id(const struct sim *s, uint32_t i);
/* The node the up nodes agree leads, or -1. */
int32_t sim_leader(const struct sim *s);
/* Whether node @i's NIC routes @peer_id, and to @mac if not NULL. */
bool sim_has_route(const struct sim *s, uint32_t i, uint32_t peer_id,
		   const uint8_t *mac);
/* Up nodes that lead in their own opinion. */
uint32_t sim_leaders(const struct sim *s);
/* Does any node that is up route @peer_id? */
bool sim_anyone_routes(const struct sim *s, uint32_t peer_id);
/* Node @i's installed entry for @mac, if it has one. */
bool sim_entry(const struct sim *s, uint32_t i, const uint8_t mac[6],
	       struct mapd_entry *e);
/* @k different nodes, up and not the leader, at random. */
void sim_pick(struct sim *s, uint32_t k, uint32_t *out);
/* mapd_bound_ms() for the cluster's parameters. */
uint64_t sim_bound(const struct sim *s, enum mapd_bound b);
/* Every node's sim_id(), in an array to free(). */
uint32_t *sim_ids(const struct sim *s);

#endif /* VNET_MAPD_SIM_H */
