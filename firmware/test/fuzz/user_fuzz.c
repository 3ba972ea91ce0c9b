// SPDX-License-Identifier: GPL-2.0
/*
 * A hostile user: the fuzzer writes into everything endpoint A of the
 * cluster in fuzz_net.h maps -- its frame (queue indices, descriptors,
 * the header, the padding), its staging area and its segment -- between
 * the firmware's rounds, while A's own user keeps posting to F and to S
 * (two requests out at a time, a place freed by whatever it reads back)
 * and answering G, and the other endpoints talk among themselves.  The
 * firmware copies what it reads there once and checks the copy: none of
 * it may crash it, break its books, reach an endpoint A has no business
 * with, or keep it from returning or delivering the others' messages.
 *
 * An input is a sequence of records:
 *
 *   u8   op     bits 0-2: what (below); bits 3-7: steps of the wire to
 *               run after it
 *   u8   arg
 *   be16 off
 *   u8   len
 *   u8   bytes[len]  what is left of the input, if it ends first
 *
 * FRAME    bytes at off in A's frame (loaded first, as the user's own
 *          access would fault it in)
 * STAGING  bytes at 8 * off in A's staging area
 * POST     a descriptor on send queue arg & 1: a short request through
 *          slot (arg >> 1) & 1, or a reply, with bytes over it at off;
 *          the producer index moves on by one
 * INDEX    index arg & 3 (prod, or with arg & 4 cons) of A's frame moves
 *          by (s16)off, or with arg & 8 becomes the first four bytes
 * SEG      bytes at off in A's segment
 * SET_SEG  A's segment becomes 2 * off bytes long, none for 0
 * RUN      arg & 63 quanta of the wire; with arg & 64, from then on the
 *          user rewrites what the firmware has just copied out of its
 *          frame, staging area or segment where it says so
 *          (fw_user_fetched(): a queue entry, a payload going to the
 *          wire), and a fragment sent from its segment's pages as they
 *          go, XOR off | 1, so that a second read of the same bytes
 *          finds others than the copy it checked; with arg & 128, from
 *          then on NIC 0 copies trains out of segments rather than
 *          send them from the segments' pages
 * MOVE     A moves off the card (the host's way: moving, flushed,
 *          unloaded), with arg & 3 == 1 comes back, with 2 closes:
 *          the ops after that have nothing left to write into
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "fuzz_net.h"

/* Steps an input may run at most, so that none takes seconds. */
#define USER_MAX_STEPS	4096

struct user_rec {
	u8 op, arg;
	u16 off;
	u32 len;
	const u8 *bytes;
};

static bool user_next(const u8 *data, size_t size, size_t *pos,
		      struct user_rec *r)
{
	if (*pos > size || size - *pos < 5)
		return false;
	r->op = data[*pos];
	r->arg = data[*pos + 1];
	r->off = data[*pos + 2] << 8 | data[*pos + 3];
	r->len = data[*pos + 4];
	*pos += 5;
	if (r->len > size - *pos)
		r->len = size - *pos;
	r->bytes = data + *pos;
	*pos += r->len;
	return true;
}

/* @len bytes of @r at @at of a region of @size, as many as fit. */
static void user_write(u8 *region, u64 size, u64 at, const struct user_rec *r)
{
	if (!size || at >= size)
		return;
	memcpy(region + at, r->bytes, r->len < size - at ? r->len : size - at);
}

static struct {
	struct fz_net *f;
	u8 flip;			/* 0: the user leaves what was read */
} user_race;

/* The firmware has just copied @n bytes at @p: are they A's, change them. */
static void user_fetched(void *p, size_t n)
{
	struct sim_ep *e = &user_race.f->net.nic[0]->ep[FZ_A];
	u8 *b = p;
	size_t i;

	if (!user_race.flip || !e->exists)
		return;
	if (!((b >= (u8 *)e->frame &&
	       b + n <= (u8 *)e->frame + VNET_FRAME_SIZE) ||
	      (b >= e->staging && b + n <= e->staging + VNET_STAGING_SIZE) ||
	      (e->fw.seg && b >= e->fw.seg && b + n <= e->fw.seg +
						      e->fw.seg_len)))
		return;
	for (i = 0; i < n; i++)
		b[i] ^= user_race.flip;
}

/*
 * A fragment of A's is sent from its segment (zero copy): with its race
 * on, A writes the bytes as the pages go, after the firmware summed them,
 * and the packet may sum wrong.  Otherwise A writes only between rounds,
 * and every packet must sum right: the firmware sums what it sends.
 */
static bool user_seg_race(const struct vnet_fw_ep *ep, u8 *bytes, u32 len)
{
	const struct sim_ep *e = &user_race.f->net.nic[0]->ep[FZ_A];
	u32 i;

	if (!user_race.flip || !e->exists || ep != &e->fw)
		return false;
	for (i = 0; i < len; i++)
		bytes[i] ^= user_race.flip;
	return true;
}

/* The user touches its frame: it is brought onto the card first. */
static struct vnet_frame *user_frame(struct fz_net *f)
{
	struct sim_nic *s = f->net.nic[0];

	if (!s->ep[FZ_A].fw.frame)
		sim_load(s, FZ_A);
	return s->ep[FZ_A].frame;
}

static void user_post(struct fz_net *f, const struct user_rec *r)
{
	struct sim_ep *e = &f->net.nic[0]->ep[FZ_A];
	unsigned int q = r->arg & 1;
	struct vnet_desc d = { .handler = 1, .nargs = 1 };
	struct vnet_frame *frame = user_frame(f);
	u32 prod = e->send_prod[q];

	if (q == VNET_Q_REQ_SEND)
		d.slot = (r->arg >> 1) & 1;
	user_write((u8 *)&d, sizeof(d), r->off % sizeof(d), r);
	frame->queue[q][prod & (VNET_QUEUE_DEPTH - 1)] = d;
	/* What A's own user posts next goes after it. */
	e->send_prod[q] = prod + 1;
	fw_store_release(&frame->prod[q].val, prod + 1);
}

static void user_index(struct fz_net *f, const struct user_rec *r)
{
	struct vnet_frame *frame = user_frame(f);
	unsigned int q = r->arg & 3;
	u32 *index = r->arg & 4 ? &frame->cons[q].val : &frame->prod[q].val;
	u32 v = *index + (int16_t)r->off;

	if ((r->arg & 8) && r->len >= 4)
		memcpy(&v, r->bytes, 4);
	fw_store_release(index, v);
}

static void user_set_seg(struct fz_net *f, u32 len)
{
	struct vnet_fw_ep *ep = &f->net.nic[0]->ep[FZ_A].fw;

	free(ep->seg);
	ep->seg = len ? calloc(1, len) : NULL;
	ep->seg_len = len;
	ep->seg_gen++;			/* as vnet_ep_set_seg() does */
}

/* A's file is closed, as vnet_ep_close() does it. */
static void user_close(struct fz_net *f)
{
	struct sim_nic *s = f->net.nic[0];

	s->ep[FZ_A].exists = false;
	vnet_fw_ep_forget(&s->fw, &s->ep[FZ_A].fw);
	sim_unload(s, FZ_A);
	user_set_seg(f, 0);
}

/* A moves off the card, comes back, or closes. */
static void user_move(struct fz_net *f, u8 how)
{
	if (how == 1)
		user_frame(f);
	else if (how == 2)
		user_close(f);
	else
		fz_move(f, 0, FZ_A);
}

int LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
	static struct fz_net f;
	u32 budget = USER_MAX_STEPS;
	struct user_rec r;
	size_t pos = 0;
	struct sim_ep *e;

	fz_init(&f, true);
	user_race.f = &f;
	user_race.flip = 0;
	fw_test_fetched = user_fetched;
	fz_seg_race = user_seg_race;
	f.user[0][FZ_A].hostile = true;
	f.bulk_replies = true;
	/* A may hold S's reply queue for ever with its own (design.rst). */
	f.user[0][FZ_S].tainted = true;
	e = &f.net.nic[0]->ep[FZ_A];
	while (user_next(data, size, &pos, &r)) {
		u32 steps = r.op >> USER_STEPS_SHIFT;
		u64 dt = FZ_DT;
		u8 op = r.op & USER_OP;

		/* Closed: the user has no frame, staging or segment. */
		if (!e->exists && op != U_RUN)
			op = U_NONE;
		switch (op) {
		case U_FRAME:
			user_write((u8 *)user_frame(&f), VNET_FRAME_SIZE, r.off,
				   &r);
			break;
		case U_STAGING:
			user_write(e->staging, VNET_STAGING_SIZE, 8ULL * r.off,
				   &r);
			break;
		case U_POST:
			user_post(&f, &r);
			break;
		case U_INDEX:
			user_index(&f, &r);
			break;
		case U_SEG:
			user_write(e->fw.seg, e->fw.seg_len, r.off, &r);
			break;
		case U_SET_SEG:
			user_set_seg(&f, 2 * r.off);
			break;
		case U_RUN:
			steps = r.arg & 63;
			dt = f.net.nic[0]->fw.quantum;
			if (r.arg & 64)
				user_race.flip = r.off | 1;
			if (r.arg & 128)
				f.net.nic[0]->fw.zero_copy = false;
			break;
		case U_MOVE:
			user_move(&f, r.arg & 3);
			break;
		default:
			break;
		}
		if (steps > budget)
			steps = budget;
		budget -= steps;
		fz_run(&f, steps, dt);
	}
	/* Its returns and its trains' ends wait for it on the card. */
	if (e->exists)
		user_frame(&f);
	fz_settle(&f);
	fz_fini(&f);
	return 0;
}
