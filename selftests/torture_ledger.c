// SPDX-License-Identifier: GPL-2.0
/*
 * The torture's honest half: client/server pairs that only ever send
 * well-formed messages, on the overcommitted loopback NIC and across the
 * lossy veth pair, and book every request in the shared ledger.  Each
 * request carries (pair, sequence number, checksum); its server books
 * taking it, its client the reply or the request's return, the server a
 * reply that came back.  torture_books.c then holds the books to what
 * the ABI promises (Documentation/vnet/abi.rst, design.rst):
 *
 *  - nothing is taken twice, replied to twice or corrupted;
 *  - a request comes back only "busy" (its server never had it) or
 *    "unreachable" (it may have), a reply likewise;
 *  - once the run drains, every request was replied to or came back, and
 *    every request a server took was answered: its reply arrived or came
 *    back.
 *
 * The servers' tags live only in this half: the pairs exchange them in a
 * mapping the honest root makes after it left the test process, so the
 * chaos processes, the test process's other children, never hold one.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include <vnet/endpoint.h>

#include "torture.h"

#define H_THREADS	(T_HONEST_PROCS * T_HONEST_THREADS)
#define H_EPS		(2 * T_MAX_PAIRS / H_THREADS)
#define H_REQUEST	1
#define H_REPLY		2

/* Seen by the honest processes alone. */
struct h_board {
	uint64_t tag[T_MAX_PAIRS];
	int published;
	uint64_t life_tag[T_LIVES_PAIRS][T_LIVES_MAX + 1];	/* by life */
};

struct h_region {
	bool used, resolved, unsure;
	uint32_t seq;
	double resolved_at;
};

struct h_ep {
	struct vnet_endpoint ep;
	int pair;
	bool client;
	uint64_t tag;			/* a server's own */
	uint8_t *seg;
	uint32_t slot;			/* a client's, to its server */
	uint32_t out[T_CREDITS];	/* a client's outstanding requests */
	int nout;
	bool done;
	struct h_region region[T_REGIONS];
};

struct h_thread {
	struct t_ctl *ctl;
	struct h_board *board;
	int id;
	uint64_t rng;
	int n;
	struct h_ep ep[H_EPS];
	uint8_t buf[VNET_MEDIUM_MAX];
};

/*
 * Pair p's client is on thread p % H_THREADS, its server three further:
 * always another process.
 */
static int h_thread_of(int pair, bool client)
{
	return client ? pair % H_THREADS : (pair + 3) % H_THREADS;
}

int t_honest_setup(struct t_ctl *ctl, uint32_t frames0)
{
	struct t_ledger *lg = &ctl->lg;
	uint32_t p, nlocal = frames0 * 3 / 4;

	/*
	 * Three quarters as many pairs as the loopback NIC has frames, so
	 * half again as many honest endpoints (12 on the default 8 frames),
	 * up to the ledger's room of ten pairs.
	 */
	if (nlocal < 1)
		nlocal = 1;
	if (nlocal > T_MAX_PAIRS - T_WIRE_PAIRS)
		nlocal = T_MAX_PAIRS - T_WIRE_PAIRS;
	lg->nlocal = nlocal;
	lg->npairs = nlocal + T_WIRE_PAIRS;
	for (p = 0; p < lg->npairs; p++) {
		bool ab = (p - nlocal) % 2 == 0;

		lg->pair[p].nic_c = p < nlocal ? 0 : ab ? T_NIC_A : T_NIC_B;
		lg->pair[p].nic_s = p < nlocal ? 0 : ab ? T_NIC_B : T_NIC_A;
	}
	return 0;
}

static struct t_entry *h_entry(struct h_thread *t, int pair, uint32_t seq)
{
	return &t->ctl->lg.e[pair][seq];
}

static uint32_t h_sent(struct h_thread *t, int pair)
{
	return __atomic_load_n(&t->ctl->lg.pair[pair].sent, __ATOMIC_ACQUIRE);
}

static bool h_same(struct vnet_name a, struct vnet_name b)
{
	return a.nic == b.nic && a.ep == b.ep;
}

/*
 * What the server answers request @seq of @pair with: a pure function of
 * the two, so the client can check it.
 */
static uint32_t h_reply_len(int pair, uint32_t seq)
{
	return (seq * 7919u + pair * 131u) % 1537u;
}

static uint32_t h_reply_seed(int pair, uint32_t seq)
{
	return ~((uint32_t)pair << 24 ^ seq);
}

static int h_open(struct h_thread *t, struct h_ep *h)
{
	struct t_pair *pp = &t->ctl->lg.pair[h->pair];
	size_t seg_len = T_REGIONS * T_REGION;
	struct vnet_seg seg;
	int err;

	err = vnet_endpoint_open(&h->ep, h->client ? pp->nic_c : pp->nic_s);
	if (err) {
		h->ep.fd = -1;
		return err;
	}
	h->seg = mmap(NULL, seg_len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (h->seg == MAP_FAILED)
		return -ENOMEM;
	seg.addr = (uintptr_t)h->seg;
	seg.len = seg_len;
	if (ioctl(h->ep.fd, VNET_IOC_SET_SEG, &seg))
		return -errno;
	if (h->client) {
		pp->client = h->ep.name;
		return 0;
	}
	err = vnet_tag_random(&h->tag);
	if (!err)
		err = vnet_endpoint_set_tag(&h->ep, h->tag);
	pp->server = h->ep.name;
	t->board->tag[h->pair] = h->tag;
	return err;
}

/*
 * A request's region of the segments is free again once nothing can still
 * land in it: its last request was answered, or came back and cannot have
 * been taken, or was taken, or had a lifetime's time to be.
 */
static bool h_region_free(struct h_thread *t, struct h_ep *h, int r)
{
	struct h_region *rg = &h->region[r];

	if (!rg->used)
		return true;
	if (!rg->resolved)
		return false;
	if (!rg->unsure ||
	    __atomic_load_n(&h_entry(t, h->pair, rg->seq)->delivered,
			    __ATOMIC_ACQUIRE))
		return true;
	return t_now() - rg->resolved_at > 2 * t->ctl->lifetime_s + 5;
}

static void h_resolve(struct h_thread *t, struct h_ep *h, uint32_t seq,
		      bool unsure)
{
	int i;

	for (i = 0; i < h->nout; i++)
		if (h->out[i] == seq)
			break;
	if (i == h->nout)
		return;
	h->out[i] = h->out[--h->nout];
	for (i = 0; i < T_REGIONS; i++)
		if (h->region[i].used && h->region[i].seq == seq) {
			h->region[i].resolved = true;
			h->region[i].unsure = unsure;
			h->region[i].resolved_at = t_now();
		}
}

static uint32_t h_len(struct h_thread *t, uint32_t max)
{
	/* Mostly within one frame of the wire, now and then trains. */
	if (t_chance(&t->rng, 70))
		max = max < 1400 ? max : 1400;
	return 1 + t_below(&t->rng, max);
}

static void h_send(struct h_thread *t, struct h_ep *h)
{
	struct t_pair *pp = &t->ctl->lg.pair[h->pair];
	struct vnet_desc d = { .handler = H_REQUEST, .nargs = VNET_MAX_ARGS,
			       .slot = (uint16_t)h->slot };
	uint32_t seq = pp->sent, len = 0, csum, pick = t_below(&t->rng, 100);
	struct t_entry *e = h_entry(t, h->pair, seq);
	int kind = pick < 25 ? T_SHORT : pick < 60 ? T_MEDIUM :
		   pick < 80 ? T_XFER : T_FROM_SEG;
	int r = t_below(&t->rng, T_REGIONS), i;

	if (kind >= T_XFER) {
		for (i = 0; i < T_REGIONS && !h_region_free(t, h, r); i++)
			r = (r + 1) % T_REGIONS;
		if (i == T_REGIONS)
			kind = T_MEDIUM;
	}
	/* The source of a bulk message stays put until its entry is taken. */
	if (kind == T_FROM_SEG &&
	    !vnet_endpoint_taken(&h->ep, VNET_Q_REQ_SEND,
				 h->ep.send_prod[VNET_Q_REQ_SEND]))
		kind = T_XFER;
	for (i = 5; i < VNET_MAX_ARGS; i++)
		d.args[i] = (uint32_t)t_rand(&t->rng);
	switch (kind) {
	case T_SHORT:
		csum = t_sum(&d.args[5], 12);
		break;
	case T_MEDIUM:
	case T_XFER:
		len = h_len(t, VNET_MEDIUM_MAX);
		csum = t_fill(t->buf, len, (uint32_t)t_rand(&t->rng));
		d.flags = kind == T_MEDIUM ? VNET_DESC_MEDIUM : VNET_DESC_XFER;
		d.offset = (uint64_t)r * T_REGION;
		if (kind == T_MEDIUM)
			d.offset = 0;
		break;
	default:
		len = h_len(t, pp->nic_c ? 16384 : T_REGION);
		csum = t_fill(h->seg + (size_t)r * T_REGION, len,
			      (uint32_t)t_rand(&t->rng));
		d.flags = VNET_DESC_XFER | VNET_DESC_FROM_SEG;
		d.offset = d.src_offset = (uint64_t)r * T_REGION;
		break;
	}
	d.len = len;
	d.args[0] = h->pair;
	d.args[1] = seq;
	d.args[2] = csum;
	d.args[3] = kind;
	d.args[4] = len;
	e->csum = csum;
	e->kind = kind;
	/* Booked before it can arrive: a server checks the sequence against it. */
	__atomic_store_n(&pp->sent, seq + 1, __ATOMIC_RELEASE);
	if (kind >= T_XFER)
		h->region[r] = (struct h_region){ .used = true, .seq = seq };
	h->out[h->nout++] = seq;
	if (vnet_endpoint_post(&h->ep, VNET_Q_REQ_SEND, &d, t->buf,
			       kind == T_MEDIUM || kind == T_XFER ? len : 0))
		t_violation(t->ctl, "pair %d: could not post request %u", h->pair,
			    seq);
}

static void h_reply_in(struct h_thread *t, struct h_ep *h,
		       const struct vnet_desc *x, const void *payload)
{
	struct t_pair *pp = &t->ctl->lg.pair[h->pair];
	uint32_t seq = x->args[1], len;
	struct t_entry *e;

	if (x->handler != H_REPLY || !(x->flags & VNET_DESC_REPLY) ||
	    !h_same(x->peer, pp->server) || x->args[0] != (uint32_t)h->pair ||
	    seq >= h_sent(t, h->pair)) {
		t_violation(t->ctl, "pair %d: client got a stranger's message: "
			    "handler %u flags %#x from %u:%u args %u %u",
			    h->pair, x->handler, x->flags, x->peer.nic,
			    x->peer.ep, x->args[0], x->args[1]);
		return;
	}
	e = h_entry(t, h->pair, seq);
	if (__atomic_fetch_add(&e->replied, 1, __ATOMIC_ACQ_REL))
		t_violation(t->ctl, "pair %d: request %u replied to twice",
			    h->pair, seq);
	len = h_reply_len(h->pair, seq);
	if (x->args[2] != e->csum || x->len != len || x->args[4] != len ||
	    (len && t_sum(payload, len) != x->args[3]) ||
	    t_fill(t->buf, len, h_reply_seed(h->pair, seq)) != x->args[3])
		t_violation(t->ctl, "pair %d: reply to %u corrupt", h->pair,
			    seq);
	h_resolve(t, h, seq, false);
}

/*
 * Returned whole (abi.rst, VNET_DESC_RETURNED): the arguments as sent, a
 * short request's checksum over them; a payload from staging in the
 * entry's slot; from the segment, its length and source offset, its bytes
 * still where they were: its region is not written again until the
 * request is resolved (once its reply came back to the server, it may
 * have been, and only the length is left to check).  A length or offset
 * out of bounds is a violation, never a read past.
 */
static bool h_whole(struct h_thread *t, struct h_ep *h,
		    const struct vnet_desc *x, const void *payload,
		    const struct t_entry *e)
{
	struct t_pair *pp = &t->ctl->lg.pair[h->pair];
	uint64_t src = ~0ULL;
	int r;

	for (r = 0; r < T_REGIONS; r++)
		if (h->region[r].used && h->region[r].seq == x->args[1])
			src = (uint64_t)r * T_REGION;
	if (!h_same(x->peer, pp->server) || x->args[2] != e->csum ||
	    x->args[3] != e->kind)
		return false;
	switch (e->kind) {
	case T_SHORT:
		return t_sum(&x->args[5], 12) == e->csum;
	case T_MEDIUM:
	case T_XFER:
		return x->len == x->args[4] && x->len <= VNET_MEDIUM_MAX &&
		       t_sum(payload, x->len) == e->csum;
	default:
		if (x->len != x->args[4] || x->len > T_REGION)
			return false;
		if (src == ~0ULL)
			return true;
		return x->src_offset == src &&
		       t_sum(h->seg + src, x->len) == e->csum;
	}
}

static void h_return_in(struct h_thread *t, struct h_ep *h,
			const struct vnet_desc *x, const void *payload)
{
	uint32_t seq = x->args[1];
	struct t_entry *e;

	if (x->handler != H_REQUEST || (x->flags & VNET_DESC_REPLY) ||
	    x->args[0] != (uint32_t)h->pair || seq >= h_sent(t, h->pair)) {
		t_violation(t->ctl, "pair %d: client got back what it never "
			    "sent: handler %u flags %#x args %u %u", h->pair,
			    x->handler, x->flags, x->args[0], x->args[1]);
		return;
	}
	e = h_entry(t, h->pair, seq);
	e->req_reason = x->status;
	if (__atomic_fetch_add(&e->req_ret, 1, __ATOMIC_ACQ_REL))
		t_violation(t->ctl, "pair %d: request %u came back twice",
			    h->pair, seq);
	if (x->status != VNET_RET_BUSY && x->status != VNET_RET_UNREACHABLE)
		t_violation(t->ctl, "pair %d: request %u came back %s", h->pair,
			    seq, t_reason(x->status));
	if (!h_whole(t, h, x, payload, e))
		t_violation(t->ctl, "pair %d: request %u (kind %u) came back %s "
			    "not whole: %u bytes of %u at %llu, to %u:%u",
			    h->pair, seq, e->kind, t_reason(x->status), x->len,
			    x->args[4], (unsigned long long)x->src_offset,
			    x->peer.nic, x->peer.ep);
	h_resolve(t, h, seq, x->status == VNET_RET_UNREACHABLE);
}

static void h_client(struct h_thread *t, struct h_ep *h, bool readable)
{
	struct t_pair *pp = &t->ctl->lg.pair[h->pair];
	const struct vnet_desc *d;
	int i;

	/*
	 * A client's tag is VNET_TAG_NONE: no request may reach it, chaos
	 * aims its own at it all the same.
	 */
	while (readable && (d = vnet_endpoint_peek(&h->ep, VNET_Q_REQ_RECV))) {
		struct vnet_desc x = *d;

		t_violation(t->ctl, "pair %d: client got a request: handler %u "
			    "flags %#x tag %#llx from %u:%u", h->pair,
			    x.handler, x.flags, (unsigned long long)x.tag,
			    x.peer.nic, x.peer.ep);
		vnet_endpoint_consume(&h->ep, VNET_Q_REQ_RECV);
	}
	while (readable && (d = vnet_endpoint_peek(&h->ep, VNET_Q_REP_RECV))) {
		struct vnet_desc x = *d;
		const void *payload = vnet_endpoint_payload(&h->ep,
							    VNET_Q_REP_RECV);

		if (x.flags & VNET_DESC_RETURNED)
			h_return_in(t, h, &x, payload);
		else
			h_reply_in(t, h, &x, payload);
		vnet_endpoint_consume(&h->ep, VNET_Q_REP_RECV);
	}
	/* A reply that came back to the server settles the request too. */
	for (i = h->nout - 1; i >= 0; i--)
		if (__atomic_load_n(&h_entry(t, h->pair, h->out[i])->rep_ret,
				    __ATOMIC_ACQUIRE))
			h_resolve(t, h, h->out[i], false);
	while (__atomic_load_n(&t->ctl->phase, __ATOMIC_ACQUIRE) == T_RUN &&
	       h->nout < T_CREDITS && pp->sent < T_MAX_SEQ &&
	       vnet_endpoint_can_post(&h->ep, VNET_Q_REQ_SEND))
		h_send(t, h);
}

/* Take a request: it must be our client's, carry our tag, and be intact. */
static void h_take(struct h_thread *t, struct h_ep *h,
		   const struct vnet_desc *x, const void *payload)
{
	struct t_pair *pp = &t->ctl->lg.pair[h->pair];
	uint32_t seq = x->args[1], kind = x->args[3], csum = 0, len;
	struct vnet_desc r = { .handler = H_REPLY, .nargs = 5,
			       .token = x->token };
	struct t_entry *e;

	if (!h_same(x->peer, pp->client) || x->tag != h->tag ||
	    x->handler != H_REQUEST || x->args[0] != (uint32_t)h->pair ||
	    seq >= h_sent(t, h->pair) || kind >= T_KINDS ||
	    (x->flags & (VNET_DESC_RETURNED | VNET_DESC_REPLY))) {
		t_violation(t->ctl, "pair %d: server took a stranger's message: "
			    "from %u:%u handler %u flags %#x args %u %u",
			    h->pair, x->peer.nic, x->peer.ep, x->handler,
			    x->flags, x->args[0], x->args[1]);
		return;
	}
	e = h_entry(t, h->pair, seq);
	if (kind == T_SHORT)
		csum = t_sum(&x->args[5], 12);
	else if (kind == T_MEDIUM && x->len <= VNET_MEDIUM_MAX)
		csum = t_sum(payload, x->len);
	else if (kind >= T_XFER && x->offset + x->len <= T_REGIONS * T_REGION)
		csum = t_sum(h->seg + x->offset, x->len);
	if (csum != x->args[2] || csum != e->csum || x->len != x->args[4])
		t_violation(t->ctl, "pair %d: request %u (%u bytes, kind %u) "
			    "arrived corrupt", h->pair, seq, x->len, kind);
	if (__atomic_fetch_add(&e->delivered, 1, __ATOMIC_ACQ_REL))
		t_violation(t->ctl, "pair %d: request %u taken twice", h->pair,
			    seq);
	len = h_reply_len(h->pair, seq);
	r.flags = len ? VNET_DESC_MEDIUM : 0;
	r.len = len;
	r.args[0] = h->pair;
	r.args[1] = seq;
	r.args[2] = x->args[2];
	r.args[3] = t_fill(t->buf, len, h_reply_seed(h->pair, seq));
	r.args[4] = len;
	if (vnet_endpoint_post(&h->ep, VNET_Q_REP_SEND, &r, t->buf, len))
		t_violation(t->ctl, "pair %d: could not post reply %u",
			    h->pair, seq);
}

/* Whether it took or read anything. */
static bool h_server(struct h_thread *t, struct h_ep *h)
{
	const struct vnet_desc *d;
	bool moved = false;

	/* A request waits in its queue until there is room for the reply. */
	while (vnet_endpoint_can_post(&h->ep, VNET_Q_REP_SEND) &&
	       (d = vnet_endpoint_peek(&h->ep, VNET_Q_REQ_RECV))) {
		struct vnet_desc x = *d;

		h_take(t, h, &x, vnet_endpoint_payload(&h->ep, VNET_Q_REQ_RECV));
		vnet_endpoint_consume(&h->ep, VNET_Q_REQ_RECV);
		moved = true;
	}
	while ((d = vnet_endpoint_peek(&h->ep, VNET_Q_REP_RECV))) {
		struct vnet_desc x = *d;
		const uint8_t *payload = vnet_endpoint_payload(&h->ep,
							       VNET_Q_REP_RECV);
		uint32_t seq = x.args[1];
		struct t_entry *e;

		vnet_endpoint_consume(&h->ep, VNET_Q_REP_RECV);
		moved = true;
		if (!(x.flags & VNET_DESC_RETURNED) ||
		    !(x.flags & VNET_DESC_REPLY) ||
		    x.args[0] != (uint32_t)h->pair ||
		    seq >= h_sent(t, h->pair)) {
			t_violation(t->ctl, "pair %d: server got back what it "
				    "never sent: flags %#x args %u %u", h->pair,
				    x.flags, x.args[0], seq);
			continue;
		}
		e = h_entry(t, h->pair, seq);
		e->rep_reason = x.status;
		if (__atomic_fetch_add(&e->rep_ret, 1, __ATOMIC_ACQ_REL))
			t_violation(t->ctl, "pair %d: reply %u came back twice",
				    h->pair, seq);
		if (x.status != VNET_RET_BUSY &&
		    x.status != VNET_RET_UNREACHABLE)
			t_violation(t->ctl, "pair %d: reply %u came back %s",
				    h->pair, seq, t_reason(x.status));
		if (x.len != x.args[4] || x.len > VNET_MEDIUM_MAX ||
		    t_sum(payload, x.len) != x.args[3])
			t_violation(t->ctl, "pair %d: reply %u came back with "
				    "%u bytes of %u, not whole", h->pair, seq,
				    x.len, x.args[4]);
	}
	return moved;
}

static int h_setup(struct h_thread *t)
{
	struct t_ledger *lg = &t->ctl->lg;
	double deadline = t_now() + 120;
	uint32_t p;
	int i, err;

	for (p = 0; p < lg->npairs; p++)
		for (i = 0; i < 2; i++)
			if (h_thread_of(p, i == 0) == t->id) {
				t->ep[t->n].pair = p;
				t->ep[t->n].client = i == 0;
				t->ep[t->n].ep.fd = -1;
				t->n++;
			}
	for (i = 0; i < t->n; i++) {
		err = h_open(t, &t->ep[i]);
		if (err) {
			t_violation(t->ctl, "honest endpoint of pair %d: %s",
				    t->ep[i].pair, strerror(-err));
			return -1;
		}
	}
	__atomic_fetch_add(&t->board->published, t->n, __ATOMIC_RELEASE);
	while (__atomic_load_n(&t->board->published, __ATOMIC_ACQUIRE) <
	       (int)(2 * lg->npairs)) {
		if (t_now() > deadline)
			return -1;
		usleep(1000);
	}
	for (i = 0; i < t->n; i++) {
		struct h_ep *h = &t->ep[i];

		if (!h->client)
			continue;
		h->slot = t_below(&t->rng, VNET_MAX_SLOTS);
		err = vnet_endpoint_map(&h->ep, h->slot, lg->pair[h->pair].server,
					t->board->tag[h->pair]);
		if (err) {
			t_violation(t->ctl, "pair %d: map: %s", h->pair,
				    strerror(-err));
			return -1;
		}
	}
	__atomic_fetch_add(&t->ctl->honest_ready, 1, __ATOMIC_RELEASE);
	return 0;
}

/*
 * Each endpoint is touched only when poll() says it has something, or to
 * send, so endpoints with nothing to do stay off the card.
 */
static void h_loop(struct h_thread *t)
{
	struct t_ledger *lg = &t->ctl->lg;
	struct pollfd pfd[H_EPS];
	int i, phase;

	while ((phase = __atomic_load_n(&t->ctl->phase, __ATOMIC_ACQUIRE)) !=
	       T_QUIT) {
		bool sending = false, stuck = false;
		int done[H_EPS];

		for (i = 0; i < t->n; i++) {
			struct h_ep *h = &t->ep[i];

			pfd[i] = (struct pollfd){ h->ep.fd, POLLIN, 0 };
			done[i] = __atomic_load_n(&lg->pair[h->pair].done,
						  __ATOMIC_ACQUIRE);
			sending |= h->client && phase == T_RUN &&
				   h->nout < T_CREDITS &&
				   lg->pair[h->pair].sent < T_MAX_SEQ;
		}
		if (poll(pfd, t->n, sending ? 0 : 5) < 0)
			continue;
		for (i = 0; i < t->n; i++) {
			struct h_ep *h = &t->ep[i];
			struct t_pair *pp = &lg->pair[h->pair];

			if (pfd[i].revents & (POLLERR | POLLHUP | POLLNVAL))
				t_violation(t->ctl, "pair %d: honest endpoint "
					    "lost its NIC", h->pair);
			if (!h->client) {
				if (pfd[i].revents & POLLIN)
					stuck |= !h_server(t, h);
				/*
				 * Seen idle after its client was done: every
				 * request it will ever take, it has taken.
				 */
				__atomic_store_n(&pp->srv_idle, done[i] &&
						 !(pfd[i].revents & POLLIN),
						 __ATOMIC_RELEASE);
				continue;
			}
			h_client(t, h, pfd[i].revents & POLLIN);
			if (phase != T_RUN && !h->nout && !h->done) {
				h->done = true;
				__atomic_store_n(&pp->done, 1, __ATOMIC_RELEASE);
				__atomic_fetch_add(&t->ctl->clients_done, 1,
						   __ATOMIC_RELEASE);
			}
		}
		/*
		 * Requests wait for room for their replies: poll() would
		 * say so at once, again and again.
		 */
		if (stuck)
			usleep(2000);
	}
}

static void *h_thread_run(void *arg)
{
	struct h_thread *t = arg;
	int i;

	if (!h_setup(t)) {
		while (__atomic_load_n(&t->ctl->phase, __ATOMIC_ACQUIRE) ==
		       T_SETUP)
			usleep(1000);
		h_loop(t);
	}
	for (i = 0; i < t->n; i++) {
		struct h_ep *h = &t->ep[i];
		struct t_pair *pp = &t->ctl->lg.pair[h->pair];
		struct vnet_ep_stat st = {};

		if (h->ep.fd < 0)
			continue;
		if (!ioctl(h->ep.fd, VNET_IOC_EP_STAT, &st)) {
			__atomic_fetch_add(&pp->rejected, st.rejected,
					   __ATOMIC_RELAXED);
			if (h->client)
				pp->st_c_received = st.received;
			else
				pp->st_received = st.received;
		}
		vnet_endpoint_close(&h->ep);
	}
	return NULL;
}

static void h_process(struct t_ctl *ctl, struct h_board *board, int k)
{
	struct h_thread *t[T_HONEST_THREADS];
	pthread_t tid[T_HONEST_THREADS];
	int i;

	for (i = 0; i < T_HONEST_THREADS; i++) {
		t[i] = calloc(1, sizeof(*t[i]));
		if (!t[i])
			_exit(1);
		t[i]->ctl = ctl;
		t[i]->board = board;
		t[i]->id = k * T_HONEST_THREADS + i;
		t[i]->rng = t_seed_of(ctl->seed, T_ROLE_HONEST, t[i]->id);
		t_say("# seed %llu: honest thread %d",
		      (unsigned long long)t[i]->rng, t[i]->id);
		if (pthread_create(&tid[i], NULL, h_thread_run, t[i]))
			_exit(1);
	}
	for (i = 0; i < T_HONEST_THREADS; i++)
		pthread_join(tid[i], NULL);
	_exit(0);
}

void t_honest_run(struct t_ctl *ctl)
{
	struct h_board *board;
	pid_t pid[T_HONEST_PROCS + T_LIVES_PAIRS];
	int k, status, bad = 0;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	board = mmap(NULL, sizeof(*board), PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (board == MAP_FAILED)
		_exit(1);
	for (k = 0; k < T_HONEST_PROCS + T_LIVES_PAIRS; k++) {
		pid[k] = fork();
		if (pid[k] < 0)
			_exit(1);
		if (!pid[k]) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (k >= T_HONEST_PROCS)
				t_lives_run(ctl, board->life_tag,
					    k - T_HONEST_PROCS);
			h_process(ctl, board, k);
		}
	}
	for (k = 0; k < T_HONEST_PROCS + T_LIVES_PAIRS; k++) {
		if (waitpid(pid[k], &status, 0) != pid[k] ||
		    !WIFEXITED(status) || WEXITSTATUS(status)) {
			t_violation(ctl, "honest process %d ended with status "
				    "%#x", k, status);
			bad = 1;
		}
	}
	_exit(bad);
}
