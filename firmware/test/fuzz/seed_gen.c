// SPDX-License-Identifier: GPL-2.0
/*
 * The fuzzers' seeds, written into corpus/ (make seeds).
 *
 * wire_fuzz: conversations of NIC 0 with a live NIC 1, each with another
 * mix of NIC 1's clients, one through a link that loses frames: what NIC
 * 1 said to NIC 0, as wire_fuzz records (wire_fuzz.c) at the steps NIC 0
 * heard it.  NIC 0 runs here exactly as under wire_fuzz, so each seed is
 * replayed the way wire_fuzz replays it, and must leave NIC 0 with the
 * very counters the conversation did: a seed that no longer matches the
 * firmware would start the fuzzer from nothing but stale frames.
 *
 * user_fuzz: hostile users, each with an op or two of every kind
 * (user_fuzz.c) between stretches of the usual traffic.
 *
 * cluster_fuzz: each kind of event (cluster_fuzz.c) between stretches
 * of traffic: moves, a lossy wire, a link cut, a route deleted and
 * added again, a client silent for a while.
 *
 *   seed_gen DIR     writes DIR/wire_fuzz/, DIR/user_fuzz/ and
 *                    DIR/cluster_fuzz/
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "fuzz_net.h"

#define GEN_PENDING	64

struct gen_buf {
	u8 *data;
	size_t len, cap;
};

static struct {
	struct fz_net f;
	struct vnet_fw_ops ops;		/* NIC 1's, its transmit captured */
	u8 frame[GEN_PENDING][VNET_WIRE_MAX + 64];
	u32 frame_len[GEN_PENDING];
	u32 pending;
	u32 drop_every, sent;
} gen;

static void gen_put(struct gen_buf *b, const void *p, size_t len)
{
	if (!len)
		return;
	if (b->len + len > b->cap) {
		b->cap = 2 * (b->len + len);
		b->data = realloc(b->data, b->cap);
	}
	memcpy(b->data + b->len, p, len);
	b->len += len;
}

static void gen_write(const char *dir, const char *fuzzer, const char *name,
		      const struct gen_buf *b)
{
	char path[512];
	FILE *out;

	snprintf(path, sizeof(path), "%s/%s", dir, fuzzer);
	mkdir(path, 0777);
	snprintf(path, sizeof(path), "%s/%s/%s", dir, fuzzer, name);
	out = fopen(path, "wb");
	fz_assert(out && fwrite(b->data, 1, b->len, out) == b->len &&
		  !fclose(out), "%s", path);
	printf("%s: %zu bytes\n", path, b->len);
}

/* What NIC 1 puts on the wire for NIC 0, as sim_transmit() frames it. */
static void gen_transmit(void *ctx, u32 peer, const void *hdr, u32 hdr_len,
			 const void *payload, u32 len)
{
	struct sim_nic *s = ctx;

	if (s->fw.peers[peer].nic_id != 0 ||
	    (gen.drop_every && !(++gen.sent % gen.drop_every)))
		return;
	fz_assert(gen.pending < GEN_PENDING, "%u frames in a step",
		  gen.pending);
	gen.frame_len[gen.pending] = sim_frame(gen.frame[gen.pending], hdr,
					       hdr_len, payload, len);
	gen.pending++;
}

/* wire_fuzz.c's records: ctl (@flags, @steps), length, frame. */
static void gen_wire_rec(struct gen_buf *b, u8 flags, u32 steps,
			 const void *frame, u32 len)
{
	u8 hdr[3];

	/* Longer waits than a record holds: records with no frame. */
	for (; steps > WIRE_STEPS; steps -= WIRE_STEPS)
		gen_put(b, (u8[]){ (flags & WIRE_QUANTA) | WIRE_STEPS, 0, 0 }, 3);
	hdr[0] = flags | steps;
	hdr[1] = len >> 8;
	hdr[2] = len;
	gen_put(b, hdr, 3);
	gen_put(b, frame, len);
}

int LLVMFuzzerTestOneInput(const u8 *data, size_t size);

/* The seed run by wire_fuzz: NIC 0's counters when it ended. */
static struct vnet_fw_nic_stats gen_replay(const struct gen_buf *b)
{
	LLVMFuzzerTestOneInput(b->data, b->len);
	return fz_ended;
}

static void gen_wire(const char *dir, const char *name, u32 steps,
		     bool e, bool g, u32 drop_every)
{
	struct sim_nic *peer;
	struct gen_buf b = {};
	struct vnet_fw_nic_stats st, replayed;
	u32 i, since = 0;

	fz_init(&gen.f, true);
	gen.f.mute[1][FZ_E] = !e;
	gen.f.mute[1][FZ_G] = !g;
	peer = gen.f.net.nic[1];
	gen.ops = *peer->fw.ops;
	gen.ops.transmit = gen_transmit;
	peer->fw.ops = &gen.ops;
	gen.drop_every = drop_every;
	gen.sent = 0;
	gen.pending = 0;
	while (steps--) {
		for (i = 0; i < gen.pending; i++) {
			gen_wire_rec(&b, 0, since, gen.frame[i],
				     gen.frame_len[i]);
			fz_inject(&gen.f, gen.frame[i], gen.frame_len[i], false);
			since = 0;
		}
		gen.pending = 0;
		fz_run(&gen.f, 1, FZ_DT);
		since++;
	}
	gen_wire_rec(&b, 0, since, NULL, 0);
	st = gen.f.net.nic[0]->fw.stats;
	fz_fini(&gen.f);

	replayed = gen_replay(&b);
	fz_assert(!memcmp(&st, &replayed, sizeof(st)),
		  "%s: replayed, NIC 0 took %llu packets, not %llu", name,
		  (unsigned long long)replayed.rx_data,
		  (unsigned long long)st.rx_data);
	gen_write(dir, "wire_fuzz", name, &b);
	free(b.data);
}

/* A mapper datagram, as vnet_fw_mapper_send() frames it, to everyone. */
static void gen_mapper(const char *dir)
{
	struct {
		struct vnet_wire_hdr hdr;
		struct vnet_wire_mapper m;
		u8 payload[32];
	} pkt = {};
	struct gen_buf b = {};

	pkt.hdr.version = VNET_WIRE_VERSION;
	pkt.hdr.type = VNET_WIRE_MAPPER;
	pkt.hdr.src_nic = htobe16(1);
	pkt.hdr.dst_nic = htobe16(VNET_WIRE_NIC_ANY);
	pkt.m.len = htobe16(sizeof(pkt.payload));
	memset(pkt.payload, 'm', sizeof(pkt.payload));
	pkt.hdr.csum = htobe32(vnet_crc32c(0, &pkt, sizeof(pkt)));
	gen_wire_rec(&b, 0, 5, &pkt, sizeof(pkt));
	gen_wire_rec(&b, 0, 5, NULL, 0);
	gen_write(dir, "wire_fuzz", "mapper", &b);
	free(b.data);
}

/* The host's doings: a route that flaps, endpoints moved off the card. */
static void gen_host(const char *dir)
{
	struct gen_buf b = {};

	gen_wire_rec(&b, 0, 20, (u8[]){ 0 }, 1);
	gen_wire_rec(&b, WIRE_QUANTA, 3, (u8[]){ 0 }, 1);
	gen_wire_rec(&b, 0, 10, (u8[]){ 8 | FZ_A }, 1);
	gen_wire_rec(&b, 0, 10, (u8[]){ 8 | FZ_D }, 1);
	gen_wire_rec(&b, WIRE_QUANTA, 5, NULL, 0);
	gen_write(dir, "wire_fuzz", "host", &b);
	free(b.data);
}

/* An ACK or NACK for channel @c, or a RESUME, for wire_in_step(). */
static void gen_answer(struct gen_buf *b, u32 steps, u8 type, u8 c, u8 v)
{
	struct {
		struct vnet_wire_hdr hdr;
		u8 body[8];
	} pkt = {};
	u32 len = VNET_WIRE_ACK_LEN;

	pkt.hdr.type = type;
	pkt.hdr.channel = c;
	pkt.body[0] = v;		/* status, reason */
	if (type == VNET_WIRE_RESUME) {
		pkt.hdr.channel = 0;
		pkt.body[0] = 0;
		pkt.body[3] = v;	/* the endpoint, big-endian */
		len = VNET_WIRE_RESUME_LEN;
	}
	gen_wire_rec(b, WIRE_IN_STEP, steps, &pkt, len);
}

/*
 * A message from E to B in step: a DATA packet, or with @frag_flags not
 * 0xff a fragment; to A as a reply with @to_a.
 */
static void gen_msg(struct gen_buf *b, u32 steps, bool to_a, u8 frag_flags,
		    u8 msg_flags, u32 msg_len, u32 off, u32 len)
{
	static struct {
		struct vnet_wire_hdr hdr;
		union {
			struct {
				struct vnet_wire_msg msg;
				u8 data[VNET_MEDIUM_MAX];
			} data;
			struct {
				struct vnet_wire_frag frag;
				struct vnet_wire_msg msg;
				u8 data[VNET_MEDIUM_MAX];
			} first;
			struct {
				struct vnet_wire_frag frag;
				u8 data[VNET_MEDIUM_MAX];
			} next;
		};
	} pkt;
	struct vnet_wire_msg *w = &pkt.data.msg;
	u32 hlen = VNET_WIRE_DATA_LEN;

	memset(&pkt, 0, sizeof(pkt));
	pkt.hdr.type = VNET_WIRE_DATA;
	if (frag_flags != 0xff) {
		pkt.hdr.type = VNET_WIRE_FRAG;
		pkt.first.frag.flags = frag_flags;
		pkt.first.frag.len = htobe16(len);
		pkt.first.frag.offset = htobe32(off);
		w = &pkt.first.msg;
		hlen = frag_flags & VNET_FRAG_FIRST ? VNET_WIRE_FIRST_LEN :
						      VNET_WIRE_FRAG_LEN;
	}
	if (hlen != VNET_WIRE_FRAG_LEN) {
		w->dst_ep = htobe32(to_a ? FZ_A : FZ_B);
		w->tag = htobe64(0xf022a11ULL);
		w->queue = to_a ? VNET_Q_REP_SEND : VNET_Q_REQ_SEND;
		w->handler = 1;
		w->nargs = 1;
		w->flags = msg_flags;
		w->len = htobe32(msg_len);
		if (frag_flags == 0xff)
			len = msg_len;
	}
	memset((u8 *)&pkt + hlen, 0x5b, len);
	gen_wire_rec(b, WIRE_IN_STEP, steps, &pkt, hlen + len);
}

/*
 * NIC 1 in step with NIC 0, answering whatever it sends: ACKs on every
 * channel, NACKs of each reason (and one past them), RESUMEs for F, and
 * replies to A, so that A goes on sending.
 */
static void gen_answers(const char *dir)
{
	struct gen_buf b = {};
	u32 i;

	for (i = 0; i < 200; i++) {
		if (i % 7 == 6)
			gen_answer(&b, 1, VNET_WIRE_NACK, i % 8, i / 7 % 5);
		else if (i % 11 == 10)
			gen_answer(&b, 1, VNET_WIRE_RESUME, 0, FZ_F);
		else
			gen_answer(&b, 1, VNET_WIRE_ACK, i % 8, i % 13 ? 0 : 9);
		if (i % 4 == 3)
			gen_msg(&b, 0, true, 0xff, 0, 0, 0, 0);
	}
	gen_wire_rec(&b, 0, 5, NULL, 0);
	gen_write(dir, "wire_fuzz", "answers", &b);
	free(b.data);
}

/*
 * NIC 1 in step, forging what E would send B: a short request (NACKed
 * while B comes onto the card, so twice), a medium one, and trains of
 * three fragments, medium and bulk.  NIC 0 must take both trains.
 */
static void gen_trains(const char *dir)
{
	const u32 m = VNET_WIRE_FRAG_MIN;
	struct gen_buf b = {};
	struct vnet_fw_nic_stats st;
	u8 fl = VNET_DESC_MEDIUM;

	gen_msg(&b, 1, false, 0xff, 0, 0, 0, 0);
	gen_msg(&b, 4, false, 0xff, 0, 0, 0, 0);
	gen_msg(&b, 2, false, 0xff, fl, 1000, 0, 0);
	gen_msg(&b, 2, false, VNET_FRAG_FIRST, fl, 3000, 0, m);
	gen_msg(&b, 1, false, 0, 0, 0, m, m);
	gen_msg(&b, 1, false, VNET_FRAG_LAST, 0, 0, 2 * m, 3000 - 2 * m);
	fl = VNET_DESC_XFER;
	gen_msg(&b, 2, false, VNET_FRAG_FIRST, fl, 2600, 0, m);
	gen_msg(&b, 1, false, 0, 0, 0, m, m);
	gen_msg(&b, 1, false, VNET_FRAG_LAST, 0, 0, 2 * m, 2600 - 2 * m);
	gen_wire_rec(&b, 0, 5, NULL, 0);
	st = gen_replay(&b);
	fz_assert(st.rx_trains == 2, "%llu trains taken",
		  (unsigned long long)st.rx_trains);
	gen_write(dir, "wire_fuzz", "trains", &b);
	free(b.data);
}

static void gen_op(struct gen_buf *b, u8 op, u8 steps, u8 arg, u16 off,
		   const void *bytes, u8 len)
{
	u8 hdr[5] = { op | steps << USER_STEPS_SHIFT, arg, off >> 8, off, len };

	gen_put(b, hdr, sizeof(hdr));
	gen_put(b, bytes, len);
}

static void gen_run(struct gen_buf *b, u8 quanta)
{
	gen_op(b, U_RUN, 0, quanta, 0, NULL, 0);
}

/* A descriptor posted whole on send queue @q. */
static void gen_post(struct gen_buf *b, unsigned int q,
		     const struct vnet_desc *d)
{
	gen_op(b, U_POST, 4, q, 0, d, sizeof(*d));
}

static void gen_user(const char *dir)
{
	struct vnet_desc d;
	struct gen_buf b = {};
	size_t race_run;
	u8 junk[64];
	u32 v;

	memset(junk, 0xa5, sizeof(junk));

	gen_run(&b, 40);
	gen_write(dir, "user_fuzz", "traffic", &b);

	/* Requests of each kind, to F (slot 0) and to S (slot 1). */
	b.len = 0;
	gen_run(&b, 2);
	d = (struct vnet_desc){ .handler = 1, .nargs = 2, .slot = 1,
				.flags = VNET_DESC_MEDIUM, .len = 3000 };
	gen_post(&b, VNET_Q_REQ_SEND, &d);
	d = (struct vnet_desc){ .handler = 1, .flags = VNET_DESC_XFER |
				VNET_DESC_FROM_SEG, .len = 12000,
				.offset = 4096, .src_offset = 100 };
	gen_post(&b, VNET_Q_REQ_SEND, &d);
	d = (struct vnet_desc){ .handler = 1, .flags = VNET_DESC_XFER,
				.len = 2000, .offset = 30000, .slot = 1 };
	gen_post(&b, VNET_Q_REQ_SEND, &d);
	d = (struct vnet_desc){ .handler = 9, .nargs = 1, .slot = 7 };
	gen_post(&b, VNET_Q_REQ_SEND, &d);
	gen_run(&b, 10);
	gen_write(dir, "user_fuzz", "posts", &b);

	/* Replies quoting the first tokens, G's requests' or none. */
	b.len = 0;
	gen_run(&b, 3);
	for (v = 0; v < 4; v++) {
		d = (struct vnet_desc){ .handler = 2, .token = v,
					.flags = VNET_DESC_MEDIUM, .len = 100 };
		gen_post(&b, VNET_Q_REP_SEND, &d);
	}
	d = (struct vnet_desc){ .handler = 2, .token = 1,
				.flags = VNET_DESC_CREDIT };
	gen_post(&b, VNET_Q_REP_SEND, &d);
	gen_run(&b, 10);
	gen_write(dir, "user_fuzz", "replies", &b);

	/* Descriptors every check refuses. */
	b.len = 0;
	d = (struct vnet_desc){ .handler = 1, .nargs = 200 };
	gen_post(&b, VNET_Q_REQ_SEND, &d);
	d = (struct vnet_desc){ .flags = 0xff, .len = ~0u, .slot = 0xffff };
	gen_post(&b, VNET_Q_REQ_SEND, &d);
	d = (struct vnet_desc){ .handler = 1, .__reserved0 = 1 };
	gen_post(&b, VNET_Q_REQ_SEND, &d);
	d = (struct vnet_desc){ .flags = VNET_DESC_XFER | VNET_DESC_FROM_SEG,
				.len = VNET_XFER_MAX, .src_offset = ~0ull };
	gen_post(&b, VNET_Q_REQ_SEND, &d);
	gen_run(&b, 10);
	gen_write(dir, "user_fuzz", "bad_descs", &b);

	/* Indices a queue's worth off, then back. */
	b.len = 0;
	gen_run(&b, 2);
	gen_op(&b, U_INDEX, 2, 4 | VNET_Q_REP_RECV, 20, NULL, 0);
	gen_op(&b, U_INDEX, 2, VNET_Q_REQ_SEND, 17, NULL, 0);
	gen_run(&b, 5);
	gen_op(&b, U_INDEX, 2, 4 | VNET_Q_REP_RECV, (u16)-20, NULL, 0);
	gen_op(&b, U_INDEX, 2, VNET_Q_REQ_SEND, (u16)-17, NULL, 0);
	v = 0x80000000;
	gen_op(&b, U_INDEX, 2, 8 | 4 | VNET_Q_REQ_RECV, 0, &v, 4);
	gen_run(&b, 10);
	gen_write(dir, "user_fuzz", "indices", &b);

	/* Junk over the header, a queue entry being sent, and staging. */
	b.len = 0;
	gen_run(&b, 1);
	gen_op(&b, U_FRAME, 1, 0, 0, junk, sizeof(junk));
	gen_op(&b, U_FRAME, 1, 0, offsetof(struct vnet_frame, queue), junk,
	       sizeof(junk));
	gen_op(&b, U_STAGING, 1, 0, 0, junk, sizeof(junk));
	gen_run(&b, 10);
	gen_write(dir, "user_fuzz", "junk", &b);

	/* Off the card and back; a segment replaced under a train. */
	b.len = 0;
	gen_run(&b, 5);
	gen_op(&b, U_MOVE, 10, 0, 0, NULL, 0);
	gen_run(&b, 3);
	gen_op(&b, U_MOVE, 10, 1, 0, NULL, 0);
	gen_op(&b, U_SEG, 0, 0, 0, junk, sizeof(junk));
	gen_op(&b, U_SET_SEG, 0, 0, 2048, NULL, 0);
	gen_run(&b, 5);
	gen_op(&b, U_SET_SEG, 0, 0, 0, NULL, 0);
	gen_run(&b, 10);
	gen_write(dir, "user_fuzz", "move_seg", &b);

	/*
	 * From the start the user rewrites whatever the firmware copies out
	 * of its frame, staging area or segment: requests of each kind and
	 * replies, each read once or the second read finds other bytes.
	 * Across the wire (slot 0, to F) a medium train and an XFER read
	 * from the segment a fragment at a time (past 8 KiB), posted before
	 * the rewriting starts (a descriptor the firmware found no channel
	 * for yet is read again, rewritten: another descriptor); on the NIC
	 * (slot 1, to S) each kind again.
	 */
	b.len = 0;
	d = (struct vnet_desc){ .handler = 1, .slot = 0, .len = 12000,
				.flags = VNET_DESC_XFER | VNET_DESC_FROM_SEG,
				.src_offset = 1000, .offset = 16000 };
	gen_post(&b, VNET_Q_REQ_SEND, &d);
	d = (struct vnet_desc){ .handler = 1, .nargs = 2, .slot = 0,
				.flags = VNET_DESC_MEDIUM, .len = 3000 };
	gen_post(&b, VNET_Q_REQ_SEND, &d);
	race_run = b.len;
	gen_op(&b, U_RUN, 0, 64 | 10, 0xa5, NULL, 0);
	d = (struct vnet_desc){ .handler = 1, .nargs = 2, .slot = 1,
				.flags = VNET_DESC_MEDIUM, .len = 3000 };
	gen_post(&b, VNET_Q_REQ_SEND, &d);
	d = (struct vnet_desc){ .handler = 1, .flags = VNET_DESC_XFER,
				.len = 2000, .offset = 30000, .slot = 1 };
	gen_post(&b, VNET_Q_REQ_SEND, &d);
	d = (struct vnet_desc){ .handler = 1, .flags = VNET_DESC_MEDIUM,
				.len = 700 };
	gen_post(&b, VNET_Q_REQ_SEND, &d);
	d = (struct vnet_desc){ .handler = 2, .token = 0,
				.flags = VNET_DESC_MEDIUM, .len = 100 };
	gen_post(&b, VNET_Q_REP_SEND, &d);
	gen_run(&b, 10);
	gen_write(dir, "user_fuzz", "race", &b);
	/*
	 * The same with trains copied out of the segment: a fragment sent
	 * from it rather than from the copy it was summed over sums wrong.
	 */
	b.data[race_run + 1] |= 128;
	gen_write(dir, "user_fuzz", "race_copied", &b);

	/* Closed halfway through its traffic. */
	b.len = 0;
	gen_run(&b, 3);
	gen_op(&b, U_MOVE, 10, 2, 0, NULL, 0);
	gen_run(&b, 10);
	gen_write(dir, "user_fuzz", "close", &b);
	free(b.data);
}

/* A cluster_fuzz record. */
static void gen_c(struct gen_buf *b, enum cluster_op op, u8 arg)
{
	u8 rec[2] = { op, arg };

	gen_put(b, rec, sizeof(rec));
}

/* cluster_fuzz: each kind of event, between stretches of traffic. */
static void gen_cluster(const char *dir)
{
	struct gen_buf b = {};
	u32 i;

	for (i = 0; i < 4; i++)
		gen_c(&b, C_RUN, 63);
	gen_write(dir, "cluster_fuzz", "traffic", &b);
	b.len = 0;
	for (i = 0; i < 2 * FZ_EPS; i++) {
		gen_c(&b, C_RUN, 20);
		gen_c(&b, C_MOVE, i);
	}
	gen_write(dir, "cluster_fuzz", "moves", &b);
	b.len = 0;
	/* 5% loss, 1% duplicated, 5% reordered, 1% corrupt. */
	gen_c(&b, C_FAULTS, 2 | 1 << 2 | 2 << 4 | 1 << 6);
	for (i = 0; i < 4; i++) {
		gen_c(&b, C_RUN, 63);
		gen_c(&b, C_MOVE, 2 * i);
	}
	gen_write(dir, "cluster_fuzz", "lossy", &b);
	b.len = 0;
	gen_c(&b, C_RUN, 30);
	gen_c(&b, C_LINK, 1 | 2);
	gen_c(&b, C_RUN, 64 | 8);
	gen_c(&b, C_LINK, 1);
	gen_c(&b, C_RUN, 63);
	gen_write(dir, "cluster_fuzz", "link_cut", &b);
	b.len = 0;
	gen_c(&b, C_RUN, 30);
	gen_c(&b, C_ROUTE, 0 | 2);
	gen_c(&b, C_RUN, 64 | 2);
	gen_c(&b, C_ROUTE, 0);
	gen_c(&b, C_RUN, 63);
	gen_write(dir, "cluster_fuzz", "route", &b);
	b.len = 0;
	gen_c(&b, C_MUTE, 2 * FZ_C);
	gen_c(&b, C_RUN, 40);
	gen_c(&b, C_MOVE, 2 * FZ_D);
	gen_c(&b, C_MUTE, 2 * FZ_C);
	gen_c(&b, C_RUN, 63);
	gen_write(dir, "cluster_fuzz", "mute", &b);
	b.len = 0;
	/* Servers close with requests in and out: D, then F across the wire. */
	gen_c(&b, C_RUN, 12);
	gen_c(&b, C_CLOSE, 2 * FZ_D);
	gen_c(&b, C_RUN, 20);
	gen_c(&b, C_CLOSE, 1 | 2 * FZ_F);
	gen_c(&b, C_RUN, 63);
	gen_write(dir, "cluster_fuzz", "close", &b);
	b.len = 0;
	/* NIC 1 reboots mid-traffic, on a clean wire and then a lossy one. */
	gen_c(&b, C_RUN, 25);
	gen_c(&b, C_REBOOT, 1);
	gen_c(&b, C_RUN, 40);
	gen_c(&b, C_FAULTS, 2 | 1 << 2);
	gen_c(&b, C_RUN, 33);
	gen_c(&b, C_REBOOT, 1);
	gen_c(&b, C_RUN, 63);
	gen_c(&b, C_REBOOT, 0);
	gen_c(&b, C_RUN, 63);
	gen_write(dir, "cluster_fuzz", "reboot", &b);
	free(b.data);
}

/* A dictionary entry: @name, @len bytes of @v, big-endian. */
static void dict_be(FILE *out, const char *name, u64 v, u32 len)
{
	fprintf(out, "%s=\"", name);
	while (len--)
		fprintf(out, "\\x%02x", (unsigned int)(v >> (8 * len)) & 0xff);
	fprintf(out, "\"\n");
}

/*
 * wire.dict, from the values themselves: "make dict" holds the tree's
 * copy to this, so the fuzzers never mutate with stale ones.
 */
static int gen_dict(const char *path)
{
	static const struct {
		const char *name;
		u8 type;
	} types[] = {
		{ "data", VNET_WIRE_DATA }, { "ack", VNET_WIRE_ACK },
		{ "nack", VNET_WIRE_NACK }, { "resume", VNET_WIRE_RESUME },
		{ "mapper", VNET_WIRE_MAPPER }, { "frag", VNET_WIRE_FRAG },
	};
	FILE *out = fopen(path, "w");
	char name[32];
	u32 i;

	if (!out)
		return 1;
	_Static_assert(VNET_WIRE_FRAG - VNET_WIRE_DATA + 1 == ARRAY_SIZE(types),
		       "a type the dictionary does not name");
	/* Put together, so that checkpatch takes it for no tag of ours. */
	fprintf(out, "# %s-%s: GPL-2.0\n", "SPDX", "License-Identifier");
	fprintf(out, "# The vnet wire format's values (firmware/wire.h, uapi/linux/vnet.h), for\n"
		"# the wire fuzzers.  Multi-byte values are big-endian, as on the wire.\n"
		"# Written by seed_gen --dict (make dict checks it).\n\n"
		"# Version, then type: DATA, ACK, NACK, RESUME, MAPPER, FRAG.\n");
	for (i = 0; i < ARRAY_SIZE(types); i++) {
		snprintf(name, sizeof(name), "hdr_%s", types[i].name);
		dict_be(out, name, VNET_WIRE_VERSION << 8 | types[i].type, 2);
	}
	dict_be(out, "version", VNET_WIRE_VERSION, 1);
	fprintf(out, "# Header flags: SYNC.\n");
	dict_be(out, "sync", VNET_WIRE_SYNC, 1);
	fprintf(out, "# src_nic, dst_nic: NIC 1 to NIC 0; the mapper's \"any\".\n");
	dict_be(out, "nics", 1 << 16 | 0, 4);
	dict_be(out, "nic_any", VNET_WIRE_NIC_ANY, 2);
	fprintf(out, "# vnet_wire_frag.flags: FIRST, LAST, both (malformed).\n");
	dict_be(out, "frag_first", VNET_FRAG_FIRST, 1);
	dict_be(out, "frag_last", VNET_FRAG_LAST, 1);
	dict_be(out, "frag_both", VNET_FRAG_FIRST | VNET_FRAG_LAST, 1);
	fprintf(out, "# Fragment lengths: VNET_WIRE_FRAG_MIN (%u), VNET_MEDIUM_MAX (%u).\n",
		(unsigned int)VNET_WIRE_FRAG_MIN, VNET_MEDIUM_MAX);
	dict_be(out, "frag_min", VNET_WIRE_FRAG_MIN, 2);
	dict_be(out, "frag_min_less", VNET_WIRE_FRAG_MIN - 1, 2);
	dict_be(out, "medium_max", VNET_MEDIUM_MAX, 2);
	fprintf(out, "# Message lengths: VNET_MEDIUM_MAX, one past it, VNET_XFER_MAX.\n");
	dict_be(out, "len_medium", VNET_MEDIUM_MAX, 4);
	dict_be(out, "len_medium_past", VNET_MEDIUM_MAX + 1, 4);
	dict_be(out, "len_xfer", VNET_XFER_MAX, 4);
	fprintf(out, "# vnet_wire_msg.queue: request, reply; descriptor flags MEDIUM, XFER,\n"
		"# CREDIT, and FROM_SEG (never on the wire).\n");
	dict_be(out, "queue_req", VNET_Q_REQ_SEND, 1);
	dict_be(out, "queue_rep", VNET_Q_REP_SEND, 1);
	dict_be(out, "flags_medium", VNET_DESC_MEDIUM, 1);
	dict_be(out, "flags_xfer", VNET_DESC_XFER, 1);
	dict_be(out, "flags_credit", VNET_DESC_CREDIT, 1);
	dict_be(out, "flags_from_seg", VNET_DESC_FROM_SEG, 1);
	fprintf(out, "# ACK status (return reasons) and NACK reasons.\n");
	dict_be(out, "status_none", VNET_RET_NONE, 1);
	dict_be(out, "status_busy", VNET_RET_BUSY, 1);
	dict_be(out, "status_past", VNET_RET_NR, 1);
	dict_be(out, "nack_queue_full", VNET_NACK_QUEUE_FULL, 1);
	dict_be(out, "nack_not_resident", VNET_NACK_NOT_RESIDENT, 1);
	dict_be(out, "nack_resync", VNET_NACK_RESYNC, 1);
	dict_be(out, "nack_restart", VNET_NACK_RESTART, 1);
	dict_be(out, "nack_past", VNET_NACK_NR, 1);
	fprintf(out, "# The fuzzed NIC's endpoints, and the tag its servers take.\n");
	dict_be(out, "ep_a", FZ_A, 4);
	dict_be(out, "ep_b", FZ_B, 4);
	dict_be(out, "ep_d", FZ_D, 4);
	dict_be(out, "ep_s", FZ_S, 4);
	dict_be(out, "tag", FZ_TAG, 8);
	fprintf(out, "# Mapper datagram length: VNET_MAPPER_MTU.\n");
	dict_be(out, "mapper_mtu", VNET_MAPPER_MTU, 2);
	return fclose(out) ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--dict"))
		return gen_dict(argv[2]);
	if (argc != 2) {
		fprintf(stderr, "usage: seed_gen DIR | --dict FILE\n");
		return 2;
	}
	setlinebuf(stdout);
	vnet_fw_crc32c_init();
	mkdir(argv[1], 0777);
	/* Long enough for a message of every kind, short enough to mutate. */
	gen_wire(argv[1], "f_only", 300, false, false, 0);
	gen_wire(argv[1], "e_to_b", 60, true, false, 0);
	gen_wire(argv[1], "g_to_a", 60, false, true, 0);
	gen_wire(argv[1], "everyone", 50, true, true, 0);
	gen_wire(argv[1], "lossy", 200, true, true, 4);
	gen_mapper(argv[1]);
	gen_host(argv[1]);
	gen_answers(argv[1]);
	gen_trains(argv[1]);
	gen_user(argv[1]);
	gen_cluster(argv[1]);
	return 0;
}
