// SPDX-License-Identifier: GPL-2.0
/*
 * The NIC-to-NIC transport, sender side, after the Berkeley NOW firmware:
 * several independent logical channels per destination NIC, stop-and-wait
 * on each for a message (a train keeps a window of fragments out,
 * train_tx.c), sequence numbers and stamps, ACK/NACK, retransmission when
 * the answer is overdue by the peer's round trip (rtt.c) -- or at once when the
 * receiver says that the endpoint it NACKed "not resident" is back
 * (RESUME, resume.c) -- and return to sender after max_retries quanta with
 * no word from the receiver, or after busy_timeout of being refused.
 *
 * A send channel's life, changed only by vnet_fw_chan_set_state():
 *
 *   FREE      -> INFLIGHT    a message takes it
 *   INFLIGHT  -> FREE        ACKed as delivered (a train: its last
 *                            fragment); a train read from its sender's
 *                            segment whose sender closed
 *   INFLIGHT  -> RETURNING   ACKed with a reason; NACKed for busy_timeout;
 *                            max_retries quanta with no answer; its
 *                            route or link went away; a train whose next
 *                            fragment cannot be read or sent
 *   INFLIGHT  -> PAUSED      a train's fragments out, not the last, all
 *                            ACKed while its sender moves
 *   PAUSED    -> INFLIGHT    the move is over: the next fragment goes out
 *   PAUSED    -> FREE        read from its sender's segment, and the
 *                            sender closed
 *   PAUSED    -> RETURNING   its route or link went away, or its next
 *                            fragment cannot be read or sent
 *   RETURNING -> FREE        written back to its sender, or the sender
 *                            closed
 *
 * A message larger than a packet goes as a train of fragments on its
 * channel (train_tx.c), each answered like a whole message, a window of
 * them on the wire at once: the channel stays INFLIGHT from the first to
 * the last, and a fragment ACKed moves the window on at once.
 *
 * The send table is peers x channels.  Each peer counts its busy channels
 * and sits on the nic->active list while it has any, so a timer scan costs
 * work in proportion to the destinations with packets in flight.
 *
 * No sending endpoint holds more than half of a peer's channels, no
 * destination endpoint more than half of them in flight, whoever sends,
 * and trains no more than half of them together, nor more than half of
 * the slots a receiver gives a peer (VNET_FW_PEER_TRAINS) -- so that a
 * message of one packet never waits for the end of a train of a
 * megabyte, and a peer's trains never wait for its own stale ones -- nor
 * more than one to an endpoint's queue until it takes a first fragment; a
 * destination that refuses a message (NACK) gets no new channel until it
 * takes it, and a sender whose reply queue has no room for a return gets
 * none until it makes room: a receiver that never drains, however many
 * senders feed it, or a sender that never reads its returns, holds a few
 * channels to a NIC, and every other endpoint keeps the rest.  The
 * messages that wait sit in their senders' queues, which stops only those
 * senders.  Several senders that each feed a stuck receiver of their own,
 * or the clients of a NIC's endpoints that are off its card, hold no more
 * than half the channels either: see vnet_fw_may_send().  Nor does one
 * sender hold more than its share of the NIC's payload buffers, which
 * all peers draw on: see vnet_fw_pool_share().
 *
 * The flush rule lives here too: a channel counts as unresolved for its
 * sender while its latest transmission has neither an ACK nor a NACK.  The
 * host evicts an endpoint only once its count is zero.  A train counts
 * while a fragment of it is on the wire; with its sender moving no new
 * one goes, and once those out are answered it is PAUSED and counts no
 * more -- nothing of it is on the wire -- so a flush waits for a window of
 * fragments, not for the whole train.
 * An ACK or NACK is matched on (peer, channel, sequence number) and must
 * echo the stamp of one of this message's transmissions; a NACK resolves
 * the message only if it echoes the latest, so a late, duplicate or forged
 * one never changes a channel that has moved on.  Whatever a peer sends, a
 * message -- a train's fragment -- is resolved within max(busy_timeout +
 * max(max_retries quanta / 4, 2 quanta), 2 * max_retries quanta), and returned
 * if not delivered within its lifetime, vnet_fw_msg_lifetime(), from when
 * it (the fragment) was loaded.
 */
#include "fw_deliver.h"
#include "fw_queue.h"
#include "fw_transport.h"

void vnet_fw_chan_count(struct vnet_fw_nic *nic, struct vnet_fw_send_chan *ch,
			bool counted)
{
	struct vnet_fw_ep *src = ch->src;

	if (ch->counted == counted)
		return;
	ch->counted = counted;
	if (!src)
		return;
	if (counted)
		src->unresolved++;
	else if (!--src->unresolved)
		nic->ops->notify_flushed(nic->ctx, src);
}

static void vnet_fw_peer_busy(struct vnet_fw_nic *nic, struct vnet_fw_peer *p)
{
	if (p->unacked++)
		return;
	p->active_pos = nic->nactive;
	nic->active[nic->nactive++] = p - nic->peers;
}

static void vnet_fw_peer_idle(struct vnet_fw_nic *nic, struct vnet_fw_peer *p)
{
	u32 last;

	if (--p->unacked)
		return;
	last = nic->active[--nic->nactive];
	nic->active[p->active_pos] = last;
	nic->peers[last].active_pos = p->active_pos;
}

static bool vnet_fw_chan_change_ok(u8 from, u8 to)
{
	switch (from) {
	case VNET_CHAN_FREE:
		return to == VNET_CHAN_INFLIGHT;
	case VNET_CHAN_INFLIGHT:
		return to == VNET_CHAN_FREE || to == VNET_CHAN_RETURNING ||
		       to == VNET_CHAN_PAUSED;
	case VNET_CHAN_PAUSED:
		return to == VNET_CHAN_INFLIGHT || to == VNET_CHAN_FREE ||
		       to == VNET_CHAN_RETURNING;
	case VNET_CHAN_RETURNING:
		return to == VNET_CHAN_FREE;
	}
	return false;
}

static bool vnet_fw_chan_sending(u8 state)
{
	return state == VNET_CHAN_INFLIGHT || state == VNET_CHAN_PAUSED;
}

/* The one place a channel changes state; see the table at the top. */
void vnet_fw_chan_set_state(struct vnet_fw_nic *nic, struct vnet_fw_peer *p,
			    struct vnet_fw_send_chan *ch, u8 to)
{
	u8 from = ch->state;

	if (fw_warn_on(!vnet_fw_chan_change_ok(from, to)))
		return;
	if (from == VNET_CHAN_PAUSED)
		nic->paused--;
	/*
	 * Delivered, or its return written: the send queue entry may go.
	 * Not sooner, at RETURNING: a sender off the card gets its return
	 * only when back, and its library takes a consumed entry for a
	 * resolved one (libvnet, amv_xfer_seg()).
	 */
	if (ch->from_seg && ch->src && to == VNET_CHAN_FREE) {
		ch->src->train_done |= VNET_FW_QUEUE_BIT(ch->queue);
		/*
		 * Only a round that finds it on the card retires the entry:
		 * a sender evicted while its train went on is brought back
		 * for it, as for a return, or its queue waits behind the
		 * entry until something else does.
		 */
		if (!fw_read_once(ch->src->frame))
			nic->ops->request_fault(nic->ctx, ch->src);
	}
	switch (to) {
	case VNET_CHAN_INFLIGHT:
		if (from == VNET_CHAN_FREE)
			vnet_fw_peer_busy(nic, p);
		break;
	case VNET_CHAN_PAUSED:
		nic->paused++;
		/* Nothing of it on the wire: it holds up no flush. */
		vnet_fw_chan_count(nic, ch, false);
		break;
	case VNET_CHAN_RETURNING:
		/* No longer on the wire: it holds up no flush. */
		vnet_fw_chan_count(nic, ch, false);
		break;
	case VNET_CHAN_FREE:
		vnet_fw_chan_count(nic, ch, false);
		if (ch->payload) {
			nic->pool[nic->pool_free++] = ch->payload;
			if (ch->src)
				ch->src->pool_held--;
		}
		ch->payload = NULL;
		ch->frag = NULL;
		ch->src = NULL;
		vnet_fw_peer_idle(nic, p);
		break;
	}
	ch->state = to;
}

void vnet_fw_put_msg(struct vnet_wire_msg *w, const struct vnet_desc *m,
		     u64 key, u32 src_ep, unsigned int q)
{
	unsigned int i;

	fw_memset(w, 0, sizeof(*w));
	w->src_ep = fw_cpu_to_be32(src_ep);
	w->dst_ep = fw_cpu_to_be32(m->peer.ep);
	w->tag = fw_cpu_to_be64(m->tag);
	w->queue = q;
	w->handler = m->handler;
	w->nargs = m->nargs;
	/* Where the sender read it from is no business of the receiver's. */
	w->flags = m->flags & VNET_DESC_USER_FLAGS & ~VNET_DESC_FROM_SEG;
	w->len = fw_cpu_to_be32(m->len);
	w->key_hi = fw_cpu_to_be32(key >> 32);
	w->key_lo = fw_cpu_to_be32((u32)key);
	w->offset = fw_cpu_to_be64(m->offset);
	for (i = 0; i < VNET_MAX_ARGS; i++)
		w->args[i] = fw_cpu_to_be32(m->args[i]);
}

void vnet_fw_put_hdr(struct vnet_fw_nic *nic, struct vnet_wire_hdr *h,
		     const struct vnet_fw_peer *p, u8 type, u8 channel, u8 flags,
		     u32 seq, u32 stamp)
{
	h->version = VNET_WIRE_VERSION;
	h->type = type;
	h->channel = channel;
	h->flags = flags;
	h->src_nic = fw_cpu_to_be16(nic->nic_id);
	h->dst_nic = fw_cpu_to_be16(p->nic_id);
	h->incarnation = fw_cpu_to_be32(p->incarnation);
	h->seq = fw_cpu_to_be32(seq);
	h->stamp = fw_cpu_to_be32(stamp);
	h->csum = 0;
}

/*
 * (Re)transmit the message held on channel @c to peer @p -- or, for a
 * train, its fragment @seq.
 */
static void vnet_fw_xmit_seq(struct vnet_fw_nic *nic, struct vnet_fw_peer *p,
			     u32 c, u32 seq)
{
	struct vnet_fw_send_chan *ch = &p->tx[c];
	struct {
		struct vnet_wire_hdr hdr;
		struct vnet_wire_msg msg;
	} pkt;
	u32 crc;

	ch->stamp = ++nic->stamp;
	ch->sent_at = nic->now;
	vnet_fw_pipe_sent(p, ch);
	ch->due = nic->now + vnet_fw_rto(nic, p);
	ch->sampled = false;
	/* Sent again after a NACK: its silence counts from now. */
	if (ch->nacked)
		ch->heard_at = nic->now;
	ch->nacked = false;
	ch->resume = false;
	vnet_fw_chan_count(nic, ch, true);
	if (ch->is_train) {
		vnet_fw_xmit_frag(nic, p, c, seq);
		return;
	}

	vnet_fw_put_hdr(nic, &pkt.hdr, p, VNET_WIRE_DATA, c,
			ch->sync ? VNET_WIRE_SYNC : 0, ch->seq, ch->stamp);
	vnet_fw_put_msg(&pkt.msg, &ch->msg, ch->key, ch->src_ep, ch->queue);
	crc = vnet_crc32c(0, &pkt, sizeof(pkt));
	crc = vnet_crc32c(crc, ch->payload, ch->payload ? ch->msg.len : 0);
	pkt.hdr.csum = fw_cpu_to_be32(crc);
	nic->ops->transmit(nic->ctx, p - nic->peers, &pkt, sizeof(pkt),
			   ch->payload, ch->payload ? ch->msg.len : 0);
}

/* The message on channel @c to @p, or its train's latest fragment. */
void vnet_fw_xmit_data(struct vnet_fw_nic *nic, struct vnet_fw_peer *p, u32 c)
{
	vnet_fw_xmit_seq(nic, p, c, p->tx[c].seq);
}

/*
 * Send the message on channel @c to peer @p again, ahead of the ACK: on
 * the timer, or at once for the peer's RESUME (@resumed).  A train sends
 * the oldest fragment it has out, alone until it is answered: its
 * receiver takes fragments in order, so it lost that one or everything
 * after it, or only their ACKs -- then it ACKs its latest again.
 */
void vnet_fw_retransmit(struct vnet_fw_nic *nic, struct vnet_fw_peer *p,
			u32 c, bool resumed)
{
	struct vnet_fw_send_chan *ch = &p->tx[c];
	u32 seq = ch->is_train ? ch->una_seq : ch->seq;

	if (seq != ch->seq) {
		ch->narrow = true;
		ch->resend = seq + 1;
	}
	vnet_fw_resend(nic, p, c, seq, resumed);
}

/* Send @seq -- the message, or a fragment of its train -- on @c again. */
void vnet_fw_resend(struct vnet_fw_nic *nic, struct vnet_fw_peer *p, u32 c,
		    u32 seq, bool resumed)
{
	const struct vnet_fw_send_chan *ch = &p->tx[c];

	nic->stats.retransmits++;
	vnet_fw_xmit_seq(nic, p, c, seq);
	vnet_fw_report(nic, &(struct vnet_fw_event){
		.type = VNET_FW_EV_RETRANSMIT,
		.channel = c,
		.resumed = resumed,
		.peer = p->nic_id,
		.seq = seq,
		.retries = ch->retries,
	});
}

void vnet_fw_xmit_ack(struct vnet_fw_nic *nic, struct vnet_fw_peer *p,
		      u8 type, u8 channel, u32 seq, u32 stamp, u8 status)
{
	struct {
		struct vnet_wire_hdr hdr;
		struct vnet_wire_ack ack;
	} pkt;

	vnet_fw_put_hdr(nic, &pkt.hdr, p, type, channel, 0, seq, stamp);
	fw_memset(&pkt.ack, 0, sizeof(pkt.ack));
	pkt.ack.status = status;
	pkt.hdr.csum = fw_cpu_to_be32(vnet_crc32c(0, &pkt, sizeof(pkt)));
	nic->ops->transmit(nic->ctx, p - nic->peers, &pkt, sizeof(pkt), NULL, 0);
	if (type == VNET_WIRE_ACK) {
		nic->stats.tx_ack++;
	} else {
		nic->stats.tx_nack[status]++;
		vnet_fw_report(nic, &(struct vnet_fw_event){
			.type = VNET_FW_EV_NACK_TX,
			.reason = status,
			.channel = channel,
			.peer = p->nic_id,
			.seq = seq,
		});
	}
}

static bool vnet_fw_took(const struct vnet_fw_peer *p, u32 ep)
{
	return p->took[(ep / 64) % VNET_FW_TOOK_WORDS] & (1ULL << (ep % 64));
}

static void vnet_fw_set_took(struct vnet_fw_peer *p, u32 ep, bool took)
{
	u64 *w = &p->took[(ep / 64) % VNET_FW_TOOK_WORDS];

	if (took)
		*w |= 1ULL << (ep % 64);
	else
		*w &= ~(1ULL << (ep % 64));
}

/*
 * May a message from @src to endpoint @ep of peer @p take one more channel?
 * Not past a share, half the channels (rounded up), from @src, nor past a
 * share on its way to @ep from all senders together -- a train between two
 * fragments (PAUSED) is on its way too: a receiver that never drains is
 * found out by its first NACK, a round trip after several senders may
 * have filled every channel with messages for it.  (Returns are done with
 * @ep and count for their senders alone.)  Not while that endpoint
 * refuses what it already has, and not while @src has a return waiting
 * for room in its own reply queue.  A @train takes no more than half the
 * channels (rounded down, one at least) with the other trains, and no
 * more than half the receiver's VNET_FW_PEER_TRAINS: a train of a
 * megabyte holds its channel for hundreds of round trips, and a message
 * of one packet must always find one.  Nor does it start while another
 * train from send queue @q to @ep has had no fragment taken yet: one
 * refused train to an endpoint at a time, not half the channels.  Nor
 * past the VNET_FW_PEER_RESERVE trains from @q to @ep that a receiver
 * takes from one peer (train_rx.c): it would refuse the next one, and
 * with many channels a crowd of large sends to one endpoint would run
 * busy clocks rather than wait in their senders' queues.
 *
 * Nor, while a share of the channels holds messages that were refused
 * or whose endpoints have not taken our latest message, for an @ep that
 * has not taken it either.  A refused message waits for its own endpoint
 * -- to be faulted onto the card, or to drain -- and with many endpoints
 * off the card (a server NIC paging its endpoints) their messages would
 * otherwise take every channel, one per endpoint, and the endpoints on the
 * card would get nothing while their clients' messages waited behind
 * them.  The endpoints that took our last message keep the rest; a bit
 * shared modulo 256 only lets a message by, to be refused at worst.
 */
static bool vnet_fw_may_send(const struct vnet_fw_nic *nic,
			     const struct vnet_fw_peer *p,
			     const struct vnet_fw_ep *src, u32 ep,
			     unsigned int q, bool train)
{
	u32 share = (nic->nchannels + 1) / 2;
	u32 trains_max = nic->nchannels > 1 ? nic->nchannels / 2 : 1;
	u32 c, from_src = 0, to_ep = 0, trains = 0, doubtful = 0;
	u32 trains_to_q = 0;

	if (trains_max > VNET_FW_PEER_TRAINS / 2)
		trains_max = VNET_FW_PEER_TRAINS / 2;

	for (c = 0; c < nic->nchannels; c++) {
		const struct vnet_fw_send_chan *ch = &p->tx[c];

		if (ch->state == VNET_CHAN_FREE)
			continue;
		if (ch->is_train)
			trains++;
		if (ch->src == src) {
			if (ch->state == VNET_CHAN_RETURNING)
				return false;
			from_src++;
		}
		if (!vnet_fw_chan_sending(ch->state))
			continue;
		doubtful += ch->refused || !vnet_fw_took(p, ch->msg.peer.ep);
		if (ch->msg.peer.ep == ep) {
			if (ch->state == VNET_CHAN_INFLIGHT && ch->refused)
				return false;
			/*
			 * Until its first fragment is taken a train may be
			 * refused, a round trip from now: were several to
			 * start at once, a queue that never drains would hold
			 * the trains' channels for busy_timeout, and replies
			 * that need a train would wait as long.
			 */
			if (train && ch->is_train && ch->queue == q &&
			    (!ch->frag_acked ||
			     ++trains_to_q >= VNET_FW_PEER_RESERVE))
				return false;
			to_ep++;
		}
	}
	if (doubtful >= share && !vnet_fw_took(p, ep))
		return false;
	return from_src < share && to_ep < share &&
	       (!train || trains < trains_max);
}

/*
 * Pool buffers one sending endpoint may hold: an eighth of the pool, and
 * at least half a peer's channels' worth.  A message waits in its queue
 * for its turn, as for a channel; without the bound, an endpoint whose
 * messages are refused on a few peers -- each holds its buffer until it
 * is taken or returned, busy_timeout later -- would take every buffer,
 * and every payload message of every other endpoint of the NIC would
 * wait as long.
 */
u32 vnet_fw_pool_share(const struct vnet_fw_nic *nic)
{
	u32 share = nic->npool / 8, chans = (nic->nchannels + 1) / 2;

	return share > chans ? share : chans;
}

/*
 * Put @msg from @src's send queue @q on a free channel to its NIC: it is
 * then MOVED, or STARTED when its train reads it from @src's segment as it
 * goes; it WAITS when no channel (or payload buffer) may be had; it is
 * REFUSED when its NIC has no route, or it needs a train and the link
 * cannot carry one.  @payload is where it is now: a staging slot, or
 * @src's segment.
 */
struct vnet_fw_outcome vnet_fw_send_remote(struct vnet_fw_nic *nic,
					   struct vnet_fw_ep *src,
					   const struct vnet_desc *msg, u64 key,
					   unsigned int q, const u8 *payload)
{
	u32 slot = msg->peer.nic < 65536 ? nic->peer_of[msg->peer.nic] :
					   VNET_FW_NO_PEER;
	struct vnet_fw_send_chan *ch = NULL;
	enum vnet_return_reason reason;
	struct vnet_fw_peer *p;
	bool train;
	u32 c;

	if (slot == VNET_FW_NO_PEER)
		return vnet_fw_outcome(VNET_FW_REFUSED, VNET_RET_UNREACHABLE);
	p = &nic->peers[slot];
	train = !vnet_fw_fits_packet(nic, p, msg->len);
	if (train && nic->mtu < VNET_WIRE_TRAIN_MTU)
		return vnet_fw_outcome(VNET_FW_REFUSED, VNET_RET_TOO_LARGE);
	for (c = 0; c < nic->nchannels; c++) {
		if (p->tx[c].state == VNET_CHAN_FREE) {
			ch = &p->tx[c];
			break;
		}
	}
	if (!ch || (msg->len && (!nic->pool_free ||
				 src->pool_held >= vnet_fw_pool_share(nic))) ||
	    !vnet_fw_may_send(nic, p, src, msg->peer.ep, q, train))
		return vnet_fw_outcome(VNET_FW_WAITS, 0);

	ch->msg = *msg;
	ch->key = key;
	ch->is_train = train;
	/* Past a pool buffer, its train reads it a fragment at a time. */
	ch->from_seg = (msg->flags & VNET_DESC_FROM_SEG) &&
		       msg->len > VNET_MEDIUM_MAX;
	ch->pinned = ch->from_seg && nic->zero_copy && nic->ops->transmit_seg;
	ch->payload = NULL;
	if (msg->len)
		ch->payload = nic->pool[nic->pool_free - 1];
	if (msg->len && !ch->from_seg) {
		fw_memcpy(ch->payload, payload, msg->len);
		fw_user_fetched((void *)payload, msg->len);
		nic->copied += msg->len;
		nic->stats.copied_bytes += msg->len;
	}
	ch->src = src;
	ch->seg_gen = src->seg_gen;
	ch->src_ep = src->name.ep;
	ch->queue = q;
	ch->taken_at = nic->now;
	ch->heard_at = nic->now;
	ch->seq++;
	ch->retries = 0;
	ch->refused = false;
	ch->resume = false;
	ch->resumed = false;
	ch->counted = false;
	ch->first_stamp = nic->stamp + 1;
	if (train) {
		vnet_fw_train_begin(ch, ch->seq);
		ch->frag_acked = 0;
		reason = vnet_fw_frag_load(nic, p, ch);
		if (reason) {
			/* Nothing went out: the number is the next message's. */
			ch->seq--;
			ch->payload = NULL;
			ch->src = NULL;
			return vnet_fw_outcome(VNET_FW_REFUSED, reason);
		}
		nic->stats.tx_trains++;
		nic->stats.tx_frags++;
	}
	if (msg->len) {
		nic->pool_free--;
		src->pool_held++;
	}
	vnet_fw_chan_set_state(nic, p, ch, VNET_CHAN_INFLIGHT);
	vnet_fw_xmit_data(nic, p, c);
	nic->stats.tx_data++;
	src->stats.sent++;
	/*
	 * A server brought back to answer across the wire has done what it
	 * came for once its reply is on its way: nothing comes back for a
	 * reply.  A request's reply is still to come.
	 */
	if (q == VNET_Q_REP_SEND)
		vnet_fw_mark_served(nic, src);
	return vnet_fw_outcome(ch->from_seg ? VNET_FW_STARTED : VNET_FW_MOVED,
			       0);
}

/*
 * Write a message the receiver (or the timer) handed back into its
 * sender's reply receive queue.  It waits on the channel while the sender
 * is off the card or its queue is full; it no longer waits on the wire, so
 * it does not hold up a flush.  A sender that leaves its reply queue full
 * for busy_timeout loses the message: it only hurts itself, and the
 * channel goes back to everyone else.  A reply handed back for a fault of
 * its own gives back the token it spent.
 */
static void vnet_fw_try_return(struct vnet_fw_nic *nic, struct vnet_fw_peer *p,
			       struct vnet_fw_send_chan *ch)
{
	struct vnet_fw_ep *src = ch->src;
	struct vnet_frame *frame;

	if (!src) {
		vnet_fw_chan_set_state(nic, p, ch, VNET_CHAN_FREE);
		return;
	}
	frame = fw_read_once(src->frame);
	if (!frame) {
		nic->ops->request_fault(nic->ctx, src);
		return;
	}
	if (vnet_fw_give_back(nic, src, frame, &ch->msg, ch->reason,
			      ch->payload) == VNET_FW_HOLD) {
		if (nic->now - ch->returning_at < nic->busy_timeout)
			return;
		src->stats.rejected++;
		vnet_fw_chan_set_state(nic, p, ch, VNET_CHAN_FREE);
		return;
	}
	if (ch->queue == VNET_Q_REP_SEND)
		vnet_fw_token_revive(src, ch->msg.token, ch->reason);
	nic->stats.returned[ch->reason]++;
	vnet_fw_chan_set_state(nic, p, ch, VNET_CHAN_FREE);
}

void vnet_fw_start_return(struct vnet_fw_nic *nic, struct vnet_fw_peer *p,
			  struct vnet_fw_send_chan *ch, u8 reason)
{
	/*
	 * The receiver may hold part of a train: the channel's next message
	 * starts it afresh, wherever its sequence number stands.
	 */
	if (ch->is_train)
		ch->sync = true;
	vnet_fw_chan_set_state(nic, p, ch, VNET_CHAN_RETURNING);
	ch->reason = reason;
	ch->returning_at = nic->now;
	vnet_fw_try_return(nic, p, ch);
}

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

	if (status >= VNET_RET_NR) {
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

/*
 * The endpoint is closing: its messages may still be delivered, not
 * returned, and its close waits for none of them -- but for a train that
 * reads its segment, which goes with it: that train stops where it is,
 * and its receiver drops what it has.  A train into it is dropped too.
 */
void vnet_fw_ep_forget(struct vnet_fw_nic *nic, struct vnet_fw_ep *ep)
{
	u32 i, c;

	ep->closed = true;
	/* No peer is told it is back: it never will be. */
	ep->resume_peers = 0;
	/* Nor are its send queue entries ever taken. */
	ep->train_head = 0;
	ep->train_done = 0;
	vnet_fw_trains_drop_ep(nic, ep);

	/* Freeing a channel can drop its peer from the list: walk backwards. */
	for (i = nic->nactive; i-- > 0;) {
		struct vnet_fw_peer *p = &nic->peers[nic->active[i]];

		for (c = 0; c < nic->nchannels; c++) {
			struct vnet_fw_send_chan *ch = &p->tx[c];

			if (ch->state == VNET_CHAN_FREE || ch->src != ep)
				continue;
			vnet_fw_chan_count(nic, ch, false);
			if (ch->payload)
				ep->pool_held--;
			ch->src = NULL;
			if (ch->from_seg && vnet_fw_chan_sending(ch->state)) {
				ch->sync = true;
				vnet_fw_chan_set_state(nic, p, ch,
						       VNET_CHAN_FREE);
			}
		}
	}
}

/* The route or link is gone: everything in flight is unreachable. */
void vnet_fw_peer_fail(struct vnet_fw_nic *nic, struct vnet_fw_peer *p)
{
	u32 c;

	for (c = 0; c < nic->nchannels && p->unacked; c++) {
		struct vnet_fw_send_chan *ch = &p->tx[c];

		if (vnet_fw_chan_sending(ch->state)) {
			ch->sync = true;
			vnet_fw_start_return(nic, p, ch, VNET_RET_UNREACHABLE);
		}
	}
}

void vnet_fw_fail_all(struct vnet_fw_nic *nic)
{
	u32 i;

	for (i = nic->nactive; i-- > 0;)
		vnet_fw_peer_fail(nic, &nic->peers[nic->active[i]]);
	vnet_fw_trains_drop_all(nic);
}
