// SPDX-License-Identifier: GPL-2.0
/*
 * The endpoint cache.  A NIC's frames cache endpoints the way page frames
 * cache pages: an endpoint is loaded onto the card when its process touches
 * its mapping or a message arrives for it, and a victim is evicted when no
 * frame is free.
 *
 * Victims are chosen by a clock over the frames.  The firmware sets an
 * endpoint's referenced bit whenever it moves a message from or into it (or
 * holds one of its messages for a busy destination) and a load sets it too,
 * so the hand passes over endpoints that were busy since its last sweep and
 * evicts one that went quiet.  An endpoint with messages still in its send
 * queues counts as busy as well: evicting it strands them until it comes
 * back.  Pure FIFO would evict the oldest resident endpoint even if it is
 * the one carrying all the traffic.
 *
 * When every resident endpoint is busy one of them goes all the same; if it
 * leaves posted messages behind it is queued to fault straight back in,
 * since nothing else would bring it back while its owner waits for replies.
 *
 * A newcomer is never the victim until it is served -- a message was
 * delivered into it, or it sent one to a local endpoint -- or ages: it was
 * brought in for a message (or a touch) that has not come yet, and
 * evicting it first would only bring it back.  Served, it can go once it
 * is idle; while busy it keeps its frame until it ages, its time slice.
 * It ages after min_resident_us, and on a NIC on the wire not before a
 * NACKed sender has retransmitted.  When every frame holds a newcomer the
 * fault waits.
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
		if (from == VNET_EP_LOADING)
			ep->loaded_at = ktime_get_ns();
		WRITE_ONCE(nic->frame_gen, nic->frame_gen + 1);
		break;
	case VNET_EP_UNLOADING:
		WRITE_ONCE(nic->resident, nic->resident - 1);
		break;
	case VNET_EP_NONRESIDENT:
		if (nic->frame_ep[ep->frame] == ep) {
			nic->frame_ep[ep->frame] = NULL;
			WRITE_ONCE(nic->frame_gen, nic->frame_gen + 1);
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
 * How long a newcomer keeps its frame unless served first.  On the wire, a
 * message NACKed because its destination was not resident comes again
 * when its sender's timer next finds it due: up to two quanta after the
 * NACK, plus the quantum between timer scans.
 */
static u64 vnet_cache_protect_ns(struct vnet_nic *nic)
{
	u64 ns = (u64)vnet_min_resident_us * NSEC_PER_USEC;

	if (READ_ONCE(nic->link))
		ns = max(ns, 3 * nic->fw.quantum * NSEC_PER_USEC);
	return ns;
}

/* Pick a resident endpoint to evict; called with nic->lock held. */
static struct vnet_ep *vnet_cache_pick_victim(struct vnet_nic *nic)
{
	u64 young = ktime_get_ns() - vnet_cache_protect_ns(nic);
	struct vnet_ep *fallback = NULL;
	u32 step;

	lockdep_assert_held(&nic->lock);
	for (step = 0; step < 2 * nic->nframes; step++) {
		struct vnet_ep *ep = nic->frame_ep[nic->clock_hand];

		nic->clock_hand = (nic->clock_hand + 1) % nic->nframes;
		if (!ep || ep->state != VNET_EP_RESIDENT)
			continue;
		if (ep->loaded_at > young) {
			/* Not before it got the message it came for... */
			if (!READ_ONCE(ep->fw.served))
				continue;
			/* ...and then only if it went idle: its time slice. */
		} else {
			fallback = ep;
		}
		if (READ_ONCE(ep->fw.referenced)) {
			WRITE_ONCE(ep->fw.referenced, false);
			continue;
		}
		if (!vnet_fw_sends_pending(&ep->fw, vnet_frame_addr(nic, ep->frame)))
			return ep;
	}
	return fallback;
}

/*
 * Claim a frame for @ep: a free one, or one whose owner we start evicting.
 * The victim is used after nic->lock is dropped, and its owner may close
 * it meanwhile: it comes with a reference.  Returns -1 when every frame is
 * in motion.
 */
static int vnet_cache_claim(struct vnet_nic *nic, struct vnet_ep *ep,
			    struct vnet_ep **victim)
{
	u32 f;

	lockdep_assert_held(&nic->lock);
	*victim = NULL;
	for (f = 0; f < nic->nframes; f++)
		if (!nic->frame_ep[f])
			break;
	if (f == nic->nframes) {
		*victim = vnet_cache_pick_victim(nic);
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
 * Take @ep out of frame @f.  First the firmware stops sending from it and
 * delivering into it, and user space loses its mapping; then, by the flush
 * rule, we wait until every message it has on the wire is ACKed, has the
 * NACK of its latest transmission, or has been returned (the return can
 * still write into the frame meanwhile); only then does the firmware let
 * go of the frame.  Late or duplicate ACKs and NACKs after that match no
 * channel state of this endpoint's.
 *
 * The wait can be long when a peer is slow.  An eviction gives up, putting
 * the endpoint back as it was (its frame was not touched), when the thread
 * that needs the frame gets a fatal signal (-EINTR) or the @newcomer it
 * was for is being closed (-ENODEV): a fault worker gets no signals, and
 * the newcomer's close waits for this load.  A closing @ep (no newcomer)
 * has been forgotten by the firmware and waits for nothing on the wire.
 */
static int vnet_cache_detach(struct vnet_ep *ep, int f,
			     struct vnet_ep *newcomer)
{
	struct vnet_nic *nic = ep->nic;

	WRITE_ONCE(nic->fw_frame_owner[f], NULL);
	mutex_lock(&nic->fw_lock);
	ep->fw.moving = true;
	mutex_unlock(&nic->fw_lock);

	down_write(&ep->map_sem);
	unmap_mapping_range(ep->mapping, ep->frame_off, VNET_FRAME_SIZE, 1);
	up_write(&ep->map_sem);

	/* Polled too: a NIC going away cannot wake all it forgot. */
	while (!vnet_ep_flushed(ep)) {
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
		mutex_lock(&nic->fw_lock);
		ep->fw.moving = false;
		mutex_unlock(&nic->fw_lock);
		/* Back in the frame table, as vnet_cache_load() publishes. */
		smp_store_release(&nic->fw_frame_owner[f], &ep->fw);
		return ret < 0 ? -EINTR : -ENODEV;
	}

	mutex_lock(&nic->fw_lock);
	WRITE_ONCE(ep->fw.frame, NULL);
	ep->fw.moving = false;
	mutex_unlock(&nic->fw_lock);
	return 0;
}

static int vnet_cache_unload(struct vnet_ep *victim, int f,
			     struct vnet_ep *newcomer, struct vnet_fault_times *t)
{
	struct vnet_nic *nic = victim->nic;
	u64 start = ktime_get_ns();
	int err;

	err = vnet_cache_detach(victim, f, newcomer);
	if (err)
		return err;
	t->flush_ns = ktime_get_ns() - start;
	vnet_cache_delay(nic);
	memcpy(victim->image, vnet_frame_addr(nic, f), VNET_FRAME_SIZE);
	if (vnet_fw_sends_pending(&victim->fw, victim->image))
		vnet_ep_queue_fault(victim);

	spin_lock(&nic->lock);
	vnet_ep_set_state(victim, VNET_EP_NONRESIDENT, -1);
	victim->evictions++;
	nic->evictions++;
	spin_unlock(&nic->lock);
	wake_up_all(&victim->state_wq);
	t->unload_ns = ktime_get_ns() - start - t->flush_ns;
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
	wake_up_all(&victim->state_wq);
	wake_up_all(&ep->state_wq);
	wake_up_all(&nic->frame_wq);
}

static void vnet_cache_load(struct vnet_ep *ep, int f)
{
	struct vnet_nic *nic = ep->nic;
	struct vnet_frame *frame = vnet_frame_addr(nic, f);

	vnet_cache_delay(nic);
	memcpy(frame, ep->image, VNET_FRAME_SIZE);
	vnet_fw_frame_restore(&ep->fw, frame);
	WRITE_ONCE(ep->fw.referenced, true);
	WRITE_ONCE(ep->fw.served, false);
	/*
	 * Publish the copied image before the firmware can find it, through
	 * either the frame table or a lookup of the endpoint.
	 */
	smp_store_release(&ep->fw.frame, frame);
	/* Pairs with the firmware's READ_ONCE() of the frame owner. */
	smp_store_release(&nic->fw_frame_owner[f], &ep->fw);

	spin_lock(&nic->lock);
	vnet_ep_set_state(ep, VNET_EP_RESIDENT, f);
	spin_unlock(&nic->lock);
	wake_up_all(&ep->state_wq);
	wake_up_all(&nic->frame_wq);
	vnet_card_doorbell(nic);
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
	u64 gen, start, slept, waited = 0;
	struct vnet_ep *victim;
	long slice, left;
	int f;

	for (;;) {
		spin_lock(&nic->lock);
		if (ep->dead) {
			spin_unlock(&nic->lock);
			return -ENODEV;
		}
		if (ep->state == VNET_EP_RESIDENT) {
			spin_unlock(&nic->lock);
			return 0;
		}
		if (ep->state == VNET_EP_NONRESIDENT) {
			f = vnet_cache_claim(nic, ep, &victim);
			if (f >= 0)
				break;
			gen = nic->frame_gen;
			spin_unlock(&nic->lock);
			/*
			 * Woken by a settled frame, else look again after a
			 * residency (a tick at least).  Waking for every
			 * newcomer's ageing turns the frames over faster
			 * than busy endpoints can use them: with 16 client
			 * and server pairs on 8 frames, a third of the
			 * round trips for five times the faults.
			 */
			slice = usecs_to_jiffies(vnet_min_resident_us) + 1;
			slept = ktime_get_ns();
			left = wait_event_killable_timeout(nic->frame_wq,
							   READ_ONCE(nic->frame_gen) != gen,
							   slice);
			if (left < 0)
				return -EINTR;
			slept = ktime_get_ns() - slept;
			waited += slept;
			trace_vnet_frame_wait(ep, slept, !left);
			spin_lock(&nic->lock);
			nic->frame_waits++;
			nic->frame_wait_ns += slept;
			spin_unlock(&nic->lock);
			continue;
		}
		spin_unlock(&nic->lock);
		if (wait_event_killable(ep->state_wq, vnet_ep_settled(ep)))
			return -EINTR;
	}
	if (victim) {
		t.victim = victim->index;
		t.victim_served = READ_ONCE(victim->fw.served);
	}
	spin_unlock(&nic->lock);

	start = ktime_get_ns();
	if (victim) {
		int err = vnet_cache_unload(victim, f, ep, &t);

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
	nic->unload_ns += t.unload_ns;
	nic->load_ns += t.load_ns;
	if (victim && !t.victim_served)
		nic->evicted_unserved++;
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

	vnet_cache_detach(ep, f, NULL);
	vnet_cache_delay(nic);

	spin_lock(&nic->lock);
	vnet_ep_set_state(ep, VNET_EP_NONRESIDENT, -1);
	spin_unlock(&nic->lock);
	/* Closing and the NIC's removal can both be here: wake the other. */
	wake_up_all(&ep->state_wq);
	wake_up_all(&nic->frame_wq);
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
