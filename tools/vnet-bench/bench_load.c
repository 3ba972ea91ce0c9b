// SPDX-License-Identifier: GPL-2.0
/*
 * vnet-bench contention and vnets: N clients keep K requests each
 * outstanding to a server, and we count the round trips, in all and per
 * client -- the NOW paper's section 5.3 and 5.4.
 *
 *  contention: every client sends to one server endpoint (one virtual
 *              network); one server thread answers (figure 7).
 *  vnets:      every client has a server endpoint of its own (N virtual
 *              networks), each answered by a thread of its own asleep in
 *              AM_WaitSema, as the paper's server for figure 11.  N runs
 *              past the NIC's frames, so the server endpoints page.
 *
 * Everything runs in this process, one thread per client and per server
 * endpoint; with --poll the threads spin in AM_Poll instead of sleeping.
 * The clients share the servers' NIC and its frames, unless --client-nic
 * puts them on another one (the far end of a veth pair, with the routes
 * set up): then, given that NIC enough frames, only the server endpoints
 * compete for frames, as in the paper, where the clients were other
 * machines.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "vnetctl.h"
#include "vnet-bench.h"
#include "bench_am.h"

struct load_client {
	eb_t eb;
	ep_t ep;
	uint64_t sent;
	uint64_t replies;		/* atomic: main reads it */
	uint64_t snap;
	pthread_t tid;
};

struct load_server {
	eb_t eb;
	ep_t ep;
	en_t name;
	tag_t tag;
	pthread_t tid;
	bool running;
	bool stopped;			/* by its own thread, in load_stop */
};

static struct {
	const struct amb_opts *o;
	struct load_client *cl;
	struct load_server *sv;
	unsigned int ncl, nsv;
	int stop;
} ld;

struct load_result {
	unsigned int clients;
	unsigned int servers;
	double seconds;
	uint64_t round_trips;
	double mean, min, max;		/* per client, round trips/s */
	uint64_t faults, evictions;	/* the servers' NIC */
	struct vnetctl_counters before, after;	/* the fault breakdown */
	uint64_t client_faults;		/* the clients' NIC, if another */
};

static void load_request(void *t, int32_t client, int32_t seq)
{
	AM_Reply2(t, AMB_H_REPLY, client, seq);
}

static void load_reply(void *t, int32_t client, int32_t seq)
{
	(void)t;
	(void)seq;
	if (client >= 0 && (unsigned int)client < ld.ncl)
		__atomic_store_n(&ld.cl[client].replies,
				 ld.cl[client].replies + 1, __ATOMIC_RELAXED);
}

/* Ends a server thread: AM_WaitSema only returns for a message. */
static void load_stop(void *t, int32_t server)
{
	(void)t;
	if (server >= 0 && (unsigned int)server < ld.nsv)
		ld.sv[server].stopped = true;
}

static bool load_stopped(void)
{
	return __atomic_load_n(&ld.stop, __ATOMIC_ACQUIRE);
}

static void *load_serve(void *arg)
{
	struct load_server *s = arg;

	AM_SetEventMask(s->eb, AM_NOTEMPTY);
	while (!s->stopped) {
		if (ld.o->poll)
			AM_Poll(s->eb);
		else
			AM_WaitSema(s->eb);
	}
	return NULL;
}

/* Keep K requests out; sleep (or spin) until replies make room. */
static void *load_drive(void *arg)
{
	struct load_client *c = arg;
	int32_t idx = (int32_t)(c - ld.cl);

	AM_SetEventMask(c->eb, AM_NOTEMPTY);
	while (!load_stopped() && !amb_errors) {
		while (c->sent - c->replies < (uint64_t)ld.o->credits &&
		       !load_stopped()) {
			if (AM_Request2(c->ep, 0, AMB_H_REQUEST, idx,
					(int32_t)c->sent))
				break;
			c->sent++;
		}
		if (ld.o->poll)
			AM_Poll(c->eb);
		else
			AM_WaitSema(c->eb);
	}
	return NULL;
}

static int load_endpoint(uint32_t nic_id, eb_t *eb, ep_t *ep, en_t *name)
{
	int e = AM_AllocateBundle(AM_SEQ, eb);

	if (!e)
		e = AMVNET_AllocateEndpointOnNIC(*eb, nic_id, ep, name);
	if (!e)
		e = AM_SetHandler(*ep, 0, amb_returned);
	return e;
}

static int load_setup(unsigned int clients, unsigned int servers)
{
	unsigned int i;
	en_t name;
	int e = 0;

	ld.cl = calloc(clients, sizeof(*ld.cl));
	ld.sv = calloc(servers, sizeof(*ld.sv));
	if (!ld.cl || !ld.sv)
		return AM_ERR_RESOURCE;
	ld.ncl = clients;
	ld.nsv = servers;
	for (i = 0; !e && i < servers; i++) {
		struct load_server *s = &ld.sv[i];

		e = load_endpoint(ld.o->nic_id, &s->eb, &s->ep, &s->name);
		if (!e)
			e = AMVNET_RandomTag(&s->tag);
		if (!e)
			e = AM_SetTag(s->ep, s->tag);
		if (!e)
			e = AM_SetHandler(s->ep, AMB_H_REQUEST, load_request);
		if (!e)
			e = AM_SetHandler(s->ep, AMB_H_STOP, load_stop);
	}
	for (i = 0; !e && i < clients; i++) {
		struct load_client *c = &ld.cl[i];

		e = load_endpoint(ld.o->remote_clients ? ld.o->client_nic_id :
						     ld.o->nic_id,
				  &c->eb, &c->ep, &name);
		if (!e)
			e = AM_Map(c->ep, 0, ld.sv[i % servers].name,
				   ld.sv[i % servers].tag);
		if (!e)
			e = AM_SetExpectedResources(c->ep, 1, ld.o->credits);
		if (!e)
			e = AM_SetHandler(c->ep, AMB_H_REPLY, load_reply);
	}
	return e;
}

static void load_teardown(void)
{
	unsigned int i;

	/*
	 * Clients first: each has requests out, so the replies wake it to see
	 * the flag.  Then one message to every server endpoint, from a client
	 * mapped to it, ends the server threads.
	 */
	__atomic_store_n(&ld.stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < ld.ncl; i++)
		if (ld.cl[i].tid)
			pthread_join(ld.cl[i].tid, NULL);
	for (i = 0; i < ld.nsv && i < ld.ncl; i++)
		if (ld.sv[i].running)
			AM_Request1(ld.cl[i].ep, 0, AMB_H_STOP, (int32_t)i);
	for (i = 0; i < ld.nsv; i++)
		if (ld.sv[i].running)
			pthread_join(ld.sv[i].tid, NULL);
	for (i = 0; i < ld.ncl; i++)
		if (ld.cl[i].eb)
			AM_FreeBundle(ld.cl[i].eb);
	for (i = 0; i < ld.nsv; i++)
		if (ld.sv[i].eb)
			AM_FreeBundle(ld.sv[i].eb);
	free(ld.cl);
	free(ld.sv);
	ld.cl = NULL;
	ld.sv = NULL;
	ld.stop = 0;
}

static void load_sleep(double secs)
{
	struct timespec ts = { (time_t)secs,
			       (long)((secs - (time_t)secs) * 1e9) };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* The faults of the clients' NIC, or 0 when it is the servers'. */
static uint64_t load_client_faults(void)
{
	struct vnetctl_nic n;

	if (!ld.o->remote_clients ||
	    vnetctl_read_nic(ld.o->client_nic_name, &n, false))
		return 0;
	return n.faults;
}

static int load_point(unsigned int clients, unsigned int servers,
		      struct load_result *r)
{
	struct vnetctl_nic n0, n1;
	uint64_t cf0;
	unsigned int i;
	double t0, t1;
	int err;

	memset(r, 0, sizeof(*r));
	r->clients = clients;
	r->servers = servers;
	err = load_setup(clients, servers);
	for (i = 0; !err && i < servers; i++) {
		err = pthread_create(&ld.sv[i].tid, NULL, load_serve, &ld.sv[i]);
		ld.sv[i].running = !err;
	}
	for (i = 0; !err && i < clients; i++)
		err = pthread_create(&ld.cl[i].tid, NULL, load_drive, &ld.cl[i]);
	if (err) {
		vnetctl_msg("setting up %u clients failed", clients);
		load_teardown();
		return -1;
	}
	load_sleep(ld.o->warmup);
	if (vnetctl_read_nic(ld.o->nic_name, &n0, false))
		memset(&n0, 0, sizeof(n0));
	cf0 = load_client_faults();
	t0 = amb_now();
	for (i = 0; i < clients; i++)
		ld.cl[i].snap = __atomic_load_n(&ld.cl[i].replies,
						__ATOMIC_RELAXED);
	load_sleep(ld.o->seconds);
	t1 = amb_now();
	r->min = INFINITY;
	for (i = 0; i < clients; i++) {
		uint64_t d = __atomic_load_n(&ld.cl[i].replies,
					     __ATOMIC_RELAXED) - ld.cl[i].snap;

		r->round_trips += d;
		r->min = fmin(r->min, d / (t1 - t0));
		r->max = fmax(r->max, d / (t1 - t0));
	}
	if (vnetctl_read_nic(ld.o->nic_name, &n1, false))
		n1 = n0;
	r->client_faults = load_client_faults() - cf0;
	r->seconds = t1 - t0;
	r->mean = r->round_trips / r->seconds / clients;
	r->faults = n1.faults - n0.faults;
	r->evictions = n1.evictions - n0.evictions;
	r->before = n0.counters;
	r->after = n1.counters;
	load_teardown();
	return 0;
}

static void load_header(const char *what, const struct amb_opts *o)
{
	char clients[96];

	if (o->remote_clients)
		snprintf(clients, sizeof(clients), "clients on NIC %" PRIu32
			 " (%" PRIu32 " frames)", o->client_nic_id,
			 o->client_frames);
	else
		snprintf(clients, sizeof(clients), "clients on the same NIC");
	printf(BENCH_NAME " %s: servers on NIC %" PRIu32 " (%" PRIu32
	       " frames), %s, %d credits per client, %s, %.1f s per point "
	       "after %.1f s\n", what, o->nic_id, o->frames, clients,
	       o->credits,
	       o->poll ? "threads poll" : "threads sleep in AM_WaitSema",
	       o->seconds, o->warmup);
	printf("%7s %8s %10s %12s %12s %12s %12s %9s", "CLIENTS", "SERVERS",
	       "ENDPOINTS", "AGGREGATE/S", "CLIENT_MEAN", "CLIENT_MIN",
	       "CLIENT_MAX", "FAULTS/S");
	vnetctl_cols_head(stdout, 0);
	if (o->remote_clients)
		printf(" %15s", "CLIENT_FAULTS/S");
	putchar('\n');
	fflush(stdout);
}

static void load_row(FILE *csv, const struct load_result *r)
{
	printf("%7u %8u %10u %12.1f %12.1f %12.1f %12.1f %9.1f",
	       r->clients, r->servers, r->clients + r->servers,
	       r->round_trips / r->seconds, r->mean, r->min, r->max,
	       r->faults / r->seconds);
	vnetctl_cols_row(stdout, 0, &r->before, &r->after, r->seconds);
	if (ld.o->remote_clients)
		printf(" %15.1f", r->client_faults / r->seconds);
	putchar('\n');
	fflush(stdout);
	if (!csv)
		return;
	fprintf(csv, "%u,%u,%.3f,%" PRIu64 ",%.1f,%.1f,%.1f,%.1f,%" PRIu64
		",%" PRIu64, r->clients, r->servers, r->seconds,
		r->round_trips, r->round_trips / r->seconds, r->mean, r->min,
		r->max, r->faults, r->evictions);
	vnetctl_cols_csv_row(csv, 0, &r->before, &r->after, r->seconds);
	if (ld.o->remote_clients)
		fprintf(csv, ",%" PRIu64, r->client_faults);
	else
		fputc(',', csv);
	fputc('\n', csv);
	fflush(csv);
}

static const char load_csv_header[] =
	"clients,server_endpoints,seconds,round_trips,aggregate_per_s,"
	"client_mean_per_s,client_min_per_s,client_max_per_s,faults,"
	"evictions";

/* Two endpoints and a few threads per client: make room for the files. */
static void load_raise_nofile(void)
{
	struct rlimit rl;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static int load_run(struct amb_opts *o, const char *what, bool per_client)
{
	FILE *csv = NULL;
	unsigned int i;
	int ret = VNETCTL_EXIT_OK;

	memset(&ld, 0, sizeof(ld));
	ld.o = o;
	load_raise_nofile();
	if (o->csv) {
		csv = amb_csv_open(o, load_csv_header);
		if (!csv)
			return VNETCTL_EXIT_FAIL;
		vnetctl_cols_csv_head(csv, 0);
		fputs(",client_nic_faults\n", csv);
	}
	load_header(what, o);
	for (i = 0; i < o->nr_points && !amb_errors; i++) {
		unsigned int n = o->points[i];
		struct load_result r;

		if (load_point(n, per_client ? n : 1, &r)) {
			ret = VNETCTL_EXIT_FAIL;
			break;
		}
		load_row(csv, &r);
	}
	if (vnetctl_fclose(csv, o->csv))
		ret = VNETCTL_EXIT_FAIL;
	return ret;
}

int amb_contention(struct amb_opts *o)
{
	return load_run(o, "contention", false);
}

int amb_vnets(struct amb_opts *o)
{
	return load_run(o, "vnets", true);
}
