// SPDX-License-Identifier: GPL-2.0
/*
 * The NIC-to-NIC transport over a simulated wire: exactly-once delivery
 * through loss, duplication, reordering and corruption at up to 256 NICs;
 * return to sender after the retry limit; the flush rule with late and
 * duplicate ACKs; channel reuse after an unload; bad frames.
 */
#include <stdlib.h>

#include "kselftest_harness.h"
#include "wire_sim.h"

#define TAG	0x77ULL

/* A packet to NIC @to, from NIC @from's Ethernet address. */
static void inject_from(struct sim_net *net, u32 to, u32 from,
			const void *data, u32 len)
{
	u8 mac[6];

	sim_mac(from, mac);
	sim_net_inject(net, to, mac, data, len);
}

/* Endpoint 0 of every NIC is a client, endpoint 1 a server. */
static void setup_tags_and_maps(struct sim_net *net, u32 *target)
{
	u32 i;

	for (i = 0; i < net->nr; i++) {
		net->nic[i]->ep[1].fw.tag = TAG;
		sim_map(net->nic[i], 0, 0, target[i], 1, TAG);
	}
}

struct traffic {
	u32 *sent, *replies, *served;
	u8 *seen;			/* [client][request] at the server */
	u32 per_client;
	u32 returned, bad;
};

/* Servers reply to every request; clients keep up to 4 requests out. */
static void drive(struct sim_net *net, struct traffic *t)
{
	u32 i;

	for (i = 0; i < net->nr; i++) {
		struct sim_nic *s = net->nic[i];
		const struct vnet_desc *d;

		while ((d = sim_peek(s, 1, VNET_Q_REQ_RECV))) {
			struct vnet_desc r = { .handler = 2, .nargs = 2 };
			u32 c = d->args[0], n = d->args[1];

			if (c >= net->nr || n >= t->per_client ||
			    d->peer.nic != c)
				t->bad++;
			else if (t->seen[c * t->per_client + n]++)
				t->bad++;
			r.token = d->token;
			r.args[0] = c;
			r.args[1] = n;
			if (sim_post(s, 1, VNET_Q_REP_SEND, &r, NULL))
				break;
			sim_consume(s, 1, VNET_Q_REQ_RECV);
			t->served[i]++;
		}
		while ((d = sim_peek(s, 0, VNET_Q_REP_RECV))) {
			if (d->flags & VNET_DESC_RETURNED)
				t->returned++;
			else if (d->args[0] != i)
				t->bad++;
			t->replies[i]++;
			sim_consume(s, 0, VNET_Q_REP_RECV);
		}
		while (t->sent[i] < t->per_client &&
		       t->sent[i] - t->replies[i] < 4) {
			struct vnet_desc q = { .handler = 1, .nargs = 2 };

			q.args[0] = i;
			q.args[1] = t->sent[i];
			if (sim_post(s, 0, VNET_Q_REQ_SEND, &q, NULL))
				break;
			t->sent[i]++;
		}
	}
}

static bool all_done(struct sim_net *net, struct traffic *t)
{
	u32 i;

	for (i = 0; i < net->nr; i++)
		if (t->replies[i] < t->per_client)
			return false;
	return true;
}

static bool any_active(struct sim_net *net)
{
	u32 i;

	for (i = 0; i < net->nr; i++)
		if (net->nic[i]->fw.nactive)
			return true;
	return false;
}

FIXTURE(lossy) {
	struct sim_net net;
	struct traffic t;
	u32 *target;
};

FIXTURE_VARIANT(lossy) {
	u32 nics;
	u32 per_client;
	u32 loss, dup, reorder, corrupt;
	u32 seed;
};

FIXTURE_VARIANT_ADD(lossy, two_nics_clean) {
	.nics = 2, .per_client = 500, .seed = 1,
};

FIXTURE_VARIANT_ADD(lossy, two_nics_30pct_loss) {
	.nics = 2, .per_client = 300, .loss = 300, .seed = 2,
};

FIXTURE_VARIANT_ADD(lossy, sixteen_nics_everything) {
	.nics = 16, .per_client = 100, .loss = 200, .dup = 50, .reorder = 50,
	.corrupt = 10, .seed = 3,
};

FIXTURE_VARIANT_ADD(lossy, sixteen_nics_dup_reorder) {
	.nics = 16, .per_client = 100, .dup = 300, .reorder = 300, .seed = 4,
};

FIXTURE_VARIANT_ADD(lossy, many_nics_30pct_loss) {
	.nics = 256, .per_client = 8, .loss = 300, .dup = 50, .reorder = 50,
	.corrupt = 10, .seed = 5,
};

FIXTURE_SETUP(lossy)
{
	u32 i, n = variant->nics;

	sim_net_init(&self->net, n, 2, variant->seed);
	self->net.loss = variant->loss;
	self->net.dup = variant->dup;
	self->net.reorder = variant->reorder;
	self->net.corrupt = variant->corrupt;
	/* A fixed pattern, so each run is the same run. */
	self->target = calloc(n, sizeof(u32));
	for (i = 0; i < n; i++)
		self->target[i] = (i * 7 + 3) % n == i ? (i + 1) % n :
							  (i * 7 + 3) % n;
	for (i = 0; i < n; i++)
		self->net.nic[i]->fw.max_retries = 255;
	setup_tags_and_maps(&self->net, self->target);
	self->t.per_client = variant->per_client;
	self->t.sent = calloc(n, sizeof(u32));
	self->t.replies = calloc(n, sizeof(u32));
	self->t.served = calloc(n, sizeof(u32));
	self->t.seen = calloc(n * variant->per_client, 1);
}

FIXTURE_TEARDOWN(lossy)
{
	sim_net_fini(&self->net);
	free(self->target);
	free(self->t.sent);
	free(self->t.replies);
	free(self->t.served);
	free(self->t.seen);
}

TEST_F_TIMEOUT(lossy, exactly_once, 120)
{
	u64 steps = 0, bad_frames = 0, dups = 0;
	u32 i, c, n;

	while (!all_done(&self->net, &self->t) && steps++ < 2000000) {
		drive(&self->net, &self->t);
		sim_net_step(&self->net, 20);
	}
	ASSERT_TRUE(all_done(&self->net, &self->t));
	/* The last replies' ACKs may still be on their way, or lost. */
	for (steps = 0; steps < 100000 && any_active(&self->net); steps++)
		sim_net_step(&self->net, 20);
	EXPECT_EQ(0, self->t.bad);
	EXPECT_EQ(0, self->t.returned);
	for (c = 0; c < variant->nics; c++)
		for (n = 0; n < variant->per_client; n++)
			ASSERT_EQ(1, self->t.seen[c * variant->per_client + n]);
	for (i = 0; i < variant->nics; i++) {
		bad_frames += self->net.nic[i]->fw.stats.bad_frames;
		dups += self->net.nic[i]->fw.stats.duplicates;
		ASSERT_EQ(0, self->net.nic[i]->fw.nactive);
		ASSERT_EQ(SIM_POOL, self->net.nic[i]->fw.pool_free);
	}
	if (variant->corrupt)
		EXPECT_LT(0, bad_frames);
	if (variant->dup || variant->loss)
		EXPECT_LT(0, dups);
	TH_LOG("%llu packets, %llu lost, %llu duplicated, %llu corrupted; "
	       "receivers dropped %llu bad frames and %llu duplicates",
	       (unsigned long long)self->net.sent,
	       (unsigned long long)self->net.lost,
	       (unsigned long long)self->net.duplicated,
	       (unsigned long long)self->net.corrupted,
	       (unsigned long long)bad_frames, (unsigned long long)dups);
}

FIXTURE(pair) {
	struct sim_net net;
};

FIXTURE_SETUP(pair)
{
	sim_net_init(&self->net, 2, 2, 42);
	self->net.nic[1]->ep[1].fw.tag = TAG;
	sim_map(self->net.nic[0], 0, 0, 1, 1, TAG);
}

FIXTURE_TEARDOWN(pair)
{
	sim_net_fini(&self->net);
}

TEST_F(pair, unreachable_after_retry_limit)
{
	struct sim_nic *a = self->net.nic[0];
	struct vnet_desc d = sim_request(9);
	const struct vnet_desc *got;
	u64 start = self->net.now, bound;

	self->net.down[1] = true;
	ASSERT_EQ(0, sim_post(a, 0, VNET_Q_REQ_SEND, &d, NULL));
	bound = (a->fw.max_retries + 2) * a->fw.quantum;
	while (!sim_peek(a, 0, VNET_Q_REP_RECV) &&
	       self->net.now - start < 10 * bound)
		sim_net_step(&self->net, 20);
	got = sim_peek(a, 0, VNET_Q_REP_RECV);
	ASSERT_NE(NULL, got);
	EXPECT_TRUE(got->flags & VNET_DESC_RETURNED);
	EXPECT_EQ(VNET_RET_UNREACHABLE, got->status);
	EXPECT_EQ(9, got->args[0]);
	EXPECT_EQ(1, got->peer.nic);
	EXPECT_LE(self->net.now - start, bound);
	EXPECT_EQ(0, a->fw.nactive);
	TH_LOG("returned after %llu time units (bound %llu)",
	       (unsigned long long)(self->net.now - start),
	       (unsigned long long)bound);

	/* The link comes back: the channel restarts and works. */
	self->net.down[1] = false;
	sim_consume(a, 0, VNET_Q_REP_RECV);
	d = sim_request(10);
	ASSERT_EQ(0, sim_post(a, 0, VNET_Q_REQ_SEND, &d, NULL));
	sim_net_run_for(&self->net, 5000);
	got = sim_peek(self->net.nic[1], 1, VNET_Q_REQ_RECV);
	ASSERT_NE(NULL, got);
	EXPECT_EQ(10, got->args[0]);
}

TEST_F(pair, no_route_is_unreachable_at_once)
{
	struct sim_nic *a = self->net.nic[0];
	struct vnet_desc d = sim_request(1);
	const struct vnet_desc *got;

	sim_map(a, 0, 3, 77, 1, TAG);
	d.slot = 3;
	ASSERT_EQ(0, sim_post(a, 0, VNET_Q_REQ_SEND, &d, NULL));
	sim_net_step(&self->net, 20);
	got = sim_peek(a, 0, VNET_Q_REP_RECV);
	ASSERT_NE(NULL, got);
	EXPECT_EQ(VNET_RET_UNREACHABLE, got->status);
}

TEST_F(pair, remote_returns_carry_the_reason)
{
	struct sim_nic *a = self->net.nic[0];
	struct vnet_desc d = sim_request(1);
	const struct vnet_desc *got;

	sim_map(a, 0, 1, 1, 1, TAG + 1);	/* wrong tag */
	sim_map(a, 0, 2, 1, 40, TAG);		/* no such endpoint */
	d.slot = 1;
	ASSERT_EQ(0, sim_post(a, 0, VNET_Q_REQ_SEND, &d, NULL));
	d.slot = 2;
	ASSERT_EQ(0, sim_post(a, 0, VNET_Q_REQ_SEND, &d, NULL));
	d.slot = 0;
	d.flags = VNET_DESC_XFER;		/* no segment over there */
	d.len = 10;
	ASSERT_EQ(0, sim_post(a, 0, VNET_Q_REQ_SEND, &d, "0123456789"));
	sim_net_run_for(&self->net, 3000);

	got = sim_peek(a, 0, VNET_Q_REP_RECV);
	ASSERT_NE(NULL, got);
	EXPECT_EQ(VNET_RET_BAD_TAG, got->status);
	sim_consume(a, 0, VNET_Q_REP_RECV);
	got = sim_peek(a, 0, VNET_Q_REP_RECV);
	ASSERT_NE(NULL, got);
	EXPECT_EQ(VNET_RET_NO_ENDPOINT, got->status);
	sim_consume(a, 0, VNET_Q_REP_RECV);
	got = sim_peek(a, 0, VNET_Q_REP_RECV);
	ASSERT_NE(NULL, got);
	EXPECT_EQ(VNET_RET_BAD_SEGMENT, got->status);
	EXPECT_EQ(10, got->len);
	EXPECT_EQ(0, memcmp("0123456789", sim_payload(a, 0, VNET_Q_REP_RECV),
			    10));
	EXPECT_EQ(NULL, sim_peek(self->net.nic[1], 1, VNET_Q_REQ_RECV));
}

/*
 * Across the wire only the receiver is served: the sender's reply is a
 * round trip away, and the cache must keep it for that.  The receiver's
 * first service since its load is stamped with its NIC's clock.
 */
TEST_F(pair, wire_delivery_serves_only_the_receiver)
{
	struct sim_nic *a = self->net.nic[0], *b = self->net.nic[1];
	struct vnet_desc d = sim_request(1);
	u64 posted = self->net.now, first;

	ASSERT_EQ(0, sim_post(a, 0, VNET_Q_REQ_SEND, &d, NULL));
	sim_net_run_for(&self->net, 1000);
	ASSERT_NE(NULL, sim_peek(b, 1, VNET_Q_REQ_RECV));
	EXPECT_EQ(1, a->ep[0].fw.stats.sent);
	EXPECT_FALSE(a->ep[0].fw.served);
	EXPECT_TRUE(b->ep[1].fw.served);
	EXPECT_FALSE(b->ep[0].fw.served);
	first = b->ep[1].fw.served_at;
	EXPECT_LE(posted, first);
	EXPECT_GE(self->net.now, first);

	/* A second delivery in the same residency keeps the first stamp. */
	ASSERT_EQ(0, sim_post(a, 0, VNET_Q_REQ_SEND, &d, NULL));
	sim_net_run_for(&self->net, 1000);
	EXPECT_EQ(2, b->ep[1].fw.stats.received);
	EXPECT_EQ(first, b->ep[1].fw.served_at);
}

/*
 * A server loaded again to answer across the wire is served once its reply
 * is on the wire: nothing comes back for a reply, and a cache that waited
 * for something to be delivered into it would keep it a quantum for
 * nothing.  Its requester is served when the reply lands.
 */
TEST_F(pair, wire_reply_serves_its_sender)
{
	struct sim_nic *a = self->net.nic[0], *b = self->net.nic[1];
	struct vnet_desc d = sim_request(1), r = { .handler = 2 };
	const struct vnet_desc *got;
	u64 replied;

	ASSERT_EQ(0, sim_post(a, 0, VNET_Q_REQ_SEND, &d, NULL));
	sim_net_run_for(&self->net, 1000);
	got = sim_peek(b, 1, VNET_Q_REQ_RECV);
	ASSERT_NE(NULL, got);
	r.token = got->token;
	sim_consume(b, 1, VNET_Q_REQ_RECV);

	/* As the host does at a load: both ends start unserved. */
	a->ep[0].fw.served = false;
	b->ep[1].fw.served = false;
	replied = b->now;
	ASSERT_EQ(0, sim_post(b, 1, VNET_Q_REP_SEND, &r, NULL));
	sim_run(b, 1);
	EXPECT_TRUE(b->ep[1].fw.served);
	EXPECT_EQ(replied, b->ep[1].fw.served_at);
	EXPECT_FALSE(a->ep[0].fw.served);

	sim_net_run_for(&self->net, 1000);
	got = sim_peek(a, 0, VNET_Q_REP_RECV);
	ASSERT_NE(NULL, got);
	EXPECT_FALSE(got->flags & VNET_DESC_RETURNED);
	EXPECT_TRUE(a->ep[0].fw.served);
}

TEST_F(pair, medium_payload_and_mtu)
{
	struct sim_nic *a = self->net.nic[0], *b = self->net.nic[1];
	static u8 buf[VNET_MEDIUM_MAX];
	struct vnet_desc d = sim_request(1);
	const struct vnet_desc *got;
	u32 i;

	for (i = 0; i < sizeof(buf); i++)
		buf[i] = i * 31;
	d.flags = VNET_DESC_MEDIUM;
	d.len = sizeof(buf);
	ASSERT_EQ(0, sim_post(a, 0, VNET_Q_REQ_SEND, &d, buf));
	sim_net_run_for(&self->net, 1000);
	got = sim_peek(b, 1, VNET_Q_REQ_RECV);
	ASSERT_NE(NULL, got);
	EXPECT_EQ(sizeof(buf), got->len);
	EXPECT_EQ(0, memcmp(buf, sim_payload(b, 1, VNET_Q_REQ_RECV),
			    sizeof(buf)));

	/* A 1500-byte link carries it as a train, whole, once. */
	sim_consume(b, 1, VNET_Q_REQ_RECV);
	a->fw.mtu = 1500;
	buf[0] ^= 0xff;
	ASSERT_EQ(0, sim_post(a, 0, VNET_Q_REQ_SEND, &d, buf));
	sim_net_run_for(&self->net, 3000);
	got = sim_peek(b, 1, VNET_Q_REQ_RECV);
	ASSERT_NE(NULL, got);
	EXPECT_EQ(sizeof(buf), got->len);
	EXPECT_EQ(0, memcmp(buf, sim_payload(b, 1, VNET_Q_REQ_RECV),
			    sizeof(buf)));
	EXPECT_EQ(2, b->ep[1].fw.stats.received);
	EXPECT_EQ(1, a->fw.stats.tx_trains);

	/* One narrower than a train needs cannot. */
	a->fw.mtu = VNET_WIRE_TRAIN_MTU - 1;
	ASSERT_EQ(0, sim_post(a, 0, VNET_Q_REQ_SEND, &d, buf));
	sim_net_run_for(&self->net, 1000);
	got = sim_peek(a, 0, VNET_Q_REP_RECV);
	ASSERT_NE(NULL, got);
	EXPECT_EQ(VNET_RET_TOO_LARGE, got->status);
}

/*
 * An XFER from the sender's own segment crosses as any other: whole, and
 * the receiver sees an XFER, not where it came from; larger than a frame,
 * as a train.  On a link too narrow for trains, one larger than a frame
 * comes back whole, its bytes where they were.
 */
TEST_F(pair, xfer_from_segment_across_the_wire)
{
	struct sim_nic *a = self->net.nic[0], *b = self->net.nic[1];
	static u8 src[128 << 10], dst[128 << 10];
	struct vnet_desc d = sim_request(1);
	const struct vnet_desc *got;
	u32 i;

	for (i = 0; i < sizeof(src); i++)
		src[i] = (u8)(i * 5 + i / 509);
	a->ep[0].fw.seg = src;
	a->ep[0].fw.seg_len = sizeof(src);
	b->ep[1].fw.seg = dst;
	b->ep[1].fw.seg_len = sizeof(dst);
	d.flags = VNET_DESC_XFER | VNET_DESC_FROM_SEG;
	d.len = 5000;
	d.src_offset = 333;
	d.offset = 64;
	ASSERT_EQ(0, sim_post(a, 0, VNET_Q_REQ_SEND, &d, NULL));
	sim_net_run_for(&self->net, 1000);
	got = sim_peek(b, 1, VNET_Q_REQ_RECV);
	ASSERT_NE(NULL, got);
	EXPECT_EQ(VNET_DESC_XFER, got->flags);
	EXPECT_EQ(0, got->src_offset);
	EXPECT_EQ(5000, got->len);
	EXPECT_EQ(0, memcmp(dst + 64, src + 333, 5000));

	sim_consume(b, 1, VNET_Q_REQ_RECV);
	d.len = 100 << 10;
	ASSERT_EQ(0, sim_post(a, 0, VNET_Q_REQ_SEND, &d, NULL));
	sim_net_run_for(&self->net, 3000);
	got = sim_peek(b, 1, VNET_Q_REQ_RECV);
	ASSERT_NE(NULL, got);
	EXPECT_EQ(100 << 10, got->len);
	EXPECT_EQ(0, memcmp(dst + 64, src + 333, 100 << 10));
	EXPECT_EQ(1, a->fw.stats.tx_trains);

	a->fw.mtu = 1000;
	ASSERT_EQ(0, sim_post(a, 0, VNET_Q_REQ_SEND, &d, NULL));
	sim_net_run_for(&self->net, 1000);
	got = sim_peek(a, 0, VNET_Q_REP_RECV);
	ASSERT_NE(NULL, got);
	EXPECT_EQ(VNET_RET_TOO_LARGE, got->status);
	EXPECT_EQ(100 << 10, got->len);
	EXPECT_EQ(333, got->src_offset);
	EXPECT_TRUE(got->flags & VNET_DESC_FROM_SEG);
	a->ep[0].fw.seg = NULL;
	b->ep[1].fw.seg = NULL;
}

TEST_F(pair, full_queue_is_nacked_then_delivered)
{
	struct sim_nic *a = self->net.nic[0], *b = self->net.nic[1];
	u32 i, got = 0;

	for (i = 0; i < VNET_QUEUE_DEPTH; i++) {
		struct vnet_desc d = sim_request(i);

		ASSERT_EQ(0, sim_post(a, 0, VNET_Q_REQ_SEND, &d, NULL));
	}
	/* b takes nothing for a while: its queue fills, then NACKs. */
	for (i = 0; i < 3; i++) {
		struct vnet_desc d = sim_request(100 + i);

		sim_net_run_for(&self->net, 2000);
		ASSERT_EQ(0, sim_post(a, 0, VNET_Q_REQ_SEND, &d, NULL));
	}
	sim_net_run_for(&self->net, 5000);
	EXPECT_LT(0, b->fw.stats.tx_nack[VNET_NACK_QUEUE_FULL]);
	while (got < VNET_QUEUE_DEPTH + 3) {
		const struct vnet_desc *d;

		sim_net_run_for(&self->net, 2000);
		while ((d = sim_peek(b, 1, VNET_Q_REQ_RECV))) {
			got++;
			sim_consume(b, 1, VNET_Q_REQ_RECV);
		}
		ASSERT_GT(100000, self->net.now);
	}
	sim_net_run_for(&self->net, 5000);
	EXPECT_EQ(VNET_QUEUE_DEPTH + 3, b->ep[1].fw.stats.received);
	EXPECT_EQ(NULL, sim_peek(a, 0, VNET_Q_REP_RECV));
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

	self->net.tapcap = 64;
	self->net.tap = malloc(64 * sizeof(*self->net.tap));

	/* Fill b's queue, then one more that b will NACK. */
	for (i = 0; i <= VNET_QUEUE_DEPTH; i++) {
		struct vnet_desc d = sim_request(i);

		ASSERT_EQ(0, sim_post(a, 0, VNET_Q_REQ_SEND, &d, NULL));
		sim_net_run_for(&self->net, 300);
	}
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
		inject_from(&self->net, self->net.tap[i].to == 0 ? 0 : 1,
			    self->net.tap[i].from, self->net.tap[i].data,
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

	self->net.tapcap = 64;
	self->net.tap = malloc(64 * sizeof(*self->net.tap));
	for (i = 0; i <= VNET_QUEUE_DEPTH; i++) {
		struct vnet_desc d = sim_request(i);

		ASSERT_EQ(0, sim_post(a, 0, VNET_Q_REQ_SEND, &d, NULL));
		sim_net_run_for(&self->net, 300);
	}
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
	inject_from(&self->net, 0, 1, nack.data, nack.len);
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

TEST_F(pair, bad_frames_are_dropped_and_counted)
{
	struct sim_nic *b = self->net.nic[1];
	struct {
		struct vnet_wire_hdr hdr;
		struct vnet_wire_msg msg;
	} pkt = {};
	u8 junk[200];
	u64 before = b->fw.stats.bad_frames;
	u32 i, seed = 7;

	inject_from(&self->net, 1, 0, junk, 3);
	for (i = 0; i < 100; i++) {
		u32 j;

		for (j = 0; j < sizeof(junk); j++)
			junk[j] = sim_rand(&seed);
		junk[0] = VNET_WIRE_VERSION;
		inject_from(&self->net, 1, 0, junk, 1 + sim_rand(&seed) % 200);
	}
	/* Well formed but with a bad checksum. */
	pkt.hdr.version = VNET_WIRE_VERSION;
	pkt.hdr.type = VNET_WIRE_DATA;
	pkt.hdr.dst_nic = htobe16(1);
	inject_from(&self->net, 1, 0, &pkt, sizeof(pkt));
	EXPECT_EQ(before + 102, b->fw.stats.bad_frames);
	EXPECT_EQ(0, b->ep[1].fw.stats.received);
}

#define MIXED_CLIENTS	4	/* endpoints 0..3 of each NIC; 4..7 serve */
#define MIXED_EPS	(2 * MIXED_CLIENTS)
#define MIXED_OUT	VNET_QUEUE_DEPTH	/* requests out per client */
#define MIXED_EACH	500

/*
 * NICs loaded with different channel counts: each sends on its own count,
 * and takes what the other sends on any channel of its count.
 */
FIXTURE(mixed) {
	struct sim_net net;
	u32 seq_at_start[2][VNET_WIRE_CHANNELS];
};

FIXTURE_VARIANT(mixed) {
	u32 channels[2];
};

FIXTURE_VARIANT_ADD(mixed, more_than_the_receiver) {
	.channels = { VNET_WIRE_CHANNELS, SIM_CHANNELS },
};

FIXTURE_VARIANT_ADD(mixed, fewer_than_the_receiver) {
	.channels = { SIM_CHANNELS, VNET_WIRE_CHANNELS },
};

FIXTURE_VARIANT_ADD(mixed, one_against_all) {
	.channels = { 1, VNET_WIRE_CHANNELS },
};

FIXTURE_SETUP(mixed)
{
	u32 n, i, c;

	sim_net_init_channels(&self->net, 2, MIXED_EPS, 61, variant->channels);
	for (n = 0; n < 2; n++) {
		struct vnet_fw_nic *fw = &self->net.nic[n]->fw;
		struct vnet_fw_peer *p = &fw->peers[fw->peer_of[1 - n]];

		for (i = 0; i < MIXED_CLIENTS; i++) {
			self->net.nic[n]->ep[MIXED_CLIENTS + i].fw.tag = TAG;
			sim_map(self->net.nic[n], i, 0, 1 - n, MIXED_CLIENTS + i,
				TAG);
		}
		for (c = 0; c < fw->nchannels; c++)
			self->seq_at_start[n][c] = p->tx[c].seq;
	}
}

FIXTURE_TEARDOWN(mixed)
{
	sim_net_fini(&self->net);
}

/* Serve every request; keep MIXED_OUT out per client; count what is back. */
static void mixed_drive(struct sim_net *net, u32 sent[2][MIXED_CLIENTS],
			u32 back[2][MIXED_CLIENTS], u32 *returned)
{
	const struct vnet_desc *d;
	u32 n, i;

	for (n = 0; n < 2; n++) {
		struct sim_nic *s = net->nic[n];

		for (i = MIXED_CLIENTS; i < MIXED_EPS; i++) {
			while ((d = sim_peek(s, i, VNET_Q_REQ_RECV))) {
				struct vnet_desc r = { .handler = 2 };

				r.token = d->token;
				if (sim_post(s, i, VNET_Q_REP_SEND, &r, NULL))
					break;
				sim_consume(s, i, VNET_Q_REQ_RECV);
			}
		}
		for (i = 0; i < MIXED_CLIENTS; i++) {
			while ((d = sim_peek(s, i, VNET_Q_REP_RECV))) {
				*returned += !!(d->flags & VNET_DESC_RETURNED);
				back[n][i]++;
				sim_consume(s, i, VNET_Q_REP_RECV);
			}
			while (sent[n][i] < MIXED_EACH &&
			       sent[n][i] - back[n][i] < MIXED_OUT) {
				struct vnet_desc q = sim_request(i);

				if (sim_post(s, i, VNET_Q_REQ_SEND, &q, NULL))
					break;
				sent[n][i]++;
			}
		}
	}
}

TEST_F(mixed, every_channel_delivers)
{
	u32 sent[2][MIXED_CLIENTS] = {}, back[2][MIXED_CLIENTS] = {};
	u32 n, i, c, returned = 0, done = 0;
	u64 limit = self->net.now + 2000 * self->net.nic[0]->fw.quantum;

	while (self->net.now < limit && done < 2 * MIXED_CLIENTS) {
		mixed_drive(&self->net, sent, back, &returned);
		sim_net_step(&self->net, 20);
		for (done = 0, n = 0; n < 2; n++)
			for (i = 0; i < MIXED_CLIENTS; i++)
				done += back[n][i] == MIXED_EACH;
	}
	EXPECT_EQ(2 * MIXED_CLIENTS, done);
	EXPECT_EQ(0, returned);
	for (n = 0; n < 2; n++) {
		struct vnet_fw_nic *fw = &self->net.nic[n]->fw;
		struct vnet_fw_peer *p = &fw->peers[fw->peer_of[1 - n]];
		u32 used = 0;

		EXPECT_EQ(0, fw->stats.bad_frames);
		EXPECT_EQ(0, fw->stats.retransmits);
		for (c = 0; c < fw->nchannels; c++)
			used += p->tx[c].seq != self->seq_at_start[n][c];
		/*
		 * None it has not; past the count the receiver sends on, if
		 * it has more; every one, if it has that many or fewer.
		 */
		EXPECT_LE(used, fw->nchannels);
		if (fw->nchannels > SIM_CHANNELS) {
			EXPECT_LT(SIM_CHANNELS, used);
		} else {
			EXPECT_EQ(fw->nchannels, used);
		}
	}
}

/*
 * An ACK or NACK names one of the receiver's own send channels: past its
 * count, it is a bad frame and moves nothing, whatever it echoes.
 */
TEST_F(mixed, answer_past_our_channels_is_a_bad_frame)
{
	struct sim_nic *b = self->net.nic[1];
	struct vnet_fw_nic *fw = &self->net.nic[0]->fw;
	struct vnet_fw_peer *p = &fw->peers[fw->peer_of[1]];
	struct vnet_fw_send_chan tx[VNET_WIRE_CHANNELS];
	u64 bad = fw->stats.bad_frames, stale = fw->stats.stale_acks;
	struct vnet_fw_peer *bp = &b->fw.peers[b->fw.peer_of[0]];
	u32 c, sent = 0;

	if (fw->nchannels == VNET_WIRE_CHANNELS)
		SKIP(return, "NIC 0 sends on every channel number");
	memcpy(tx, p->tx, fw->nchannels * sizeof(*tx));
	for (c = fw->nchannels; c < VNET_WIRE_CHANNELS; c++) {
		struct {
			struct vnet_wire_hdr h;
			struct vnet_wire_ack ack;
		} pkt = {};

		pkt.h.version = VNET_WIRE_VERSION;
		pkt.h.type = c % 2 ? VNET_WIRE_NACK : VNET_WIRE_ACK;
		pkt.h.channel = c;
		pkt.h.src_nic = htobe16(1);
		pkt.h.incarnation = htobe32(bp->incarnation);
		pkt.h.seq = htobe32(c * 7919);
		pkt.ack.status = c % 2 ? VNET_NACK_NOT_RESIDENT : VNET_RET_NONE;
		pkt.h.csum = htobe32(vnet_crc32c(0, &pkt, sizeof(pkt)));
		inject_from(&self->net, 0, 1, &pkt, sizeof(pkt));
		sent++;
	}
	EXPECT_EQ(bad + sent, fw->stats.bad_frames);
	EXPECT_EQ(stale, fw->stats.stale_acks);
	EXPECT_EQ(0, memcmp(tx, p->tx, fw->nchannels * sizeof(*tx)));
}

TEST_HARNESS_MAIN
