// SPDX-License-Identifier: GPL-2.0
/*
 * Pins: user memory besides the segment that an endpoint's XFERs are read
 * from in place (VNET_IOC_PIN, VNET_DESC_FROM_PIN), and a cache of them, as
 * Open-MX and BIP keep.  A range stays pinned once asked for, so a library
 * may ask again before every bulk send for the price of a lookup; an MMU
 * interval notifier drops it as soon as its owner's mapping of any page
 * of it may map another page (munmap, mremap, mmap over it, a copy on
 * write...), and the next PIN of the range pins the pages it maps then.
 * A message posted after the change never carries the old pages.
 *
 * The notifier does not take fw_lock: it runs under mmap_lock, sometimes
 * from reclaim, and taking fw_lock there would order fw_lock under both
 * for every holder of it.  It marks the firmware's pin stale, which stops
 * every read from it that has not begun, and leaves the rest to a work
 * item: take the pin from the firmware under fw_lock, which waits out a
 * read in progress, then unpin its pages.
 *
 * The pins are one process's at a time: the firmware finds a pin by
 * address when it takes a message, and two processes' pins of one address
 * would be two pins of different memory.  While one process has pins, a
 * PIN from another fails with EBUSY.  Whoever holds the endpoint's file
 * may send from its pins, as from its segment.
 *
 * Locking: pins->lock (a mutex) guards the table and is held across
 * pinning; nic->fw_lock nests inside it, and pins->seq_lock (the notifiers'
 * sequence numbers and where each region is in the table) inside that.
 * Built only with CONFIG_MMU_NOTIFIER: without it nothing could tell when
 * a pin goes stale, and PIN fails with EOPNOTSUPP (vnet.h).
 */
#include <linux/mmu_notifier.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#include "vnet.h"

/* Times a PIN pins again when the range changes while it pins. */
#define VNET_PIN_TRIES		4

struct vnet_pin_region {
	struct mmu_interval_notifier notifier;
	struct vnet_pins *pins;
	struct vnet_seg_pin *pages;
	struct mm_struct *mm;		/* whose memory */
	u64 addr;
	u64 len;
	u64 used;			/* pins->clock at its latest PIN */
	int slot;			/* in the table; seq_lock; -1 before */
};

struct vnet_pins {
	struct vnet_ep *ep;
	struct mutex lock;		/* the table; held across pinning */
	spinlock_t seq_lock;		/* see "Locking" above */
	struct work_struct reap;
	u64 clock;
	/* Read by vnet_pin_page() under fw_lock, written under both locks. */
	struct vnet_pin_region *region[VNET_NR_PINS];
};

/*
 * Does @event leave the range mapping the pages it mapped?  A protection
 * change does (mprotect, NUMA hinting, fork write-protecting the parent,
 * soft-dirty tracking, writeback cleaning shared pages): a write that
 * then copies the page is a MMU_NOTIFY_CLEAR of its own.
 */
static bool vnet_pin_same_pages(enum mmu_notifier_event event)
{
	return event == MMU_NOTIFY_PROTECTION_VMA ||
	       event == MMU_NOTIFY_PROTECTION_PAGE ||
	       event == MMU_NOTIFY_SOFT_DIRTY;
}

static bool vnet_pin_invalidate(struct mmu_interval_notifier *mni,
				const struct mmu_notifier_range *range,
				unsigned long cur_seq)
{
	struct vnet_pin_region *r = container_of(mni, struct vnet_pin_region,
						 notifier);
	struct vnet_pins *pins = r->pins;
	bool stale = !vnet_pin_same_pages(range->event);
	int slot;

	spin_lock(&pins->seq_lock);
	mmu_interval_set_seq(mni, cur_seq);
	/* Before it is in the table, its PIN sees the sequence move. */
	slot = r->slot;
	if (stale && slot >= 0)
		WRITE_ONCE(pins->ep->fw.pins[slot].stale, true);
	spin_unlock(&pins->seq_lock);
	/* Unbound: it may wait for mmap_lock, and for a PIN in progress. */
	if (stale && slot >= 0)
		queue_work(system_unbound_wq, &pins->reap);
	return true;
}

static const struct mmu_interval_notifier_ops vnet_pin_ops = {
	.invalidate = vnet_pin_invalidate,
};

/* Unpin a region the firmware cannot see, and free it. */
static void vnet_pin_free(struct vnet_pin_region *r)
{
	mmu_interval_notifier_remove(&r->notifier);
	vnet_seg_release(r->pages);
	kfree(r);
}

/*
 * What the firmware sees in @slot: @r's pages, or none.  A new generation
 * either way, so that no train goes on in it.
 */
static void vnet_pin_set_fw(struct vnet_pins *pins, unsigned int slot,
			    struct vnet_pin_region *r)
{
	struct vnet_fw_pin *fw = &pins->ep->fw.pins[slot];

	lockdep_assert_held(&pins->ep->nic->fw_lock);
	lockdep_assert_held(&pins->seq_lock);
	fw->base = r ? vnet_seg_kaddr(r->pages) : NULL;
	fw->addr = r ? r->addr : 0;
	fw->len = r ? r->len : 0;
	fw->gen++;
	WRITE_ONCE(fw->stale, false);
}

/* Take the region in @slot from the firmware and the table; returns it. */
static struct vnet_pin_region *vnet_pin_unpublish(struct vnet_pins *pins,
						  unsigned int slot)
{
	struct vnet_pin_region *r = pins->region[slot];

	vnet_pin_set_fw(pins, slot, NULL);
	pins->region[slot] = NULL;
	r->slot = -1;
	return r;
}

/* Take the region in @slot from the firmware, then unpin it. */
static void vnet_pin_drop(struct vnet_pins *pins, unsigned int slot)
{
	struct vnet_nic *nic = pins->ep->nic;
	struct vnet_pin_region *r;

	lockdep_assert_held(&pins->lock);
	mutex_lock(&nic->fw_lock);
	spin_lock(&pins->seq_lock);
	r = vnet_pin_unpublish(pins, slot);
	spin_unlock(&pins->seq_lock);
	mutex_unlock(&nic->fw_lock);
	vnet_pin_free(r);
}

static void vnet_pins_reap_locked(struct vnet_pins *pins)
{
	unsigned int i;

	lockdep_assert_held(&pins->lock);
	for (i = 0; i < VNET_NR_PINS; i++)
		if (pins->region[i] &&
		    READ_ONCE(pins->ep->fw.pins[i].stale))
			vnet_pin_drop(pins, i);
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

	if (pins)
		return pins;
	pins = kzalloc(sizeof(*pins), GFP_KERNEL_ACCOUNT);
	if (!pins)
		return NULL;
	pins->ep = ep;
	mutex_init(&pins->lock);
	spin_lock_init(&pins->seq_lock);
	INIT_WORK(&pins->reap, vnet_pins_reap);
	/* Another thread's PIN may have got there first: use its table. */
	if (cmpxchg_release(&ep->pins, NULL, pins)) {
		kfree(pins);
		/* As at the top. */
		return smp_load_acquire(&ep->pins);
	}
	return pins;
}

/* Does another process than the caller have pins here? */
static bool vnet_pins_others(struct vnet_pins *pins)
{
	unsigned int i;

	for (i = 0; i < VNET_NR_PINS; i++)
		if (pins->region[i] && pins->region[i]->mm != current->mm)
			return true;
	return false;
}

/* A pin of the caller's that holds [addr, addr + len): its slot, or -1. */
static int vnet_pin_lookup(struct vnet_pins *pins, u64 addr, u64 len)
{
	int i;

	for (i = 0; i < VNET_NR_PINS; i++) {
		struct vnet_pin_region *r = pins->region[i];

		if (r && addr >= r->addr && addr - r->addr <= r->len &&
		    len <= r->len - (addr - r->addr))
			return i;
	}
	return -1;
}

/* The least recently asked for pin's slot, or -1 when there is none. */
static int vnet_pin_lru(struct vnet_pins *pins)
{
	int i, lru = -1;

	for (i = 0; i < VNET_NR_PINS; i++)
		if (pins->region[i] &&
		    (lru < 0 || pins->region[i]->used < pins->region[lru]->used))
			lru = i;
	return lru;
}

/*
 * Past the locked-memory limit, the least recently asked for pins make
 * room for @npages more -- if all of them would: a range that cannot fit
 * even so leaves them pinned, and its PIN fails.  The limit and what is
 * locked are checked again when the pages are charged.
 */
static void vnet_pin_make_room(struct vnet_pins *pins, unsigned long npages)
{
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	unsigned long locked = READ_ONCE(current->mm->locked_vm), mine = 0;
	int i;

	lockdep_assert_held(&pins->lock);
	if (locked + npages <= limit || capable(CAP_IPC_LOCK))
		return;
	for (i = 0; i < VNET_NR_PINS; i++)
		if (pins->region[i])
			mine += vnet_seg_npages(pins->region[i]->addr,
						pins->region[i]->len);
	if (locked - min(mine, locked) + npages > limit)
		return;
	while (locked + npages > limit && (i = vnet_pin_lru(pins)) >= 0) {
		locked -= min(locked, vnet_seg_npages(pins->region[i]->addr,
						      pins->region[i]->len));
		vnet_pin_drop(pins, i);
	}
}

/*
 * Pin [addr, addr + len) into a new region.  Not yet in the table: the
 * firmware cannot see it.
 */
static struct vnet_pin_region *vnet_pin_new(struct vnet_pins *pins, u64 addr,
					    u64 len, unsigned long *seq)
{
	u64 start = round_down(addr, PAGE_SIZE);
	u64 end = round_up(addr + len, PAGE_SIZE);
	struct vnet_pin_region *r;
	int err;

	lockdep_assert_held(&pins->lock);
	r = kzalloc(sizeof(*r), GFP_KERNEL_ACCOUNT);
	if (!r)
		return ERR_PTR(-ENOMEM);
	r->pins = pins;
	r->slot = -1;
	err = mmu_interval_notifier_insert(&r->notifier, current->mm, start,
					   end - start, &vnet_pin_ops);
	if (err) {
		kfree(r);
		return ERR_PTR(err);
	}
	*seq = mmu_interval_read_begin(&r->notifier);
	r->pages = vnet_seg_pin(addr, len, VNET_SEG_SOURCE);
	if (IS_ERR(r->pages)) {
		err = PTR_ERR(r->pages);
		r->pages = NULL;
		vnet_pin_free(r);
		return ERR_PTR(err);
	}
	r->mm = current->mm;
	r->addr = addr;
	r->len = len;
	return r;
}

/*
 * Put @r in a slot -- a free one, or the least recently asked for pin's,
 * which goes -- and give it to the firmware, unless the caller's mapping
 * of it changed since it was pinned (the sequence from @seq): -EAGAIN,
 * and no pin goes.
 */
static int vnet_pin_publish(struct vnet_pins *pins, struct vnet_pin_region *r,
			    unsigned long seq)
{
	struct vnet_pin_region *old = NULL;
	struct vnet_nic *nic = pins->ep->nic;
	int slot;

	lockdep_assert_held(&pins->lock);
	mutex_lock(&nic->fw_lock);
	spin_lock(&pins->seq_lock);
	if (mmu_interval_read_retry(&r->notifier, seq)) {
		spin_unlock(&pins->seq_lock);
		mutex_unlock(&nic->fw_lock);
		return -EAGAIN;
	}
	for (slot = 0; slot < VNET_NR_PINS; slot++)
		if (!pins->region[slot])
			break;
	if (slot == VNET_NR_PINS) {
		slot = vnet_pin_lru(pins);
		old = vnet_pin_unpublish(pins, slot);
	}
	/* In the table before the firmware can read it: transmit_seg. */
	pins->region[slot] = r;
	r->slot = slot;
	r->used = ++pins->clock;
	vnet_pin_set_fw(pins, slot, r);
	spin_unlock(&pins->seq_lock);
	mutex_unlock(&nic->fw_lock);
	if (old)
		vnet_pin_free(old);
	return 0;
}

/* Drop every pin of @pins. */
static void vnet_pins_drop_all(struct vnet_pins *pins)
{
	unsigned int i;

	lockdep_assert_held(&pins->lock);
	for (i = 0; i < VNET_NR_PINS; i++)
		if (pins->region[i])
			vnet_pin_drop(pins, i);
}

/*
 * VNET_IOC_PIN: make [addr, addr + len) of the caller's memory a source of
 * @ep's XFERs, pinned now or already; addr and len 0 drop every pin.
 * Messages still being read from a pin that is dropped, to make room or
 * on request, come back "source gone".  -EBUSY while another process has
 * pins here.
 */
int vnet_ep_pin(struct vnet_ep *ep, u64 addr, u64 len)
{
	u64 untagged = untagged_addr(addr);
	struct vnet_pin_region *r;
	struct vnet_pins *pins;
	unsigned int tries;
	unsigned long seq;
	int slot, err;

	if (!len && !addr) {
		/* As in vnet_ep_pins(). */
		pins = smp_load_acquire(&ep->pins);
		if (!pins)
			return 0;
		if (mutex_lock_killable(&pins->lock))
			return -EINTR;
		vnet_pins_reap_locked(pins);
		err = vnet_pins_others(pins) ? -EBUSY : 0;
		if (!err)
			vnet_pins_drop_all(pins);
		mutex_unlock(&pins->lock);
		return err;
	}
	/*
	 * The firmware compares the addresses descriptors carry with the
	 * pins': a tagged one would match no notifier's range.
	 */
	if (!len || len > VNET_MAX_SEG_LEN || addr + len < addr ||
	    untagged != addr || !current->mm)
		return -EINVAL;
	if (addr + len > TASK_SIZE)
		return -EFAULT;
	pins = vnet_ep_pins(ep);
	if (!pins)
		return -ENOMEM;
	if (mutex_lock_killable(&pins->lock))
		return -EINTR;
	/*
	 * Whatever went stale goes now, not when the work gets to it: the
	 * pins of a process that exited, among them.
	 */
	vnet_pins_reap_locked(pins);
	slot = vnet_pin_lookup(pins, addr, len);
	if (vnet_pins_others(pins)) {
		err = -EBUSY;
	} else if (slot >= 0) {
		pins->region[slot]->used = ++pins->clock;
		err = 0;
	} else {
		vnet_pin_make_room(pins, vnet_seg_npages(addr, len));
		/* Each try that loses a race with a change of the mapping. */
		for (tries = 0; tries < VNET_PIN_TRIES; tries++) {
			r = vnet_pin_new(pins, addr, len, &seq);
			if (IS_ERR(r)) {
				err = PTR_ERR(r);
				break;
			}
			err = vnet_pin_publish(pins, r, seq);
			if (!err)
				break;
			vnet_pin_free(r);
		}
	}
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
	WRITE_ONCE(ep->pins, NULL);
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
			 !pins->region[src] || at >= ep->fw.pins[src].len))
		return NULL;
	return vnet_seg_pin_page(pins->region[src]->pages, at, off);
}
