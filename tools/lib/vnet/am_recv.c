// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libvnet: taking messages off an endpoint's receive queues and running
 * their handlers -- AM_Poll, the tokens handlers get, returned messages and
 * handler 0, and putting bulk fragments back together.
 *
 * A descriptor is copied out of the queue before its handler runs and the
 * queue entry is consumed only after the handler returns, so a medium
 * handler reads its payload in place in the entry's staging slot: no copy
 * on the receive side.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "am_internal.h"

__thread struct amvnet_token *amvnet_cur_tok;

/* Handler types by argument count: short, and medium/bulk. */
#define I32 int32_t
typedef void (*amv_s0)(void *);
typedef void (*amv_s1)(void *, I32);
typedef void (*amv_s2)(void *, I32, I32);
typedef void (*amv_s3)(void *, I32, I32, I32);
typedef void (*amv_s4)(void *, I32, I32, I32, I32);
typedef void (*amv_s5)(void *, I32, I32, I32, I32, I32);
typedef void (*amv_s6)(void *, I32, I32, I32, I32, I32, I32);
typedef void (*amv_s7)(void *, I32, I32, I32, I32, I32, I32, I32);
typedef void (*amv_s8)(void *, I32, I32, I32, I32, I32, I32, I32, I32);
typedef void (*amv_m0)(void *, void *, size_t);
typedef void (*amv_m1)(void *, void *, size_t, I32);
typedef void (*amv_m2)(void *, void *, size_t, I32, I32);
typedef void (*amv_m3)(void *, void *, size_t, I32, I32, I32);
typedef void (*amv_m4)(void *, void *, size_t, I32, I32, I32, I32);
typedef void (*amv_m5)(void *, void *, size_t, I32, I32, I32, I32, I32);
typedef void (*amv_m6)(void *, void *, size_t, I32, I32, I32, I32, I32, I32);
typedef void (*amv_m7)(void *, void *, size_t, I32, I32, I32, I32, I32, I32,
		       I32);
typedef void (*amv_m8)(void *, void *, size_t, I32, I32, I32, I32, I32, I32,
		       I32, I32);

#define A(i)	((I32)a[i])

static void amv_call_short(handler_fn_t fn, void *t, unsigned int n,
			   const uint32_t *a)
{
	switch (n) {
	case 0: ((amv_s0)fn)(t); break;
	case 1: ((amv_s1)fn)(t, A(0)); break;
	case 2: ((amv_s2)fn)(t, A(0), A(1)); break;
	case 3: ((amv_s3)fn)(t, A(0), A(1), A(2)); break;
	case 4: ((amv_s4)fn)(t, A(0), A(1), A(2), A(3)); break;
	case 5: ((amv_s5)fn)(t, A(0), A(1), A(2), A(3), A(4)); break;
	case 6: ((amv_s6)fn)(t, A(0), A(1), A(2), A(3), A(4), A(5)); break;
	case 7: ((amv_s7)fn)(t, A(0), A(1), A(2), A(3), A(4), A(5), A(6));
		break;
	default:
		((amv_s8)fn)(t, A(0), A(1), A(2), A(3), A(4), A(5), A(6), A(7));
		break;
	}
}

static void amv_call_medium(handler_fn_t fn, void *t, void *buf, size_t nb,
			    unsigned int n, const uint32_t *a)
{
	switch (n) {
	case 0: ((amv_m0)fn)(t, buf, nb); break;
	case 1: ((amv_m1)fn)(t, buf, nb, A(0)); break;
	case 2: ((amv_m2)fn)(t, buf, nb, A(0), A(1)); break;
	case 3: ((amv_m3)fn)(t, buf, nb, A(0), A(1), A(2)); break;
	case 4: ((amv_m4)fn)(t, buf, nb, A(0), A(1), A(2), A(3)); break;
	case 5: ((amv_m5)fn)(t, buf, nb, A(0), A(1), A(2), A(3), A(4)); break;
	case 6: ((amv_m6)fn)(t, buf, nb, A(0), A(1), A(2), A(3), A(4), A(5));
		break;
	case 7:
		((amv_m7)fn)(t, buf, nb, A(0), A(1), A(2), A(3), A(4), A(5),
			     A(6));
		break;
	default:
		((amv_m8)fn)(t, buf, nb, A(0), A(1), A(2), A(3), A(4), A(5),
			     A(6), A(7));
		break;
	}
}

/* Run a handler with @t as its token; data != NULL means medium or bulk. */
static void amv_run(struct amvnet_token *t, handler_fn_t fn, void *data,
		    size_t nbytes)
{
	unsigned int n = t->d.nargs > VNET_MAX_ARGS ? VNET_MAX_ARGS : t->d.nargs;

	t->running = true;
	amvnet_cur_tok = t;
	if (data)
		amv_call_medium(fn, t, data, nbytes, n, t->d.args);
	else
		amv_call_short(fn, t, n, t->d.args);
	amvnet_cur_tok = NULL;
	t->running = false;
}

static handler_fn_t amv_handler(struct amvnet_ep *ep, handler_t h)
{
	return __atomic_load_n(&ep->handler[h], __ATOMIC_ACQUIRE);
}

static int amv_status(unsigned int reason)
{
	switch (reason) {
	case VNET_RET_BAD_TAG:
		return EBADTAG;
	case VNET_RET_NO_SLOT:
		return EBADENTRY;
	case VNET_RET_NO_ENDPOINT:
		return EBADENDPOINT;
	case VNET_RET_BAD_TOKEN:
		return EREPLYREJECTED;
	case VNET_RET_UNREACHABLE:
		return EUNREACHABLE;
	case VNET_RET_BAD_SEGMENT:
	case VNET_RET_SOURCE_GONE:
		return EBADSEGOFF;
	case VNET_RET_TOO_LARGE:
		return EBADLENGTH;
	case VNET_RET_BUSY:
		return ECONGESTION;
	default:
		/* VNET_RET_BAD_DESC, and reasons newer than this library. */
		return EBADARGS;
	}
}

static op_t amv_opcode(bool reply, uint8_t flags)
{
	op_t op = reply ? AM_REPLY_M : AM_REQUEST_M;

	if (flags & VNET_DESC_XFER)
		return op + 2;
	if (flags & VNET_DESC_MEDIUM)
		return op + 1;
	return op;
}

const char *amv_status_name(int status)
{
	static const char * const names[] = {
		[EBADARGS] = "EBADARGS",
		[EBADENTRY] = "EBADENTRY",
		[EBADTAG] = "EBADTAG",
		[EBADHANDLER] = "EBADHANDLER",
		[EBADSEGOFF] = "EBADSEGOFF",
		[EBADLENGTH] = "EBADLENGTH",
		[EBADENDPOINT] = "EBADENDPOINT",
		[ECONGESTION] = "ECONGESTION",
		[EUNREACHABLE] = "EUNREACHABLE",
		[EREPLYREJECTED] = "EREPLYREJECTED",
	};

	if (status > 0 && status <= EREPLYREJECTED)
		return names[status];
	return "unknown";
}

/* Handler 0 until the application sets one: report and stop, as AMUDP does. */
void amv_default_returned(int status, op_t opcode, void *token)
{
	struct amvnet_token *t = token;
	en_t dest = t->d.peer;
	int i;

	fprintf(stderr, "libvnet: endpoint %u:%u: message to %u:%u came back: "
		"%s, opcode %d, handler %u, args",
		t->ep->raw.name.nic, t->ep->raw.name.ep, dest.nic, dest.ep,
		amv_status_name(status), opcode, t->ret.handler);
	for (i = 0; i < t->ret.numargs; i++)
		fprintf(stderr, " %" PRId32, t->ret.args[i]);
	fputs("\nlibvnet: no error handler (handler 0) set: aborting\n", stderr);
	abort();
}

static void amv_report(struct amvnet_ep *ep, struct amvnet_token *t)
{
	handler_fn_t fn = amv_handler(ep, 0);

	t->kind = AMV_RETURNED;
	t->running = true;
	amvnet_cur_tok = t;
	((amvnet_returned_fn_t)fn)(t->ret.status, t->ret.opcode, t);
	amvnet_cur_tok = NULL;
	t->running = false;
}

static void amv_credit_back(struct amvnet_ep *ep)
{
	if (ep->outstanding)
		ep->outstanding--;
}

/*
 * Is @d a piece of the bulk request read in place being posted?  Its
 * pieces are read in place and land within its extent; a piece of a
 * bulk request sent through staging before it, or of one read in place
 * to elsewhere, may come back meanwhile and is not one of them.
 */
static bool amv_in_place_piece(const struct amvnet_ep *ep,
			       const struct vnet_desc *d)
{
	return ep->xfer_last && (d->flags & VNET_DESC_XFER) &&
	       (d->flags & (VNET_DESC_FROM_SEG | VNET_DESC_FROM_PIN)) &&
	       !(d->flags & VNET_DESC_REPLY) &&
	       d->offset >= ep->xfer_lo && d->offset < ep->xfer_hi;
}

static bool amv_piece_of_xfer(const struct amvnet_ep *ep,
			      const struct vnet_desc *d)
{
	return amv_in_place_piece(ep, d) && (d->flags & VNET_DESC_CREDIT);
}

/* A message the firmware handed back to us. */
static void amv_returned(struct amvnet_ep *ep, struct amvnet_token *t,
			 void *payload)
{
	const struct vnet_desc *d = &t->d;
	const struct vnet_desc *named = d;	/* its handler and arguments */
	bool reply = d->flags & VNET_DESC_REPLY;
	unsigned int i;

	ep->st.returned++;
	if (!reply)
		amv_credit_back(ep);
	/*
	 * A piece of the bulk request being posted -- the last one too --
	 * whose pin was dropped came back undelivered (the firmware never
	 * returns one its receiver may have; part of its range may be
	 * written).  Pinned again, amv_xfer_in_place() sends it again.
	 */
	if (amv_in_place_piece(ep, d) && !ep->xfer_failed &&
	    d->status == VNET_RET_SOURCE_GONE && amv_pin_again(ep)) {
		ep->st.repinned++;
		ep->xfer_resend = true;
		return;
	}
	if (amv_piece_of_xfer(ep, d) && !ep->xfer_failed) {
		/*
		 * A piece of the bulk request read in place being posted:
		 * the sender stops there (amv_xfer_in_place()), and this is the
		 * transfer's one report, with the user's handler and arguments.
		 */
		ep->xfer_failed = true;
		named = ep->xfer_last;
	} else if (d->flags & VNET_DESC_CREDIT) {
		/* Library traffic: a bulk fragment, a credit or a refusal. */
		return;
	}
	/*
	 * A reply that came back still owes the requester its credit.  The
	 * firmware keeps the token of a reply returned for a fault of its own
	 * (outside the segment, too large, malformed), so a credit reply gets
	 * through; otherwise the requester is gone and this one comes back
	 * too, to be dropped above.
	 */
	if (reply && d->status != VNET_RET_BAD_TOKEN &&
	    d->status != VNET_RET_NO_ENDPOINT &&
	    d->status != VNET_RET_UNREACHABLE)
		amv_credit_reply(ep, d->token);

	t->ret.status = amv_status(d->status);
	t->ret.opcode = amv_opcode(reply, d->flags);
	t->ret.reason = d->status;
	t->ret.handler = named->handler;
	t->ret.numargs = named->nargs > VNET_MAX_ARGS ? VNET_MAX_ARGS :
							named->nargs;
	for (i = 0; i < VNET_MAX_ARGS; i++)
		t->ret.args[i] = (int32_t)named->args[i];
	t->ret.data = (d->flags & VNET_DESC_MEDIUM) ? payload : NULL;
	t->ret.nbytes = d->len;
	t->ret.dest_offset = (d->flags & VNET_DESC_XFER) ? d->offset : 0;
	t->ret.index = reply ? -1 : d->slot;
	amv_report(ep, t);
}

/* The destination library refused our request: tell handler 0. */
static void amv_refused(struct amvnet_ep *ep, struct amvnet_token *t,
			const struct amvnet_reject *r)
{
	unsigned int i;

	ep->st.returned++;
	t->ret.status = (int)r->status;
	t->ret.opcode = amv_opcode(false, r->flags);
	t->ret.reason = VNET_RET_NONE;
	t->ret.handler = r->handler;
	t->ret.numargs = r->nargs > VNET_MAX_ARGS ? VNET_MAX_ARGS : r->nargs;
	for (i = 0; i < VNET_MAX_ARGS; i++)
		t->ret.args[i] = (int32_t)r->args[i];
	t->ret.data = NULL;
	t->ret.nbytes = r->len;
	t->ret.dest_offset = (r->flags & VNET_DESC_XFER) ? r->offset : 0;
	t->ret.index = -1;
	amv_report(ep, t);
}

/* A handler the message names that this endpoint does not have. */
static void amv_no_handler(struct amvnet_ep *ep, struct amvnet_token *t,
			   bool reply)
{
	unsigned int i;

	t->ret.status = EBADHANDLER;
	t->ret.opcode = amv_opcode(reply, t->d.flags);
	t->ret.reason = VNET_RET_NONE;
	t->ret.handler = t->d.handler;
	t->ret.numargs = t->d.nargs > VNET_MAX_ARGS ? VNET_MAX_ARGS : t->d.nargs;
	for (i = 0; i < VNET_MAX_ARGS; i++)
		t->ret.args[i] = (int32_t)t->d.args[i];
	t->ret.data = NULL;
	t->ret.nbytes = t->d.len;
	t->ret.dest_offset = t->d.offset;
	t->ret.index = -1;
	amv_report(ep, t);
}

/* An entry of the reply receive queue. */
static void amv_reply_entry(struct amvnet_ep *ep, struct amvnet_token *t,
			    void *payload)
{
	const struct vnet_desc *d = &t->d;
	handler_fn_t fn;
	void *data = NULL;
	size_t nbytes = 0;

	if (d->flags & VNET_DESC_RETURNED) {
		amv_returned(ep, t, payload);
		return;
	}
	ep->st.replies_received++;
	amv_credit_back(ep);
	if (d->flags & VNET_DESC_CREDIT) {
		const struct amvnet_reject *r = payload;

		if ((d->flags & VNET_DESC_MEDIUM) && d->len >= sizeof(*r) &&
		    r->magic == AMVNET_REJECT_MAGIC)
			amv_refused(ep, t, r);
		return;
	}
	t->kind = AMV_REPLY;
	fn = d->handler ? amv_handler(ep, d->handler) : NULL;
	if (!fn) {
		/* No reply to a reply: the error stays here. */
		amv_no_handler(ep, t, true);
		return;
	}
	if (d->flags & VNET_DESC_MEDIUM) {
		data = payload;
		nbytes = d->len;
	} else if (d->flags & VNET_DESC_XFER) {
		data = (uint8_t *)ep->seg_addr + d->offset;
		nbytes = d->len;
	}
	amv_run(t, fn, data, nbytes);
}

static struct amvnet_run *amv_run_find(struct amvnet_ep *ep, en_t src)
{
	unsigned int i;

	for (i = 0; i < ep->nr_runs; i++)
		if (ep->runs[i].src.nic == src.nic && ep->runs[i].src.ep == src.ep)
			return &ep->runs[i];
	return NULL;
}

/* A bulk fragment that is not the last: remember where its transfer is. */
static void amv_run_note(struct amvnet_ep *ep, const struct vnet_desc *d)
{
	uint64_t start = d->args[0] | (uint64_t)d->args[1] << 32;
	struct amvnet_run *r = amv_run_find(ep, d->peer);

	if (d->nargs != AMVNET_FRAG_ARGS)
		return;
	if (!r) {
		if (ep->nr_runs == ep->runs_cap) {
			unsigned int cap = ep->runs_cap ? 2 * ep->runs_cap : 4;
			struct amvnet_run *runs;

			runs = realloc(ep->runs, cap * sizeof(*runs));
			if (!runs)
				return;	/* the last fragment runs alone */
			ep->runs = runs;
			ep->runs_cap = cap;
		}
		r = &ep->runs[ep->nr_runs++];
		r->src = d->peer;
		r->start = UINT64_MAX;
		r->next = UINT64_MAX;
	}
	/* A first fragment, or one that does not continue the run, restarts. */
	if (d->offset == start || r->start != start || r->next != d->offset) {
		r->start = start;
		r->total = d->offset == start ? d->args[2] : 0;
	}
	r->next = d->offset + d->len;
}

/*
 * The last fragment: the whole transfer if the run from this source ends
 * exactly here, else just this fragment.  A run whose later fragments came
 * back (out of the segment) never ends here: the last fragment lies beyond
 * every failed one, so it failed too and never arrives.
 */
static void amv_run_finish(struct amvnet_ep *ep, const struct vnet_desc *d,
			   uint64_t *start, uint64_t *total)
{
	struct amvnet_run *r = amv_run_find(ep, d->peer);

	*start = d->offset;
	*total = d->len;
	if (!r)
		return;
	if (r->total && r->next == d->offset &&
	    r->start + r->total == d->offset + d->len) {
		*start = r->start;
		*total = r->total;
	}
	*r = ep->runs[--ep->nr_runs];
}

/* An entry of the request receive queue. */
static void amv_request_entry(struct amvnet_ep *ep, struct amvnet_token *t,
			      void *payload)
{
	const struct vnet_desc *d = &t->d;
	uint64_t start, total;
	handler_fn_t fn;
	void *data = NULL;
	size_t nbytes = 0;

	ep->st.requests_received++;
	t->kind = AMV_REQUEST;
	t->replied = false;
	if (d->flags & VNET_DESC_XFER) {
		if (d->flags & VNET_DESC_CREDIT) {
			amv_run_note(ep, d);
			amv_credit_reply(ep, d->token);
			return;
		}
		amv_run_finish(ep, d, &start, &total);
		data = (uint8_t *)ep->seg_addr + start;
		nbytes = (size_t)total;
	} else if (d->flags & VNET_DESC_MEDIUM) {
		data = payload;
		nbytes = d->len;
	}
	fn = d->handler ? amv_handler(ep, d->handler) : NULL;
	if (!fn) {
		amv_refuse(ep, t, EBADHANDLER);
		return;
	}
	amv_run(t, fn, data, nbytes);
	/* Every request is answered, so the requester's credit comes back. */
	if (!t->replied)
		amv_credit_reply(ep, d->token);
}

/* Take one entry off receive queue @q; false when it is empty. */
static bool amv_take(struct amvnet_ep *ep, unsigned int q)
{
	const struct vnet_desc *p = vnet_endpoint_peek(&ep->raw, q);
	struct amvnet_token *t = &ep->tok;
	void *payload;

	if (!p)
		return false;
	t->d = *p;
	payload = (void *)vnet_endpoint_payload(&ep->raw, q);
	if (q == VNET_Q_REP_RECV)
		amv_reply_entry(ep, t, payload);
	else
		amv_request_entry(ep, t, payload);
	vnet_endpoint_consume(&ep->raw, q);
	return true;
}

/*
 * Replies first: they hand back credits.  At most a queue's worth of each
 * per call, so a busy endpoint cannot keep its caller forever.
 */
unsigned int amv_service(struct amvnet_ep *ep)
{
	unsigned int n = 0, i;

	for (i = 0; i < VNET_QUEUE_DEPTH && amv_take(ep, VNET_Q_REP_RECV); i++)
		n++;
	for (i = 0; i < VNET_QUEUE_DEPTH && amv_take(ep, VNET_Q_REQ_RECV); i++)
		n++;
	return n;
}

void amv_service_others(struct amvnet_ep *ep)
{
	struct amvnet_eb *eb = ep->eb;
	unsigned int i;

	for (i = 0; i < eb->nr_eps; i++) {
		struct amvnet_ep *e = eb->eps[i];

		if (e == ep || !amv_trylock(e))
			continue;
		amv_service(e);
		amv_unlock(e);
	}
}

int AM_Poll(eb_t bundle)
{
	unsigned int i;

	AMV_CHECK_INIT();
	AMV_CHECK(!bundle, BAD_ARG);
	AMV_CHECK(amv_in_handler(), RESOURCE);
	for (i = 0; i < bundle->nr_eps; i++) {
		struct amvnet_ep *e = bundle->eps[i];

		/* Another thread servicing it is as good as us doing it. */
		if (!amv_trylock(e))
			continue;
		amv_service(e);
		amv_unlock(e);
	}
	return AM_OK;
}

/* A token, checked: only while its handler runs. */
static int amv_token(void *token, struct amvnet_token **t)
{
	AMV_CHECK_INIT();
	AMV_CHECK(!token, BAD_ARG);
	*t = token;
	AMV_CHECK(!(*t)->running, RESOURCE);
	return AM_OK;
}

int AM_GetSourceEndpoint(void *token, en_t *gan)
{
	struct amvnet_token *t;
	int err = amv_token(token, &t);

	if (err)
		return err;
	AMV_CHECK(!gan, BAD_ARG);
	*gan = t->d.peer;
	return AM_OK;
}

int AM_GetDestEndpoint(void *token, ep_t *endp)
{
	struct amvnet_token *t;
	int err = amv_token(token, &t);

	if (err)
		return err;
	AMV_CHECK(!endp, BAD_ARG);
	*endp = t->ep;
	return AM_OK;
}

int AM_GetMsgTag(void *token, tag_t *tagp)
{
	struct amvnet_token *t;
	int err = amv_token(token, &t);

	if (err)
		return err;
	AMV_CHECK(!tagp, BAD_ARG);
	*tagp = t->d.tag;
	return AM_OK;
}

int AMVNET_GetReturnedMessage(void *token, struct amvnet_returned *ret)
{
	struct amvnet_token *t;
	int err = amv_token(token, &t);

	if (err)
		return err;
	AMV_CHECK(!ret, BAD_ARG);
	AMV_CHECK(t->kind != AMV_RETURNED, RESOURCE);
	*ret = t->ret;
	return AM_OK;
}
