// SPDX-License-Identifier: GPL-2.0
/*
 * The NIC-to-NIC transport over a simulated wire: exactly-once delivery
 * through loss, duplication, reordering and corruption at up to 256 NICs;
 * return to sender after the retry limit; channel reuse after an unload;
 * bad frames.  What counts as an answer is answer_test.c's.
 */
#include <stdlib.h>

#include "kselftest_harness.h"
#include "wire_sim.h"

#define TAG	0x77ULL

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
	sim_net_init_pair(&self->net, TAG);
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

	sim_net_inject_from(&self->net, 1, 0, junk, 3);
	for (i = 0; i < 100; i++) {
		u32 j;

		for (j = 0; j < sizeof(junk); j++)
			junk[j] = sim_rand(&seed);
		junk[0] = VNET_WIRE_VERSION;
		sim_net_inject_from(&self->net, 1, 0, junk,
				    1 + sim_rand(&seed) % 200);
	}
	/* Well formed but with a bad checksum. */
	pkt.hdr.version = VNET_WIRE_VERSION;
	pkt.hdr.type = VNET_WIRE_DATA;
	pkt.hdr.dst_nic = htobe16(1);
	sim_net_inject_from(&self->net, 1, 0, &pkt, sizeof(pkt));
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
		sim_net_inject_from(&self->net, 0, 1, &pkt, sizeof(pkt));
		sent++;
	}
	EXPECT_EQ(bad + sent, fw->stats.bad_frames);
	EXPECT_EQ(stale, fw->stats.stale_acks);
	EXPECT_EQ(0, memcmp(tx, p->tx, fw->nchannels * sizeof(*tx)));
}

TEST_HARNESS_MAIN
