// SPDX-License-Identifier: GPL-2.0
/*
 * /sys/class/vnet/vnetN/: the NIC's frames and paging counters, and one
 * directory per endpoint under endpoints/ with its residency and traffic.
 * Counters are plain u64 fields; each attribute names its field by offset.
 */
#include <linux/device.h>
#include <linux/kdev_t.h>
#include <linux/kobject.h>
#include <linux/stddef.h>
#include <linux/sysfs.h>

#include "vnet.h"

/*
 * Registered, not class_create()d: class_create() lost its owner argument
 * in 6.4, class_register() is the same on every kernel vnet supports.
 */
static struct class vnet_class = {
	.name = "vnet",
};

static const char * const vnet_ep_state_names[] = {
	[VNET_EP_NONRESIDENT] = "nonresident",
	[VNET_EP_LOADING] = "loading",
	[VNET_EP_RESIDENT] = "resident",
	[VNET_EP_UNLOADING] = "unloading",
};

static ssize_t nic_id_show(struct device *dev, struct device_attribute *attr,
			   char *buf)
{
	struct vnet_nic *nic = dev_get_drvdata(dev);

	return sysfs_emit(buf, "%u\n", nic->id);
}
static DEVICE_ATTR_RO(nic_id);

/* 0: nic_id is a placeholder until its mapper numbers the NIC. */
static ssize_t numbered_show(struct device *dev, struct device_attribute *attr,
			     char *buf)
{
	struct vnet_nic *nic = dev_get_drvdata(dev);

	return sysfs_emit(buf, "%d\n", READ_ONCE(nic->numbered));
}
static DEVICE_ATTR_RO(numbered);

static ssize_t frames_show(struct device *dev, struct device_attribute *attr,
			   char *buf)
{
	struct vnet_nic *nic = dev_get_drvdata(dev);

	return sysfs_emit(buf, "%u\n", nic->nframes);
}
static DEVICE_ATTR_RO(frames);

/* The interface the NIC is attached to; empty for the loopback card. */
static ssize_t ifname_show(struct device *dev, struct device_attribute *attr,
			   char *buf)
{
	struct vnet_nic *nic = dev_get_drvdata(dev);
	ssize_t len;

	mutex_lock(&nic->fw_lock);
	len = sysfs_emit(buf, "%s\n", nic->link ? nic->link->dev->name : "");
	mutex_unlock(&nic->fw_lock);
	return len;
}
static DEVICE_ATTR_RO(ifname);

static ssize_t nr_endpoints_show(struct device *dev,
				 struct device_attribute *attr, char *buf)
{
	struct vnet_nic *nic = dev_get_drvdata(dev);

	return sysfs_emit(buf, "%d\n", atomic_read(&nic->nr_eps));
}
static DEVICE_ATTR_RO(nr_endpoints);

static ssize_t resident_show(struct device *dev, struct device_attribute *attr,
			     char *buf)
{
	struct vnet_nic *nic = dev_get_drvdata(dev);

	return sysfs_emit(buf, "%u\n", READ_ONCE(nic->resident));
}
static DEVICE_ATTR_RO(resident);

/* A u64 paging counter of struct vnet_nic, read under nic->lock. */
static ssize_t vnet_nic_counter_show(struct device *dev,
				     struct device_attribute *attr, char *buf)
{
	struct dev_ext_attribute *ea = container_of(attr, struct dev_ext_attribute,
						    attr);
	struct vnet_nic *nic = dev_get_drvdata(dev);
	size_t offset = (uintptr_t)ea->var;
	u64 val;

	spin_lock(&nic->lock);
	val = *(u64 *)((u8 *)nic + offset);
	spin_unlock(&nic->lock);
	return sysfs_emit(buf, "%llu\n", val);
}

#define VNET_NIC_COUNTER(_attr, _field)					\
	{ __ATTR(_attr, 0444, vnet_nic_counter_show, NULL),		\
	  (void *)offsetof(struct vnet_nic, _field) }

/* Paging counters, beside the NIC's other attributes. */
static struct dev_ext_attribute vnet_nic_counters[] = {
	VNET_NIC_COUNTER(faults, faults),
	VNET_NIC_COUNTER(evictions, evictions),
	VNET_NIC_COUNTER(fault_ns, fault_ns),
	VNET_NIC_COUNTER(frame_waits, frame_waits),
	VNET_NIC_COUNTER(frame_wait_ns, frame_wait_ns),
	VNET_NIC_COUNTER(wait_turn_ns, wait_ns[VNET_WAIT_TURN]),
	VNET_NIC_COUNTER(wait_slice_ns, wait_ns[VNET_WAIT_SLICE]),
	VNET_NIC_COUNTER(wait_move_ns, wait_ns[VNET_WAIT_MOVE]),
	VNET_NIC_COUNTER(wake_late_ns, wake_late_ns),
	VNET_NIC_COUNTER(fault_avg_ns, rp.fault_ns),
	VNET_NIC_COUNTER(flush_ns, flush_ns),
	VNET_NIC_COUNTER(fence_ns, fence_ns),
	VNET_NIC_COUNTER(zap_ns, zap_ns),
	VNET_NIC_COUNTER(unload_ns, unload_ns),
	VNET_NIC_COUNTER(load_ns, load_ns),
	VNET_NIC_COUNTER(evicted_unserved, evicted_unserved),
	VNET_NIC_COUNTER(serve_waits, serve_waits),
	VNET_NIC_COUNTER(serve_wait_ns, serve_wait_ns),
};

static struct attribute *vnet_nic_counter_attrs[ARRAY_SIZE(vnet_nic_counters) + 1];

static const struct attribute_group vnet_nic_counter_group = {
	.attrs = vnet_nic_counter_attrs,
};

/*
 * Transport counters, in stats/: a u64 of struct vnet_nic each, written by
 * the firmware thread and read here without its lock.
 */
static ssize_t vnet_nic_stat_show(struct device *dev,
				  struct device_attribute *attr, char *buf)
{
	struct dev_ext_attribute *ea = container_of(attr, struct dev_ext_attribute,
						    attr);
	struct vnet_nic *nic = dev_get_drvdata(dev);
	const u64 *val = (const u64 *)((u8 *)nic + (uintptr_t)ea->var);

	return sysfs_emit(buf, "%llu\n", READ_ONCE(*val));
}

#define VNET_NIC_STAT(_attr, _field)					\
	{ __ATTR(_attr, 0444, vnet_nic_stat_show, NULL),		\
	  (void *)offsetof(struct vnet_nic, _field) }

static struct dev_ext_attribute vnet_nic_stats[] = {
	VNET_NIC_STAT(packets_sent, fw.stats.tx_data),
	VNET_NIC_STAT(packets_received, fw.stats.rx_data),
	VNET_NIC_STAT(acks_sent, fw.stats.tx_ack),
	VNET_NIC_STAT(acks_received, fw.stats.rx_ack),
	VNET_NIC_STAT(nacks_sent_queue_full, fw.stats.tx_nack[VNET_NACK_QUEUE_FULL]),
	VNET_NIC_STAT(nacks_sent_not_resident, fw.stats.tx_nack[VNET_NACK_NOT_RESIDENT]),
	VNET_NIC_STAT(nacks_received_queue_full, fw.stats.rx_nack[VNET_NACK_QUEUE_FULL]),
	VNET_NIC_STAT(nacks_received_not_resident, fw.stats.rx_nack[VNET_NACK_NOT_RESIDENT]),
	VNET_NIC_STAT(nacks_sent_restart, fw.stats.tx_nack[VNET_NACK_RESTART]),
	VNET_NIC_STAT(nacks_received_restart, fw.stats.rx_nack[VNET_NACK_RESTART]),
	VNET_NIC_STAT(trains_sent, fw.stats.tx_trains),
	VNET_NIC_STAT(fragments_sent, fw.stats.tx_frags),
	VNET_NIC_STAT(trains_received, fw.stats.rx_trains),
	VNET_NIC_STAT(fragments_received, fw.stats.rx_frags),
	VNET_NIC_STAT(trains_dropped, fw.stats.trains_dropped),
	VNET_NIC_STAT(retransmits, fw.stats.retransmits),
	VNET_NIC_STAT(resumes_sent, fw.stats.tx_resume),
	VNET_NIC_STAT(resumes_received, fw.stats.rx_resume),
	VNET_NIC_STAT(resume_retransmits, fw.stats.resume_retransmits),
	VNET_NIC_STAT(returned_bad_tag, fw.stats.returned[VNET_RET_BAD_TAG]),
	VNET_NIC_STAT(returned_no_endpoint, fw.stats.returned[VNET_RET_NO_ENDPOINT]),
	VNET_NIC_STAT(returned_unreachable, fw.stats.returned[VNET_RET_UNREACHABLE]),
	VNET_NIC_STAT(returned_bad_segment, fw.stats.returned[VNET_RET_BAD_SEGMENT]),
	VNET_NIC_STAT(returned_busy, fw.stats.returned[VNET_RET_BUSY]),
	VNET_NIC_STAT(returned_too_large, fw.stats.returned[VNET_RET_TOO_LARGE]),
	VNET_NIC_STAT(returned_source_gone,
		      fw.stats.returned[VNET_RET_SOURCE_GONE]),
	VNET_NIC_STAT(bad_frames, fw.stats.bad_frames),
	VNET_NIC_STAT(bad_source, fw.stats.bad_source),
	VNET_NIC_STAT(duplicates_dropped, fw.stats.duplicates),
	VNET_NIC_STAT(stale_acks, fw.stats.stale_acks),
	VNET_NIC_STAT(no_route, fw.stats.no_route),
	VNET_NIC_STAT(mapper_sent, fw.stats.tx_mapper),
	VNET_NIC_STAT(mapper_received, fw.stats.rx_mapper),
	VNET_NIC_STAT(mapper_dropped, mapper_dropped),
	VNET_NIC_STAT(tx_dropped, tx_dropped),
	VNET_NIC_STAT(rx_gathered_bytes, rx_gathered_bytes),
	VNET_NIC_STAT(tx_copied_bytes, tx_copied_bytes),
	VNET_NIC_STAT(tx_segment_bytes, fw.stats.tx_seg_bytes),
	VNET_NIC_STAT(payload_copied_bytes, fw.stats.copied_bytes),
};

/* Counted by the packet handler, on any CPU at once. */
static ssize_t rx_dropped_show(struct device *dev,
			       struct device_attribute *attr, char *buf)
{
	struct vnet_nic *nic = dev_get_drvdata(dev);

	return sysfs_emit(buf, "%lld\n", atomic64_read(&nic->rx_dropped));
}
static DEVICE_ATTR_RO(rx_dropped);

/* vnet_nic_stats, then rx_dropped. */
static struct attribute *vnet_nic_stat_attrs[ARRAY_SIZE(vnet_nic_stats) + 2];

static const struct attribute_group vnet_nic_stat_group = {
	.name = "stats",
	.attrs = vnet_nic_stat_attrs,
};

static struct attribute *vnet_nic_attrs[] = {
	&dev_attr_nic_id.attr,
	&dev_attr_numbered.attr,
	&dev_attr_frames.attr,
	&dev_attr_ifname.attr,
	&dev_attr_nr_endpoints.attr,
	&dev_attr_resident.attr,
	NULL,
};

static const struct attribute_group vnet_nic_group = {
	.attrs = vnet_nic_attrs,
};

static const struct attribute_group *vnet_nic_groups[] = {
	&vnet_nic_group,
	&vnet_nic_counter_group,
	&vnet_nic_stat_group,
	NULL,
};

#define to_vnet_ep(k) container_of(k, struct vnet_ep, kobj)

static ssize_t ep_state_show(struct kobject *kobj,
			     struct kobj_attribute *attr, char *buf)
{
	struct vnet_ep *ep = to_vnet_ep(kobj);
	enum vnet_ep_state state;

	spin_lock(&ep->nic->lock);
	state = ep->state;
	spin_unlock(&ep->nic->lock);
	return sysfs_emit(buf, "%s\n", vnet_ep_state_names[state]);
}

static ssize_t ep_frame_show(struct kobject *kobj,
			     struct kobj_attribute *attr, char *buf)
{
	struct vnet_ep *ep = to_vnet_ep(kobj);
	int frame;

	spin_lock(&ep->nic->lock);
	frame = ep->frame;
	spin_unlock(&ep->nic->lock);
	return sysfs_emit(buf, "%d\n", frame);
}

static ssize_t ep_pid_show(struct kobject *kobj, struct kobj_attribute *attr,
			   char *buf)
{
	return sysfs_emit(buf, "%d\n", to_vnet_ep(kobj)->pid);
}

static struct kobj_attribute vnet_ep_attr_state =
	__ATTR(state, 0444, ep_state_show, NULL);
static struct kobj_attribute vnet_ep_attr_frame =
	__ATTR(frame, 0444, ep_frame_show, NULL);
/*
 * Who owns an endpoint is for the administrator alone: the tag is never
 * here (only VNET_IOC_EP_STAT on the owner's file shows it), and the
 * creator's pid tells others whom to aim at.
 */
static struct kobj_attribute vnet_ep_attr_pid =
	__ATTR(pid, 0400, ep_pid_show, NULL);

/*
 * A u64 counter of struct vnet_ep.  Paging counters change under nic->lock,
 * firmware counters under the firmware lock; a torn-free snapshot of either
 * is all sysfs promises.
 */
struct vnet_ep_counter {
	struct kobj_attribute attr;
	size_t offset;
};

static ssize_t ep_counter_show(struct kobject *kobj,
			       struct kobj_attribute *attr, char *buf)
{
	struct vnet_ep_counter *c = container_of(attr, struct vnet_ep_counter,
						 attr);
	const u64 *val = (const u64 *)((u8 *)to_vnet_ep(kobj) + c->offset);

	return sysfs_emit(buf, "%llu\n", READ_ONCE(*val));
}

#define VNET_EP_COUNTER(_name, _field)					\
	{ __ATTR(_name, 0444, ep_counter_show, NULL),			\
	  offsetof(struct vnet_ep, _field) }

static struct vnet_ep_counter vnet_ep_counters[] = {
	VNET_EP_COUNTER(faults, faults),
	VNET_EP_COUNTER(evictions, evictions),
	VNET_EP_COUNTER(sent, fw.stats.sent),
	VNET_EP_COUNTER(received, fw.stats.received),
	VNET_EP_COUNTER(returned, fw.stats.returned),
	VNET_EP_COUNTER(rejected, fw.stats.rejected),
};

static struct attribute *vnet_ep_attrs[] = {
	&vnet_ep_attr_state.attr,
	&vnet_ep_attr_frame.attr,
	&vnet_ep_attr_pid.attr,
	&vnet_ep_counters[0].attr.attr,
	&vnet_ep_counters[1].attr.attr,
	&vnet_ep_counters[2].attr.attr,
	&vnet_ep_counters[3].attr.attr,
	&vnet_ep_counters[4].attr.attr,
	&vnet_ep_counters[5].attr.attr,
	NULL,
};
ATTRIBUTE_GROUPS(vnet_ep);

const struct kobj_type vnet_ep_ktype = {
	.release = vnet_ep_release,
	.sysfs_ops = &kobj_sysfs_ops,
	.default_groups = vnet_ep_groups,
};

int vnet_sysfs_add_ep(struct vnet_ep *ep)
{
	return kobject_add(&ep->kobj, ep->nic->eps_kobj, "%u", ep->index);
}

int vnet_sysfs_add_nic(struct vnet_nic *nic)
{
	nic->dev = device_create_with_groups(&vnet_class, NULL, MKDEV(0, 0), nic,
					     vnet_nic_groups, "%s", nic->name);
	if (IS_ERR(nic->dev))
		return PTR_ERR(nic->dev);
	/* kobject_create_and_add() can only fail for want of memory here. */
	nic->eps_kobj = kobject_create_and_add("endpoints", &nic->dev->kobj);
	if (!nic->eps_kobj) {
		device_unregister(nic->dev);
		return -ENOMEM;
	}
	return 0;
}

void vnet_sysfs_del_nic(struct vnet_nic *nic)
{
	kobject_put(nic->eps_kobj);
	device_unregister(nic->dev);
}

int vnet_sysfs_init(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(vnet_nic_counters); i++)
		vnet_nic_counter_attrs[i] = &vnet_nic_counters[i].attr.attr;
	for (i = 0; i < ARRAY_SIZE(vnet_nic_stats); i++)
		vnet_nic_stat_attrs[i] = &vnet_nic_stats[i].attr.attr;
	vnet_nic_stat_attrs[i] = &dev_attr_rx_dropped.attr;
	return class_register(&vnet_class);
}

void vnet_sysfs_exit(void)
{
	class_unregister(&vnet_class);
}
