// SPDX-License-Identifier: GPL-2.0
/*
 * The paging benchmark's engine.  E endpoints on one NIC form a ring:
 * endpoint i sends requests to endpoint (i + 1) % E through translation
 * slot 0 and answers every request it receives.  One thread visits the
 * endpoints round-robin, and every visit reads the endpoint's frame, which
 * faults it onto the card when it is not resident.  With more endpoints
 * than frames that is a fault (and an eviction) on most visits.
 *
 * The firmware may hold a message for a destination that is not resident
 * and ask the host to fault it in; only cycling on makes progress then, so
 * the loop never waits on one endpoint.  A watchdog thread reports and
 * exits when no round trip completes for BENCH_STALL_SEC seconds, even if
 * the driving thread is stuck in the kernel.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "vnetctl.h"
#include "vnet-bench.h"
#include "bench.h"

#define BENCH_H_REQUEST		1
#define BENCH_H_REPLY		2
#define BENCH_NARGS		2	/* sender's index, sequence number */
#define BENCH_MAX_REPORTS	5	/* errors described one by one */
#define BENCH_DUMP_EPS		64	/* endpoints listed by the watchdog */

struct bench_ep {
	struct vnet_endpoint ep;
	uint64_t tag;
	uint32_t next_seq;		/* of the next request we send */
	uint32_t reply_seq;		/* expected in the next reply */
	uint32_t outstanding;		/* requests awaiting their reply */
};

struct bench {
	const struct bench_cfg *cfg;
	struct bench_result *res;
	struct bench_ep *eps;
	uint32_t nr;
	bool measuring;
	unsigned int reports;
};

/*
 * Shared with the watchdog thread.  progress and gen are atomics; the rest
 * is under lock, which the driving thread only takes to (dis)arm.
 */
static struct {
	pthread_mutex_t lock;
	uint64_t progress;		/* round trips completed, ever */
	uint32_t gen;			/* bumped by every arm */
	bool armed;
	const char *phase;
	struct bench *b;
} wd = { .lock = PTHREAD_MUTEX_INITIALIZER };

static const char * const reason_names[] = {
	[VNET_RET_NONE] = "none",
	[VNET_RET_BAD_TAG] = "bad_tag",
	[VNET_RET_NO_SLOT] = "no_slot",
	[VNET_RET_NO_ENDPOINT] = "no_endpoint",
	[VNET_RET_BAD_DESC] = "bad_desc",
	[VNET_RET_BAD_TOKEN] = "bad_token",
	[VNET_RET_UNREACHABLE] = "unreachable",
	[VNET_RET_BAD_SEGMENT] = "bad_segment",
	[VNET_RET_TOO_LARGE] = "too_large",
	[VNET_RET_BUSY] = "busy",
	[VNET_RET_SOURCE_GONE] = "source_gone",
	[VNET_RET_NR] = "unknown",
};

const char *bench_reason_name(unsigned int reason)
{
	return reason_names[reason < VNET_RET_NR ? reason : VNET_RET_NR];
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Fields the watchdog reads while the driving thread writes them. */
static inline uint32_t ld32(const uint32_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static inline void st32(uint32_t *p, uint32_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELAXED);
}

static void bench_arm(struct bench *b, const char *phase)
{
	pthread_mutex_lock(&wd.lock);
	wd.b = b;
	wd.phase = phase;
	wd.armed = true;
	__atomic_add_fetch(&wd.gen, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&wd.lock);
}

static void bench_disarm(void)
{
	pthread_mutex_lock(&wd.lock);
	wd.armed = false;
	wd.b = NULL;
	pthread_mutex_unlock(&wd.lock);
}

/*
 * Called with wd.lock held; does not return.  The driving thread may be
 * asleep in a fault holding its mmap lock for reading, so nothing here may
 * map memory: no malloc, no opendir.
 */
static void bench_watchdog_fire(const struct bench *b)
{
	const struct bench_result *res = b->res;
	struct vnetctl_nic nic;
	struct vnetctl_ep ep;
	uint32_t i, shown = 0;
	int err;

	fprintf(stderr,
		BENCH_NAME ": paging: no round trip completed for %d s while %s\n"
		"  ratio %u: %" PRIu32 " endpoints on NIC %" PRIu32 " with %" PRIu32
		" frames; %" PRIu64 " round trips measured, %" PRIu64
		" returned, %" PRIu64 " bad\n",
		BENCH_STALL_SEC, wd.phase, res->ratio, b->nr, b->cfg->nic_id,
		res->frames, __atomic_load_n(&res->round_trips, __ATOMIC_RELAXED),
		__atomic_load_n(&res->returned, __ATOMIC_RELAXED),
		__atomic_load_n(&res->bad, __ATOMIC_RELAXED));
	fprintf(stderr, "  requests outstanding (local view):\n");
	for (i = 0; i < b->nr; i++) {
		const struct bench_ep *be = &b->eps[i];
		uint32_t out = ld32(&be->outstanding);

		if (!out)
			continue;
		if (shown++ == BENCH_DUMP_EPS) {
			fprintf(stderr, "    ...\n");
			break;
		}
		fprintf(stderr, "    %" PRIu32 ":%" PRIu32 " -> %" PRIu32 ":%" PRIu32
			": outstanding %" PRIu32 ", next request %" PRIu32
			", next reply expected %" PRIu32 "\n",
			be->ep.name.nic, be->ep.name.ep,
			b->eps[(i + 1) % b->nr].ep.name.nic,
			b->eps[(i + 1) % b->nr].ep.name.ep, out,
			ld32(&be->next_seq), ld32(&be->reply_seq));
	}
	if (!shown)
		fprintf(stderr, "    (none)\n");

	err = vnetctl_read_nic(b->cfg->nic_name, &nic, false);
	if (err) {
		vnetctl_sysfs_error(err);
		goto out;
	}
	vnetctl_print_nic_header(stderr, &nic);
	for (i = 0; i < b->nr && i < BENCH_DUMP_EPS; i++) {
		err = vnetctl_read_ep(b->cfg->nic_name, b->eps[i].ep.name.ep,
				      &ep);
		if (err)
			vnetctl_sysfs_error(err);
		else
			vnetctl_print_ep(stderr, &nic, &ep);
	}
	if (b->nr > BENCH_DUMP_EPS)
		fprintf(stderr, "  ... %" PRIu32 " more\n", b->nr - BENCH_DUMP_EPS);
out:
	fflush(stderr);
	_exit(BENCH_EXIT_STALL);
}

static void *bench_watchdog(void *arg)
{
	const uint64_t stall = (uint64_t)BENCH_STALL_SEC * 1000000000ULL;
	uint64_t seen = 0, since = now_ns();
	uint32_t gen = 0;

	(void)arg;
	for (;;) {
		struct timespec tick = { 0, 100 * 1000 * 1000 };
		uint64_t progress, now;
		uint32_t g;

		nanosleep(&tick, NULL);
		progress = __atomic_load_n(&wd.progress, __ATOMIC_RELAXED);
		g = __atomic_load_n(&wd.gen, __ATOMIC_RELAXED);
		now = now_ns();
		if (progress != seen || g != gen) {
			seen = progress;
			gen = g;
			since = now;
			continue;
		}
		if (now - since < stall)
			continue;
		pthread_mutex_lock(&wd.lock);
		if (wd.armed && wd.gen == gen)
			bench_watchdog_fire(wd.b);
		pthread_mutex_unlock(&wd.lock);
	}
	return NULL;
}

int bench_watchdog_start(void)
{
	pthread_t t;
	int err;

	err = pthread_create(&t, NULL, bench_watchdog, NULL);
	if (err) {
		vnetctl_err(err, "paging: watchdog thread");
		return -err;
	}
	pthread_detach(t);
	return 0;
}

/* One line per error, for the first few. */
static void bench_report(struct bench *b, uint32_t i, const char *what,
			 const struct vnet_desc *d)
{
	if (b->reports++ >= BENCH_MAX_REPORTS)
		return;
	vnetctl_msg("paging: endpoint %" PRIu32 ":%" PRIu32 ": %s "
		    "(handler %u, flags 0x%x, status %s, peer %" PRIu32 ":%"
		    PRIu32 ", tag 0x%016" PRIx64 ", args %" PRIu32 " %" PRIu32 ")",
		    b->eps[i].ep.name.nic, b->eps[i].ep.name.ep, what,
		    d->handler, d->flags, bench_reason_name(d->status),
		    d->peer.nic, d->peer.ep, (uint64_t)d->tag, d->args[0],
		    d->args[1]);
}

static bool same_name(struct vnet_name a, struct vnet_name b)
{
	return a.nic == b.nic && a.ep == b.ep;
}

/* Answer the requests from our predecessor while there is room to. */
static void bench_answer(struct bench *b, uint32_t i)
{
	struct bench_ep *be = &b->eps[i];
	uint32_t pred = (i + b->nr - 1) % b->nr;
	const struct vnet_desc *d;

	while ((d = vnet_endpoint_peek(&be->ep, VNET_Q_REQ_RECV))) {
		struct vnet_desc req = *d, rep;

		memset(&rep, 0, sizeof(rep));
		rep.handler = BENCH_H_REPLY;
		rep.nargs = BENCH_NARGS;
		rep.token = req.token;
		rep.args[0] = req.args[0];
		rep.args[1] = req.args[1];
		if (vnet_endpoint_post(&be->ep, VNET_Q_REP_SEND, &rep, NULL, 0))
			break;		/* full: keep the request for later */
		vnet_endpoint_consume(&be->ep, VNET_Q_REQ_RECV);

		if (req.handler != BENCH_H_REQUEST || req.nargs != BENCH_NARGS ||
		    req.tag != be->tag || req.args[0] != pred ||
		    !same_name(req.peer, b->eps[pred].ep.name)) {
			__atomic_add_fetch(&b->res->bad, 1, __ATOMIC_RELAXED);
			bench_report(b, i, "unexpected request", &req);
		}
	}
}

/* Count the replies to our requests, and anything handed back to us. */
static void bench_complete(struct bench *b, uint32_t i)
{
	struct bench_ep *be = &b->eps[i];
	uint32_t succ = (i + 1) % b->nr;
	const struct vnet_desc *d;

	while ((d = vnet_endpoint_peek(&be->ep, VNET_Q_REP_RECV))) {
		struct vnet_desc m = *d;

		vnet_endpoint_consume(&be->ep, VNET_Q_REP_RECV);
		if (m.flags & VNET_DESC_RETURNED) {
			unsigned int r = m.status < VNET_RET_NR ? m.status :
								  VNET_RET_NR;

			b->res->returned_reason[r]++;
			__atomic_add_fetch(&b->res->returned, 1,
					   __ATOMIC_RELAXED);
			bench_report(b, i, m.handler == BENCH_H_REQUEST ?
				     "request returned" : "reply returned", &m);
			/* A returned request frees its credit. */
			if (m.handler == BENCH_H_REQUEST && be->outstanding)
				st32(&be->outstanding, be->outstanding - 1);
			continue;
		}
		if (m.handler != BENCH_H_REPLY || m.args[0] != i ||
		    m.args[1] != be->reply_seq ||
		    !same_name(m.peer, b->eps[succ].ep.name)) {
			__atomic_add_fetch(&b->res->bad, 1, __ATOMIC_RELAXED);
			bench_report(b, i, "unexpected reply", &m);
		}
		st32(&be->reply_seq, m.args[1] + 1);
		if (be->outstanding)
			st32(&be->outstanding, be->outstanding - 1);
		if (b->measuring)
			__atomic_add_fetch(&b->res->round_trips, 1,
					   __ATOMIC_RELAXED);
		__atomic_add_fetch(&wd.progress, 1, __ATOMIC_RELAXED);
	}
}

/* Top the endpoint up to BENCH_CREDITS outstanding requests. */
static void bench_send(struct bench *b, uint32_t i)
{
	struct bench_ep *be = &b->eps[i];

	while (be->outstanding < BENCH_CREDITS) {
		struct vnet_desc req;

		memset(&req, 0, sizeof(req));
		req.handler = BENCH_H_REQUEST;
		req.nargs = BENCH_NARGS;
		req.slot = 0;
		req.args[0] = i;
		req.args[1] = be->next_seq;
		if (vnet_endpoint_post(&be->ep, VNET_Q_REQ_SEND, &req, NULL, 0))
			break;		/* full: on to the next endpoint */
		st32(&be->next_seq, be->next_seq + 1);
		st32(&be->outstanding, be->outstanding + 1);
	}
}

static int bench_snapshot(const struct bench *b, struct vnetctl_nic *nic)
{
	int err = vnetctl_read_nic(b->cfg->nic_name, nic, false);

	if (err)
		vnetctl_sysfs_error(err);
	return err;
}

/* Warm up, then measure; the NIC counters are read around the measurement. */
static int bench_drive(struct bench *b)
{
	uint64_t start = now_ns(), t0 = 0, t1;
	uint64_t warmup = (uint64_t)(b->cfg->warmup * 1e9);
	uint64_t length = (uint64_t)(b->cfg->seconds * 1e9);
	struct vnetctl_nic before, after;
	struct bench_result *res = b->res;
	uint64_t seen = 0;
	uint32_t i = 0;
	int err;

	for (;;) {
		uint64_t now;

		bench_answer(b, i);
		bench_complete(b, i);
		bench_send(b, i);
		i = i + 1 == b->nr ? 0 : i + 1;
		/*
		 * A whole turn with no reply: the firmware has the messages.
		 * Let it run -- on one CPU a spinning driver would keep its
		 * thread off until the next tick.
		 */
		if (!i) {
			uint64_t done = __atomic_load_n(&wd.progress,
							__ATOMIC_RELAXED);

			if (done == seen)
				sched_yield();
			seen = done;
		}

		now = now_ns();
		if (!b->measuring && now - start >= warmup) {
			err = bench_snapshot(b, &before);
			if (err)
				return err;
			b->measuring = true;
			t0 = now_ns();
		} else if (b->measuring && now - t0 >= length) {
			break;
		}
	}
	t1 = now_ns();
	b->measuring = false;
	err = bench_snapshot(b, &after);
	if (err)
		return err;
	res->seconds = (double)(t1 - t0) / 1e9;
	res->faults = after.faults - before.faults;
	res->evictions = after.evictions - before.evictions;
	res->fault_ns = after.fault_ns - before.fault_ns;
	res->before = before.counters;
	res->after = after.counters;
	return 0;
}

static int bench_setup(struct bench *b)
{
	uint32_t i;
	int err;

	for (i = 0; i < b->nr; i++) {
		err = vnet_endpoint_open(&b->eps[i].ep, b->cfg->nic_id);
		if (err) {
			vnetctl_err(err, "create endpoint %" PRIu32 " of %" PRIu32
				    " on NIC %" PRIu32, i + 1, b->nr,
				    b->cfg->nic_id);
			b->nr = i;	/* what to close */
			return err;
		}
		err = vnet_tag_random(&b->eps[i].tag);
		if (!err)
			err = vnet_endpoint_set_tag(&b->eps[i].ep, b->eps[i].tag);
		if (err) {
			vnetctl_err(err, "set tag of endpoint %" PRIu32 ":%" PRIu32,
				    b->eps[i].ep.name.nic, b->eps[i].ep.name.ep);
			b->nr = i + 1;
			return err;
		}
	}
	for (i = 0; i < b->nr; i++) {
		const struct bench_ep *next = &b->eps[(i + 1) % b->nr];

		err = vnet_endpoint_map(&b->eps[i].ep, 0, next->ep.name,
					next->tag);
		if (err) {
			vnetctl_err(err, "map slot 0 of endpoint %" PRIu32 ":%"
				    PRIu32, b->eps[i].ep.name.nic,
				    b->eps[i].ep.name.ep);
			return err;
		}
	}
	return 0;
}

/* One open file per endpoint: make sure that many fit. */
static void bench_raise_nofile(uint32_t nr)
{
	struct rlimit rl;
	rlim_t need = (rlim_t)nr + 64;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur >= need)
		return;
	rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > need ?
		      need : rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
}

int bench_run_ratio(const struct bench_cfg *cfg, unsigned int ratio,
		    uint32_t frames, struct bench_result *res)
{
	uint64_t nr = (uint64_t)ratio * frames;
	struct bench b = { .cfg = cfg, .res = res };
	uint32_t i;
	int err;

	memset(res, 0, sizeof(*res));
	res->ratio = ratio;
	res->frames = frames;
	if (!nr || nr > (1u << 20)) {
		vnetctl_err(EINVAL, "paging: ratio %u x %" PRIu32
			    " frames", ratio, frames);
		return -EINVAL;
	}
	res->endpoints = b.nr = (uint32_t)nr;
	bench_raise_nofile(b.nr);
	b.eps = calloc(b.nr, sizeof(*b.eps));
	if (!b.eps) {
		vnetctl_err(ENOMEM, "paging: %" PRIu32 " endpoints", b.nr);
		return -ENOMEM;
	}

	err = bench_setup(&b);
	if (!err) {
		bench_arm(&b, "running");
		err = bench_drive(&b);
	}
	bench_arm(&b, "closing the endpoints");
	for (i = 0; i < b.nr; i++)
		vnet_endpoint_close(&b.eps[i].ep);
	bench_disarm();
	free(b.eps);
	return err;
}
