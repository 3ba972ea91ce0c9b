// SPDX-License-Identifier: GPL-2.0
/*
 * Trains with something happening halfway: the sender evicted (the flush
 * waits for one fragment, the train waits for the move), for longer than
 * the receiver keeps a train; the receiver evicted (the train goes on,
 * the last fragment waits for it); either closed; the receiver rebooted;
 * routes deleted and added again on either side; segments replaced.  Each
 * message arrives once and whole, or comes back to its sender whole, with
 * a reason; nothing is left held.
 */
#include "kselftest_harness.h"
#include "frag_util.h"

#define TAG		0x5bULL
#define LEN		(256u << 10)	/* about 180 fragments at MTU 1500 */
#define SRC		VNET_XFER_MAX	/* where the client's source is */

FIXTURE(train) {
	struct sim_net net;
	struct sim_nic *a, *b;
	u8 mac[2][6];
};

FIXTURE_SETUP(train)
{
	frag_pair_init(&self->net, 77, TAG);
	self->a = self->net.nic[0];
	self->b = self->net.nic[1];
	sim_mac(0, self->mac[0]);
	sim_mac(1, self->mac[1]);
}

FIXTURE_TEARDOWN(train)
{
	frag_free_segs(&self->net);
	sim_net_fini(&self->net);
}

/* A's client sends LEN bytes of its segment, seeded @seed, to offset 0. */
static void send_xfer(struct __test_metadata *_metadata,
		      FIXTURE_DATA(train) *self, u32 seed)
{
	struct vnet_desc d = frag_xfer_seg(LEN, SRC, 0);

	d.args[0] = seed;
	frag_fill(self->a->ep[0].fw.seg + SRC, LEN, seed);
	ASSERT_EQ(0, sim_post(self->a, 0, VNET_Q_REQ_SEND, &d, NULL));
}

/* Run until the receiver has taken @n fragments in all. */
static void until_frags(struct __test_metadata *_metadata,
			FIXTURE_DATA(train) *self, u64 n)
{
	u64 start = self->net.now;

	while (self->b->fw.stats.rx_frags < n) {
		ASSERT_GT(1000000, self->net.now - start);
		sim_net_step(&self->net, 20);
	}
}

static bool delivered(struct sim_net *net, void *arg)
{
	return sim_peek(net->nic[1], 1, VNET_Q_REQ_RECV);
}

static bool returned(struct sim_net *net, void *arg)
{
	return sim_peek(net->nic[0], 0, VNET_Q_REP_RECV);
}

/*
 * Train @seed from a's client is 40 fragments in when the client moves
 * off the card the host's way: flushed, then unloaded, with its own
 * faults left to the test.
 */
static void sender_off_card_halfway(struct __test_metadata *_metadata,
				    FIXTURE_DATA(train) *self, u32 seed)
{
	self->a->auto_fault = false;
	send_xfer(_metadata, self, seed);
	until_frags(_metadata, self, 40);
	self->a->ep[0].fw.moving = true;
	while (self->a->ep[0].fw.unresolved)
		sim_net_step(&self->net, 20);
	sim_unload(self->a, 0);
	self->a->ep[0].fw.moving = false;
}

/* The one message b received: whole, then gone from the queue. */
static void expect_whole(struct __test_metadata *_metadata,
			 FIXTURE_DATA(train) *self, u32 seed)
{
	const struct vnet_desc *d = sim_peek(self->b, 1, VNET_Q_REQ_RECV);

	ASSERT_NE(NULL, d);
	EXPECT_EQ(LEN, d->len);
	EXPECT_EQ(seed, d->args[0]);
	EXPECT_TRUE(frag_same(self->b->ep[1].fw.seg, LEN, seed));
	sim_consume(self->b, 1, VNET_Q_REQ_RECV);
	sim_net_run_for(&self->net, 10 * self->a->fw.quantum);
	EXPECT_EQ(NULL, sim_peek(self->b, 1, VNET_Q_REQ_RECV));
	EXPECT_EQ(1, self->b->ep[1].fw.stats.received);
	EXPECT_TRUE(frag_all_quiet(&self->net));
}

/* What came back to a's client: the whole message, and @why. */
static void expect_returned(struct __test_metadata *_metadata,
			    FIXTURE_DATA(train) *self, u8 why)
{
	const struct vnet_desc *d = sim_peek(self->a, 0, VNET_Q_REP_RECV);

	ASSERT_NE(NULL, d);
	EXPECT_TRUE(d->flags & VNET_DESC_RETURNED);
	EXPECT_EQ(why, d->status);
	EXPECT_EQ(LEN, d->len);
	EXPECT_EQ(SRC, d->src_offset);
	EXPECT_EQ(VNET_DESC_XFER | VNET_DESC_FROM_SEG, d->flags &
		  (VNET_DESC_XFER | VNET_DESC_FROM_SEG | VNET_DESC_MEDIUM));
	sim_consume(self->a, 0, VNET_Q_REP_RECV);
	EXPECT_EQ(NULL, sim_peek(self->b, 1, VNET_Q_REQ_RECV));
}

/*
 * The sender starts to move halfway: its flush ends within a fragment's
 * round trip, nothing of the train goes out while it moves, and late and
 * duplicate answers to what went before change nothing.  After the move,
 * off the card, the train goes on and arrives whole; the send entry goes
 * once the sender is back.
 */
TEST_F(train, sender_moves_halfway)
{
	struct vnet_fw_peer *p = &self->a->fw.peers[self->a->fw.peer_of[1]];
	u64 start, frags;
	u32 i;

	self->net.tapcap = 1024;
	self->net.tap = malloc(1024 * sizeof(*self->net.tap));
	send_xfer(_metadata, self, 1);
	until_frags(_metadata, self, 40);
	self->a->ep[0].fw.moving = true;
	start = self->net.now;
	while (self->a->ep[0].fw.unresolved)
		sim_net_step(&self->net, 20);
	EXPECT_GE(2 * self->net.delay + 40, self->net.now - start);
	EXPECT_LT(0, self->a->flushed[0]);
	EXPECT_EQ(1, self->a->fw.paused);
	frags = self->a->fw.stats.tx_frags;
	sim_net_run_for(&self->net, 10 * self->a->fw.quantum);
	EXPECT_EQ(frags, self->a->fw.stats.tx_frags);
	EXPECT_EQ(0, self->a->ep[0].fw.unresolved);

	/* Every packet again, late and twice. */
	for (i = 0; i < self->net.taplen && i < 1024; i++) {
		sim_net_inject(&self->net, self->net.tap[i].to,
			       self->mac[self->net.tap[i].from],
			       self->net.tap[i].data, self->net.tap[i].len);
	}
	sim_net_run_for(&self->net, 2 * self->a->fw.quantum);
	EXPECT_EQ(frags, self->a->fw.stats.tx_frags);
	EXPECT_EQ(VNET_CHAN_PAUSED, p->tx[0].state);
	EXPECT_EQ(NULL, sim_peek(self->b, 1, VNET_Q_REQ_RECV));

	/* Moved out; the train needs no frame. */
	sim_unload(self->a, 0);
	self->a->ep[0].fw.moving = false;
	ASSERT_TRUE(frag_run_until(&self->net, delivered, NULL, 1000000));
	EXPECT_EQ(0, self->a->ep[0].frame->cons[VNET_Q_REQ_SEND].val);
	sim_load(self->a, 0);
	sim_net_run_for(&self->net, 1000);
	EXPECT_EQ(1, self->a->ep[0].frame->cons[VNET_Q_REQ_SEND].val);
	expect_whole(_metadata, self, 1);
}

/*
 * The train ends, delivered, with its sender off the card: only a round
 * that finds the sender on the card consumes its send entry, so the
 * firmware asks for it back, as for a return -- else its queue would
 * wait behind the entry until its user touched the frame.
 */
TEST_F(train, sender_away_at_the_end_is_asked_back)
{
	u32 asked;

	sender_off_card_halfway(_metadata, self, 15);
	asked = self->a->faults_requested[0];
	ASSERT_TRUE(frag_run_until(&self->net, delivered, NULL, 1000000));
	sim_net_run_for(&self->net, 2 * self->a->fw.quantum);
	EXPECT_LT(asked, self->a->faults_requested[0]);
	EXPECT_EQ(0, self->a->ep[0].frame->cons[VNET_Q_REQ_SEND].val);

	sim_load(self->a, 0);
	sim_net_run_for(&self->net, 1000);
	EXPECT_EQ(1, self->a->ep[0].frame->cons[VNET_Q_REQ_SEND].val);
	expect_whole(_metadata, self, 15);
}

/*
 * The sender moves for longer than the receiver keeps a train: the
 * receiver drops it, the next fragment is NACKed RESTART and the train
 * starts over; the message arrives once, whole.
 */
TEST_F(train, sender_moves_longer_than_the_receiver_waits)
{
	send_xfer(_metadata, self, 2);
	until_frags(_metadata, self, 40);
	self->a->ep[0].fw.moving = true;
	sim_net_run_for(&self->net, 500);
	/* Nothing to send, a train coming in: its thread must keep time. */
	EXPECT_EQ(0, self->b->fw.nactive);
	EXPECT_TRUE(vnet_fw_poll(&self->b->fw, self->net.now).timer);
	sim_net_run_for(&self->net, self->b->fw.busy_timeout +
				    2 * self->b->fw.quantum);
	EXPECT_EQ(1, self->b->fw.stats.trains_dropped);
	EXPECT_EQ(0, self->b->fw.trains_busy);
	EXPECT_EQ(0, self->b->ep[1].fw.recv_reserved[0]);
	self->a->ep[0].fw.moving = false;
	ASSERT_TRUE(frag_run_until(&self->net, delivered, NULL, 2000000));
	expect_whole(_metadata, self, 2);
}

/*
 * The receiver is evicted halfway: the fragments go on landing, the last
 * one is NACKed "not resident" and asks for it back; loaded, it gets the
 * message within a round trip or two of the RESUME.
 */
TEST_F(train, receiver_evicted_halfway)
{
	u64 frags, loaded;

	self->b->auto_fault = false;
	send_xfer(_metadata, self, 3);
	until_frags(_metadata, self, 40);
	sim_unload(self->b, 1);
	frags = self->b->fw.stats.rx_frags;
	while (!self->b->fw.stats.tx_nack[VNET_NACK_NOT_RESIDENT]) {
		ASSERT_GT(1000000, self->net.now);
		sim_net_step(&self->net, 20);
	}
	EXPECT_LT(frags + 100, self->b->fw.stats.rx_frags);
	EXPECT_LT(0, self->b->faults_requested[1]);
	EXPECT_EQ(1, self->b->fw.trains_busy);
	sim_net_run_for(&self->net, 3 * self->a->fw.quantum);
	EXPECT_EQ(0, self->b->ep[1].fw.stats.received);

	sim_load(self->b, 1);
	loaded = self->net.now;
	ASSERT_TRUE(frag_run_until(&self->net, delivered, NULL, 1000000));
	EXPECT_GT(self->a->fw.quantum / 4, self->net.now - loaded);
	EXPECT_LE(1, self->a->fw.stats.resume_retransmits);
	expect_whole(_metadata, self, 3);
}

/*
 * The receiver is evicted near the end and stays out: the last fragment
 * is NACKed "not resident", which starts the busy clock with the train
 * as far as it ever got.  That clock, started by a refusal and not by a
 * RESTART, owes the train no time to get back to where it was, so the
 * message comes back busy busy_timeout after its first refusal, as a
 * single message would (not 241 quanta later, after the receiver has
 * dropped the train and the sender has started it over).
 */
TEST_F(train, receiver_evicted_at_the_end_busy_in_time)
{
	u64 first;

	self->b->auto_fault = false;
	send_xfer(_metadata, self, 10);
	until_frags(_metadata, self, 150);
	sim_unload(self->b, 1);
	while (!self->a->fw.stats.rx_nack[VNET_NACK_NOT_RESIDENT]) {
		ASSERT_GT(1000000, self->net.now);
		sim_net_step(&self->net, 20);
	}
	first = self->net.now;
	ASSERT_TRUE(frag_run_until(&self->net, returned, NULL,
				   10 * self->a->fw.busy_timeout));
	TH_LOG("back %llu quanta after the first refusal",
	       (unsigned long long)(self->net.now - first) /
	       self->a->fw.quantum);
	EXPECT_GE(self->a->fw.busy_timeout + 2 * self->a->fw.quantum,
		  self->net.now - first);
	expect_returned(_metadata, self, VNET_RET_BUSY);
}

/* The same with a medium payload, which lands in the train's own buffer. */
TEST_F(train, receiver_evicted_halfway_medium)
{
	struct vnet_desc d = sim_request(4);
	const struct vnet_desc *got;
	u8 buf[VNET_MEDIUM_MAX];

	self->b->auto_fault = false;
	/*
	 * Two fragments at a time: a window of the whole message's six
	 * would have it all in before the receiver goes.
	 */
	self->a->fw.train_window = 2;
	d.flags = VNET_DESC_MEDIUM;
	d.len = sizeof(buf);
	frag_fill(buf, sizeof(buf), 4);
	ASSERT_EQ(0, sim_post(self->a, 0, VNET_Q_REQ_SEND, &d, buf));
	until_frags(_metadata, self, 2);
	sim_unload(self->b, 1);
	sim_net_run_for(&self->net, 3 * self->a->fw.quantum);
	EXPECT_LT(0, self->b->fw.stats.tx_nack[VNET_NACK_NOT_RESIDENT]);
	sim_load(self->b, 1);
	ASSERT_TRUE(frag_run_until(&self->net, delivered, NULL, 1000000));
	got = sim_peek(self->b, 1, VNET_Q_REQ_RECV);
	EXPECT_EQ(sizeof(buf), got->len);
	EXPECT_TRUE(frag_same(sim_payload(self->b, 1, VNET_Q_REQ_RECV),
			      sizeof(buf), 4));
	sim_consume(self->b, 1, VNET_Q_REQ_RECV);
	sim_net_run_for(&self->net, 5 * self->a->fw.quantum);
	EXPECT_TRUE(frag_all_quiet(&self->net));
}

/*
 * As above with the whole window out: the first fragment is taken, the
 * other five are on the wire when the receiver goes.  The first of them
 * is NACKed "not resident" and the rest, past it, dropped; once the
 * receiver is back they go again from there, and the message arrives
 * whole, once.
 */
TEST_F(train, receiver_evicted_with_the_window_out_medium)
{
	struct vnet_desc d = sim_request(5);
	u8 buf[VNET_MEDIUM_MAX];
	u64 start = self->net.now;

	self->b->auto_fault = false;
	d.flags = VNET_DESC_MEDIUM;
	d.len = sizeof(buf);
	frag_fill(buf, sizeof(buf), 5);
	ASSERT_EQ(0, sim_post(self->a, 0, VNET_Q_REQ_SEND, &d, buf));
	while (self->a->fw.stats.tx_frags < 6) {
		ASSERT_GT(1000000, self->net.now - start);
		sim_net_step(&self->net, 20);
	}
	ASSERT_EQ(1, self->b->fw.stats.rx_frags);
	sim_unload(self->b, 1);
	sim_net_run_for(&self->net, 3 * self->a->fw.quantum);
	EXPECT_LE(6, self->b->fw.stats.rx_frags);
	EXPECT_LT(0, self->b->fw.stats.tx_nack[VNET_NACK_NOT_RESIDENT]);
	EXPECT_EQ(NULL, sim_peek(self->b, 1, VNET_Q_REQ_RECV));
	sim_load(self->b, 1);
	ASSERT_TRUE(frag_run_until(&self->net, delivered, NULL, 1000000));
	EXPECT_EQ(sizeof(buf), sim_peek(self->b, 1, VNET_Q_REQ_RECV)->len);
	EXPECT_TRUE(frag_same(sim_payload(self->b, 1, VNET_Q_REQ_RECV),
			      sizeof(buf), 5));
	sim_consume(self->b, 1, VNET_Q_REQ_RECV);
	sim_net_run_for(&self->net, 5 * self->a->fw.quantum);
	EXPECT_EQ(NULL, sim_peek(self->b, 1, VNET_Q_REQ_RECV));
	EXPECT_EQ(NULL, sim_peek(self->a, 0, VNET_Q_REP_RECV));
	EXPECT_EQ(1, self->b->ep[1].fw.stats.received);
	EXPECT_TRUE(frag_all_quiet(&self->net));
}

/* The receiver closes halfway: the sender gets its message back, whole. */
TEST_F(train, receiver_closes_halfway)
{
	send_xfer(_metadata, self, 5);
	until_frags(_metadata, self, 40);
	self->b->ep[1].exists = false;
	vnet_fw_ep_forget(&self->b->fw, &self->b->ep[1].fw);
	EXPECT_EQ(0, self->b->fw.trains_busy);
	ASSERT_TRUE(frag_run_until(&self->net, returned, NULL, 1000000));
	expect_returned(_metadata, self, VNET_RET_NO_ENDPOINT);
	sim_net_run_for(&self->net, 1000);
	EXPECT_EQ(1, self->a->ep[0].frame->cons[VNET_Q_REQ_SEND].val);
	EXPECT_TRUE(frag_all_quiet(&self->net));
}

/*
 * The sender closes halfway.  A train from its segment stops (the segment
 * goes with it); the receiver drops its part when the channel's next
 * message says so, here after busy_timeout.  A medium train has its bytes
 * in the pool and is delivered without its sender.
 */
TEST_F(train, sender_closes_halfway)
{
	struct vnet_desc d = sim_request(6);
	u8 buf[VNET_MEDIUM_MAX];

	send_xfer(_metadata, self, 6);
	until_frags(_metadata, self, 40);
	vnet_fw_ep_forget(&self->a->fw, &self->a->ep[0].fw);
	EXPECT_EQ(0, self->a->fw.nactive);
	sim_net_run_for(&self->net, self->b->fw.busy_timeout +
				    2 * self->b->fw.quantum);
	EXPECT_EQ(NULL, sim_peek(self->b, 1, VNET_Q_REQ_RECV));
	EXPECT_TRUE(frag_all_quiet(&self->net));

	d.flags = VNET_DESC_MEDIUM;
	d.len = sizeof(buf);
	frag_fill(buf, sizeof(buf), 7);
	sim_map(self->a, 1, 0, 1, 1, TAG);
	ASSERT_EQ(0, sim_post(self->a, 1, VNET_Q_REQ_SEND, &d, buf));
	until_frags(_metadata, self, self->b->fw.stats.rx_frags + 2);
	vnet_fw_ep_forget(&self->a->fw, &self->a->ep[1].fw);
	ASSERT_TRUE(frag_run_until(&self->net, delivered, NULL, 1000000));
	EXPECT_TRUE(frag_same(sim_payload(self->b, 1, VNET_Q_REQ_RECV),
			      sizeof(buf), 7));
}

/*
 * The receiver reboots halfway: it has no channel state; the next fragment
 * is NACKed RESYNC and the train starts over with SYNC, whole, once.
 */
TEST_F(train, receiver_reboots_halfway)
{
	send_xfer(_metadata, self, 8);
	until_frags(_metadata, self, 40);
	vnet_fw_trains_drop_all(&self->b->fw);
	vnet_fw_transport_init(&self->b->fw);
	ASSERT_LE(0, vnet_fw_route_add(&self->b->fw, 0, self->mac[0], self->net.now));
	ASSERT_TRUE(frag_run_until(&self->net, delivered, NULL, 1000000));
	EXPECT_LE(1, self->a->fw.stats.rx_nack[VNET_NACK_RESYNC]);
	expect_whole(_metadata, self, 8);
}

/* The receiver's route to the sender goes and comes back halfway. */
TEST_F(train, receiver_route_readded_halfway)
{
	send_xfer(_metadata, self, 9);
	until_frags(_metadata, self, 40);
	ASSERT_TRUE(vnet_fw_route_del(&self->b->fw, 0, self->net.now));
	EXPECT_EQ(0, self->b->fw.trains_busy);
	sim_net_run_for(&self->net, 3 * self->a->fw.quantum);
	ASSERT_LE(0, vnet_fw_route_add(&self->b->fw, 0, self->mac[0], self->net.now));
	ASSERT_TRUE(frag_run_until(&self->net, delivered, NULL, 1000000));
	expect_whole(_metadata, self, 9);
}

/*
 * A megabyte at 20% loss each way, its train dropped by the receiver
 * after 600 fragments: the train starts over, and its refusal clock,
 * started by the RESTART, gives it time to get back past 600 fragments
 * through the same loss -- two quanta each, as the receiver allows --
 * rather than running out on the way.  It arrives whole.
 */
TEST_F_TIMEOUT(train, restarted_late_under_loss_gets_back_in_time, 300)
{
	struct vnet_desc d = frag_xfer_seg(VNET_XFER_MAX, SRC, 0);
	const struct vnet_desc *got;

	d.args[0] = 24;
	frag_fill(self->a->ep[0].fw.seg + SRC, VNET_XFER_MAX, 24);
	ASSERT_EQ(0, sim_post(self->a, 0, VNET_Q_REQ_SEND, &d, NULL));
	self->net.loss = 200;
	while (self->b->fw.stats.rx_frags < 600) {
		ASSERT_EQ(NULL, sim_peek(self->a, 0, VNET_Q_REP_RECV));
		sim_net_step(&self->net, 20);
	}
	ASSERT_TRUE(vnet_fw_route_del(&self->b->fw, 0, self->net.now));
	sim_net_run_for(&self->net, 3 * self->a->fw.quantum);
	ASSERT_LE(0, vnet_fw_route_add(&self->b->fw, 0, self->mac[0], self->net.now));
	frag_run_until(&self->net, delivered, NULL, 10 * self->a->fw.busy_timeout);
	EXPECT_EQ(NULL, sim_peek(self->a, 0, VNET_Q_REP_RECV));
	got = sim_peek(self->b, 1, VNET_Q_REQ_RECV);
	ASSERT_NE(NULL, got);
	EXPECT_EQ(VNET_XFER_MAX, got->len);
	EXPECT_TRUE(frag_same(self->b->ep[1].fw.seg, VNET_XFER_MAX, 24));
}

/*
 * The link's MTU grows halfway through a medium train, to where the whole
 * message would fit the first fragment, and the receiver drops the train:
 * the train starts over with two fragments still, not one flagged first
 * and last (a bad frame), and arrives whole, with no bad frame counted.
 */
TEST_F(train, restarted_after_the_mtu_grew_still_has_two_fragments)
{
	struct vnet_desc d = sim_request(23);
	const struct vnet_desc *got;
	u8 buf[VNET_MEDIUM_MAX];

	d.flags = VNET_DESC_MEDIUM;
	d.len = sizeof(buf);
	frag_fill(buf, sizeof(buf), 23);
	ASSERT_EQ(0, sim_post(self->a, 0, VNET_Q_REQ_SEND, &d, buf));
	until_frags(_metadata, self, 2);
	self->a->fw.mtu = 9000;
	ASSERT_TRUE(vnet_fw_route_del(&self->b->fw, 0, self->net.now));
	sim_net_run_for(&self->net, 3 * self->a->fw.quantum);
	ASSERT_LE(0, vnet_fw_route_add(&self->b->fw, 0, self->mac[0], self->net.now));
	ASSERT_TRUE(frag_run_until(&self->net, delivered, NULL, 1000000));
	EXPECT_EQ(0, self->b->fw.stats.bad_frames);
	got = sim_peek(self->b, 1, VNET_Q_REQ_RECV);
	EXPECT_EQ(sizeof(buf), got->len);
	EXPECT_TRUE(frag_same(sim_payload(self->b, 1, VNET_Q_REQ_RECV),
			      sizeof(buf), 23));
	sim_consume(self->b, 1, VNET_Q_REQ_RECV);
	sim_net_run_for(&self->net, 5 * self->a->fw.quantum);
	EXPECT_TRUE(frag_all_quiet(&self->net));
}

/*
 * The sender's route to the receiver goes halfway: the message comes back
 * unreachable, whole.  Added again, in a slot of a new incarnation, the
 * next train is delivered and the receiver lets go of the old one.
 */
TEST_F(train, sender_route_deleted_halfway)
{
	send_xfer(_metadata, self, 10);
	until_frags(_metadata, self, 40);
	ASSERT_TRUE(vnet_fw_route_del(&self->a->fw, 1, self->net.now));
	ASSERT_TRUE(frag_run_until(&self->net, returned, NULL, 1000000));
	expect_returned(_metadata, self, VNET_RET_UNREACHABLE);
	EXPECT_EQ(1, self->b->fw.trains_busy);

	self->a->fw.peers[0].used = false;
	ASSERT_LE(0, vnet_fw_route_add(&self->a->fw, 1, self->mac[1], self->net.now));
	send_xfer(_metadata, self, 11);
	ASSERT_TRUE(frag_run_until(&self->net, delivered, NULL, 1000000));
	EXPECT_EQ(1, self->b->fw.stats.trains_dropped);
	expect_whole(_metadata, self, 11);
}

/*
 * The route goes while the sender is off the card: its train comes back
 * unreachable, but the return waits for the sender's frame.  The send
 * entry must not go before the return is written: libvnet reads "taken"
 * as "delivered, or its return is on the reply queue" and posts the next
 * piece of a bulk transfer, or ends the transfer, on that.
 */
TEST_F(train, sender_off_card_gets_its_return_before_its_entry)
{
	u32 cons = 0;
	u64 start;

	sender_off_card_halfway(_metadata, self, 14);
	ASSERT_TRUE(vnet_fw_route_del(&self->a->fw, 1, self->net.now));
	sim_net_run_for(&self->net, 10 * self->a->fw.quantum);
	EXPECT_EQ(0, self->a->ep[0].frame->cons[VNET_Q_REQ_SEND].val);
	EXPECT_EQ(NULL, sim_peek(self->a, 0, VNET_Q_REP_RECV));

	sim_load(self->a, 0);
	for (start = self->net.now; !cons; sim_net_step(&self->net, 1)) {
		ASSERT_GT(10 * self->a->fw.quantum, self->net.now - start);
		cons = self->a->ep[0].frame->cons[VNET_Q_REQ_SEND].val;
		if (cons)
			ASSERT_NE(NULL, sim_peek(self->a, 0, VNET_Q_REP_RECV));
	}
	EXPECT_EQ(1, cons);
	expect_returned(_metadata, self, VNET_RET_UNREACHABLE);
}

/*
 * The receiver's owner replaces its segment halfway with one the message
 * no longer fits: the train starts over and is refused "bad segment".
 */
TEST_F(train, receiver_segment_shrinks_halfway)
{
	send_xfer(_metadata, self, 12);
	until_frags(_metadata, self, 40);
	frag_give_seg(self->b, 1, LEN / 2);
	ASSERT_TRUE(frag_run_until(&self->net, returned, NULL, 1000000));
	expect_returned(_metadata, self, VNET_RET_BAD_SEGMENT);
	sim_net_run_for(&self->net, 1000);
	EXPECT_TRUE(frag_all_quiet(&self->net));
}

/* The sender's own segment shrinks halfway: back to it, "bad segment". */
TEST_F(train, sender_segment_shrinks_halfway)
{
	send_xfer(_metadata, self, 13);
	until_frags(_metadata, self, 40);
	frag_give_seg(self->a, 0, SRC + LEN / 2);
	ASSERT_TRUE(frag_run_until(&self->net, returned, NULL, 1000000));
	expect_returned(_metadata, self, VNET_RET_BAD_SEGMENT);
	sim_net_run_for(&self->net, self->b->fw.busy_timeout +
				    2 * self->b->fw.quantum);
	EXPECT_TRUE(frag_all_quiet(&self->net));
	EXPECT_EQ(0, self->b->ep[1].fw.stats.received);
}

/*
 * The receiver's owner replaces its segment halfway with one just as
 * large: what landed so far is in the old one, so the train starts over
 * and the whole message arrives in the new one -- never its second half
 * alone, published as the message.
 */
TEST_F(train, receiver_segment_replaced_same_size_halfway)
{
	send_xfer(_metadata, self, 21);
	until_frags(_metadata, self, 40);
	frag_give_seg(self->b, 1, VNET_XFER_MAX);
	ASSERT_TRUE(frag_run_until(&self->net, delivered, NULL, 1000000));
	EXPECT_EQ(1, self->b->fw.stats.trains_dropped);
	expect_whole(_metadata, self, 21);
}

/*
 * The sender's segment is replaced halfway by one as large, holding the
 * same bytes even: the rest would be read from other memory, so the
 * message goes back "bad segment" and nothing is delivered.
 */
TEST_F(train, sender_segment_replaced_same_size_halfway)
{
	send_xfer(_metadata, self, 22);
	until_frags(_metadata, self, 40);
	frag_give_seg(self->a, 0, 2 * VNET_XFER_MAX);
	frag_fill(self->a->ep[0].fw.seg + SRC, LEN, 22);
	ASSERT_TRUE(frag_run_until(&self->net, returned, NULL, 1000000));
	expect_returned(_metadata, self, VNET_RET_BAD_SEGMENT);
	sim_net_run_for(&self->net, self->b->fw.busy_timeout +
				    2 * self->b->fw.quantum);
	EXPECT_TRUE(frag_all_quiet(&self->net));
	EXPECT_EQ(0, self->b->ep[1].fw.stats.received);
}

TEST_HARNESS_MAIN
