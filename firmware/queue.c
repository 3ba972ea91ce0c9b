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

/* Entries posted on send queue @q, or -1 when the producer index is bogus. */
int vnet_fw_send_pending(struct vnet_fw_ep *ep, struct vnet_frame *frame,
			 unsigned int q)
{
	u32 prod = fw_load_acquire(&frame->prod[q].val);
	u32 posted = prod - ep->send_cons[q];

	vnet_fw_queue_error(ep, q, posted > VNET_QUEUE_DEPTH);
	return posted > VNET_QUEUE_DEPTH ? -1 : (int)posted;
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

void vnet_fw_send_consume(struct vnet_fw_ep *ep, struct vnet_frame *frame,
			  unsigned int q)
{
	ep->send_cons[q]++;
	fw_store_release(&frame->cons[q].val, ep->send_cons[q]);
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
 * Messages posted but not yet taken by the firmware?  The host asks this of
 * an endpoint it is about to evict or has just evicted; no side effects.
 * A head still going out as a train is taken, until its train ends:
 * delivered, or its return written.
 */
bool vnet_fw_sends_pending(const struct vnet_fw_ep *ep,
			   const struct vnet_frame *frame)
{
	unsigned int q;

	for (q = VNET_Q_REQ_SEND; q <= VNET_Q_REP_SEND; q++) {
		u32 posted = fw_read_once(frame->prod[q].val) - ep->send_cons[q];
		u32 going = (ep->train_head & ~ep->train_done) >> q & 1;

		if (posted > going && posted <= VNET_QUEUE_DEPTH)
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
