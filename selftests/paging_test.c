// SPDX-License-Identifier: GPL-2.0
/*
 * The endpoint cache under load: more endpoints than frames, traffic from
 * several processes and threads, hostile frame contents, and processes
 * killed while their endpoints are resident or moving.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "vnet_util.h"

#define PROCS		4
#define THREADS		2	/* per process */
#define EPS_PER_THREAD	4	/* half clients, half servers */
#define NR_EPS		(PROCS * THREADS * EPS_PER_THREAD)
#define NR_CLIENTS	(NR_EPS / 2)
#define REQUESTS	150	/* per client */
#define CREDITS		4

/* Lives in a MAP_SHARED page so every process of the test sees it. */
struct traffic {
	struct vnet_name names[NR_EPS];
	int ready;
	int go;
	int failures;
	unsigned int seen[NR_CLIENTS][REQUESTS];	/* server side */
	unsigned int replies[NR_CLIENTS];
	int max_resident;
};

struct worker {
	struct traffic *t;
	int first;			/* global index of its first endpoint */
	struct vnet_endpoint ep[EPS_PER_THREAD];
};

/* Endpoint g is a client when even; client g talks to server g + 1 + 8k. */
static int server_of(int g)
{
	return (g + 1 + THREADS * EPS_PER_THREAD) % NR_EPS;
}

static void fail(struct traffic *t, const char *why, unsigned int a,
		 unsigned int b)
{
	fprintf(stderr, "# %s (%u, %u)\n", why, a, b);
	__atomic_fetch_add(&t->failures, 1, __ATOMIC_RELAXED);
}

static void serve(struct worker *w, int i)
{
	struct vnet_endpoint *ep = &w->ep[i];
	const struct vnet_desc *d;

	while ((d = vnet_endpoint_peek(ep, VNET_Q_REQ_RECV))) {
		struct vnet_desc r = vnet_short(2, 0, d->args[0], d->args[1]);
		unsigned int c = d->args[0], seq = d->args[1];

		if (c >= NR_CLIENTS || seq >= REQUESTS)
			fail(w->t, "request out of range", c, seq);
		else if (__atomic_fetch_add(&w->t->seen[c][seq], 1,
					    __ATOMIC_RELAXED))
			fail(w->t, "duplicate request", c, seq);
		r.token = d->token;
		while (vnet_endpoint_post(ep, VNET_Q_REP_SEND, &r, NULL, 0))
			sched_yield();
		vnet_endpoint_consume(ep, VNET_Q_REQ_RECV);
	}
}

static void client(struct worker *w, int i, unsigned int *sent,
		   unsigned int *got)
{
	struct vnet_endpoint *ep = &w->ep[i];
	unsigned int c = (w->first + i) / 2;
	const struct vnet_desc *d;

	while ((d = vnet_endpoint_peek(ep, VNET_Q_REP_RECV))) {
		if (d->flags & VNET_DESC_RETURNED)
			fail(w->t, "request returned", c, d->status);
		else if (d->args[0] != c || d->args[1] != *got)
			fail(w->t, "reply out of order", d->args[1], *got);
		(*got)++;
		vnet_endpoint_consume(ep, VNET_Q_REP_RECV);
	}
	while (*sent < REQUESTS && *sent - *got < CREDITS) {
		struct vnet_desc r = vnet_short(1, 0, c, *sent);

		if (vnet_endpoint_post(ep, VNET_Q_REQ_SEND, &r, NULL, 0))
			break;
		(*sent)++;
	}
}

static void *worker_run(void *arg)
{
	struct worker *w = arg;
	unsigned int sent[EPS_PER_THREAD] = {}, got[EPS_PER_THREAD] = {};
	struct pollfd pfd[EPS_PER_THREAD];
	int i, done = 0;

	for (i = 0; i < EPS_PER_THREAD; i++) {
		int g = w->first + i;

		pfd[i].fd = w->ep[i].fd;
		pfd[i].events = POLLIN;
		if (g % 2 == 0)
			vnet_endpoint_map(&w->ep[i], 0,
					  w->t->names[server_of(g)], TEST_TAG);
	}
	while (done < EPS_PER_THREAD / 2) {
		done = 0;
		for (i = 0; i < EPS_PER_THREAD; i++) {
			int g = w->first + i;

			if (g % 2) {
				if (pfd[i].revents & POLLIN)
					serve(w, i);
				continue;
			}
			if ((pfd[i].revents & POLLIN) ||
			    (sent[i] < REQUESTS && sent[i] - got[i] < CREDITS))
				client(w, i, &sent[i], &got[i]);
			done += got[i] == REQUESTS;
		}
		if (__atomic_load_n(&w->t->failures, __ATOMIC_RELAXED))
			break;
		/* Only touch what has something to read: no needless faults. */
		poll(pfd, EPS_PER_THREAD, 20);
	}
	for (i = 0; i < EPS_PER_THREAD; i++)
		if ((w->first + i) % 2 == 0)
			__atomic_store_n(&w->t->replies[(w->first + i) / 2],
					 got[i], __ATOMIC_RELAXED);
	/* Servers keep serving until every client is done. */
	while (__atomic_load_n(&w->t->go, __ATOMIC_ACQUIRE) != 2) {
		for (i = 1; i < EPS_PER_THREAD; i += 2) {
			pfd[i].revents = 0;
			if (poll(&pfd[i], 1, 0) > 0)
				serve(w, i);
		}
		usleep(1000);
	}
	return NULL;
}

static void traffic_process(struct traffic *t, int p)
{
	struct worker w[THREADS];
	pthread_t tid[THREADS];
	int i, j;

	for (i = 0; i < THREADS; i++) {
		w[i].t = t;
		w[i].first = (p * THREADS + i) * EPS_PER_THREAD;
		for (j = 0; j < EPS_PER_THREAD; j++) {
			if (vnet_endpoint_open(&w[i].ep[j], 0) ||
			    vnet_endpoint_set_tag(&w[i].ep[j], TEST_TAG))
				_exit(1);
			t->names[w[i].first + j] = w[i].ep[j].name;
		}
	}
	__atomic_fetch_add(&t->ready, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&t->go, __ATOMIC_ACQUIRE))
		usleep(1000);
	for (i = 0; i < THREADS; i++)
		pthread_create(&tid[i], NULL, worker_run, &w[i]);
	for (i = 0; i < THREADS; i++)
		pthread_join(tid[i], NULL);
	for (i = 0; i < THREADS; i++)
		for (j = 0; j < EPS_PER_THREAD; j++)
			vnet_endpoint_close(&w[i].ep[j]);
	_exit(0);
}

static bool all_replied(struct traffic *t)
{
	int c;

	for (c = 0; c < NR_CLIENTS; c++)
		if (__atomic_load_n(&t->replies[c], __ATOMIC_RELAXED) != REQUESTS)
			return false;
	return true;
}

/*
 * Endpoints in the resident state, from one consistent snapshot: the
 * debugfs queue dump is taken under the lock that guards residency.
 */
static int count_resident_states(void)
{
	FILE *f = fopen(VNET_DEBUGFS "/queues", "r");
	char line[512];
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, " state 2 "))
			n++;
	fclose(f);
	return n;
}

/* One request from a fresh endpoint to another: the NIC still works. */
static int ping_once(void)
{
	struct vnet_endpoint a, b;
	struct vnet_desc d = vnet_short(1, 0, 77, 0);
	double deadline = vnet_now() + 10;
	int ok = 0;

	if (vnet_endpoint_open(&a, 0))
		return 0;
	if (vnet_endpoint_open(&b, 0)) {
		vnet_endpoint_close(&a);
		return 0;
	}
	vnet_endpoint_set_tag(&b, TEST_TAG);
	vnet_endpoint_map(&a, 0, b.name, TEST_TAG);
	vnet_endpoint_post(&a, VNET_Q_REQ_SEND, &d, NULL, 0);
	while (!ok && vnet_now() < deadline) {
		const struct vnet_desc *got = vnet_endpoint_peek(&b,
								 VNET_Q_REQ_RECV);

		ok = got && got->args[0] == 77;
		if (!ok)
			vnet_endpoint_wait(&b, 50);
	}
	vnet_endpoint_close(&a);
	vnet_endpoint_close(&b);
	return ok;
}

FIXTURE(cache) {
	long long frames;
};

FIXTURE_SETUP(cache)
{
	self->frames = vnet_nic_attr("frames");
	ASSERT_LT(0, self->frames);
}

FIXTURE_TEARDOWN(cache)
{
	vnet_write_str(VNET_DEBUGFS "/page_delay_ms", "0");
}

TEST_F_TIMEOUT(cache, overcommit_traffic, 600)
{
	struct traffic *t;
	long long faults0, evictions0, resident;
	double deadline = vnet_now() + 500;
	pid_t pid[PROCS];
	int p, c, s, status, samples = 0;

	if (self->frames * 4 != NR_EPS)
		SKIP(return, "wants frames=%d, module has %lld", NR_EPS / 4,
		     self->frames);

	t = mmap(NULL, sizeof(*t), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, t);
	for (p = 0; p < PROCS; p++) {
		pid[p] = fork();
		ASSERT_LE(0, pid[p]);
		if (!pid[p])
			traffic_process(t, p);
	}
	while (__atomic_load_n(&t->ready, __ATOMIC_ACQUIRE) < PROCS)
		usleep(1000);
	faults0 = vnet_nic_attr("faults");
	evictions0 = vnet_nic_attr("evictions");
	__atomic_store_n(&t->go, 1, __ATOMIC_RELEASE);

	while (!all_replied(t) && !t->failures && vnet_now() < deadline) {
		resident = vnet_nic_attr("resident");
		if (resident > t->max_resident)
			t->max_resident = resident;
		if (samples++ % 16 == 0) {
			int n = count_resident_states();

			if (n > t->max_resident)
				t->max_resident = n;
		}
		usleep(2000);
	}
	__atomic_store_n(&t->go, 2, __ATOMIC_RELEASE);
	for (p = 0; p < PROCS; p++) {
		ASSERT_EQ(pid[p], waitpid(pid[p], &status, 0));
		EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}

	EXPECT_EQ(0, t->failures);
	EXPECT_TRUE(all_replied(t));
	for (c = 0; c < NR_CLIENTS; c++)
		for (s = 0; s < REQUESTS; s++)
			if (t->seen[c][s] != 1) {
				EXPECT_EQ(1, t->seen[c][s]);
				TH_LOG("client %d request %d seen %u times", c,
				       s, t->seen[c][s]);
				c = NR_CLIENTS;
				break;
			}
	EXPECT_LE(t->max_resident, self->frames);
	EXPECT_LT(faults0, vnet_nic_attr("faults"));
	EXPECT_LT(evictions0, vnet_nic_attr("evictions"));
	TH_LOG("%d samples, max resident %d of %lld, %lld faults, %lld evictions",
	       samples, t->max_resident, self->frames,
	       vnet_nic_attr("faults") - faults0,
	       vnet_nic_attr("evictions") - evictions0);
	munmap(t, sizeof(*t));
}

/*
 * What vnet-bench paging runs, with what it used to check asserted here:
 * ratio x frames endpoints on NIC 0 in a ring, each with a random tag,
 * endpoint i sending requests to i + 1 through slot 0 with CREDITS of them
 * outstanding and answering those of i - 1.  One thread visits them in
 * turn, and every visit reads the endpoint's frame, so past the frames
 * most visits fault one endpoint in and another out.  Nothing may come
 * back, every request and reply must come from the right endpoint with
 * the right handler, tag, sequence and arguments, and the ring must keep
 * moving until each endpoint has had RING_ROUNDS round trips.
 */
#define RING_H_REQUEST	1
#define RING_H_REPLY	2
#define RING_NARGS	2	/* sender's index, sequence number: vnet_short() */
#define RING_ROUNDS	64	/* round trips per endpoint */
#define RING_STALL	10	/* seconds without one: the ring is stuck */
#define RING_REPORTS	5	/* errors described one by one */

struct ring_ep {
	struct vnet_endpoint ep;
	uint64_t tag;
	uint32_t next_seq;		/* of the next request we send */
	uint32_t reply_seq;		/* expected in the next reply */
	uint32_t outstanding;		/* requests awaiting their reply */
};

struct ring_counts {
	uint64_t round_trips;
	uint64_t returned;		/* messages handed back */
	uint64_t returned_reason[VNET_RET_NR + 1];
	uint64_t bad;			/* wrong peer, tag, handler or order */
	unsigned int reports;
};

FIXTURE(ring) {
	long long frames;
	struct ring_ep *eps;
	uint32_t nr;
	uint32_t opened;		/* what teardown closes */
};

FIXTURE_VARIANT(ring) {
	unsigned int ratio;		/* endpoints per frame */
};

/* vnet-bench paging's default ratios. */
FIXTURE_VARIANT_ADD(ring, ratio_1) { .ratio = 1 };
FIXTURE_VARIANT_ADD(ring, ratio_2) { .ratio = 2 };
FIXTURE_VARIANT_ADD(ring, ratio_4) { .ratio = 4 };
FIXTURE_VARIANT_ADD(ring, ratio_16) { .ratio = 16 };

FIXTURE_SETUP(ring)
{
	self->frames = vnet_nic_attr("frames");
	ASSERT_LT(0, self->frames);
}

FIXTURE_TEARDOWN(ring)
{
	uint32_t i;

	for (i = 0; i < self->opened; i++)
		vnet_endpoint_close(&self->eps[i].ep);
	free(self->eps);
}

static bool same_name(struct vnet_name a, struct vnet_name b)
{
	return a.nic == b.nic && a.ep == b.ep;
}

static void ring_report(struct ring_counts *c, const struct ring_ep *e,
			const char *what, const struct vnet_desc *d)
{
	if (c->reports++ >= RING_REPORTS)
		return;
	fprintf(stderr, "# endpoint %u:%u: %s (handler %u, flags 0x%x, "
		"status %u, peer %u:%u, args %u %u)\n", e->ep.name.nic,
		e->ep.name.ep, what, d->handler, d->flags, d->status,
		d->peer.nic, d->peer.ep, d->args[0], d->args[1]);
}

/* Answer the requests from our predecessor while there is room to. */
static void ring_answer(struct ring_ep *eps, uint32_t nr, uint32_t i,
			struct ring_counts *c)
{
	uint32_t pred = (i + nr - 1) % nr;
	const struct vnet_desc *d;

	while ((d = vnet_endpoint_peek(&eps[i].ep, VNET_Q_REQ_RECV))) {
		struct vnet_desc req = *d;
		struct vnet_desc rep = vnet_short(RING_H_REPLY, 0, req.args[0],
						  req.args[1]);

		rep.token = req.token;
		if (vnet_endpoint_post(&eps[i].ep, VNET_Q_REP_SEND, &rep, NULL, 0))
			break;		/* full: keep the request for later */
		vnet_endpoint_consume(&eps[i].ep, VNET_Q_REQ_RECV);

		if (req.handler != RING_H_REQUEST || req.nargs != RING_NARGS ||
		    req.tag != eps[i].tag || req.args[0] != pred ||
		    !same_name(req.peer, eps[pred].ep.name)) {
			c->bad++;
			ring_report(c, &eps[i], "unexpected request", &req);
		}
	}
}

/* Count the replies to our requests, and anything handed back to us. */
static void ring_complete(struct ring_ep *eps, uint32_t nr, uint32_t i,
			  struct ring_counts *c)
{
	struct ring_ep *e = &eps[i];
	uint32_t succ = (i + 1) % nr;
	const struct vnet_desc *d;

	while ((d = vnet_endpoint_peek(&e->ep, VNET_Q_REP_RECV))) {
		struct vnet_desc m = *d;

		vnet_endpoint_consume(&e->ep, VNET_Q_REP_RECV);
		if (m.flags & VNET_DESC_RETURNED) {
			c->returned++;
			c->returned_reason[m.status < VNET_RET_NR ? m.status :
					   VNET_RET_NR]++;
			ring_report(c, e, m.handler == RING_H_REQUEST ?
				    "request returned" : "reply returned", &m);
			/* A returned request frees its credit. */
			if (m.handler == RING_H_REQUEST && e->outstanding)
				e->outstanding--;
			continue;
		}
		if (m.handler != RING_H_REPLY || m.args[0] != i ||
		    m.args[1] != e->reply_seq ||
		    !same_name(m.peer, eps[succ].ep.name)) {
			c->bad++;
			ring_report(c, e, "unexpected reply", &m);
		}
		e->reply_seq = m.args[1] + 1;
		if (e->outstanding)
			e->outstanding--;
		c->round_trips++;
	}
}

/* Top the endpoint up to CREDITS outstanding, RING_ROUNDS in all. */
static void ring_send(struct ring_ep *e, uint32_t i)
{
	while (e->outstanding < CREDITS && e->next_seq < RING_ROUNDS) {
		struct vnet_desc req = vnet_short(RING_H_REQUEST, 0, i,
						  e->next_seq);

		if (vnet_endpoint_post(&e->ep, VNET_Q_REQ_SEND, &req, NULL, 0))
			break;		/* full: on to the next endpoint */
		e->next_seq++;
		e->outstanding++;
	}
}

/* Every request sent, and every one answered or handed back. */
static bool ring_done(const struct ring_ep *eps, uint32_t nr)
{
	uint32_t i;

	for (i = 0; i < nr; i++)
		if (eps[i].next_seq < RING_ROUNDS || eps[i].outstanding)
			return false;
	return true;
}

TEST_F_TIMEOUT(ring, one_thread_round_robin, 300)
{
	struct ring_counts c = {};
	long long faults0;
	double last, start, now;
	struct rlimit rl;
	unsigned int r;
	bool stalled = false;
	uint32_t i, n = 0;
	uint64_t seen = 0;

	self->nr = variant->ratio * self->frames;
	/* One open file per endpoint, as vnet-bench makes room for. */
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < self->nr + 64 &&
	    (rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= self->nr + 64)) {
		rl.rlim_cur = self->nr + 64;
		ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &rl));
	}
	self->eps = calloc(self->nr, sizeof(*self->eps));
	ASSERT_NE(NULL, self->eps);
	for (i = 0; i < self->nr; i++) {
		struct ring_ep *e = &self->eps[i];

		ASSERT_EQ(0, vnet_endpoint_open(&e->ep, 0)) {
			TH_LOG("endpoint %u of %u", i + 1, self->nr);
		}
		self->opened++;
		ASSERT_EQ(0, vnet_tag_random(&e->tag));
		ASSERT_EQ(0, vnet_endpoint_set_tag(&e->ep, e->tag));
	}
	for (i = 0; i < self->nr; i++) {
		const struct ring_ep *next = &self->eps[(i + 1) % self->nr];

		ASSERT_EQ(0, vnet_endpoint_map(&self->eps[i].ep, 0,
					       next->ep.name, next->tag));
	}

	faults0 = vnet_nic_attr("faults");
	start = vnet_now();
	last = start;
	while (!ring_done(self->eps, self->nr)) {
		ring_answer(self->eps, self->nr, n, &c);
		ring_complete(self->eps, self->nr, n, &c);
		ring_send(&self->eps[n], n);
		n = n + 1 == self->nr ? 0 : n + 1;
		if (n)
			continue;
		now = vnet_now();
		if (c.round_trips + c.returned != seen) {
			seen = c.round_trips + c.returned;
			last = now;
			continue;
		}
		if (now - last > RING_STALL) {
			stalled = true;
			break;
		}
		/*
		 * A whole turn with no reply: the firmware has the messages.
		 * Let it run; on one CPU a spinning driver would keep its
		 * thread off until the next tick.
		 */
		sched_yield();
	}
	TH_LOG("%u endpoints on %lld frames: %llu round trips in %.2f s, "
	       "%lld faults, %llu returned, %llu bad", self->nr, self->frames,
	       (unsigned long long)c.round_trips, vnet_now() - start,
	       vnet_nic_attr("faults") - faults0,
	       (unsigned long long)c.returned, (unsigned long long)c.bad);
	for (r = 0; r <= VNET_RET_NR; r++)
		if (c.returned_reason[r])
			TH_LOG("returned with status %u: %llu", r,
			       (unsigned long long)c.returned_reason[r]);
	EXPECT_FALSE(stalled) {
		TH_LOG("no round trip for %d s, %llu of %llu done", RING_STALL,
		       (unsigned long long)c.round_trips,
		       (unsigned long long)self->nr * RING_ROUNDS);
	}
	EXPECT_EQ(0, c.returned);
	EXPECT_EQ(0, c.bad);
	EXPECT_EQ((uint64_t)self->nr * RING_ROUNDS, c.round_trips);
	if (variant->ratio > 1)
		EXPECT_LT(faults0, vnet_nic_attr("faults"));
}

struct hostile_report {
	struct vnet_ep_stat primer;	/* after the one bad descriptor */
	struct vnet_ep_stat st;		/* after the scribbling too */
	int done;
};

/* Why the offender gave up, by its exit status. */
static const char *const hostile_exit_why[] = {
	[1] = "could not open or post",
	[2] = "its bad descriptor did not come back within 30 s",
	[3] = "its bad descriptor came back with another reason",
};

/* Scribble over our own frame and staging area as hard as we can. */
static void hostile_process(struct vnet_name target,
			    struct hostile_report *report)
{
	struct vnet_endpoint ep;
	unsigned int seed = 99, i, n;
	uint8_t *bytes;

	if (vnet_endpoint_open(&ep, 0))
		_exit(1);
	vnet_endpoint_map(&ep, 0, target, TEST_TAG);
	vnet_endpoint_map(&ep, 1, target, TEST_TAG + 1);
	/*
	 * One bad descriptor first, with the queue indices still sane, and
	 * wait until it comes back.  The scribbling below wrecks the
	 * indices within a few dozen rounds, and how many of its posts the
	 * firmware sees before that depends on how soon it gets to this
	 * frame: on a slow or busy kernel, none, on main as on any branch.
	 */
	{
		struct vnet_desc d = vnet_short(1, 0, 0, 0);
		double until = vnet_now() + 30;

		d.__reserved0 = 1;
		if (vnet_endpoint_post(&ep, VNET_Q_REQ_SEND, &d, NULL, 0))
			_exit(1);
		ioctl(ep.fd, VNET_IOC_KICK);
		while (!vnet_endpoint_peek(&ep, VNET_Q_REP_RECV)) {
			if (vnet_now() > until)
				_exit(2);
			vnet_endpoint_wait(&ep, 100);
		}
		if (vnet_endpoint_peek(&ep, VNET_Q_REP_RECV)->status !=
		    VNET_RET_BAD_DESC)
			_exit(3);
		vnet_endpoint_consume(&ep, VNET_Q_REP_RECV);
		ioctl(ep.fd, VNET_IOC_EP_STAT, &report->primer);
	}
	bytes = (uint8_t *)ep.frame;
	for (i = 0; i < 3000; i++) {
		for (n = 0; n < 32; n++) {
			seed = seed * 1103515245u + 12345u;
			bytes[(seed >> 4) % sizeof(struct vnet_frame)] = seed >> 24;
			ep.staging[(seed >> 3) % VNET_STAGING_SIZE] = seed >> 16;
		}
		if (i % 3 == 0) {
			/* A plausible post with a random descriptor. */
			struct vnet_desc d = {};
			uint32_t *w = (uint32_t *)&d;
			unsigned int q = seed % 2, p;

			for (n = 0; n < sizeof(d) / 4; n++) {
				seed = seed * 1103515245u + 12345u;
				w[n] = seed;
			}
			if (i % 2) {
				/* Nearly valid, so it gets further in. */
				d.nargs %= 10;
				d.slot %= 3;
				d.flags &= 3;
				d.__reserved0 = 0;
				memset(d.__reserved1, 0, sizeof(d.__reserved1));
			}
			p = ep.frame->cons[q].val;
			ep.frame->queue[q][p % VNET_QUEUE_DEPTH] = d;
			ep.frame->prod[q].val = p + 1;
		}
		if (i % 500 == 0)
			ep.frame->prod[seed % 4].val = seed;
		ioctl(ep.fd, VNET_IOC_KICK);
		if (i % 100 == 0)
			usleep(1000);
	}
	ioctl(ep.fd, VNET_IOC_EP_STAT, &report->st);
	__atomic_store_n(&report->done, 1, __ATOMIC_RELEASE);
	vnet_endpoint_close(&ep);
	_exit(0);
}

TEST_F_TIMEOUT(cache, hostile_frame_contents, 300)
{
	struct hostile_report *report;
	struct vnet_endpoint a, b;
	unsigned int sent = 0, got = 0, requests = 0;
	double deadline = vnet_now() + 240;
	int status;
	pid_t pid;

	report = mmap(NULL, sizeof(*report), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, report);
	ASSERT_EQ(0, vnet_endpoint_open(&a, 0));
	ASSERT_EQ(0, vnet_endpoint_open(&b, 0));
	ASSERT_EQ(0, vnet_endpoint_set_tag(&b, TEST_TAG));
	ASSERT_EQ(0, vnet_endpoint_map(&a, 0, b.name, TEST_TAG));

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		hostile_process(b.name, report);

	/* Meanwhile a and b keep talking, and see every message once. */
	while (got < 500 && vnet_now() < deadline) {
		const struct vnet_desc *d;

		if (sent < 500 && sent - got < CREDITS) {
			struct vnet_desc r = vnet_short(1, 0, 0, sent);

			if (!vnet_endpoint_post(&a, VNET_Q_REQ_SEND, &r, NULL, 0))
				sent++;
		}
		while ((d = vnet_endpoint_peek(&b, VNET_Q_REQ_RECV))) {
			if (d->peer.ep == a.name.ep) {
				struct vnet_desc r = vnet_short(2, 0, 0,
								d->args[1]);

				ASSERT_EQ(requests, d->args[1]);
				requests++;
				r.token = d->token;
				while (vnet_endpoint_post(&b, VNET_Q_REP_SEND,
							  &r, NULL, 0))
					sched_yield();
			}
			vnet_endpoint_consume(&b, VNET_Q_REQ_RECV);
		}
		while ((d = vnet_endpoint_peek(&a, VNET_Q_REP_RECV))) {
			ASSERT_FALSE(d->flags & VNET_DESC_RETURNED);
			ASSERT_EQ(got, d->args[1]);
			got++;
			vnet_endpoint_consume(&a, VNET_Q_REP_RECV);
		}
		while (vnet_endpoint_peek(&b, VNET_Q_REP_RECV))
			vnet_endpoint_consume(&b, VNET_Q_REP_RECV);
		vnet_endpoint_wait(&a, 1);
	}
	EXPECT_EQ(500, got);
	EXPECT_EQ(500, requests);

	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	if (WIFEXITED(status) && WEXITSTATUS(status) &&
	    WEXITSTATUS(status) < ARRAY_SIZE(hostile_exit_why))
		TH_LOG("offender: %s", hostile_exit_why[WEXITSTATUS(status)]);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ASSERT_TRUE(report->done);
	TH_LOG("offender: returned %llu rejected %llu after its bad descriptor, "
	       "sent %llu returned %llu rejected %llu in all",
	       (unsigned long long)report->primer.returned,
	       (unsigned long long)report->primer.rejected,
	       (unsigned long long)report->st.sent,
	       (unsigned long long)report->st.returned,
	       (unsigned long long)report->st.rejected);
	/* Its bad descriptor came back, with its reason... */
	EXPECT_LT(0, report->primer.returned);
	/* ...and the junk after it was refused too, not only that one. */
	EXPECT_LT(report->primer.rejected, report->st.rejected);
	vnet_endpoint_close(&a);
	vnet_endpoint_close(&b);
	EXPECT_TRUE(ping_once());
}

FIXTURE(killed) {
	long long frames;
	long long endpoints;
};

FIXTURE_VARIANT(killed) {
	const char *when;	/* the state to catch the victim in */
};

FIXTURE_VARIANT_ADD(killed, resident) { .when = "resident" };
FIXTURE_VARIANT_ADD(killed, loading) { .when = "loading" };
FIXTURE_VARIANT_ADD(killed, unloading) { .when = "unloading" };

FIXTURE_SETUP(killed)
{
	self->frames = vnet_nic_attr("frames");
	self->endpoints = vnet_nic_attr("nr_endpoints");
	ASSERT_LT(0, self->frames);
}

FIXTURE_TEARDOWN(killed)
{
	vnet_write_str(VNET_DEBUGFS "/page_delay_ms", "0");
}

struct evictor {
	struct vnet_endpoint ep[VNET_QUEUE_DEPTH * 4];
	int n;
	int stop;
};

/* Touch endpoints round and round so every frame keeps changing hands. */
static void *evict_run(void *arg)
{
	struct evictor *ev = arg;
	int i = 0;

	while (!__atomic_load_n(&ev->stop, __ATOMIC_RELAXED))
		vnet_touch(&ev->ep[i++ % ev->n]);
	return NULL;
}

TEST_F_TIMEOUT(killed, while_endpoint_is, 120)
{
	int to_child[2], from_child[2];
	struct evictor *ev = NULL;
	unsigned int index;
	char state[32], go = 'g';
	double deadline;
	pthread_t tid;
	int status, i, caught = 0;
	pid_t pid;

	ASSERT_EQ(0, pipe(to_child));
	ASSERT_EQ(0, pipe(from_child));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct vnet_endpoint ep;

		if (vnet_endpoint_open(&ep, 0))
			_exit(1);
		if (write(from_child[1], &ep.name.ep, sizeof(ep.name.ep)) < 0)
			_exit(1);
		if (read(to_child[0], &go, 1) != 1)
			_exit(1);
		for (;;)
			vnet_touch(&ep);	/* faults whenever evicted */
	}
	ASSERT_EQ(sizeof(index), read(from_child[0], &index, sizeof(index)));

	if (!strcmp(variant->when, "loading"))
		ASSERT_EQ(0, vnet_write_str(VNET_DEBUGFS "/page_delay_ms", "300"));
	ASSERT_EQ(1, write(to_child[1], &go, 1));

	if (!strcmp(variant->when, "unloading")) {
		deadline = vnet_now() + 20;
		while (strcmp(vnet_ep_state(index, state, sizeof(state)),
			      "resident") && vnet_now() < deadline)
			usleep(1000);
		ASSERT_EQ(0, vnet_write_str(VNET_DEBUGFS "/page_delay_ms", "100"));
		ev = calloc(1, sizeof(*ev));
		ASSERT_NE(NULL, ev);
		ev->n = self->frames + 2;
		for (i = 0; i < ev->n; i++)
			ASSERT_EQ(0, vnet_endpoint_open(&ev->ep[i], 0));
		pthread_create(&tid, NULL, evict_run, ev);
	}

	deadline = vnet_now() + 60;
	while (vnet_now() < deadline) {
		if (!strcmp(vnet_ep_state(index, state, sizeof(state)),
			    variant->when)) {
			caught = 1;
			break;
		}
		usleep(500);
	}
	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status));
	EXPECT_TRUE(caught);
	TH_LOG("victim %u caught %s: %d", index, variant->when, caught);

	if (ev) {
		__atomic_store_n(&ev->stop, 1, __ATOMIC_RELAXED);
		pthread_join(tid, NULL);
		for (i = 0; i < ev->n; i++)
			vnet_endpoint_close(&ev->ep[i]);
		free(ev);
	}
	vnet_write_str(VNET_DEBUGFS "/page_delay_ms", "0");

	/* The victim's endpoint is gone and the card still works. */
	deadline = vnet_now() + 10;
	while (vnet_ep_state(index, state, sizeof(state))[0] &&
	       vnet_now() < deadline)
		usleep(10000);
	EXPECT_STREQ("", state);
	EXPECT_EQ(self->endpoints, vnet_nic_attr("nr_endpoints"));
	EXPECT_LE(vnet_nic_attr("resident"), self->frames);
	EXPECT_TRUE(ping_once());
}

/*
 * Two hundred creations, each a 512 kB staging area: seconds, but on the
 * debug kernel, with KASAN shadowing every vmalloc and failslab on, more
 * than the harness's default 30 s on a busy host.
 */
FIXTURE(churn) {
};

FIXTURE_SETUP(churn)
{
}

FIXTURE_TEARDOWN(churn)
{
}

TEST_F_TIMEOUT(churn, create_destroy_leaks_nothing, 300)
{
	long long before, after;
	struct vnet_endpoint ep;
	int round, i;

	/* Warm up allocator caches so they do not count as growth. */
	for (i = 0; i < 16; i++) {
		ASSERT_EQ(0, vnet_endpoint_open(&ep, 0));
		vnet_touch(&ep);
		vnet_endpoint_close(&ep);
	}
	before = vnet_proc_kb("/proc/meminfo", "VmallocUsed");
	for (round = 0; round < 200; round++) {
		ASSERT_EQ(0, vnet_endpoint_open(&ep, 0));
		vnet_touch(&ep);
		vnet_endpoint_close(&ep);
	}
	after = vnet_proc_kb("/proc/meminfo", "VmallocUsed");
	TH_LOG("VmallocUsed %lld kB -> %lld kB", before, after);
	/* One leaked staging area alone would be 512 kB. */
	EXPECT_LT(after - before, 256);
}

#define TRACEFS		"/sys/kernel/tracing"

/* How many lines of the trace buffer name @event. */
static long count_trace(const char *event)
{
	char line[512];
	long n = 0;
	FILE *f = fopen(TRACEFS "/trace", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, event))
			n++;
	fclose(f);
	return n;
}

/*
 * Whether the kernel's clock only advances by ticks (a jiffies clocksource,
 * when nothing better survived boot); its name goes into @name.
 */
static bool tick_clock(char *name, size_t len)
{
	FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource",
			"r");

	if (!f || !fgets(name, len, f)) {
		snprintf(name, len, "unknown");
		if (f)
			fclose(f);
		return false;
	}
	fclose(f);
	name[strcspn(name, "\n")] = '\0';
	return strstr(name, "jiffies");
}

/*
 * Where the faults' time goes: every fault-in is traced, and the parts
 * the counters split it into (taking the victim out of its frame, copying
 * it out, copying the newcomer in) add up to no more than the whole, as
 * do the parts of the first (fencing the firmware off the victim, zapping
 * its owner's mapping) to no more than it.
 */
TEST(fault_times_add_up)
{
	static const char * const counters[] = {
		"faults", "evictions", "fault_ns", "flush_ns", "unload_ns",
		"load_ns", "fence_ns", "zap_ns",
	};
	long long before[8], after[8], frames = vnet_nic_attr("frames");
	struct vnet_endpoint ep[2 * 64];
	char clock[64];
	bool traced;
	long events;
	int i, round;

	ASSERT_LT(0, frames);
	ASSERT_GE(64, frames);
	if (access(TRACEFS "/events", F_OK))
		mount("tracefs", TRACEFS, "tracefs", 0, NULL);
	traced = !vnet_write_str(TRACEFS "/events/vnet/vnet_fault/enable", "1");
	if (traced)
		vnet_write_str(TRACEFS "/trace", "");
	else
		TH_LOG("no vnet tracepoints in tracefs: counting only");

	for (i = 0; i < 8; i++) {
		before[i] = vnet_nic_attr(counters[i]);
		ASSERT_LE(0, before[i]) TH_LOG("no %s", counters[i]);
	}
	for (i = 0; i < 2 * frames; i++)
		ASSERT_EQ(0, vnet_endpoint_open(&ep[i], 0));
	for (round = 0; round < 3; round++)
		for (i = 0; i < 2 * frames; i++)
			vnet_touch(&ep[i]);
	for (i = 0; i < 8; i++)
		after[i] = vnet_nic_attr(counters[i]) - before[i];
	for (i = 0; i < 2 * frames; i++)
		vnet_endpoint_close(&ep[i]);

	TH_LOG("%lld faults, %lld evictions: %lld us in all, flush %lld",
	       after[0], after[1], after[2] / 1000, after[3] / 1000);
	TH_LOG("(fence %lld, zap %lld), unload %lld, load %lld",
	       after[6] / 1000, after[7] / 1000, after[4] / 1000,
	       after[5] / 1000);
	EXPECT_LE(2 * frames, after[0]);
	EXPECT_LT(0, after[1]);
	EXPECT_LE(after[3] + after[4] + after[5], after[2]);
	EXPECT_LE(after[6] + after[7], after[3]);
	if (traced) {
		vnet_write_str(TRACEFS "/events/vnet/vnet_fault/enable", "0");
		events = count_trace("vnet_fault:");
		EXPECT_EQ(after[0], events);
	}
	if (tick_clock(clock, sizeof(clock)))
		SKIP(return, "clocksource %s counts in ticks: a copy takes none",
		     clock);
	EXPECT_LT(0, after[4]);
	EXPECT_LT(0, after[5]);
	/* Every eviction takes fw_lock twice, and zaps. */
	EXPECT_LT(0, after[6]);
	EXPECT_LT(0, after[7]);
}

/* Page faults this process has taken, minor and major. */
static long process_faults(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return -1;
	return ru.ru_minflt + ru.ru_majflt;
}

/*
 * The fault that maps an endpoint in maps the whole frame: a round trip
 * touches every page of it, and each page left out would cost one more
 * fault after every load.  Round 0 maps fresh endpoints; in round 1 each
 * was evicted by the others since its last touch and is loaded again.
 */
TEST(one_fault_maps_the_whole_frame)
{
	long long frames = vnet_nic_attr("frames"), faults;
	long page = sysconf(_SC_PAGESIZE), before, after;
	struct vnet_endpoint ep[2 * 64];
	int i, round, p;

	ASSERT_LT(0, frames);
	ASSERT_GE(64, frames);
	for (i = 0; i < 2 * frames; i++)
		ASSERT_EQ(0, vnet_endpoint_open(&ep[i], 0));
	for (round = 0; round < 2; round++) {
		faults = vnet_nic_attr("faults");
		for (i = 0; i < 2 * frames; i++) {
			const volatile char *frame = (const char *)ep[i].frame;

			vnet_touch(&ep[i]);
			before = process_faults();
			for (p = 1; p < VNET_FRAME_SIZE / page; p++)
				(void)frame[p * page + page - 1];
			after = process_faults();
			ASSERT_LE(0, before);
			EXPECT_EQ(before, after)
				TH_LOG("round %d endpoint %d: %ld more faults",
				       round, i, after - before);
		}
		faults = vnet_nic_attr("faults") - faults;
		/* Every one of them came in through its page-0 fault. */
		EXPECT_LE(2 * frames, faults);
	}
	for (i = 0; i < 2 * frames; i++)
		vnet_endpoint_close(&ep[i]);
}

/* Until the NIC's faults and served loads stop changing, 2 s at most. */
static void settle_paging(void)
{
	long long f = -1, w = -1;
	double deadline = vnet_now() + 2;

	while (vnet_now() < deadline) {
		long long f2 = vnet_nic_attr("faults");
		long long w2 = vnet_nic_attr("serve_waits");

		if (f2 == f && w2 == w)
			return;
		f = f2;
		w = w2;
		usleep(100 * 1000);
	}
}

/*
 * What a load waits before it pays off: counted for the loads that were
 * served (a message moved into or out of the endpoint), once each, and
 * never for one that was only touched.
 */
TEST(serve_waits_count_served_loads)
{
	long long frames = vnet_nic_attr("frames"), waits, wait_ns, faults;
	struct vnet_endpoint ep[2 * 64];
	double start, elapsed;
	int i, round;

	ASSERT_LT(0, frames);
	ASSERT_GE(64, frames);
	waits = vnet_nic_attr("serve_waits");
	wait_ns = vnet_nic_attr("serve_wait_ns");
	faults = vnet_nic_attr("faults");
	start = vnet_now();
	ASSERT_LE(0, waits);
	ASSERT_LE(0, wait_ns);
	for (i = 0; i < 2 * frames; i++) {
		ASSERT_EQ(0, vnet_endpoint_open(&ep[i], 0));
		ASSERT_EQ(0, vnet_endpoint_set_tag(&ep[i], TEST_TAG));
		ASSERT_EQ(0, vnet_endpoint_map(&ep[i], 0, ep[i].name,
					       TEST_TAG));
	}
	/* Each sends itself a message: the firmware serves it. */
	for (round = 0; round < 3; round++)
		for (i = 0; i < 2 * frames; i++) {
			struct vnet_desc d = vnet_short(1, 0, round, i);

			ASSERT_EQ(0, vnet_endpoint_post(&ep[i],
							VNET_Q_REQ_SEND, &d,
							NULL, 0));
			usleep(2000);
		}
	waits = vnet_nic_attr("serve_waits") - waits;
	wait_ns = vnet_nic_attr("serve_wait_ns") - wait_ns;
	faults = vnet_nic_attr("faults") - faults;
	elapsed = vnet_now() - start;
	TH_LOG("%lld loads, %lld seen served, %lld us from load to service each",
	       faults, waits, waits ? wait_ns / waits / 1000 : 0);
	/*
	 * A load is seen when a later fault finds no free frame: all but
	 * those of the last round still in their frames.
	 */
	EXPECT_LE(faults - frames, waits);
	EXPECT_GE(faults, waits);
	/* Waits in ns, none longer than the whole run. */
	EXPECT_LT(0, wait_ns);
	EXPECT_GT(elapsed * 1e9, (double)wait_ns / (waits ? waits : 1));

	/*
	 * Touched, not served: loads, but none counts -- once a first pass
	 * has seen the last round's loads out, and a message left behind
	 * by an endpoint evicted before it went has been faulted back in
	 * and moved.
	 */
	for (i = 0; i < 2 * frames; i++)
		vnet_touch(&ep[i]);
	settle_paging();
	waits = vnet_nic_attr("serve_waits");
	faults = vnet_nic_attr("faults");
	for (round = 0; round < 2; round++)
		for (i = 0; i < 2 * frames; i++)
			vnet_touch(&ep[i]);
	EXPECT_LT(0, vnet_nic_attr("faults") - faults);
	EXPECT_EQ(waits, vnet_nic_attr("serve_waits"));
	for (i = 0; i < 2 * frames; i++)
		vnet_endpoint_close(&ep[i]);
}

#define SLICE_FAULTS	"/sys/module/vnet/parameters/slice_faults"

/* The module's slice, put back whatever the test did with it. */
FIXTURE(long_slice) {
	long long slice_faults;
};

FIXTURE_SETUP(long_slice)
{
	self->slice_faults = vnet_read_ll(SLICE_FAULTS);
	ASSERT_LT(0, self->slice_faults);
}

FIXTURE_TEARDOWN(long_slice)
{
	vnet_write_ll(SLICE_FAULTS, self->slice_faults);
	vnet_write_str(VNET_DEBUGFS "/page_delay_ms", "0");
}

/*
 * One thread uses twice as many endpoints as frames, each with a message
 * waiting in its queue, and faults them in one after the other.  Their
 * slices are there for its work, and while it sleeps in a fault it does
 * none: each fault waits for a frame to go idle, not for a slice to end.
 * The slice is made a thousand faults long, so that waiting slices out
 * would take an eighth of one per fault.
 */
TEST_F(long_slice, one_thread_waits_out_no_slice)
{
	long long frames = vnet_nic_attr("frames"), faults, fault_ns;
	long long slice_ns, slice_wait, frame_wait;
	struct vnet_endpoint ep[2 * 64];
	int i, round;

	ASSERT_LT(0, frames);
	ASSERT_GE(64, frames);
	for (i = 0; i < 2 * frames; i++) {
		struct vnet_desc d = vnet_short(1, 0, 0, i);

		ASSERT_EQ(0, vnet_endpoint_open(&ep[i], 0));
		ASSERT_EQ(0, vnet_endpoint_set_tag(&ep[i], TEST_TAG));
		ASSERT_EQ(0, vnet_endpoint_map(&ep[i], 0, ep[i].name,
					       TEST_TAG));
		ASSERT_EQ(0, vnet_endpoint_post(&ep[i], VNET_Q_REQ_SEND, &d,
						NULL, 0));
	}
	/* Delivered, and their senders back in where evicted first. */
	settle_paging();
	ASSERT_EQ(0, vnet_write_str(SLICE_FAULTS, "1000"));
	faults = vnet_nic_attr("faults");
	slice_wait = vnet_nic_attr("wait_slice_ns");
	frame_wait = vnet_nic_attr("frame_wait_ns");
	ASSERT_LE(0, faults);
	ASSERT_LE(0, slice_wait);
	ASSERT_LE(0, frame_wait);
	for (round = 0; round < 3; round++)
		for (i = 0; i < 2 * frames; i++)
			vnet_touch(&ep[i]);
	faults = vnet_nic_attr("faults") - faults;
	slice_wait = vnet_nic_attr("wait_slice_ns") - slice_wait;
	frame_wait = vnet_nic_attr("frame_wait_ns") - frame_wait;
	fault_ns = vnet_nic_attr("fault_avg_ns");
	for (i = 0; i < 2 * frames; i++)
		vnet_endpoint_close(&ep[i]);

	slice_ns = fault_ns * 1000;
	TH_LOG("%lld faults, each %lld us waiting for slices, %lld in all; slice %lld us",
	       faults, faults ? slice_wait / faults / 1000 : 0,
	       faults ? frame_wait / faults / 1000 : 0, slice_ns / 1000);
	ASSERT_LE(3 * frames, faults);
	ASSERT_LT(0, fault_ns);
	EXPECT_GT(slice_ns / 50, slice_wait / faults);
	/* Nor for any other reason, as long. */
	EXPECT_GT(slice_ns / 50, frame_wait / faults);
}

struct toucher {
	struct vnet_endpoint *ep;
	pid_t tid;
	double took;		/* seconds, to fault it in */
};

static void *touch_timed(void *arg)
{
	struct toucher *t = arg;
	double start;

	__atomic_store_n(&t->tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
	start = vnet_now();
	vnet_touch(t->ep);
	t->took = vnet_now() - start;
	return NULL;
}

/* Whether thread @tid sleeps uninterruptibly (a fault waits killable). */
static bool thread_in_d_state(pid_t tid)
{
	char path[64], buf[256], *p;
	FILE *f;
	bool d = false;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	f = fopen(path, "r");
	if (!f)
		return false;
	if (fgets(buf, sizeof(buf), f)) {
		p = strrchr(buf, ')');
		d = p && p[1] == ' ' && p[2] == 'D';
	}
	fclose(f);
	return d;
}

/*
 * Another thread's fault waits first in line for one of the frames this
 * thread has just filled, each held for its slice.  Once this thread
 * sleeps in the line too, its frames are held as idle ones: the first
 * fault gets one as soon as this thread joins, not when a slice ends.
 * Moves are slowed to milliseconds, so that a slice is long against the
 * time it takes to see the other thread asleep.
 */
TEST_F(long_slice, a_waiting_user_lets_the_line_have_its_frames)
{
	long long frames = vnet_nic_attr("frames"), slice_ns;
	struct vnet_endpoint ep[64 + 2], warm[2 * 64];
	struct toucher other;
	pthread_t thread;
	int i;

	ASSERT_LT(0, frames);
	ASSERT_GE(64, frames);
	ASSERT_EQ(0, vnet_write_str(VNET_DEBUGFS "/page_delay_ms", "2"));
	/* Faults with victims: the slow moves become the measured cost. */
	for (i = 0; i < 2 * frames; i++)
		ASSERT_EQ(0, vnet_endpoint_open(&warm[i], 0));
	for (i = 0; i < 4 * frames; i++)
		vnet_touch(&warm[i % (2 * frames)]);
	for (i = 0; i < 2 * frames; i++)
		vnet_endpoint_close(&warm[i]);
	slice_ns = vnet_nic_attr("fault_avg_ns") * self->slice_faults;
	ASSERT_LT(10 * 1000 * 1000, slice_ns);

	for (i = 0; i < frames + 2; i++)
		ASSERT_EQ(0, vnet_endpoint_open(&ep[i], 0));
	/* Loaded now, into frames left free: each held for its slice. */
	for (i = 0; i < frames; i++)
		vnet_touch(&ep[i]);
	other = (struct toucher){ .ep = &ep[frames] };
	ASSERT_EQ(0, pthread_create(&thread, NULL, touch_timed, &other));
	/* Until it sleeps in line, a second at most. */
	for (i = 0; i < 5000; i++) {
		pid_t tid = __atomic_load_n(&other.tid, __ATOMIC_ACQUIRE);

		if (tid && thread_in_d_state(tid))
			break;
		usleep(200);
	}
	vnet_touch(&ep[frames + 1]);
	ASSERT_EQ(0, pthread_join(thread, NULL));
	for (i = 0; i < frames + 2; i++)
		vnet_endpoint_close(&ep[i]);

	TH_LOG("the other thread's fault took %.1f ms; a slice is %lld ms",
	       other.took * 1e3, slice_ns / 1000000);
	ASSERT_GT(5000, i) TH_LOG("the other thread never slept in line");
	EXPECT_GT((double)slice_ns / 2e9, other.took);
}

TEST_HARNESS_MAIN
