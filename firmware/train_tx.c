// SPDX-License-Identifier: GPL-2.0
/*
 * Trains, sender side: a message larger than one packet to its peer goes
 * out as fragments on its channel, each with a sequence number of its own
 * and answered as a whole message is (answer.c), a window of them on
 * the wire at once.
 *
 * A fragment is as large as the peer's frag_max and the link's MTU allow,
 * or smaller where the pipeline's costs say so (pipeline.c, which sizes a
 * train at its first fragment), decided as it is loaded: nothing on the
 * wire fixes the size, so a later
 * fragment may be larger or smaller than an earlier one, and the receiver
 * only checks that each starts where the last ended.  The last fragment
 * carries the CRC32C of the whole payload, summed as the fragments were
 * loaded, which the receiver checks before the message becomes visible.
 *
 * Where the bytes come from.  A payload of up to VNET_MEDIUM_MAX is copied
 * into the channel's pool buffer when the channel takes the message, as
 * for a single packet, and its send queue entry goes at once.  A larger
 * one is an XFER read in place, from the sender's own segment
 * (VNET_DESC_FROM_SEG) or from memory it pinned (VNET_DESC_FROM_PIN; the
 * segment below stands for either): each
 * fragment is sent from the segment's own pinned pages (ch->pinned,
 * ops->transmit_seg), summed where it lies, or else copied from the
 * segment into the pool buffer as it is sent, its checksums taken from
 * that copy; read again if it is sent again after another -- a sender
 * that changes its source before the train ends gets a train its
 * receiver restarts, or its message back -- and the
 * send queue entry stays until the train ends, delivered or its return written, so
 * the sender knows when it may change the source again, and that a return
 * is there to be read: its consumer index says so.
 * Bounds are checked against the segment as it is at each load, since its
 * owner may replace it meanwhile; a range no longer inside it, a segment
 * or pin replaced since the message was taken (src_gen), or a pin whose
 * pages its owner's mapping no longer holds (stale), returns the message
 * "bad segment", or, read from a pin, "source gone" -- when the fragment
 * that cannot be read has never been sent; one sent before goes again as
 * filler (vnet_fw_xmit_frag()).  A train started over reads the segment
 * again.
 *
 * The window.  Up to nic->train_window fragments are on the wire at once,
 * go-back-N: the receiver takes them only in order, so an ACK of one says
 * every one before it is in, and the window moves past it (the channel
 * remembers where each fragment of the window ends, and the CRC32C to
 * there).  The first fragment goes alone, since its answer says whether
 * the receiver takes the message at all.  The timer, finding the latest
 * transmission unanswered, sends the oldest fragment out again, alone;
 * once it is answered, the ones after it go again (the receiver dropped
 * them if it lost the oldest), then new ones.  A receiver that has the
 * oldest already answers with how far it got (receive.c), so lost ACKs
 * cost one retransmission.
 *
 * While its sender is moving no new fragment goes out; once those on the
 * wire are answered the train waits PAUSED, with nothing on the wire, so
 * that the sender's flush waits for a window, not for the rest of the
 * train (the rest of it does not need the sender's frame: the payload is
 * in the pool buffer or the segment).  The next firmware round after the
 * move goes on with it, or the timer does.
 *
 * Starting over.  NACK RESTART (the receiver dropped the train) or RESYNC
 * (it lost the channel) sends the train again from its first fragment,
 * under the sequence number the receiver NACKed, which is the one it
 * expects; RESYNC with SYNC.  A NACK is a refusal and runs the busy clock
 * (answer.c), which a restarted train would otherwise run out on the
 * way to where it was: so a restart's clock allows two quanta more for
 * each fragment up to the furthest point the train ever reached, and runs
 * on past it with its allowance growing as the train does.  Only a NACK
 * of the latest transmission restarts a train.  However a peer answers, a
 * train of n fragments is resolved within about n + 1 times what bounds a
 * single message.
 */
#include "fw_deliver.h"
#include "fw_queue.h"
#include "fw_transport.h"

/* Payload bytes one packet to @p may carry at most, for a header of @hdr. */
static u32 vnet_fw_frag_room(const struct vnet_fw_nic *nic,
			     const struct vnet_fw_peer *p, u32 hdr)
{
	u32 room = nic->mtu > hdr ? nic->mtu - hdr : 0;

	if (room > p->frag_max)
		room = p->frag_max;
	return room < VNET_MEDIUM_MAX ? room : VNET_MEDIUM_MAX;
}

/*
 * The train on @ch starts, or starts again, with its first fragment,
 * numbered @seq, alone on the wire.
 */
void vnet_fw_train_begin(struct vnet_fw_send_chan *ch, u32 seq)
{
	ch->seq = seq;
	ch->resend = seq + 1;
	ch->frag_off = 0;
	ch->una_seq = seq;
	ch->una_off = 0;
	ch->narrow = true;
}

/* Does a message of @len payload bytes go to @p in one DATA packet? */
bool vnet_fw_fits_packet(const struct vnet_fw_nic *nic,
			 const struct vnet_fw_peer *p, u32 len)
{
	return nic->mtu >= VNET_WIRE_DATA_LEN &&
	       len <= vnet_fw_frag_room(nic, p, VNET_WIRE_DATA_LEN);
}

/*
 * Point ch->frag at the @len payload bytes at @off: in the pool buffer,
 * or in the sender's segment -- read into the pool buffer at every
 * transmission, so that a fragment sent again after others is read again
 * (a sender that changes its source before the train ends has the train
 * restarted by its receiver's checksum, or back), or, for zero copy, where
 * they lie, found again at every transmission, since the segment may be
 * replaced between two.  False when they are no longer in the segment the
 * message was taken from.
 */
static bool vnet_fw_frag_bytes(struct vnet_fw_nic *nic,
			       struct vnet_fw_send_chan *ch, u32 off, u32 len)
{
	const u8 *bytes;

	if (!ch->from_seg) {
		ch->frag = ch->payload + off;
		return true;
	}
	/* A train read partly from each of two sources would be neither. */
	bytes = ch->src ? vnet_fw_src_bytes(ch->src, ch->src_pin, ch->src_gen,
					    ch->src_at + off, len) : NULL;
	if (!bytes)
		return false;
	if (ch->pinned) {
		ch->frag = bytes;
		return true;
	}
	fw_memcpy(ch->payload, bytes, len);
	fw_user_fetched((void *)bytes, len);
	nic->stats.copied_bytes += len;
	ch->frag = ch->payload;
	return true;
}

/*
 * Make the fragment at ch->frag_off, numbered ch->seq, the latest on the
 * channel: its length,
 * its bytes, the checksum of the payload to its end, and a clean slate of
 * transmissions.  A reason when it cannot be: its bytes are no longer in
 * the sender's segment, or the link's MTU shrank below what a fragment
 * needs.
 */
enum vnet_return_reason vnet_fw_frag_load(struct vnet_fw_nic *nic,
					  struct vnet_fw_peer *p,
					  struct vnet_fw_send_chan *ch)
{
	bool first = !ch->frag_off;
	u32 len = ch->msg.len - ch->frag_off;
	u32 room = vnet_fw_frag_room(nic, p, first ? VNET_WIRE_FIRST_LEN :
							VNET_WIRE_FRAG_LEN);

	/* A smaller fragment, not the last, would be a bad frame. */
	if (room < VNET_WIRE_FRAG_MIN || nic->mtu < VNET_WIRE_TRAIN_MTU)
		return VNET_RET_TOO_LARGE;
	/* The pipeline sizes a train once, at its first fragment. */
	if (first) {
		ch->frag_cap = vnet_fw_pipe_frag(nic, p, ch->msg.len, room);
		ch->gap_open = false;
	}
	if (len > room)
		len = room;
	if (ch->frag_cap && len > ch->frag_cap)
		len = ch->frag_cap;
	/*
	 * A train has two fragments or more, or its first is a bad frame
	 * (train_rx.c).  The link's MTU may have grown since the message
	 * took its channel, so that the first fragment of a train started
	 * over could hold all of it: leave a byte for a last one.  The
	 * message was once too large for a first fragment of at least
	 * VNET_WIRE_FRAG_MIN, so this one is still that large.
	 */
	if (first && len == ch->msg.len)
		len--;
	if (!vnet_fw_frag_bytes(nic, ch, ch->frag_off, len))
		return vnet_fw_src_lost(ch->src_pin != VNET_FW_SRC_SEG);
	if (first)
		ch->train = ch->seq;
	ch->frag_len = len;
	/* Its bytes summed once, for its packets' checksums as well. */
	ch->frag_sum = vnet_crc32c(0, ch->frag, len);
	ch->frag_fresh = true;
	ch->frag_sent = false;
	/* In the segment: found again when it goes, wherever that is then. */
	if (ch->pinned)
		ch->frag = NULL;
	ch->frag_crc = first ? ch->frag_sum :
		       vnet_crc32c_cat(ch->frag_crc, ch->frag_sum, len);
	ch->win_end[ch->seq % VNET_FW_TRAIN_WINDOW_MAX] = ch->frag_off + len;
	ch->win_crc[ch->seq % VNET_FW_TRAIN_WINDOW_MAX] = ch->frag_crc;
	/*
	 * No answer to a transmission before the window's passes for one to
	 * a fragment in it: after a rewind its numbers are another train's.
	 */
	if (ch->seq == ch->una_seq)
		ch->first_stamp = nic->stamp + 1;
	/* Each fragment has a message's lifetime: a train going on lives. */
	ch->taken_at = nic->now;
	ch->heard_at = nic->now;
	ch->retries = 0;
	ch->nacked = false;
	ch->resume = false;
	ch->resumed = false;
	return VNET_RET_NONE;
}

static void vnet_fw_train_stop(struct vnet_fw_nic *nic, struct vnet_fw_peer *p,
			       struct vnet_fw_send_chan *ch, u8 reason);

/*
 * Fragment @seq of the train on channel @c, as vnet_fw_xmit_data() stamped
 * it: the latest, its bytes at ch->frag, or an older one of the window,
 * read again.
 *
 * One that cannot be read any more for its first transmission sends the
 * train back: its receiver cannot have the message without it.  One sent
 * before may be all its receiver lacked an ACK of -- the message
 * delivered, the answers lost -- and returning it would have it both
 * delivered and back with its sender, who may send it again.  It goes
 * again as filler: zeros, summed as they are, and but for a first
 * fragment naming a train that cannot be its receiver's.  A receiver that
 * has it says how far it got, which may be to the end, and never looks at
 * the train it names; one that lacks it finds it of another train, drops
 * its own and NACKs RESTART -- and the restart, whose first fragment
 * cannot be read, returns the message, with nothing of it delivered.  A
 * first fragment taken as filler starts a train whose later fragments,
 * never sent, cannot be read either: returned too.
 */
void vnet_fw_xmit_frag(struct vnet_fw_nic *nic, struct vnet_fw_peer *p, u32 c,
		       u32 seq)
{
	struct vnet_fw_send_chan *ch = &p->tx[c];
	u32 off = ch->frag_off, len = ch->frag_len, crc_end = ch->frag_crc;
	bool first, last, read = seq != ch->seq || !ch->frag;
	u32 hlen;
	struct {
		struct vnet_wire_hdr hdr;
		struct vnet_wire_frag frag;
		struct vnet_wire_msg msg;
	} pkt;
	u32 crc, sum;
	bool filler = false;

	if (seq != ch->seq) {
		u32 i = seq % VNET_FW_TRAIN_WINDOW_MAX;

		off = seq == ch->una_seq ? ch->una_off :
		      ch->win_end[(seq - 1) % VNET_FW_TRAIN_WINDOW_MAX];
		len = ch->win_end[i] - off;
		crc_end = ch->win_crc[i];
	}
	/* The buffer holds another fragment since an older one went again. */
	if (read && !vnet_fw_frag_bytes(nic, ch, off, len)) {
		if (seq == ch->seq && !ch->frag_sent) {
			vnet_fw_train_stop(nic, p, ch,
					   vnet_fw_src_lost(ch->src_pin !=
							    VNET_FW_SRC_SEG));
			return;
		}
		fw_memset(ch->payload, 0, len);
		ch->frag = ch->payload;
		filler = true;
		nic->stats.tx_fillers++;
	}
	ch->win_stamp[seq % VNET_FW_TRAIN_WINDOW_MAX] = ch->stamp;
	ch->win_sent[seq % VNET_FW_TRAIN_WINDOW_MAX] = ch->sent_at;
	ch->win_sampled &= ~(1u << (seq % VNET_FW_TRAIN_WINDOW_MAX));
	first = !off;
	last = off + len == ch->msg.len;
	hlen = first ? VNET_WIRE_FIRST_LEN : VNET_WIRE_FRAG_LEN;
	vnet_fw_put_hdr(nic, &pkt.hdr, p, VNET_WIRE_FRAG, c,
			ch->sync ? VNET_WIRE_SYNC : 0, seq, ch->stamp);
	fw_memset(&pkt.frag, 0, sizeof(pkt.frag));
	pkt.frag.train = fw_cpu_to_be32(filler && off ? ~ch->train :
					ch->train);
	pkt.frag.offset = fw_cpu_to_be32(off);
	pkt.frag.len = fw_cpu_to_be16(len);
	pkt.frag.flags = (first ? VNET_FRAG_FIRST : 0) |
			 (last ? VNET_FRAG_LAST : 0);
	if (last)
		pkt.frag.csum = fw_cpu_to_be32(crc_end);
	if (first)
		vnet_fw_put_msg(&pkt.msg, &ch->msg, ch->key, ch->src_ep,
				ch->queue);
	/*
	 * Bytes read again are summed again: from the sender's segment they
	 * may have changed, and the packet must sum right for what it
	 * carries (the payload's checksum tells the receiver they changed).
	 * The latest fragment's stay in the buffer for its next
	 * transmission, with their sum; sent from the segment itself, only
	 * its first transmission takes the sum from its load.
	 */
	if (!read || (ch->pinned && seq == ch->seq && ch->frag_fresh))
		sum = ch->frag_sum;
	else
		sum = vnet_crc32c(0, ch->frag, len);
	if (seq == ch->seq)
		ch->frag_sum = sum;
	crc = vnet_crc32c_cat(vnet_crc32c(0, &pkt, hlen), sum, len);
	pkt.hdr.csum = fw_cpu_to_be32(crc);
	if (seq == ch->seq)
		ch->frag_sent = true;
	if (ch->pinned && !filler) {
		nic->ops->transmit_seg(nic->ctx, p - nic->peers, &pkt, hlen,
				       ch->src, ch->src_pin, ch->src_at + off,
				       len);
		nic->stats.tx_seg_bytes += len;
		ch->frag = NULL;
		ch->frag_fresh = false;
		return;
	}
	nic->ops->transmit(nic->ctx, p - nic->peers, &pkt, hlen, ch->frag,
			   len);
	/* Filler stands in for one sending: the next reads again. */
	if (seq != ch->seq || filler)
		ch->frag = ch->from_seg ? NULL : ch->payload + ch->frag_off;
}

/* The train on @ch cannot go on: back to its sender, or, closed, nowhere. */
static void vnet_fw_train_stop(struct vnet_fw_nic *nic, struct vnet_fw_peer *p,
			       struct vnet_fw_send_chan *ch, u8 reason)
{
	if (ch->src) {
		vnet_fw_start_return(nic, p, ch, reason);
		return;
	}
	ch->sync = true;
	vnet_fw_chan_set_state(nic, p, ch, VNET_CHAN_FREE);
}

/*
 * Put the train on channel @c on the wire, INFLIGHT, unless only its
 * oldest fragment may go (narrow): first again the fragments after the
 * oldest that the timer sent again -- its receiver, which takes them in
 * order, dropped them if it lost that one -- then those after the latest,
 * until nic->train_window of them are out or all of it is.  While its
 * sender moves nothing new goes (its flush waits for what is out, not for
 * the rest of the train), and nothing again once the flush is no longer
 * waiting for the train (its latest transmission NACKed).
 */
static void vnet_fw_train_fill(struct vnet_fw_nic *nic,
			       struct vnet_fw_peer *p, u32 c)
{
	struct vnet_fw_send_chan *ch = &p->tx[c];
	enum vnet_return_reason reason;

	if ((s32)(ch->resend - ch->una_seq) < 0)
		ch->resend = ch->una_seq;
	/* Refused too long: it waits for its latest answer, sends nothing. */
	if (vnet_fw_chan_refused_too_long(nic, ch))
		return;
	while (ch->state == VNET_CHAN_INFLIGHT && !ch->narrow &&
	       (s32)(ch->seq - ch->resend) >= 0 &&
	       (ch->counted || !(ch->src && fw_read_once(ch->src->moving))))
		vnet_fw_resend(nic, p, c, ch->resend++, false);
	while (ch->state == VNET_CHAN_INFLIGHT && !ch->narrow &&
	       ch->seq + 1 - ch->una_seq < nic->train_window &&
	       ch->frag_off + ch->frag_len < ch->msg.len &&
	       !(ch->src && fw_read_once(ch->src->moving))) {
		ch->frag_off += ch->frag_len;
		ch->resend = ++ch->seq + 1;
		reason = vnet_fw_frag_load(nic, p, ch);
		if (reason) {
			vnet_fw_train_stop(nic, p, ch, reason);
			return;
		}
		vnet_fw_xmit_data(nic, p, c);
		nic->stats.tx_data++;
		nic->stats.tx_frags++;
	}
}

/* Is @seq one of the fragments of the train on @ch on the wire? */
bool vnet_fw_frag_out(const struct vnet_fw_send_chan *ch, u32 seq)
{
	return (s32)(seq - ch->una_seq) >= 0 && (s32)(ch->seq - seq) >= 0;
}

/*
 * Fragment @seq of the train on channel @c was ACKed, and the train is not
 * over.  The receiver takes fragments only in order, so every one up to
 * @seq is in: the window moves past it, and more of the train goes out.
 * With nothing of it left on the wire and its sender moving, it waits
 * PAUSED.
 */
void vnet_fw_frag_acked(struct vnet_fw_nic *nic, struct vnet_fw_peer *p, u32 c,
			u32 seq)
{
	struct vnet_fw_send_chan *ch = &p->tx[c];
	u32 i = seq % VNET_FW_TRAIN_WINDOW_MAX;

	vnet_fw_pipe_gap(nic, p, ch, seq, false);
	ch->una_off = ch->win_end[i];
	ch->una_seq = seq + 1;
	ch->narrow = false;
	/*
	 * Word from the receiver, and a train going on: the silence and the
	 * lifetime that bound it count from here, as from a fragment loaded
	 * -- but not while its sender moves, whose flush they bound: a window
	 * trickling in under loss would hold it a timeout per fragment.
	 */
	if (!(ch->src && fw_read_once(ch->src->moving))) {
		ch->heard_at = nic->now;
		ch->taken_at = nic->now;
	}
	if (ch->una_off > ch->frag_acked) {
		/*
		 * Further than ever: a refusal of the train where it stood is
		 * past.  Not a restart's clock, which runs on, its allowance
		 * growing with the train: stopped here, a peer that restarts
		 * the train at its furthest point, and lets it one fragment
		 * further just before the clock runs out, would hold it a
		 * busy_timeout per fragment.
		 */
		ch->frag_acked = ch->una_off;
		if (!ch->refused_rewound)
			ch->refused = false;
	}
	if (ch->una_seq == ch->seq + 1 && ch->src &&
	    fw_read_once(ch->src->moving)) {
		vnet_fw_chan_set_state(nic, p, ch, VNET_CHAN_PAUSED);
		return;
	}
	vnet_fw_train_fill(nic, p, c);
}

/* A PAUSED train goes on once its sender is no longer moving. */
void vnet_fw_train_unpause(struct vnet_fw_nic *nic, struct vnet_fw_peer *p,
			   u32 c)
{
	struct vnet_fw_send_chan *ch = &p->tx[c];

	if (ch->src && fw_read_once(ch->src->moving))
		return;
	vnet_fw_chan_set_state(nic, p, ch, VNET_CHAN_INFLIGHT);
	vnet_fw_train_fill(nic, p, c);
}

/*
 * The first round after a move: the trains it paused go on now rather
 * than at the next timer scan, up to a quantum later.
 */
void vnet_fw_trains_unpause(struct vnet_fw_nic *nic)
{
	u32 i, c;

	/* Returning a train can drop its peer from the list: backwards. */
	for (i = nic->nactive; nic->paused && i-- > 0;) {
		struct vnet_fw_peer *p = &nic->peers[nic->active[i]];

		for (c = 0; c < nic->nchannels && p->unacked; c++)
			if (p->tx[c].state == VNET_CHAN_PAUSED)
				vnet_fw_train_unpause(nic, p, c);
	}
}

/*
 * Send the train on channel @c again from its first fragment, alone, under
 * the sequence number @seq of the fragment the receiver answered -- the one
 * it expects -- when the timer finds it due.  False when it cannot be, and
 * has gone back to its sender.
 */
bool vnet_fw_train_rewind(struct vnet_fw_nic *nic, struct vnet_fw_peer *p,
			  u32 c, u32 seq)
{
	struct vnet_fw_send_chan *ch = &p->tx[c];
	enum vnet_return_reason reason;

	vnet_fw_train_begin(ch, seq);
	reason = vnet_fw_frag_load(nic, p, ch);
	if (reason) {
		vnet_fw_train_stop(nic, p, ch, reason);
		return false;
	}
	/*
	 * The timer sends it, later: its bytes in the segment may be others
	 * by then -- a message landing there, say -- and are summed again.
	 */
	ch->frag_fresh = false;
	ch->due = nic->now;
	return true;
}

/*
 * Entries of @ep whose trains from its segment have ended: they may go
 * now, and the consumer index moves past them as far as no train still
 * holds an entry.  Only from a round that found @ep in a frame: a move
 * takes it out of the frame table first, so the firmware writes no index
 * the host is copying.  Returns the entries the index passed.
 */
u32 vnet_fw_trains_retire(struct vnet_fw_ep *ep, struct vnet_frame *frame)
{
	u32 retired = 0;
	unsigned int q;

	for (q = VNET_Q_REQ_SEND; q <= VNET_Q_REP_SEND; q++) {
		if (!ep->train_done[q])
			continue;
		ep->train_held[q] &= ~ep->train_done[q];
		ep->train_done[q] = 0;
		retired += vnet_fw_send_retire(ep, frame, q);
	}
	return retired;
}
