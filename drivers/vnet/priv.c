// SPDX-License-Identifier: GPL-2.0
/*
 * A NIC's privileged endpoint: the file its mapper daemon holds.  It sends
 * and receives mapper datagrams (firmware/mapper.c frames and checks them),
 * may renumber its NIC and set and read that NIC's routes.  Making one
 * takes CAP_NET_ADMIN; after that the file is the capability, as an open
 * packet socket is CAP_NET_RAW's, so a daemon may drop its privileges.
 * One per NIC, so two daemons cannot fight over one interface.
 *
 * Datagrams wait in a bounded queue until read: a daemon that does not
 * read loses the newest, as a socket would, and the protocol above copes.
 * They are charged to the memory cgroup of whoever made the endpoint.
 */
#include <linux/capability.h>
#include <linux/etherdevice.h>
#include <linux/memcontrol.h>
#include <linux/poll.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "vnet.h"

/*
 * Datagrams held for the daemon: one heartbeat of HELLOs from a segment
 * of 1024 nodes, at most 1 MiB and some.
 */
#define VNET_PRIV_QUEUE_MAX	1024

struct vnet_dgram {
	struct list_head node;
	struct vnet_mapper_pkt hdr;
	u8 payload[];
};

struct vnet_priv {
	struct vnet_nic *nic;		/* holds a reference */
	struct mem_cgroup *memcg;	/* the creator's, or NULL; a reference */
	spinlock_t lock;		/* rxq, qlen */
	struct list_head rxq;		/* struct vnet_dgram */
	u32 qlen;
	wait_queue_head_t wq;
};

long vnet_priv_create(struct vnet_priv **out, void __user *arg)
{
	struct vnet_priv_create req;
	struct vnet_priv *priv;
	struct vnet_nic *nic;
	long err = 0;

	if (!capable(CAP_NET_ADMIN))
		return -EPERM;
	if (copy_from_user(&req, arg, sizeof(req)))
		return -EFAULT;
	/* Zero on the way in, so that they can mean something one day. */
	if (req.mtu || !is_zero_ether_addr(req.mac) || req.__pad[0] ||
	    req.__pad[1])
		return -EINVAL;
	priv = kzalloc(sizeof(*priv), GFP_KERNEL_ACCOUNT);
	if (!priv)
		return -ENOMEM;
	spin_lock_init(&priv->lock);
	INIT_LIST_HEAD(&priv->rxq);
	init_waitqueue_head(&priv->wq);

	mutex_lock(&vnet_nics_lock);
	nic = vnet_nic_find(req.nic_id);
	if (!nic) {
		err = -ENODEV;
		goto out;
	}
	mutex_lock(&nic->fw_lock);
	if (!nic->link) {
		err = -EOPNOTSUPP;	/* the loopback card has no segment */
	} else if (nic->priv) {
		err = -EBUSY;
	} else {
		kref_get(&nic->ref);
		priv->nic = nic;
		priv->memcg = get_mem_cgroup_from_mm(current->mm);
		nic->priv = priv;
		memset(&req, 0, sizeof(req));
		req.nic_id = nic->id;
		/* What the link carries now; a write past it is EMSGSIZE. */
		req.mtu = clamp_t(int, nic->fw.mtu - (int)VNET_WIRE_MAPPER_LEN,
				  0, VNET_MAPPER_MTU);
		ether_addr_copy(req.mac, nic->link->dev->dev_addr);
	}
	mutex_unlock(&nic->fw_lock);
out:
	mutex_unlock(&vnet_nics_lock);
	if (err) {
		kfree(priv);
		return err;
	}
	*out = priv;
	if (copy_to_user(arg, &req, sizeof(req)))
		return -EFAULT;		/* the caller destroys it */
	return 0;
}

void vnet_priv_destroy(struct vnet_priv *priv)
{
	struct vnet_nic *nic = priv->nic;
	struct vnet_dgram *d, *tmp;

	/* After this the firmware queues nothing more here. */
	mutex_lock(&nic->fw_lock);
	if (nic->priv == priv)
		nic->priv = NULL;
	mutex_unlock(&nic->fw_lock);

	list_for_each_entry_safe(d, tmp, &priv->rxq, node)
		kfree(d);
	mem_cgroup_put(priv->memcg);
	vnet_nic_put(nic);
	kfree(priv);
}

struct vnet_nic *vnet_priv_nic(struct vnet_priv *priv)
{
	return priv->nic;
}

/* From the firmware, with nic->fw_lock held: a datagram that passed its checks. */
void vnet_priv_rx(void *ctx, const u8 *mac, const void *payload, u32 len)
{
	struct vnet_nic *nic = ctx;
	struct vnet_priv *priv = nic->priv;
	struct mem_cgroup *old;
	struct vnet_dgram *d;
	bool full;

	lockdep_assert_held(&nic->fw_lock);
	if (!priv)
		return;
	/* Only we add, under fw_lock: a queue seen with room keeps it. */
	spin_lock(&priv->lock);
	full = priv->qlen >= VNET_PRIV_QUEUE_MAX;
	spin_unlock(&priv->lock);
	d = NULL;
	if (!full) {
		/*
		 * The firmware thread must not wait for memory, nor dip into
		 * the atomic reserves for what any host can send.
		 */
		old = set_active_memcg(priv->memcg);
		d = kmalloc(struct_size(d, payload, len),
			    GFP_NOWAIT | __GFP_ACCOUNT | __GFP_NOWARN);
		set_active_memcg(old);
	}
	if (!d) {
		nic->mapper_dropped++;
		return;
	}
	spin_lock(&priv->lock);
	ether_addr_copy(d->hdr.mac, mac);
	d->hdr.len = len;
	memcpy(d->payload, payload, len);
	list_add_tail(&d->node, &priv->rxq);
	priv->qlen++;
	spin_unlock(&priv->lock);
	wake_up_interruptible(&priv->wq);
}

static struct vnet_dgram *vnet_priv_dequeue(struct vnet_priv *priv)
{
	struct vnet_dgram *d;

	spin_lock(&priv->lock);
	d = list_first_entry_or_null(&priv->rxq, struct vnet_dgram, node);
	if (d) {
		list_del(&d->node);
		priv->qlen--;
	}
	spin_unlock(&priv->lock);
	return d;
}

static bool vnet_priv_readable(struct vnet_priv *priv)
{
	bool ready;

	spin_lock(&priv->lock);
	ready = !list_empty(&priv->rxq);
	spin_unlock(&priv->lock);
	return ready;
}

/*
 * One datagram: its header, then as much of its payload as @count leaves
 * room for (the header says how long it was, as recv() with MSG_TRUNC).
 */
ssize_t vnet_priv_read(struct vnet_priv *priv, char __user *buf,
		       size_t count, bool nonblock)
{
	const size_t hlen = sizeof(struct vnet_mapper_pkt);
	struct vnet_nic *nic = priv->nic;
	struct vnet_dgram *d;
	size_t n;

	if (count < hlen)
		return -EINVAL;
	for (;;) {
		d = vnet_priv_dequeue(priv);
		if (d)
			break;
		if (READ_ONCE(nic->dead))
			return -ENODEV;
		if (nonblock)
			return -EAGAIN;
		if (wait_event_interruptible(priv->wq,
					     vnet_priv_readable(priv) ||
					     READ_ONCE(nic->dead)))
			return -ERESTARTSYS;
	}
	n = min_t(size_t, count - hlen, d->hdr.len);
	if (copy_to_user(buf, &d->hdr, hlen) ||
	    copy_to_user(buf + hlen, d->payload, n)) {
		kfree(d);
		return -EFAULT;	/* the datagram is lost, as a bad recv() loses it */
	}
	kfree(d);
	return hlen + n;
}

ssize_t vnet_priv_write(struct vnet_priv *priv, const char __user *buf,
			size_t count)
{
	struct vnet_nic *nic = priv->nic;
	struct vnet_mapper_pkt hdr;
	ssize_t ret = count;
	void *payload;

	if (count < sizeof(hdr))
		return -EINVAL;
	if (copy_from_user(&hdr, buf, sizeof(hdr)))
		return -EFAULT;
	if (hdr.len != count - sizeof(hdr))
		return -EINVAL;
	if (hdr.len > VNET_MAPPER_MTU)
		return -EMSGSIZE;
	if (!is_broadcast_ether_addr(hdr.mac) && !is_valid_ether_addr(hdr.mac))
		return -EINVAL;
	payload = memdup_user(buf + sizeof(hdr), hdr.len);
	if (IS_ERR(payload))
		return PTR_ERR(payload);

	mutex_lock(&nic->fw_lock);
	if (READ_ONCE(nic->dead))
		ret = -ENODEV;
	else if (!nic->link || !READ_ONCE(nic->link->up))
		ret = -ENETDOWN;
	else if (!vnet_fw_mapper_send(&nic->fw, hdr.mac, payload, hdr.len))
		ret = -EMSGSIZE;	/* more than the interface's MTU */
	mutex_unlock(&nic->fw_lock);
	kfree(payload);
	return ret;
}

__poll_t vnet_priv_poll(struct vnet_priv *priv, struct file *file,
			poll_table *wait)
{
	__poll_t mask = EPOLLOUT | EPOLLWRNORM;

	poll_wait(file, &priv->wq, wait);
	if (READ_ONCE(priv->nic->dead))
		return EPOLLERR | EPOLLHUP;
	if (vnet_priv_readable(priv))
		mask |= EPOLLIN | EPOLLRDNORM;
	return mask;
}

long vnet_priv_ioctl(struct vnet_priv *priv, unsigned int cmd,
		     void __user *arg)
{
	u32 id;

	if (copy_from_user(&id, arg, sizeof(id)))
		return -EFAULT;
	return vnet_nic_set_id(priv->nic, id);
}

/*
 * @nic is being removed (nic->dead is set): what was queued goes, so that
 * read() fails with -ENODEV at once, as poll() says it will.
 */
void vnet_priv_nic_gone(struct vnet_nic *nic)
{
	struct vnet_priv *priv;
	struct vnet_dgram *d, *tmp;
	LIST_HEAD(gone);

	mutex_lock(&nic->fw_lock);
	priv = nic->priv;
	if (priv) {
		spin_lock(&priv->lock);
		list_splice_init(&priv->rxq, &gone);
		priv->qlen = 0;
		spin_unlock(&priv->lock);
		wake_up_interruptible_all(&priv->wq);
	}
	mutex_unlock(&nic->fw_lock);
	list_for_each_entry_safe(d, tmp, &gone, node)
		kfree(d);
}
