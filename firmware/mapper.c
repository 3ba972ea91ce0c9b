// SPDX-License-Identifier: GPL-2.0
/*
 * Mapper datagrams (see wire.h): the firmware frames them on the way out
 * and checks them on the way in, and that is all.  What they say is the
 * business of the mapper daemon on the host, which treats every byte as
 * coming from anyone on the segment -- as it may.
 */
#include "fw_transport.h"

/* Returns false when @len does not fit a datagram or the NIC has no link. */
bool vnet_fw_mapper_send(struct vnet_fw_nic *nic, const u8 *mac,
			 const void *payload, u32 len)
{
	struct {
		struct vnet_wire_hdr hdr;
		struct vnet_wire_mapper m;
	} pkt;
	u32 crc;

	if (!nic->ops->transmit_to || len > VNET_MAPPER_MTU ||
	    VNET_WIRE_MAPPER_LEN + len > nic->mtu)
		return false;
	fw_memset(&pkt, 0, sizeof(pkt));
	pkt.hdr.version = VNET_WIRE_VERSION;
	pkt.hdr.type = VNET_WIRE_MAPPER;
	pkt.hdr.src_nic = fw_cpu_to_be16(nic->nic_id);
	pkt.hdr.dst_nic = fw_cpu_to_be16(VNET_WIRE_NIC_ANY);
	pkt.m.len = fw_cpu_to_be16(len);
	crc = vnet_crc32c(0, &pkt, sizeof(pkt));
	crc = vnet_crc32c(crc, payload, len);
	pkt.hdr.csum = fw_cpu_to_be32(crc);
	nic->ops->transmit_to(nic->ctx, mac, &pkt, sizeof(pkt), payload, len);
	nic->stats.tx_mapper++;
	return true;
}

/*
 * A MAPPER packet of @len bytes (at least the header) from @mac.  Whatever
 * a transport packet would carry in the header's other fields must be
 * zero here, so no mapper datagram can pass for, or be built from, one.
 */
void vnet_fw_rx_mapper(struct vnet_fw_nic *nic, const void *data, u32 len,
		       const u8 *mac)
{
	const struct vnet_wire_hdr *h = data;
	const struct vnet_wire_mapper *m = (const void *)(h + 1);
	u32 plen;

	if (len < VNET_WIRE_MAPPER_LEN)
		goto bad;
	plen = fw_be16_to_cpu(m->len);
	if (plen > VNET_MAPPER_MTU || VNET_WIRE_MAPPER_LEN + plen > len ||
	    h->channel || h->flags || h->incarnation || h->seq || h->stamp ||
	    m->__reserved[0] || m->__reserved[1] ||
	    fw_be16_to_cpu(h->dst_nic) != VNET_WIRE_NIC_ANY ||
	    (mac[0] & 1) ||
	    !vnet_fw_csum_ok(data, VNET_WIRE_MAPPER_LEN + plen))
		goto bad;
	nic->stats.rx_mapper++;
	if (nic->ops->mapper_rx)
		nic->ops->mapper_rx(nic->ctx, mac, m + 1, plen);
	return;
bad:
	nic->stats.bad_frames++;
}
