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
 *   u8   ctl        bits 0-5: steps of the wire to run before the frame;
 *                   bit 6: those steps are a quantum long, not FZ_DT;
 *                   bit 7: the frame comes from an address no route has,
 *                   not from NIC 1's; with no frame, NIC 0's route to
 *                   NIC 1 goes, or comes back (a link flaps, its mapper
 *                   says so)
 *   be16 len        the frame's length; 0: no frame, only the steps
 *   u8   frame[len] what is left of the input, if it ends first
 *
 * then the cluster settles (fz_settle()).  The seeds (seed_gen.c) are what
 * NIC 1 said in conversations with NIC 0, at the steps it said it: every
 * run is deterministic, so a seed replays its conversation exactly, and
 * each frame in it carries the sequence numbers and stamps NIC 0 expects.
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
	if (size - *pos < 3 || *pos > size)
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

/* NIC 0's route to NIC 1 goes, or comes back. */
static void wire_flap(struct fz_net *f)
{
	struct vnet_fw_nic *fw = &f->net.nic[0]->fw;
	u8 mac[6];

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
	u32 budget = WIRE_MAX_STEPS;
	struct wire_rec r;
	size_t pos = 0;

	fz_init(&f, false);
	while (wire_next(data, size, &pos, &r)) {
		u32 steps = r.ctl & 0x3f;

		if (steps > budget)
			steps = budget;
		budget -= steps;
		fz_run(&f, steps, r.ctl & 0x40 ? f.net.nic[0]->fw.quantum :
						 FZ_DT);
		if (r.len)
			fz_inject(&f, data + r.at, r.len, r.ctl & 0x80);
		else if (r.ctl & 0x80)
			wire_flap(&f);
	}
	fz_settle(&f);
	fz_fini(&f);
	return 0;
}

#ifdef WIRE_FIX_CRC
size_t LLVMFuzzerMutate(u8 *data, size_t size, size_t max_size);

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

/* Fix the frame of @len bytes at @at, which has no alignment. */
static void wire_fix(u8 *at, u32 len)
{
	static u8 pkt[VNET_WIRE_MAX + 64] __aligned(8);
	struct vnet_wire_hdr *h = (void *)pkt;
	u32 plen;

	if (len < sizeof(*h) || len > sizeof(pkt))
		return;
	memcpy(pkt, at, len);
	plen = wire_fix_len(pkt, len);
	h->csum = 0;
	h->csum = htobe32(vnet_crc32c(0, pkt, plen));
	memcpy(at, pkt, len);
}

size_t LLVMFuzzerCustomMutator(u8 *data, size_t size, size_t max_size,
			       unsigned int seed)
{
	static bool crc_ready;
	struct wire_rec r;
	size_t pos = 0;

	(void)seed;
	if (!crc_ready) {
		vnet_fw_crc32c_init();
		crc_ready = true;
	}
	size = LLVMFuzzerMutate(data, size, max_size);
	while (wire_next(data, size, &pos, &r))
		wire_fix(data + r.at, r.len);
	return size;
}
#endif
