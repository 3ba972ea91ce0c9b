// SPDX-License-Identifier: GPL-2.0
/*
 * Messages larger than a packet, as trains of fragments: medium payloads
 * and XFERs from staging and from the sender's segment, requests and
 * replies, through loss, duplication, reordering and corruption at up to
 * 256 NICs with links of every MTU a train may use: each arrives exactly
 * once and whole.  And the checksum every packet carries: the portable
 * CRC32C the host tests build, against the known values the module checks
 * the kernel's crc32c() against at load, and the conventions a wrapper of
 * crc32c() could get wrong.
 */
#include "kselftest_harness.h"
#include "frag_util.h"

/*
 * The kernel's crc32c(): the bare register update, seeded by the caller,
 * with no inversion on either side.  Built here from the portable checksum.
 */
static u32 raw_crc32c(u32 reg, const void *data, u32 len)
{
	return ~vnet_crc32c(~reg, data, len);
}

/* drivers/vnet/crc32c.c */
static u32 kernel_style(u32 crc, const void *data, u32 len)
{
	return ~raw_crc32c(~crc, data, len);
}

/* The mistakes: no inversion, only the seed's, only the result's. */
static u32 no_inversion(u32 crc, const void *data, u32 len)
{
	return raw_crc32c(crc, data, len);
}

static u32 seed_only(u32 crc, const void *data, u32 len)
{
	return raw_crc32c(~crc, data, len);
}

static u32 result_only(u32 crc, const void *data, u32 len)
{
	return ~raw_crc32c(crc, data, len);
}

/* Right on a whole buffer, wrong when chained: the seed taken as is. */
static u32 unchained(u32 crc, const void *data, u32 len)
{
	return vnet_crc32c(0, data, len) ^ crc;
}

TEST(crc32c_known_values)
{
	static const char check[] = "123456789";
	u8 buf[32];
	u32 i;

	vnet_fw_crc32c_init();
	EXPECT_EQ(0xe3069283, vnet_crc32c(0, check, 9));
	memset(buf, 0, sizeof(buf));
	EXPECT_EQ(0x8a9136aa, vnet_crc32c(0, buf, sizeof(buf)));
	memset(buf, 0xff, sizeof(buf));
	EXPECT_EQ(0x62a8ab43, vnet_crc32c(0, buf, sizeof(buf)));
	for (i = 0; i < sizeof(buf); i++)
		buf[i] = i;
	EXPECT_EQ(0x46dd794e, vnet_crc32c(0, buf, sizeof(buf)));
	/* Chained in two pieces, as a header and then its payload. */
	EXPECT_EQ(0x46dd794e, vnet_crc32c(vnet_crc32c(0, buf, 5), buf + 5,
					  sizeof(buf) - 5));
	EXPECT_TRUE(vnet_fw_crc32c_selftest(vnet_crc32c));
}

/* The checksum a bit at a time, as the polynomial defines it. */
static u32 bitwise_crc32c(u32 crc, const u8 *p, u32 len)
{
	u32 i;

	crc = ~crc;
	while (len--) {
		crc ^= *p++;
		for (i = 0; i < 8; i++)
			crc = (crc >> 1) ^ ((crc & 1) ? 0x82f63b78 : 0);
	}
	return ~crc;
}

/*
 * The portable checksum takes eight bytes a step: at every length up to
 * 2 KiB, from every start (alignment), and chained at a cut that moves
 * with them, it agrees with the definition.
 */
TEST(crc32c_matches_the_definition_at_every_length_and_start)
{
	u32 seed = 0x5eed, len, at, cut;
	static u8 buf[2048 + 8];

	vnet_fw_crc32c_init();
	for (at = 0; at < sizeof(buf); at++) {
		seed = seed * 1103515245u + 12345u;
		buf[at] = seed >> 16;
	}
	for (at = 0; at < 8; at++)
		for (len = 0; len <= 2048; len++) {
			u32 want = bitwise_crc32c(0, buf + at, len);

			ASSERT_EQ(want, vnet_crc32c(0, buf + at, len));
			cut = len ? (len * 7 + at) % len : 0;
			ASSERT_EQ(want, vnet_crc32c(vnet_crc32c(0, buf + at, cut),
						    buf + at + cut, len - cut));
		}
}

/*
 * Two sums joined, as each side of the wire joins a fragment's to the
 * packet's and the train's: the checksum of the whole, for every cut of
 * every length up to the largest train, the second part as long as any
 * fragment or any payload at all.
 */
TEST(crc32c_cat_joins_two_sums_into_the_whole)
{
	static u8 buf[VNET_XFER_MAX];
	u32 seed = 0xca7, i, len, cut;

	vnet_fw_crc32c_init();
	for (i = 0; i < sizeof(buf); i++) {
		seed = seed * 1103515245u + 12345u;
		buf[i] = seed >> 16;
	}
	/* Nothing before, and nothing after. */
	EXPECT_EQ(vnet_crc32c(0, buf, 100),
		  vnet_crc32c_cat(0, vnet_crc32c(0, buf, 100), 100));
	EXPECT_EQ(vnet_crc32c(0, buf, 100),
		  vnet_crc32c_cat(vnet_crc32c(0, buf, 100), 0, 0));
	for (i = 0; i < 2000; i++) {
		seed = seed * 1103515245u + 12345u;
		len = i < 1000 ? seed % 10000 : seed % (sizeof(buf) + 1);
		seed = seed * 1103515245u + 12345u;
		cut = len ? seed % (len + 1) : 0;
		ASSERT_EQ(vnet_crc32c(0, buf, len),
			  vnet_crc32c_cat(vnet_crc32c(0, buf, cut),
					  vnet_crc32c(0, buf + cut, len - cut),
					  len - cut));
	}
}

TEST(crc32c_check_catches_a_wrong_convention)
{
	vnet_fw_crc32c_init();
	EXPECT_TRUE(vnet_fw_crc32c_selftest(kernel_style));
	EXPECT_FALSE(vnet_fw_crc32c_selftest(no_inversion));
	EXPECT_FALSE(vnet_fw_crc32c_selftest(seed_only));
	EXPECT_FALSE(vnet_fw_crc32c_selftest(result_only));
	EXPECT_FALSE(vnet_fw_crc32c_selftest(unchained));
}

#define TAG		0x5aULL
#define REGIONS		4	/* requests a client keeps out, each its own */

enum kind { SHORT, MEDIUM, XFER, XFER_SEG, NR_KINDS };

/*
 * Endpoint 0 of each NIC is a client of endpoint 1 of its target NIC.  A
 * client's segment holds REGIONS landing areas for replies, then REGIONS
 * sources for its XFERs; a server's holds, per client, REGIONS landing
 * areas for requests, then REGIONS sources for its replies.  A region is
 * used by one message at a time: a client takes one for a request and
 * gives it back when the reply is in.
 */
struct flow {
	u32 nr, per_client, area;
	u32 *target, *local, *clients;
	u32 *sent, *replies;
	u8 *seen, *answered, *ended, *unreachable, *busy;
	u32 bad, returned;
};

static u32 hash(u32 c, u32 n, u32 salt)
{
	u32 x = (c * 0x9e3779b1u) ^ (n * 0x85ebca6bu) ^ salt;

	x ^= x >> 15;
	x *= 0x2c1b3c6du;
	return x ^ (x >> 12);
}

static enum kind request_kind(u32 n)
{
	return n % NR_KINDS;
}

static enum kind reply_kind(u32 n)
{
	static const enum kind k[] = { SHORT, MEDIUM, XFER_SEG };

	return k[(n / NR_KINDS + n) % 3];
}

/* How long message n of client c is, of kind @k (and @salt: which way). */
static u32 length(const struct flow *f, enum kind k, u32 c, u32 n, u32 salt)
{
	u32 h = hash(c, n, salt);

	switch (k) {
	case MEDIUM:
		return h % (VNET_MEDIUM_MAX + 1);
	case XFER:
		return 1 + h % VNET_MEDIUM_MAX;
	case XFER_SEG:
		return VNET_MEDIUM_MAX + 1 + h % (f->area - VNET_MEDIUM_MAX);
	default:
		return 0;
	}
}

static u32 seed(u32 c, u32 n, u32 salt)
{
	return hash(c, n, salt ^ 0x77777777);
}

static struct vnet_desc message(const struct flow *f, enum kind k, u32 c,
				u32 n, u32 r, u32 salt)
{
	struct vnet_desc d = { .handler = 1 + k, .nargs = 3 };

	d.args[0] = c;
	d.args[1] = n;
	d.args[2] = r;
	d.len = length(f, k, c, n, salt);
	if (k == MEDIUM)
		d.flags = VNET_DESC_MEDIUM;
	else if (k == XFER)
		d.flags = VNET_DESC_XFER;
	else if (k == XFER_SEG)
		d.flags = VNET_DESC_XFER | VNET_DESC_FROM_SEG;
	return d;
}

/* A message as it arrives: the right length, kind and bytes. */
static bool arrived_whole(const struct flow *f, struct sim_nic *s, u32 ep,
			  unsigned int rq, const struct vnet_desc *d,
			  enum kind k, u64 where, u32 salt)
{
	u32 c = d->args[0], n = d->args[1];
	u32 len = length(f, k, c, n, salt);
	const u8 *bytes = sim_payload(s, ep, rq);

	if (d->handler != 1 + k || d->len != len ||
	    (d->flags & VNET_DESC_FROM_SEG) || d->src_offset)
		return false;
	if (k == XFER || k == XFER_SEG) {
		if (!(d->flags & VNET_DESC_XFER) || d->offset != where)
			return false;
		bytes = s->ep[ep].fw.seg + where;
	}
	return frag_same(bytes, len, seed(c, n, salt));
}

/*
 * A request ends once: answered, or it or its reply back with a reason.
 * "Unreachable" says the receiver may have it all the same (its ACK was
 * lost): that is the one return that may come with an answer too.
 */
static void ended(struct flow *f, u32 c, u32 n, u32 r, u8 status)
{
	u32 k = c * f->per_client + n;

	if (c >= f->nr || n >= f->per_client || r >= REGIONS) {
		f->bad++;
		return;
	}
	if (status == VNET_RET_UNREACHABLE)
		f->unreachable[k]++;
	else if (f->ended[k]++)
		f->bad++;
	if (f->ended[k] + f->unreachable[k] > 1)
		return;
	f->busy[c * REGIONS + r] = 0;
	f->replies[c]++;
}

static void serve(struct sim_net *net, struct flow *f, u32 i)
{
	struct sim_nic *s = net->nic[i];
	const struct vnet_desc *d;

	/* A reply that came back ends its request as well. */
	while ((d = sim_peek(s, 1, VNET_Q_REP_RECV))) {
		f->returned++;
		if (!(d->flags & VNET_DESC_RETURNED))
			f->bad++;
		ended(f, d->args[0], d->args[1], d->args[2], d->status);
		sim_consume(s, 1, VNET_Q_REP_RECV);
	}

	while ((d = sim_peek(s, 1, VNET_Q_REQ_RECV))) {
		u32 c = d->args[0], n = d->args[1], r = d->args[2];
		u64 base = (u64)f->local[c] * REGIONS * f->area;
		u64 src = (u64)f->clients[i] * REGIONS * f->area + base +
			  r * f->area;
		enum kind k = reply_kind(n);
		struct vnet_desc rep;

		if (c >= f->nr || n >= f->per_client || r >= REGIONS ||
		    f->target[c] != i) {
			f->bad++;
			sim_consume(s, 1, VNET_Q_REQ_RECV);
			continue;
		}
		rep = message(f, k, c, n, r, 1);
		rep.token = d->token;
		if (k == XFER_SEG) {
			rep.src_offset = src;
			rep.offset = r * f->area;
			frag_fill(s->ep[1].fw.seg + src, rep.len, seed(c, n, 1));
		}
		if (sim_post(s, 1, VNET_Q_REP_SEND, &rep, NULL)) {
			/* Queue full: the request waits for the next turn. */
			break;
		}
		if (k == MEDIUM) {
			u32 idx = (s->ep[1].send_prod[1] - 1) %
				  VNET_QUEUE_DEPTH;

			frag_fill(s->ep[1].staging +
				  VNET_STAGING_SLOT(VNET_Q_REP_SEND, idx),
				  rep.len, seed(c, n, 1));
		}
		if (f->seen[c * f->per_client + n]++ ||
		    !arrived_whole(f, s, 1, VNET_Q_REQ_RECV, d,
				   request_kind(n), base + r * f->area, 0))
			f->bad++;
		sim_consume(s, 1, VNET_Q_REQ_RECV);
	}
}

static void client(struct sim_net *net, struct flow *f, u32 c)
{
	struct sim_nic *s = net->nic[c];
	const struct vnet_desc *d;
	u32 r;

	while ((d = sim_peek(s, 0, VNET_Q_REP_RECV))) {
		u32 n = d->args[1];

		r = d->args[2];
		if (d->flags & VNET_DESC_RETURNED) {
			f->returned++;
		} else if (d->args[0] != c || n >= f->per_client ||
			   r >= REGIONS || !f->busy[c * REGIONS + r] ||
			   f->answered[c * f->per_client + n]++ ||
			   !arrived_whole(f, s, 0, VNET_Q_REP_RECV, d,
					  reply_kind(n), r * f->area, 1)) {
			f->bad++;
		}
		ended(f, c, n, r, d->status);
		sim_consume(s, 0, VNET_Q_REP_RECV);
	}
	while (f->sent[c] < f->per_client) {
		u32 n = f->sent[c];
		enum kind k = request_kind(n);
		struct vnet_desc q;
		u64 at;

		for (r = 0; r < REGIONS && f->busy[c * REGIONS + r]; r++)
			;
		if (r == REGIONS)
			break;
		q = message(f, k, c, n, r, 0);
		q.offset = (u64)f->local[c] * REGIONS * f->area + r * f->area;
		at = (u64)(REGIONS + r) * f->area;
		if (k == XFER_SEG) {
			q.src_offset = at;
			frag_fill(s->ep[0].fw.seg + at, q.len, seed(c, n, 0));
		}
		if (k != XFER && k != XFER_SEG)
			q.offset = 0;
		if (k == MEDIUM || k == XFER) {
			u8 *tmp = malloc(VNET_MEDIUM_MAX);

			frag_fill(tmp, q.len, seed(c, n, 0));
			r = sim_post(s, 0, VNET_Q_REQ_SEND, &q, tmp) ? REGIONS : r;
			free(tmp);
		} else if (sim_post(s, 0, VNET_Q_REQ_SEND, &q, NULL)) {
			r = REGIONS;
		}
		if (r == REGIONS)
			break;
		f->busy[c * REGIONS + r] = 1;
		f->sent[c]++;
	}
}

static bool flow_done(struct sim_net *net, void *arg)
{
	struct flow *f = arg;
	u32 i;

	for (i = 0; i < f->nr; i++) {
		client(net, f, i);
		serve(net, f, i);
	}
	for (i = 0; i < f->nr; i++)
		if (f->replies[i] < f->per_client)
			return false;
	return true;
}

FIXTURE(lossy) {
	struct sim_net net;
	struct flow f;
};

FIXTURE_VARIANT(lossy) {
	u32 nics, per_client, area;
	u32 loss, dup, reorder, corrupt;
	bool mixed_mtu;
	/*
	 * Receivers that give a train up after four quanta without a
	 * fragment: trains restart under loss, and messages refused that
	 * long come back -- each request still ends, and no message is
	 * delivered twice, or both delivered and back "busy".
	 */
	bool impatient;
	/* Trains from a segment copied into pool buffers, not zero copy. */
	bool copied;
	u32 seed;
};

FIXTURE_VARIANT_ADD(lossy, two_nics_clean) {
	.nics = 2, .per_client = 200, .area = 64 << 10, .seed = 1,
};

FIXTURE_VARIANT_ADD(lossy, two_nics_30pct_loss) {
	.nics = 2, .per_client = 60, .area = 64 << 10, .loss = 300, .seed = 2,
};

FIXTURE_VARIANT_ADD(lossy, sixteen_nics_everything) {
	.nics = 16, .per_client = 24, .area = 32 << 10, .loss = 200,
	.dup = 50, .reorder = 50, .corrupt = 10, .mixed_mtu = true, .seed = 3,
};

FIXTURE_VARIANT_ADD(lossy, sixteen_nics_dup_reorder) {
	.nics = 16, .per_client = 24, .area = 32 << 10, .dup = 300,
	.reorder = 300, .mixed_mtu = true, .seed = 4,
};

FIXTURE_VARIANT_ADD(lossy, sixteen_nics_everything_copied) {
	.nics = 16, .per_client = 24, .area = 32 << 10, .loss = 200,
	.dup = 50, .reorder = 50, .corrupt = 10, .mixed_mtu = true,
	.copied = true, .seed = 8,
};

FIXTURE_VARIANT_ADD(lossy, two_nics_30pct_loss_impatient) {
	.nics = 2, .per_client = 60, .area = 64 << 10, .loss = 300,
	.impatient = true, .seed = 6,
};

FIXTURE_VARIANT_ADD(lossy, sixteen_nics_everything_impatient) {
	.nics = 16, .per_client = 24, .area = 32 << 10, .loss = 200,
	.dup = 50, .reorder = 50, .corrupt = 10, .mixed_mtu = true,
	.impatient = true, .seed = 7,
};

FIXTURE_VARIANT_ADD(lossy, many_nics_everything) {
	.nics = 256, .per_client = 4, .area = 12 << 10, .loss = 200,
	.dup = 50, .reorder = 50, .corrupt = 10, .mixed_mtu = true, .seed = 5,
};

static u64 restarts_of(struct sim_net *net)
{
	u64 n = 0;
	u32 i;

	for (i = 0; i < net->nr; i++)
		n += net->nic[i]->fw.stats.rx_nack[VNET_NACK_RESTART];
	return n;
}

FIXTURE_SETUP(lossy)
{
	struct flow *f = &self->f;
	u32 i, n = variant->nics;

	sim_net_init(&self->net, n, 2, variant->seed);
	self->net.loss = variant->loss;
	self->net.dup = variant->dup;
	self->net.reorder = variant->reorder;
	self->net.corrupt = variant->corrupt;
	f->nr = n;
	f->per_client = variant->per_client;
	f->area = variant->area;
	f->target = calloc(n, sizeof(u32));
	f->local = calloc(n, sizeof(u32));
	f->clients = calloc(n, sizeof(u32));
	f->sent = calloc(n, sizeof(u32));
	f->replies = calloc(n, sizeof(u32));
	f->seen = calloc(n * f->per_client, 1);
	f->answered = calloc(n * f->per_client, 1);
	f->ended = calloc(n * f->per_client, 1);
	f->unreachable = calloc(n * f->per_client, 1);
	f->busy = calloc(n * REGIONS, 1);
	/* A fixed pattern, so each run is the same run. */
	for (i = 0; i < n; i++) {
		u32 t = (i * 7 + 3) % n;

		f->target[i] = t == i ? (i + 1) % n : t;
		f->local[i] = f->clients[f->target[i]]++;
	}
	for (i = 0; i < n; i++) {
		struct sim_nic *s = self->net.nic[i];

		s->fw.max_retries = 255;
		s->fw.zero_copy = !variant->copied;
		if (variant->impatient)
			s->fw.busy_timeout = 4 * s->fw.quantum;
		/* Links from the smallest a train needs to jumbo frames. */
		s->fw.mtu = 1500;
		if (variant->mixed_mtu)
			s->fw.mtu = VNET_WIRE_TRAIN_MTU +
				    hash(i, 0, 9) % (9000 - VNET_WIRE_TRAIN_MTU);
		s->ep[1].fw.tag = TAG;
		sim_map(s, 0, 0, f->target[i], 1, TAG);
		frag_give_seg(s, 0, 2 * REGIONS * f->area);
		frag_give_seg(s, 1, 2ull * REGIONS * f->area *
				    (f->clients[i] ? f->clients[i] : 1));
	}
}

FIXTURE_TEARDOWN(lossy)
{
	struct flow *f = &self->f;

	frag_free_segs(&self->net);
	sim_net_fini(&self->net);
	free(f->target);
	free(f->local);
	free(f->clients);
	free(f->sent);
	free(f->replies);
	free(f->seen);
	free(f->answered);
	free(f->ended);
	free(f->unreachable);
	free(f->busy);
}

TEST_F_TIMEOUT(lossy, trains_arrive_exactly_once_and_whole, 300)
{
	struct flow *f = &self->f;
	u64 trains = 0, frags = 0, bad_frames = 0, restarts = 0;
	u32 i, k;

	ASSERT_TRUE(frag_run_until(&self->net, flow_done, f, 400000000));
	/* The last answers' ACKs may still be on their way, or lost. */
	for (i = 0; i < 100000 && !frag_all_quiet(&self->net); i++)
		sim_net_step(&self->net, 20);
	EXPECT_TRUE(frag_all_quiet(&self->net));
	EXPECT_EQ(0, f->bad);
	for (k = 0; k < f->nr * f->per_client; k++) {
		ASSERT_LE(1, f->ended[k] + f->unreachable[k]);
		ASSERT_GE(1, f->seen[k]);
		ASSERT_GE(1, f->answered[k]);
		if (variant->impatient)
			continue;
		ASSERT_EQ(1, f->seen[k]);
		ASSERT_EQ(1, f->answered[k]);
	}
	if (!variant->impatient)
		EXPECT_EQ(0, f->returned);
	if (variant->impatient)
		EXPECT_LT(0, restarts_of(&self->net));
	for (i = 0; i < f->nr; i++) {
		struct vnet_fw_nic_stats *st = &self->net.nic[i]->fw.stats;

		trains += st->rx_trains;
		frags += st->tx_frags;
		bad_frames += st->bad_frames;
		restarts += st->rx_nack[VNET_NACK_RESTART];
	}
	EXPECT_LT(f->nr * f->per_client / 2, trains);
	if (variant->corrupt)
		EXPECT_LT(0, bad_frames);
	TH_LOG("%llu trains in %llu fragments, %llu restarted, %u returned; "
	       "%llu packets, %llu lost, %llu duplicated, %llu corrupted",
	       (unsigned long long)trains, (unsigned long long)frags,
	       (unsigned long long)restarts, f->returned,
	       (unsigned long long)self->net.sent,
	       (unsigned long long)self->net.lost,
	       (unsigned long long)self->net.duplicated,
	       (unsigned long long)self->net.corrupted);
}

/* Two NICs on a 1500-byte Ethernet; NIC 0's endpoint 0 talks to NIC 1's 1. */
FIXTURE(pair) {
	struct sim_net net;
};

FIXTURE_SETUP(pair)
{
	sim_net_init_pair(&self->net, TAG);
	self->net.nic[0]->fw.mtu = 1500;
	self->net.nic[1]->fw.mtu = 1500;
	frag_give_seg(self->net.nic[0], 0, 2 * VNET_XFER_MAX);
	frag_give_seg(self->net.nic[1], 1, 2 * VNET_XFER_MAX);
}

FIXTURE_TEARDOWN(pair)
{
	frag_free_segs(&self->net);
	sim_net_fini(&self->net);
}

/*
 * The largest XFER there is, from the client's segment to the server's and
 * back as a reply, at MTU 1500: whole and once each way, never visible
 * before its last fragment, and the send queue entry taken only once the
 * message is delivered.
 */
TEST_F(pair, megabyte_request_and_reply)
{
	struct sim_nic *a = self->net.nic[0], *b = self->net.nic[1];
	struct vnet_desc d = frag_xfer_seg(VNET_XFER_MAX, VNET_XFER_MAX, 0);
	const struct vnet_desc *got = NULL;
	u64 start = self->net.now, took;
	u32 steps = 0;

	frag_fill(a->ep[0].fw.seg + VNET_XFER_MAX, VNET_XFER_MAX, 11);
	ASSERT_EQ(0, sim_post(a, 0, VNET_Q_REQ_SEND, &d, NULL));
	while (!(got = sim_peek(b, 1, VNET_Q_REQ_RECV))) {
		ASSERT_GT(2000000, ++steps);
		sim_net_step(&self->net, 20);
		/* Its entry stays until it is delivered: the source is read. */
		ASSERT_EQ(0, a->ep[0].frame->cons[VNET_Q_REQ_SEND].val);
	}
	took = self->net.now - start;
	EXPECT_EQ(VNET_XFER_MAX, got->len);
	EXPECT_EQ(VNET_DESC_XFER, got->flags);
	EXPECT_EQ(0, got->offset);
	EXPECT_TRUE(frag_same(b->ep[1].fw.seg, VNET_XFER_MAX, 11));
	sim_net_run_for(&self->net, 500);
	EXPECT_EQ(1, a->ep[0].frame->cons[VNET_Q_REQ_SEND].val);
	EXPECT_EQ(1, b->fw.stats.rx_trains);
	TH_LOG("1 MiB in %llu fragments, %llu time units (a round trip is %llu)",
	       (unsigned long long)a->fw.stats.tx_frags,
	       (unsigned long long)took,
	       (unsigned long long)(2 * self->net.delay));
	EXPECT_LE(VNET_XFER_MAX / (1500 - VNET_WIRE_FRAG_LEN),
		  a->fw.stats.tx_frags);

	/* Back, as the reply, from the server's segment to the client's. */
	d = frag_xfer_seg(VNET_XFER_MAX, VNET_XFER_MAX, 0);
	d.token = got->token;
	frag_fill(b->ep[1].fw.seg + VNET_XFER_MAX, VNET_XFER_MAX, 12);
	sim_consume(b, 1, VNET_Q_REQ_RECV);
	ASSERT_EQ(0, sim_post(b, 1, VNET_Q_REP_SEND, &d, NULL));
	for (steps = 0; !(got = sim_peek(a, 0, VNET_Q_REP_RECV)); steps++) {
		ASSERT_GT(2000000, steps);
		sim_net_step(&self->net, 20);
	}
	EXPECT_EQ(VNET_XFER_MAX, got->len);
	EXPECT_EQ(VNET_DESC_XFER | VNET_DESC_REPLY, got->flags);
	EXPECT_TRUE(frag_same(a->ep[0].fw.seg, VNET_XFER_MAX, 12));
	sim_consume(a, 0, VNET_Q_REP_RECV);
	sim_net_run_for(&self->net, 500);
	EXPECT_EQ(NULL, sim_peek(a, 0, VNET_Q_REP_RECV));
	EXPECT_EQ(NULL, sim_peek(b, 1, VNET_Q_REQ_RECV));
	EXPECT_TRUE(frag_all_quiet(&self->net));
}

/* One XFER_MAX request from the client's segment, delivered. */
static void send_megabyte(struct __test_metadata *_metadata,
			  struct sim_net *net, u32 seed)
{
	struct sim_nic *a = net->nic[0], *b = net->nic[1];
	struct vnet_desc d = frag_xfer_seg(VNET_XFER_MAX, VNET_XFER_MAX, 0);
	u32 steps = 0;

	frag_fill(a->ep[0].fw.seg + VNET_XFER_MAX, VNET_XFER_MAX, seed);
	ASSERT_EQ(0, sim_post(a, 0, VNET_Q_REQ_SEND, &d, NULL));
	while (!sim_peek(b, 1, VNET_Q_REQ_RECV)) {
		ASSERT_GT(2000000, ++steps);
		sim_net_step(net, 20);
	}
	EXPECT_TRUE(frag_same(b->ep[1].fw.seg, VNET_XFER_MAX, seed));
	sim_consume(b, 1, VNET_Q_REQ_RECV);
	sim_net_run_for(net, 500);
	EXPECT_TRUE(frag_all_quiet(net));
}

/*
 * Copies per byte of an XFER from the sender's segment: none on the way
 * out with zero copy, its fragments sent from the segment itself, one
 * into a pool buffer without; one on the way in, into the receiver's
 * segment, either way.
 */
TEST_F(pair, megabyte_from_the_segment_copied_once)
{
	struct vnet_fw_nic_stats *tx = &self->net.nic[0]->fw.stats;
	struct vnet_fw_nic_stats *rx = &self->net.nic[1]->fw.stats;

	send_megabyte(_metadata, &self->net, 21);
	EXPECT_EQ(0, tx->copied_bytes);
	EXPECT_LE(VNET_XFER_MAX, tx->tx_seg_bytes);
	if (!tx->retransmits)
		EXPECT_EQ(VNET_XFER_MAX, tx->tx_seg_bytes);
	EXPECT_EQ(VNET_XFER_MAX, rx->copied_bytes);

	self->net.nic[0]->fw.zero_copy = false;
	tx->tx_seg_bytes = 0;
	rx->copied_bytes = 0;
	send_megabyte(_metadata, &self->net, 22);
	EXPECT_LE(VNET_XFER_MAX, tx->copied_bytes);
	EXPECT_EQ(0, tx->tx_seg_bytes);
	EXPECT_EQ(VNET_XFER_MAX, rx->copied_bytes);
}

/*
 * Zero copy: a fragment sent again is sent as its source is then, with a
 * checksum of those bytes, not of the ones it was first sent with: the
 * receiver takes it rather than drop it as corrupt, finds the train's
 * checksum wrong at its end, and has it start over, which then carries
 * the new bytes whole.
 */
TEST_F(pair, a_source_changed_under_its_train_arrives_as_it_is_now)
{
	struct sim_nic *a = self->net.nic[0], *b = self->net.nic[1];
	struct vnet_desc d = frag_xfer_seg(64 << 10, VNET_XFER_MAX, 0);
	u8 *src = a->ep[0].fw.seg + VNET_XFER_MAX;
	u32 steps = 0;

	frag_fill(src, 64 << 10, 31);
	ASSERT_EQ(0, sim_post(a, 0, VNET_Q_REQ_SEND, &d, NULL));
	/* The first fragments go, and are lost. */
	self->net.mute[0] = true;
	sim_net_run_for(&self->net, 10);
	ASSERT_LT(0, a->fw.stats.tx_seg_bytes);
	self->net.mute[0] = false;
	frag_fill(src, 64 << 10, 32);
	while (!sim_peek(b, 1, VNET_Q_REQ_RECV)) {
		ASSERT_GT(2000000, ++steps);
		sim_net_step(&self->net, 20);
	}
	EXPECT_TRUE(frag_same(b->ep[1].fw.seg, 64 << 10, 32));
	EXPECT_EQ(0, b->fw.stats.bad_frames);
	EXPECT_EQ(1, b->fw.stats.rx_trains);
	sim_consume(b, 1, VNET_Q_REQ_RECV);
}

struct sweep {
	struct sim_nic *a, *b;
	u32 next, got, last, bad;
	enum kind kind;
};

/* Size of message n of a sweep: every one, or every one near a boundary. */
static u32 sweep_size(const struct sweep *w, u32 n)
{
	/* XFERs from the segment: around each of the first fragments' ends. */
	static const u32 near[] = { 0, 1, 2, 1387, 1388, 1389, 2847, 2848,
				    2849, 4307, 4308 };
	u32 room = 1500 - VNET_WIRE_FRAG_LEN;

	if (w->kind != XFER_SEG)
		return n;
	if (n < ARRAY_SIZE(near) * 8)
		return VNET_MEDIUM_MAX + 1 +
		       (n / ARRAY_SIZE(near)) * room + near[n % ARRAY_SIZE(near)];
	/* Then large ones, as large as a landing area (a quarter MiB). */
	return VNET_XFER_MAX / 4 - (n - ARRAY_SIZE(near) * 8) * 4099;
}

static bool sweep_done(struct sim_net *net, void *arg)
{
	struct sweep *w = arg;
	const struct vnet_desc *d;

	while ((d = sim_peek(w->b, 1, VNET_Q_REQ_RECV))) {
		u32 n = d->args[0], len = sweep_size(w, n);
		const u8 *bytes = sim_payload(w->b, 1, VNET_Q_REQ_RECV);

		if (w->kind == XFER_SEG)
			bytes = w->b->ep[1].fw.seg + (n % 4) * VNET_XFER_MAX / 4;
		if (d->len != len || n != w->got || !frag_same(bytes, len, n))
			w->bad++;
		w->got++;
		sim_consume(w->b, 1, VNET_Q_REQ_RECV);
	}
	/* One at a time for XFERs, which share four landing areas. */
	while (w->next <= w->last && (w->kind != XFER_SEG || w->next == w->got)) {
		struct vnet_desc q = sim_request(w->next);
		u32 len = sweep_size(w, w->next), area = VNET_XFER_MAX / 4;
		u8 *tmp = malloc(VNET_MEDIUM_MAX);
		int err;

		if (w->kind == XFER_SEG) {
			q = frag_xfer_seg(len, VNET_XFER_MAX,
					  (w->next % 4) * area);
			q.args[0] = w->next;
			frag_fill(w->a->ep[0].fw.seg + VNET_XFER_MAX, len,
				  w->next);
			err = sim_post(w->a, 0, VNET_Q_REQ_SEND, &q, NULL);
		} else {
			q.flags = VNET_DESC_MEDIUM;
			q.len = len;
			frag_fill(tmp, len, w->next);
			err = sim_post(w->a, 0, VNET_Q_REQ_SEND, &q, tmp);
		}
		free(tmp);
		if (err)
			break;
		w->next++;
	}
	return w->got > w->last;
}

/*
 * Every medium size from 0 to VNET_MEDIUM_MAX -- one packet up to 1404
 * bytes at MTU 1500, a train from 1405 -- and XFERs from the segment at
 * every size around the ends of their first fragments, and large ones:
 * each arrives once, whole, in order since they go one at a time or, for
 * mediums, on channels that take them in turn.
 */
TEST_F_TIMEOUT(pair, every_size, 120)
{
	struct sweep w = { .a = self->net.nic[0], .b = self->net.nic[1] };
	struct vnet_desc d;

	w.kind = MEDIUM;
	w.last = VNET_MEDIUM_MAX;
	/* Ordered arrival: one channel, so check the order too. */
	self->net.nic[0]->fw.nchannels = 1;
	ASSERT_TRUE(frag_run_until(&self->net, sweep_done, &w, 100000000));
	EXPECT_EQ(0, w.bad);
	EXPECT_EQ(VNET_MEDIUM_MAX - 1404, self->net.nic[1]->fw.stats.rx_trains);

	w = (struct sweep){ .a = self->net.nic[0], .b = self->net.nic[1] };
	w.kind = XFER_SEG;
	w.last = 11 * 8 + 20;
	ASSERT_TRUE(frag_run_until(&self->net, sweep_done, &w, 100000000));
	EXPECT_EQ(0, w.bad);

	/* Not one byte more than there is, from staging or the segment. */
	d = frag_xfer_seg(VNET_XFER_MAX + 1, 0, 0);
	ASSERT_EQ(0, sim_post(w.a, 0, VNET_Q_REQ_SEND, &d, NULL));
	d = sim_request(1);
	d.flags = VNET_DESC_XFER;
	d.len = VNET_MEDIUM_MAX + 1;
	ASSERT_EQ(0, sim_post(w.a, 0, VNET_Q_REQ_SEND, &d, NULL));
	sim_net_run_for(&self->net, 1000);
	EXPECT_EQ(VNET_RET_BAD_DESC, sim_peek(w.a, 0, VNET_Q_REP_RECV)->status);
	sim_consume(w.a, 0, VNET_Q_REP_RECV);
	EXPECT_EQ(VNET_RET_BAD_DESC, sim_peek(w.a, 0, VNET_Q_REP_RECV)->status);
	EXPECT_TRUE(frag_all_quiet(&self->net));
}

TEST_HARNESS_MAIN
