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
 *   seed_gen DIR     writes DIR/wire_fuzz/ and DIR/user_fuzz/
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

/* What NIC 1 puts on the wire for NIC 0, padded as sim_transmit() pads. */
static void gen_transmit(void *ctx, u32 peer, const void *hdr, u32 hdr_len,
			 const void *payload, u32 len)
{
	struct sim_nic *s = ctx;
	u8 *buf = gen.frame[gen.pending];
	u32 total = hdr_len + len;

	if (s->fw.peers[peer].nic_id != 0 ||
	    (gen.drop_every && !(++gen.sent % gen.drop_every)))
		return;
	fz_assert(gen.pending < GEN_PENDING, "%u frames in a step",
		  gen.pending);
	memcpy(buf, hdr, hdr_len);
	if (len)
		memcpy(buf + hdr_len, payload, len);
	if (total < 46) {
		memset(buf + total, 0, 46 - total);
		total = 46;
	}
	gen.frame_len[gen.pending++] = total;
}

static void gen_wire_rec(struct gen_buf *b, u32 steps, const u8 *frame,
			 u32 len)
{
	u8 hdr[3];

	/* Longer waits than a record holds: records with no frame. */
	for (; steps > 0x3f; steps -= 0x3f)
		gen_put(b, (u8[]){ 0x3f, 0, 0 }, 3);
	hdr[0] = steps;
	hdr[1] = len >> 8;
	hdr[2] = len;
	gen_put(b, hdr, 3);
	gen_put(b, frame, len);
}

/* The seed replayed as wire_fuzz does: NIC 0's counters at its end. */
static struct vnet_fw_nic_stats gen_replay(const struct gen_buf *b)
{
	struct vnet_fw_nic_stats st;
	size_t pos = 0;

	fz_init(&gen.f, false);
	while (pos + 3 <= b->len) {
		u32 len = b->data[pos + 1] << 8 | b->data[pos + 2];

		fz_run(&gen.f, b->data[pos] & 0x3f, FZ_DT);
		if (len)
			fz_inject(&gen.f, b->data + pos + 3, len, false);
		pos += 3 + len;
	}
	st = gen.f.net.nic[0]->fw.stats;
	fz_settle(&gen.f);
	fz_fini(&gen.f);
	return st;
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
			gen_wire_rec(&b, since, gen.frame[i], gen.frame_len[i]);
			fz_inject(&gen.f, gen.frame[i], gen.frame_len[i], false);
			since = 0;
		}
		gen.pending = 0;
		fz_run(&gen.f, 1, FZ_DT);
		since++;
	}
	gen_wire_rec(&b, since, NULL, 0);
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

/*
 * A mapper datagram, as vnet_fw_mapper_send() frames it, to everyone;
 * a route that flaps.
 */
static void gen_wire_events(const char *dir)
{
	struct {
		struct vnet_wire_hdr hdr;
		struct vnet_wire_mapper m;
		u8 payload[32];
	} pkt = {};
	struct gen_buf b = {};

	vnet_fw_crc32c_init();
	pkt.hdr.version = VNET_WIRE_VERSION;
	pkt.hdr.type = VNET_WIRE_MAPPER;
	pkt.hdr.src_nic = htobe16(1);
	pkt.hdr.dst_nic = htobe16(VNET_WIRE_NIC_ANY);
	pkt.m.len = htobe16(sizeof(pkt.payload));
	memset(pkt.payload, 'm', sizeof(pkt.payload));
	pkt.hdr.csum = htobe32(vnet_crc32c(0, &pkt, sizeof(pkt)));
	gen_wire_rec(&b, 5, (const u8 *)&pkt, sizeof(pkt));
	gen_wire_rec(&b, 5, NULL, 0);
	gen_write(dir, "wire_fuzz", "mapper", &b);

	/* NIC 0's route to NIC 1 goes while A sends, and comes back. */
	b.len = 0;
	gen_put(&b, (u8[]){ 0x80 | 20, 0, 0 }, 3);
	gen_put(&b, (u8[]){ 0x80 | 0x40 | 3, 0, 0 }, 3);
	gen_put(&b, (u8[]){ 0x40 | 5, 0, 0 }, 3);
	gen_write(dir, "wire_fuzz", "route_flap", &b);
	free(b.data);
}

enum { U_FRAME, U_STAGING, U_POST, U_INDEX, U_SEG, U_SET_SEG, U_RUN, U_MOVE };

static void gen_op(struct gen_buf *b, u8 op, u8 steps, u8 arg, u16 off,
		   const void *bytes, u8 len)
{
	u8 hdr[5] = { op | steps << 3, arg, off >> 8, off, len };

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

	/* Closed halfway through its traffic. */
	b.len = 0;
	gen_run(&b, 3);
	gen_op(&b, U_MOVE, 10, 2, 0, NULL, 0);
	gen_run(&b, 10);
	gen_write(dir, "user_fuzz", "close", &b);
	free(b.data);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: seed_gen DIR\n");
		return 2;
	}
	setlinebuf(stdout);
	mkdir(argv[1], 0777);
	/* Long enough for a message of every kind, short enough to mutate. */
	gen_wire(argv[1], "f_only", 300, false, false, 0);
	gen_wire(argv[1], "e_to_b", 60, true, false, 0);
	gen_wire(argv[1], "g_to_a", 60, false, true, 0);
	gen_wire(argv[1], "everyone", 50, true, true, 0);
	gen_wire(argv[1], "lossy", 200, true, true, 4);
	gen_wire_events(argv[1]);
	gen_user(argv[1]);
	return 0;
}
