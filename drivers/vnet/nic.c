// SPDX-License-Identifier: GPL-2.0
/*
 * The emulated card: a block of "card memory" cut into endpoint frames and a
 * kernel thread that runs the firmware over them.  The thread polls while
 * there is traffic, spins a little when it runs dry, then raises
 * NEED_WAKEUP in the resident frames and sleeps until a doorbell (KICK), a
 * completed fault-in, or -- when a message is held for a busy destination --
 * the next retry tick.
 */
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "vnet.h"

LIST_HEAD(vnet_nics);
/* Protects vnet_nics, and serializes NIC creation and removal. */
DEFINE_MUTEX(vnet_nics_lock);

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

static const struct vnet_fw_ops vnet_nic_fw_ops = {
	.lookup = vnet_nic_lookup,
	.request_fault = vnet_nic_request_fault,
	.notify_recv = vnet_nic_notify_recv,
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

static struct vnet_fw_round vnet_nic_round(struct vnet_nic *nic)
{
	struct vnet_fw_round round;

	mutex_lock(&nic->fw_lock);
	round = vnet_fw_poll(&nic->fw);
	mutex_unlock(&nic->fw_lock);
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

static int vnet_nic_firmware(void *data)
{
	struct vnet_nic *nic = data;
	u64 idle_since = 0;

	while (!kthread_should_stop()) {
		struct vnet_fw_round round = vnet_nic_round(nic);
		long timeout;

		if (round.messages) {
			idle_since = 0;
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
		 * A held message is retried on the next tick; it also makes
		 * the armed recheck see work, which must not keep us awake.
		 */
		if (vnet_nic_arm(nic) && !round.held)
			continue;
		timeout = round.held ? 1 : MAX_SCHEDULE_TIMEOUT;
		wait_event_interruptible_timeout(nic->fw_wq,
						 READ_ONCE(nic->doorbell) ||
						 kthread_should_stop(),
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

	nic->id = id;
	nic->nframes = nframes;
	snprintf(nic->name, sizeof(nic->name), "vnet%u", id);
	spin_lock_init(&nic->lock);
	init_waitqueue_head(&nic->frame_wq);
	xa_init_flags(&nic->eps, XA_FLAGS_ALLOC);
	atomic_set(&nic->nr_eps, 0);
	mutex_init(&nic->fw_lock);
	init_waitqueue_head(&nic->fw_wq);

	nic->fw.ops = &vnet_nic_fw_ops;
	nic->fw.ctx = nic;
	nic->fw.nic_id = id;
	nic->fw.nframes = nframes;
	nic->fw.frame_owner = nic->fw_frame_owner;
	nic->fw.burst = 1u << vnet_sched_k;

	err = -ENOMEM;
	nic->card_mem = vmalloc_user((size_t)nframes * VNET_FRAME_SIZE);
	if (!nic->card_mem)
		goto err_free;
	nic->fault_wq = alloc_workqueue("%s_fault", WQ_UNBOUND, 0, nic->name);
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
err_free:
	kfree(nic);
	return ERR_PTR(err);
}

/*
 * Called with vnet_nics_lock held, once no endpoint is left: open files pin
 * the module, so rmmod cannot get here while one exists.
 */
void vnet_nic_destroy(struct vnet_nic *nic)
{
	WARN_ON(atomic_read(&nic->nr_eps));
	list_del(&nic->node);
	vnet_debugfs_del_nic(nic);
	kthread_stop(nic->fw_thread);
	destroy_workqueue(nic->fault_wq);
	vnet_sysfs_del_nic(nic);
	xa_destroy(&nic->eps);
	vfree(nic->card_mem);
	kfree(nic);
}
