/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The endpoint cache's residency policy: how long an endpoint keeps the
 * frame it was brought into, and which one leaves when a frame is needed.
 * It includes no kernel header, so the host tests run it against long
 * random schedules; the cache (cache.c) feeds it a snapshot of the frames
 * under nic->lock.
 *
 * A fault-in costs a measured fault_ns (copy out, copy in; not the
 * victim's flush, which its peers decide).  An
 * endpoint brought in keeps its frame for a slice of slice_faults such
 * costs, so that the move is paid for by the work done in the frame:
 *
 *  - not served yet (what it was brought in for has not happened): it
 *    keeps the frame for the whole slice, and at least protect_ns (a
 *    sender NACKed on the wire comes back a round trip after it is told
 *    the endpoint is in);
 *  - served and busy: it keeps the frame for its slice;
 *  - served and idle (nothing moved, nothing queued) for idle_faults
 *    costs, and at least min_slice_ns: it can go early -- keeping it
 *    longer than a fault costs would waste more than bringing it back
 *    does (the ski-rental bound), but a peer across the wire needs a
 *    round trip between a reply and its next request;
 *  - its user asleep in the line for another frame, served or not,
 *    queued or not: it goes when it would idle (not before protect_ns
 *    if not served).  The slice is there for its user's work, and none
 *    is done while the user sleeps; one thread that drives many
 *    endpoints would otherwise wait out a slice in every fault, with
 *    every frame it holds idle meanwhile.
 *
 * Of the endpoints that may go, the one that could go earliest goes
 * first: the longest idle, or the one whose slice ran out first.  That is
 * round-robin over the busy endpoints, so none is evicted before it has
 * had its slice, and none starves.  When none may go, the policy says when
 * the first one will, so that a waiting fault sleeps exactly until then.
 *
 * Endpoints of one NIC that talk to each other work only while both are
 * in a frame.  The firmware names the endpoint of the NIC that each one
 * last sent a message to or had one from (its partner), and of those that
 * may go, one whose partner is in no frame -- not settled, not on its
 * way, not the endpoint the frame is for -- goes first: it can do nothing
 * until its partner comes, while evicting half of a pair stops two, and
 * brings one of them back for the other's next message.  An endpoint that
 * talks only across the wire has no partner, waits for nobody, and takes
 * its turn with the pairs.  That only reorders those that may go; pairs
 * take turns like endpoints, split when none that may go waits for its
 * partner, the one whose slice ran out first.
 *
 * The partner is a hint, not a right: an endpoint that sends a message
 * to another makes each the other's partner, and an index is used again
 * once its endpoint is closed.  A wrong partner moves an endpoint within
 * the order of those that may go; it takes none out before its slice is
 * over.
 */
#ifndef _VNET_RESIDENCY_H
#define _VNET_RESIDENCY_H

#include <vnet_fw_env.h>

#define VNET_RP_NEVER		(~0ULL)

struct vnet_rp {
	u64 fault_ns;		/* mean fault-in cost, moving average */
	u64 min_slice_ns;	/* floor of the slice and of idleness */
	u64 protect_ns;		/* an unserved newcomer's floor */
	u32 slice_faults;	/* slice = slice_faults * fault_ns */
	u32 idle_faults;	/* idle after idle_faults * fault_ns */
};

/* What the policy needs to know of one frame, at one instant. */
struct vnet_rp_frame {
	bool present;		/* settled in the frame: it may be chosen */
	bool served;		/* what it was brought in for has happened */
	bool queued;		/* messages wait in its queues */
	bool user_waits;	/* the thread that uses it waits for a frame */
	u64 loaded_at;		/* ns */
	u64 active_at;		/* ns: the last message it sent or received */
	u32 id;			/* who is in it, settled or coming; 0: none */
	u32 partner;		/* the id it last exchanged a message with, or 0 */
};

void vnet_rp_init(struct vnet_rp *rp, u64 min_slice_ns, u32 slice_faults,
		  u32 idle_faults);
void vnet_rp_fault_done(struct vnet_rp *rp, u64 cost_ns);
u64 vnet_rp_slice_ns(const struct vnet_rp *rp);
u64 vnet_rp_idle_ns(const struct vnet_rp *rp);
u64 vnet_rp_evictable_at(const struct vnet_rp *rp,
			 const struct vnet_rp_frame *f);
int vnet_rp_pick(const struct vnet_rp *rp, const struct vnet_rp_frame *frames,
		 u32 nframes, u32 incoming, u64 now, u64 *retry_at);

#endif /* _VNET_RESIDENCY_H */
