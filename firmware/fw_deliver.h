/* SPDX-License-Identifier: GPL-2.0 */
/* Message delivery and return-to-sender; firmware-internal. */
#ifndef _VNET_FW_DELIVER_H
#define _VNET_FW_DELIVER_H

#include "vnet_fw.h"

/* Tell the host, if it listens (vnet_fw_ops.event). */
static inline void vnet_fw_report(struct vnet_fw_nic *nic,
				  const struct vnet_fw_event *ev)
{
	if (nic->ops->event)
		nic->ops->event(nic->ctx, ev);
}

enum vnet_fw_verdict {
	VNET_FW_DONE,		/* delivered, sent or returned: entry consumed */
	VNET_FW_HOLD,		/* destination busy: retry the same entry later */
};

/* Can a destination take a message right now? */
enum vnet_fw_accept {
	VNET_FW_ACCEPTED,
	VNET_FW_FULL,		/* its receive queue has no room */
	VNET_FW_AWAY,		/* not resident, or being moved */
};

/*
 * What became of a message the firmware tried to move: never a return
 * reason by itself, so one cannot be mistaken for the other.
 */
enum vnet_fw_fate {
	VNET_FW_MOVED,		/* delivered, or handed to the transport */
	/* Handed to a train that reads it from its sender's segment. */
	VNET_FW_STARTED,
	VNET_FW_WAITS,		/* its destination cannot take it yet */
	VNET_FW_REFUSED,	/* back to its sender, for .reason */
};

struct vnet_fw_outcome {
	enum vnet_fw_fate fate;
	/* REFUSED: enum vnet_return_reason; WAITS: enum vnet_nack_reason */
	u8 reason;
};

static inline struct vnet_fw_outcome vnet_fw_outcome(enum vnet_fw_fate fate,
						     u8 reason)
{
	struct vnet_fw_outcome o = { fate, reason };

	return o;
}

/* Where a payload read in place lies: see vnet_fw_send_chan.src_pin. */
struct vnet_fw_src {
	int pin;
	u32 gen;
	u64 at;
};

struct vnet_fw_route {
	struct vnet_name dest;
	u64 tag;
	u64 key;			/* see vnet_fw_send_chan.key */
	struct vnet_fw_token *token;	/* the request a reply answers */
};

enum vnet_return_reason vnet_fw_check_msg(u8 flags, u8 nargs, u32 len,
					  bool wire);
bool vnet_fw_seg_fits(const struct vnet_fw_ep *ep, u64 offset, u32 len);
int vnet_fw_pin_find(const struct vnet_fw_ep *ep, u64 addr, u32 len);

/*
 * Why a message read in place goes back when its bytes are not there: its
 * sender's segment no longer holds them (a fault of the sender's), or the
 * pin it reads from was dropped when the mapping changed -- the memory may
 * well be there, and pinned again the message can go again.
 */
static inline u8 vnet_fw_src_lost(bool from_pin)
{
	return from_pin ? VNET_RET_SOURCE_GONE : VNET_RET_BAD_SEGMENT;
}

const u8 *vnet_fw_src_bytes(const struct vnet_fw_ep *ep, int src, u32 gen,
			    u64 at, u32 len);
enum vnet_return_reason vnet_fw_find_dest(struct vnet_fw_nic *nic, u32 ep,
					  unsigned int rq,
					  const struct vnet_desc *msg, u64 key,
					  struct vnet_fw_ep **dst);

enum vnet_fw_accept vnet_fw_accept(struct vnet_fw_nic *nic,
				   struct vnet_fw_ep *dst, unsigned int rq,
				   const struct vnet_desc *msg, u64 key,
				   const struct vnet_fw_bytes *payload);
enum vnet_fw_verdict vnet_fw_give_back(struct vnet_fw_nic *nic,
				       struct vnet_fw_ep *src,
				       struct vnet_frame *frame,
				       const struct vnet_desc *msg,
				       enum vnet_return_reason reason,
				       const u8 *payload);

enum vnet_fw_verdict vnet_fw_send_head(struct vnet_fw_nic *nic,
				       struct vnet_fw_ep *src,
				       struct vnet_frame *frame,
				       unsigned int q);

void vnet_fw_token_revive(struct vnet_fw_ep *src, u32 serial,
			  enum vnet_return_reason reason);

/*
 * What @ep was loaded for has happened.  The time goes first: the host
 * reads served_at only once it sees served.
 */
static inline void vnet_fw_mark_served(const struct vnet_fw_nic *nic,
				       struct vnet_fw_ep *ep)
{
	if (ep->served)
		return;
	fw_write_once(ep->served_at, nic->now);
	fw_store_release(&ep->served, true);
}

/* transport.c */
struct vnet_fw_outcome vnet_fw_send_remote(struct vnet_fw_nic *nic,
					   struct vnet_fw_ep *src,
					   const struct vnet_desc *msg, u64 key,
					   unsigned int q, const u8 *payload,
					   const struct vnet_fw_src *in);

#endif /* _VNET_FW_DELIVER_H */
