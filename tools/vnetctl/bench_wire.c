// SPDX-License-Identifier: GPL-2.0
/*
 * vnetctl bench pingpong and bw: the NIC-to-NIC transport measured between
 * two NICs attached to Ethernet interfaces (typically the two ends of a
 * veth pair).  One endpoint on each NIC, the client on --from and the
 * server on --to, each driven by a thread of its own because an endpoint's
 * local indices belong to one thread (vnet/endpoint.h).
 *
 * pingpong: one request in flight; the server echoes the payload in a reply
 * of the same size, so a round trip carries the size both ways, as
 * sockperf's ping-pong does.  bw: the client streams requests with up to
 * WIRE_WINDOW outstanding; the server answers each with a short reply,
 * which is the credit for the next request.
 *
 * Both sides block in poll() rather than spin: on a two-CPU machine a
 * spinning client and server would starve the NICs' firmware threads, and
 * blocking is what the TCP tools we are compared with do too.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <vnet/endpoint.h>

#include "vnetctl.h"
#include "bench.h"

#define WIRE_H_REQUEST		1
#define WIRE_H_REPLY		2
#define WIRE_WARMUP		50	/* round trips before pingpong measures */
#define WIRE_BW_WARMUP		0.25	/* seconds before bw measures */
#define WIRE_WINDOW		16	/* bw: requests outstanding at most */
#define WIRE_RING		64	/* bw: a reply may overtake fewer others */
#define WIRE_STALL_NS		(10 * 1000000000ULL)	/* no reply: give up */
#define WIRE_MAX_SIZES		32
#define WIRE_STAT_RETRANS	8	/* "retransmits" in vnetctl_stat_names */

struct wire_opts {
	const char *bench;		/* "pingpong" or "bw" */
	bool bw;
	bool have_from, have_to;
	uint32_t from, to;
	uint32_t count;
	double seconds;
	uint32_t sizes[WIRE_MAX_SIZES];
	unsigned int nr_sizes;
	const char *csv;
};

/*
 * What went wrong on one side; written by that side's thread only, but
 * read by the client's while the server runs, hence the atomics.
 */
struct wire_errs {
	uint64_t returned;
	uint64_t reason[VNET_RET_NR + 1];
	uint64_t bad;			/* wrong handler, sequence or payload */
};

struct wire {
	const struct wire_opts *o;
	struct vnet_endpoint cli, srv;
	int stop;			/* atomic: ends the server thread */
	uint64_t served;		/* atomic: requests answered */
	struct wire_errs ce, se;	/* the client's, the server's */
	uint32_t size;			/* where the client is, for stall() */
	uint64_t sent, done;
};

struct wire_row {
	uint32_t size;
	uint64_t n;			/* round trips or messages measured */
	double seconds;			/* bw: measured time */
	double median, p10, p90, min;	/* pingpong: microseconds */
	uint64_t retrans, errors;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void count(uint64_t *v)
{
	__atomic_add_fetch(v, 1, __ATOMIC_RELAXED);
}

static void returned(struct wire_errs *e, const struct vnet_desc *d)
{
	count(&e->returned);
	count(&e->reason[d->status < VNET_RET_NR ? d->status : VNET_RET_NR]);
}

/*
 * The sequence number goes in the first and last four bytes of a payload
 * (of 8 bytes or more) as well as in args[0], so a stale or misplaced
 * staging slot shows.
 */
static void stamp(uint8_t *buf, uint32_t len, uint32_t seq)
{
	uint32_t w[2] = { seq, ~seq };

	if (len >= 8) {
		memcpy(buf, &w[0], 4);
		memcpy(buf + len - 4, &w[1], 4);
	}
}

static bool stamped(const uint8_t *buf, uint32_t len, uint32_t seq)
{
	uint32_t w[2] = { seq, ~seq };

	return len < 8 || (!memcmp(buf, &w[0], 4) &&
			   !memcmp(buf + len - 4, &w[1], 4));
}

/* Answer the requests waiting; false if there was nothing to do. */
static bool serve(struct wire *w)
{
	struct vnet_endpoint *ep = &w->srv;
	const struct vnet_desc *d;
	bool busy = false;

	/* Our replies come back here only if they could not be delivered. */
	while ((d = vnet_endpoint_peek(ep, VNET_Q_REP_RECV))) {
		returned(&w->se, d);
		vnet_endpoint_consume(ep, VNET_Q_REP_RECV);
		busy = true;
	}
	while ((d = vnet_endpoint_peek(ep, VNET_Q_REQ_RECV))) {
		const void *payload = vnet_endpoint_payload(ep, VNET_Q_REQ_RECV);
		struct vnet_desc r = {
			.handler = WIRE_H_REPLY, .nargs = 1,
			.token = d->token, .args = { d->args[0] },
		};
		uint32_t len = w->o->bw ? 0 : d->len;

		if (d->handler != WIRE_H_REQUEST || d->nargs != 1 ||
		    !stamped(payload, d->len, d->args[0]))
			count(&w->se.bad);
		/* pingpong echoes the payload from where it arrived. */
		r.flags = len ? VNET_DESC_MEDIUM : 0;
		r.len = len;
		if (vnet_endpoint_post(ep, VNET_Q_REP_SEND, &r, payload, len))
			break;	/* reply queue full: answer on the next pass */
		vnet_endpoint_consume(ep, VNET_Q_REQ_RECV);
		__atomic_add_fetch(&w->served, 1, __ATOMIC_RELAXED);
		busy = true;
	}
	return busy;
}

static void *server_main(void *arg)
{
	struct wire *w = arg;

	/* The poll timeout only bounds how late the stop flag is seen. */
	while (!__atomic_load_n(&w->stop, __ATOMIC_ACQUIRE))
		if (!serve(w))
			vnet_endpoint_wait(&w->srv, 50);
	return NULL;
}

static uint64_t nic_stat(uint32_t nic_id, unsigned int stat, bool print)
{
	struct vnetctl_nic nic;
	uint64_t v = 0;
	unsigned int i;

	if (vnetctl_find_nic(nic_id, &nic, false))
		return 0;
	if (nic.has_stats)
		v = nic.stats[stat];
	if (print) {
		fprintf(stderr, "  %s on %s:", nic.name, nic.ifname);
		for (i = 0; nic.has_stats && i < VNETCTL_NR_STATS; i++)
			if (nic.stats[i])
				fprintf(stderr, " %s %" PRIu64,
					vnetctl_stat_names[i], nic.stats[i]);
		fputc('\n', stderr);
	}
	vnetctl_nic_release(&nic);
	return v;
}

/* The firmware's count of messages returned to @ep; prints its counters. */
static uint64_t ep_returned(struct vnet_endpoint *ep, const char *print)
{
	struct vnet_ep_stat st;

	if (ioctl(ep->fd, VNET_IOC_EP_STAT, &st))
		return 0;
	if (print)
		fprintf(stderr, "  %s %" PRIu32 ":%" PRIu32 ": state %" PRIu32
			", sent %" PRIu64 ", received %" PRIu64 ", returned %"
			PRIu64 ", rejected %" PRIu64 "\n", print, ep->name.nic,
			ep->name.ep, (uint32_t)st.state, (uint64_t)st.sent,
			(uint64_t)st.received, (uint64_t)st.returned,
			(uint64_t)st.rejected);
	return st.returned;
}

/*
 * No reply for WIRE_STALL_NS: say what we know and end the process, whose
 * server thread may be stuck too.
 */
static void __attribute__((noreturn)) stall(struct wire *w)
{
	fflush(stdout);
	fprintf(stderr, VNETCTL_NAME ": bench %s: no reply for %llu s at size %"
		PRIu32 ": %" PRIu64 " requests sent, %" PRIu64 " answered; the "
		"server answered %" PRIu64 "; %" PRIu64 " returned to the "
		"client, %" PRIu64 " to the server\n", w->o->bench,
		WIRE_STALL_NS / 1000000000ULL, w->size, w->sent, w->done,
		__atomic_load_n(&w->served, __ATOMIC_RELAXED), w->ce.returned,
		__atomic_load_n(&w->se.returned, __ATOMIC_RELAXED));
	ep_returned(&w->cli, "client");
	ep_returned(&w->srv, "server");
	nic_stat(w->o->from, 0, true);
	nic_stat(w->o->to, 0, true);
	exit(VNETCTL_EXIT_STALL);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Nearest rank: the smallest sample with a fraction @q at or below it. */
static double rank_us(const uint64_t *v, size_t n, double q)
{
	size_t i = (size_t)ceil(q * n);

	return v[i ? i - 1 : 0] / 1e3;
}

static void pingpong(struct wire *w, uint8_t *buf, uint64_t *rtt,
		     struct wire_row *row)
{
	uint32_t i, size = row->size, n = 0;

	for (i = 0; i < size; i++)
		buf[i] = (uint8_t)(i * 7 + size);
	for (i = 0; i < WIRE_WARMUP + w->o->count; i++) {
		struct vnet_desc r = {
			.handler = WIRE_H_REQUEST, .nargs = 1, .args = { i },
			.flags = size ? VNET_DESC_MEDIUM : 0, .len = size,
		};
		const struct vnet_desc *d;
		uint64_t t0, t1;

		stamp(buf, size, i);
		t0 = now_ns();
		/* Nothing is outstanding, so the queue has room. */
		vnet_endpoint_post(&w->cli, VNET_Q_REQ_SEND, &r, buf, size);
		w->sent++;
		while (!(d = vnet_endpoint_peek(&w->cli, VNET_Q_REP_RECV))) {
			if (now_ns() - t0 > WIRE_STALL_NS)
				stall(w);
			vnet_endpoint_wait(&w->cli, 100);
		}
		t1 = now_ns();
		w->done++;
		if (d->flags & VNET_DESC_RETURNED) {
			returned(&w->ce, d);
		} else {
			if (d->handler != WIRE_H_REPLY || d->args[0] != i ||
			    d->len != size ||
			    memcmp(vnet_endpoint_payload(&w->cli, VNET_Q_REP_RECV),
				   buf, size))
				w->ce.bad++;
			if (i >= WIRE_WARMUP)
				rtt[n++] = t1 - t0;
		}
		vnet_endpoint_consume(&w->cli, VNET_Q_REP_RECV);
	}
	row->n = n;
	if (!n)
		return;
	qsort(rtt, n, sizeof(*rtt), cmp_u64);
	row->median = rank_us(rtt, n, 0.5);
	row->p10 = rank_us(rtt, n, 0.1);
	row->p90 = rank_us(rtt, n, 0.9);
	row->min = rtt[0] / 1e3;
}

/*
 * Requests carry their sequence number; ring[seq % WIRE_RING] remembers
 * the ones outstanding, so every reply must match one and only once.
 */
static void bw(struct wire *w, uint8_t *buf, struct wire_row *row)
{
	uint64_t start = now_ns(), begin = 0, end, last = start;
	uint32_t ring[WIRE_RING], seq = 0, outstanding = 0;
	bool busy[WIRE_RING] = { false }, measuring = false;
	uint32_t size = row->size;

	end = start + (uint64_t)((WIRE_BW_WARMUP + w->o->seconds) * 1e9);
	memset(buf, 0xa5, size);
	for (;;) {
		uint64_t now = now_ns();
		bool sending = now < end;
		const struct vnet_desc *d;

		if (!measuring && now >= start + WIRE_BW_WARMUP * 1e9) {
			measuring = true;
			begin = now;
		}
		while ((d = vnet_endpoint_peek(&w->cli, VNET_Q_REP_RECV))) {
			uint32_t s = d->args[0], k = s % WIRE_RING;

			if (d->flags & VNET_DESC_RETURNED)
				returned(&w->ce, d);
			else if (d->handler != WIRE_H_REPLY || d->len)
				w->ce.bad++;
			else if (measuring && sending)
				row->n++;
			if (busy[k] && ring[k] == s) {
				busy[k] = false;
				outstanding--;
			} else {
				w->ce.bad++;
			}
			w->done++;
			last = now;
			vnet_endpoint_consume(&w->cli, VNET_Q_REP_RECV);
		}
		if (!sending && !outstanding)
			break;
		/* The window ends at WIRE_WINDOW or at a full send queue. */
		while (sending && outstanding < WIRE_WINDOW &&
		       !busy[seq % WIRE_RING]) {
			struct vnet_desc r = {
				.handler = WIRE_H_REQUEST, .nargs = 1,
				.args = { seq },
				.flags = size ? VNET_DESC_MEDIUM : 0,
				.len = size,
			};

			stamp(buf, size, seq);
			if (vnet_endpoint_post(&w->cli, VNET_Q_REQ_SEND, &r,
					       buf, size))
				break;
			busy[seq % WIRE_RING] = true;
			ring[seq % WIRE_RING] = seq;
			seq++;
			outstanding++;
			w->sent++;
		}
		if (now - last > WIRE_STALL_NS)
			stall(w);
		if (!vnet_endpoint_peek(&w->cli, VNET_Q_REP_RECV))
			vnet_endpoint_wait(&w->cli, 10);
	}
	row->seconds = (end - begin) / 1e9;
}

static void print_header(FILE *csv, const struct wire_opts *o, uint32_t max)
{
	printf("vnetctl bench %s: vnet%" PRIu32 " -> vnet%" PRIu32
	       " (max payload %" PRIu32 "), ", o->bench, o->from, o->to, max);
	if (!o->bw) {
		printf("%" PRIu32 " round trips per size after %d warm-up, "
		       "payload echoed\n%6s %10s %10s %10s %10s %10s %8s %7s\n",
		       o->count, WIRE_WARMUP, "SIZE", "MEDIAN_US", "P10_US",
		       "P90_US", "MIN_US", "ROUNDTRIPS", "RETRANS", "ERRORS");
		if (csv)
			fputs("size,round_trips,median_us,p10_us,p90_us,min_us,"
			      "retransmits,errors\n", csv);
	} else {
		printf("%.1f s per size after %.2f s warm-up, up to %d "
		       "outstanding\n%6s %10s %12s %10s %8s %7s\n", o->seconds,
		       WIRE_BW_WARMUP, WIRE_WINDOW, "SIZE", "MB/S",
		       "MESSAGES/S", "MESSAGES", "RETRANS", "ERRORS");
		if (csv)
			fputs("size,seconds,messages,messages_per_s,mb_per_s,"
			      "retransmits,errors\n", csv);
	}
	fflush(stdout);
}

static void print_row(FILE *csv, const struct wire_opts *o,
		      const struct wire_row *r)
{
	double rate = r->seconds > 0 ? r->n / r->seconds : 0;
	double mbs = rate * r->size / 1e6;

	if (!o->bw && !r->n) {
		/* Every round trip of the size failed: no figures. */
		printf("%6" PRIu32 " %10s %10s %10s %10s %10d %8" PRIu64 " %7"
		       PRIu64 "\n", r->size, "-", "-", "-", "-", 0, r->retrans,
		       r->errors);
		if (csv)
			fprintf(csv, "%" PRIu32 ",0,,,,,%" PRIu64 ",%" PRIu64
				"\n", r->size, r->retrans, r->errors);
	} else if (!o->bw) {
		printf("%6" PRIu32 " %10.1f %10.1f %10.1f %10.1f %10" PRIu64
		       " %8" PRIu64 " %7" PRIu64 "\n", r->size, r->median,
		       r->p10, r->p90, r->min, r->n, r->retrans, r->errors);
		if (csv)
			fprintf(csv, "%" PRIu32 ",%" PRIu64 ",%.1f,%.1f,%.1f,"
				"%.1f,%" PRIu64 ",%" PRIu64 "\n", r->size,
				r->n, r->median, r->p10, r->p90, r->min,
				r->retrans, r->errors);
	} else {
		printf("%6" PRIu32 " %10.2f %12.1f %10" PRIu64 " %8" PRIu64
		       " %7" PRIu64 "\n", r->size, mbs, rate, r->n, r->retrans,
		       r->errors);
		if (csv)
			fprintf(csv, "%" PRIu32 ",%.3f,%" PRIu64 ",%.1f,%.3f,%"
				PRIu64 ",%" PRIu64 "\n", r->size, r->seconds,
				r->n, rate, mbs, r->retrans, r->errors);
	}
	fflush(stdout);
	if (csv)
		fflush(csv);
}

/* Errors so far; the server's counters are read while it runs. */
static uint64_t errors_of(struct wire *w)
{
	return w->ce.returned + w->ce.bad +
	       __atomic_load_n(&w->se.returned, __ATOMIC_RELAXED) +
	       __atomic_load_n(&w->se.bad, __ATOMIC_RELAXED);
}

static void print_errs(const char *who, const struct wire_errs *e)
{
	unsigned int k;

	if (!e->returned && !e->bad)
		return;
	fprintf(stderr, VNETCTL_NAME ": %s: %" PRIu64 " returned, %" PRIu64
		" bad", who, e->returned, e->bad);
	for (k = 0; k <= VNET_RET_NR; k++)
		if (e->reason[k])
			fprintf(stderr, ", %s %" PRIu64, bench_reason_name(k),
				e->reason[k]);
	fputc('\n', stderr);
}

/* Every size, with a server thread; returns the exit status. */
static int measure(struct wire *w, FILE *csv, uint32_t max)
{
	const struct wire_opts *o = w->o;
	uint64_t *rtt = calloc(o->count, sizeof(*rtt)), fw_ret, errors;
	uint8_t *buf = malloc(VNET_MEDIUM_MAX);
	pthread_t srv;
	unsigned int k;
	int err;

	err = !rtt || !buf ? ENOMEM : pthread_create(&srv, NULL, server_main, w);
	if (err) {
		vnetctl_err(err, "bench %s", o->bench);
		free(rtt);
		free(buf);
		return VNETCTL_EXIT_FAIL;
	}
	print_header(csv, o, max);
	for (k = 0; k < o->nr_sizes; k++) {
		struct wire_row row = { .size = o->sizes[k] };
		uint64_t before = errors_of(w);
		uint64_t rt = nic_stat(o->from, WIRE_STAT_RETRANS, false) +
			      nic_stat(o->to, WIRE_STAT_RETRANS, false);

		w->size = row.size;
		if (o->bw)
			bw(w, buf, &row);
		else
			pingpong(w, buf, rtt, &row);
		row.retrans = nic_stat(o->from, WIRE_STAT_RETRANS, false) +
			      nic_stat(o->to, WIRE_STAT_RETRANS, false) - rt;
		row.errors = errors_of(w) - before;
		print_row(csv, o, &row);
	}
	__atomic_store_n(&w->stop, 1, __ATOMIC_RELEASE);
	pthread_join(srv, NULL);
	free(rtt);
	free(buf);

	print_errs("client", &w->ce);
	print_errs("server", &w->se);
	errors = errors_of(w);
	/* Returned messages we missed would make the figures a lie. */
	fw_ret = ep_returned(&w->cli, NULL) + ep_returned(&w->srv, NULL);
	if (fw_ret != w->ce.returned + w->se.returned) {
		vnetctl_msg("bench %s: the firmware returned %" PRIu64
			    " messages, the benchmark saw %" PRIu64, o->bench,
			    fw_ret, w->ce.returned + w->se.returned);
		errors++;
	}
	if (errors) {
		printf("FAIL: %" PRIu64 " messages returned or wrong\n", errors);
		return VNETCTL_EXIT_FAIL;
	}
	printf("PASS\n");
	return VNETCTL_EXIT_OK;
}

/* The largest payload both NICs' links carry, from VNET_IOC_NIC_INFO. */
static int max_payload_of(const struct wire_opts *o, uint32_t *max)
{
	struct vnet_nic_info info = { 0 };
	int fd = open(VNET_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	bool from = false, to = false;

	if (fd < 0) {
		vnetctl_err(errno, VNET_DEVICE_PATH);
		return -1;
	}
	*max = VNET_MEDIUM_MAX;
	for (; !ioctl(fd, VNET_IOC_NIC_INFO, &info); info.index++) {
		from |= info.nic_id == o->from;
		to |= info.nic_id == o->to;
		if ((info.nic_id == o->from || info.nic_id == o->to) &&
		    info.max_payload < *max)
			*max = info.max_payload;
	}
	close(fd);
	if (!from || !to)
		vnetctl_msg("bench %s: no NIC vnet%" PRIu32, o->bench,
			    from ? o->to : o->from);
	return from && to ? 0 : -1;
}

/*
 * --from and --to not given are the attached NICs (those with an
 * interface) not named, lowest id first; there must be just enough.
 */
static int pick_nics(struct wire_opts *o)
{
	unsigned int need = !o->have_from + !o->have_to, n = 0;
	struct vnetctl_nic *nics;
	bool unattached = false;
	uint32_t cand[2] = { 0, 0 };
	size_t nr, i;
	int err = vnetctl_read_nics(&nics, &nr, false);

	if (err)
		return vnetctl_sysfs_error(err);
	for (i = 0; i < nr; i++) {
		uint32_t id = nics[i].nic_id;
		bool named = (o->have_from && id == o->from) ||
			     (o->have_to && id == o->to);

		if (named && !nics[i].ifname[0]) {
			vnetctl_msg("bench %s: vnet%" PRIu32 " is not attached "
				    "to an interface (vnetctl attach)",
				    o->bench, id);
			unattached = true;
		} else if (!named && nics[i].ifname[0]) {
			if (n < ARRAY_SIZE(cand))
				cand[n] = id;
			n++;
		}
	}
	vnetctl_free_nics(nics, nr);
	if (unattached)
		return VNETCTL_EXIT_USAGE;
	if (need && n != need) {
		vnetctl_msg("bench %s: %u attached NIC%s besides those named, "
			    "need %u: give --from vnetA --to vnetB", o->bench,
			    n, n == 1 ? "" : "s", need);
		return VNETCTL_EXIT_USAGE;
	}
	if (!o->have_from)
		o->from = cand[0];
	if (!o->have_to)
		o->to = cand[need - 1];
	if (o->from != o->to)
		return 0;
	vnetctl_msg("bench %s: --from and --to name the same NIC", o->bench);
	return VNETCTL_EXIT_USAGE;
}

static int parse_u32(const char *s, uint32_t *v, uint32_t max)
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

static int parse_sizes(const char *s, struct wire_opts *o)
{
	char buf[256], *tok, *save;

	if (!s || strlen(s) >= sizeof(buf))
		return -1;
	strcpy(buf, s);
	o->nr_sizes = 0;
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save))
		if (o->nr_sizes == WIRE_MAX_SIZES ||
		    parse_u32(tok, &o->sizes[o->nr_sizes++], VNET_MEDIUM_MAX))
			return -1;
	return o->nr_sizes ? 0 : -1;
}

static int parse_opts(int argc, char **argv, struct wire_opts *o)
{
	static const uint32_t sizes[] = { 0, 64, 1024, 8192 };
	int a, bad;

	memset(o, 0, sizeof(*o));
	o->bench = argv[1];
	o->bw = !strcmp(argv[1], "bw");
	o->count = 1000;
	o->seconds = 2;
	memcpy(o->sizes, sizes, sizeof(sizes));
	o->nr_sizes = ARRAY_SIZE(sizes);
	/* argv[argc] is NULL: a missing value reads as NULL. */
	for (a = 2; a < argc; a += 2) {
		const char *opt = argv[a], *v = argv[a + 1];
		char *end = NULL;

		if (!strcmp(opt, "--from") || !strcmp(opt, "--to")) {
			bool from = opt[2] == 'f';

			if (v && !strncmp(v, "vnet", 4))
				v += 4;
			bad = parse_u32(v, from ? &o->from : &o->to,
					VNET_MAX_NIC_ID);
			*(from ? &o->have_from : &o->have_to) = true;
		} else if (!strcmp(opt, "--count") && !o->bw) {
			bad = parse_u32(v, &o->count, 10000000) || !o->count;
		} else if (!strcmp(opt, "--seconds") && o->bw) {
			o->seconds = v ? strtod(v, &end) : 0;
			bad = !v || end == v || *end || !(o->seconds > 0) ||
			      o->seconds > 3600;
		} else if (!strcmp(opt, "--sizes")) {
			bad = parse_sizes(v, o);
		} else if (!strcmp(opt, "--csv")) {
			o->csv = v;
			bad = !v || !*v;
		} else {
			vnetctl_msg("bench %s: unknown option '%s'", o->bench, opt);
			return -1;
		}
		if (bad) {
			vnetctl_msg("bench %s: bad or missing value for %s",
				    o->bench, opt);
			return -1;
		}
	}
	return 0;
}

bool vnetctl_bench_wire_handles(const char *name)
{
	return !strcmp(name, "pingpong") || !strcmp(name, "bw");
}

/* vnetctl bench pingpong|bw [options]; argv[1] names the benchmark. */
int vnetctl_cmd_bench_wire(int argc, char **argv)
{
	struct wire_opts o;
	struct wire w = { .o = &o };
	uint32_t max, k, n = 0;
	uint64_t tag;
	FILE *csv = NULL;
	int err, ret;

	if (parse_opts(argc, argv, &o)) {
		vnetctl_usage(stderr);
		return VNETCTL_EXIT_USAGE;
	}
	ret = pick_nics(&o);
	if (ret)
		return ret;
	if (max_payload_of(&o, &max))
		return VNETCTL_EXIT_FAIL;
	/* Sizes past what the links carry are measured at the largest. */
	for (k = 0; k < o.nr_sizes; k++) {
		uint32_t s = o.sizes[k] < max ? o.sizes[k] : max, i = 0;

		if (o.sizes[k] > max)
			vnetctl_msg("bench %s: size %" PRIu32 " capped at the "
				    "links' max payload %" PRIu32, o.bench,
				    o.sizes[k], max);
		while (i < n && o.sizes[i] != s)
			i++;
		if (i == n)
			o.sizes[n++] = s;
	}
	o.nr_sizes = n;

	err = vnet_endpoint_open(&w.cli, o.from);
	if (err) {
		vnetctl_err(err, "endpoint on vnet%" PRIu32, o.from);
		return VNETCTL_EXIT_FAIL;
	}
	ret = VNETCTL_EXIT_FAIL;
	err = vnet_endpoint_open(&w.srv, o.to);
	if (err) {
		vnetctl_err(err, "endpoint on vnet%" PRIu32, o.to);
		goto out_cli;
	}
	err = vnet_tag_random(&tag);
	if (!err)
		err = vnet_endpoint_set_tag(&w.srv, tag);
	if (!err)
		err = vnet_endpoint_map(&w.cli, 0, w.srv.name, tag);
	if (err) {
		vnetctl_err(err, "endpoint tag and translation");
		goto out;
	}
	if (o.csv)
		csv = fopen(o.csv, "w");
	if (o.csv && !csv) {
		vnetctl_err(errno, "%s", o.csv);
		goto out;
	}
	ret = vnetctl_bench_finish(csv, o.csv, measure(&w, csv, max));
out:
	vnet_endpoint_close(&w.srv);
out_cli:
	vnet_endpoint_close(&w.cli);
	return ret;
}
