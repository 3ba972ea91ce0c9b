// SPDX-License-Identifier: GPL-2.0
/*
 * The route table: which peer slot talks to which NIC, at which Ethernet
 * address, under which incarnation.
 *
 * A route deleted and added again for the same NIC gets its old slot back
 * while that slot is not taken by another NIC, with its sequence numbers
 * and the receive state of every channel: nothing in flight either way is
 * lost or taken twice.  A NIC that lands in a fresh slot starts a new
 * incarnation, with random initial sequence numbers and SYNC on each
 * channel, so that the receiver restarts its channels and no packet of
 * an older incarnation or slot can pass for current.
 *
 * So a slot goes to another NIC only once nothing its NIC sent before the
 * delete can still come: a receive state restarted while that NIC still
 * retransmits a message this side delivered (its ACK lost) would take the
 * message again after a SYNC.  A sender gives every message up within
 * vnet_fw_msg_lifetime() of taking its channel -- a train's fragment, of
 * being loaded, and no packet carries more than one fragment -- with the
 * same parameters on every NIC of a cluster, so a deleted route's slot is
 * kept for its NIC that long and a few quanta more; a table with no other
 * slot says so.
 */
#include "fw_transport.h"

void vnet_fw_transport_init(struct vnet_fw_nic *nic)
{
	u32 i;

	nic->npool = nic->pool_free;
	if (!nic->train_window)
		nic->train_window = 1;
	if (nic->train_window > VNET_FW_TRAIN_WINDOW_MAX)
		nic->train_window = VNET_FW_TRAIN_WINDOW_MAX;
	for (i = 0; i < 65536; i++)
		nic->peer_of[i] = VNET_FW_NO_PEER;
	for (i = 0; i < nic->max_peers; i++) {
		nic->peers[i].valid = false;
		nic->peers[i].used = false;
		nic->peers[i].frag_max = VNET_MEDIUM_MAX;
	}
}

static u64 vnet_fw_slot_kept(const struct vnet_fw_nic *nic)
{
	return vnet_fw_msg_lifetime(nic) + 4 * nic->quantum;
}

/*
 * A slot for @nic_id: its own old one, else a never used one, else one
 * whose NIC can send it nothing more.
 */
static struct vnet_fw_peer *vnet_fw_route_slot(struct vnet_fw_nic *nic,
					       u32 nic_id, u64 now, bool *kept)
{
	struct vnet_fw_peer *fresh = NULL, *reused = NULL;
	u32 i;

	*kept = false;
	for (i = 0; i < nic->max_peers; i++) {
		struct vnet_fw_peer *p = &nic->peers[i];

		if (p->valid)
			continue;
		if (p->used && p->nic_id == nic_id)
			return p;
		if (!p->used && !fresh)
			fresh = p;
		if (!p->used || reused)
			continue;
		/* A slot still draining returns waits too. */
		if (!p->unacked && now - p->left_at >= vnet_fw_slot_kept(nic))
			reused = p;
		else
			*kept = true;
	}
	return fresh ? fresh : reused;
}

/* A new incarnation of the route in slot @p, to @nic_id. */
static void vnet_fw_route_restart(struct vnet_fw_nic *nic,
				  struct vnet_fw_peer *p, u32 nic_id)
{
	u32 c;

	/* What the slot's last NIC was sending us goes nowhere now. */
	vnet_fw_trains_drop_peer(nic, p);
	p->nic_id = nic_id;
	p->used = true;
	p->incarnation = nic->ops->random(nic->ctx);
	fw_memset(p->rx, 0, VNET_WIRE_CHANNELS * sizeof(*p->rx));
	fw_memset(p->took, 0, sizeof(p->took));
	vnet_fw_rtt_reset(p);
	vnet_fw_pipe_reset(&p->pipe);
	for (c = 0; c < nic->nchannels; c++) {
		p->tx[c].seq = nic->ops->random(nic->ctx);
		p->tx[c].sync = true;
	}
}

/*
 * Route @nic_id to Ethernet address @mac; a route that exists only
 * changes its address.  Returns the peer slot; VNET_FW_ROUTES_WAIT when
 * every free slot is still kept for a deleted route's NIC,
 * VNET_FW_ROUTES_FULL when there is none.
 */
int vnet_fw_route_add(struct vnet_fw_nic *nic, u32 nic_id, const u8 *mac,
		      u64 now)
{
	struct vnet_fw_peer *p;
	bool kept;

	if (nic->peer_of[nic_id] != VNET_FW_NO_PEER) {
		p = &nic->peers[nic->peer_of[nic_id]];
	} else {
		p = vnet_fw_route_slot(nic, nic_id, now, &kept);
		if (!p)
			return kept ? VNET_FW_ROUTES_WAIT : VNET_FW_ROUTES_FULL;
		if (!p->used || p->nic_id != nic_id)
			vnet_fw_route_restart(nic, p, nic_id);
		p->valid = true;
		nic->peer_of[nic_id] = p - nic->peers;
	}
	/* Another address is another way there: its costs are to learn. */
	if (fw_memcmp(p->mac, mac, sizeof(p->mac)))
		vnet_fw_pipe_reset(&p->pipe);
	fw_memcpy(p->mac, mac, sizeof(p->mac));
	return p - nic->peers;
}

/*
 * This NIC is @nic_id from now on; it has no endpoints.  Peers keep no
 * channel state for the new number: what closed endpoints left in flight
 * is dropped and every channel starts again with SYNC, or a retransmission
 * under the new number of a message a peer took under the old one (its
 * ACK lost) would be taken again.  A route to the new number goes.
 */
void vnet_fw_renumber(struct vnet_fw_nic *nic, u32 nic_id, u64 now)
{
	vnet_fw_fail_all(nic);
	vnet_fw_route_del(nic, nic_id, now);
	nic->nic_id = nic_id;
}

bool vnet_fw_route_del(struct vnet_fw_nic *nic, u32 nic_id, u64 now)
{
	u32 slot = nic->peer_of[nic_id];

	if (slot == VNET_FW_NO_PEER)
		return false;
	nic->peer_of[nic_id] = VNET_FW_NO_PEER;
	nic->peers[slot].valid = false;
	nic->peers[slot].left_at = now;
	vnet_fw_peer_fail(nic, &nic->peers[slot]);
	/*
	 * Its trains on their way to us too: they could no longer end, since
	 * nothing from it is taken; added back, it starts them again.
	 */
	vnet_fw_trains_drop_peer(nic, &nic->peers[slot]);
	return true;
}
