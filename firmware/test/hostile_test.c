// SPDX-License-Identifier: GPL-2.0
/*
 * The transport against receivers and hosts that do not play along: a
 * receiver that never drains, floods of forged and stale ACKs, NACKs,
 * RESUMEs and SYNCs from the right and the wrong Ethernet address, and
 * routes taken away and added back with messages in flight.
 */
#include <stdlib.h>

#include "kselftest_harness.h"
#include "wire_sim.h"

#define TAG		0x99ULL
#define CLIENTS		3		/* well-behaved pairs */
#define STUCK_SENDER	CLIENTS		/* first of them on NIC 0 */
#define MAX_STUCK_SENDERS 3
#define STUCK		(CLIENTS + 1)	/* endpoint on NIC 1 that never drains */
#define EPS		(CLIENTS + MAX_STUCK_SENDERS + 1)

/* A packet to NIC @to that claims to come from the Ethernet address @mac. */
static void inject(struct sim_net *net, u32 to, const u8 *mac, void *pkt,
		   u32 len)
{
	struct vnet_wire_hdr *h = pkt;

	h->csum = 0;
	h->csum = htobe32(vnet_crc32c(0, pkt, len));
	sim_net_inject(net, to, mac, pkt, len);
}

struct pairs {
	u32 round_trips[CLIENTS];
	u32 outstanding[CLIENTS];
	u32 busy, other_returns;
	u64 first_busy_at;
};

/*
 * Clients 0..CLIENTS-1 of NIC 0 each keep one request to server i + 1 of
 * NIC 1; @flooders endpoints from STUCK_SENDER on keep their send queues
 * full of requests to STUCK, which takes nothing.
 */
static void drive(struct sim_net *net, struct pairs *t, u32 flooders,
		  bool read_returns)
{
	struct sim_nic *a = net->nic[0], *b = net->nic[1];
	const struct vnet_desc *d;
	u32 i, s;

	for (i = 1; i <= CLIENTS; i++) {
		while ((d = sim_peek(b, i, VNET_Q_REQ_RECV))) {
			struct vnet_desc r = { .handler = 2, .token = d->token };

			if (sim_post(b, i, VNET_Q_REP_SEND, &r, NULL))
				break;
			sim_consume(b, i, VNET_Q_REQ_RECV);
		}
	}
	for (i = 0; i < CLIENTS; i++) {
		while ((d = sim_peek(a, i, VNET_Q_REP_RECV))) {
			if (d->flags & VNET_DESC_RETURNED)
				t->other_returns++;
			t->round_trips[i]++;
			t->outstanding[i]--;
			sim_consume(a, i, VNET_Q_REP_RECV);
		}
		if (!t->outstanding[i]) {
			struct vnet_desc q = sim_request(i);

			if (!sim_post(a, i, VNET_Q_REQ_SEND, &q, NULL))
				t->outstanding[i]++;
		}
	}
	for (s = STUCK_SENDER; s < STUCK_SENDER + MAX_STUCK_SENDERS; s++) {
		while (read_returns &&
		       (d = sim_peek(a, s, VNET_Q_REP_RECV))) {
			if (d->status == VNET_RET_BUSY) {
				if (!t->busy++)
					t->first_busy_at = net->now;
			} else {
				t->other_returns++;
			}
			sim_consume(a, s, VNET_Q_REP_RECV);
		}
		while (s < STUCK_SENDER + flooders) {
			struct vnet_desc q = sim_request(99);

			q.slot = 1;
			if (sim_post(a, s, VNET_Q_REQ_SEND, &q, NULL))
				break;
		}
	}
}

static void pairs_setup(struct sim_net *net)
{
	u32 i;

	sim_net_init(net, 2, EPS, 11);
	for (i = 1; i <= STUCK; i++)
		net->nic[1]->ep[i].fw.tag = TAG;
	for (i = 0; i < CLIENTS; i++)
		sim_map(net->nic[0], i, 0, 1, i + 1, TAG);
	for (i = 0; i < MAX_STUCK_SENDERS; i++)
		sim_map(net->nic[0], STUCK_SENDER + i, 1, 1, STUCK, TAG);
}

/* Channels of NIC 0 to NIC 1 that carry or return a message for STUCK. */
static u32 channels_to_stuck(struct sim_net *net)
{
	struct vnet_fw_nic *fw = &net->nic[0]->fw;
	struct vnet_fw_peer *p = &fw->peers[fw->peer_of[1]];
	u32 c, held = 0;

	for (c = 0; c < fw->nchannels; c++)
		held += p->tx[c].state != VNET_CHAN_FREE &&
			p->tx[c].msg.peer.ep == STUCK;
	return held;
}

/*
 * One receiver never drains while three other endpoints of its NIC keep
 * exchanging messages with the sender's NIC: they keep their rate, and the
 * stuck one's messages come back "busy" within busy_timeout.  However many
 * endpoints send to the stuck one, it never holds more than its share of
 * the channels, half of them: each sender is held to half, and so is each
 * destination, before any NACK from it has come back.
 */
FIXTURE(stuck) {
	struct sim_net net;
};

FIXTURE_VARIANT(stuck) {
	u32 senders;
};

FIXTURE_VARIANT_ADD(stuck, one_sender) {
	.senders = 1,
};

FIXTURE_VARIANT_ADD(stuck, two_senders) {
	.senders = 2,
};

FIXTURE_VARIANT_ADD(stuck, three_senders) {
	.senders = 3,
};

FIXTURE_SETUP(stuck)
{
	pairs_setup(&self->net);
}

FIXTURE_TEARDOWN(stuck)
{
	sim_net_fini(&self->net);
}

TEST_F(stuck, receiver_does_not_block_others)
{
	struct sim_net *net = &self->net;
	struct pairs alone = {}, stuck = {};
	u32 i, share, held, most = 0;
	u64 span, start, bound;

	span = 3 * net->nic[0]->fw.busy_timeout;
	for (start = net->now; net->now - start < span;) {
		drive(net, &alone, 0, true);
		sim_net_step(net, 20);
	}
	sim_net_fini(net);

	pairs_setup(net);
	share = (net->nic[0]->fw.nchannels + 1) / 2;
	bound = net->nic[0]->fw.busy_timeout + 3 * net->nic[0]->fw.quantum;
	for (start = net->now; net->now - start < span;) {
		drive(net, &stuck, variant->senders, true);
		sim_net_step(net, 20);
		held = channels_to_stuck(net);
		most = held > most ? held : most;
	}

	for (i = 0; i < CLIENTS; i++) {
		TH_LOG("client %u: %u round trips alone, %u beside a stuck receiver",
		       i, alone.round_trips[i], stuck.round_trips[i]);
		EXPECT_LT(100, alone.round_trips[i]);
		/* Their normal rate: within 5 %. */
		EXPECT_GE(stuck.round_trips[i] * 100, alone.round_trips[i] * 95);
	}
	TH_LOG("the stuck receiver held at most %u of %u channels", most,
	       net->nic[0]->fw.nchannels);
	EXPECT_LE(most, share);
	EXPECT_EQ(0, stuck.other_returns);
	ASSERT_LT(0, stuck.busy);
	EXPECT_LE(stuck.first_busy_at - start, bound);
	TH_LOG("first \"busy\" return after %llu (bound %llu), %u in all",
	       (unsigned long long)(stuck.first_busy_at - start),
	       (unsigned long long)bound, stuck.busy);
	EXPECT_EQ(0, net->nic[1]->ep[STUCK].fw.stats.received -
		     VNET_QUEUE_DEPTH);
}

/*
 * A server NIC pages: most of its endpoints are off the card, and every
 * client of one keeps a request out to it, NACKed "not resident", until
 * the endpoint comes back.  One such request per endpoint, from as many
 * senders as there are channels, must not take every channel to that NIC:
 * the clients of the endpoints that are on the card keep their rate.
 */
#define AWAY_SENDERS	(2 * SIM_CHANNELS)
#define AWAY_EPS	(AWAY_SENDERS + 2)

/* Client 0 of NIC 0 keeps one request out to server 1 of NIC 1. */
static u32 ping(struct sim_net *net, u32 *outstanding)
{
	struct sim_nic *a = net->nic[0], *b = net->nic[1];
	const struct vnet_desc *d;
	u32 done = 0;

	while ((d = sim_peek(b, 1, VNET_Q_REQ_RECV))) {
		struct vnet_desc r = { .handler = 2, .token = d->token };

		if (sim_post(b, 1, VNET_Q_REP_SEND, &r, NULL))
			break;
		sim_consume(b, 1, VNET_Q_REQ_RECV);
	}
	while ((d = sim_peek(a, 0, VNET_Q_REP_RECV))) {
		done += !(d->flags & VNET_DESC_RETURNED);
		(*outstanding)--;
		sim_consume(a, 0, VNET_Q_REP_RECV);
	}
	if (!*outstanding) {
		struct vnet_desc q = sim_request(0);

		if (!sim_post(a, 0, VNET_Q_REQ_SEND, &q, NULL))
			(*outstanding)++;
	}
	return done;
}

/* Round trips of client 0 in @span, beside @away paged-out receivers. */
static u32 ping_beside_away(struct __test_metadata *_metadata, u32 away,
			    u64 span)
{
	struct sim_net net;
	struct sim_nic *a, *b;
	u32 i, outstanding = 0, done = 0;
	u64 start;

	sim_net_init(&net, 2, AWAY_EPS, 31);
	a = net.nic[0];
	b = net.nic[1];
	b->auto_fault = false;
	for (i = 1; i < AWAY_EPS; i++)
		b->ep[i].fw.tag = TAG;
	sim_map(a, 0, 0, 1, 1, TAG);
	for (i = 0; i < away; i++) {
		sim_map(a, i + 1, 0, 1, i + 2, TAG);
		sim_unload(b, i + 2);
	}
	/* The client talks first: its server has taken a message from us. */
	while (!done && net.now < span)
		done = ping(&net, &outstanding), sim_net_step(&net, 20);
	ASSERT_EQ(1, done);
	for (i = 0; i < away; i++) {
		struct vnet_desc q = sim_request(i + 1);

		ASSERT_EQ(0, sim_post(a, i + 1, VNET_Q_REQ_SEND, &q, NULL));
	}
	done = 0;
	for (start = net.now; net.now - start < span;) {
		done += ping(&net, &outstanding);
		sim_net_step(&net, 20);
	}
	if (away) {
		struct vnet_fw_peer *p = &a->fw.peers[a->fw.peer_of[1]];
		u32 c, held = 0;

		for (c = 0; c < a->fw.nchannels; c++)
			held += p->tx[c].state == VNET_CHAN_INFLIGHT &&
				p->tx[c].refused;
		TH_LOG("%u of %u channels held by refused messages", held,
		       a->fw.nchannels);
		EXPECT_LE(held, (a->fw.nchannels + 1) / 2);
		EXPECT_LT(0, held);
	}
	sim_net_fini(&net);
	return done;
}

TEST(paged_out_receivers_leave_channels_to_resident_ones)
{
	/* Well short of busy_timeout: nothing refused comes back. */
	u64 span = 20 * 1000;
	u32 alone, beside;

	alone = ping_beside_away(_metadata, 0, span);
	beside = ping_beside_away(_metadata, AWAY_SENDERS, span);
	TH_LOG("round trips: %u alone, %u beside %u paged-out receivers",
	       alone, beside, AWAY_SENDERS);
	EXPECT_LT(50, alone);
	EXPECT_GE(beside * 100, alone * 95);
}

FIXTURE(forged) {
	struct sim_net net;
	u8 mac[3][6];
};

/* NIC 0 talks to NIC 1; NIC 2 exists, routed, but is the attacker's id. */
FIXTURE_SETUP(forged)
{
	u32 i;

	sim_net_init(&self->net, 3, 2, 21);
	for (i = 0; i < 3; i++)
		sim_mac(i, self->mac[i]);
	self->net.nic[1]->ep[1].fw.tag = TAG;
	sim_map(self->net.nic[0], 0, 0, 1, 1, TAG);
}

FIXTURE_TEARDOWN(forged)
{
	sim_net_fini(&self->net);
}

/* A RESUME to NIC 0 from @src_nic, for its endpoint @ep. */
static u32 forge_resume(u8 *buf, u32 src_nic, u32 incarnation, u32 ep)
{
	struct vnet_wire_hdr *h = (void *)buf;
	struct vnet_wire_resume *r = (void *)(h + 1);

	memset(buf, 0, VNET_WIRE_RESUME_LEN);
	h->version = VNET_WIRE_VERSION;
	h->type = VNET_WIRE_RESUME;
	h->src_nic = htobe16(src_nic);
	h->dst_nic = htobe16(0);
	h->incarnation = htobe32(incarnation);
	r->ep = htobe32(ep);
	return VNET_WIRE_RESUME_LEN;
}

/* A DATA, ACK, NACK, RESUME or SYNC DATA packet from @src_nic to NIC 0. */
static u32 forge(u8 *buf, u32 *seed, u32 src_nic)
{
	struct vnet_wire_hdr *h = (void *)buf;
	struct vnet_wire_msg *w = (void *)(h + 1);
	u32 kind = sim_rand(seed) % 5;

	if (kind == 4)
		return forge_resume(buf, src_nic, sim_rand(seed),
				    sim_rand(seed) % 2);
	memset(buf, 0, VNET_WIRE_DATA_LEN);
	h->version = VNET_WIRE_VERSION;
	h->type = kind == 0 ? VNET_WIRE_ACK : kind == 1 ? VNET_WIRE_NACK :
							  VNET_WIRE_DATA;
	h->flags = kind == 3 ? VNET_WIRE_SYNC : 0;
	h->channel = sim_rand(seed) % VNET_WIRE_CHANNELS;
	h->src_nic = htobe16(src_nic);
	h->dst_nic = htobe16(0);
	h->incarnation = htobe32(sim_rand(seed));
	h->seq = htobe32(sim_rand(seed) % 4 ? sim_rand(seed) % 8 :
					      sim_rand(seed));
	h->stamp = htobe32(sim_rand(seed) % 64);
	if (h->type != VNET_WIRE_DATA)
		return VNET_WIRE_ACK_LEN;
	w->dst_ep = htobe32(sim_rand(seed) % 2);
	w->tag = htobe64(TAG);
	w->queue = VNET_Q_REQ_SEND;
	w->nargs = 1;
	return VNET_WIRE_DATA_LEN;
}

/*
 * A host that claims to be NIC 1 or NIC 2 from an address routed for
 * neither changes nothing: no channel moves, nothing is delivered, every
 * packet is counted as from a bad source, and traffic goes on.
 */
TEST_F(forged, flood_from_wrong_mac_changes_nothing)
{
	struct sim_nic *a = self->net.nic[0];
	static const u8 stranger[6] = { 0x02, 0, 0, 0, 0xbe, 0xef };
	struct vnet_fw_send_chan tx[SIM_CHANNELS];
	struct vnet_fw_recv_chan rx[VNET_WIRE_CHANNELS];
	struct vnet_fw_peer *p = &a->fw.peers[a->fw.peer_of[1]];
	struct vnet_desc d = sim_request(1);
	u8 buf[VNET_WIRE_DATA_LEN];
	u32 i, seed = 5;

	ASSERT_EQ(0, sim_post(a, 0, VNET_Q_REQ_SEND, &d, NULL));
	sim_net_step(&self->net, 20);	/* in flight, not yet ACKed */
	memcpy(tx, p->tx, sizeof(tx));
	memcpy(rx, p->rx, sizeof(rx));
	for (i = 0; i < 10000; i++) {
		u32 len = forge(buf, &seed, 1 + i % 2);

		inject(&self->net, 0, i % 3 ? stranger : self->mac[2 - i % 2],
		       buf, len);
	}
	EXPECT_EQ(0, memcmp(tx, p->tx, sizeof(tx)));
	EXPECT_EQ(0, memcmp(rx, p->rx, sizeof(rx)));
	EXPECT_EQ(10000, a->fw.stats.bad_source);
	EXPECT_EQ(0, a->ep[0].fw.stats.received + a->ep[1].fw.stats.received);

	sim_net_run_for(&self->net, 5 * a->fw.quantum);
	ASSERT_NE(NULL, sim_peek(self->net.nic[1], 1, VNET_Q_REQ_RECV));
	EXPECT_EQ(1, sim_peek(self->net.nic[1], 1, VNET_Q_REQ_RECV)->args[0]);
}

/*
 * The documented bound on a message in flight, whatever a peer sends:
 * max(busy_timeout plus the longest wait for the answer to the latest
 * transmission, max(max_retries / 4, 2) quanta, 2 * max_retries quanta),
 * and a scan of slack.
 */
static u64 resolve_bound(const struct vnet_fw_nic *fw)
{
	u64 retries = 2 * fw->max_retries * fw->quantum;
	u64 wait = fw->max_retries / 4 > 2 ? fw->max_retries / 4 : 2;
	u64 busy = fw->busy_timeout + wait * fw->quantum;

	return (busy > retries ? busy : retries) + 2 * fw->quantum;
}

/* NACK every message NIC 0 has in flight to NIC 1, stale or current. */
static void forge_nacks(struct sim_net *net, const u8 *mac, bool stale,
			u8 reason)
{
	struct vnet_fw_nic *fw = &net->nic[0]->fw;
	struct vnet_fw_peer *p = &fw->peers[fw->peer_of[1]];
	u32 c;

	for (c = 0; c < SIM_CHANNELS; c++) {
		struct vnet_fw_send_chan *ch = &p->tx[c];
		struct {
			struct vnet_wire_hdr h;
			struct vnet_wire_ack ack;
		} nack = {};

		if (ch->state != VNET_CHAN_INFLIGHT)
			continue;
		nack.h.version = VNET_WIRE_VERSION;
		nack.h.type = VNET_WIRE_NACK;
		nack.h.channel = c;
		nack.h.src_nic = htobe16(1);
		nack.h.incarnation = htobe32(p->incarnation);
		nack.h.seq = htobe32(ch->seq);
		nack.h.stamp = htobe32(stale ? ch->stamp - 1 : ch->stamp);
		nack.ack.status = reason;
		inject(net, 0, mac, &nack, sizeof(nack));
	}
}

/*
 * From the right address, NACKs can hold a message no longer than the
 * documented bound (resolve_bound()): stale ones are no answer, current
 * ones start the busy clock once, and RESYNCs of the current
 * transmission, which restart the channel, are no answer either.  And a
 * closing endpoint is forgotten at once, whatever is on the wire.
 */
static const struct {
	const char *what;
	bool stale;
	u8 reason;
	u8 returned;
} forged_nacks[] = {
	{ "stale", true, VNET_NACK_QUEUE_FULL, VNET_RET_UNREACHABLE },
	{ "current", false, VNET_NACK_QUEUE_FULL, VNET_RET_BUSY },
	{ "RESYNC", false, VNET_NACK_RESYNC, VNET_RET_UNREACHABLE },
};

TEST_F(forged, nacks_from_right_mac_bound_the_flush)
{
	struct sim_nic *a = self->net.nic[0];
	struct vnet_fw_nic *fw = &a->fw;
	u64 bound = resolve_bound(fw);
	struct vnet_desc d;
	u32 round;

	/* Only the forger answers for NIC 1. */
	self->net.down[1] = true;
	for (round = 0; round < ARRAY_SIZE(forged_nacks); round++) {
		const struct vnet_desc *got = NULL;
		u64 start, resolved = 0;

		d = sim_request(round);
		ASSERT_EQ(0, sim_post(a, 0, VNET_Q_REQ_SEND, &d, NULL));
		sim_net_step(&self->net, 20);
		ASSERT_EQ(1, a->ep[0].fw.unresolved);
		start = self->net.now;
		while (!got && self->net.now - start < 4 * bound) {
			forge_nacks(&self->net, self->mac[1],
				    forged_nacks[round].stale,
				    forged_nacks[round].reason);
			sim_net_step(&self->net, 20);
			if (!resolved && !a->ep[0].fw.unresolved)
				resolved = self->net.now - start;
			got = sim_peek(a, 0, VNET_Q_REP_RECV);
		}
		ASSERT_NE(NULL, got);
		TH_LOG("%s NACKs: resolved after %llu, returned after %llu (bound %llu)",
		       forged_nacks[round].what,
		       (unsigned long long)resolved,
		       (unsigned long long)(self->net.now - start),
		       (unsigned long long)bound);
		EXPECT_LE(resolved, bound);
		EXPECT_LE(self->net.now - start, bound);
		EXPECT_EQ(forged_nacks[round].returned, got->status);
		sim_consume(a, 0, VNET_Q_REP_RECV);
	}

	/* Closing: forgotten at once. */
	d = sim_request(7);
	ASSERT_EQ(0, sim_post(a, 0, VNET_Q_REQ_SEND, &d, NULL));
	sim_net_step(&self->net, 20);
	ASSERT_EQ(1, a->ep[0].fw.unresolved);
	forge_nacks(&self->net, self->mac[1], true, VNET_NACK_QUEUE_FULL);
	vnet_fw_ep_forget(fw, &a->ep[0].fw);
	EXPECT_EQ(0, a->ep[0].fw.unresolved);
	forge_nacks(&self->net, self->mac[1], false, VNET_NACK_QUEUE_FULL);
	EXPECT_EQ(0, a->ep[0].fw.unresolved);
}

/* NIC 0's counters that a frame it drops may move. */
struct drop_counts {
	u64 bad_frames, bad_source, no_route, rx_resume, retransmits;
};

static struct drop_counts drop_counts(const struct vnet_fw_nic *fw)
{
	struct drop_counts c = {
		fw->stats.bad_frames, fw->stats.bad_source, fw->stats.no_route,
		fw->stats.rx_resume, fw->stats.retransmits,
	};

	return c;
}

/*
 * RESUMEs, forged and duplicated, can make a sender retransmit a message
 * at most once per NACK "not resident" it received for it: never one not
 * so NACKed, never for another endpoint, another peer or another
 * incarnation of the peer's route, never from the wrong address, never a
 * malformed one.  They deliver nothing, and the message still arrives
 * once when its endpoint is really back.
 */
TEST_F(forged, forged_resume_costs_at_most_one_retransmission)
{
	struct sim_nic *a = self->net.nic[0], *b = self->net.nic[1];
	struct sim_nic *c = self->net.nic[2];
	static const u8 stranger[6] = { 0x02, 0, 0, 0, 0xbe, 0xef };
	struct vnet_fw_peer *p = &a->fw.peers[a->fw.peer_of[1]];
	u32 inc = b->fw.peers[b->fw.peer_of[0]].incarnation;
	struct vnet_fw_send_chan tx[SIM_CHANNELS];
	struct vnet_wire_hdr *h;
	struct vnet_desc d = sim_request(3);
	struct drop_counts was, now;
	u8 buf[VNET_WIRE_RESUME_LEN + 16];
	u32 i, len;
	u64 start;

	b->auto_fault = false;
	sim_unload(b, 1);
	ASSERT_EQ(0, sim_post(a, 0, VNET_Q_REQ_SEND, &d, NULL));
	sim_net_step(&self->net, 20);

	/* On its way, not NACKed: a perfect RESUME is no reason to resend. */
	for (i = 0; i < 100; i++) {
		len = forge_resume(buf, 1, inc, 1);
		inject(&self->net, 0, self->mac[1], buf, len);
	}
	EXPECT_EQ(100, a->fw.stats.rx_resume);
	EXPECT_EQ(0, a->fw.stats.retransmits);

	start = self->net.now;
	while (!a->fw.stats.rx_nack[VNET_NACK_NOT_RESIDENT] &&
	       self->net.now - start < 10 * a->fw.quantum)
		sim_net_step(&self->net, 20);
	ASSERT_EQ(1, a->fw.stats.rx_nack[VNET_NACK_NOT_RESIDENT]);
	memcpy(tx, p->tx, sizeof(tx));
	was = drop_counts(&a->fw);

	for (i = 0; i < 100; i++) {
		/* From an address no route names, or another NIC's. */
		len = forge_resume(buf, 1, inc, 1);
		inject(&self->net, 0, stranger, buf, len);
		inject(&self->net, 0, self->mac[2], buf, len);
		/* From an unrouted NIC id. */
		len = forge_resume(buf, 77, inc, 1);
		inject(&self->net, 0, self->mac[1], buf, len);
		/* Well formed, but for the wrong NIC, or of a wrong version. */
		len = forge_resume(buf, 1, inc, 1);
		h = (void *)buf;
		h->dst_nic = htobe16(2);
		inject(&self->net, 0, self->mac[1], buf, len);
		len = forge_resume(buf, 1, inc, 1);
		h->version = VNET_WIRE_VERSION - 1;
		inject(&self->net, 0, self->mac[1], buf, len);
		/* Short, or with a bad checksum. */
		len = forge_resume(buf, 1, inc, 1);
		inject(&self->net, 0, self->mac[1], buf, len - 1);
		h->csum = htobe32(vnet_crc32c(0, buf, len) ^ 1);
		sim_net_inject(&self->net, 0, self->mac[1], buf, len);
		/* Fields that must be zero are not. */
		len = forge_resume(buf, 1, inc, 1);
		buf[sizeof(*h) + 4 + i % 4] = 1;
		inject(&self->net, 0, self->mac[1], buf, len);
		len = forge_resume(buf, 1, inc, 1);
		h->seq = htobe32(1 + i);
		inject(&self->net, 0, self->mac[1], buf, len);
		len = forge_resume(buf, 1, inc, 1);
		h->stamp = htobe32(p->tx[0].stamp);
		inject(&self->net, 0, self->mac[1], buf, len);
		len = forge_resume(buf, 1, inc, 1);
		h->channel = 1;
		inject(&self->net, 0, self->mac[1], buf, len);
		len = forge_resume(buf, 1, inc, 1);
		h->flags = VNET_WIRE_SYNC;
		inject(&self->net, 0, self->mac[1], buf, len);
		/*
		 * Well formed from the right address, but for another
		 * endpoint, another incarnation, or from NIC 2 itself.
		 */
		len = forge_resume(buf, 1, inc, 0);
		inject(&self->net, 0, self->mac[1], buf, len);
		len = forge_resume(buf, 1, inc + 1 + i, 1);
		inject(&self->net, 0, self->mac[1], buf, len);
		len = forge_resume(buf, 2, c->fw.peers[c->fw.peer_of[0]].incarnation,
				   1);
		inject(&self->net, 0, self->mac[2], buf, len);
	}
	now = drop_counts(&a->fw);
	EXPECT_EQ(0, memcmp(tx, p->tx, sizeof(tx)));
	EXPECT_EQ(was.bad_source + 200, now.bad_source);
	EXPECT_EQ(was.no_route + 100, now.no_route);
	EXPECT_EQ(was.bad_frames + 900, now.bad_frames);
	EXPECT_EQ(was.rx_resume + 300, now.rx_resume);
	EXPECT_EQ(was.retransmits, now.retransmits);

	/* The real thing, and a thousand copies: one retransmission. */
	for (i = 0; i < 1000; i++) {
		len = forge_resume(buf, 1, inc, 1);
		inject(&self->net, 0, self->mac[1], buf, len);
	}
	EXPECT_EQ(was.retransmits + 1, a->fw.stats.retransmits);

	/*
	 * A flood at every step while b keeps NACKing: retransmissions
	 * follow the NACKs, never outnumber them, and deliver nothing.
	 */
	start = self->net.now;
	while (self->net.now - start < 20 * a->fw.quantum) {
		for (i = 0; i < 10; i++) {
			len = forge_resume(buf, 1, inc, 1);
			inject(&self->net, 0, self->mac[1], buf, len);
		}
		sim_net_step(&self->net, 20);
	}
	TH_LOG("%llu retransmissions for %llu NACKs \"not resident\" under %llu RESUMEs",
	       (unsigned long long)a->fw.stats.retransmits,
	       (unsigned long long)a->fw.stats.rx_nack[VNET_NACK_NOT_RESIDENT],
	       (unsigned long long)a->fw.stats.rx_resume);
	EXPECT_LE(a->fw.stats.retransmits,
		  a->fw.stats.rx_nack[VNET_NACK_NOT_RESIDENT]);
	EXPECT_EQ(0, b->ep[1].fw.stats.received);
	EXPECT_EQ(1, p->unacked);
	EXPECT_EQ(NULL, sim_peek(a, 0, VNET_Q_REP_RECV));

	/* b's endpoint comes back: the message arrives, once. */
	sim_load(b, 1);
	sim_net_run_for(&self->net, 5 * a->fw.quantum);
	EXPECT_LE(1, b->fw.stats.tx_resume);
	EXPECT_EQ(1, b->ep[1].fw.stats.received);
	EXPECT_EQ(0, p->unacked);
	EXPECT_EQ(NULL, sim_peek(a, 0, VNET_Q_REP_RECV));
}

FIXTURE(readd) {
	struct sim_net net;
	u8 mac[2][6];
};

FIXTURE_SETUP(readd)
{
	sim_net_init(&self->net, 2, 2, 31);
	sim_mac(0, self->mac[0]);
	sim_mac(1, self->mac[1]);
	self->net.nic[1]->ep[1].fw.tag = TAG;
	sim_map(self->net.nic[0], 0, 0, 1, 1, TAG);
}

FIXTURE_TEARDOWN(readd)
{
	sim_net_fini(&self->net);
}

/* How many requests endpoint 1 of NIC 1 has taken, consuming them. */
static u32 drain(struct sim_nic *b, u8 *seen, u32 n)
{
	const struct vnet_desc *d;
	u32 got = 0;

	while ((d = sim_peek(b, 1, VNET_Q_REQ_RECV))) {
		if (d->args[0] < n)
			seen[d->args[0]]++;
		sim_consume(b, 1, VNET_Q_REQ_RECV);
		got++;
	}
	return got;
}

/*
 * The sender's route comes back in a fresh slot, whose next sequence
 * number happens to be the one the receiver last delivered: it must be
 * taken as new, not ACKed as a duplicate and lost.
 */
TEST_F(readd, sender_in_fresh_slot_is_not_taken_for_a_duplicate)
{
	struct sim_nic *a = self->net.nic[0], *b = self->net.nic[1];
	struct vnet_fw_peer *p;
	struct vnet_desc d = sim_request(0);
	u8 seen[2] = {};
	u32 expected, c;

	ASSERT_EQ(0, sim_post(a, 0, VNET_Q_REQ_SEND, &d, NULL));
	sim_net_run_for(&self->net, 500);
	ASSERT_EQ(1, drain(b, seen, 2));
	p = &a->fw.peers[a->fw.peer_of[1]];
	for (c = 0; c < SIM_CHANNELS && !b->fw.peers[0].rx[c].valid; c++)
		;
	ASSERT_LT(c, SIM_CHANNELS);
	expected = b->fw.peers[0].rx[c].expected;

	/* Gone, and its slot taken by another NIC meanwhile. */
	vnet_fw_route_del(&a->fw, 1, self->net.now);
	p->used = false;
	ASSERT_LE(0, vnet_fw_route_add(&a->fw, 1, self->mac[1], self->net.now));
	p = &a->fw.peers[a->fw.peer_of[1]];
	/* The worst luck: the channel's next number is the old last one. */
	p->tx[c].seq = expected - 2;

	d = sim_request(1);
	ASSERT_EQ(0, sim_post(a, 0, VNET_Q_REQ_SEND, &d, NULL));
	sim_net_run_for(&self->net, 5000);
	drain(b, seen, 2);
	EXPECT_EQ(1, seen[0]);
	EXPECT_EQ(1, seen[1]);
	EXPECT_EQ(NULL, sim_peek(a, 0, VNET_Q_REP_RECV));
}

/*
 * The receiver's route to the sender goes and comes back while the ACK of
 * a delivered message is lost: the retransmission must be recognized and
 * ACKed again, not delivered a second time.
 */
TEST_F(readd, receiver_readd_does_not_deliver_twice)
{
	struct sim_nic *a = self->net.nic[0], *b = self->net.nic[1];
	struct vnet_desc d = sim_request(0);
	u8 seen[1] = {};

	ASSERT_EQ(0, sim_post(a, 0, VNET_Q_REQ_SEND, &d, NULL));
	sim_net_step(&self->net, 20);
	self->net.down[0] = true;	/* its ACK will be lost */
	sim_net_run_for(&self->net, 200);
	ASSERT_EQ(1, drain(b, seen, 1));

	vnet_fw_route_del(&b->fw, 0, self->net.now);
	ASSERT_LE(0, vnet_fw_route_add(&b->fw, 0, self->mac[0], self->net.now));
	self->net.down[0] = false;
	sim_net_run_for(&self->net, 5 * a->fw.quantum);
	drain(b, seen, 1);
	EXPECT_EQ(1, seen[0]);
	EXPECT_EQ(0, a->fw.nactive);
	EXPECT_EQ(NULL, sim_peek(a, 0, VNET_Q_REP_RECV));
}

/*
 * A NIC with no endpoints left is renumbered (its mapper gives it an id)
 * while a message its closed endpoint sent is still in flight, delivered
 * but its ACK lost.  Its peer has no receive state for the new number:
 * had the message been retransmitted under it, the peer would ask for a
 * SYNC and take it again.  In the simulation NIC ids are indices, so the
 * renumbered NIC 0 moves to index 2, whose NIC (never up) moves to 0.
 */
TEST(renumbered_sender_does_not_deliver_twice)
{
	struct vnet_desc d = sim_request(0);
	struct sim_nic *a, *b, *spare;
	struct sim_net net;
	u8 seen[1] = {};

	sim_net_init(&net, 3, 2, 41);
	a = net.nic[0];
	b = net.nic[1];
	spare = net.nic[2];
	net.down[2] = true;
	b->ep[1].fw.tag = TAG;
	sim_map(a, 0, 0, 1, 1, TAG);
	ASSERT_EQ(0, sim_post(a, 0, VNET_Q_REQ_SEND, &d, NULL));
	sim_net_step(&net, 20);
	net.down[0] = true;		/* its ACK will be lost */
	sim_net_run_for(&net, 200);
	ASSERT_EQ(1, drain(b, seen, 1));
	vnet_fw_ep_forget(&a->fw, &a->ep[0].fw);

	vnet_fw_renumber(&spare->fw, 0, net.now);
	vnet_fw_renumber(&a->fw, 2, net.now);
	net.nic[0] = spare;
	net.nic[2] = a;
	/* The peer's mapper: the route to 0 goes, the one to 2 is a's. */
	ASSERT_TRUE(vnet_fw_route_del(&b->fw, 0, net.now));
	net.down[2] = false;
	sim_net_run_for(&net, 5 * a->fw.quantum);
	drain(b, seen, 1);
	EXPECT_EQ(1, seen[0]);
	EXPECT_EQ(0, a->fw.nactive);
	sim_net_fini(&net);
}

/*
 * A sender whose firmware did not run for longer than a message's
 * lifetime (a starved thread, a paused machine) gives the message up at
 * its next scan instead of retransmitting it: a receiver keeps a deleted
 * route's receive state only that long.
 */
TEST_F(readd, stalled_sender_gives_up_at_the_lifetime)
{
	struct sim_nic *a = self->net.nic[0];
	struct vnet_desc d = sim_request(0);
	const struct vnet_desc *r;
	u64 retransmits;

	self->net.down[1] = true;	/* nothing answers */
	ASSERT_EQ(0, sim_post(a, 0, VNET_Q_REQ_SEND, &d, NULL));
	sim_net_run_for(&self->net, 3 * a->fw.quantum);
	retransmits = a->fw.stats.retransmits;
	ASSERT_EQ(NULL, sim_peek(a, 0, VNET_Q_REP_RECV));

	self->net.now += vnet_fw_msg_lifetime(&a->fw);
	sim_net_step(&self->net, 20);
	r = sim_peek(a, 0, VNET_Q_REP_RECV);
	ASSERT_NE(NULL, r);
	EXPECT_TRUE(r->flags & VNET_DESC_RETURNED);
	EXPECT_EQ(VNET_RET_UNREACHABLE, r->status);
	EXPECT_EQ(retransmits, a->fw.stats.retransmits);
}

/*
 * As above, but while the receiver's route to the sender is deleted, other
 * NICs are routed until the table is full.  The sender's slot, with the
 * receive state of the message it still retransmits, is not theirs until
 * the sender has given that message up; had it been, the sender would
 * come back in a restarted slot, be asked to SYNC, and the message be
 * delivered twice.
 */
TEST_F(readd, receiver_slot_kept_while_its_sender_may_retransmit)
{
	struct sim_nic *a = self->net.nic[0], *b = self->net.nic[1];
	struct vnet_desc d = sim_request(0);
	u32 id, slot, filler = 100;
	u8 seen[1] = {}, mac[6];
	u64 kept, left;

	ASSERT_EQ(0, sim_post(a, 0, VNET_Q_REQ_SEND, &d, NULL));
	sim_net_step(&self->net, 20);
	self->net.down[0] = true;	/* its ACK will be lost */
	sim_net_run_for(&self->net, 200);
	ASSERT_EQ(1, drain(b, seen, 1));

	slot = b->fw.peer_of[0];
	ASSERT_TRUE(vnet_fw_route_del(&b->fw, 0, self->net.now));
	/* Every other slot to other NICs; the last of them finds none. */
	for (id = filler; id < filler + b->fw.max_peers - 1; id++) {
		sim_mac(id, mac);
		ASSERT_LE(0, vnet_fw_route_add(&b->fw, id, mac, self->net.now));
	}
	sim_mac(id, mac);
	EXPECT_EQ(VNET_FW_ROUTES_WAIT,
		  vnet_fw_route_add(&b->fw, id, mac, self->net.now));
	EXPECT_TRUE(vnet_fw_route_del(&b->fw, filler, self->net.now));

	EXPECT_EQ((int)slot,
		  vnet_fw_route_add(&b->fw, 0, self->mac[0], self->net.now));
	self->net.down[0] = false;
	sim_net_run_for(&self->net, 5 * a->fw.quantum);
	drain(b, seen, 1);
	EXPECT_EQ(1, seen[0]);
	EXPECT_EQ(0, a->fw.nactive);

	/* Once nothing can come any more, the slot may go to another NIC. */
	kept = vnet_fw_msg_lifetime(&b->fw) + 4 * b->fw.quantum;
	sim_mac(filler, mac);
	ASSERT_LE(0, vnet_fw_route_add(&b->fw, filler, mac, self->net.now));
	left = self->net.now;
	EXPECT_TRUE(vnet_fw_route_del(&b->fw, 0, left));
	sim_mac(id, mac);
	EXPECT_EQ(VNET_FW_ROUTES_WAIT,
		  vnet_fw_route_add(&b->fw, id, mac, left + kept - 1));
	EXPECT_EQ((int)slot, vnet_fw_route_add(&b->fw, id, mac, left + kept));
}

TEST_F(readd, churn_never_duplicates)
{
	struct sim_nic *a = self->net.nic[0], *b = self->net.nic[1];
	enum { N = 400 };
	u8 seen[N] = {}, answered[N] = {};
	u32 sent = 0, done = 0, i, seed = 9;
	const struct vnet_desc *d;

	self->net.loss = 100;
	self->net.dup = 100;
	self->net.reorder = 100;
	while (done < N && self->net.now < 4000000) {
		while (sent < N && sent - done < 4) {
			struct vnet_desc q = sim_request(sent);

			if (sim_post(a, 0, VNET_Q_REQ_SEND, &q, NULL))
				break;
			sent++;
		}
		while ((d = sim_peek(a, 0, VNET_Q_REP_RECV))) {
			if (!answered[d->args[0]]++)
				done++;
			sim_consume(a, 0, VNET_Q_REP_RECV);
		}
		while ((d = sim_peek(b, 1, VNET_Q_REQ_RECV))) {
			struct vnet_desc r = { .handler = 2, .token = d->token,
					       .nargs = 1 };

			r.args[0] = d->args[0];
			if (sim_post(b, 1, VNET_Q_REP_SEND, &r, NULL))
				break;
			seen[d->args[0]]++;
			sim_consume(b, 1, VNET_Q_REQ_RECV);
		}
		/* A reply that came back to the server answers its request. */
		while ((d = sim_peek(b, 1, VNET_Q_REP_RECV))) {
			if (!answered[d->args[0]]++)
				done++;
			sim_consume(b, 1, VNET_Q_REP_RECV);
		}
		sim_net_step(&self->net, 20);
		if (sim_rand(&seed) % 500 == 0) {
			struct sim_nic *s = sim_rand(&seed) % 2 ? a : b;
			u32 peer = s == a ? 1 : 0;

			vnet_fw_route_del(&s->fw, peer, self->net.now);
			sim_net_run_for(&self->net, 40);
			vnet_fw_route_add(&s->fw, peer, self->mac[peer], self->net.now);
		}
	}
	ASSERT_EQ(N, done);
	for (i = 0; i < N; i++)
		ASSERT_GE(1, seen[i]);
	TH_LOG("%llu packets, %llu lost, %llu duplicated",
	       (unsigned long long)self->net.sent,
	       (unsigned long long)self->net.lost,
	       (unsigned long long)self->net.duplicated);
}

/*
 * Current NACKs until just before busy_timeout, then stale ones: the
 * message still comes back within the bound, not after the one and then
 * the other.
 */
TEST_F(forged, mixed_nacks_stay_within_the_bound)
{
	struct sim_nic *a = self->net.nic[0];
	struct vnet_fw_nic *fw = &a->fw;
	u64 bound = resolve_bound(fw);
	struct vnet_desc d = sim_request(0);
	const struct vnet_desc *got = NULL;
	u64 start;

	self->net.down[1] = true;
	ASSERT_EQ(0, sim_post(a, 0, VNET_Q_REQ_SEND, &d, NULL));
	sim_net_step(&self->net, 20);
	start = self->net.now;
	while (!got && self->net.now - start < 10 * bound) {
		forge_nacks(&self->net, self->mac[1], self->net.now - start >
			    fw->busy_timeout - 3 * fw->quantum,
			    VNET_NACK_QUEUE_FULL);
		sim_net_step(&self->net, 20);
		got = sim_peek(a, 0, VNET_Q_REP_RECV);
	}
	ASSERT_NE(NULL, got);
	TH_LOG("returned after %llu (bound %llu)",
	       (unsigned long long)(self->net.now - start),
	       (unsigned long long)bound);
	EXPECT_LE(self->net.now - start, bound);
}

/*
 * A peer that NACKs every transmission "not resident" and at once says
 * the endpoint is back gets one retransmission for a RESUME, then only the
 * timer's -- not one a round trip -- and cannot keep the message past the
 * bound: it comes back "busy" as it would under NACKs alone.
 */
TEST_F(forged, resumes_do_not_hold_a_message_past_the_bound)
{
	struct sim_nic *a = self->net.nic[0];
	struct vnet_fw_nic *fw = &a->fw;
	struct vnet_fw_peer *p = &fw->peers[fw->peer_of[1]];
	u64 bound = resolve_bound(fw);
	struct vnet_desc d = sim_request(0);
	const struct vnet_desc *got = NULL;
	u8 buf[VNET_WIRE_RESUME_LEN];
	u64 start;
	u32 len;

	self->net.down[1] = true;
	ASSERT_EQ(0, sim_post(a, 0, VNET_Q_REQ_SEND, &d, NULL));
	sim_net_step(&self->net, 20);
	start = self->net.now;
	while (!got && self->net.now - start < 10 * bound) {
		forge_nacks(&self->net, self->mac[1], false,
			    VNET_NACK_NOT_RESIDENT);
		/* The NACKs above carry this incarnation too. */
		len = forge_resume(buf, 1, p->incarnation, 1);
		inject(&self->net, 0, self->mac[1], buf, len);
		sim_net_step(&self->net, 20);
		got = sim_peek(a, 0, VNET_Q_REP_RECV);
	}
	ASSERT_NE(NULL, got);
	TH_LOG("returned after %llu (bound %llu), %llu retransmissions for %llu NACKs",
	       (unsigned long long)(self->net.now - start),
	       (unsigned long long)bound,
	       (unsigned long long)fw->stats.retransmits,
	       (unsigned long long)fw->stats.rx_nack[VNET_NACK_NOT_RESIDENT]);
	EXPECT_EQ(VNET_RET_BUSY, got->status);
	EXPECT_LE(self->net.now - start, bound);
	EXPECT_LE(fw->stats.retransmits,
		  fw->stats.rx_nack[VNET_NACK_NOT_RESIDENT]);
	/* Forged pairs do not set the pace: one for a RESUME, the timer's. */
	EXPECT_LE(fw->stats.resume_retransmits, 1);
	EXPECT_LE(fw->stats.retransmits,
		  (self->net.now - start) / fw->quantum + 2);
}

/*
 * A reply must quote the reply key of a request its sender really got:
 * one forged from a routed peer's address, with a channel restarted by
 * SYNC, lands nowhere -- not even a bulk reply into a pinned segment.
 */
TEST_F(forged, reply_without_its_request_key_is_refused)
{
	struct sim_nic *b = self->net.nic[1];
	u8 buf[VNET_WIRE_DATA_LEN + 64], seg[4096] = {};
	struct vnet_wire_hdr *h = (void *)buf;
	struct vnet_wire_msg *w = (void *)(h + 1);

	b->ep[1].fw.seg = seg;
	b->ep[1].fw.seg_len = sizeof(seg);
	memset(buf, 0, sizeof(buf));
	h->version = VNET_WIRE_VERSION;
	h->type = VNET_WIRE_DATA;
	h->flags = VNET_WIRE_SYNC;
	h->src_nic = htobe16(0);
	h->dst_nic = htobe16(1);
	h->incarnation = htobe32(0xabcdef);
	h->seq = htobe32(1);
	w->dst_ep = htobe32(1);
	w->queue = VNET_Q_REP_SEND;
	w->flags = VNET_DESC_XFER;
	w->len = htobe32(64);
	w->offset = htobe64(128);
	memset(buf + VNET_WIRE_DATA_LEN, 0x41, 64);
	inject(&self->net, 1, self->mac[0], buf, sizeof(buf));
	EXPECT_EQ(0, seg[128]);
	EXPECT_EQ(0, b->ep[1].fw.stats.received);
	b->ep[1].fw.seg = NULL;
}

/*
 * A sender that never reads its reply queue gets messages back until it
 * is full; further returns wait for it, but hold no channel from anyone
 * else for long, and it gets no new channel meanwhile.
 */
TEST(returns_waiting_for_their_sender_block_only_it)
{
	struct sim_net net;
	struct pairs alone = {}, beside = {};
	u64 span, start;
	u32 i, round;

	for (round = 0; round < 2; round++) {
		struct pairs *t = round ? &beside : &alone;

		pairs_setup(&net);
		/* The stuck sender's slot 1 now points at a wrong tag. */
		sim_map(net.nic[0], STUCK_SENDER, 1, 1, 1, TAG + 1);
		span = 3 * net.nic[0]->fw.busy_timeout;
		for (start = net.now; net.now - start < span;) {
			struct vnet_desc q = sim_request(99);

			drive(&net, t, 0, false);
			q.slot = 1;
			while (round && !sim_post(net.nic[0], STUCK_SENDER,
						  VNET_Q_REQ_SEND, &q, NULL))
				;
			/* ...and never reads what comes back. */
			sim_net_step(&net, 20);
		}
		sim_net_fini(&net);
	}
	for (i = 0; i < CLIENTS; i++) {
		TH_LOG("client %u: %u round trips alone, %u beside a sender that reads no returns",
		       i, alone.round_trips[i], beside.round_trips[i]);
		EXPECT_GE(beside.round_trips[i] * 100,
			  alone.round_trips[i] * 95);
	}
}

/*
 * A peer that reboots lost its channels: the first message to it is not
 * dropped as stale until it runs out of retries, the receiver asks for a
 * SYNC and gets the message at once.
 */
TEST_F(readd, rebooted_receiver_takes_the_next_message_at_once)
{
	struct sim_nic *a = self->net.nic[0], *b = self->net.nic[1];
	struct vnet_desc d = sim_request(0);
	u8 seen[2] = {};
	u64 start;

	ASSERT_EQ(0, sim_post(a, 0, VNET_Q_REQ_SEND, &d, NULL));
	sim_net_run_for(&self->net, 500);
	ASSERT_EQ(1, drain(b, seen, 2));

	/* b reboots: a fresh transport, its route to a added again. */
	vnet_fw_transport_init(&b->fw);
	ASSERT_LE(0, vnet_fw_route_add(&b->fw, 0, self->mac[0], self->net.now));

	d = sim_request(1);
	ASSERT_EQ(0, sim_post(a, 0, VNET_Q_REQ_SEND, &d, NULL));
	start = self->net.now;
	while (!seen[1] && self->net.now - start < 50 * a->fw.quantum) {
		sim_net_step(&self->net, 20);
		drain(b, seen, 2);
	}
	EXPECT_EQ(1, seen[1]);
	EXPECT_LE(self->net.now - start, 3 * a->fw.quantum);
	EXPECT_EQ(NULL, sim_peek(a, 0, VNET_Q_REP_RECV));
}

#define HOARD_NICS	10		/* NIC 0 sends; 1-8 refuse; 9 takes */
#define HOARDERS	4		/* NIC 0's endpoints 0-3 */
#define HOARD_DESTS	2		/* each to two NICs */
#define HONEST		HOARDERS	/* NIC 0's endpoint 4 */

/*
 * Endpoints whose payload messages are refused on several peers -- their
 * destinations are off the card and stay off -- hold pool buffers until
 * busy_timeout, and could take every one of them; an honest endpoint's
 * payload message to a peer that takes it would wait as long.  Each holds
 * vnet_fw_pool_share() at most, and the honest message is delivered in a
 * round trip.
 */
TEST(refused_payloads_leave_pool_buffers_to_others)
{
	struct sim_net net;
	struct sim_nic *a;
	struct vnet_desc d = sim_request(7);
	u8 payload[512] = { 1 };
	u32 i, j, k, held = 0;
	u64 start;

	sim_net_init(&net, HOARD_NICS, HONEST + 1, 17);
	a = net.nic[0];
	for (i = 1; i < HOARD_NICS - 1; i++) {
		net.nic[i]->auto_fault = false;
		net.nic[i]->ep[0].fw.tag = TAG;
		net.nic[i]->ep[1].fw.tag = TAG;
		sim_unload(net.nic[i], 0);
	}
	for (i = 0; i < HOARDERS; i++) {
		for (j = 0; j < HOARD_DESTS; j++) {
			sim_map(a, i, j, 1 + i * HOARD_DESTS + j, 0, TAG);
			for (k = 0; k < (SIM_CHANNELS + 1) / 2; k++) {
				struct vnet_desc m = sim_request(k);

				m.slot = j;
				m.flags = VNET_DESC_MEDIUM;
				m.len = sizeof(payload);
				ASSERT_EQ(0, sim_post(a, i, VNET_Q_REQ_SEND, &m,
						      payload));
			}
		}
	}
	sim_net_run_for(&net, 4 * net.delay);
	for (i = 0; i < HOARDERS; i++) {
		EXPECT_GE(vnet_fw_pool_share(&a->fw), a->ep[i].fw.pool_held);
		held += a->ep[i].fw.pool_held;
	}
	EXPECT_EQ(SIM_POOL - held, a->fw.pool_free);
	ASSERT_LT(0, a->fw.pool_free);

	net.nic[HOARD_NICS - 1]->ep[1].fw.tag = TAG;
	sim_map(a, HONEST, 0, HOARD_NICS - 1, 1, TAG);
	d.flags = VNET_DESC_MEDIUM;
	d.len = sizeof(payload);
	ASSERT_EQ(0, sim_post(a, HONEST, VNET_Q_REQ_SEND, &d, payload));
	for (start = net.now;
	     !sim_peek(net.nic[HOARD_NICS - 1], 1, VNET_Q_REQ_RECV);) {
		ASSERT_GT(a->fw.busy_timeout / 2, net.now - start);
		sim_net_step(&net, 20);
	}
	EXPECT_GE(4 * net.delay + 100, net.now - start);
	sim_net_fini(&net);
}

/*
 * A packet handed over in pieces is read only as far as its first piece
 * holds its header whole (VNET_FW_RX_HEAD, or all of a shorter packet):
 * a header cut across pieces is a bad frame, not read past the piece.
 * The rest may lie anywhere, the first piece may start some bytes in
 * (skip), and the payload arrives whole from the pieces it was cut into.
 */
TEST(a_header_cut_across_pieces_is_a_bad_frame)
{
	struct sim_net net;
	struct vnet_desc d = sim_request(5);
	struct vnet_fw_piece piece[4];
	struct vnet_fw_bytes pkt = { .piece = piece };
	const struct vnet_desc *got;
	u8 payload[3000], *first = NULL, *buf;
	u32 i, len = 0, steps = 0;
	u8 mac[6];

	sim_net_init_pair(&net, TAG);
	net.tapcap = 16;
	net.tap = malloc(net.tapcap * sizeof(*net.tap));
	for (i = 0; i < sizeof(payload); i++)
		payload[i] = (u8)(i * 13 + 1);
	d.flags = VNET_DESC_MEDIUM;
	d.len = sizeof(payload);
	/* Its first transmission, caught on its way and lost. */
	net.mute[0] = true;
	ASSERT_EQ(0, sim_post(net.nic[0], 0, VNET_Q_REQ_SEND, &d, payload));
	while (!first) {
		ASSERT_GT(1000, ++steps);
		sim_net_step(&net, 1);
		for (i = 0; i < net.taplen && !first; i++)
			if (net.tap[i].data[1] == VNET_WIRE_DATA) {
				first = net.tap[i].data;
				len = VNET_WIRE_DATA_LEN + sizeof(payload);
			}
	}
	sim_mac(0, mac);

	/*
	 * A header cut short, in a piece of its own so that a read past it
	 * is caught, down to a first piece of nothing: dropped, nothing
	 * delivered.
	 */
	for (i = 0; i < 2; i++) {
		u32 head = i ? 0 : VNET_WIRE_DATA_LEN - 1;

		/* Nothing: not even an address to read the version at. */
		buf = head ? malloc(head) : NULL;
		if (buf)
			memcpy(buf, first, head);
		piece[0] = (struct vnet_fw_piece){ buf, head };
		piece[1] = (struct vnet_fw_piece){ first + head, len - head };
		pkt.npieces = 2;
		pkt.len = len;
		vnet_fw_receive(&net.nic[1]->fw, &pkt, mac, net.now);
		free(buf);
		EXPECT_EQ(i + 1, net.nic[1]->fw.stats.bad_frames);
		EXPECT_EQ(NULL, sim_peek(net.nic[1], 1, VNET_Q_REQ_RECV));
	}

	/* Whole in a first piece 8 bytes in, the payload in three. */
	buf = malloc(8 + VNET_FW_RX_HEAD);
	memset(buf, 0xee, 8);
	memcpy(buf + 8, first, VNET_FW_RX_HEAD);
	piece[0] = (struct vnet_fw_piece){ buf, 8 + VNET_FW_RX_HEAD };
	piece[1] = (struct vnet_fw_piece){ first + VNET_FW_RX_HEAD, 1 };
	piece[2] = (struct vnet_fw_piece){ first + VNET_FW_RX_HEAD + 1, 0 };
	piece[3] = (struct vnet_fw_piece){ first + VNET_FW_RX_HEAD + 1,
					   len - VNET_FW_RX_HEAD - 1 };
	pkt.npieces = 4;
	pkt.skip = 8;
	vnet_fw_receive(&net.nic[1]->fw, &pkt, mac, net.now);
	free(buf);
	EXPECT_EQ(2, net.nic[1]->fw.stats.bad_frames);
	got = sim_peek(net.nic[1], 1, VNET_Q_REQ_RECV);
	ASSERT_NE(NULL, got);
	EXPECT_EQ(sizeof(payload), got->len);
	EXPECT_EQ(0, memcmp(payload, sim_payload(net.nic[1], 1,
						 VNET_Q_REQ_RECV),
			    sizeof(payload)));
	net.mute[0] = false;
	sim_net_fini(&net);
}

TEST_HARNESS_MAIN
