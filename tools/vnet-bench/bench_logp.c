// SPDX-License-Identifier: GPL-2.0
/*
 * vnet-bench logp: o_s, o_r, g and L of libvnet short messages by the
 * method of Culler, Liu, Martin and Yoshikawa ("LogP Performance Assessment
 * of Fast Network Interfaces", IEEE Micro 1996), which the NOW paper's
 * figure 5 used.
 *
 * A client endpoint sends 4-word requests to a server endpoint whose thread
 * answers each with a 4-word reply.  The client issues bursts of M requests
 * with a computed delay D after each, timing only the issuing:
 *
 *  - short bursts (M = K, no delay) never wait for a credit: the time per
 *    message is the send overhead o_s;
 *  - long bursts with no delay run into flow control, and the time per
 *    message settles at the bottleneck's, the gap g;
 *  - as D grows the sender becomes the bottleneck; from then on each
 *    request also handles one reply in its implicit poll, so the time per
 *    message is o_s + D + o_r, which gives the receive overhead o_r;
 *  - a ping-pong gives the round-trip time, and L = RTT/2 - o_s - o_r.
 *
 * As a check on o_r, the "recv" row times AM_Poll handling K replies that
 * are already waiting in the queue: the receive overhead, measured directly.
 *
 * Delays default to fractions of the measured RTT, up to four times it, so
 * the last points are sender-bound wherever each thread has a processor.
 */
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "vnetctl.h"
#include "vnet-bench.h"
#include "bench_am.h"

static struct {
	const struct amb_opts *o;
	eb_t ceb, seb;
	ep_t c, s;
	en_t cname, sname;
	tag_t tag;			/* the server's */
	int replies;			/* the client's; only its thread writes */
	int stop;
	pthread_t server;
} lp;

static void logp_request(void *t, int32_t a0, int32_t a1, int32_t a2,
			 int32_t a3)
{
	AM_Reply4(t, AMB_H_REPLY, a0, a1, a2, a3);
}

/* Wakes the server thread at the end: AM_WaitSema returns on a message. */
static void logp_stop(void *t)
{
	(void)t;
	__atomic_store_n(&lp.stop, 1, __ATOMIC_RELEASE);
}

static void logp_reply(void *t, int32_t a0, int32_t a1, int32_t a2,
		       int32_t a3)
{
	(void)t;
	(void)a0;
	(void)a1;
	(void)a2;
	(void)a3;
	lp.replies++;
}

/* The server is attentive (polls) unless told to sleep between messages. */
static void *logp_serve(void *arg)
{
	(void)arg;
	AM_SetEventMask(lp.seb, AM_NOTEMPTY);
	while (!__atomic_load_n(&lp.stop, __ATOMIC_ACQUIRE)) {
		if (lp.o->poll)
			AM_Poll(lp.seb);
		else
			AM_WaitSema(lp.seb);
	}
	return NULL;
}

static int logp_setup(void)
{
	int e;

	e = AM_AllocateBundle(AM_SEQ, &lp.ceb);
	if (!e)
		e = AM_AllocateBundle(AM_SEQ, &lp.seb);
	if (!e)
		e = AMVNET_AllocateEndpointOnNIC(lp.ceb, lp.o->nic_id, &lp.c,
						 &lp.cname);
	if (!e)
		e = AMVNET_AllocateEndpointOnNIC(lp.seb, lp.o->nic_id, &lp.s,
						 &lp.sname);
	if (!e)
		e = AMVNET_RandomTag(&lp.tag);
	if (!e)
		e = AM_SetTag(lp.s, lp.tag);
	if (!e)
		e = AM_Map(lp.c, 0, lp.sname, lp.tag);
	if (!e)
		e = AM_SetExpectedResources(lp.c, 1, lp.o->credits);
	if (!e)
		e = AM_SetHandler(lp.s, AMB_H_REQUEST, logp_request);
	if (!e)
		e = AM_SetHandler(lp.s, AMB_H_STOP, logp_stop);
	if (!e)
		e = AM_SetHandler(lp.c, AMB_H_REPLY, logp_reply);
	if (!e)
		e = AM_SetHandler(lp.c, 0, amb_returned);
	if (!e)
		e = AM_SetHandler(lp.s, 0, amb_returned);
	return amb_check(e, "setting up the endpoints");
}

static void logp_drain(int target)
{
	while (lp.replies < target && !amb_errors)
		AM_Poll(lp.ceb);
}

/*
 * Every figure is the median over repetitions: the emulated machine this
 * usually runs on preempts threads for whole milliseconds, and a mean
 * would be mostly those.
 */
#define LOGP_MAX_SAMPLES	8192

static double logp_samples[LOGP_MAX_SAMPLES];

static int logp_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double logp_median(unsigned int n)
{
	if (!n)
		return NAN;
	qsort(logp_samples, n, sizeof(logp_samples[0]), logp_cmp);
	return n % 2 ? logp_samples[n / 2] :
		       (logp_samples[n / 2 - 1] + logp_samples[n / 2]) / 2;
}

/* One point: time per message issuing bursts of @m with @delay after each. */
struct logp_point {
	const char *measure;
	unsigned int burst;
	double delay;			/* s */
	uint64_t messages;
	double seconds;			/* issuing time, summed */
	double per_msg;			/* s, the median over bursts */
};

/* Round trips, one at a time, for @secs. */
static void logp_rtt(struct logp_point *p, double secs)
{
	double start = amb_now(), t0, t;
	unsigned int n = 0;

	p->messages = 0;
	do {
		t0 = amb_now();
		AM_Request4(lp.c, 0, AMB_H_REQUEST, n, 0, 0, 0);
		logp_drain(lp.replies + 1);
		t = amb_now();
		if (n < LOGP_MAX_SAMPLES)
			logp_samples[n++] = t - t0;
		p->messages++;
	} while (t - start < secs && !amb_errors);
	p->seconds = t - start;
	p->per_msg = logp_median(n);
}

static void logp_bursts(struct logp_point *p, double secs)
{
	unsigned int i, n = 0;
	double spent = 0;

	p->messages = 0;
	do {
		int target = lp.replies + (int)p->burst;
		double t0 = amb_now(), t;

		for (i = 0; i < p->burst; i++) {
			AM_Request4(lp.c, 0, AMB_H_REQUEST, i, 0, 0, 0);
			if (p->delay > 0)
				amb_spin_until(amb_now() + p->delay);
		}
		t = amb_now();
		spent += t - t0;
		if (n < LOGP_MAX_SAMPLES)
			logp_samples[n++] = (t - t0) / p->burst;
		p->messages += p->burst;
		logp_drain(target);	/* not timed: back to no credit out */
	} while ((spent < secs || n < 5) && !amb_errors);
	p->seconds = spent;
	p->per_msg = logp_median(n);
}

/*
 * K requests, a pause long enough for every reply to be back, then one
 * AM_Poll timed: per reply, the direct receive overhead.  Samples where not
 * all K had arrived are dropped.
 */
static void logp_recv(struct logp_point *p, double secs, double pause)
{
	unsigned int i, n = 0;
	double start = amb_now(), spent = 0;

	p->messages = 0;
	while ((amb_now() - start < secs || n < 5) && !amb_errors &&
	       amb_now() - start < 20 * secs) {
		int target = lp.replies + (int)p->burst;
		double t0, t;

		for (i = 0; i < p->burst; i++)
			AM_Request4(lp.c, 0, AMB_H_REQUEST, i, 0, 0, 0);
		amb_spin_until(amb_now() + pause);
		t0 = amb_now();
		AM_Poll(lp.ceb);
		t = amb_now();
		if (lp.replies == target && n < LOGP_MAX_SAMPLES) {
			logp_samples[n++] = (t - t0) / p->burst;
			spent += t - t0;
			p->messages += p->burst;
		}
		logp_drain(target);
	}
	p->seconds = spent;
	p->per_msg = logp_median(n);
}

static void logp_row(FILE *csv, const struct logp_point *p)
{
	char delay[32];

	snprintf(delay, sizeof(delay), "%.2f", p->delay * 1e6);
	printf("%-8s %7u %10s %12.2f %12.2f\n", p->measure, p->burst,
	       p->delay >= 0 ? delay : "-", p->per_msg * 1e6,
	       (p->per_msg - (p->delay > 0 ? p->delay : 0)) * 1e6);
	fflush(stdout);
	if (csv)
		fprintf(csv, "%s,%u,%s,%" PRIu64 ",%.6f,%.3f\n", p->measure,
			p->burst, p->delay >= 0 ? delay : "", p->messages,
			p->seconds, p->per_msg * 1e6);
}

static void logp_param(FILE *csv, const char *name, double us)
{
	if (csv)
		fprintf(csv, "%s,,,,,%.3f\n", name, us);
}

int amb_logp(struct amb_opts *o)
{
	struct logp_point pts[AMB_MAX_POINTS + 4], recv, rtt = {
		.measure = "rtt", .burst = 1, .delay = -1,
	};
	unsigned int n = 0, i, k, first_sender_bound = 0;
	double os, g, orecv, x_last, lat;
	FILE *csv = NULL;
	int ret = VNETCTL_EXIT_FAIL;

	memset(&lp, 0, sizeof(lp));
	lp.o = o;
	if (logp_setup())
		return VNETCTL_EXIT_FAIL;
	if (pthread_create(&lp.server, NULL, logp_serve, NULL)) {
		vnetctl_msg("logp: no server thread");
		return VNETCTL_EXIT_FAIL;
	}
	if (o->csv) {
		csv = amb_csv_open(o, "measure,burst,delay_us,messages,seconds,"
				   "us_per_message\n");
		if (!csv)
			goto out;
	}

	printf(BENCH_NAME " logp: NIC %" PRIu32 ", %d credits, server %s, "
	       "%.2f s per point\n", o->nic_id, o->credits,
	       o->poll ? "polls" : "waits (AM_WaitSema)", o->seconds);
	printf("%-8s %7s %10s %12s %12s\n", "MEASURE", "BURST", "DELAY_US",
	       "US_PER_MSG", "MINUS_DELAY");
	logp_rtt(&rtt, o->warmup);
	logp_rtt(&rtt, o->seconds);
	logp_row(csv, &rtt);

	/* Short bursts: M = 1 and M = K never wait for a credit. */
	pts[n++] = (struct logp_point){ .measure = "send", .burst = 1 };
	pts[n++] = (struct logp_point){ .measure = "send",
					.burst = (unsigned int)o->credits };
	pts[n++] = (struct logp_point){ .measure = "gap", .burst = o->burst };
	for (i = 0; i < n; i++) {
		logp_bursts(&pts[i], o->seconds);
		logp_row(csv, &pts[i]);
	}
	os = pts[1].per_msg;
	g = pts[2].per_msg;
	recv = (struct logp_point){ .measure = "recv",
				    .burst = (unsigned int)o->credits };
	logp_recv(&recv, o->seconds, 4 * rtt.per_msg);
	logp_row(csv, &recv);

	/* The delay sweep: fractions of the RTT unless given. */
	if (!o->nr_points) {
		static const double frac[] = { 0.125, 0.25, 0.5, 1, 2, 4 };

		for (i = 0; i < sizeof(frac) / sizeof(frac[0]); i++)
			o->points[o->nr_points++] =
				(unsigned int)(frac[i] * rtt.per_msg * 1e9);
	}
	for (i = 0; i < o->nr_points; i++) {
		struct logp_point *p = &pts[n];
		double d = o->points[i] / 1e9;
		double m = o->seconds / 4 / (d + g);

		/* Enough messages for a steady state, few enough for time. */
		if (m > o->burst)
			m = o->burst;
		if (m < 4.0 * o->credits)
			m = 4.0 * o->credits;
		*p = (struct logp_point){ .measure = "delay",
					  .burst = (unsigned int)m, .delay = d };
		logp_bursts(p, o->seconds);
		logp_row(csv, p);
		n++;
	}
	/*
	 * With a delay of an RTT or more every reply is back before the next
	 * send, so each request handles exactly one in its implicit poll:
	 * per_msg - delay = o_s + o_r.  Take the median over those points and
	 * report where that regime starts (within 10 %).
	 */
	for (i = 3, k = 0; i < n; i++)
		if (pts[i].delay >= rtt.per_msg)
			logp_samples[k++] = pts[i].per_msg - pts[i].delay;
	if (!k)
		logp_samples[k++] = pts[n - 1].per_msg - pts[n - 1].delay;
	x_last = logp_median(k);
	orecv = x_last - os;
	for (i = 3; i < n; i++) {
		if (pts[i].per_msg - pts[i].delay <= 1.1 * x_last) {
			first_sender_bound = i;
			break;
		}
	}
	lat = rtt.per_msg / 2 - os - orecv;
	printf("o_s %.2f us, o_r %.2f us, g %.2f us, L %.2f us (RTT %.2f us, "
	       "sender-bound from a delay of %.2f us)\n",
	       os * 1e6, orecv * 1e6, g * 1e6, lat * 1e6, rtt.per_msg * 1e6,
	       first_sender_bound ? pts[first_sender_bound].delay * 1e6 : NAN);
	printf("check: o_r measured directly %.2f us, which gives L %.2f us\n",
	       recv.per_msg * 1e6,
	       (rtt.per_msg / 2 - os - recv.per_msg) * 1e6);
	{
		struct amvnet_stats st;
		uint64_t waits, rescued;

		AMVNET_GetStats(lp.c, &st);
		AMVNET_GetWaitStats(lp.seb, &waits, &rescued);
		printf("client: %" PRIu64 " credit waits, %" PRIu64
		       " sleeps, %" PRIu64 " of them a whole 1 ms; server: %"
		       PRIu64 " waits, %" PRIu64 " ended by the safety net\n",
		       st.credit_waits, st.credit_sleeps,
		       st.credit_sleeps_full, waits, rescued);
	}
	logp_param(csv, "o_s", os * 1e6);
	logp_param(csv, "o_r", orecv * 1e6);
	logp_param(csv, "g", g * 1e6);
	logp_param(csv, "L", lat * 1e6);
	logp_param(csv, "rtt", rtt.per_msg * 1e6);
	logp_param(csv, "o_r_direct", recv.per_msg * 1e6);
	logp_param(csv, "L_direct",
		   (rtt.per_msg / 2 - os - recv.per_msg) * 1e6);
	ret = vnetctl_fclose(csv, o->csv) ? VNETCTL_EXIT_FAIL : VNETCTL_EXIT_OK;
	csv = NULL;
out:
	AM_Request0(lp.c, 0, AMB_H_STOP);
	pthread_join(lp.server, NULL);
	vnetctl_fclose(csv, o->csv);
	return ret;
}
