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
 * An ACK or NACK (answer.c) is matched on (peer, channel, sequence
 * number) and must echo the stamp of one of this message's transmissions;
 * a NACK resolves
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
		ch->src->train_done[ch->queue] |= 1u << ch->entry;
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
	w->flags = m->flags & VNET_DESC_USER_FLAGS & ~VNET_FW_DESC_IN_PLACE;
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

void vnet_fw_set_took(struct vnet_fw_peer *p, u32 ep, bool took)
{
	u64 *w = &p->took[(ep / 64) % VNET_FW_TOOK_WORDS];

	if (took)
		*w |= 1ULL << (ep % 64);
	else
		*w &= ~(1ULL << (ep % 64));
}

/*
 * Trains one sender may have on the wire to a peer: half of what the peer
 * takes, so that a sender streaming bulk data, whose trains no longer wait
 * for each other in its queue, leaves the others room for theirs.
 */
static u32 vnet_fw_src_trains(u32 trains_max)
{
	return trains_max > 1 ? trains_max / 2 : 1;
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
	u32 trains_to_q = 0, trains_from_src = 0;

	if (trains_max > VNET_FW_PEER_TRAINS / 2)
		trains_max = VNET_FW_PEER_TRAINS / 2;

	for (c = 0; c < nic->nchannels; c++) {
		const struct vnet_fw_send_chan *ch = &p->tx[c];

		if (ch->state == VNET_CHAN_FREE)
			continue;
		if (ch->is_train) {
			trains++;
			trains_from_src += ch->src == src;
		}
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
	       (!train || (trains < trains_max &&
			   trains_from_src < vnet_fw_src_trains(trains_max)));
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
 * cannot carry one.  @payload is where it is now: a staging slot, or, read
 * in place, @src's segment or a pin of its, as @in says.
 */
struct vnet_fw_outcome vnet_fw_send_remote(struct vnet_fw_nic *nic,
					   struct vnet_fw_ep *src,
					   const struct vnet_desc *msg, u64 key,
					   unsigned int q, const u8 *payload,
					   const struct vnet_fw_src *in)
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
	ch->from_seg = (msg->flags & VNET_FW_DESC_IN_PLACE) &&
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
	ch->src_pin = in->pin;
	ch->src_gen = in->gen;
	ch->src_at = in->at;
	ch->src_ep = src->name.ep;
	ch->queue = q;
	/* The message is the next one @src posted on @q. */
	ch->entry = src->send_taken[q] & VNET_QUEUE_MASK;
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
void vnet_fw_try_return(struct vnet_fw_nic *nic, struct vnet_fw_peer *p,
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
	fw_memset(ep->train_held, 0, sizeof(ep->train_held));
	fw_memset(ep->train_done, 0, sizeof(ep->train_done));
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
