// SPDX-License-Identifier: GPL-2.0
/*
 * vnetctl: command dispatch, usage and error reporting.
 */
#include <errno.h>
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
		"  bench paging [options]  round trips/s as endpoints outnumber frames\n"
		"      --nic ID            NIC to run on (default 0)\n"
		"      --ratios LIST       endpoints per frame, comma separated\n"
		"                          (default 1,2,4,16)\n"
		"      --seconds S         measured seconds per ratio (default 2)\n"
		"      --warmup S          unmeasured seconds before that (default 0.5)\n"
		"      --csv FILE          also write the result rows as CSV\n"
		"  bench logp [options]    LogP o_s, o_r, g and L of libvnet messages\n"
		"      --delays LIST       delays after each send in us (default:\n"
		"                          1/8 to 4 round-trip times)\n"
		"      --burst M           requests in a long burst (default 256)\n"
		"  bench contention [options]\n"
		"                          N clients to one server endpoint\n"
		"  bench vnets [options]   N clients, each with a server endpoint and\n"
		"                          thread of its own, N past the frames\n"
		"      --clients LIST      the N values (default 1, 2, 4 .. frames;\n"
		"                          vnets also 1.5, 2, 3 and 4 x frames)\n"
		"      --client-nic ID     clients on this NIC (default: --nic),\n"
		"                          servers on --nic\n"
		"    options of all three: --nic ID, --seconds S, --warmup S,\n"
		"      --credits K (default 4), --poll (spin, not sleep), --csv FILE\n"
		"  bench pingpong [options]\n"
		"                          round-trip time between two attached NICs\n"
		"      --count N           round trips per size (default 1000)\n"
		"  bench bw [options]      one-way MB/s between two attached NICs\n"
		"      --seconds S         measured seconds per size (default 2)\n"
		"    options of both: --from vnetA, --to vnetB (default: the two\n"
		"      attached NICs), --sizes LIST (payload bytes, default\n"
		"      0,64,1024,8192), --csv FILE;\n"
		"      --peer NIC:EP instead of --to: the server that bench\n"
		"      serve runs on another node, its tag in VNET_TAG\n"
		"  bench serve [--nic vnetN] [--seconds S]\n"
		"                          answer pingpong and bw from other nodes;\n"
		"                          prints NIC:EP and the tag to give them\n"
		"  help                    show this help\n"
		"\n"
		"Exit status: 0 success, 1 error or benchmark FAIL, 2 usage or a\n"
		"benchmark that stopped making progress.\n");
}

/*
 * A benchmark's last step: its CSV file (if any) and stdout must have been
 * written, or a run that printed PASS still fails.
 */
int vnetctl_bench_finish(FILE *csv, const char *csv_path, int ret)
{
	if (vnetctl_fclose(csv, csv_path))
		ret = VNETCTL_EXIT_FAIL;
	if (fflush(stdout) && ret == VNETCTL_EXIT_OK) {
		vnetctl_err(errno, "stdout");
		ret = VNETCTL_EXIT_FAIL;
	}
	return ret;
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
	if (!strcmp(cmd, "bench"))
		return vnetctl_cmd_bench(argc - 1, argv + 1);
	if (!strcmp(cmd, "attach"))
		return vnetctl_cmd_attach(argc - 1, argv + 1);
	if (!strcmp(cmd, "detach"))
		return vnetctl_cmd_detach(argc - 1, argv + 1);
	if (!strcmp(cmd, "route"))
		return vnetctl_cmd_route(argc - 1, argv + 1);

	vnetctl_msg("unknown command '%s'", cmd);
	vnetctl_usage(stderr);
	return VNETCTL_EXIT_USAGE;
}
