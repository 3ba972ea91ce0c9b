// SPDX-License-Identifier: GPL-2.0
/*
 * What a chaos process asks of the driver that it must refuse: endpoints
 * made twice on a file or with another ABI, calls on a file without one,
 * translations, segments and mappings out of bounds, descriptors spoiled
 * in every field the firmware checks, commands unknown or of the wrong
 * size, pointers to nothing, and the administrator's ioctls asked by a
 * user.  Each refusal must carry the errno Documentation/vnet/abi.rst
 * gives, or ENODEV once the endpoint's NIC is gone (c_gone(): only the
 * chaos pair's NICs ever go); anything else, success included, is a
 * violation.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "torture_chaos.h"

void c_create_bad(struct chaos *c, struct c_ep *e)
{
	struct vnet_ep_create req = { .abi_version = VNET_ABI_VERSION };
	int fd, err, way = t_below(&c->rng, 6);
	uint64_t tag = 1;
	char b[16] = "";
	void *p;

	if (way == 0) {
		/* One endpoint per file. */
		if (e)
			c_expect(c, T_OP_CREATE_BAD,
				 c_ioctl(e->fd, VNET_IOC_EP_CREATE, &req),
				 EBUSY, T_END);
		return;
	}
	fd = open(VNET_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return;
	switch (way) {
	case 1:
		req.abi_version = VNET_ABI_VERSION + 1 + t_below(&c->rng, 9);
		err = c_ioctl(fd, VNET_IOC_EP_CREATE, &req);
		c_expect(c, T_OP_CREATE_BAD, err, EPROTO, T_END);
		break;
	case 2:
		req.nic_id = 1000 + t_below(&c->rng, 60000);
		err = c_ioctl(fd, VNET_IOC_EP_CREATE, &req);
		c_expect(c, T_OP_CREATE_BAD, err, ENODEV, T_END);
		break;
	case 3:
		err = c_ioctl(fd, VNET_IOC_EP_CREATE, c->hole);
		c_expect(c, T_OP_CREATE_BAD, err, EFAULT, T_END);
		break;
	case 4:
		/* No endpoint on the file yet. */
		err = c_ioctl(fd, VNET_IOC_SET_TAG, &tag);
		c_expect(c, T_OP_CREATE_BAD, err, EINVAL, T_END);
		p = mmap(NULL, VNET_FRAME_SIZE, PROT_READ, MAP_SHARED, fd, 0);
		c_expect(c, T_OP_CREATE_BAD, p == MAP_FAILED ? errno : 0,
			 EINVAL, T_END);
		if (p != MAP_FAILED)
			munmap(p, VNET_FRAME_SIZE);
		break;
	default:
		c_expect(c, T_OP_CREATE_BAD, read(fd, b, sizeof(b)) < 0 ?
			 errno : 0, EINVAL, T_END);
		c_expect(c, T_OP_CREATE_BAD, write(fd, b, sizeof(b)) < 0 ?
			 errno : 0, EINVAL, T_END);
		break;
	}
	close(fd);
}

void c_map_bad(struct chaos *c, struct c_ep *e)
{
	struct vnet_map map = {
		.slot = t_below(&c->rng, 4),
		.name = { t_below(&c->rng, 5), t_below(&c->rng, 48) },
		.tag = t_rand(&c->rng),
	};

	switch (t_below(&c->rng, 3)) {
	case 0:
		map.slot = VNET_MAX_SLOTS + t_below(&c->rng, 1u << 30);
		break;
	case 1:
		map.name.nic = VNET_MAX_NIC_ID + 1 + t_below(&c->rng, 1u << 30);
		break;
	default:
		map.__pad = 1 + t_below(&c->rng, 1000);
		break;
	}
	c_expect(c, T_OP_MAP_BAD, c_ioctl(e->fd, VNET_IOC_MAP, &map), EINVAL,
		 c_gone(e), T_END);
}

void c_set_seg_bad(struct chaos *c, struct c_ep *e)
{
	const int op = T_OP_SET_SEG_BAD;
	struct vnet_seg seg;
	int err;

	seg.len = 1 + t_below(&c->rng, 8192);
	switch (t_below(&c->rng, 6)) {
	case 0:
		seg.addr = (uintptr_t)c->buf;
		seg.len = VNET_MAX_SEG_LEN + 1 + t_below(&c->rng, 1u << 20);
		err = c_ioctl(e->fd, VNET_IOC_SET_SEG, &seg);
		c_expect(c, op, err, EINVAL, c_gone(e), T_END);
		return;
	case 1:
		seg.addr = ~0ULL - t_below(&c->rng, 4096);
		seg.len = 4097 + t_below(&c->rng, 8192);
		err = c_ioctl(e->fd, VNET_IOC_SET_SEG, &seg);
		c_expect(c, op, err, EINVAL, c_gone(e), T_END);
		return;
	case 2:
		seg.addr = (uintptr_t)c->hole + t_below(&c->rng, 4096);
		break;
	case 3:
		seg.addr = (uintptr_t)c->ro;
		seg.len = 1 + t_below(&c->rng, 4096);
		break;
	case 4:
		/* Card memory can never be pinned. */
		if (!e->frame.addr || e->frame.len < VNET_FRAME_SIZE)
			return;
		seg.addr = (uintptr_t)e->frame.addr + t_below(&c->rng, 4096);
		seg.len = 1 + t_below(&c->rng, 4096);
		break;
	default:
		seg.addr = 0xffff888000000000ULL + t_below(&c->rng, 1u << 30);
		break;
	}
	err = c_ioctl(e->fd, VNET_IOC_SET_SEG, &seg);
	c_expect(c, op, err, EFAULT, c_gone(e), T_END);
}

void c_spoil(struct chaos *c, struct vnet_desc *d)
{
	switch (t_below(&c->rng, 7)) {
	case 0:
		d->nargs = VNET_MAX_ARGS + 1 + t_below(&c->rng, 247);
		break;
	case 1:
		/* RETURNED, REPLY or a flag that does not exist. */
		d->flags |= 1u << (2 + 2 * t_below(&c->rng, 3));
		break;
	case 2:
		d->flags = VNET_DESC_MEDIUM;
		d->len = VNET_MEDIUM_MAX + 1 + t_below(&c->rng, 1u << 20);
		break;
	case 3:
		d->flags = 0;
		d->len = 1 + t_below(&c->rng, 100);
		break;
	case 4:
		d->__reserved1[t_below(&c->rng, 6)] = 1 + t_below(&c->rng, 9);
		break;
	case 5:
		d->flags &= ~VNET_DESC_FROM_SEG;
		d->src_offset = 1 + t_below(&c->rng, 4096);
		break;
	default:
		d->slot = VNET_MAX_SLOTS + t_below(&c->rng, 1000);
		break;
	}
}

void c_mmap_bad(struct chaos *c, struct c_ep *e)
{
	struct c_ep *o = c_pick(c);
	uint64_t off = e->frame_off;
	size_t len = VNET_FRAME_SIZE;
	int flags = MAP_SHARED;
	void *p;

	switch (t_below(&c->rng, 5)) {
	case 0:
		len = 4096 * (1 + t_below(&c->rng, 2));
		break;
	case 1:
		flags = MAP_PRIVATE;
		break;
	case 2:
		off = e->staging_off;
		break;
	case 3:
		/* Another file's endpoint, by its offsets. */
		if (!o || o == e)
			return;
		off = o->frame_off;
		break;
	default:
		off = (uint64_t)t_below(&c->rng, 1u << 24) << 12;
		if (off == e->frame_off)
			return;
		break;
	}
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, flags, e->fd, off);
	c_expect(c, T_OP_MMAP_BAD, p == MAP_FAILED ? errno : 0, EINVAL,
		 c_gone(e), T_END);
	if (p != MAP_FAILED)
		munmap(p, len);
}

void c_ioctl_bad(struct chaos *c, struct c_ep *e)
{
	struct vnet_nic_info ni = { .index = 1000 + t_below(&c->rng, 1000) };
	struct vnet_attach att = { .ifname = T_IF_C, .nic_id = 77 };
	struct vnet_info info;
	uint32_t id = T_NIC_C;
	int fd;

	switch (t_below(&c->rng, 7)) {
	case 0:
		c_expect(c, T_OP_IOCTL_BAD, c_ioctl(e->fd, _IO(VNET_IOC_MAGIC,
			 0x40 + t_below(&c->rng, 0x40)), NULL), ENOTTY, T_END);
		break;
	case 1:
		/* A known command with another argument size. */
		c_expect(c, T_OP_IOCTL_BAD, c_ioctl(e->fd, _IOW(VNET_IOC_MAGIC,
			 0x03, uint32_t), &id), ENOTTY, T_END);
		break;
	case 2:
		c_expect(c, T_OP_IOCTL_BAD, c_ioctl(e->fd, VNET_IOC_EP_STAT,
			 c->hole), EFAULT, T_END);
		c_expect(c, T_OP_IOCTL_BAD, c_ioctl(e->fd, VNET_IOC_MAP,
			 c->hole), EFAULT, c_gone(e), T_END);
		break;
	case 3:
		c_expect(c, T_OP_IOCTL_BAD, c_ioctl(e->fd, VNET_IOC_INFO,
			 &info), 0, T_END);
		c_expect(c, T_OP_IOCTL_BAD, c_ioctl(e->fd, VNET_IOC_NIC_INFO,
			 &ni), ENODEV, T_END);
		break;
	case 4:
		c_expect(c, T_OP_IOCTL_BAD, c_ioctl(e->fd, VNET_IOC_PRIV_SET_ID,
			 &id), EINVAL, T_END);
		break;
	default:
		/* The network is the administrator's. */
		if (c->root)
			return;
		c_expect(c, T_OP_IOCTL_BAD, c_ioctl(e->fd, VNET_IOC_DETACH,
			 &id), EPERM, T_END);
		c_expect(c, T_OP_IOCTL_BAD, c_ioctl(e->fd, VNET_IOC_ATTACH,
			 &att), EPERM, T_END);
		fd = open(VNET_DEVICE_PATH, O_RDWR | O_CLOEXEC);
		if (fd >= 0) {
			struct vnet_priv_create pc = { .nic_id = T_NIC_A };

			c_expect(c, T_OP_IOCTL_BAD, c_ioctl(fd,
				 VNET_IOC_PRIV_CREATE, &pc), EPERM, T_END);
			close(fd);
		}
		break;
	}
}
