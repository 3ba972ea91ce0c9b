// SPDX-License-Identifier: GPL-2.0
/*
 * Fragment sizes from the pipeline (pipeline.c): on a simulated wire whose
 * link and receiver each take time per packet and per byte, the sender
 * learns the two lines from its own traffic, predicts how long a train
 * takes for each fragment size within 10% of what it takes, and chooses a
 * size no slower than the best of those it could have forced.  Where one
 * stage does all the work per byte, it keeps fragments as large as the link
 * carries.
 */
#include "kselftest_harness.h"
#include "frag_util.h"

#define TAG		0x99ULL
#define LEN		(64u << 10)
#define SRC		VNET_XFER_MAX

FIXTURE(pipe) {
	struct sim_net net;
	struct sim_nic *a, *b;
	struct vnet_fw_peer *p;		/* A's peer B */
	u32 seed;
};

FIXTURE_VARIANT(pipe) {
	struct sim_stage link, rx;
	bool overlap;			/* does pipelining pay? */
};

/*
 * Two stages alike per byte, the receiver's dearer per packet: its
 * fragments overlap on the link and in the receiver.
 */
FIXTURE_VARIANT_ADD(pipe, two_stages) {
	.link = { .per_pkt = 2, .per_kib = 50 },
	.rx = { .per_pkt = 4, .per_kib = 50 },
	.overlap = true,
};

/*
 * All the cost per byte in one stage, as when both ends share one CPU:
 * nothing to overlap, so the fewest fragments.
 */
FIXTURE_VARIANT_ADD(pipe, one_stage) {
	.link = { .per_pkt = 0, .per_kib = 0 },
	.rx = { .per_pkt = 6, .per_kib = 100 },
	.overlap = false,
};

FIXTURE_SETUP(pipe)
{
	frag_pair_init(&self->net, 17, TAG);
	self->a = self->net.nic[0];
	self->b = self->net.nic[1];
	self->a->fw.mtu = 9000;
	self->b->fw.mtu = 9000;
	/*
	 * The module's timer is 20 ms against round trips of a millisecond
	 * at most: no retransmission of a fragment waiting its turn.
	 */
	self->a->fw.quantum = 20000;
	self->b->fw.quantum = 20000;
	self->net.link = variant->link;
	self->net.rx = variant->rx;
	self->p = &self->a->fw.peers[self->a->fw.peer_of[1]];
	self->seed = 1;
}

FIXTURE_TEARDOWN(pipe)
{
	frag_free_segs(&self->net);
	sim_net_fini(&self->net);
}

/*
 * Send @len bytes from A's segment, one message, and run the wire a time
 * unit at a time until B has it and A has every answer: how long that
 * took.
 */
static u64 transfer(struct __test_metadata *_metadata,
		    FIXTURE_DATA(pipe) *self, u32 len)
{
	struct vnet_desc d = frag_xfer_seg(len, SRC, 0);
	u64 start = self->net.now;

	d.args[0] = ++self->seed;
	frag_fill(self->a->ep[0].fw.seg + SRC, len, self->seed);
	EXPECT_EQ(0, sim_post(self->a, 0, VNET_Q_REQ_SEND, &d, NULL));
	/*
	 * Until the wire is empty too: copies the timer sent of fragments
	 * that were waiting at the receiver would hold up the next message.
	 */
	while (!sim_peek(self->b, 1, VNET_Q_REQ_RECV) ||
	       !frag_all_quiet(&self->net) || self->net.qlen) {
		if (self->net.now - start > 1000000) {
			EXPECT_TRUE(0) TH_LOG("%u bytes not delivered", len);
			return 0;
		}
		sim_net_step(&self->net, 1);
	}
	EXPECT_EQ(len, sim_peek(self->b, 1, VNET_Q_REQ_RECV)->len);
	EXPECT_TRUE(frag_same(self->b->ep[1].fw.seg, len, self->seed));
	sim_consume(self->b, 1, VNET_Q_REQ_RECV);
	/* Quiet: A took its answer in the round it came, a step before. */
	return self->net.now - start - 1;
}

/* Traffic of several sizes, whole messages and trains, as a node sends. */
static void warm_up(struct __test_metadata *_metadata,
		    FIXTURE_DATA(pipe) *self)
{
	static const u32 sizes[] = { 0, 4096, LEN, 1024, 8000, LEN / 2 };
	u32 i;

	for (i = 0; i < 48; i++)
		transfer(_metadata, self, sizes[i % 6]);
}

/* Is @got within @tol of @want?  Says so when it is not. */
static bool near(struct __test_metadata *_metadata, const char *what,
		 double want, double got, double tol)
{
	if (got >= want - tol && got <= want + tol)
		return true;
	TH_LOG("%s: %.4f, not within %.4f of %.4f", what, got, tol, want);
	return false;
}

static u32 tx_frags_for(struct __test_metadata *_metadata,
			FIXTURE_DATA(pipe) *self, u32 len, u64 *took)
{
	u64 before = self->a->fw.stats.tx_frags;

	*took = transfer(_metadata, self, len);
	return self->a->fw.stats.tx_frags - before;
}

TEST_F(pipe, learns_the_lines)
{
	struct vnet_fw_pipe_info in;
	double per_byte = (variant->link.per_kib + variant->rx.per_kib) / 1024.0;
	double gap_per_byte = variant->rx.per_kib / 1024.0;
	double gap;

	ASSERT_FALSE(vnet_fw_pipe_show(self->p, &in));
	warm_up(_metadata, self);
	ASSERT_TRUE(vnet_fw_pipe_show(self->p, &in));
	TH_LOG("alone %.1f + %.4f/B, gap %.1f + %.4f/B (units), %llu and %llu samples",
	       in.alone_base / 1000.0, in.alone_per_byte / 65536000.0,
	       in.gap_base / 1000.0, in.gap_per_byte / 65536000.0,
	       (unsigned long long)in.alone_samples,
	       (unsigned long long)in.gap_samples);
	EXPECT_TRUE(near(_metadata, "alone per byte", per_byte,
			 in.alone_per_byte / 65536000.0, per_byte / 10));
	EXPECT_TRUE(near(_metadata, "gap per byte", gap_per_byte,
			 in.gap_per_byte / 65536000.0, gap_per_byte / 10));
	/* A 4 KiB fragment's time in the receiver, its headers included. */
	gap = variant->rx.per_pkt +
	      gap_per_byte * (4096 + VNET_WIRE_FRAG_LEN);
	EXPECT_TRUE(near(_metadata, "gap at 4 KiB", gap,
			 (in.gap_base + in.gap_per_byte * 4096 / 65536) /
			 1000.0, gap / 20));
}

/* The paper's figure 8, in the simulator: predicted and measured. */
TEST_F(pipe, predicts_each_size_and_chooses_the_best)
{
	static const u32 sizes[] = { 1168, 1638, 2341, 4096, 8192 };
	u64 took, predicted, best = ~0ULL, chosen;
	u32 i, k, frags, kmin = (LEN + 8191) / 8192;

	warm_up(_metadata, self);
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		k = vnet_fw_pipe_predict(&self->a->fw, self->p, LEN, sizes[i],
					 &predicted);
		ASSERT_NE(0, k);
		self->a->fw.frag_size = sizes[i];
		frags = tx_frags_for(_metadata, self, LEN, &took);
		TH_LOG("%u B fragments: %u of them, predicted %.0f, took %llu",
		       sizes[i], frags, predicted / 1000.0,
		       (unsigned long long)took);
		EXPECT_EQ(k, frags);
		EXPECT_TRUE(near(_metadata, "predicted", took,
				 predicted / 1000.0, took / 10.0));
		if (took < best)
			best = took;
	}
	self->a->fw.frag_size = 0;
	frags = tx_frags_for(_metadata, self, LEN, &chosen);
	TH_LOG("chosen: %u fragments, took %llu, best forced %llu", frags,
	       (unsigned long long)chosen, (unsigned long long)best);
	EXPECT_LE(chosen, best + best / 50);
	/* More, smaller fragments where the stages overlap; else the fewest. */
	EXPECT_EQ(variant->overlap, frags > kmin);
	EXPECT_LE(kmin, frags);
}

/*
 * Before the lines are known: fragments as large as the link carries,
 * but once a line has samples of one size only, every fourth train in
 * halves, so that it sees a second.  A route to the peer at another
 * address forgets what was learned.
 */
TEST_F(pipe, probes_until_known_and_forgets_on_a_new_address)
{
	struct vnet_fw_pipe_info in;
	u32 i, frags, halves = 0;
	u64 took;
	u8 mac[6];

	EXPECT_EQ(8, tx_frags_for(_metadata, self, LEN, &took));
	/* Trains of one size alone make both lines known. */
	for (i = 1; i < 32 && !vnet_fw_pipe_show(self->p, &in); i++) {
		frags = tx_frags_for(_metadata, self, LEN, &took);
		EXPECT_TRUE(frags == 8 || frags == 16);
		halves += frags == 16;
	}
	TH_LOG("known after %u trains, %u of them in halves", i, halves);
	EXPECT_TRUE(vnet_fw_pipe_show(self->p, &in));
	EXPECT_LE(1, halves);
	EXPECT_GE(i / 4 + 1, halves);
	warm_up(_metadata, self);
	ASSERT_TRUE(vnet_fw_pipe_show(self->p, &in));
	sim_mac(1, mac);
	ASSERT_LE(0, vnet_fw_route_add(&self->a->fw, 1, mac, self->net.now));
	EXPECT_TRUE(vnet_fw_pipe_show(self->p, &in));
	mac[0] ^= 0x80;
	ASSERT_LE(0, vnet_fw_route_add(&self->a->fw, 1, mac, self->net.now));
	EXPECT_FALSE(vnet_fw_pipe_show(self->p, &in));
	EXPECT_EQ(0, in.alone_samples);
	EXPECT_EQ(0, in.gap_samples);
}

/*
 * Once known, the model stays in use: a steady stream of one size gives
 * samples of the size chosen only, and no train goes back to the fewest
 * fragments where more are faster.
 */
TEST_F(pipe, keeps_choosing_in_a_steady_stream)
{
	u32 i, frags, kmin = (LEN + 8191) / 8192, fewest = 0;
	u32 stale = 0, streak = 0, longest = 0;
	struct vnet_fw_pipe_info in;
	u64 took;

	warm_up(_metadata, self);
	for (i = 0; i < 60; i++) {
		frags = tx_frags_for(_metadata, self, LEN, &took);
		fewest += frags == kmin;
		if (!vnet_fw_pipe_show(self->p, &in)) {
			ASSERT_TRUE(in.stored);
			stale += !streak++;
			if (streak > longest)
				longest = streak;
		} else {
			streak = 0;
		}
	}
	/* Probes at another size bring the fresh lines back soon. */
	TH_LOG("lines stale %u times, for %u trains at most", stale, longest);
	EXPECT_GE(8, longest);
	/* Where more fragments are chosen, they tell one size alone. */
	EXPECT_TRUE(!variant->overlap || stale >= 1);
	/* Where more are faster never the fewest; else mostly the fewest. */
	EXPECT_TRUE(variant->overlap ? fewest == 0 : fewest >= 45)
		TH_LOG("%u of 60 trains in the fewest fragments", fewest);
}

/*
 * Answers that are not what the lines measure teach them nothing: a
 * refusal (the receiver copied nothing), and a train that had the way to
 * the peer shared with a retransmission.
 */
TEST_F(pipe, refusals_and_retransmissions_teach_nothing)
{
	struct vnet_fw_pipe_info in;
	u64 alone_w, gap_w;
	struct vnet_desc d = frag_xfer_seg(4096, SRC, 0);

	u64 retransmits;

	warm_up(_metadata, self);
	alone_w = self->p->pipe.alone.w;

	/* B's endpoint off its card: the request is refused until loaded. */
	self->b->auto_fault = false;
	sim_unload(self->b, 1);
	EXPECT_EQ(0, sim_post(self->a, 0, VNET_Q_REQ_SEND, &d, NULL));
	sim_net_run_for(&self->net, 2000);
	EXPECT_LT(0, self->a->fw.stats.rx_nack[VNET_NACK_NOT_RESIDENT]);
	EXPECT_EQ(alone_w, self->p->pipe.alone.w);
	sim_load(self->b, 1);
	self->b->auto_fault = true;
	sim_net_run_for(&self->net, 50000);
	ASSERT_NE(NULL, sim_peek(self->b, 1, VNET_Q_REQ_RECV));
	sim_consume(self->b, 1, VNET_Q_REQ_RECV);
	while (self->net.qlen || !frag_all_quiet(&self->net))
		sim_net_step(&self->net, 1);

	/* A tenth of the packets lost: retransmissions. */
	self->net.loss = 100;
	gap_w = self->p->pipe.gap.w;
	retransmits = self->a->fw.stats.retransmits;
	transfer(_metadata, self, LEN);
	self->net.loss = 0;
	EXPECT_LT(retransmits, self->a->fw.stats.retransmits);
	EXPECT_EQ(gap_w, self->p->pipe.gap.w);
	EXPECT_TRUE(vnet_fw_pipe_show(self->p, &in));
}

/* A fixed size is honoured exactly, whatever the model would say. */
TEST_F(pipe, fixed_size)
{
	u64 took;

	warm_up(_metadata, self);
	self->a->fw.frag_size = VNET_WIRE_FRAG_MIN;
	EXPECT_EQ((LEN + VNET_WIRE_FRAG_MIN - 1) / VNET_WIRE_FRAG_MIN,
		  tx_frags_for(_metadata, self, LEN, &took));
	self->a->fw.frag_size = 3000;
	EXPECT_EQ((LEN + 2999) / 3000,
		  tx_frags_for(_metadata, self, LEN, &took));
	/* Below a fragment's least, the host is not obeyed. */
	self->a->fw.frag_size = 100;
	EXPECT_EQ((LEN + VNET_WIRE_FRAG_MIN - 1) / VNET_WIRE_FRAG_MIN,
		  tx_frags_for(_metadata, self, LEN, &took));
	EXPECT_EQ(0, self->b->fw.stats.bad_frames);
}

/*
 * Samples bunched at two sizes can tilt a least-squares line below zero;
 * no stage costs less than nothing, so the line is the best one that
 * does not: flat at the mean, or through 0.
 */
TEST(line_never_below_zero)
{
	struct vnet_fw_peer p = {};
	struct vnet_fw_pipe_info in;
	u32 i;

	for (i = 0; i < 16; i++)
		vnet_fw_pipe_alone(&p, i & 1 ? 2000 : 1000, i & 1 ? 400 : 500);
	vnet_fw_pipe_show(&p, &in);
	ASSERT_TRUE(in.alone_known);
	EXPECT_EQ(0, in.alone_per_byte);
	EXPECT_EQ(450000, in.alone_base);

	vnet_fw_pipe_reset(&p.pipe);
	for (i = 0; i < 16; i++)
		vnet_fw_pipe_alone(&p, i & 1 ? 2000 : 1000, i & 1 ? 300 : 100);
	vnet_fw_pipe_show(&p, &in);
	ASSERT_TRUE(in.alone_known);
	EXPECT_EQ(0, in.alone_base);
	/* sum(x t) / sum(x^2) = 700000 / 5000000 units a byte */
	EXPECT_TRUE(near(_metadata, "slope through 0", 0.14,
			 in.alone_per_byte / 65536000.0, 0.001));
}

TEST_HARNESS_MAIN
