/* SPDX-License-Identifier: GPL-2.0 */
/* Between the transport's send side and its receive path; internal. */
#ifndef _VNET_FW_TRANSPORT_H
#define _VNET_FW_TRANSPORT_H

#include "vnet_fw.h"

void vnet_fw_put_hdr(struct vnet_fw_nic *nic, struct vnet_wire_hdr *h,
		     const struct vnet_fw_peer *p, u8 type, u8 channel, u8 flags,
		     u32 seq, u32 stamp);
void vnet_fw_retransmit(struct vnet_fw_nic *nic, struct vnet_fw_peer *p,
			u32 c);
bool vnet_fw_chan_refused_too_long(const struct vnet_fw_nic *nic,
				   const struct vnet_fw_send_chan *ch);
void vnet_fw_xmit_ack(struct vnet_fw_nic *nic, struct vnet_fw_peer *p,
		      u8 type, u8 channel, u32 seq, u32 stamp, u8 status);
void vnet_fw_rx_ack(struct vnet_fw_nic *nic, struct vnet_fw_peer *p, u32 c,
		    u32 seq, u32 stamp, u8 status);
void vnet_fw_peer_fail(struct vnet_fw_nic *nic, struct vnet_fw_peer *p);
void vnet_fw_rx_nack(struct vnet_fw_nic *nic, struct vnet_fw_peer *p, u32 c,
		     u32 seq, u32 stamp, u8 reason, u32 incarnation);

/* receive.c */
bool vnet_fw_csum_ok(const u8 *pkt, u32 len);

/* mapper.c */
void vnet_fw_rx_mapper(struct vnet_fw_nic *nic, const void *data, u32 len,
		       const u8 *mac);

/* resume.c */
void vnet_fw_resume_wanted(struct vnet_fw_nic *nic, struct vnet_fw_ep *ep,
			   const struct vnet_fw_peer *p);
void vnet_fw_send_resumes(struct vnet_fw_nic *nic, struct vnet_fw_ep *ep);
void vnet_fw_rx_resume(struct vnet_fw_nic *nic, struct vnet_fw_peer *p,
		       const struct vnet_wire_hdr *h);

#endif /* _VNET_FW_TRANSPORT_H */
