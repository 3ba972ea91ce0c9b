/* SPDX-License-Identifier: GPL-2.0 */
/* Message delivery and return-to-sender; firmware-internal. */
#ifndef _VNET_FW_DELIVER_H
#define _VNET_FW_DELIVER_H

#include "vnet_fw.h"

enum vnet_fw_verdict {
	VNET_FW_DONE,		/* delivered or returned: the entry is consumed */
	VNET_FW_HOLD,		/* destination busy: retry the same entry later */
};

struct vnet_fw_route {
	struct vnet_name dest;
	u64 tag;
	struct vnet_fw_token *token;	/* the request a reply answers */
};

enum vnet_fw_verdict vnet_fw_send_head(struct vnet_fw_nic *nic,
				       struct vnet_fw_ep *src,
				       struct vnet_frame *frame,
				       unsigned int q);

#endif /* _VNET_FW_DELIVER_H */
