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
			    s->ep[j].fw.train_head || s->ep[j].fw.unresolved)
				return false;
	}
	return true;
}

#endif /* _VNET_FW_FRAG_UTIL_H */
