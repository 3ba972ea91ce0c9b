// SPDX-License-Identifier: GPL-2.0
/*
 * vnetctl: command dispatch, usage and error reporting.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vnetctl.h"

void vnetctl_usage(FILE *f)
{
	fprintf(f,
		"Usage: " VNETCTL_NAME " <command> [options]\n"
		"\n"
		"Commands:\n"
		"  status [--json]         NICs, frame residency, paging counters and\n"
		"                          endpoints, from " VNET_SYSFS_CLASS "\n"
		"  top [--interval S] [--once] [--json] [-n COUNT]\n"
		"                          live rates per NIC and busiest endpoints:\n"
		"                          messages, faults, evictions, retransmits/s;\n"
		"                          --interval seconds between screens (default\n"
		"                          1), --once one screen, -n COUNT screens,\n"
		"                          --json one object per screen; q quits\n"
		"  cluster [--json] [--state-dir DIR] [IFNAME...]\n"
		"                          the cluster as each interface's vnet-mapd\n"
		"                          sees it: ids, MACs, leader, table, states\n"
		"  attach IFNAME [--nic-id N] [--frames N]\n"
		"                          put a new NIC on an Ethernet interface,\n"
		"                          with N endpoint frames (default: frames=)\n"
		"  detach vnetN            take a NIC off its interface\n"
		"  route add PEER MAC [--dev vnetN]\n"
		"  route del PEER [--dev vnetN]\n"
		"  route list [--dev vnetN]\n"
		"                          where peer NIC ids live on the wire\n"
		"  help                    show this help\n"
		"\n"
		"Exit status: 0 success, 1 error, 2 usage.\n");
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : NULL;

	if (!cmd) {
		vnetctl_usage(stderr);
		return VNETCTL_EXIT_USAGE;
	}
	if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") ||
	    !strcmp(cmd, "-h")) {
		vnetctl_usage(stdout);
		return 0;
	}
	if (!strcmp(cmd, "status"))
		return vnetctl_cmd_status(argc - 1, argv + 1);
	if (!strcmp(cmd, "top"))
		return vnetctl_cmd_top(argc - 1, argv + 1);
	if (!strcmp(cmd, "cluster"))
		return vnetctl_cmd_cluster(argc - 1, argv + 1);
	if (!strcmp(cmd, "attach"))
		return vnetctl_cmd_attach(argc - 1, argv + 1);
	if (!strcmp(cmd, "detach"))
		return vnetctl_cmd_detach(argc - 1, argv + 1);
	if (!strcmp(cmd, "route"))
		return vnetctl_cmd_route(argc - 1, argv + 1);
	if (!strcmp(cmd, "bench")) {
		vnetctl_msg("the benchmarks are vnet-bench(1) now: vnet-bench %s",
			    argc > 2 ? argv[2] : "BENCHMARK");
		return VNETCTL_EXIT_USAGE;
	}
	vnetctl_msg("unknown command '%s'", cmd);
	vnetctl_usage(stderr);
	return VNETCTL_EXIT_USAGE;
}
