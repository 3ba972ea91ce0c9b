/* SPDX-License-Identifier: GPL-2.0 */
/* Queue access inside a user-writable frame; firmware-internal. */
#ifndef _VNET_FW_QUEUE_H
#define _VNET_FW_QUEUE_H

#include "vnet_fw.h"

#define VNET_QUEUE_MASK		(VNET_QUEUE_DEPTH - 1)
#define VNET_FW_QUEUE_BIT(q)	(1u << (q))

int vnet_fw_send_pending(struct vnet_fw_ep *ep, struct vnet_frame *frame,
			 unsigned int q);
int vnet_fw_recv_room(struct vnet_fw_ep *ep, struct vnet_frame *frame,
		      unsigned int q);
void vnet_fw_send_take(struct vnet_fw_ep *ep, struct vnet_frame *frame,
		       unsigned int q, bool held);
u32 vnet_fw_send_retire(struct vnet_fw_ep *ep, struct vnet_frame *frame,
			unsigned int q);
struct vnet_desc *vnet_fw_recv_slot(struct vnet_fw_ep *ep,
				    struct vnet_frame *frame, unsigned int q);
void vnet_fw_recv_publish(struct vnet_fw_ep *ep, struct vnet_frame *frame,
			  unsigned int q);

#endif /* _VNET_FW_QUEUE_H */
