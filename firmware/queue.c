// SPDX-License-Identifier: GPL-2.0
/*
 * The four queues of an endpoint frame.  The user writes the producer index
 * of the send queues and the consumer index of the receive queues; the
 * firmware keeps its own copy of the other index of each queue and only ever
 * writes it out.  A user-written index that implies more than a queue's worth
 * of entries marks the queue broken until the user writes a sane value.
 */
#include "fw_queue.h"

static void vnet_fw_queue_error(struct vnet_fw_ep *ep, unsigned int q,
				bool broken)
{
	u32 bit = VNET_FW_BAD_INDEX(q);

	if (!broken) {
		ep->queue_errors &= ~bit;
		return;
	}
	if (!(ep->queue_errors & bit))
		ep->stats.rejected++;
	ep->queue_errors |= bit;
}

/*
 * Entries posted on send queue @q and not taken yet, or -1 when the
 * producer index is bogus: more than a queue's worth past the consumer
 * index, or short of what the firmware has taken already.
 */
int vnet_fw_send_pending(struct vnet_fw_ep *ep, struct vnet_frame *frame,
			 unsigned int q)
{
	u32 prod = fw_load_acquire(&frame->prod[q].val);
	u32 posted = prod - ep->send_cons[q];
	u32 taken = ep->send_taken[q] - ep->send_cons[q];
	bool bogus = posted > VNET_QUEUE_DEPTH || posted < taken;

	vnet_fw_queue_error(ep, q, bogus);
	return bogus ? -1 : (int)(posted - taken);
}

/* Free entries on receive queue @q; a bogus consumer index reads as full. */
int vnet_fw_recv_room(struct vnet_fw_ep *ep, struct vnet_frame *frame,
		      unsigned int q)
{
	u32 cons = fw_load_acquire(&frame->cons[q].val);
	u32 used = ep->recv_prod[q - VNET_Q_REQ_RECV] - cons;

	vnet_fw_queue_error(ep, q, used > VNET_QUEUE_DEPTH);
	if (used > VNET_QUEUE_DEPTH)
		return 0;
	return VNET_QUEUE_DEPTH - used;
}

/*
 * Move the consumer index of send queue @q past the entries taken, up to
 * the first one a train still holds.  Returns how many it passed.
 */
u32 vnet_fw_send_retire(struct vnet_fw_ep *ep, struct vnet_frame *frame,
			unsigned int q)
{
	u32 cons = ep->send_cons[q], n = 0;

	while (cons != ep->send_taken[q] &&
	       !(ep->train_held[q] >> (cons & VNET_QUEUE_MASK) & 1)) {
		cons++;
		n++;
	}
	if (n) {
		ep->send_cons[q] = cons;
		fw_store_release(&frame->cons[q].val, cons);
	}
	return n;
}

/*
 * The entry at the head of what is posted on send queue @q is taken;
 * @held: by a train that reads its message in place, until the train ends.
 */
void vnet_fw_send_take(struct vnet_fw_ep *ep, struct vnet_frame *frame,
		       unsigned int q, bool held)
{
	if (held)
		ep->train_held[q] |= 1u << (ep->send_taken[q] &
					    VNET_QUEUE_MASK);
	ep->send_taken[q]++;
	vnet_fw_send_retire(ep, frame, q);
}

struct vnet_desc *vnet_fw_recv_slot(struct vnet_fw_ep *ep,
				    struct vnet_frame *frame, unsigned int q)
{
	u32 idx = ep->recv_prod[q - VNET_Q_REQ_RECV] & VNET_QUEUE_MASK;

	return &frame->queue[q][idx];
}

void vnet_fw_recv_publish(struct vnet_fw_ep *ep, struct vnet_frame *frame,
			  unsigned int q)
{
	u32 *prod = &ep->recv_prod[q - VNET_Q_REQ_RECV];

	(*prod)++;
	fw_store_release(&frame->prod[q].val, *prod);
}

/*
 * Messages posted but not yet taken by the firmware, or entries whose
 * trains have ended and that only a round with the endpoint on the card
 * lets go?  The host asks this of an endpoint it is about to evict or has
 * just evicted; no side effects.
 */
bool vnet_fw_sends_pending(const struct vnet_fw_ep *ep,
			   const struct vnet_frame *frame)
{
	unsigned int q;

	for (q = VNET_Q_REQ_SEND; q <= VNET_Q_REP_SEND; q++) {
		u32 posted = fw_read_once(frame->prod[q].val) - ep->send_cons[q];
		u32 taken = ep->send_taken[q] - ep->send_cons[q];

		if (ep->train_done[q] ||
		    (posted > taken && posted <= VNET_QUEUE_DEPTH))
			return true;
	}
	return false;
}

/* Anything for the user to read?  Used by the host's poll(). */
bool vnet_fw_recv_pending(const struct vnet_frame *frame)
{
	unsigned int q;

	for (q = VNET_Q_REQ_RECV; q <= VNET_Q_REP_RECV; q++)
		if (fw_read_once(frame->prod[q].val) !=
		    fw_read_once(frame->cons[q].val))
			return true;
	return false;
}

void vnet_fw_ep_init(struct vnet_fw_ep *ep, struct vnet_name name,
		     u8 *staging, u64 reply_key)
{
	fw_memset(ep, 0, sizeof(*ep));
	ep->name = name;
	ep->staging = staging;
	ep->reply_key = reply_key;
	ep->tag = VNET_TAG_NONE;
}

/* Lay out a fresh frame image for a new endpoint. */
void vnet_fw_frame_init(const struct vnet_fw_ep *ep, struct vnet_frame *frame)
{
	fw_memset(frame, 0, sizeof(*frame));
	vnet_fw_frame_restore(ep, frame);
}

/*
 * Rewrite what the firmware owns after an image comes back onto the card:
 * the user could not touch the image while it was paged out, but the
 * firmware never relies on that.
 */
void vnet_fw_frame_restore(const struct vnet_fw_ep *ep,
			   struct vnet_frame *frame)
{
	frame->hdr.magic = VNET_FRAME_MAGIC;
	frame->hdr.abi_version = VNET_ABI_VERSION;
	frame->hdr.flags = 0;
	frame->hdr.name = ep->name;
	frame->cons[VNET_Q_REQ_SEND].val = ep->send_cons[VNET_Q_REQ_SEND];
	frame->cons[VNET_Q_REP_SEND].val = ep->send_cons[VNET_Q_REP_SEND];
	frame->prod[VNET_Q_REQ_RECV].val = ep->recv_prod[0];
	frame->prod[VNET_Q_REP_RECV].val = ep->recv_prod[1];
}
