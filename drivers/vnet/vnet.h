/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _VNET_H
#define _VNET_H

#include <linux/bits.h>
#include <linux/if_ether.h>
#include <linux/kobject.h>
#include <linux/kref.h>
#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include <linux/list.h>
#include <linux/llist.h>
#include <linux/mutex.h>
#include <linux/poll.h>
#include <linux/rwsem.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

#include "vnet_fw.h"
#include "residency.h"

/*
 * mmap offsets are unique across the device so unmap_mapping_range() on the
 * shared inode mapping zaps exactly one endpoint's frame.
 */
#define VNET_MMAP_STRIDE	(2ULL << 20)
#define VNET_MMAP_STAGING	BIT_ULL(20)

extern unsigned int vnet_frames;
extern unsigned int vnet_max_endpoints;
extern unsigned int vnet_max_endpoints_per_user;
extern unsigned int vnet_poll_us;
extern unsigned int vnet_sched_k;
extern unsigned int vnet_min_resident_us;
extern unsigned int vnet_slice_faults;
extern unsigned int vnet_channels;
extern unsigned int vnet_train_window;
extern bool vnet_zero_copy;
extern unsigned int vnet_max_peers;
extern unsigned int vnet_retrans_ms;
extern unsigned int vnet_busy_timeout_ms;
extern unsigned int vnet_max_retries;
extern unsigned int vnet_pool_buffers;
extern unsigned int vnet_rx_trains;
extern unsigned short vnet_ethertype;

struct vnet_nic;
struct vnet_user;

/* Why a fault slept before it could claim a frame. */
enum vnet_frame_wait_why {
	VNET_WAIT_TURN,			/* behind earlier faults in line */
	VNET_WAIT_SLICE,		/* until a resident endpoint may go */
	VNET_WAIT_MOVE,			/* every frame in motion */
	VNET_WAIT_NR
};

/* A NIC's Ethernet side: the interface and the packet handler on it. */
struct vnet_link {
	struct vnet_nic *nic;
	struct net_device *dev;
	netdevice_tracker dev_tracker;
	struct packet_type pt;
	bool up;			/* interface up: transmit, else drop */
};

/*
 * One NIC: card memory cut into frames, the firmware thread that serves the
 * resident endpoints, and the endpoints created on it.
 */
struct vnet_nic {
	struct list_head node;		/* vnet_nics, under vnet_nics_lock */
	struct kref ref;		/* the list and every endpoint */
	struct device *dev;
	char name[16];
	u32 id;
	bool dead;			/* removed: endpoints left are orphans */
	/* Not a placeholder its mapper is to replace; vnet_nics_lock */
	bool numbered;
	bool fw_stopped;		/* the firmware thread is gone */

	u32 nframes;
	void *card_mem;			/* nframes * VNET_FRAME_SIZE */

	/*
	 * @lock protects the residency state of every endpoint on this NIC
	 * (vnet_ep.state, .frame), the frame table, the residency policy, the
	 * queue of faults waiting for a frame and the paging counters.  Never
	 * held across a copy, a zap or a sleep.
	 */
	spinlock_t lock;
	struct vnet_ep **frame_ep;	/* [nframes] owner, incl. moving */
	u32 resident;
	struct vnet_rp rp;
	struct vnet_rp_frame *rp_frames;	/* the policy's view, nframes */
	struct list_head frame_waiters;	/* vnet_ep.frame_wait, FIFO */
	u64 frame_gen;			/* bumped when a frame may be claimable */
	u64 faults;
	u64 evictions;
	u64 fault_ns;			/* time spent moving endpoints in */
	/* Where the faults' time went: see struct vnet_fault_times. */
	u64 frame_waits;
	u64 frame_wait_ns;
	u64 wait_ns[VNET_WAIT_NR];	/* frame_wait_ns by why */
	u64 wake_late_ns;		/* woken past the time it asked for */
	u64 flush_ns;
	u64 fence_ns;
	u64 zap_ns;
	u64 unload_ns;
	u64 load_ns;
	u64 evicted_unserved;		/* victims that aged, never served */
	u64 serve_waits;		/* loads seen served, while frames ran short */
	u64 serve_wait_ns;		/* from their load to being served */

	struct xarray eps;		/* index -> vnet_ep, xa_lock */
	atomic_t nr_eps;

	/*
	 * @fw_lock is held by the firmware thread for a batch of received
	 * packets, then for endpoints' turns, let go of every 50 us or so
	 * (vnet_card_pause()).  A move fences the firmware off an endpoint
	 * with a command the firmware runs under it between two turns
	 * (@fw_calls, fw_call.c).  Endpoint translations and tags change
	 * under it too.
	 */
	struct mutex fw_lock;
	u64 fw_locked_at;		/* ns: when the firmware thread took it */
	struct llist_head fw_calls;	/* commands for the firmware (fw_call.c) */
	struct vnet_fw_ep **fw_frame_owner;	/* [nframes] */
	struct vnet_fw_nic fw;
	struct task_struct *fw_thread;
	wait_queue_head_t fw_wq;
	bool doorbell;

	/* The wire.  link changes under fw_lock. */
	struct vnet_link *link;
	/* The privileged endpoint, if one is open; set under fw_lock. */
	struct vnet_priv *priv;
	u64 mapper_dropped;		/* no room for it there; fw_lock */
	struct sk_buff_head rxq;	/* from the packet handler */
	atomic64_t rx_dropped;		/* rxq full; softirq on any CPU */
	u64 tx_dropped;			/* link down, no memory */
	/* Bytes of frames copied into one buffer to be read; fw_lock. */
	u64 rx_gathered_bytes;
	u64 tx_copied_bytes;		/* payload copied into frames; fw_lock */
	struct vnet_fw_send_chan *tx_chans;
	struct vnet_fw_recv_chan *rx_chans;
	void *pool_mem;
	void *train_mem;		/* the trains' medium buffers */

	struct workqueue_struct *fault_wq;
	struct kobject *eps_kobj;
	struct dentry *debugfs;
	u32 page_delay_ms;		/* debugfs: slow paging for tests */
	u32 wake_delay_us;		/* debugfs: late wake-ups, for tests */
	u32 frag_size;			/* debugfs: fragments at most, or 0 */
};

/*
 * An endpoint.  Its kobject (under /sys/class/vnet/vnetN/endpoints/) holds
 * the lifetime: the open file, queued fault work and sysfs readers each hold
 * a reference.
 */
struct vnet_ep {
	struct kobject kobj;
	struct vnet_nic *nic;
	u32 index;
	u32 uid;			/* device-wide, picks the mmap offsets */
	u64 frame_off;
	u64 staging_off;
	pid_t pid;
	struct vnet_user *user;		/* charged for this endpoint */

	enum vnet_ep_state state;	/* nic->lock */
	int frame;			/* nic->lock; -1 unless in a frame */
	bool dead;			/* nic->lock; closing, never faults again */
	bool serve_sampled;		/* nic->lock; this load, in serve_wait_ns */
	unsigned long flags;		/* VNET_EP_UNLISTED */
	u64 faults;			/* nic->lock */
	u64 evictions;			/* nic->lock */
	u64 loaded_at;			/* nic->lock; ktime ns */
	struct list_head frame_wait;	/* nic->lock; in nic->frame_waiters */
	u32 line_users;			/* nic->lock; faults waiting in it */
	/* nic->lock; counted: the thread that mapped it in since its load */
	struct pid *mapper;
	/* nic->lock; a user thread waiting in its place, which clears it */
	struct pid *waiter;
	wait_queue_head_t state_wq;

	void *image;			/* host copy of the frame */
	void *staging;			/* VNET_STAGING_SIZE, vmalloc'd */
	struct address_space *mapping;
	/* Read around installing a frame pte, written around zapping them. */
	struct rw_semaphore map_sem;

	wait_queue_head_t poll_wq;
	struct work_struct fault_work;
	struct vnet_seg_pin *seg;	/* nic->fw_lock */
	struct vnet_pins *pins;		/* pin.c; allocated at the first PIN */

	struct vnet_fw_ep fw;		/* translations and tag: nic->fw_lock */
};

/* One fault-in, for the paging counters and the vnet_fault tracepoint. */
struct vnet_fault_times {
	int victim;			/* its index, or -1 for a free frame */
	bool victim_served;
	u64 wait_ns;			/* for a frame to claim */
	u64 flush_ns;			/* taking the victim out of its frame: */
	u64 fence_ns;			/*   the firmware to let go of fw_lock */
	u64 zap_ns;			/*   its owner's mapping */
					/*   (the rest: its messages on the wire) */
	u64 unload_ns;			/* copying the victim out */
	u64 load_ns;			/* copying the endpoint in */
};

/* vnet_ep.flags */
#define VNET_EP_UNLISTED	0	/* out of sysfs, its index free */

static inline void *vnet_frame_addr(struct vnet_nic *nic, int frame)
{
	return nic->card_mem + (size_t)frame * VNET_FRAME_SIZE;
}

/* nic.c */
extern struct list_head vnet_nics;
extern struct mutex vnet_nics_lock;
struct vnet_nic *vnet_nic_create(u32 id, unsigned int nframes);
void vnet_nic_remove(struct vnet_nic *nic);
void vnet_nic_put(struct vnet_nic *nic);
struct vnet_nic *vnet_nic_find(u32 id);
int vnet_nic_attach(const char *ifname, u32 nic_id, u32 nframes,
		    u32 *out_id);
int vnet_nic_detach(u32 nic_id);
int vnet_nic_set_id(struct vnet_nic *nic, u32 id);
int vnet_nic_init(void);
void vnet_nic_exit(void);

/* card.c */
int vnet_card_init(struct vnet_nic *nic);
int vnet_card_start(struct vnet_nic *nic);
void vnet_card_stop(struct vnet_nic *nic);
void vnet_card_free(struct vnet_nic *nic);
void vnet_card_doorbell(struct vnet_nic *nic);
u64 vnet_card_now(void);

/* fw_call.c */
typedef void (*vnet_fw_call_fn)(struct vnet_nic *nic, void *arg);

/* A command to the firmware, on its poster's stack until it has run. */
struct vnet_fw_call {
	struct llist_node node;
	vnet_fw_call_fn fn;
	void *arg;
	bool ran_at_post;	/* the lock was free: run by the post */
	int done;		/* set, with release, by whoever ran it */
};

void vnet_fw_call(struct vnet_nic *nic, vnet_fw_call_fn fn, void *arg);
void vnet_fw_call_post(struct vnet_nic *nic, struct vnet_fw_call *call);
void vnet_fw_call_wait(struct vnet_nic *nic, struct vnet_fw_call *call);
void vnet_fw_run_calls(struct vnet_nic *nic);

/* link.c */
int vnet_link_start(struct vnet_nic *nic, struct net_device *dev);
void vnet_link_stop(struct vnet_nic *nic);
void vnet_link_set_up(struct vnet_nic *nic, bool up);
void vnet_link_set_mtu(struct vnet_nic *nic, unsigned int mtu);
bool vnet_link_bytes(struct vnet_nic *nic, struct sk_buff *skb,
		     struct vnet_fw_piece *piece, struct vnet_fw_bytes *b);
void vnet_link_xmit_seg(struct vnet_nic *nic, u32 peer, const void *hdr,
			u32 hdr_len, struct vnet_ep *ep, int src, u64 at,
			u32 len);
void vnet_link_xmit(struct vnet_nic *nic, u32 peer, const void *hdr,
		    u32 hdr_len, const void *payload, u32 len);
void vnet_link_xmit_to(struct vnet_nic *nic, const u8 *mac, const void *hdr,
		       u32 hdr_len, const void *payload, u32 len);

/* priv.c */
struct vnet_priv;
long vnet_priv_create(struct vnet_priv **out, void __user *arg);
void vnet_priv_destroy(struct vnet_priv *priv);
long vnet_priv_ioctl(struct vnet_priv *priv, unsigned int cmd,
		     void __user *arg);
struct vnet_nic *vnet_priv_nic(struct vnet_priv *priv);
ssize_t vnet_priv_read(struct vnet_priv *priv, char __user *buf,
		       size_t count, bool nonblock);
ssize_t vnet_priv_write(struct vnet_priv *priv, const char __user *buf,
			size_t count);
__poll_t vnet_priv_poll(struct vnet_priv *priv, struct file *file,
			poll_table *wait);
void vnet_priv_rx(void *ctx, const u8 *mac, const void *payload, u32 len);
void vnet_priv_nic_gone(struct vnet_nic *nic);

/* routes.c */
int vnet_route_add(u32 nic_id, u32 peer_id, const u8 *mac,
		   struct vnet_nic *only);
int vnet_route_del(u32 nic_id, u32 peer_id, struct vnet_nic *only);
int vnet_route_list(u32 nic_id, struct vnet_route __user *routes,
		    u32 *count, struct vnet_nic *only);

/* cache.c */
void vnet_cache_init(struct vnet_nic *nic);
int vnet_ep_fault_in(struct vnet_ep *ep);
void vnet_ep_evict_for_close(struct vnet_ep *ep);
void vnet_ep_queue_fault(struct vnet_ep *ep);
void vnet_ep_fault_work(struct work_struct *work);
void *vnet_ep_current_image(struct vnet_ep *ep);

/* endpoint.c */
struct vnet_ep *vnet_ep_create(struct vnet_nic *nic,
			       struct address_space *mapping);
void vnet_ep_destroy(struct vnet_ep *ep);
void vnet_ep_orphan(struct vnet_ep *ep);
int vnet_ep_set_tag(struct vnet_ep *ep, u64 tag);
int vnet_ep_map(struct vnet_ep *ep, u32 slot, struct vnet_name name, u64 tag);
int vnet_ep_unmap(struct vnet_ep *ep, u32 slot);
bool vnet_ep_readable(struct vnet_ep *ep);

/* quota.c */
struct vnet_user *vnet_quota_charge(void);
void vnet_quota_uncharge(struct vnet_user *user);

/* segment.c */
int vnet_ep_set_seg(struct vnet_ep *ep, u64 addr, u64 len);
struct page *vnet_seg_page(struct vnet_ep *ep, u64 at, unsigned int *off);
enum vnet_seg_use { VNET_SEG_LANDING, VNET_SEG_SOURCE };
unsigned long vnet_seg_npages(u64 addr, u64 len);
struct vnet_seg_pin *vnet_seg_pin(u64 addr, u64 len, enum vnet_seg_use use);
void vnet_seg_release(struct vnet_seg_pin *pin);
u8 *vnet_seg_kaddr(struct vnet_seg_pin *pin);
struct page *vnet_seg_pin_page(struct vnet_seg_pin *pin, u64 at,
			       unsigned int *off);

/* pin.c */
#if IS_ENABLED(CONFIG_MMU_NOTIFIER)
int vnet_ep_pin(struct vnet_ep *ep, u64 addr, u64 len);
void vnet_ep_drop_pins(struct vnet_ep *ep);
struct page *vnet_pin_page(struct vnet_ep *ep, int src, u64 at,
			   unsigned int *off);
#else
/* Nothing could tell when a pin goes stale: no pins, and none to send. */
static inline int vnet_ep_pin(struct vnet_ep *ep, u64 addr, u64 len)
{
	return -EOPNOTSUPP;
}

static inline void vnet_ep_drop_pins(struct vnet_ep *ep)
{
}

static inline struct page *vnet_pin_page(struct vnet_ep *ep, int src, u64 at,
					 unsigned int *off)
{
	WARN_ON_ONCE(1);
	return NULL;
}
#endif

/* chardev.c */
int vnet_chardev_init(void);
void vnet_chardev_exit(void);

/* sysfs.c */
int vnet_sysfs_init(void);
void vnet_sysfs_exit(void);
int vnet_sysfs_add_nic(struct vnet_nic *nic);
void vnet_sysfs_del_nic(struct vnet_nic *nic);
int vnet_sysfs_add_ep(struct vnet_ep *ep);
extern const struct kobj_type vnet_ep_ktype;
void vnet_ep_release(struct kobject *kobj);

/* debugfs.c */
void vnet_debugfs_init(void);
void vnet_debugfs_exit(void);
void vnet_debugfs_add_nic(struct vnet_nic *nic);
void vnet_debugfs_del_nic(struct vnet_nic *nic);

#endif /* _VNET_H */
