// SPDX-License-Identifier: GPL-2.0
/*
 * The NIC-to-NIC transport, sender side, after the Berkeley NOW firmware:
 * several independent logical channels per destination NIC, stop-and-wait
 * on each, sequence numbers and stamps, ACK/NACK, retransmission on a coarse
 * timer and return to sender after max_retries transmissions with no word
 * from the receiver.
 *
 * The send table is peers x channels.  Each peer counts its busy channels
 * and sits on the nic->active list while it has any, so a timer scan costs
 * work in proportion to the destinations with packets in flight.
 *
 * The flush rule lives here too: a channel counts as unresolved for its
 * sender while its latest transmission has neither an ACK nor a NACK.  The
 * host evicts an endpoint only once its count is zero.  An ACK or NACK is
 * matched on (peer, channel, sequence number), and a NACK counts only if it
 * echoes the stamp of the latest transmission, so a late or duplicate one
 * never changes a channel that has moved on.
 */
#include "fw_deliver.h"
#include "fw_queue.h"
#include "fw_transport.h"

static void vnet_fw_chan_count(struct vnet_fw_nic *nic,
			       struct vnet_fw_send_chan *ch, bool counted)
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

static void vnet_fw_chan_free(struct vnet_fw_nic *nic, struct vnet_fw_peer *p,
			      struct vnet_fw_send_chan *ch)
{
	vnet_fw_chan_count(nic, ch, false);
	if (ch->payload)
		nic->pool[nic->pool_free++] = ch->payload;
	ch->payload = NULL;
	ch->src = NULL;
	ch->state = VNET_CHAN_FREE;
	vnet_fw_peer_idle(nic, p);
}

static void vnet_fw_put_msg(struct vnet_wire_msg *w, const struct vnet_desc *m,
			    u32 src_ep, unsigned int q)
{
	unsigned int i;

	fw_memset(w, 0, sizeof(*w));
	w->src_ep = fw_cpu_to_be32(src_ep);
	w->dst_ep = fw_cpu_to_be32(m->peer.ep);
	w->tag = fw_cpu_to_be64(m->tag);
	w->queue = q;
	w->handler = m->handler;
	w->nargs = m->nargs;
	w->flags = m->flags & VNET_DESC_USER_FLAGS;
	w->len = fw_cpu_to_be32(m->len);
	w->offset = fw_cpu_to_be64(m->offset);
	for (i = 0; i < VNET_MAX_ARGS; i++)
		w->args[i] = fw_cpu_to_be32(m->args[i]);
}

static void vnet_fw_put_hdr(struct vnet_fw_nic *nic, struct vnet_wire_hdr *h,
			    u32 peer_nic, u8 type, u8 channel, u8 flags,
			    u32 seq, u32 stamp)
{
	h->version = VNET_WIRE_VERSION;
	h->type = type;
	h->channel = channel;
	h->flags = flags;
	h->src_nic = fw_cpu_to_be16(nic->nic_id);
	h->dst_nic = fw_cpu_to_be16(peer_nic);
	h->boot_id = fw_cpu_to_be32(nic->boot_id);
	h->seq = fw_cpu_to_be32(seq);
	h->stamp = fw_cpu_to_be32(stamp);
	h->csum = 0;
}

/* (Re)transmit the message held on channel @c to peer @p. */
static void vnet_fw_xmit_data(struct vnet_fw_nic *nic, struct vnet_fw_peer *p,
			      u32 c)
{
	struct vnet_fw_send_chan *ch = &p->tx[c];
	struct {
		struct vnet_wire_hdr hdr;
		struct vnet_wire_msg msg;
	} pkt;
	u32 crc;

	ch->stamp = ++nic->stamp;
	ch->due = nic->now + nic->quantum;
	ch->nacked = false;
	vnet_fw_chan_count(nic, ch, true);

	vnet_fw_put_hdr(nic, &pkt.hdr, p->nic_id, VNET_WIRE_DATA, c,
			ch->sync ? VNET_WIRE_SYNC : 0, ch->seq, ch->stamp);
	vnet_fw_put_msg(&pkt.msg, &ch->msg, ch->src_ep, ch->queue);
	crc = vnet_crc32c(0, &pkt, sizeof(pkt));
	crc = vnet_crc32c(crc, ch->payload, ch->payload ? ch->msg.len : 0);
	pkt.hdr.csum = fw_cpu_to_be32(crc);
	nic->ops->transmit(nic->ctx, p - nic->peers, &pkt, sizeof(pkt),
			   ch->payload, ch->payload ? ch->msg.len : 0);
}

void vnet_fw_xmit_ack(struct vnet_fw_nic *nic, struct vnet_fw_peer *p,
		      u8 type, u8 channel, u32 seq, u32 stamp, u8 status)
{
	struct {
		struct vnet_wire_hdr hdr;
		struct vnet_wire_ack ack;
	} pkt;

	vnet_fw_put_hdr(nic, &pkt.hdr, p->nic_id, type, channel, 0, seq, stamp);
	fw_memset(&pkt.ack, 0, sizeof(pkt.ack));
	pkt.ack.status = status;
	pkt.hdr.csum = fw_cpu_to_be32(vnet_crc32c(0, &pkt, sizeof(pkt)));
	nic->ops->transmit(nic->ctx, p - nic->peers, &pkt, sizeof(pkt), NULL, 0);
	if (type == VNET_WIRE_ACK)
		nic->stats.tx_ack++;
	else
		nic->stats.tx_nack[status]++;
}

/*
 * Put @msg from @src's send queue @q on a free channel to its NIC.  Returns
 * VNET_RET_NONE once sent, VNET_FW_HELD when every channel (or payload
 * buffer) is busy, or the reason to give it back.
 */
enum vnet_return_reason vnet_fw_send_remote(struct vnet_fw_nic *nic,
					    struct vnet_fw_ep *src,
					    const struct vnet_desc *msg,
					    unsigned int q, const u8 *payload)
{
	u32 slot = msg->peer.nic < 65536 ? nic->peer_of[msg->peer.nic] :
					   VNET_FW_NO_PEER;
	struct vnet_fw_send_chan *ch = NULL;
	struct vnet_fw_peer *p;
	u32 c;

	if (slot == VNET_FW_NO_PEER)
		return VNET_RET_UNREACHABLE;
	if (VNET_WIRE_DATA_LEN + msg->len > nic->mtu)
		return VNET_RET_TOO_LARGE;
	p = &nic->peers[slot];
	for (c = 0; c < nic->nchannels; c++) {
		if (p->tx[c].state == VNET_CHAN_FREE) {
			ch = &p->tx[c];
			break;
		}
	}
	if (!ch || (msg->len && !nic->pool_free))
		return VNET_FW_HELD;

	ch->msg = *msg;
	ch->payload = NULL;
	if (msg->len) {
		ch->payload = nic->pool[--nic->pool_free];
		fw_memcpy(ch->payload, payload, msg->len);
	}
	ch->src = src;
	ch->src_ep = src->name.ep;
	ch->queue = q;
	ch->seq++;
	ch->retries = 0;
	ch->counted = false;
	ch->state = VNET_CHAN_INFLIGHT;
	vnet_fw_peer_busy(nic, p);
	vnet_fw_xmit_data(nic, p, c);
	nic->stats.tx_data++;
	src->stats.sent++;
	return VNET_RET_NONE;
}

/*
 * Write a message the receiver (or the timer) handed back into its
 * sender's reply receive queue.  It waits on the channel while the sender
 * is off the card or its queue is full; it no longer waits on the wire, so
 * it does not hold up a flush.
 */
static void vnet_fw_try_return(struct vnet_fw_nic *nic, struct vnet_fw_peer *p,
			       struct vnet_fw_send_chan *ch)
{
	struct vnet_fw_ep *src = ch->src;
	struct vnet_frame *frame;

	if (!src) {
		vnet_fw_chan_free(nic, p, ch);
		return;
	}
	frame = fw_read_once(src->frame);
	if (!frame) {
		nic->ops->request_fault(nic->ctx, src);
		return;
	}
	if (vnet_fw_give_back(nic, src, frame, &ch->msg, ch->reason,
			      ch->payload) == VNET_FW_HOLD)
		return;
	nic->stats.returned[ch->reason]++;
	vnet_fw_chan_free(nic, p, ch);
}

static void vnet_fw_start_return(struct vnet_fw_nic *nic,
				 struct vnet_fw_peer *p,
				 struct vnet_fw_send_chan *ch, u8 reason)
{
	vnet_fw_chan_count(nic, ch, false);
	ch->state = VNET_CHAN_RETURNING;
	ch->reason = reason;
	vnet_fw_try_return(nic, p, ch);
}

void vnet_fw_rx_ack(struct vnet_fw_nic *nic, struct vnet_fw_peer *p, u32 c,
		    u32 seq, u8 status)
{
	struct vnet_fw_send_chan *ch = &p->tx[c];

	nic->stats.rx_ack++;
	if (ch->state != VNET_CHAN_INFLIGHT || ch->seq != seq) {
		nic->stats.stale_acks++;
		return;
	}
	ch->sync = false;
	if (status == VNET_RET_NONE || status >= VNET_RET_NR)
		vnet_fw_chan_free(nic, p, ch);
	else
		vnet_fw_start_return(nic, p, ch, status);
}

void vnet_fw_rx_nack(struct vnet_fw_nic *nic, struct vnet_fw_peer *p, u32 c,
		     u32 seq, u32 stamp, u8 reason)
{
	struct vnet_fw_send_chan *ch = &p->tx[c];

	if (reason < VNET_NACK_NR)
		nic->stats.rx_nack[reason]++;
	if (ch->state != VNET_CHAN_INFLIGHT || ch->seq != seq) {
		nic->stats.stale_acks++;
		return;
	}
	/* Any word from the receiver means it is alive: no "unreachable". */
	ch->retries = 0;
	if (stamp == ch->stamp) {
		ch->nacked = true;
		vnet_fw_chan_count(nic, ch, false);
		return;
	}
	/*
	 * The answer to an older transmission: the round trip is longer than
	 * a quantum, and retransmitting now would only make this one stale
	 * too, so no NACK would ever be the latest.  Give the latest
	 * transmission time to be answered.
	 */
	if (ch->due < nic->now + 2 * nic->quantum)
		ch->due = nic->now + 2 * nic->quantum;
}

static void vnet_fw_chan_tick(struct vnet_fw_nic *nic, struct vnet_fw_peer *p,
			      u32 c)
{
	struct vnet_fw_send_chan *ch = &p->tx[c];

	if (ch->state == VNET_CHAN_RETURNING) {
		vnet_fw_try_return(nic, p, ch);
		return;
	}
	if (ch->state != VNET_CHAN_INFLIGHT || nic->now < ch->due)
		return;
	if (ch->nacked) {
		/* Resolved for the flush: leave it until the move is done. */
		if (ch->src && fw_read_once(ch->src->moving))
			return;
	} else if (++ch->retries >= nic->max_retries) {
		/* The receiver may have it: its next packet restarts seq. */
		ch->sync = true;
		vnet_fw_start_return(nic, p, ch, VNET_RET_UNREACHABLE);
		return;
	}
	nic->stats.retransmits++;
	vnet_fw_xmit_data(nic, p, c);
}

/* Retransmissions and pending returns, once a quantum. */
void vnet_fw_timer(struct vnet_fw_nic *nic, u64 now)
{
	u32 i, c;

	nic->now = now;
	if (now - nic->last_scan < nic->quantum)
		return;
	nic->last_scan = now;
	/* Freeing a channel can drop its peer from the list: walk backwards. */
	for (i = nic->nactive; i-- > 0;) {
		struct vnet_fw_peer *p = &nic->peers[nic->active[i]];

		for (c = 0; c < nic->nchannels && p->unacked; c++)
			vnet_fw_chan_tick(nic, p, c);
	}
}

/*
 * The endpoint is closing: its messages may still be delivered, not
 * returned, and its close waits for none of them.
 */
void vnet_fw_ep_forget(struct vnet_fw_nic *nic, struct vnet_fw_ep *ep)
{
	u32 i, c;

	ep->closed = true;

	for (i = 0; i < nic->nactive; i++) {
		struct vnet_fw_peer *p = &nic->peers[nic->active[i]];

		for (c = 0; c < nic->nchannels; c++) {
			struct vnet_fw_send_chan *ch = &p->tx[c];

			if (ch->state == VNET_CHAN_FREE || ch->src != ep)
				continue;
			vnet_fw_chan_count(nic, ch, false);
			ch->src = NULL;
		}
	}
}

/* The link is gone for good: everything in flight is unreachable. */
static void vnet_fw_peer_fail(struct vnet_fw_nic *nic, struct vnet_fw_peer *p)
{
	u32 c;

	for (c = 0; c < nic->nchannels && p->unacked; c++) {
		struct vnet_fw_send_chan *ch = &p->tx[c];

		if (ch->state == VNET_CHAN_INFLIGHT) {
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
}

void vnet_fw_transport_init(struct vnet_fw_nic *nic)
{
	u32 i;

	for (i = 0; i < 65536; i++)
		nic->peer_of[i] = VNET_FW_NO_PEER;
	for (i = 0; i < nic->max_peers; i++) {
		u32 c;

		nic->peers[i].valid = false;
		for (c = 0; c < nic->nchannels; c++)
			nic->peers[i].tx[c].sync = true;
	}
}

/* Returns the peer slot, or -1 when the table is full. */
int vnet_fw_route_add(struct vnet_fw_nic *nic, u32 nic_id)
{
	u32 i, c;

	if (nic->peer_of[nic_id] != VNET_FW_NO_PEER)
		return nic->peer_of[nic_id];
	for (i = 0; i < nic->max_peers; i++) {
		struct vnet_fw_peer *p = &nic->peers[i];

		/* A slot still draining returns is not reused yet. */
		if (p->valid || p->unacked)
			continue;
		p->valid = true;
		p->nic_id = nic_id;
		fw_memset(p->rx, 0, nic->nchannels * sizeof(*p->rx));
		for (c = 0; c < nic->nchannels; c++)
			p->tx[c].sync = true;
		nic->peer_of[nic_id] = i;
		return i;
	}
	return -1;
}

bool vnet_fw_route_del(struct vnet_fw_nic *nic, u32 nic_id)
{
	u32 slot = nic->peer_of[nic_id];

	if (slot == VNET_FW_NO_PEER)
		return false;
	nic->peer_of[nic_id] = VNET_FW_NO_PEER;
	nic->peers[slot].valid = false;
	vnet_fw_peer_fail(nic, &nic->peers[slot]);
	return true;
}
