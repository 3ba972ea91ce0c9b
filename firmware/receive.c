// SPDX-License-Identifier: GPL-2.0
/*
 * The transport's receive path: check a packet off the wire, then deliver a
 * DATA packet into its destination endpoint and answer it, or pass an ACK,
 * NACK or RESUME to the send side.
 *
 * A packet counts only if it comes from the Ethernet address routed for
 * the NIC it claims to be from.
 *
 * Per (peer, channel) the receiver expects one sequence number.  That one
 * is new: it is delivered and ACKed, or NACKed if the endpoint cannot take
 * it now (the sender retransmits), or handed back with an ACK carrying the
 * reason.  An older one is a retransmission whose ACK was lost, or one of a
 * train's window sent again: it is not delivered twice, and the one before
 * the expected one is ACKed again, with its status and this packet's
 * stamp -- how far the channel got, which a train's sender takes for an
 * ACK of everything up to there (train_tx.c), and any other sender for a
 * stale answer.  A later one is dropped: the sender sends it again.  A
 * channel restarts at a packet's sequence number
 * only when the packet says so (SYNC): from a new incarnation of the
 * sender's route to us (its boot, or a route it added again, each with
 * random initial sequence numbers), or ahead of what we expect.  A packet
 * that does not say so is never taken as a new start.  This side loses a
 * channel's state when it reboots, and it must not lose it otherwise while
 * the sender may still retransmit what it delivered: route.c keeps a
 * deleted route's slot, with its receive state, until then.
 *
 * A message larger than a packet comes as a train of FRAG packets on one
 * channel, each with a sequence number of its own, taken in order by the
 * same rules; what becomes of each is train_rx.c's.  A whole message
 * arriving on a channel whose train is not complete ends that train: its
 * sender has given it up.
 *
 * A sender NACKed because the endpoint was not on the card hears when it
 * is back, and need not wait for its timer: RESUME, see resume.c.
 *
 * MAPPER datagrams need no route, so they are checked apart: mapper.c.
 */
#include "fw_deliver.h"
#include "fw_queue.h"
#include "fw_transport.h"

/* The checksum of the first @len bytes of @pkt, its own field as zero. */
static u32 vnet_fw_head_sum(const u8 *pkt, u32 len)
{
	const struct vnet_wire_hdr *h = (const void *)pkt;
	const u32 at = (const u8 *)&h->csum - pkt;
	static const u8 zero[4];
	u32 crc;

	crc = vnet_crc32c(0, pkt, at);
	crc = vnet_crc32c(crc, zero, sizeof(zero));
	return vnet_crc32c(crc, pkt + at + 4, len - at - 4);
}

bool vnet_fw_csum_ok(const u8 *pkt, u32 len)
{
	const struct vnet_wire_hdr *h = (const void *)pkt;

	return vnet_fw_head_sum(pkt, len) == fw_be32_to_cpu(h->csum);
}

/*
 * A DATA or FRAG packet: its header, the first @hlen bytes, summed from
 * @head, its @payload from the pieces it lies in.  A FRAG's payload is
 * summed apart, into *@sum: its train's checksum takes that sum
 * (train_rx.c) rather than reading the bytes again.
 */
static bool vnet_fw_split_csum_ok(const u8 *head, u32 hlen,
				  const struct vnet_fw_bytes *payload, u32 *sum)
{
	const struct vnet_wire_hdr *h = (const void *)head;
	u32 crc = vnet_fw_head_sum(head, hlen);

	if (h->type == VNET_WIRE_DATA) {
		crc = vnet_fw_bytes_crc(crc, payload);
	} else {
		*sum = vnet_fw_bytes_crc(0, payload);
		crc = vnet_crc32c_cat(crc, *sum, payload->len);
	}
	return crc == fw_be32_to_cpu(h->csum);
}

/* The message as the destination endpoint will see it. */
bool vnet_fw_get_msg(const struct vnet_wire_msg *w, u32 src_nic,
		     struct vnet_desc *m)
{
	unsigned int i;

	fw_memset(m, 0, sizeof(*m));
	m->handler = w->handler;
	m->nargs = w->nargs;
	m->flags = w->flags;
	m->len = fw_be32_to_cpu(w->len);
	m->offset = fw_be64_to_cpu(w->offset);
	m->peer.nic = src_nic;
	m->peer.ep = fw_be32_to_cpu(w->src_ep);
	m->tag = fw_be64_to_cpu(w->tag);
	for (i = 0; i < VNET_MAX_ARGS; i++)
		m->args[i] = fw_be32_to_cpu(w->args[i]);
	if (w->queue != VNET_Q_REQ_SEND && w->queue != VNET_Q_REP_SEND)
		return false;
	return vnet_fw_check_msg(m->flags, m->nargs, m->len, true) ==
	       VNET_RET_NONE;
}

/* Deliver a new DATA packet: delivered, refused with a reason, or NACKed. */
static struct vnet_fw_outcome vnet_fw_rx_deliver(struct vnet_fw_nic *nic,
						 const struct vnet_fw_peer *p,
						 const struct vnet_wire_msg *w,
						 const struct vnet_desc *m,
						 const struct vnet_fw_bytes *payload)
{
	unsigned int rq = w->queue == VNET_Q_REQ_SEND ? VNET_Q_REQ_RECV :
							VNET_Q_REP_RECV;
	u64 key = (u64)fw_be32_to_cpu(w->key_hi) << 32 |
		  fw_be32_to_cpu(w->key_lo);
	enum vnet_return_reason reason;
	struct vnet_fw_ep *dst;

	reason = vnet_fw_find_dest(nic, fw_be32_to_cpu(w->dst_ep), rq, m, key,
				   &dst);
	if (reason)
		return vnet_fw_outcome(VNET_FW_REFUSED, reason);

	switch (vnet_fw_accept(nic, dst, rq, m, key, payload)) {
	case VNET_FW_ACCEPTED:
		return vnet_fw_outcome(VNET_FW_MOVED, VNET_RET_NONE);
	case VNET_FW_FULL:
		return vnet_fw_outcome(VNET_FW_WAITS, VNET_NACK_QUEUE_FULL);
	default:
		/* @p hears from us again once @dst is back on the card. */
		vnet_fw_resume_wanted(nic, dst, p);
		return vnet_fw_outcome(VNET_FW_WAITS, VNET_NACK_NOT_RESIDENT);
	}
}

/*
 * Is the DATA or FRAG packet @h the next one its channel expects?  If not,
 * it is answered, or dropped, here.  A SYNC that starts the channel again
 * drops the train it had open.
 */
bool vnet_fw_rx_in_order(struct vnet_fw_nic *nic, struct vnet_fw_peer *p,
			 const struct vnet_wire_hdr *h)
{
	u32 seq = fw_be32_to_cpu(h->seq), stamp = fw_be32_to_cpu(h->stamp);
	u32 incarnation = fw_be32_to_cpu(h->incarnation);
	struct vnet_fw_recv_chan *rc = &p->rx[h->channel];

	if ((h->flags & VNET_WIRE_SYNC) &&
	    (!rc->valid || rc->incarnation != incarnation ||
	     (s32)(seq - rc->expected) > 0)) {
		if (rc->train)
			vnet_fw_train_drop(nic, &nic->trains[rc->train - 1]);
		rc->valid = true;
		rc->incarnation = incarnation;
		rc->expected = seq;
	}
	if (!rc->valid) {
		/*
		 * We lost this channel (we rebooted, or the slot went to
		 * another NIC): only a SYNC may start it again.
		 */
		vnet_fw_xmit_ack(nic, p, VNET_WIRE_NACK, h->channel, seq, stamp,
				 VNET_NACK_RESYNC);
		return false;
	}
	if (rc->incarnation != incarnation) {
		/* Of an older incarnation of the sender's route: stale. */
		nic->stats.duplicates++;
		return false;
	}
	if ((s32)(seq - rc->expected) < 0) {
		/*
		 * Taken already: say again how far the channel is, which
		 * answers this one too.  A train's sender that sent its oldest
		 * fragment out again learns that the rest came, ACKs lost;
		 * an answer to any other stale packet matches nothing there.
		 */
		nic->stats.duplicates++;
		vnet_fw_xmit_ack(nic, p, VNET_WIRE_ACK, h->channel,
				 rc->expected - 1, stamp, rc->last_status);
		return false;
	}
	if (seq != rc->expected) {
		nic->stats.duplicates++;
		return false;
	}
	return true;
}

/* What became of the packet the channel expected: NACK, or ACK and on. */
void vnet_fw_rx_answer(struct vnet_fw_nic *nic, struct vnet_fw_peer *p,
		       const struct vnet_wire_hdr *h,
		       struct vnet_fw_outcome out)
{
	u32 seq = fw_be32_to_cpu(h->seq), stamp = fw_be32_to_cpu(h->stamp);
	struct vnet_fw_recv_chan *rc = &p->rx[h->channel];

	if (out.fate == VNET_FW_WAITS) {
		vnet_fw_xmit_ack(nic, p, VNET_WIRE_NACK, h->channel, seq, stamp,
				 out.reason);
		return;
	}
	rc->expected = seq + 1;
	rc->last_status = out.reason;
	vnet_fw_xmit_ack(nic, p, VNET_WIRE_ACK, h->channel, seq, stamp,
			 out.reason);
}

static void vnet_fw_rx_data(struct vnet_fw_nic *nic, struct vnet_fw_peer *p,
			    const struct vnet_wire_hdr *h,
			    const struct vnet_fw_bytes *payload)
{
	const struct vnet_wire_msg *w = (const void *)(h + 1);
	struct vnet_fw_recv_chan *rc = &p->rx[h->channel];
	struct vnet_desc m;

	if (!vnet_fw_get_msg(w, p->nic_id, &m)) {
		nic->stats.bad_frames++;
		return;
	}
	nic->stats.rx_data++;
	if (!vnet_fw_rx_in_order(nic, p, h))
		return;
	/* A new message: its sender gave up the train it had open. */
	if (rc->train)
		vnet_fw_train_drop(nic, &nic->trains[rc->train - 1]);
	vnet_fw_rx_answer(nic, p, h,
			  vnet_fw_rx_deliver(nic, p, w, &m, payload));
}

/*
 * The packet's own length: the link may pad a short frame (Ethernet does),
 * so the checksum covers what the header says, not what arrived.
 */
static u32 vnet_fw_packet_len(const struct vnet_wire_hdr *h, u32 len,
			      u32 *hlen)
{
	const struct vnet_wire_msg *w = (const void *)(h + 1);
	const struct vnet_wire_frag *f = (const void *)(h + 1);
	u32 payload, plen;

	*hlen = 0;
	switch (h->type) {
	case VNET_WIRE_DATA:
		if (len < VNET_WIRE_DATA_LEN)
			return 0;
		payload = fw_be32_to_cpu(w->len);
		if (payload > VNET_MEDIUM_MAX)
			return 0;
		*hlen = VNET_WIRE_DATA_LEN;
		return VNET_WIRE_DATA_LEN + payload;
	case VNET_WIRE_FRAG:
		plen = vnet_fw_frag_packet_len(h, len);
		if (plen)
			*hlen = plen - fw_be16_to_cpu(f->len);
		return plen;
	case VNET_WIRE_ACK:
	case VNET_WIRE_NACK:
		return VNET_WIRE_ACK_LEN;
	case VNET_WIRE_RESUME:
		return VNET_WIRE_RESUME_LEN;
	}
	return 0;
}

/*
 * A packet off the wire, in the pieces the link holds it in: its header,
 * and an ACK, NACK or RESUME whole, in the first (VNET_FW_RX_HEAD), a
 * MAPPER packet in that one alone.
 */
void vnet_fw_receive(struct vnet_fw_nic *nic, const struct vnet_fw_bytes *pkt,
		     const u8 *src_mac, u64 now)
{
	const u8 *head = pkt->piece->data + pkt->skip;
	const u32 len = pkt->len;
	const struct vnet_wire_hdr *h = (const void *)head;
	const struct vnet_wire_ack *ack = (const void *)(h + 1);
	struct vnet_fw_bytes payload;
	struct vnet_fw_peer *p;
	u32 src, plen, hlen, sum = 0;
	bool sums = false;

	nic->now = now;
	if (len < sizeof(*h) || pkt->piece->len - pkt->skip <
	    (len < VNET_FW_RX_HEAD ? len : VNET_FW_RX_HEAD) ||
	    h->version != VNET_WIRE_VERSION) {
		nic->stats.bad_frames++;
		return;
	}
	if (h->type == VNET_WIRE_MAPPER) {
		if (pkt->piece->len - pkt->skip < len) {
			nic->stats.bad_frames++;
			return;
		}
		vnet_fw_rx_mapper(nic, head, len, src_mac);
		return;
	}
	plen = vnet_fw_packet_len(h, len, &hlen);
	if (plen && plen <= len && hlen) {
		vnet_fw_bytes_sub(&payload, pkt, hlen, plen - hlen);
		sums = vnet_fw_split_csum_ok(head, hlen, &payload, &sum);
	} else if (plen && plen <= len) {
		sums = vnet_fw_csum_ok(head, plen);
	}
	if (!plen || plen > len || !sums ||
	    fw_be16_to_cpu(h->dst_nic) != nic->nic_id ||
	    h->channel >= VNET_WIRE_CHANNELS || (h->flags & ~VNET_WIRE_SYNC)) {
		nic->stats.bad_frames++;
		return;
	}
	src = nic->peer_of[fw_be16_to_cpu(h->src_nic)];
	if (src == VNET_FW_NO_PEER) {
		nic->stats.no_route++;
		return;
	}
	p = &nic->peers[src];
	if (fw_memcmp(p->mac, src_mac, sizeof(p->mac))) {
		nic->stats.bad_source++;
		return;
	}
	/* An answer names one of our send channels: we may have fewer. */
	if ((h->type == VNET_WIRE_ACK || h->type == VNET_WIRE_NACK) &&
	    h->channel >= nic->nchannels) {
		nic->stats.bad_frames++;
		return;
	}

	switch (h->type) {
	case VNET_WIRE_DATA:
		vnet_fw_rx_data(nic, p, h, &payload);
		return;
	case VNET_WIRE_FRAG:
		vnet_fw_rx_frag(nic, p, h, &payload, sum);
		return;
	case VNET_WIRE_ACK:
		vnet_fw_rx_ack(nic, p, h->channel, fw_be32_to_cpu(h->seq),
			       fw_be32_to_cpu(h->stamp), ack->status);
		return;
	case VNET_WIRE_NACK:
		vnet_fw_rx_nack(nic, p, h->channel, fw_be32_to_cpu(h->seq),
				fw_be32_to_cpu(h->stamp), ack->status,
				fw_be32_to_cpu(h->incarnation));
		return;
	case VNET_WIRE_RESUME:
		vnet_fw_rx_resume(nic, p, h);
		return;
	}
}
