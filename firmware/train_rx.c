// SPDX-License-Identifier: GPL-2.0
/*
 * Trains, receiver side: a message that arrives as fragments (wire.h) is
 * visible only whole, once, after its last fragment.
 *
 * The decision is taken once, on the first fragment, as for a whole
 * message (receive.c): the destination exists and accepts the tag or the
 * reply key, an XFER fits its segment -- else the message is handed back,
 * an ACK with the reason; the destination is on the card and its receive
 * queue has room -- else a NACK, and the sender tries again.  Taking it
 * sets an entry of that queue aside (recv_reserved: other messages see
 * one entry less room), so that no later fragment can fail for lack of
 * room, and takes one of the NIC's train slots.  Every later fragment
 * must then start where the one before it ended, in the train its first
 * fragment started; its bytes land where the message goes: an XFER's in
 * the destination's segment, in place, a medium payload's in the slot's
 * own buffer.  The last one is checked against the CRC32C of the whole
 * payload that it carries, and only then is the message written into the
 * receive queue, as any other, and the producer index moved: that is the
 * moment it becomes visible.
 *
 * A fragment that does not follow -- no train on its channel, another
 * train, a gap, an overlap, a length past the message, a checksum that
 * does not match, a segment replaced since the first fragment -- drops the
 * train, and is NACKed RESTART: the sender starts it again from its first
 * fragment, which is decided afresh.
 *
 * A train is dropped, its entry and slot given back, when its channel
 * starts again (SYNC, a new incarnation of the sender's route, its route
 * deleted), when a whole message or a new first fragment arrives on its
 * channel (its sender gave it up), when its destination closes, when no
 * fragment of it arrived for busy_timeout, and when it is older than
 * busy_timeout plus two quanta for each VNET_WIRE_FRAG_MIN bytes of its
 * message -- every fragment but the last carries that much, or is a bad
 * frame: so no peer pins a slot or an entry longer than that, however it
 * paces the fragments of a train that never ends.  Not when its
 * destination is evicted: nothing but the last fragment needs the frame
 * -- the bytes land in host memory either way -- so the train goes on, and
 * its last fragment is NACKed "not resident" until the destination is back
 * (RESUME tells the sender when).  A fragment landing while the
 * destination is off the card asks for it to be faulted in, so that it is
 * back by then.  Dropping the train instead would restart a large message
 * at each eviction, and under overcommit it might never arrive.
 *
 * An XFER's range of the segment is written before the message is
 * visible.  The segment is the owner's memory, which it may read at any
 * time, so it may see part of a message there -- as it may see any
 * message being written into it; what AM promises is the data once the
 * handler runs, and that is what the receive queue entry says.  A train
 * dropped halfway leaves its range partly written and nothing in the
 * queue: no partial message is ever visible as one.  Its sender gets it
 * back whole (or sends it again), never a receipt for part of it.
 *
 * Bounds: a train slot per (peer, channel number) at most, ntrains in
 * all, no peer more than half of them or VNET_FW_PEER_TRAINS, whatever
 * channel numbers it uses, nor more than VNET_FW_PEER_RESERVE entries of
 * one receive queue; a first fragment that claims a megabyte costs its
 * slot and nothing more, since the bytes land where the destination
 * already has the memory.
 */
#include "fw_deliver.h"
#include "fw_queue.h"
#include "fw_transport.h"

/*
 * The one place a train slot changes state: busy with the train on
 * channel @c of @p, or free again.  Holding it is holding an entry of its
 * destination's receive queue.
 */
static void vnet_fw_train_set_busy(struct vnet_fw_nic *nic,
				   struct vnet_fw_train *t,
				   struct vnet_fw_peer *p, bool busy)
{
	u32 *reserved = &t->dst->recv_reserved[t->rq - VNET_Q_REQ_RECV];

	if (fw_warn_on(t->busy == busy))
		return;
	t->busy = busy;
	if (busy) {
		(*reserved)++;
		p->trains++;
		nic->trains_busy++;
		p->rx[t->channel].train = t - nic->trains + 1;
		return;
	}
	(*reserved)--;
	p->trains--;
	nic->trains_busy--;
	p->rx[t->channel].train = 0;
}

void vnet_fw_train_drop(struct vnet_fw_nic *nic, struct vnet_fw_train *t)
{
	vnet_fw_train_set_busy(nic, t, &nic->peers[t->peer], false);
	nic->stats.trains_dropped++;
}

void vnet_fw_trains_drop_peer(struct vnet_fw_nic *nic, struct vnet_fw_peer *p)
{
	u32 c;

	for (c = 0; c < VNET_WIRE_CHANNELS && p->trains; c++)
		if (p->rx[c].train)
			vnet_fw_train_drop(nic, &nic->trains[p->rx[c].train - 1]);
}

/* @ep closes: what is on its way to it goes nowhere. */
void vnet_fw_trains_drop_ep(struct vnet_fw_nic *nic,
			    const struct vnet_fw_ep *ep)
{
	u32 i;

	for (i = 0; i < nic->ntrains && nic->trains_busy; i++)
		if (nic->trains[i].busy && nic->trains[i].dst == ep)
			vnet_fw_train_drop(nic, &nic->trains[i]);
}

void vnet_fw_trains_drop_all(struct vnet_fw_nic *nic)
{
	u32 i;

	for (i = 0; i < nic->ntrains && nic->trains_busy; i++)
		if (nic->trains[i].busy)
			vnet_fw_train_drop(nic, &nic->trains[i]);
}

/*
 * How long train @t may take in all: a busy_timeout, as any message may
 * be refused that long, and two quanta for each fragment it can have --
 * a sender sends the next one as soon as the one before is ACKed, and
 * each fragment but the last carries VNET_WIRE_FRAG_MIN bytes at least.
 * Without it, a peer that sends the next fragment just before
 * busy_timeout runs out would hold the slot and the entry for hours.
 */
static u64 vnet_fw_train_lifetime(const struct vnet_fw_nic *nic,
				  const struct vnet_fw_train *t)
{
	u64 frags = (t->msg.len + VNET_WIRE_FRAG_MIN - 1) / VNET_WIRE_FRAG_MIN;

	return nic->busy_timeout + 2 * frags * nic->quantum;
}

/*
 * Once a quantum: trains that have had no fragment for busy_timeout, or
 * have outlived what their length allows.
 */
void vnet_fw_trains_expire(struct vnet_fw_nic *nic)
{
	u32 i;

	for (i = 0; i < nic->ntrains && nic->trains_busy; i++) {
		struct vnet_fw_train *t = &nic->trains[i];

		if (t->busy &&
		    (nic->now - t->landed_at >= nic->busy_timeout ||
		     nic->now - t->started_at >= vnet_fw_train_lifetime(nic, t)))
			vnet_fw_train_drop(nic, t);
	}
}

/*
 * A free slot for one more train from @p to queue @rq of @dst, or NULL.
 * Each train holds an entry of that queue: no peer holds more than
 * VNET_FW_PEER_RESERVE of one queue, so that a peer that starts trains on
 * every channel to one endpoint leaves it room for others' messages.
 */
static struct vnet_fw_train *vnet_fw_train_slot(struct vnet_fw_nic *nic,
						const struct vnet_fw_peer *p,
						const struct vnet_fw_ep *dst,
						unsigned int rq)
{
	u32 i, c, there = 0;

	if (p->trains >= (nic->ntrains + 1) / 2 ||
	    p->trains >= VNET_FW_PEER_TRAINS ||
	    nic->trains_busy == nic->ntrains)
		return NULL;
	for (c = 0; c < VNET_WIRE_CHANNELS && p->trains; c++) {
		const struct vnet_fw_train *t;

		if (!p->rx[c].train)
			continue;
		t = &nic->trains[p->rx[c].train - 1];
		if (t->dst == dst && t->rq == rq &&
		    ++there >= VNET_FW_PEER_RESERVE)
			return NULL;
	}
	for (i = 0; i < nic->ntrains; i++)
		if (!nic->trains[i].busy)
			return &nic->trains[i];
	return NULL;
}

/*
 * The packet's own length, from its fragment header, or 0 when that is
 * malformed.  Everything a FRAG packet says about itself is checked here,
 * before its checksum: flags, lengths, offsets, the first fragment's
 * message; whether it fits the train it claims is train business, below.
 */
u32 vnet_fw_frag_packet_len(const struct vnet_wire_hdr *h, u32 len)
{
	const struct vnet_wire_frag *f = (const void *)(h + 1);
	const struct vnet_wire_msg *w = (const void *)(f + 1);
	u32 flen, off, hlen = VNET_WIRE_FRAG_LEN;
	bool first, last;

	if (len < VNET_WIRE_FRAG_LEN)
		return 0;
	flen = fw_be16_to_cpu(f->len);
	off = fw_be32_to_cpu(f->offset);
	first = f->flags & VNET_FRAG_FIRST;
	last = f->flags & VNET_FRAG_LAST;
	if ((f->flags & ~(VNET_FRAG_FIRST | VNET_FRAG_LAST)) ||
	    f->__reserved || !flen || flen > VNET_MEDIUM_MAX ||
	    (!last && (f->csum || flen < VNET_WIRE_FRAG_MIN)))
		return 0;
	if (first) {
		u32 mlen;

		hlen = VNET_WIRE_FIRST_LEN;
		if (len < hlen || last || off || f->train != h->seq)
			return 0;
		/* A train has two fragments or more, and its bytes to carry. */
		mlen = fw_be32_to_cpu(w->len);
		if (flen >= mlen ||
		    !(w->flags & (VNET_DESC_MEDIUM | VNET_DESC_XFER)))
			return 0;
	} else if (!off || off > VNET_XFER_MAX - flen) {
		return 0;
	}
	return hlen + flen;
}

/*
 * Land the @bytes at @off of train @t's payload, which sum to @sum (their
 * CRC32C, from the packet's check).  False when its owner
 * replaced the destination's segment meanwhile: the bytes already landed
 * are in the old one, so even a new segment that holds the range would
 * get only the rest of the message.
 */
static bool vnet_fw_train_land(struct vnet_fw_nic *nic,
			       struct vnet_fw_train *t, u32 off,
			       const struct vnet_fw_bytes *bytes, u32 sum)
{
	struct vnet_fw_ep *dst = t->dst;
	u32 len = bytes->len;

	if (t->msg.flags & VNET_DESC_XFER) {
		if (dst->seg_gen != t->seg_gen ||
		    !vnet_fw_seg_fits(dst, t->msg.offset + off, len))
			return false;
		vnet_fw_bytes_copy(dst->seg + t->msg.offset + off, bytes);
	} else {
		vnet_fw_bytes_copy(t->buf + off, bytes);
	}
	nic->stats.copied_bytes += len;
	t->received = off + len;
	t->crc = vnet_crc32c_cat(t->crc, sum, len);
	t->landed_at = nic->now;
	/* Receiving is working: and the last fragment will want the frame. */
	if (fw_read_once(dst->frame))
		fw_write_once(dst->active_at, nic->now);
	else if (!fw_read_once(dst->moving))
		nic->ops->request_fault(nic->ctx, dst);
	return true;
}

/*
 * Can @dst take a message on @rq now, or why not?  Its own entry set aside
 * counts as room for a train that holds one (@own).
 */
static struct vnet_fw_outcome vnet_fw_train_room(struct vnet_fw_nic *nic,
						 struct vnet_fw_peer *p,
						 struct vnet_fw_ep *dst,
						 unsigned int rq, u32 own)
{
	struct vnet_frame *frame = fw_read_once(dst->frame);

	if (!frame || fw_read_once(dst->moving)) {
		nic->ops->request_fault(nic->ctx, dst);
		/* @p hears from us again once @dst is back on the card. */
		vnet_fw_resume_wanted(nic, dst, p);
		return vnet_fw_outcome(VNET_FW_WAITS, VNET_NACK_NOT_RESIDENT);
	}
	if (vnet_fw_recv_room(dst, frame, rq) <=
	    (int)(dst->recv_reserved[rq - VNET_Q_REQ_RECV] - own))
		return vnet_fw_outcome(VNET_FW_WAITS, VNET_NACK_QUEUE_FULL);
	return vnet_fw_outcome(VNET_FW_MOVED, VNET_RET_NONE);
}

/* A first fragment, at the sequence number @seq its channel expects. */
static struct vnet_fw_outcome
vnet_fw_train_first(struct vnet_fw_nic *nic, struct vnet_fw_peer *p,
		    u8 channel, u32 seq, const struct vnet_wire_msg *w,
		    const struct vnet_fw_bytes *bytes, u32 sum)
{
	unsigned int rq = w->queue == VNET_Q_REQ_SEND ? VNET_Q_REQ_RECV :
							VNET_Q_REP_RECV;
	u64 key = (u64)fw_be32_to_cpu(w->key_hi) << 32 |
		  fw_be32_to_cpu(w->key_lo);
	enum vnet_return_reason reason;
	struct vnet_fw_outcome out;
	struct vnet_fw_train *t;
	struct vnet_fw_ep *dst;
	struct vnet_desc m;

	/* The caller checked it with the packet. */
	vnet_fw_get_msg(w, p->nic_id, &m);
	reason = vnet_fw_find_dest(nic, fw_be32_to_cpu(w->dst_ep), rq, &m, key,
				   &dst);
	if (reason)
		return vnet_fw_outcome(VNET_FW_REFUSED, reason);
	out = vnet_fw_train_room(nic, p, dst, rq, 0);
	if (out.fate == VNET_FW_WAITS)
		return out;
	t = vnet_fw_train_slot(nic, p, dst, rq);
	if (!t)
		return vnet_fw_outcome(VNET_FW_WAITS, VNET_NACK_QUEUE_FULL);

	t->msg = m;
	t->key = key;
	t->dst = dst;
	t->rq = rq;
	t->peer = p - nic->peers;
	t->channel = channel;
	t->first = seq;
	t->crc = 0;
	t->seg_gen = dst->seg_gen;
	t->started_at = nic->now;
	vnet_fw_train_set_busy(nic, t, p, true);
	/* find_dest() checked the whole range against the segment. */
	vnet_fw_train_land(nic, t, 0, bytes, sum);
	return vnet_fw_outcome(VNET_FW_MOVED, VNET_RET_NONE);
}

/* The last fragment of train @t, which follows it: the message, visible. */
static struct vnet_fw_outcome
vnet_fw_train_last(struct vnet_fw_nic *nic, struct vnet_fw_peer *p,
		   struct vnet_fw_train *t, const struct vnet_wire_frag *f,
		   const struct vnet_fw_bytes *bytes, u32 sum)
{
	const bool medium = t->msg.flags & VNET_DESC_MEDIUM;
	u32 *reserved = &t->dst->recv_reserved[t->rq - VNET_Q_REQ_RECV];
	struct vnet_fw_outcome out;
	enum vnet_fw_accept taken;
	struct vnet_fw_bytes whole;

	if (vnet_crc32c_cat(t->crc, sum, bytes->len) !=
	    fw_be32_to_cpu(f->csum)) {
		vnet_fw_train_drop(nic, t);
		return vnet_fw_outcome(VNET_FW_WAITS, VNET_NACK_RESTART);
	}
	/* Nothing lands until it can all be taken: the sender sends it again. */
	out = vnet_fw_train_room(nic, p, t->dst, t->rq, 1);
	if (out.fate == VNET_FW_WAITS)
		return out;
	if (!vnet_fw_train_land(nic, t, t->received, bytes, sum)) {
		vnet_fw_train_drop(nic, t);
		return vnet_fw_outcome(VNET_FW_WAITS, VNET_NACK_RESTART);
	}
	/* The entry set aside is this message's now. */
	(*reserved)--;
	if (medium)
		vnet_fw_bytes_flat(&whole, t->buf, t->msg.len);
	taken = vnet_fw_accept(nic, t->dst, t->rq, &t->msg, t->key,
			       medium ? &whole : NULL);
	(*reserved)++;
	if (fw_warn_on(taken != VNET_FW_ACCEPTED)) {
		vnet_fw_train_drop(nic, t);
		return vnet_fw_outcome(VNET_FW_WAITS, VNET_NACK_RESTART);
	}
	vnet_fw_train_set_busy(nic, t, p, false);
	nic->stats.rx_trains++;
	return vnet_fw_outcome(VNET_FW_MOVED, VNET_RET_NONE);
}

/* What becomes of a fragment at the sequence number its channel expects. */
static struct vnet_fw_outcome vnet_fw_frag_take(struct vnet_fw_nic *nic,
						struct vnet_fw_peer *p,
						const struct vnet_wire_hdr *h,
						const struct vnet_fw_bytes *bytes,
						u32 sum)
{
	const struct vnet_wire_frag *f = (const void *)(h + 1);
	const struct vnet_wire_msg *w = (const void *)(f + 1);
	struct vnet_fw_recv_chan *rc = &p->rx[h->channel];
	struct vnet_fw_train *t = rc->train ? &nic->trains[rc->train - 1] :
					      NULL;
	u32 off = fw_be32_to_cpu(f->offset), len = fw_be16_to_cpu(f->len);

	if (f->flags & VNET_FRAG_FIRST) {
		/* A train starts again, or anew: the one open is given up. */
		if (t)
			vnet_fw_train_drop(nic, t);
		return vnet_fw_train_first(nic, p, h->channel,
					   fw_be32_to_cpu(h->seq), w, bytes,
					   sum);
	}
	if (!t || t->first != fw_be32_to_cpu(f->train) || off != t->received ||
	    len > t->msg.len - off ||
	    !(f->flags & VNET_FRAG_LAST) != (off + len < t->msg.len)) {
		if (t)
			vnet_fw_train_drop(nic, t);
		return vnet_fw_outcome(VNET_FW_WAITS, VNET_NACK_RESTART);
	}
	if (f->flags & VNET_FRAG_LAST)
		return vnet_fw_train_last(nic, p, t, f, bytes, sum);
	if (!vnet_fw_train_land(nic, t, off, bytes, sum)) {
		vnet_fw_train_drop(nic, t);
		return vnet_fw_outcome(VNET_FW_WAITS, VNET_NACK_RESTART);
	}
	return vnet_fw_outcome(VNET_FW_MOVED, VNET_RET_NONE);
}

/*
 * A FRAG packet from @p, @payload its bytes after the header; the caller
 * checked its length against what it says (vnet_fw_frag_packet_len()),
 * its checksum, and that it comes from the address routed for @p.  @sum:
 * the CRC32C of its payload alone, from the
 * checksum's pass over it, which the train's checksum takes in.
 */
void vnet_fw_rx_frag(struct vnet_fw_nic *nic, struct vnet_fw_peer *p,
		     const struct vnet_wire_hdr *h,
		     const struct vnet_fw_bytes *payload, u32 sum)
{
	const struct vnet_wire_frag *f = (const void *)(h + 1);
	struct vnet_desc m;

	if ((f->flags & VNET_FRAG_FIRST) &&
	    !vnet_fw_get_msg((const void *)(f + 1), p->nic_id, &m)) {
		nic->stats.bad_frames++;
		return;
	}
	nic->stats.rx_data++;
	nic->stats.rx_frags++;
	if (!vnet_fw_rx_in_order(nic, p, h))
		return;
	vnet_fw_rx_answer(nic, p, h,
			  vnet_fw_frag_take(nic, p, h, payload, sum));
}
