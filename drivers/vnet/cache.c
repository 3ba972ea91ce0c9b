// SPDX-License-Identifier: GPL-2.0
/*
 * The endpoint cache.  A NIC's frames cache endpoints the way page frames
 * cache pages: an endpoint is loaded onto the card when its process touches
 * its mapping or a message arrives for it, and a victim is evicted when no
 * frame is free.
 *
 * When the endpoints at work outnumber the frames, the cache schedules the
 * frames the way a CPU scheduler schedules a CPU (residency.h): an endpoint
 * brought in keeps its frame for a time slice that is long against what a
 * fault-in costs -- measured here, fault by fault -- unless it goes idle
 * first; the endpoint that could leave earliest leaves first.  Faults that
 * find no frame they may take queue in arrival order: only the first in
 * line claims a frame, and it sleeps until exactly the moment the policy
 * names, or until a frame settles; leaving the line wakes the next.  No
 * endpoint starves, and none of it depends on how many CPUs fault at once.
 *
 * An endpoint evicted with messages in its send queues is queued to fault
 * straight back in: nothing else would bring it back while its owner
 * waits for replies.
 *
 * Every move runs in the context of whoever needs the frame, without
 * nic->lock held: claim the frame and mark both endpoints moving under the
 * lock, then unload the victim and load the new endpoint outside it.  Only
 * threads touching one of those two endpoints wait.
 */
#include <linux/delay.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/sched/signal.h>

#include "trace.h"
#include "vnet.h"

static bool vnet_ep_settled(struct vnet_ep *ep)
{
	enum vnet_ep_state state = READ_ONCE(ep->state);

	return state == VNET_EP_RESIDENT || state == VNET_EP_NONRESIDENT;
}

/* Idle for twice what a fault costs: bringing it back would be cheaper. */
#define VNET_IDLE_FAULTS	2

void vnet_cache_init(struct vnet_nic *nic)
{
	INIT_LIST_HEAD(&nic->frame_waiters);
	vnet_rp_init(&nic->rp, 0, 0, VNET_IDLE_FAULTS);
}

/* A frame may be claimable now: the first fault in line looks again. */
static void vnet_cache_frames_changed(struct vnet_nic *nic)
{
	struct vnet_ep *first;

	lockdep_assert_held(&nic->lock);
	WRITE_ONCE(nic->frame_gen, nic->frame_gen + 1);
	first = list_first_entry_or_null(&nic->frame_waiters, struct vnet_ep,
					 frame_wait);
	if (first)
		wake_up_all(&first->state_wq);
}

static bool vnet_cache_first_in_line(struct vnet_nic *nic, struct vnet_ep *ep)
{
	lockdep_assert_held(&nic->lock);
	return list_empty(&nic->frame_waiters) ||
	       nic->frame_waiters.next == &ep->frame_wait;
}

/* Out of the line of waiting faults, handing the turn on if it had it. */
static void vnet_cache_leave_line(struct vnet_ep *ep)
{
	struct vnet_nic *nic = ep->nic;
	bool first;

	lockdep_assert_held(&nic->lock);
	if (list_empty(&ep->frame_wait))
		return;
	first = nic->frame_waiters.next == &ep->frame_wait;
	list_del_init(&ep->frame_wait);
	ep->waiter = NULL;
	if (first)
		vnet_cache_frames_changed(nic);
}

/*
 * The residency state machine.  Every change goes through here, under
 * nic->lock, and keeps the frame table and the resident count in step:
 *
 *   nonresident -> loading      a frame is claimed for it (@frame)
 *   loading     -> resident     its image is on the card
 *   loading     -> nonresident  the eviction that was to free its frame
 *                               was interrupted
 *   resident    -> unloading    picked as a victim, or closing
 *   unloading   -> nonresident  its image is back in host memory
 *   unloading   -> resident     the eviction was interrupted
 *
 * A frame belongs to whoever claimed it last: a victim that is unloading
 * has already handed its frame to the newcomer, so leaving it does not
 * free the frame; a closing endpoint still owns it and frees it.
 */
static bool vnet_ep_transition_ok(enum vnet_ep_state from,
				  enum vnet_ep_state to)
{
	switch (from) {
	case VNET_EP_NONRESIDENT:
		return to == VNET_EP_LOADING;
	case VNET_EP_LOADING:
	case VNET_EP_UNLOADING:
		return to == VNET_EP_RESIDENT || to == VNET_EP_NONRESIDENT;
	case VNET_EP_RESIDENT:
		return to == VNET_EP_UNLOADING;
	}
	return false;
}

static void vnet_ep_set_state(struct vnet_ep *ep, enum vnet_ep_state to,
			      int frame)
{
	struct vnet_nic *nic = ep->nic;
	enum vnet_ep_state from = ep->state;

	lockdep_assert_held(&nic->lock);
	if (WARN_ON_ONCE(!vnet_ep_transition_ok(from, to)))
		return;

	switch (to) {
	case VNET_EP_LOADING:
		ep->frame = frame;
		nic->frame_ep[frame] = ep;
		break;
	case VNET_EP_RESIDENT:
		nic->frame_ep[ep->frame] = ep;
		WRITE_ONCE(nic->resident, nic->resident + 1);
		vnet_cache_frames_changed(nic);
		break;
	case VNET_EP_UNLOADING:
		WRITE_ONCE(nic->resident, nic->resident - 1);
		break;
	case VNET_EP_NONRESIDENT:
		if (nic->frame_ep[ep->frame] == ep) {
			nic->frame_ep[ep->frame] = NULL;
			vnet_cache_frames_changed(nic);
		}
		ep->frame = -1;
		break;
	}
	WRITE_ONCE(ep->state, to);
}

static void vnet_cache_delay(struct vnet_nic *nic)
{
	u32 ms = READ_ONCE(nic->page_delay_ms);

	if (ms)
		msleep(ms);
}

/*
 * A move publishes an endpoint's new state, drops nic->lock, then wakes the
 * endpoint's sleepers: its owner can close it in between.  Tests hold that
 * window open (lifetime_test); the move's reference keeps the endpoint.
 */
static void vnet_cache_wake_delay(struct vnet_nic *nic)
{
	u32 us = READ_ONCE(nic->wake_delay_us);

	if (us)
		fsleep(us);
}

/*
 * The policy's parameters follow the module's.  A newcomer on a NIC on the
 * wire may have been brought in by a message NACKed "not resident": the
 * firmware tells the sender's NIC that the endpoint is back in the round
 * after the load (RESUME, firmware/resume.c), and the message follows a
 * round trip later, which the transport takes to be shorter than a
 * retransmission quantum.  So an unserved newcomer keeps its frame for at
 * least a quantum.
 *
 * Not for the two quanta after the load within which the sender's timer
 * would bring the message should the RESUME be lost: that would idle the
 * frame of every unserved newcomer that long -- also one whose sender
 * cannot come back yet (it is moving itself), or one brought in for
 * anything else -- to spare a rare lost RESUME one more NACK and fault.
 */
static void vnet_cache_tune(struct vnet_nic *nic)
{
	struct vnet_rp *rp = &nic->rp;

	lockdep_assert_held(&nic->lock);
	rp->min_slice_ns = (u64)READ_ONCE(vnet_min_resident_us) * NSEC_PER_USEC;
	rp->slice_faults = READ_ONCE(vnet_slice_faults);
	rp->protect_ns = READ_ONCE(nic->link) ?
			 nic->fw.quantum * NSEC_PER_USEC : 0;
}

/*
 * Whether @ep was served since its load; the first time the firmware says
 * so, how long its frame waited for that, part of what the load cost, goes
 * into the counters.  The firmware stamps it in its own clock, in us, at
 * the start of its turn: a load served in the round that found it can
 * look served a few us before it was loaded, and waited nothing.
 */
static bool vnet_cache_sample_served(struct vnet_nic *nic, struct vnet_ep *ep)
{
	u64 served_at, loaded_at, wait = 0;

	lockdep_assert_held(&nic->lock);
	if (ep->serve_sampled)
		return true;
	/* Pairs with the firmware's release of served after served_at. */
	if (!smp_load_acquire(&ep->fw.served))
		return false;
	served_at = READ_ONCE(ep->fw.served_at);
	loaded_at = div_u64(ep->loaded_at, NSEC_PER_USEC);
	if (served_at > loaded_at)
		wait = (served_at - loaded_at) * NSEC_PER_USEC;
	ep->serve_sampled = true;
	nic->serve_waits++;
	nic->serve_wait_ns += wait;
	return true;
}

/*
 * The faults in line that the frames turn over for next: a waiter among
 * them may find one of its frames idle, and nobody further back will.
 * It also bounds the work under nic->lock.
 */
#define VNET_LINE_LOOKAHEAD	16

/* User threads that wait for a frame: the claimer and those next in line. */
struct vnet_cache_waiting {
	struct pid *pids[VNET_LINE_LOOKAHEAD + 1];
	u32 n;
};

static void vnet_cache_waiting_users(struct vnet_nic *nic,
				     struct vnet_cache_waiting *w)
{
	struct vnet_ep *ep;
	u32 seen = 0;

	lockdep_assert_held(&nic->lock);
	w->n = 0;
	/* A worker faults for nobody in particular. */
	if (!(current->flags & PF_KTHREAD))
		w->pids[w->n++] = task_pid(current);
	list_for_each_entry(ep, &nic->frame_waiters, frame_wait) {
		if (ep->waiter)
			w->pids[w->n++] = ep->waiter;
		if (++seen == VNET_LINE_LOOKAHEAD)
			break;
	}
}

/*
 * Whether the thread that mapped @ep in since its load waits for a frame:
 * it does no work in @ep meanwhile.
 */
static bool vnet_cache_user_waits(const struct vnet_cache_waiting *w,
				  const struct vnet_ep *ep)
{
	u32 i;

	for (i = 0; ep->mapper && i < w->n; i++)
		if (w->pids[i] == ep->mapper)
			return true;
	return false;
}

/* Whether @pid mapped in an endpoint now in a frame. */
static bool vnet_cache_maps_a_frame(struct vnet_nic *nic, struct pid *pid)
{
	u32 f;

	lockdep_assert_held(&nic->lock);
	for (f = 0; f < nic->nframes; f++)
		if (nic->frame_ep[f] && nic->frame_ep[f]->mapper == pid)
			return true;
	return false;
}

/*
 * The resident endpoint to evict at @now to make room for @incoming, or
 * NULL and in *@retry_at when one may go.  The firmware stamps activity
 * in its own clock, in us.
 */
static struct vnet_ep *vnet_cache_pick_victim(struct vnet_nic *nic,
					      struct vnet_ep *incoming,
					      u64 now, u64 *retry_at)
{
	struct vnet_cache_waiting waiting;
	u32 f;
	int pick;

	lockdep_assert_held(&nic->lock);
	vnet_cache_tune(nic);
	vnet_cache_waiting_users(nic, &waiting);
	for (f = 0; f < nic->nframes; f++) {
		struct vnet_rp_frame *rf = &nic->rp_frames[f];
		struct vnet_ep *ep = nic->frame_ep[f];
		struct vnet_frame *frame = vnet_frame_addr(nic, f);

		/*
		 * Indices stop at INT_MAX (vnet_ep_create()), so no id is 0.
		 * One on its way out of the frame -- evicted or closing --
		 * counts as out: its partner waits for it.
		 */
		rf->id = ep && ep->state != VNET_EP_UNLOADING ?
			 ep->index + 1 : 0;
		rf->present = ep && ep->state == VNET_EP_RESIDENT;
		if (!rf->present)
			continue;
		rf->user_waits = vnet_cache_user_waits(&waiting, ep);
		rf->partner = READ_ONCE(ep->fw.partner);
		rf->served = vnet_cache_sample_served(nic, ep);
		rf->queued = vnet_fw_sends_pending(&ep->fw, frame) ||
			     vnet_fw_recv_pending(frame);
		rf->loaded_at = ep->loaded_at;
		rf->active_at = READ_ONCE(ep->fw.active_at) * NSEC_PER_USEC;
	}
	pick = vnet_rp_pick(&nic->rp, nic->rp_frames, nic->nframes,
			    incoming->index + 1, now, retry_at);
	return pick < 0 ? NULL : nic->frame_ep[pick];
}

/*
 * Claim a frame for @ep: a free one, or one whose owner we start evicting.
 * The victim is used after nic->lock is dropped, and its owner may close
 * it meanwhile: it comes with a reference.  Returns -1 when no frame may
 * be taken now; *@retry_at says when one may.
 */
static int vnet_cache_claim(struct vnet_nic *nic, struct vnet_ep *ep,
			    struct vnet_ep **victim, u64 *retry_at)
{
	u32 f;

	lockdep_assert_held(&nic->lock);
	*victim = NULL;
	for (f = 0; f < nic->nframes; f++)
		if (!nic->frame_ep[f])
			break;
	if (f == nic->nframes) {
		*victim = vnet_cache_pick_victim(nic, ep, ktime_get_ns(),
						 retry_at);
		if (!*victim)
			return -1;
		/* In a frame, so its file still holds it. */
		kobject_get(&(*victim)->kobj);
		f = (*victim)->frame;
		vnet_ep_set_state(*victim, VNET_EP_UNLOADING, f);
	}
	vnet_ep_set_state(ep, VNET_EP_LOADING, f);
	return f;
}

/*
 * Flushed, or nothing will ever answer: the NIC's firmware has stopped (it
 * returned everything in flight as unreachable on its way out).
 */
static bool vnet_ep_flushed(struct vnet_ep *ep)
{
	return !READ_ONCE(ep->fw.unresolved) || READ_ONCE(ep->nic->fw_stopped);
}

/*
 * The firmware's side of a move, run between its turns (fw_call.c).  From
 * the fence on it sends nothing from the endpoint and delivers nothing
 * into it; the release takes the frame from it (and lets what it has on
 * channels go on, as for any endpoint off the card), the unfence gives
 * the endpoint back as it was.
 */
struct vnet_cache_fence {
	struct vnet_ep *ep;
	u32 unresolved;		/* its messages on the wire at the fence */
};

static void vnet_cache_unfence(struct vnet_nic *nic, void *arg)
{
	struct vnet_cache_fence *fence = arg;

	lockdep_assert_held(&nic->fw_lock);
	fence->ep->fw.moving = false;
}

static void vnet_cache_release(struct vnet_nic *nic, void *arg)
{
	struct vnet_cache_fence *fence = arg;

	lockdep_assert_held(&nic->fw_lock);
	WRITE_ONCE(fence->ep->fw.frame, NULL);
	vnet_cache_unfence(nic, arg);
}

/*
 * With nothing of it on the wire there is nothing to flush: the fence
 * lets go of the frame at once, as the release would after the flush,
 * and the move waits for the firmware's turn once rather than twice.
 */
static void vnet_cache_fence(struct vnet_nic *nic, void *arg)
{
	struct vnet_cache_fence *fence = arg;

	lockdep_assert_held(&nic->fw_lock);
	fence->ep->fw.moving = true;
	fence->unresolved = fence->ep->fw.unresolved;
	if (!fence->unresolved)
		vnet_cache_release(nic, arg);
}

/*
 * Take @ep out of frame @f.  First the firmware stops sending from it and
 * delivering into it, and user space loses its mapping; then, by the flush
 * rule, we wait until every message it has on the wire is ACKed, has the
 * NACK of its latest transmission, or has been returned (the return can
 * still write into the frame meanwhile); only then does the firmware let
 * go of the frame -- at once, in the fence, when nothing is on the wire.
 * Late or duplicate ACKs and NACKs after that match no channel state of
 * this endpoint's.
 *
 * The wait can be long when a peer is slow.  An eviction gives up, putting
 * the endpoint back as it was (its frame was not touched), when the thread
 * that needs the frame gets a fatal signal (-EINTR) or the @newcomer it
 * was for is being closed (-ENODEV): a fault worker gets no signals, and
 * the newcomer's close waits for this load.  A closing @ep (no newcomer)
 * has been forgotten by the firmware and waits for nothing on the wire.
 *
 * What fencing the firmware off (one command when nothing of it is on the
 * wire, else two; each waits for the firmware's turn in progress to end)
 * and the zap took goes into @t: the two are most of what an eviction of
 * an endpoint with nothing on the wire costs.  The zap runs while the
 * firmware finishes its turn, and the fence counts only the wait beyond it.
 */
static int vnet_cache_detach(struct vnet_ep *ep, int f,
			     struct vnet_ep *newcomer,
			     struct vnet_fault_times *t)
{
	struct vnet_cache_fence fence = { .ep = ep };
	struct vnet_fw_call call = { .fn = vnet_cache_fence, .arg = &fence };
	struct vnet_nic *nic = ep->nic;
	u64 start = ktime_get_ns(), posted, zapped, asked;

	WRITE_ONCE(nic->fw_frame_owner[f], NULL);
	/*
	 * The fence waits for the firmware's turn in progress; the zap needs
	 * no firmware.  Both come before the copy, in either order.
	 */
	vnet_fw_call_post(nic, &call);
	posted = ktime_get_ns();
	down_write(&ep->map_sem);
	unmap_mapping_range(ep->mapping, ep->frame_off, VNET_FRAME_SIZE, 1);
	up_write(&ep->map_sem);
	zapped = ktime_get_ns();
	vnet_fw_call_wait(nic, &call);
	t->zap_ns = zapped - posted;
	/* What the firmware kept the move waiting beyond the zap. */
	t->fence_ns = ktime_get_ns() - start - t->zap_ns;

	/*
	 * Polled too: a NIC going away cannot wake all it forgot.  Nothing on
	 * the wire at the fence: it let go of the frame itself.
	 */
	while (fence.unresolved && !vnet_ep_flushed(ep)) {
		long ret;

		if (!newcomer) {
			wait_event_timeout(ep->state_wq, vnet_ep_flushed(ep),
					   HZ / 10);
			continue;
		}
		ret = wait_event_killable_timeout(ep->state_wq,
						  vnet_ep_flushed(ep) ||
						  READ_ONCE(newcomer->dead),
						  HZ / 10);
		if (ret >= 0 && !READ_ONCE(newcomer->dead))
			continue;
		vnet_fw_call(nic, vnet_cache_unfence, &fence);
		/* Back in the frame table, as vnet_cache_load() publishes. */
		smp_store_release(&nic->fw_frame_owner[f], &ep->fw);
		/*
		 * Peers it NACKed "not resident" while it was moving hear
		 * that it stayed in the firmware's next round: make it now.
		 */
		vnet_card_doorbell(nic);
		ret = ret < 0 ? -EINTR : -ENODEV;
		trace_vnet_flush(ep, f, fence.unresolved, ktime_get_ns() - start,
				 ret);
		return ret;
	}

	if (fence.unresolved) {
		asked = ktime_get_ns();
		vnet_fw_call(nic, vnet_cache_release, &fence);
		t->fence_ns += ktime_get_ns() - asked;
	}
	trace_vnet_flush(ep, f, fence.unresolved, ktime_get_ns() - start,
			 0);
	return 0;
}

static int vnet_cache_unload(struct vnet_ep *victim, int f,
			     struct vnet_ep *newcomer, struct vnet_fault_times *t)
{
	struct vnet_nic *nic = victim->nic;
	struct pid *mapper;
	u64 start = ktime_get_ns();
	int err;

	err = vnet_cache_detach(victim, f, newcomer, t);
	if (err)
		return err;
	t->flush_ns = ktime_get_ns() - start;
	vnet_cache_delay(nic);
	memcpy(victim->image, vnet_frame_addr(nic, f), VNET_FRAME_SIZE);
	if (vnet_fw_sends_pending(&victim->fw, victim->image))
		vnet_ep_queue_fault(victim);

	spin_lock(&nic->lock);
	vnet_ep_set_state(victim, VNET_EP_NONRESIDENT, -1);
	/* Nobody maps it in until its next load. */
	mapper = victim->mapper;
	victim->mapper = NULL;
	victim->evictions++;
	nic->evictions++;
	spin_unlock(&nic->lock);
	put_pid(mapper);
	vnet_cache_wake_delay(nic);
	wake_up_all(&victim->state_wq);
	t->unload_ns = ktime_get_ns() - start - t->flush_ns;
	trace_vnet_evict(victim, f, newcomer, t->victim_served, t->unload_ns);
	return 0;
}

/* The eviction for @ep was interrupted: the victim keeps frame @f. */
static void vnet_cache_abort(struct vnet_ep *ep, struct vnet_ep *victim)
{
	struct vnet_nic *nic = ep->nic;

	spin_lock(&nic->lock);
	vnet_ep_set_state(ep, VNET_EP_NONRESIDENT, -1);
	vnet_ep_set_state(victim, VNET_EP_RESIDENT, victim->frame);
	spin_unlock(&nic->lock);
	vnet_cache_wake_delay(nic);
	wake_up_all(&victim->state_wq);
	wake_up_all(&ep->state_wq);
}

static void vnet_cache_load(struct vnet_ep *ep, int f)
{
	struct vnet_nic *nic = ep->nic;
	struct vnet_frame *frame = vnet_frame_addr(nic, f);
	u64 loaded_at;

	vnet_cache_delay(nic);
	memcpy(frame, ep->image, VNET_FRAME_SIZE);
	vnet_fw_frame_restore(&ep->fw, frame);
	WRITE_ONCE(ep->fw.served, false);
	/* From here a firmware round may find it, and serve it. */
	loaded_at = ktime_get_ns();
	/*
	 * Publish the copied image before the firmware can find it, through
	 * either the frame table or a lookup of the endpoint.
	 */
	smp_store_release(&ep->fw.frame, frame);
	/* Pairs with the firmware's acquire of the frame owner's frame. */
	smp_store_release(&nic->fw_frame_owner[f], &ep->fw);

	spin_lock(&nic->lock);
	vnet_ep_set_state(ep, VNET_EP_RESIDENT, f);
	ep->loaded_at = loaded_at;
	ep->serve_sampled = false;
	spin_unlock(&nic->lock);
	wake_up_all(&ep->state_wq);
	vnet_card_doorbell(nic);
}

/*
 * Sleep until the frames change (generation @gen is gone), @ep is being
 * closed, or -- unless VNET_RP_NEVER -- the policy's time @until, to the
 * nanosecond: rounding a wait for a slice up to the tick idles the frame
 * in between.  A resident endpoint that goes idle earlier, or a new value
 * of a parameter, does not wake the sleeper: it oversleeps by at most the
 * slice it was waiting out.  Returns -EINTR on a fatal signal.
 */
static int vnet_cache_sleep(struct vnet_ep *ep, u64 gen, u64 until)
{
	ktime_t expires = ns_to_ktime(until);
	struct vnet_nic *nic = ep->nic;
	DEFINE_WAIT(wait);
	int ret = 0;

	for (;;) {
		prepare_to_wait(&ep->state_wq, &wait, TASK_KILLABLE);
		if (READ_ONCE(nic->frame_gen) != gen || READ_ONCE(ep->dead))
			break;
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			break;
		}
		if (until == VNET_RP_NEVER)
			schedule();
		else if (!schedule_hrtimeout(&expires, HRTIMER_MODE_ABS))
			break;
	}
	finish_wait(&ep->state_wq, &wait);
	return ret;
}

static void vnet_cache_count_wait(struct vnet_ep *ep,
				  enum vnet_frame_wait_why why, u64 slept_ns,
				  u64 late_ns)
{
	struct vnet_nic *nic = ep->nic;

	lockdep_assert_held(&nic->lock);
	nic->frame_waits++;
	nic->frame_wait_ns += slept_ns;
	nic->wait_ns[why] += slept_ns;
	nic->wake_late_ns += late_ns;
	trace_vnet_frame_wait(ep, why, slept_ns, late_ns);
}

/*
 * Wait in line for a frame for @ep and claim it; called and returns with
 * nic->lock held.  Returns the frame, with *@victim to evict from it (or
 * NULL), or -1 when @ep need not or cannot be loaded after all: look at it
 * again (it became resident or is moving), or *@err says why not.
 */
static int vnet_cache_wait_frame(struct vnet_ep *ep, struct vnet_ep **victim,
				 u64 *waited, int *err)
	__must_hold(&ep->nic->lock)
{
	struct vnet_nic *nic = ep->nic;
	bool joined = false;

	lockdep_assert_held(&nic->lock);
	*err = 0;
	while (!ep->dead && ep->state == VNET_EP_NONRESIDENT) {
		u64 until = VNET_RP_NEVER, gen, slept, woke, late = 0;
		enum vnet_frame_wait_why why = VNET_WAIT_TURN;
		int f;

		if (vnet_cache_first_in_line(nic, ep)) {
			f = vnet_cache_claim(nic, ep, victim, &until);
			if (f >= 0) {
				vnet_cache_leave_line(ep);
				if (joined)
					ep->line_users--;
				return f;
			}
			why = until == VNET_RP_NEVER ? VNET_WAIT_MOVE :
						       VNET_WAIT_SLICE;
		}
		if (!joined) {
			joined = true;
			ep->line_users++;
		}
		if (list_empty(&ep->frame_wait))
			list_add_tail(&ep->frame_wait, &nic->frame_waiters);
		if (!ep->waiter && !(current->flags & PF_KTHREAD)) {
			ep->waiter = task_pid(current);
			/* The frames of its other endpoints may go sooner. */
			if (vnet_cache_maps_a_frame(nic, ep->waiter))
				vnet_cache_frames_changed(nic);
		}
		gen = nic->frame_gen;
		spin_unlock(&nic->lock);

		slept = ktime_get_ns();
		*err = vnet_cache_sleep(ep, gen, until);
		woke = ktime_get_ns();
		slept = woke - slept;
		if (until != VNET_RP_NEVER && woke > until)
			late = woke - until;

		spin_lock(&nic->lock);
		vnet_cache_count_wait(ep, why, slept, late);
		*waited += slept;
		if (*err)
			break;
	}
	/* Another user thread in the place may name itself instead. */
	if (ep->waiter == task_pid(current))
		ep->waiter = NULL;
	/* The place is the endpoint's: others may still wait in it. */
	if (joined && !--ep->line_users)
		vnet_cache_leave_line(ep);
	if (ep->dead)
		*err = -ENODEV;
	return -1;
}

/*
 * Make @ep resident, sleeping while it or a frame for it is in motion.
 * Returns 0, -ENODEV for an endpoint being closed (before or while it is
 * loaded), or -EINTR when a fatal signal arrives while waiting.
 */
int vnet_ep_fault_in(struct vnet_ep *ep)
{
	struct vnet_fault_times t = { .victim = -1 };
	struct vnet_nic *nic = ep->nic;
	struct vnet_ep *victim = NULL;
	u64 start, waited = 0;
	int f, err;

	spin_lock(&nic->lock);
	for (;;) {
		if (ep->dead) {
			spin_unlock(&nic->lock);
			return -ENODEV;
		}
		if (ep->state == VNET_EP_RESIDENT) {
			spin_unlock(&nic->lock);
			return 0;
		}
		if (ep->state == VNET_EP_NONRESIDENT) {
			f = vnet_cache_wait_frame(ep, &victim, &waited, &err);
			if (f >= 0)
				break;
			if (err) {
				spin_unlock(&nic->lock);
				return err;
			}
			continue;
		}
		spin_unlock(&nic->lock);
		if (wait_event_killable(ep->state_wq, vnet_ep_settled(ep)))
			return -EINTR;
		spin_lock(&nic->lock);
	}
	if (victim) {
		t.victim = victim->index;
		/* As the policy saw it: a victim counts as one or the other. */
		t.victim_served = victim->serve_sampled;
	}
	spin_unlock(&nic->lock);

	start = ktime_get_ns();
	if (victim) {
		err = vnet_cache_unload(victim, f, ep, &t);
		if (err)
			vnet_cache_abort(ep, victim);
		kobject_put(&victim->kobj);
		if (err)
			return err;
	}
	t.load_ns = ktime_get_ns();
	vnet_cache_load(ep, f);
	t.load_ns = ktime_get_ns() - t.load_ns;
	t.wait_ns = waited;

	spin_lock(&nic->lock);
	ep->faults++;
	nic->faults++;
	nic->fault_ns += ktime_get_ns() - start;
	nic->flush_ns += t.flush_ns;
	nic->fence_ns += t.fence_ns;
	nic->zap_ns += t.zap_ns;
	nic->unload_ns += t.unload_ns;
	nic->load_ns += t.load_ns;
	if (victim) {
		/*
		 * What a move costs this card: the slice is a multiple of it.
		 * Not the flush, which is one victim's peers' doing: a silent
		 * one holds it for the whole retry budget, and would stretch
		 * every endpoint's slice with it.
		 */
		vnet_rp_fault_done(&nic->rp, t.unload_ns + t.load_ns);
		if (!t.victim_served)
			nic->evicted_unserved++;
	}
	spin_unlock(&nic->lock);
	trace_vnet_fault(ep, &t);
	return 0;
}

/*
 * Fault @ep in from a worker: for the firmware, when a message waits for a
 * non-resident destination, and for an evicted endpoint that left posted
 * messages behind.  The caller guarantees @ep is still referenced.
 */
void vnet_ep_queue_fault(struct vnet_ep *ep)
{
	kobject_get(&ep->kobj);
	if (!queue_work(ep->nic->fault_wq, &ep->fault_work))
		kobject_put(&ep->kobj);
}

void vnet_ep_fault_work(struct work_struct *work)
{
	struct vnet_ep *ep = container_of(work, struct vnet_ep, fault_work);

	vnet_ep_fault_in(ep);
	kobject_put(&ep->kobj);
}

/*
 * Free @ep's frame for good.  ep->dead is set, so nobody loads it again, and
 * the firmware has forgotten it, so it has nothing on the wire to wait for.
 * A move in progress settles first: an eviction of @ep finds it flushed at
 * once, and a load of @ep gives up waiting for its victim's flush within a
 * poll.  The frame is dropped without copying it back.
 */
void vnet_ep_evict_for_close(struct vnet_ep *ep)
{
	struct vnet_fault_times t = { .victim = -1 };
	struct vnet_nic *nic = ep->nic;
	int f;

	for (;;) {
		wait_event(ep->state_wq, vnet_ep_settled(ep));
		spin_lock(&nic->lock);
		if (ep->state == VNET_EP_RESIDENT)
			break;
		if (ep->state == VNET_EP_NONRESIDENT) {
			spin_unlock(&nic->lock);
			return;
		}
		/* Picked as a victim meanwhile: let that eviction finish. */
		spin_unlock(&nic->lock);
	}
	f = ep->frame;
	vnet_ep_set_state(ep, VNET_EP_UNLOADING, f);
	spin_unlock(&nic->lock);

	vnet_cache_detach(ep, f, NULL, &t);
	vnet_cache_delay(nic);

	spin_lock(&nic->lock);
	vnet_ep_set_state(ep, VNET_EP_NONRESIDENT, -1);
	spin_unlock(&nic->lock);
	trace_vnet_evict(ep, f, NULL, READ_ONCE(ep->fw.served), 0);
	/* Closing and the NIC's removal can both be here: wake the other. */
	wake_up_all(&ep->state_wq);
}

/*
 * The memory that holds @ep's queues right now, for a quick look under
 * nic->lock: the card frame while it is in one, else the host image.
 */
void *vnet_ep_current_image(struct vnet_ep *ep)
{
	lockdep_assert_held(&ep->nic->lock);
	if (ep->state == VNET_EP_RESIDENT || ep->state == VNET_EP_UNLOADING)
		return vnet_frame_addr(ep->nic, ep->frame);
	return ep->image;
}
