/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The vnet NIC firmware: what a NIC's own processor would run.
 *
 * It includes no kernel header.  The host that runs it (the driver's NIC
 * emulation, or the host-side unit tests) supplies vnet_fw_env.h with the
 * basic types and memory-ordering primitives, and a struct vnet_fw_ops with
 * the few "hardware" services the firmware needs.
 *
 * Everything inside a struct vnet_frame or a staging area is owned by user
 * space and is read exactly once per decision: a value the user could have
 * written is copied, checked and only then used.
 */
#ifndef _VNET_FW_H
#define _VNET_FW_H

#include "vnet_fw_env.h"
#include "linux/vnet.h"

struct vnet_fw_ep;

/*
 * Services the host provides.  All are called from the firmware context
 * (with the host's firmware lock held) and must not sleep.
 */
struct vnet_fw_ops {
	/* The local endpoint with this index, or NULL. */
	struct vnet_fw_ep *(*lookup)(void *ctx, u32 ep_index);
	/* Ask the host to bring a non-resident endpoint onto the card. */
	void (*request_fault)(void *ctx, struct vnet_fw_ep *ep);
	/* A receive queue of @ep went from empty to non-empty. */
	void (*notify_recv)(void *ctx, struct vnet_fw_ep *ep);
};

struct vnet_fw_translation {
	struct vnet_name name;
	u64 tag;
	bool valid;
};

/*
 * What a reply must quote.  Tokens live outside user memory so a reply can
 * only go to an endpoint that really sent this endpoint a request, and only
 * once.
 */
struct vnet_fw_token {
	struct vnet_name peer;
	u64 tag;
	u32 serial;
	bool valid;
};

#define VNET_FW_TOKENS		(4 * VNET_QUEUE_DEPTH)

/* vnet_fw_ep.queue_errors: queues whose user-written index is impossible */
#define VNET_FW_BAD_INDEX(q)	(1u << (q))

struct vnet_fw_ep_stats {
	u64 sent;
	u64 received;
	u64 returned;
	u64 rejected;
};

/*
 * Per-endpoint firmware state.  It stays in host memory while the endpoint
 * is paged, so the indices the firmware owns survive eviction and never come
 * from user-writable memory.
 */
struct vnet_fw_ep {
	/* Set by the host while the endpoint sits in a card frame, else NULL. */
	struct vnet_frame *frame;
	u8 *staging;			/* VNET_STAGING_SIZE bytes */
	u8 *seg;			/* bulk transfers land here, or NULL */
	u64 seg_len;
	struct vnet_name name;
	u64 tag;
	struct vnet_fw_translation xlate[VNET_MAX_SLOTS];

	u32 send_cons[2];		/* VNET_Q_REQ_SEND, VNET_Q_REP_SEND */
	u32 recv_prod[2];		/* VNET_Q_REQ_RECV, VNET_Q_REP_RECV */
	u32 queue_errors;

	struct vnet_fw_token token[VNET_FW_TOKENS];
	u32 token_serial;

	bool referenced;		/* did work since the host last looked */
	struct vnet_fw_ep_stats stats;
};

struct vnet_fw_nic {
	const struct vnet_fw_ops *ops;
	void *ctx;
	u32 nic_id;
	u32 nframes;
	/* Owner of each card frame while resident; written by the host. */
	struct vnet_fw_ep **frame_owner;
	u32 burst;			/* send attempts per visit, 2^k */
	u32 rr_next;
	bool held;			/* a message waits on a busy destination */
};

/* The outcome of one round over the resident endpoints. */
struct vnet_fw_round {
	u32 messages;
	bool held;
};

void vnet_fw_ep_init(struct vnet_fw_ep *ep, struct vnet_name name,
		     u8 *staging);
void vnet_fw_frame_init(const struct vnet_fw_ep *ep, struct vnet_frame *frame);
void vnet_fw_frame_restore(const struct vnet_fw_ep *ep,
			   struct vnet_frame *frame);

struct vnet_fw_round vnet_fw_poll(struct vnet_fw_nic *nic);
bool vnet_fw_arm_wakeup(struct vnet_fw_nic *nic);
void vnet_fw_disarm_wakeup(struct vnet_fw_nic *nic);

bool vnet_fw_recv_pending(const struct vnet_frame *frame);
bool vnet_fw_sends_pending(const struct vnet_fw_ep *ep,
			   const struct vnet_frame *frame);

#endif /* _VNET_FW_H */
