/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Everything vnet-mapd asks of the kernel, in kernel.c: finding the NIC on
 * an interface, making an open /dev/vnet its privileged endpoint, mapper
 * datagrams in and out, the NIC's id, and its routes.  Calls return 0 or a
 * negative errno.
 */
#ifndef VNET_MAPD_KERNEL_H
#define VNET_MAPD_KERNEL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct mapd_nic {
	int fd;				/* the privileged endpoint */
	uint32_t nic_id;		/* the NIC's id now */
	uint8_t mac[6];
	uint32_t mtu;			/* payload bytes of a datagram */
	char name[16];			/* vnetN, as found */
};

/*
 * Open /dev/vnet and make it the privileged endpoint of the NIC attached
 * to @ifname.  On failure @why says which step failed.
 */
int mapd_nic_open(struct mapd_nic *nic, const char *ifname, char *why,
		  size_t len);
void mapd_nic_close(struct mapd_nic *nic);

/* One datagram: its payload into @buf, its sender into @src; -EAGAIN. */
ssize_t mapd_nic_recv(struct mapd_nic *nic, uint8_t src[6], void *buf,
		      size_t len);
int mapd_nic_send(struct mapd_nic *nic, const uint8_t to[6], const void *buf,
		  size_t len);

int mapd_nic_set_id(struct mapd_nic *nic, uint32_t id);
int mapd_nic_route_add(struct mapd_nic *nic, uint32_t peer,
		       const uint8_t mac[6]);
/* A route the NIC does not have is no error. */
int mapd_nic_route_del(struct mapd_nic *nic, uint32_t peer);

/* The NIC's routes: @fn for each, until it returns nonzero. */
int mapd_nic_routes(struct mapd_nic *nic,
		    int (*fn)(void *arg, uint32_t peer, const uint8_t mac[6]),
		    void *arg);

#endif /* VNET_MAPD_KERNEL_H */
