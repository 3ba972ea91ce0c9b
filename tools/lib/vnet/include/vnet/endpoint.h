/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Raw access to a vnet endpoint: open, map, post a descriptor, take one off
 * a receive queue, ring the doorbell.  The AM-II layer is built on this; the
 * tests and vnetctl use it directly.  One thread per struct vnet_endpoint:
 * the local indices below are not shared.
 */
#ifndef _VNET_ENDPOINT_H
#define _VNET_ENDPOINT_H

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>

#include <linux/vnet.h>

#define VNET_DEVICE_PATH	"/dev/vnet"

struct vnet_endpoint {
	int fd;
	struct vnet_name name;
	struct vnet_frame *frame;
	uint8_t *staging;
	uint64_t frame_offset;
	uint64_t staging_offset;
	uint32_t frame_size;
	uint32_t staging_size;
	uint32_t send_prod[2];		/* what we posted */
	uint32_t recv_cons[2];		/* what we consumed */
};

static inline int vnet_endpoint_open(struct vnet_endpoint *ep, uint32_t nic_id)
{
	struct vnet_ep_create req = {
		.abi_version = VNET_ABI_VERSION,
		.nic_id = nic_id,
	};
	void *frame, *staging;
	int err;

	memset(ep, 0, sizeof(*ep));
	ep->fd = open(VNET_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	if (ep->fd < 0)
		return -errno;
	if (ioctl(ep->fd, VNET_IOC_EP_CREATE, &req))
		goto fail;
	frame = mmap(NULL, req.frame_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		     ep->fd, (off_t)req.frame_offset);
	if (frame == MAP_FAILED)
		goto fail;
	staging = mmap(NULL, req.staging_size, PROT_READ | PROT_WRITE,
		       MAP_SHARED, ep->fd, (off_t)req.staging_offset);
	if (staging == MAP_FAILED) {
		err = -errno;
		munmap(frame, req.frame_size);
		close(ep->fd);
		return err;
	}
	ep->name = req.name;
	ep->frame = frame;
	ep->staging = staging;
	ep->frame_offset = req.frame_offset;
	ep->staging_offset = req.staging_offset;
	ep->frame_size = req.frame_size;
	ep->staging_size = req.staging_size;
	return 0;
fail:
	err = -errno;
	close(ep->fd);
	return err;
}

static inline void vnet_endpoint_close(struct vnet_endpoint *ep)
{
	if (ep->staging)
		munmap(ep->staging, ep->staging_size);
	if (ep->frame)
		munmap(ep->frame, ep->frame_size);
	close(ep->fd);
	ep->fd = -1;
}

/*
 * A tag nobody can guess: 64 bits from getrandom(), never VNET_TAG_NONE or
 * VNET_TAG_ANY.  Whoever learns it can send to the endpoint, so show it only
 * to those who should.  0 or -errno.
 */
static inline int vnet_tag_random(uint64_t *tag)
{
	ssize_t n;

	do {
		n = getrandom(tag, sizeof(*tag), 0);
		if (n < 0)
			return -errno;
		if (n != (ssize_t)sizeof(*tag))
			return -EIO;
	} while (*tag == VNET_TAG_NONE || *tag == VNET_TAG_ANY);
	return 0;
}

static inline int vnet_endpoint_set_tag(struct vnet_endpoint *ep, uint64_t tag)
{
	return ioctl(ep->fd, VNET_IOC_SET_TAG, &tag) ? -errno : 0;
}

static inline int vnet_endpoint_map(struct vnet_endpoint *ep, uint32_t slot,
				    struct vnet_name name, uint64_t tag)
{
	struct vnet_map map = { .slot = slot, .name = name, .tag = tag };

	return ioctl(ep->fd, VNET_IOC_MAP, &map) ? -errno : 0;
}

static inline void *vnet_endpoint_slot(struct vnet_endpoint *ep, unsigned int q,
				       uint32_t index)
{
	return ep->staging +
	       VNET_STAGING_SLOT(q, index & (VNET_QUEUE_DEPTH - 1));
}

/* Room to post on send queue @q (VNET_Q_REQ_SEND or VNET_Q_REP_SEND)? */
static inline int vnet_endpoint_can_post(struct vnet_endpoint *ep,
					 unsigned int q)
{
	uint32_t cons = __atomic_load_n(&ep->frame->cons[q].val,
					__ATOMIC_ACQUIRE);

	return ep->send_prod[q] - cons < VNET_QUEUE_DEPTH;
}

/*
 * Post @d (and @len bytes of @payload for a medium message) on send queue
 * @q.  Returns -EAGAIN when the queue is full.  The doorbell is rung only
 * when the firmware said it sleeps.
 */
static inline int vnet_endpoint_post(struct vnet_endpoint *ep, unsigned int q,
				     const struct vnet_desc *d,
				     const void *payload, uint32_t len)
{
	uint32_t prod = ep->send_prod[q];

	if (!vnet_endpoint_can_post(ep, q))
		return -EAGAIN;
	if (len) {
		if (len > VNET_MEDIUM_MAX)
			return -EINVAL;
		memcpy(vnet_endpoint_slot(ep, q, prod), payload, len);
	}
	ep->frame->queue[q][prod & (VNET_QUEUE_DEPTH - 1)] = *d;
	ep->send_prod[q] = ++prod;
	__atomic_store_n(&ep->frame->prod[q].val, prod, __ATOMIC_RELEASE);
	/* Pairs with the firmware's barrier between NEED_WAKEUP and its recheck. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&ep->frame->hdr.flags, __ATOMIC_RELAXED) &
	    VNET_FRAME_NEED_WAKEUP)
		ioctl(ep->fd, VNET_IOC_KICK);
	return 0;
}

/*
 * Has the firmware taken the entry of send queue @q that made send_prod[q]
 * @n, and every one before it?  Until then an XFER from the segment
 * (VNET_DESC_FROM_SEG) may still read its source range: it is taken once
 * delivered or returned.
 */
static inline int vnet_endpoint_taken(struct vnet_endpoint *ep, unsigned int q,
				      uint32_t n)
{
	uint32_t cons = __atomic_load_n(&ep->frame->cons[q].val,
					__ATOMIC_ACQUIRE);

	return (int32_t)(cons - n) >= 0;
}

/* The next message on receive queue @q, or NULL; valid until consumed. */
static inline const struct vnet_desc *
vnet_endpoint_peek(struct vnet_endpoint *ep, unsigned int q)
{
	unsigned int i = q - VNET_Q_REQ_RECV;
	uint32_t prod = __atomic_load_n(&ep->frame->prod[q].val,
					__ATOMIC_ACQUIRE);

	if (prod == ep->recv_cons[i])
		return NULL;
	return &ep->frame->queue[q][ep->recv_cons[i] & (VNET_QUEUE_DEPTH - 1)];
}

static inline const void *vnet_endpoint_payload(struct vnet_endpoint *ep,
						unsigned int q)
{
	return vnet_endpoint_slot(ep, q, ep->recv_cons[q - VNET_Q_REQ_RECV]);
}

static inline void vnet_endpoint_consume(struct vnet_endpoint *ep,
					 unsigned int q)
{
	unsigned int i = q - VNET_Q_REQ_RECV;

	__atomic_store_n(&ep->frame->cons[q].val, ++ep->recv_cons[i],
			 __ATOMIC_RELEASE);
}

/* Sleep until a receive queue holds a message: 1, 0 on timeout, or -errno. */
static inline int vnet_endpoint_wait(struct vnet_endpoint *ep, int timeout_ms)
{
	struct pollfd pfd = { .fd = ep->fd, .events = POLLIN };
	int n = poll(&pfd, 1, timeout_ms);

	if (n < 0)
		return -errno;
	return n;
}

#endif /* _VNET_ENDPOINT_H */
