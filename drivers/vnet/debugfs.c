// SPDX-License-Identifier: GPL-2.0
/*
 * Test and debugging knobs, as netdevsim has them: /sys/kernel/debug/vnet/
 * vnetN/.  page_delay_ms stretches every load and unload (a closing
 * endpoint's too) so tests can catch an endpoint while it is moving;
 * wake_delay_us holds open the window in which an eviction's victim is
 * already out but its sleepers not yet woken;
 * queues shows each endpoint's state and queue indices as user space and
 * the firmware see them, all taken in one snapshot under nic->lock;
 * pipeline, what the firmware measured of the pipeline to each routed
 * peer, from which it sizes trains' fragments, and frag_size overrides
 * that size, for measuring the choice against the others.
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>

#include "vnet.h"

static struct dentry *vnet_debugfs_root;

static void vnet_debugfs_show_ep(struct seq_file *m, struct vnet_ep *ep)
{
	struct vnet_frame *frame = vnet_ep_current_image(ep);
	int q;

	seq_printf(m, "%u state %d frame %d flags %#x", ep->index, ep->state,
		   ep->frame, READ_ONCE(frame->hdr.flags));
	for (q = 0; q < VNET_NR_QUEUES; q++)
		seq_printf(m, " q%d %u/%u", q, READ_ONCE(frame->prod[q].val),
			   READ_ONCE(frame->cons[q].val));
	seq_printf(m, " fw %u/%u %u/%u %u %u err %#x active %llu served %d\n",
		   ep->fw.send_taken[0], ep->fw.send_cons[0],
		   ep->fw.send_taken[1], ep->fw.send_cons[1],
		   ep->fw.recv_prod[0], ep->fw.recv_prod[1],
		   ep->fw.queue_errors, READ_ONCE(ep->fw.active_at),
		   READ_ONCE(ep->fw.served));
}

static int vnet_debugfs_queues_show(struct seq_file *m, void *unused)
{
	struct vnet_nic *nic = m->private;
	struct vnet_ep *ep;
	unsigned long index;

	seq_printf(m, "held %d doorbell %d\n", READ_ONCE(nic->fw.held),
		   READ_ONCE(nic->doorbell));
	mutex_lock(&nic->fw_lock);
	spin_lock(&nic->lock);
	xa_for_each(&nic->eps, index, ep)
		vnet_debugfs_show_ep(m, ep);
	spin_unlock(&nic->lock);
	mutex_unlock(&nic->fw_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(vnet_debugfs_queues);

/*
 * A line per routed peer: its NIC id, then for each of the two lines
 * (alone: a packet's round trip by payload size; gap: a train's time per
 * fragment once its window is open) whether its fresh samples tell it,
 * samples, nanoseconds at 0 bytes and picoseconds per byte -- of the
 * lines as last known when "stored" is 1 -- then "stored" and the
 * fragments of the latest train the model sized.  Under fw_lock, as the
 * firmware's own tables.
 */
static int vnet_debugfs_pipeline_show(struct seq_file *m, void *unused)
{
	struct vnet_nic *nic = m->private;
	struct vnet_fw_pipe_info in;
	u32 i;

	seq_puts(m, "nic alone samples ns ps_per_byte gap samples ns ps_per_byte stored frags\n");
	mutex_lock(&nic->fw_lock);
	for (i = 0; i < nic->fw.max_peers; i++) {
		const struct vnet_fw_peer *p = &nic->fw.peers[i];

		if (!p->valid)
			continue;
		vnet_fw_pipe_show(p, &in);
		seq_printf(m, "%u %d %llu %lld %lld %d %llu %lld %lld %d %u\n",
			   p->nic_id, in.alone_known, in.alone_samples,
			   in.alone_base, in.alone_per_byte * 1000 / 65536,
			   in.gap_known, in.gap_samples, in.gap_base,
			   in.gap_per_byte * 1000 / 65536, in.stored,
			   p->pipe.frags);
	}
	mutex_unlock(&nic->fw_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(vnet_debugfs_pipeline);

void vnet_debugfs_add_nic(struct vnet_nic *nic)
{
	nic->debugfs = debugfs_create_dir(nic->name, vnet_debugfs_root);
	debugfs_create_u32("page_delay_ms", 0600, nic->debugfs,
			   &nic->page_delay_ms);
	debugfs_create_u32("wake_delay_us", 0600, nic->debugfs,
			   &nic->wake_delay_us);
	debugfs_create_file("queues", 0400, nic->debugfs, nic,
			    &vnet_debugfs_queues_fops);
	debugfs_create_file("pipeline", 0400, nic->debugfs, nic,
			    &vnet_debugfs_pipeline_fops);
	debugfs_create_u32("frag_size", 0600, nic->debugfs, &nic->frag_size);
}

void vnet_debugfs_del_nic(struct vnet_nic *nic)
{
	debugfs_remove_recursive(nic->debugfs);
}

void vnet_debugfs_init(void)
{
	vnet_debugfs_root = debugfs_create_dir("vnet", NULL);
}

void vnet_debugfs_exit(void)
{
	debugfs_remove_recursive(vnet_debugfs_root);
}
