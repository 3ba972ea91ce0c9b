// SPDX-License-Identifier: GPL-2.0
/*
 * The emulated card: a block of "card memory" cut into endpoint frames, the
 * transport's tables and packet buffers, and a kernel thread that runs the
 * firmware.  The thread polls while there is traffic, spins a little when
 * it runs dry, then raises NEED_WAKEUP in the resident frames and sleeps
 * until a doorbell (KICK), a packet, a completed fault-in, or -- with a
 * message held for a busy destination or packets waiting for an ACK -- the
 * next timer tick.
 */
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/random.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "vnet.h"

LIST_HEAD(vnet_nics);
/* Protects vnet_nics, and serializes NIC creation and removal. */
DEFINE_MUTEX(vnet_nics_lock);

/* Packets taken off the receive queue per round, so sends are not starved. */
#define VNET_RX_BATCH		64

static struct vnet_fw_ep *vnet_nic_lookup(void *ctx, u32 ep_index)
{
	struct vnet_nic *nic = ctx;
	struct vnet_ep *ep = xa_load(&nic->eps, ep_index);

	return ep ? &ep->fw : NULL;
}

static void vnet_nic_request_fault(void *ctx, struct vnet_fw_ep *fw)
{
	/* The firmware only sees endpoints still in nic->eps: alive. */
	vnet_ep_queue_fault(container_of(fw, struct vnet_ep, fw));
}

static void vnet_nic_notify_recv(void *ctx, struct vnet_fw_ep *fw)
{
	struct vnet_ep *ep = container_of(fw, struct vnet_ep, fw);

	wake_up_interruptible(&ep->poll_wq);
}

static void vnet_nic_notify_flushed(void *ctx, struct vnet_fw_ep *fw)
{
	struct vnet_ep *ep = container_of(fw, struct vnet_ep, fw);

	wake_up_all(&ep->state_wq);
}

static void vnet_nic_transmit(void *ctx, u32 peer, const void *hdr,
			      u32 hdr_len, const void *payload, u32 len)
{
	vnet_link_xmit(ctx, peer, hdr, hdr_len, payload, len);
}

static const struct vnet_fw_ops vnet_nic_fw_ops = {
	.lookup = vnet_nic_lookup,
	.request_fault = vnet_nic_request_fault,
	.notify_recv = vnet_nic_notify_recv,
	.transmit = vnet_nic_transmit,
	.notify_flushed = vnet_nic_notify_flushed,
};

void vnet_nic_doorbell(struct vnet_nic *nic)
{
	WRITE_ONCE(nic->doorbell, true);
	wake_up(&nic->fw_wq);
}

/* Wait until the firmware has finished any round that began before now. */
void vnet_nic_fence(struct vnet_nic *nic)
{
	mutex_lock(&nic->fw_lock);
	mutex_unlock(&nic->fw_lock);
}

static u64 vnet_nic_now(void)
{
	return div_u64(ktime_get_ns(), NSEC_PER_USEC);
}

/*
 * One round: packets that arrived, then the resident endpoints' queues.
 * Each half holds fw_lock on its own, so a host waiting in
 * vnet_nic_fence() or for a tag change waits for at most one half, and
 * the thread can be preempted in between.
 */
static struct vnet_fw_round vnet_nic_round(struct vnet_nic *nic)
{
	struct vnet_fw_round round;
	struct sk_buff *skb;
	u32 received = 0;

	mutex_lock(&nic->fw_lock);
	while (received < VNET_RX_BATCH && (skb = skb_dequeue(&nic->rxq))) {
		if (!skb_linearize(skb))
			vnet_fw_receive(&nic->fw, skb->data, skb->len,
					vnet_nic_now());
		consume_skb(skb);
		received++;
	}
	mutex_unlock(&nic->fw_lock);
	cond_resched();

	mutex_lock(&nic->fw_lock);
	round = vnet_fw_poll(&nic->fw, vnet_nic_now());
	mutex_unlock(&nic->fw_lock);
	round.messages += received;
	return round;
}

static bool vnet_nic_arm(struct vnet_nic *nic)
{
	bool work;

	mutex_lock(&nic->fw_lock);
	work = vnet_fw_arm_wakeup(&nic->fw);
	mutex_unlock(&nic->fw_lock);
	return work;
}

static void vnet_nic_disarm(struct vnet_nic *nic)
{
	mutex_lock(&nic->fw_lock);
	vnet_fw_disarm_wakeup(&nic->fw);
	mutex_unlock(&nic->fw_lock);
}

static bool vnet_nic_should_wake(struct vnet_nic *nic)
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
static long vnet_nic_held_timeout(struct vnet_nic *nic, unsigned int held)
{
	long max = max(1UL, usecs_to_jiffies(nic->fw.quantum));

	return min_t(long, 1L << min(held, 10u), max);
}

static int vnet_nic_firmware(void *data)
{
	struct vnet_nic *nic = data;
	unsigned int held = 0;
	u64 idle_since = 0;

	while (!kthread_should_stop()) {
		struct vnet_fw_round round = vnet_nic_round(nic);
		long timeout = MAX_SCHEDULE_TIMEOUT;

		if (round.messages) {
			idle_since = 0;
			held = 0;
			cond_resched();
			continue;
		}
		if (!idle_since)
			idle_since = ktime_get_ns();
		if (ktime_get_ns() - idle_since < vnet_poll_us * NSEC_PER_USEC &&
		    !round.held) {
			cond_resched();
			continue;
		}

		/*
		 * A held message also makes the armed recheck see work,
		 * which must not keep us awake.
		 */
		if (vnet_nic_arm(nic) && !round.held) {
			cond_resched();
			continue;
		}
		if (round.timer)
			timeout = max(1UL, usecs_to_jiffies(nic->fw.quantum));
		if (round.held)
			timeout = min(timeout, vnet_nic_held_timeout(nic, held++));
		else
			held = 0;
		wait_event_interruptible_timeout(nic->fw_wq,
						 vnet_nic_should_wake(nic),
						 timeout);
		WRITE_ONCE(nic->doorbell, false);
		vnet_nic_disarm(nic);
		idle_since = 0;
	}
	return 0;
}

struct vnet_nic *vnet_nic_find(u32 id)
{
	struct vnet_nic *nic;

	list_for_each_entry(nic, &vnet_nics, node)
		if (nic->id == id)
			return nic;
	return NULL;
}

/* The lowest NIC id not in use; called with vnet_nics_lock held. */
u32 vnet_nic_free_id(void)
{
	u32 id = 0;

	while (vnet_nic_find(id))
		id++;
	return id;
}

static void vnet_nic_free_transport(struct vnet_nic *nic)
{
	kvfree(nic->fw.peers);
	kvfree(nic->tx_chans);
	kvfree(nic->rx_chans);
	kvfree(nic->fw.peer_of);
	kvfree(nic->fw.active);
	kvfree(nic->fw.pool);
	vfree(nic->pool_mem);
	kvfree(nic->peer_mac);
}

static int vnet_nic_alloc_transport(struct vnet_nic *nic)
{
	struct vnet_fw_nic *fw = &nic->fw;
	u32 peers = vnet_max_peers, chans = vnet_channels;
	u32 i;

	fw->boot_id = get_random_u32();
	fw->mtu = ETH_DATA_LEN;
	fw->nchannels = chans;
	fw->max_peers = peers;
	fw->max_retries = vnet_max_retries;
	fw->quantum = (u64)vnet_retrans_ms * USEC_PER_MSEC;

	fw->peers = kvcalloc(peers, sizeof(*fw->peers), GFP_KERNEL);
	nic->tx_chans = kvcalloc(peers * chans, sizeof(*nic->tx_chans),
				 GFP_KERNEL);
	nic->rx_chans = kvcalloc(peers * chans, sizeof(*nic->rx_chans),
				 GFP_KERNEL);
	fw->peer_of = kvmalloc_array(65536, sizeof(*fw->peer_of), GFP_KERNEL);
	fw->active = kvcalloc(peers, sizeof(*fw->active), GFP_KERNEL);
	fw->pool = kvcalloc(vnet_pool_buffers, sizeof(*fw->pool), GFP_KERNEL);
	nic->pool_mem = vmalloc(array_size(vnet_pool_buffers, VNET_MEDIUM_MAX));
	nic->peer_mac = kvcalloc(peers, ETH_ALEN, GFP_KERNEL);
	if (!fw->peers || !nic->tx_chans || !nic->rx_chans || !fw->peer_of ||
	    !fw->active || !fw->pool || !nic->pool_mem || !nic->peer_mac) {
		vnet_nic_free_transport(nic);
		return -ENOMEM;
	}
	for (i = 0; i < peers; i++) {
		fw->peers[i].tx = &nic->tx_chans[i * chans];
		fw->peers[i].rx = &nic->rx_chans[i * chans];
	}
	for (i = 0; i < vnet_pool_buffers; i++)
		fw->pool[i] = nic->pool_mem + (size_t)i * VNET_MEDIUM_MAX;
	fw->pool_free = vnet_pool_buffers;
	vnet_fw_transport_init(fw);
	return 0;
}

/* Called with vnet_nics_lock held. */
struct vnet_nic *vnet_nic_create(u32 id, unsigned int nframes)
{
	struct vnet_nic *nic;
	int err;

	if (vnet_nic_find(id))
		return ERR_PTR(-EEXIST);
	nic = kzalloc(sizeof(*nic), GFP_KERNEL);
	if (!nic)
		return ERR_PTR(-ENOMEM);

	kref_init(&nic->ref);
	nic->id = id;
	nic->nframes = nframes;
	snprintf(nic->name, sizeof(nic->name), "vnet%u", id);
	spin_lock_init(&nic->lock);
	init_waitqueue_head(&nic->frame_wq);
	xa_init_flags(&nic->eps, XA_FLAGS_ALLOC);
	atomic_set(&nic->nr_eps, 0);
	mutex_init(&nic->fw_lock);
	init_waitqueue_head(&nic->fw_wq);
	skb_queue_head_init(&nic->rxq);

	nic->fw.ops = &vnet_nic_fw_ops;
	nic->fw.ctx = nic;
	nic->fw.nic_id = id;
	nic->fw.nframes = nframes;
	nic->fw.frame_owner = nic->fw_frame_owner;
	nic->fw.burst = 1u << vnet_sched_k;

	err = vnet_nic_alloc_transport(nic);
	if (err)
		goto err_free;
	err = -ENOMEM;
	nic->card_mem = vmalloc_user((size_t)nframes * VNET_FRAME_SIZE);
	if (!nic->card_mem)
		goto err_transport;
	/*
	 * Fault-ins wait for frames and flushes, not for each other: a few at
	 * a time keep the card busy without a kworker per waiting endpoint.
	 */
	nic->fault_wq = alloc_workqueue("%s_fault", WQ_UNBOUND, 4, nic->name);
	if (!nic->fault_wq)
		goto err_card;

	err = vnet_sysfs_add_nic(nic);
	if (err)
		goto err_wq;

	nic->fw_thread = kthread_run(vnet_nic_firmware, nic, "%s_fw",
				     nic->name);
	if (IS_ERR(nic->fw_thread)) {
		err = PTR_ERR(nic->fw_thread);
		goto err_sysfs;
	}
	vnet_debugfs_add_nic(nic);
	list_add_tail(&nic->node, &vnet_nics);
	return nic;

err_sysfs:
	vnet_sysfs_del_nic(nic);
err_wq:
	destroy_workqueue(nic->fault_wq);
err_card:
	vfree(nic->card_mem);
err_transport:
	vnet_nic_free_transport(nic);
err_free:
	kfree(nic);
	return ERR_PTR(err);
}

static void vnet_nic_release(struct kref *ref)
{
	struct vnet_nic *nic = container_of(ref, struct vnet_nic, ref);

	xa_destroy(&nic->eps);
	vfree(nic->card_mem);
	vnet_nic_free_transport(nic);
	kfree(nic);
}

void vnet_nic_put(struct vnet_nic *nic)
{
	kref_put(&nic->ref, vnet_nic_release);
}

/*
 * Take a NIC away (detach, its interface vanishing, or rmmod).  Called with
 * vnet_nics_lock held.  Everything in flight is returned as unreachable,
 * which resolves it for the flush rule; every endpoint is then taken off
 * the card and orphaned: its owner's next touch gets SIGBUS and its ioctls
 * ENODEV.  The memory goes with the last endpoint.
 */
void vnet_nic_remove(struct vnet_nic *nic)
{
	unsigned long index = 0;
	struct vnet_ep *ep;

	list_del(&nic->node);
	vnet_link_stop(nic);

	/*
	 * Stop the firmware first: then nothing new goes out, and what was
	 * on the wire is returned as unreachable, which resolves it for the
	 * flush rule.  A flush that still waits (an endpoint closing right
	 * now, missed below) sees fw_stopped.
	 */
	kthread_stop(nic->fw_thread);
	mutex_lock(&nic->fw_lock);
	nic->dead = true;
	vnet_fw_fail_all(&nic->fw);
	mutex_unlock(&nic->fw_lock);
	WRITE_ONCE(nic->fw_stopped, true);

	/* Endpoints may close meanwhile: hold each one while we orphan it. */
	for (;; index++) {
		xa_lock(&nic->eps);
		ep = xa_find(&nic->eps, &index, ULONG_MAX, XA_PRESENT);
		if (ep)
			kobject_get(&ep->kobj);
		xa_unlock(&nic->eps);
		if (!ep)
			break;
		wake_up_all(&ep->state_wq);
		vnet_ep_orphan(ep);
		kobject_put(&ep->kobj);
	}

	vnet_debugfs_del_nic(nic);
	destroy_workqueue(nic->fault_wq);
	vnet_sysfs_del_nic(nic);
	vnet_nic_put(nic);
}
