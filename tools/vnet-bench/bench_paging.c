// SPDX-License-Identifier: GPL-2.0
/*
 * vnet-bench paging: round trips per second as the endpoints of one
 * process outnumber the NIC's frames 1, 2, 4, 16... to one.  Options, the
 * result table and the CSV file; the driving is in bench_drive.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "vnetctl.h"
#include "vnet-bench.h"
#include "bench.h"

struct bench_opts {
	struct bench_cfg cfg;
	unsigned int ratios[BENCH_MAX_RATIOS];
	unsigned int nr_ratios;
	const char *csv;
};

static int parse_u32(const char *s, uint32_t *val)
{
	unsigned long long v;
	char *end;

	if (!*s || *s == '-')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end || v > UINT32_MAX)
		return -EINVAL;
	*val = (uint32_t)v;
	return 0;
}

static int parse_seconds(const char *s, double *val, bool zero_ok)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v < 0 ||
	    (!zero_ok && v == 0) || v > 86400)
		return -EINVAL;
	*val = v;
	return 0;
}

static int parse_ratios(const char *s, struct bench_opts *o)
{
	char buf[256], *tok, *save;

	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, s);
	o->nr_ratios = 0;
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		uint32_t r;

		if (o->nr_ratios == BENCH_MAX_RATIOS || parse_u32(tok, &r) ||
		    !r || r > 4096)
			return -EINVAL;
		o->ratios[o->nr_ratios++] = r;
	}
	return o->nr_ratios ? 0 : -EINVAL;
}

enum { OPT_NIC, OPT_RATIOS, OPT_SECONDS, OPT_WARMUP, OPT_CSV };

static const struct bench_opt paging_opts[] = {
	{ "--nic", OPT_NIC, false },
	{ "--ratios", OPT_RATIOS, false },
	{ "--seconds", OPT_SECONDS, false },
	{ "--warmup", OPT_WARMUP, false },
	{ "--csv", OPT_CSV, false },
	{ NULL, 0, false }
};

static int parse_opts(int argc, char **argv, struct bench_opts *o)
{
	static const unsigned int defaults[] = { 1, 2, 4, 16 };
	const struct bench_opt *opt;
	const char *v;
	int a, err;

	memset(o, 0, sizeof(*o));
	o->cfg.seconds = 2;
	o->cfg.warmup = 0.5;
	o->nr_ratios = ARRAY_SIZE(defaults);
	memcpy(o->ratios, defaults, sizeof(defaults));

	for (a = 2; a < argc; a++) {
		opt = bench_next_opt("paging", argc, argv, &a, paging_opts, &v);
		if (!opt)
			return -EINVAL;
		switch (opt->id) {
		case OPT_NIC:
			err = parse_u32(v, &o->cfg.nic_id);
			break;
		case OPT_RATIOS:
			err = parse_ratios(v, o);
			break;
		case OPT_SECONDS:
			err = parse_seconds(v, &o->cfg.seconds, false);
			break;
		case OPT_WARMUP:
			err = parse_seconds(v, &o->cfg.warmup, true);
			break;
		default:	/* OPT_CSV */
			o->csv = v;
			err = *v ? 0 : -EINVAL;
			break;
		}
		if (err) {
			bench_bad_value("paging", opt, v);
			return err;
		}
	}
	return 0;
}

static void mean_us(const struct bench_result *r, char *buf, size_t len,
		    const char *none)
{
	if (!r->faults)
		snprintf(buf, len, "%s", none);
	else
		snprintf(buf, len, "%.1f", (double)r->fault_ns / r->faults / 1e3);
}

static double per_sec(const struct bench_result *r)
{
	return r->seconds > 0 ? (double)r->round_trips / r->seconds : 0;
}

static void print_header(const struct bench_opts *o)
{
	printf(BENCH_NAME " paging: NIC %" PRIu32 ", %.1f s per ratio after "
	       "%.1f s warm-up, %d requests outstanding per endpoint\n",
	       o->cfg.nic_id, o->cfg.seconds, o->cfg.warmup, BENCH_CREDITS);
	printf("%5s %9s %6s %12s %12s %8s %9s %9s %8s", "RATIO", "ENDPOINTS",
	       "FRAMES", "ROUNDTRIP/S", "MESSAGES/S", "FAULTS", "EVICTIONS",
	       "FAULT_US", "ERRORS");
	/* FAULT_US is there already, before the columns that split it. */
	vnetctl_cols_head(stdout, VNETCTL_COL_FAULT_US + 1);
	putchar('\n');
	fflush(stdout);
}

static void print_row(const struct bench_result *r)
{
	char mean[32];

	mean_us(r, mean, sizeof(mean), "-");
	printf("%5u %9" PRIu32 " %6" PRIu32 " %12.1f %12.1f %8" PRIu64
	       " %9" PRIu64 " %9s %8" PRIu64,
	       r->ratio, r->endpoints, r->frames, per_sec(r), 2 * per_sec(r),
	       r->faults, r->evictions, mean, r->returned + r->bad);
	vnetctl_cols_row(stdout, VNETCTL_COL_FAULT_US + 1, &r->before,
			 &r->after, r->seconds);
	putchar('\n');
	fflush(stdout);
}

static const char csv_header[] =
	"ratio,endpoints,frames,seconds,round_trips,round_trips_per_s,"
	"messages_per_s,faults,evictions,mean_fault_us,returned,bad";

static void csv_row(FILE *f, const struct bench_result *r)
{
	char mean[32];

	mean_us(r, mean, sizeof(mean), "");
	fprintf(f, "%u,%" PRIu32 ",%" PRIu32 ",%.3f,%" PRIu64 ",%.1f,%.1f,%"
		PRIu64 ",%" PRIu64 ",%s,%" PRIu64 ",%" PRIu64,
		r->ratio, r->endpoints, r->frames, r->seconds, r->round_trips,
		per_sec(r), 2 * per_sec(r), r->faults, r->evictions, mean,
		r->returned, r->bad);
	vnetctl_cols_csv_row(f, VNETCTL_COL_FAULT_US + 1, &r->before,
			     &r->after, r->seconds);
	fputc('\n', f);
	fflush(f);
}

/* A ratio's errors on stderr, the returned messages by reason. */
static void print_errors(const struct bench_result *r)
{
	unsigned int reason;

	if (!r->returned && !r->bad)
		return;
	fflush(stdout);
	fprintf(stderr, BENCH_NAME ": paging: ratio %u: %" PRIu64
		" returned, %" PRIu64 " bad messages", r->ratio, r->returned,
		r->bad);
	for (reason = 0; reason <= VNET_RET_NR; reason++)
		if (r->returned_reason[reason])
			fprintf(stderr, ", %s %" PRIu64,
				bench_reason_name(reason),
				r->returned_reason[reason]);
	fputc('\n', stderr);
}

int bench_cmd_paging(int argc, char **argv)
{
	struct vnetctl_nic nic;
	struct bench_opts o;
	FILE *csv = NULL;
	unsigned int n;
	int err, ret = VNETCTL_EXIT_OK;

	if (parse_opts(argc, argv, &o)) {
		bench_usage(stderr);
		return VNETCTL_EXIT_USAGE;
	}

	err = vnetctl_find_nic(o.cfg.nic_id, &nic, false);
	if (err == -ENXIO) {
		vnetctl_err(ENODEV, "NIC %" PRIu32, o.cfg.nic_id);
		return VNETCTL_EXIT_FAIL;
	}
	if (err)
		return vnetctl_sysfs_error(err);
	snprintf(o.cfg.nic_name, sizeof(o.cfg.nic_name), "%s", nic.name);
	if (!nic.frames) {
		vnetctl_msg("NIC %" PRIu32 " has no frames", o.cfg.nic_id);
		return VNETCTL_EXIT_FAIL;
	}

	if (o.csv) {
		csv = fopen(o.csv, "w");
		if (!csv) {
			vnetctl_err(errno, "%s", o.csv);
			return VNETCTL_EXIT_FAIL;
		}
		fputs(csv_header, csv);
		vnetctl_cols_csv_head(csv, VNETCTL_COL_FAULT_US + 1);
		fputc('\n', csv);
	}
	if (bench_watchdog_start()) {
		ret = VNETCTL_EXIT_FAIL;
		goto out;
	}

	print_header(&o);
	for (n = 0; n < o.nr_ratios; n++) {
		struct bench_result r;

		if (bench_run_ratio(&o.cfg, o.ratios[n], nic.frames, &r)) {
			ret = VNETCTL_EXIT_FAIL;
			goto out;
		}
		print_row(&r);
		if (csv)
			csv_row(csv, &r);
		print_errors(&r);
	}
out:
	return bench_finish(csv, o.csv, ret);
}
