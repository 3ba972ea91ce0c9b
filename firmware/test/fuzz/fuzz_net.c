// SPDX-License-Identifier: GPL-2.0
/*
 * The cluster the fuzzers attack (fuzz_net.h): its endpoints' users, and
 * the invariants checked after every step and once everything settles.
 */
#include <stdio.h>
#include <stdlib.h>

#include "fuzz_net.h"
#include "frag_util.h"
#include "fw_deliver.h"
#include "fw_transport.h"

#define FZ_TAG		0xf022a11ULL
#define FZ_TAG_S	0xf022a12ULL	/* S's: only A's translation has it */
#define FZ_OUT		2		/* requests a client keeps out */
/* Medium payloads past 1404 bytes go as trains, as on Ethernet. */
#define FZ_MTU		1500
/*
 * Short timeouts, so that an input settles in tens of quanta: the bounds
 * they set are what the checks hold the firmware to, not their values.
 */
#define FZ_MAX_RETRIES	4
#define FZ_BUSY_QUANTA	10
/*
 * Peer slots: a NIC here has one peer, whose route cluster_fuzz deletes
 * and adds again into the same slot, and the firmware adds none for a
 * stranger.  sim_net_init_peers() fails the run if they do not suffice.
 */
#define FZ_MAX_PEERS	8
/* Far past what the slowest honest drain takes with these timeouts. */
#define FZ_SETTLE_QUANTA 4000

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

struct vnet_fw_nic_stats fz_ended;

/*
 * Each input builds its cluster afresh, megabytes of it, and frees it:
 * with ASan's usual quarantine of 256 MiB every input would run on memory
 * the kernel has yet to fault in, at a third of the speed.  16 MiB still
 * keeps everything one input frees quarantined until it ends.
 *
 * Memory out of quarantine comes back as the input before left it, and
 * ASan fills only the first 4 KiB of what malloc() returns: the second
 * half of every pool and train buffer (VNET_MEDIUM_MAX) would hold an
 * earlier input's bytes, and anything the firmware took from there
 * without writing it first would make a run depend on what ran before.
 * Filled whole, the same input runs the same way, and such bytes show up
 * as 0xbe where the users check what they received.
 */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "quarantine_size_mb=16:max_malloc_fill_size=65536";
}

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
	return c && c->exact && (f->peer_live || !c->peer_only);
}

/* Is @n such a client?  Only NIC 1 itself can say it is one of NIC 1's. */
static bool fz_exact_name(const struct fz_net *f, struct vnet_name n)
{
	return n.nic < FZ_NICS && n.ep < FZ_EPS &&
	       fz_exact(f, fz_client(n.nic, n.ep));
}

/*
 * A request carries what the sender's translation table says for the
 * destination -- its tag -- and the sender's reply key: nothing a user
 * wrote into its frame names another endpoint or forges a tag.
 */
static void fz_check_request(const struct sim_nic *s, u32 dst_nic,
			     const struct vnet_wire_msg *w)
{
	const struct vnet_fw_ep *src = &s->ep[be32toh(w->src_ep)].fw;
	u64 key = (u64)be32toh(w->key_hi) << 32 | be32toh(w->key_lo);
	u32 i;

	fz_assert(key == src->reply_key, "nic %u ep %u: a request with key %#llx",
		  s->fw.nic_id, src->name.ep, (unsigned long long)key);
	for (i = 0; i < VNET_MAX_SLOTS; i++) {
		const struct vnet_fw_translation *t = &src->xlate[i];

		if (t->valid && t->name.nic == dst_nic &&
		    t->name.ep == be32toh(w->dst_ep) &&
		    t->tag == be64toh(w->tag))
			return;
	}
	fz_assert(false, "nic %u ep %u: no slot for %u/%u, tag %#llx",
		  s->fw.nic_id, src->name.ep, dst_nic, be32toh(w->dst_ep),
		  (unsigned long long)be64toh(w->tag));
}

/*
 * A packet of @len bytes that NIC @s puts on the wire to peer slot @peer,
 * whatever it was fed: one the peer takes as well formed (receive.c),
 * whose message passes the peer's checks, and no longer than the link
 * carries.  Under wire_fuzz nobody else looks at what NIC 0 sends: NIC 1
 * is silent, and its frames go nowhere.
 */
static void fz_check_packet(const struct sim_nic *s, u32 peer, const u8 *pkt,
			    u32 len)
{
	const struct vnet_fw_nic *fw = &s->fw;
	const struct vnet_fw_peer *p = &fw->peers[peer];
	const struct vnet_wire_hdr *h = (const void *)pkt;
	const struct vnet_wire_frag *fr = (const void *)(h + 1);
	const struct vnet_wire_ack *ack = (const void *)(h + 1);
	const struct vnet_wire_resume *r = (const void *)(h + 1);
	const struct vnet_wire_msg *w = NULL;
	u32 n, id = fw->nic_id;

	fz_assert(len >= sizeof(*h) && len <= fw->mtu, "nic %u: %u bytes", id,
		  len);
	fz_assert(h->version == VNET_WIRE_VERSION &&
		  be16toh(h->src_nic) == id &&
		  be16toh(h->dst_nic) == p->nic_id &&
		  be32toh(h->incarnation) == p->incarnation &&
		  h->channel < VNET_WIRE_CHANNELS &&
		  !(h->flags & ~VNET_WIRE_SYNC),
		  "nic %u: header of a type %u packet", id, h->type);
	/* Its own messages go on its channels; answers on the sender's. */
	if (h->type == VNET_WIRE_DATA || h->type == VNET_WIRE_FRAG)
		fz_assert(h->channel < fw->nchannels,
			  "nic %u: type %u packet on channel %u", id, h->type,
			  h->channel);
	switch (h->type) {
	case VNET_WIRE_DATA:
		w = (const void *)(h + 1);
		fz_assert(len >= VNET_WIRE_DATA_LEN &&
			  len - VNET_WIRE_DATA_LEN == be32toh(w->len),
			  "nic %u: DATA of %u bytes", id, len);
		break;
	case VNET_WIRE_FRAG:
		n = VNET_WIRE_FRAG_LEN;
		if (len >= n && (fr->flags & VNET_FRAG_FIRST)) {
			w = (const void *)(fr + 1);
			n = VNET_WIRE_FIRST_LEN;
		}
		/* Only the last fragment may be short, and only it sums. */
		fz_assert(len >= n && len - n == be16toh(fr->len) &&
			  be16toh(fr->len) &&
			  !(fr->flags & ~(VNET_FRAG_FIRST | VNET_FRAG_LAST)) &&
			  !fr->__reserved &&
			  (fr->flags & VNET_FRAG_LAST ||
			   (be16toh(fr->len) >= VNET_WIRE_FRAG_MIN && !fr->csum)),
			  "nic %u: FRAG of %u bytes, flags %#x", id, len,
			  len >= n ? fr->flags : 0);
		break;
	case VNET_WIRE_ACK:
	case VNET_WIRE_NACK:
		fz_assert(len == VNET_WIRE_ACK_LEN && !ack->__reserved[0] &&
			  !ack->__reserved[1] && !ack->__reserved[2] &&
			  ack->status < (h->type == VNET_WIRE_ACK ? VNET_RET_NR :
							    VNET_NACK_NR),
			  "nic %u: type %u, status %u", id, h->type,
			  len == VNET_WIRE_ACK_LEN ? ack->status : 0);
		break;
	case VNET_WIRE_RESUME:
		fz_assert(len == VNET_WIRE_RESUME_LEN && !h->channel &&
			  !h->flags && !h->seq && !h->stamp &&
			  be32toh(r->ep) < s->nr_eps &&
			  !memcmp(r->__reserved, "\0\0\0\0", 4),
			  "nic %u: RESUME", id);
		break;
	default:
		/* Nothing here has the firmware send a MAPPER datagram. */
		fz_assert(false, "nic %u: a packet of type %u", id, h->type);
	}
	fz_assert(vnet_fw_csum_ok(pkt, len), "nic %u: type %u: checksum", id,
		  h->type);
	if (!w)
		return;
	fz_assert(be32toh(w->src_ep) < s->nr_eps &&
		  (w->queue == VNET_Q_REQ_SEND || w->queue == VNET_Q_REP_SEND) &&
		  vnet_fw_check_msg(w->flags, w->nargs, be32toh(w->len), true) ==
		  VNET_RET_NONE, "nic %u: ep %u, queue %u, flags %#x, %u args",
		  id, be32toh(w->src_ep), w->queue, w->flags, w->nargs);
	if (w->queue == VNET_Q_REQ_SEND)
		fz_check_request(s, p->nic_id, w);
}

/* Every packet is checked on its way to the wire, which sim_transmit() is. */
static void fz_transmit(void *ctx, u32 peer, const void *hdr, u32 hdr_len,
			const void *payload, u32 len)
{
	static u8 pkt[VNET_WIRE_MAX];
	struct sim_nic *s = ctx;

	fz_assert(hdr_len <= sizeof(pkt) && len <= sizeof(pkt) - hdr_len,
		  "nic %u: %u+%u bytes", s->fw.nic_id, hdr_len, len);
	memcpy(pkt, hdr, hdr_len);
	if (len)
		memcpy(pkt + hdr_len, payload, len);
	fz_check_packet(s, peer, pkt, hdr_len + len);
	sim_transmit(ctx, peer, hdr, hdr_len, payload, len);
}

void fz_init(struct fz_net *f, bool peer_live)
{
	u32 i, j;

	memset(f, 0, sizeof(*f));
	sim_net_init_peers(&f->net, FZ_NICS, FZ_EPS, 1, FZ_MAX_PEERS);
	f->peer_live = peer_live;
	f->posting = true;
	f->ops = *f->net.nic[0]->fw.ops;
	f->ops.transmit = fz_transmit;
	for (i = 0; i < FZ_NICS; i++) {
		struct sim_nic *s = f->net.nic[i];

		s->fw.ops = &f->ops;
		s->fw.mtu = FZ_MTU;
		s->fw.max_retries = FZ_MAX_RETRIES;
		s->fw.busy_timeout = FZ_BUSY_QUANTA * s->fw.quantum;
		for (j = 0; j < FZ_EPS; j++) {
			s->ep[j].fw.tag = fz_tags[i][j];
			frag_give_seg(s, j, FZ_SEG);
		}
	}
	for (i = 0; i < ARRAY_SIZE(fz_clients); i++) {
		const struct fz_client *c = &fz_clients[i];

		for (j = 0; j < c->ndst; j++)
			sim_map(f->net.nic[c->nic], c->ep, j, c->dst[j].nic,
				c->dst[j].ep, c->tag[j]);
	}
	/* Faulted in by the first message for them: RESUME, NOT_RESIDENT. */
	sim_unload(f->net.nic[0], FZ_B);
	sim_unload(f->net.nic[0], FZ_D);
	/* And NIC 0 hears NACKs and a RESUME from NIC 1 for A's first. */
	sim_unload(f->net.nic[1], FZ_F);
	/* A silent peer: only the fuzzer's frames come from NIC 1. */
	f->net.down[1] = !peer_live;
}

void fz_fini(struct fz_net *f)
{
	frag_free_segs(&f->net);
	sim_net_fini(&f->net);
}

/* Request @n of client @c, its payload in fz_buf or its own segment. */
static struct vnet_desc fz_request(struct fz_net *f, const struct fz_client *c,
				   u32 n, const u8 **payload)
{
	struct vnet_fw_ep *ep = &f->net.nic[c->nic]->ep[c->ep].fw;
	struct vnet_name me = { c->nic, c->ep };
	struct vnet_desc d = { .handler = 1, .nargs = 2 };
	/* Two requests out at most: each has half of both segments. */
	u32 half = (n & 1) * (FZ_SEG / 2);

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
		d.offset = half;
		break;
	case K_SEG:
		/* Past a pool buffer: a train read from the segment. */
		d.flags = VNET_DESC_XFER | VNET_DESC_FROM_SEG;
		d.len = VNET_MEDIUM_MAX + 1 + n * 101 % 4000;
		d.offset = half;
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
	u8 may = VNET_DESC_USER_FLAGS & ~VNET_DESC_FROM_SEG;
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
	if (returned && (d->flags & VNET_DESC_FROM_SEG))
		fz_assert(d->len <= VNET_XFER_MAX, "len %u", d->len);
	else if (returned || (d->flags & VNET_DESC_MEDIUM))
		fz_assert(d->len <= VNET_MEDIUM_MAX, "len %u", d->len);
	if (!(d->flags & (VNET_DESC_MEDIUM | VNET_DESC_XFER)))
		fz_assert(!d->len, "len %u flags %#x", d->len, d->flags);
	if (returned)
		return;
	/* A bulk message landed inside the receiver's segment. */
	if (d->flags & VNET_DESC_XFER)
		fz_assert(d->offset <= FZ_SEG && d->len <= FZ_SEG - d->offset &&
			  me->seg_len == FZ_SEG, "offset %llu len %u",
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
	u32 given = f->net.nic[0]->ep[FZ_A].fw.recv_prod[0];

	g->replies++;
	fz_assert(g->replies <= given, "G has %u replies from A, which took %u requests",
		  g->replies, given);
}

/* Is @c's traffic across the wire, while the wire has faults? */
static bool fz_faulty(const struct fz_net *f, const struct fz_client *c)
{
	return f->faults && c && c->dst[0].nic != c->nic;
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

/* Answer the requests on @ep's request queue, checking them first. */
static void fz_serve(struct fz_net *f, u32 nic, u32 ep)
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
		fz_touch(s, ep);
		n = d->args[0];
		r.token = d->token;
		r.args[0] = n;
		r.args[1] = d->args[1];
		if (d->args[1] & 1) {
			r.flags = VNET_DESC_MEDIUM;
			r.len = 1 + n * 53 % 1000;
			frag_fill(fz_buf, r.len, fz_seed(d->peer, n, true));
		}
		/* No room for the reply: the request waits with it. */
		if (sim_post(s, ep, VNET_Q_REP_SEND, &r, r.len ? fz_buf : NULL))
			break;
		if (!u->hostile)
			fz_check_entry(f, nic, ep, VNET_Q_REQ_RECV, d);
		if (!u->hostile && fz_exact_name(f, d->peer)) {
			struct fz_user *from = &f->user[d->peer.nic][d->peer.ep];

			seed = fz_seed(d->peer, n, false);
			fz_assert(fz_window_take(&from->served, n, from->posted),
				  "request %u of %u/%u: taken, or never sent (%u)",
				  n, d->peer.nic, d->peer.ep, from->posted);
			fz_assert(!fz_window_has(&from->busy, n),
				  "request %u of %u/%u taken after it came back busy",
				  n, d->peer.nic, d->peer.ep);
			if (d->flags & VNET_DESC_MEDIUM)
				fz_check_bytes(sim_payload(s, ep, VNET_Q_REQ_RECV),
					       d->len, seed, "medium request");
			/*
			 * A forger that has the server's tag may write into
			 * its segment too, as anyone may who has it.  Across
			 * a faulty wire, a client whose request came back
			 * although it was taken (its ACKs lost) writes the
			 * same place again with a later one.
			 */
			else if ((d->flags & VNET_DESC_XFER) && f->peer_live &&
				 !fz_faulty(f, fz_client(d->peer.nic,
							 d->peer.ep)))
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
static void fz_reply_returned(struct fz_net *f, struct vnet_name to, u32 n)
{
	struct fz_user *u;

	if (!fz_exact_name(f, to) || !fz_faulty(f, fz_client(to.nic, to.ep)))
		return;
	u = &f->user[to.nic][to.ep];
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
		if (u->hostile)
			goto next;
		fz_check_entry(f, nic, ep, VNET_Q_REP_RECV, d);
		if (d->flags & VNET_DESC_RETURNED) {
			/* Our own reply or request, with our own bytes. */
			fz_assert(!fz_exact(f, c) ||
				  (fz_faulty(f, c) &&
				   (d->status == VNET_RET_UNREACHABLE ||
				    d->status == VNET_RET_BUSY)),
				  "%u/%u got a return, reason %u",
				  nic, ep, d->status);
			if (d->len && !(d->flags & VNET_DESC_FROM_SEG))
				fz_check_bytes(p, d->len,
					       reply ? fz_seed(d->peer, n, true) :
						       fz_seed(me, n, false),
					       "returned message");
			if (reply) {
				fz_reply_returned(f, d->peer, n);
			} else if (fz_exact(f, c)) {
				if (d->status == VNET_RET_BUSY) {
					fz_assert(!fz_window_has(&u->served, n),
						  "%u/%u: request %u came back busy, but its server took it",
						  nic, ep, n);
					fz_window_take(&u->busy, n, u->posted);
				}
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
		if (!fz_exact(f, c)) {
			if (nic == 1 && ep == FZ_G)
				fz_tokens(f, u);
			if (u->resolved < u->posted)
				u->resolved++;
			goto next;
		}
		/* Forged from the wire, if it got past the reply key. */
		if (d->peer.nic != c->dst[0].nic || d->peer.ep != c->dst[0].ep)
			goto next;
		fz_assert(fz_window_take(&u->replied, n, u->posted),
			  "%u/%u: reply %u again, or to nothing (%u sent)",
			  nic, ep, n, u->posted);
		/* Across a faulty wire, its request may have come back first. */
		if (fz_window_take(&u->settled, n, u->posted))
			u->resolved++;
		if (d->flags & VNET_DESC_MEDIUM)
			fz_check_bytes(p, d->len, fz_seed(me, n, true), "reply");
next:
		sim_consume(s, ep, VNET_Q_REP_RECV);
	}
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
		const u8 *payload;
		struct vnet_desc d = fz_request(f, c, u->posted, &payload);

		if (sim_post(s, c->ep, VNET_Q_REQ_SEND, &d, payload))
			break;
		u->posted++;
	} while (u->posted - u->resolved < FZ_OUT && u->posted < FZ_NUMBERS);
}

/* Every user does what it does once a step. */
static void fz_drive(struct fz_net *f)
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
				fz_serve(f, i, j);
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

/*
 * The firmware's own books, between any two of its entry points: every
 * channel not free counted by its peer and, in flight, by its sender;
 * every pool buffer either free or on a channel; every train slot held by
 * the channel it says and counted in the entry it sets aside.
 */
static void fz_check_nic(struct sim_nic *s)
{
	struct vnet_fw_nic *fw = &s->fw;
	u32 reserved[FZ_EPS][2] = {};
	u32 unresolved[FZ_EPS] = {}, pool_held[FZ_EPS] = {};
	u32 i, c, held = 0, trains = 0, paused = 0;

	fz_assert(fw->pool_free <= SIM_POOL, "%u", fw->pool_free);
	fz_assert(fw->trains_busy <= fw->ntrains, "%u", fw->trains_busy);
	fz_assert(fw->nactive <= fw->max_peers, "%u", fw->nactive);
	for (i = 0; i < fw->max_peers; i++) {
		struct vnet_fw_peer *p = &fw->peers[i];
		u32 busy = 0, ptrains = 0;

		if (!p->used) {
			fz_assert(!p->unacked && !p->trains, "peer %u", i);
			continue;
		}
		for (c = 0; c < fw->nchannels; c++) {
			const struct vnet_fw_send_chan *ch = &p->tx[c];

			fz_assert(ch->state <= VNET_CHAN_PAUSED, "%u", ch->state);
			if (ch->state == VNET_CHAN_FREE)
				fz_assert(!ch->payload && !ch->counted,
					  "free channel %u holds", c);
			busy += ch->state != VNET_CHAN_FREE;
			held += !!ch->payload;
			paused += ch->state == VNET_CHAN_PAUSED;
			if (ch->counted && ch->src)
				unresolved[ch->src->name.ep]++;
			if (ch->payload && ch->src)
				pool_held[ch->src->name.ep]++;
		}
		/* A peer may send on more channels than we do. */
		for (c = 0; c < VNET_WIRE_CHANNELS; c++) {
			u32 t = p->rx[c].train;

			if (!t)
				continue;
			fz_assert(t <= fw->ntrains && fw->trains[t - 1].busy &&
				  fw->trains[t - 1].peer == i &&
				  fw->trains[t - 1].channel == c,
				  "peer %u channel %u train %u", i, c, t);
			ptrains++;
		}
		fz_assert(busy == p->unacked, "peer %u: %u busy, %u unacked", i,
			  busy, p->unacked);
		fz_assert(ptrains == p->trains, "peer %u: %u trains, %u counted",
			  i, ptrains, p->trains);
		if (busy)
			fz_assert(p->active_pos < fw->nactive &&
				  fw->active[p->active_pos] == i, "peer %u", i);
	}
	fz_assert(fw->pool_free + held == SIM_POOL, "%u free, %u held",
		  fw->pool_free, held);
	fz_assert(paused == fw->paused, "%u paused, %u counted", paused,
		  fw->paused);
	for (i = 0; i < fw->ntrains; i++) {
		const struct vnet_fw_train *t = &fw->trains[i];

		if (!t->busy)
			continue;
		trains++;
		fz_assert(t->dst->name.nic == fw->nic_id &&
			  t->dst->name.ep < FZ_EPS &&
			  (t->rq == VNET_Q_REQ_RECV || t->rq == VNET_Q_REP_RECV) &&
			  t->received < t->msg.len, "train %u", i);
		reserved[t->dst->name.ep][t->rq - VNET_Q_REQ_RECV]++;
	}
	fz_assert(trains == fw->trains_busy, "%u trains, %u counted", trains,
		  fw->trains_busy);
	for (i = 0; i < s->nr_eps; i++) {
		const struct vnet_fw_ep *ep = &s->ep[i].fw;

		fz_assert(ep->recv_reserved[0] == reserved[i][0] &&
			  ep->recv_reserved[1] == reserved[i][1],
			  "ep %u reserves %u+%u for %u+%u trains", i,
			  ep->recv_reserved[0], ep->recv_reserved[1],
			  reserved[i][0], reserved[i][1]);
		fz_assert(ep->pool_held == pool_held[i] &&
			  pool_held[i] <= vnet_fw_pool_share(fw),
			  "ep %u: %u pool buffers, %u counted", i, pool_held[i],
			  ep->pool_held);
		fz_assert(ep->unresolved == unresolved[i],
			  "ep %u: %u unresolved, %u counted", i,
			  unresolved[i], ep->unresolved);
	}
}

/*
 * What the host asks of the firmware between rounds, reading the same
 * user memory: whether to sleep, poll()'s question, and an eviction's.
 */
static void fz_host(struct sim_nic *s)
{
	u32 i;

	if (!vnet_fw_arm_wakeup(&s->fw))
		vnet_fw_disarm_wakeup(&s->fw);
	for (i = 0; i < s->nr_eps; i++) {
		struct vnet_fw_ep *ep = &s->ep[i].fw;

		if (!ep->frame)
			continue;
		vnet_fw_recv_pending(ep->frame);
		vnet_fw_sends_pending(ep, ep->frame);
	}
}

void fz_run(struct fz_net *f, u32 steps, u64 dt)
{
	u32 i;

	while (steps--) {
		fz_drive(f);
		sim_net_step(&f->net, dt);
		for (i = 0; i < FZ_NICS; i++) {
			fz_host(f->net.nic[i]);
			fz_check_nic(f->net.nic[i]);
		}
	}
}

/*
 * What a frame from an address no route has may change: the counters of
 * what was refused, and of mapper datagrams, which need no route.
 */
static void fz_stranger_stats(struct vnet_fw_nic_stats *st)
{
	st->bad_frames = 0;
	st->bad_source = 0;
	st->no_route = 0;
	st->rx_mapper = 0;
}

/* A frame for NIC 0 from NIC 1's address, or from one with no route. */
void fz_inject(struct fz_net *f, const u8 *frame, u32 len, bool stranger)
{
	struct vnet_fw_nic *fw = &f->net.nic[0]->fw;
	struct vnet_fw_nic_stats before = fw->stats, after;
	u8 mac[6];
	/* Its own copy: a read past its end is one past an allocation. */
	u8 *copy = malloc(len ? len : 1);

	sim_mac(stranger ? 0x99 : 1, mac);
	memcpy(copy, frame, len);
	sim_net_inject(&f->net, 0, mac, copy, len);
	free(copy);
	fz_check_nic(f->net.nic[0]);
	if (!stranger)
		return;
	/* Whatever NIC it claims to be, it is none: nothing else moves. */
	after = fw->stats;
	fz_stranger_stats(&before);
	fz_stranger_stats(&after);
	fz_assert(!memcmp(&before, &after, sizeof(before)),
		  "a stranger's frame of %u bytes, type %u, got past the route",
		  len, len > 1 ? frame[1] : 0);
}

/*
 * Move endpoint @ep of NIC @nic off the card the host's way
 * (vnet_cache_detach()): the firmware stops visiting it, and it goes
 * once nothing of it is on the wire -- which the firmware promises
 * within max(busy_timeout, 2 * max_retries quanta) whatever the peer
 * does.  It comes back when a message for it, or its user, or its own
 * posted messages want it.
 */
void fz_move(struct fz_net *f, u32 nic, u32 ep)
{
	struct sim_nic *s = f->net.nic[nic];
	struct vnet_fw_ep *fw = &s->ep[ep].fw;
	u64 retries = 2ULL * s->fw.max_retries * s->fw.quantum;
	/* And a quantum: the scan that sees a deadline runs once one. */
	u64 bound = (s->fw.busy_timeout > retries ? s->fw.busy_timeout :
						     retries) + s->fw.quantum;
	u64 start = f->net.now;

	if (!fw->frame || !s->ep[ep].exists)
		return;
	s->owner[ep] = NULL;
	fw->moving = true;
	while (fw->unresolved) {
		fz_assert(f->net.now - start <= bound,
			  "%u/%u still has %u messages unresolved after %llu",
			  nic, ep, fw->unresolved,
			  (unsigned long long)(f->net.now - start));
		fz_run(f, 1, FZ_DT);
	}
	sim_unload(s, ep);
	fw->moving = false;
	/* What it posted meanwhile brings it back, as vnet_cache_evict(). */
	if (vnet_fw_sends_pending(fw, s->ep[ep].frame))
		s->faults_requested[ep]++;
}

/* Nothing more to do for an honest user, unless a hostile one holds it. */
static bool fz_user_idle(struct fz_net *f, u32 nic, u32 ep)
{
	const struct fz_client *c = fz_client(nic, ep);
	struct sim_ep *e = &f->net.nic[nic]->ep[ep];
	struct fz_user *u = &f->user[nic][ep];
	unsigned int q;

	if (u->hostile || u->tainted || (nic && !f->peer_live))
		return true;
	for (q = VNET_Q_REQ_SEND; q <= VNET_Q_REP_SEND; q++)
		if (e->frame->cons[q].val != e->send_prod[q])
			return false;
	for (q = VNET_Q_REQ_RECV; q <= VNET_Q_REP_RECV; q++)
		if (sim_peek(f->net.nic[nic], ep, q))
			return false;
	return !fz_exact(f, c) || u->resolved == u->posted;
}

static bool fz_quiet(struct fz_net *f)
{
	u32 i, j;

	if (!frag_all_quiet(&f->net))
		return false;
	for (i = 0; i < FZ_NICS; i++)
		for (j = 0; j < FZ_EPS; j++)
			if (!fz_user_idle(f, i, j))
				return false;
	return true;
}

/* The firmware's counters against what it wrote into the queues. */
static void fz_check_final(struct fz_net *f)
{
	u32 i, j, r;

	for (i = 0; i < FZ_NICS; i++) {
		struct sim_nic *s = f->net.nic[i];
		const struct vnet_fw_nic_stats *st = &s->fw.stats;
		u64 returned = 0;

		for (r = 0; r < VNET_RET_NR; r++)
			returned += st->returned[r];
		fz_assert(st->tx_frags <= st->tx_data &&
			  st->rx_frags <= st->rx_data &&
			  st->rx_trains <= st->rx_frags &&
			  returned <= st->tx_data, "nic %u counters", i);
		for (j = 0; j < FZ_EPS; j++) {
			const struct sim_ep *e = &s->ep[j];
			const struct vnet_fw_ep *ep = &e->fw;

			fz_assert((u64)ep->recv_prod[0] + ep->recv_prod[1] ==
				  ep->stats.received + ep->stats.returned,
				  "nic %u ep %u: %u+%u entries, %llu+%llu counted",
				  i, j, ep->recv_prod[0], ep->recv_prod[1],
				  (unsigned long long)ep->stats.received,
				  (unsigned long long)ep->stats.returned);
			if (f->user[i][j].hostile)
				continue;
			fz_assert(e->frame->prod[VNET_Q_REQ_RECV].val ==
				  ep->recv_prod[0] &&
				  e->frame->prod[VNET_Q_REP_RECV].val ==
				  ep->recv_prod[1] &&
				  e->frame->cons[VNET_Q_REQ_SEND].val ==
				  ep->send_cons[0] &&
				  e->frame->cons[VNET_Q_REP_SEND].val ==
				  ep->send_cons[1], "nic %u ep %u indices", i, j);
		}
	}
}

/* What is left, for whoever reads the crash. */
static void fz_dump(struct fz_net *f)
{
	u32 i, j;

	for (i = 0; i < FZ_NICS; i++) {
		const struct vnet_fw_nic *fw = &f->net.nic[i]->fw;

		fprintf(stderr, "nic %u: %u peers busy, %u trains, %u paused, %u buffers free\n",
			i, fw->nactive, fw->trains_busy, fw->paused,
			fw->pool_free);
		for (j = 0; j < FZ_EPS; j++) {
			const struct vnet_fw_ep *ep = &f->net.nic[i]->ep[j].fw;
			const struct fz_user *u = &f->user[i][j];

			fprintf(stderr, "  ep %u: idle %d, %u/%u resolved, %u unresolved, train_head %#x done %#x, %s, %u faults asked\n",
				j, fz_user_idle(f, i, j), u->resolved,
				u->posted, ep->unresolved, ep->train_head,
				ep->train_done, ep->frame ? "on the card" : "off",
				f->net.nic[i]->faults_requested[j]);
		}
	}
}

/*
 * Stop posting and let everything run out: whatever a peer or a user did,
 * the firmware gives every channel, buffer, train slot and queue entry
 * back within its timeouts, and every honest user gets what it is owed.
 */
void fz_settle(struct fz_net *f)
{
	u64 quantum = f->net.nic[0]->fw.quantum;
	u32 i;

	fz_ended = f->net.nic[0]->fw.stats;
	f->posting = false;
	for (i = 0; i < FZ_SETTLE_QUANTA && !fz_quiet(f); i++)
		fz_run(f, 1, quantum);
	if (!fz_quiet(f))
		fz_dump(f);
	fz_assert(fz_quiet(f), "nothing settles in %u quanta",
		  FZ_SETTLE_QUANTA);
	fz_check_final(f);
}
