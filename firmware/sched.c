// SPDX-License-Identifier: GPL-2.0
/*
 * Endpoint scheduling: weighted round-robin over the resident endpoints, as
 * in the Berkeley NOW firmware.  Endpoints with nothing to send are skipped;
 * an endpoint with work gets up to nic->burst send attempts per visit and the
 * firmware loiters on it for the rest of them, because a process that just
 * sent tends to send again -- or until it has copied a megabyte of
 * payload, or the host has posted a command (a loiter of 256 attempts is
 * what a move waited for most).  Each round starts just past the frame
 * that sent first in the last round that sent anything -- at it again if
 * a command cut its turn short -- so that every endpoint with work goes
 * first in turn: starting one frame further on would not do on a NIC whose
 * few busy endpoints sit in the first of its many frames -- most rounds
 * would start in the empty ones and reach the busy ones in the same order,
 * and the first would always find the free channels.
 */
#include "fw_deliver.h"
#include "fw_queue.h"
#include "fw_transport.h"

static const unsigned int vnet_fw_send_order[] = {
	VNET_Q_REP_SEND,	/* replies first: they never wait for credits */
	VNET_Q_REQ_SEND,
};

/*
 * Messages posted on send queue @q for the firmware to take now: past any
 * train still reading the segment (train_tx.c), which holds only its own
 * entry.
 */
static bool vnet_fw_can_send(struct vnet_fw_ep *ep, struct vnet_frame *frame,
			     unsigned int q)
{
	return vnet_fw_send_pending(ep, frame, q) > 0;
}

static bool vnet_fw_trains_ended(const struct vnet_fw_ep *ep)
{
	return ep->train_done[VNET_Q_REQ_SEND] | ep->train_done[VNET_Q_REP_SEND];
}

static bool vnet_fw_has_sends(struct vnet_fw_ep *ep, struct vnet_frame *frame)
{
	return vnet_fw_can_send(ep, frame, VNET_Q_REP_SEND) ||
	       vnet_fw_can_send(ep, frame, VNET_Q_REQ_SEND);
}

/* Posted messages not stuck behind a held head, or trains ended. */
static bool vnet_fw_has_unheld_sends(struct vnet_fw_ep *ep,
				     struct vnet_frame *frame)
{
	unsigned int q;

	if (vnet_fw_trains_ended(ep))
		return true;
	for (q = VNET_Q_REQ_SEND; q <= VNET_Q_REP_SEND; q++)
		if (!(ep->held & VNET_FW_QUEUE_BIT(q)) &&
		    vnet_fw_can_send(ep, frame, q))
			return true;
	return false;
}

/*
 * What one endpoint's turn may copy: a burst of megabyte XFERs to
 * endpoints of this NIC would hold the host's firmware lock for 16 MiB of
 * copying, and the lock is let go only between turns (ops->pause).
 */
#define VNET_FW_TURN_BYTES	VNET_XFER_MAX

static u32 vnet_fw_visit(struct vnet_fw_nic *nic, struct vnet_fw_ep *ep,
			 struct vnet_frame *frame, bool *held, bool *cut)
{
	u64 copied = nic->copied;
	u32 attempt, moved = 0;

	ep->held = 0;
	for (attempt = 0; attempt < nic->burst &&
	     nic->copied - copied < VNET_FW_TURN_BYTES; attempt++) {
		bool progress = false;
		unsigned int i;

		for (i = 0; i < 2 && !progress; i++) {
			unsigned int q = vnet_fw_send_order[i];

			if ((ep->held & VNET_FW_QUEUE_BIT(q)) ||
			    !vnet_fw_can_send(ep, frame, q))
				continue;
			if (vnet_fw_send_head(nic, ep, frame, q) == VNET_FW_HOLD) {
				ep->held |= VNET_FW_QUEUE_BIT(q);
				*held = true;
				continue;
			}
			progress = true;
			moved++;
		}
		/* Loitering past a held message would only spin on it. */
		if (!progress && ep->held)
			break;
		/* The host waits for the turn to end, to move a frame. */
		if (fw_read_once(nic->host_waits)) {
			*cut = true;
			break;
		}
	}
	return moved;
}

struct vnet_fw_round vnet_fw_poll(struct vnet_fw_nic *nic, u64 now)
{
	struct vnet_fw_round round = { 0, false, false };
	u32 i, none = nic->nframes, first_moved = none;
	bool visited = false, first_cut = false;

	vnet_fw_timer(nic, now);
	vnet_fw_trains_unpause(nic);
	for (i = 0; i < nic->nframes; i++) {
		u32 f = (nic->rr_next + i) % nic->nframes;
		struct vnet_fw_ep *ep;
		struct vnet_frame *frame;
		u32 moved;
		bool cut;

		/* A round over many busy frames copies megabytes. */
		if (visited && nic->ops->pause) {
			nic->now = nic->ops->pause(nic->ctx);
			visited = false;
		}
		ep = fw_read_once(nic->frame_owner[f]);
		if (!ep || ep->closed)
			continue;
		/* After the state the host set for this load: served, say. */
		frame = fw_load_acquire(&ep->frame);
		if (!frame)
			continue;
		/*
		 * Back on the card: the peers it NACKed need not wait for
		 * their timers.  The host rings the doorbell when a load
		 * completes, so this round comes promptly.
		 */
		if (ep->resume_peers && !fw_read_once(ep->moving))
			vnet_fw_send_resumes(nic, ep);
		/* Its trains from the segment that ended give back their entries. */
		if (vnet_fw_trains_ended(ep))
			round.messages += vnet_fw_trains_retire(ep, frame);
		if (!vnet_fw_has_sends(ep, frame))
			continue;
		cut = false;
		moved = vnet_fw_visit(nic, ep, frame, &round.held, &cut);
		round.messages += moved;
		visited = true;
		if (moved && first_moved == none) {
			first_moved = f;
			first_cut = cut;
		}
	}
	/*
	 * The turn to go first passes only when someone took it, from the
	 * first endpoint that sent: a round that sent nothing leaves it where
	 * it is, and endpoints whose messages are held every round (one that
	 * cannot take back its returns, say) win no turns for the one behind
	 * them.  One whose turn a command of the host's cut short has not
	 * had it: it goes first again.
	 */
	if (first_moved != none)
		nic->rr_next = first_cut ? first_moved :
			       (first_moved + 1) % nic->nframes;
	nic->held = round.held;
	/* Packets on the wire, or trains coming in that may stall. */
	round.timer = nic->nactive > 0 || nic->trains_busy > 0;
	return round;
}

static void vnet_fw_set_need_wakeup(struct vnet_fw_nic *nic, bool on)
{
	u32 f;

	for (f = 0; f < nic->nframes; f++) {
		struct vnet_fw_ep *ep = fw_read_once(nic->frame_owner[f]);
		struct vnet_frame *frame;

		if (!ep)
			continue;
		frame = fw_read_once(ep->frame);
		if (frame)
			fw_write_once(frame->hdr.flags,
				      on ? VNET_FRAME_NEED_WAKEUP : 0);
	}
}

/*
 * Before the firmware sleeps it raises NEED_WAKEUP in every resident frame,
 * then looks once more for work.  A user that posts a message, issues a full
 * barrier and then reads the flag either sees it (and rings the doorbell) or
 * posted early enough for this second look to find the message.  A queue
 * whose head is held is no work: the held timer retries it, and counting it
 * would lower NEED_WAKEUP for every other sender while we sleep.
 *
 * Returns true when there is work after all; the caller must not sleep.
 */
bool vnet_fw_arm_wakeup(struct vnet_fw_nic *nic)
{
	u32 f;

	vnet_fw_set_need_wakeup(nic, true);
	fw_smp_mb();
	for (f = 0; f < nic->nframes; f++) {
		struct vnet_fw_ep *ep = fw_read_once(nic->frame_owner[f]);
		struct vnet_frame *frame;

		if (!ep || ep->closed)
			continue;
		frame = fw_read_once(ep->frame);
		if (frame && vnet_fw_has_unheld_sends(ep, frame)) {
			vnet_fw_disarm_wakeup(nic);
			return true;
		}
	}
	return false;
}

void vnet_fw_disarm_wakeup(struct vnet_fw_nic *nic)
{
	vnet_fw_set_need_wakeup(nic, false);
}
