// SPDX-License-Identifier: GPL-2.0
/*
 * The firmware's endpoint scheduler (sched.c): who gets the channels when
 * more endpoints have messages for a NIC than it has channels.  On a card
 * with many frames and few busy endpoints, or a few busy at one end of
 * them, every busy endpoint must go first in its turn, whether they are
 * busy all the time or in bursts with rounds of nothing in between.
 */
#include <stdlib.h>

#include "kselftest_harness.h"
#include "wire_sim.h"

#define TAG		0x5cULL
#define SENDERS		4
#define SPAN_US		(200 * 1000)

/*
 * Endpoints @first .. @first + SENDERS - 1 of NIC 0 (SIM_MAX_EPS frames)
 * each keep their request queue full for a server of their own on NIC 1,
 * which answers every request; the rest of NIC 0's frames are idle.
 * Returns each sender's round trips in *@done.
 */
static void run_senders(struct __test_metadata *_metadata, u32 first,
			u32 *done)
{
	struct sim_net net;
	struct sim_nic *a, *b;
	u64 start;
	u32 i;

	sim_net_init(&net, 2, SIM_MAX_EPS, 7);
	a = net.nic[0];
	b = net.nic[1];
	for (i = 0; i < SENDERS; i++) {
		b->ep[i].fw.tag = TAG;
		sim_map(a, first + i, 0, 1, i, TAG);
		done[i] = 0;
	}
	for (start = net.now; net.now - start < SPAN_US;) {
		for (i = 0; i < SENDERS; i++) {
			const struct vnet_desc *d;
			struct vnet_desc q = sim_request(i);

			while ((d = sim_peek(b, i, VNET_Q_REQ_RECV))) {
				struct vnet_desc r = {
					.handler = 2, .token = d->token,
				};

				if (sim_post(b, i, VNET_Q_REP_SEND, &r, NULL))
					break;
				sim_consume(b, i, VNET_Q_REQ_RECV);
			}
			while ((d = sim_peek(a, first + i, VNET_Q_REP_RECV))) {
				ASSERT_EQ(0, d->flags & VNET_DESC_RETURNED);
				done[i]++;
				sim_consume(a, first + i, VNET_Q_REP_RECV);
			}
			while (!sim_post(a, first + i, VNET_Q_REQ_SEND, &q, NULL))
				;
		}
		sim_net_step(&net, 20);
	}
	sim_net_fini(&net);
}

static void expect_even(struct __test_metadata *_metadata, const u32 *done)
{
	u32 i, lo = done[0], hi = done[0];

	for (i = 0; i < SENDERS; i++) {
		TH_LOG("sender %u: %u round trips", i, done[i]);
		lo = done[i] < lo ? done[i] : lo;
		hi = done[i] > hi ? done[i] : hi;
	}
	EXPECT_LT(100, lo);
	/* Within a fifth of each other. */
	EXPECT_GE(lo * 5, hi * 4);
}

/*
 * Four busy endpoints in the first of 64 frames, with more messages for
 * NIC 1 than it has channels: a round that starts one frame further on
 * each time starts in the idle frames in 60 rounds of 64 and reaches the
 * busy ones in the same order, so the first two always took every
 * channel they may and the last two hardly got one.
 */
TEST(busy_endpoints_in_the_first_frames_share_the_channels)
{
	u32 done[SENDERS];

	run_senders(_metadata, 0, done);
	expect_even(_metadata, done);
}

/* The same, the busy endpoints in the last frames of the card. */
TEST(busy_endpoints_in_the_last_frames_share_the_channels)
{
	u32 done[SENDERS];

	run_senders(_metadata, SIM_MAX_EPS - SENDERS, done);
	expect_even(_metadata, done);
}

#define BURSTS		200

/*
 * Traffic in bursts: each of four endpoints in the first of 64 frames
 * posts one request, the four go out in one round, and the firmware then
 * polls with nothing to send until the replies are back.  The request on
 * the first channel is from the endpoint that went first.  Every one of
 * them must go first in its turn: the rounds with nothing to send in
 * between must not move the turn on, frame by frame, into the idle frames
 * and round to frame 0 again.
 */
#define STUCK		(SENDERS + 1)	/* NIC 1's endpoint that never drains */

/*
 * Endpoints 0 .. @decoys - 1 of NIC 0 each have a request for NIC 1's
 * endpoint STUCK, whose request queue is full, refused on a channel, and
 * one more held behind it in their queues: they have messages to send in
 * every round and send none.  They hold @decoys channels, fewer than the
 * share that would keep the others' messages back.
 */
static void hold_decoys(struct __test_metadata *_metadata,
			struct sim_net *net, u32 decoys)
{
	struct sim_nic *a = net->nic[0], *b = net->nic[1];
	u32 i, k;

	b->ep[STUCK].fw.tag = TAG;
	for (i = 0; i < decoys; i++)
		sim_map(a, i, 0, 1, STUCK, TAG);
	/* Fill it: the request it refuses keeps a channel of decoy 0's. */
	for (k = 0; decoys && !a->fw.stats.rx_nack[VNET_NACK_QUEUE_FULL];
	     k++) {
		struct vnet_desc q = sim_request(SENDERS);

		ASSERT_GT(2 * VNET_QUEUE_DEPTH, k);
		ASSERT_EQ(0, sim_post(a, 0, VNET_Q_REQ_SEND, &q, NULL));
		sim_net_run_for(net, 200);
	}
	for (i = 0; i < decoys; i++) {
		struct vnet_desc q = sim_request(SENDERS);

		ASSERT_EQ(0, sim_post(a, i, VNET_Q_REQ_SEND, &q, NULL));
		if (i)
			ASSERT_EQ(0, sim_post(a, i, VNET_Q_REQ_SEND, &q, NULL));
	}
	sim_net_run_for(net, 1000);
	if (decoys)
		ASSERT_LT(0, a->fw.stats.rx_nack[VNET_NACK_QUEUE_FULL]);
}

/* The sender of the request that took channel 0 of peer @p. */
static u32 first_sender(struct __test_metadata *_metadata,
			const struct vnet_fw_peer *p)
{
	u32 c;

	for (c = 0; c < SIM_CHANNELS; c++)
		if (p->tx[c].state == VNET_CHAN_INFLIGHT &&
		    p->tx[c].msg.args[0] < SENDERS)
			return p->tx[c].msg.args[0];
	TH_LOG("no sender's request on the wire");
	EXPECT_TRUE(false);
	return 0;
}

static void run_bursts(struct __test_metadata *_metadata, u32 decoys)
{
	u32 firsts[SENDERS] = { 0 }, n, i;
	struct vnet_fw_peer *p;
	struct sim_net net;
	struct sim_nic *a, *b;

	sim_net_init(&net, 2, SIM_MAX_EPS, 9);
	a = net.nic[0];
	b = net.nic[1];
	p = &a->fw.peers[a->fw.peer_of[1]];
	for (i = 0; i < SENDERS; i++) {
		b->ep[i].fw.tag = TAG;
		sim_map(a, decoys + i, 0, 1, i, TAG);
	}
	hold_decoys(_metadata, &net, decoys);
	for (n = 0; n < BURSTS; n++) {
		const struct vnet_desc *d;
		u32 replies = 0;
		u64 start;

		for (i = 0; i < SENDERS; i++) {
			struct vnet_desc q = sim_request(i);

			ASSERT_EQ(0, sim_post(a, decoys + i, VNET_Q_REQ_SEND,
					      &q, NULL));
		}
		vnet_fw_poll(&a->fw, net.now);
		firsts[first_sender(_metadata, p)]++;
		for (start = net.now; replies < SENDERS &&
		     net.now - start < 10 * a->fw.quantum;) {
			sim_net_step(&net, 20);
			for (i = 0; i < SENDERS; i++) {
				while ((d = sim_peek(b, i, VNET_Q_REQ_RECV))) {
					struct vnet_desc r = {
						.handler = 2, .token = d->token,
					};

					ASSERT_EQ(0, sim_post(b, i, VNET_Q_REP_SEND,
							      &r, NULL));
					sim_consume(b, i, VNET_Q_REQ_RECV);
				}
				while ((d = sim_peek(a, decoys + i,
						     VNET_Q_REP_RECV))) {
					replies++;
					sim_consume(a, decoys + i,
						    VNET_Q_REP_RECV);
				}
			}
		}
		ASSERT_EQ(SENDERS, replies);
	}
	sim_net_fini(&net);
	for (i = 0; i < SENDERS; i++) {
		TH_LOG("sender %u went first in %u of %u bursts", i, firsts[i],
		       BURSTS);
		EXPECT_LE(BURSTS / SENDERS - 2, firsts[i]);
	}
}

TEST(every_endpoint_goes_first_in_turn_between_bursts)
{
	run_bursts(_metadata, 0);
}

/*
 * The same, behind two endpoints in the first frames whose messages are
 * held every round (their receiver's queue is full and never drains):
 * they go first in no turn, and win none for the endpoint behind them.
 */
TEST(held_endpoints_win_no_turns)
{
	run_bursts(_metadata, 2);
}

TEST_HARNESS_MAIN
