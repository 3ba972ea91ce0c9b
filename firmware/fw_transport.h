/* SPDX-License-Identifier: GPL-2.0 */
/* Between the transport's send side and its receive path; internal. */
#ifndef _VNET_FW_TRANSPORT_H
#define _VNET_FW_TRANSPORT_H

#include "vnet_fw.h"

void vnet_fw_xmit_ack(struct vnet_fw_nic *nic, struct vnet_fw_peer *p,
		      u8 type, u8 channel, u32 seq, u32 stamp, u8 status);
void vnet_fw_rx_ack(struct vnet_fw_nic *nic, struct vnet_fw_peer *p, u32 c,
		    u32 seq, u32 stamp, u8 status);
void vnet_fw_peer_fail(struct vnet_fw_nic *nic, struct vnet_fw_peer *p);
void vnet_fw_rx_nack(struct vnet_fw_nic *nic, struct vnet_fw_peer *p, u32 c,
		     u32 seq, u32 stamp, u8 reason);

#endif /* _VNET_FW_TRANSPORT_H */
