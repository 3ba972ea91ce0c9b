// SPDX-License-Identifier: GPL-2.0
/*
 * RESUME: telling the senders that an endpoint is back on the card.
 *
 * A DATA packet for an endpoint that is not on the card is NACKed "not
 * resident", and the host is asked to fault the endpoint in.  The sender
 * keeps the message; left to itself it retransmits when its timer finds
 * the message due, a retransmission timeout later, while the endpoint --
 * loaded for that very message -- sits idle in its frame.  So the receiver notes
 * which peers it NACKed that way, and the first round that finds the
 * endpoint resident and not moving sends each of them a RESUME naming it.
 * A peer retransmits at once every message to that endpoint whose latest
 * transmission was NACKed "not resident".
 *
 * The receiver keeps a bit per peer slot modulo 64, exact for up to 64
 * routes (the default); with more, a RESUME also goes to the peers whose
 * slots share the bit, and they find nothing to retransmit -- at most
 * max_peers / 64 RESUMEs per NACK, once per load.  A slot whose route was
 * deleted and given to another NIC meanwhile gets a RESUME it matches no
 * channel with: it learns only that some endpoint here was loaded.
 *
 * A RESUME is a hint, never needed for correctness.  One that is lost, or
 * that overtakes the NACK it follows, leaves the message to the sender's
 * timer, as before.  The sender acts on one only as it does on an ACK or
 * NACK: from the address routed for the peer, and then only for a message
 * whose latest transmission that same incarnation of the peer's route
 * NACKed "not resident"; the retransmission clears the mark, and a
 * message is retransmitted for a RESUME once only -- after that its timer
 * paces it.  So forged or duplicate RESUMEs, even with forged NACKs, cost
 * at most one retransmission per message besides the timer's; they
 * deliver, resolve and return nothing, nor keep a message refused past
 * busy_timeout from coming back "busy".
 */
#include "fw_transport.h"

#define VNET_FW_RESUME_BIT(slot)	(1ULL << ((slot) % 64))

/* Endpoint @ep NACKed peer @p "not resident": tell @p when it is back. */
void vnet_fw_resume_wanted(struct vnet_fw_nic *nic, struct vnet_fw_ep *ep,
			   const struct vnet_fw_peer *p)
{
	if (!ep->closed)
		ep->resume_peers |= VNET_FW_RESUME_BIT(p - nic->peers);
}

static void vnet_fw_xmit_resume(struct vnet_fw_nic *nic,
				struct vnet_fw_peer *p, u32 ep)
{
	struct {
		struct vnet_wire_hdr hdr;
		struct vnet_wire_resume resume;
	} pkt;

	vnet_fw_put_hdr(nic, &pkt.hdr, p, VNET_WIRE_RESUME, 0, 0, 0, 0);
	fw_memset(&pkt.resume, 0, sizeof(pkt.resume));
	pkt.resume.ep = fw_cpu_to_be32(ep);
	pkt.hdr.csum = fw_cpu_to_be32(vnet_crc32c(0, &pkt, sizeof(pkt)));
	nic->ops->transmit(nic->ctx, p - nic->peers, &pkt, sizeof(pkt), NULL, 0);
	nic->stats.tx_resume++;
}

/*
 * @ep is resident and not moving (the caller checked): a RESUME to each
 * peer it NACKed "not resident" meanwhile, once.
 */
void vnet_fw_send_resumes(struct vnet_fw_nic *nic, struct vnet_fw_ep *ep)
{
	u64 want = ep->resume_peers;
	u32 bit, slot;

	ep->resume_peers = 0;
	/* Only the slots of the bits set: a few, not max_peers of them. */
	for (bit = 0; want && bit < 64; bit++, want >>= 1) {
		if (!(want & 1))
			continue;
		for (slot = bit; slot < nic->max_peers; slot += 64)
			if (nic->peers[slot].valid)
				vnet_fw_xmit_resume(nic, &nic->peers[slot],
						    ep->name.ep);
	}
}

static bool vnet_fw_resume_ok(const struct vnet_wire_hdr *h,
			      const struct vnet_wire_resume *r)
{
	u8 set = h->channel | h->flags;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(r->__reserved); i++)
		set |= r->__reserved[i];
	return !set && !h->seq && !h->stamp;
}

/*
 * A RESUME from peer @p; the caller checked its length, checksum, and that
 * it comes from the address routed for @p.  Retransmit what it allows.
 */
void vnet_fw_rx_resume(struct vnet_fw_nic *nic, struct vnet_fw_peer *p,
		       const struct vnet_wire_hdr *h)
{
	const struct vnet_wire_resume *r = (const void *)(h + 1);
	u32 incarnation = fw_be32_to_cpu(h->incarnation);
	u32 ep = fw_be32_to_cpu(r->ep);
	u32 c;

	if (!vnet_fw_resume_ok(h, r)) {
		nic->stats.bad_frames++;
		return;
	}
	nic->stats.rx_resume++;
	for (c = 0; c < nic->nchannels; c++) {
		struct vnet_fw_send_chan *ch = &p->tx[c];

		if (ch->state != VNET_CHAN_INFLIGHT || !ch->resume ||
		    ch->resumed ||
		    ch->msg.peer.ep != ep ||
		    ch->nack_incarnation != incarnation)
			continue;
		/* As on the timer: not while its sender moves (flush rule). */
		if (ch->src && fw_read_once(ch->src->moving))
			continue;
		/*
		 * Nor once it has been refused for busy_timeout: the timer
		 * returns it "busy" when it is due, and sending it again
		 * would put that off -- for ever, were the peer to NACK
		 * every transmission at once and follow with a RESUME.
		 */
		if (vnet_fw_chan_refused_too_long(nic, ch))
			continue;
		ch->resumed = true;
		nic->stats.resume_retransmits++;
		vnet_fw_retransmit(nic, p, c, true);
	}
}
