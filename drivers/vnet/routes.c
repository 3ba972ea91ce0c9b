// SPDX-License-Identifier: GPL-2.0
/*
 * Routes: which Ethernet address each peer NIC of an attached NIC lives
 * at.  The firmware keeps them in its peer table (firmware/route.c), which
 * changes under fw_lock; setting them needs CAP_NET_ADMIN, and so does
 * reading them, since they map the cluster for anyone on the segment --
 * or a NIC's privileged endpoint, for that NIC's routes alone (@only).
 */
#include <linux/etherdevice.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "trace.h"
#include "vnet.h"

/* The NIC @nic_id, if the caller may change or read its routes. */
static struct vnet_nic *vnet_route_nic(u32 nic_id, struct vnet_nic *only,
				       int *err)
{
	struct vnet_nic *nic;

	lockdep_assert_held(&vnet_nics_lock);
	nic = vnet_nic_find(nic_id);
	*err = !nic ? -ENODEV : only && nic != only ? -EINVAL : 0;
	return *err ? NULL : nic;
}

int vnet_route_add(u32 nic_id, u32 peer_id, const u8 *mac,
		   struct vnet_nic *only)
{
	struct vnet_nic *nic;
	int slot, err = 0;

	if (peer_id > VNET_MAX_NIC_ID || !is_valid_ether_addr(mac)) {
		err = -EINVAL;
		goto refused;
	}
	mutex_lock(&vnet_nics_lock);
	nic = vnet_route_nic(nic_id, only, &err);
	if (!err && !nic->link) {
		err = -EOPNOTSUPP;
		goto out;
	}
	if (err)
		goto out;
	if (peer_id == nic_id) {
		err = -EINVAL;
		goto out;
	}
	mutex_lock(&nic->fw_lock);
	slot = vnet_fw_route_add(&nic->fw, peer_id, mac, vnet_card_now());
	if (slot == VNET_FW_ROUTES_WAIT)
		err = -EAGAIN;
	else if (slot < 0)
		err = -ENOSPC;
	mutex_unlock(&nic->fw_lock);
out:
	mutex_unlock(&vnet_nics_lock);
refused:
	trace_vnet_route(nic_id, peer_id, true, mac, err);
	return err;
}

int vnet_route_del(u32 nic_id, u32 peer_id, struct vnet_nic *only)
{
	static const u8 no_mac[ETH_ALEN];
	struct vnet_nic *nic;
	int err = 0;

	if (peer_id > VNET_MAX_NIC_ID) {
		err = -EINVAL;
		goto refused;
	}
	mutex_lock(&vnet_nics_lock);
	nic = vnet_route_nic(nic_id, only, &err);
	if (nic) {
		mutex_lock(&nic->fw_lock);
		if (!vnet_fw_route_del(&nic->fw, peer_id, vnet_card_now()))
			err = -ENOENT;
		mutex_unlock(&nic->fw_lock);
	}
	mutex_unlock(&vnet_nics_lock);
refused:
	trace_vnet_route(nic_id, peer_id, false, no_mac, err);
	return err;
}

int vnet_route_list(u32 nic_id, struct vnet_route __user *routes,
		    u32 *count, struct vnet_nic *only)
{
	struct vnet_nic *nic;
	struct vnet_route *buf;
	u32 i, n = 0;
	int err = 0;

	mutex_lock(&vnet_nics_lock);
	nic = vnet_route_nic(nic_id, only, &err);
	if (!nic) {
		mutex_unlock(&vnet_nics_lock);
		return err;
	}
	buf = kvcalloc(nic->fw.max_peers, sizeof(*buf), GFP_KERNEL);
	if (!buf) {
		mutex_unlock(&vnet_nics_lock);
		return -ENOMEM;
	}
	mutex_lock(&nic->fw_lock);
	for (i = 0; i < nic->fw.max_peers; i++) {
		if (!nic->fw.peers[i].valid)
			continue;
		buf[n].nic_id = nic_id;
		buf[n].peer_id = nic->fw.peers[i].nic_id;
		ether_addr_copy(buf[n].mac, nic->fw.peers[i].mac);
		n++;
	}
	mutex_unlock(&nic->fw_lock);
	mutex_unlock(&vnet_nics_lock);

	if (copy_to_user(routes, buf, array_size(min(n, *count), sizeof(*buf))))
		err = -EFAULT;
	*count = n;
	kvfree(buf);
	return err;
}
