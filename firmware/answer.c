// SPDX-License-Identifier: GPL-2.0
/*
 * The transport's sender side, what comes back: ACKs and NACKs matched to
 * the message on their channel (or taken for stale), and silence -- the
 * timer's scan, which retransmits a message whose answer is overdue and
 * returns one whose receiver said nothing for max_retries quanta or
 * refused it for busy_timeout.  What a channel is and how a message takes
 * one is transport.c's; the rules that bound every wait are set out
 * there.
 */
#include "fw_deliver.h"
#include "fw_queue.h"
#include "fw_transport.h"

/* Is @stamp one of the transmissions of the message on @ch? */
static bool vnet_fw_stamp_is_ours(const struct vnet_fw_send_chan *ch,
				  u32 stamp)
{
	return (s32)(stamp - ch->first_stamp) >= 0 &&
	       (s32)(ch->stamp - stamp) >= 0;
}

/*
 * An ACK or NACK for the message on channel @c, or a stale one?  @took:
 * an ACK saying the receiver took it.
 */
static struct vnet_fw_send_chan *vnet_fw_answered(struct vnet_fw_nic *nic,
						  struct vnet_fw_peer *p,
						  u32 c, u32 seq, u32 stamp,
						  bool took)
{
	struct vnet_fw_send_chan *ch = &p->tx[c];

	if (ch->state != VNET_CHAN_INFLIGHT ||
	    (ch->is_train ? !vnet_fw_frag_out(ch, seq) : ch->seq != seq) ||
	    !vnet_fw_stamp_is_ours(ch, stamp)) {
		nic->stats.stale_acks++;
		return NULL;
	}
	vnet_fw_rtt_answered(nic, p, ch, stamp, took);
	ch->retries = 0;
	return ch;
}

void vnet_fw_rx_ack(struct vnet_fw_nic *nic, struct vnet_fw_peer *p, u32 c,
		    u32 seq, u32 stamp, u8 status)
{
	struct vnet_fw_send_chan *ch;

	/*
	 * "Source gone" is the sender's own firmware's to find: a peer that
	 * said it would have a library pin and send the message again.
	 */
	if (status >= VNET_RET_NR || status == VNET_RET_SOURCE_GONE) {
		nic->stats.bad_frames++;
		return;
	}
	nic->stats.rx_ack++;
	ch = vnet_fw_answered(nic, p, c, seq, stamp, status == VNET_RET_NONE);
	if (!ch)
		return;
	ch->sync = false;
	vnet_fw_set_took(p, ch->msg.peer.ep, status == VNET_RET_NONE);
	if (status != VNET_RET_NONE) {
		vnet_fw_start_return(nic, p, ch, status);
	} else if (ch->is_train && (seq != ch->seq ||
				    ch->frag_off + ch->frag_len < ch->msg.len)) {
		vnet_fw_frag_acked(nic, p, c, seq);
	} else {
		if (ch->is_train)
			vnet_fw_pipe_gap(nic, p, ch, seq, true);
		vnet_fw_chan_set_state(nic, p, ch, VNET_CHAN_FREE);
	}
}

/*
 * The busy clock starts once, at the first refusal, whatever follows --
 * unless a train refused where it stood gets further than it ever got
 * (train_tx.c).  @rewound: the refusal sends a train back to its first
 * fragment.
 */
static void vnet_fw_chan_refused(struct vnet_fw_nic *nic,
				 struct vnet_fw_send_chan *ch, bool rewound)
{
	if (ch->refused)
		return;
	ch->refused = true;
	ch->refused_at = nic->now;
	ch->refused_rewound = rewound;
}

/*
 * An answer to an older transmission of @ch's message: the round trip is
 * longer than the wait was, and retransmitting now would only make this
 * one stale too, so no NACK would ever be the latest.  Give the latest
 * transmission time to be answered -- two quanta, or the wait the round
 * trips now call for (rtt.c), from when it went out, not from now, or a
 * stream of such answers would put its retransmission off for ever.
 */
static void vnet_fw_wait_for_latest(struct vnet_fw_nic *nic,
				    struct vnet_fw_peer *p,
				    struct vnet_fw_send_chan *ch)
{
	u64 wait = vnet_fw_rto(nic, p);

	if (wait < 2 * nic->quantum)
		wait = 2 * nic->quantum;
	if (ch->due < ch->sent_at + wait)
		ch->due = ch->sent_at + wait;
}

void vnet_fw_rx_nack(struct vnet_fw_nic *nic, struct vnet_fw_peer *p, u32 c,
		     u32 seq, u32 stamp, u8 reason, u32 incarnation)
{
	struct vnet_fw_send_chan *ch;

	if (reason < VNET_NACK_NR)
		nic->stats.rx_nack[reason]++;
	ch = vnet_fw_answered(nic, p, c, seq, stamp, false);
	if (!ch)
		return;
	vnet_fw_report(nic, &(struct vnet_fw_event){
		.type = VNET_FW_EV_NACK_RX,
		.reason = reason,
		.channel = c,
		.peer = p->nic_id,
		.seq = seq,
	});
	if (stamp == ch->stamp) {
		/* A RESUME from this incarnation may bring it back early. */
		ch->resume = reason == VNET_NACK_NOT_RESIDENT;
		ch->nack_incarnation = incarnation;
	}
	if ((reason == VNET_NACK_RESYNC || reason == VNET_NACK_RESTART) &&
	    stamp != ch->stamp) {
		/*
		 * A restart asked of an older transmission: the latest may
		 * yet be taken, or its NACK have resolved the message for a
		 * flush that has ended -- rewinding the train would put a
		 * fragment back on the wire under a sender that has moved.
		 * The answer to the latest says the same if it is so.
		 */
		vnet_fw_wait_for_latest(nic, p, ch);
		return;
	}
	if (reason == VNET_NACK_RESYNC) {
		/*
		 * The receiver has no state for the channel: restart it, a
		 * train from its first fragment.  A receiver that has state
		 * takes a SYNC as usual, so a forged one costs a
		 * retransmission (a train's, from its start, under the busy
		 * clock), nothing more.
		 */
		if (!ch->sync) {
			ch->sync = true;
			ch->due = nic->now;
			/*
			 * A train rewound runs the busy clock, as on a
			 * RESTART: its first fragment ACKed and the next
			 * NACKed RESYNC, over and over, would otherwise hold
			 * it for ever, each rewind giving it a new lifetime.
			 */
			if (ch->is_train) {
				vnet_fw_chan_refused(nic, ch, true);
				/*
				 * Not under a moving sender whose flush is
				 * over (the latest NACKed): the rewind would
				 * put the train back on the wire, and in the
				 * count, a new silence to wait out.  After the
				 * move its tick sends it with SYNC, and the
				 * receiver's RESTART rewinds it.
				 */
				if (!(ch->nacked && ch->src &&
				      fw_read_once(ch->src->moving)))
					vnet_fw_train_rewind(nic, p, c, seq);
			}
		}
		return;
	}
	vnet_fw_set_took(p, ch->msg.peer.ep, false);
	vnet_fw_chan_refused(nic, ch, reason == VNET_NACK_RESTART);
	/* The receiver dropped the train: the next try starts it again. */
	if (reason == VNET_NACK_RESTART && ch->is_train &&
	    !vnet_fw_train_rewind(nic, p, c, seq))
		return;
	if (stamp == ch->stamp) {
		/*
		 * The receiver answered the latest transmission: word from
		 * it.  A NACK of an older one is none -- else a peer that
		 * answers only superseded transmissions would keep the
		 * message unresolved, and its sender's flush waiting, past
		 * max_retries quanta -- nor is a RESYNC, which restarts the
		 * channel and so answers nothing.
		 */
		ch->heard_at = nic->now;
		ch->nacked = true;
		vnet_fw_chan_count(nic, ch, false);
		return;
	}
	vnet_fw_wait_for_latest(nic, p, ch);
}

/*
 * Refused for busy_timeout: its sender gets it back at its next tick, or
 * once the answer to its latest transmission is in or overdue.  A
 * train sent back to its start -- NACKed RESTART or RESYNC -- has two
 * quanta more for each fragment up to the furthest point it reached (each
 * carries VNET_WIRE_FRAG_MIN bytes at least), as the receiver gives a
 * train for each of its fragments (train_rx.c); else under loss it would
 * run out on the way and come back.  That clock runs until the train ends,
 * its allowance growing with it, so it bounds the whole train.  Only when
 * the clock started at the restart: one that started earlier, at a
 * refusal of the train where it stood ("not resident" to its last
 * fragment, say), runs busy_timeout from then, as a single message's
 * would, and stops if the train gets further than ever.
 */
bool vnet_fw_chan_refused_too_long(const struct vnet_fw_nic *nic,
				   const struct vnet_fw_send_chan *ch)
{
	u64 limit = nic->busy_timeout;

	/* Not a clock started by a refusal of the train where it stood. */
	if (ch->is_train && ch->refused_rewound)
		limit += 2ULL * nic->quantum *
			 ((ch->frag_acked + VNET_WIRE_FRAG_MIN - 1) /
			  VNET_WIRE_FRAG_MIN);
	return ch->refused && nic->now - ch->refused_at >= limit;
}

/*
 * The longest a message keeps its channel before it is returned: its
 * max_retries quanta of silence (up to twice that when its sender's
 * thread is late at every scan, vnet_fw_timer()), then busy_timeout of
 * refusals.  Counted on this NIC's clock from when the
 * message took the channel, so a thread that did not run for a while
 * cannot stretch it; a receiver keeps the receive state of a deleted
 * route until then (route.c), with the same parameters on every NIC.
 */
u64 vnet_fw_msg_lifetime(const struct vnet_fw_nic *nic)
{
	return 2ULL * nic->max_retries * nic->quantum + nic->busy_timeout;
}

/*
 * @absent_from: from then until now this NIC did not run (nic->now if it
 * did), and a receiver's silence does not count for that stretch.
 */
static void vnet_fw_chan_tick(struct vnet_fw_nic *nic, struct vnet_fw_peer *p,
			      u32 c, u64 absent_from)
{
	struct vnet_fw_send_chan *ch = &p->tx[c];
	bool refused, expired, busy;

	if (ch->state == VNET_CHAN_RETURNING) {
		vnet_fw_try_return(nic, p, ch);
		return;
	}
	if (ch->state == VNET_CHAN_PAUSED) {
		vnet_fw_train_unpause(nic, p, c);
		return;
	}
	if (ch->state != VNET_CHAN_INFLIGHT)
		return;
	if (ch->heard_at < absent_from)
		ch->heard_at += nic->now - absent_from;
	else
		ch->heard_at = nic->now;
	/*
	 * However long the retransmission timeout, the bounds are checked
	 * at every scan; past them only an answer already due is waited for.
	 */
	refused = vnet_fw_chan_refused_too_long(nic, ch);
	expired = nic->now - ch->taken_at >= vnet_fw_msg_lifetime(nic);
	if (refused || expired) {
		/*
		 * Refused too long, or out of time.  If its latest
		 * transmission was refused the receiver does not have it:
		 * busy; nor does it have a train refused (started over, say)
		 * short of its last fragment.  Otherwise it may: unreachable,
		 * as when retries run out.  Either way the channel's next
		 * message restarts the receiver's sequence.
		 */
		busy = ch->nacked || (refused && ch->is_train &&
				      ch->frag_off + ch->frag_len < ch->msg.len);
		/*
		 * A receiver that refused it may well refuse the
		 * transmission on the wire too, and its answer can still
		 * say "busy" rather than leave it to the worst case.  So,
		 * sending nothing more (nor a fragment, train_tx.c), wait
		 * until that transmission is due again: at most a timeout,
		 * or the two quanta a stale NACK gives, after a send made
		 * before the clock ran out.
		 */
		if (!busy && !expired && nic->now < ch->due)
			return;
		ch->sync = true;
		vnet_fw_start_return(nic, p, ch, busy ? VNET_RET_BUSY :
						 VNET_RET_UNREACHABLE);
		return;
	}
	if (!ch->nacked &&
	    nic->now - ch->heard_at >= (u64)nic->max_retries * nic->quantum) {
		/* The receiver may have it: its next packet restarts seq. */
		ch->sync = true;
		vnet_fw_start_return(nic, p, ch, VNET_RET_UNREACHABLE);
		return;
	}
	if (nic->now < ch->due)
		return;
	if (ch->nacked) {
		/* Resolved for the flush: leave it until the move is done. */
		if (ch->src && fw_read_once(ch->src->moving))
			return;
	} else if (ch->retries != (u16)~0) {
		ch->retries++;
	}
	vnet_fw_retransmit(nic, p, c, false);
}

/*
 * Retransmissions, pending returns and paused trains, and trains stuck on
 * their way in, once a quantum.
 */
void vnet_fw_timer(struct vnet_fw_nic *nic, u64 now)
{
	u64 absent_from = now;
	u32 i, c;

	nic->now = now;
	if (now - nic->last_scan < nic->quantum)
		return;
	/*
	 * With a message in flight the host runs the firmware again a
	 * quantum after a round, give or take its timer's slack, and the
	 * scan waits a quantum from the last: two quanta and the slack
	 * apart at most.  Time past that is time this NIC did not run: a
	 * software card's thread went without a CPU -- a guest whose host
	 * is busy stops for seconds, and the other NICs of the guest with
	 * it.  This NIC heard nothing then, whatever its peers would have
	 * said: counting it as their silence returns messages "unreachable"
	 * that the receiver answers as soon as it runs again.  A message's
	 * lifetime still bounds how long it keeps its channel.
	 */
	if (now - nic->last_scan > 2 * nic->quantum + nic->timer_slack)
		absent_from = nic->last_scan + 2 * nic->quantum +
			      nic->timer_slack;
	nic->last_scan = now;
	vnet_fw_trains_expire(nic);
	/* Freeing a channel can drop its peer from the list: walk backwards. */
	for (i = nic->nactive; i-- > 0;) {
		struct vnet_fw_peer *p = &nic->peers[nic->active[i]];

		for (c = 0; c < nic->nchannels && p->unacked; c++)
			vnet_fw_chan_tick(nic, p, c, absent_from);
	}
}
