// SPDX-License-Identifier: GPL-2.0
/*
 * The emulated card: a block of "card memory" cut into endpoint frames, the
 * transport's tables and packet buffers, and a kernel thread that runs the
 * firmware.  The thread polls while there is traffic, spins a little when
 * it runs dry, then raises NEED_WAKEUP in the resident frames and sleeps
 * until a doorbell (KICK), a packet, a completed fault-in, or -- with a
 * message held for a busy destination or packets waiting for an ACK -- a
 * timer.
 *
 * The firmware reaches the host only through struct vnet_fw_ops, the
 * card's "hardware" interface: look up an endpoint, ask for a fault-in,
 * signal a receive or a flush, put a packet on the wire.
 */
#include <linux/cpumask.h>
#include <linux/if_ether.h>
#include <linux/kthread.h>
#include <linux/random.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "trace.h"
#include "vnet.h"

/* Packets taken off the receive queue per round, so sends are not starved. */
#define VNET_RX_BATCH		64
/* The firmware lets go of fw_lock between turns after holding it this long. */
#define VNET_FW_HOLD_NS		(50 * NSEC_PER_USEC)

static struct vnet_fw_ep *vnet_card_lookup(void *ctx, u32 ep_index)
{
	struct vnet_nic *nic = ctx;
	struct vnet_ep *ep = xa_load(&nic->eps, ep_index);

	return ep ? &ep->fw : NULL;
}

static void vnet_card_request_fault(void *ctx, struct vnet_fw_ep *fw)
{
	/*
	 * Alive: the firmware names endpoints it finds in nic->eps, or a
	 * channel's sender, which vnet_fw_ep_forget() takes off every
	 * channel, under fw_lock, before the endpoint's last reference goes.
	 */
	vnet_ep_queue_fault(container_of(fw, struct vnet_ep, fw));
}

static void vnet_card_notify_recv(void *ctx, struct vnet_fw_ep *fw)
{
	struct vnet_ep *ep = container_of(fw, struct vnet_ep, fw);

	wake_up_interruptible(&ep->poll_wq);
}

static void vnet_card_notify_flushed(void *ctx, struct vnet_fw_ep *fw)
{
	struct vnet_ep *ep = container_of(fw, struct vnet_ep, fw);

	wake_up_all(&ep->state_wq);
}

static void vnet_card_transmit(void *ctx, u32 peer, const void *hdr,
			       u32 hdr_len, const void *payload, u32 len)
{
	vnet_link_xmit(ctx, peer, hdr, hdr_len, payload, len);
}

static void vnet_card_transmit_seg(void *ctx, u32 peer, const void *hdr,
				   u32 hdr_len, const struct vnet_fw_ep *fw,
				   int src, u64 offset, u32 len)
{
	struct vnet_ep *ep = container_of(fw, struct vnet_ep, fw);

	vnet_link_xmit_seg(ctx, peer, hdr, hdr_len, ep, src, offset, len);
}

static void vnet_card_transmit_to(void *ctx, const u8 *mac, const void *hdr,
				  u32 hdr_len, const void *payload, u32 len)
{
	vnet_link_xmit_to(ctx, mac, hdr, hdr_len, payload, len);
}

static u32 vnet_card_random(void *ctx)
{
	return get_random_u32();
}

/* The firmware's clock: microseconds. */
u64 vnet_card_now(void)
{
	return div_u64(ktime_get_ns(), NSEC_PER_USEC);
}

/*
 * Between two endpoints' turns in a round: the host's commands run at
 * every one (fw_call.c); whoever waits for fw_lock itself (a close, a tag
 * or route change) waits for a few turns, not for the round, and the
 * thread can be preempted.  The lock is not let go at every turn: each
 * hand-over costs the firmware, and any user can take fw_lock (EP_STAT).
 */
static u64 vnet_card_pause(void *ctx)
{
	struct vnet_nic *nic = ctx;
	u64 now = ktime_get_ns();

	lockdep_assert_held(&nic->fw_lock);
	vnet_fw_run_calls(nic);
	if (now - nic->fw_locked_at < VNET_FW_HOLD_NS && !need_resched())
		return div_u64(now, NSEC_PER_USEC);
	mutex_unlock(&nic->fw_lock);
	cond_resched();
	mutex_lock(&nic->fw_lock);
	nic->fw_locked_at = ktime_get_ns();
	return div_u64(nic->fw_locked_at, NSEC_PER_USEC);
}

static void vnet_card_event(void *ctx, const struct vnet_fw_event *ev)
{
	struct vnet_nic *nic = ctx;

	switch (ev->type) {
	case VNET_FW_EV_NACK_TX:
	case VNET_FW_EV_NACK_RX:
		trace_vnet_nack(nic, ev);
		break;
	case VNET_FW_EV_RETRANSMIT:
		trace_vnet_retransmit(nic, ev);
		break;
	case VNET_FW_EV_RETURNED:
		trace_vnet_returned(nic, ev);
		break;
	}
}

static const struct vnet_fw_ops vnet_card_fw_ops = {
	.lookup = vnet_card_lookup,
	.request_fault = vnet_card_request_fault,
	.notify_recv = vnet_card_notify_recv,
	.transmit = vnet_card_transmit,
	.transmit_seg = vnet_card_transmit_seg,
	.notify_flushed = vnet_card_notify_flushed,
	.random = vnet_card_random,
	.transmit_to = vnet_card_transmit_to,
	.mapper_rx = vnet_priv_rx,
	.pause = vnet_card_pause,
	.event = vnet_card_event,
};

void vnet_card_doorbell(struct vnet_nic *nic)
{
	WRITE_ONCE(nic->doorbell, true);
	wake_up(&nic->fw_wq);
}

/*
 * One round: packets that arrived, then the resident endpoints' queues.
 * The host's commands run between two packets and between two turns, and
 * fw_lock is let go of between batches of them (vnet_card_pause()), so a
 * host changing a tag waits for no more than that, and the thread can be
 * preempted in between.
 */
static struct vnet_fw_round vnet_card_round(struct vnet_nic *nic)
{
	struct vnet_fw_piece piece[MAX_SKB_FRAGS + 1];
	struct vnet_fw_round round;
	struct vnet_fw_bytes bytes;
	struct sk_buff *skb;
	u32 received = 0;

	mutex_lock(&nic->fw_lock);
	while (received < VNET_RX_BATCH && (skb = skb_dequeue(&nic->rxq))) {
		vnet_fw_run_calls(nic);
		if (vnet_link_bytes(nic, skb, piece, &bytes)) {
			vnet_fw_receive(&nic->fw, &bytes,
					eth_hdr(skb)->h_source,
					vnet_card_now());
			consume_skb(skb);
		} else {
			/* Counted; a drop monitor sees it too. */
			kfree_skb(skb);
		}
		received++;
	}
	mutex_unlock(&nic->fw_lock);
	cond_resched();

	mutex_lock(&nic->fw_lock);
	nic->fw_locked_at = ktime_get_ns();
	vnet_fw_run_calls(nic);
	/* A measurement's knob: it holds from the next train on. */
	nic->fw.frag_size = READ_ONCE(nic->frag_size);
	round = vnet_fw_poll(&nic->fw, vnet_card_now());
	vnet_fw_run_calls(nic);
	mutex_unlock(&nic->fw_lock);
	round.messages += received;
	return round;
}

static bool vnet_card_arm(struct vnet_nic *nic)
{
	bool work;

	mutex_lock(&nic->fw_lock);
	vnet_fw_run_calls(nic);
	work = vnet_fw_arm_wakeup(&nic->fw);
	mutex_unlock(&nic->fw_lock);
	return work;
}

static void vnet_card_disarm(struct vnet_nic *nic)
{
	mutex_lock(&nic->fw_lock);
	vnet_fw_disarm_wakeup(&nic->fw);
	mutex_unlock(&nic->fw_lock);
}

static bool vnet_card_should_wake(struct vnet_nic *nic)
{
	return READ_ONCE(nic->doorbell) || !skb_queue_empty_lockless(&nic->rxq) ||
	       kthread_should_stop();
}

/*
 * How long to sleep with a message held.  A destination coming onto the
 * card rings the doorbell and a freed channel comes with a packet, but a
 * reader making room in a full queue tells no one: look again after a
 * tick, then back off to the retransmission quantum while it stays full,
 * so a receiver that never drains costs one wake-up a quantum, not one a
 * tick.
 */
static long vnet_card_held_timeout(struct vnet_nic *nic, unsigned int held)
{
	long max = max(1UL, usecs_to_jiffies(nic->fw.quantum));

	return min_t(long, 1L << min(held, 10u), max);
}

static int vnet_card_firmware(void *data)
{
	struct vnet_nic *nic = data;
	unsigned int held = 0;
	u64 idle_since = 0;

	while (!kthread_should_stop()) {
		struct vnet_fw_round round = vnet_card_round(nic);
		long timeout = MAX_SCHEDULE_TIMEOUT;

		if (round.messages) {
			idle_since = 0;
			held = 0;
			cond_resched();
			continue;
		}
		if (!idle_since)
			idle_since = ktime_get_ns();
		/*
		 * Only another CPU can bring work while we spin: on one, the
		 * spin keeps off it the very thread that would -- the other
		 * NIC's, a sender -- and a round trip took twice as long.
		 */
		if (num_online_cpus() > 1 &&
		    ktime_get_ns() - idle_since < vnet_poll_us * NSEC_PER_USEC &&
		    !round.held) {
			cond_resched();
			continue;
		}

		if (vnet_card_arm(nic)) {
			cond_resched();
			continue;
		}
		if (round.timer)
			timeout = max(1UL, usecs_to_jiffies(nic->fw.quantum));
		if (round.held)
			timeout = min(timeout, vnet_card_held_timeout(nic, held++));
		else
			held = 0;
		wait_event_interruptible_timeout(nic->fw_wq,
						 vnet_card_should_wake(nic),
						 timeout);
		WRITE_ONCE(nic->doorbell, false);
		vnet_card_disarm(nic);
		idle_since = 0;
	}
	return 0;
}

static void vnet_card_free_transport(struct vnet_nic *nic)
{
	kvfree(nic->fw.peers);
	kvfree(nic->tx_chans);
	kvfree(nic->rx_chans);
	kvfree(nic->fw.peer_of);
	kvfree(nic->fw.active);
	kvfree(nic->fw.pool);
	vfree(nic->pool_mem);
	kvfree(nic->fw.trains);
	vfree(nic->train_mem);
}

static int vnet_card_alloc_transport(struct vnet_nic *nic)
{
	struct vnet_fw_nic *fw = &nic->fw;
	u32 peers = vnet_max_peers, chans = vnet_channels;
	u32 i;

	fw->mtu = ETH_DATA_LEN;
	fw->nchannels = chans;
	fw->train_window = READ_ONCE(vnet_train_window);
	fw->zero_copy = READ_ONCE(vnet_zero_copy);
	fw->max_peers = peers;
	fw->max_retries = vnet_max_retries;
	fw->quantum = (u64)vnet_retrans_ms * USEC_PER_MSEC;
	fw->busy_timeout = (u64)vnet_busy_timeout_ms * USEC_PER_MSEC;
	/* The sleep is rounded up to a jiffy, and the wake-up comes late. */
	fw->timer_slack = 2 * jiffies_to_usecs(1);

	fw->peers = kvcalloc(peers, sizeof(*fw->peers), GFP_KERNEL);
	nic->tx_chans = kvcalloc(peers * chans, sizeof(*nic->tx_chans),
				 GFP_KERNEL);
	nic->rx_chans = kvcalloc(peers * VNET_WIRE_CHANNELS,
				 sizeof(*nic->rx_chans), GFP_KERNEL);
	fw->peer_of = kvmalloc_array(65536, sizeof(*fw->peer_of), GFP_KERNEL);
	fw->active = kvcalloc(peers, sizeof(*fw->active), GFP_KERNEL);
	fw->pool = kvcalloc(vnet_pool_buffers, sizeof(*fw->pool), GFP_KERNEL);
	nic->pool_mem = vmalloc(array_size(vnet_pool_buffers, VNET_MEDIUM_MAX));
	fw->ntrains = vnet_rx_trains;
	fw->trains = kvcalloc(fw->ntrains, sizeof(*fw->trains), GFP_KERNEL);
	nic->train_mem = vmalloc(array_size(fw->ntrains, VNET_MEDIUM_MAX));
	if (!fw->peers || !nic->tx_chans || !nic->rx_chans || !fw->peer_of ||
	    !fw->active || !fw->pool || !nic->pool_mem || !fw->trains ||
	    !nic->train_mem) {
		vnet_card_free_transport(nic);
		return -ENOMEM;
	}
	for (i = 0; i < peers; i++) {
		fw->peers[i].tx = &nic->tx_chans[i * chans];
		fw->peers[i].rx = &nic->rx_chans[i * VNET_WIRE_CHANNELS];
	}
	for (i = 0; i < vnet_pool_buffers; i++)
		fw->pool[i] = nic->pool_mem + (size_t)i * VNET_MEDIUM_MAX;
	for (i = 0; i < fw->ntrains; i++)
		fw->trains[i].buf = nic->train_mem + (size_t)i * VNET_MEDIUM_MAX;
	fw->pool_free = vnet_pool_buffers;
	vnet_fw_transport_init(fw);
	return 0;
}

/* The card's memory and tables, before its firmware first runs. */
int vnet_card_init(struct vnet_nic *nic)
{
	int err;

	init_waitqueue_head(&nic->fw_wq);
	skb_queue_head_init(&nic->rxq);
	mutex_init(&nic->fw_lock);
	init_llist_head(&nic->fw_calls);
	nic->fw.ops = &vnet_card_fw_ops;
	nic->fw.ctx = nic;
	nic->fw.nic_id = nic->id;
	nic->fw.nframes = nic->nframes;
	nic->fw.burst = 1u << vnet_sched_k;

	nic->fw_frame_owner = kcalloc(nic->nframes,
				      sizeof(*nic->fw_frame_owner), GFP_KERNEL);
	if (!nic->fw_frame_owner)
		return -ENOMEM;
	nic->fw.frame_owner = nic->fw_frame_owner;
	err = vnet_card_alloc_transport(nic);
	if (err)
		goto err_owner;
	nic->card_mem = vmalloc_user((size_t)nic->nframes * VNET_FRAME_SIZE);
	if (!nic->card_mem) {
		vnet_card_free_transport(nic);
		err = -ENOMEM;
		goto err_owner;
	}
	return 0;

err_owner:
	kfree(nic->fw_frame_owner);
	return err;
}

int vnet_card_start(struct vnet_nic *nic)
{
	nic->fw_thread = kthread_run(vnet_card_firmware, nic, "%s_fw",
				     nic->name);
	return PTR_ERR_OR_ZERO(nic->fw_thread);
}

/*
 * Stop the firmware for good: nothing new goes out, and what was on the
 * wire is returned as unreachable, which resolves it for the flush rule.
 * A flush that still waits sees fw_stopped.
 */
void vnet_card_stop(struct vnet_nic *nic)
{
	kthread_stop(nic->fw_thread);
	mutex_lock(&nic->fw_lock);
	vnet_fw_fail_all(&nic->fw);
	mutex_unlock(&nic->fw_lock);
	WRITE_ONCE(nic->fw_stopped, true);
}

void vnet_card_free(struct vnet_nic *nic)
{
	vfree(nic->card_mem);
	vnet_card_free_transport(nic);
	kfree(nic->fw_frame_owner);
}
