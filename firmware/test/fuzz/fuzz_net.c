// SPDX-License-Identifier: GPL-2.0
/*
 * The cluster the fuzzers attack (fuzz_net.h): its endpoints' users, and
 * the invariants checked after every step and once everything settles.
 */
#include <stdio.h>
#include <stdlib.h>

#include "fuzz_net.h"
#include "frag_util.h"
#include "fw_deliver.h"
#include "fw_transport.h"

/* Medium payloads past 1404 bytes go as trains, as on Ethernet. */
#define FZ_MTU		1500
/*
 * Short timeouts, so that an input settles in tens of quanta: the bounds
 * they set are what the checks hold the firmware to, not their values.
 */
#define FZ_MAX_RETRIES	4
#define FZ_BUSY_QUANTA	10
/*
 * Peer slots: a NIC here has one peer, whose route cluster_fuzz deletes
 * and adds again into the same slot, and the firmware adds none for a
 * stranger.  sim_net_init_peers() fails the run if they do not suffice.
 */
#define FZ_MAX_PEERS	8
/* Far past what the slowest honest drain takes with these timeouts. */
#define FZ_SETTLE_QUANTA 4000
/*
 * Steps of the wire a quantum while the cluster settles.  A step of a
 * whole quantum would make every round trip a retransmission timeout
 * long, and every answer one to a transmission already superseded: a
 * train whose receiver gave it up mid-window would never hear so.
 */
#define FZ_SETTLE_STEPS	4

struct vnet_fw_nic_stats fz_ended;

/*
 * Each input builds its cluster afresh, megabytes of it, and frees it:
 * with ASan's usual quarantine of 256 MiB every input would run on memory
 * the kernel has yet to fault in, at a third of the speed.  16 MiB still
 * keeps everything one input frees quarantined until it ends.
 *
 * Memory out of quarantine comes back as the input before left it, and
 * ASan fills only the first 4 KiB of what malloc() returns: the second
 * half of every pool and train buffer (VNET_MEDIUM_MAX) would hold an
 * earlier input's bytes, and anything the firmware took from there
 * without writing it first would make a run depend on what ran before.
 * Filled whole, the same input runs the same way, and such bytes show up
 * as 0xbe where the users check what they received.
 */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "quarantine_size_mb=16:max_malloc_fill_size=65536";
}

/*
 * A request carries what the sender's translation table says for the
 * destination -- its tag -- and the sender's reply key: nothing a user
 * wrote into its frame names another endpoint or forges a tag.
 */
static void fz_check_request(const struct sim_nic *s, u32 dst_nic,
			     const struct vnet_wire_msg *w)
{
	const struct vnet_fw_ep *src = &s->ep[be32toh(w->src_ep)].fw;
	u64 key = (u64)be32toh(w->key_hi) << 32 | be32toh(w->key_lo);
	u32 i;

	fz_assert(key == src->reply_key, "nic %u ep %u: a request with key %#llx",
		  s->fw.nic_id, src->name.ep, (unsigned long long)key);
	for (i = 0; i < VNET_MAX_SLOTS; i++) {
		const struct vnet_fw_translation *t = &src->xlate[i];

		if (t->valid && t->name.nic == dst_nic &&
		    t->name.ep == be32toh(w->dst_ep) &&
		    t->tag == be64toh(w->tag))
			return;
	}
	fz_assert(false, "nic %u ep %u: no slot for %u/%u, tag %#llx",
		  s->fw.nic_id, src->name.ep, dst_nic, be32toh(w->dst_ep),
		  (unsigned long long)be64toh(w->tag));
}

/*
 * A packet of @len bytes that NIC @s puts on the wire to peer slot @peer,
 * whatever it was fed: one the peer takes as well formed (receive.c),
 * whose message passes the peer's checks, and no longer than the link
 * carries.  Under wire_fuzz nobody else looks at what NIC 0 sends: NIC 1
 * is silent, and its frames go nowhere.
 */
static void fz_check_packet(const struct sim_nic *s, u32 peer, const u8 *pkt,
			    u32 len, bool sums)
{
	const struct vnet_fw_nic *fw = &s->fw;
	const struct vnet_fw_peer *p = &fw->peers[peer];
	const struct vnet_wire_hdr *h = (const void *)pkt;
	const struct vnet_wire_frag *fr = (const void *)(h + 1);
	const struct vnet_wire_ack *ack = (const void *)(h + 1);
	const struct vnet_wire_resume *r = (const void *)(h + 1);
	const struct vnet_wire_msg *w = NULL;
	u32 n, id = fw->nic_id;

	fz_assert(len >= sizeof(*h) && len <= fw->mtu, "nic %u: %u bytes", id,
		  len);
	fz_assert(h->version == VNET_WIRE_VERSION &&
		  be16toh(h->src_nic) == id &&
		  be16toh(h->dst_nic) == p->nic_id &&
		  be32toh(h->incarnation) == p->incarnation &&
		  h->channel < VNET_WIRE_CHANNELS &&
		  !(h->flags & ~VNET_WIRE_SYNC),
		  "nic %u: header of a type %u packet", id, h->type);
	/* Its own messages go on its channels; answers on the sender's. */
	if (h->type == VNET_WIRE_DATA || h->type == VNET_WIRE_FRAG)
		fz_assert(h->channel < fw->nchannels,
			  "nic %u: type %u packet on channel %u", id, h->type,
			  h->channel);
	switch (h->type) {
	case VNET_WIRE_DATA:
		w = (const void *)(h + 1);
		fz_assert(len >= VNET_WIRE_DATA_LEN &&
			  len - VNET_WIRE_DATA_LEN == be32toh(w->len),
			  "nic %u: DATA of %u bytes", id, len);
		break;
	case VNET_WIRE_FRAG:
		n = VNET_WIRE_FRAG_LEN;
		if (len >= n && (fr->flags & VNET_FRAG_FIRST)) {
			w = (const void *)(fr + 1);
			n = VNET_WIRE_FIRST_LEN;
		}
		/* Only the last fragment may be short, and only it sums. */
		fz_assert(len >= n && len - n == be16toh(fr->len) &&
			  be16toh(fr->len) &&
			  !(fr->flags & ~(VNET_FRAG_FIRST | VNET_FRAG_LAST)) &&
			  !fr->__reserved &&
			  (fr->flags & VNET_FRAG_LAST ||
			   (be16toh(fr->len) >= VNET_WIRE_FRAG_MIN && !fr->csum)),
			  "nic %u: FRAG of %u bytes, flags %#x", id, len,
			  len >= n ? fr->flags : 0);
		break;
	case VNET_WIRE_ACK:
	case VNET_WIRE_NACK:
		fz_assert(len == VNET_WIRE_ACK_LEN && !ack->__reserved[0] &&
			  !ack->__reserved[1] && !ack->__reserved[2] &&
			  ack->status < (h->type == VNET_WIRE_ACK ? VNET_RET_NR :
							    VNET_NACK_NR),
			  "nic %u: type %u, status %u", id, h->type,
			  len == VNET_WIRE_ACK_LEN ? ack->status : 0);
		break;
	case VNET_WIRE_RESUME:
		fz_assert(len == VNET_WIRE_RESUME_LEN && !h->channel &&
			  !h->flags && !h->seq && !h->stamp &&
			  be32toh(r->ep) < s->nr_eps &&
			  !memcmp(r->__reserved, "\0\0\0\0", 4),
			  "nic %u: RESUME", id);
		break;
	default:
		/* Nothing here has the firmware send a MAPPER datagram. */
		fz_assert(false, "nic %u: a packet of type %u", id, h->type);
	}
	fz_assert(!sums || vnet_fw_csum_ok(pkt, len),
		  "nic %u: type %u: checksum", id, h->type);
	if (!w)
		return;
	fz_assert(be32toh(w->src_ep) < s->nr_eps &&
		  (w->queue == VNET_Q_REQ_SEND || w->queue == VNET_Q_REP_SEND) &&
		  vnet_fw_check_msg(w->flags, w->nargs, be32toh(w->len), true) ==
		  VNET_RET_NONE, "nic %u: ep %u, queue %u, flags %#x, %u args",
		  id, be32toh(w->src_ep), w->queue, w->flags, w->nargs);
	if (w->queue == VNET_Q_REQ_SEND)
		fz_check_request(s, p->nic_id, w);
}

/* Every packet is checked on its way to the wire, which sim_transmit() is. */
static void fz_transmit(void *ctx, u32 peer, const void *hdr, u32 hdr_len,
			const void *payload, u32 len)
{
	static u8 pkt[VNET_WIRE_MAX];
	struct sim_nic *s = ctx;

	fz_assert(hdr_len <= sizeof(pkt) && len <= sizeof(pkt) - hdr_len,
		  "nic %u: %u+%u bytes", s->fw.nic_id, hdr_len, len);
	memcpy(pkt, hdr, hdr_len);
	if (len)
		memcpy(pkt + hdr_len, payload, len);
	fz_check_packet(s, peer, pkt, hdr_len + len, true);
	sim_transmit(ctx, peer, hdr, hdr_len, payload, len);
}

bool (*fz_seg_race)(const struct vnet_fw_ep *ep, u8 *bytes, u32 len);

/*
 * A fragment sent from its sender's segment (or a pin), checked as it
 * leaves, within its source: the
 * bytes the wire reads, its checksum taken over them -- unless a hostile
 * user wrote them after the firmware summed them (fz_seg_race), as
 * nothing stops a user doing under a zero copy, and which costs only that
 * user's own train.
 */
static void fz_transmit_seg(void *ctx, u32 peer, const void *hdr,
			    u32 hdr_len, const struct vnet_fw_ep *ep,
			    int src, u64 offset, u32 len)
{
	bool seg = src == VNET_FW_SRC_SEG;
	/* The fuzzer's own buffers, which a racing user may write. */
	u8 *base = seg ? ep->seg : (u8 *)ep->pins[src].base;
	u64 size = seg ? ep->seg_len : ep->pins[src].len;
	static u8 pkt[VNET_WIRE_MAX];
	struct sim_nic *s = ctx;
	bool raced = false;

	fz_assert(hdr_len <= sizeof(pkt) && len <= sizeof(pkt) - hdr_len &&
		  base && offset <= size && len <= size - offset,
		  "nic %u: %u+%u bytes at %llu of a %llu-byte source %d",
		  s->fw.nic_id, hdr_len, len, (unsigned long long)offset,
		  (unsigned long long)size, src);
	if (fz_seg_race)
		raced = fz_seg_race(ep, base + offset, len);
	memcpy(pkt, hdr, hdr_len);
	memcpy(pkt + hdr_len, base + offset, len);
	fz_check_packet(s, peer, pkt, hdr_len + len, !raced);
	sim_transmit(ctx, peer, hdr, hdr_len, base + offset, len);
}

/* What NIC @nic's firmware is given at its start, and again at a reboot. */
static void fz_nic_setup(struct fz_net *f, u32 nic)
{
	struct sim_nic *s = f->net.nic[nic];

	s->fw.ops = &f->ops;
	s->fw.mtu = FZ_MTU;
	s->fw.max_retries = FZ_MAX_RETRIES;
	s->fw.busy_timeout = FZ_BUSY_QUANTA * s->fw.quantum;
	fz_users_setup(f, nic);
}

void fz_init(struct fz_net *f, bool peer_live)
{
	u32 i;

	memset(f, 0, sizeof(*f));
	sim_net_init_peers(&f->net, FZ_NICS, FZ_EPS, 1, FZ_MAX_PEERS);
	f->peer_live = peer_live;
	f->posting = true;
	f->ops = *f->net.nic[0]->fw.ops;
	f->ops.transmit = fz_transmit;
	f->ops.transmit_seg = fz_transmit_seg;
	for (i = 0; i < FZ_NICS; i++) {
		f->life[i] = 1;
		fz_nic_setup(f, i);
	}
	/* Faulted in by the first message for them: RESUME, NOT_RESIDENT. */
	sim_unload(f->net.nic[0], FZ_B);
	sim_unload(f->net.nic[0], FZ_D);
	/* And NIC 0 hears NACKs and a RESUME from NIC 1 for A's first. */
	sim_unload(f->net.nic[1], FZ_F);
	/* A silent peer: only the fuzzer's frames come from NIC 1. */
	f->net.down[1] = !peer_live;
}

void fz_fini(struct fz_net *f)
{
	frag_free_segs(&f->net);
	sim_net_fini(&f->net);
}

/*
 * The firmware's own books, between any two of its entry points: every
 * channel not free counted by its peer and, in flight, by its sender;
 * every pool buffer either free or on a channel; every train slot held by
 * the channel it says and counted in the entry it sets aside.
 */
static void fz_check_nic(struct sim_nic *s)
{
	struct vnet_fw_nic *fw = &s->fw;
	u32 reserved[FZ_EPS][2] = {};
	u32 unresolved[FZ_EPS] = {}, pool_held[FZ_EPS] = {};
	u32 i, c, held = 0, trains = 0, paused = 0;

	fz_assert(fw->pool_free <= SIM_POOL, "%u", fw->pool_free);
	fz_assert(fw->trains_busy <= fw->ntrains, "%u", fw->trains_busy);
	fz_assert(fw->nactive <= fw->max_peers, "%u", fw->nactive);
	for (i = 0; i < fw->max_peers; i++) {
		struct vnet_fw_peer *p = &fw->peers[i];
		u32 busy = 0, ptrains = 0;

		if (!p->used) {
			fz_assert(!p->unacked && !p->trains, "peer %u", i);
			continue;
		}
		for (c = 0; c < fw->nchannels; c++) {
			const struct vnet_fw_send_chan *ch = &p->tx[c];

			fz_assert(ch->state <= VNET_CHAN_PAUSED, "%u", ch->state);
			if (ch->state == VNET_CHAN_FREE)
				fz_assert(!ch->payload && !ch->counted,
					  "free channel %u holds", c);
			busy += ch->state != VNET_CHAN_FREE;
			held += !!ch->payload;
			paused += ch->state == VNET_CHAN_PAUSED;
			/* A closed sender's messages go on without it. */
			fz_assert(!ch->src || s->ep[ch->src->name.ep].exists,
				  "channel %u of peer %u names closed ep %u", c,
				  i, ch->src->name.ep);
			if (ch->counted && ch->src)
				unresolved[ch->src->name.ep]++;
			if (ch->payload && ch->src)
				pool_held[ch->src->name.ep]++;
		}
		/* A peer may send on more channels than we do. */
		for (c = 0; c < VNET_WIRE_CHANNELS; c++) {
			u32 t = p->rx[c].train;

			if (!t)
				continue;
			fz_assert(t <= fw->ntrains && fw->trains[t - 1].busy &&
				  fw->trains[t - 1].peer == i &&
				  fw->trains[t - 1].channel == c,
				  "peer %u channel %u train %u", i, c, t);
			ptrains++;
		}
		fz_assert(busy == p->unacked, "peer %u: %u busy, %u unacked", i,
			  busy, p->unacked);
		fz_assert(ptrains == p->trains, "peer %u: %u trains, %u counted",
			  i, ptrains, p->trains);
		if (busy)
			fz_assert(p->active_pos < fw->nactive &&
				  fw->active[p->active_pos] == i, "peer %u", i);
	}
	fz_assert(fw->pool_free + held == SIM_POOL, "%u free, %u held",
		  fw->pool_free, held);
	fz_assert(paused == fw->paused, "%u paused, %u counted", paused,
		  fw->paused);
	for (i = 0; i < fw->ntrains; i++) {
		const struct vnet_fw_train *t = &fw->trains[i];

		if (!t->busy)
			continue;
		trains++;
		fz_assert(t->dst->name.nic == fw->nic_id &&
			  t->dst->name.ep < FZ_EPS &&
			  (t->rq == VNET_Q_REQ_RECV || t->rq == VNET_Q_REP_RECV) &&
			  t->received < t->msg.len, "train %u", i);
		fz_assert(s->ep[t->dst->name.ep].exists,
			  "train %u lands in closed ep %u", i, t->dst->name.ep);
		reserved[t->dst->name.ep][t->rq - VNET_Q_REQ_RECV]++;
	}
	fz_assert(trains == fw->trains_busy, "%u trains, %u counted", trains,
		  fw->trains_busy);
	for (i = 0; i < s->nr_eps; i++) {
		const struct vnet_fw_ep *ep = &s->ep[i].fw;

		fz_assert(ep->recv_reserved[0] == reserved[i][0] &&
			  ep->recv_reserved[1] == reserved[i][1],
			  "ep %u reserves %u+%u for %u+%u trains", i,
			  ep->recv_reserved[0], ep->recv_reserved[1],
			  reserved[i][0], reserved[i][1]);
		fz_assert(ep->pool_held == pool_held[i] &&
			  pool_held[i] <= vnet_fw_pool_share(fw),
			  "ep %u: %u pool buffers, %u counted", i, pool_held[i],
			  ep->pool_held);
		fz_assert(ep->unresolved == unresolved[i],
			  "ep %u: %u unresolved, %u counted", i,
			  unresolved[i], ep->unresolved);
		fz_assert(s->ep[i].exists || (!s->owner[i] && !ep->frame),
			  "closed ep %u is on the card", i);
	}
}

/*
 * What the host asks of the firmware between rounds, reading the same
 * user memory: whether to sleep, poll()'s question, and an eviction's.
 */
static void fz_host(struct sim_nic *s)
{
	u32 i;

	if (!vnet_fw_arm_wakeup(&s->fw))
		vnet_fw_disarm_wakeup(&s->fw);
	for (i = 0; i < s->nr_eps; i++) {
		struct vnet_fw_ep *ep = &s->ep[i].fw;

		if (!ep->frame)
			continue;
		vnet_fw_recv_pending(ep->frame);
		vnet_fw_sends_pending(ep, ep->frame);
	}
}

void fz_run(struct fz_net *f, u32 steps, u64 dt)
{
	u32 i;

	while (steps--) {
		fz_drive(f);
		sim_net_step(&f->net, dt);
		for (i = 0; i < FZ_NICS; i++) {
			fz_host(f->net.nic[i]);
			fz_check_nic(f->net.nic[i]);
		}
		fz_clean_halves(f);
	}
}

/*
 * What a frame from an address no route has may change: the counters of
 * what was refused, and of mapper datagrams, which need no route.
 */
static void fz_stranger_stats(struct vnet_fw_nic_stats *st)
{
	st->bad_frames = 0;
	st->bad_source = 0;
	st->no_route = 0;
	st->rx_mapper = 0;
}

/* A frame for NIC 0 from NIC 1's address, or from one with no route. */
void fz_inject(struct fz_net *f, const u8 *frame, u32 len, bool stranger)
{
	struct vnet_fw_nic *fw = &f->net.nic[0]->fw;
	struct vnet_fw_nic_stats before = fw->stats, after;
	u8 mac[6];
	/* Its own copy: a read past its end is one past an allocation. */
	u8 *copy = malloc(len ? len : 1);

	sim_mac(stranger ? 0x99 : 1, mac);
	memcpy(copy, frame, len);
	sim_net_inject(&f->net, 0, mac, copy, len);
	free(copy);
	fz_check_nic(f->net.nic[0]);
	if (!stranger)
		return;
	/* Whatever NIC it claims to be, it is none: nothing else moves. */
	after = fw->stats;
	fz_stranger_stats(&before);
	fz_stranger_stats(&after);
	fz_assert(!memcmp(&before, &after, sizeof(before)),
		  "a stranger's frame of %u bytes, type %u, got past the route",
		  len, len > 1 ? frame[1] : 0);
}

/*
 * Move endpoint @ep of NIC @nic off the card the host's way
 * (vnet_cache_detach()): the firmware stops visiting it, and it goes
 * once nothing of it is on the wire -- which the firmware promises
 * within max(busy_timeout + max(max_retries / 4, 2) quanta,
 * 2 * max_retries quanta) whatever the peer does.  It comes back when a
 * message for it, or its user, or its own posted messages want it.
 */
void fz_move(struct fz_net *f, u32 nic, u32 ep)
{
	struct sim_nic *s = f->net.nic[nic];
	struct vnet_fw_ep *fw = &s->ep[ep].fw;
	u64 retries = 2ULL * s->fw.max_retries * s->fw.quantum;
	u64 wait = s->fw.max_retries / 4 > 2 ? s->fw.max_retries / 4 : 2;
	u64 busy = s->fw.busy_timeout + wait * s->fw.quantum;
	/* And a quantum: the scan that sees a deadline runs once one. */
	u64 bound = (busy > retries ? busy : retries) + s->fw.quantum;
	u64 start = f->net.now;

	if (!fw->frame || !s->ep[ep].exists)
		return;
	s->owner[ep] = NULL;
	fw->moving = true;
	while (fw->unresolved) {
		fz_assert(f->net.now - start <= bound,
			  "%u/%u still has %u messages unresolved after %llu",
			  nic, ep, fw->unresolved,
			  (unsigned long long)(f->net.now - start));
		fz_run(f, 1, FZ_DT);
	}
	sim_unload(s, ep);
	fw->moving = false;
	/* What it posted meanwhile brings it back, as vnet_cache_evict(). */
	if (vnet_fw_sends_pending(fw, s->ep[ep].frame))
		s->faults_requested[ep]++;
}

/* The user of endpoint @ep of NIC @nic closes it, as vnet_ep_close() does. */
void fz_close(struct fz_net *f, u32 nic, u32 ep)
{
	struct sim_nic *s = f->net.nic[nic];

	if (!s->ep[ep].exists)
		return;
	fz_user_gone(f, nic, ep);
	f->closed[nic][ep] = true;
	f->closes++;
	s->ep[ep].exists = false;
	vnet_fw_ep_forget(&s->fw, &s->ep[ep].fw);
	sim_unload(s, ep);
	/* Nothing brings it back, and its segment goes with it. */
	s->faults_requested[ep] = 0;
	frag_give_seg(s, ep, 0);
}

/*
 * NIC @nic reboots: its firmware starts afresh, with new initial sequence
 * numbers, route incarnations and reply keys, and its users with new
 * endpoints of the same names and tags, as the mapper and the users'
 * programs would set them up again.  Its address stays, and so do the
 * other NIC's route and channels to it.
 */
void fz_reboot(struct fz_net *f, u32 nic)
{
	struct sim_nic *s = f->net.nic[nic];
	struct sim_net *net = &f->net;
	u32 i, j, seed = s->seed;
	u8 mac[6];

	fz_users_rebooting(f, nic);
	/*
	 * A reboot takes far longer than anything stays on a wire: what
	 * was on it to or from the NIC is gone by the time it is back.  (A
	 * duplicate SYNC of its old life would start a channel anew there.)
	 * Those packets are lost, as on a lossy wire: the messages posted
	 * before may come back unreachable -- the silence they met spans
	 * the reboot, and the new life's RESYNC is no word (design.rst,
	 * Receiving).  Those posted after it met a wire without faults.
	 */
	for (i = j = 0; i < net->qlen; i++) {
		if (net->q[i].to == nic || net->q[i].from == nic)
			free(net->q[i].data);
		else
			net->q[j++] = net->q[i];
	}
	if (j != net->qlen)
		for (i = 0; i < FZ_NICS * FZ_EPS; i++)
			f->user[i / FZ_EPS][i % FZ_EPS].lost_upto =
				f->user[i / FZ_EPS][i % FZ_EPS].posted;
	net->qlen = j;
	for (j = 0; j < s->nr_eps; j++) {
		free(s->ep[j].fw.seg);
		s->ep[j].fw.seg = NULL;
	}
	sim_fini(s);
	sim_init_peers(s, nic, FZ_EPS, 16, FZ_MAX_PEERS);
	s->seed = seed ^ (++f->reboots * 0x9e3779b9u);
	s->net = &f->net;
	s->now = f->net.now;
	s->auto_fault = true;
	fz_nic_setup(f, nic);
	for (j = 0; j < FZ_EPS; j++) {
		struct vnet_fw_ep *ep = &s->ep[j].fw;

		ep->reply_key = (u64)s->fw.ops->random(s->fw.ctx) << 32 |
				s->fw.ops->random(s->fw.ctx);
		sim_load(s, j);
	}
	sim_mac(1 - nic, mac);
	vnet_fw_route_add(&s->fw, 1 - nic, mac, f->net.now);
}

static bool fz_quiet(struct fz_net *f)
{
	u32 i, j;

	if (!frag_all_quiet(&f->net))
		return false;
	for (i = 0; i < FZ_NICS; i++)
		for (j = 0; j < FZ_EPS; j++)
			if (!fz_user_idle(f, i, j))
				return false;
	return true;
}

/* The firmware's counters against what it wrote into the queues. */
static void fz_check_final(struct fz_net *f)
{
	u32 i, j, r;

	for (i = 0; i < FZ_NICS; i++) {
		struct sim_nic *s = f->net.nic[i];
		const struct vnet_fw_nic_stats *st = &s->fw.stats;
		u64 returned = 0;

		for (r = 0; r < VNET_RET_NR; r++)
			returned += st->returned[r];
		fz_assert(st->tx_frags <= st->tx_data &&
			  st->rx_frags <= st->rx_data &&
			  st->rx_trains <= st->rx_frags &&
			  returned <= st->tx_data, "nic %u counters", i);
		for (j = 0; j < FZ_EPS; j++) {
			const struct sim_ep *e = &s->ep[j];
			const struct vnet_fw_ep *ep = &e->fw;

			fz_assert((u64)ep->recv_prod[0] + ep->recv_prod[1] ==
				  ep->stats.received + ep->stats.returned,
				  "nic %u ep %u: %u+%u entries, %llu+%llu counted",
				  i, j, ep->recv_prod[0], ep->recv_prod[1],
				  (unsigned long long)ep->stats.received,
				  (unsigned long long)ep->stats.returned);
			if (f->user[i][j].hostile)
				continue;
			fz_assert(e->frame->prod[VNET_Q_REQ_RECV].val ==
				  ep->recv_prod[0] &&
				  e->frame->prod[VNET_Q_REP_RECV].val ==
				  ep->recv_prod[1] &&
				  e->frame->cons[VNET_Q_REQ_SEND].val ==
				  ep->send_cons[0] &&
				  e->frame->cons[VNET_Q_REP_SEND].val ==
				  ep->send_cons[1], "nic %u ep %u indices", i, j);
		}
	}
}

/* What is left, for whoever reads the crash. */
static void fz_dump(struct fz_net *f)
{
	u32 i, j;

	for (i = 0; i < FZ_NICS; i++) {
		const struct vnet_fw_nic *fw = &f->net.nic[i]->fw;

		fprintf(stderr, "nic %u: %u peers busy, %u trains, %u paused, %u buffers free\n",
			i, fw->nactive, fw->trains_busy, fw->paused,
			fw->pool_free);
		for (j = 0; j < FZ_EPS; j++) {
			const struct vnet_fw_ep *ep = &f->net.nic[i]->ep[j].fw;
			const struct fz_user *u = &f->user[i][j];

			fprintf(stderr, "  ep %u: idle %d, %u/%u resolved, %u unresolved, trains held %#x %#x done %#x %#x, %s, %u faults asked\n",
				j, fz_user_idle(f, i, j), u->resolved,
				u->posted, ep->unresolved, ep->train_held[0],
				ep->train_held[1], ep->train_done[0],
				ep->train_done[1], ep->frame ? "on the card" : "off",
				f->net.nic[i]->faults_requested[j]);
		}
	}
}

/*
 * Stop posting and let everything run out: whatever a peer or a user did,
 * the firmware gives every channel, buffer, train slot and queue entry
 * back within its timeouts, and every honest user gets what it is owed.
 */
void fz_settle(struct fz_net *f)
{
	u64 step = f->net.nic[0]->fw.quantum / FZ_SETTLE_STEPS;
	u32 i;

	fz_ended = f->net.nic[0]->fw.stats;
	f->posting = false;
	for (i = 0; i < FZ_SETTLE_QUANTA * FZ_SETTLE_STEPS && !fz_quiet(f); i++)
		fz_run(f, 1, step);
	if (!fz_quiet(f))
		fz_dump(f);
	fz_assert(fz_quiet(f), "nothing settles in %u quanta",
		  FZ_SETTLE_QUANTA);
	fz_check_final(f);
}
