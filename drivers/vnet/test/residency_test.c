// SPDX-License-Identifier: GPL-2.0
/*
 * The residency policy (residency.c) on its own: the rules one decision at
 * a time, then long random schedules of endpoints that outnumber the
 * frames, with the cache's FIFO of waiting faults around the policy as in
 * cache.c.  Whatever the schedule, no endpoint leaves its frame before the
 * policy allows it, a busy one keeps its whole slice, and every endpoint
 * that waits for a frame gets one within a bound.
 */
#include <stdlib.h>

#include "kselftest_harness.h"
#include "residency.h"

#define US		1000ULL
#define MS		(1000 * US)

static struct vnet_rp policy(u64 fault_ns)
{
	struct vnet_rp rp;

	vnet_rp_init(&rp, 100 * US, 16, 2);
	if (fault_ns)
		vnet_rp_fault_done(&rp, fault_ns);
	return rp;
}

TEST(slice_follows_the_measured_fault_cost)
{
	struct vnet_rp rp = policy(0);
	int i;

	/* Nothing measured yet: the floor. */
	EXPECT_EQ(100 * US, vnet_rp_slice_ns(&rp));
	vnet_rp_fault_done(&rp, 200 * US);
	EXPECT_EQ(16 * 200 * US, vnet_rp_slice_ns(&rp));
	EXPECT_EQ(2 * 200 * US, vnet_rp_idle_ns(&rp));
	/* Faults get cheaper: the slice follows, down to the floor. */
	for (i = 0; i < 100; i++)
		vnet_rp_fault_done(&rp, 2 * US);
	EXPECT_LT(rp.fault_ns, 3 * US);
	EXPECT_EQ(100 * US, vnet_rp_slice_ns(&rp));
	/* One slow fault moves the mean by an eighth of the difference. */
	rp = policy(100 * US);
	vnet_rp_fault_done(&rp, 900 * US);
	EXPECT_EQ(200 * US, rp.fault_ns);
}

TEST(busy_endpoint_keeps_its_slice)
{
	struct vnet_rp rp = policy(100 * US);
	struct vnet_rp_frame f = {
		.present = true, .served = true, .queued = true,
		.loaded_at = 10 * MS, .active_at = 10 * MS,
	};
	u64 retry;

	EXPECT_EQ(10 * MS + 1600 * US, vnet_rp_evictable_at(&rp, &f));
	EXPECT_EQ(-1, vnet_rp_pick(&rp, &f, 1, 0, 10 * MS + 1599 * US, &retry));
	EXPECT_EQ(10 * MS + 1600 * US, retry);
	EXPECT_EQ(0, vnet_rp_pick(&rp, &f, 1, 0, retry, &retry));
	/* Active without anything queued: busy all the same. */
	f.queued = false;
	f.active_at = 11 * MS;
	EXPECT_EQ(11 * MS + 200 * US, vnet_rp_evictable_at(&rp, &f));
	f.active_at = 11 * MS + 500 * US;
	EXPECT_EQ(10 * MS + 1600 * US, vnet_rp_evictable_at(&rp, &f));
}

TEST(idle_endpoint_goes_early)
{
	struct vnet_rp rp = policy(100 * US);
	struct vnet_rp_frame f = {
		.present = true, .served = true,
		.loaded_at = 10 * MS, .active_at = 10 * MS + 50 * US,
	};

	EXPECT_EQ(10 * MS + 250 * US, vnet_rp_evictable_at(&rp, &f));
	/* A stamp from an earlier residency counts from the load. */
	f.active_at = 1 * MS;
	EXPECT_EQ(10 * MS + 200 * US, vnet_rp_evictable_at(&rp, &f));
}

TEST(idleness_has_a_floor)
{
	struct vnet_rp rp = policy(10 * US);
	struct vnet_rp_frame f = {
		.present = true, .served = true,
		.loaded_at = 10 * MS, .active_at = 10 * MS,
	};

	/* Twice a 10 us fault is below the 100 us floor: the floor. */
	EXPECT_EQ(100 * US, vnet_rp_idle_ns(&rp));
	EXPECT_EQ(10 * MS + 100 * US, vnet_rp_evictable_at(&rp, &f));
}

TEST(unserved_newcomer_is_protected)
{
	struct vnet_rp rp = policy(100 * US);
	struct vnet_rp_frame f = {
		.present = true, .loaded_at = 10 * MS, .active_at = 0,
	};

	/* Idle, but what it came for has not come: its whole slice. */
	EXPECT_EQ(10 * MS + 1600 * US, vnet_rp_evictable_at(&rp, &f));
	/* On the wire, until a NACKed sender has come back. */
	rp.protect_ns = 60 * MS;
	EXPECT_EQ(70 * MS, vnet_rp_evictable_at(&rp, &f));
}

TEST(frames_in_motion_are_never_picked)
{
	struct vnet_rp rp = policy(100 * US);
	struct vnet_rp_frame f[3] = {
		{ .present = false },
		{ .present = true, .served = true, .loaded_at = 0 },
		{ .present = false },
	};
	u64 retry;

	EXPECT_EQ(1, vnet_rp_pick(&rp, f, 3, 0, 1000 * MS, &retry));
	f[1].present = false;
	EXPECT_EQ(-1, vnet_rp_pick(&rp, f, 3, 0, 1000 * MS, &retry));
	EXPECT_EQ(VNET_RP_NEVER, retry);
}

TEST(earliest_evictable_goes_first)
{
	struct vnet_rp rp = policy(100 * US);
	struct vnet_rp_frame f[3] = {
		{ .present = true, .served = true, .queued = true,
		  .loaded_at = 3 * MS },
		{ .present = true, .served = true, .queued = true,
		  .loaded_at = 1 * MS },
		{ .present = true, .served = true, .queued = true,
		  .loaded_at = 2 * MS },
	};
	u64 retry;

	EXPECT_EQ(1, vnet_rp_pick(&rp, f, 3, 0, 10 * MS, &retry));
	f[1].present = false;
	EXPECT_EQ(2, vnet_rp_pick(&rp, f, 3, 0, 10 * MS, &retry));
}

/*
 * Endpoints 1 and 2 talk to each other; 3 waits for 9, which is out.  All
 * three busy, their slices (1.6 ms) over at 2.6, 2.7 and 2.8 ms.
 */
#define PAIRS_NOW	(3 * MS)

static void pairs_and_a_lone_one(struct vnet_rp_frame *f)
{
	memset(f, 0, 3 * sizeof(*f));
	f[0] = (struct vnet_rp_frame){ .present = true, .served = true,
				       .queued = true, .loaded_at = 1000 * US,
				       .id = 1, .partner = 2 };
	f[1] = (struct vnet_rp_frame){ .present = true, .served = true,
				       .queued = true, .loaded_at = 1100 * US,
				       .id = 2, .partner = 1 };
	f[2] = (struct vnet_rp_frame){ .present = true, .served = true,
				       .queued = true, .loaded_at = 1200 * US,
				       .id = 3, .partner = 9 };
}

TEST(lone_endpoint_goes_before_a_pair)
{
	struct vnet_rp rp = policy(100 * US);
	struct vnet_rp_frame f[3];
	u64 retry;

	pairs_and_a_lone_one(f);
	EXPECT_EQ(2, vnet_rp_pick(&rp, f, 3, 0, PAIRS_NOW, &retry));
	/* Nor does a partner on its way into a frame leave it alone. */
	f[2].partner = 4;
	f[1] = (struct vnet_rp_frame){ .id = 4 };
	EXPECT_EQ(0, vnet_rp_pick(&rp, f, 3, 0, PAIRS_NOW, &retry));
}

/*
 * One that talks to no endpoint of its NIC, or only to itself, waits for
 * nobody: it takes its turn with the pairs, the earliest first.
 */
TEST(no_partner_takes_its_turn_with_the_pairs)
{
	struct vnet_rp rp = policy(100 * US);
	struct vnet_rp_frame f[3];
	u64 retry;

	pairs_and_a_lone_one(f);
	f[2].partner = 0;
	EXPECT_EQ(0, vnet_rp_pick(&rp, f, 3, 0, PAIRS_NOW, &retry));
	f[2].partner = 3;
	EXPECT_EQ(0, vnet_rp_pick(&rp, f, 3, 0, PAIRS_NOW, &retry));
	f[2].loaded_at = 0;
	EXPECT_EQ(2, vnet_rp_pick(&rp, f, 3, 0, PAIRS_NOW, &retry));
}

/* The frame is wanted for 1's partner: 1 stays, for it. */
TEST(newcomer_counts_as_in)
{
	struct vnet_rp rp = policy(100 * US);
	struct vnet_rp_frame f[3];
	u64 retry;

	pairs_and_a_lone_one(f);
	f[2].present = false;
	f[0].partner = 7;
	f[1].partner = 8;
	EXPECT_EQ(0, vnet_rp_pick(&rp, f, 3, 0, PAIRS_NOW, &retry));
	EXPECT_EQ(1, vnet_rp_pick(&rp, f, 3, 7, PAIRS_NOW, &retry));
	EXPECT_EQ(0, vnet_rp_pick(&rp, f, 3, 8, PAIRS_NOW, &retry));
}

TEST(pairing_cuts_no_slice)
{
	struct vnet_rp rp = policy(100 * US);
	u64 slice = vnet_rp_slice_ns(&rp), retry;
	struct vnet_rp_frame f[3];

	/* The lone one's slice runs on: the pair's earliest goes. */
	pairs_and_a_lone_one(f);
	f[2].loaded_at = 10 * MS;
	EXPECT_EQ(0, vnet_rp_pick(&rp, f, 3, 0, 1 * MS + slice, &retry));
	/* Before any slice ran out, nobody goes, alone or not. */
	EXPECT_EQ(-1, vnet_rp_pick(&rp, f, 3, 0, 1 * MS + slice - 1, &retry));
	EXPECT_EQ(1 * MS + slice, retry);
}

TEST(only_pairs_left_the_earliest_is_split)
{
	struct vnet_rp rp = policy(100 * US);
	struct vnet_rp_frame f[3];
	u64 retry;

	pairs_and_a_lone_one(f);
	f[2].present = false;
	EXPECT_EQ(0, vnet_rp_pick(&rp, f, 3, 0, PAIRS_NOW, &retry));
	/* Split, its partner is alone, and goes next. */
	f[0] = (struct vnet_rp_frame){ .id = 5 };
	EXPECT_EQ(1, vnet_rp_pick(&rp, f, 3, 0, PAIRS_NOW, &retry));
}

/*
 * Its user thread is asleep in the line for another frame: nothing is
 * done in this one meanwhile, queued or not, served or not.  It goes once
 * idle, as an idle one would, never before.
 */
TEST(frame_of_a_waiting_user_goes_once_idle)
{
	struct vnet_rp rp = policy(100 * US);
	struct vnet_rp_frame f = {
		.present = true, .served = true, .queued = true,
		.user_waits = true, .loaded_at = 10 * MS,
		.active_at = 10 * MS + 50 * US,
	};

	EXPECT_EQ(10 * MS + 250 * US, vnet_rp_evictable_at(&rp, &f));
	f.served = false;
	EXPECT_EQ(10 * MS + 250 * US, vnet_rp_evictable_at(&rp, &f));
	/* Working through its slice: the slice still ends it. */
	f.active_at = 11 * MS + 500 * US;
	EXPECT_EQ(10 * MS + 1600 * US, vnet_rp_evictable_at(&rp, &f));
	f.user_waits = false;
	f.active_at = 10 * MS + 50 * US;
	EXPECT_EQ(10 * MS + 1600 * US, vnet_rp_evictable_at(&rp, &f));
	/* On the wire, not served: a NACKed sender comes back for it. */
	f.user_waits = true;
	rp.protect_ns = 1 * MS;
	EXPECT_EQ(11 * MS, vnet_rp_evictable_at(&rp, &f));
	f.served = true;
	EXPECT_EQ(10 * MS + 250 * US, vnet_rp_evictable_at(&rp, &f));
}

/* ---- Random schedules ---- */

#define SIM_MAX_EPS	128
#define SIM_MAX_FRAMES	16

enum sim_where { SIM_OUT, SIM_MOVING, SIM_IN };

struct sim_ep {
	enum sim_where where;
	int frame;
	int partner;		/* the endpoint it talks to, or -1 */
	bool wants;		/* has work: would fault if out */
	bool queued_wait;	/* in the FIFO of waiting faults */
	bool served, queued;
	u64 loaded_at, active_at;
	u64 claimed_at;		/* SIM_MOVING: when its move started */
	u64 ready_at;		/* and when the load is done */
	u64 waiting_since;
	u64 max_wait;
	u64 resident_ns;
	u64 loads;
	u64 worked;		/* steps it did work in */
};

struct sim {
	struct vnet_rp rp;
	u64 fault_ns;		/* what a move costs in this schedule */
	u32 neps, nframes;
	struct sim_ep ep[SIM_MAX_EPS];
	int frame_ep[SIM_MAX_FRAMES];	/* -1: free */
	int fifo[SIM_MAX_EPS];
	u32 fifo_len;
	u64 now;
	u64 seed;
	u64 evictions, early;
	bool one_user;		/* one thread uses every endpoint */
};

static u32 sim_rand(struct sim *s)
{
	s->seed ^= s->seed << 13;
	s->seed ^= s->seed >> 7;
	s->seed ^= s->seed << 17;
	return (u32)(s->seed >> 11);
}

static bool sim_chance(struct sim *s, u32 percent)
{
	return sim_rand(s) % 100 < percent;
}

static void sim_snapshot(struct sim *s, struct vnet_rp_frame *fr)
{
	u32 f;

	for (f = 0; f < s->nframes; f++) {
		int i = s->frame_ep[f];
		struct sim_ep *e = i >= 0 ? &s->ep[i] : NULL;

		memset(&fr[f], 0, sizeof(fr[f]));
		if (!e)
			continue;
		fr[f].id = i + 1;
		if (e->where != SIM_IN)
			continue;
		fr[f].present = true;
		fr[f].partner = e->partner >= 0 ? e->partner + 1 : 0;
		fr[f].served = e->served;
		fr[f].queued = e->queued;
		fr[f].loaded_at = e->loaded_at;
		fr[f].active_at = e->active_at;
		/* Its user sleeps in the line: as cache.c marks it. */
		fr[f].user_waits = s->one_user && s->fifo_len;
	}
}

/*
 * The head of the FIFO claims a free frame, or the policy's victim's.  The
 * checks are the cache's invariants: a victim was allowed to go now, and a
 * busy one had its slice.
 */
static bool sim_claim(struct __test_metadata *_metadata, struct sim *s)
{
	struct vnet_rp_frame fr[SIM_MAX_FRAMES];
	struct sim_ep *e;
	u64 retry;
	int f, head;
	u32 i;

	if (!s->fifo_len)
		return false;
	head = s->fifo[0];
	e = &s->ep[head];
	for (f = 0; f < (int)s->nframes; f++)
		if (s->frame_ep[f] < 0)
			break;
	if (f == (int)s->nframes) {
		struct sim_ep *v;

		sim_snapshot(s, fr);
		f = vnet_rp_pick(&s->rp, fr, s->nframes, head + 1, s->now,
				 &retry);
		if (f < 0) {
			/* Asleep until exactly then; the loop gets there. */
			EXPECT_GT(retry, s->now);
			return false;
		}
		v = &s->ep[s->frame_ep[f]];
		EXPECT_LE(vnet_rp_evictable_at(&s->rp, &fr[f]), s->now);
		if (fr[f].user_waits ||
		    (v->served && !v->queued)) {
			u64 since = v->active_at > v->loaded_at ?
				    v->active_at : v->loaded_at;

			if (s->now < since + vnet_rp_idle_ns(&s->rp) &&
			    s->now < v->loaded_at + vnet_rp_slice_ns(&s->rp))
				s->early++;
		} else if (s->now < v->loaded_at + vnet_rp_slice_ns(&s->rp)) {
			s->early++;
		}
		if (!v->served && !fr[f].user_waits &&
		    s->now < v->loaded_at + s->rp.protect_ns)
			s->early++;
		v->where = SIM_OUT;
		v->resident_ns += s->now - v->loaded_at;
		v->frame = -1;
		s->evictions++;
	}
	s->frame_ep[f] = head;
	e->frame = f;
	e->where = SIM_MOVING;
	e->claimed_at = s->now;
	e->ready_at = s->now + s->fault_ns / 2 + sim_rand(s) % (s->fault_ns + 1);
	e->queued_wait = false;
	if (s->now - e->waiting_since > e->max_wait)
		e->max_wait = s->now - e->waiting_since;
	for (i = 1; i < s->fifo_len; i++)
		s->fifo[i - 1] = s->fifo[i];
	s->fifo_len--;
	return true;
}

/*
 * @e is in and has a message for its partner, which is out: the firmware
 * asks for it, and it joins the line.
 */
static void sim_ask(struct sim *s, int partner)
{
	struct sim_ep *p = &s->ep[partner];

	if (p->where != SIM_OUT || p->queued_wait)
		return;
	p->queued_wait = true;
	p->waiting_since = s->now;
	s->fifo[s->fifo_len++] = partner;
}

struct sim_load {
	bool pairs;		/* works only while its partner is in too */
	bool served_pairs;	/* odd ones come in only when asked for */
	bool one_user;		/* one thread uses them all, asleep in a fault */
	u32 lone;		/* but the last @lone, which talk to no one */
	u32 busy_pct;		/* a resident endpoint works in a step */
	u32 queued_pct;		/* and leaves messages queued */
	u32 want_on_pct;	/* an endpoint with no work gets some */
	u32 want_off_pct;	/* one with work runs out */
};

/* One step of @step_ns: loads finish, resident endpoints work, faults queue. */
static void sim_step(struct __test_metadata *_metadata, struct sim *s,
		     const struct sim_load *ld, u64 step_ns)
{
	u32 i;

	s->now += step_ns;
	for (i = 0; i < s->neps; i++) {
		struct sim_ep *e = &s->ep[i];

		if (e->where == SIM_MOVING && s->now >= e->ready_at) {
			e->where = SIM_IN;
			e->loaded_at = e->ready_at;
			e->served = false;
			e->loads++;
			vnet_rp_fault_done(&s->rp, e->ready_at - e->claimed_at);
		}
		if (e->wants ? sim_chance(s, ld->want_off_pct) :
			       sim_chance(s, ld->want_on_pct))
			e->wants = !e->wants;
		/* A server works for its client: it is asked in. */
		if (ld->served_pairs && (i & 1))
			e->wants = e->where != SIM_OUT ||
				   s->ep[e->partner].where == SIM_IN;
		if (e->where == SIM_IN) {
			bool work = e->wants && sim_chance(s, ld->busy_pct);

			if (e->partner >= 0 &&
			    s->ep[e->partner].where != SIM_IN) {
				if (ld->served_pairs && e->wants)
					sim_ask(s, e->partner);
				work = false;
			}
			/* The one user is asleep in a fault for another. */
			if (ld->one_user && s->fifo_len)
				work = false;

			if (work) {
				e->worked++;
				e->active_at = s->now;
				e->served = true;
			}
			e->queued = work && sim_chance(s, ld->queued_pct);
		} else if (e->where == SIM_OUT && e->wants && !e->queued_wait) {
			e->queued_wait = true;
			e->waiting_since = s->now;
			s->fifo[s->fifo_len++] = (int)i;
		}
	}
	while (sim_claim(_metadata, s))
		;
}

FIXTURE(schedule) {
	struct sim s;
};

FIXTURE_VARIANT(schedule) {
	u32 neps, nframes;
	u64 fault_ns;
	u64 protect_ns;		/* a NIC on the wire */
	struct sim_load load;
};

/* Every endpoint busy all the time: vnet-bench paging's worst case. */
FIXTURE_VARIANT_ADD(schedule, all_busy_2x) {
	.neps = 16, .nframes = 8, .fault_ns = 200 * US,
	.load = { .busy_pct = 100, .queued_pct = 50, .want_on_pct = 100 },
};

FIXTURE_VARIANT_ADD(schedule, all_busy_16x) {
	.neps = 128, .nframes = 8, .fault_ns = 200 * US,
	.load = { .busy_pct = 100, .queued_pct = 50, .want_on_pct = 100 },
};

/* Bursts: endpoints come and go, some idle in their frames. */
FIXTURE_VARIANT_ADD(schedule, bursty_4x) {
	.neps = 32, .nframes = 8, .fault_ns = 50 * US,
	.load = { .busy_pct = 30, .queued_pct = 20, .want_on_pct = 2,
		  .want_off_pct = 1 },
};

/* On the wire: unserved newcomers keep their frames past the slice. */
FIXTURE_VARIANT_ADD(schedule, wire_protect_4x) {
	.neps = 32, .nframes = 8, .fault_ns = 100 * US, .protect_ns = 6 * MS,
	.load = { .busy_pct = 20, .queued_pct = 20, .want_on_pct = 3,
		  .want_off_pct = 2 },
};

/*
 * Pairs that talk to each other, every one busy while its partner is in:
 * vnet-bench vnets with clients and servers on one NIC.
 */
FIXTURE_VARIANT_ADD(schedule, pairs_2x) {
	.neps = 16, .nframes = 8, .fault_ns = 200 * US,
	.load = { .pairs = true, .busy_pct = 100, .queued_pct = 50,
		  .want_on_pct = 100 },
};

FIXTURE_VARIANT_ADD(schedule, pairs_16x) {
	.neps = 128, .nframes = 8, .fault_ns = 200 * US,
	.load = { .pairs = true, .busy_pct = 100, .queued_pct = 50,
		  .want_on_pct = 100 },
};

/*
 * Clients and servers: a server comes in only when its client, in, has a
 * message for it, as the firmware asks for it (vnet-bench vnets).
 */
FIXTURE_VARIANT_ADD(schedule, served_pairs_2x) {
	.neps = 16, .nframes = 8, .fault_ns = 200 * US,
	.load = { .pairs = true, .served_pairs = true, .busy_pct = 100,
		  .queued_pct = 50, .want_on_pct = 100 },
};

FIXTURE_VARIANT_ADD(schedule, served_pairs_16x) {
	.neps = 128, .nframes = 8, .fault_ns = 200 * US,
	.load = { .pairs = true, .served_pairs = true, .busy_pct = 100,
		  .queued_pct = 50, .want_on_pct = 100 },
};

/*
 * One thread uses every endpoint and sleeps in each fault (vnet-bench
 * paging): a frame it left goes once idle, not at the end of a slice.
 */
FIXTURE_VARIANT_ADD(schedule, one_user_2x) {
	.neps = 16, .nframes = 8, .fault_ns = 200 * US,
	.load = { .one_user = true, .busy_pct = 100, .queued_pct = 100,
		  .want_on_pct = 100 },
};

FIXTURE_VARIANT_ADD(schedule, one_user_16x) {
	.neps = 128, .nframes = 8, .fault_ns = 200 * US,
	.load = { .one_user = true, .busy_pct = 100, .queued_pct = 100,
		  .want_on_pct = 100 },
};

/* Half in pairs, half talking across the wire: all get the same share. */
FIXTURE_VARIANT_ADD(schedule, pairs_and_lone_4x) {
	.neps = 32, .nframes = 8, .fault_ns = 200 * US,
	.load = { .pairs = true, .lone = 16, .busy_pct = 100,
		  .queued_pct = 50, .want_on_pct = 100 },
};

/* Fast faults: the floor of the slice decides. */
FIXTURE_VARIANT_ADD(schedule, cheap_faults_4x) {
	.neps = 12, .nframes = 3, .fault_ns = 2 * US,
	.load = { .busy_pct = 60, .queued_pct = 10, .want_on_pct = 5,
		  .want_off_pct = 5 },
};

FIXTURE_SETUP(schedule)
{
	u32 i;

	memset(&self->s, 0, sizeof(self->s));
	vnet_rp_init(&self->s.rp, 100 * US, 16, 2);
	self->s.fault_ns = variant->fault_ns;
	self->s.rp.protect_ns = variant->protect_ns;
	self->s.neps = variant->neps;
	self->s.nframes = variant->nframes;
	self->s.seed = 0x9e3779b97f4a7c15ULL;
	self->s.one_user = variant->load.one_user;
	self->s.now = 1 * MS;
	for (i = 0; i < SIM_MAX_FRAMES; i++)
		self->s.frame_ep[i] = -1;
	for (i = 0; i < self->s.neps; i++) {
		self->s.ep[i].frame = -1;
		self->s.ep[i].partner = variant->load.pairs &&
					i < self->s.neps - variant->load.lone ?
					(int)(i ^ 1) : -1;
	}
}

FIXTURE_TEARDOWN(schedule)
{
}

/*
 * Twenty thousand faults' worth of schedule in steps of a tenth of one.
 * FIFO turns and a slice per holder bound every wait: an endpoint waits
 * for the frames to turn over at most once per endpoint ahead of it, each
 * turn at most a slice and a move.
 */
TEST_F(schedule, invariants_hold)
{
	struct sim *s = &self->s;
	u64 step = s->fault_ns / 10, end = s->now + 20000 * s->fault_ns;
	u64 bound, hold, max_wait = 0, total = 0, lo = ~0ULL, hi = 0;
	u32 i, started = 0;

	while (s->now < end)
		sim_step(_metadata, s, &variant->load, step);

	EXPECT_EQ(0, s->early);
	EXPECT_GT(s->evictions, 0);
	hold = vnet_rp_slice_ns(&s->rp);
	if (hold < s->rp.protect_ns)
		hold = s->rp.protect_ns;
	/* Its user asleep, a frame is held as long as an idle one. */
	if (variant->load.one_user)
		hold = vnet_rp_idle_ns(&s->rp);
	bound = (s->neps / s->nframes + 2) * (hold + 2 * s->fault_ns);
	for (i = 0; i < s->neps; i++) {
		struct sim_ep *e = &s->ep[i];

		if (e->where == SIM_IN)
			e->resident_ns += s->now - e->loaded_at;
		if (e->queued_wait && s->now - e->waiting_since > e->max_wait)
			e->max_wait = s->now - e->waiting_since;
		if (e->max_wait > max_wait)
			max_wait = e->max_wait;
		if (e->loads)
			started++;
		total += e->resident_ns;
		if (e->resident_ns < lo)
			lo = e->resident_ns;
		if (e->resident_ns > hi)
			hi = e->resident_ns;
	}
	TH_LOG("%u eps on %u frames: %llu evictions, slice %llu us",
	       s->neps, s->nframes, (unsigned long long)s->evictions,
	       (unsigned long long)(vnet_rp_slice_ns(&s->rp) / US));
	TH_LOG("longest wait %llu us (bound %llu), residency %llu..%llu ms",
	       (unsigned long long)(max_wait / US),
	       (unsigned long long)(bound / US),
	       (unsigned long long)(lo / MS), (unsigned long long)(hi / MS));
	EXPECT_LE(max_wait, bound);
	EXPECT_EQ(s->neps, started);
	/* Talking pairs: every one gets work done, none starves. */
	if (variant->load.pairs) {
		u64 wlo = ~0ULL, whi = 0, steps = (end - 1 * MS) / step, all = 0;

		for (i = 0; i < s->neps; i++) {
			all += s->ep[i].worked;
			if (s->ep[i].worked < wlo)
				wlo = s->ep[i].worked;
			if (s->ep[i].worked > whi)
				whi = s->ep[i].worked;
		}
		TH_LOG("pairs worked %llu%% of the frames' steps, each %llu..%llu",
		       (unsigned long long)(100 * all / (steps * s->nframes)),
		       (unsigned long long)wlo, (unsigned long long)whi);
		EXPECT_LT(0, wlo);
	}
	/* Everyone busy all the time: everyone gets the same share. */
	if (variant->load.busy_pct == 100) {
		u64 mean = total / s->neps;

		EXPECT_GE(lo, mean - mean / 10);
		EXPECT_LE(hi, mean + mean / 10);
	}
}

TEST_HARNESS_MAIN
