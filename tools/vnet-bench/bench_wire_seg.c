// SPDX-License-Identifier: GPL-2.0
/*
 * The segments of vnet-bench pingpong, bw and serve: where XFERs of more
 * than a medium payload come from and land (bench_wire.h); and with
 * --pinned, the client's memory outside its segment that they come from.
 */
#include <errno.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "bench_wire.h"

/*
 * Map @len bytes and make them @ep's segment.  The driver pins them: an
 * unprivileged user is held to RLIMIT_MEMLOCK.  Returns 0 or -errno.
 */
int wire_seg_give(struct vnet_endpoint *ep, struct wire_seg *seg,
		  uint64_t len)
{
	struct vnet_seg s = { .len = len };
	void *mem;

	seg->mem = NULL;
	seg->len = 0;
	mem = mmap(NULL, len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return -errno;
	s.addr = (uintptr_t)mem;
	if (ioctl(ep->fd, VNET_IOC_SET_SEG, &s)) {
		int err = -errno;

		munmap(mem, len);
		return err;
	}
	seg->mem = mem;
	seg->len = len;
	return 0;
}

/*
 * Map @len bytes and pin them as a source of @ep's XFERs (VNET_IOC_PIN),
 * as libvnet does a bulk source outside the segment.  Returns 0 or -errno.
 */
int wire_pin_give(struct vnet_endpoint *ep, struct wire_seg *pin,
		  uint64_t len)
{
	struct vnet_pin p = { .len = len };
	void *mem;

	pin->mem = NULL;
	pin->len = 0;
	mem = mmap(NULL, len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (mem == MAP_FAILED)
		return -errno;
	p.addr = (uintptr_t)mem;
	if (ioctl(ep->fd, VNET_IOC_PIN, &p)) {
		int err = -errno;

		munmap(mem, len);
		return err;
	}
	pin->mem = mem;
	pin->len = len;
	return 0;
}

/* After the endpoint is closed, which unpins it. */
void wire_seg_drop(struct wire_seg *seg)
{
	if (seg->mem)
		munmap(seg->mem, seg->len);
	seg->mem = NULL;
	seg->len = 0;
}
