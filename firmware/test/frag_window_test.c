// SPDX-License-Identifier: GPL-2.0
/*
 * A train's window (train_tx.c): several fragments on the wire at once,
 * never more than train_window; the oldest sent again on the timer and
 * those after it once it is answered; a receiver that has what is sent
 * again says how far it got, so lost ACKs cost one retransmission, not
 * the train.
 */
#include "kselftest_harness.h"
#include "frag_util.h"

#define TAG		0x77ULL
#define LEN		(256u << 10)	/* about 180 fragments at MTU 1500 */
#define SRC		VNET_XFER_MAX	/* where the client's source is */

FIXTURE(win) {
	struct sim_net net;
	struct sim_nic *a, *b;
	u32 widest;			/* fragments out at once, at most */
	u8 mac_b[6];
};

FIXTURE_SETUP(win)
{
	frag_pair_init(&self->net, 91, TAG);
	self->a = self->net.nic[0];
	self->b = self->net.nic[1];
	sim_mac(1, self->mac_b);
}

FIXTURE_TEARDOWN(win)
{
	frag_free_segs(&self->net);
	sim_net_fini(&self->net);
}

static void send_xfer(struct __test_metadata *_metadata,
		      FIXTURE_DATA(win) *self, u32 len, u32 seed)
{
	struct vnet_desc d = frag_xfer_seg(len, SRC, 0);

	d.args[0] = seed;
	frag_fill(self->a->ep[0].fw.seg + SRC, len, seed);
	ASSERT_EQ(0, sim_post(self->a, 0, VNET_Q_REQ_SEND, &d, NULL));
}

/* One step, noting how many fragments of the train on channel 0 are out. */
static void step(FIXTURE_DATA(win) *self)
{
	const struct vnet_fw_send_chan *ch = &self->a->fw.peers[0].tx[0];

	sim_net_step(&self->net, 20);
	if (ch->state == VNET_CHAN_INFLIGHT && ch->is_train &&
	    ch->seq + 1 - ch->una_seq > self->widest)
		self->widest = ch->seq + 1 - ch->una_seq;
}

/* Until B has the message (true) or @limit has passed. */
static bool until_delivered(FIXTURE_DATA(win) *self, u64 limit)
{
	u64 start = self->net.now;

	while (!sim_peek(self->b, 1, VNET_Q_REQ_RECV)) {
		if (self->net.now - start >= limit)
			return false;
		step(self);
	}
	return true;
}

static void expect_whole_once(struct __test_metadata *_metadata,
			      FIXTURE_DATA(win) *self, u32 len, u32 seed)
{
	const struct vnet_desc *got = sim_peek(self->b, 1, VNET_Q_REQ_RECV);

	ASSERT_NE(NULL, got);
	EXPECT_EQ(len, got->len);
	EXPECT_EQ(seed, got->args[0]);
	EXPECT_TRUE(frag_same(self->b->ep[1].fw.seg, len, seed));
	sim_consume(self->b, 1, VNET_Q_REQ_RECV);
	sim_net_run_for(&self->net, 10 * self->a->fw.quantum);
	EXPECT_EQ(NULL, sim_peek(self->b, 1, VNET_Q_REQ_RECV));
	EXPECT_EQ(NULL, sim_peek(self->a, 0, VNET_Q_REP_RECV));
	EXPECT_TRUE(frag_all_quiet(&self->net));
}

/*
 * On a clean wire the window fills: eight fragments out at once, never
 * nine, and a quarter of a megabyte in at most a quarter of the time a
 * fragment at a time takes (the simulated wire's time, the same every
 * run).
 */
TEST_F(win, fills_the_round_trip_and_no_more)
{
	u64 start, one, eight;

	self->a->fw.train_window = 1;
	send_xfer(_metadata, self, LEN, 1);
	start = self->net.now;
	ASSERT_TRUE(until_delivered(self, 1000 * self->a->fw.quantum));
	one = self->net.now - start;
	EXPECT_EQ(1, self->widest);
	expect_whole_once(_metadata, self, LEN, 1);

	self->a->fw.train_window = 8;
	self->widest = 0;
	send_xfer(_metadata, self, LEN, 2);
	start = self->net.now;
	ASSERT_TRUE(until_delivered(self, 1000 * self->a->fw.quantum));
	eight = self->net.now - start;
	EXPECT_EQ(8, self->widest);
	EXPECT_GE(one, 4 * eight);
	TH_LOG("256 KiB: %llu time units a fragment at a time, %llu eight",
	       (unsigned long long)one, (unsigned long long)eight);
	EXPECT_EQ(0, self->a->fw.stats.retransmits);
	expect_whole_once(_metadata, self, LEN, 2);
}

/*
 * A burst of fragments lost in the middle: the receiver drops those
 * after the first it lost, the timer sends that one again, alone, then
 * the rest go again.  The message arrives once and whole.
 */
TEST_F(win, a_lost_burst_goes_again_from_the_oldest)
{
	u64 sent;

	send_xfer(_metadata, self, LEN, 3);
	while (self->b->fw.stats.rx_frags < 20)
		step(self);
	sent = self->a->fw.stats.tx_frags;
	self->net.mute[0] = true;
	while (self->a->fw.stats.tx_frags < sent + 3)
		step(self);
	self->net.mute[0] = false;
	ASSERT_TRUE(until_delivered(self, 1000 * self->a->fw.quantum));
	EXPECT_LE(3, self->a->fw.stats.retransmits);
	EXPECT_LE(self->widest, 8);
	expect_whole_once(_metadata, self, LEN, 3);
}

/*
 * Every ACK of a window lost while the receiver took every fragment: the
 * timer sends the oldest again, which the receiver has; it answers with
 * how far the channel got, and the train goes on from there.  Before the
 * receiver answered that (it ACKed only the fragment just before the one
 * it expected), the oldest went again and again unanswered until the
 * message came back unreachable.
 */
TEST_F(win, lost_acks_cost_one_retransmission)
{
	u64 retrans;

	send_xfer(_metadata, self, LEN, 4);
	while (self->b->fw.stats.rx_frags < 20)
		step(self);
	self->net.mute[1] = true;
	sim_net_run_for(&self->net, self->a->fw.quantum / 2);
	ASSERT_LT(self->b->fw.stats.rx_frags, LEN / 1000);
	self->net.mute[1] = false;
	retrans = self->a->fw.stats.retransmits;
	ASSERT_TRUE(until_delivered(self, 1000 * self->a->fw.quantum));
	EXPECT_EQ(retrans + 1, self->a->fw.stats.retransmits);
	EXPECT_EQ(1, self->b->fw.stats.duplicates);
	expect_whole_once(_metadata, self, LEN, 4);
}

/*
 * The sender's flush with a window out: it moves while eight fragments
 * are on the wire; its unresolved count holds until they are answered,
 * then the train waits PAUSED and goes on once it is back.
 */
TEST_F(win, sender_moving_waits_for_the_window_alone)
{
	struct vnet_fw_ep *ep = &self->a->ep[0].fw;

	send_xfer(_metadata, self, LEN, 5);
	while (self->b->fw.stats.rx_frags < 20)
		step(self);
	ep->moving = true;
	EXPECT_LT(0, ep->unresolved);
	while (ep->unresolved)
		step(self);
	EXPECT_EQ(VNET_CHAN_PAUSED, self->a->fw.peers[0].tx[0].state);
	EXPECT_GT(LEN / 1000, self->b->fw.stats.rx_frags);
	ep->moving = false;
	ASSERT_TRUE(until_delivered(self, 1000 * self->a->fw.quantum));
	expect_whole_once(_metadata, self, LEN, 5);
}

static struct vnet_fw_send_chan *chan(FIXTURE_DATA(win) *self)
{
	return &self->a->fw.peers[self->a->fw.peer_of[1]].tx[0];
}

/*
 * Round trips are measured fragment by fragment, each against its own
 * latest transmission: a timeout grown long comes back down during a
 * train.  (Measured only on the answer to the channel's latest
 * transmission, a train with a window of eight gave one sample in its
 * 180 fragments, and the timeout stayed where it was.)
 */
TEST_F(win, round_trips_are_measured_in_the_window)
{
	struct vnet_fw_peer *p = &self->a->fw.peers[self->a->fw.peer_of[1]];
	u64 q = self->a->fw.quantum;

	p->srtt = 8 * q;
	p->rttvar = 0;
	p->rto = 8 * q;
	send_xfer(_metadata, self, LEN, 6);
	ASSERT_TRUE(until_delivered(self, 1000 * q));
	TH_LOG("timeout after a quarter megabyte: %llu (quantum %llu)",
	       (unsigned long long)p->rto, (unsigned long long)q);
	EXPECT_GT(2 * q, p->rto);
	expect_whole_once(_metadata, self, LEN, 6);
}

/* Drops FRAG packets on the wire from A to B for which @keep says no. */
static void filter_frags(FIXTURE_DATA(win) *self,
			 bool (*keep)(FIXTURE_DATA(win) *self, u32 seq))
{
	struct sim_net *net = &self->net;
	u32 i = 0;

	while (i < net->qlen) {
		struct sim_pkt *p = &net->q[i];
		const struct vnet_wire_hdr *h = (const void *)p->data;

		if (p->from == 0 && p->to == 1 && h->type == VNET_WIRE_FRAG &&
		    !keep(self, be32toh(h->seq))) {
			free(p->data);
			memmove(p, p + 1, (net->qlen - i - 1) * sizeof(*p));
			net->qlen--;
			continue;
		}
		i++;
	}
}

static u32 seen_max;
static bool seen_any;

/* Every first transmission lost; of those sent again, only the oldest's. */
static bool keep_oldest_resent(FIXTURE_DATA(win) *self, u32 seq)
{
	if (!seen_any || (s32)(seq - seen_max) > 0) {
		seen_any = true;
		seen_max = seq;
		return false;
	}
	return seq == chan(self)->una_seq;
}

/*
 * The window moving is word from the receiver.  A train's last window,
 * every first transmission lost, goes a fragment per timeout: the window
 * moves every quantum or two, and the train must not come back
 * "unreachable" -- max_retries quanta without word -- for the time the
 * whole window took.  It did, with max_retries 3, before an ACK that moved
 * the window counted as word (a fragment at a time it was delivered).
 */
TEST_F(win, window_moving_is_word_from_the_receiver)
{
	u64 start;

	self->a->fw.max_retries = 3;
	seen_any = false;
	send_xfer(_metadata, self, 30000, 7);
	start = self->net.now;
	while (!sim_peek(self->b, 1, VNET_Q_REQ_RECV)) {
		ASSERT_EQ(NULL, sim_peek(self->a, 0, VNET_Q_REP_RECV));
		ASSERT_GT(1000 * self->a->fw.quantum, self->net.now - start);
		sim_net_step(&self->net, 20);
		filter_frags(self, keep_oldest_resent);
	}
	expect_whole_once(_metadata, self, 30000, 7);
}

/*
 * A moving sender's flush is bounded as a single message's is, by
 * max(busy_timeout + max(max_retries / 4, 2) quanta, 2 * max_retries
 * quanta), whatever the window: with only the oldest fragment's resends
 * getting through, its ACKs trickle in a timeout apart.  Counted as word
 * from the receiver while the sender moved, they held the flush a timeout
 * per fragment of the window --
 * found by cluster_fuzz (regress/cluster_fuzz/window_out_when_its_sender_
 * moves), 20% of the packets lost.
 */
TEST_F(win, a_moving_senders_flush_is_bounded_by_the_window)
{
	struct vnet_fw_ep *ep = &self->a->ep[0].fw;
	u64 q = self->a->fw.quantum, start, bound;

	self->a->fw.max_retries = 2;
	self->a->fw.busy_timeout = 2 * q;
	bound = 4 * q + q;
	send_xfer(_metadata, self, LEN, 8);
	while (self->b->fw.stats.rx_frags < 20)
		step(self);
	/* A window whose every fragment is lost, out when the move starts. */
	seen_any = false;
	for (start = self->net.now; self->net.now - start < q / 4;) {
		sim_net_step(&self->net, 20);
		filter_frags(self, keep_oldest_resent);
	}
	ASSERT_EQ(8, chan(self)->seq + 1 - chan(self)->una_seq);
	ep->moving = true;
	start = self->net.now;
	while (ep->unresolved) {
		ASSERT_GE(bound, self->net.now - start);
		sim_net_step(&self->net, 20);
		filter_frags(self, keep_oldest_resent);
	}
	TH_LOG("flushed in %llu (bound %llu)",
	       (unsigned long long)(self->net.now - start),
	       (unsigned long long)bound);
}

/* An ACK or NACK to A from B's address, as a forger would write it. */
static void answer(FIXTURE_DATA(win) *self, u8 type, u32 seq, u32 stamp,
		   u8 status)
{
	frag_answer(&self->net, 0, 1, self->mac_b, 0x1234, type, seq, stamp,
		    status);
}

/*
 * The flush holds against a hostile peer: the oldest fragment sent again
 * alone, its sender moving, that transmission NACKed -- the train is
 * resolved for the flush -- then a late ACK of the oldest's first
 * transmission.  Nothing goes out again under the moving sender, and the
 * flush stays over.  (The fragments after the oldest went out again, and
 * counted unresolved, before the resends looked at the move.)
 */
TEST_F(win, no_resend_under_a_moving_sender)
{
	struct vnet_fw_send_chan *ch = chan(self);
	struct vnet_fw_ep *ep = &self->a->ep[0].fw;
	u32 una_first;
	u64 sent;

	self->net.down[1] = true;
	send_xfer(_metadata, self, 64 << 10, 9);
	while (ch->state != VNET_CHAN_INFLIGHT)
		sim_net_step(&self->net, 20);
	answer(self, VNET_WIRE_ACK, ch->seq, ch->stamp, VNET_RET_NONE);
	ASSERT_EQ(8, ch->seq + 1 - ch->una_seq);
	una_first = ch->first_stamp;
	while (!ch->narrow)
		sim_net_step(&self->net, 20);
	ASSERT_NE(ch->seq, ch->una_seq);
	ep->moving = true;
	ASSERT_LT(0, ep->unresolved);
	answer(self, VNET_WIRE_NACK, ch->una_seq, ch->stamp,
	       VNET_NACK_NOT_RESIDENT);
	ASSERT_TRUE(ch->nacked);
	ASSERT_EQ(0, ep->unresolved);
	sent = self->a->fw.stats.retransmits;
	answer(self, VNET_WIRE_ACK, ch->una_seq, una_first, VNET_RET_NONE);
	EXPECT_EQ(sent, self->a->fw.stats.retransmits);
	EXPECT_EQ(0, ep->unresolved);
}

/*
 * A train whose latest fragment was NACKed under a moving sender is
 * resolved for the flush; a RESYNC of that transmission then (a hostile
 * peer's, or a reboot's) may not put it back on the wire and in the
 * count.  The rewind did, and with two trains a peer could keep the
 * flush waiting past its bound, each RESYNC a new silence.
 */
TEST_F(win, no_rewind_under_a_moving_sender_whose_flush_is_over)
{
	struct vnet_fw_send_chan *ch = chan(self);
	struct vnet_fw_ep *ep = &self->a->ep[0].fw;
	u64 sent;

	self->net.down[1] = true;
	send_xfer(_metadata, self, 64 << 10, 10);
	while (ch->state != VNET_CHAN_INFLIGHT)
		sim_net_step(&self->net, 20);
	answer(self, VNET_WIRE_ACK, ch->seq, ch->stamp, VNET_RET_NONE);
	ASSERT_LT(1, ch->seq + 1 - ch->una_seq);
	ep->moving = true;
	ASSERT_EQ(1, ep->unresolved);
	answer(self, VNET_WIRE_NACK, ch->seq, ch->stamp,
	       VNET_NACK_NOT_RESIDENT);
	ASSERT_EQ(0, ep->unresolved);
	sent = self->a->fw.stats.retransmits;
	answer(self, VNET_WIRE_NACK, ch->seq, ch->stamp, VNET_NACK_RESYNC);
	sim_net_run_for(&self->net, 2 * self->a->fw.quantum);
	EXPECT_EQ(0, ep->unresolved);
	EXPECT_EQ(sent, self->a->fw.stats.retransmits);
	/* After the move, the train goes on and arrives whole. */
	ep->moving = false;
	self->net.down[1] = false;
	ASSERT_TRUE(until_delivered(self, 1000 * self->a->fw.quantum));
	expect_whole_once(_metadata, self, 64 << 10, 10);
}

static u32 first_seq, last_seq;
static bool lose_all_but_first, dropped;

/*
 * While lose_all_but_first, every fragment but the train's first is lost;
 * then the first transmission of last_seq that comes by.
 */
static bool keep_first_then_one_lost(FIXTURE_DATA(win) *self, u32 seq)
{
	if (lose_all_but_first)
		return seq == first_seq;
	if (dropped || seq != last_seq)
		return true;
	dropped = true;
	return false;
}

/*
 * The latest fragment read again from the sender's segment keeps the sum
 * of what it read.  Of a train short enough to be out at once, only the
 * first fragment arrives; the user writes new bytes over the source; the
 * timer sends the oldest missing fragment again, and the rest follow,
 * read again, the last of them the latest; that one is lost, and the
 * timer sends it again from the buffer.  Every packet must sum right for
 * the bytes it carries.  (Before 822759f the channel kept the sum of the
 * bytes the latest fragment was first read with, the receiver dropped
 * every retransmission of it as a bad frame, and the train came back
 * unreachable.)
 */
TEST_F(win, latest_fragment_read_again_keeps_its_new_sum)
{
	const u32 len = 3 * VNET_MEDIUM_MAX / 2;
	struct vnet_fw_send_chan *ch;
	u64 start;

	self->a->fw.train_window = VNET_FW_TRAIN_WINDOW_MAX;
	send_xfer(_metadata, self, len, 7);
	ch = chan(self);
	first_seq = ch->seq + 1;
	lose_all_but_first = true;
	dropped = false;
	start = self->net.now;
	do {
		filter_frags(self, keep_first_then_one_lost);
		step(self);
		ASSERT_GT(100 * self->a->fw.quantum, self->net.now - start);
	} while (!ch->is_train || ch->frag_off + ch->frag_len < len);
	filter_frags(self, keep_first_then_one_lost);
	last_seq = ch->seq;
	ASSERT_LT(first_seq + 2, last_seq);
	frag_fill(self->a->ep[0].fw.seg + SRC, len, 8);
	lose_all_but_first = false;

	start = self->net.now;
	while (ch->state != VNET_CHAN_FREE &&
	       self->net.now - start < 1000 * self->a->fw.quantum) {
		filter_frags(self, keep_first_then_one_lost);
		step(self);
	}
	EXPECT_TRUE(dropped);
	EXPECT_EQ(VNET_CHAN_FREE, ch->state);
	EXPECT_EQ(0, self->b->fw.stats.bad_frames);
	EXPECT_EQ(0, self->a->fw.stats.returned[VNET_RET_UNREACHABLE]);
}

/*
 * A train refused for busy_timeout, its last fragment out and its latest
 * transmission (the oldest fragment, sent again alone by the timer)
 * unanswered, sends nothing more and waits for that transmission's answer
 * until it would be due again -- a timeout at most.  An ACK of the oldest
 * fragment meanwhile (a receiver with a round trip of a timeout that lost
 * the rest of the window) sent the fragments after it again
 * (vnet_fw_train_fill()), each putting ch->due a timeout further: two
 * timeouts.
 */
TEST_F(win, refused_train_waits_one_timeout)
{
	struct vnet_fw_peer *p = &self->a->fw.peers[self->a->fw.peer_of[1]];
	u64 q = self->a->fw.quantum, rto_max, refused_at, found = 0, due0 = 0;
	const u32 len = 6000;
	struct vnet_fw_send_chan *ch;
	u64 sent, after = 0;
	u32 stamp;

	self->a->fw.max_retries = 20;
	self->a->fw.busy_timeout = 10 * q;
	rto_max = self->a->fw.max_retries * q / 4;
	self->net.down[1] = true;
	send_xfer(_metadata, self, len, 11);
	ch = chan(self);
	while (ch->state != VNET_CHAN_INFLIGHT)
		sim_net_step(&self->net, 20);
	/* First fragment taken, then all but the last. */
	answer(self, VNET_WIRE_ACK, ch->seq, ch->stamp, VNET_RET_NONE);
	ASSERT_EQ(len, ch->frag_off + ch->frag_len);
	ASSERT_LT(2, ch->seq - ch->una_seq);
	answer(self, VNET_WIRE_ACK, ch->seq - 1,
	       ch->win_stamp[(ch->seq - 1) % VNET_FW_TRAIN_WINDOW_MAX],
	       VNET_RET_NONE);
	ASSERT_EQ(ch->seq, ch->una_seq);
	/* Refused (an older transmission, "queue full"), then restarted. */
	answer(self, VNET_WIRE_NACK, ch->seq, ch->first_stamp,
	       VNET_NACK_QUEUE_FULL);
	ASSERT_TRUE(ch->refused);
	ASSERT_FALSE(ch->refused_rewound);
	refused_at = self->net.now;
	answer(self, VNET_WIRE_NACK, ch->seq, ch->stamp, VNET_NACK_RESTART);
	ASSERT_EQ(0, ch->frag_off);
	/* A receiver whose round trips are about rto_max. */
	p->srtt = rto_max;
	p->rttvar = rto_max;
	p->rto = rto_max;
	stamp = ch->stamp;
	while (ch->stamp == stamp)
		sim_net_step(&self->net, 20);
	/*
	 * It takes the first fragment again, its answer timed so that the
	 * timer's next go falls just before the clock runs out: the rest of
	 * the train goes.
	 */
	while (self->net.now < refused_at + self->a->fw.busy_timeout -
			       rto_max - 3 * q / 2)
		sim_net_step(&self->net, 20);
	answer(self, VNET_WIRE_ACK, ch->seq, ch->stamp, VNET_RET_NONE);
	ASSERT_EQ(len, ch->frag_off + ch->frag_len);
	ASSERT_NE(ch->seq, ch->una_seq);
	/* The window lost; the timer sends the oldest again, alone. */
	stamp = ch->stamp;
	while (ch->stamp == stamp)
		sim_net_step(&self->net, 20);
	ASSERT_TRUE(ch->narrow);
	ASSERT_GT(refused_at + self->a->fw.busy_timeout, self->net.now);
	/* Busy clock out, latest unanswered: the new wait. */
	while (!vnet_fw_chan_refused_too_long(&self->a->fw, ch))
		sim_net_step(&self->net, 20);
	found = self->net.now;
	due0 = ch->due;
	ASSERT_EQ(VNET_CHAN_INFLIGHT, ch->state);
	/* Just before that is due, the oldest's answer: taken. */
	while (self->net.now + 40 < due0) {
		sim_net_step(&self->net, 20);
		ASSERT_EQ(VNET_CHAN_INFLIGHT, ch->state);
	}
	sent = self->a->fw.stats.retransmits;
	answer(self, VNET_WIRE_ACK, ch->una_seq, ch->stamp, VNET_RET_NONE);
	after = self->a->fw.stats.retransmits - sent;
	while (ch->state == VNET_CHAN_INFLIGHT)
		sim_net_step(&self->net, 20);
	TH_LOG("refused at %llu, clock out (seen) at +%llu, due then +%llu; "
	       "%llu sent after the clock ran out; returned (%s) at +%llu; "
	       "rto_max %llu, quantum %llu",
	       (unsigned long long)refused_at,
	       (unsigned long long)(found - refused_at),
	       (unsigned long long)(due0 - refused_at),
	       (unsigned long long)after,
	       self->a->fw.stats.returned[VNET_RET_UNREACHABLE] ?
	       "unreachable" : "other",
	       (unsigned long long)(self->net.now - refused_at),
	       (unsigned long long)rto_max, (unsigned long long)q);
	/* Nothing goes out; back by the time it was due, and a scan. */
	EXPECT_EQ(0, after);
	EXPECT_GE(due0 + q, self->net.now);
	EXPECT_GE(rto_max + q, self->net.now - found);
}

/*
 * With max_retries under 8 the wait past busy_timeout is up to two quanta,
 * not max_retries / 4: a NACK of an older transmission gives the latest
 * two quanta (vnet_fw_wait_for_latest()).
 */
TEST_F(win, small_max_retries_wait_two_quanta)
{
	u64 q = self->a->fw.quantum, refused_at, deadline, sent = 0;
	struct vnet_fw_send_chan *ch = chan(self);
	u32 stamp;

	self->a->fw.max_retries = 1;
	self->a->fw.busy_timeout = 10 * q;
	self->net.down[1] = true;
	send_xfer(_metadata, self, 100, 12);
	while (ch->state != VNET_CHAN_INFLIGHT)
		sim_net_step(&self->net, 20);
	ASSERT_FALSE(ch->is_train);
	answer(self, VNET_WIRE_NACK, ch->seq, ch->stamp, VNET_NACK_QUEUE_FULL);
	refused_at = self->net.now;
	deadline = refused_at + self->a->fw.busy_timeout;
	/* Every transmission refused at once, but the last before the deadline. */
	for (;;) {
		stamp = ch->stamp;
		while (ch->stamp == stamp)
			sim_net_step(&self->net, 20);
		if (self->net.now + q < deadline) {
			answer(self, VNET_WIRE_NACK, ch->seq, ch->stamp,
			       VNET_NACK_QUEUE_FULL);
			continue;
		}
		sent = self->net.now;
		/* That one unanswered; a late NACK of the one before. */
		answer(self, VNET_WIRE_NACK, ch->seq, ch->stamp - 1,
		       VNET_NACK_QUEUE_FULL);
		break;
	}
	while (ch->state == VNET_CHAN_INFLIGHT)
		sim_net_step(&self->net, 20);
	TH_LOG("sent %llu before the deadline, back %llu after; quantum %llu, max_retries/4: %llu",
	       (unsigned long long)(deadline - sent),
	       (unsigned long long)(self->net.now - deadline),
	       (unsigned long long)q,
	       (unsigned long long)(self->a->fw.max_retries * q / 4));
	/* The wait, max(max_retries / 4, 2) quanta, and a scan. */
	EXPECT_GE(3 * q, self->net.now - deadline);
}

/* Trains on @a's channels to its peer that read their sender's segment. */
static u32 trains_from_seg(const struct sim_nic *a)
{
	u32 c, n = 0;

	for (c = 0; c < a->fw.nchannels; c++) {
		const struct vnet_fw_send_chan *ch = &a->fw.peers[0].tx[c];

		n += ch->state != VNET_CHAN_FREE && ch->is_train &&
		     ch->from_seg;
	}
	return n;
}

/*
 * Two XFERs read from the segment, one after the other on one send queue:
 * the second is taken and goes while the first is still on its way, not
 * after it -- a train holds only its own entry -- but the consumer index,
 * which tells the sender it may change a source again, passes neither
 * until the first has ended, even when the second, shorter, ends first.
 * Both arrive whole, once.
 */
TEST_F(win, trains_from_the_segment_overlap)
{
	const struct vnet_frame *frame = self->a->ep[0].frame;
	struct vnet_desc big = frag_xfer_seg(LEN, SRC, 0);
	struct vnet_desc small = frag_xfer_seg(LEN / 4, SRC + LEN, LEN);
	u32 most = 0, cons_when_small_in = ~0u;
	u64 start = self->net.now;
	bool small_in = false;
	const struct vnet_desc *got;

	big.args[0] = 1;
	small.args[0] = 2;
	frag_fill(self->a->ep[0].fw.seg + SRC, LEN, 1);
	frag_fill(self->a->ep[0].fw.seg + SRC + LEN, LEN / 4, 2);
	ASSERT_EQ(0, sim_post(self->a, 0, VNET_Q_REQ_SEND, &big, NULL));
	ASSERT_EQ(0, sim_post(self->a, 0, VNET_Q_REQ_SEND, &small, NULL));
	while (frame->cons[VNET_Q_REQ_SEND].val != 2) {
		ASSERT_GT(1000 * self->a->fw.quantum, self->net.now - start);
		step(self);
		if (trains_from_seg(self->a) > most)
			most = trains_from_seg(self->a);
		got = sim_peek(self->b, 1, VNET_Q_REQ_RECV);
		if (got && !small_in) {
			/* The shorter one, second in the queue, is first in. */
			EXPECT_EQ(2, got->args[0]);
			EXPECT_EQ(LEN / 4, got->len);
			EXPECT_TRUE(frag_same(self->b->ep[1].fw.seg + LEN,
					      LEN / 4, 2));
			sim_consume(self->b, 1, VNET_Q_REQ_RECV);
			small_in = true;
			cons_when_small_in = frame->cons[VNET_Q_REQ_SEND].val;
		}
	}
	EXPECT_EQ(2, most);
	EXPECT_TRUE(small_in);
	EXPECT_EQ(0, cons_when_small_in);
	expect_whole_once(_metadata, self, LEN, 1);
}

/*
 * One sender streaming XFERs from its segment has at most half the trains
 * a peer takes on the wire at once (two of four here), whatever its queue
 * holds: another endpoint's message that needs a train finds a channel
 * while the stream goes on, and arrives before it ends.
 */
TEST_F(win, one_sender_leaves_trains_for_the_others)
{
	struct vnet_desc medium = { .handler = 3, .nargs = 4,
				    .flags = VNET_DESC_MEDIUM, .len = 4000 };
	u32 i, most = 0, bulk_in = 0, bulk_before_medium = ~0u;
	u64 start = self->net.now;
	const struct vnet_desc *got;
	bool posted = false;
	u8 buf[4000];

	sim_map(self->a, 1, 0, 1, 1, TAG);
	for (i = 0; i < 8; i++) {
		struct vnet_desc d = frag_xfer_seg(LEN / 4, SRC + i * (LEN / 4),
						   i * (LEN / 4));

		d.args[0] = 10 + i;
		frag_fill(self->a->ep[0].fw.seg + SRC + i * (LEN / 4), LEN / 4,
			  10 + i);
		ASSERT_EQ(0, sim_post(self->a, 0, VNET_Q_REQ_SEND, &d, NULL));
	}
	medium.args[0] = 99;
	frag_fill(buf, sizeof(buf), 99);
	while (bulk_in < 8) {
		ASSERT_GT(1000 * self->a->fw.quantum, self->net.now - start);
		step(self);
		if (trains_from_seg(self->a) > most)
			most = trains_from_seg(self->a);
		/* Once the stream is under way, the other endpoint sends. */
		if (most && !posted) {
			ASSERT_EQ(0, sim_post(self->a, 1, VNET_Q_REQ_SEND,
					      &medium, buf));
			posted = true;
		}
		while ((got = sim_peek(self->b, 1, VNET_Q_REQ_RECV))) {
			if (got->args[0] == 99) {
				EXPECT_EQ(sizeof(buf), got->len);
				bulk_before_medium = bulk_in;
			} else {
				bulk_in++;
			}
			sim_consume(self->b, 1, VNET_Q_REQ_RECV);
		}
	}
	TH_LOG("trains from the stream at once: %u; %u of its 8 in before the other endpoint's message",
	       most, bulk_before_medium);
	EXPECT_EQ(2, most);
	EXPECT_GT(8, bulk_before_medium);
}

TEST_HARNESS_MAIN
