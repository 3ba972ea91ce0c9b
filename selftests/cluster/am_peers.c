// SPDX-License-Identifier: GPL-2.0
/*
 * Active Messages between the kernels of a cluster (tools/vm/cluster), for
 * selftests/cluster/run.sh: every request is answered once or comes back to
 * its sender, and none is delivered twice.
 *
 *   am_peers serve NIC [--endpoints N]
 *	N endpoints (default 1) on NIC, each with a random tag.  Prints
 *	"serving NIC:EP tag TAG" for each and answers requests until SIGTERM
 *	or SIGINT.  Per client (its endpoint's name and the run id in its
 *	requests) it keeps which sequence numbers were delivered, so a second
 *	delivery of one counts as a duplicate.  Exits 1 if it saw a duplicate
 *	or a corrupt payload.
 *
 *   VNET_PEERS="NIC:EP:TAG ..." am_peers send NIC [--count N] [--seconds S]
 *						   [--stall T] [--persist]
 *	An endpoint on NIC per peer, each with K = 4 requests in flight:
 *	medium requests of 0 to 4 KiB, N to every peer (default 100), or as
 *	many as S seconds allow.  A peer that returns a request unreachable
 *	gets no more (with --persist it still gets its N), nor does one that
 *	resolved none of its requests for T seconds (default 10): a node that
 *	died after taking a request never answers it, and the requests it
 *	holds are left "unanswered".  (T also bounds the wait for the counts
 *	below.)  When all are resolved,
 *	each peer that returned none is asked how many requests of this run
 *	it took.  Prints a line per peer
 *
 *	  peer NIC:EP sent S replied R unreachable U returned O unanswered L
 *	  dupreplies D slowest T delivered V duplicates W corrupt C
 *	  unreachable_after A
 *
 *	T being the longest a request took to be resolved, in seconds
 *	(V, W and C are "-" for a peer not asked), and A the seconds from
 *	the peer's last reply (its last sign of life) to its last request
 *	that came back unreachable ("-" if none did), and exits 1 if a request
 *	was answered or returned twice (D != 0) or a peer asked did not take
 *	exactly the requests it answered, intact (V != R, W != 0, C != 0).
 *	Whether the returned and unanswered requests were to be expected is
 *	the caller's to judge.
 *
 * The tags travel in the environment, not on the command line, which /proc
 * shows to everyone.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/time.h>
#include <time.h>

#include <vnet/am.h>

#define H_REQ		1	/* server: run, seq, checksum; medium */
#define H_COUNT		2	/* server: run -> delivered, duplicates, corrupt */
#define H_ACK		3	/* client: seq */
#define H_COUNTED	4	/* client: delivered, duplicates, corrupt */

#define MAX_PEERS	64
#define MAX_CLIENTS	128
#define MAX_SERVE_EPS	32
#define MAX_SEQ		(1u << 20)	/* per client run and peer */
#define MAX_LEN		4096u
#define CREDITS		AMVNET_DEFAULT_CREDITS
/* Seconds: a peer that resolves nothing for this long is given up. */
static double stall = 10;

static const char *prog = "am_peers";

static volatile sig_atomic_t stop;

static void on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

/* A signal ends AM_WaitSema early: this one lets the loops see the time. */
static void on_tick(int sig)
{
	(void)sig;
}

static int signals(void)
{
	struct sigaction sa = { .sa_handler = on_tick };
	struct itimerval tick = {
		.it_interval = { .tv_usec = 100000 },
		.it_value = { .tv_usec = 100000 },
	};

	/* No SA_RESTART: the wait in poll(2) must end. */
	if (sigaction(SIGALRM, &sa, NULL))
		return -1;
	sa.sa_handler = on_stop;
	if (sigaction(SIGTERM, &sa, NULL) || sigaction(SIGINT, &sa, NULL))
		return -1;
	return setitimer(ITIMER_REAL, &tick, NULL);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static bool test_and_set(uint8_t *bits, uint32_t n)
{
	bool was = bits[n / 8] & (1u << (n % 8));

	bits[n / 8] |= 1u << (n % 8);
	return was;
}

/* What the server computes over a payload, and the client sends along. */
static uint32_t payload_sum(const uint8_t *p, size_t n)
{
	uint32_t sum = 0;

	while (n--)
		sum = sum * 31 + *p++;
	return sum;
}

/* A payload that differs from request to request; returns its sum. */
static uint32_t fill(uint8_t *p, size_t n, uint32_t seed)
{
	size_t i;

	for (i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		p[i] = seed >> 16;
	}
	return payload_sum(p, n);
}

#define CHECK(call)							\
	do {								\
		int _e = (call);					\
		if (_e != AM_OK) {					\
			fprintf(stderr, "%s: %s: error %d\n", prog,	\
				#call, _e);				\
			return 1;					\
		}							\
	} while (0)

/* ---- serve ------------------------------------------------------------ */

struct client {
	en_t name;
	uint32_t run;
	uint8_t *seen;			/* a bit per sequence number */
	uint32_t delivered, duplicates, corrupt;
};

static struct client clients[MAX_CLIENTS];
static int nr_clients;
static unsigned long unknown, srv_returned;

static struct client *client_of(void *token, uint32_t run)
{
	struct client *c;
	en_t src;
	int i;

	if (AM_GetSourceEndpoint(token, &src) != AM_OK)
		return NULL;
	for (i = 0; i < nr_clients; i++) {
		c = &clients[i];
		if (c->name.nic == src.nic && c->name.ep == src.ep &&
		    c->run == run)
			return c;
	}
	if (nr_clients == MAX_CLIENTS)
		return NULL;
	c = &clients[nr_clients];
	c->seen = calloc(MAX_SEQ / 8, 1);
	if (!c->seen)
		return NULL;
	c->name = src;
	c->run = run;
	nr_clients++;
	return c;
}

static void on_request(void *token, void *buf, size_t nbytes, int32_t run,
		       int32_t seq, int32_t sum)
{
	struct client *c = client_of(token, run);

	if (!c || (uint32_t)seq >= MAX_SEQ) {
		unknown++;
	} else {
		if (test_and_set(c->seen, seq))
			c->duplicates++;
		else
			c->delivered++;
		if (payload_sum(buf, nbytes) != (uint32_t)sum)
			c->corrupt++;
	}
	AM_Reply1(token, H_ACK, seq);
}

static void on_count(void *token, int32_t run)
{
	struct client *c = client_of(token, run);

	if (!c) {
		unknown++;
		AM_Reply3(token, H_COUNTED, -1, -1, -1);
		return;
	}
	AM_Reply3(token, H_COUNTED, c->delivered, c->duplicates, c->corrupt);
}

/*
 * A reply of ours that came back: its requester is gone, or refused it for
 * busy_timeout_ms.  Said, so that a request left unanswered has its cause.
 */
static void on_srv_returned(int status, op_t opcode, void *token)
{
	struct amvnet_returned ret;
	en_t to;

	(void)opcode;
	srv_returned++;
	/* The source of a returned message is where it could not go. */
	if (AMVNET_GetReturnedMessage(token, &ret) != AM_OK ||
	    AM_GetSourceEndpoint(token, &to) != AM_OK)
		return;
	fprintf(stderr, "%s: reply to %u:%u (handler %d, first argument %d) "
		"returned: status %d, reason %u\n", prog, to.nic, to.ep,
		(int)ret.handler, ret.numargs ? (int)ret.args[0] : -1, status,
		ret.reason);
}

static int serve(uint32_t nic, int nr_eps)
{
	unsigned long dups = 0, corrupt = 0, delivered = 0;
	en_t name;
	tag_t tag;
	eb_t eb;
	ep_t ep;
	int i;

	CHECK(AM_Init());
	CHECK(AM_AllocateBundle(AM_SEQ, &eb));
	for (i = 0; i < nr_eps; i++) {
		CHECK(AMVNET_AllocateEndpointOnNIC(eb, nic, &ep, &name));
		CHECK(AMVNET_RandomTag(&tag));
		CHECK(AM_SetTag(ep, tag));
		CHECK(AM_SetHandler(ep, 0, on_srv_returned));
		CHECK(AM_SetHandler(ep, H_REQ, on_request));
		CHECK(AM_SetHandler(ep, H_COUNT, on_count));
		printf("serving %u:%u tag 0x%016" PRIx64 "\n", name.nic,
		       name.ep, tag);
	}
	CHECK(AM_SetEventMask(eb, AM_NOTEMPTY));
	if (signals()) {
		perror(prog);
		return 1;
	}
	fflush(stdout);

	while (!stop)
		CHECK(AM_WaitSema(eb));

	for (i = 0; i < nr_clients; i++) {
		struct client *c = &clients[i];

		printf("# client %u:%u run %u: delivered %u duplicates %u corrupt %u\n",
		       c->name.nic, c->name.ep, c->run, c->delivered,
		       c->duplicates, c->corrupt);
		delivered += c->delivered;
		dups += c->duplicates;
		corrupt += c->corrupt;
	}
	printf("served %lu requests from %d clients: %lu duplicates, "
	       "%lu corrupt, %lu unknown, %lu replies returned\n", delivered,
	       nr_clients, dups, corrupt, unknown, srv_returned);
	CHECK(AM_Terminate());
	return dups || corrupt || unknown ? 1 : 0;
}

/* ---- send ------------------------------------------------------------- */

/* A request in flight: K at most per peer. */
struct flight {
	uint32_t seq;
	bool used;
	double sent;
};

struct peer {
	en_t name;
	tag_t tag;
	ep_t ep;
	uint8_t *done;			/* a bit per sequence number resolved */
	struct flight flight[CREDITS];
	double slowest;
	double last_reply;		/* 0: none yet */
	double last_unreachable;	/* 0: none came back unreachable */
	uint32_t sent, replied, unreachable, returned, dupreplies;
	double progress;		/* its last resolution, or first request */
	double first_sent;
	bool dead;			/* returned a request unreachable */
	bool stalled;			/* resolved nothing for stall seconds */
	bool asked, counted;
	uint32_t delivered, duplicates, corrupt;
};

static struct peer peers[MAX_PEERS];
static int nr_peers;
static bool persist;		/* send on to a peer that is unreachable */

/* Request @seq to @p leaves: it takes a credit, so a slot is free. */
static void depart(struct peer *p, uint32_t seq)
{
	int i;

	if (p->sent == p->replied + p->unreachable + p->returned)
		p->progress = now();
	if (!p->sent)
		p->first_sent = now();
	for (i = 0; i < CREDITS; i++) {
		if (!p->flight[i].used) {
			p->flight[i] = (struct flight){ seq, true, now() };
			return;
		}
	}
}

/* Request @seq to @p is resolved, for the first time. */
static void arrive(struct peer *p, uint32_t seq)
{
	int i;

	p->progress = now();
	for (i = 0; i < CREDITS; i++) {
		if (p->flight[i].used && p->flight[i].seq == seq) {
			p->flight[i].used = false;
			if (p->progress - p->flight[i].sent > p->slowest)
				p->slowest = p->progress - p->flight[i].sent;
			return;
		}
	}
}

static struct peer *peer_of(void *token)
{
	ep_t ep;
	int i;

	if (AM_GetDestEndpoint(token, &ep) != AM_OK)
		return NULL;
	for (i = 0; i < nr_peers; i++)
		if (peers[i].ep == ep)
			return &peers[i];
	return NULL;
}

static void on_ack(void *token, int32_t seq)
{
	struct peer *p = peer_of(token);

	if (!p)
		return;
	if ((uint32_t)seq >= p->sent || test_and_set(p->done, seq)) {
		p->dupreplies++;
	} else {
		p->replied++;
		arrive(p, seq);
		p->last_reply = p->progress;
	}
}

static void on_counted(void *token, int32_t delivered, int32_t dups,
		       int32_t corrupt)
{
	struct peer *p = peer_of(token);

	if (!p)
		return;
	p->counted = true;
	p->delivered = delivered;
	p->duplicates = dups;
	p->corrupt = corrupt;
}

static void on_returned(int status, op_t opcode, void *token)
{
	struct peer *p = peer_of(token);
	struct amvnet_returned ret;
	uint32_t seq;

	(void)opcode;
	if (!p || AMVNET_GetReturnedMessage(token, &ret) != AM_OK)
		return;
	if (status == EUNREACHABLE)
		p->dead = true;
	if (ret.handler == H_COUNT) {
		p->asked = false;
		return;
	}
	seq = ret.args[1];
	if (seq >= p->sent || test_and_set(p->done, seq)) {
		p->dupreplies++;
		return;
	}
	arrive(p, seq);
	if (status == EUNREACHABLE) {
		p->unreachable++;
		p->last_unreachable = p->progress;
	} else {
		p->returned++;
		fprintf(stderr, "%s: request %u to %u:%u returned: status %d, "
			"reason %u\n", prog, seq, p->name.nic, p->name.ep,
			status, ret.reason);
	}
}

static uint32_t resolved(const struct peer *p)
{
	return p->replied + p->unreachable + p->returned;
}

/* Requests out to @p; one that resolved none for stall seconds is given up. */
static bool outstanding(struct peer *p)
{
	if (resolved(p) == p->sent)
		return false;
	if (now() - p->progress > stall)
		p->stalled = true;
	return !p->stalled;
}

static int parse_peers(const char *list)
{
	const char *s = list;
	int n;

	while (s && *s) {
		struct peer *p = &peers[nr_peers];
		unsigned long long tag;

		while (*s == ' ')
			s++;
		if (!*s)
			break;
		if (nr_peers == MAX_PEERS ||
		    sscanf(s, "%u:%u:%llx%n", &p->name.nic, &p->name.ep, &tag,
			   &n) != 3 || (s[n] && s[n] != ' '))
			return -1;
		p->tag = tag;
		nr_peers++;
		s += n;
	}
	return nr_peers ? 0 : -1;
}

static int send_one(struct peer *p, uint32_t run, uint32_t max_len)
{
	static uint8_t buf[MAX_LEN];
	uint32_t seq = p->sent;
	uint32_t len = (seq * 1031u + run) % (max_len + 1);
	uint32_t sum = fill(buf, len, run ^ (seq * 2654435761u));

	/* Counted first: the reply may come while the request polls. */
	depart(p, seq);
	p->sent++;
	CHECK(AM_RequestI3(p->ep, 0, H_REQ, buf, len, run, seq, sum));
	return 0;
}

/* Send until each peer had @count requests or @seconds passed. */
static int send_all(eb_t eb, uint32_t run, uint32_t count, double seconds,
		    uint32_t max_len)
{
	double end = now() + seconds;
	bool busy = true;
	int i;

	while (busy) {
		bool sent = false, more_time = seconds <= 0 || now() < end;

		busy = false;
		for (i = 0; i < nr_peers; i++) {
			struct peer *p = &peers[i];

			outstanding(p);
			if ((p->dead && !persist) || p->stalled || !more_time ||
			    p->sent >= count)
				continue;
			busy = true;
			if (p->sent - resolved(p) < CREDITS) {
				if (send_one(p, run, max_len))
					return 1;
				sent = true;
			}
		}
		if (!sent && busy)
			CHECK(AM_WaitSema(eb));
		else
			CHECK(AM_Poll(eb));
	}

	/* Everything sent is answered, or comes back, or is given up. */
	for (i = 0; i < nr_peers; i++)
		while (outstanding(&peers[i]))
			CHECK(AM_WaitSema(eb));
	return 0;
}

/*
 * Ask each peer that returned nothing what it took from this run: all at
 * once, as each may have to be paged in, and given up only when none has
 * answered for stall seconds.
 */
static int ask_counts(eb_t eb, uint32_t run)
{
	double progress = now();
	int i, left, waiting = 0;

	for (i = 0; i < nr_peers; i++) {
		struct peer *p = &peers[i];

		if (p->dead || p->stalled || p->returned)
			continue;
		p->asked = true;
		CHECK(AM_Request1(p->ep, 0, H_COUNT, run));
		waiting++;
	}
	for (;;) {
		for (i = 0, left = 0; i < nr_peers; i++)
			left += peers[i].asked && !peers[i].counted;
		if (!left)
			return 0;
		if (left < waiting) {
			waiting = left;
			progress = now();
		}
		if (now() - progress > stall)
			break;
		CHECK(AM_WaitSema(eb));
	}
	for (i = 0; i < nr_peers; i++)
		if (peers[i].asked && !peers[i].counted)
			fprintf(stderr, "%s: %u:%u never said what it took\n",
				prog, peers[i].name.nic, peers[i].name.ep);
	return 1;
}

static int report(void)
{
	int i, bad = 0;

	for (i = 0; i < nr_peers; i++) {
		struct peer *p = &peers[i];
		bool ok = !p->dupreplies;

		printf("peer %u:%u sent %u replied %u unreachable %u returned %u "
		       "unanswered %u dupreplies %u slowest %.3f", p->name.nic,
		       p->name.ep, p->sent, p->replied, p->unreachable,
		       p->returned, p->sent - resolved(p), p->dupreplies,
		       p->slowest);
		if (p->counted) {
			printf(" delivered %d duplicates %d corrupt %d",
			       (int)p->delivered, (int)p->duplicates,
			       (int)p->corrupt);
			ok = ok && p->delivered == p->replied &&
			     !p->duplicates && !p->corrupt;
		} else {
			printf(" delivered - duplicates - corrupt -");
		}
		/* Never answered: from its first request, the earliest it lived. */
		if (p->last_unreachable)
			printf(" unreachable_after %.3f\n", p->last_unreachable -
			       (p->last_reply ? p->last_reply : p->first_sent));
		else
			printf(" unreachable_after -\n");
		bad |= !ok;
	}
	return bad;
}

static int send_main(uint32_t nic, uint32_t count, double seconds)
{
	uint32_t run, max_len = MAX_LEN, link_max;
	eb_t eb;
	int i, err;

	if (getrandom(&run, sizeof(run), 0) != sizeof(run)) {
		perror(prog);
		return 1;
	}
	run &= 0x7fffffff;
	CHECK(AM_Init());
	CHECK(AM_AllocateBundle(AM_SEQ, &eb));
	for (i = 0; i < nr_peers; i++) {
		struct peer *p = &peers[i];
		en_t mine;

		p->done = calloc(MAX_SEQ / 8, 1);
		if (!p->done) {
			perror(prog);
			return 1;
		}
		CHECK(AMVNET_AllocateEndpointOnNIC(eb, nic, &p->ep, &mine));
		CHECK(AM_SetHandler(p->ep, 0, on_returned));
		CHECK(AM_SetHandler(p->ep, H_ACK, on_ack));
		CHECK(AM_SetHandler(p->ep, H_COUNTED, on_counted));
		CHECK(AM_Map(p->ep, 0, p->name, p->tag));
		CHECK(AMVNET_MaxPayload(p->ep, &link_max));
		if (link_max < max_len)
			max_len = link_max;
	}
	CHECK(AM_SetEventMask(eb, AM_NOTEMPTY));
	if (signals()) {
		perror(prog);
		return 1;
	}
	err = send_all(eb, run, count, seconds, max_len);
	if (!err)
		err = ask_counts(eb, run);
	err |= report();
	CHECK(AM_Terminate());
	return err ? 1 : 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: %s serve NIC [--endpoints N]\n"
		"       VNET_PEERS=\"NIC:EP:TAG ...\" %s send NIC "
		"[--count N] [--seconds S] [--stall T] [--persist]\n", prog,
		prog);
}

int main(int argc, char **argv)
{
	uint32_t count = 100;
	double seconds = 0;
	char *end;
	unsigned long nic;
	int a;

	if (argc < 3) {
		usage();
		return 2;
	}
	errno = 0;
	nic = strtoul(argv[2], &end, 0);
	if (errno || *end || nic > VNET_MAX_NIC_ID) {
		usage();
		return 2;
	}
	if (!strcmp(argv[1], "serve")) {
		unsigned long eps = 1;

		if (argc == 5 && !strcmp(argv[3], "--endpoints"))
			eps = strtoul(argv[4], &end, 0);
		else if (argc != 3)
			eps = 0;
		if (!eps || eps > MAX_SERVE_EPS || (argc == 5 && *end)) {
			usage();
			return 2;
		}
		return serve(nic, eps);
	}
	if (strcmp(argv[1], "send")) {
		usage();
		return 2;
	}
	for (a = 3; a < argc; a++) {
		if (!strcmp(argv[a], "--persist")) {
			persist = true;
			continue;
		}
		if (a + 1 == argc)
			break;
		if (!strcmp(argv[a], "--count")) {
			count = strtoul(argv[++a], &end, 0);
			seconds = 0;
		} else if (!strcmp(argv[a], "--seconds")) {
			seconds = strtod(argv[++a], &end);
			count = MAX_SEQ;
		} else if (!strcmp(argv[a], "--stall")) {
			stall = strtod(argv[++a], &end);
		} else {
			break;
		}
		if (*end)
			break;
	}
	if (a != argc || !count || count > MAX_SEQ || seconds < 0 ||
	    !(stall > 0) ||
	    parse_peers(getenv("VNET_PEERS"))) {
		usage();
		return 2;
	}
	return send_main(nic, count, seconds);
}
