/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vnet-bench paging: the driver loop (bench_drive.c) and the command
 * around it (bench_paging.c).
 */
#ifndef _VNET_BENCH_PAGING_H
#define _VNET_BENCH_PAGING_H

#include <stdint.h>

#include <vnet/endpoint.h>

#include "vnetctl.h"

#define BENCH_CREDITS		4	/* outstanding requests per endpoint */
#define BENCH_STALL_SEC		10	/* watchdog: no round trip for this long */
#define BENCH_MAX_RATIOS	32

struct bench_cfg {
	uint32_t nic_id;
	char nic_name[64];		/* its directory in /sys/class/vnet */
	double seconds;			/* measured */
	double warmup;			/* before that, not measured */
};

/* What one ratio produced. */
struct bench_result {
	unsigned int ratio;
	uint32_t frames;
	uint32_t endpoints;
	double seconds;			/* measured wall time */
	uint64_t round_trips;
	uint64_t faults;		/* NIC counter deltas over the run */
	uint64_t evictions;
	uint64_t fault_ns;
	struct vnetctl_counters before;	/* the fault breakdown's counters */
	struct vnetctl_counters after;
	uint64_t returned;		/* messages handed back: errors */
	uint64_t returned_reason[VNET_RET_NR + 1];
	uint64_t bad;			/* wrong peer, tag, handler or order */
};

/* bench_drive.c */
int bench_watchdog_start(void);
int bench_run_ratio(const struct bench_cfg *cfg, unsigned int ratio,
		    uint32_t frames, struct bench_result *res);
const char *bench_reason_name(unsigned int reason);

#endif /* _VNET_BENCH_PAGING_H */
