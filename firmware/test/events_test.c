// SPDX-License-Identifier: GPL-2.0
/*
 * What the firmware reports to the host for its tracepoints
 * (vnet_fw_ops.event): refusals on both sides, retransmissions on the
 * timer and on a RESUME, messages returned -- each with the fields that
 * name what happened, and each exactly as often as the counters say.
 */
#include "kselftest_harness.h"
#include "wire_sim.h"

#define TAG	0x99ULL

FIXTURE(pair) {
	struct sim_net net;
	struct sim_nic *a, *b;
};

FIXTURE_SETUP(pair)
{
	sim_net_init(&self->net, 2, 2, 7);
	self->a = self->net.nic[0];
	self->b = self->net.nic[1];
	self->b->ep[1].fw.tag = TAG;
	sim_map(self->a, 0, 0, 1, 1, TAG);
}

FIXTURE_TEARDOWN(pair)
{
	sim_net_fini(&self->net);
}

/* A wrong tag: one RETURNED on the sender's NIC, naming both ends. */
TEST_F(pair, a_return_names_its_sender_destination_and_reason)
{
	struct vnet_desc d = sim_request(1);
	const struct vnet_fw_event *ev;

	sim_map(self->a, 0, 1, 1, 1, TAG + 1);
	d.slot = 1;
	ASSERT_EQ(0, sim_post(self->a, 0, VNET_Q_REQ_SEND, &d, NULL));
	sim_net_run_for(&self->net, 3000);
	ASSERT_NE(NULL, sim_peek(self->a, 0, VNET_Q_REP_RECV));

	EXPECT_EQ(1, self->a->events_of[VNET_FW_EV_RETURNED]);
	EXPECT_EQ(0, self->b->events_of[VNET_FW_EV_RETURNED]);
	ev = sim_event(self->a, VNET_FW_EV_RETURNED, 0);
	ASSERT_NE(NULL, ev);
	EXPECT_EQ(VNET_RET_BAD_TAG, ev->reason);
	EXPECT_EQ(0, ev->src.nic);
	EXPECT_EQ(0, ev->src.ep);
	EXPECT_EQ(1, ev->dst.nic);
	EXPECT_EQ(1, ev->dst.ep);
}

/*
 * The receiver off the card: the same refusal seen from both sides, with
 * the same channel and sequence number; its RESUME brings a retransmission
 * that says it came from the RESUME, and when that one is lost the
 * timer's that follows says it did not.
 */
TEST_F(pair, a_refusal_is_seen_on_both_sides_and_a_resume_retransmits)
{
	struct vnet_desc d = sim_request(2);
	const struct vnet_fw_event *tx, *rx, *re;
	u64 start;

	self->b->auto_fault = false;
	sim_unload(self->b, 1);
	sim_net_run_for(&self->net, 200);
	ASSERT_EQ(0, sim_post(self->a, 0, VNET_Q_REQ_SEND, &d, NULL));
	while (!self->a->events_of[VNET_FW_EV_NACK_RX]) {
		ASSERT_GT(10 * self->a->fw.quantum, self->net.now);
		sim_net_step(&self->net, 20);
	}
	tx = sim_event(self->b, VNET_FW_EV_NACK_TX, 0);
	rx = sim_event(self->a, VNET_FW_EV_NACK_RX, 0);
	ASSERT_NE(NULL, tx);
	ASSERT_NE(NULL, rx);
	EXPECT_EQ(VNET_NACK_NOT_RESIDENT, tx->reason);
	EXPECT_EQ(VNET_NACK_NOT_RESIDENT, rx->reason);
	EXPECT_EQ(0, tx->peer);
	EXPECT_EQ(1, rx->peer);
	EXPECT_EQ(tx->channel, rx->channel);
	EXPECT_EQ(tx->seq, rx->seq);

	sim_load(self->b, 1);
	start = self->net.now;
	while (!self->a->events_of[VNET_FW_EV_RETRANSMIT]) {
		ASSERT_GT(self->a->fw.quantum, self->net.now - start);
		sim_net_step(&self->net, 1);
	}
	re = sim_event(self->a, VNET_FW_EV_RETRANSMIT, 0);
	ASSERT_NE(NULL, re);
	EXPECT_TRUE(re->resumed);
	EXPECT_EQ(1, re->peer);
	EXPECT_EQ(rx->channel, re->channel);
	EXPECT_EQ(rx->seq, re->seq);

	/* That retransmission is lost: the timer's next one is its own. */
	self->net.qlen = 0;
	while (!sim_peek(self->b, 1, VNET_Q_REQ_RECV)) {
		ASSERT_GT(20 * self->a->fw.quantum, self->net.now - start);
		sim_net_step(&self->net, 20);
	}
	EXPECT_EQ(2, self->a->events_of[VNET_FW_EV_RETRANSMIT]);
	re = sim_event(self->a, VNET_FW_EV_RETRANSMIT, 1);
	ASSERT_NE(NULL, re);
	EXPECT_FALSE(re->resumed);
	EXPECT_EQ(1, re->retries);
	EXPECT_EQ(rx->seq, re->seq);
}

static u64 sum(const u64 *v, unsigned int n)
{
	u64 t = 0;

	while (n--)
		t += v[n];
	return t;
}

/*
 * Requests through 30% loss to a receiver that drains slowly: every
 * retransmission, every NACK sent and every return is reported once, with
 * the peer it concerns.
 */
TEST_F(pair, every_event_is_reported_as_often_as_counted)
{
	const u32 n = 300;
	u32 posted = 0, step = 0, i, nth;
	u64 received = 0;
	struct sim_nic *nic;
	const struct vnet_fw_event *ev;

	self->net.loss = 300;
	self->a->fw.max_retries = 255;
	while (received < n) {
		ASSERT_GT(2000000, ++step);
		while (posted < n) {
			struct vnet_desc d = sim_request(posted);

			if (sim_post(self->a, 0, VNET_Q_REQ_SEND, &d, NULL))
				break;
			posted++;
		}
		/* Now and then the queue fills: QUEUE_FULL NACKs. */
		if (step % 500 == 0) {
			while (sim_peek(self->b, 1, VNET_Q_REQ_RECV)) {
				sim_consume(self->b, 1, VNET_Q_REQ_RECV);
				received++;
			}
		}
		sim_net_step(&self->net, 20);
	}
	sim_net_run_for(&self->net, 20 * self->a->fw.quantum);

	for (i = 0; i < 2; i++) {
		nic = self->net.nic[i];
		EXPECT_EQ(nic->fw.stats.retransmits,
			  nic->events_of[VNET_FW_EV_RETRANSMIT]);
		EXPECT_EQ(sum(nic->fw.stats.tx_nack, VNET_NACK_NR),
			  nic->events_of[VNET_FW_EV_NACK_TX]);
		EXPECT_GE(sum(nic->fw.stats.rx_nack, VNET_NACK_NR),
			  nic->events_of[VNET_FW_EV_NACK_RX]);
		EXPECT_EQ(nic->ep[0].fw.stats.returned +
			  nic->ep[1].fw.stats.returned,
			  nic->events_of[VNET_FW_EV_RETURNED]);
	}
	EXPECT_LT(0, self->a->events_of[VNET_FW_EV_RETRANSMIT]);
	EXPECT_LT(0, self->b->events_of[VNET_FW_EV_NACK_TX]);
	EXPECT_LT(0, self->a->events_of[VNET_FW_EV_NACK_RX]);
	EXPECT_EQ(0, self->a->events_of[VNET_FW_EV_RETURNED]);
	for (nth = 0; (ev = sim_event(self->a, VNET_FW_EV_RETRANSMIT, nth));
	     nth++)
		EXPECT_EQ(1, ev->peer);
	for (nth = 0; (ev = sim_event(self->b, VNET_FW_EV_NACK_TX, nth));
	     nth++) {
		EXPECT_EQ(0, ev->peer);
		EXPECT_GT(VNET_NACK_NR, ev->reason);
	}
	TH_LOG("a: %u retransmissions, %u NACKs received; b: %u NACKs sent",
	       self->a->events_of[VNET_FW_EV_RETRANSMIT],
	       self->a->events_of[VNET_FW_EV_NACK_RX],
	       self->b->events_of[VNET_FW_EV_NACK_TX]);
}

/*
 * A reply whose requester is gone -- another endpoint at its index now,
 * with a reply key of its own, or none -- is not delivered there, nor
 * dropped: it comes back to its replier, with the reason.
 */
TEST_F(pair, a_reply_to_a_requester_gone_comes_back)
{
	static const u8 reasons[] = { VNET_RET_BAD_TAG, VNET_RET_NO_ENDPOINT };
	struct vnet_desc d = sim_request(1), r = { .handler = 2 };
	const struct vnet_desc *got;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(reasons); i++) {
		ASSERT_EQ(0, sim_post(self->a, 0, VNET_Q_REQ_SEND, &d, NULL));
		sim_net_run_for(&self->net, 1000);
		got = sim_peek(self->b, 1, VNET_Q_REQ_RECV);
		ASSERT_NE(NULL, got);
		r.token = got->token;
		sim_consume(self->b, 1, VNET_Q_REQ_RECV);

		if (reasons[i] == VNET_RET_BAD_TAG)
			self->a->ep[0].fw.reply_key ^= 1;
		else
			self->a->ep[0].exists = false;
		ASSERT_EQ(0, sim_post(self->b, 1, VNET_Q_REP_SEND, &r, NULL));
		sim_net_run_for(&self->net, 3000);

		EXPECT_EQ(NULL, sim_peek(self->a, 0, VNET_Q_REP_RECV));
		got = sim_peek(self->b, 1, VNET_Q_REP_RECV);
		ASSERT_NE(NULL, got);
		EXPECT_TRUE(got->flags & VNET_DESC_RETURNED);
		EXPECT_TRUE(got->flags & VNET_DESC_REPLY);
		EXPECT_EQ(reasons[i], got->status);
		sim_consume(self->b, 1, VNET_Q_REP_RECV);
		EXPECT_EQ(i + 1, self->b->events_of[VNET_FW_EV_RETURNED]);
	}
}

TEST_HARNESS_MAIN
