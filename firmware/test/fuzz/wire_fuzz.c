// SPDX-License-Identifier: GPL-2.0
/*
 * Frames off the wire into a NIC in the middle of a conversation: NIC 1
 * of the cluster in fuzz_net.h says nothing itself, and the fuzzer speaks
 * for it, or for a stranger, to NIC 0, whose users keep posting and
 * answering as usual meanwhile.  Whatever it sends, NIC 0 must not crash,
 * break its own books, deliver anything malformed, or keep anything once
 * its timeouts have run out.
 *
 * An input is a sequence of records:
 *
 *   u8   ctl        bits 0-4: steps of the wire to run before the frame;
 *                   bit 5: those steps are a quantum long, not FZ_DT;
 *                   bit 6: in step: the frame gets what NIC 1 would
 *                   know to write into it (wire_in_step());
 *                   bit 7: the frame comes from an address no route has,
 *                   not from NIC 1's
 *   be16 len        the frame's length; 0: no frame, only the steps;
 *                   1: no frame but what the host does (wire_host())
 *   u8   frame[len] what is left of the input, if it ends first
 *
 * then the cluster settles (fz_settle()).  The seeds (seed_gen.c) are
 * mostly what NIC 1 said in conversations with NIC 0, at the steps it
 * said it: every run is deterministic, so a seed replays its conversation
 * exactly, and each frame in it carries the sequence numbers and stamps
 * NIC 0 expects -- until a mutation changes what NIC 0 does.  Frames in
 * step keep up with it whatever it does.
 *
 * Built twice from this file: wire_fuzz takes the frames as they are.
 * wire_crc_fuzz (WIRE_FIX_CRC) has a mutator that, after libFuzzer's,
 * makes each frame's length fields fit it and its checksum right, so that
 * its mutations get past the checksum into the protocol; the inputs it
 * makes are ordinary inputs, which either binary replays.
 */
#include <stdio.h>

#include "fuzz_net.h"

/* Steps an input may run at most, so that none takes seconds. */
#define WIRE_MAX_STEPS	4096

struct wire_rec {
	u8 ctl;
	u32 len;
	size_t at;			/* of the frame in the input */
};

/* The record at *@pos of @data, moving *@pos past it; false at the end. */
static bool wire_next(const u8 *data, size_t size, size_t *pos,
		      struct wire_rec *r)
{
	if (*pos > size || size - *pos < 3)
		return false;
	r->ctl = data[*pos];
	r->len = data[*pos + 1] << 8 | data[*pos + 2];
	*pos += 3;
	if (r->len > size - *pos)
		r->len = size - *pos;
	r->at = *pos;
	*pos += r->len;
	return true;
}

static u32 wire_min(u32 a, u32 b)
{
	return a < b ? a : b;
}

/*
 * The packet's length as its header says it, its length field first cut
 * to what @len holds: what the receiver checksums (receive.c, mapper.c).
 */
static u32 wire_fix_len(u8 *pkt, u32 len)
{
	struct vnet_wire_hdr *h = (void *)pkt;
	struct vnet_wire_msg *w = (void *)(h + 1);
	struct vnet_wire_frag *fr = (void *)(h + 1);
	struct vnet_wire_mapper *m = (void *)(h + 1);
	u32 hlen, n;

	switch (h->type) {
	case VNET_WIRE_DATA:
		hlen = VNET_WIRE_DATA_LEN;
		if (len < hlen)
			return len;
		n = wire_min(be32toh(w->len),
			     wire_min(len - hlen, VNET_MEDIUM_MAX));
		w->len = htobe32(n);
		return hlen + n;
	case VNET_WIRE_FRAG:
		/*
		 * Its flags say how long its header is, and are in the
		 * buffer only if the packet reaches them: past @len are
		 * the bytes of an earlier input.
		 */
		if (len < VNET_WIRE_FRAG_LEN)
			return len;
		hlen = fr->flags & VNET_FRAG_FIRST ? VNET_WIRE_FIRST_LEN :
						     VNET_WIRE_FRAG_LEN;
		if (len < hlen)
			return len;
		n = wire_min(be16toh(fr->len),
			     wire_min(len - hlen, VNET_MEDIUM_MAX));
		fr->len = htobe16(n);
		return hlen + n;
	case VNET_WIRE_MAPPER:
		hlen = VNET_WIRE_MAPPER_LEN;
		if (len < hlen)
			return len;
		n = wire_min(be16toh(m->len),
			     wire_min(len - hlen, VNET_MAPPER_MTU));
		m->len = htobe16(n);
		return hlen + n;
	case VNET_WIRE_ACK:
	case VNET_WIRE_NACK:
		return wire_min(len, VNET_WIRE_ACK_LEN);
	case VNET_WIRE_RESUME:
		return wire_min(len, VNET_WIRE_RESUME_LEN);
	}
	return len;
}

/* The checksum of the packet in @pkt, of @len bytes as it says. */
static void wire_sum(u8 *pkt, u32 len)
{
	struct vnet_wire_hdr *h = (void *)pkt;

	h->csum = 0;
	h->csum = htobe32(vnet_crc32c(0, pkt, len));
}

/* A reply to A quotes A's reply key, which its requests told NIC 1. */
static void wire_key(struct fz_net *f, struct vnet_wire_msg *w)
{
	u64 key = f->net.nic[0]->ep[FZ_A].fw.reply_key;

	if (w->queue != VNET_Q_REP_SEND || be32toh(w->dst_ep) != FZ_A)
		return;
	w->key_hi = htobe32(key >> 32);
	w->key_lo = htobe32((u32)key);
}

/*
 * What NIC 1 would write into the frame in @pkt, aligned, of @len bytes:
 * its address and its route's incarnation; for DATA and FRAG the sequence
 * number NIC 0's channel expects (SYNC if it has none), for a fragment
 * the train open there, where it stands, and for the last one the
 * checksum of the whole; for a reply to A the reply key A's requests
 * carry; for an ACK or NACK the sequence number and stamp NIC 0 last
 * sent on the channel; lengths that fit, and the checksum.  The rest --
 * type, channel, flags, the message, the status -- is the fuzzer's.
 */
static void wire_in_step(struct fz_net *f, u8 *pkt, u32 len)
{
	const struct vnet_fw_nic *a = &f->net.nic[0]->fw;
	const struct vnet_fw_nic *b = &f->net.nic[1]->fw;
	struct vnet_wire_hdr *h = (void *)pkt;
	struct vnet_wire_frag *fr = (void *)(h + 1);
	const struct vnet_fw_recv_chan *rc;
	const struct vnet_fw_send_chan *tc;
	const struct vnet_fw_train *t;
	u32 plen;

	if (len < sizeof(*h))
		return;
	h->version = VNET_WIRE_VERSION;
	h->src_nic = htobe16(1);
	h->dst_nic = htobe16(0);
	h->incarnation = htobe32(b->peers[b->peer_of[0]].incarnation);
	plen = wire_fix_len(pkt, len);
	if (a->peer_of[1] == VNET_FW_NO_PEER ||
	    h->channel >= VNET_WIRE_CHANNELS)
		goto sum;
	rc = &a->peers[a->peer_of[1]].rx[h->channel];
	/* An answer past our send channels is a bad frame: leave it so. */
	tc = h->channel < a->nchannels ? &a->peers[a->peer_of[1]].tx[h->channel] :
					 NULL;
	t = rc->train ? &a->trains[rc->train - 1] : NULL;
	if ((h->type == VNET_WIRE_DATA && plen >= VNET_WIRE_DATA_LEN) ||
	    (h->type == VNET_WIRE_FRAG && plen >= VNET_WIRE_FIRST_LEN &&
	     (fr->flags & VNET_FRAG_FIRST)))
		wire_key(f, h->type == VNET_WIRE_DATA ? (void *)(h + 1) :
			 (void *)(fr + 1));
	switch (h->type) {
	case VNET_WIRE_FRAG:
		if (plen < VNET_WIRE_FRAG_LEN)
			break;
		if (fr->flags & VNET_FRAG_FIRST) {
			fr->train = rc->valid ? htobe32(rc->expected) : h->seq;
		} else if (t) {
			const u8 *bytes = pkt + VNET_WIRE_FRAG_LEN;
			u32 crc = vnet_crc32c(t->crc, bytes, be16toh(fr->len));

			fr->train = htobe32(t->first);
			fr->offset = htobe32(t->received);
			if (fr->flags & VNET_FRAG_LAST)
				fr->csum = htobe32(crc);
		}
		/* fall through */
	case VNET_WIRE_DATA:
		if (rc->valid)
			h->seq = htobe32(rc->expected);
		else
			h->flags |= VNET_WIRE_SYNC;
		break;
	case VNET_WIRE_ACK:
	case VNET_WIRE_NACK:
		if (!tc)
			break;
		h->seq = htobe32(tc->seq);
		h->stamp = htobe32(tc->stamp);
		break;
	}
sum:
	wire_sum(pkt, plen);
}

/*
 * What the host does: @what & 8, endpoint @what & 7 of NIC 0 moves off
 * the card; else NIC 0's route to NIC 1 goes, or comes back (a link
 * flaps and its mapper says so).
 */
static void wire_host(struct fz_net *f, u8 what)
{
	struct vnet_fw_nic *fw = &f->net.nic[0]->fw;
	u8 mac[6];

	if (what & 8) {
		fz_move(f, 0, (what & 7) % FZ_EPS);
		return;
	}
	if (vnet_fw_route_del(fw, 1, f->net.now))
		return;
	sim_mac(1, mac);
	/* Its slot is kept for it: it has it back at once. */
	fz_assert(vnet_fw_route_add(fw, 1, mac, f->net.now) >= 0,
		  "no route to NIC 1 again");
}

int LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
	static struct fz_net f;
	static u8 pkt[65536] __aligned(8);
	u32 budget = WIRE_MAX_STEPS;
	struct wire_rec r;
	size_t pos = 0;

	fz_init(&f, false);
	while (wire_next(data, size, &pos, &r)) {
		u32 steps = r.ctl & WIRE_STEPS;

		if (steps > budget)
			steps = budget;
		budget -= steps;
		fz_run(&f, steps, r.ctl & WIRE_QUANTA ? f.net.nic[0]->fw.quantum :
						 FZ_DT);
		if (r.len == 1) {
			wire_host(&f, data[r.at]);
			continue;
		}
		if (!r.len)
			continue;
		memcpy(pkt, data + r.at, r.len);
		if (r.ctl & WIRE_IN_STEP)
			wire_in_step(&f, pkt, r.len);
		fz_inject(&f, pkt, r.len, r.ctl & WIRE_STRANGER);
	}
	fz_settle(&f);
	fz_fini(&f);
	return 0;
}

#ifdef WIRE_FIX_CRC
size_t LLVMFuzzerMutate(u8 *data, size_t size, size_t max_size);

/* The mutator sums frames before any input has built a NIC. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	vnet_fw_crc32c_init();
	return 0;
}

/* Fix the frame of @len bytes at @at, which has no alignment. */
static void wire_fix(u8 *at, u32 len)
{
	static u8 pkt[65536] __aligned(8);

	if (len < sizeof(struct vnet_wire_hdr))
		return;
	memcpy(pkt, at, len);
	wire_sum(pkt, wire_fix_len(pkt, len));
	memcpy(at, pkt, len);
}

size_t LLVMFuzzerCustomMutator(u8 *data, size_t size, size_t max_size,
			       unsigned int seed)
{
	struct wire_rec r;
	size_t pos = 0;

	(void)seed;
	size = LLVMFuzzerMutate(data, size, max_size);
	while (wire_next(data, size, &pos, &r))
		wire_fix(data + r.at, r.len);
	return size;
}
#endif
