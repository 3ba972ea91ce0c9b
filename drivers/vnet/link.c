// SPDX-License-Identifier: GPL-2.0
/*
 * The Ethernet side of a NIC: frames of the vnet EtherType in and out of a
 * netdev.  Which NIC sits on which interface, and what happens when the
 * interface changes, is nic.c's; where each peer NIC is, routes.c's.
 *
 * Received frames are queued for the firmware thread; the firmware sends
 * from that thread with dev_queue_xmit().  The link never blocks the
 * firmware: a frame that cannot go out is dropped and counted, and the
 * transport retransmits it.
 */
#include <linux/etherdevice.h>
#include <linux/netdevice.h>
#include <linux/slab.h>

#include "compat.h"
#include "vnet.h"

/* Frames queued for the firmware before we drop. */
#define VNET_RXQ_MAX		4096

/* What the packet handler learned of a frame, for the firmware thread. */
struct vnet_link_cb {
	bool gathered;			/* its payload copied, unshared */
};

static struct vnet_link_cb *vnet_link_cb(struct sk_buff *skb)
{
	BUILD_BUG_ON(sizeof(struct vnet_link_cb) > sizeof(skb->cb));
	return (struct vnet_link_cb *)skb->cb;
}

/*
 * Copy the pages of @skb that their sender may still write into pages of
 * our own, a page at a time: no high-order allocation in softirq context,
 * and the firmware then reads them in place.  A frame list, or a fragment
 * larger than a page, is gathered into one buffer instead.  On failure
 * some fragments may be ours already: the frame is dropped whole.
 */
static int vnet_link_unshare(struct sk_buff *skb)
{
	struct skb_shared_info *sh = skb_shinfo(skb);
	int i;

	if (skb_has_frag_list(skb))
		return skb_linearize(skb);
	for (i = 0; i < sh->nr_frags; i++)
		if (skb_frag_size(&sh->frags[i]) > PAGE_SIZE)
			return skb_linearize(skb);
	if (skb_unclone(skb, GFP_ATOMIC))
		return -ENOMEM;
	for (i = 0; i < sh->nr_frags; i++) {
		skb_frag_t *f = &sh->frags[i];
		unsigned int len = skb_frag_size(f);
		struct page *page = alloc_page(GFP_ATOMIC);

		if (!page)
			return -ENOMEM;
		memcpy_from_page(page_address(page), skb_frag_page(f),
				 skb_frag_off(f), len);
		skb_frag_unref(skb, i);
		__skb_fill_page_desc(skb, i, page, 0, len);
	}
	sh->flags &= ~SKBFL_SHARED_FRAG;
	return 0;
}

static int vnet_link_rcv(struct sk_buff *skb, struct net_device *dev,
			 struct packet_type *pt, struct net_device *orig_dev)
{
	struct vnet_link *link = container_of(pt, struct vnet_link, pt);
	struct vnet_nic *nic = link->nic;

	if (skb->pkt_type == PACKET_OTHERHOST ||
	    skb->pkt_type == PACKET_OUTGOING)
		goto drop;
	skb = skb_share_check(skb, GFP_ATOMIC);
	if (!skb)
		return NET_RX_DROP;
	if (skb_queue_len(&nic->rxq) >= VNET_RXQ_MAX) {
		atomic64_inc(&nic->rx_dropped);
		goto drop;
	}
	/*
	 * Pages their sender may still write -- a zero-copy sender's on this
	 * host, through veth -- are read once, into pages of our own
	 * (vnet_link_in_place()).  Here, where the frame arrives, which on
	 * veth is the sending CPU, rather than in the firmware thread, which
	 * would then copy every byte of such a frame twice while the
	 * sender's CPU waited for its answer.
	 */
	vnet_link_cb(skb)->gathered = false;
	if (skb_has_shared_frag(skb) && skb_frags_readable(skb)) {
		if (vnet_link_unshare(skb)) {
			atomic64_inc(&nic->rx_dropped);
			goto drop;
		}
		vnet_link_cb(skb)->gathered = true;
	}
	skb_queue_tail(&nic->rxq, skb);
	wake_up(&nic->fw_wq);
	return NET_RX_SUCCESS;
drop:
	kfree_skb(skb);
	return NET_RX_DROP;
}

/*
 * Can the firmware read @skb where it lies: its header in the head, its
 * payload in page fragments?  A jumbo frame a NIC received into pages then
 * goes from them straight to the endpoint, not first into one buffer.  Not
 * a MAPPER datagram (read whole), a frag list, pages without a kernel
 * address, nor pages their owner says it may still write
 * (SKBFL_SHARED_FRAG: a zero-copy sender's), which the firmware would sum
 * and then copy from, two reads of bytes that may change in between.  (A
 * raw socket's ring on this host can put pages its owner writes in a frame
 * without saying so; that owner can forge any frame anyway, and what it
 * changes is only its own payload.)
 */
static bool vnet_link_in_place(struct sk_buff *skb)
{
	const struct vnet_wire_hdr *h;
	unsigned int i;

	if (skb_has_frag_list(skb) || skb_has_shared_frag(skb) ||
	    !pskb_may_pull(skb, min_t(unsigned int, skb->len, VNET_FW_RX_HEAD)))
		return false;
	if (skb_headlen(skb) < sizeof(*h))
		return false;
	h = (const void *)skb->data;
	if (h->type != VNET_WIRE_DATA && h->type != VNET_WIRE_FRAG)
		return false;
	for (i = 0; i < skb_shinfo(skb)->nr_frags; i++) {
		const skb_frag_t *f = &skb_shinfo(skb)->frags[i];

		if (!skb_frag_page(f) || PageHighMem(skb_frag_page(f)))
			return false;
	}
	return true;
}

/*
 * @skb's bytes as the firmware reads them, in @piece (room for
 * MAX_SKB_FRAGS + 1), or false when it cannot be read at all.  Copied into
 * one buffer only when the firmware cannot read it in place.
 */
bool vnet_link_bytes(struct vnet_nic *nic, struct sk_buff *skb,
		     struct vnet_fw_piece *piece, struct vnet_fw_bytes *b)
{
	unsigned int i, n = 0;

	/* Device memory (devmem TCP's queues): not for the CPU to read. */
	if (!skb_frags_readable(skb))
		goto drop;
	if (vnet_link_cb(skb)->gathered)
		nic->rx_gathered_bytes += skb->len;
	if (skb_is_nonlinear(skb) && !vnet_link_in_place(skb)) {
		if (skb_linearize(skb))
			goto drop;
		nic->rx_gathered_bytes += skb->len;
	}
	piece[n].data = skb->data;
	piece[n++].len = skb_headlen(skb);
	for (i = 0; i < skb_shinfo(skb)->nr_frags; i++) {
		const skb_frag_t *f = &skb_shinfo(skb)->frags[i];

		piece[n].data = skb_frag_address(f);
		piece[n++].len = skb_frag_size(f);
	}
	b->piece = piece;
	b->npieces = n;
	b->skip = 0;
	b->len = skb->len;
	return true;
drop:
	atomic64_inc(&nic->rx_dropped);
	return false;
}

/*
 * A frame for the link: its headroom, then @hdr, with room for @linear
 * bytes more; NULL, counted, when it cannot go.
 */
static struct sk_buff *vnet_link_skb(struct vnet_nic *nic, const void *hdr,
				     u32 hdr_len, u32 linear)
{
	struct vnet_link *link = nic->link;
	struct net_device *dev;
	struct sk_buff *skb;

	lockdep_assert_held(&nic->fw_lock);
	if (!link || !READ_ONCE(link->up))
		goto drop;
	dev = link->dev;
	skb = alloc_skb(LL_RESERVED_SPACE(dev) + hdr_len + linear +
			dev->needed_tailroom, GFP_ATOMIC | __GFP_NOWARN);
	if (!skb)
		goto drop;
	skb_reserve(skb, LL_RESERVED_SPACE(dev));
	skb_reset_network_header(skb);
	skb_put_data(skb, hdr, hdr_len);
	skb->dev = dev;
	skb->protocol = htons(vnet_ethertype);
	return skb;
drop:
	nic->tx_dropped++;
	return NULL;
}

static void vnet_link_send(struct vnet_nic *nic, struct sk_buff *skb,
			   const u8 *mac)
{
	struct net_device *dev = skb->dev;

	if (dev_hard_header(skb, dev, vnet_ethertype, mac, dev->dev_addr,
			    skb->len) < 0) {
		kfree_skb(skb);
		nic->tx_dropped++;
		return;
	}
	dev_queue_xmit(skb);
}

/* From the firmware, with nic->fw_lock held: to the address @mac. */
void vnet_link_xmit_to(struct vnet_nic *nic, const u8 *mac, const void *hdr,
		       u32 hdr_len, const void *payload, u32 len)
{
	struct sk_buff *skb = vnet_link_skb(nic, hdr, hdr_len, len);

	if (!skb)
		return;
	if (len) {
		skb_put_data(skb, payload, len);
		nic->tx_copied_bytes += len;
	}
	vnet_link_send(nic, skb, mac);
}

/* From the firmware, with nic->fw_lock held: to the peer in slot @peer. */
void vnet_link_xmit(struct vnet_nic *nic, u32 peer, const void *hdr,
		    u32 hdr_len, const void *payload, u32 len)
{
	vnet_link_xmit_to(nic, nic->fw.peers[peer].mac, hdr, hdr_len, payload,
			  len);
}

/*
 * The same, its payload the @len bytes at @at of @ep's segment or pin
 * @src, sent from their pinned pages rather than copied: the frame takes
 * a reference on each, so that they outlive an unregistered segment or a
 * dropped pin until the device is done with them.  The owner may write
 * them meanwhile (SKBFL_SHARED_FRAG says so to whoever reads the frame);
 * the receiver then finds the checksum wrong and drops it.
 */
void vnet_link_xmit_seg(struct vnet_nic *nic, u32 peer, const void *hdr,
			u32 hdr_len, struct vnet_ep *ep, int src, u64 at,
			u32 len)
{
	struct sk_buff *skb = vnet_link_skb(nic, hdr, hdr_len, 0);

	if (!skb)
		return;
	while (len) {
		unsigned int off;
		struct page *page = src == VNET_FW_SRC_SEG ?
				    vnet_seg_page(ep, at, &off) :
				    vnet_pin_page(ep, src, at, &off);
		u32 n = min_t(u32, len, PAGE_SIZE - off);

		if (!page || skb_shinfo(skb)->nr_frags == MAX_SKB_FRAGS) {
			kfree_skb(skb);
			nic->tx_dropped++;
			return;
		}
		get_page(page);
		skb_fill_page_desc(skb, skb_shinfo(skb)->nr_frags, page, off,
				   n);
		skb->len += n;
		skb->data_len += n;
		skb->truesize += n;
		at += n;
		len -= n;
	}
	skb_shinfo(skb)->flags |= SKBFL_SHARED_FRAG;
	vnet_link_send(nic, skb, nic->fw.peers[peer].mac);
}

/* The firmware sends no packet larger than the interface carries. */
void vnet_link_set_mtu(struct vnet_nic *nic, unsigned int mtu)
{
	mutex_lock(&nic->fw_lock);
	nic->fw.mtu = mtu;
	mutex_unlock(&nic->fw_lock);
}

/*
 * Put @nic on the wire through @dev: frames of our EtherType come in, the
 * firmware's go out.  Called with rtnl held.
 */
int vnet_link_start(struct vnet_nic *nic, struct net_device *dev)
{
	struct vnet_link *link;

	link = kzalloc(sizeof(*link), GFP_KERNEL);
	if (!link)
		return -ENOMEM;
	link->nic = nic;
	link->dev = dev;
	netdev_hold(dev, &link->dev_tracker, GFP_KERNEL);
	link->up = netif_running(dev);
	link->pt.type = htons(vnet_ethertype);
	link->pt.dev = dev;
	link->pt.func = vnet_link_rcv;

	mutex_lock(&nic->fw_lock);
	nic->link = link;
	nic->fw.mtu = dev->mtu;
	mutex_unlock(&nic->fw_lock);
	dev_add_pack(&link->pt);
	return 0;
}

/* The interface went up or down: carry frames, or drop them. */
void vnet_link_set_up(struct vnet_nic *nic, bool up)
{
	WRITE_ONCE(nic->link->up, up);
}

/* Stop the wire: no frame in, none out.  vnet_nics_lock held. */
void vnet_link_stop(struct vnet_nic *nic)
{
	struct vnet_link *link = nic->link;

	lockdep_assert_held(&vnet_nics_lock);
	if (!link)
		return;
	dev_remove_pack(&link->pt);	/* waits for running handlers */
	mutex_lock(&nic->fw_lock);
	nic->link = NULL;
	mutex_unlock(&nic->fw_lock);
	skb_queue_purge(&nic->rxq);
	netdev_put(link->dev, &link->dev_tracker);
	kfree(link);
}
