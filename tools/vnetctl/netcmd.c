// SPDX-License-Identifier: GPL-2.0
/*
 * vnetctl attach / detach / route: putting NICs on Ethernet interfaces and
 * telling them where their peers are.  All need CAP_NET_ADMIN, route list
 * too: the routes are the cluster's map.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/vnet.h>

#include "vnetctl.h"

static int open_dev(void)
{
	int fd = open("/dev/vnet", O_RDWR | O_CLOEXEC);

	if (fd < 0)
		vnetctl_err(errno, "/dev/vnet");
	return fd;
}

static int parse_u32(const char *s, uint32_t *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || !*s || *end || v > UINT32_MAX)
		return -1;
	*out = v;
	return 0;
}

/* "vnet3" or "3" */
static int parse_nic(const char *s, uint32_t *out)
{
	if (!strncmp(s, "vnet", 4))
		s += 4;
	return parse_u32(s, out);
}

static int parse_mac(const char *s, uint8_t mac[6])
{
	unsigned int b[6];
	char extra;
	int i;

	if (sscanf(s, "%x:%x:%x:%x:%x:%x%c", &b[0], &b[1], &b[2], &b[3],
		   &b[4], &b[5], &extra) != 6)
		return -1;
	for (i = 0; i < 6; i++) {
		if (b[i] > 0xff)
			return -1;
		mac[i] = b[i];
	}
	return 0;
}

/* vnetctl attach IFNAME [--nic-id N] [--frames N] */
int vnetctl_cmd_attach(int argc, char **argv)
{
	struct vnet_attach req = { .nic_id = VNET_NIC_ID_ANY };
	bool numbered = false;
	int a, fd, err;

	if (argc < 2 || argv[1][0] == '-') {
		vnetctl_usage(stderr);
		return VNETCTL_EXIT_USAGE;
	}
	for (a = 2; a < argc; a += 2) {
		uint32_t *val;

		if (!strcmp(argv[a], "--nic-id")) {
			val = &req.nic_id;
			numbered = true;
		} else if (!strcmp(argv[a], "--frames")) {
			val = &req.frames;
		} else {
			vnetctl_msg("attach: unknown option '%s'", argv[a]);
			vnetctl_usage(stderr);
			return VNETCTL_EXIT_USAGE;
		}
		if (a + 1 == argc || parse_u32(argv[a + 1], val)) {
			vnetctl_msg("attach: bad value '%s' for %s",
				    a + 1 < argc ? argv[a + 1] : "", argv[a]);
			return VNETCTL_EXIT_USAGE;
		}
	}
	if (strlen(argv[1]) >= sizeof(req.ifname)) {
		vnetctl_msg("attach: interface name '%s' too long", argv[1]);
		return VNETCTL_EXIT_USAGE;
	}
	strcpy(req.ifname, argv[1]);
	fd = open_dev();
	if (fd < 0)
		return VNETCTL_EXIT_FAIL;
	err = ioctl(fd, VNET_IOC_ATTACH, &req) ? errno : 0;
	close(fd);
	if (err == EINVAL && req.frames &&
	    (req.frames < 2 || req.frames > VNET_MAX_FRAMES)) {
		vnetctl_msg("attach %s: --frames must be 2 to %u", argv[1],
			    VNET_MAX_FRAMES);
		return VNETCTL_EXIT_FAIL;
	}
	if (err) {
		vnetctl_err(err, "attach %s", argv[1]);
		return VNETCTL_EXIT_FAIL;
	}
	if (numbered)
		printf("vnet%" PRIu32 " attached to %s as NIC %" PRIu32 "\n",
		       req.nic_id, argv[1], req.nic_id);
	else
		printf("vnet%" PRIu32 " attached to %s, unnumbered: vnet-mapd "
		       "%s gives it its id\n", req.nic_id, argv[1], argv[1]);
	return VNETCTL_EXIT_OK;
}

/* vnetctl detach vnetN */
int vnetctl_cmd_detach(int argc, char **argv)
{
	uint32_t id;
	int fd, err;

	if (argc != 2 || parse_nic(argv[1], &id)) {
		vnetctl_usage(stderr);
		return VNETCTL_EXIT_USAGE;
	}
	fd = open_dev();
	if (fd < 0)
		return VNETCTL_EXIT_FAIL;
	err = ioctl(fd, VNET_IOC_DETACH, &id) ? errno : 0;
	close(fd);
	if (err) {
		vnetctl_err(err, "detach %s", argv[1]);
		return VNETCTL_EXIT_FAIL;
	}
	return VNETCTL_EXIT_OK;
}

/* The only attached NIC, for route commands without --dev. */
static int default_nic(uint32_t *id)
{
	struct vnetctl_nic *nics;
	size_t nr, i, found = 0;
	int err = vnetctl_read_nics(&nics, &nr, false);

	if (err)
		return vnetctl_sysfs_error(err);
	for (i = 0; i < nr; i++) {
		if (nics[i].ifname[0]) {
			*id = nics[i].nic_id;
			found++;
		}
	}
	vnetctl_free_nics(nics, nr);
	if (found == 1)
		return 0;
	vnetctl_msg("route: %s; name one with --dev vnetN",
		    found ? "several NICs are attached" : "no NIC is attached");
	return VNETCTL_EXIT_USAGE;
}

static int route_list(int fd, uint32_t nic_id)
{
	struct vnet_route routes[VNET_MAX_NIC_ID / 16];
	struct vnet_route_list req = {
		.nic_id = nic_id,
		.count = ARRAY_SIZE(routes),
		.routes = (uintptr_t)routes,
	};
	uint32_t i;

	if (ioctl(fd, VNET_IOC_ROUTE_LIST, &req)) {
		if (errno == EPERM)
			vnetctl_msg("route list vnet%" PRIu32
				    ": needs CAP_NET_ADMIN", nic_id);
		else
			vnetctl_err(errno, "route list vnet%" PRIu32, nic_id);
		return VNETCTL_EXIT_FAIL;
	}
	printf("%-8s %-8s %s\n", "NIC", "PEER", "MAC");
	for (i = 0; i < req.count && i < ARRAY_SIZE(routes); i++) {
		const uint8_t *m = routes[i].mac;

		printf("vnet%-4" PRIu32 " %-8" PRIu32
		       " %02x:%02x:%02x:%02x:%02x:%02x\n", nic_id,
		       routes[i].peer_id, m[0], m[1], m[2], m[3], m[4], m[5]);
	}
	return VNETCTL_EXIT_OK;
}

/*
 * vnetctl route add PEER MAC [--dev vnetN]
 * vnetctl route del PEER [--dev vnetN]
 * vnetctl route list [--dev vnetN]
 */
int vnetctl_cmd_route(int argc, char **argv)
{
	struct vnet_route r = {};
	const char *op = argc > 1 ? argv[1] : "";
	int nargs = !strcmp(op, "add") ? 2 : !strcmp(op, "del") ? 1 : 0;
	int fd, err, ret;

	if (!nargs && strcmp(op, "list"))
		goto usage;
	if (argc == nargs + 4 && !strcmp(argv[nargs + 2], "--dev")) {
		if (parse_nic(argv[nargs + 3], &r.nic_id))
			goto usage;
	} else if (argc != nargs + 2) {
		goto usage;
	} else {
		ret = default_nic(&r.nic_id);
		if (ret)
			return ret;
	}
	if (nargs && parse_u32(argv[2], &r.peer_id)) {
		vnetctl_msg("route: bad NIC id '%s'", argv[2]);
		return VNETCTL_EXIT_USAGE;
	}
	if (nargs == 2 && parse_mac(argv[3], r.mac)) {
		vnetctl_msg("route: bad MAC address '%s'", argv[3]);
		return VNETCTL_EXIT_USAGE;
	}

	fd = open_dev();
	if (fd < 0)
		return VNETCTL_EXIT_FAIL;
	if (!nargs) {
		ret = route_list(fd, r.nic_id);
		close(fd);
		return ret;
	}
	err = ioctl(fd, nargs == 2 ? VNET_IOC_ROUTE_ADD : VNET_IOC_ROUTE_DEL,
		    &r) ? errno : 0;
	close(fd);
	if (err) {
		vnetctl_err(err, "route %s %s", op, argv[2]);
		return VNETCTL_EXIT_FAIL;
	}
	return VNETCTL_EXIT_OK;
usage:
	vnetctl_usage(stderr);
	return VNETCTL_EXIT_USAGE;
}
