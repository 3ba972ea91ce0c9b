// SPDX-License-Identifier: GPL-2.0
/*
 * Trains beside everything else: however many endpoints send a megabyte
 * at once, a message of one packet to the same NIC finds a channel at
 * once, rather than after the end of a train; trains paused while their
 * senders move still count for their destination's share; trains to a
 * queue that refuses them start one at a time, and leave the others to a
 * reply.  And a megabyte that moves within one NIC is one endpoint's
 * whole turn.
 */
#include "kselftest_harness.h"
#include "frag_util.h"

#define TAG		0x5dULL
#define LEN		(256u << 10)
#define SENDERS		8		/* a's endpoints 0-7 send trains */
#define DESTS		4		/* to b's endpoints 0-3 */
#define SMALL		SENDERS		/* a's endpoint 8 sends one packet */

FIXTURE(crowd) {
	struct sim_net net;
	struct sim_nic *a, *b;
};

FIXTURE_SETUP(crowd)
{
	u32 i;

	sim_net_init(&self->net, 2, SENDERS + 1, 31);
	self->a = self->net.nic[0];
	self->b = self->net.nic[1];
	self->a->fw.mtu = 1500;
	self->b->fw.mtu = 1500;
	for (i = 0; i <= SENDERS; i++) {
		u32 to = i == SMALL ? SMALL : i % DESTS;

		self->b->ep[to].fw.tag = TAG;
		sim_map(self->a, i, 0, 1, to, TAG);
	}
	for (i = 0; i < SENDERS; i++)
		frag_give_seg(self->a, i, LEN);
	for (i = 0; i < DESTS; i++)
		frag_give_seg(self->b, i, SENDERS / DESTS * LEN);
}

FIXTURE_TEARDOWN(crowd)
{
	frag_free_segs(&self->net);
	sim_net_fini(&self->net);
}

/*
 * Eight endpoints each send a train to one of four endpoints over there,
 * as many trains as there are channels, none past its sender's or its
 * destination's share; then a ninth sends one packet.  The trains take
 * half the channels, and the packet is delivered in a round trip or two,
 * long before the first train ends; the other trains follow.
 */
TEST_F(crowd, trains_leave_half_the_channels_to_single_packets)
{
	struct sim_nic *a = self->a, *b = self->b;
	struct vnet_desc d = sim_request(77);
	u64 start;
	u32 i, got;

	for (i = 0; i < SENDERS; i++) {
		struct vnet_desc t = frag_xfer_seg(LEN, 0, i / DESTS * LEN);

		t.args[0] = i;
		frag_fill(a->ep[i].fw.seg, LEN, i);
		ASSERT_EQ(0, sim_post(a, i, VNET_Q_REQ_SEND, &t, NULL));
	}
	sim_net_run_for(&self->net, 100);
	EXPECT_EQ(a->fw.nchannels / 2, a->fw.stats.tx_trains);

	start = self->net.now;
	ASSERT_EQ(0, sim_post(a, SMALL, VNET_Q_REQ_SEND, &d, NULL));
	while (!sim_peek(b, SMALL, VNET_Q_REQ_RECV)) {
		ASSERT_GT(1000000, self->net.now - start);
		sim_net_step(&self->net, 20);
	}
	EXPECT_GE(4 * self->net.delay + 100, self->net.now - start);
	EXPECT_EQ(0, b->fw.stats.rx_trains);

	for (got = 0, start = self->net.now; got < SENDERS;) {
		const struct vnet_desc *r;

		ASSERT_GT(10000000, self->net.now - start);
		sim_net_step(&self->net, 20);
		for (i = 0; i < DESTS; i++) {
			while ((r = sim_peek(b, i, VNET_Q_REQ_RECV))) {
				EXPECT_EQ(i, r->args[0] % DESTS);
				EXPECT_TRUE(frag_same(b->ep[i].fw.seg + r->offset,
						      LEN, r->args[0]));
				sim_consume(b, i, VNET_Q_REQ_RECV);
				got++;
			}
		}
	}
	sim_net_run_for(&self->net, 1000);
	EXPECT_TRUE(frag_all_quiet(&self->net));
}

/* Channels to b busy with messages for its endpoint @ep. */
static u32 to_ep(struct sim_nic *a, u32 ep)
{
	struct vnet_fw_peer *p = &a->fw.peers[a->fw.peer_of[1]];
	u32 c, n = 0;

	for (c = 0; c < a->fw.nchannels; c++)
		n += p->tx[c].state != VNET_CHAN_FREE &&
		     p->tx[c].msg.peer.ep == ep;
	return n;
}

/*
 * Trains paused between two fragments while their senders move are on
 * their way to their destination all the same: with half the channels
 * paused on trains to one endpoint, another sender's messages to it wait
 * rather than take the other half; they go once the trains are through.
 */
TEST_F(crowd, paused_trains_count_for_their_destination)
{
	struct sim_nic *a = self->a, *b = self->b;
	u32 i, n = a->fw.nchannels / 2;
	u64 start;

	frag_give_seg(b, 0, n * LEN);
	for (i = 0; i < n; i++) {
		struct vnet_desc t = frag_xfer_seg(LEN, 0, i * LEN);

		sim_map(a, i, 0, 1, 0, TAG);
		frag_fill(a->ep[i].fw.seg, LEN, i);
		ASSERT_EQ(0, sim_post(a, i, VNET_Q_REQ_SEND, &t, NULL));
	}
	sim_net_run_for(&self->net, 100);
	for (i = 0; i < n; i++)
		a->ep[i].fw.moving = true;
	for (start = self->net.now; a->fw.paused < n;) {
		ASSERT_GT(100000, self->net.now - start);
		sim_net_step(&self->net, 20);
	}

	sim_map(a, SMALL, 0, 1, 0, TAG);
	for (i = 0; i < n; i++) {
		struct vnet_desc d = sim_request(100 + i);

		ASSERT_EQ(0, sim_post(a, SMALL, VNET_Q_REQ_SEND, &d, NULL));
	}
	sim_net_run_for(&self->net, 4 * self->net.delay + 100);
	EXPECT_EQ(n, to_ep(a, 0));
	EXPECT_EQ(0, b->ep[0].fw.stats.received);

	for (i = 0; i < n; i++)
		a->ep[i].fw.moving = false;
	for (start = self->net.now; b->ep[0].fw.stats.received < 2 * n;) {
		ASSERT_GT(10000000, self->net.now - start);
		sim_net_step(&self->net, 20);
	}
	for (i = 0; i < n; i++)
		EXPECT_TRUE(frag_same(b->ep[0].fw.seg + i * LEN, LEN, i));
	for (i = 0; i < 2 * n; i++)
		sim_consume(b, 0, VNET_Q_REQ_RECV);
	sim_net_run_for(&self->net, 1000);
	EXPECT_TRUE(frag_all_quiet(&self->net));
}

/*
 * b's endpoint 1 has a full request queue: its owner is busy in a
 * handler.  Four of a's endpoints send it 8 KiB requests at once, trains
 * all: only one starts, the others wait for its first fragment to be
 * taken, which it is not.  So when a's endpoint 0 answers b's endpoint 2
 * with 8 KiB, its train finds a channel and the reply arrives in a few
 * round trips -- not after busy_timeout, when the refused trains would
 * come back and free the channels trains may use.
 */
TEST(trains_to_a_full_queue_leave_channels_to_a_reply_train)
{
	struct sim_net net;
	struct sim_nic *a, *b;
	struct vnet_desc d;
	const struct vnet_desc *got;
	u8 buf[VNET_MEDIUM_MAX];
	u64 start;
	u32 i, n;

	sim_net_init(&net, 2, 8, 5);
	a = net.nic[0];
	b = net.nic[1];
	a->fw.mtu = 1500;
	b->fw.mtu = 1500;
	b->ep[1].fw.tag = TAG;
	a->ep[0].fw.tag = TAG;
	for (i = 2; i <= 7; i++)
		sim_map(a, i, 0, 1, 1, TAG);
	sim_map(b, 2, 0, 0, 0, TAG);
	for (n = 0; n < VNET_QUEUE_DEPTH; n++) {
		d = sim_request(n);
		ASSERT_EQ(0, sim_post(a, 6 + n % 2, VNET_Q_REQ_SEND, &d, NULL));
		sim_net_run_for(&net, 300);
	}
	sim_net_run_for(&net, 3000);
	ASSERT_EQ(VNET_QUEUE_DEPTH, b->ep[1].fw.stats.received);

	d = sim_request(99);
	ASSERT_EQ(0, sim_post(b, 2, VNET_Q_REQ_SEND, &d, NULL));
	sim_net_run_for(&net, 1000);
	got = sim_peek(a, 0, VNET_Q_REQ_RECV);
	ASSERT_NE(NULL, got);

	frag_fill(buf, sizeof(buf), 1);
	for (i = 2; i <= 5; i++) {
		d = sim_request(i);
		d.flags = VNET_DESC_MEDIUM;
		d.len = sizeof(buf);
		ASSERT_EQ(0, sim_post(a, i, VNET_Q_REQ_SEND, &d, buf));
	}
	sim_net_run_for(&net, 500);
	EXPECT_EQ(1, a->fw.stats.tx_trains);

	d = sim_request(7);
	d.flags = VNET_DESC_MEDIUM;
	d.len = sizeof(buf);
	d.token = got->token;
	sim_consume(a, 0, VNET_Q_REQ_RECV);
	ASSERT_EQ(0, sim_post(a, 0, VNET_Q_REP_SEND, &d, buf));
	for (start = net.now; !sim_peek(b, 2, VNET_Q_REP_RECV);) {
		ASSERT_GT(20 * a->fw.quantum, net.now - start);
		sim_net_step(&net, 20);
	}
	EXPECT_TRUE(frag_same(sim_payload(b, 2, VNET_Q_REP_RECV),
			      sizeof(buf), 1));
	EXPECT_EQ(2, a->fw.stats.tx_trains);
	sim_net_fini(&net);
}

/*
 * An endpoint with four megabyte XFERs posted to another endpoint of its
 * own NIC copies one of them a turn, not its whole burst: the host holds
 * its firmware lock through a turn and may let go of it only between two
 * (ops->pause).  Messages of one packet still move a burst a turn.
 */
TEST_F(crowd, a_turn_copies_a_megabyte_at_most)
{
	struct sim_nic *a = self->a;
	struct vnet_fw_round r;
	u32 i, n = 4;

	frag_give_seg(a, 0, VNET_XFER_MAX);
	frag_give_seg(a, 1, VNET_XFER_MAX);
	a->ep[1].fw.tag = TAG;
	sim_map(a, 0, 0, 0, 1, TAG);
	for (i = 0; i < n; i++) {
		struct vnet_desc d = frag_xfer_seg(VNET_XFER_MAX, 0, 0);

		ASSERT_EQ(0, sim_post(a, 0, VNET_Q_REQ_SEND, &d, NULL));
	}
	for (i = 1; i <= n; i++) {
		r = vnet_fw_poll(&a->fw, self->net.now);
		EXPECT_EQ(1, r.messages);
		EXPECT_EQ(i, a->ep[1].fw.stats.received);
	}

	for (i = 0; i < n; i++) {
		struct vnet_desc d = sim_request(i);

		ASSERT_EQ(0, sim_post(a, 0, VNET_Q_REQ_SEND, &d, NULL));
	}
	r = vnet_fw_poll(&a->fw, self->net.now);
	EXPECT_EQ(n, r.messages);
	EXPECT_EQ(2 * n, a->ep[1].fw.stats.received);
}

#define WIDE_LEN	(64u << 10)

/*
 * NIC 0 with every channel number, NIC 1 with SIM_CHANNELS; a's endpoints
 * 0 to SENDERS - 1 each send a train of WIDE_LEN to b's endpoint i %
 * @dests.  Returns the most trains b held at once until all had arrived,
 * each checked whole, or 0 when they took too long.
 */
static u32 wide_trains(struct __test_metadata *_metadata, u32 dests,
		       u32 *nacked_full)
{
	static const u32 channels[2] = { VNET_WIRE_CHANNELS, SIM_CHANNELS };
	struct sim_net net;
	struct sim_nic *a, *b;
	const struct vnet_desc *r;
	u32 i, got = 0, most = 0;
	u64 start;

	sim_net_init_channels(&net, 2, SENDERS, 9, channels);
	a = net.nic[0];
	b = net.nic[1];
	a->fw.mtu = 1500;
	b->fw.mtu = 1500;
	for (i = 0; i < dests; i++) {
		b->ep[i].fw.tag = TAG;
		frag_give_seg(b, i, SENDERS * WIDE_LEN);
	}
	for (i = 0; i < SENDERS; i++) {
		struct vnet_desc t = frag_xfer_seg(WIDE_LEN, 0, i * WIDE_LEN);

		t.args[0] = i;
		frag_give_seg(a, i, WIDE_LEN);
		frag_fill(a->ep[i].fw.seg, WIDE_LEN, i);
		sim_map(a, i, 0, 1, i % dests, TAG);
		EXPECT_EQ(0, sim_post(a, i, VNET_Q_REQ_SEND, &t, NULL));
	}
	for (start = net.now; got < SENDERS;) {
		if (net.now - start >= 100 * a->fw.quantum) {
			most = 0;
			break;
		}
		sim_net_step(&net, 20);
		if (b->fw.trains_busy > most)
			most = b->fw.trains_busy;
		for (i = 0; i < dests; i++) {
			while ((r = sim_peek(b, i, VNET_Q_REQ_RECV))) {
				EXPECT_TRUE(frag_same(b->ep[i].fw.seg +
						      r->offset, WIDE_LEN,
						      r->args[0]));
				sim_consume(b, i, VNET_Q_REQ_RECV);
				got++;
			}
		}
	}
	*nacked_full = b->fw.stats.tx_nack[VNET_NACK_QUEUE_FULL];
	EXPECT_EQ(SENDERS, a->fw.stats.tx_trains);
	sim_net_run_for(&net, 1000);
	EXPECT_TRUE(frag_all_quiet(&net));
	frag_free_segs(&net);
	sim_net_fini(&net);
	return most;
}

/*
 * With more channels than a receiver takes trains from one peer to one
 * queue (VNET_FW_PEER_RESERVE), eight endpoints that each send a train to
 * the same endpoint start no more than that many at a time: the others
 * wait in their senders' queues, none is refused "queue full", and all
 * arrive whole.
 */
TEST(trains_to_one_queue_stay_within_what_it_takes)
{
	u32 nacked;

	EXPECT_EQ(VNET_FW_PEER_RESERVE, wide_trains(_metadata, 1, &nacked));
	EXPECT_EQ(0, nacked);
}

/*
 * However many channels it has, a NIC starts no more trains to one peer
 * than half the slots a receiver gives a peer: eight endpoints that each
 * send a train to one of four endpoints over there start
 * VNET_FW_PEER_TRAINS / 2 at once, and all arrive whole, none refused.
 */
TEST(trains_to_one_peer_stay_within_half_its_slots)
{
	u32 nacked;

	EXPECT_EQ(VNET_FW_PEER_TRAINS / 2,
		  wide_trains(_metadata, DESTS, &nacked));
	EXPECT_EQ(0, nacked);
}

TEST_HARNESS_MAIN
