/* SPDX-License-Identifier: GPL-2.0 */
/* Between the transport's send side and its receive path; internal. */
#ifndef _VNET_FW_TRANSPORT_H
#define _VNET_FW_TRANSPORT_H

#include "fw_deliver.h"

void vnet_fw_put_hdr(struct vnet_fw_nic *nic, struct vnet_wire_hdr *h,
		     const struct vnet_fw_peer *p, u8 type, u8 channel, u8 flags,
		     u32 seq, u32 stamp);
void vnet_fw_put_msg(struct vnet_wire_msg *w, const struct vnet_desc *m,
		     u64 key, u32 src_ep, unsigned int q);
void vnet_fw_chan_count(struct vnet_fw_nic *nic, struct vnet_fw_send_chan *ch,
			bool counted);
void vnet_fw_chan_set_state(struct vnet_fw_nic *nic, struct vnet_fw_peer *p,
			    struct vnet_fw_send_chan *ch, u8 to);
void vnet_fw_start_return(struct vnet_fw_nic *nic, struct vnet_fw_peer *p,
			  struct vnet_fw_send_chan *ch, u8 reason);
void vnet_fw_try_return(struct vnet_fw_nic *nic, struct vnet_fw_peer *p,
			struct vnet_fw_send_chan *ch);
void vnet_fw_set_took(struct vnet_fw_peer *p, u32 ep, bool took);
void vnet_fw_xmit_data(struct vnet_fw_nic *nic, struct vnet_fw_peer *p, u32 c);
void vnet_fw_resend(struct vnet_fw_nic *nic, struct vnet_fw_peer *p, u32 c,
		    u32 seq, bool resumed);
void vnet_fw_retransmit(struct vnet_fw_nic *nic, struct vnet_fw_peer *p,
			u32 c, bool resumed);
bool vnet_fw_chan_refused_too_long(const struct vnet_fw_nic *nic,
				   const struct vnet_fw_send_chan *ch);
void vnet_fw_xmit_ack(struct vnet_fw_nic *nic, struct vnet_fw_peer *p,
		      u8 type, u8 channel, u32 seq, u32 stamp, u8 status);
void vnet_fw_rx_ack(struct vnet_fw_nic *nic, struct vnet_fw_peer *p, u32 c,
		    u32 seq, u32 stamp, u8 status);
void vnet_fw_peer_fail(struct vnet_fw_nic *nic, struct vnet_fw_peer *p);
void vnet_fw_rx_nack(struct vnet_fw_nic *nic, struct vnet_fw_peer *p, u32 c,
		     u32 seq, u32 stamp, u8 reason, u32 incarnation);

/* rtt.c */
u64 vnet_fw_rto(const struct vnet_fw_nic *nic, const struct vnet_fw_peer *p);
void vnet_fw_rtt_reset(struct vnet_fw_peer *p);
void vnet_fw_rtt_answered(struct vnet_fw_nic *nic, struct vnet_fw_peer *p,
			  struct vnet_fw_send_chan *ch, u32 stamp, bool took);

/* receive.c */
bool vnet_fw_csum_ok(const u8 *pkt, u32 len);
bool vnet_fw_get_msg(const struct vnet_wire_msg *w, u32 src_nic,
		     struct vnet_desc *m);
bool vnet_fw_rx_in_order(struct vnet_fw_nic *nic, struct vnet_fw_peer *p,
			 const struct vnet_wire_hdr *h);
void vnet_fw_rx_answer(struct vnet_fw_nic *nic, struct vnet_fw_peer *p,
		       const struct vnet_wire_hdr *h,
		       struct vnet_fw_outcome out);

/* pipeline.c */
void vnet_fw_pipe_reset(struct vnet_fw_pipe *pipe);
void vnet_fw_pipe_alone(struct vnet_fw_peer *p, u32 len, u64 rtt);
void vnet_fw_pipe_sent(struct vnet_fw_peer *p, struct vnet_fw_send_chan *ch);
void vnet_fw_pipe_answered(struct vnet_fw_peer *p,
			   const struct vnet_fw_send_chan *ch, u32 stamp,
			   u32 len, u64 rtt);
void vnet_fw_pipe_gap(struct vnet_fw_nic *nic, struct vnet_fw_peer *p,
		      struct vnet_fw_send_chan *ch, u32 seq, bool last);
u32 vnet_fw_pipe_frag(struct vnet_fw_nic *nic, struct vnet_fw_peer *p,
		      u32 len, u32 room);

/* train_tx.c */
bool vnet_fw_fits_packet(const struct vnet_fw_nic *nic,
			 const struct vnet_fw_peer *p, u32 len);
enum vnet_return_reason vnet_fw_frag_load(struct vnet_fw_nic *nic,
					  struct vnet_fw_peer *p,
					  struct vnet_fw_send_chan *ch);
void vnet_fw_train_begin(struct vnet_fw_send_chan *ch, u32 seq);
void vnet_fw_xmit_frag(struct vnet_fw_nic *nic, struct vnet_fw_peer *p,
		       u32 c, u32 seq);
bool vnet_fw_frag_out(const struct vnet_fw_send_chan *ch, u32 seq);
void vnet_fw_frag_acked(struct vnet_fw_nic *nic, struct vnet_fw_peer *p,
			u32 c, u32 seq);
void vnet_fw_train_unpause(struct vnet_fw_nic *nic, struct vnet_fw_peer *p,
			   u32 c);
void vnet_fw_trains_unpause(struct vnet_fw_nic *nic);
bool vnet_fw_train_rewind(struct vnet_fw_nic *nic, struct vnet_fw_peer *p,
			  u32 c, u32 seq);
u32 vnet_fw_trains_retire(struct vnet_fw_ep *ep, struct vnet_frame *frame);

/* train_rx.c */
void vnet_fw_rx_frag(struct vnet_fw_nic *nic, struct vnet_fw_peer *p,
		     const struct vnet_wire_hdr *h,
		     const struct vnet_fw_bytes *payload, u32 sum);
u32 vnet_fw_frag_packet_len(const struct vnet_wire_hdr *h, u32 len);
void vnet_fw_train_drop(struct vnet_fw_nic *nic, struct vnet_fw_train *t);
void vnet_fw_trains_drop_peer(struct vnet_fw_nic *nic, struct vnet_fw_peer *p);
void vnet_fw_trains_drop_ep(struct vnet_fw_nic *nic,
			    const struct vnet_fw_ep *ep);
void vnet_fw_trains_drop_all(struct vnet_fw_nic *nic);
void vnet_fw_trains_expire(struct vnet_fw_nic *nic);

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
