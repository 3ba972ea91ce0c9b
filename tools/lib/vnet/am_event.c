// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libvnet: events.  AM_WaitSema is the AM-II semaphore: it sleeps until a
 * message is in one of the bundle's receive queues, then polls.
 *
 * The sleep is poll(2) on the endpoints' files.  The driver reports POLLIN
 * while a receive queue holds an entry, reading the queue indices without
 * faulting the endpoint in, and the firmware wakes the file's waiters when
 * it delivers into an empty queue.  poll(2) is level-triggered and checks
 * every file again after registering for wake-ups, so a message that
 * arrives before the sleep ends it at once.
 *
 * Because of that, a thread per endpoint can each sleep on its own bundle:
 * the threads whose endpoints are not on the card cost nothing while they
 * wait, and when one wakes, its AM_Poll faults its endpoint in -- that
 * thread sleeps in the fault while the others keep running.
 *
 * Safety net.  Two wake-ups the driver does not deliver were seen (see
 * Documentation/vnet/libvnet.rst): a message the firmware returns to its
 * sender wakes nobody, and a delivery that races with the consumer emptying
 * the queue can be left unannounced.  The second only happens while the
 * waiter is going to sleep, so the wait is cut into slices that start at
 * 1 ms and double up to rescue_ms; after each, poll(2) looks at the queues
 * again by itself.  A lost wake-up then costs about a millisecond (a late
 * return at most rescue_ms) instead of a hang.  AMVNET_GetWaitStats counts
 * the waits that ended at such a look.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <time.h>

#include "am_internal.h"

int AM_GetEventMask(eb_t eb, int *mask)
{
	AMV_CHECK_INIT();
	AMV_CHECK(!eb || !mask, BAD_ARG);
	*mask = __atomic_load_n(&eb->event_mask, __ATOMIC_RELAXED);
	return AM_OK;
}

int AM_SetEventMask(eb_t eb, int mask)
{
	AMV_CHECK_INIT();
	AMV_CHECK(!eb, BAD_ARG);
	AMV_CHECK(mask < 0 || mask >= AM_NUMEVENTMASKS, BAD_ARG);
	__atomic_store_n(&eb->event_mask, mask, __ATOMIC_RELAXED);
	return AM_OK;
}

int AMVNET_SetWaitRescue(eb_t eb, int rescue_ms)
{
	AMV_CHECK_INIT();
	AMV_CHECK(!eb || rescue_ms < 0, BAD_ARG);
	__atomic_store_n(&eb->rescue_ms, rescue_ms, __ATOMIC_RELAXED);
	return AM_OK;
}

int AMVNET_GetWaitStats(eb_t eb, uint64_t *waits, uint64_t *rescued)
{
	AMV_CHECK_INIT();
	AMV_CHECK(!eb || !waits || !rescued, BAD_ARG);
	*waits = __atomic_load_n(&eb->waits, __ATOMIC_RELAXED);
	*rescued = __atomic_load_n(&eb->rescued, __ATOMIC_RELAXED);
	return AM_OK;
}

static int64_t amv_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/*
 * Sleep until a file of @fds is readable.  Returns 0, 1 if the message was
 * found at a safety-net look (poll(2) checks the files once more when its
 * timeout runs out), or -errno (EINTR: a signal).
 */
static int amv_sleep(struct pollfd *fds, unsigned int n, int rescue_ms)
{
	int slice = rescue_ms ? 1 : -1;
	int64_t deadline = 0;
	unsigned int i;
	int r;

	for (;;) {
		for (i = 0; i < n; i++)
			fds[i].revents = 0;
		if (slice > 0)
			deadline = amv_now_us() + 1000 * (int64_t)slice;
		r = poll(fds, n, slice);
		if (r < 0)
			return -errno;
		if (r > 0)
			break;
		if (slice > 0 && slice < rescue_ms)
			slice = 2 * slice < rescue_ms ? 2 * slice : rescue_ms;
	}
	for (i = 0; i < n; i++)
		if (fds[i].revents & (POLLERR | POLLNVAL))
			return -EBADF;
	return slice > 0 && amv_now_us() >= deadline;
}

int AM_WaitSema(eb_t eb)
{
	struct pollfd stack[16], *fds = stack;
	unsigned int i, n;
	int r;

	AMV_CHECK_INIT();
	AMV_CHECK(!eb, BAD_ARG);
	AMV_CHECK(amv_in_handler(), RESOURCE);
	/* AMUDP aborts here; a library should not. */
	AMV_CHECK(__atomic_load_n(&eb->event_mask, __ATOMIC_RELAXED) ==
		  AM_NOEVENTS, RESOURCE);
	n = eb->nr_eps;
	AMV_CHECK(!n, RESOURCE);	/* nothing could ever wake us */
	if (n > sizeof(stack) / sizeof(stack[0])) {
		fds = calloc(n, sizeof(*fds));
		AMV_CHECK(!fds, RESOURCE);
	}
	for (i = 0; i < n; i++) {
		fds[i].fd = eb->eps[i]->raw.fd;
		fds[i].events = POLLIN;
	}
	r = amv_sleep(fds, n, __atomic_load_n(&eb->rescue_ms, __ATOMIC_RELAXED));
	if (fds != stack)
		free(fds);
	if (r < 0 && r != -EINTR)
		return AM_ERR_RESOURCE;
	__atomic_fetch_add(&eb->waits, 1, __ATOMIC_RELAXED);
	if (r > 0)
		__atomic_fetch_add(&eb->rescued, 1, __ATOMIC_RELAXED);
	/* As AMUDP: run the handlers of what woke us before returning. */
	return AM_Poll(eb);
}

int AM_Wait(eb_t eb)
{
	return AM_WaitSema(eb);
}
