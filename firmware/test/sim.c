// SPDX-License-Identifier: GPL-2.0
#include <stdlib.h>

#include "sim.h"
#include "wire_sim.h"

void (*fw_test_fetched)(void *p, size_t n);

static struct vnet_fw_ep *sim_lookup(void *ctx, u32 index)
{
	struct sim_nic *sim = ctx;

	if (index >= sim->nr_eps || !sim->ep[index].exists)
		return NULL;
	return &sim->ep[index].fw;
}

static void sim_request_fault(void *ctx, struct vnet_fw_ep *fw)
{
	struct sim_nic *sim = ctx;

	sim->faults_requested[fw->name.ep]++;
}

static void sim_notify_flushed(void *ctx, struct vnet_fw_ep *fw)
{
	struct sim_nic *sim = ctx;

	sim->flushed[fw->name.ep]++;
}

static void sim_notify_recv(void *ctx, struct vnet_fw_ep *fw)
{
	struct sim_nic *sim = ctx;

	(void)fw;
	sim->notifications++;
}

/* Deterministic for a NIC, different between NICs. */
static u32 sim_random(void *ctx)
{
	struct sim_nic *sim = ctx;

	return sim_rand(&sim->seed);
}

static u64 sim_pause(void *ctx)
{
	struct sim_nic *sim = ctx;

	sim->pauses++;
	if (sim->on_pause)
		sim->on_pause(sim);
	return sim->net ? sim->net->now : sim->now;
}

static void sim_event_ops(void *ctx, const struct vnet_fw_event *ev)
{
	struct sim_nic *sim = ctx;

	sim->events[sim->nr_events++ % SIM_EVENTS] = *ev;
	if (ev->type < ARRAY_SIZE(sim->events_of))
		sim->events_of[ev->type]++;
}

/* The @nth (from 0) of the events of @type still kept, or NULL. */
const struct vnet_fw_event *sim_event(const struct sim_nic *sim, u32 type,
				      u32 nth)
{
	u32 i = sim->nr_events > SIM_EVENTS ? sim->nr_events - SIM_EVENTS : 0;

	for (; i < sim->nr_events; i++) {
		const struct vnet_fw_event *ev = &sim->events[i % SIM_EVENTS];

		if (ev->type == type && !nth--)
			return ev;
	}
	return NULL;
}

static const struct vnet_fw_ops sim_ops = {
	.lookup = sim_lookup,
	.request_fault = sim_request_fault,
	.notify_recv = sim_notify_recv,
	.transmit = sim_transmit,
	.transmit_seg = sim_transmit_seg,
	.notify_flushed = sim_notify_flushed,
	.random = sim_random,
	.pause = sim_pause,
	.event = sim_event_ops,
};

/* NIC n's Ethernet address: 02:00:00:00:hi:lo, locally administered. */
void sim_mac(u32 nic_id, u8 mac[6])
{
	memset(mac, 0, 6);
	mac[0] = 0x02;
	mac[4] = nic_id >> 8;
	mac[5] = nic_id;
}

static void sim_transport_init(struct sim_nic *sim, u32 max_peers)
{
	struct vnet_fw_nic *fw = &sim->fw;
	u32 i;

	fw->mtu = VNET_WIRE_MAX;
	fw->nchannels = SIM_CHANNELS;
	fw->train_window = SIM_TRAIN_WINDOW;
	fw->max_peers = max_peers;
	fw->max_retries = 20;
	fw->quantum = 1000;
	fw->busy_timeout = 100 * fw->quantum;
	fw->peers = calloc(max_peers, sizeof(*fw->peers));
	for (i = 0; i < max_peers; i++) {
		fw->peers[i].tx = calloc(SIM_CHANNELS, sizeof(*fw->peers[i].tx));
		fw->peers[i].rx = calloc(VNET_WIRE_CHANNELS,
					 sizeof(*fw->peers[i].rx));
	}
	fw->peer_of = calloc(65536, sizeof(*fw->peer_of));
	fw->active = calloc(max_peers, sizeof(*fw->active));
	fw->pool = calloc(SIM_POOL, sizeof(*fw->pool));
	for (i = 0; i < SIM_POOL; i++)
		fw->pool[i] = malloc(VNET_MEDIUM_MAX);
	fw->pool_free = SIM_POOL;
	fw->trains = calloc(SIM_TRAINS, sizeof(*fw->trains));
	for (i = 0; i < SIM_TRAINS; i++)
		fw->trains[i].buf = malloc(VNET_MEDIUM_MAX);
	fw->ntrains = SIM_TRAINS;
	vnet_fw_transport_init(fw);
}

void sim_init(struct sim_nic *sim, u32 nic_id, u32 nr_eps, u32 burst)
{
	sim_init_peers(sim, nic_id, nr_eps, burst, SIM_MAX_PEERS);
}

void sim_init_peers(struct sim_nic *sim, u32 nic_id, u32 nr_eps, u32 burst,
		    u32 max_peers)
{
	u32 i;

	vnet_fw_crc32c_init();
	memset(sim, 0, sizeof(*sim));
	sim->nr_eps = nr_eps;
	sim->ep = calloc(nr_eps, sizeof(*sim->ep));
	sim->fw.ops = &sim_ops;
	sim->fw.ctx = sim;
	sim->fw.nic_id = nic_id;
	sim->fw.nframes = nr_eps;
	sim->fw.frame_owner = sim->owner;
	sim->fw.burst = burst;
	/* The module's default: trains leave from the segment itself. */
	sim->fw.zero_copy = true;
	sim->seed = 0x5eed0000 + nic_id;
	for (i = 0; i < nr_eps; i++) {
		struct sim_ep *ep = &sim->ep[i];
		struct vnet_name name = { nic_id, i };

		ep->frame = aligned_alloc(64, VNET_FRAME_SIZE);
		ep->staging = calloc(1, VNET_STAGING_SIZE);
		vnet_fw_ep_init(&ep->fw, name, ep->staging,
				((u64)sim_rand(&sim->seed) << 32) |
				sim_rand(&sim->seed));
		vnet_fw_frame_init(&ep->fw, ep->frame);
		ep->exists = true;
	}
	sim_transport_init(sim, max_peers);
}

void sim_fini(struct sim_nic *sim)
{
	struct vnet_fw_nic *fw = &sim->fw;
	u32 i, c;

	for (i = 0; i < sim->nr_eps; i++) {
		free(sim->ep[i].frame);
		free(sim->ep[i].staging);
	}
	free(sim->ep);
	/* Buffers in use sit on channels: put them back, then free them all. */
	for (i = 0; i < fw->max_peers; i++) {
		for (c = 0; c < fw->nchannels; c++)
			if (fw->peers[i].tx[c].payload)
				fw->pool[fw->pool_free++] = fw->peers[i].tx[c].payload;
		free(fw->peers[i].tx);
		free(fw->peers[i].rx);
	}
	for (i = 0; i < fw->pool_free; i++)
		free(fw->pool[i]);
	for (i = 0; i < fw->ntrains; i++)
		free(fw->trains[i].buf);
	free(fw->trains);
	free(fw->pool);
	free(fw->peers);
	free(fw->peer_of);
	free(fw->active);
}

/* Frame i belongs to endpoint i in the simulation: enough for the firmware. */
void sim_load(struct sim_nic *sim, u32 i)
{
	vnet_fw_frame_restore(&sim->ep[i].fw, sim->ep[i].frame);
	sim->ep[i].fw.served = false;	/* as the driver's load does */
	sim->ep[i].fw.frame = sim->ep[i].frame;
	sim->owner[i] = &sim->ep[i].fw;
}

void sim_unload(struct sim_nic *sim, u32 i)
{
	sim->owner[i] = NULL;
	sim->ep[i].fw.frame = NULL;
}

void sim_map(struct sim_nic *sim, u32 i, u32 slot, u32 dest_nic, u32 dest_ep,
	     u64 tag)
{
	struct vnet_fw_translation *t = &sim->ep[i].fw.xlate[slot];

	t->name.nic = dest_nic;
	t->name.ep = dest_ep;
	t->tag = tag;
	t->valid = true;
}

int sim_post(struct sim_nic *sim, u32 i, unsigned int q,
	     const struct vnet_desc *d, const void *payload)
{
	struct sim_ep *ep = &sim->ep[i];
	u32 prod = ep->send_prod[q];
	u32 idx = prod & (VNET_QUEUE_DEPTH - 1);

	if (prod - ep->frame->cons[q].val >= VNET_QUEUE_DEPTH)
		return -1;
	if (payload && d->len)
		memcpy(ep->staging + VNET_STAGING_SLOT(q, idx), payload,
		       d->len);
	ep->frame->queue[q][idx] = *d;
	ep->send_prod[q] = prod + 1;
	fw_store_release(&ep->frame->prod[q].val, prod + 1);
	return 0;
}

const struct vnet_desc *sim_peek(struct sim_nic *sim, u32 i, unsigned int q)
{
	struct sim_ep *ep = &sim->ep[i];
	u32 cons = ep->recv_cons[q - VNET_Q_REQ_RECV];

	if (fw_load_acquire(&ep->frame->prod[q].val) == cons)
		return NULL;
	return &ep->frame->queue[q][cons & (VNET_QUEUE_DEPTH - 1)];
}

const void *sim_payload(struct sim_nic *sim, u32 i, unsigned int q)
{
	struct sim_ep *ep = &sim->ep[i];
	u32 cons = ep->recv_cons[q - VNET_Q_REQ_RECV];

	return ep->staging + VNET_STAGING_SLOT(q, cons & (VNET_QUEUE_DEPTH - 1));
}

void sim_consume(struct sim_nic *sim, u32 i, unsigned int q)
{
	struct sim_ep *ep = &sim->ep[i];
	u32 *cons = &ep->recv_cons[q - VNET_Q_REQ_RECV];

	fw_store_release(&ep->frame->cons[q].val, ++*cons);
}

/* Poll until a round moves nothing; returns the messages moved. */
u32 sim_run(struct sim_nic *sim, u32 max_rounds)
{
	u32 total = 0;

	while (max_rounds--) {
		struct vnet_fw_round r = vnet_fw_poll(&sim->fw, sim->now);

		total += r.messages;
		if (!r.messages)
			break;
	}
	return total;
}
