// SPDX-License-Identifier: GPL-2.0
/*
 * The NICs: the list of them, and their lifecycle.  A NIC is an emulated
 * card (card.c), optionally on an Ethernet interface (link.c), with the
 * endpoints created on it.  vnet0, the loopback card, lives as long as
 * the module; the others are created by attaching to an interface and go
 * when they are detached or the interface does.
 */
#include <linux/if_arp.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <linux/slab.h>

#include "vnet.h"

LIST_HEAD(vnet_nics);
/* Protects vnet_nics, and serializes NIC creation and removal. */
DEFINE_MUTEX(vnet_nics_lock);

struct vnet_nic *vnet_nic_find(u32 id)
{
	struct vnet_nic *nic;

	lockdep_assert_held(&vnet_nics_lock);
	list_for_each_entry(nic, &vnet_nics, node)
		if (nic->id == id)
			return nic;
	return NULL;
}

/*
 * A placeholder for a NIC its mapper will number: the highest id not in
 * use, away from the low ones mappers hand out, so that two NICs of one
 * host waiting for their numbers never hold each other's.  Called with
 * vnet_nics_lock held; VNET_NIC_ID_ANY when every id is taken.
 */
static u32 vnet_nic_placeholder_id(void)
{
	u32 id = VNET_MAX_NIC_ID + 1;

	while (id-- > 0)
		if (!vnet_nic_find(id))
			return id;
	return VNET_NIC_ID_ANY;
}

/* Called with vnet_nics_lock held. */
struct vnet_nic *vnet_nic_create(u32 id, unsigned int nframes)
{
	struct vnet_nic *nic;
	int err;

	lockdep_assert_held(&vnet_nics_lock);
	if (vnet_nic_find(id))
		return ERR_PTR(-EEXIST);
	nic = kzalloc(sizeof(*nic), GFP_KERNEL);
	if (!nic)
		return ERR_PTR(-ENOMEM);
	/* Up to VNET_MAX_FRAMES of them: too many to keep in the struct. */
	nic->frame_ep = kcalloc(nframes, sizeof(*nic->frame_ep), GFP_KERNEL);
	if (!nic->frame_ep) {
		kfree(nic);
		return ERR_PTR(-ENOMEM);
	}

	nic->rp_frames = kcalloc(nframes, sizeof(*nic->rp_frames), GFP_KERNEL);
	if (!nic->rp_frames) {
		kfree(nic->frame_ep);
		kfree(nic);
		return ERR_PTR(-ENOMEM);
	}

	kref_init(&nic->ref);
	nic->id = id;
	nic->numbered = true;
	nic->nframes = nframes;
	snprintf(nic->name, sizeof(nic->name), "vnet%u", id);
	spin_lock_init(&nic->lock);
	vnet_cache_init(nic);
	xa_init_flags(&nic->eps, XA_FLAGS_ALLOC);
	atomic_set(&nic->nr_eps, 0);

	err = vnet_card_init(nic);
	if (err)
		goto err_free;
	err = -ENOMEM;
	/*
	 * Fault-ins the firmware asks for wait in the line for frames like
	 * any other, in turn: a few at a time keep the card busy without a
	 * kworker per waiting endpoint, the rest wait in the workqueue.
	 */
	nic->fault_wq = alloc_workqueue("%s_fault", WQ_UNBOUND, 4, nic->name);
	if (!nic->fault_wq)
		goto err_card;

	err = vnet_sysfs_add_nic(nic);
	if (err)
		goto err_wq;
	err = vnet_card_start(nic);
	if (err)
		goto err_sysfs;
	vnet_debugfs_add_nic(nic);
	list_add_tail(&nic->node, &vnet_nics);
	return nic;

err_sysfs:
	vnet_sysfs_del_nic(nic);
err_wq:
	destroy_workqueue(nic->fault_wq);
err_card:
	vnet_card_free(nic);
err_free:
	kfree(nic->rp_frames);
	kfree(nic->frame_ep);
	kfree(nic);
	return ERR_PTR(err);
}

static void vnet_nic_release(struct kref *ref)
{
	struct vnet_nic *nic = container_of(ref, struct vnet_nic, ref);

	xa_destroy(&nic->eps);
	vnet_card_free(nic);
	kfree(nic->rp_frames);
	kfree(nic->frame_ep);
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

	lockdep_assert_held(&vnet_nics_lock);
	list_del(&nic->node);
	/* Its ioctls and new mappings fail from here on. */
	WRITE_ONCE(nic->dead, true);
	vnet_link_stop(nic);
	vnet_priv_nic_gone(nic);
	/* An endpoint closing right now, missed below, sees it stopped. */
	vnet_card_stop(nic);

	/* Endpoints may close meanwhile: hold each one while we orphan it. */
	for (;; index++) {
		xa_lock(&nic->eps);
		ep = xa_find(&nic->eps, &index, ULONG_MAX, XA_PRESENT);
		if (ep)
			kobject_get(&ep->kobj);
		xa_unlock(&nic->eps);
		if (!ep)
			break;
		vnet_ep_orphan(ep);
		kobject_put(&ep->kobj);
	}

	vnet_debugfs_del_nic(nic);
	destroy_workqueue(nic->fault_wq);
	vnet_sysfs_del_nic(nic);
	vnet_nic_put(nic);
}

/* The NIC on @dev, if any; called with vnet_nics_lock held. */
static struct vnet_nic *vnet_nic_on(struct net_device *dev)
{
	struct vnet_nic *nic;

	lockdep_assert_held(&vnet_nics_lock);
	list_for_each_entry(nic, &vnet_nics, node)
		if (nic->link && nic->link->dev == dev)
			return nic;
	return NULL;
}

/* Called with rtnl and vnet_nics_lock held. */
static int vnet_nic_attach_locked(struct net_device *dev, u32 nic_id,
				  u32 nframes, bool numbered)
{
	struct vnet_nic *nic;
	int err;

	if (dev->type != ARPHRD_ETHER || dev->addr_len != ETH_ALEN)
		return -EINVAL;
	if (vnet_nic_on(dev))
		return -EBUSY;
	nic = vnet_nic_create(nic_id, nframes);
	if (IS_ERR(nic))
		return PTR_ERR(nic);
	nic->numbered = numbered;
	err = vnet_link_start(nic, dev);
	if (err) {
		vnet_nic_remove(nic);
		return err;
	}
	if (numbered)
		netdev_info(dev, "%s: attached as NIC %u, %u frames, MTU %u\n",
			    nic->name, nic_id, nframes, dev->mtu);
	else
		netdev_info(dev, "%s: attached unnumbered, %u frames, MTU %u: no endpoints until its mapper numbers it\n",
			    nic->name, nframes, dev->mtu);
	return 0;
}

/*
 * A new NIC of @nframes frames on interface @ifname, with id @nic_id, or,
 * for VNET_NIC_ID_ANY, unnumbered: a placeholder id, and no endpoints
 * until its mapper numbers it (vnet_nic_set_id()).  Endpoint names carry
 * the id, so one made before would be named by a number the cluster
 * routes elsewhere, and would pin the NIC to it.
 */
int vnet_nic_attach(const char *ifname, u32 nic_id, u32 nframes, u32 *out_id)
{
	struct net_device *dev;
	int err;

	rtnl_lock();
	dev = __dev_get_by_name(&init_net, ifname);
	if (!dev) {
		rtnl_unlock();
		return -ENODEV;
	}
	mutex_lock(&vnet_nics_lock);
	if (nic_id == VNET_NIC_ID_ANY) {
		nic_id = vnet_nic_placeholder_id();
		err = nic_id == VNET_NIC_ID_ANY ? -ENOSPC :
		      vnet_nic_attach_locked(dev, nic_id, nframes, false);
	} else {
		err = nic_id > VNET_MAX_NIC_ID ? -EINVAL :
		      vnet_nic_attach_locked(dev, nic_id, nframes, true);
	}
	mutex_unlock(&vnet_nics_lock);
	rtnl_unlock();
	if (!err)
		*out_id = nic_id;
	return err;
}

int vnet_nic_detach(u32 nic_id)
{
	struct vnet_nic *nic;
	int err = 0;

	mutex_lock(&vnet_nics_lock);
	nic = vnet_nic_find(nic_id);
	if (!nic)
		err = -ENODEV;
	else if (!nic->link)
		err = -EINVAL;	/* the loopback card goes only with the module */
	else
		vnet_nic_remove(nic);
	mutex_unlock(&vnet_nics_lock);
	return err;
}

/*
 * Renumber @nic, for its mapper: only while it has no endpoints, whose
 * names carry the id.  The routes stay, since where the peers are has not
 * changed, but for one to the new number, which is now this NIC's own.
 * Peers keep no channel state for the new number (vnet_fw_renumber()).
 */
int vnet_nic_set_id(struct vnet_nic *nic, u32 id)
{
	char name[sizeof(nic->name)];
	int err = 0;
	u32 old;

	if (id > VNET_MAX_NIC_ID)
		return -EINVAL;
	mutex_lock(&vnet_nics_lock);
	if (nic->dead)
		err = -ENODEV;
	else if (nic->id == id)
		goto numbered;
	else if (vnet_nic_find(id))
		err = -EEXIST;
	else if (atomic_read(&nic->nr_eps))
		err = -EBUSY;
	if (err)
		goto out;

	snprintf(name, sizeof(name), "vnet%u", id);
	err = device_rename(nic->dev, name);
	if (err)
		goto out;
	vnet_debugfs_del_nic(nic);
	old = nic->id;
	strscpy(nic->name, name, sizeof(nic->name));
	mutex_lock(&nic->fw_lock);
	vnet_fw_renumber(&nic->fw, id, vnet_card_now());
	mutex_unlock(&nic->fw_lock);
	WRITE_ONCE(nic->id, id);
	vnet_debugfs_add_nic(nic);
	netdev_info(nic->link->dev, "%s: NIC %u renumbered %u by its mapper\n",
		    nic->name, old, id);
numbered:
	WRITE_ONCE(nic->numbered, true);
out:
	mutex_unlock(&vnet_nics_lock);
	return err;
}

/* A NIC follows its interface: up, down, a new MTU, gone. */
static int vnet_nic_netdev_event(struct notifier_block *nb,
				 unsigned long event, void *ptr)
{
	struct net_device *dev = netdev_notifier_info_to_dev(ptr);
	struct vnet_nic *nic;

	mutex_lock(&vnet_nics_lock);
	nic = vnet_nic_on(dev);
	if (!nic)
		goto out;
	switch (event) {
	case NETDEV_UP:
		vnet_link_set_up(nic, true);
		break;
	case NETDEV_GOING_DOWN:
	case NETDEV_DOWN:
		/* Messages in flight run out of retries: unreachable. */
		vnet_link_set_up(nic, false);
		break;
	case NETDEV_CHANGEMTU:
		vnet_link_set_mtu(nic, dev->mtu);
		netdev_info(dev, "%s: MTU now %u\n", nic->name, dev->mtu);
		break;
	case NETDEV_UNREGISTER:
		netdev_info(dev, "%s: interface going away, detaching\n",
			    nic->name);
		vnet_nic_remove(nic);
		break;
	}
out:
	mutex_unlock(&vnet_nics_lock);
	return NOTIFY_DONE;
}

static struct notifier_block vnet_nic_notifier = {
	.notifier_call = vnet_nic_netdev_event,
};

int vnet_nic_init(void)
{
	return register_netdevice_notifier(&vnet_nic_notifier);
}

void vnet_nic_exit(void)
{
	unregister_netdevice_notifier(&vnet_nic_notifier);
}
