/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A host-side stand-in for the card: endpoints in plain memory, frames the
 * test loads and unloads by hand, and a user side that posts and consumes
 * the way a process would.
 */
#ifndef _VNET_FW_SIM_H
#define _VNET_FW_SIM_H

#include "vnet_fw.h"

#define SIM_MAX_EPS	64
#define SIM_MAX_PEERS	256

struct sim_ep {
	struct vnet_fw_ep fw;
	struct vnet_frame *frame;	/* backing store, resident or not */
	u8 *staging;
	bool exists;
	u32 send_prod[2];
	u32 recv_cons[2];
};

struct sim_net;

#define SIM_EVENTS	256

struct sim_nic {
	struct vnet_fw_nic fw;
	u64 now;
	struct vnet_fw_ep *owner[SIM_MAX_EPS];
	struct sim_ep *ep;
	u32 nr_eps;
	u32 faults_requested[SIM_MAX_EPS];
	u32 flushed[SIM_MAX_EPS];
	u32 notifications;
	struct sim_net *net;		/* NULL: a NIC alone, nothing to send to */
	bool auto_fault;		/* load endpoints the firmware asks for */
	u32 pauses;			/* a round paused between turns */
	void (*on_pause)(struct sim_nic *sim);	/* what the host does then */
	u32 seed;			/* for initial sequence numbers */
	/* What the firmware reported: the latest SIM_EVENTS, and counts. */
	struct vnet_fw_event events[SIM_EVENTS];
	u32 nr_events;			/* ever; events[] wraps */
	u32 events_of[VNET_FW_EV_RETURNED + 1];
};

#define SIM_CHANNELS	8
#define SIM_POOL	32
/* Fragments a train keeps on the wire: the module's default. */
#define SIM_TRAIN_WINDOW	8
#define SIM_TRAINS	32

void sim_init(struct sim_nic *sim, u32 nic_id, u32 nr_eps, u32 burst);
void sim_init_peers(struct sim_nic *sim, u32 nic_id, u32 nr_eps, u32 burst,
		    u32 max_peers);
void sim_mac(u32 nic_id, u8 mac[6]);
void sim_fini(struct sim_nic *sim);
void sim_load(struct sim_nic *sim, u32 ep);
void sim_unload(struct sim_nic *sim, u32 ep);
void sim_map(struct sim_nic *sim, u32 ep, u32 slot, u32 dest_nic, u32 dest_ep,
	     u64 tag);
int sim_post(struct sim_nic *sim, u32 ep, unsigned int q,
	     const struct vnet_desc *d, const void *payload);
const struct vnet_desc *sim_peek(struct sim_nic *sim, u32 ep, unsigned int q);
const void *sim_payload(struct sim_nic *sim, u32 ep, unsigned int q);
void sim_consume(struct sim_nic *sim, u32 ep, unsigned int q);
u32 sim_run(struct sim_nic *sim, u32 max_rounds);
const struct vnet_fw_event *sim_event(const struct sim_nic *sim, u32 type,
				      u32 nth);

#endif /* _VNET_FW_SIM_H */
