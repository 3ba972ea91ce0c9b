// SPDX-License-Identifier: GPL-2.0
/*
 * Moving one message: check the descriptor the user wrote, find where it
 * goes, and either write it into a destination on this NIC, hand it to the
 * transport for another NIC, hold it for a busy destination, or give it
 * back to its sender with a reason.
 */
#include "fw_deliver.h"
#include "fw_queue.h"

static bool vnet_fw_reserved_clear(const struct vnet_desc *d)
{
	unsigned int i;

	if (d->__reserved0)
		return false;
	for (i = 0; i < ARRAY_SIZE(d->__reserved1); i++)
		if (d->__reserved1[i])
			return false;
	return true;
}

/*
 * Checks shared by descriptors from user space and messages off the wire
 * (@wire).  A medium payload is a staging slot; so is an XFER's, unless it
 * is read in place, from the sender's segment or memory it pinned --
 * which the wire does not say: there, an XFER may be as long as one read
 * in place.
 */
enum vnet_return_reason vnet_fw_check_msg(u8 flags, u8 nargs, u32 len,
					  bool wire)
{
	u8 allowed = VNET_DESC_USER_FLAGS;
	u32 max = VNET_MEDIUM_MAX;

	if (wire)
		allowed &= ~VNET_FW_DESC_IN_PLACE;
	if (nargs > VNET_MAX_ARGS || (flags & ~allowed))
		return VNET_RET_BAD_DESC;
	if ((flags & VNET_DESC_XFER) && (flags & VNET_DESC_MEDIUM))
		return VNET_RET_BAD_DESC;
	if ((flags & VNET_FW_DESC_IN_PLACE) && !(flags & VNET_DESC_XFER))
		return VNET_RET_BAD_DESC;
	if ((flags & VNET_FW_DESC_IN_PLACE) == VNET_FW_DESC_IN_PLACE)
		return VNET_RET_BAD_DESC;
	if ((flags & VNET_FW_DESC_IN_PLACE) ||
	    (wire && (flags & VNET_DESC_XFER)))
		max = VNET_XFER_MAX;
	if (flags & (VNET_DESC_MEDIUM | VNET_DESC_XFER))
		return len > max ? VNET_RET_BAD_DESC : VNET_RET_NONE;
	return len ? VNET_RET_BAD_DESC : VNET_RET_NONE;
}

static enum vnet_return_reason vnet_fw_check_desc(const struct vnet_desc *d,
						  unsigned int q)
{
	if (!vnet_fw_reserved_clear(d))
		return VNET_RET_BAD_DESC;
	if (q == VNET_Q_REQ_SEND && d->slot >= VNET_MAX_SLOTS)
		return VNET_RET_BAD_DESC;
	if (d->src_offset && !(d->flags & VNET_FW_DESC_IN_PLACE))
		return VNET_RET_BAD_DESC;
	return vnet_fw_check_msg(d->flags, d->nargs, d->len, false);
}

/* Where a request goes: through the sender's translation table. */
static enum vnet_return_reason vnet_fw_route_request(struct vnet_fw_ep *src,
						     const struct vnet_desc *d,
						     struct vnet_fw_route *rt)
{
	const struct vnet_fw_translation *t = &src->xlate[d->slot];

	if (!t->valid)
		return VNET_RET_NO_SLOT;
	rt->dest = t->name;
	rt->tag = t->tag;
	rt->key = src->reply_key;
	rt->token = NULL;
	return VNET_RET_NONE;
}

/* Where a reply goes: back to the source of the request it quotes. */
static enum vnet_return_reason vnet_fw_route_reply(struct vnet_fw_ep *src,
						   const struct vnet_desc *d,
						   struct vnet_fw_route *rt)
{
	struct vnet_fw_token *t = &src->token[d->token % VNET_FW_TOKENS];

	if (!t->valid || t->serial != d->token)
		return VNET_RET_BAD_TOKEN;
	rt->dest = t->peer;
	rt->tag = t->tag;
	rt->key = t->key;
	rt->token = t;
	return VNET_RET_NONE;
}

static bool vnet_fw_tag_accepts(u64 ep_tag, u64 msg_tag)
{
	if (ep_tag == VNET_TAG_NONE)
		return false;
	return ep_tag == VNET_TAG_ANY || ep_tag == msg_tag;
}

/* Does [offset, offset + len) fit in @ep's segment?  Overflow-safe. */
bool vnet_fw_seg_fits(const struct vnet_fw_ep *ep, u64 offset, u32 len)
{
	return ep->seg && offset <= ep->seg_len && len <= ep->seg_len - offset;
}

/*
 * The pin of @ep that holds all of [@addr, @addr + @len) of its owner's
 * memory, or -1: none does, or the one that did went stale and waits for
 * the host to take it away.  Overflow-safe.
 */
int vnet_fw_pin_find(const struct vnet_fw_ep *ep, u64 addr, u32 len)
{
	unsigned int i;

	for (i = 0; i < VNET_NR_PINS; i++) {
		const struct vnet_fw_pin *pin = &ep->pins[i];

		if (!pin->base || fw_read_once(pin->stale))
			continue;
		if (addr >= pin->addr && addr - pin->addr <= pin->len &&
		    len <= pin->len - (addr - pin->addr))
			return i;
	}
	return -1;
}

/*
 * The @len bytes at @at of @ep's source @src -- its segment
 * (VNET_FW_SRC_SEG) or pin @src -- if they are still there as they were at
 * the source's generation @gen; else NULL: another segment or pin, even
 * one as large, holds other bytes, and a stale pin's range is mapped to
 * other pages now.
 */
const u8 *vnet_fw_src_bytes(const struct vnet_fw_ep *ep, int src, u32 gen,
			    u64 at, u32 len)
{
	const struct vnet_fw_pin *pin;

	if (src == VNET_FW_SRC_SEG) {
		if (ep->seg_gen != gen || !vnet_fw_seg_fits(ep, at, len))
			return NULL;
		return ep->seg + at;
	}
	if (src < 0 || src >= VNET_NR_PINS)
		return NULL;
	pin = &ep->pins[src];
	if (!pin->base || pin->gen != gen || fw_read_once(pin->stale) ||
	    at > pin->len || len > pin->len - at)
		return NULL;
	return pin->base + at;
}

/*
 * The destination endpoint of @msg on this NIC, checked the same way for a
 * message from a local sender and one off the wire: it exists, a request's
 * tag matches, a reply carries the reply key of the request it answers, a
 * bulk transfer fits its segment.
 */
enum vnet_return_reason vnet_fw_find_dest(struct vnet_fw_nic *nic, u32 ep,
					  unsigned int rq,
					  const struct vnet_desc *msg, u64 key,
					  struct vnet_fw_ep **dst)
{
	*dst = nic->ops->lookup(nic->ctx, ep);
	if (!*dst)
		return VNET_RET_NO_ENDPOINT;
	if (rq == VNET_Q_REQ_RECV && !vnet_fw_tag_accepts((*dst)->tag, msg->tag))
		return VNET_RET_BAD_TAG;
	if (rq == VNET_Q_REP_RECV && key != (*dst)->reply_key)
		return VNET_RET_BAD_TAG;
	if ((msg->flags & VNET_DESC_XFER) &&
	    !vnet_fw_seg_fits(*dst, msg->offset, msg->len))
		return VNET_RET_BAD_SEGMENT;
	return VNET_RET_NONE;
}

/*
 * Wake a reader if the entry just published is the only one in the queue.
 * The consumer index is read after the publish, with a full barrier in
 * between (the host's poll() has the other one): a reader that emptied the
 * queue and went to sleep either sees the new entry or is woken here.
 * Judging by the room seen before writing would miss a reader that caught
 * up in between.
 */
static void vnet_fw_recv_announce(struct vnet_fw_nic *nic,
				  struct vnet_fw_ep *ep, struct vnet_frame *frame,
				  unsigned int q)
{
	fw_smp_mb();
	if (ep->recv_prod[q - VNET_Q_REQ_RECV] -
	    fw_read_once(frame->cons[q].val) == 1)
		nic->ops->notify_recv(nic->ctx, ep);
}

/*
 * Write @msg into receive queue @rq of @dst: the payload into the entry's
 * staging slot (medium) or the segment (XFER, already bounds-checked, and
 * with a NULL @payload already there), a reply token for a request.
 * @msg's peer and tag are already filled in.  The entries set aside for
 * trains still arriving are not room.
 */
enum vnet_fw_accept vnet_fw_accept(struct vnet_fw_nic *nic,
				   struct vnet_fw_ep *dst, unsigned int rq,
				   const struct vnet_desc *msg, u64 key,
				   const struct vnet_fw_bytes *payload)
{
	/* After the state the host set for this load: served, for one. */
	struct vnet_frame *frame = fw_load_acquire(&dst->frame);
	struct vnet_desc *slot;
	int room;
	u32 ridx;

	if (!frame || fw_read_once(dst->moving)) {
		nic->ops->request_fault(nic->ctx, dst);
		return VNET_FW_AWAY;
	}
	room = vnet_fw_recv_room(dst, frame, rq);
	if (room <= (int)dst->recv_reserved[rq - VNET_Q_REQ_RECV])
		return VNET_FW_FULL;

	ridx = dst->recv_prod[rq - VNET_Q_REQ_RECV] & VNET_QUEUE_MASK;
	if ((msg->flags & VNET_DESC_MEDIUM) && payload)
		vnet_fw_bytes_copy(dst->staging + VNET_STAGING_SLOT(rq, ridx),
				   payload);
	else if ((msg->flags & VNET_DESC_XFER) && payload)
		/* From a segment: the sender's may be this very one. */
		vnet_fw_bytes_copy(dst->seg + msg->offset, payload);
	if (payload) {
		nic->copied += msg->len;
		nic->stats.copied_bytes += msg->len;
	}

	slot = vnet_fw_recv_slot(dst, frame, rq);
	fw_memcpy(slot, msg, sizeof(*msg));
	if (rq == VNET_Q_REP_RECV)
		slot->flags |= VNET_DESC_REPLY;
	if (rq == VNET_Q_REQ_RECV) {
		u32 serial = dst->token_serial++;
		struct vnet_fw_token *t = &dst->token[serial % VNET_FW_TOKENS];

		t->peer = msg->peer;
		t->tag = msg->tag;
		t->key = key;
		t->serial = serial;
		t->valid = true;
		slot->token = serial;
	}
	vnet_fw_recv_publish(dst, frame, rq);
	vnet_fw_recv_announce(nic, dst, frame, rq);

	dst->stats.received++;
	fw_write_once(dst->active_at, nic->now);
	vnet_fw_mark_served(nic, dst);
	return VNET_FW_ACCEPTED;
}

/*
 * A reply that spent token @serial came back for a fault of its own (too
 * big, outside the requester's segment, its source's pin dropped): it has
 * not answered its request,
 * so the replier may use the token again, for a corrected reply or a bare
 * credit.  Only the reply that spent a token gives it back -- the caller
 * knows it did -- never one that merely quotes it: a spent token quoted by
 * a malformed reply would otherwise come back to life, and with it a
 * second answer to the same request.
 */
void vnet_fw_token_revive(struct vnet_fw_ep *src, u32 serial,
			  enum vnet_return_reason reason)
{
	struct vnet_fw_token *t = &src->token[serial % VNET_FW_TOKENS];

	if (t->serial != serial)
		return;		/* its slot went to a newer request */
	if (reason == VNET_RET_BAD_SEGMENT || reason == VNET_RET_TOO_LARGE ||
	    reason == VNET_RET_SOURCE_GONE)
		t->valid = true;
}

/*
 * Hand @msg back to @src on its reply receive queue, marked returned with
 * @reason.  A sender whose own reply queue index is bogus loses the
 * message: there is nowhere sane to put it, and it only hurts itself.
 */
enum vnet_fw_verdict vnet_fw_give_back(struct vnet_fw_nic *nic,
				       struct vnet_fw_ep *src,
				       struct vnet_frame *frame,
				       const struct vnet_desc *msg,
				       enum vnet_return_reason reason,
				       const u8 *payload)
{
	const unsigned int rq = VNET_Q_REP_RECV;
	struct vnet_desc out;
	u32 ridx;

	if (!vnet_fw_recv_room(src, frame, rq)) {
		if (src->queue_errors & VNET_FW_BAD_INDEX(rq)) {
			src->stats.rejected++;
			return VNET_FW_DONE;
		}
		return VNET_FW_HOLD;
	}

	out = *msg;
	out.flags |= VNET_DESC_RETURNED;
	out.status = reason;
	/* Read in place: the payload is still there, whole. */
	if (out.flags & VNET_FW_DESC_IN_PLACE)
		payload = NULL;
	else if (!(out.flags & (VNET_DESC_MEDIUM | VNET_DESC_XFER)) ||
		 out.len > VNET_MEDIUM_MAX || !payload)
		out.len = 0;

	ridx = src->recv_prod[rq - VNET_Q_REQ_RECV] & VNET_QUEUE_MASK;
	if (payload && out.len) {
		fw_memcpy(src->staging + VNET_STAGING_SLOT(rq, ridx), payload,
			  out.len);
		fw_user_fetched((void *)payload, out.len);
	}
	fw_memcpy(vnet_fw_recv_slot(src, frame, rq), &out, sizeof(out));
	vnet_fw_recv_publish(src, frame, rq);
	vnet_fw_recv_announce(nic, src, frame, rq);

	src->stats.returned++;
	if (reason == VNET_RET_BAD_DESC)
		src->stats.rejected++;
	vnet_fw_report(nic, &(struct vnet_fw_event){
		.type = VNET_FW_EV_RETURNED,
		.reason = reason,
		.src = src->name,
		.dst = out.peer,
	});
	return VNET_FW_DONE;
}

/* The message as its receiver (or, returned, its sender) will see it. */
static void vnet_fw_fill_desc(struct vnet_desc *out, const struct vnet_desc *d,
			      unsigned int q)
{
	unsigned int nargs = d->nargs < VNET_MAX_ARGS ? d->nargs : VNET_MAX_ARGS;

	fw_memset(out, 0, sizeof(*out));
	out->handler = d->handler;
	out->nargs = nargs;
	out->flags = d->flags & VNET_DESC_USER_FLAGS;
	out->len = d->len;
	out->offset = d->offset;
	out->src_offset = d->src_offset;
	if (q == VNET_Q_REQ_SEND) {
		out->slot = d->slot;
	} else {
		out->token = d->token;
		out->flags |= VNET_DESC_REPLY;
	}
	fw_memcpy(out->args, d->args, nargs * sizeof(out->args[0]));
}

static struct vnet_fw_outcome
vnet_fw_deliver_local(struct vnet_fw_nic *nic, struct vnet_fw_ep *src,
		      unsigned int q, const struct vnet_desc *msg, u64 key,
		      const u8 *payload)
{
	unsigned int rq = q == VNET_Q_REQ_SEND ? VNET_Q_REQ_RECV :
						 VNET_Q_REP_RECV;
	struct vnet_fw_ep *dst;
	struct vnet_desc in = *msg;
	enum vnet_return_reason reason;
	struct vnet_fw_bytes bytes;

	reason = vnet_fw_find_dest(nic, msg->peer.ep, rq, msg, key, &dst);
	if (reason)
		return vnet_fw_outcome(VNET_FW_REFUSED, reason);
	/* Even when it waits: then the two most need a frame each. */
	fw_write_once(src->partner, msg->peer.ep + 1);
	fw_write_once(dst->partner, src->name.ep + 1);

	/* The receiver sees where the message came from, not where it went. */
	in.peer = src->name;
	in.slot = 0;
	in.token = 0;
	in.flags &= ~VNET_FW_DESC_IN_PLACE;
	in.src_offset = 0;
	if (payload)
		vnet_fw_bytes_flat(&bytes, payload, msg->len);
	if (vnet_fw_accept(nic, dst, rq, &in, key,
			   payload ? &bytes : NULL) != VNET_FW_ACCEPTED)
		return vnet_fw_outcome(VNET_FW_WAITS, 0);
	/* From the sender's staging or segment: read once. */
	if (payload)
		fw_user_fetched((void *)payload, msg->len);
	src->stats.sent++;
	vnet_fw_mark_served(nic, src);
	return vnet_fw_outcome(VNET_FW_MOVED, 0);
}

/*
 * Where the payload of @d comes from: its staging slot, or, read in place,
 * its sender's segment or one of its pins, which must hold all of it: in
 * *@in, the source (VNET_FW_SRC_SEG or the pin), its generation and the
 * payload's offset in it.  NULL when none does.
 */
static const u8 *vnet_fw_payload(const struct vnet_fw_ep *src,
				 const struct vnet_desc *d, unsigned int q,
				 u32 sidx, struct vnet_fw_src *in)
{
	int pin;

	if (d->flags & VNET_DESC_FROM_PIN) {
		/* Found holding all of it, and not stale. */
		pin = vnet_fw_pin_find(src, d->src_offset, d->len);
		if (pin < 0)
			return NULL;
		in->pin = pin;
		in->gen = src->pins[pin].gen;
		in->at = d->src_offset - src->pins[pin].addr;
		return src->pins[pin].base + in->at;
	}
	if (!(d->flags & VNET_DESC_FROM_SEG))
		return src->staging + VNET_STAGING_SLOT(q, sidx);
	in->pin = VNET_FW_SRC_SEG;
	in->gen = src->seg_gen;
	in->at = d->src_offset;
	if (!vnet_fw_seg_fits(src, d->src_offset, d->len))
		return NULL;
	return src->seg + d->src_offset;
}

/*
 * Try to move the next message posted on send queue @q of a resident
 * endpoint, the first not taken yet.  The caller has checked that there is
 * one.
 */
enum vnet_fw_verdict vnet_fw_send_head(struct vnet_fw_nic *nic,
				       struct vnet_fw_ep *src,
				       struct vnet_frame *frame,
				       unsigned int q)
{
	u32 sidx = src->send_taken[q] & VNET_QUEUE_MASK;
	struct vnet_fw_outcome out = { VNET_FW_REFUSED, VNET_RET_NONE };
	const u8 *payload = NULL;
	enum vnet_fw_verdict verdict = VNET_FW_DONE;
	struct vnet_fw_route rt = {};
	struct vnet_fw_src in;
	struct vnet_desc d, msg;

	/* One snapshot: the user may rewrite the entry while we look. */
	fw_memcpy(&d, &frame->queue[q][sidx], sizeof(d));
	fw_user_fetched(&frame->queue[q][sidx], sizeof(d));
	vnet_fw_fill_desc(&msg, &d, q);

	/* A sender waiting on its destination is busy, not idle. */
	fw_write_once(src->active_at, nic->now);

	out.reason = vnet_fw_check_desc(&d, q);
	if (!out.reason) {
		payload = vnet_fw_payload(src, &d, q, sidx, &in);
		if (!payload)
			out.reason = vnet_fw_src_lost(d.flags &
						      VNET_DESC_FROM_PIN);
	}
	if (!out.reason)
		out.reason = q == VNET_Q_REQ_SEND ?
			     vnet_fw_route_request(src, &d, &rt) :
			     vnet_fw_route_reply(src, &d, &rt);
	if (!out.reason) {
		msg.peer = rt.dest;
		msg.tag = rt.tag;
		if (rt.dest.nic == nic->nic_id)
			out = vnet_fw_deliver_local(nic, src, q, &msg, rt.key,
						    payload);
		else
			out = vnet_fw_send_remote(nic, src, &msg, rt.key, q,
						  payload, &in);
		if (out.fate == VNET_FW_WAITS)
			return VNET_FW_HOLD;
	}

	if (out.fate == VNET_FW_REFUSED)
		verdict = vnet_fw_give_back(nic, src, frame, &msg, out.reason,
					    payload);
	if (verdict == VNET_FW_HOLD)
		return verdict;	/* nowhere to return it yet: try again */
	if (rt.token) {
		rt.token->valid = false;
		if (out.fate == VNET_FW_REFUSED)
			vnet_fw_token_revive(src, rt.token->serial, out.reason);
	}
	/* Its train reads the segment still: the entry goes when it ends. */
	vnet_fw_send_take(src, frame, q, out.fate == VNET_FW_STARTED);
	return verdict;
}
