// SPDX-License-Identifier: GPL-2.0
/*
 * The endpoint cache's residency policy; residency.h says what it decides
 * and why.  The caller serializes every call on one struct vnet_rp.
 */
#include "residency.h"

/* A new cost weighs 1/8: a few faults move the mean, one outlier doesn't. */
#define VNET_RP_EWMA_SHIFT	3

void vnet_rp_init(struct vnet_rp *rp, u64 min_slice_ns, u32 slice_faults,
		  u32 idle_faults)
{
	rp->fault_ns = 0;
	rp->min_slice_ns = min_slice_ns;
	rp->protect_ns = 0;
	rp->slice_faults = slice_faults;
	rp->idle_faults = idle_faults;
}

void vnet_rp_fault_done(struct vnet_rp *rp, u64 cost_ns)
{
	if (!rp->fault_ns) {
		rp->fault_ns = cost_ns;
		return;
	}
	rp->fault_ns = rp->fault_ns - (rp->fault_ns >> VNET_RP_EWMA_SHIFT) +
		       (cost_ns >> VNET_RP_EWMA_SHIFT);
}

u64 vnet_rp_slice_ns(const struct vnet_rp *rp)
{
	u64 slice = rp->fault_ns * rp->slice_faults;

	return slice > rp->min_slice_ns ? slice : rp->min_slice_ns;
}

u64 vnet_rp_idle_ns(const struct vnet_rp *rp)
{
	u64 idle = rp->fault_ns * rp->idle_faults;

	return idle > rp->min_slice_ns ? idle : rp->min_slice_ns;
}

/* The earliest time @f may leave its frame. */
u64 vnet_rp_evictable_at(const struct vnet_rp *rp,
			 const struct vnet_rp_frame *f)
{
	u64 slice = vnet_rp_slice_ns(rp);
	u64 at, idle_at;

	if (!f->present)
		return VNET_RP_NEVER;
	/*
	 * Not served: its whole slice, and on the wire until a NACKed sender
	 * is back.  Its user asleep in the line, it is held as an idle one
	 * is, queued or not, and only the wire's floor stays.
	 */
	if (!f->served && !f->user_waits) {
		if (slice < rp->protect_ns)
			slice = rp->protect_ns;
		return f->loaded_at + slice;
	}
	at = f->loaded_at + slice;
	if (f->queued && !f->user_waits)
		return at;
	/* Activity is never before the load, whatever a stale stamp says. */
	idle_at = (f->active_at > f->loaded_at ? f->active_at : f->loaded_at) +
		  vnet_rp_idle_ns(rp);
	if (idle_at < at)
		at = idle_at;
	/* A sender NACKed on the wire still comes back for it. */
	if (!f->served && at < f->loaded_at + rp->protect_ns)
		at = f->loaded_at + rp->protect_ns;
	return at;
}

/*
 * Whether @f waits for its partner: it last talked to another endpoint of
 * its NIC, and that one is in no frame -- not settled, not on its way in
 * (the cache names no endpoint on its way out), and not @incoming, the
 * endpoint the frame is wanted for.
 */
static bool vnet_rp_waits(const struct vnet_rp_frame *frames, u32 nframes,
			  u32 incoming, const struct vnet_rp_frame *f)
{
	u32 i;

	if (!f->partner || f->partner == f->id || f->partner == incoming)
		return false;
	for (i = 0; i < nframes; i++)
		if (frames[i].id == f->partner)
			return false;
	return true;
}

/*
 * The frame whose endpoint should leave at @now to make room for
 * @incoming (an id, or 0), or -1 when none may; then *@retry_at is when
 * one will (VNET_RP_NEVER: none is settled in a frame, and only a move
 * completing changes that).
 *
 * Of those that may leave, one that waits for its partner goes first: it
 * can do nothing until its partner comes, while evicting one of a pair
 * that is in stops two.  The endpoint coming in counts as in: it comes
 * for its partner, most likely.  One that talks to no endpoint of its NIC
 * -- across the wire, or to itself -- waits for nobody and takes its turn
 * with the pairs.  Only the order among those that may go changes, so no
 * slice is cut short; once none that may go waits for its partner, the
 * one whose slice ran out first goes, and if it leaves a partner behind,
 * that one goes next.
 */
int vnet_rp_pick(const struct vnet_rp *rp, const struct vnet_rp_frame *frames,
		 u32 nframes, u32 incoming, u64 now, u64 *retry_at)
{
	u64 first = VNET_RP_NEVER, first_waiting = VNET_RP_NEVER;
	int pick = -1, pick_waiting = -1;
	u32 i;

	for (i = 0; i < nframes; i++) {
		u64 at = vnet_rp_evictable_at(rp, &frames[i]);

		if (at < first) {
			first = at;
			pick = i;
		}
		if (at <= now && at < first_waiting &&
		    vnet_rp_waits(frames, nframes, incoming, &frames[i])) {
			first_waiting = at;
			pick_waiting = i;
		}
	}
	*retry_at = first;
	if (first > now)
		return -1;
	return pick_waiting >= 0 ? pick_waiting : pick;
}
