// SPDX-License-Identifier: GPL-2.0
/*
 * The command line every benchmark reads the same way: argv[1] names the
 * benchmark, and each option after it is "--name value", "--name=value",
 * or a flag alone.  Which options there are, and what their values may
 * be, is each benchmark's own.
 */
#include <string.h>

#include "vnetctl.h"
#include "vnet-bench.h"

const struct bench_opt *bench_next_opt(const char *bench, int argc,
				       char **argv, int *a,
				       const struct bench_opt *opts,
				       const char **val)
{
	const char *arg = argv[*a], *eq = strchr(arg, '=');
	size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
	const struct bench_opt *opt;

	for (opt = opts; opt->name; opt++)
		if (strlen(opt->name) == len && !strncmp(arg, opt->name, len))
			break;
	if (!opt->name || (opt->flag && eq)) {
		vnetctl_msg("%s: unknown option '%s'", bench, arg);
		return NULL;
	}
	if (opt->flag) {
		*val = NULL;
	} else if (eq) {
		*val = eq + 1;
	} else if (*a + 1 < argc) {
		*val = argv[++*a];
	} else {
		vnetctl_msg("%s: option '%s' needs a value", bench, arg);
		return NULL;
	}
	return opt;
}

void bench_bad_value(const char *bench, const struct bench_opt *opt,
		     const char *val)
{
	vnetctl_msg("%s: bad value '%s' for %s", bench, val, opt->name);
}
