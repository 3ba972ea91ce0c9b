// SPDX-License-Identifier: GPL-2.0
/*
 * The torture's lives: honest client/server pairs across the NICs the
 * admin detaches and attaches again, one each way, booked in a ledger of
 * their own.  Detaching a NIC orphans its endpoints (design.rst,
 * "Removing a NIC"): the next touch of a frame is SIGBUS, poll() says
 * POLLERR, an ioctl ENODEV.  That ends the endpoint's *life*; once the
 * NIC is back its owner opens a new endpoint, a server with a new tag,
 * and the other end maps the new one.  What a detach may and may not do
 * to messages is what the books check:
 *
 *  - across lives, nothing is taken, replied to or returned twice, and
 *    nothing crosses from one life into another: a request is taken only
 *    by the server life it was sent to, a reply or a return reaches only
 *    the client life that sent the request, a returned reply only the
 *    server life that sent it;
 *  - a message comes back "bad tag" or "no endpoint" only if its
 *    destination's NIC was detached since that life began, "too large"
 *    only if it needs a train at the smallest MTU the admin sets; after
 *    it was delivered, for any reason but "unreachable", only if both
 *    hold and the life that took it is over (which cannot tell a message
 *    that life took with its ACK lost from one a sender wrongly sent
 *    again after its ACK: the ledger, whose NICs stay, holds that one to
 *    "unreachable");
 *  - an endpoint is lost only to a detach of its NIC;
 *  - between two lives that both last to the end, every request is
 *    resolved exactly once, as on the ledger's NICs (torture_books.c), and
 *    every one taken answered; so is every one a server took once its
 *    client's life was over, if that server life lasted long enough for
 *    its reply, which can only come back, to do so.
 *
 * The admin bumps a NIC's epoch (struct t_lives) before each detach and
 * again after it: an even epoch unchanged since a life began means no
 * detach of that NIC overlapped the life since.  Each end publishes the
 * epoch its life began at; a client maps only a server life no detach
 * has overlapped yet, and gives up one that has.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include <vnet/endpoint.h>

#include "torture.h"

#define L_REQUEST	3
#define L_REPLY		4

struct l_end {
	struct vnet_endpoint ep;	/* fd -1: between lives */
	int pair;
	bool client;
	struct t_lend *me, *peer;
	uint32_t life;
	uint32_t epoch;			/* its NIC's, as this life began */
	uint64_t tag;			/* a server's, this life's */
	uint32_t slot;			/* a client's, to its server's life */
	uint32_t mapped;		/* the server life it points at */
	uint32_t mapped_epoch;		/* the server NIC's as that life began */
	uint32_t out[T_CREDITS];	/* a client's open requests */
	double out_at[T_CREDITS];	/* when each was posted */
	int nout;
	double quiet_until;		/* a client's: no route, say */
};

struct l_proc {
	struct t_ctl *ctl;
	uint64_t (*tags)[T_LIVES_MAX + 1];
	uint64_t rng;
	struct l_end end[2];
	uint8_t buf[VNET_MEDIUM_MAX];
};

static sigjmp_buf *volatile l_guard;

/*
 * A SIGBUS out of a guarded touch of a frame ends the touch; anywhere
 * else it is a bug of ours, and kills the process as it would have.
 */
static void l_on_bus(int sig)
{
	if (l_guard)
		siglongjmp(*l_guard, sig);
	signal(sig, SIG_DFL);
}

/* May NIC @nic have been detached since its epoch read @since? */
static bool l_stale(struct t_ctl *ctl, uint32_t nic, uint32_t since)
{
	return (since & 1) || t_epoch(ctl, nic) != since;
}

static struct t_lentry *l_entry(struct l_proc *p, struct l_end *e,
				uint32_t seq)
{
	return &p->ctl->lv.e[e->pair][seq];
}

static uint32_t l_sent(struct l_proc *p, struct l_end *e)
{
	return __atomic_load_n(&p->ctl->lv.pair[e->pair].sent,
			       __ATOMIC_ACQUIRE);
}

static bool l_same(struct vnet_name a, struct vnet_name b)
{
	return a.nic == b.nic && a.ep == b.ep;
}

static uint32_t l_reply_seed(int pair, uint32_t seq)
{
	return seq * 40503u ^ (uint32_t)(pair + 7) << 28;
}

void t_lives_setup(struct t_ctl *ctl)
{
	int k;

	/* Pair k's client on NIC C + k, its server on the other. */
	for (k = 0; k < T_LIVES_PAIRS; k++) {
		ctl->lv.pair[k].c.nic = T_NIC_C + k;
		ctl->lv.pair[k].s.nic = T_NIC_D - k;
	}
}

static bool l_try_again(int err)
{
	/* The NIC is away, or chaos holds its endpoints or root's quota. */
	return err == ENODEV || err == ENOSPC || err == EDQUOT ||
	       err == ENOMEM;
}

/* A new life for @e, if its NIC is there. */
static void l_open(struct l_proc *p, struct l_end *e)
{
	struct t_ctl *ctl = p->ctl;
	uint32_t epoch = t_epoch(ctl, e->me->nic), life = e->me->life + 1;
	int err;

	/* A life must begin between detaches, or it is over at once. */
	if (life > T_LIVES_MAX || (epoch & 1))
		return;
	err = -vnet_endpoint_open(&e->ep, e->me->nic);
	if (!err && !e->client) {
		err = -vnet_tag_random(&e->tag);
		if (!err)
			err = -vnet_endpoint_set_tag(&e->ep, e->tag);
		if (err)
			vnet_endpoint_close(&e->ep);
	}
	if (err) {
		e->ep.fd = -1;
		if (err != ENODEV)
			__atomic_fetch_add(&ctl->lv.pair[e->pair].refused_open,
					   1, __ATOMIC_RELAXED);
		if (!l_try_again(err))
			t_violation(ctl, "lives: pair %d %s: open: %s", e->pair,
				    e->client ? "client" : "server",
				    strerror(err));
		return;
	}
	/* A detach and an attach since the epoch was read: not this one. */
	if (t_epoch(ctl, e->me->nic) != epoch) {
		vnet_endpoint_close(&e->ep);
		e->ep.fd = -1;
		return;
	}
	if (!e->client)
		p->tags[e->pair][life] = e->tag;
	e->me->name[life] = e->ep.name;
	e->me->began[life] = epoch;
	e->life = life;
	e->epoch = epoch;
	e->mapped = 0;
	e->nout = 0;
	e->slot = t_below(&p->rng, VNET_MAX_SLOTS);
	/* Its name and tag first: whoever sees the life sees them. */
	__atomic_store_n(&e->me->life, life, __ATOMIC_RELEASE);
	__atomic_store_n(&e->me->alive, 1, __ATOMIC_RELEASE);
}

static void l_resolve(struct l_end *e, uint32_t seq)
{
	int i;

	for (i = 0; i < e->nout; i++)
		if (e->out[i] == seq) {
			e->nout--;
			e->out[i] = e->out[e->nout];
			e->out_at[i] = e->out_at[e->nout];
			return;
		}
}

/*
 * A life of the client or of its server is over: what the client had out
 * stays open for ever -- unless it had been out longer than the firmware
 * lets a message go unresolved, which no detach excuses.
 */
static void l_abandon(struct l_proc *p, struct l_end *e)
{
	double now = t_now();
	int i;

	for (i = 0; i < e->nout; i++)
		if (now - e->out_at[i] > 2 * p->ctl->lifetime_s + 5)
			t_violation(p->ctl, "lives: pair %d: request %u open "
				    "%.1f s when its life ended", e->pair,
				    e->out[i], now - e->out_at[i]);
	p->ctl->lv.pair[e->pair].abandoned += e->nout;
	e->nout = 0;
}

/* Its NIC went: the life is over; what it had out stays open for ever. */
static void l_lost(struct l_proc *p, struct l_end *e, const char *how)
{
	if (!l_stale(p->ctl, e->me->nic, e->epoch))
		t_violation(p->ctl, "lives: pair %d %s life %u: %s, but vnet%u "
			    "was not detached", e->pair,
			    e->client ? "client" : "server", e->life, how,
			    e->me->nic);
	__atomic_store_n(&e->me->alive, 0, __ATOMIC_RELEASE);
	vnet_endpoint_close(&e->ep);
	e->ep.fd = -1;
	l_abandon(p, e);
	e->mapped = 0;
}

static void l_send(struct l_proc *p, struct l_end *e)
{
	struct t_lpair *lp = &p->ctl->lv.pair[e->pair];
	struct vnet_desc d = { .handler = L_REQUEST, .nargs = VNET_MAX_ARGS,
			       .slot = (uint16_t)e->slot };
	uint32_t seq = lp->sent, len = 0, csum, i;
	struct t_lentry *x = l_entry(p, e, seq);
	int kind = t_chance(&p->rng, 30) ? T_SHORT : T_MEDIUM;

	for (i = 5; i < VNET_MAX_ARGS; i++)
		d.args[i] = (uint32_t)t_rand(&p->rng);
	if (kind == T_SHORT) {
		csum = t_sum(&d.args[5], 12);
	} else {
		/* Mostly one packet; now and then a train. */
		len = 1 + t_below(&p->rng, t_chance(&p->rng, 70) ? 1400 :
				  VNET_MEDIUM_MAX);
		csum = t_fill(p->buf, len, (uint32_t)t_rand(&p->rng));
		d.flags = VNET_DESC_MEDIUM;
	}
	d.len = len;
	d.args[0] = e->pair;
	d.args[1] = seq;
	d.args[2] = csum;
	d.args[3] = kind;
	d.args[4] = len;
	x->csum = csum;
	x->len = (uint16_t)len;
	x->kind = kind;
	x->life_c = e->life;
	x->life_s = e->mapped;
	x->ep_c = e->epoch;
	x->ep_s = e->mapped_epoch;
	__atomic_store_n(&lp->sent, seq + 1, __ATOMIC_RELEASE);
	e->out_at[e->nout] = t_now();
	e->out[e->nout++] = seq;
	if (vnet_endpoint_post(&e->ep, VNET_Q_REQ_SEND, &d, p->buf, len))
		t_violation(p->ctl, "lives: pair %d: could not post request %u",
			    e->pair, seq);
}

static void l_reply_in(struct l_proc *p, struct l_end *e,
		       const struct vnet_desc *d, const void *payload)
{
	uint32_t seq = d->args[1], len;
	struct t_lentry *x;

	if (d->handler != L_REPLY || !(d->flags & VNET_DESC_REPLY) ||
	    d->args[0] != (uint32_t)e->pair || seq >= l_sent(p, e)) {
		t_violation(p->ctl, "lives: pair %d: client got a stranger's "
			    "message: handler %u flags %#x args %u %u",
			    e->pair, d->handler, d->flags, d->args[0], seq);
		return;
	}
	x = l_entry(p, e, seq);
	if (x->life_c != e->life || !l_same(d->peer, e->peer->name[x->life_s]))
		t_violation(p->ctl, "lives: pair %d: the reply to request %u "
			    "of client life %u to server life %u reached "
			    "client life %u from %u:%u", e->pair, seq,
			    x->life_c, x->life_s, e->life, d->peer.nic,
			    d->peer.ep);
	if (__atomic_fetch_add(&x->replied, 1, __ATOMIC_ACQ_REL))
		t_violation(p->ctl, "lives: pair %d: request %u replied to "
			    "twice", e->pair, seq);
	len = t_lives_reply_len(e->pair, seq);
	if (d->args[2] != x->csum || d->len != len || d->args[4] != len ||
	    t_sum(payload, len) != d->args[3] ||
	    t_fill(p->buf, len, l_reply_seed(e->pair, seq)) != d->args[3])
		t_violation(p->ctl, "lives: pair %d: reply to %u corrupt",
			    e->pair, seq);
	l_resolve(e, seq);
}

static void l_return_in(struct l_proc *p, struct l_end *e,
			const struct vnet_desc *d, const void *payload)
{
	uint32_t seq = d->args[1];
	struct t_lentry *x;
	bool whole;

	if (d->handler != L_REQUEST || (d->flags & VNET_DESC_REPLY) ||
	    d->args[0] != (uint32_t)e->pair || seq >= l_sent(p, e)) {
		t_violation(p->ctl, "lives: pair %d: client got back what it "
			    "never sent: handler %u flags %#x args %u %u",
			    e->pair, d->handler, d->flags, d->args[0], seq);
		return;
	}
	x = l_entry(p, e, seq);
	x->req_reason = d->status;
	x->req_stale = l_stale(p->ctl, e->peer->nic, x->ep_s);
	if (x->life_c != e->life)
		t_violation(p->ctl, "lives: pair %d: request %u of client life "
			    "%u came back to life %u", e->pair, seq, x->life_c,
			    e->life);
	if (__atomic_fetch_add(&x->req_ret, 1, __ATOMIC_ACQ_REL))
		t_violation(p->ctl, "lives: pair %d: request %u came back "
			    "twice", e->pair, seq);
	if (!t_lives_reason_ok(d->status, x->len, x->req_stale))
		t_violation(p->ctl, "lives: pair %d: request %u to server life "
			    "%u came back %s", e->pair, seq, x->life_s,
			    t_reason(d->status));
	whole = l_same(d->peer, e->peer->name[x->life_s]) &&
		d->args[2] == x->csum && d->args[3] == x->kind;
	if (x->kind == T_SHORT)
		whole = whole && t_sum(&d->args[5], 12) == x->csum;
	else
		whole = whole && d->len == d->args[4] &&
			d->len <= VNET_MEDIUM_MAX &&
			t_sum(payload, d->len) == x->csum;
	if (!whole)
		t_violation(p->ctl, "lives: pair %d: request %u came back %s "
			    "not whole", e->pair, seq, t_reason(d->status));
	l_resolve(e, seq);
	/*
	 * Without a route, or to a NIC that is away, it comes back at once:
	 * a user backs off, and so the ledger keeps room for the run.
	 */
	e->quiet_until = t_now() + 0.01;
}

/*
 * The client: follow the server's lives, read, send.  False if its own
 * NIC is gone.
 */
static bool l_client(struct l_proc *p, struct l_end *e, bool readable)
{
	struct t_ctl *ctl = p->ctl;
	struct t_lpair *lp = &ctl->lv.pair[e->pair];
	uint32_t life = __atomic_load_n(&e->peer->life, __ATOMIC_ACQUIRE);
	int alive = __atomic_load_n(&e->peer->alive, __ATOMIC_ACQUIRE);
	const struct vnet_desc *d;
	int i, err;

	/* That server life is over, or may be: what it had stays open. */
	if (e->mapped && (e->mapped != life || !alive ||
			  l_stale(ctl, e->peer->nic, e->mapped_epoch))) {
		e->mapped = 0;
		l_abandon(p, e);
	}
	/*
	 * Only a life no detach has overlapped since it began: one that
	 * ended before its process noticed would refuse what we send with
	 * no sign of it in the epoch.
	 */
	if (!e->mapped && life && alive &&
	    !l_stale(ctl, e->peer->nic, e->peer->began[life])) {
		/*
		 * A slot of its own for each server life: the firmware reads
		 * the slot when it sends, and a request still queued for the
		 * last life must go where it was addressed.
		 */
		e->slot = (e->slot + 1) % VNET_MAX_SLOTS;
		err = -vnet_endpoint_map(&e->ep, e->slot, e->peer->name[life],
					 p->tags[e->pair][life]);
		if (err == ENODEV)
			return false;
		if (err)
			t_violation(ctl, "lives: pair %d: map: %s", e->pair,
				    strerror(err));
		e->mapped = life;
		e->mapped_epoch = e->peer->began[life];
	}
	/* Its tag is VNET_TAG_NONE: no request may reach it. */
	while (readable && (d = vnet_endpoint_peek(&e->ep, VNET_Q_REQ_RECV))) {
		t_violation(ctl, "lives: pair %d: client got a request",
			    e->pair);
		vnet_endpoint_consume(&e->ep, VNET_Q_REQ_RECV);
	}
	while (readable && (d = vnet_endpoint_peek(&e->ep, VNET_Q_REP_RECV))) {
		struct vnet_desc x = *d;
		const void *payload = vnet_endpoint_payload(&e->ep,
							    VNET_Q_REP_RECV);

		if (x.flags & VNET_DESC_RETURNED)
			l_return_in(p, e, &x, payload);
		else
			l_reply_in(p, e, &x, payload);
		vnet_endpoint_consume(&e->ep, VNET_Q_REP_RECV);
	}
	/* A reply that came back to the server settles the request too. */
	for (i = e->nout - 1; i >= 0; i--)
		if (__atomic_load_n(&l_entry(p, e, e->out[i])->rep_ret,
				    __ATOMIC_ACQUIRE))
			l_resolve(e, e->out[i]);
	while (e->mapped && t_now() >= e->quiet_until &&
	       __atomic_load_n(&ctl->phase, __ATOMIC_ACQUIRE) == T_RUN &&
	       e->nout < T_CREDITS && lp->sent < T_LIVES_SEQ &&
	       vnet_endpoint_can_post(&e->ep, VNET_Q_REQ_SEND))
		l_send(p, e);
	return true;
}

static void l_take(struct l_proc *p, struct l_end *e,
		   const struct vnet_desc *d, const void *payload)
{
	uint32_t seq = d->args[1], kind = d->args[3], csum = 0, len;
	struct vnet_desc r = { .handler = L_REPLY, .nargs = 5,
			       .token = d->token };
	struct t_lentry *x;

	if (d->tag != e->tag || d->handler != L_REQUEST ||
	    d->args[0] != (uint32_t)e->pair || seq >= l_sent(p, e) ||
	    kind > T_MEDIUM ||
	    (d->flags & (VNET_DESC_RETURNED | VNET_DESC_REPLY))) {
		t_violation(p->ctl, "lives: pair %d: server took a stranger's "
			    "message: from %u:%u handler %u flags %#x args %u "
			    "%u", e->pair, d->peer.nic, d->peer.ep, d->handler,
			    d->flags, d->args[0], seq);
		return;
	}
	x = l_entry(p, e, seq);
	if (x->life_s != e->life ||
	    !l_same(d->peer, e->peer->name[x->life_c]))
		t_violation(p->ctl, "lives: pair %d: request %u of client life "
			    "%u for server life %u taken by life %u, from "
			    "%u:%u", e->pair, seq, x->life_c, x->life_s,
			    e->life, d->peer.nic, d->peer.ep);
	if (kind == T_SHORT)
		csum = t_sum(&d->args[5], 12);
	else if (d->len <= VNET_MEDIUM_MAX)
		csum = t_sum(payload, d->len);
	if (csum != d->args[2] || csum != x->csum || d->len != d->args[4])
		t_violation(p->ctl, "lives: pair %d: request %u arrived corrupt",
			    e->pair, seq);
	if (__atomic_fetch_add(&x->delivered, 1, __ATOMIC_ACQ_REL))
		t_violation(p->ctl, "lives: pair %d: request %u taken twice",
			    e->pair, seq);
	x->life_t = e->life;
	x->taken_at = t_now();
	/*
	 * Its client's life is over: the reply cannot reach that endpoint,
	 * so it must come back (t_lives_check()).  Seen from here only once
	 * that process noticed; before, nothing is known.
	 */
	x->orphan = !__atomic_load_n(&e->peer->alive, __ATOMIC_ACQUIRE) ||
		    __atomic_load_n(&e->peer->life, __ATOMIC_ACQUIRE) !=
		    x->life_c;
	len = t_lives_reply_len(e->pair, seq);
	r.flags = len ? VNET_DESC_MEDIUM : 0;
	r.len = len;
	r.args[0] = e->pair;
	r.args[1] = seq;
	r.args[2] = d->args[2];
	r.args[3] = t_fill(p->buf, len, l_reply_seed(e->pair, seq));
	r.args[4] = len;
	if (vnet_endpoint_post(&e->ep, VNET_Q_REP_SEND, &r, p->buf, len))
		t_violation(p->ctl, "lives: pair %d: could not post reply %u",
			    e->pair, seq);
}

static void l_reply_back(struct l_proc *p, struct l_end *e,
			 const struct vnet_desc *d, const void *payload)
{
	uint32_t seq = d->args[1];
	struct t_lentry *x;

	if (!(d->flags & VNET_DESC_RETURNED) || !(d->flags & VNET_DESC_REPLY) ||
	    d->args[0] != (uint32_t)e->pair || seq >= l_sent(p, e)) {
		t_violation(p->ctl, "lives: pair %d: server got back what it "
			    "never sent: flags %#x args %u %u", e->pair,
			    d->flags, d->args[0], seq);
		return;
	}
	x = l_entry(p, e, seq);
	x->rep_reason = d->status;
	x->rep_stale = l_stale(p->ctl, e->peer->nic, x->ep_c);
	if (x->life_t != e->life)
		t_violation(p->ctl, "lives: pair %d: reply %u of server life %u "
			    "came back to life %u", e->pair, seq, x->life_t,
			    e->life);
	if (__atomic_fetch_add(&x->rep_ret, 1, __ATOMIC_ACQ_REL))
		t_violation(p->ctl, "lives: pair %d: reply %u came back twice",
			    e->pair, seq);
	if (!t_lives_reason_ok(d->status, t_lives_reply_len(e->pair, seq),
			       x->rep_stale))
		t_violation(p->ctl, "lives: pair %d: reply %u to client life %u "
			    "came back %s", e->pair, seq, x->life_c,
			    t_reason(d->status));
	if (d->len != d->args[4] || d->len > VNET_MEDIUM_MAX ||
	    t_sum(payload, d->len) != d->args[3])
		t_violation(p->ctl, "lives: pair %d: reply %u came back not "
			    "whole", e->pair, seq);
}

/* The server: take what there is room to answer, read replies back. */
static bool l_server(struct l_proc *p, struct l_end *e)
{
	const struct vnet_desc *d;

	while (vnet_endpoint_can_post(&e->ep, VNET_Q_REP_SEND) &&
	       (d = vnet_endpoint_peek(&e->ep, VNET_Q_REQ_RECV))) {
		struct vnet_desc x = *d;

		l_take(p, e, &x, vnet_endpoint_payload(&e->ep, VNET_Q_REQ_RECV));
		vnet_endpoint_consume(&e->ep, VNET_Q_REQ_RECV);
	}
	while ((d = vnet_endpoint_peek(&e->ep, VNET_Q_REP_RECV))) {
		struct vnet_desc x = *d;

		l_reply_back(p, e, &x,
			     vnet_endpoint_payload(&e->ep, VNET_Q_REP_RECV));
		vnet_endpoint_consume(&e->ep, VNET_Q_REP_RECV);
	}
	return true;
}

/* One turn of @e on its frame, whose NIC may go at any moment. */
static bool l_turn(struct l_proc *p, struct l_end *e, bool readable)
{
	sigjmp_buf jb;
	bool ok;

	l_guard = &jb;
	if (sigsetjmp(jb, 1))
		ok = false;
	else
		ok = e->client ? l_client(p, e, readable) : l_server(p, e);
	l_guard = NULL;
	return ok;
}

static void l_loop(struct l_proc *p)
{
	struct t_ctl *ctl = p->ctl;
	struct pollfd pfd[2];
	int i, phase;

	while ((phase = __atomic_load_n(&ctl->phase, __ATOMIC_ACQUIRE)) !=
	       T_QUIT) {
		bool sending = false;

		for (i = 0; i < 2; i++) {
			struct l_end *e = &p->end[i];

			if (e->ep.fd < 0 && phase != T_STOP)
				l_open(p, e);
			pfd[i] = (struct pollfd){ e->ep.fd, POLLIN, 0 };
			sending |= e->client && e->ep.fd >= 0 && e->mapped &&
				   phase == T_RUN && e->nout < T_CREDITS &&
				   t_now() >= e->quiet_until;
		}
		if (poll(pfd, 2, sending ? 0 : 5) < 0)
			continue;
		for (i = 0; i < 2; i++) {
			struct l_end *e = &p->end[i];
			struct t_lpair *lp = &ctl->lv.pair[e->pair];
			bool in = pfd[i].revents & POLLIN;

			if (e->ep.fd >= 0) {
				if (pfd[i].revents & (POLLERR | POLLHUP))
					l_lost(p, e, "POLLERR");
				else if (!l_turn(p, e, in))
					l_lost(p, e, "SIGBUS or ENODEV");
			}
			if (e->client) {
				if (phase != T_RUN && (e->ep.fd < 0 || !e->nout))
					__atomic_store_n(&lp->done, 1,
							 __ATOMIC_RELEASE);
				continue;
			}
			/* Seen idle once its client was done: it took all. */
			__atomic_store_n(&lp->srv_idle,
					 __atomic_load_n(&lp->done,
							 __ATOMIC_ACQUIRE) &&
					 (e->ep.fd < 0 || !in),
					 __ATOMIC_RELEASE);
		}
	}
}

void t_lives_run(struct t_ctl *ctl, uint64_t (*tags)[T_LIVES_MAX + 1],
		 int side)
{
	struct l_proc *p = calloc(1, sizeof(*p));
	struct sigaction sa = { .sa_handler = l_on_bus };
	int i;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (!p)
		_exit(1);
	p->ctl = ctl;
	p->tags = tags;
	p->rng = t_seed_of(ctl->seed, T_ROLE_LIVES, side);
	t_say("# seed %llu: lives on vnet%d", (unsigned long long)p->rng,
	      T_NIC_C + side);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);
	/* Side k: the client of pair k and the server of the other. */
	for (i = 0; i < 2; i++) {
		struct l_end *e = &p->end[i];
		struct t_lpair *lp = &ctl->lv.pair[i ? !side : side];

		e->pair = i ? !side : side;
		e->client = !i;
		e->me = e->client ? &lp->c : &lp->s;
		e->peer = e->client ? &lp->s : &lp->c;
		e->ep.fd = -1;
		l_open(p, e);
		if (e->ep.fd < 0) {
			t_violation(ctl, "lives: pair %d: no first endpoint",
				    e->pair);
			_exit(1);
		}
	}
	__atomic_fetch_add(&ctl->honest_ready, 1, __ATOMIC_RELEASE);
	while (__atomic_load_n(&ctl->phase, __ATOMIC_ACQUIRE) == T_SETUP)
		usleep(1000);
	l_loop(p);
	for (i = 0; i < 2; i++)
		if (p->end[i].ep.fd >= 0)
			vnet_endpoint_close(&p->end[i].ep);
	_exit(0);
}
