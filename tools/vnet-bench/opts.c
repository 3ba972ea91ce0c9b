// SPDX-License-Identifier: GPL-2.0
/*
 * The command line every benchmark reads the same way: argv[1] names the
 * benchmark, and each option after it is "--name value", "--name=value",
 * or a flag alone.  Which options there are, and what their values may
 * be, is each benchmark's own.
 */
#include <errno.h>
#include <stdlib.h>
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

int bench_parse_u32(const char *s, uint32_t *v, uint32_t max)
{
	unsigned long long x;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	x = strtoull(s, &end, 10);
	if (errno || *end || x > max)
		return -1;
	*v = (uint32_t)x;
	return 0;
}

int bench_parse_sizes(const char *s, uint32_t *sizes, unsigned int max_n,
		      unsigned int *n, uint32_t min, uint32_t max)
{
	char buf[256], *tok, *save;

	if (!s || strlen(s) >= sizeof(buf))
		return -1;
	strcpy(buf, s);
	*n = 0;
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save))
		if (*n == max_n || bench_parse_u32(tok, &sizes[*n], max) ||
		    sizes[(*n)++] < min)
			return -1;
	return *n ? 0 : -1;
}

int bench_parse_seconds(const char *s, double *v)
{
	char *end;
	double x = strtod(s, &end);

	if (end == s || *end || !(x > 0) || x > 3600)
		return -1;
	*v = x;
	return 0;
}
