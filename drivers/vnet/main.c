// SPDX-License-Identifier: GPL-2.0
/*
 * vnet: virtual networks for Active Messages.
 *
 * Processes create endpoints on /dev/vnet, map them and exchange messages
 * through queues in the mapping with no system call on the common path.  A
 * NIC's few endpoint frames cache the endpoints, which are paged on and off
 * the card on demand.
 */
#include <linux/build_bug.h>
#include <linux/log2.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/stddef.h>

#include "vnet.h"

/*
 * A parameter and its valid range.  The range is checked when the module
 * is loaded and on every write to /sys/module/vnet/parameters/ alike: a
 * value outside it fails with -EINVAL and the old value stays.
 */
struct vnet_uint_param {
	unsigned int *val;
	unsigned int min;
	unsigned int max;
};

static int vnet_param_set_uint(const char *val, const struct kernel_param *kp)
{
	const struct vnet_uint_param *p = kp->arg;
	unsigned int n;
	int err;

	if (!val)
		return -EINVAL;
	err = kstrtouint(val, 0, &n);
	if (err)
		return err;
	if (n < p->min || n > p->max)
		return -EINVAL;
	WRITE_ONCE(*p->val, n);
	return 0;
}

static int vnet_param_get_uint(char *buf, const struct kernel_param *kp)
{
	const struct vnet_uint_param *p = kp->arg;

	return scnprintf(buf, PAGE_SIZE, "%u\n", READ_ONCE(*p->val));
}

static const struct kernel_param_ops vnet_uint_param_ops = {
	.set = vnet_param_set_uint,
	.get = vnet_param_get_uint,
};

#define VNET_PARAM_UINT(name, var, lo, hi, perm)			\
	static struct vnet_uint_param vnet_param_##name = {		\
		.val = &(var), .min = (lo), .max = (hi),		\
	};								\
	module_param_cb(name, &vnet_uint_param_ops, &vnet_param_##name,	\
			perm)

unsigned int vnet_frames = 8;
/* Delivery needs sender and receiver on the card at once. */
VNET_PARAM_UINT(frames, vnet_frames, 2, VNET_MAX_FRAMES, 0444);
MODULE_PARM_DESC(frames, "Endpoint frames of card memory per NIC (2-256, default 8)");

unsigned int vnet_max_endpoints = 1024;
/* No more than 2^20 endpoints exist at once: their mmap offsets run out. */
VNET_PARAM_UINT(max_endpoints, vnet_max_endpoints, 1, 1u << 20, 0644);
MODULE_PARM_DESC(max_endpoints, "Endpoints per NIC (1-1048576, default 1024)");

unsigned int vnet_max_endpoints_per_user = 256;
VNET_PARAM_UINT(max_endpoints_per_user, vnet_max_endpoints_per_user, 1,
		1u << 20, 0644);
MODULE_PARM_DESC(max_endpoints_per_user, "Endpoints per user (real uid) on all NICs together (1-1048576, default 256)");

unsigned int vnet_poll_us = 50;
/* Longer is a firmware thread spinning on an idle card. */
VNET_PARAM_UINT(poll_us, vnet_poll_us, 0, 10000, 0644);
MODULE_PARM_DESC(poll_us, "Microseconds the firmware keeps polling after its queues run dry, with more than one CPU online (0-10000, default 50)");

unsigned int vnet_sched_k = 8;
VNET_PARAM_UINT(sched_k, vnet_sched_k, 0, 12, 0444);
MODULE_PARM_DESC(sched_k, "The firmware makes 2^k send attempts per endpoint visit (0-12, default 8)");

/* The layout user space compiled against is the layout we use. */
static void __init vnet_check_abi(void)
{
	BUILD_BUG_ON(sizeof(struct vnet_desc) != 128);
	BUILD_BUG_ON(sizeof(struct vnet_index) != 64);
	BUILD_BUG_ON(sizeof(struct vnet_frame_hdr) != 64);
	BUILD_BUG_ON(offsetof(struct vnet_frame, queue) != 1024);
	BUILD_BUG_ON(sizeof(struct vnet_frame) > VNET_FRAME_SIZE);
	/* The firmware keeps a bit per send queue entry in a u32. */
	BUILD_BUG_ON(VNET_QUEUE_DEPTH > 32);
	BUILD_BUG_ON(VNET_FRAME_SIZE % PAGE_SIZE);
	BUILD_BUG_ON(VNET_STAGING_SIZE % PAGE_SIZE);
	BUILD_BUG_ON(VNET_STAGING_SIZE > VNET_MMAP_STAGING);
	BUILD_BUG_ON(VNET_MMAP_STAGING + VNET_STAGING_SIZE > VNET_MMAP_STRIDE);
	BUILD_BUG_ON(!is_power_of_2(VNET_QUEUE_DEPTH));
	BUILD_BUG_ON(sizeof(struct vnet_info) != 40);
	BUILD_BUG_ON(sizeof(struct vnet_seg) != 16);
	BUILD_BUG_ON(sizeof(struct vnet_nic_info) != 40);
	BUILD_BUG_ON(sizeof(struct vnet_ep_create) != 40);
	BUILD_BUG_ON(sizeof(struct vnet_map) != 24);
	BUILD_BUG_ON(sizeof(struct vnet_ep_stat) != 64);
	BUILD_BUG_ON(sizeof(struct vnet_attach) != 24);
	BUILD_BUG_ON(sizeof(struct vnet_route) != 16);
	BUILD_BUG_ON(sizeof(struct vnet_route_list) != 16);
	BUILD_BUG_ON(sizeof(struct vnet_wire_hdr) != 24);
	BUILD_BUG_ON(sizeof(struct vnet_wire_msg) != 72);
	BUILD_BUG_ON(sizeof(struct vnet_wire_ack) != 4);
	BUILD_BUG_ON(sizeof(struct vnet_wire_resume) != 8);
	BUILD_BUG_ON(sizeof(struct vnet_wire_frag) != 16);
	BUILD_BUG_ON(VNET_WIRE_FIRST_LEN != 112);
	BUILD_BUG_ON(VNET_WIRE_MAX > U16_MAX);
	/* A fragment's length is 16 bits; a train's offsets 32. */
	BUILD_BUG_ON(VNET_MEDIUM_MAX > U16_MAX);
	BUILD_BUG_ON(VNET_XFER_MAX > VNET_MAX_SEG_LEN);
	BUILD_BUG_ON((u64)VNET_XFER_MAX + VNET_MEDIUM_MAX > U32_MAX);
	BUILD_BUG_ON(sizeof(struct vnet_desc) != 128);
	BUILD_BUG_ON(offsetof(struct vnet_desc, src_offset) != 72);
	BUILD_BUG_ON(VNET_DESC_USER_FLAGS > U8_MAX);
}

unsigned int vnet_min_resident_us = 200;
/* A second is long enough for an endpoint to keep others off its frame. */
VNET_PARAM_UINT(min_resident_us, vnet_min_resident_us, 0, USEC_PER_SEC, 0644);
MODULE_PARM_DESC(min_resident_us, "Shortest time slice of a loaded endpoint, and shortest idleness that lets it go, however cheap faults are (0-1000000, default 200)");

unsigned int vnet_slice_faults = 16;
/* Past a thousand faults' time a slice starves the queue for nothing. */
VNET_PARAM_UINT(slice_faults, vnet_slice_faults, 1, 1000, 0644);
MODULE_PARM_DESC(slice_faults, "Time slice of a loaded endpoint, in mean fault-in times (1-1000, default 16)");

/*
 * Endpoints refused by a peer (off its card, say) hold at most half: the
 * other half must carry what the endpoints on the card can take.  32
 * doubles a paging NIC's clients at 2x, but turns the frames over faster
 * for refused messages and loses at 4x (design.rst, "More channels").
 */
unsigned int vnet_channels = 8;
VNET_PARAM_UINT(channels, vnet_channels, 1, VNET_WIRE_CHANNELS, 0444);
MODULE_PARM_DESC(channels, "Logical channels per destination NIC (1-64, default 8)");

unsigned int vnet_max_peers = 64;
VNET_PARAM_UINT(max_peers, vnet_max_peers, 1, VNET_FW_MAX_PEERS, 0444);
MODULE_PARM_DESC(max_peers, "Routes per NIC (1-4096, default 64)");

unsigned int vnet_retrans_ms = 20;
/* 0 would retransmit every firmware round. */
VNET_PARAM_UINT(retrans_ms, vnet_retrans_ms, 1, 10000, 0644);
MODULE_PARM_DESC(retrans_ms, "Retransmission timer quantum in ms, for NICs attached after a change (1-10000, default 20)");

unsigned int vnet_busy_timeout_ms = 5000;
/* Below a quantum, the first NACK would already be too many. */
VNET_PARAM_UINT(busy_timeout_ms, vnet_busy_timeout_ms, 1, 3600 * 1000, 0644);
MODULE_PARM_DESC(busy_timeout_ms, "A message its destination refuses this long comes back \"busy\", for NICs attached after a change (1-3600000, default 5000)");

unsigned int vnet_max_retries = 255;
VNET_PARAM_UINT(max_retries, vnet_max_retries, 1, U16_MAX, 0644);
MODULE_PARM_DESC(max_retries, "Quanta (retrans_ms) without an ACK, or a NACK of its latest transmission, before a message is returned unreachable, for NICs attached after a change (1-65535, default 255)");

/*
 * A train of fragments keeps this many on the wire at once, so that one
 * large message fills more than a round trip per fragment.
 */
unsigned int vnet_train_window = 8;
VNET_PARAM_UINT(train_window, vnet_train_window, 1, VNET_FW_TRAIN_WINDOW_MAX, 0644);
MODULE_PARM_DESC(train_window, "Fragments of one large message on the wire at once, for NICs attached after a change (1-16, default 8)");

/*
 * A large XFER leaves from its sender's pinned segment pages, not a copy
 * of them; off, for measuring the difference, or for a device that
 * mishandles page fragments.
 */
bool vnet_zero_copy = true;
module_param_named(zero_copy, vnet_zero_copy, bool, 0644);
MODULE_PARM_DESC(zero_copy, "Send large messages from the sender's segment pages without copying them, for NICs attached after a change (default Y)");

unsigned int vnet_pool_buffers = 256;
module_param_named(pool_buffers, vnet_pool_buffers, uint, 0444);
MODULE_PARM_DESC(pool_buffers, "8 KiB payload buffers per NIC for messages in flight (default 256)");

unsigned int vnet_rx_trains = 64;
/* Past 65535 a channel could not name its train. */
VNET_PARAM_UINT(rx_trains, vnet_rx_trains, 1, 4096, 0444);
MODULE_PARM_DESC(rx_trains, "Messages a NIC reassembles from fragments at once, no peer more than half of them (1-4096, default 64)");

unsigned short vnet_ethertype = VNET_ETH_P_VNET;
module_param_named(ethertype, vnet_ethertype, ushort, 0444);
MODULE_PARM_DESC(ethertype, "EtherType of vnet frames (default 0x88b5)");

static char *vnet_ifnames;
module_param_named(ifnames, vnet_ifnames, charp, 0444);
MODULE_PARM_DESC(ifnames, "Interfaces to attach at load: IFNAME[:NICID],...");

/*
 * ifnames=eth1:3,eth2 -- eth2 unnumbered, for its mapper; a bad entry is
 * reported and skipped.
 */
static void __init vnet_attach_ifnames(void)
{
	char *list, *cur, *entry;

	if (!vnet_ifnames || !*vnet_ifnames)
		return;
	list = kstrdup(vnet_ifnames, GFP_KERNEL);
	if (!list)
		return;
	cur = list;
	while ((entry = strsep(&cur, ","))) {
		char *id = strchr(entry, ':');
		u32 nic_id = VNET_NIC_ID_ANY, got;
		int err;

		if (!*entry)
			continue;
		if (id) {
			*id++ = 0;
			if (kstrtou32(id, 0, &nic_id)) {
				pr_err("vnet: ifnames: bad NIC id '%s' for %s\n",
				       id, entry);
				continue;
			}
		}
		err = vnet_nic_attach(entry, nic_id, vnet_frames, &got);
		if (err)
			pr_err("vnet: ifnames: cannot attach %s: %d\n", entry,
			       err);
	}
	kfree(list);
}

static int __init vnet_init(void)
{
	struct vnet_nic *nic;
	int err;

	vnet_check_abi();
	vnet_fw_crc32c_init();
	if (!vnet_fw_crc32c_selftest(vnet_crc32c)) {
		pr_err("vnet: crc32c() does not give the CRC32C of RFC 3720\n");
		return -ELIBBAD;
	}

	err = vnet_sysfs_init();
	if (err)
		return err;
	vnet_debugfs_init();

	/* vnet0 is the loopback card: it delivers between its own endpoints. */
	mutex_lock(&vnet_nics_lock);
	nic = vnet_nic_create(0, vnet_frames);
	mutex_unlock(&vnet_nics_lock);
	if (IS_ERR(nic)) {
		err = PTR_ERR(nic);
		goto err_debugfs;
	}

	err = vnet_nic_init();
	if (err)
		goto err_nics;
	err = vnet_chardev_init();
	if (err)
		goto err_notifier;
	vnet_attach_ifnames();
	return 0;

err_notifier:
	vnet_nic_exit();
err_nics:
	mutex_lock(&vnet_nics_lock);
	vnet_nic_remove(nic);
	mutex_unlock(&vnet_nics_lock);
err_debugfs:
	vnet_debugfs_exit();
	vnet_sysfs_exit();
	return err;
}

static void __exit vnet_exit(void)
{
	struct vnet_nic *nic, *tmp;

	vnet_chardev_exit();
	mutex_lock(&vnet_nics_lock);
	list_for_each_entry_safe(nic, tmp, &vnet_nics, node)
		vnet_nic_remove(nic);
	mutex_unlock(&vnet_nics_lock);
	/* Last: unregistering replays NETDEV_UNREGISTER, now for no NIC. */
	vnet_nic_exit();
	vnet_debugfs_exit();
	vnet_sysfs_exit();
}

module_init(vnet_init);
module_exit(vnet_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Virtual networks for Active Messages");
MODULE_VERSION(VNET_VERSION);
