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
	if (!f->served) {
		if (slice < rp->protect_ns)
			slice = rp->protect_ns;
		return f->loaded_at + slice;
	}
	at = f->loaded_at + slice;
	if (f->queued)
		return at;
	/* Activity is never before the load, whatever a stale stamp says. */
	idle_at = (f->active_at > f->loaded_at ? f->active_at : f->loaded_at) +
		  vnet_rp_idle_ns(rp);
	return idle_at < at ? idle_at : at;
}

/* Whether @f's partner is in a frame too, settled or on its way in or out. */
static bool vnet_rp_paired(const struct vnet_rp_frame *frames, u32 nframes,
			   const struct vnet_rp_frame *f)
{
	u32 i;

	if (!f->partner || f->partner == f->id)
		return false;
	for (i = 0; i < nframes; i++)
		if (frames[i].id == f->partner)
			return true;
	return false;
}

/*
 * The frame whose endpoint should leave at @now, or -1 when none may; then
 * *@retry_at is when one will (VNET_RP_NEVER: none is settled in a frame,
 * and only a move completing changes that).
 *
 * Of those that may leave, one whose partner is not in a frame goes
 * first: it can do nothing until its partner comes, while evicting one of
 * a pair that is in stops two.  Only the order among those that may go
 * changes, so no slice is cut short; and a pair does not keep its frames
 * for good: once only pairs may go, the pair whose slice ran out first
 * is split, and the one left behind goes next.
 */
int vnet_rp_pick(const struct vnet_rp *rp, const struct vnet_rp_frame *frames,
		 u32 nframes, u64 now, u64 *retry_at)
{
	u64 first = VNET_RP_NEVER, first_alone = VNET_RP_NEVER;
	int pick = -1, pick_alone = -1;
	u32 i;

	for (i = 0; i < nframes; i++) {
		u64 at = vnet_rp_evictable_at(rp, &frames[i]);

		if (at < first) {
			first = at;
			pick = i;
		}
		if (at <= now && at < first_alone &&
		    !vnet_rp_paired(frames, nframes, &frames[i])) {
			first_alone = at;
			pick_alone = i;
		}
	}
	*retry_at = first;
	if (first > now)
		return -1;
	return pick_alone >= 0 ? pick_alone : pick;
}
