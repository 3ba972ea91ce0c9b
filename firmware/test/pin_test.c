// SPDX-License-Identifier: GPL-2.0
/*
 * XFERs read in place from memory their sender pinned (VNET_DESC_FROM_PIN):
 * found by the sender's address among its pins, sent whole and without a
 * copy, and never read from a pin that went stale -- its owner's mapping
 * of the range changed -- or was replaced: such a message comes back
 * "source gone", whole, and nothing of it is delivered -- unless its
 * receiver may have it all already, and then it is not returned either.
 * A peer cannot say "source gone".
 */
#include "kselftest_harness.h"
#include "frag_util.h"

#define TAG		0x6cULL
#define LEN		(256u << 10)	/* about 180 fragments at MTU 1500 */
#define PIN_ADDR	0x7f1234560000ULL	/* the owner's address of pin 3 */
#define PIN_LEN		(2u * VNET_XFER_MAX)
#define PIN		3

/* The test's own buffer behind a pin: the firmware only reads it. */
static u8 *pin_bytes(struct sim_nic *s, u32 ep, int i)
{
	return (u8 *)s->ep[ep].fw.pins[i].base;
}

/* Pin @i of @s's endpoint @ep: @len bytes at the owner's address @addr. */
static void give_pin(struct sim_nic *s, u32 ep, int i, u64 addr, u64 len)
{
	struct vnet_fw_pin *pin = &s->ep[ep].fw.pins[i];

	free(pin_bytes(s, ep, i));
	pin->base = calloc(1, len);
	pin->addr = addr;
	pin->len = len;
	pin->gen++;			/* as the host does at every change */
	pin->stale = false;
}

static void free_pins(struct sim_net *net)
{
	u32 n, e, i;

	for (n = 0; n < net->nr; n++)
		for (e = 0; e < net->nic[n]->nr_eps; e++)
			for (i = 0; i < VNET_NR_PINS; i++) {
				free(pin_bytes(net->nic[n], e, i));
				net->nic[n]->ep[e].fw.pins[i].base = NULL;
			}
}

/* An XFER of @len bytes read from the sender's address @addr. */
static struct vnet_desc xfer_pin(u32 len, u64 addr, u32 seed)
{
	struct vnet_desc d = { .handler = 3, .nargs = 1 };

	d.flags = VNET_DESC_XFER | VNET_DESC_FROM_PIN;
	d.len = len;
	d.src_offset = addr;
	d.args[0] = seed;
	return d;
}

FIXTURE(pin) {
	struct sim_net net;
	struct sim_nic *a, *b;
};

static void pair_setup(FIXTURE_DATA(pin) *self)
{
	frag_pair_init(&self->net, 91, TAG);
	self->a = self->net.nic[0];
	self->b = self->net.nic[1];
	give_pin(self->a, 0, PIN, PIN_ADDR, PIN_LEN);
}

static void pair_teardown(FIXTURE_DATA(pin) *self)
{
	free_pins(&self->net);
	frag_free_segs(&self->net);
	sim_net_fini(&self->net);
}

FIXTURE_SETUP(pin)
{
	pair_setup(self);
}

FIXTURE_TEARDOWN(pin)
{
	pair_teardown(self);
}

/* The pin's bytes at @off: where a source of the sender's lies. */
static u8 *pinned(FIXTURE_DATA(pin) *self, u64 off)
{
	return pin_bytes(self->a, 0, PIN) + off;
}

static bool delivered(struct sim_net *net, void *arg)
{
	return sim_peek(net->nic[1], 1, VNET_Q_REQ_RECV);
}

static bool returned(struct sim_net *net, void *arg)
{
	return sim_peek(net->nic[0], 0, VNET_Q_REP_RECV);
}

/* Run until the receiver has taken @n fragments in all. */
static void until_frags(struct __test_metadata *_metadata,
			FIXTURE_DATA(pin) *self, u64 n)
{
	u64 start = self->net.now;

	while (self->b->fw.stats.rx_frags < n) {
		ASSERT_GT(1000000, self->net.now - start);
		sim_net_step(&self->net, 20);
	}
}

/* The one message b received: @len bytes seeded @seed, whole. */
static void expect_whole(struct __test_metadata *_metadata,
			 FIXTURE_DATA(pin) *self, u32 len, u32 seed)
{
	const struct vnet_desc *d;

	ASSERT_TRUE(frag_run_until(&self->net, delivered, NULL, 2000000));
	d = sim_peek(self->b, 1, VNET_Q_REQ_RECV);
	EXPECT_EQ(len, d->len);
	EXPECT_EQ(seed, d->args[0]);
	/* The receiver is not told where the sender read it from. */
	EXPECT_EQ(VNET_DESC_XFER, d->flags);
	EXPECT_EQ(0, d->src_offset);
	EXPECT_TRUE(frag_same(self->b->ep[1].fw.seg, len, seed));
	sim_consume(self->b, 1, VNET_Q_REQ_RECV);
	sim_net_run_for(&self->net, 500);
	EXPECT_TRUE(frag_all_quiet(&self->net));
}

/* What came back to a's client: the whole message from @addr, and @why. */
static void expect_returned(struct __test_metadata *_metadata,
			    FIXTURE_DATA(pin) *self, u32 len, u64 addr,
			    u8 why)
{
	const struct vnet_desc *d;

	ASSERT_TRUE(frag_run_until(&self->net, returned, NULL, 2000000));
	d = sim_peek(self->a, 0, VNET_Q_REP_RECV);
	EXPECT_TRUE(d->flags & VNET_DESC_RETURNED);
	EXPECT_EQ(why, d->status);
	EXPECT_EQ(len, d->len);
	EXPECT_EQ(addr, d->src_offset);
	EXPECT_EQ(VNET_DESC_XFER | VNET_DESC_FROM_PIN, d->flags &
		  (VNET_DESC_XFER | VNET_DESC_FROM_PIN | VNET_DESC_FROM_SEG |
		   VNET_DESC_MEDIUM));
	sim_consume(self->a, 0, VNET_Q_REP_RECV);
	sim_net_run_for(&self->net, self->b->fw.busy_timeout +
				    2 * self->b->fw.quantum);
	EXPECT_EQ(NULL, sim_peek(self->b, 1, VNET_Q_REQ_RECV));
	EXPECT_EQ(0, self->b->ep[1].fw.stats.received);
	EXPECT_TRUE(frag_all_quiet(&self->net));
}

/*
 * The largest XFER, from the middle of a pin: whole, sent from the pin's
 * own bytes with zero copy (none on the way out, one on the way in), or
 * through a pool buffer without.
 */
TEST_F(pin, megabyte_from_a_pin_without_a_copy)
{
	struct vnet_fw_nic_stats *tx = &self->a->fw.stats;
	struct vnet_fw_nic_stats *rx = &self->b->fw.stats;
	struct vnet_desc d = xfer_pin(VNET_XFER_MAX, PIN_ADDR + 4097, 5);

	frag_fill(pinned(self, 4097), VNET_XFER_MAX, 5);
	ASSERT_EQ(0, sim_post(self->a, 0, VNET_Q_REQ_SEND, &d, NULL));
	expect_whole(_metadata, self, VNET_XFER_MAX, 5);
	EXPECT_EQ(0, tx->copied_bytes);
	EXPECT_LE(VNET_XFER_MAX, tx->tx_seg_bytes);
	EXPECT_EQ(VNET_XFER_MAX, rx->copied_bytes);

	self->a->fw.zero_copy = false;
	tx->tx_seg_bytes = 0;
	d = xfer_pin(LEN, PIN_ADDR + PIN_LEN - LEN, 6);
	frag_fill(pinned(self, PIN_LEN - LEN), LEN, 6);
	ASSERT_EQ(0, sim_post(self->a, 0, VNET_Q_REQ_SEND, &d, NULL));
	expect_whole(_metadata, self, LEN, 6);
	EXPECT_LE(LEN, tx->copied_bytes);
	EXPECT_EQ(0, tx->tx_seg_bytes);
}

/* One that fits a packet is copied from the pin as it is taken. */
TEST_F(pin, short_one_from_a_pin)
{
	struct vnet_desc d = xfer_pin(1000, PIN_ADDR, 7);

	frag_fill(pinned(self, 0), 1000, 7);
	ASSERT_EQ(0, sim_post(self->a, 0, VNET_Q_REQ_SEND, &d, NULL));
	expect_whole(_metadata, self, 1000, 7);
}

static const struct {
	const char *what;
	u64 addr;
	u32 len;
	u8 set, clear;
	u8 why;
} sources[] = {
	{ "within", PIN_ADDR, LEN, 0, 0, VNET_RET_NONE },
	{ "at its end", PIN_ADDR + PIN_LEN - LEN, LEN, 0, 0, VNET_RET_NONE },
	{ "before it", PIN_ADDR - 1, LEN, 0, 0, VNET_RET_SOURCE_GONE },
	{ "past its end", PIN_ADDR + PIN_LEN - LEN + 1, LEN, 0, 0,
	  VNET_RET_SOURCE_GONE },
	{ "wrapping", ~0ULL - 100, LEN, 0, 0, VNET_RET_SOURCE_GONE },
	{ "also from the segment", PIN_ADDR, LEN, VNET_DESC_FROM_SEG, 0,
	  VNET_RET_BAD_DESC },
	{ "not an XFER", PIN_ADDR, 0, 0, VNET_DESC_XFER, VNET_RET_BAD_DESC },
	{ "a medium", PIN_ADDR, 100, VNET_DESC_MEDIUM, VNET_DESC_XFER,
	  VNET_RET_BAD_DESC },
};

/*
 * A source that no pin holds whole is refused before anything goes out,
 * as is a descriptor that says it is read from both a pin and the segment,
 * or from a pin but is no XFER.
 */
TEST(source_checked_against_the_pins)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(sources); i++) {
		FIXTURE_DATA(pin) f, *self = &f;
		struct vnet_desc d = xfer_pin(sources[i].len, sources[i].addr,
					      8);
		const struct vnet_desc *got;

		TH_LOG("%s", sources[i].what);
		pair_setup(self);
		d.flags = (d.flags | sources[i].set) & ~sources[i].clear;
		if (sources[i].why == VNET_RET_NONE)
			frag_fill(pinned(self, sources[i].addr - PIN_ADDR),
				  LEN, 8);
		ASSERT_EQ(0, sim_post(self->a, 0, VNET_Q_REQ_SEND, &d, NULL));
		if (sources[i].why == VNET_RET_NONE) {
			expect_whole(_metadata, self, LEN, 8);
		} else {
			ASSERT_TRUE(frag_run_until(&self->net, returned, NULL,
						   200000));
			got = sim_peek(self->a, 0, VNET_Q_REP_RECV);
			EXPECT_EQ(sources[i].why, got->status);
			EXPECT_EQ(0, self->a->fw.stats.tx_frags);
			EXPECT_EQ(NULL, sim_peek(self->b, 1,
						 VNET_Q_REQ_RECV));
		}
		pair_teardown(self);
	}
}

/*
 * The owner's mapping of the pin changes halfway through a train (the
 * host marks the pin stale): nothing more is read from it, and the message
 * comes back whole, "source gone".  Pinned again, with the new bytes,
 * the same message arrives with those.
 */
TEST_F(pin, stale_halfway_then_pinned_again)
{
	struct vnet_desc d = xfer_pin(LEN, PIN_ADDR + 100, 9);

	frag_fill(pinned(self, 100), LEN, 9);
	ASSERT_EQ(0, sim_post(self->a, 0, VNET_Q_REQ_SEND, &d, NULL));
	until_frags(_metadata, self, 40);
	self->a->ep[0].fw.pins[PIN].stale = true;
	expect_returned(_metadata, self, LEN, PIN_ADDR + 100,
			VNET_RET_SOURCE_GONE);

	/* A stale pin is found by nothing new either. */
	d = xfer_pin(LEN, PIN_ADDR + 100, 10);
	ASSERT_EQ(0, sim_post(self->a, 0, VNET_Q_REQ_SEND, &d, NULL));
	expect_returned(_metadata, self, LEN, PIN_ADDR + 100,
			VNET_RET_SOURCE_GONE);

	give_pin(self->a, 0, PIN, PIN_ADDR, PIN_LEN);
	frag_fill(pinned(self, 100), LEN, 11);
	d = xfer_pin(LEN, PIN_ADDR + 100, 11);
	ASSERT_EQ(0, sim_post(self->a, 0, VNET_Q_REQ_SEND, &d, NULL));
	expect_whole(_metadata, self, LEN, 11);
}

/*
 * The pin is replaced halfway by one of the same range and size, holding
 * the same bytes even (the owner dropped it and pinned the range again):
 * the rest would be read from other pages, so the message comes back.
 */
TEST_F(pin, replaced_halfway)
{
	struct vnet_desc d = xfer_pin(LEN, PIN_ADDR, 12);

	frag_fill(pinned(self, 0), LEN, 12);
	ASSERT_EQ(0, sim_post(self->a, 0, VNET_Q_REQ_SEND, &d, NULL));
	until_frags(_metadata, self, 40);
	give_pin(self->a, 0, PIN, PIN_ADDR, PIN_LEN);
	frag_fill(pinned(self, 0), LEN, 12);
	expect_returned(_metadata, self, LEN, PIN_ADDR, VNET_RET_SOURCE_GONE);
}

/*
 * Of two pins that hold a source, either may be read; one going stale
 * leaves the other to find.
 */
TEST_F(pin, the_other_pin_that_holds_it)
{
	struct vnet_desc d = xfer_pin(LEN, PIN_ADDR + 4096, 13);

	give_pin(self->a, 0, 0, PIN_ADDR + 4096, LEN);
	frag_fill(pinned(self, 4096), LEN, 13);
	frag_fill(pin_bytes(self->a, 0, 0), LEN, 13);
	self->a->ep[0].fw.pins[PIN].stale = true;
	ASSERT_EQ(0, sim_post(self->a, 0, VNET_Q_REQ_SEND, &d, NULL));
	expect_whole(_metadata, self, LEN, 13);
}

/* On one NIC, a message read from a pin is delivered from it directly. */
TEST(local_from_a_pin)
{
	struct sim_net net;
	struct sim_nic *a;
	struct vnet_desc d = xfer_pin(LEN, PIN_ADDR + 8, 14);
	const struct vnet_desc *got;

	sim_net_init(&net, 1, 2, 15);
	a = net.nic[0];
	a->ep[1].fw.tag = TAG;
	sim_map(a, 0, 0, 0, 1, TAG);
	frag_give_seg(a, 1, VNET_XFER_MAX);
	give_pin(a, 0, PIN, PIN_ADDR, PIN_LEN);
	frag_fill(pin_bytes(a, 0, PIN) + 8, LEN, 14);
	ASSERT_EQ(0, sim_post(a, 0, VNET_Q_REQ_SEND, &d, NULL));
	sim_net_run_for(&net, 100);
	got = sim_peek(a, 1, VNET_Q_REQ_RECV);
	ASSERT_NE(NULL, got);
	EXPECT_EQ(LEN, got->len);
	EXPECT_EQ(VNET_DESC_XFER, got->flags);
	EXPECT_TRUE(frag_same(a->ep[1].fw.seg, LEN, 14));

	/* Stale: back to its sender, and nothing more arrives. */
	sim_consume(a, 1, VNET_Q_REQ_RECV);
	a->ep[0].fw.pins[PIN].stale = true;
	ASSERT_EQ(0, sim_post(a, 0, VNET_Q_REQ_SEND, &d, NULL));
	sim_net_run_for(&net, 100);
	got = sim_peek(a, 0, VNET_Q_REP_RECV);
	ASSERT_NE(NULL, got);
	EXPECT_EQ(VNET_RET_SOURCE_GONE, got->status);
	EXPECT_EQ(NULL, sim_peek(a, 1, VNET_Q_REQ_RECV));
	free_pins(&net);
	frag_free_segs(&net);
	sim_net_fini(&net);
}

/* Every packet NIC @from has on the wire is lost. */
static void lose_queued_from(struct sim_net *net, u32 from)
{
	u32 i, kept = 0;

	for (i = 0; i < net->qlen; i++) {
		if (net->q[i].from == from) {
			free(net->q[i].data);
			continue;
		}
		net->q[kept++] = net->q[i];
	}
	net->qlen = kept;
}

/*
 * The whole train arrived and was delivered, and the answers to its last
 * fragments were lost; then its pin goes stale.  Its sender cannot read
 * them to send them again, and must not take the message for undelivered:
 * returned, it would be sent again by a library that pins again.  The
 * fragments go again as filler, the receiver says it has them all, and
 * the message is done: delivered once, never returned.
 */
static void delivered_answers_lost(struct __test_metadata *_metadata,
				   FIXTURE_DATA(pin) *self, bool zero_copy)
{
	struct vnet_desc d = xfer_pin(LEN, PIN_ADDR, 18);
	u64 start;

	self->a->fw.zero_copy = zero_copy;
	frag_fill(pinned(self, 0), LEN, 18);
	ASSERT_EQ(0, sim_post(self->a, 0, VNET_Q_REQ_SEND, &d, NULL));
	for (start = self->net.now; !delivered(&self->net, NULL);) {
		ASSERT_GT(2000000, self->net.now - start);
		sim_net_step(&self->net, 20);
	}
	lose_queued_from(&self->net, 1);
	self->a->ep[0].fw.pins[PIN].stale = true;
	sim_net_run_for(&self->net, self->b->fw.busy_timeout +
				    4 * self->b->fw.quantum);
	EXPECT_LT(0, self->a->fw.stats.tx_fillers);
	EXPECT_EQ(NULL, sim_peek(self->a, 0, VNET_Q_REP_RECV));
	EXPECT_EQ(1, self->b->ep[1].fw.stats.received);
	expect_whole(_metadata, self, LEN, 18);
	EXPECT_EQ(NULL, sim_peek(self->a, 0, VNET_Q_REP_RECV));
}

TEST_F(pin, stale_after_delivery_with_answers_lost)
{
	delivered_answers_lost(_metadata, self, true);
}

TEST_F(pin, stale_after_delivery_with_answers_lost_copying)
{
	delivered_answers_lost(_metadata, self, false);
}

/* A's channel with a message in flight: its peer in *@p, its number *@c. */
static struct vnet_fw_send_chan *inflight(struct sim_nic *a,
					  struct vnet_fw_peer **p, u32 *c)
{
	u32 i;

	for (i = 0; i < a->fw.max_peers; i++)
		for (*c = 0; *c < a->fw.nchannels; ++*c) {
			*p = &a->fw.peers[i];
			if ((*p)->tx[*c].state == VNET_CHAN_INFLIGHT)
				return &(*p)->tx[*c];
		}
	return NULL;
}

/*
 * The last fragments out and lost on the way, then the pin goes stale:
 * they go again as filler, the receiver takes the zeros, finds the
 * message's checksum wrong and restarts the train, and the restart
 * returns it -- never delivered with zeros in it.
 */
static void last_fragments_lost(struct __test_metadata *_metadata,
				FIXTURE_DATA(pin) *self, bool zero_copy)
{
	struct vnet_desc d = xfer_pin(LEN, PIN_ADDR, 20);
	const u8 *seg = self->b->ep[1].fw.seg;
	struct vnet_fw_send_chan *ch = NULL;
	struct vnet_fw_peer *p;
	u64 start, restarts;
	u32 c, i;

	self->a->fw.zero_copy = zero_copy;
	frag_fill(pinned(self, 0), LEN, 20);
	memset(self->b->ep[1].fw.seg, 0xaa, LEN);
	ASSERT_EQ(0, sim_post(self->a, 0, VNET_Q_REQ_SEND, &d, NULL));
	for (start = self->net.now;; sim_net_step(&self->net, 20)) {
		ASSERT_GT(2000000, self->net.now - start);
		ch = inflight(self->a, &p, &c);
		if (ch && ch->frag_sent &&
		    ch->frag_off + ch->frag_len == ch->msg.len)
			break;
	}
	EXPECT_EQ(NULL, sim_peek(self->b, 1, VNET_Q_REQ_RECV));
	lose_queued_from(&self->net, 0);
	self->a->ep[0].fw.pins[PIN].stale = true;
	restarts = self->b->fw.stats.tx_nack[VNET_NACK_RESTART];
	expect_returned(_metadata, self, LEN, PIN_ADDR, VNET_RET_SOURCE_GONE);
	EXPECT_LT(0, self->a->fw.stats.tx_fillers);
	EXPECT_LT(restarts, self->b->fw.stats.tx_nack[VNET_NACK_RESTART]);
	/* Its range holds its own bytes or what was there: no filler. */
	for (c = 0, i = 0; i < LEN; i++)
		c += seg[i] != 0xaa && seg[i] != pinned(self, 0)[i];
	EXPECT_EQ(0, c);
}

TEST_F(pin, stale_with_the_last_fragments_lost)
{
	last_fragments_lost(_metadata, self, true);
}

TEST_F(pin, stale_with_the_last_fragments_lost_copying)
{
	last_fragments_lost(_metadata, self, false);
}

/*
 * "Source gone" on the wire is a lie: only the sender's firmware knows
 * that its pin went.  A peer that answered so would have the sender's
 * library pin and send each piece again; the answer is a bad frame, and
 * the train goes on.
 */
TEST_F(pin, a_peer_cannot_say_source_gone)
{
	struct vnet_desc d = xfer_pin(LEN, PIN_ADDR, 19);
	struct vnet_fw_send_chan *ch;
	struct vnet_fw_peer *p;
	u64 bad;
	u32 c;

	frag_fill(pinned(self, 0), LEN, 19);
	ASSERT_EQ(0, sim_post(self->a, 0, VNET_Q_REQ_SEND, &d, NULL));
	until_frags(_metadata, self, 2);
	ch = inflight(self->a, &p, &c);
	ASSERT_NE(NULL, ch);
	bad = self->a->fw.stats.bad_frames;
	vnet_fw_rx_ack(&self->a->fw, p, c, ch->seq, ch->stamp,
		       VNET_RET_SOURCE_GONE);
	EXPECT_EQ(bad + 1, self->a->fw.stats.bad_frames);
	expect_whole(_metadata, self, LEN, 19);
	EXPECT_EQ(NULL, sim_peek(self->a, 0, VNET_Q_REP_RECV));
}

/*
 * A reply read from a pin that is dropped halfway through its train comes
 * back "source gone", and the request's token, spent when the train
 * started, is given back: pinned again, the same reply goes, once.
 */
TEST_F(pin, reply_from_a_dropped_pin_keeps_its_token)
{
	struct vnet_desc q = { .handler = 2 }, r;
	const struct vnet_desc *got;
	u64 start;

	ASSERT_EQ(0, sim_post(self->a, 0, VNET_Q_REQ_SEND, &q, NULL));
	ASSERT_TRUE(frag_run_until(&self->net, delivered, NULL, 2000000));
	got = sim_peek(self->b, 1, VNET_Q_REQ_RECV);
	r = xfer_pin(LEN, PIN_ADDR, 17);
	r.token = got->token;
	sim_consume(self->b, 1, VNET_Q_REQ_RECV);

	give_pin(self->b, 1, PIN, PIN_ADDR, PIN_LEN);
	frag_fill(pin_bytes(self->b, 1, PIN), LEN, 17);
	ASSERT_EQ(0, sim_post(self->b, 1, VNET_Q_REP_SEND, &r, NULL));
	for (start = self->net.now; self->a->fw.stats.rx_frags < 40;) {
		ASSERT_GT(1000000, self->net.now - start);
		sim_net_step(&self->net, 20);
	}
	self->b->ep[1].fw.pins[PIN].stale = true;
	for (start = self->net.now;
	     !(got = sim_peek(self->b, 1, VNET_Q_REP_RECV));) {
		ASSERT_GT(2000000, self->net.now - start);
		sim_net_step(&self->net, 20);
	}
	EXPECT_EQ(VNET_RET_SOURCE_GONE, got->status);
	EXPECT_TRUE(got->flags & VNET_DESC_REPLY);
	sim_consume(self->b, 1, VNET_Q_REP_RECV);
	EXPECT_EQ(NULL, sim_peek(self->a, 0, VNET_Q_REP_RECV));

	give_pin(self->b, 1, PIN, PIN_ADDR, PIN_LEN);
	frag_fill(pin_bytes(self->b, 1, PIN), LEN, 17);
	ASSERT_EQ(0, sim_post(self->b, 1, VNET_Q_REP_SEND, &r, NULL));
	for (start = self->net.now;
	     !(got = sim_peek(self->a, 0, VNET_Q_REP_RECV));) {
		ASSERT_GT(2000000, self->net.now - start);
		sim_net_step(&self->net, 20);
	}
	EXPECT_FALSE(got->flags & VNET_DESC_RETURNED);
	EXPECT_EQ(LEN, got->len);
	EXPECT_TRUE(frag_same(self->a->ep[0].fw.seg, LEN, 17));
	sim_consume(self->a, 0, VNET_Q_REP_RECV);

	/* Answered: the token is spent now. */
	ASSERT_EQ(0, sim_post(self->b, 1, VNET_Q_REP_SEND, &r, NULL));
	for (start = self->net.now;
	     !(got = sim_peek(self->b, 1, VNET_Q_REP_RECV));) {
		ASSERT_GT(2000000, self->net.now - start);
		sim_net_step(&self->net, 20);
	}
	EXPECT_EQ(VNET_RET_BAD_TOKEN, got->status);
}

TEST_HARNESS_MAIN
