// SPDX-License-Identifier: GPL-2.0
/*
 * Trains from a host that does not play along, sending with a routed
 * peer's address: first fragments that claim a megabyte and never go on,
 * more trains than a peer may hold, malformed fragment headers, fragments
 * that skip, overlap, belong to another train, run past their message or
 * end it with the wrong checksum, trains on every channel to one
 * endpoint, trains dripped a fragment a busy_timeout, and RESTART NACKs
 * to a sender.  None of it delivers anything, what it can hold it holds
 * for as long as its length allows at most, and other peers' trains go
 * on.
 */
#include "kselftest_harness.h"
#include "frag_util.h"

#define TAG		0x5cULL
#define INC		0x1badcafeu	/* the forger's incarnation */
#define FMIN		VNET_WIRE_FRAG_MIN
#define FORGER_EPS	4		/* per NIC; NIC 1's from 1 on take XFERs */

FIXTURE(forger) {
	struct sim_net net;
	struct sim_nic *b;
	u8 mac[3][6];
	u32 seq;			/* the next one NIC 1 expects */
};

/* NIC 1 is the target; the forger sends as NIC 0; NIC 2 is honest. */
FIXTURE_SETUP(forger)
{
	u32 i;

	sim_net_init(&self->net, 3, FORGER_EPS, 55);
	for (i = 0; i < 3; i++) {
		sim_mac(i, self->mac[i]);
		self->net.nic[i]->fw.mtu = 1500;
	}
	self->b = self->net.nic[1];
	for (i = 1; i < FORGER_EPS; i++) {
		self->b->ep[i].fw.tag = TAG;
		frag_give_seg(self->b, i, VNET_XFER_MAX);
	}
	sim_map(self->net.nic[2], 0, 0, 1, 1, TAG);
	frag_give_seg(self->net.nic[2], 0, VNET_XFER_MAX);
	/* The forger's packets are answered to NIC 0: let them be lost. */
	self->net.down[0] = true;
	self->seq = 1000;
}

FIXTURE_TEARDOWN(forger)
{
	frag_free_segs(&self->net);
	sim_net_fini(&self->net);
}

struct frag_spec {
	u8 channel, hflags, fflags, reserved;
	u32 seq, train, offset, len, csum;
	u32 msg_len;			/* FIRST: the whole message's */
	u32 dst_ep;			/* FIRST: NIC 1's endpoint */
	u8 msg_flags;
	u8 fill;
};

/* A FRAG packet to NIC 1 as NIC 0 would send it; its length. */
static u32 forge_frag(u8 *buf, const struct frag_spec *s)
{
	struct vnet_wire_hdr *h = (void *)buf;
	struct vnet_wire_frag *f = (void *)(h + 1);
	struct vnet_wire_msg *w = (void *)(f + 1);
	u32 hlen = VNET_WIRE_FRAG_LEN, plen = s->len;

	memset(buf, 0, VNET_WIRE_FIRST_LEN);
	h->version = VNET_WIRE_VERSION;
	h->type = VNET_WIRE_FRAG;
	h->channel = s->channel;
	h->flags = s->hflags;
	h->src_nic = htobe16(0);
	h->dst_nic = htobe16(1);
	h->incarnation = htobe32(INC);
	h->seq = htobe32(s->seq);
	h->stamp = htobe32(s->seq);
	f->train = htobe32(s->train);
	f->offset = htobe32(s->offset);
	f->len = htobe16(s->len);
	f->flags = s->fflags;
	f->__reserved = s->reserved;
	f->csum = htobe32(s->csum);
	if (s->fflags & VNET_FRAG_FIRST) {
		hlen = VNET_WIRE_FIRST_LEN;
		w->dst_ep = htobe32(s->dst_ep);
		w->tag = htobe64(TAG);
		w->queue = VNET_Q_REQ_SEND;
		w->handler = 1;
		w->flags = s->msg_flags;
		w->len = htobe32(s->msg_len);
	}
	if (plen > VNET_MEDIUM_MAX)
		plen = VNET_MEDIUM_MAX;
	memset(buf + hlen, s->fill, plen);
	h->csum = htobe32(vnet_crc32c(0, buf, hlen + plen));
	return hlen + plen;
}

static void send_frag(FIXTURE_DATA(forger) *self, const struct frag_spec *s)
{
	static u8 buf[VNET_WIRE_MAX];
	u32 len = forge_frag(buf, s);

	sim_net_inject(&self->net, 1, self->mac[0], buf, len);
}

/* The first fragment of an XFER of @total bytes at the expected number. */
static struct frag_spec first(FIXTURE_DATA(forger) *self, u32 total, u32 len)
{
	struct frag_spec s = {
		.hflags = VNET_WIRE_SYNC, .fflags = VNET_FRAG_FIRST,
		.seq = self->seq, .train = self->seq, .len = len,
		.msg_len = total, .msg_flags = VNET_DESC_XFER, .fill = 0xa5,
		.dst_ep = 1,
	};

	return s;
}

/* The fragment after @s, of @len bytes, last or not. */
static struct frag_spec next(const struct frag_spec *s, u32 len, bool last)
{
	struct frag_spec n = *s;

	n.hflags = 0;
	n.fflags = last ? VNET_FRAG_LAST : 0;
	n.seq = s->seq + 1;
	n.offset = s->offset + s->len;
	n.len = len;
	n.msg_len = 0;
	return n;
}

/*
 * A first fragment claiming a megabyte, and nothing more: it holds its
 * train slot and one entry of the receive queue -- the endpoint takes one
 * message less meanwhile -- for busy_timeout, then lets go of both.
 */
TEST_F(forger, never_ending_train_holds_an_entry_for_busy_timeout)
{
	struct sim_nic *b = self->b, *c = self->net.nic[2];
	struct frag_spec s = first(self, VNET_XFER_MAX, FMIN);
	u32 i;

	send_frag(self, &s);
	EXPECT_EQ(1, b->fw.trains_busy);
	EXPECT_EQ(1, b->ep[1].fw.recv_reserved[0]);
	EXPECT_EQ(0, b->fw.stats.bad_frames);

	/* An honest client fills the queue: one entry short. */
	for (i = 0; i < VNET_QUEUE_DEPTH; i++) {
		struct vnet_desc d = sim_request(i);

		ASSERT_EQ(0, sim_post(c, 0, VNET_Q_REQ_SEND, &d, NULL));
	}
	sim_net_run_for(&self->net, 3 * b->fw.quantum);
	EXPECT_EQ(VNET_QUEUE_DEPTH - 1, b->ep[1].fw.stats.received);
	EXPECT_LT(0, b->fw.stats.tx_nack[VNET_NACK_QUEUE_FULL]);

	sim_net_run_for(&self->net, b->fw.busy_timeout);
	EXPECT_EQ(0, b->fw.trains_busy);
	EXPECT_EQ(0, b->ep[1].fw.recv_reserved[0]);
	EXPECT_EQ(1, b->fw.stats.trains_dropped);
	EXPECT_EQ(VNET_QUEUE_DEPTH, b->ep[1].fw.stats.received);
	for (i = 0; i < VNET_QUEUE_DEPTH; i++) {
		EXPECT_EQ(0, sim_peek(b, 1, VNET_Q_REQ_RECV)->flags);
		sim_consume(b, 1, VNET_Q_REQ_RECV);
	}
	EXPECT_EQ(NULL, sim_peek(b, 1, VNET_Q_REQ_RECV));
}

static bool received(struct sim_net *net, void *arg)
{
	return sim_peek(arg, 1, VNET_Q_REQ_RECV);
}

/*
 * However many channels it starts trains on, one peer holds half the
 * NIC's train slots at most; another peer's train still goes through.
 */
TEST_F(forger, one_peer_holds_half_the_train_slots)
{
	struct sim_nic *b = self->b, *c = self->net.nic[2];
	struct vnet_desc d = frag_xfer_seg(100000, 0, 0);
	u32 ch;

	b->fw.ntrains = 4;
	for (ch = 0; ch < 4; ch++) {
		struct frag_spec s = first(self, VNET_XFER_MAX, FMIN);

		s.channel = ch;
		send_frag(self, &s);
	}
	EXPECT_EQ(2, b->fw.trains_busy);
	EXPECT_EQ(2, b->fw.stats.tx_nack[VNET_NACK_QUEUE_FULL]);

	frag_fill(c->ep[0].fw.seg, 100000, 3);
	ASSERT_EQ(0, sim_post(c, 0, VNET_Q_REQ_SEND, &d, NULL));
	sim_net_run_for(&self->net, 1000);
	EXPECT_EQ(3, b->fw.trains_busy);
	ASSERT_TRUE(frag_run_until(&self->net, received, b, 100000));
	EXPECT_EQ(2, b->fw.trains_busy);
	EXPECT_EQ(100000, sim_peek(b, 1, VNET_Q_REQ_RECV)->len);
	EXPECT_TRUE(frag_same(b->ep[1].fw.seg, 100000, 3));
}

/* The next of @bad, a copy of @from for the caller to spoil. */
static struct frag_spec *add_bad(struct frag_spec *bad, u32 *n,
				 const struct frag_spec *from)
{
	bad[*n] = *from;
	return &bad[(*n)++];
}

/* Fragment headers that say something impossible: bad frames, no effect. */
TEST_F(forger, malformed_fragments_are_bad_frames)
{
	struct sim_nic *b = self->b;
	struct frag_spec ok = first(self, 5000, FMIN), bad[20], nx, *s;
	static u8 buf[VNET_WIRE_MAX];
	u32 i, n = 0, len;

	add_bad(bad, &n, &ok)->fflags |= 0x04;
	add_bad(bad, &n, &ok)->reserved = 1;
	add_bad(bad, &n, &ok)->len = 0;
	s = add_bad(bad, &n, &ok);
	s->msg_len = 20000;
	s->len = VNET_MEDIUM_MAX + 1;
	add_bad(bad, &n, &ok)->csum = 1;
	add_bad(bad, &n, &ok)->offset = 8;
	add_bad(bad, &n, &ok)->fflags |= VNET_FRAG_LAST;
	add_bad(bad, &n, &ok)->train = ok.seq + 1;
	add_bad(bad, &n, &ok)->len = 5000;
	add_bad(bad, &n, &ok)->msg_flags = 0;
	s = add_bad(bad, &n, &ok);
	s->msg_flags = VNET_DESC_MEDIUM;
	s->msg_len = VNET_MEDIUM_MAX + 1;
	add_bad(bad, &n, &ok)->msg_len = VNET_XFER_MAX + 1;
	add_bad(bad, &n, &ok)->msg_flags = VNET_DESC_XFER | VNET_DESC_FROM_SEG;
	nx = next(&ok, FMIN, false);
	add_bad(bad, &n, &nx)->offset = 0;
	add_bad(bad, &n, &nx)->offset = VNET_XFER_MAX;
	/* Shorter than any link that carries trains makes one, not last. */
	add_bad(bad, &n, &ok)->len = FMIN - 1;
	nx = next(&ok, FMIN - 1, false);
	add_bad(bad, &n, &nx);
	add_bad(bad, &n, &ok)->hflags |= 0x02;
	for (i = 0; i < n; i++)
		send_frag(self, &bad[i]);
	EXPECT_EQ(n, b->fw.stats.bad_frames);
	EXPECT_EQ(0, b->fw.trains_busy);
	EXPECT_FALSE(b->fw.peers[0].rx[0].valid);

	/* Shorter than its header says. */
	len = forge_frag(buf, &ok);
	sim_net_inject(&self->net, 1, self->mac[0], buf, len - 1);
	EXPECT_EQ(n + 1, b->fw.stats.bad_frames);
	send_frag(self, &ok);
	EXPECT_EQ(1, b->fw.trains_busy);
}

/*
 * Fragments that do not follow the one before drop the train and are
 * NACKed RESTART; only a train whose every fragment follows, and whose
 * checksum matches, is delivered -- once.
 */
TEST_F(forger, fragments_that_do_not_follow_drop_the_train)
{
	struct sim_nic *b = self->b;
	struct frag_spec s, m, l, bad[6];
	u32 i, n = 0, crc;
	const struct vnet_desc *d;
	u8 bytes[5000];

	memset(bytes, 0xa5, sizeof(bytes));
	crc = vnet_crc32c(0, bytes, sizeof(bytes));
	s = first(self, 5000, FMIN);
	m = next(&s, 2000, false);
	l = next(&m, 3000 - FMIN, true);
	l.csum = crc;

	add_bad(bad, &n, &m)->offset = FMIN + 500;	/* a gap */
	add_bad(bad, &n, &m)->offset = FMIN - 500;	/* an overlap */
	add_bad(bad, &n, &m)->train = s.seq - 5;	/* another train */
	add_bad(bad, &n, &m)->len = 4000;		/* past the end */
	add_bad(bad, &n, &m)->fflags = VNET_FRAG_LAST;	/* not the end */
	add_bad(bad, &n, &l)->csum = crc + 1;		/* wrong CRC */
	for (i = 0; i < n; i++) {
		struct frag_spec f = s, g = m, h = bad[i];
		u32 shift = self->seq - s.seq;

		/* Each try is a new train at the number b expects now. */
		f.seq += shift;
		f.train += shift;
		g.seq += shift;
		g.train += shift;
		h.seq += shift;
		h.train += shift;
		send_frag(self, &f);
		ASSERT_EQ(1, b->fw.trains_busy);
		self->seq++;
		if (i == n - 1) {
			send_frag(self, &g);
			self->seq++;
		}
		send_frag(self, &h);
		EXPECT_EQ(0, b->fw.trains_busy);
		EXPECT_EQ(0, b->ep[1].fw.recv_reserved[0]);
		EXPECT_EQ(i + 1, b->fw.stats.tx_nack[VNET_NACK_RESTART]);
	}
	EXPECT_EQ(n, b->fw.stats.trains_dropped);
	EXPECT_EQ(NULL, sim_peek(b, 1, VNET_Q_REQ_RECV));

	/* And one that follows, at the numbers b expects. */
	s.seq = self->seq;
	s.train = self->seq;
	m = next(&s, 2000, false);
	l = next(&m, 3000 - FMIN, true);
	l.csum = crc;
	send_frag(self, &s);
	send_frag(self, &m);
	send_frag(self, &l);
	send_frag(self, &l);		/* a duplicate: ACKed, not taken */
	d = sim_peek(b, 1, VNET_Q_REQ_RECV);
	ASSERT_NE(NULL, d);
	EXPECT_EQ(5000, d->len);
	EXPECT_EQ(0, memcmp(b->ep[1].fw.seg, bytes, sizeof(bytes)));
	EXPECT_EQ(1, b->ep[1].fw.stats.received);
	EXPECT_EQ(1, b->fw.stats.rx_trains);
	EXPECT_EQ(0, b->fw.trains_busy);
}

/* An ACK or NACK of channel 0's latest transmission, as NIC 1, to NIC 2. */
static void answer_as_1(FIXTURE_DATA(forger) *self,
			const struct vnet_fw_send_chan *ch, u8 type, u8 status)
{
	frag_answer(&self->net, 2, 1, self->mac[1], INC, type, ch->seq,
		    ch->stamp, status);
}

typedef void answer_fn(FIXTURE_DATA(forger) *self,
		       const struct vnet_fw_send_chan *ch);

/*
 * NIC 2 sends NIC 1 a train of 100 kB, which only the forger answers,
 * with @answer, while it is on the wire: its return, and in *@took when,
 * or NULL if it is not back within @limit.
 */
static const struct vnet_desc *train_answered(FIXTURE_DATA(forger) *self,
					      answer_fn *answer, u64 limit,
					      u64 *took)
{
	struct sim_nic *c = self->net.nic[2];
	struct vnet_fw_peer *p = &c->fw.peers[c->fw.peer_of[1]];
	struct vnet_desc d = frag_xfer_seg(100000, 0, 0);
	const struct vnet_desc *got = NULL;
	u64 start;

	self->net.down[1] = true;
	if (sim_post(c, 0, VNET_Q_REQ_SEND, &d, NULL))
		return NULL;
	start = self->net.now;
	while (!got && self->net.now - start < limit) {
		sim_net_step(&self->net, 20);
		got = sim_peek(c, 0, VNET_Q_REP_RECV);
		if (p->tx[0].state == VNET_CHAN_INFLIGHT)
			answer(self, &p->tx[0]);
	}
	*took = self->net.now - start;
	return got;
}

/*
 * The train came back whole within @bound, "busy" (the receiver never had
 * it), after more than one NACK @reason, and nothing was delivered.
 */
static void expect_back_busy(FIXTURE_DATA(forger) *self,
			     struct __test_metadata *_metadata,
			     const struct vnet_desc *got, u64 took, u64 bound,
			     u8 reason)
{
	const struct vnet_fw_nic *fw = &self->net.nic[2]->fw;

	ASSERT_NE(NULL, got);
	EXPECT_EQ(VNET_RET_BUSY, got->status);
	EXPECT_EQ(100000, got->len);
	EXPECT_LE(took, bound);
	EXPECT_LT(1, fw->stats.rx_nack[reason]);
	EXPECT_EQ(0, self->b->ep[1].fw.stats.received);
	TH_LOG("back after %llu (bound %llu), %llu restarts",
	       (unsigned long long)took, (unsigned long long)bound,
	       (unsigned long long)fw->stats.rx_nack[reason]);
}

static void nack_restart(FIXTURE_DATA(forger) *self,
			 const struct vnet_fw_send_chan *ch)
{
	answer_as_1(self, ch, VNET_WIRE_NACK, VNET_NACK_RESTART);
}

/*
 * NACK RESTART to a sender, for every fragment it sends: the train starts
 * over each time, is never delivered in part, and comes back "busy"
 * within busy_timeout of the first refusal.
 */
TEST_F(forger, restart_nacks_bound_a_train)
{
	struct sim_nic *c = self->net.nic[2];
	u64 took, bound = c->fw.busy_timeout + 3 * c->fw.quantum;
	const struct vnet_desc *got = train_answered(self, nack_restart,
						     4 * bound, &took);

	expect_back_busy(self, _metadata, got, took, bound, VNET_NACK_RESTART);
}

static void ack_first_resync_next(FIXTURE_DATA(forger) *self,
				  const struct vnet_fw_send_chan *ch)
{
	if (ch->frag_off)
		answer_as_1(self, ch, VNET_WIRE_NACK, VNET_NACK_RESYNC);
	else
		answer_as_1(self, ch, VNET_WIRE_ACK, VNET_RET_NONE);
}

/*
 * ACK a train's first fragment and NACK RESYNC the second, over and over:
 * the train starts over from its first fragment each time, as if its
 * receiver had lost the channel, but gets no further than it ever got.
 * It must come back within the busy clock a restart runs -- busy_timeout
 * and two quanta for the fragment it got through -- not hold its channel,
 * pool buffer and send queue for ever.
 */
TEST_F(forger, ack_and_resync_loop_bounds_a_train)
{
	struct sim_nic *c = self->net.nic[2];
	struct vnet_fw_peer *p = &c->fw.peers[c->fw.peer_of[1]];
	/*
	 * Two quanta for each VNET_WIRE_FRAG_MIN of the first fragment (two,
	 * at MTU 1500), and one for the scan that finds it out of time: the
	 * deterministic simulation meets the bound exactly.
	 */
	u64 took, bound = c->fw.busy_timeout + 5 * c->fw.quantum;
	const struct vnet_desc *got = train_answered(self,
						     ack_first_resync_next,
						     4 * bound, &took);

	/* Short of its last fragment the receiver cannot have it: busy. */
	expect_back_busy(self, _metadata, got, took, bound, VNET_NACK_RESYNC);
	EXPECT_EQ(VNET_CHAN_FREE, p->tx[0].state);
}

/* NIC 2's train on channel 0 to NIC 1, ACKed by the forger to @far bytes. */
static const struct vnet_fw_send_chan *train_to(FIXTURE_DATA(forger) *self,
						u32 len, u32 far)
{
	struct sim_nic *c = self->net.nic[2];
	struct vnet_fw_peer *p = &c->fw.peers[c->fw.peer_of[1]];
	struct vnet_desc d = frag_xfer_seg(len, 0, 0);
	const struct vnet_fw_send_chan *ch = &p->tx[0];
	u32 answered = 0;

	self->net.down[1] = true;
	if (sim_post(c, 0, VNET_Q_REQ_SEND, &d, NULL))
		return NULL;
	while (ch->state == VNET_CHAN_FREE)
		sim_net_step(&self->net, 20);
	while (ch->frag_acked < far) {
		sim_net_step(&self->net, 20);
		if (ch->state == VNET_CHAN_INFLIGHT && ch->stamp != answered) {
			answered = ch->stamp;
			answer_as_1(self, ch, VNET_WIRE_ACK, VNET_RET_NONE);
		}
	}
	return ch;
}

/* Answer @reason to the first transmission of @ch's fragment, not the latest. */
static void answer_first(FIXTURE_DATA(forger) *self,
			 const struct vnet_fw_send_chan *ch, u8 reason)
{
	struct vnet_fw_send_chan old = *ch;

	old.stamp = ch->first_stamp;
	answer_as_1(self, &old, VNET_WIRE_NACK, reason);
}

/*
 * Its sender moving, a train's fragment is answered only with RESTARTs of
 * its older transmissions: no word from the receiver on the latest, so
 * the flush ends as the message comes back unreachable, max_retries
 * quanta on.  Taking each for a restart rewound the train and reloaded
 * its first fragment, as good as word: the flush waited for the busy
 * clock, five times as long, and more than ten once 100 kB were through.
 */
static void stale_restarts(FIXTURE_DATA(forger) *self,
			   struct __test_metadata *_metadata, u32 far)
{
	struct sim_nic *c = self->net.nic[2];
	const struct vnet_fw_send_chan *ch = train_to(self, 200000, far);
	u64 start, resolved = 0, q = c->fw.quantum;

	ASSERT_NE(NULL, ch);
	c->ep[0].fw.moving = true;
	start = self->net.now;
	while (!resolved && self->net.now - start < 2 * c->fw.busy_timeout) {
		sim_net_step(&self->net, 20);
		if (!c->ep[0].fw.unresolved)
			resolved = self->net.now - start;
		else if (ch->state == VNET_CHAN_INFLIGHT &&
			 ch->stamp != ch->first_stamp)
			answer_first(self, ch, VNET_NACK_RESTART);
	}
	ASSERT_NE(0, resolved);
	EXPECT_LE(resolved, (c->fw.max_retries + 2) * q);
	EXPECT_LT(0, c->fw.stats.rx_nack[VNET_NACK_RESTART]);
	EXPECT_EQ(0, self->b->ep[1].fw.stats.received);
	TH_LOG("flush held %llu (max_retries quanta %llu)",
	       (unsigned long long)resolved,
	       (unsigned long long)(c->fw.max_retries * q));
}

TEST_F(forger, stale_restarts_leave_the_flush_to_the_latest)
{
	stale_restarts(self, _metadata, 0);
}

TEST_F(forger, stale_restarts_far_in_leave_the_flush_to_the_latest)
{
	stale_restarts(self, _metadata, 100000);
}

/*
 * The latest transmission NACKed while its sender moves: resolved, the
 * flush over.  A late RESTART or RESYNC of an older one must not rewind
 * the train and put a fragment back on the wire under the moving sender.
 */
static void nacked_then_stale(FIXTURE_DATA(forger) *self,
			      struct __test_metadata *_metadata, u8 reason)
{
	struct sim_nic *c = self->net.nic[2];
	const struct vnet_fw_send_chan *ch = train_to(self, 100000, 20000);
	u64 sent, t;

	ASSERT_NE(NULL, ch);
	while (ch->stamp == ch->first_stamp)
		sim_net_step(&self->net, 20);
	c->ep[0].fw.moving = true;
	answer_as_1(self, ch, VNET_WIRE_NACK, VNET_NACK_NOT_RESIDENT);
	sim_net_step(&self->net, 20);
	ASSERT_TRUE(ch->nacked);
	ASSERT_EQ(0, c->ep[0].fw.unresolved);
	answer_first(self, ch, reason);
	sent = c->fw.stats.retransmits;
	for (t = 0; t < 10 * c->fw.quantum; t += 20)
		sim_net_step(&self->net, 20);
	EXPECT_TRUE(ch->nacked);
	EXPECT_EQ(0, c->ep[0].fw.unresolved);
	EXPECT_EQ(sent, c->fw.stats.retransmits);
}

TEST_F(forger, stale_restart_after_the_nack_leaves_the_train)
{
	nacked_then_stale(self, _metadata, VNET_NACK_RESTART);
}

TEST_F(forger, stale_resync_after_the_nack_leaves_the_train)
{
	nacked_then_stale(self, _metadata, VNET_NACK_RESYNC);
}

/*
 * RESYNC a train each time it reaches its furthest point, and let it one
 * fragment further only just before its busy clock would run out: the
 * clock of a restart runs on, so the train comes back within one clock
 * for its whole length -- busy_timeout and two quanta a fragment -- not
 * one per fragment (more than twenty times that before).
 */
TEST_F(forger, restarts_at_the_furthest_point_bound_the_whole_train)
{
	struct sim_nic *c = self->net.nic[2];
	u32 len = 150000, answered = 0;
	const struct vnet_fw_send_chan *ch = train_to(self, len, 0);
	u64 start = self->net.now, q = c->fw.quantum;
	u64 bound = c->fw.busy_timeout +
		    2 * q * ((len + FMIN - 1) / FMIN) + 3 * q;

	ASSERT_NE(NULL, ch);
	while (ch->state != VNET_CHAN_FREE &&
	       self->net.now - start < 20 * bound) {
		u64 limit;

		sim_net_step(&self->net, 20);
		if (ch->state != VNET_CHAN_INFLIGHT || ch->stamp == answered)
			continue;
		answered = ch->stamp;
		limit = c->fw.busy_timeout +
			2 * q * ((ch->frag_acked + FMIN - 1) / FMIN);
		if (ch->frag_off < ch->frag_acked || !ch->frag_off ||
		    (ch->refused && self->net.now - ch->refused_at + 4 * q >= limit))
			answer_as_1(self, ch, VNET_WIRE_ACK, VNET_RET_NONE);
		else if (!ch->sync)
			answer_as_1(self, ch, VNET_WIRE_NACK, VNET_NACK_RESYNC);
		else
			answered = 0;
	}
	EXPECT_EQ(VNET_CHAN_FREE, ch->state);
	EXPECT_LE(self->net.now - start, bound);
	EXPECT_EQ(0, self->b->ep[1].fw.stats.received);
	TH_LOG("back after %llu (bound %llu)",
	       (unsigned long long)(self->net.now - start),
	       (unsigned long long)bound);
}

/*
 * A peer that sends the next fragment of each of its trains just before
 * busy_timeout would drop them, as small as it may: its trains end once
 * they are older than their length allows -- busy_timeout and two quanta
 * a fragment -- not as long after as the peer keeps dripping.
 */
TEST_F(forger, dripping_trains_end_when_their_length_allows)
{
	struct sim_nic *b = self->b;
	u64 life = b->fw.busy_timeout + 2 * 100 * b->fw.quantum;
	u32 ch, n = VNET_FW_PEER_RESERVE;
	struct frag_spec cur[SIM_CHANNELS];
	u64 start = self->net.now;

	for (ch = 0; ch < n; ch++) {
		cur[ch] = first(self, 100 * FMIN, FMIN);
		cur[ch].channel = ch;
		send_frag(self, &cur[ch]);
	}
	ASSERT_EQ(n, b->fw.trains_busy);
	while (b->fw.trains_busy && self->net.now - start < 10 * life) {
		sim_net_run_for(&self->net, b->fw.busy_timeout / 2);
		for (ch = 0; ch < n; ch++) {
			cur[ch] = next(&cur[ch], FMIN, false);
			send_frag(self, &cur[ch]);
		}
	}
	EXPECT_EQ(0, b->fw.trains_busy);
	EXPECT_EQ(0, b->ep[1].fw.recv_reserved[0]);
	EXPECT_EQ(n, b->fw.stats.trains_dropped);
	EXPECT_GE(life + b->fw.busy_timeout / 2, self->net.now - start);
}

/*
 * First fragments of megabyte XFERs on channels @from to @to - 1, each to
 * NIC 1's endpoint 1 + channel % @dests.
 */
static void send_firsts(FIXTURE_DATA(forger) *self, u32 from, u32 to,
			u32 dests)
{
	u32 ch;

	for (ch = from; ch < to; ch++) {
		struct frag_spec s = first(self, VNET_XFER_MAX, FMIN);

		s.channel = ch;
		s.dst_ep = 1 + ch % dests;
		send_frag(self, &s);
	}
}

/*
 * A peer that starts a train to one endpoint on every channel holds a
 * quarter of its receive queue, not half: the rest is NACKed "queue
 * full", and an honest client's messages take the rest of the queue.
 */
TEST_F(forger, one_peer_reserves_a_quarter_of_a_queue)
{
	struct sim_nic *b = self->b, *c = self->net.nic[2];
	u32 i, n = b->fw.nchannels;

	ASSERT_LT(VNET_FW_PEER_RESERVE, n);
	send_firsts(self, 0, n, 1);
	EXPECT_EQ(VNET_FW_PEER_RESERVE, b->fw.trains_busy);
	EXPECT_EQ(VNET_FW_PEER_RESERVE, b->ep[1].fw.recv_reserved[0]);
	EXPECT_EQ(n - VNET_FW_PEER_RESERVE,
		  b->fw.stats.tx_nack[VNET_NACK_QUEUE_FULL]);

	for (i = 0; i < VNET_QUEUE_DEPTH; i++) {
		struct vnet_desc d = sim_request(i);

		ASSERT_EQ(0, sim_post(c, 0, VNET_Q_REQ_SEND, &d, NULL));
	}
	sim_net_run_for(&self->net, 3 * b->fw.quantum);
	EXPECT_EQ(VNET_QUEUE_DEPTH - VNET_FW_PEER_RESERVE,
		  b->ep[1].fw.stats.received);
}

/*
 * The channels past the receiver's own count are a peer's too: trains on
 * them count against the quarter of a queue, and go with the route.
 */
TEST_F(forger, trains_past_our_channels_are_bounded_and_dropped)
{
	struct sim_nic *b = self->b;
	u32 n = VNET_WIRE_CHANNELS - b->fw.nchannels;

	send_firsts(self, b->fw.nchannels, VNET_WIRE_CHANNELS, 1);
	EXPECT_EQ(VNET_FW_PEER_RESERVE, b->fw.trains_busy);
	EXPECT_EQ(VNET_FW_PEER_RESERVE, b->ep[1].fw.recv_reserved[0]);
	EXPECT_EQ(n - VNET_FW_PEER_RESERVE,
		  b->fw.stats.tx_nack[VNET_NACK_QUEUE_FULL]);
	ASSERT_TRUE(vnet_fw_route_del(&b->fw, 0, self->net.now));
	EXPECT_EQ(0, b->fw.trains_busy);
	EXPECT_EQ(0, b->ep[1].fw.recv_reserved[0]);
}

/*
 * Trains to several endpoints, on every channel number: one peer holds
 * VNET_FW_PEER_TRAINS slots at most, whatever numbers it uses, and the
 * rest of its first fragments are NACKed "queue full".
 */
TEST_F(forger, one_peer_holds_a_bounded_number_of_trains)
{
	struct sim_nic *b = self->b;

	ASSERT_LT(VNET_FW_PEER_TRAINS, (b->fw.ntrains + 1) / 2);
	ASSERT_LT(VNET_FW_PEER_TRAINS,
		  (FORGER_EPS - 1) * VNET_FW_PEER_RESERVE);
	send_firsts(self, 0, VNET_WIRE_CHANNELS, FORGER_EPS - 1);
	EXPECT_EQ(VNET_FW_PEER_TRAINS, b->fw.trains_busy);
	EXPECT_EQ(VNET_WIRE_CHANNELS - VNET_FW_PEER_TRAINS,
		  b->fw.stats.tx_nack[VNET_NACK_QUEUE_FULL]);
	ASSERT_TRUE(vnet_fw_route_del(&b->fw, 0, self->net.now));
	EXPECT_EQ(0, b->fw.trains_busy);
}

TEST_HARNESS_MAIN
