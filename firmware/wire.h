/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The vnet wire format: what one NIC's firmware sends another inside an
 * Ethernet frame of the vnet EtherType.  Big-endian throughout.
 *
 * Every packet starts with struct vnet_wire_hdr.  A DATA packet carries one
 * whole message on one logical channel: struct vnet_wire_msg, then the
 * payload.  An ACK or NACK answers the DATA packet with the same channel
 * and sequence number and echoes its stamp; ACK status VNET_RET_NONE means
 * delivered, any other return reason means the receiver handed the message
 * back -- but VNET_RET_SOURCE_GONE, which only the sender decides: an ACK
 * that carries it is a bad frame.  A packet older than the one the channel
 * expects is answered with an ACK of the one before that, echoing its
 * stamp: it says how far the channel got (since version 5, for trains'
 * windows).
 *
 * A message larger than one packet carries travels as a train of FRAG
 * packets on one channel, each with a sequence number of its own and
 * answered on its own, as a DATA packet is: struct vnet_wire_frag, then
 * (first fragment only) struct vnet_wire_msg, whose len is the whole
 * message's, then the fragment's payload.  Every fragment names its train
 * by the sequence number of the first and says where its bytes go; the
 * last carries the CRC32C of the whole payload.  The fragments' sizes are
 * the sender's choice, fragment by fragment, from VNET_WIRE_FRAG_MIN up
 * (the last one's from 1) to what the link carries.  The
 * receiver decides on the first fragment (ACK NONE: go on, with room set
 * aside for the whole message; ACK with a reason: handed back; NACK: try
 * again), lands the others where the message goes, and makes the message
 * visible on the last one's ACK.  NACK RESTART asks for the train again
 * from its first fragment: the receiver no longer has it.
 *
 * A RESUME says that an endpoint of its sender, which NACKed a DATA packet
 * "not resident", is on the card again: struct vnet_wire_resume follows
 * the header, whose channel, flags, sequence number and stamp are zero.
 * It answers no packet in particular and is never answered: the sender of
 * the NACKed message retransmits it at once rather than on its timer, and
 * the timer still covers a RESUME that is lost.
 *
 * A MAPPER packet is a datagram between the mapper daemons of two NICs (or
 * from one to every NIC on the segment): struct vnet_wire_mapper and its
 * payload follow the header, whose src_nic is the sender's id (it may not
 * have one that means anything yet), dst_nic VNET_WIRE_NIC_ANY, and the
 * rest zero.  The firmware checks its length and checksum and hands it to
 * the host for the NIC's privileged endpoint; it never touches channels,
 * endpoints or routes, and needs no route: a mapper learns the segment
 * from these packets.
 *
 * Every packet carries the incarnation of the sender's route to the
 * receiver: random, new each time the sender boots or adds the route, so
 * a channel restarted under a new one can tell its packets from any of an
 * older one.
 */
#ifndef _VNET_FW_WIRE_H
#define _VNET_FW_WIRE_H

#include "vnet_fw_env.h"
#include "linux/vnet.h"

#define VNET_WIRE_VERSION	5
#define VNET_ETH_P_VNET		0x88b5	/* default EtherType */

enum vnet_wire_type {
	VNET_WIRE_DATA = 1,
	VNET_WIRE_ACK,
	VNET_WIRE_NACK,
	VNET_WIRE_RESUME,
	VNET_WIRE_MAPPER,
	VNET_WIRE_FRAG,
};

/*
 * dst_nic of a MAPPER packet.  It is also the valid id 65535: the type,
 * not this value, is what makes a packet a datagram for the mapper.
 */
#define VNET_WIRE_NIC_ANY	0xffff

/* vnet_wire_hdr.flags */
#define VNET_WIRE_SYNC		0x01	/* sender's channel restarts at seq */

/* Why a receiver could not take a DATA packet now; the sender retries. */
enum vnet_nack_reason {
	VNET_NACK_QUEUE_FULL,
	VNET_NACK_NOT_RESIDENT,
	/* No state for this channel (it rebooted): send again with SYNC. */
	VNET_NACK_RESYNC,
	/* No train for this fragment (dropped): send the first one again. */
	VNET_NACK_RESTART,
	VNET_NACK_NR,
};

/*
 * Channel numbers a sender may use.  Each NIC sends on as many as it was
 * loaded with and keeps receive state for all of them, so that NICs loaded
 * with different counts talk to each other.
 */
#define VNET_WIRE_CHANNELS	64

struct vnet_wire_hdr {
	u8 version;
	u8 type;
	u8 channel;		/* below VNET_WIRE_CHANNELS */
	u8 flags;
	__be16 src_nic;
	__be16 dst_nic;
	__be32 incarnation;	/* of the sender's route to the receiver */
	__be32 seq;
	__be32 stamp;		/* DATA: this transmission; ACK/NACK: echoed */
	__be32 csum;		/* CRC32C of the packet with this field zero */
};

struct vnet_wire_msg {
	__be32 src_ep;
	__be32 dst_ep;
	__be64 tag;
	u8 queue;		/* VNET_Q_REQ_SEND or VNET_Q_REP_SEND */
	u8 handler;
	u8 nargs;
	u8 flags;		/* VNET_DESC_USER_FLAGS */
	__be32 key_hi;		/* request: the sender's reply key; */
	__be32 len;
	__be32 key_lo;		/* reply: that of the request it answers */
	__be64 offset;
	__be32 args[VNET_MAX_ARGS];
};

/* vnet_wire_frag.flags */
#define VNET_FRAG_FIRST		0x01	/* struct vnet_wire_msg follows */
#define VNET_FRAG_LAST		0x02	/* csum is the whole payload's */

struct vnet_wire_frag {
	__be32 train;		/* sequence number of the first fragment */
	__be32 offset;		/* of this fragment's bytes in the payload */
	__be32 csum;		/* LAST: CRC32C of the whole payload; else 0 */
	__be16 len;		/* bytes in it, VNET_WIRE_FRAG_MIN (the last */
				/* one: 1) to VNET_MEDIUM_MAX */
	u8 flags;
	u8 __reserved;		/* zero */
};

struct vnet_wire_ack {
	u8 status;		/* ACK: enum vnet_return_reason; NACK: vnet_nack_reason */
	u8 __reserved[3];
};

struct vnet_wire_resume {
	__be32 ep;		/* the sender's endpoint that is back */
	u8 __reserved[4];	/* zero */
};

struct vnet_wire_mapper {
	__be16 len;		/* payload bytes, up to VNET_MAPPER_MTU */
	u8 __reserved[2];	/* zero */
};

#define VNET_WIRE_DATA_LEN	(sizeof(struct vnet_wire_hdr) + \
				 sizeof(struct vnet_wire_msg))
#define VNET_WIRE_ACK_LEN	(sizeof(struct vnet_wire_hdr) + \
				 sizeof(struct vnet_wire_ack))
#define VNET_WIRE_RESUME_LEN	(sizeof(struct vnet_wire_hdr) + \
				 sizeof(struct vnet_wire_resume))
#define VNET_WIRE_MAPPER_LEN	(sizeof(struct vnet_wire_hdr) + \
				 sizeof(struct vnet_wire_mapper))
#define VNET_WIRE_FRAG_LEN	(sizeof(struct vnet_wire_hdr) + \
				 sizeof(struct vnet_wire_frag))
#define VNET_WIRE_FIRST_LEN	(VNET_WIRE_FRAG_LEN + sizeof(struct vnet_wire_msg))
#define VNET_WIRE_MAX		(VNET_WIRE_FIRST_LEN + VNET_MEDIUM_MAX)
/*
 * Trains need a link of at least this MTU (IPv6's minimum, which any
 * Ethernet meets): a fragment then carries VNET_WIRE_FRAG_MIN (1168)
 * bytes or more, and a train of VNET_XFER_MAX at most 898 fragments.
 * Every fragment but the last must carry that much: a receiver counts on
 * it to bound how long a train may take (train_rx.c), and a sender on
 * such a link never sends less.
 */
#define VNET_WIRE_TRAIN_MTU	1280
#define VNET_WIRE_FRAG_MIN	(VNET_WIRE_TRAIN_MTU - VNET_WIRE_FIRST_LEN)

/*
 * The checksum of every packet: CRC32C, chained by passing the previous
 * result as @crc (0 to start).  The portable table needs
 * vnet_fw_crc32c_init() once first; vnet_fw_crc32c_selftest(vnet_crc32c)
 * says whether the implementation in use gives the known values.
 */
void vnet_fw_crc32c_init(void);
u32 vnet_crc32c(u32 crc, const void *data, u32 len);
/*
 * The checksum of A then B, from vnet_crc32c(0, A), vnet_crc32c(0, B) and
 * B's length: no byte read again (crc32c_cat.c).
 */
u32 vnet_crc32c_cat(u32 crc_a, u32 crc_b, u32 len_b);
bool vnet_fw_crc32c_selftest(u32 (*crc32c)(u32 crc, const void *data,
					   u32 len));

#endif /* _VNET_FW_WIRE_H */
