/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the fragmentation tests share: segments for simulated endpoints,
 * payloads whose every byte follows from a seed, and posting the kinds of
 * messages that travel as trains.
 */
#ifndef _VNET_FW_FRAG_UTIL_H
#define _VNET_FW_FRAG_UTIL_H

#include <stdlib.h>

#include "wire_sim.h"
#include "fw_transport.h"

static inline void frag_give_seg(struct sim_nic *s, u32 ep, u64 len)
{
	free(s->ep[ep].fw.seg);
	s->ep[ep].fw.seg = calloc(1, len);
	s->ep[ep].fw.seg_len = len;
	s->ep[ep].fw.seg_gen++;		/* as vnet_ep_set_seg() does */
}

/*
 * Two NICs on a wire of MTU 1500, A's endpoint 0 mapped (slot 1) to B's
 * endpoint 1 with @tag, each with a segment: room for A's sources past the
 * first megabyte, and for what lands at B.
 */
static inline void frag_pair_init(struct sim_net *net, u32 seed, u64 tag)
{
	struct sim_nic *a, *b;

	sim_net_init(net, 2, 2, seed);
	a = net->nic[0];
	b = net->nic[1];
	a->fw.mtu = 1500;
	b->fw.mtu = 1500;
	b->ep[1].fw.tag = tag;
	sim_map(a, 0, 0, 1, 1, tag);
	frag_give_seg(a, 0, 2 * VNET_XFER_MAX);
	frag_give_seg(b, 1, VNET_XFER_MAX);
}

/*
 * An ACK or NACK of (channel 0, @seq, @stamp) to NIC @to, as NIC @from of
 * incarnation @inc would send it from @mac: a forger's, or a peer's.
 */
static inline void frag_answer(struct sim_net *net, u32 to, u32 from,
			       const u8 *mac, u32 inc, u8 type, u32 seq,
			       u32 stamp, u8 status)
{
	struct {
		struct vnet_wire_hdr h;
		struct vnet_wire_ack ack;
	} pkt = {};

	pkt.h.version = VNET_WIRE_VERSION;
	pkt.h.type = type;
	pkt.h.src_nic = htobe16(from);
	pkt.h.dst_nic = htobe16(to);
	pkt.h.incarnation = htobe32(inc);
	pkt.h.seq = htobe32(seq);
	pkt.h.stamp = htobe32(stamp);
	pkt.ack.status = status;
	pkt.h.csum = htobe32(vnet_crc32c(0, &pkt, sizeof(pkt)));
	sim_net_inject(net, to, mac, &pkt, sizeof(pkt));
}

static inline void frag_free_segs(struct sim_net *net)
{
	u32 i, j;

	for (i = 0; i < net->nr; i++)
		for (j = 0; j < net->nic[i]->nr_eps; j++) {
			free(net->nic[i]->ep[j].fw.seg);
			net->nic[i]->ep[j].fw.seg = NULL;
		}
}

static inline u8 frag_byte(u32 *x)
{
	*x = *x * 1103515245u + 12345u;
	return *x >> 16;
}

static inline void frag_fill(u8 *buf, u32 len, u32 seed)
{
	u32 i;

	for (i = 0; i < len; i++)
		buf[i] = frag_byte(&seed);
}

static inline bool frag_same(const u8 *buf, u32 len, u32 seed)
{
	u32 i;

	for (i = 0; i < len; i++)
		if (buf[i] != frag_byte(&seed))
			return false;
	return true;
}

/* An XFER of @len bytes from @ep's own segment at @src to @dst over there. */
static inline struct vnet_desc frag_xfer_seg(u32 len, u64 src, u64 dst)
{
	struct vnet_desc d = { .handler = 3, .nargs = 4 };

	d.flags = VNET_DESC_XFER | VNET_DESC_FROM_SEG;
	d.len = len;
	d.src_offset = src;
	d.offset = dst;
	return d;
}

/* Run the wire until @done(@arg) or @limit time units have passed. */
static inline bool frag_run_until(struct sim_net *net,
				  bool (*done)(struct sim_net *net, void *arg),
				  void *arg, u64 limit)
{
	u64 start = net->now;

	while (!done(net, arg)) {
		if (net->now - start >= limit)
			return false;
		sim_net_step(net, 20);
	}
	return true;
}

/* Nothing left anywhere: no train, channel, buffer or entry still held. */
static inline bool frag_all_quiet(struct sim_net *net)
{
	u32 i, j;

	for (i = 0; i < net->nr; i++) {
		struct sim_nic *s = net->nic[i];

		if (s->fw.nactive || s->fw.trains_busy || s->fw.paused ||
		    s->fw.pool_free != SIM_POOL)
			return false;
		for (j = 0; j < s->nr_eps; j++)
			if (s->ep[j].fw.recv_reserved[0] ||
			    s->ep[j].fw.recv_reserved[1] ||
			    s->ep[j].fw.train_held[0] ||
			    s->ep[j].fw.train_held[1] ||
			    s->ep[j].fw.unresolved)
				return false;
	}
	return true;
}

#endif /* _VNET_FW_FRAG_UTIL_H */
