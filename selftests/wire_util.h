/* SPDX-License-Identifier: GPL-2.0 */
/* Selftest helpers for NICs on the two ends of a veth pair. */
#ifndef _VNET_SELFTEST_WIRE_UTIL_H
#define _VNET_SELFTEST_WIRE_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "vnet_util.h"

/* Run @cmd with sh -c: its exit status, or -1. */
static inline int vnet_sh(const char *cmd)
{
	int st = system(cmd);

	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The vnetctl built beside the selftests. */
static inline const char *vnet_vnetctl(void)
{
	static char path[512];

	if (!path[0]) {
		char *here = realpath("/proc/self/exe", NULL);

		snprintf(path, sizeof(path), "%s", here ? here : ".");
		free(here);
		*strrchr(path, '/') = 0;
		strncat(path, "/../tools/vnetctl/vnetctl",
			sizeof(path) - strlen(path) - 1);
	}
	return path;
}

/* Detach NICs @nic0 and @nic1 and delete the veth pair of @if0. */
static inline void vnet_veth_down(const char *if0, int nic0, int nic1)
{
	char cmd[2048];

	snprintf(cmd, sizeof(cmd),
		 "%s detach vnet%d 2>/dev/null; %s detach vnet%d 2>/dev/null; "
		 "ip link del %s 2>/dev/null", vnet_vnetctl(), nic0,
		 vnet_vnetctl(), nic1, if0);
	vnet_sh(cmd);
}

/*
 * A veth pair @if0-@if1 of @mtu, NIC @nic0 attached to @if0 and @nic1 to
 * @if1, each with a route to the other, and netem @netem on both ends
 * unless NULL or empty.
 */
static inline int vnet_veth_up(const char *if0, const char *if1, int nic0,
			       int nic1, int mtu, const char *netem)
{
	const char *ctl = vnet_vnetctl();
	char cmd[4096];

	snprintf(cmd, sizeof(cmd),
		 "modprobe veth && modprobe sch_netem && "
		 "ip link add %s type veth peer name %s && "
		 "ip link set %s mtu %d up && ip link set %s mtu %d up && "
		 "%s attach %s --nic-id %d >/dev/null && "
		 "%s attach %s --nic-id %d >/dev/null && "
		 "%s route add %d $(cat /sys/class/net/%s/address) --dev vnet%d && "
		 "%s route add %d $(cat /sys/class/net/%s/address) --dev vnet%d",
		 if0, if1, if0, mtu, if1, mtu, ctl, if0, nic0, ctl, if1, nic1,
		 ctl, nic1, if1, nic0, ctl, nic0, if0, nic1);
	if (vnet_sh(cmd))
		return -1;
	if (netem && *netem) {
		snprintf(cmd, sizeof(cmd),
			 "tc qdisc add dev %s root netem %s && "
			 "tc qdisc add dev %s root netem %s", if0, netem, if1,
			 netem);
		if (vnet_sh(cmd))
			return -1;
	}
	return 0;
}

/* Counter @name of NIC @nic's firmware, from sysfs; -1 if unreadable. */
static inline long long vnet_nic_stat(int nic, const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), "/sys/class/vnet/vnet%d/stats/%s", nic,
		 name);
	return vnet_read_ll(path);
}

#endif
