// SPDX-License-Identifier: GPL-2.0
/*
 * Endpoint lifetime and the state user space sets through ioctls: the tag
 * and the translation table.  Residency lives in cache.c.
 */
#include <linux/idr.h>
#include <linux/mm.h>
#include <linux/random.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "vnet.h"

static DEFINE_IDA(vnet_ep_uids);

/* Offsets stay below 2^52 bytes so 32-bit processes can map them too. */
#define VNET_MAX_UID		((1u << 20) - 1)

void vnet_ep_release(struct kobject *kobj)
{
	struct vnet_ep *ep = container_of(kobj, struct vnet_ep, kobj);
	struct vnet_nic *nic = ep->nic;

	/* Every fault in line holds the endpoint: none is left. */
	WARN_ON_ONCE(!list_empty(&ep->frame_wait));
	put_pid(ep->mapper);
	atomic_dec(&nic->nr_eps);
	ida_free(&vnet_ep_uids, ep->uid);
	vfree(ep->staging);
	kvfree(ep->image);
	vnet_quota_uncharge(ep->user);
	kvfree(ep);
	vnet_nic_put(nic);
}

struct vnet_ep *vnet_ep_create(struct vnet_nic *nic,
			       struct address_space *mapping)
{
	struct vnet_user *user;
	struct vnet_name name;
	struct vnet_ep *ep;
	u32 index;
	int err;

	if (atomic_inc_return(&nic->nr_eps) > vnet_max_endpoints) {
		atomic_dec(&nic->nr_eps);
		return ERR_PTR(-ENOSPC);
	}
	user = vnet_quota_charge();
	if (IS_ERR(user)) {
		err = PTR_ERR(user);
		goto err_count;
	}

	/* The endpoint's memory is charged to its creator's memory cgroup. */
	err = -ENOMEM;
	ep = kvzalloc(sizeof(*ep), GFP_KERNEL_ACCOUNT);
	if (!ep)
		goto err_quota;
	ep->user = user;
	ep->nic = nic;
	ep->mapping = mapping;
	err = ida_alloc_max(&vnet_ep_uids, VNET_MAX_UID, GFP_KERNEL);
	if (err < 0)
		goto err_ep;
	ep->uid = err;

	err = -ENOMEM;
	ep->image = kvzalloc(VNET_FRAME_SIZE, GFP_KERNEL_ACCOUNT);
	ep->staging = __vmalloc(VNET_STAGING_SIZE,
				GFP_KERNEL_ACCOUNT | __GFP_ZERO);
	if (!ep->image || !ep->staging)
		goto err_mem;

	/* Reserve the index; lookups see NULL until the endpoint is ready. */
	err = xa_alloc(&nic->eps, &index, NULL, XA_LIMIT(0, INT_MAX),
		       GFP_KERNEL);
	if (err)
		goto err_mem;

	ep->index = index;
	ep->frame_off = (u64)ep->uid * VNET_MMAP_STRIDE;
	ep->staging_off = ep->frame_off + VNET_MMAP_STAGING;
	ep->pid = task_tgid_nr(current);
	ep->state = VNET_EP_NONRESIDENT;
	ep->frame = -1;
	init_waitqueue_head(&ep->state_wq);
	INIT_LIST_HEAD(&ep->frame_wait);
	init_waitqueue_head(&ep->poll_wq);
	init_rwsem(&ep->map_sem);
	INIT_WORK(&ep->fault_work, vnet_ep_fault_work);

	name.nic = nic->id;
	name.ep = index;
	vnet_fw_ep_init(&ep->fw, name, ep->staging, get_random_u64());
	vnet_fw_frame_init(&ep->fw, ep->image);

	kref_get(&nic->ref);
	kobject_init(&ep->kobj, &vnet_ep_ktype);
	err = vnet_sysfs_add_ep(ep);
	if (err) {
		xa_erase(&nic->eps, index);
		/* The release callback frees the rest. */
		kobject_put(&ep->kobj);
		return ERR_PTR(err);
	}
	xa_store(&nic->eps, index, ep, GFP_KERNEL);
	return ep;

err_mem:
	vfree(ep->staging);
	kvfree(ep->image);
	ida_free(&vnet_ep_uids, ep->uid);
err_ep:
	kvfree(ep);
err_quota:
	vnet_quota_uncharge(user);
err_count:
	atomic_dec(&nic->nr_eps);
	return ERR_PTR(err);
}

/*
 * Out of sysfs, once: closing and orphaning can race to it.  The index is
 * handed out again only after its directory is gone, or the next endpoint
 * to get it could not be added.
 */
static void vnet_ep_unlist(struct vnet_ep *ep)
{
	if (test_and_set_bit(VNET_EP_UNLISTED, &ep->flags))
		return;
	kobject_del(&ep->kobj);
	xa_erase(&ep->nic->eps, ep->index);
}

/*
 * Lookups see NULL from now on, but the index stays taken until the
 * endpoint leaves sysfs.  Storing NULL in an allocating xarray keeps the
 * index reserved; replacing a present entry allocates nothing.  An
 * endpoint its NIC's removal already unlisted is not there any more.
 */
static void vnet_ep_hide(struct vnet_ep *ep)
{
	struct xarray *eps = &ep->nic->eps;

	xa_lock(eps);
	if (xa_load(eps, ep->index) == ep)
		__xa_store(eps, ep->index, NULL, 0);
	xa_unlock(eps);
}

/*
 * The owner closed the endpoint (the last mapping is gone with it).  Hide it
 * from the firmware's lookups and make the firmware forget it -- it sends
 * nothing more from it, and what it has on the wire no longer holds up its
 * frame -- then take it off the card and drop the file's reference; sysfs
 * readers and queued fault work may hold it a little longer.
 */
void vnet_ep_destroy(struct vnet_ep *ep)
{
	struct vnet_nic *nic = ep->nic;

	spin_lock(&nic->lock);
	WRITE_ONCE(ep->dead, true);
	spin_unlock(&nic->lock);
	/* A fault waiting in line for a frame for it gives up. */
	wake_up_all(&ep->state_wq);

	vnet_ep_hide(ep);
	mutex_lock(&nic->fw_lock);
	vnet_fw_ep_forget(&nic->fw, &ep->fw);
	mutex_unlock(&nic->fw_lock);

	vnet_ep_evict_for_close(ep);
	if (cancel_work_sync(&ep->fault_work))
		kobject_put(&ep->kobj);
	vnet_ep_set_seg(ep, 0, 0);
	vnet_ep_drop_pins(ep);

	vnet_ep_unlist(ep);
	kobject_put(&ep->kobj);
}

/*
 * Its NIC is going away (vnet_nics_lock held): take the endpoint off the
 * card for good and out of sysfs.  The file keeps what is left until it is
 * closed; touching the mapping then gets SIGBUS, ioctls ENODEV.
 */
void vnet_ep_orphan(struct vnet_ep *ep)
{
	struct vnet_nic *nic = ep->nic;

	spin_lock(&nic->lock);
	WRITE_ONCE(ep->dead, true);
	spin_unlock(&nic->lock);
	/* A fault waiting in line for a frame for it gives up. */
	wake_up_all(&ep->state_wq);
	vnet_ep_evict_for_close(ep);
	wake_up_interruptible(&ep->poll_wq);
	vnet_ep_unlist(ep);
}

int vnet_ep_set_tag(struct vnet_ep *ep, u64 tag)
{
	mutex_lock(&ep->nic->fw_lock);
	ep->fw.tag = tag;
	mutex_unlock(&ep->nic->fw_lock);
	return 0;
}

int vnet_ep_map(struct vnet_ep *ep, u32 slot, struct vnet_name name, u64 tag)
{
	struct vnet_fw_translation *t;

	if (slot >= VNET_MAX_SLOTS || name.nic > VNET_MAX_NIC_ID)
		return -EINVAL;
	mutex_lock(&ep->nic->fw_lock);
	t = &ep->fw.xlate[slot];
	t->name = name;
	t->tag = tag;
	t->valid = true;
	mutex_unlock(&ep->nic->fw_lock);
	return 0;
}

int vnet_ep_unmap(struct vnet_ep *ep, u32 slot)
{
	int err = 0;

	if (slot >= VNET_MAX_SLOTS)
		return -EINVAL;
	mutex_lock(&ep->nic->fw_lock);
	if (ep->fw.xlate[slot].valid)
		ep->fw.xlate[slot].valid = false;
	else
		err = -ENOENT;
	mutex_unlock(&ep->nic->fw_lock);
	return err;
}

/* Does a receive queue hold a message?  For poll(). */
bool vnet_ep_readable(struct vnet_ep *ep)
{
	struct vnet_nic *nic = ep->nic;
	bool readable;

	spin_lock(&nic->lock);
	readable = vnet_fw_recv_pending(vnet_ep_current_image(ep));
	spin_unlock(&nic->lock);
	return readable;
}
