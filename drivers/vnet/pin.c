// SPDX-License-Identifier: GPL-2.0
/*
 * Pins: user memory besides the segment that an endpoint's XFERs are read
 * from in place (VNET_IOC_PIN, VNET_DESC_FROM_PIN), and a cache of them, as
 * Open-MX and BIP keep.  A range stays pinned once asked for, so a library
 * may ask again before every bulk send for the price of a lookup; an MMU
 * interval notifier drops it as soon as its owner's mapping of any page
 * of it changes (munmap, mremap, mmap over it, a copy-on-write...), and
 * the next PIN of the range pins the pages it maps then.  What is sent is
 * what the owner's memory holds, never a page it no longer maps.
 *
 * The notifier does not take fw_lock: it runs under mmap_lock, sometimes
 * from reclaim, and taking fw_lock there would order fw_lock under both
 * for every holder of it.  It marks the firmware's pin stale, which stops
 * every read from it that has not begun, and leaves the rest to a work
 * item: take the pin from the firmware under fw_lock, which waits out a
 * read in progress, then unpin its pages.
 *
 * Locking: pins->lock (a mutex) guards the table and is held across
 * pinning; nic->fw_lock nests inside it, and pins->seq_lock (the notifier's
 * sequence) inside that.
 *
 * A kernel without MMU notifiers cannot know when a pin goes stale: there
 * PIN fails with EOPNOTSUPP, and XFERs go through staging or the segment.
 */
#include <linux/mmu_notifier.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#include "vnet.h"

#if IS_ENABLED(CONFIG_MMU_NOTIFIER)

/* Times a PIN pins again when the range changes while it pins. */
#define VNET_PIN_TRIES		4

struct vnet_pin_region {
	struct mmu_interval_notifier notifier;	/* inserted while pages */
	struct vnet_pins *pins;
	struct vnet_seg_pin *pages;	/* NULL: free; pins->lock and fw_lock */
	struct mm_struct *mm;		/* whose memory, while pages */
	u64 addr;
	u64 len;
	u64 used;			/* pins->clock at its latest PIN */
	unsigned int index;
};

struct vnet_pins {
	struct vnet_ep *ep;
	struct mutex lock;		/* the table; held across pinning */
	spinlock_t seq_lock;		/* the notifiers' sequence numbers */
	struct work_struct reap;
	u64 clock;
	struct vnet_pin_region region[VNET_NR_PINS];
};

static struct vnet_fw_pin *vnet_pin_fw(struct vnet_pin_region *r)
{
	return &r->pins->ep->fw.pins[r->index];
}

static bool vnet_pin_invalidate(struct mmu_interval_notifier *mni,
				const struct mmu_notifier_range *range,
				unsigned long cur_seq)
{
	struct vnet_pin_region *r = container_of(mni, struct vnet_pin_region,
						 notifier);
	struct vnet_pins *pins = r->pins;

	spin_lock(&pins->seq_lock);
	mmu_interval_set_seq(mni, cur_seq);
	WRITE_ONCE(vnet_pin_fw(r)->stale, true);
	spin_unlock(&pins->seq_lock);
	schedule_work(&pins->reap);
	return true;
}

static const struct mmu_interval_notifier_ops vnet_pin_ops = {
	.invalidate = vnet_pin_invalidate,
};

/* Take region @r from the firmware, then unpin it. */
static void vnet_pin_drop(struct vnet_pin_region *r)
{
	struct vnet_nic *nic = r->pins->ep->nic;
	struct vnet_fw_pin *fw = vnet_pin_fw(r);
	struct vnet_seg_pin *pages = r->pages;

	lockdep_assert_held(&r->pins->lock);
	mmu_interval_notifier_remove(&r->notifier);
	mutex_lock(&nic->fw_lock);
	fw->base = NULL;
	fw->addr = 0;
	fw->len = 0;
	fw->gen++;
	WRITE_ONCE(fw->stale, false);
	r->pages = NULL;
	mutex_unlock(&nic->fw_lock);
	r->mm = NULL;
	vnet_seg_release(pages);
}

static void vnet_pins_reap_locked(struct vnet_pins *pins)
{
	unsigned int i;

	lockdep_assert_held(&pins->lock);
	for (i = 0; i < VNET_NR_PINS; i++) {
		struct vnet_pin_region *r = &pins->region[i];

		if (r->pages && READ_ONCE(vnet_pin_fw(r)->stale))
			vnet_pin_drop(r);
	}
}

static void vnet_pins_reap(struct work_struct *work)
{
	struct vnet_pins *pins = container_of(work, struct vnet_pins, reap);

	mutex_lock(&pins->lock);
	vnet_pins_reap_locked(pins);
	mutex_unlock(&pins->lock);
}

static struct vnet_pins *vnet_ep_pins(struct vnet_ep *ep)
{
	/* Pairs with the release below: the table is seen initialized. */
	struct vnet_pins *pins = smp_load_acquire(&ep->pins);
	unsigned int i;

	if (pins)
		return pins;
	pins = kzalloc(sizeof(*pins), GFP_KERNEL_ACCOUNT);
	if (!pins)
		return NULL;
	pins->ep = ep;
	mutex_init(&pins->lock);
	spin_lock_init(&pins->seq_lock);
	INIT_WORK(&pins->reap, vnet_pins_reap);
	for (i = 0; i < VNET_NR_PINS; i++) {
		pins->region[i].pins = pins;
		pins->region[i].index = i;
	}
	/* Another thread's PIN may have got there first: use its table. */
	if (cmpxchg_release(&ep->pins, NULL, pins)) {
		kfree(pins);
		/* As at the top. */
		return smp_load_acquire(&ep->pins);
	}
	return pins;
}

/* A live region of the caller's that holds [addr, addr + len), or NULL. */
static struct vnet_pin_region *vnet_pin_lookup(struct vnet_pins *pins,
					       u64 addr, u64 len)
{
	unsigned int i;

	for (i = 0; i < VNET_NR_PINS; i++) {
		struct vnet_pin_region *r = &pins->region[i];

		if (r->pages && r->mm == current->mm && addr >= r->addr &&
		    addr - r->addr <= r->len &&
		    len <= r->len - (addr - r->addr) &&
		    !READ_ONCE(vnet_pin_fw(r)->stale))
			return r;
	}
	return NULL;
}

/* A free region, or else the least recently asked for, dropped. */
static struct vnet_pin_region *vnet_pin_slot(struct vnet_pins *pins)
{
	struct vnet_pin_region *lru = NULL;
	unsigned int i;

	for (i = 0; i < VNET_NR_PINS; i++) {
		struct vnet_pin_region *r = &pins->region[i];

		if (!r->pages)
			return r;
		if (!lru || r->used < lru->used)
			lru = r;
	}
	vnet_pin_drop(lru);
	return lru;
}

/*
 * Pin [addr, addr + len) into free region @r and give it to the firmware,
 * unless the caller's mapping of it changed while its pages were pinned:
 * then pin again.
 */
static int vnet_pin_fill(struct vnet_pins *pins, struct vnet_pin_region *r,
			 u64 addr, u64 len)
{
	u64 start = round_down(addr, PAGE_SIZE);
	u64 end = round_up(addr + len, PAGE_SIZE);
	struct vnet_nic *nic = pins->ep->nic;
	struct vnet_fw_pin *fw = vnet_pin_fw(r);
	unsigned int tries;
	int err;

	lockdep_assert_held(&pins->lock);
	err = mmu_interval_notifier_insert(&r->notifier, current->mm, start,
					   end - start, &vnet_pin_ops);
	if (err)
		return err;
	for (tries = 0; tries < VNET_PIN_TRIES; tries++) {
		unsigned long seq = mmu_interval_read_begin(&r->notifier);
		struct vnet_seg_pin *pages = vnet_seg_pin(addr, len, false);

		if (IS_ERR(pages)) {
			err = PTR_ERR(pages);
			break;
		}
		mutex_lock(&nic->fw_lock);
		spin_lock(&pins->seq_lock);
		if (!mmu_interval_read_retry(&r->notifier, seq)) {
			/* Before the firmware can read it: transmit_seg. */
			r->pages = pages;
			fw->base = vnet_seg_kaddr(pages);
			fw->addr = addr;
			fw->len = len;
			fw->gen++;
			WRITE_ONCE(fw->stale, false);
			spin_unlock(&pins->seq_lock);
			mutex_unlock(&nic->fw_lock);
			r->mm = current->mm;
			r->addr = addr;
			r->len = len;
			r->used = ++pins->clock;
			return 0;
		}
		spin_unlock(&pins->seq_lock);
		mutex_unlock(&nic->fw_lock);
		vnet_seg_release(pages);
		err = -EAGAIN;
	}
	mmu_interval_notifier_remove(&r->notifier);
	return err;
}

/* Drop every pin of @pins. */
static void vnet_pins_drop_all(struct vnet_pins *pins)
{
	unsigned int i;

	lockdep_assert_held(&pins->lock);
	for (i = 0; i < VNET_NR_PINS; i++)
		if (pins->region[i].pages)
			vnet_pin_drop(&pins->region[i]);
}

/*
 * VNET_IOC_PIN: make [addr, addr + len) of the caller's memory a source of
 * @ep's XFERs, pinned now or already; len 0 (and addr 0) drops every pin.
 * Messages still being read from a pin that is dropped, to make room or
 * on request, come back "bad segment".
 */
int vnet_ep_pin(struct vnet_ep *ep, u64 addr, u64 len)
{
	struct vnet_pin_region *r;
	struct vnet_pins *pins;
	int err = 0;

	if (!len && !addr) {
		/* As in vnet_ep_pins(). */
		pins = smp_load_acquire(&ep->pins);
		if (!pins)
			return 0;
		if (mutex_lock_killable(&pins->lock))
			return -EINTR;
		vnet_pins_drop_all(pins);
		mutex_unlock(&pins->lock);
		return 0;
	}
	if (!len || len > VNET_MAX_SEG_LEN || addr + len < addr ||
	    !current->mm)
		return -EINVAL;
	pins = vnet_ep_pins(ep);
	if (!pins)
		return -ENOMEM;
	if (mutex_lock_killable(&pins->lock))
		return -EINTR;
	/* Whatever went stale goes now, not when the work gets to it. */
	vnet_pins_reap_locked(pins);
	r = vnet_pin_lookup(pins, addr, len);
	if (r)
		r->used = ++pins->clock;
	else
		err = vnet_pin_fill(pins, vnet_pin_slot(pins), addr, len);
	mutex_unlock(&pins->lock);
	return err;
}

/*
 * The endpoint is closing, and the firmware has forgotten it: nothing
 * reads its pins any more.  Drop them, and the table.
 */
void vnet_ep_drop_pins(struct vnet_ep *ep)
{
	struct vnet_pins *pins = ep->pins;

	if (!pins)
		return;
	mutex_lock(&pins->lock);
	vnet_pins_drop_all(pins);
	mutex_unlock(&pins->lock);
	/* No notifier is left to queue it again. */
	cancel_work_sync(&pins->reap);
	ep->pins = NULL;
	kfree(pins);
}

/*
 * The pinned page that holds byte @at of @ep's pin @src, and where in it
 * (*@off): the firmware checked @at against the pin under fw_lock, which
 * keeps the pin's pages until we are done.
 */
struct page *vnet_pin_page(struct vnet_ep *ep, int src, u64 at,
			   unsigned int *off)
{
	struct vnet_pins *pins = ep->pins;

	lockdep_assert_held(&ep->nic->fw_lock);
	if (WARN_ON_ONCE(!pins || src < 0 || src >= VNET_NR_PINS ||
			 !pins->region[src].pages ||
			 at >= ep->fw.pins[src].len))
		return NULL;
	return vnet_seg_pin_page(pins->region[src].pages, at, off);
}

#else /* !CONFIG_MMU_NOTIFIER */

int vnet_ep_pin(struct vnet_ep *ep, u64 addr, u64 len)
{
	return -EOPNOTSUPP;
}

void vnet_ep_drop_pins(struct vnet_ep *ep)
{
}

struct page *vnet_pin_page(struct vnet_ep *ep, int src, u64 at,
			   unsigned int *off)
{
	WARN_ON_ONCE(1);
	return NULL;
}

#endif
