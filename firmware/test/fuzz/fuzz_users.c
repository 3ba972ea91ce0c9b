// SPDX-License-Identifier: GPL-2.0
/*
 * The users of the fuzzers' cluster (fuzz_net.h): the clients that post
 * requests, the servers that answer them, and the books each keeps of
 * what it is owed -- checked as every entry is read, and again once the
 * cluster settles.
 */
#include <stdio.h>
#include <stdlib.h>

#include "fuzz_net.h"
#include "frag_util.h"

#define FZ_OUT		2		/* requests a client keeps out */

enum fz_kind { K_SHORT, K_MEDIUM, K_TRAIN, K_XFER, K_SEG, K_NR };

struct fz_client {
	u8 nic, ep;
	u8 ndst;
	/*
	 * Kinds it sends, from K_SHORT: NIC 1's clients none read from
	 * their segments, which NIC 0 cannot tell from another XFER train,
	 * so that the seeds of what they say stay small.
	 */
	u8 nkinds;
	struct vnet_name dst[2];	/* translation slot i */
	u64 tag[2];
	bool exact;
	bool peer_only;			/* runs only while NIC 1 runs */
};

#define FZ_TO(n, e)	((struct vnet_name){ .nic = (n), .ep = (e) })

static const struct fz_client fz_clients[] = {
	{ .nic = 0, .ep = FZ_A, .ndst = 2, .nkinds = K_NR,
	  .dst = { FZ_TO(1, FZ_F), FZ_TO(0, FZ_S) },
	  .tag = { FZ_TAG, FZ_TAG_S } },
	{ .nic = 0, .ep = FZ_C, .ndst = 1, .nkinds = K_NR,
	  .dst = { FZ_TO(0, FZ_D) }, .tag = { FZ_TAG }, .exact = true },
	{ .nic = 1, .ep = FZ_E, .ndst = 1, .nkinds = K_SEG,
	  .dst = { FZ_TO(0, FZ_B) }, .tag = { FZ_TAG }, .exact = true,
	  .peer_only = true },
	{ .nic = 1, .ep = FZ_G, .ndst = 1, .nkinds = K_SEG,
	  .dst = { FZ_TO(0, FZ_A) }, .tag = { FZ_TAG }, .peer_only = true },
};

static const u64 fz_tags[FZ_NICS][FZ_EPS] = {
	{ FZ_TAG, FZ_TAG, VNET_TAG_NONE, FZ_TAG, FZ_TAG_S },
	{ VNET_TAG_NONE, FZ_TAG, VNET_TAG_NONE, FZ_TAG, VNET_TAG_NONE },
};

static u8 fz_buf[VNET_MEDIUM_MAX];

/* What every byte of request @n of endpoint @src is, or of its reply. */
static u32 fz_seed(struct vnet_name src, u32 n, bool reply)
{
	return (src.nic << 28) ^ (src.ep << 20) ^ (n * 2654435761u) ^
	       (reply ? 0x5a5a5a5a : 0);
}

static const struct fz_client *fz_client(u32 nic, u32 ep)
{
	u32 i;

	for (i = 0; i < ARRAY_SIZE(fz_clients); i++)
		if (fz_clients[i].nic == nic && fz_clients[i].ep == ep)
			return &fz_clients[i];
	return NULL;
}

/* Is @c a client held to exactly one reply per request? */
static bool fz_exact(const struct fz_net *f, const struct fz_client *c)
{
	return c && (c->exact || f->all_exact) &&
	       (f->peer_live || !c->peer_only);
}

/* Where client @c sends request @n. */
static struct vnet_name fz_dst(const struct fz_client *c, u32 n)
{
	return c->dst[n % c->ndst];
}

/* Is @n such a client?  Only NIC 1 itself can say it is one of NIC 1's. */
static bool fz_exact_name(const struct fz_net *f, struct vnet_name n)
{
	return n.nic < FZ_NICS && n.ep < FZ_EPS &&
	       fz_exact(f, fz_client(n.nic, n.ep));
}

/*
 * Where in @to's segment bulk requests land: A's own trains read the
 * first FZ_SEG bytes of its segment, so G's XFERs land past them.
 */
static u32 fz_landing(struct vnet_name to)
{
	return to.nic == 0 && to.ep == FZ_A ? FZ_SEG : 0;
}

/* Where bulk replies to @c land in its segment: past everything else. */
static u32 fz_reply_zone(struct vnet_name c)
{
	return FZ_SEG + fz_landing(c);
}

/* Where a bulk reply to request @n of client @c of user @u lands. */
static u32 fz_reply_at(struct vnet_name c, const struct fz_user *u, u32 n)
{
	return fz_reply_zone(c) + u->req[n].half * (FZ_SEG / 2);
}

static u32 fz_seg_len(u32 nic, u32 ep)
{
	return fz_reply_zone((struct vnet_name){ nic, ep }) + FZ_SEG;
}

/*
 * Request @n of client @c, its payload in fz_buf or its own segment: the
 * @h-th half of the segment it reads from, and of the one it lands in.
 */
static struct vnet_desc fz_request(struct fz_net *f, const struct fz_client *c,
				   u32 n, u32 h, const u8 **payload)
{
	struct vnet_fw_ep *ep = &f->net.nic[c->nic]->ep[c->ep].fw;
	struct vnet_name me = { c->nic, c->ep };
	struct vnet_desc d = { .handler = 1, .nargs = 2 };
	u32 half = h * (FZ_SEG / 2);
	u32 land = half + fz_landing(fz_dst(c, n));

	d.slot = n % c->ndst;
	d.args[0] = n;
	d.args[1] = n * 7;		/* odd: a medium reply */
	switch ((n / c->ndst) % c->nkinds) {
	case K_SHORT:
		break;
	case K_MEDIUM:
		d.flags = VNET_DESC_MEDIUM;
		d.len = 1 + n * 97 % 1300;
		break;
	case K_TRAIN:
		d.flags = VNET_DESC_MEDIUM;
		d.len = 1500 + n * 389 % 2600;	/* two or three fragments */
		break;
	case K_XFER:
		d.flags = VNET_DESC_XFER;
		d.len = 1 + n * 211 % 3000;
		d.offset = land;
		break;
	case K_SEG:
		/* Past a pool buffer: a train read from the segment. */
		d.flags = VNET_DESC_XFER | VNET_DESC_FROM_SEG;
		d.len = VNET_MEDIUM_MAX + 1 + n * 101 % 4000;
		d.offset = land;
		d.src_offset = half;
		/* A hostile user may have replaced its segment: what fits. */
		if (vnet_fw_seg_fits(ep, half, d.len))
			frag_fill(ep->seg + half, d.len, fz_seed(me, n, false));
		*payload = NULL;
		return d;
	}
	frag_fill(fz_buf, d.len, fz_seed(me, n, false));
	*payload = d.len ? fz_buf : NULL;
	return d;
}

/*
 * What the firmware may have written into an entry of receive queue @q of
 * endpoint @ep of NIC @nic: whatever came in, from whomever.
 */
static void fz_check_entry(struct fz_net *f, u32 nic, u32 ep, unsigned int q,
			   const struct vnet_desc *d)
{
	const struct vnet_fw_ep *me = &f->net.nic[nic]->ep[ep].fw;
	u8 may = VNET_DESC_USER_FLAGS & ~VNET_FW_DESC_IN_PLACE;
	bool returned = d->flags & VNET_DESC_RETURNED;
	unsigned int i;

	fz_assert(!d->__reserved0, "nic %u ep %u q %u", nic, ep, q);
	for (i = 0; i < ARRAY_SIZE(d->__reserved1); i++)
		fz_assert(!d->__reserved1[i], "nic %u ep %u q %u", nic, ep, q);
	fz_assert(d->nargs <= VNET_MAX_ARGS, "%u", d->nargs);
	if (q == VNET_Q_REQ_RECV) {
		fz_assert(!(d->flags & ~may), "flags %#x", d->flags);
		fz_assert(!d->status, "status %u", d->status);
	} else if (returned) {
		may = VNET_DESC_USER_FLAGS | VNET_DESC_RETURNED |
		      VNET_DESC_REPLY;
		fz_assert(!(d->flags & ~may), "flags %#x", d->flags);
		fz_assert(d->status > VNET_RET_NONE && d->status < VNET_RET_NR,
			  "status %u", d->status);
	} else {
		fz_assert(!(d->flags & ~(may | VNET_DESC_REPLY)) &&
			  (d->flags & VNET_DESC_REPLY), "flags %#x", d->flags);
		fz_assert(!d->status, "status %u", d->status);
	}
	if (returned && (d->flags & VNET_FW_DESC_IN_PLACE))
		fz_assert(d->len <= VNET_XFER_MAX, "len %u", d->len);
	else if (returned || (d->flags & VNET_DESC_MEDIUM))
		fz_assert(d->len <= VNET_MEDIUM_MAX, "len %u", d->len);
	if (!(d->flags & (VNET_DESC_MEDIUM | VNET_DESC_XFER)))
		fz_assert(!d->len, "len %u flags %#x", d->len, d->flags);
	if (returned)
		return;
	/* A bulk message landed inside the receiver's segment. */
	if (d->flags & VNET_DESC_XFER)
		fz_assert(me->seg_len == fz_seg_len(nic, ep) &&
			  d->offset <= me->seg_len &&
			  d->len <= me->seg_len - d->offset, "offset %llu len %u",
			  (unsigned long long)d->offset, d->len);
	fz_assert(d->peer.nic < FZ_NICS, "from nic %u", d->peer.nic);
	if (d->peer.nic == nic)
		fz_assert(d->peer.ep < FZ_EPS, "from ep %u", d->peer.ep);
}

/* Take @n, below @limit, if it was not taken yet. */
static bool fz_window_take(struct fz_window *w, u32 n, u32 limit)
{
	if (n >= limit || n >= FZ_NUMBERS ||
	    (w->taken[n / 64] >> (n % 64) & 1))
		return false;
	w->taken[n / 64] |= 1ULL << (n % 64);
	return true;
}

static bool fz_window_has(const struct fz_window *w, u32 n)
{
	return n < FZ_NUMBERS && (w->taken[n / 64] >> (n % 64) & 1);
}

/*
 * A token answers one request: A, G's only server, may have replied to
 * as many requests of G's as it was given, and no more -- one that
 * replied twice with a token (or the firmware reviving one it should
 * not) would give G more.  A hostile A may reply to any request, in any
 * order, with any arguments, so the count is all that G can hold it to.
 * wire_fuzz's stranger may send A requests too: there, G is silent.
 */
static void fz_tokens(struct fz_net *f, struct fz_user *g)
{
	u32 given = f->a_taken + f->net.nic[0]->ep[FZ_A].fw.recv_prod[0];

	g->replies++;
	fz_assert(g->replies <= given, "G has %u replies from A, which took %u requests",
		  g->replies, given);
}

/*
 * Is @c's request @n, or its reply, across the wire, while it has faults
 * -- or was it posted before a reboot dropped packets off the wire?
 */
static bool fz_faulty(const struct fz_net *f, const struct fz_client *c, u32 n)
{
	return c && fz_dst(c, n).nic != c->nic &&
	       (f->faults || n < f->user[c->nic][c->ep].lost_upto);
}

/*
 * Why an exact client's request @n may come back: across a faulty wire,
 * unreachable (taken or not, its ACKs lost) or busy; "no endpoint" while
 * its server is closed, or if it was already on its way back when a
 * reboot brought the server back.  Refused, busy or absent, it was not
 * taken by the life of its server that refused it: only a request taken
 * by an earlier life, and on the wire when this one began, goes to it
 * again.
 */
static bool fz_return_excused(const struct fz_net *f,
			      const struct fz_client *c, u32 n, u8 status)
{
	const struct fz_user *u = &f->user[c->nic][c->ep];
	const struct fz_req *r = &u->req[n];
	struct vnet_name to = fz_dst(c, n);

	if (n >= u->posted)
		return false;
	switch (status) {
	case VNET_RET_NO_ENDPOINT:
		return r->taken_life != f->life[to.nic] &&
		       (f->closed[to.nic][to.ep] || r->noep);
	case VNET_RET_BUSY:
		return r->taken_life != f->life[to.nic] && fz_faulty(f, c, n);
	case VNET_RET_UNREACHABLE:
		return fz_faulty(f, c, n);
	}
	return false;
}

/* A message of @len bytes at @p with seed @seed, whole? */
static void fz_check_bytes(const u8 *p, u32 len, u32 seed, const char *what)
{
	fz_assert(frag_same(p, len, seed), "%s of %u bytes damaged", what, len);
}

/*
 * The user reads or writes its frame: off the card, that faults it in.
 * (Finding whether there is anything to read at all is poll()'s, which
 * asks the firmware and touches nothing.)
 */
static void fz_touch(struct sim_nic *s, u32 ep)
{
	if (!s->ep[ep].fw.frame)
		sim_load(s, ep);
}

/*
 * An exact client's request @n, taken by its server @nic/@ep: once in
 * each life of the server at most, and again in a later life only if it
 * was on the wire when that life began.
 */
static void fz_taken(struct fz_net *f, u32 nic, u32 ep, struct vnet_name from,
		     u32 n)
{
	const struct fz_client *c = fz_client(from.nic, from.ep);
	struct fz_user *u = &f->user[from.nic][from.ep];
	struct vnet_name to = fz_dst(c, n);
	u8 life = f->life[nic];
	struct fz_req *r;

	fz_assert(to.nic == nic && to.ep == ep,
		  "request %u of %u/%u, for %u/%u, taken by %u/%u",
		  n, from.nic, from.ep, to.nic, to.ep, nic, ep);
	fz_assert(n < u->posted, "request %u of %u/%u, never sent (%u)",
		  n, from.nic, from.ep, u->posted);
	r = &u->req[n];
	fz_assert(!r->taken_life ||
		  (r->taken_life != life && r->wire_life == life),
		  "request %u of %u/%u taken again, in life %u of NIC %u (taken in %u, on the wire in %u)",
		  n, from.nic, from.ep, life, nic, r->taken_life,
		  r->wire_life);
	fz_assert(!fz_window_has(&u->refused, n),
		  "request %u of %u/%u taken after it was refused for good",
		  n, from.nic, from.ep);
	r->taken_life = life;
	r->takes++;
}

/*
 * Answer the requests on @ep's request queue, checking them first; or,
 * with @answer false, take them and answer none, as a user that is gone.
 */
static void fz_serve(struct fz_net *f, u32 nic, u32 ep, bool answer)
{
	struct sim_nic *s = f->net.nic[nic];
	struct fz_user *u = &f->user[nic][ep];
	u32 i;

	for (i = 0; i < VNET_QUEUE_DEPTH; i++) {
		const struct vnet_desc *d = sim_peek(s, ep, VNET_Q_REQ_RECV);
		struct vnet_desc r = { .handler = 2, .nargs = 2 };
		u32 n, seed;

		if (!d)
			break;
		if (answer)
			fz_touch(s, ep);
		n = d->args[0];
		r.token = d->token;
		r.args[0] = n;
		r.args[1] = d->args[1];
		if (f->bulk_replies && (d->args[1] & 3) == 3 &&
		    fz_exact_name(f, d->peer) &&
		    n < f->user[d->peer.nic][d->peer.ep].posted) {
			/* Bulk, into the half of the client's reply zone. */
			r.flags = VNET_DESC_XFER;
			r.len = 1 + n * 131 % 3000;
			r.offset = fz_reply_at(d->peer,
					       &f->user[d->peer.nic][d->peer.ep],
					       n);
			frag_fill(fz_buf, r.len, fz_seed(d->peer, n, true));
		} else if (d->args[1] & 1) {
			r.flags = VNET_DESC_MEDIUM;
			r.len = 1 + n * 53 % 1000;
			frag_fill(fz_buf, r.len, fz_seed(d->peer, n, true));
		}
		/* No room for the reply: the request waits with it. */
		if (answer &&
		    sim_post(s, ep, VNET_Q_REP_SEND, &r, r.len ? fz_buf : NULL))
			break;
		if (!u->hostile)
			fz_check_entry(f, nic, ep, VNET_Q_REQ_RECV, d);
		if (!u->hostile && fz_exact_name(f, d->peer)) {
			struct fz_user *from = &f->user[d->peer.nic][d->peer.ep];

			seed = fz_seed(d->peer, n, false);
			fz_taken(f, nic, ep, d->peer, n);
			if (d->flags & VNET_DESC_MEDIUM)
				fz_check_bytes(sim_payload(s, ep, VNET_Q_REQ_RECV),
					       d->len, seed, "medium request");
			/*
			 * Whatever the wire does, a bulk request lands whole
			 * and once -- unless another of its half lands on it:
			 * one of that half came back although it may have been
			 * taken (its ACKs lost), or a life of its client or
			 * server ended with one on the wire, before it was
			 * posted or while it was landing (fz_half_clean()).
			 */
			else if ((d->flags & VNET_DESC_XFER) && f->peer_live &&
				 fz_half_clean(from, n))
				fz_check_bytes(s->ep[ep].fw.seg + d->offset,
					       d->len, seed, "bulk request");
		}
		sim_consume(s, ep, VNET_Q_REQ_RECV);
	}
}

/*
 * A server's reply to request @n of @to came back to it: across a faulty
 * wire, that settles the request for an exact client, which hears of
 * neither.
 */
static void fz_reply_returned(struct fz_net *f, struct vnet_name to, u32 n,
			      u8 status)
{
	const struct fz_client *c;
	struct fz_user *u;

	if (!fz_exact_name(f, to))
		return;
	c = fz_client(to.nic, to.ep);
	u = &f->user[to.nic][to.ep];
	/* Of a life of the client that ended: it owes it nothing. */
	if (n < u->base)
		return;
	fz_assert(fz_faulty(f, c, n) &&
		  (status == VNET_RET_UNREACHABLE || status == VNET_RET_BUSY),
		  "the reply to request %u of %u/%u came back, reason %u",
		  n, to.nic, to.ep, status);
	/* A bulk one may land yet, on a later reply of its half. */
	fz_dirty(u, n);
	if (fz_window_take(&u->settled, n, u->posted))
		u->resolved++;
}

/* Read @ep's replies and returns, checking an exact client's hardest. */
static void fz_read_replies(struct fz_net *f, u32 nic, u32 ep)
{
	const struct fz_client *c = fz_client(nic, ep);
	struct vnet_name me = { nic, ep };
	struct sim_nic *s = f->net.nic[nic];
	struct fz_user *u = &f->user[nic][ep];
	u32 i;

	for (i = 0; i < VNET_QUEUE_DEPTH; i++) {
		const struct vnet_desc *d = sim_peek(s, ep, VNET_Q_REP_RECV);
		const u8 *p = sim_payload(s, ep, VNET_Q_REP_RECV);
		bool reply = d && (d->flags & VNET_DESC_REPLY);
		u32 n;

		if (!d)
			break;
		fz_touch(s, ep);
		n = d->args[0];
		/*
		 * Nothing of a hostile user's is checked, but what it reads
		 * frees its requests' places, so that it goes on posting.
		 */
		if (u->hostile) {
			if (u->resolved < u->posted)
				u->resolved++;
			goto next;
		}
		fz_check_entry(f, nic, ep, VNET_Q_REP_RECV, d);
		if (d->flags & VNET_DESC_RETURNED) {
			/* Our own reply or request, with our own bytes. */
			fz_assert(reply || !fz_exact(f, c) ||
				  fz_return_excused(f, c, n, d->status),
				  "%u/%u got request %u back, reason %u",
				  nic, ep, n, d->status);
			if (d->len && !(d->flags & VNET_FW_DESC_IN_PLACE))
				fz_check_bytes(p, d->len,
					       reply ? fz_seed(d->peer, n, true) :
						       fz_seed(me, n, false),
					       "returned message");
			if (reply) {
				fz_reply_returned(f, d->peer, n, d->status);
			} else if (fz_exact(f, c)) {
				/* Taken, perhaps, and its half reused now. */
				fz_dirty(u, n);
				if (d->status != VNET_RET_UNREACHABLE)
					fz_window_take(&u->refused, n,
						       u->posted);
				/* Its reply may have come first. */
				if (fz_window_take(&u->settled, n, u->posted))
					u->resolved++;
			} else if (u->resolved < u->posted) {
				u->resolved++;
			}
			goto next;
		}
		if (!c)
			goto next;
		if (nic == 1 && ep == FZ_G)
			fz_tokens(f, u);
		if (!fz_exact(f, c)) {
			if (u->resolved < u->posted)
				u->resolved++;
			goto next;
		}
		/* Forged from the wire, if it got past the reply key. */
		if (d->peer.nic != fz_dst(c, n).nic ||
		    d->peer.ep != fz_dst(c, n).ep)
			goto next;
		fz_assert(n >= u->base,
			  "%u/%u: reply %u, to a request of its earlier life (%u)",
			  nic, ep, n, u->base);
		/* One reply for each time a life of its server took it. */
		fz_assert(n < u->posted && u->req[n].answers < u->req[n].takes,
			  "%u/%u: reply %u again, or to nothing (%u sent, taken %u times)",
			  nic, ep, n, u->posted,
			  n < u->posted ? u->req[n].takes : 0);
		u->req[n].answers++;
		/* Across a faulty wire, its request may have come back first. */
		if (fz_window_take(&u->settled, n, u->posted))
			u->resolved++;
		if (d->flags & VNET_DESC_MEDIUM) {
			fz_check_bytes(p, d->len, fz_seed(me, n, true), "reply");
		} else if (d->flags & VNET_DESC_XFER) {
			fz_assert(d->offset == fz_reply_at(me, u, n),
				  "%u/%u: bulk reply %u at %llu", nic, ep, n,
				  (unsigned long long)d->offset);
			/* Whole, unless a later one of its half landed on it. */
			if (fz_half_clean(u, n))
				fz_check_bytes(f->net.nic[nic]->ep[ep].fw.seg +
					       d->offset, d->len,
					       fz_seed(me, n, true),
					       "bulk reply");
		}
next:
		sim_consume(s, ep, VNET_Q_REP_RECV);
	}
}

/*
 * The half of the segments request @n of @u reads from and lands in: not
 * the one the request still out, if any, has.  Two are out at most, so
 * the other is the lowest unsettled.  (A settles nothing it sends, and
 * its two may share a half; only an exact client's bytes are checked.)
 */
static u32 fz_half(struct fz_user *u, u32 n)
{
	while (u->low < n && fz_window_has(&u->settled, u->low))
		u->low++;
	return u->low < n ? !u->req[u->low].half : 0;
}

static void fz_post(struct fz_net *f, const struct fz_client *c)
{
	struct fz_user *u = &f->user[c->nic][c->ep];
	struct sim_nic *s = f->net.nic[c->nic];

	if (!f->posting || f->mute[c->nic][c->ep] ||
	    u->posted - u->resolved >= FZ_OUT || u->posted >= FZ_NUMBERS)
		return;
	fz_touch(s, c->ep);
	do {
		u32 n = u->posted, h = fz_half(u, n);
		const u8 *payload;
		struct vnet_desc d = fz_request(f, c, n, h, &payload);

		if (sim_post(s, c->ep, VNET_Q_REQ_SEND, &d, payload))
			break;
		u->req[n].half = h;
		u->req[n].to = fz_dst(c, n);
		u->posted++;
	} while (u->posted - u->resolved < FZ_OUT && u->posted < FZ_NUMBERS);
}

/* Every user does what it does once a step. */
void fz_drive(struct fz_net *f)
{
	u32 i, j;

	for (i = 0; i < FZ_NICS; i++) {
		if (i && !f->peer_live)
			break;
		for (j = 0; j < FZ_EPS; j++) {
			const struct sim_ep *e = &f->net.nic[i]->ep[j];

			/* Its user lost its mapping, or closed it. */
			if (e->fw.moving || !e->exists)
				continue;
			/* Silent until the input ends, then it drains. */
			if (!f->mute[i][j] || !f->posting)
				fz_serve(f, i, j, true);
			fz_read_replies(f, i, j);
		}
	}
	for (i = 0; i < ARRAY_SIZE(fz_clients); i++) {
		const struct fz_client *c = &fz_clients[i];
		const struct sim_ep *e = &f->net.nic[c->nic]->ep[c->ep];

		if ((f->peer_live || !c->peer_only) && !e->fw.moving &&
		    e->exists)
			fz_post(f, c);
	}
}

/* Nothing more to do for an honest user, unless a hostile one holds it. */
bool fz_user_idle(struct fz_net *f, u32 nic, u32 ep)
{
	const struct fz_client *c = fz_client(nic, ep);
	struct sim_ep *e = &f->net.nic[nic]->ep[ep];
	struct fz_user *u = &f->user[nic][ep];
	unsigned int q;

	if (u->hostile || u->tainted || (nic && !f->peer_live) || !e->exists)
		return true;
	for (q = VNET_Q_REQ_SEND; q <= VNET_Q_REP_SEND; q++)
		if (e->frame->cons[q].val != e->send_prod[q])
			return false;
	for (q = VNET_Q_REQ_RECV; q <= VNET_Q_REP_RECV; q++)
		if (sim_peek(f->net.nic[nic], ep, q))
			return false;
	return !fz_exact(f, c) || u->resolved == u->posted;
}

/* NIC @nic's endpoints' tags, segments and translations, as its users set them. */
void fz_users_setup(struct fz_net *f, u32 nic)
{
	struct sim_nic *s = f->net.nic[nic];
	u32 i, j;

	for (j = 0; j < FZ_EPS; j++) {
		s->ep[j].fw.tag = fz_tags[nic][j];
		frag_give_seg(s, j, fz_seg_len(nic, j));
	}
	for (i = 0; i < ARRAY_SIZE(fz_clients); i++) {
		const struct fz_client *c = &fz_clients[i];

		if (c->nic != nic)
			continue;
		for (j = 0; j < c->ndst; j++)
			sim_map(s, c->ep, j, c->dst[j].nic, c->dst[j].ep,
				c->tag[j]);
	}
}

/*
 * The user of endpoint @ep of NIC @nic is gone: it closed its endpoint,
 * or died as its NIC rebooted.  As a client it is owed nothing more.  As
 * a server it takes what waits in its request queue, answering nothing,
 * and the requests this life of it took and left unanswered are settled:
 * their replies may still come, once each.  Any other request to it is
 * still owed a reply or a return: taken by its next life, or back "no
 * endpoint".
 */
void fz_user_gone(struct fz_net *f, u32 nic, u32 ep)
{
	struct fz_user *u = &f->user[nic][ep];
	u32 i, n;

	if (f->net.nic[nic]->ep[ep].exists)
		fz_serve(f, nic, ep, false);
	/* Its next life's requests land where its last one's still may. */
	fz_dirty_half(u, 0);
	fz_dirty_half(u, 1);
	u->base = u->posted;
	u->resolved = u->posted;
	u->low = u->posted;
	for (i = 0; i < ARRAY_SIZE(fz_clients); i++) {
		const struct fz_client *c = &fz_clients[i];
		struct fz_user *cu = &f->user[c->nic][c->ep];

		if (!fz_exact(f, c))
			continue;
		for (n = cu->base; n < cu->posted; n++) {
			const struct fz_req *r = &cu->req[n];
			struct vnet_name to = fz_dst(c, n);

			if (to.nic != nic || to.ep != ep ||
			    r->taken_life != f->life[nic] ||
			    r->answers >= r->takes ||
			    !fz_window_take(&cu->settled, n, cu->posted))
				continue;
			cu->resolved++;
			/*
			 * Its bytes, still on the way back, are no more; but
			 * a retransmission of it may land in the server's
			 * next life where the client's next request does.
			 */
			fz_dirty(cu, n);
		}
	}
}

/*
 * NIC @nic is about to reboot, its users with it, and start its next
 * life.  First the old life ends: what its users took, they took in it.
 * The other NIC's users read what came back to them already, while a
 * closed server still excuses it; a refusal still on its way back is
 * excused after the reboot too.  A request the other NIC still has on
 * the wire to @nic may have reached the old life of its server with the
 * ACK lost: the other NIC sends it again, and the new life takes it --
 * once in each life, as receive.c says.
 */
void fz_users_rebooting(struct fz_net *f, u32 nic)
{
	const struct vnet_fw_nic *o = &f->net.nic[1 - nic]->fw;
	u8 next = f->life[nic] + 1;
	u32 i, c;

	if (nic == 0)
		f->a_taken += f->net.nic[0]->ep[FZ_A].fw.recv_prod[0];
	for (i = 0; i < FZ_EPS; i++) {
		fz_user_gone(f, nic, i);
		f->mute[nic][i] = false;
	}
	for (i = 0; i < FZ_EPS; i++) {
		const struct sim_ep *e = &f->net.nic[1 - nic]->ep[i];

		if (e->exists && !e->fw.moving)
			fz_read_replies(f, 1 - nic, i);
	}
	for (i = 0; i < o->max_peers; i++) {
		const struct vnet_fw_peer *p = &o->peers[i];

		if (!p->used || p->nic_id != nic)
			continue;
		for (c = 0; c < o->nchannels; c++) {
			const struct vnet_fw_send_chan *ch = &p->tx[c];
			u32 n = ch->msg.args[0];
			struct fz_user *u;

			/* Its sender may have closed: the message goes on. */
			if (ch->state == VNET_CHAN_FREE ||
			    ch->queue != VNET_Q_REQ_SEND || ch->src_ep >= FZ_EPS)
				continue;
			u = &f->user[1 - nic][ch->src_ep];
			if (n >= u->posted)
				continue;
			if (ch->state == VNET_CHAN_RETURNING) {
				u->req[n].noep |= ch->reason ==
						  VNET_RET_NO_ENDPOINT;
				continue;
			}
			u->req[n].wire_life = next;
			/* Landing again, on a later request of the same half. */
			fz_dirty(u, n);
		}
	}
	for (i = 0; i < FZ_EPS; i++)
		f->closed[nic][i] = false;
	f->life[nic] = next;
}
