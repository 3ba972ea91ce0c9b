// SPDX-License-Identifier: GPL-2.0
/*
 * vnet-bench: which benchmark, its usage, and how a benchmark ends.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "vnetctl.h"
#include "vnet-bench.h"

void bench_usage(FILE *f)
{
	fprintf(f,
		"Usage: " BENCH_NAME " <benchmark> [options]\n"
		"\n"
		"Benchmarks:\n"
		"  paging [options]        round trips/s as endpoints outnumber frames\n"
		"      --nic ID            NIC to run on (default 0)\n"
		"      --ratios LIST       endpoints per frame, comma separated\n"
		"                          (default 1,2,4,16)\n"
		"      --seconds S         measured seconds per ratio (default 2)\n"
		"      --warmup S          unmeasured seconds before that (default 0.5)\n"
		"      --csv FILE          also write the result rows as CSV\n"
		"  logp [options]          LogP o_s, o_r, g and L of libvnet messages\n"
		"      --delays LIST       delays after each send in us (default:\n"
		"                          1/8 to 4 round-trip times)\n"
		"      --burst M           requests in a long burst (default 256)\n"
		"  contention [options]    N clients to one server endpoint\n"
		"  vnets [options]         N clients, each with a server endpoint and\n"
		"                          thread of its own, N past the frames\n"
		"      --clients LIST      the N values (default 1, 2, 4 .. frames;\n"
		"                          vnets also 1.5, 2, 3 and 4 x frames)\n"
		"      --client-nic ID     clients on this NIC (default: --nic),\n"
		"                          servers on --nic\n"
		"    options of all three: --nic ID, --seconds S, --warmup S,\n"
		"      --credits K (default 4), --poll (spin, not sleep), --csv FILE\n"
		"  pingpong [options]      round-trip time between two attached NICs\n"
		"      --count N           round trips per size (default 1000)\n"
		"  bw [options]            one-way MB/s between two attached NICs\n"
		"      --seconds S         measured seconds per size (default 2)\n"
		"    options of both: --from vnetA, --to vnetB (default: the two\n"
		"      attached NICs), --sizes LIST (payload bytes, default\n"
		"      0,64,1024,8192), --csv FILE, --pinned (XFERs from\n"
		"      pinned memory, not the client's segment);\n"
		"      --peer NIC:EP instead of --to: the server that\n"
		"      vnet-bench serve runs on another node, its tag in VNET_TAG\n"
		"  serve [--nic vnetN] [--seconds S]\n"
		"                          answer pingpong and bw from other nodes;\n"
		"                          prints NIC:EP and the tag to give them\n"
		"  memcpy [options]        MB/s of memcpy() by message size, the\n"
		"                          limit of a design that copies once\n"
		"      --sizes LIST        bytes (default 64,1024,8192,65536,1048576)\n"
		"      --seconds S         seconds per size (default 1)\n"
		"      --csv FILE          also write the result rows as CSV\n"
		"  help                    show this help\n"
		"\n"
		"Exit status: 0 success, 1 error or benchmark FAIL, 2 usage or a\n"
		"benchmark that stopped making progress.\n");
}

/*
 * A benchmark's last step: its CSV file (if any) and stdout must have been
 * written, or a run that printed PASS still fails.
 */
int bench_finish(FILE *csv, const char *csv_path, int ret)
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
	const char *name = argc > 1 ? argv[1] : NULL;

	vnetctl_prog = BENCH_NAME;
	if (!name) {
		vnetctl_msg("which benchmark? (paging, logp, contention, vnets, "
			    "pingpong, bw, serve, memcpy)");
		bench_usage(stderr);
		return VNETCTL_EXIT_USAGE;
	}
	if (!strcmp(name, "help") || !strcmp(name, "--help") ||
	    !strcmp(name, "-h")) {
		bench_usage(stdout);
		return VNETCTL_EXIT_OK;
	}
	if (!strcmp(name, "paging"))
		return bench_cmd_paging(argc, argv);
	if (bench_am_handles(name))
		return bench_cmd_am(argc, argv);
	if (bench_wire_handles(name))
		return bench_cmd_wire(argc, argv);
	if (!strcmp(name, "memcpy"))
		return bench_cmd_memcpy(argc, argv);

	vnetctl_msg("unknown benchmark '%s'", name);
	bench_usage(stderr);
	return VNETCTL_EXIT_USAGE;
}
