/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A simulated Ethernet between simulated NICs, with simulated time and
 * deterministic faults: loss, duplication, reordering, corruption, and
 * links that go down.
 */
#ifndef _VNET_FW_WIRE_SIM_H
#define _VNET_FW_WIRE_SIM_H

#include "sim.h"

struct sim_pkt {
	u32 to;				/* NIC index */
	u32 from;
	u64 at;				/* delivery time */
	u32 len;
	u8 *data;
	u64 serial;			/* net->sent when it was sent */
};

/*
 * A store-and-forward stage a packet goes through, one at a time: this
 * long per packet and per KiB of frame, in time units.
 */
struct sim_stage {
	u64 per_pkt, per_kib;
};

struct sim_net {
	struct sim_nic **nic;
	u32 nr;
	u64 now;
	u32 seed;
	/* Fault rates in parts per thousand, per packet. */
	u32 loss, dup, reorder, corrupt;
	u64 delay;			/* one-way latency */
	/*
	 * The pipeline a packet goes through besides the latency: its
	 * sender's link, then its receiver's processing, each busy until
	 * *_free[NIC].  Zero costs: neither takes time.
	 */
	struct sim_stage link, rx;
	u64 *link_free, *rx_free;
	bool *down;			/* per NIC: its link drops everything */
	bool *mute;			/* per NIC: what it sends is lost */
	struct sim_pkt *q;
	u32 qlen, qcap;
	/* When set, every packet is also copied here, for replay. */
	struct sim_pkt *tap;
	u32 taplen, tapcap;
	u64 sent, lost, duplicated, corrupted;
	/*
	 * A DATA or FRAG packet reaches the firmware in pieces, each in a
	 * buffer of its own, cut where this stream says (its own, so that
	 * cutting changes no other draw): a NIC's receive pages.  @whole:
	 * in one piece, as veth hands it over.
	 */
	u32 cut_seed;
	bool whole;
};

/* The Ethernet frame of a packet in @buf, padded to 46 bytes; its length. */
u32 sim_frame(u8 *buf, const void *hdr, u32 hdr_len, const void *payload,
	      u32 len);
void sim_transmit(void *ctx, u32 peer, const void *hdr, u32 hdr_len,
		  const void *payload, u32 len);
void sim_transmit_seg(void *ctx, u32 peer, const void *hdr, u32 hdr_len,
		      const struct vnet_fw_ep *ep, int src, u64 offset, u32 len);

void sim_net_init(struct sim_net *net, u32 nr_nics, u32 eps_per_nic,
		  u32 seed);
void sim_net_init_channels(struct sim_net *net, u32 nr_nics, u32 eps_per_nic,
			   u32 seed, const u32 *channels);
void sim_net_init_peers(struct sim_net *net, u32 nr_nics, u32 eps_per_nic,
			u32 seed, u32 max_peers);
void sim_net_init_pair(struct sim_net *net, u64 tag);
void sim_net_fini(struct sim_net *net);
void sim_net_step(struct sim_net *net, u64 dt);
void sim_net_inject(struct sim_net *net, u32 to, const u8 *src_mac,
		    const void *data, u32 len);
void sim_net_inject_from(struct sim_net *net, u32 to, u32 from,
			 const void *data, u32 len);
u32 sim_rand(u32 *seed);
void sim_net_run_for(struct sim_net *net, u64 t);
struct vnet_desc sim_request(u32 arg0);

#endif /* _VNET_FW_WIRE_SIM_H */
