// SPDX-License-Identifier: GPL-2.0
/*
 * vnet-mapd's whole interface to the kernel (uapi/linux/vnet.h): the NIC
 * is found by interface name through VNET_IOC_NIC_INFO and the ifname
 * attribute in /sys/class/vnet/vnetN, as vnetctl finds NICs; the rest is
 * ioctls and one read() or write() per datagram on the privileged
 * endpoint.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/vnet.h>

#include "kernel.h"

#define SYSFS_CLASS	"/sys/class/vnet"

/* The interface NIC @name is attached to, from sysfs; "" for none. */
static int nic_ifname(const char *name, char *buf, size_t len)
{
	char path[96];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), SYSFS_CLASS "/%s/ifname", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static int find_nic(int fd, const char *ifname, struct vnet_nic_info *out)
{
	struct vnet_nic_info info;
	char attached[64];

	for (memset(&info, 0, sizeof(info));
	     !ioctl(fd, VNET_IOC_NIC_INFO, &info); info.index++) {
		info.name[sizeof(info.name) - 1] = '\0';
		if (!nic_ifname(info.name, attached, sizeof(attached)) &&
		    !strcmp(attached, ifname)) {
			*out = info;
			return 0;
		}
	}
	return errno == ENODEV ? -ENXIO : -errno;
}

int mapd_nic_open(struct mapd_nic *nic, const char *ifname, char *why,
		  size_t len)
{
	struct vnet_priv_create pc = { 0 };
	struct vnet_nic_info info;
	int err;

	memset(nic, 0, sizeof(*nic));
	nic->fd = open("/dev/vnet", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (nic->fd < 0) {
		err = -errno;
		snprintf(why, len, "/dev/vnet");
		return err;
	}
	err = find_nic(nic->fd, ifname, &info);
	if (err) {
		snprintf(why, len, err == -ENXIO ?
			 "no vnet NIC is attached to %s (vnetctl attach %s)" :
			 "listing the NICs", ifname, ifname);
		goto fail;
	}
	pc.nic_id = info.nic_id;
	if (ioctl(nic->fd, VNET_IOC_PRIV_CREATE, &pc)) {
		err = -errno;
		snprintf(why, len, err == -EBUSY ?
			 "%s already has a mapper" : "%s: PRIV_CREATE",
			 info.name);
		goto fail;
	}
	nic->nic_id = info.nic_id;
	nic->mtu = pc.mtu;
	memcpy(nic->mac, pc.mac, 6);
	snprintf(nic->name, sizeof(nic->name), "%s", info.name);
	return 0;
fail:
	close(nic->fd);
	nic->fd = -1;
	return err;
}

void mapd_nic_close(struct mapd_nic *nic)
{
	if (nic->fd >= 0)
		close(nic->fd);
	nic->fd = -1;
}

ssize_t mapd_nic_recv(struct mapd_nic *nic, uint8_t src[6], void *buf,
		      size_t len)
{
	struct {
		struct vnet_mapper_pkt hdr;
		uint8_t data[VNET_MAPPER_MTU];
	} pkt;
	ssize_t n = read(nic->fd, &pkt, sizeof(pkt));

	if (n < 0)
		return -errno;
	/* A datagram is its header and exactly the payload it announces. */
	if ((size_t)n < sizeof(pkt.hdr) ||
	    pkt.hdr.len != (size_t)n - sizeof(pkt.hdr) || pkt.hdr.len > len)
		return -EBADMSG;
	memcpy(src, pkt.hdr.mac, 6);
	memcpy(buf, pkt.data, pkt.hdr.len);
	return pkt.hdr.len;
}

int mapd_nic_send(struct mapd_nic *nic, const uint8_t to[6], const void *buf,
		  size_t len)
{
	struct {
		struct vnet_mapper_pkt hdr;
		uint8_t data[VNET_MAPPER_MTU];
	} pkt;
	size_t total = sizeof(pkt.hdr) + len;
	ssize_t n;

	if (len > nic->mtu || len > sizeof(pkt.data))
		return -EMSGSIZE;
	memcpy(pkt.hdr.mac, to, 6);
	pkt.hdr.len = len;
	memcpy(pkt.data, buf, len);
	n = write(nic->fd, &pkt, total);
	if (n < 0)
		return -errno;
	return (size_t)n == total ? 0 : -EIO;
}

int mapd_nic_set_id(struct mapd_nic *nic, uint32_t id)
{
	if (id == nic->nic_id)
		return 0;
	if (ioctl(nic->fd, VNET_IOC_PRIV_SET_ID, &id))
		return -errno;
	nic->nic_id = id;
	snprintf(nic->name, sizeof(nic->name), "vnet%u", id);
	return 0;
}

static int route_ioctl(struct mapd_nic *nic, unsigned long cmd, uint32_t peer,
		       const uint8_t *mac)
{
	struct vnet_route r = { .nic_id = nic->nic_id, .peer_id = peer };

	if (mac)
		memcpy(r.mac, mac, 6);
	return ioctl(nic->fd, cmd, &r) ? -errno : 0;
}

int mapd_nic_route_add(struct mapd_nic *nic, uint32_t peer,
		       const uint8_t mac[6])
{
	return route_ioctl(nic, VNET_IOC_ROUTE_ADD, peer, mac);
}

int mapd_nic_route_del(struct mapd_nic *nic, uint32_t peer)
{
	int err = route_ioctl(nic, VNET_IOC_ROUTE_DEL, peer, NULL);

	return err == -ENOENT ? 0 : err;
}

int mapd_nic_routes(struct mapd_nic *nic,
		    int (*fn)(void *arg, uint32_t peer, const uint8_t mac[6]),
		    void *arg)
{
	struct vnet_route_list req = { .nic_id = nic->nic_id };
	struct vnet_route *routes = NULL;
	uint32_t room = 256, i;
	int err = 0;

	/* Grow until the list fits: routes may be added meanwhile. */
	for (;;) {
		struct vnet_route *r = realloc(routes, room * sizeof(*r));

		if (!r) {
			err = -ENOMEM;
			break;
		}
		routes = r;
		req.count = room;
		req.routes = (uintptr_t)routes;
		if (ioctl(nic->fd, VNET_IOC_ROUTE_LIST, &req)) {
			err = -errno;
			break;
		}
		if (req.count <= room)
			break;
		room = req.count + 64;
	}
	for (i = 0; !err && i < req.count; i++)
		err = fn(arg, routes[i].peer_id, routes[i].mac);
	free(routes);
	return err;
}
