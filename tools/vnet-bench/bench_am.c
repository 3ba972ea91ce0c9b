// SPDX-License-Identifier: GPL-2.0
/*
 * vnet-bench logp | contention | vnets: options, the NIC they run on,
 * and what the three share -- time, checks, the handler for returned
 * messages and the CSV file.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vnetctl.h"
#include "vnet-bench.h"
#include "bench_am.h"

volatile uint64_t amb_errors;

double amb_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Busy-wait: the LogP delay is computation, not sleep. */
void amb_spin_until(double t)
{
	while (amb_now() < t)
		;
}

int amb_check(int err, const char *what)
{
	if (err != AM_OK)
		vnetctl_msg("%s: AM error %d", what, err);
	return err;
}

/* Nothing should come back: count it, say why once in a while. */
void amb_returned(int status, op_t opcode, void *token)
{
	uint64_t n = __atomic_add_fetch(&amb_errors, 1, __ATOMIC_RELAXED);
	en_t dest;

	if (n > 5)
		return;
	if (AM_GetSourceEndpoint(token, &dest))
		dest.nic = dest.ep = ~0u;
	vnetctl_msg("message to %u:%u returned: status %d, opcode %d",
		    dest.nic, dest.ep, status, opcode);
}

FILE *amb_csv_open(const struct amb_opts *o, const char *header)
{
	FILE *f;

	if (!o->csv)
		return NULL;
	f = fopen(o->csv, "w");
	if (!f) {
		vnetctl_err(errno, "%s", o->csv);
		return NULL;
	}
	fputs(header, f);
	return f;
}

enum amb_kind { AMB_LOGP, AMB_CONTENTION, AMB_VNETS, AMB_NR };

static const char * const amb_names[AMB_NR] = {
	[AMB_LOGP] = "logp",
	[AMB_CONTENTION] = "contention",
	[AMB_VNETS] = "vnets",
};

bool bench_am_handles(const char *name)
{
	int k;

	for (k = 0; k < AMB_NR; k++)
		if (!strcmp(name, amb_names[k]))
			return true;
	return false;
}

static int amb_parse_double(const char *s, double *v, double min, double max)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(*v) || *v < min || *v > max)
		return -EINVAL;
	return 0;
}

/* A comma-separated list; each entry times @scale, at most @max. */
static int amb_parse_list(const char *s, struct amb_opts *o, double scale,
			  double max)
{
	char buf[512], *tok, *save;
	double v;

	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, s);
	o->nr_points = 0;
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (o->nr_points == AMB_MAX_POINTS ||
		    amb_parse_double(tok, &v, 0, max))
			return -EINVAL;
		o->points[o->nr_points++] = (unsigned int)lround(v * scale);
	}
	return o->nr_points ? 0 : -EINVAL;
}

/* Every entry of a client list is at least 1. */
static int amb_parse_clients(const char *v, struct amb_opts *o)
{
	unsigned int i;
	int err = amb_parse_list(v, o, 1, 512);

	for (i = 0; !err && i < o->nr_points; i++)
		if (!o->points[i])
			err = -EINVAL;
	return err;
}

enum {
	OPT_NIC, OPT_SECONDS, OPT_WARMUP, OPT_CSV, OPT_CREDITS, OPT_POLL,
	OPT_CLIENTS, OPT_CLIENT_NIC, OPT_DELAYS, OPT_BURST,
};

static const struct bench_opt logp_opts[] = {
	{ "--nic", OPT_NIC, false },
	{ "--seconds", OPT_SECONDS, false },
	{ "--warmup", OPT_WARMUP, false },
	{ "--csv", OPT_CSV, false },
	{ "--credits", OPT_CREDITS, false },
	{ "--poll", OPT_POLL, true },
	{ "--delays", OPT_DELAYS, false },
	{ "--burst", OPT_BURST, false },
	{ NULL, 0, false }
};

/* contention and vnets: those of logp but its last two, and two more */
static const struct bench_opt load_opts[] = {
	{ "--nic", OPT_NIC, false },
	{ "--seconds", OPT_SECONDS, false },
	{ "--warmup", OPT_WARMUP, false },
	{ "--csv", OPT_CSV, false },
	{ "--credits", OPT_CREDITS, false },
	{ "--poll", OPT_POLL, true },
	{ "--clients", OPT_CLIENTS, false },
	{ "--client-nic", OPT_CLIENT_NIC, false },
	{ NULL, 0, false }
};

/* One option and its value. */
static int amb_option(int id, const char *v, struct amb_opts *o)
{
	double d;
	int err = 0;

	switch (id) {
	case OPT_NIC:
		err = amb_parse_double(v, &d, 0, VNET_MAX_NIC_ID);
		o->nic_id = (uint32_t)d;
		break;
	case OPT_SECONDS:
		err = amb_parse_double(v, &o->seconds, 0.01, 3600);
		break;
	case OPT_WARMUP:
		err = amb_parse_double(v, &o->warmup, 0, 3600);
		break;
	case OPT_CSV:
		o->csv = v;
		err = *v ? 0 : -EINVAL;
		break;
	case OPT_CREDITS:
		err = amb_parse_double(v, &d, 1, AMVNET_MAX_CREDITS);
		o->credits = (int)d;
		break;
	case OPT_POLL:
		o->poll = true;
		break;
	case OPT_CLIENTS:
		err = amb_parse_clients(v, o);
		break;
	case OPT_CLIENT_NIC:
		err = amb_parse_double(v, &d, 0, VNET_MAX_NIC_ID);
		o->client_nic_id = (uint32_t)d;
		o->remote_clients = true;
		break;
	case OPT_DELAYS:
		err = amb_parse_list(v, o, 1000, 1e6);	/* us -> ns */
		break;
	case OPT_BURST:
		err = amb_parse_double(v, &d, 1, 1 << 20);
		o->burst = (unsigned int)d;
		break;
	}
	return err;
}

static int amb_parse(enum amb_kind kind, int argc, char **argv,
		     struct amb_opts *o)
{
	const struct bench_opt *opts = kind == AMB_LOGP ? logp_opts : load_opts;
	const struct bench_opt *opt;
	const char *v;
	int a;

	for (a = 2; a < argc; a++) {
		opt = bench_next_opt(amb_names[kind], argc, argv, &a, opts, &v);
		if (!opt)
			return -EINVAL;
		if (amb_option(opt->id, v, o)) {
			bench_bad_value(amb_names[kind], opt, v);
			return -EINVAL;
		}
	}
	return 0;
}

/*
 * contention: 1, 2, 4 ... up to one less than the frames, so the clients
 * and the server all fit on the card; vnets: 1, 2, 4 ... up to the frames,
 * then 1.5, 2, 3 and 4 times the frames.
 */
static void amb_default_clients(struct amb_opts *o, uint32_t frames,
				bool beyond)
{
	static const unsigned int mult[] = { 3, 4, 6, 8 };	/* halves */
	unsigned int n, i, top = beyond ? frames : frames - 1;

	o->nr_points = 0;
	for (n = 1; n < top; n *= 2)
		o->points[o->nr_points++] = n;
	o->points[o->nr_points++] = top ? top : 1;
	if (!beyond)
		return;
	for (i = 0; i < sizeof(mult) / sizeof(mult[0]); i++)
		if (frames * mult[i] / 2 > o->points[o->nr_points - 1])
			o->points[o->nr_points++] = frames * mult[i] / 2;
}

/* NIC @id's sysfs name and frames; an exit status on failure. */
static int amb_find_nic(uint32_t id, char *name, size_t len, uint32_t *frames)
{
	struct vnetctl_nic nic;
	int err;

	err = vnetctl_find_nic(id, &nic, false);
	if (err == -ENXIO) {
		vnetctl_err(ENODEV, "NIC %" PRIu32, id);
		return VNETCTL_EXIT_FAIL;
	}
	if (err)
		return vnetctl_sysfs_error(err);
	snprintf(name, len, "%s", nic.name);
	*frames = nic.frames;
	vnetctl_nic_release(&nic);
	return 0;
}

int bench_cmd_am(int argc, char **argv)
{
	struct amb_opts o;
	enum amb_kind kind;
	int err;

	for (kind = 0; kind < AMB_NR; kind++)
		if (!strcmp(argv[1], amb_names[kind]))
			break;
	memset(&o, 0, sizeof(o));
	o.seconds = kind == AMB_LOGP ? 0.3 : 1;
	o.warmup = kind == AMB_LOGP ? 0.1 : 0.3;
	o.credits = AMVNET_DEFAULT_CREDITS;
	o.burst = 256;
	if (kind == AMB_NR || amb_parse(kind, argc, argv, &o)) {
		bench_usage(stderr);
		return VNETCTL_EXIT_USAGE;
	}
	err = amb_find_nic(o.nic_id, o.nic_name, sizeof(o.nic_name),
			   &o.frames);
	/* The clients' NIC named as the servers' is no other NIC. */
	if (!err && o.remote_clients && o.client_nic_id == o.nic_id)
		o.remote_clients = false;
	if (!err && o.remote_clients)
		err = amb_find_nic(o.client_nic_id, o.client_nic_name,
				   sizeof(o.client_nic_name), &o.client_frames);
	if (err)
		return err;
	if (!o.nr_points && kind != AMB_LOGP)
		amb_default_clients(&o, o.frames ? o.frames : 1,
				    kind == AMB_VNETS);

	if (amb_check(AM_Init(), "AM_Init"))
		return VNETCTL_EXIT_FAIL;
	amb_errors = 0;
	switch (kind) {
	case AMB_LOGP:
		err = amb_logp(&o);
		break;
	case AMB_CONTENTION:
		err = amb_contention(&o);
		break;
	default:
		err = amb_vnets(&o);
		break;
	}
	AM_Terminate();
	if (!err && amb_errors) {
		printf("FAIL: %" PRIu64 " messages returned\n", amb_errors);
		err = VNETCTL_EXIT_FAIL;
	} else if (!err) {
		printf("PASS\n");
	}
	return bench_finish(NULL, NULL, err);
}
