// SPDX-License-Identifier: GPL-2.0
/*
 * vnet-bench pingpong and bw: the NIC-to-NIC transport measured between
 * two NICs attached to Ethernet interfaces (typically the two ends of a
 * veth pair).  One endpoint on each NIC, the client on --from and the
 * server on --to, each driven by a thread of its own because an endpoint's
 * local indices belong to one thread (vnet/endpoint.h).  Or, between
 * nodes, a client here and a server that "vnet-bench serve" runs on another
 * node (--peer, and its tag in VNET_TAG).
 *
 * pingpong: one request in flight; the server echoes the payload in a reply
 * of the same size, so a round trip carries the size both ways, as
 * sockperf's ping-pong does.  bw: the client streams requests with up to
 * WIRE_WINDOW outstanding; the server answers each with a short reply,
 * which is the credit for the next request.  Payloads up to a medium
 * message's go in staging slots, larger ones as XFERs between segments
 * (bench_wire.h).
 *
 * Both sides block in poll() rather than spin: on a two-CPU machine a
 * spinning client and server would starve the NICs' firmware threads, and
 * blocking is what the TCP tools we are compared with do too.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <vnet/endpoint.h>

#include "vnetctl.h"
#include "vnet-bench.h"
#include "bench.h"

#include "bench_wire.h"

#define WIRE_WARMUP		50	/* round trips before pingpong measures */
#define WIRE_BW_WARMUP		0.25	/* seconds before bw measures */
#define WIRE_WINDOW		16	/* bw: requests outstanding at most */
#define WIRE_RING		64	/* bw: a reply may overtake fewer others */
#define WIRE_STALL_NS		(10 * 1000000000ULL)	/* no reply: give up */
#define WIRE_STAT_RETRANS	8	/* "retransmits" in vnetctl_stat_names */
/* Payload copies: tx_copied_bytes, rx_gathered_bytes, payload_copied_... */
#define WIRE_STAT_TX_COPIED	35
#define WIRE_STAT_GATHERED	37
#define WIRE_STAT_FW_COPIED	38

/* bw's free areas are the bits of a word; pingpong's echo lands in area 1. */
_Static_assert(WIRE_SLOTS >= 2 && WIRE_SLOTS < 32, "WIRE_SLOTS");

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

static bool is_xfer(uint32_t size)
{
	return size > VNET_MEDIUM_MAX;
}

/*
 * Where the payload of @d, received by @ep, is: its staging slot, or for
 * an XFER the range of @seg it landed in (NULL if @seg cannot hold it).
 */
static const uint8_t *landed(struct vnet_endpoint *ep, unsigned int q,
			     const struct wire_seg *seg,
			     const struct vnet_desc *d)
{
	if (!(d->flags & VNET_DESC_XFER))
		return vnet_endpoint_payload(ep, q);
	if (d->offset > seg->len || d->len > seg->len - d->offset)
		return NULL;
	return seg->mem + d->offset;
}

/*
 * The request for round trip or message @seq: @len bytes from the
 * client's staging slot or, past a medium payload, from area @area of its
 * segment (or, --pinned, of its pinned source) into the same area of the
 * server's; a pingpong echo of an XFER lands in the client's area 1
 * (args[1]).
 */
static struct vnet_desc request(const struct wire *w, uint8_t handler,
				uint32_t seq, uint32_t len, uint32_t area)
{
	struct vnet_desc r = {
		.handler = handler, .nargs = 1, .args = { seq }, .len = len,
		.flags = len ? VNET_DESC_MEDIUM : 0,
	};

	if (is_xfer(len)) {
		r.flags = VNET_DESC_XFER | VNET_DESC_FROM_SEG;
		r.nargs = 2;
		r.src_offset = area * w->area;
		if (w->o->pinned) {
			r.flags = VNET_DESC_XFER | VNET_DESC_FROM_PIN;
			r.src_offset += (uintptr_t)w->xsrc;
		}
		r.offset = area * w->area;
		r.args[1] = w->area;
	}
	return r;
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
		const uint8_t *payload = landed(ep, VNET_Q_REQ_RECV, &w->sseg,
						d);
		bool xfer = d->flags & VNET_DESC_XFER;
		struct vnet_desc r = {
			.handler = WIRE_H_REPLY, .nargs = 1,
			.token = d->token, .args = { d->args[0] },
		};
		uint32_t len = d->handler == WIRE_H_REQUEST ? d->len : 0;

		if ((d->handler != WIRE_H_REQUEST &&
		     d->handler != WIRE_H_REQUEST_NOECHO) ||
		    d->nargs != (xfer ? 2 : 1) || !payload ||
		    !stamped(payload, d->len, d->args[0])) {
			count(&w->se.bad);
			len = 0;
		}
		/* pingpong echoes the payload from where it arrived. */
		r.flags = len ? VNET_DESC_MEDIUM : 0;
		r.len = len;
		if (xfer && len) {
			r.flags = VNET_DESC_XFER | VNET_DESC_FROM_SEG;
			r.src_offset = d->offset;
			r.offset = d->args[1];
			payload = NULL;
			len = 0;
		}
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
	fprintf(stderr, BENCH_NAME ": %s: no reply for %llu s at size %"
		PRIu32 ": %" PRIu64 " requests sent, %" PRIu64 " answered; the "
		"server answered %" PRIu64 "; %" PRIu64 " returned to the "
		"client, %" PRIu64 " to the server\n", w->o->bench,
		WIRE_STALL_NS / 1000000000ULL, w->size, w->sent, w->done,
		__atomic_load_n(&w->served, __ATOMIC_RELAXED), w->ce.returned,
		__atomic_load_n(&w->se.returned, __ATOMIC_RELAXED));
	ep_returned(&w->cli, "client");
	nic_stat(w->o->from, 0, true);
	if (!w->o->remote) {
		ep_returned(&w->srv, "server");
		nic_stat(w->o->to, 0, true);
	}
	exit(BENCH_EXIT_STALL);
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
	bool xfer = is_xfer(size);

	/* An XFER's source is area 0 of the client's segment, or pin. */
	if (xfer)
		buf = w->xsrc;
	for (i = 0; i < size; i++)
		buf[i] = (uint8_t)(i * 7 + size);
	for (i = 0; i < WIRE_WARMUP + w->o->count; i++) {
		struct vnet_desc r = request(w, WIRE_H_REQUEST, i, size, 0);
		const struct vnet_desc *d;
		uint64_t t0, t1;

		stamp(buf, size, i);
		t0 = now_ns();
		/* Nothing is outstanding, so the queue has room. */
		vnet_endpoint_post(&w->cli, VNET_Q_REQ_SEND, &r, buf,
				   xfer ? 0 : size);
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
			const uint8_t *echo = landed(&w->cli, VNET_Q_REP_RECV,
						     &w->cseg, d);

			if (d->handler != WIRE_H_REPLY || d->args[0] != i ||
			    d->len != size || !echo ||
			    !(d->flags & VNET_DESC_XFER) != !xfer ||
			    (xfer && d->offset != w->area) ||
			    memcmp(echo, buf, size))
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
	uint32_t size = row->size, areas = (1u << WIRE_SLOTS) - 1;
	uint8_t area_of[WIRE_RING];
	bool xfer = is_xfer(size);

	end = start + (uint64_t)((WIRE_BW_WARMUP + w->o->seconds) * 1e9);
	if (!xfer)
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
				if (xfer)
					areas |= 1u << area_of[k];
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
		       !busy[seq % WIRE_RING] && (!xfer || areas)) {
			uint32_t a = xfer ? (uint32_t)__builtin_ctz(areas) : 0;
			struct vnet_desc r = request(w, WIRE_H_REQUEST_NOECHO,
						     seq, size, a);
			uint8_t *src = xfer ? w->xsrc + a * w->area : buf;

			stamp(src, size, seq);
			if (vnet_endpoint_post(&w->cli, VNET_Q_REQ_SEND, &r,
					       buf, xfer ? 0 : size))
				break;
			if (xfer)
				areas &= ~(1u << a);
			area_of[seq % WIRE_RING] = a;
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
	if (o->remote)
		printf(BENCH_NAME " %s: vnet%" PRIu32 " -> %" PRIu32 ":%"
		       PRIu32 " (max payload %" PRIu32 " here), ", o->bench,
		       o->from, o->peer.nic, o->peer.ep, max);
	else
		printf(BENCH_NAME " %s: vnet%" PRIu32 " -> vnet%" PRIu32
		       " (max payload %" PRIu32 "), ", o->bench, o->from,
		       o->to, max);
	if (o->pinned)
		printf("XFERs from pinned memory, ");
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
		       "outstanding; COPIES: payload copies per byte\n"
		       "%6s %10s %12s %10s %8s %7s %6s\n", o->seconds,
		       WIRE_BW_WARMUP, WIRE_WINDOW, "SIZE", "MB/S",
		       "MESSAGES/S", "MESSAGES", "RETRANS", "ERRORS", "COPIES");
		if (csv)
			fputs("size,seconds,messages,messages_per_s,mb_per_s,"
			      "retransmits,errors,copies_per_byte\n", csv);
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
		char copies[16] = "-";

		if (!o->remote && r->size)
			snprintf(copies, sizeof(copies), "%.2f", r->copies);
		printf("%6" PRIu32 " %10.2f %12.1f %10" PRIu64 " %8" PRIu64
		       " %7" PRIu64 " %6s\n", r->size, mbs, rate, r->n,
		       r->retrans, r->errors, copies);
		if (csv)
			fprintf(csv, "%" PRIu32 ",%.3f,%" PRIu64 ",%.1f,%.3f,%"
				PRIu64 ",%" PRIu64 ",%s\n", r->size,
				r->seconds, r->n, rate, mbs, r->retrans,
				r->errors, strcmp(copies, "-") ? copies : "");
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
	fprintf(stderr, BENCH_NAME ": %s: %" PRIu64 " returned, %" PRIu64
		" bad", who, e->returned, e->bad);
	for (k = 0; k <= VNET_RET_NR; k++)
		if (e->reason[k])
			fprintf(stderr, ", %s %" PRIu64, bench_reason_name(k),
				e->reason[k]);
	fputc('\n', stderr);
}

/* Retransmissions so far on the NICs here (a remote server's are its own). */
static uint64_t retransmits(const struct wire_opts *o)
{
	return nic_stat(o->from, WIRE_STAT_RETRANS, false) +
	       (o->remote ? 0 : nic_stat(o->to, WIRE_STAT_RETRANS, false));
}

/*
 * Payload bytes copied so far on both NICs, wherever: into frames for
 * the wire, gathered off it, and by the firmware (pool buffers, staging
 * slots, segments).  Only with both NICs here.
 */
static uint64_t copies(const struct wire_opts *o)
{
	static const unsigned int stat[] = { WIRE_STAT_TX_COPIED,
		WIRE_STAT_GATHERED, WIRE_STAT_FW_COPIED };
	uint64_t sum = 0;
	unsigned int i;

	for (i = 0; i < 3; i++)
		sum += nic_stat(o->from, stat[i], false) +
		       nic_stat(o->to, stat[i], false);
	return sum;
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

	err = !rtt || !buf ? ENOMEM :
	      o->remote ? 0 : pthread_create(&srv, NULL, server_main, w);
	if (err) {
		vnetctl_err(err, "%s", o->bench);
		free(rtt);
		free(buf);
		return VNETCTL_EXIT_FAIL;
	}
	print_header(csv, o, max);
	for (k = 0; k < o->nr_sizes; k++) {
		struct wire_row row = { .size = o->sizes[k] };
		uint64_t before = errors_of(w);
		uint64_t rt = retransmits(o);
		uint64_t copied = o->remote ? 0 : copies(o), sent = w->sent;

		w->size = row.size;
		if (o->bw)
			bw(w, buf, &row);
		else
			pingpong(w, buf, rtt, &row);
		row.retrans = retransmits(o) - rt;
		/* bw's requests carry the payload; their replies nothing. */
		if (o->bw && !o->remote && row.size && w->sent > sent)
			row.copies = (double)(copies(o) - copied) /
				     ((double)(w->sent - sent) * row.size);
		row.errors = errors_of(w) - before;
		print_row(csv, o, &row);
	}
	__atomic_store_n(&w->stop, 1, __ATOMIC_RELEASE);
	if (!o->remote)
		pthread_join(srv, NULL);
	free(rtt);
	free(buf);

	print_errs("client", &w->ce);
	print_errs("server", &w->se);
	errors = errors_of(w);
	/* Returned messages we missed would make the figures a lie. */
	fw_ret = ep_returned(&w->cli, NULL) +
		 (o->remote ? 0 : ep_returned(&w->srv, NULL));
	if (fw_ret != w->ce.returned + w->se.returned) {
		vnetctl_msg("%s: the firmware returned %" PRIu64
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

bool bench_wire_handles(const char *name)
{
	return !strcmp(name, "pingpong") || !strcmp(name, "bw") ||
	       !strcmp(name, "serve");
}

static volatile sig_atomic_t serve_stop;

static void serve_signal(int sig __attribute__((unused)))
{
	serve_stop = 1;
}

/*
 * serve: one endpoint answering whoever brings its tag, until a
 * signal or --seconds.  Its name and tag go to stdout, to its owner, who
 * hands them to the client (--peer, VNET_TAG) on another node.
 */
static int serve_until_stopped(const struct wire_opts *o)
{
	struct sigaction sa = { .sa_handler = serve_signal };
	struct wire w = { .o = o };
	uint64_t tag, end = 0;
	int err;

	err = vnet_endpoint_open(&w.srv, o->to);
	if (err) {
		vnetctl_err(err, "endpoint on vnet%" PRIu32, o->to);
		return VNETCTL_EXIT_FAIL;
	}
	err = vnet_tag_random(&tag);
	if (!err)
		err = vnet_endpoint_set_tag(&w.srv, tag);
	if (err) {
		vnetctl_err(err, "endpoint tag");
		vnet_endpoint_close(&w.srv);
		return VNETCTL_EXIT_FAIL;
	}
	/* The client picks the areas: room for the largest in each. */
	err = wire_seg_give(&w.srv, &w.sseg,
			    (uint64_t)WIRE_SLOTS * VNET_XFER_MAX);
	if (err)
		vnetctl_msg("serve: no segment, XFERs of more than %d bytes "
			    "will come back: %s", VNET_MEDIUM_MAX,
			    strerror(-err));
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (o->seconds > 0)
		end = now_ns() + (uint64_t)(o->seconds * 1e9);
	printf(BENCH_NAME " serve: %" PRIu32 ":%" PRIu32 " tag %016" PRIx64
	       "\n", w.srv.name.nic, w.srv.name.ep, tag);
	fflush(stdout);
	while (!serve_stop && (!end || now_ns() < end))
		if (!serve(&w))
			vnet_endpoint_wait(&w.srv, 50);
	printf("served %" PRIu64 " requests, %" PRIu64 " bad, %" PRIu64
	       " replies returned\n", w.served, w.se.bad, w.se.returned);
	print_errs("server", &w.se);
	vnet_endpoint_close(&w.srv);
	wire_seg_drop(&w.sseg);
	return w.se.bad ? VNETCTL_EXIT_FAIL : VNETCTL_EXIT_OK;
}

/* vnet-bench pingpong|bw|serve [options]; argv[1] names the benchmark. */
int bench_cmd_wire(int argc, char **argv)
{
	struct wire_opts o;
	struct wire w = { .o = &o };
	uint32_t max, k, n = 0, largest = 0;
	uint64_t tag;
	FILE *csv = NULL;
	int err, ret;

	if (wire_parse(argc, argv, &o)) {
		bench_usage(stderr);
		return VNETCTL_EXIT_USAGE;
	}
	ret = wire_pick_nics(&o);
	if (ret)
		return ret;
	if (wire_max_payload(&o, &max))
		return VNETCTL_EXIT_FAIL;
	if (o.serve)
		return serve_until_stopped(&o);
	/* Sizes past what the links carry are measured at the largest. */
	for (k = 0; k < o.nr_sizes; k++) {
		uint32_t s = o.sizes[k] < max ? o.sizes[k] : max, i = 0;

		if (o.sizes[k] > max)
			vnetctl_msg("%s: size %" PRIu32 " capped at the "
				    "links' max payload %" PRIu32, o.bench,
				    o.sizes[k], max);
		while (i < n && o.sizes[i] != s)
			i++;
		if (i == n)
			o.sizes[n++] = s;
		if (s > largest)
			largest = s;
	}
	o.nr_sizes = n;
	/* Areas whole pages, within a remote server's (serve). */
	w.area = ((uint64_t)largest + 4095) & ~4095ULL;

	err = vnet_endpoint_open(&w.cli, o.from);
	if (err) {
		vnetctl_err(err, "endpoint on vnet%" PRIu32, o.from);
		return VNETCTL_EXIT_FAIL;
	}
	ret = VNETCTL_EXIT_FAIL;
	if (is_xfer(largest)) {
		err = wire_seg_give(&w.cli, &w.cseg, WIRE_SLOTS * w.area);
		if (err) {
			vnetctl_err(err, "segment of %" PRIu64 " bytes",
				    WIRE_SLOTS * w.area);
			goto out_cli;
		}
		w.xsrc = w.cseg.mem;
	}
	if (is_xfer(largest) && o.pinned) {
		err = wire_pin_give(&w.cli, &w.pin, WIRE_SLOTS * w.area);
		if (err) {
			vnetctl_err(err, "pinning %" PRIu64 " bytes",
				    WIRE_SLOTS * w.area);
			goto out_cli;
		}
		w.xsrc = w.pin.mem;
	}
	if (o.remote) {
		err = vnet_endpoint_map(&w.cli, 0, o.peer, o.tag);
		if (err) {
			vnetctl_err(err, "translation to %" PRIu32 ":%" PRIu32,
				    o.peer.nic, o.peer.ep);
			goto out_cli;
		}
	} else {
		err = vnet_endpoint_open(&w.srv, o.to);
		if (err) {
			vnetctl_err(err, "endpoint on vnet%" PRIu32, o.to);
			goto out_cli;
		}
		if (is_xfer(largest)) {
			err = wire_seg_give(&w.srv, &w.sseg,
					    WIRE_SLOTS * w.area);
			if (err) {
				vnetctl_err(err, "segment of %" PRIu64
					    " bytes", WIRE_SLOTS * w.area);
				goto out;
			}
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
	}
	if (o.csv)
		csv = fopen(o.csv, "w");
	if (o.csv && !csv) {
		vnetctl_err(errno, "%s", o.csv);
		goto out;
	}
	ret = bench_finish(csv, o.csv, measure(&w, csv, max));
out:
	if (!o.remote)
		vnet_endpoint_close(&w.srv);
	wire_seg_drop(&w.sseg);
out_cli:
	vnet_endpoint_close(&w.cli);
	wire_seg_drop(&w.cseg);
	wire_seg_drop(&w.pin);
	return ret;
}
