/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A chaos process of the torture (torture_chaos.c), and the calls it makes
 * that the driver must refuse (torture_refuse.c).
 */
#ifndef _VNET_TORTURE_CHAOS_H
#define _VNET_TORTURE_CHAOS_H

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/ioctl.h>

#include <vnet/endpoint.h>

#include "torture.h"

#define C_EPS		6
#define C_GHOSTS	4
#define C_KIDS		3
#define C_BUF		(1u << 20)

struct c_map {
	uint8_t *addr;
	size_t len;
	uint32_t nic;			/* of the endpoint it maps */
};

/* A C_GUARDED body that touches what it does not know the NIC of. */
#define C_ANY_NIC	UINT32_MAX

struct c_ep {
	int fd;				/* -1: the slot is free */
	uint32_t nic;
	struct vnet_name name;
	uint64_t frame_off, staging_off;
	struct c_map frame, staging;
	uint64_t tag;
	uint32_t token;			/* of a request it took */
};

struct chaos {
	struct t_ctl *ctl;
	uint64_t rng, seed;		/* rng: the step's own, in a step */
	int slot;
	bool root;
	struct c_ep ep[C_EPS];
	struct c_map ghost[C_GHOSTS];	/* mappings whose file we closed */
	uint8_t *buf;			/* where segments come from */
	uint8_t *ro, *hole;		/* read-only; never accessible */
	pid_t kid[C_KIDS];
	/* What the racer reads while the other thread changes it. */
	int race_fd[C_EPS];
	uint8_t *race_frame[C_EPS];
	int stop;
	uint64_t race_rng;
};

extern __thread sigjmp_buf *c_guard;

void c_faulted(struct chaos *c, int sig, uint32_t nic);

/*
 * Run @body, which touches mappings of endpoints of NIC @nic; a SIGSEGV
 * or SIGBUS in it ends it there and is counted, or is a violation: see
 * c_faulted().
 */
#define C_GUARDED(c, nic, body) do {					\
	sigjmp_buf jb__;						\
	int sig__;							\
									\
	c_guard = &jb__;						\
	sig__ = sigsetjmp(jb__, 1);					\
	if (!sig__) {							\
		body;							\
	} else {							\
		c_faulted(c, sig__, nic);				\
	}								\
	c_guard = NULL;							\
} while (0)

#define c_expect(c, op, err, ...) \
	t_expect((c)->ctl, (c)->seed, op, err, __VA_ARGS__)

static inline int c_ioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? errno : 0;
}

/*
 * What a call on @e may also answer: ENODEV once its NIC is gone, which
 * only the chaos pair's ever is (the admin detaches nothing else); on
 * another NIC, nothing more (not 0: a refusal must stay one).
 */
static inline int c_gone(const struct c_ep *e)
{
	return e->nic >= T_NIC_C ? ENODEV : T_NOTHING;
}

static inline struct c_ep *c_pick(struct chaos *c)
{
	int i, k = t_below(&c->rng, C_EPS);

	for (i = 0; i < C_EPS; i++, k = (k + 1) % C_EPS)
		if (c->ep[k].fd >= 0)
			return &c->ep[k];
	return NULL;
}

void c_create_bad(struct chaos *c, struct c_ep *e);
void c_map_bad(struct chaos *c, struct c_ep *e);
void c_set_seg_bad(struct chaos *c, struct c_ep *e);
void c_spoil(struct chaos *c, struct vnet_desc *d);
void c_mmap_bad(struct chaos *c, struct c_ep *e);
void c_ioctl_bad(struct chaos *c, struct c_ep *e);

#endif /* _VNET_TORTURE_CHAOS_H */
