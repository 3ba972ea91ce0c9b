// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wire_sim.h"

u32 sim_rand(u32 *seed)
{
	/* xorshift32: deterministic for a seed, good enough for faults. */
	u32 x = *seed ? *seed : 0x9e3779b9;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	*seed = x;
	return x;
}

static bool sim_chance(struct sim_net *net, u32 per_mille)
{
	return per_mille && sim_rand(&net->seed) % 1000 < per_mille;
}

static void sim_enqueue(struct sim_net *net, u32 from, u32 to, u64 at,
			const u8 *data, u32 len)
{
	struct sim_pkt *p;

	if (net->qlen == net->qcap) {
		net->qcap = net->qcap ? 2 * net->qcap : 256;
		net->q = realloc(net->q, net->qcap * sizeof(*net->q));
	}
	p = &net->q[net->qlen++];
	p->from = from;
	p->to = to;
	p->at = at;
	p->len = len;
	p->data = malloc(len);
	p->serial = net->sent;
	memcpy(p->data, data, len);
}

static void sim_tap(struct sim_net *net, u32 from, u32 to, const u8 *data,
		    u32 len)
{
	struct sim_pkt *p;

	if (!net->tap && !net->tapcap)
		return;
	if (net->taplen == net->tapcap) {
		net->tapcap = 2 * net->tapcap;
		net->tap = realloc(net->tap, net->tapcap * sizeof(*net->tap));
	}
	p = &net->tap[net->taplen++];
	p->from = from;
	p->to = to;
	p->len = len;
	p->data = malloc(len);
	memcpy(p->data, data, len);
}

u32 sim_frame(u8 *buf, const void *hdr, u32 hdr_len, const void *payload,
	      u32 len)
{
	u32 total = hdr_len + len;

	memcpy(buf, hdr, hdr_len);
	if (len)
		memcpy(buf + hdr_len, payload, len);
	/* Ethernet pads short frames: the firmware must cope. */
	if (total < 46) {
		memset(buf + total, 0, 46 - total);
		total = 46;
	}
	return total;
}

/* A packet of @len bytes enters @stage at @at: when it leaves it. */
static u64 sim_stage_through(const struct sim_stage *stage, u64 *free_at,
			     u64 at, u32 len)
{
	if (!stage->per_pkt && !stage->per_kib)
		return at;
	if (*free_at > at)
		at = *free_at;
	at += stage->per_pkt + stage->per_kib * len / 1024;
	*free_at = at;
	return at;
}

void sim_transmit(void *ctx, u32 peer, const void *hdr, u32 hdr_len,
		  const void *payload, u32 len)
{
	struct sim_nic *sim = ctx;
	struct sim_net *net = sim->net;
	u32 to = sim->fw.peers[peer].nic_id;
	u8 buf[VNET_WIRE_MAX + 64];
	u32 total;
	u64 at;

	if (!net)
		return;
	total = sim_frame(buf, hdr, hdr_len, payload, len);
	net->sent++;
	sim_tap(net, sim->fw.nic_id, to, buf, total);
	if (to >= net->nr || net->down[sim->fw.nic_id] || net->down[to] ||
	    net->mute[sim->fw.nic_id] ||
	    sim_chance(net, net->loss)) {
		net->lost++;
		return;
	}
	if (sim_chance(net, net->corrupt)) {
		buf[sim_rand(&net->seed) % total] ^= 1u << (sim_rand(&net->seed) % 8);
		net->corrupted++;
	}
	at = sim_stage_through(&net->link, &net->link_free[sim->fw.nic_id],
			       net->now, total) + net->delay;
	at = sim_stage_through(&net->rx, &net->rx_free[to], at, total);
	if (sim_chance(net, net->reorder))
		at += net->delay * (1 + sim_rand(&net->seed) % 4);
	sim_enqueue(net, sim->fw.nic_id, to, at, buf, total);
	if (sim_chance(net, net->dup)) {
		net->duplicated++;
		sim_enqueue(net, sim->fw.nic_id, to, at + net->delay, buf,
			    total);
	}
}

/*
 * A fragment sent from its sender's segment: the wire reads the bytes as
 * they are when the packet goes, as a NIC reads the pages it was given.
 */
void sim_transmit_seg(void *ctx, u32 peer, const void *hdr, u32 hdr_len,
		      const struct vnet_fw_ep *ep, int src, u64 offset, u32 len)
{
	const u8 *base = src == VNET_FW_SRC_SEG ? ep->seg : ep->pins[src].base;

	sim_transmit(ctx, peer, hdr, hdr_len, base + offset, len);
}

/* Step the wire and every NIC for @t time units. */
void sim_net_run_for(struct sim_net *net, u64 t)
{
	u64 end = net->now + t;

	while (net->now < end)
		sim_net_step(net, 20);
}

/* A short request to handler 1 through slot 0, with one argument. */
struct vnet_desc sim_request(u32 arg0)
{
	struct vnet_desc d = { .handler = 1, .nargs = 1 };

	d.args[0] = arg0;
	return d;
}

#define SIM_PIECES	8

/*
 * Give NIC @to the @len bytes at @data, in pieces as a link holds them
 * (struct vnet_fw_bytes): the header whole in the first, a DATA or FRAG
 * packet's payload cut at random over up to SIM_PIECES - 1 more, some
 * empty.  Each piece is a buffer of its own, so that a read past one is
 * caught, not served by the next.
 */
static void sim_receive(struct sim_net *net, u32 to, const u8 *src_mac,
			const u8 *data, u32 len)
{
	const struct vnet_wire_hdr *h = (const void *)data;
	struct vnet_fw_piece piece[SIM_PIECES];
	struct vnet_fw_bytes pkt;
	u32 n = 0, at = 0, head, i;
	u8 *buf[SIM_PIECES];

	head = len < VNET_FW_RX_HEAD ? len : VNET_FW_RX_HEAD;
	if (net->whole || len < sizeof(*h) ||
	    (h->type != VNET_WIRE_DATA && h->type != VNET_WIRE_FRAG))
		head = len;
	else
		head += sim_rand(&net->cut_seed) % (len - head + 1);
	while (at < len || !n) {
		u32 cut = n == SIM_PIECES - 1 ? len - at :
			  !n ? head :
			  sim_rand(&net->cut_seed) % (len - at + 1);

		buf[n] = malloc(cut ? cut : 1);
		if (!buf[n])
			abort();
		memcpy(buf[n], data + at, cut);
		piece[n].data = buf[n];
		piece[n].len = cut;
		at += cut;
		n++;
	}
	pkt.piece = piece;
	pkt.npieces = n;
	pkt.skip = 0;
	pkt.len = len;
	vnet_fw_receive(&net->nic[to]->fw, &pkt, src_mac, net->now);
	for (i = 0; i < n; i++)
		free(buf[i]);
}

/* Hand a packet straight to a NIC, as if it had just arrived from @src_mac. */
void sim_net_inject(struct sim_net *net, u32 to, const u8 *src_mac,
		    const void *data, u32 len)
{
	sim_receive(net, to, src_mac, data, len);
}

/* The same, from NIC @from's own Ethernet address. */
void sim_net_inject_from(struct sim_net *net, u32 to, u32 from,
			 const void *data, u32 len)
{
	u8 mac[6];

	sim_mac(from, mac);
	sim_net_inject(net, to, mac, data, len);
}

void sim_net_init(struct sim_net *net, u32 nr_nics, u32 eps_per_nic,
		  u32 seed)
{
	sim_net_init_channels(net, nr_nics, eps_per_nic, seed, NULL);
}

/*
 * Two NICs of two endpoints: NIC 0's endpoint 0, a client, sends on slot
 * 0 to NIC 1's endpoint 1, a server with tag @tag.
 */
void sim_net_init_pair(struct sim_net *net, u64 tag)
{
	sim_net_init(net, 2, 2, 42);
	net->nic[1]->ep[1].fw.tag = tag;
	sim_map(net->nic[0], 0, 0, 1, 1, tag);
}

static void sim_net_build(struct sim_net *net, u32 nr_nics, u32 eps_per_nic,
			  u32 seed, const u32 *channels, u32 max_peers)
{
	u32 i, j;

	memset(net, 0, sizeof(*net));
	net->nr = nr_nics;
	net->seed = seed;
	net->cut_seed = seed ^ 0x5bd1e995;
	net->delay = 50;
	net->nic = calloc(nr_nics, sizeof(*net->nic));
	net->down = calloc(nr_nics, sizeof(*net->down));
	net->mute = calloc(nr_nics, sizeof(*net->mute));
	net->link_free = calloc(nr_nics, sizeof(*net->link_free));
	net->rx_free = calloc(nr_nics, sizeof(*net->rx_free));
	for (i = 0; i < nr_nics; i++) {
		struct sim_nic *sim = calloc(1, sizeof(*sim));

		sim_init_peers(sim, i, eps_per_nic, 16, max_peers);
		if (channels) {
			sim->fw.nchannels = channels[i];
			/* Exactly that many, as the host allocates them. */
			for (j = 0; j < sim->fw.max_peers; j++) {
				struct vnet_fw_peer *p = &sim->fw.peers[j];

				free(p->tx);
				p->tx = calloc(channels[i], sizeof(*p->tx));
			}
		}
		sim->net = net;
		sim->auto_fault = true;
		for (j = 0; j < eps_per_nic; j++)
			sim_load(sim, j);
		for (j = 0; j < nr_nics; j++) {
			u8 mac[6];

			sim_mac(j, mac);
			/* Too few peer slots would be a broken test. */
			if (j != i && vnet_fw_route_add(&sim->fw, j, mac, 0) < 0) {
				fprintf(stderr, "sim: NIC %u: no peer slot for NIC %u\n",
					i, j);
				abort();
			}
		}
		net->nic[i] = sim;
	}
}

/* As sim_net_init(), NIC i sending on @channels[i] channels per peer. */
void sim_net_init_channels(struct sim_net *net, u32 nr_nics, u32 eps_per_nic,
			   u32 seed, const u32 *channels)
{
	sim_net_build(net, nr_nics, eps_per_nic, seed, channels, SIM_MAX_PEERS);
}

/*
 * As sim_net_init(), each NIC with room for @max_peers peers, not
 * SIM_MAX_PEERS: a small cluster built afresh for every input (the
 * fuzzers) need not allocate, fill and free 256 peers' channels each time.
 */
void sim_net_init_peers(struct sim_net *net, u32 nr_nics, u32 eps_per_nic,
			u32 seed, u32 max_peers)
{
	sim_net_build(net, nr_nics, eps_per_nic, seed, NULL, max_peers);
}

void sim_net_fini(struct sim_net *net)
{
	u32 i;

	for (i = 0; i < net->nr; i++) {
		sim_fini(net->nic[i]);
		free(net->nic[i]);
	}
	for (i = 0; i < net->qlen; i++)
		free(net->q[i].data);
	for (i = 0; i < net->taplen; i++)
		free(net->tap[i].data);
	free(net->q);
	free(net->tap);
	free(net->nic);
	free(net->down);
	free(net->mute);
	free(net->link_free);
	free(net->rx_free);
}

/*
 * Advance time by @dt: deliver every packet due by then, in time order (a
 * stable pick, so equal times keep their send order), then give every NIC a
 * round, loading endpoints the firmware asked for.
 */
void sim_net_step(struct sim_net *net, u64 dt)
{
	u32 i, j;

	net->now += dt;
	for (;;) {
		u32 best = net->qlen;
		struct sim_pkt p;

		for (i = 0; i < net->qlen; i++)
			if (net->q[i].at <= net->now &&
			    (best == net->qlen || net->q[i].at < net->q[best].at))
				best = i;
		if (best == net->qlen)
			break;
		p = net->q[best];
		memmove(&net->q[best], &net->q[best + 1],
			(net->qlen - best - 1) * sizeof(*net->q));
		net->qlen--;
		u8 mac[6];

		sim_mac(p.from, mac);
		sim_receive(net, p.to, mac, p.data, p.len);
		free(p.data);
	}
	for (i = 0; i < net->nr; i++) {
		struct sim_nic *sim = net->nic[i];

		sim->now = net->now;
		if (sim->auto_fault)
			for (j = 0; j < sim->nr_eps; j++)
				/* A closed endpoint is never loaded again. */
				if (sim->faults_requested[j] &&
				    !sim->ep[j].fw.frame && sim->ep[j].exists) {
					sim->faults_requested[j] = 0;
					sim_load(sim, j);
				}
		vnet_fw_poll(&sim->fw, net->now);
	}
}
