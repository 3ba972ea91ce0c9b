// SPDX-License-Identifier: GPL-2.0
/*
 * An endpoint's segment: the user memory bulk (XFER) messages land in.  The
 * firmware writes it from its own thread, so the pages are pinned for as
 * long as the segment is registered (charged to the owner's locked-memory
 * limit, as RDMA memory registrations are) and mapped into one contiguous
 * kernel range.
 */
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "vnet.h"

struct vnet_seg_pin {
	struct mm_struct *mm;
	struct page **pages;
	unsigned long npages;
	void *kaddr;			/* vmap of pages */
	unsigned int first_off;		/* of the segment's first byte */
	bool written;			/* pinned for the device to write */
};

void vnet_seg_release(struct vnet_seg_pin *pin)
{
	if (!pin)
		return;
	vunmap(pin->kaddr);
	unpin_user_pages_dirty_lock(pin->pages, pin->npages, pin->written);
	account_locked_vm(pin->mm, pin->npages, false);
	mmdrop(pin->mm);
	kvfree(pin->pages);
	kfree(pin);
}

/* Pages of [addr, addr + len), len > 0. */
unsigned long vnet_seg_npages(u64 addr, u64 len)
{
	return ((addr + len - 1) >> PAGE_SHIFT) - (addr >> PAGE_SHIFT) + 1;
}

/* Pin @pin->npages pages from @addr with @gup_flags: 0 or -errno. */
static int vnet_seg_pin_pages(struct vnet_seg_pin *pin, u64 addr,
			      unsigned int gup_flags)
{
	long pinned = pin_user_pages_fast(addr & PAGE_MASK, pin->npages,
					  gup_flags | FOLL_LONGTERM,
					  pin->pages);

	if (pinned == pin->npages)
		return 0;
	if (pinned > 0)
		unpin_user_pages(pin->pages, pinned);
	return pinned < 0 ? pinned : -EFAULT;
}

/* Is any page of @pin the shared zero page? */
static bool vnet_seg_pin_has_zero_page(const struct vnet_seg_pin *pin)
{
	unsigned long i;

	for (i = 0; i < pin->npages; i++)
		if (is_zero_pfn(page_to_pfn(pin->pages[i])))
			return true;
	return false;
}

/*
 * Pin the pages of [addr, addr + len) of the caller's memory for as long as
 * the device may use them: for the device to write (@use VNET_SEG_LANDING),
 * or only to read (VNET_SEG_SOURCE).  A source is pinned for reading,
 * unshared first (FOLL_PIN), so its pages stay the ones the caller maps --
 * but for a private page not written yet, which reads as the shared zero
 * page that the caller's first write replaces: then the range is pinned
 * as for writing, which gives it its own page now.  Either way a source's
 * kernel mapping is read-only and its pages are not dirtied.  Returns
 * where the first byte lies: vnet_seg_kaddr().
 */
struct vnet_seg_pin *vnet_seg_pin(u64 addr, u64 len, enum vnet_seg_use use)
{
	bool landing = use == VNET_SEG_LANDING;
	struct vnet_seg_pin *pin;
	int err;

	pin = kzalloc(sizeof(*pin), GFP_KERNEL_ACCOUNT);
	if (!pin)
		return ERR_PTR(-ENOMEM);
	pin->npages = vnet_seg_npages(addr, len);
	pin->first_off = offset_in_page(addr);
	pin->pages = kvcalloc(pin->npages, sizeof(*pin->pages),
			      GFP_KERNEL_ACCOUNT);
	if (!pin->pages) {
		err = -ENOMEM;
		goto err_free;
	}

	pin->mm = current->mm;
	mmgrab(pin->mm);
	err = account_locked_vm(pin->mm, pin->npages, true);
	if (err)
		goto err_mm;

	pin->written = landing;
	err = vnet_seg_pin_pages(pin, addr, landing ? FOLL_WRITE : 0);
	if (!err && !landing && vnet_seg_pin_has_zero_page(pin)) {
		unpin_user_pages(pin->pages, pin->npages);
		err = vnet_seg_pin_pages(pin, addr, FOLL_WRITE);
		/* Not writable: the zero page stays what it reads. */
		if (err == -EFAULT)
			err = vnet_seg_pin_pages(pin, addr, 0);
	}
	if (err)
		goto err_account;

	pin->kaddr = vmap(pin->pages, pin->npages, VM_MAP,
			  landing ? PAGE_KERNEL : PAGE_KERNEL_RO);
	if (!pin->kaddr) {
		unpin_user_pages(pin->pages, pin->npages);
		err = -ENOMEM;
		goto err_account;
	}
	return pin;

err_account:
	account_locked_vm(pin->mm, pin->npages, false);
err_mm:
	mmdrop(pin->mm);
	kvfree(pin->pages);
err_free:
	kfree(pin);
	return ERR_PTR(err);
}

/*
 * Register [addr, addr + len) as @ep's segment, replacing any earlier one;
 * len 0 unregisters.  The firmware sees the change between two rounds.
 */
int vnet_ep_set_seg(struct vnet_ep *ep, u64 addr, u64 len)
{
	struct vnet_seg_pin *pin = NULL, *old;
	struct vnet_nic *nic = ep->nic;

	if (len > VNET_MAX_SEG_LEN || addr + len < addr)
		return -EINVAL;
	if (len) {
		if (!current->mm)
			return -EINVAL;
		pin = vnet_seg_pin(addr, len, VNET_SEG_LANDING);
		if (IS_ERR(pin))
			return PTR_ERR(pin);
	}

	mutex_lock(&nic->fw_lock);
	old = ep->seg;
	ep->seg = pin;
	ep->fw.seg = pin ? vnet_seg_kaddr(pin) : NULL;
	ep->fw.seg_len = len;
	/* Trains begun in the old segment must not go on in this one. */
	ep->fw.seg_gen++;
	mutex_unlock(&nic->fw_lock);

	vnet_seg_release(old);
	return 0;
}

/* Where the first byte of what @pin holds is mapped in the kernel. */
u8 *vnet_seg_kaddr(struct vnet_seg_pin *pin)
{
	return (u8 *)pin->kaddr + pin->first_off;
}

/* The pinned page of @pin that holds byte @at, and where in it (*@off). */
struct page *vnet_seg_pin_page(struct vnet_seg_pin *pin, u64 at,
			       unsigned int *off)
{
	u64 pos = pin->first_off + at;

	if (WARN_ON_ONCE(pos >> PAGE_SHIFT >= pin->npages))
		return NULL;
	*off = offset_in_page(pos);
	return pin->pages[pos >> PAGE_SHIFT];
}

/*
 * The pinned page that holds byte @at of @ep's segment, and where in it
 * (*@off): the firmware checked @at against the segment under fw_lock,
 * which keeps the segment registered until we are done.
 */
struct page *vnet_seg_page(struct vnet_ep *ep, u64 at, unsigned int *off)
{
	lockdep_assert_held(&ep->nic->fw_lock);
	if (WARN_ON_ONCE(!ep->seg || at >= ep->fw.seg_len))
		return NULL;
	return vnet_seg_pin_page(ep->seg, at, off);
}
