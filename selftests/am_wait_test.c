// SPDX-License-Identifier: GPL-2.0
/*
 * libvnet with threads: AM_Wait never loses a wake-up, an AM_PAR bundle
 * polled and sent on from several threads, bulk transfers from several
 * sources at once, and a server with one thread per endpoint on four times
 * more endpoints than the NIC has frames.
 */
#include <pthread.h>

#include "kselftest_harness.h"
#include "am_util.h"

#define OK(call)	ASSERT_EQ(AM_OK, (call))

static volatile int bad, done;

/* A client: its own bundle and endpoint, mapped to a server at slot 0. */
struct client {
	int id;
	eb_t eb;
	ep_t ep;
	en_t name;
	int replies;
	int sent;
	pthread_t tid;
};

static int client_open(struct client *c, int id, en_t server, int mode)
{
	int e;

	memset(c, 0, sizeof(*c));
	c->id = id;
	e = AM_AllocateBundle(mode, &c->eb);
	if (!e)
		e = AM_AllocateEndpoint(c->eb, &c->ep, &c->name);
	if (!e)
		e = AM_Map(c->ep, 0, server, AM_TAG);
	return e;
}

/*
 * AM_Wait: every cycle both sides sleep in AM_WaitSema, the server until a
 * request comes, the client until its reply does.  The safety net is off,
 * so a wake-up the driver missed would hang the test: every cycle must
 * complete on wake-ups alone.
 */
#define WAIT_CLIENTS	4
#define WAIT_CYCLES	10000

static struct client wc[WAIT_CLIENTS];
static volatile int served;

static void wait_request(void *t, int32_t id, int32_t seq)
{
	served++;
	if (AM_Reply2(t, 2, id, seq))
		bad++;
}

static void wait_reply(void *t, int32_t id, int32_t seq)
{
	struct client *c = &wc[id];

	(void)t;
	if (seq != c->replies)
		bad++;
	c->replies++;
}

static void *wait_client(void *arg)
{
	struct client *c = arg;
	int i;

	for (i = 0; i < WAIT_CYCLES / WAIT_CLIENTS; i++) {
		if (AM_Request2(c->ep, 0, 1, c->id, i))
			bad++;
		while (c->replies <= i && !bad)
			if (AM_WaitSema(c->eb))
				bad++;
	}
	return NULL;
}

/* Tests that need more than the harness's default 30 s. */
FIXTURE(slow) {
	int unused;
};

FIXTURE_SETUP(slow)
{
}

FIXTURE_TEARDOWN(slow)
{
}

TEST_F_TIMEOUT(slow, wait_never_loses_a_wakeup, 600)
{
	uint64_t waits, rescued, cwaits = 0, crescued = 0;
	eb_t seb;
	ep_t sep;
	en_t sname;
	int i;

	OK(AM_Init());
	OK(AM_AllocateBundle(AM_SEQ, &seb));
	OK(AM_AllocateEndpoint(seb, &sep, &sname));
	OK(AM_SetTag(sep, AM_TAG));
	OK(AM_SetHandler(sep, 1, wait_request));
	OK(AM_SetEventMask(seb, AM_NOTEMPTY));
	OK(AMVNET_SetWaitRescue(seb, 0));
	for (i = 0; i < WAIT_CLIENTS; i++) {
		OK(client_open(&wc[i], i, sname, AM_SEQ));
		OK(AM_SetHandler(wc[i].ep, 2, wait_reply));
		OK(AM_SetEventMask(wc[i].eb, AM_NOTEMPTY));
		OK(AMVNET_SetWaitRescue(wc[i].eb, 0));
	}
	for (i = 0; i < WAIT_CLIENTS; i++)
		ASSERT_EQ(0, pthread_create(&wc[i].tid, NULL, wait_client,
					    &wc[i]));
	while (served < WAIT_CYCLES && !bad)
		OK(AM_WaitSema(seb));
	for (i = 0; i < WAIT_CLIENTS; i++) {
		pthread_join(wc[i].tid, NULL);
		EXPECT_EQ(WAIT_CYCLES / WAIT_CLIENTS, wc[i].replies);
		OK(AMVNET_GetWaitStats(wc[i].eb, &waits, &rescued));
		cwaits += waits;
		crescued += rescued;
	}
	OK(AMVNET_GetWaitStats(seb, &waits, &rescued));
	TH_LOG("%d cycles: server waited %llu times (%llu ended by the safety net), clients %llu (%llu)",
	       served, (unsigned long long)waits, (unsigned long long)rescued,
	       (unsigned long long)cwaits, (unsigned long long)crescued);
	EXPECT_EQ(WAIT_CYCLES, served);
	EXPECT_LE(WAIT_CLIENTS, cwaits);
	EXPECT_EQ(0, bad);
	OK(AM_Terminate());
}

/*
 * A returned message wakes its sender too: one thread sleeps in AM_Wait on
 * an AM_PAR endpoint (no safety net), another sends from it to a
 * translation that is not mapped, after the first is asleep.
 */
static ep_t late_ep;
static int late_returned;

static void late_ret(int status, op_t opcode, void *t)
{
	(void)t;
	if (status != EBADENTRY || opcode != AM_REQUEST_M)
		bad++;
	__atomic_store_n(&late_returned, 1, __ATOMIC_RELEASE);
}

static void *late_sender(void *arg)
{
	struct timespec ts = { 0, 200 * 1000 * 1000 };

	(void)arg;
	nanosleep(&ts, NULL);
	if (AM_Request0(late_ep, 7, 1))
		bad++;
	return NULL;
}

TEST_F_TIMEOUT(slow, returned_message_wakes_the_sender, 60)
{
	pthread_t tid;
	eb_t eb;
	en_t n;

	OK(AM_Init());
	OK(AM_AllocateBundle(AM_PAR, &eb));
	OK(AM_AllocateEndpoint(eb, &late_ep, &n));
	OK(AM_SetHandler(late_ep, 0, late_ret));
	OK(AM_SetEventMask(eb, AM_NOTEMPTY));
	OK(AMVNET_SetWaitRescue(eb, 0));
	OK(AM_Poll(eb));			/* on the card before we sleep */
	ASSERT_EQ(0, pthread_create(&tid, NULL, late_sender, NULL));
	while (!__atomic_load_n(&late_returned, __ATOMIC_ACQUIRE))
		OK(AM_Wait(eb));
	pthread_join(tid, NULL);
	EXPECT_EQ(0, bad);
	OK(AM_Terminate());
}

/*
 * An AM_PAR bundle of server endpoints polled by several threads, and an
 * AM_PAR client bundle whose two endpoints several threads send on.  Every
 * request is handled exactly once, an endpoint's handlers never overlap,
 * and no endpoint ever has more than K requests out.
 */
#define PAR_SERVERS	4
#define PAR_POLLERS	4
#define PAR_SENDERS	4
#define PAR_EACH	400

static struct {
	eb_t seb, ceb;
	ep_t s[PAR_SERVERS], c[2];
	int inside[PAR_SERVERS];
	uint8_t seen[PAR_SENDERS][PAR_EACH];
	int replies;
} par;

static void par_request(void *t, int32_t sender, int32_t seq)
{
	ep_t me;
	int i;

	if (AM_GetDestEndpoint(t, &me))
		bad++;
	for (i = 0; i < PAR_SERVERS && par.s[i] != me; i++)
		;
	if (i == PAR_SERVERS ||
	    __atomic_fetch_add(&par.inside[i], 1, __ATOMIC_ACQ_REL))
		bad++;			/* unknown, or two handlers at once */
	par.seen[sender][seq]++;
	if (AM_Reply1(t, 2, seq))
		bad++;
	__atomic_fetch_sub(&par.inside[i], 1, __ATOMIC_ACQ_REL);
}

static void par_reply(void *t, int32_t seq)
{
	(void)t;
	(void)seq;
	__atomic_fetch_add(&par.replies, 1, __ATOMIC_RELAXED);
}

static void *par_poller(void *arg)
{
	eb_t eb = arg;

	while (!__atomic_load_n(&done, __ATOMIC_ACQUIRE))
		if (AM_Poll(eb))
			bad++;
	return NULL;
}

static void *par_sender(void *arg)
{
	int id = (int)(intptr_t)arg, i;

	for (i = 0; i < PAR_EACH; i++)
		if (AM_Request2(par.c[id % 2], i % PAR_SERVERS, 1, id, i))
			bad++;
	return NULL;
}

TEST_F_TIMEOUT(slow, par_bundle_from_many_threads, 300)
{
	pthread_t pollers[PAR_POLLERS], senders[PAR_SENDERS];
	struct amvnet_stats st;
	en_t n;
	int i, j, once = 0;

	OK(AM_Init());
	OK(AM_AllocateBundle(AM_PAR, &par.seb));
	OK(AM_AllocateBundle(AM_PAR, &par.ceb));
	for (i = 0; i < 2; i++) {
		OK(AM_AllocateEndpoint(par.ceb, &par.c[i], &n));
		OK(AM_SetHandler(par.c[i], 2, par_reply));
	}
	for (i = 0; i < PAR_SERVERS; i++) {
		OK(AM_AllocateEndpoint(par.seb, &par.s[i], &n));
		OK(AM_SetTag(par.s[i], AM_TAG));
		OK(AM_SetHandler(par.s[i], 1, par_request));
		OK(AM_Map(par.c[0], i, n, AM_TAG));
		OK(AM_Map(par.c[1], i, n, AM_TAG));
	}
	for (i = 0; i < PAR_POLLERS; i++)
		ASSERT_EQ(0, pthread_create(&pollers[i], NULL, par_poller,
					    par.seb));
	for (i = 0; i < PAR_SENDERS; i++)
		ASSERT_EQ(0, pthread_create(&senders[i], NULL, par_sender,
					    (void *)(intptr_t)i));
	for (i = 0; i < PAR_SENDERS; i++)
		pthread_join(senders[i], NULL);
	ASSERT_TRUE(am_poll_until(par.ceb, &par.replies,
				  PAR_SENDERS * PAR_EACH));
	__atomic_store_n(&done, 1, __ATOMIC_RELEASE);
	for (i = 0; i < PAR_POLLERS; i++)
		pthread_join(pollers[i], NULL);

	for (i = 0; i < PAR_SENDERS; i++)
		for (j = 0; j < PAR_EACH; j++)
			once += par.seen[i][j] == 1;
	EXPECT_EQ(PAR_SENDERS * PAR_EACH, once);
	for (i = 0; i < 2; i++) {
		OK(AMVNET_GetStats(par.c[i], &st));
		EXPECT_GE(AMVNET_DEFAULT_CREDITS, st.max_outstanding);
		EXPECT_EQ(0, st.outstanding);
	}
	EXPECT_EQ(0, bad);
	OK(AM_Terminate());
}

/*
 * Bulk transfers from several sources into one segment at once: the
 * fragments of different sources interleave at the receiver, which must
 * still run each handler once, on its whole range.
 */
#define XS		3
#define XLEN		30000
#define XEACH		40

static struct {
	uint8_t *seg;
	int runs[XS];
} xs;

static void xs_done(void *t, void *buf, size_t nb, int32_t src, int32_t i)
{
	size_t off = (size_t)((uint8_t *)buf - xs.seg);

	if (src < 0 || src >= XS || i != xs.runs[src] || nb != XLEN ||
	    off != (size_t)src * XLEN ||
	    am_sum(buf, nb) != am_sum(xs.seg + (size_t)XS * XLEN +
				      (size_t)src * XLEN, XLEN))
		bad++;
	/* Changed for the next round, so a stale range would not match. */
	if (src >= 0 && src < XS)
		xs.runs[src]++;
	if (AM_Reply0(t, 2))
		bad++;
}

static void xs_ack(void *t)
{
	(void)t;
}

static void *xs_sender(void *arg)
{
	struct client *c = arg;
	uint8_t *src = xs.seg + (size_t)XS * XLEN + (size_t)c->id * XLEN;
	int i;

	for (i = 0; i < XEACH; i++)
		if (AM_RequestXfer2(c->ep, 0, (uintptr_t)c->id * XLEN, 1, src,
				    XLEN, c->id, i))
			bad++;
	/* The last credits come back while we poll. */
	for (i = 0; i < 100000 && !bad; i++) {
		struct amvnet_stats st;

		AM_Poll(c->eb);
		if (!AMVNET_GetStats(c->ep, &st) && !st.outstanding)
			break;
	}
	return NULL;
}

TEST_F_TIMEOUT(slow, xfer_from_several_sources, 300)
{
	static struct client c[XS];
	eb_t seb;
	ep_t sep;
	en_t sname;
	int i;

	xs.seg = calloc(2 * XS, XLEN);
	ASSERT_NE(NULL, xs.seg);
	for (i = 0; i < XS; i++)
		am_fill(xs.seg + (size_t)(XS + i) * XLEN, XLEN, 77 + i);
	OK(AM_Init());
	OK(AM_AllocateBundle(AM_SEQ, &seb));
	OK(AM_AllocateEndpoint(seb, &sep, &sname));
	OK(AM_SetTag(sep, AM_TAG));
	OK(AM_SetSeg(sep, xs.seg, (size_t)XS * XLEN));
	OK(AM_SetHandler(sep, 1, xs_done));
	for (i = 0; i < XS; i++) {
		OK(client_open(&c[i], i, sname, AM_SEQ));
		OK(AM_SetHandler(c[i].ep, 2, xs_ack));
		ASSERT_EQ(0, pthread_create(&c[i].tid, NULL, xs_sender, &c[i]));
	}
	for (;;) {
		int total = 0;

		for (i = 0; i < XS; i++)
			total += __atomic_load_n(&xs.runs[i], __ATOMIC_RELAXED);
		if (total == XS * XEACH || bad)
			break;
		OK(AM_Poll(seb));
	}
	for (i = 0; i < XS; i++)
		pthread_join(c[i].tid, NULL);
	for (i = 0; i < XS; i++)
		EXPECT_EQ(XEACH, xs.runs[i]);
	EXPECT_EQ(0, bad);
	OK(AM_Terminate());
	free(xs.seg);
}

/*
 * The NOW paper's event-driven server (section 5.4): one thread per server
 * endpoint, each asleep in AM_WaitSema on its own bundle, with four times
 * more server endpoints than the NIC has frames, and as many clients.  A
 * server thread whose endpoint is not on the card sleeps in the fault its
 * AM_Poll takes while the others run; every request is answered.
 */
#define TPE_ROUNDS	6
#define TPE_THREADS	4

struct tpe_server {
	eb_t eb;
	ep_t ep;
	en_t name;
	int served;
	int stop;
	pthread_t tid;
};

static struct tpe_server *tpe;
static int tpe_n;
static int *tpe_got;
static volatile int tpe_total;

static void tpe_request(void *t, int32_t idx, int32_t seq)
{
	ep_t me;

	if (idx < 0 || idx >= tpe_n || AM_GetDestEndpoint(t, &me) ||
	    tpe[idx].ep != me) {
		bad++;
		return;
	}
	tpe[idx].served++;
	if (AM_Reply2(t, 2, idx, seq))
		bad++;
}

static void tpe_stop(void *t, int32_t idx)
{
	(void)t;
	if (idx >= 0 && idx < tpe_n)
		tpe[idx].stop = 1;
}

static void tpe_reply(void *t, int32_t idx, int32_t seq)
{
	(void)t;
	if (idx < 0 || idx >= tpe_n || seq != tpe_got[idx])
		bad++;
	else
		tpe_got[idx]++;
	__atomic_fetch_add(&tpe_total, 1, __ATOMIC_RELAXED);
}

static void *tpe_serve(void *arg)
{
	struct tpe_server *s = arg;

	while (!s->stop && !bad)
		if (AM_WaitSema(s->eb))
			bad++;
	return NULL;
}

struct tpe_client {
	eb_t eb;
	ep_t ep[64];
	int first, n;
	pthread_t tid;
};

/*
 * Each client thread has one request out at a time, going round its
 * endpoints: four at once in all.  More would only have the driver start
 * more fault-in workers (libvnet.rst), not test anything more here.
 */
static void *tpe_drive(void *arg)
{
	struct tpe_client *c = arg;
	int r, i;

	/* Asleep until the reply, so idle endpoints stay off the card. */
	if (AM_SetEventMask(c->eb, AM_NOTEMPTY))
		bad++;
	for (r = 0; r < TPE_ROUNDS && !bad; r++) {
		for (i = 0; i < c->n && !bad; i++) {
			int g = c->first + i;

			if (AM_Request2(c->ep[i], 0, 1, g, r))
				bad++;
			while (tpe_got[g] <= r && !bad)
				if (AM_WaitSema(c->eb))
					bad++;
		}
	}
	return NULL;
}

TEST_F_TIMEOUT(slow, thread_per_endpoint_server_pages, 600)
{
	struct tpe_client cl[TPE_THREADS];
	long long faults0, faults1;
	en_t n;
	int i, j, frames;

	frames = (int)vnet_nic_attr("frames");
	ASSERT_LT(1, frames);
	tpe_n = 4 * frames;
	ASSERT_GE(TPE_THREADS * 64, tpe_n);
	tpe = calloc(tpe_n, sizeof(*tpe));
	tpe_got = calloc(tpe_n, sizeof(*tpe_got));
	ASSERT_TRUE(tpe && tpe_got);
	OK(AM_Init());
	for (i = 0; i < tpe_n; i++) {
		OK(AM_AllocateBundle(AM_SEQ, &tpe[i].eb));
		OK(AM_AllocateEndpoint(tpe[i].eb, &tpe[i].ep, &tpe[i].name));
		OK(AM_SetTag(tpe[i].ep, AM_TAG));
		OK(AM_SetHandler(tpe[i].ep, 1, tpe_request));
		OK(AM_SetHandler(tpe[i].ep, 3, tpe_stop));
		OK(AM_SetEventMask(tpe[i].eb, AM_NOTEMPTY));
	}
	for (j = 0; j < TPE_THREADS; j++) {
		cl[j].first = j * tpe_n / TPE_THREADS;
		cl[j].n = (j + 1) * tpe_n / TPE_THREADS - cl[j].first;
		OK(AM_AllocateBundle(AM_SEQ, &cl[j].eb));
		for (i = 0; i < cl[j].n; i++) {
			ep_t e;

			OK(AM_AllocateEndpoint(cl[j].eb, &e, &n));
			OK(AM_Map(e, 0, tpe[cl[j].first + i].name, AM_TAG));
			OK(AM_SetHandler(e, 2, tpe_reply));
			cl[j].ep[i] = e;
		}
	}
	faults0 = vnet_nic_attr("faults");
	for (i = 0; i < tpe_n; i++)
		ASSERT_EQ(0, pthread_create(&tpe[i].tid, NULL, tpe_serve,
					    &tpe[i]));
	for (j = 0; j < TPE_THREADS; j++)
		ASSERT_EQ(0, pthread_create(&cl[j].tid, NULL, tpe_drive,
					    &cl[j]));
	for (j = 0; j < TPE_THREADS; j++)
		pthread_join(cl[j].tid, NULL);
	faults1 = vnet_nic_attr("faults");
	/* Wake every server thread with a message that stops it. */
	for (j = 0; j < TPE_THREADS; j++)
		for (i = 0; i < cl[j].n; i++)
			OK(AM_Request1(cl[j].ep[i], 0, 3, cl[j].first + i));
	for (i = 0; i < tpe_n; i++)
		pthread_join(tpe[i].tid, NULL);
	TH_LOG("%d server threads on %d frames: %d round trips, %lld faults",
	       tpe_n, frames, tpe_total, faults1 - faults0);
	for (i = 0; i < tpe_n; i++) {
		EXPECT_EQ(TPE_ROUNDS, tpe[i].served);
		EXPECT_EQ(TPE_ROUNDS, tpe_got[i]);
	}
	EXPECT_LT(faults0, faults1);		/* the endpoints did page */
	EXPECT_EQ(0, bad);
	OK(AM_Terminate());
}

TEST_HARNESS_MAIN
