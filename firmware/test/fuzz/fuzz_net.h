/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The cluster the fuzzers attack: two simulated NICs (sim.c, wire_sim.c),
 * endpoints on both with users that post requests and answer them, and
 * the checks that what the firmware did with a hostile input left it
 * consistent.  A fuzzer builds one per input, so that every input runs
 * from the same state and a crash replays from its input alone.
 *
 * NIC 0 is the target; NIC 1 is its peer.  The endpoints, by role:
 *
 *   NIC 0  A  client of F (remote, every kind of message, trains and
 *             XFERs from its own segment) and of S in turn, server for
 *             G, whose XFERs land past A's own sources in its segment
 *          B  server for E, off the card at the start
 *          C  client of D (local), exactly accounted for
 *          D  server for C, off the card at the start
 *          S  server for A's local requests alone
 *   NIC 1  E  client of B, exactly accounted for when NIC 1 runs
 *          F  server for A
 *          G  client of A
 *          H  server, unused: a destination nobody routes to
 *
 * Every endpoint's receive queues are read, every request answered, and
 * each entry read is checked for what the firmware may write into it.
 * An exactly accounted client gets exactly one reply per request,
 * intact, and never a return; its server gets each request once, intact:
 * nothing the fuzzers do may disturb them.  Under cluster_fuzz, whose
 * users are all honest, A and G are held to it too (all_exact), with
 * what closes and reboots excuse (cluster_fuzz.c).
 */
#ifndef _VNET_FUZZ_NET_H
#define _VNET_FUZZ_NET_H

#include "wire_sim.h"

#define FZ_NICS		2
#define FZ_EPS		5
#define FZ_DT		20		/* a step of the wire, in time units */
#define FZ_SEG		(32 * 1024)	/* every segment's length */
#define FZ_TAG		0xf022a11ULL	/* the servers' */
#define FZ_TAG_S	0xf022a12ULL	/* S's: only A's translation has it */

enum { FZ_A, FZ_B, FZ_C, FZ_D, FZ_S };	/* endpoints of NIC 0 */
enum { FZ_E, FZ_F, FZ_G, FZ_H };	/* endpoints of NIC 1 */

/* Requests a client posts at most in one input. */
#define FZ_NUMBERS	8192
/* Lives count to 255: an input reboots no more often than this. */
#define FZ_MAX_REBOOTS	200

/*
 * Numbers from 0 up, each taken once, in any order: messages on
 * different channels overtake each other, and across a faulty wire some
 * never come at all.
 */
struct fz_window {
	u64 taken[FZ_NUMBERS / 64];
};

/*
 * One request of an exact client, as its servers and it saw it.  Lives
 * are numbered from 1 per NIC (fz_net.life); 0: none.
 */
struct fz_req {
	u8 takes;		/* by its server, in all its lives */
	u8 answers;		/* replies the client read */
	u8 taken_life;		/* the server NIC's life that took it last */
	u8 wire_life;		/* on the wire when this life of it began */
	u8 half;		/* of the segments it reads from and lands in */
	/* Refused "no endpoint" by a closed server, and on its way back. */
	bool noep;
	struct vnet_name to;	/* where it was sent */
};

struct fz_user {
	u32 posted;			/* requests */
	/*
	 * Its first request in this life: the user before it closed, or
	 * died with its NIC, and every number up to here is settled.
	 */
	u32 base;
	u32 resolved;			/* of those, replied to or returned */
	u32 replies;			/* replies read, to G: see fz_tokens() */
	struct fz_req req[FZ_NUMBERS];	/* an exact client's */
	u32 low;			/* none below is unsettled */
	/*
	 * An exact client's requests replied to -- or, across a faulty
	 * wire, returned to it, or their replies returned to the server.
	 */
	struct fz_window settled;
	/*
	 * An exact client's requests returned for a reason of the
	 * receiver's -- busy, no endpoint, a bad tag -- so refused for
	 * good: never taken after the return.  (Not "unreachable": a copy
	 * still on the wire may yet be taken.)
	 */
	struct fz_window refused;
	/*
	 * Per half of the segments: a request of it may still land where a
	 * later one of the same half does -- it came back, or its life or
	 * its server's ended, while a copy of it may have been on the wire.
	 * Its bulk bytes are checked only while its half is clean.  It is
	 * clean again once nothing of the requests below dirty_upto can
	 * land: no channel holds one or its reply, and every packet sent
	 * before that was seen (clean_after - 1, a net.sent; 0 while one
	 * is held) has left the wire (fz_clean_halves()).  Even then only
	 * requests posted since, from clean_from on, are checked: one posted
	 * while its half was dirty may have been landed on already.
	 */
	bool dirty[2];
	u32 dirty_upto[2];
	u64 clean_after[2];
	u32 clean_from[2];
	/*
	 * Requests below it were posted before a reboot that dropped
	 * packets off the wire: across it, they may come back unreachable
	 * or busy, as on a faulty wire.  Later ones only if the wire is.
	 */
	u32 lost_upto;
	bool hostile;			/* its memory is the fuzzer's */
	/* Talks to a hostile endpoint, which may hold its queue for ever. */
	bool tainted;
};

struct fz_net {
	struct sim_net net;
	struct vnet_fw_ops ops;		/* the NICs', transmit checked */
	struct fz_user user[FZ_NICS][FZ_EPS];
	bool peer_live;			/* NIC 1's users run and it answers */
	bool posting;			/* clients post new requests */
	/*
	 * Users that fall silent while the input runs: they post nothing,
	 * and answer nothing until it ends.
	 */
	bool mute[FZ_NICS][FZ_EPS];
	/*
	 * The wire lost, duplicated, reordered or corrupted packets, a link
	 * went down or a route was deleted (a reboot's losses excuse only
	 * what was posted before it: lost_upto): an exact client across the
	 * wire
	 * may have a request come back unreachable or busy -- taken or not,
	 * its ACKs lost -- and its reply may still come, or go back to the
	 * server.  Each request is still served at most once, replied to at
	 * most once, and settled (replied to, or either returned) once.
	 */
	bool faults;
	/* cluster_fuzz: every client is held to exactly one reply. */
	bool all_exact;
	/*
	 * cluster_fuzz and user_fuzz: a server answers some requests of an
	 * exact client with bulk replies into its segment.  (Not wire_fuzz's
	 * recordings: their replay must go as the recording did.)
	 */
	bool bulk_replies;
	/* Closed, in this life of its NIC. */
	bool closed[FZ_NICS][FZ_EPS];
	/* Each NIC's life, from 1; a reboot starts the next. */
	u8 life[FZ_NICS];
	/* Requests A took in its lives before this one. */
	u32 a_taken;
	/* Closes and reboots so far: past FZ_MAX_REBOOTS, reboots are off. */
	u32 closes, reboots;
};

/*
 * The fuzzers' records, as wire_fuzz.c and user_fuzz.c describe them:
 * here so that seed_gen.c writes them as the fuzzers read them.
 */
#define WIRE_STEPS	0x1f	/* ctl: steps of the wire before the frame */
#define WIRE_QUANTA	0x20	/* ctl: those steps a quantum long */
#define WIRE_IN_STEP	0x40	/* ctl: the frame in step with NIC 0 */
#define WIRE_STRANGER	0x80	/* ctl: from an address no route has */
#define USER_OP		0x07	/* op: what; the bits above, steps */
#define USER_STEPS_SHIFT 3

/* cluster_fuzz.c: a record is an op and its argument, two bytes. */
enum cluster_op { C_RUN, C_FAULTS, C_LINK, C_MOVE, C_ROUTE, C_MUTE, C_CLOSE,
		  C_REBOOT, C_NR };

/* U_NONE is in no input: what an op becomes once A is closed. */
enum user_op { U_FRAME, U_STAGING, U_POST, U_INDEX, U_SEG, U_SET_SEG, U_RUN,
	       U_MOVE, U_NONE };

void fz_init(struct fz_net *f, bool peer_live);
void fz_fini(struct fz_net *f);
void fz_run(struct fz_net *f, u32 steps, u64 dt);
void fz_inject(struct fz_net *f, const u8 *frame, u32 len, bool stranger);
void fz_move(struct fz_net *f, u32 nic, u32 ep);
void fz_close(struct fz_net *f, u32 nic, u32 ep);
void fz_reboot(struct fz_net *f, u32 nic);
void fz_settle(struct fz_net *f);

/* fuzz_users.c: the users, for fuzz_net.c. */
void fz_users_setup(struct fz_net *f, u32 nic);
void fz_drive(struct fz_net *f);
bool fz_user_idle(struct fz_net *f, u32 nic, u32 ep);
void fz_user_gone(struct fz_net *f, u32 nic, u32 ep);
/* fuzz_halves.c */
bool fz_half_clean(const struct fz_user *u, u32 n);
void fz_dirty_half(struct fz_user *u, u32 half);
void fz_dirty(struct fz_user *u, u32 n);
void fz_clean_halves(struct fz_net *f);
void fz_users_rebooting(struct fz_net *f, u32 nic);
/* NIC 0's counters when the last input ended, before it settled. */
extern struct vnet_fw_nic_stats fz_ended;
/*
 * Optional: a fragment goes from the @len bytes at @bytes of @ep's
 * segment.  True when @ep's hostile user wrote them as they go.
 */
extern bool (*fz_seg_race)(const struct vnet_fw_ep *ep, u8 *bytes, u32 len);

/* An invariant broke: say which, and crash for the fuzzer to see. */
#define fz_assert(cond, fmt, ...) do {					\
	if (!(cond)) {							\
		fprintf(stderr, "%s:%d: %s: " fmt "\n", __FILE__,	\
			__LINE__, #cond, ##__VA_ARGS__);		\
		abort();						\
	}								\
} while (0)

#endif /* _VNET_FUZZ_NET_H */
