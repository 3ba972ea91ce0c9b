/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * libvnet internals: the endpoint and bundle objects, the token a handler
 * gets, and how the library uses descriptor fields beyond what the firmware
 * gives them meaning.
 *
 * Library wire conventions (all within the ABI; see libvnet.rst):
 *  - The firmware marks replies, received or returned, VNET_DESC_REPLY: that
 *    is how a returned reply is told from a returned request.
 *  - VNET_DESC_CREDIT on a reply without payload: the request handler did
 *    not reply; the requester gets its credit back and runs nothing.
 *  - VNET_DESC_CREDIT | VNET_DESC_MEDIUM on a reply: the destination library
 *    refused the request (no such handler); the payload is struct
 *    amvnet_reject and the requester reports it to its handler 0.
 *  - VNET_DESC_CREDIT on a bulk (XFER) request: a fragment that is not the
 *    last.  Its data lands, no handler runs, a credit reply answers it; its
 *    three arguments are the whole transfer's start offset (two words) and
 *    length.  The last fragment carries the user's arguments and runs the
 *    handler on the whole range.  Fragments of one transfer are posted
 *    back to back on one request queue, and the firmware delivers a queue in
 *    order, so the receiver only needs, per source, the run in progress.
 */
#ifndef _VNET_AM_INTERNAL_H
#define _VNET_AM_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>

#include <vnet/am.h>
#include <vnet/endpoint.h>

#define AMVNET_REJECT_MAGIC	0x414d524au	/* "AMRJ" */
#define AMVNET_FRAG_ARGS	3

/* What a refused request's credit reply carries back. */
struct amvnet_reject {
	uint32_t magic;
	uint32_t status;		/* EBADHANDLER */
	uint8_t handler;
	uint8_t nargs;
	uint8_t flags;			/* the request's MEDIUM/XFER */
	uint8_t __pad;
	uint32_t len;
	uint64_t offset;
	uint32_t args[VNET_MAX_ARGS];
};

enum amvnet_kind {
	AMV_REQUEST,
	AMV_REPLY,
	AMV_RETURNED,
};

/* The token a handler gets: one per endpoint, its handlers run one by one. */
struct amvnet_token {
	struct amvnet_ep *ep;
	struct vnet_desc d;		/* copied out of the receive queue */
	enum amvnet_kind kind;
	bool running;			/* inside the handler */
	bool replied;
	struct amvnet_returned ret;	/* AMV_RETURNED */
};

struct amvnet_xlate {
	bool inuse;
	en_t name;
	tag_t tag;
};

/* A bulk transfer from one source whose last fragment has not come yet. */
struct amvnet_run {
	en_t src;
	uint64_t start;
	uint64_t total;
	uint64_t next;			/* where the next fragment must land */
};

struct amvnet_ep {
	struct vnet_endpoint raw;
	struct amvnet_eb *eb;
	pthread_mutex_t lock;		/* AM_PAR: queues, credits, handlers */
	handler_fn_t handler[256];	/* atomic loads and stores */
	struct amvnet_xlate xlate[AMVNET_MAX_TRANSLATIONS];
	tag_t tag;
	void *seg_addr;
	uintptr_t seg_len;
	bool no_pins;			/* VNET_IOC_PIN: EOPNOTSUPP, ENOTTY */
	uint32_t nic_index;		/* for VNET_IOC_NIC_INFO */
	uint32_t credits;		/* K */
	uint32_t outstanding;		/* requests (fragments) in flight */
	struct amvnet_token tok;
	struct amvnet_run *runs;
	unsigned int nr_runs;
	unsigned int runs_cap;
	/*
	 * The user's descriptor of the bulk request read in place whose
	 * pieces this endpoint is posting, or NULL, and the destination
	 * offsets it covers; a piece of it that came back (xfer_failed) ends
	 * it (am_send.c, amv_xfer_in_place()), but one whose pin was
	 * dropped, pinned again (xfer_repins times so far), goes again
	 * (xfer_resend).  xfer_pin is the source when it is read from a pin,
	 * as long as the extent.
	 */
	const struct vnet_desc *xfer_last;
	uint64_t xfer_lo, xfer_hi;
	const void *xfer_pin;
	unsigned int xfer_repins;
	bool xfer_failed;
	bool xfer_resend;
	pid_t owner;			/* the process that allocated it */
	struct amvnet_stats st;
};

struct amvnet_eb {
	int mode;			/* AM_SEQ or AM_PAR */
	int event_mask;			/* atomic */
	int rescue_ms;			/* atomic */
	struct amvnet_ep **eps;
	unsigned int nr_eps;
	unsigned int cap;
	uint64_t waits;			/* atomic */
	uint64_t rescued;		/* atomic */
	struct amvnet_eb *next;		/* every bundle, for AM_Terminate */
};

/* The token of the handler this thread is running, or NULL. */
extern __thread struct amvnet_token *amvnet_cur_tok;

static inline bool amv_in_handler(void)
{
	return amvnet_cur_tok != NULL;
}

bool amv_initialized(void);

/* The checks every entry point makes first. */
#define AMV_CHECK_INIT()						\
	do {								\
		if (!amv_initialized())					\
			return AM_ERR_NOT_INIT;				\
	} while (0)

#define AMV_CHECK(cond, err)						\
	do {								\
		if (cond)						\
			return AM_ERR_##err;				\
	} while (0)

static inline bool amv_par(const struct amvnet_ep *ep)
{
	return ep->eb->mode == AM_PAR;
}

static inline void amv_lock(struct amvnet_ep *ep)
{
	if (amv_par(ep))
		pthread_mutex_lock(&ep->lock);
}

static inline void amv_unlock(struct amvnet_ep *ep)
{
	if (amv_par(ep))
		pthread_mutex_unlock(&ep->lock);
}

/* AM_SEQ has no lock to take: the one thread owns it. */
static inline bool amv_trylock(struct amvnet_ep *ep)
{
	return !amv_par(ep) || !pthread_mutex_trylock(&ep->lock);
}

/* am_recv.c: handle what has arrived; the caller holds the lock. */
unsigned int amv_service(struct amvnet_ep *ep);
/* am_core.c: the largest payload to @dest, per the link of @ep's NIC. */
uint32_t amv_max_payload(struct amvnet_ep *ep, en_t dest);
/* Service the other endpoints of @ep's bundle that no thread is servicing. */
void amv_service_others(struct amvnet_ep *ep);
/* am_send.c: pin the bulk source being sent again, after its pin dropped. */
bool amv_pin_again(struct amvnet_ep *ep);
/* am_send.c: answers the library sends on its own, from a handler context. */
void amv_credit_reply(struct amvnet_ep *ep, uint32_t token);
void amv_refuse(struct amvnet_ep *ep, struct amvnet_token *t, int status);

void amv_default_returned(int status, op_t opcode, void *token);
const char *amv_status_name(int status);

/* am_send.c: CLOCK_MONOTONIC in ns. */
uint64_t amv_now_ns(void);

#endif /* _VNET_AM_INTERNAL_H */
