/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * vnet: virtual networks for Active Messages.
 *
 * This header is the whole user/kernel ABI: the /dev/vnet ioctls, the layout
 * of a mapped endpoint frame, the message descriptor and the reasons a
 * message is returned to its sender.  Everything here is fixed width and
 * explicitly padded so 32- and 64-bit processes share it.
 */
#ifndef _UAPI_LINUX_VNET_H
#define _UAPI_LINUX_VNET_H

#include <linux/types.h>
#include <linux/ioctl.h>

/* Bumped on any incompatible change; EP_CREATE refuses other versions. */
#define VNET_ABI_VERSION	1

#define VNET_FRAME_MAGIC	0x564e4554	/* "VNET" */

#define VNET_QUEUE_DEPTH	16	/* entries per queue, a power of two */
#define VNET_MAX_ARGS		8	/* argument words of a message */
#define VNET_MAX_SLOTS		256	/* translation table entries */
#define VNET_MEDIUM_MAX		8192	/* bytes of a medium payload */
#define VNET_XFER_MAX		1048576	/* bytes of one bulk (XFER) message */
#define VNET_MAX_NIC_ID		65535
#define VNET_MAX_FRAMES		256	/* endpoint frames of one NIC */
#define VNET_MAX_SEG_LEN	(256ULL << 20)	/* bytes of a bulk segment */

/* A tag of VNET_TAG_NONE accepts nothing, VNET_TAG_ANY accepts every tag. */
#define VNET_TAG_NONE		0ULL
#define VNET_TAG_ANY		(~0ULL)

/* An endpoint's global name: the NIC it lives on and its index there. */
struct vnet_name {
	__u32 nic;
	__u32 ep;
};

enum vnet_queue_id {
	VNET_Q_REQ_SEND,
	VNET_Q_REP_SEND,
	VNET_Q_REQ_RECV,
	VNET_Q_REP_RECV,
	VNET_NR_QUEUES,
};

/* Why the firmware handed a message back to its sender. */
enum vnet_return_reason {
	VNET_RET_NONE,
	VNET_RET_BAD_TAG,	/* destination's tag does not match */
	VNET_RET_NO_SLOT,	/* translation slot not mapped */
	VNET_RET_NO_ENDPOINT,	/* destination endpoint does not exist */
	VNET_RET_BAD_DESC,	/* malformed descriptor */
	VNET_RET_BAD_TOKEN,	/* reply to no (or an already answered) request */
	VNET_RET_UNREACHABLE,	/* destination NIC never answered */
	VNET_RET_BAD_SEGMENT,	/* bulk transfer outside the peer's segment */
	VNET_RET_TOO_LARGE,	/* needs fragments the link's MTU cannot carry */
	VNET_RET_BUSY,		/* destination refused it for busy_timeout_ms */
	VNET_RET_SOURCE_GONE,	/* its source's pin was dropped: not */
				/* delivered, may be pinned and sent again */
	VNET_RET_NR,
};

/* vnet_desc.flags */
#define VNET_DESC_MEDIUM	0x01	/* payload in the entry's staging slot */
#define VNET_DESC_XFER		0x02	/* payload lands in the peer's segment */
						/* at offset, not in staging */
#define VNET_DESC_RETURNED	0x04	/* set by the firmware: returned message */
#define VNET_DESC_CREDIT	0x08	/* a reply that only hands back a */
					/* request credit: run no handler */
#define VNET_DESC_REPLY		0x10	/* set by the firmware: the message */
					/* is (or was sent as) a reply */
#define VNET_DESC_FROM_SEG	0x20	/* XFER: the payload is read from the */
					/* sender's own segment at src_offset */
#define VNET_DESC_FROM_PIN	0x40	/* XFER: the payload is read from */
					/* memory the sender pinned */
					/* (VNET_IOC_PIN), at the address */
					/* src_offset */
#define VNET_DESC_USER_FLAGS	(VNET_DESC_MEDIUM | VNET_DESC_XFER | \
				 VNET_DESC_CREDIT | VNET_DESC_FROM_SEG | \
				 VNET_DESC_FROM_PIN)

/*
 * One queue entry.  On send the user fills handler, nargs, flags, args, and
 * slot (requests) or token (replies), plus len/offset for payloads and
 * src_offset for an XFER from its own segment (VNET_DESC_FROM_SEG).  On
 * receive the firmware fills everything: peer is the source endpoint, tag the
 * tag the message carried and token what a reply to it must quote.  A
 * returned message comes back on the reply receive queue with
 * VNET_DESC_RETURNED, status set, and peer naming the intended destination.
 */
struct vnet_desc {
	__u8 handler;
	__u8 nargs;
	__u8 flags;
	__u8 status;			/* enum vnet_return_reason */
	__u16 slot;			/* request: translation index */
	__u16 __reserved0;
	__u32 len;			/* payload bytes */
	__u32 token;			/* reply: token of the request */
	__u64 offset;			/* XFER: offset in peer's segment */
	struct vnet_name peer;
	__u64 tag;
	__u32 args[VNET_MAX_ARGS];
	__u64 src_offset;		/* FROM_SEG: offset in own segment; */
					/* FROM_PIN: the sender's address */
	__u64 __reserved1[6];
};

/* A queue index alone on its cache line, so producer and consumer never share one. */
struct vnet_index {
	__u32 val;
	__u32 __pad[15];
};

/* vnet_frame_hdr.flags, written by the firmware */
#define VNET_FRAME_NEED_WAKEUP	0x01	/* firmware sleeps: KICK after posting */

struct vnet_frame_hdr {
	__u32 magic;
	__u32 abi_version;
	__u32 flags;
	__u32 __pad0;
	struct vnet_name name;
	__u64 __pad1[5];
};

/*
 * The mapped endpoint.  Free running 32-bit indices, masked with
 * VNET_QUEUE_DEPTH - 1 on use.  The user produces on the send queues and
 * consumes on the receive queues; the firmware does the opposite and never
 * trusts a value the user could have written.
 */
struct vnet_frame {
	struct vnet_frame_hdr hdr;
	struct vnet_index prod[VNET_NR_QUEUES];
	struct vnet_index cons[VNET_NR_QUEUES];
	__u8 __pad[1024 - 64 - 2 * VNET_NR_QUEUES * 64];
	struct vnet_desc queue[VNET_NR_QUEUES][VNET_QUEUE_DEPTH];
};

#define VNET_FRAME_SIZE		12288	/* sizeof(struct vnet_frame), page rounded */

/*
 * The staging area holds one medium payload slot per queue entry: entry i of
 * queue q uses bytes [VNET_STAGING_SLOT(q, i), + VNET_MEDIUM_MAX).
 */
#define VNET_STAGING_SLOT(q, i) \
	(((__u64)(q) * VNET_QUEUE_DEPTH + (i)) * VNET_MEDIUM_MAX)
#define VNET_STAGING_SIZE	VNET_STAGING_SLOT(VNET_NR_QUEUES, 0)

/* ioctls on /dev/vnet */

struct vnet_info {
	__u32 abi_version;
	__u32 nr_nics;
	__u32 frame_size;
	__u32 staging_size;
	__u32 queue_depth;
	__u32 max_slots;
	__u32 medium_max;
	__u32 xfer_max;			/* VNET_XFER_MAX; 0: XFER up to medium_max */
	__u64 max_seg_len;
};

struct vnet_nic_info {
	__u32 index;			/* in: 0 .. nr_nics - 1 */
	__u32 nic_id;
	__u32 frames;
	__u32 resident;
	__u32 endpoints;
	__u32 max_payload;		/* largest XFER payload its link */
					/* carries (medium: up to 8 KiB of it) */
	char name[16];
};

struct vnet_ep_create {
	__u32 abi_version;		/* in: VNET_ABI_VERSION */
	__u32 nic_id;			/* in */
	struct vnet_name name;		/* out */
	__u64 frame_offset;		/* out: mmap offset of the frame */
	__u64 staging_offset;		/* out: mmap offset of the staging area */
	__u32 frame_size;		/* out: mmap length of the frame */
	__u32 staging_size;		/* out */
};

struct vnet_map {
	__u32 slot;
	__u32 __pad;
	struct vnet_name name;
	__u64 tag;
};

/*
 * The endpoint's segment: user memory that bulk (XFER) messages land in.  It
 * is pinned while registered; len 0 unregisters it.
 */
struct vnet_seg {
	__u64 addr;
	__u64 len;
};

/*
 * Pin [addr, addr + len) of the caller's memory as a source of XFERs from
 * the endpoint (VNET_DESC_FROM_PIN), or find it pinned already.  Up to
 * VNET_NR_PINS ranges stay pinned, each up to VNET_MAX_SEG_LEN bytes,
 * until the caller's mapping of any page of them changes, the endpoint
 * needs the room for another, or it is closed; len 0 drops them all.
 */
struct vnet_pin {
	__u64 addr;
	__u64 len;
	__u32 flags;			/* none yet: must be 0 */
	__u32 __pad;			/* must be 0 */
};

#define VNET_NR_PINS		16

enum vnet_ep_state {
	VNET_EP_NONRESIDENT,
	VNET_EP_LOADING,
	VNET_EP_RESIDENT,
	VNET_EP_UNLOADING,
};

struct vnet_ep_stat {
	__u32 state;			/* enum vnet_ep_state */
	__s32 frame;			/* -1 when not resident */
	__u64 tag;
	__u64 sent;
	__u64 received;
	__u64 returned;
	__u64 rejected;			/* bad descriptors seen */
	__u64 faults;
	__u64 evictions;
};

/*
 * Privileged (CAP_NET_ADMIN): put a NIC on an Ethernet interface, and tell
 * it which MAC address each peer NIC id lives at.  A NIC attached with
 * VNET_NIC_ID_ANY is unnumbered: it has a placeholder id from the top of
 * the range and takes no endpoints until its mapper numbers it.
 */
#define VNET_NIC_ID_ANY		0xffffffffu

struct vnet_attach {
	char ifname[16];
	__u32 nic_id;			/* in: id or VNET_NIC_ID_ANY; out: */
					/* id, or the placeholder */
	__u32 frames;			/* in: 2 .. VNET_MAX_FRAMES, 0: frames=; out: frames */
};

struct vnet_route {
	__u32 nic_id;			/* the local NIC */
	__u32 peer_id;			/* the remote NIC */
	__u8 mac[6];
	__u8 __pad[2];
};

struct vnet_route_list {
	__u32 nic_id;
	__u32 count;			/* in: room at routes; out: how many */
	__u64 routes;			/* user pointer to struct vnet_route[] */
};

/*
 * A NIC's privileged endpoint (CAP_NET_ADMIN): what its mapper daemon
 * talks through.  PRIV_CREATE makes a /dev/vnet file the privileged
 * endpoint of an attached NIC, one per NIC.  It has no frame and runs no
 * handlers: it sends and receives mapper datagrams, a wire type of their
 * own that never reaches any other endpoint, with write() and read() of a
 * struct vnet_mapper_pkt followed by its payload, one datagram per call;
 * poll() says when one can be read.  Datagrams may be lost, as on any
 * Ethernet.  PRIV_SET_ID numbers the NIC (vnetN follows); ROUTE_ADD,
 * ROUTE_DEL and ROUTE_LIST on it act on its NIC's routes only.  Making one
 * needs CAP_NET_ADMIN; then the file is the capability.
 */
#define VNET_MAPPER_MTU		1024	/* payload bytes of a mapper datagram */

struct vnet_priv_create {
	__u32 nic_id;			/* in */
	__u32 mtu;			/* out: the largest datagram the link */
					/* carries, up to VNET_MAPPER_MTU */
	__u8 mac[6];			/* out: the NIC's Ethernet address */
	__u8 __pad[2];			/* all but nic_id zero on the way in */
};

struct vnet_mapper_pkt {
	__u8 mac[6];			/* write: to, ff:ff:ff:ff:ff:ff for */
					/* every NIC on the segment; read: from */
	__u16 len;			/* payload bytes that follow */
};

#define VNET_IOC_MAGIC		0xb5

#define VNET_IOC_INFO		_IOR(VNET_IOC_MAGIC, 0x00, struct vnet_info)
#define VNET_IOC_NIC_INFO	_IOWR(VNET_IOC_MAGIC, 0x01, struct vnet_nic_info)
#define VNET_IOC_EP_CREATE	_IOWR(VNET_IOC_MAGIC, 0x02, struct vnet_ep_create)
#define VNET_IOC_SET_TAG	_IOW(VNET_IOC_MAGIC, 0x03, __u64)
#define VNET_IOC_MAP		_IOW(VNET_IOC_MAGIC, 0x04, struct vnet_map)
#define VNET_IOC_UNMAP		_IOW(VNET_IOC_MAGIC, 0x05, __u32)
#define VNET_IOC_KICK		_IO(VNET_IOC_MAGIC, 0x06)
#define VNET_IOC_EP_STAT	_IOR(VNET_IOC_MAGIC, 0x07, struct vnet_ep_stat)
#define VNET_IOC_SET_SEG	_IOW(VNET_IOC_MAGIC, 0x08, struct vnet_seg)
#define VNET_IOC_PIN		_IOW(VNET_IOC_MAGIC, 0x09, struct vnet_pin)
#define VNET_IOC_ATTACH		_IOWR(VNET_IOC_MAGIC, 0x10, struct vnet_attach)
#define VNET_IOC_DETACH		_IOW(VNET_IOC_MAGIC, 0x11, __u32)
#define VNET_IOC_ROUTE_ADD	_IOW(VNET_IOC_MAGIC, 0x12, struct vnet_route)
#define VNET_IOC_ROUTE_DEL	_IOW(VNET_IOC_MAGIC, 0x13, struct vnet_route)
#define VNET_IOC_ROUTE_LIST	_IOWR(VNET_IOC_MAGIC, 0x14, struct vnet_route_list)
#define VNET_IOC_PRIV_CREATE	_IOWR(VNET_IOC_MAGIC, 0x20, struct vnet_priv_create)
/* On a privileged endpoint: the NIC's new id.  EBUSY while it has endpoints. */
#define VNET_IOC_PRIV_SET_ID	_IOW(VNET_IOC_MAGIC, 0x21, __u32)

#endif /* _UAPI_LINUX_VNET_H */
