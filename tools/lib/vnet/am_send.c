// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libvnet: requests and replies -- credits, the implicit poll, bulk
 * fragments, and the replies the library sends on its own.
 *
 * Credits.  An endpoint may have K requests in flight; every request
 * (every bulk fragment) takes one and gets it back when its reply, or the
 * request itself, returns.  K is at most a queue's depth, so a request
 * holding a credit always finds room in the request send queue, and the
 * replies it brings back always fit in the reply receive queue.  A request
 * without a credit polls its endpoint, then the rest of its bundle, and
 * finally sleeps in poll(2) on the bundle's files until a reply arrives.
 *
 * Replies never wait for credits, only for room in the reply send queue,
 * which the firmware drains first on every visit.
 *
 * Bulk data.  Up to AM_MaxMedium() bytes travel in the send entry's staging
 * slot, as a medium payload does.  More are read in place as their
 * fragments go out: from the sender's own segment (VNET_DESC_FROM_SEG),
 * or from anywhere else in its memory, which the kernel pins for it
 * (VNET_IOC_PIN, asked again before every transfer: the kernel keeps the
 * pin until the memory's mapping changes, so this costs a lookup, and a
 * remapped source is pinned afresh, VNET_DESC_FROM_PIN).  They go as one
 * message for a reply or up to VNET_XFER_MAX of a request,
 * several of VNET_XFER_MAX each for a larger request, up to AM_MaxLong(),
 * one after the other, the first that comes back ending it; the call
 * returns once the firmware has taken the last entry -- the
 * messages are delivered, or have come back -- so that the source may be
 * written again, as AM-II promises when a bulk call returns.  A larger
 * request whose source cannot be pinned goes as consecutive messages of a
 * staging slot each (amv_xfer()).
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>

#include "am_internal.h"

static inline void amv_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__asm__ __volatile__("pause");
#endif
}

/*
 * Waiting for the firmware (room in the reply send queue): spin briefly,
 * then yield, then nap.
 */
static void amv_backoff(unsigned int *spins)
{
	struct timespec ts = { 0, 50000 };

	++*spins;
	if (*spins < 32)
		amv_cpu_relax();
	else if (*spins < 512)
		sched_yield();
	else
		nanosleep(&ts, NULL);
}

/*
 * Spin this long for a reply before sleeping: about what a sleep and a
 * wake-up cost.  Longer only helps when every thread has a CPU to itself;
 * where the NIC's thread or the peer shares ours, spinning delays the very
 * reply we wait for.
 */
#define AMV_SPIN_NS	10000

uint64_t amv_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * Waiting for a reply: sleep in poll(2) on the files of the bundle for up
 * to a millisecond, then service the endpoints that have something.  poll
 * does not fault an endpoint in, so a thread waiting for credits on an
 * endpoint that is not on the card leaves the frames to the others; the
 * timeout is the safety net against a missed wake-up (am_event.c).
 */
static void amv_sleep_bundle(struct amvnet_ep *ep)
{
	struct amvnet_eb *eb = ep->eb;
	struct pollfd stack[16], *fds = stack;
	unsigned int i, n = eb->nr_eps;
	uint64_t start;
	int r;

	if (n > sizeof(stack) / sizeof(stack[0])) {
		fds = calloc(n, sizeof(*fds));
		if (!fds) {
			fds = stack;
			n = sizeof(stack) / sizeof(stack[0]);
		}
	}
	for (i = 0; i < n; i++) {
		fds[i].fd = eb->eps[i]->raw.fd;
		fds[i].events = POLLIN;
		fds[i].revents = 0;
	}
	start = amv_now_ns();
	r = poll(fds, n, 1);
	ep->st.credit_sleeps++;
	if (amv_now_ns() - start >= 1000000)
		ep->st.credit_sleeps_full++;
	if (r > 0) {
		for (i = 0; i < n; i++) {
			struct amvnet_ep *e = eb->eps[i];

			if (!(fds[i].revents & POLLIN))
				continue;
			if (e == ep) {
				amv_service(ep);	/* our lock is held */
			} else if (amv_trylock(e)) {
				amv_service(e);
				amv_unlock(e);
			}
		}
	}
	if (fds != stack)
		free(fds);
}

/* Post on the reply send queue, waiting for room; the caller holds the lock. */
static void amv_post_reply(struct amvnet_ep *ep, struct vnet_desc *d,
			   const void *payload, uint32_t len)
{
	unsigned int spins = 0;

	while (vnet_endpoint_post(&ep->raw, VNET_Q_REP_SEND, d, payload,
				  len) == -EAGAIN)
		amv_backoff(&spins);
}

void amv_credit_reply(struct amvnet_ep *ep, uint32_t token)
{
	struct vnet_desc d = {
		.flags = VNET_DESC_CREDIT,
		.token = token,
	};

	amv_post_reply(ep, &d, NULL, 0);
	ep->st.credit_replies_sent++;
}

void amv_refuse(struct amvnet_ep *ep, struct amvnet_token *t, int status)
{
	struct vnet_desc d = {
		.flags = VNET_DESC_CREDIT | VNET_DESC_MEDIUM,
		.token = t->d.token,
		.len = sizeof(struct amvnet_reject),
	};
	struct amvnet_reject r = {
		.magic = AMVNET_REJECT_MAGIC,
		.status = (uint32_t)status,
		.handler = t->d.handler,
		.nargs = t->d.nargs,
		.flags = t->d.flags & (VNET_DESC_MEDIUM | VNET_DESC_XFER),
		.len = t->d.len,
		.offset = t->d.offset,
	};
	unsigned int i;

	for (i = 0; i < VNET_MAX_ARGS; i++)
		r.args[i] = t->d.args[i];
	amv_post_reply(ep, &d, &r, sizeof(r));
	ep->st.credit_replies_sent++;
}

/*
 * Requests poll implicitly; then, while no credit is free, keep servicing
 * this endpoint and the rest of the bundle -- spinning at first, since a
 * reply is usually microseconds away, yielding now and then to the NIC's
 * thread and the peer that may share our CPU, then asleep in poll(2).  The
 * caller holds the lock.
 */
static void amv_get_credit(struct amvnet_ep *ep)
{
	uint64_t until = 0;
	unsigned int spins = 0;

	amv_service(ep);
	if (ep->outstanding < ep->credits)
		return;
	ep->st.credit_waits++;
	while (ep->outstanding >= ep->credits) {
		if (amv_service(ep))
			continue;
		if (!until)
			until = amv_now_ns() + AMV_SPIN_NS;
		if (until == 1) {
			amv_sleep_bundle(ep);
			continue;
		}
		amv_service_others(ep);
		if (++spins % 8) {
			amv_cpu_relax();
		} else {
			sched_yield();
			if (amv_now_ns() > until)
				until = 1;	/* spun enough: sleep from now on */
		}
	}
}

static void amv_post_request(struct amvnet_ep *ep, const struct vnet_desc *d,
			     const void *payload, uint32_t len)
{
	unsigned int spins = 0;

	amv_get_credit(ep);
	/* Never full while credits <= depth; stay correct if it ever is. */
	while (vnet_endpoint_post(&ep->raw, VNET_Q_REQ_SEND, d, payload,
				  len) == -EAGAIN)
		amv_backoff(&spins);
	ep->outstanding++;
	if (ep->outstanding > ep->st.max_outstanding)
		ep->st.max_outstanding = ep->outstanding;
	ep->st.requests_sent++;
}

/* Does [src, src + nbytes) lie in @ep's segment?  Overflow-safe. */
static bool amv_in_seg(const struct amvnet_ep *ep, const void *src,
		       uint64_t nbytes)
{
	uintptr_t at = (uintptr_t)src, base = (uintptr_t)ep->seg_addr;

	return ep->seg_addr && at >= base && at - base <= ep->seg_len &&
	       nbytes <= ep->seg_len - (at - base);
}

/*
 * Where a bulk source of @nbytes at @src is read from in place:
 * VNET_DESC_FROM_SEG, VNET_DESC_FROM_PIN once the kernel has it pinned,
 * or 0 -- through staging -- when it cannot be (no MMU notifiers in the
 * kernel, the locked-memory limit, memory that is not there).
 */
static uint8_t amv_in_place(struct amvnet_ep *ep, const void *src,
			    uint64_t nbytes)
{
	struct vnet_pin p = { .addr = (uintptr_t)src, .len = nbytes };

	if (amv_in_seg(ep, src, nbytes))
		return VNET_DESC_FROM_SEG;
	if (ep->no_pins || nbytes > VNET_MAX_SEG_LEN)
		return 0;
	if (!ioctl(ep->raw.fd, VNET_IOC_PIN, &p))
		return VNET_DESC_FROM_PIN;
	/* A kernel or module that will never pin: ask no more. */
	if (errno == EOPNOTSUPP || errno == ENOTTY)
		ep->no_pins = true;
	return 0;
}

/*
 * Times a bulk request pins its source again after a pin was dropped under
 * it: reclaim, migration or compaction drop a pin once in a while, while
 * memory that its owner keeps unmapping and remapping would drop it every
 * time, and that transfer fails with the status of the last return.  Each
 * time, a mapping that changes while it is being pinned (EAGAIN) is tried
 * a few times more.
 */
#define AMV_REPINS	8
#define AMV_PIN_TRIES	4

bool amv_pin_again(struct amvnet_ep *ep)
{
	struct vnet_pin p = {
		.addr = (uintptr_t)ep->xfer_pin,
		.len = ep->xfer_hi - ep->xfer_lo,
	};
	unsigned int tries;

	if (!ep->xfer_pin || ep->xfer_repins >= AMV_REPINS)
		return false;
	ep->xfer_repins++;
	for (tries = 0; tries < AMV_PIN_TRIES; tries++) {
		if (!ioctl(ep->raw.fd, VNET_IOC_PIN, &p))
			return true;
		if (errno != EAGAIN)
			return false;
	}
	return false;
}

/* A bulk message read in place (@how): the descriptor says where. */
static void amv_read_in_place(struct amvnet_ep *ep, struct vnet_desc *d,
			      uint8_t how, const void *src, uint32_t nbytes,
			      uint64_t dest_offset)
{
	d->flags |= how;
	d->len = nbytes;
	d->offset = dest_offset;
	d->src_offset = (uintptr_t)src;
	if (how == VNET_DESC_FROM_SEG)
		d->src_offset -= (uintptr_t)ep->seg_addr;
}

/*
 * Post @len bytes at @src, to go to @dest_offset: read in place (@how),
 * or, with @how 0, through a staging slot.
 */
static void amv_post_piece(struct amvnet_ep *ep, struct vnet_desc *d,
			   const uint8_t *src, uint32_t len,
			   uint64_t dest_offset, uint8_t how)
{
	if (how) {
		amv_read_in_place(ep, d, how, src, len, dest_offset);
		amv_post_request(ep, d, NULL, 0);
		return;
	}
	d->len = len;
	d->offset = dest_offset;
	amv_post_request(ep, d, src, len);
}

/*
 * A piece of a bulk request larger than one message carries, but the
 * last: it carries VNET_DESC_CREDIT and the transfer's extent instead of
 * the user's arguments; the last one, @last, runs the handler.  The
 * firmware checks each against the destination segment.
 */
static struct vnet_desc amv_piece(const struct vnet_desc *last,
				   uint64_t nbytes, uint64_t dest_offset)
{
	struct vnet_desc d = {
		.handler = last->handler,
		.nargs = AMVNET_FRAG_ARGS,
		.flags = VNET_DESC_XFER | VNET_DESC_CREDIT,
		.slot = last->slot,
	};

	d.args[0] = (uint32_t)dest_offset;
	d.args[1] = (uint32_t)(dest_offset >> 32);
	d.args[2] = (uint32_t)nbytes;
	return d;
}

/*
 * A bulk request larger than a staging slot from outside the segment:
 * pieces of @frag bytes -- a staging slot, or, to a link too narrow for
 * the firmware's fragments, what one packet carries -- in order, back to
 * back on this endpoint's request queue (the lock is held throughout).
 */
static void amv_xfer(struct amvnet_ep *ep, struct vnet_desc *last,
		     const uint8_t *src, uint64_t nbytes, uint64_t dest_offset,
		     uint32_t frag)
{
	uint64_t done = 0;

	while (nbytes - done > frag) {
		struct vnet_desc d = amv_piece(last, nbytes, dest_offset);

		amv_post_piece(ep, &d, src + done, frag, dest_offset + done,
			       0);
		done += frag;
	}
	amv_post_piece(ep, last, src ? src + done : NULL,
		       (uint32_t)(nbytes - done), dest_offset + done, 0);
}

/*
 * Until the firmware has taken the entry just posted on send queue @q: it
 * reads its source from the segment until the message is delivered or
 * comes back.  Outside a handler the endpoint is serviced meanwhile, since
 * the destination may be this very endpoint, waiting for room that only
 * this thread can make.
 */
static void amv_wait_taken(struct amvnet_ep *ep, unsigned int q)
{
	uint32_t n = ep->raw.send_prod[q];
	unsigned int spins = 0;

	while (!vnet_endpoint_taken(&ep->raw, q, n)) {
		if (!amv_in_handler() && amv_service(ep))
			continue;
		amv_backoff(&spins);
	}
}

/*
 * A bulk request read in place (@how), larger than VNET_XFER_MAX: pieces of
 * VNET_XFER_MAX, each posted once the firmware is done with the one before
 * (delivered, or back), so that one that came back is seen before the next
 * goes.  A piece that comes back (busy, unreachable, outside a segment)
 * ends the transfer there, reported to handler 0 once, with the user's
 * handler and arguments (amv_returned()); posting the rest would have the
 * receiver run its handler on the last piece alone.  Returns once the
 * firmware is done with the last piece posted.
 */
static void amv_xfer_in_place(struct amvnet_ep *ep, struct vnet_desc *last,
			      uint8_t how, const uint8_t *src, uint64_t nbytes,
			      uint64_t dest_offset)
{
	uint64_t done = 0;

	ep->xfer_last = last;
	ep->xfer_lo = dest_offset;
	ep->xfer_hi = dest_offset + nbytes;
	ep->xfer_pin = how == VNET_DESC_FROM_PIN ? src : NULL;
	ep->xfer_repins = 0;
	ep->xfer_failed = false;
	ep->xfer_resend = false;
	while (nbytes - done > VNET_XFER_MAX) {
		struct vnet_desc d = amv_piece(last, nbytes, dest_offset);

		amv_post_piece(ep, &d, src + done, VNET_XFER_MAX,
			       dest_offset + done, how);
		/*
		 * The firmware writes a piece's return before it lets the
		 * entry go (abi.rst), so a piece that came back is seen
		 * here, before the next is posted.
		 */
		amv_wait_taken(ep, VNET_Q_REQ_SEND);
		amv_service(ep);
		if (ep->xfer_failed)
			break;
		/* Came back whole, its source pinned again: once more. */
		if (ep->xfer_resend) {
			ep->xfer_resend = false;
			continue;
		}
		done += VNET_XFER_MAX;
	}
	while (!ep->xfer_failed) {
		amv_post_piece(ep, last, src + done, (uint32_t)(nbytes - done),
			       dest_offset + done, how);
		amv_wait_taken(ep, VNET_Q_REQ_SEND);
		/* Its return, if it came back, while xfer_last names it. */
		amv_service(ep);
		if (!ep->xfer_resend)
			break;
		ep->xfer_resend = false;
	}
	ep->xfer_last = NULL;
	ep->xfer_pin = NULL;
}

enum amv_cat { AMV_SHORT, AMV_MEDIUM, AMV_LONG };

static uint8_t amv_cat_flags(enum amv_cat cat)
{
	if (cat == AMV_MEDIUM)
		return VNET_DESC_MEDIUM;
	return cat == AMV_LONG ? VNET_DESC_XFER : 0;
}

/* Argument checks shared by requests and replies. */
static int amv_check_msg(handler_t handler, enum amv_cat cat,
			 const void *src, int nbytes, uintptr_t dest_offset,
			 int numargs)
{
	int max = cat == AMV_LONG ? AM_MaxLong() : AM_MaxMedium();

	/* Handler 0 is the error handler: no message may run it. */
	AMV_CHECK(!handler, BAD_ARG);
	AMV_CHECK(numargs < 0 || numargs > AM_MaxShort(), BAD_ARG);
	if (cat == AMV_SHORT)
		return AM_OK;
	AMV_CHECK(nbytes < 0 || nbytes > max, BAD_ARG);
	AMV_CHECK(!src && nbytes, BAD_ARG);
	AMV_CHECK(cat == AMV_LONG &&
		  dest_offset > UINTPTR_MAX - (uintptr_t)nbytes, BAD_ARG);
	return AM_OK;
}

static int amv_request(ep_t ep, int index, handler_t handler,
		       enum amv_cat cat, void *src, int nbytes,
		       uintptr_t dest_offset, int numargs, va_list ap)
{
	struct vnet_desc d = { 0 };
	uint8_t how = 0;
	int i, err;

	AMV_CHECK_INIT();
	AMV_CHECK(!ep || index < 0 || index >= AMVNET_MAX_TRANSLATIONS,
		  BAD_ARG);
	err = amv_check_msg(handler, cat, src, nbytes, dest_offset, numargs);
	if (err)
		return err;
	/* A handler may only reply; a request could wait for credits. */
	AMV_CHECK(amv_in_handler(), RESOURCE);

	d.handler = handler;
	d.nargs = (uint8_t)numargs;
	d.flags = amv_cat_flags(cat);
	d.slot = (uint16_t)index;
	for (i = 0; i < numargs; i++)
		d.args[i] = (uint32_t)va_arg(ap, int);

	amv_lock(ep);
	if (cat == AMV_LONG && nbytes > AM_MaxMedium())
		how = amv_in_place(ep, src, (uint64_t)nbytes);
	if (how) {
		amv_xfer_in_place(ep, &d, how, src, (uint64_t)nbytes,
				  dest_offset);
	} else if (cat == AMV_LONG) {
		amv_xfer(ep, &d, src, (uint64_t)nbytes, dest_offset,
			 amv_max_payload(ep, ep->xlate[index].name));
	} else {
		d.len = cat == AMV_MEDIUM ? (uint32_t)nbytes : 0;
		amv_post_request(ep, &d, src, d.len);
	}
	amv_unlock(ep);
	return AM_OK;
}

static int amv_reply(void *token, handler_t handler, enum amv_cat cat,
		     void *src, int nbytes, uintptr_t dest_offset, int numargs,
		     va_list ap)
{
	struct amvnet_token *t = token;
	struct vnet_desc d = { 0 };
	uint8_t how = 0;
	int i, err;

	AMV_CHECK_INIT();
	AMV_CHECK(!t, BAD_ARG);
	err = amv_check_msg(handler, cat, src, nbytes, dest_offset, numargs);
	if (err)
		return err;
	/* Only from inside the request's handler, in its thread, once. */
	AMV_CHECK(t != amvnet_cur_tok || !t->running, RESOURCE);
	AMV_CHECK(t->kind != AMV_REQUEST || t->replied, RESOURCE);
	/*
	 * A reply is one message (the firmware takes one per request
	 * token): past a staging slot, read in place, and no more than
	 * the firmware's VNET_XFER_MAX.
	 */
	AMV_CHECK(cat == AMV_LONG && nbytes > VNET_XFER_MAX, BAD_ARG);
	if (cat == AMV_LONG && nbytes > AM_MaxMedium()) {
		how = amv_in_place(t->ep, src, (uint64_t)nbytes);
		AMV_CHECK(!how, BAD_ARG);
	}

	d.handler = handler;
	d.nargs = (uint8_t)numargs;
	d.flags = amv_cat_flags(cat);
	d.token = t->d.token;
	d.len = cat == AMV_SHORT ? 0 : (uint32_t)nbytes;
	d.offset = cat == AMV_LONG ? dest_offset : 0;
	for (i = 0; i < numargs; i++)
		d.args[i] = (uint32_t)va_arg(ap, int);
	/*
	 * The dispatcher holds the endpoint's lock while the handler runs.
	 * A reply read in place waits here, in the handler, for the
	 * firmware to take it: after the handler, the handler's own code
	 * could write the source the firmware still reads, and the endpoint,
	 * whose handlers run one at a time, would gain nothing meanwhile
	 * (libvnet.rst, "Bulk transfers").
	 */
	if (how) {
		amv_read_in_place(t->ep, &d, how, src, (uint32_t)nbytes,
				  dest_offset);
		amv_post_reply(t->ep, &d, NULL, 0);
		amv_wait_taken(t->ep, VNET_Q_REP_SEND);
	} else {
		amv_post_reply(t->ep, &d, src, d.len);
	}
	t->replied = true;
	t->ep->st.replies_sent++;
	return AM_OK;
}

int AMVNET_RequestVA(ep_t request_endpoint, int reply_endpoint,
		     handler_t handler, int numargs, va_list argptr)
{
	return amv_request(request_endpoint, reply_endpoint, handler,
			   AMV_SHORT, NULL, 0, 0, numargs, argptr);
}

int AMVNET_RequestIVA(ep_t request_endpoint, int reply_endpoint,
		      handler_t handler, void *source_addr, int nbytes,
		      int numargs, va_list argptr)
{
	return amv_request(request_endpoint, reply_endpoint, handler,
			   AMV_MEDIUM, source_addr, nbytes, 0, numargs, argptr);
}

int AMVNET_RequestXferVA(ep_t request_endpoint, int reply_endpoint,
			 handler_t handler, void *source_addr, int nbytes,
			 uintptr_t dest_offset, int numargs, va_list argptr)
{
	return amv_request(request_endpoint, reply_endpoint, handler,
			   AMV_LONG, source_addr, nbytes, dest_offset, numargs,
			   argptr);
}

int AMVNET_ReplyVA(void *token, handler_t handler, int numargs,
		   va_list argptr)
{
	return amv_reply(token, handler, AMV_SHORT, NULL, 0, 0, numargs,
			 argptr);
}

int AMVNET_ReplyIVA(void *token, handler_t handler, void *source_addr,
		    int nbytes, int numargs, va_list argptr)
{
	return amv_reply(token, handler, AMV_MEDIUM, source_addr, nbytes, 0,
			 numargs, argptr);
}

int AMVNET_ReplyXferVA(void *token, handler_t handler, void *source_addr,
		       int nbytes, uintptr_t dest_offset, int numargs,
		       va_list argptr)
{
	return amv_reply(token, handler, AMV_LONG, source_addr, nbytes,
			 dest_offset, numargs, argptr);
}

int AMVNET_Request(ep_t request_endpoint, int reply_endpoint,
		   handler_t handler, int numargs, ...)
{
	va_list ap;
	int ret;

	va_start(ap, numargs);
	ret = AMVNET_RequestVA(request_endpoint, reply_endpoint, handler,
			       numargs, ap);
	va_end(ap);
	return ret;
}

int AMVNET_RequestI(ep_t request_endpoint, int reply_endpoint,
		    handler_t handler, void *source_addr, int nbytes,
		    int numargs, ...)
{
	va_list ap;
	int ret;

	va_start(ap, numargs);
	ret = AMVNET_RequestIVA(request_endpoint, reply_endpoint, handler,
				source_addr, nbytes, numargs, ap);
	va_end(ap);
	return ret;
}

int AMVNET_RequestXfer(ep_t request_endpoint, int reply_endpoint,
		       handler_t handler, void *source_addr, int nbytes,
		       uintptr_t dest_offset, int numargs, ...)
{
	va_list ap;
	int ret;

	va_start(ap, numargs);
	ret = AMVNET_RequestXferVA(request_endpoint, reply_endpoint, handler,
				   source_addr, nbytes, dest_offset, numargs,
				   ap);
	va_end(ap);
	return ret;
}

int AMVNET_Reply(void *token, handler_t handler, int numargs, ...)
{
	va_list ap;
	int ret;

	va_start(ap, numargs);
	ret = AMVNET_ReplyVA(token, handler, numargs, ap);
	va_end(ap);
	return ret;
}

int AMVNET_ReplyI(void *token, handler_t handler, void *source_addr,
		  int nbytes, int numargs, ...)
{
	va_list ap;
	int ret;

	va_start(ap, numargs);
	ret = AMVNET_ReplyIVA(token, handler, source_addr, nbytes, numargs, ap);
	va_end(ap);
	return ret;
}

int AMVNET_ReplyXfer(void *token, handler_t handler, void *source_addr,
		     int nbytes, uintptr_t dest_offset, int numargs, ...)
{
	va_list ap;
	int ret;

	va_start(ap, numargs);
	ret = AMVNET_ReplyXferVA(token, handler, source_addr, nbytes,
				 dest_offset, numargs, ap);
	va_end(ap);
	return ret;
}
