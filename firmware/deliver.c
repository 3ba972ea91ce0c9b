// SPDX-License-Identifier: GPL-2.0
/*
 * Moving one message: check the descriptor the user wrote, find where it
 * goes, and either write it into the destination's receive queue, hold it
 * for a busy destination, or hand it back to its sender with a reason.
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

static enum vnet_return_reason vnet_fw_check_desc(const struct vnet_desc *d,
						  unsigned int q)
{
	if (d->nargs > VNET_MAX_ARGS || !vnet_fw_reserved_clear(d))
		return VNET_RET_BAD_DESC;
	if (d->flags & ~VNET_DESC_USER_FLAGS)
		return VNET_RET_BAD_DESC;
	if ((d->flags & VNET_DESC_XFER) && (d->flags & VNET_DESC_MEDIUM))
		return VNET_RET_BAD_DESC;
	if (d->flags & (VNET_DESC_MEDIUM | VNET_DESC_XFER)) {
		if (d->len > VNET_MEDIUM_MAX)
			return VNET_RET_BAD_DESC;
	} else if (d->len) {
		return VNET_RET_BAD_DESC;
	}
	if (q == VNET_Q_REQ_SEND && d->slot >= VNET_MAX_SLOTS)
		return VNET_RET_BAD_DESC;
	return VNET_RET_NONE;
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
	rt->token = t;
	return VNET_RET_NONE;
}

static bool vnet_fw_tag_accepts(u64 ep_tag, u64 msg_tag)
{
	if (ep_tag == VNET_TAG_NONE)
		return false;
	return ep_tag == VNET_TAG_ANY || ep_tag == msg_tag;
}

static void vnet_fw_copy_payload(struct vnet_fw_ep *dst, unsigned int dq,
				 u32 didx, const struct vnet_fw_ep *src,
				 unsigned int sq, u32 sidx, u32 len)
{
	if (!len)
		return;
	fw_memcpy(dst->staging + VNET_STAGING_SLOT(dq, didx),
		  src->staging + VNET_STAGING_SLOT(sq, sidx), len);
}

/* Does [offset, offset + len) fit in @dst's segment?  Overflow-safe. */
static bool vnet_fw_seg_fits(const struct vnet_fw_ep *dst, u64 offset, u32 len)
{
	return dst->seg && offset <= dst->seg_len && len <= dst->seg_len - offset;
}

static void vnet_fw_fill_desc(struct vnet_desc *out, const struct vnet_desc *d)
{
	unsigned int nargs = d->nargs < VNET_MAX_ARGS ? d->nargs : VNET_MAX_ARGS;

	fw_memset(out, 0, sizeof(*out));
	out->handler = d->handler;
	out->nargs = nargs;
	out->flags = d->flags & VNET_DESC_USER_FLAGS;
	out->len = d->len;
	out->offset = d->offset;
	fw_memcpy(out->args, d->args, nargs * sizeof(out->args[0]));
}

/*
 * Hand the head of send queue @q back to its sender on the reply receive
 * queue.  A sender whose own reply queue index is bogus loses the message:
 * there is nowhere sane to put it, and it only hurts itself.
 */
static enum vnet_fw_verdict
vnet_fw_return(struct vnet_fw_ep *src, struct vnet_frame *frame,
	       unsigned int q, const struct vnet_desc *d,
	       enum vnet_return_reason reason, const struct vnet_fw_route *rt)
{
	const unsigned int rq = VNET_Q_REP_RECV;
	u32 sidx = src->send_cons[q] & VNET_QUEUE_MASK;
	struct vnet_desc out;
	u32 ridx;

	if (!vnet_fw_recv_room(src, frame, rq)) {
		if (src->queue_errors & VNET_FW_BAD_INDEX(rq)) {
			src->stats.rejected++;
			return VNET_FW_DONE;
		}
		return VNET_FW_HOLD;
	}

	vnet_fw_fill_desc(&out, d);
	out.flags |= VNET_DESC_RETURNED;
	out.status = reason;
	out.slot = d->slot;
	out.token = d->token;
	if (rt) {
		out.peer = rt->dest;
		out.tag = rt->tag;
	}
	if (!(out.flags & (VNET_DESC_MEDIUM | VNET_DESC_XFER)) ||
	    out.len > VNET_MEDIUM_MAX)
		out.len = 0;

	ridx = src->recv_prod[rq - VNET_Q_REQ_RECV] & VNET_QUEUE_MASK;
	vnet_fw_copy_payload(src, rq, ridx, src, q, sidx, out.len);
	fw_memcpy(vnet_fw_recv_slot(src, frame, rq), &out, sizeof(out));
	vnet_fw_recv_publish(src, frame, rq);

	src->stats.returned++;
	if (reason == VNET_RET_BAD_DESC)
		src->stats.rejected++;
	return VNET_FW_DONE;
}

/* Write a checked message into a resident destination, or hold it. */
static enum vnet_fw_verdict
vnet_fw_deliver_local(struct vnet_fw_nic *nic, struct vnet_fw_ep *src,
		      unsigned int q, const struct vnet_desc *d,
		      struct vnet_fw_ep *dst, const struct vnet_fw_route *rt)
{
	unsigned int rq = q == VNET_Q_REQ_SEND ? VNET_Q_REQ_RECV :
						 VNET_Q_REP_RECV;
	u32 sidx = src->send_cons[q] & VNET_QUEUE_MASK;
	struct vnet_frame *dframe = fw_read_once(dst->frame);
	struct vnet_desc out;
	int room;
	u32 ridx;

	/* A sender waiting on its destination is busy, not idle. */
	src->referenced = true;
	if (!dframe) {
		nic->ops->request_fault(nic->ctx, dst);
		return VNET_FW_HOLD;
	}
	room = vnet_fw_recv_room(dst, dframe, rq);
	if (!room)
		return VNET_FW_HOLD;

	vnet_fw_fill_desc(&out, d);
	out.peer = src->name;
	out.tag = rt->tag;
	if (q == VNET_Q_REQ_SEND) {
		struct vnet_fw_token *t;

		out.token = dst->token_serial++;
		t = &dst->token[out.token % VNET_FW_TOKENS];
		t->peer = src->name;
		t->tag = rt->tag;
		t->serial = out.token;
		t->valid = true;
	} else {
		rt->token->valid = false;
	}

	ridx = dst->recv_prod[rq - VNET_Q_REQ_RECV] & VNET_QUEUE_MASK;
	if (out.flags & VNET_DESC_MEDIUM)
		vnet_fw_copy_payload(dst, rq, ridx, src, q, sidx, out.len);
	else if (out.flags & VNET_DESC_XFER)
		fw_memcpy(dst->seg + out.offset,
			  src->staging + VNET_STAGING_SLOT(q, sidx), out.len);
	fw_memcpy(vnet_fw_recv_slot(dst, dframe, rq), &out, sizeof(out));
	vnet_fw_recv_publish(dst, dframe, rq);

	src->stats.sent++;
	dst->stats.received++;
	dst->referenced = true;
	if (room == VNET_QUEUE_DEPTH)
		nic->ops->notify_recv(nic->ctx, dst);
	return VNET_FW_DONE;
}

/*
 * Try to move the message at the head of send queue @q of a resident
 * endpoint.  The caller has checked that the queue holds one.
 */
enum vnet_fw_verdict vnet_fw_send_head(struct vnet_fw_nic *nic,
				       struct vnet_fw_ep *src,
				       struct vnet_frame *frame,
				       unsigned int q)
{
	u32 sidx = src->send_cons[q] & VNET_QUEUE_MASK;
	enum vnet_return_reason reason;
	enum vnet_fw_verdict verdict;
	struct vnet_fw_route rt;
	struct vnet_fw_ep *dst;
	struct vnet_desc d;

	/* One snapshot: the user may rewrite the entry while we look. */
	fw_memcpy(&d, &frame->queue[q][sidx], sizeof(d));

	reason = vnet_fw_check_desc(&d, q);
	if (reason)
		goto give_back_unrouted;
	reason = q == VNET_Q_REQ_SEND ? vnet_fw_route_request(src, &d, &rt) :
					vnet_fw_route_reply(src, &d, &rt);
	if (reason)
		goto give_back_unrouted;

	if (rt.dest.nic != nic->nic_id) {
		reason = VNET_RET_UNREACHABLE;
		goto give_back;
	}
	dst = nic->ops->lookup(nic->ctx, rt.dest.ep);
	if (!dst) {
		reason = VNET_RET_NO_ENDPOINT;
		goto give_back;
	}
	if (q == VNET_Q_REQ_SEND && !vnet_fw_tag_accepts(dst->tag, rt.tag)) {
		reason = VNET_RET_BAD_TAG;
		goto give_back;
	}
	if ((d.flags & VNET_DESC_XFER) &&
	    !vnet_fw_seg_fits(dst, d.offset, d.len)) {
		reason = VNET_RET_BAD_SEGMENT;
		goto give_back;
	}
	verdict = vnet_fw_deliver_local(nic, src, q, &d, dst, &rt);
	if (verdict == VNET_FW_DONE)
		vnet_fw_send_consume(src, frame, q);
	return verdict;

give_back:
	verdict = vnet_fw_return(src, frame, q, &d, reason, &rt);
	if (verdict == VNET_FW_DONE && rt.token)
		rt.token->valid = false;
	goto consume;
give_back_unrouted:
	verdict = vnet_fw_return(src, frame, q, &d, reason, NULL);
consume:
	if (verdict == VNET_FW_DONE)
		vnet_fw_send_consume(src, frame, q);
	return verdict;
}
