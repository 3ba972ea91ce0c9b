// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/vnet: one endpoint per open file.  EP_CREATE binds the file to a new
 * endpoint; the frame and the staging area are then mapped at the offsets
 * EP_CREATE returned.  The frame mapping is populated on fault, which is
 * where a non-resident endpoint gets loaded onto its NIC.  PRIV_CREATE
 * binds it to its NIC's privileged endpoint instead (priv.c), which is
 * read and written rather than mapped.
 */
#include <linux/capability.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include "compat.h"
#include "vnet.h"

/* What an open file is bound to: nothing yet, an endpoint or a priv one. */
struct vnet_file {
	spinlock_t lock;		/* binding: set once, under it */
	struct vnet_ep *ep;
	struct vnet_priv *priv;
};

static int vnet_open(struct inode *inode, struct file *file)
{
	struct vnet_file *vf = kzalloc(sizeof(*vf), GFP_KERNEL_ACCOUNT);

	if (!vf)
		return -ENOMEM;
	spin_lock_init(&vf->lock);
	file->private_data = vf;
	return 0;
}

static int vnet_release(struct inode *inode, struct file *file)
{
	struct vnet_file *vf = file->private_data;

	if (vf->ep)
		vnet_ep_destroy(vf->ep);
	if (vf->priv)
		vnet_priv_destroy(vf->priv);
	kfree(vf);
	return 0;
}

static struct vnet_ep *vnet_file_ep(struct file *file)
{
	struct vnet_file *vf = file->private_data;

	return READ_ONCE(vf->ep);
}

static struct vnet_priv *vnet_file_priv(struct file *file)
{
	struct vnet_file *vf = file->private_data;

	return READ_ONCE(vf->priv);
}

/* Bind @file to @ep or @priv; false if two binds raced and we lost. */
static bool vnet_file_bind(struct file *file, struct vnet_ep *ep,
			   struct vnet_priv *priv)
{
	struct vnet_file *vf = file->private_data;
	bool bound = false;

	spin_lock(&vf->lock);
	if (!vf->ep && !vf->priv) {
		WRITE_ONCE(vf->ep, ep);
		WRITE_ONCE(vf->priv, priv);
		bound = true;
	}
	spin_unlock(&vf->lock);
	return bound;
}

static bool vnet_file_bound(struct file *file)
{
	return vnet_file_ep(file) || vnet_file_priv(file);
}

static bool vnet_ep_is_resident(struct vnet_ep *ep)
{
	return READ_ONCE(ep->state) == VNET_EP_RESIDENT;
}

/*
 * Loading an endpoint can sleep for a while (waiting for a frame, flushing a
 * victim).  As filemap does for a page, drop mmap_lock for that when the
 * fault may be retried, so the owner's other threads can still mmap and
 * munmap; the retried fault then finds the endpoint resident.  Without
 * mmap_lock nothing keeps the mapping, hence the file, the endpoint and
 * this module: pin the file, as the core mm does when it drops the lock
 * for I/O.  The lock held here is always mmap_lock: a fault under a
 * per-VMA lock (6.4 on) never reaches ->fault of a mapping without
 * ->map_pages, the core retries it under mmap_lock (vmf_can_call_fault()).
 */
static vm_fault_t vnet_frame_fault_unlocked(struct vm_fault *vmf,
					    struct vnet_ep *ep)
{
	struct file *file;

	if (vmf->flags & FAULT_FLAG_RETRY_NOWAIT)
		return VM_FAULT_RETRY;
	file = get_file(vmf->vma->vm_file);
	mmap_read_unlock(vmf->vma->vm_mm);
	vnet_ep_fault_in(ep);
	fput(file);
	return VM_FAULT_RETRY;
}

/*
 * Map the whole resident frame, not just the page that faulted: a round
 * trip touches the indices and queues on every page of it, and each page
 * left out would cost another fault after every load.
 */
static vm_fault_t vnet_frame_map(struct vm_fault *vmf, void *card,
				 unsigned long pgoff)
{
	struct vm_area_struct *vma = vmf->vma;
	unsigned long first = vmf->pgoff - pgoff, i;
	vm_fault_t ret = VM_FAULT_SIGBUS;

	for (i = 0; i < VNET_FRAME_SIZE >> PAGE_SHIFT; i++) {
		unsigned long pfn;

		/* Pages of the frame outside this mapping of it. */
		if (first + i < vma->vm_pgoff ||
		    first + i - vma->vm_pgoff >= vma_pages(vma))
			continue;
		pfn = vmalloc_to_pfn(card + i * PAGE_SIZE);
		if (i == pgoff) {
			ret = vmf_insert_pfn(vma, vmf->address, pfn);
			continue;
		}
		/* Already mapped, or no memory for it: its own fault will say. */
		vmf_insert_pfn(vma, vma->vm_start +
			       ((first + i - vma->vm_pgoff) << PAGE_SHIFT), pfn);
	}
	return ret;
}

static vm_fault_t vnet_frame_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct vnet_ep *ep = vma->vm_private_data;
	struct vnet_nic *nic = ep->nic;
	unsigned long pgoff = vmf->pgoff - (ep->frame_off >> PAGE_SHIFT);

	if (pgoff >= VNET_FRAME_SIZE >> PAGE_SHIFT)
		return VM_FAULT_SIGBUS;
	if (!vnet_ep_is_resident(ep) && fault_flag_allow_retry_first(vmf->flags))
		return vnet_frame_fault_unlocked(vmf, ep);

	for (;;) {
		struct pid *old = NULL;
		void *card = NULL;
		vm_fault_t ret;
		int err;

		err = vnet_ep_fault_in(ep);
		if (err == -EINTR)
			return VM_FAULT_NOPAGE;	/* the fatal signal wins */
		if (err)
			return VM_FAULT_SIGBUS;

		/* An eviction zaps under map_sem, after we install the pte. */
		down_read(&ep->map_sem);
		spin_lock(&nic->lock);
		if (ep->state == VNET_EP_RESIDENT) {
			card = vnet_frame_addr(nic, ep->frame);
			if (ep->mapper != task_pid(current)) {
				old = ep->mapper;
				ep->mapper = get_task_pid(current, PIDTYPE_PID);
			}
		}
		spin_unlock(&nic->lock);
		put_pid(old);
		if (card) {
			ret = vnet_frame_map(vmf, card, pgoff);
			up_read(&ep->map_sem);
			return ret;
		}
		up_read(&ep->map_sem);
	}
}

static const struct vm_operations_struct vnet_frame_vm_ops = {
	.fault = vnet_frame_fault,
};

/*
 * The staging area is vmalloc'd with __GFP_ACCOUNT, which vmalloc_user()
 * cannot do, so remap_vmalloc_range() (which wants VM_USERMAP) refuses it.
 * What VM_USERMAP vouches for holds: the area is zeroed when allocated and
 * is whole pages (vnet_check_abi()).
 */
static int vnet_mmap_staging(struct vm_area_struct *vma, void *staging)
{
	unsigned long off;
	int err;

	for (off = 0; off < VNET_STAGING_SIZE; off += PAGE_SIZE) {
		err = vm_insert_page(vma, vma->vm_start + off,
				     vmalloc_to_page(staging + off));
		if (err)
			return err;
	}
	vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);
	return 0;
}

static int vnet_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct vnet_ep *ep = vnet_file_ep(file);
	u64 off = (u64)vma->vm_pgoff << PAGE_SHIFT;
	unsigned long len = vma->vm_end - vma->vm_start;

	if (!ep || !(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	if (READ_ONCE(ep->nic->dead))
		return -ENODEV;

	/*
	 * A frame page holds another endpoint once this one is evicted, so
	 * no one may take a reference to it: a PFN mapping, which GUP
	 * (O_DIRECT, io_uring, segment registration) refuses.
	 */
	if (off == ep->frame_off && len == VNET_FRAME_SIZE) {
		vm_flags_set(vma, VM_PFNMAP | VM_IO | VM_DONTEXPAND |
				       VM_DONTDUMP);
		vma->vm_ops = &vnet_frame_vm_ops;
		vma->vm_private_data = ep;
		return 0;
	}
	if (off == ep->staging_off && len == VNET_STAGING_SIZE)
		return vnet_mmap_staging(vma, ep->staging);
	return -EINVAL;
}

static __poll_t vnet_poll(struct file *file, poll_table *wait)
{
	struct vnet_priv *priv = vnet_file_priv(file);
	struct vnet_ep *ep = vnet_file_ep(file);

	if (priv)
		return vnet_priv_poll(priv, file, wait);
	if (!ep)
		return EPOLLERR;
	poll_wait(file, &ep->poll_wq, wait);
	/*
	 * Between the reader's consumer index (and its place on the wait
	 * queue) and our look at the producer: the firmware publishes, then
	 * looks at the consumer index.  One of the two sees the other.
	 */
	smp_mb();
	if (READ_ONCE(ep->nic->dead))
		return EPOLLERR | EPOLLHUP;
	return vnet_ep_readable(ep) ? EPOLLIN | EPOLLRDNORM : 0;
}

static long vnet_ioctl_info(void __user *arg)
{
	struct vnet_info info = {
		.abi_version = VNET_ABI_VERSION,
		.frame_size = VNET_FRAME_SIZE,
		.staging_size = VNET_STAGING_SIZE,
		.queue_depth = VNET_QUEUE_DEPTH,
		.max_slots = VNET_MAX_SLOTS,
		.medium_max = VNET_MEDIUM_MAX,
		.xfer_max = VNET_XFER_MAX,
		.max_seg_len = VNET_MAX_SEG_LEN,
	};
	struct vnet_nic *nic;

	mutex_lock(&vnet_nics_lock);
	list_for_each_entry(nic, &vnet_nics, node)
		info.nr_nics++;
	mutex_unlock(&vnet_nics_lock);
	return copy_to_user(arg, &info, sizeof(info)) ? -EFAULT : 0;
}

/*
 * The largest payload a message from @nic may have: every XFER on a link
 * that carries trains (and on the loopback NIC), else what one packet
 * carries.
 */
static u32 vnet_nic_max_payload(struct vnet_nic *nic)
{
	u32 mtu = READ_ONCE(nic->fw.mtu);

	if (!nic->link || mtu >= VNET_WIRE_TRAIN_MTU)
		return VNET_XFER_MAX;
	return clamp_t(int, mtu - (int)VNET_WIRE_DATA_LEN, 0, VNET_MEDIUM_MAX);
}

static long vnet_ioctl_nic_info(void __user *arg)
{
	struct vnet_nic_info info;
	struct vnet_nic *nic;
	u32 i = 0;
	int err = -ENODEV;

	if (copy_from_user(&info, arg, sizeof(info)))
		return -EFAULT;

	mutex_lock(&vnet_nics_lock);
	list_for_each_entry(nic, &vnet_nics, node) {
		if (i++ != info.index)
			continue;
		memset(&info, 0, sizeof(info));
		info.index = i - 1;
		info.nic_id = nic->id;
		info.frames = nic->nframes;
		info.resident = READ_ONCE(nic->resident);
		info.endpoints = atomic_read(&nic->nr_eps);
		info.max_payload = vnet_nic_max_payload(nic);
		strscpy(info.name, nic->name, sizeof(info.name));
		err = 0;
		break;
	}
	mutex_unlock(&vnet_nics_lock);
	if (err)
		return err;
	return copy_to_user(arg, &info, sizeof(info)) ? -EFAULT : 0;
}

static long vnet_ioctl_ep_create(struct file *file, void __user *arg)
{
	struct vnet_ep_create req;
	struct vnet_nic *nic;
	struct vnet_ep *ep;

	if (copy_from_user(&req, arg, sizeof(req)))
		return -EFAULT;
	if (req.abi_version != VNET_ABI_VERSION)
		return -EPROTO;
	if (vnet_file_bound(file))
		return -EBUSY;

	mutex_lock(&vnet_nics_lock);
	nic = vnet_nic_find(req.nic_id);
	if (!nic)
		ep = ERR_PTR(-ENODEV);
	else if (!nic->numbered)
		ep = ERR_PTR(-EADDRNOTAVAIL);	/* its mapper numbers it first */
	else
		ep = vnet_ep_create(nic, file->f_mapping);
	mutex_unlock(&vnet_nics_lock);
	if (IS_ERR(ep))
		return PTR_ERR(ep);

	req.name = ep->fw.name;
	req.frame_offset = ep->frame_off;
	req.staging_offset = ep->staging_off;
	req.frame_size = VNET_FRAME_SIZE;
	req.staging_size = VNET_STAGING_SIZE;
	if (copy_to_user(arg, &req, sizeof(req))) {
		vnet_ep_destroy(ep);
		return -EFAULT;
	}
	/* Two racing creates on one file: the loser's endpoint goes away. */
	if (!vnet_file_bind(file, ep, NULL)) {
		vnet_ep_destroy(ep);
		return -EBUSY;
	}
	return 0;
}

static long vnet_ioctl_priv_create(struct file *file, void __user *arg)
{
	struct vnet_priv *priv = NULL;
	long err;

	if (vnet_file_bound(file))
		return -EBUSY;
	err = vnet_priv_create(&priv, arg);
	if (!err && !vnet_file_bind(file, NULL, priv))
		err = -EBUSY;
	if (err && priv)
		vnet_priv_destroy(priv);
	return err;
}

static long vnet_ioctl_ep_stat(struct vnet_ep *ep, void __user *arg)
{
	struct vnet_nic *nic = ep->nic;
	struct vnet_ep_stat st = {};

	spin_lock(&nic->lock);
	st.state = ep->state;
	st.frame = ep->frame;
	st.faults = ep->faults;
	st.evictions = ep->evictions;
	spin_unlock(&nic->lock);

	mutex_lock(&nic->fw_lock);
	st.tag = ep->fw.tag;
	st.sent = ep->fw.stats.sent;
	st.received = ep->fw.stats.received;
	st.returned = ep->fw.stats.returned;
	st.rejected = ep->fw.stats.rejected;
	mutex_unlock(&nic->fw_lock);

	return copy_to_user(arg, &st, sizeof(st)) ? -EFAULT : 0;
}

static long vnet_ioctl_ep(struct vnet_ep *ep, unsigned int cmd,
			  void __user *arg)
{
	struct vnet_map map;
	struct vnet_seg seg;
	struct vnet_pin pin;
	u64 tag;
	u32 slot;

	if (READ_ONCE(ep->nic->dead) && cmd != VNET_IOC_EP_STAT)
		return -ENODEV;
	switch (cmd) {
	case VNET_IOC_SET_TAG:
		if (copy_from_user(&tag, arg, sizeof(tag)))
			return -EFAULT;
		return vnet_ep_set_tag(ep, tag);
	case VNET_IOC_MAP:
		if (copy_from_user(&map, arg, sizeof(map)))
			return -EFAULT;
		if (map.__pad)
			return -EINVAL;
		return vnet_ep_map(ep, map.slot, map.name, map.tag);
	case VNET_IOC_UNMAP:
		if (copy_from_user(&slot, arg, sizeof(slot)))
			return -EFAULT;
		return vnet_ep_unmap(ep, slot);
	case VNET_IOC_KICK:
		vnet_card_doorbell(ep->nic);
		return 0;
	case VNET_IOC_EP_STAT:
		return vnet_ioctl_ep_stat(ep, arg);
	case VNET_IOC_SET_SEG:
		if (copy_from_user(&seg, arg, sizeof(seg)))
			return -EFAULT;
		return vnet_ep_set_seg(ep, seg.addr, seg.len);
	case VNET_IOC_PIN:
		if (copy_from_user(&pin, arg, sizeof(pin)))
			return -EFAULT;
		if (pin.flags || pin.__pad)
			return -EINVAL;
		return vnet_ep_pin(ep, pin.addr, pin.len);
	}
	return -ENOTTY;
}

static long vnet_ioctl_attach(void __user *arg)
{
	struct vnet_attach req;
	int err;

	if (copy_from_user(&req, arg, sizeof(req)))
		return -EFAULT;
	if (!memchr(req.ifname, 0, sizeof(req.ifname)))
		return -EINVAL;
	/* 0 was the only value of the field when it was padding. */
	if (!req.frames)
		req.frames = vnet_frames;
	else if (req.frames < 2 || req.frames > VNET_MAX_FRAMES)
		return -EINVAL;
	err = vnet_nic_attach(req.ifname, req.nic_id, req.frames,
			      &req.nic_id);
	if (err)
		return err;
	return copy_to_user(arg, &req, sizeof(req)) ? -EFAULT : 0;
}

/* @only: a privileged endpoint's NIC, the only one it may route; or NULL. */
static long vnet_ioctl_route(unsigned int cmd, void __user *arg,
			     struct vnet_nic *only)
{
	struct vnet_route route;

	if (copy_from_user(&route, arg, sizeof(route)))
		return -EFAULT;
	if (route.__pad[0] || route.__pad[1])
		return -EINVAL;
	if (cmd == VNET_IOC_ROUTE_ADD)
		return vnet_route_add(route.nic_id, route.peer_id, route.mac,
				      only);
	return vnet_route_del(route.nic_id, route.peer_id, only);
}

static long vnet_ioctl_route_list(void __user *arg, struct vnet_nic *only)
{
	struct vnet_route_list req;
	int err;

	if (copy_from_user(&req, arg, sizeof(req)))
		return -EFAULT;
	err = vnet_route_list(req.nic_id, u64_to_user_ptr(req.routes),
			      &req.count, only);
	if (err)
		return err;
	return copy_to_user(arg, &req, sizeof(req)) ? -EFAULT : 0;
}

/*
 * Changing the network needs CAP_NET_ADMIN, and so does looking at its
 * routes: the MAC addresses and NIC ids of the cluster are the map an
 * attacker on the wire would need.
 */
static long vnet_ioctl_admin(unsigned int cmd, void __user *arg)
{
	u32 nic_id;

	if (!capable(CAP_NET_ADMIN))
		return -EPERM;
	switch (cmd) {
	case VNET_IOC_ATTACH:
		return vnet_ioctl_attach(arg);
	case VNET_IOC_DETACH:
		if (copy_from_user(&nic_id, arg, sizeof(nic_id)))
			return -EFAULT;
		return vnet_nic_detach(nic_id);
	case VNET_IOC_ROUTE_LIST:
		return vnet_ioctl_route_list(arg, NULL);
	}
	return vnet_ioctl_route(cmd, arg, NULL);
}

/*
 * A privileged endpoint's file carries its NIC's mapper authority, as an
 * open packet socket carries CAP_NET_RAW's: it routes that NIC, and no
 * other, whoever holds the file now.
 */
static long vnet_ioctl_priv_route(struct vnet_priv *priv, unsigned int cmd,
				  void __user *arg)
{
	struct vnet_nic *nic = vnet_priv_nic(priv);

	if (cmd == VNET_IOC_ROUTE_LIST)
		return vnet_ioctl_route_list(arg, nic);
	return vnet_ioctl_route(cmd, arg, nic);
}

static long vnet_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	void __user *uarg = (void __user *)arg;
	struct vnet_ep *ep;

	switch (cmd) {
	case VNET_IOC_INFO:
		return vnet_ioctl_info(uarg);
	case VNET_IOC_NIC_INFO:
		return vnet_ioctl_nic_info(uarg);
	case VNET_IOC_EP_CREATE:
		return vnet_ioctl_ep_create(file, uarg);
	case VNET_IOC_PRIV_CREATE:
		return vnet_ioctl_priv_create(file, uarg);
	case VNET_IOC_PRIV_SET_ID:
		if (!vnet_file_priv(file))
			return -EINVAL;	/* not a privileged endpoint */
		return vnet_priv_ioctl(vnet_file_priv(file), cmd, uarg);
	case VNET_IOC_ROUTE_ADD:
	case VNET_IOC_ROUTE_DEL:
	case VNET_IOC_ROUTE_LIST:
		if (vnet_file_priv(file))
			return vnet_ioctl_priv_route(vnet_file_priv(file), cmd,
						     uarg);
		fallthrough;
	case VNET_IOC_ATTACH:
	case VNET_IOC_DETACH:
		return vnet_ioctl_admin(cmd, uarg);
	case VNET_IOC_SET_TAG:
	case VNET_IOC_MAP:
	case VNET_IOC_UNMAP:
	case VNET_IOC_KICK:
	case VNET_IOC_EP_STAT:
	case VNET_IOC_SET_SEG:
	case VNET_IOC_PIN:
		ep = vnet_file_ep(file);
		if (!ep)
			return -EINVAL;	/* no EP_CREATE on this file yet */
		return vnet_ioctl_ep(ep, cmd, uarg);
	}
	return -ENOTTY;
}

static ssize_t vnet_read(struct file *file, char __user *buf, size_t count,
			 loff_t *ppos)
{
	struct vnet_priv *priv = vnet_file_priv(file);

	if (!priv)
		return -EINVAL;
	return vnet_priv_read(priv, buf, count, file->f_flags & O_NONBLOCK);
}

static ssize_t vnet_write(struct file *file, const char __user *buf,
			  size_t count, loff_t *ppos)
{
	struct vnet_priv *priv = vnet_file_priv(file);

	if (!priv)
		return -EINVAL;
	return vnet_priv_write(priv, buf, count);
}

static const struct file_operations vnet_fops = {
	.owner = THIS_MODULE,
	.open = vnet_open,
	.release = vnet_release,
	.read = vnet_read,
	.write = vnet_write,
	.unlocked_ioctl = vnet_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.mmap = vnet_mmap,
	.poll = vnet_poll,
	.llseek = noop_llseek,
};

/*
 * Root's alone until udev applies the site's policy (tools/udev/
 * 60-vnet.rules: group vnet, 0660): a device that lets every user pin
 * host memory and page through the card's frames is not world-writable
 * by default.
 */
static struct miscdevice vnet_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "vnet",
	.fops = &vnet_fops,
};

int vnet_chardev_init(void)
{
	return misc_register(&vnet_misc);
}

void vnet_chardev_exit(void)
{
	misc_deregister(&vnet_misc);
}
