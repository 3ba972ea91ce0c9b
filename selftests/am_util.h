/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers shared by the libvnet (AM-II) selftests. */
#ifndef _VNET_AM_SELFTEST_UTIL_H
#define _VNET_AM_SELFTEST_UTIL_H

#include <sched.h>
#include <stdbool.h>
#include <string.h>

#include <vnet/am.h>

#include "vnet_util.h"

#define AM_TAG		0x616d2d7465737400ULL	/* "am-test" */
#define AM_LIMIT_SEC	60	/* liveness guard: fail instead of hanging */

/* Two endpoints in one bundle, each mapping slot 0 to the other. */
struct am_pair {
	eb_t eb;
	ep_t a, b;
	en_t na, nb;
};

static inline int am_pair_open(struct am_pair *p, int mode)
{
	int e;

	memset(p, 0, sizeof(*p));
	e = AM_AllocateBundle(mode, &p->eb);
	if (!e)
		e = AM_AllocateEndpoint(p->eb, &p->a, &p->na);
	if (!e)
		e = AM_AllocateEndpoint(p->eb, &p->b, &p->nb);
	if (!e)
		e = AM_SetTag(p->a, AM_TAG);
	if (!e)
		e = AM_SetTag(p->b, AM_TAG);
	if (!e)
		e = AM_Map(p->a, 0, p->nb, AM_TAG);
	if (!e)
		e = AM_Map(p->b, 0, p->na, AM_TAG);
	return e;
}

/* Poll @eb until *@count reaches @want; false if that takes too long. */
static inline bool am_poll_until(eb_t eb, volatile int *count, int want)
{
	double end = vnet_now() + AM_LIMIT_SEC;
	unsigned int n = 0;

	while (__atomic_load_n(count, __ATOMIC_ACQUIRE) < want) {
		if (AM_Poll(eb) != AM_OK)
			return false;
		if (++n % 1024 == 0) {
			if (vnet_now() > end)
				return false;
			sched_yield();
		}
	}
	return true;
}

/*
 * No more locked memory for this process, even as root (which
 * CAP_IPC_LOCK would let past the limit): what it has pinned stays, but
 * the library can pin no bulk source, and sends through staging.
 */
static inline int am_no_more_pins(void)
{
	return vnet_memlock_limit(0);
}

/* What handler 0 saw, for the returned-message tests. */
#define AM_RET_MAX	64

struct am_ret_log {
	int n;
	int status[AM_RET_MAX];
	op_t opcode[AM_RET_MAX];
	en_t source[AM_RET_MAX];
	struct amvnet_returned msg[AM_RET_MAX];
	uint8_t data[AM_RET_MAX][16];	/* start of a returned payload */
	int bad;			/* interrogation calls that failed */
};

static struct am_ret_log am_ret;

static inline void am_ret_handler(int status, op_t opcode, void *token)
{
	int i = am_ret.n;

	if (i >= AM_RET_MAX)
		return;
	am_ret.status[i] = status;
	am_ret.opcode[i] = opcode;
	if (AM_GetSourceEndpoint(token, &am_ret.source[i]) ||
	    AMVNET_GetReturnedMessage(token, &am_ret.msg[i]))
		am_ret.bad++;
	if (am_ret.msg[i].data)
		memcpy(am_ret.data[i], am_ret.msg[i].data,
		       am_ret.msg[i].nbytes < 16 ? am_ret.msg[i].nbytes : 16);
	__atomic_store_n(&am_ret.n, i + 1, __ATOMIC_RELEASE);
}

/* A simple checksum that notices a moved or flipped byte. */
static inline uint32_t am_sum(const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint32_t a = 1, b = 0;
	size_t i;

	for (i = 0; i < len; i++) {
		a = (a + p[i]) % 65521;
		b = (b + a) % 65521;
	}
	return b << 16 | a;
}

static inline void am_fill(void *buf, size_t len, uint32_t seed)
{
	uint8_t *p = buf;
	size_t i;

	for (i = 0; i < len; i++) {
		seed = seed * 1103515245 + 12345;
		p[i] = (uint8_t)(seed >> 16);
	}
}

#endif /* _VNET_AM_SELFTEST_UTIL_H */
