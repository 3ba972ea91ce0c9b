// SPDX-License-Identifier: GPL-2.0
/*
 * A stand-in for the kernel under a real vnet-mapd, for daemon_test.py:
 * preloaded (LD_PRELOAD), it answers for /dev/vnet and for the NIC's
 * ifname in sysfs, and passes every other file through.  The "segment" is
 * a directory of Unix datagram sockets, one per node, named by MAC: a
 * broadcast goes to every socket there.  It tests the daemon's loop,
 * logging, state file and signals, not the kernel's ABI.
 *
 *   FAKEVNET_DIR     the segment's directory
 *   FAKEVNET_MAC     this node's NIC address, 02:00:00:00:00:05
 *   FAKEVNET_IFNAME  the interface its NIC is on
 *   FAKEVNET_ID      the NIC's id when attached
 *
 * The NIC's routes are written to FAKEVNET_DIR/MAC.routes, "peer mac" a
 * line, after every change, for the test to compare.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <linux/vnet.h>

static int dev_fd = -1;
static uint8_t self_mac[6];
static uint32_t nic_id;
static uint8_t routes[VNET_MAX_NIC_ID + 1][6];
static char seg_dir[80];

static int (*real_open)(const char *, int, ...);
static ssize_t (*real_read)(int, void *, size_t);
static ssize_t (*real_write)(int, const void *, size_t);
static int (*real_ioctl)(int, unsigned long, ...);

static void resolve(void)
{
	if (real_open)
		return;
	real_open = dlsym(RTLD_NEXT, "open");
	real_read = dlsym(RTLD_NEXT, "read");
	real_write = dlsym(RTLD_NEXT, "write");
	real_ioctl = dlsym(RTLD_NEXT, "ioctl");
}

static void sock_path(struct sockaddr_un *sa, const uint8_t m[6])
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	snprintf(sa->sun_path, sizeof(sa->sun_path),
		 "%s/%02x%02x%02x%02x%02x%02x.sock", seg_dir, m[0], m[1],
		 m[2], m[3], m[4], m[5]);
}

static int open_dev(void)
{
	const char *dir = getenv("FAKEVNET_DIR");
	const char *mac = getenv("FAKEVNET_MAC");
	const char *id = getenv("FAKEVNET_ID");
	struct sockaddr_un sa;
	unsigned int b[6];
	int i;

	if (!dir || !mac || sscanf(mac, "%x:%x:%x:%x:%x:%x", &b[0], &b[1],
				   &b[2], &b[3], &b[4], &b[5]) != 6) {
		errno = ENOENT;
		return -1;
	}
	snprintf(seg_dir, sizeof(seg_dir), "%s", dir);
	for (i = 0; i < 6; i++)
		self_mac[i] = b[i];
	nic_id = id ? strtoul(id, NULL, 0) : 1;
	dev_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (dev_fd < 0)
		return -1;
	sock_path(&sa, self_mac);
	unlink(sa.sun_path);
	if (bind(dev_fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(dev_fd);
		return dev_fd = -1;
	}
	return dev_fd;
}

/* The sysfs ifname attribute, as a file of its own. */
static int open_ifname(void)
{
	const char *ifname = getenv("FAKEVNET_IFNAME");
	int fd = memfd_create("ifname", MFD_CLOEXEC);

	if (fd < 0)
		return -1;
	dprintf(fd, "%s\n", ifname ? ifname : "");
	lseek(fd, 0, SEEK_SET);
	return fd;
}

int open(const char *path, int flags, ...)
{
	mode_t mode = 0;
	va_list ap;

	resolve();
	if (!strcmp(path, "/dev/vnet"))
		return open_dev();
	if (!strncmp(path, "/sys/class/vnet/", 16) &&
	    strstr(path, "/ifname"))
		return open_ifname();
	if (flags & O_CREAT) {
		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	return real_open(path, flags, mode);
}

static void dump_routes(void)
{
	char path[128], tmp[136];
	uint32_t i;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%02x%02x%02x%02x%02x%02x.routes",
		 seg_dir, self_mac[0], self_mac[1], self_mac[2], self_mac[3],
		 self_mac[4], self_mac[5]);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		return;
	fprintf(f, "nic %u\n", nic_id);
	for (i = 1; i <= VNET_MAX_NIC_ID; i++) {
		const uint8_t *m = routes[i];

		if (m[0] | m[1] | m[2] | m[3] | m[4] | m[5])
			fprintf(f, "%u %02x:%02x:%02x:%02x:%02x:%02x\n", i,
				m[0], m[1], m[2], m[3], m[4], m[5]);
	}
	fclose(f);
	rename(tmp, path);
}

static int dev_ioctl(unsigned long req, void *arg)
{
	static const uint8_t zero[6];

	switch (req) {
	case VNET_IOC_NIC_INFO: {
		struct vnet_nic_info *info = arg;

		if (info->index) {
			errno = ENODEV;
			return -1;
		}
		memset(info, 0, sizeof(*info));
		info->nic_id = nic_id;
		snprintf(info->name, sizeof(info->name), "vnet%u", nic_id);
		return 0;
	}
	case VNET_IOC_PRIV_CREATE: {
		struct vnet_priv_create *pc = arg;

		pc->mtu = VNET_MAPPER_MTU;
		memcpy(pc->mac, self_mac, 6);
		return 0;
	}
	case VNET_IOC_PRIV_SET_ID:
		nic_id = *(uint32_t *)arg;
		dump_routes();
		return 0;
	case VNET_IOC_ROUTE_ADD:
	case VNET_IOC_ROUTE_DEL: {
		struct vnet_route *r = arg;

		if (r->nic_id != nic_id || !r->peer_id ||
		    r->peer_id > VNET_MAX_NIC_ID ||
		    (req == VNET_IOC_ROUTE_ADD && r->peer_id == nic_id)) {
			errno = EINVAL;
			return -1;
		}
		if (req == VNET_IOC_ROUTE_DEL &&
		    !memcmp(routes[r->peer_id], zero, 6)) {
			errno = ENOENT;
			return -1;
		}
		memcpy(routes[r->peer_id], req == VNET_IOC_ROUTE_ADD ?
		       r->mac : zero, 6);
		dump_routes();
		return 0;
	}
	case VNET_IOC_ROUTE_LIST: {
		struct vnet_route_list *l = arg;
		struct vnet_route *out = (void *)(uintptr_t)l->routes;
		uint32_t i, n = 0;

		for (i = 1; i <= VNET_MAX_NIC_ID; i++) {
			if (!memcmp(routes[i], zero, 6))
				continue;
			if (n < l->count) {
				out[n].nic_id = nic_id;
				out[n].peer_id = i;
				memcpy(out[n].mac, routes[i], 6);
			}
			n++;
		}
		l->count = n;
		return 0;
	}
	}
	errno = ENOTTY;
	return -1;
}

int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	void *arg;

	resolve();
	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (fd >= 0 && fd == dev_fd)
		return dev_ioctl(req, arg);
	return real_ioctl(fd, req, arg);
}

ssize_t read(int fd, void *buf, size_t len)
{
	struct vnet_mapper_pkt *hdr = buf;
	uint8_t pkt[6 + VNET_MAPPER_MTU];
	ssize_t n;

	resolve();
	if (fd < 0 || fd != dev_fd)
		return real_read(fd, buf, len);
	n = recv(fd, pkt, sizeof(pkt), 0);
	if (n < 6 || len < sizeof(*hdr) + (size_t)n - 6) {
		if (n >= 0)
			errno = EMSGSIZE;
		return -1;
	}
	memcpy(hdr->mac, pkt, 6);
	hdr->len = n - 6;
	memcpy(hdr + 1, pkt + 6, n - 6);
	return sizeof(*hdr) + n - 6;
}

static void send_to(const uint8_t mac[6], const void *pkt, size_t len)
{
	struct sockaddr_un sa;

	sock_path(&sa, mac);
	/* A full or vanished receiver is a lost datagram. */
	sendto(dev_fd, pkt, len, MSG_DONTWAIT, (struct sockaddr *)&sa,
	       sizeof(sa));
}

ssize_t write(int fd, const void *buf, size_t len)
{
	static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	const struct vnet_mapper_pkt *hdr = buf;
	uint8_t pkt[6 + VNET_MAPPER_MTU];
	struct dirent *de;
	DIR *d;

	resolve();
	if (fd < 0 || fd != dev_fd)
		return real_write(fd, buf, len);
	if (len < sizeof(*hdr) || hdr->len != len - sizeof(*hdr) ||
	    hdr->len > VNET_MAPPER_MTU) {
		errno = EINVAL;
		return -1;
	}
	memcpy(pkt, self_mac, 6);
	memcpy(pkt + 6, hdr + 1, hdr->len);
	if (memcmp(hdr->mac, bcast, 6)) {
		send_to(hdr->mac, pkt, 6 + hdr->len);
		return len;
	}
	d = opendir(seg_dir);
	while (d && (de = readdir(d))) {
		unsigned int b[6];
		uint8_t m[6];
		int i;

		if (sscanf(de->d_name, "%2x%2x%2x%2x%2x%2x.sock", &b[0], &b[1],
			   &b[2], &b[3], &b[4], &b[5]) != 6 ||
		    !strstr(de->d_name, ".sock"))
			continue;
		for (i = 0; i < 6; i++)
			m[i] = b[i];
		if (memcmp(m, self_mac, 6))
			send_to(m, pkt, 6 + hdr->len);
	}
	if (d)
		closedir(d);
	return len;
}
