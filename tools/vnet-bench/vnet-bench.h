/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vnet-bench: the benchmarks of vnet's endpoint paging, of libvnet and of
 * the wire.  What the benchmarks share; they read sysfs and report errors
 * with vnetctl's helpers (../vnetctl/vnetctl.h, libvnetctl.a).
 */
#ifndef _VNET_BENCH_H
#define _VNET_BENCH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define BENCH_NAME		"vnet-bench"

/*
 * Exit statuses: VNETCTL_EXIT_OK, _FAIL and _USAGE, and this one when a
 * watchdog saw no progress.
 */
#define BENCH_EXIT_STALL	2

/*
 * opts.c: one option a benchmark takes.  @id is what its parser switches
 * on: two names may share one.
 */
struct bench_opt {
	const char *name;		/* "--nic"; NULL ends a table */
	int id;
	bool flag;			/* takes no value */
};

/*
 * argv[*a]: its entry in @opts, and its value in *val (NULL for a flag);
 * *a is left on the last argument used.  NULL, having said why on stderr,
 * for an option not in @opts, a flag given a value, or no value.
 */
const struct bench_opt *bench_next_opt(const char *bench, int argc,
				       char **argv, int *a,
				       const struct bench_opt *opts,
				       const char **val);
void bench_bad_value(const char *bench, const struct bench_opt *opt,
		     const char *val);

/*
 * Option values, 0 or -1: a decimal from 0 to @max; a comma-separated
 * list of at most @max_n such sizes, each from @min to @max, into @sizes
 * and *@n; seconds, more than 0 and at most an hour.
 */
int bench_parse_u32(const char *s, uint32_t *v, uint32_t max);
int bench_parse_sizes(const char *s, uint32_t *sizes, unsigned int max_n,
		      unsigned int *n, uint32_t min, uint32_t max);
int bench_parse_seconds(const char *s, double *v);

/* main.c */
void bench_usage(FILE *f);
int bench_finish(FILE *csv, const char *csv_path, int ret);

/* The benchmarks; argv[1] names the one to run, its options follow. */
int bench_cmd_paging(int argc, char **argv);	/* bench_paging.c */
bool bench_am_handles(const char *name);	/* bench_am.c */
int bench_cmd_am(int argc, char **argv);
bool bench_wire_handles(const char *name);	/* bench_wire.c */
int bench_cmd_wire(int argc, char **argv);
int bench_cmd_memcpy(int argc, char **argv);	/* bench_memcpy.c */

#endif /* _VNET_BENCH_H */
