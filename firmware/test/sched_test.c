// SPDX-License-Identifier: GPL-2.0
/*
 * The firmware's endpoint scheduler (sched.c): who gets the channels when
 * more endpoints have messages for a NIC than it has channels.  On a card
 * with many frames and few busy endpoints, or a few busy at one end of
 * them, every busy endpoint must go first in its turn.
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

TEST_HARNESS_MAIN
