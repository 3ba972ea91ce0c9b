// SPDX-License-Identifier: GPL-2.0
/*
 * What a sender takes for an answer from its receiver, and what for
 * silence: late and duplicate ACKs, NACKs of superseded transmissions,
 * round trips longer than the quantum, a NACK before a long move, stalls
 * of the sender's own thread, RESUMEs -- and the flush rule that rests on
 * them.
 */
#include <stdlib.h>

#include "kselftest_harness.h"
#include "wire_sim.h"

#define TAG	0x77ULL

FIXTURE(pair) {
	struct sim_net net;
};

FIXTURE_SETUP(pair)
{
	sim_net_init_pair(&self->net, TAG);
}

FIXTURE_TEARDOWN(pair)
{
	sim_net_fini(&self->net);
}

/*
 * Every packet from now on copied to the tap; b's request queue filled
 * by a, and one request more, which b NACKs "queue full".
 */
static void tap_and_overfill(struct __test_metadata *_metadata,
			     struct sim_net *net)
{
	u32 i;

	net->tapcap = 64;
	net->tap = malloc(64 * sizeof(*net->tap));
	for (i = 0; i <= VNET_QUEUE_DEPTH; i++) {
		struct vnet_desc d = sim_request(i);

		ASSERT_EQ(0, sim_post(net->nic[0], 0, VNET_Q_REQ_SEND, &d,
				      NULL));
		sim_net_run_for(net, 300);
	}
}

/*
 * The flush rule.  a's message sits NACKed at a full receiver; a starts to
 * move: its unresolved count reaches zero with the latest NACK, and the
 * NACKed message is not retransmitted while it moves.  Then every packet
 * the wire ever carried is replayed, late and duplicated: no channel state
 * changes and a's frame is not touched.  After a comes back, the message
 * is delivered once and the channel is reused for new messages.
 */
TEST_F(pair, flush_rule_with_late_and_duplicate_acks)
{
	struct sim_nic *a = self->net.nic[0], *b = self->net.nic[1];
	struct vnet_fw_send_chan saved[SIM_CHANNELS];
	struct vnet_fw_peer *p = &a->fw.peers[a->fw.peer_of[1]];
	u8 *frame_copy;
	u32 i, got = 0;
	u64 retrans;

	tap_and_overfill(_metadata, &self->net);
	sim_net_run_for(&self->net, 3000);
	EXPECT_EQ(1, p->unacked);
	EXPECT_LT(0, b->fw.stats.tx_nack[VNET_NACK_QUEUE_FULL]);

	a->ep[0].fw.moving = true;
	sim_net_run_for(&self->net, 5 * a->fw.quantum);
	ASSERT_EQ(0, a->ep[0].fw.unresolved);
	EXPECT_LT(0, a->flushed[0]);
	retrans = a->fw.stats.retransmits;
	sim_net_run_for(&self->net, 5 * a->fw.quantum);
	EXPECT_EQ(retrans, a->fw.stats.retransmits);

	/* a leaves its frame. */
	sim_unload(a, 0);
	frame_copy = malloc(VNET_FRAME_SIZE);
	memcpy(frame_copy, a->ep[0].frame, VNET_FRAME_SIZE);
	memcpy(saved, p->tx, sizeof(saved));

	for (i = 0; i < self->net.taplen; i++)
		sim_net_inject_from(&self->net,
				    self->net.tap[i].to == 0 ? 0 : 1,
				    self->net.tap[i].from,
				    self->net.tap[i].data,
				    self->net.tap[i].len);
	/*
	 * b's side answers replays of old DATA with duplicate ACKs: feed
	 * whatever it sent back to a as well.
	 */
	sim_net_run_for(&self->net, 200);
	EXPECT_EQ(0, memcmp(frame_copy, a->ep[0].frame, VNET_FRAME_SIZE));
	for (i = 0; i < SIM_CHANNELS; i++) {
		EXPECT_EQ(saved[i].state, p->tx[i].state);
		EXPECT_EQ(saved[i].seq, p->tx[i].seq);
	}
	EXPECT_LT(0, a->fw.stats.stale_acks);
	EXPECT_EQ(VNET_QUEUE_DEPTH, b->ep[1].fw.stats.received);

	/* a comes back; b drains; everything arrives once. */
	a->ep[0].fw.moving = false;
	sim_load(a, 0);
	while (got < VNET_QUEUE_DEPTH + 1 + 8) {
		const struct vnet_desc *d;

		if (got == VNET_QUEUE_DEPTH + 1)
			for (i = 0; i < 8; i++) {
				struct vnet_desc n = sim_request(1000 + i);

				ASSERT_EQ(0, sim_post(a, 0, VNET_Q_REQ_SEND,
						      &n, NULL));
			}
		sim_net_run_for(&self->net, 2000);
		while ((d = sim_peek(b, 1, VNET_Q_REQ_RECV))) {
			got++;
			sim_consume(b, 1, VNET_Q_REQ_RECV);
		}
		ASSERT_GT(1000000, self->net.now);
	}
	sim_net_run_for(&self->net, 5000);
	EXPECT_EQ(VNET_QUEUE_DEPTH + 1 + 8, b->ep[1].fw.stats.received);
	EXPECT_EQ(0, p->unacked);
	free(frame_copy);
}

/*
 * A round trip longer than the retransmission quantum (four quanta, within
 * the longest wait, five here): every NACK would answer a transmission
 * already superseded, unless the sender waits for the latest one.  The
 * flush must still complete, and not by returning the messages.
 */
TEST_F(pair, flush_completes_when_rtt_exceeds_quantum)
{
	struct sim_nic *a = self->net.nic[0];
	u64 start;
	u32 i;

	self->net.delay = 2 * a->fw.quantum;
	for (i = 0; i <= VNET_QUEUE_DEPTH + 2; i++) {
		struct vnet_desc d = sim_request(i);

		ASSERT_EQ(0, sim_post(a, 0, VNET_Q_REQ_SEND, &d, NULL));
		sim_net_run_for(&self->net, 100);
	}
	sim_net_run_for(&self->net, 50 * a->fw.quantum);
	ASSERT_LT(0, self->net.nic[1]->fw.stats.tx_nack[VNET_NACK_QUEUE_FULL]);

	a->ep[0].fw.moving = true;
	start = self->net.now;
	while (a->ep[0].fw.unresolved && self->net.now - start < 100 * a->fw.quantum)
		sim_net_step(&self->net, 20);
	EXPECT_EQ(0, a->ep[0].fw.unresolved);
	EXPECT_EQ(0, a->fw.stats.returned[VNET_RET_UNREACHABLE]);
	TH_LOG("flushed in %llu time units, round trip %llu, quantum %llu",
	       (unsigned long long)(self->net.now - start),
	       (unsigned long long)(2 * self->net.delay),
	       (unsigned long long)a->fw.quantum);
}

/*
 * A receiver that answers every transmission, a round trip later than the
 * quantum: its NACKs of the older ones must not leave the messages without
 * an answer until they come back "unreachable".  The sender learns to wait
 * the round trip (rtt.c), its messages keep their channels while refused,
 * the flush resolves them on a NACK of the latest transmission, and once
 * the receiver makes room they are delivered, none returned.
 */
TEST_F(pair, long_round_trip_is_answered_not_unreachable)
{
	struct sim_nic *a = self->net.nic[0], *b = self->net.nic[1];
	struct vnet_fw_peer *p = &a->fw.peers[a->fw.peer_of[1]];
	u32 i, sent = VNET_QUEUE_DEPTH + 2, got = 0;
	u64 start, flush;

	/* A round trip of four quanta, within the longest wait (five). */
	self->net.delay = 2 * a->fw.quantum;
	for (i = 0; i < sent; i++) {
		struct vnet_desc d = sim_request(i);

		ASSERT_EQ(0, sim_post(a, 0, VNET_Q_REQ_SEND, &d, NULL));
		sim_net_run_for(&self->net, 100);
	}
	/* Past the silence that returns a message, short of busy_timeout. */
	sim_net_run_for(&self->net, 2 * a->fw.max_retries * a->fw.quantum);
	ASSERT_GT(a->fw.busy_timeout, self->net.now);
	ASSERT_LT(0, b->fw.stats.tx_nack[VNET_NACK_QUEUE_FULL]);
	EXPECT_EQ(NULL, sim_peek(a, 0, VNET_Q_REP_RECV));
	EXPECT_EQ(0, a->fw.stats.returned[VNET_RET_UNREACHABLE]);
	EXPECT_LE(2 * self->net.delay, p->rto);

	a->ep[0].fw.moving = true;
	start = self->net.now;
	while (a->ep[0].fw.unresolved &&
	       self->net.now - start < 100 * a->fw.quantum)
		sim_net_step(&self->net, 20);
	flush = self->net.now - start;
	EXPECT_EQ(0, a->ep[0].fw.unresolved);
	EXPECT_GE(3 * 2 * self->net.delay, flush);
	a->ep[0].fw.moving = false;

	start = self->net.now;
	while (got < sent && self->net.now - start < a->fw.busy_timeout) {
		const struct vnet_desc *d;

		sim_net_run_for(&self->net, 1000);
		while ((d = sim_peek(b, 1, VNET_Q_REQ_RECV))) {
			EXPECT_EQ(got, d->args[0]);
			got++;
			sim_consume(b, 1, VNET_Q_REQ_RECV);
		}
	}
	EXPECT_EQ(sent, got);
	EXPECT_EQ(NULL, sim_peek(a, 0, VNET_Q_REP_RECV));
	TH_LOG("round trip %llu, quantum %llu: waits %llu, flushed in %llu, %u delivered",
	       (unsigned long long)(2 * self->net.delay),
	       (unsigned long long)a->fw.quantum,
	       (unsigned long long)p->rto, (unsigned long long)flush, got);
}

/*
 * A NACK is word from the receiver; a message sent again after one has
 * its silence counted from then.  Its sender moved for longer than
 * max_retries quanta after the NACK: the retransmission that follows the
 * move must get its own max_retries quanta, not come back "unreachable"
 * at the next scan.
 */
TEST_F(pair, silence_counts_from_the_retransmission_after_a_nack)
{
	struct sim_nic *a = self->net.nic[0], *b = self->net.nic[1];
	u32 i;

	for (i = 0; i <= VNET_QUEUE_DEPTH; i++) {
		struct vnet_desc d = sim_request(i);

		ASSERT_EQ(0, sim_post(a, 0, VNET_Q_REQ_SEND, &d, NULL));
		sim_net_run_for(&self->net, 300);
	}
	sim_net_run_for(&self->net, 500);
	ASSERT_LT(0, b->fw.stats.tx_nack[VNET_NACK_QUEUE_FULL]);
	ASSERT_EQ(0, a->ep[0].fw.unresolved);

	a->ep[0].fw.moving = true;
	sim_net_run_for(&self->net, (a->fw.max_retries + 5) * a->fw.quantum);
	a->ep[0].fw.moving = false;
	/* The receiver is gone now: the retransmission gets no answer. */
	self->net.down[1] = true;
	sim_net_run_for(&self->net, 3 * a->fw.quantum);
	ASSERT_GT(a->fw.busy_timeout, self->net.now);
	EXPECT_EQ(NULL, sim_peek(a, 0, VNET_Q_REP_RECV));
	EXPECT_EQ(0, a->fw.stats.returned[VNET_RET_UNREACHABLE]);
	sim_net_run_for(&self->net, (a->fw.max_retries + 2) * a->fw.quantum);
	EXPECT_EQ(1, a->fw.stats.returned[VNET_RET_UNREACHABLE]);
}

/*
 * Both NICs stop running for longer than max_retries quanta with a request
 * on the wire -- one guest's cards, its host busy elsewhere -- and the
 * sender's timer runs before the receiver's answer comes in: that is not
 * the receiver's silence, and the request is delivered, not returned.
 */
TEST_F(pair, own_stall_is_not_the_receivers_silence)
{
	struct sim_nic *a = self->net.nic[0], *b = self->net.nic[1];
	u64 stall = (a->fw.max_retries + a->fw.max_retries / 2) *
		    a->fw.quantum;
	struct vnet_desc d = sim_request(7);
	const struct vnet_desc *got;

	ASSERT_GT(vnet_fw_msg_lifetime(&a->fw), stall);
	self->net.delay = 100;
	ASSERT_EQ(0, sim_post(a, 0, VNET_Q_REQ_SEND, &d, NULL));
	sim_net_step(&self->net, 20);
	ASSERT_EQ(1, a->fw.nactive);
	/* Nobody runs; then, in one step, the request in, the timer out. */
	sim_net_step(&self->net, stall);
	sim_net_run_for(&self->net, 10 * a->fw.quantum);
	EXPECT_EQ(0, a->fw.stats.returned[VNET_RET_UNREACHABLE]);
	EXPECT_EQ(NULL, sim_peek(a, 0, VNET_Q_REP_RECV));
	got = sim_peek(b, 1, VNET_Q_REQ_RECV);
	ASSERT_NE(NULL, got);
	EXPECT_EQ(7, got->args[0]);
	EXPECT_EQ(0, a->fw.nactive);

	/* A receiver gone for good is still found out, stall or not. */
	self->net.down[1] = true;
	d = sim_request(8);
	ASSERT_EQ(0, sim_post(a, 0, VNET_Q_REQ_SEND, &d, NULL));
	sim_net_step(&self->net, 20);
	sim_net_step(&self->net, stall);
	sim_net_run_for(&self->net, (a->fw.max_retries + 2) * a->fw.quantum);
	EXPECT_EQ(1, a->fw.stats.returned[VNET_RET_UNREACHABLE]);
}

/*
 * A thread that runs at every scan but late by its timer's slack hears
 * all there is: a dead receiver is found out as soon as without the
 * slack.  Late beyond that at every scan, the verdict comes later, and
 * never past the message's lifetime.
 */
static u64 verdict_with_scans_every(struct sim_net *net, u64 gap)
{
	struct sim_nic *a = net->nic[0];
	struct vnet_desc d = sim_request(1);
	u64 start, end;
	u32 returned = a->fw.stats.returned[VNET_RET_UNREACHABLE];

	net->down[1] = true;
	if (sim_post(a, 0, VNET_Q_REQ_SEND, &d, NULL))
		return 0;
	sim_net_step(net, 1);
	start = net->now;
	end = start + 4 * vnet_fw_msg_lifetime(&a->fw);
	while (a->fw.stats.returned[VNET_RET_UNREACHABLE] == returned &&
	       net->now < end)
		sim_net_step(net, gap);
	sim_consume(a, 0, VNET_Q_REP_RECV);
	return net->now - start;
}

TEST_F(pair, late_scans_bound_the_verdict)
{
	struct sim_nic *a = self->net.nic[0];
	u64 q = a->fw.quantum, silence = a->fw.max_retries * q, took;

	a->fw.timer_slack = q / 4;
	took = verdict_with_scans_every(&self->net, 2 * q + q / 4);
	EXPECT_LE(took, silence + 2 * (2 * q + q / 4));
	TH_LOG("scans every 2.25 quanta: unreachable after %llu (silence %llu)",
	       (unsigned long long)took, (unsigned long long)silence);
	took = verdict_with_scans_every(&self->net, 4 * q);
	EXPECT_LE(took, vnet_fw_msg_lifetime(&a->fw) + 4 * q);
	TH_LOG("scans every 4 quanta: unreachable after %llu (lifetime %llu)",
	       (unsigned long long)took,
	       (unsigned long long)vnet_fw_msg_lifetime(&a->fw));
}

/* Only a NACK of the latest transmission resolves a message for a flush. */
TEST_F(pair, stale_nack_does_not_resolve)
{
	struct sim_nic *a = self->net.nic[0];
	struct vnet_fw_peer *p = &a->fw.peers[a->fw.peer_of[1]];
	struct sim_pkt nack = {};
	u32 i;

	tap_and_overfill(_metadata, &self->net);
	sim_net_run_for(&self->net, 500);
	for (i = 0; i < self->net.taplen; i++) {
		const struct vnet_wire_hdr *h = (void *)self->net.tap[i].data;

		if (h->type == VNET_WIRE_NACK)
			nack = self->net.tap[i];
	}
	ASSERT_NE(NULL, nack.data);
	ASSERT_EQ(0, a->ep[0].fw.unresolved);

	/* The receiver goes quiet; the retransmission gets no answer. */
	self->net.down[1] = true;
	sim_net_run_for(&self->net, 2 * a->fw.quantum);
	ASSERT_EQ(1, a->ep[0].fw.unresolved);
	sim_net_inject_from(&self->net, 0, 1, nack.data, nack.len);
	EXPECT_EQ(1, a->ep[0].fw.unresolved);
	EXPECT_EQ(1, p->unacked);
}

/*
 * A request NACKed because its destination is not on the card: b loads
 * the endpoint (as the driver does on the fault the NACK asked for), and
 * the message must follow within a round trip or two, not when a's timer
 * next finds it due, up to two quanta later.
 */
TEST_F(pair, resume_redelivers_within_a_round_trip)
{
	struct sim_nic *a = self->net.nic[0], *b = self->net.nic[1];
	struct vnet_desc d = sim_request(5);
	const struct vnet_desc *got;
	u64 loaded, took;

	b->auto_fault = false;
	sim_unload(b, 1);
	/* a's timer scans once a quantum: send in between, as most are. */
	sim_net_run_for(&self->net, 200);
	ASSERT_EQ(0, sim_post(a, 0, VNET_Q_REQ_SEND, &d, NULL));
	while (!a->fw.stats.rx_nack[VNET_NACK_NOT_RESIDENT] &&
	       self->net.now < 10 * a->fw.quantum)
		sim_net_step(&self->net, 20);
	ASSERT_EQ(1, a->fw.stats.rx_nack[VNET_NACK_NOT_RESIDENT]);
	ASSERT_LT(0, b->faults_requested[1]);
	EXPECT_EQ(0, a->ep[0].fw.unresolved);

	sim_load(b, 1);
	loaded = self->net.now;
	while (!(got = sim_peek(b, 1, VNET_Q_REQ_RECV)) &&
	       self->net.now - loaded < 10 * a->fw.quantum)
		sim_net_step(&self->net, 20);
	ASSERT_NE(NULL, got);
	EXPECT_EQ(5, got->args[0]);
	took = self->net.now - loaded;
	TH_LOG("delivered %llu after the load (round trip %llu, quantum %llu)",
	       (unsigned long long)took,
	       (unsigned long long)(2 * self->net.delay),
	       (unsigned long long)a->fw.quantum);
	EXPECT_LT(took, a->fw.quantum / 4);
	EXPECT_EQ(1, a->fw.stats.retransmits);

	sim_net_run_for(&self->net, 5 * a->fw.quantum);
	EXPECT_EQ(1, b->ep[1].fw.stats.received);
	EXPECT_EQ(0, a->fw.nactive);
}

/* a's request to b's endpoint 1, which is off the card: NACKed "not resident". */
static void nacked_not_resident(struct __test_metadata *_metadata,
				struct sim_net *net)
{
	struct sim_nic *a = net->nic[0], *b = net->nic[1];
	struct vnet_desc d = sim_request(5);
	u64 start = net->now;

	b->auto_fault = false;
	sim_unload(b, 1);
	ASSERT_EQ(0, sim_post(a, 0, VNET_Q_REQ_SEND, &d, NULL));
	while (!a->fw.stats.rx_nack[VNET_NACK_NOT_RESIDENT] &&
	       net->now - start < 10 * a->fw.quantum)
		sim_net_step(net, 20);
	ASSERT_EQ(1, a->fw.stats.rx_nack[VNET_NACK_NOT_RESIDENT]);
	ASSERT_NE(0, b->ep[1].fw.resume_peers);
}

/* An endpoint closed while a peer waits for it tells that peer nothing. */
TEST_F(pair, closed_endpoint_sends_no_resume)
{
	struct sim_nic *a = self->net.nic[0], *b = self->net.nic[1];

	nacked_not_resident(_metadata, &self->net);
	vnet_fw_ep_forget(&b->fw, &b->ep[1].fw);
	EXPECT_EQ(0, b->ep[1].fw.resume_peers);
	sim_load(b, 1);
	sim_net_run_for(&self->net, a->fw.quantum / 2);
	EXPECT_EQ(0, b->fw.stats.tx_resume);
	EXPECT_EQ(0, a->fw.stats.rx_resume);
	EXPECT_EQ(0, a->fw.stats.retransmits);
}

/*
 * A RESUME finds the sender moving: the message stays NACKed, so the
 * sender's flush ends, and goes out again by the timer once the move is
 * over.
 */
TEST_F(pair, resume_waits_for_a_moving_sender)
{
	struct sim_nic *a = self->net.nic[0], *b = self->net.nic[1];
	u64 start;

	nacked_not_resident(_metadata, &self->net);
	a->ep[0].fw.moving = true;
	sim_load(b, 1);
	sim_net_run_for(&self->net, 200);
	EXPECT_EQ(1, b->fw.stats.tx_resume);
	EXPECT_EQ(1, a->fw.stats.rx_resume);
	EXPECT_EQ(0, a->fw.stats.retransmits);
	EXPECT_EQ(0, a->ep[0].fw.unresolved);

	a->ep[0].fw.moving = false;
	start = self->net.now;
	while (!sim_peek(b, 1, VNET_Q_REQ_RECV) &&
	       self->net.now - start < 10 * a->fw.quantum)
		sim_net_step(&self->net, 20);
	ASSERT_NE(NULL, sim_peek(b, 1, VNET_Q_REQ_RECV));
	EXPECT_LE(self->net.now - start, 2 * a->fw.quantum + 200);
	EXPECT_EQ(1, a->fw.stats.retransmits);
}

/*
 * Requests refused for busy_timeout by a receiver that answers every
 * transmission a round trip of four quanta later: each comes back "busy",
 * never "unreachable".  The busy clock runs out while the latest
 * transmission is on the wire as often as not; the receiver has refused
 * every one so far, and its answer to that one says what to say.
 */
static void refused_until_busy(struct __test_metadata *_metadata,
			       struct sim_net *net, bool resident)
{
	struct sim_nic *a = net->nic[0], *b = net->nic[1];
	u32 i, extra = SIM_CHANNELS / 2;	/* what may be refused at once */
	u32 sent = resident ? VNET_QUEUE_DEPTH + extra : extra;
	const u64 *nacks = a->fw.stats.rx_nack;
	u64 refused, limit;

	net->delay = 2 * a->fw.quantum;
	if (!resident) {
		b->auto_fault = false;
		sim_unload(b, 1);
	}
	for (i = 0; i < sent; i++) {
		struct vnet_desc d = sim_request(i);

		ASSERT_EQ(0, sim_post(a, 0, VNET_Q_REQ_SEND, &d, NULL));
		sim_net_run_for(net, a->fw.quantum / 3);
	}
	while (!nacks[VNET_NACK_QUEUE_FULL] && !nacks[VNET_NACK_NOT_RESIDENT])
		sim_net_step(net, 20);
	refused = net->now;
	/*
	 * All refused within a round trip; then the busy clock, the
	 * longest wait for an answer (rtt.c) and a scan.
	 */
	limit = 2 * net->delay + a->fw.busy_timeout +
		a->fw.max_retries * a->fw.quantum / 4 + 2 * a->fw.quantum;
	ASSERT_LE(8, a->fw.max_retries);	/* the wait: max_retries / 4 */
	while (a->fw.nactive && net->now - refused < 2 * limit)
		sim_net_step(net, 20);
	TH_LOG("%s: %llu busy, %llu unreachable %llu after the first refusal (busy_timeout %llu)",
	       resident ? "queue full" : "not resident",
	       (unsigned long long)a->fw.stats.returned[VNET_RET_BUSY],
	       (unsigned long long)a->fw.stats.returned[VNET_RET_UNREACHABLE],
	       (unsigned long long)(net->now - refused),
	       (unsigned long long)a->fw.busy_timeout);
	EXPECT_EQ(0, a->fw.nactive);
	EXPECT_EQ(extra, a->fw.stats.returned[VNET_RET_BUSY]);
	EXPECT_EQ(0, a->fw.stats.returned[VNET_RET_UNREACHABLE]);
	EXPECT_LE(net->now - refused, limit);
	for (i = 0; i < extra; i++) {
		const struct vnet_desc *d = sim_peek(a, 0, VNET_Q_REP_RECV);

		ASSERT_NE(NULL, d);
		EXPECT_EQ(VNET_RET_BUSY, d->status);
		sim_consume(a, 0, VNET_Q_REP_RECV);
	}
}

TEST_F(pair, queue_full_past_busy_timeout_is_busy)
{
	refused_until_busy(_metadata, &self->net, true);
}

TEST_F(pair, not_resident_past_busy_timeout_is_busy)
{
	refused_until_busy(_metadata, &self->net, false);
}

TEST_HARNESS_MAIN
