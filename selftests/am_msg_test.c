// SPDX-License-Identifier: GPL-2.0
/*
 * libvnet, messages: returned messages reach handler 0 with the right
 * status and opcode, credits are never exceeded and replies need none,
 * medium payloads of every size arrive intact, and bulk transfers are
 * bounds-checked, reassembled and run their handler once; a megabyte from
 * segment to segment, request and reply, is one message each way, whose
 * call returns once its source may be written again; a piece that comes
 * back is reported once, for the transfer it belongs to.
 */
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "am_util.h"

#define OK(call)	ASSERT_EQ(AM_OK, (call))

static volatile int replies, requests, bad;

static void count_reply(void *t)
{
	(void)t;
	replies++;
}

static void count_reply1(void *t, int32_t a0)
{
	(void)t;
	if (a0 != replies)
		bad++;
	replies++;
}

static void silent_request(void *t, int32_t a0, int32_t a1)
{
	(void)t;
	(void)a0;
	(void)a1;
	requests++;
}

FIXTURE(ret) {
	struct am_pair p;
	uint8_t seg[8192];
};

FIXTURE_SETUP(ret)
{
	memset(&am_ret, 0, sizeof(am_ret));
	ASSERT_EQ(AM_OK, AM_Init());
	ASSERT_EQ(AM_OK, am_pair_open(&self->p, AM_SEQ));
	ASSERT_EQ(AM_OK, AM_SetHandler(self->p.a, 0, am_ret_handler));
	ASSERT_EQ(AM_OK, AM_SetHandler(self->p.b, 0, am_ret_handler));
	ASSERT_EQ(AM_OK, AM_SetHandler(self->p.b, 5, silent_request));
}

FIXTURE_TEARDOWN(ret)
{
	AM_Terminate();
}

/* Send through translation @idx, expect handler 0 to see @status. */
static int one_returned(struct am_pair *p, int idx, int status)
{
	struct amvnet_stats st;
	int n = am_ret.n;

	if (AM_Request2(p->a, idx, 5, 11, -22) != AM_OK ||
	    !am_poll_until(p->eb, &am_ret.n, n + 1))
		return -1;
	if (am_ret.status[n] != status || am_ret.opcode[n] != AM_REQUEST_M ||
	    am_ret.msg[n].handler != 5 || am_ret.msg[n].numargs != 2 ||
	    am_ret.msg[n].args[0] != 11 || am_ret.msg[n].args[1] != -22 ||
	    am_ret.msg[n].index != idx || am_ret.bad)
		return -2;
	/* A returned request gives its credit back. */
	if (AMVNET_GetStats(p->a, &st) || st.outstanding)
		return -3;
	return 0;
}

TEST_F(ret, short_requests)
{
	en_t nowhere = { 0, 60000 }, far = { 7, 0 };

	OK(AM_Map(self->p.a, 1, self->p.nb, AM_TAG + 1));
	EXPECT_EQ(0, one_returned(&self->p, 1, EBADTAG));
	EXPECT_EQ(VNET_RET_BAD_TAG, am_ret.msg[0].reason);
	EXPECT_EQ(self->p.nb.ep, am_ret.source[0].ep);	/* where it went */

	EXPECT_EQ(0, one_returned(&self->p, 2, EBADENTRY));	/* unmapped */
	OK(AM_Map(self->p.a, 3, nowhere, AM_TAG));
	EXPECT_EQ(0, one_returned(&self->p, 3, EBADENDPOINT));
	OK(AM_Map(self->p.a, 4, far, AM_TAG));
	EXPECT_EQ(0, one_returned(&self->p, 4, EUNREACHABLE));
	EXPECT_EQ(7, am_ret.source[3].nic);

	/* A handler the destination does not have: its library refuses. */
	EXPECT_EQ(AM_OK, AM_Request2(self->p.a, 0, 99, 11, -22));
	ASSERT_TRUE(am_poll_until(self->p.eb, &am_ret.n, 5));
	EXPECT_EQ(EBADHANDLER, am_ret.status[4]);
	EXPECT_EQ(AM_REQUEST_M, am_ret.opcode[4]);
	EXPECT_EQ(99, am_ret.msg[4].handler);
	EXPECT_EQ(-22, am_ret.msg[4].args[1]);
	EXPECT_EQ(0, requests);
	EXPECT_EQ(0, am_ret.bad);
}

TEST_F(ret, medium_and_bulk)
{
	uint8_t buf[300];
	struct amvnet_stats st;

	am_fill(buf, sizeof(buf), 3);
	OK(AM_Map(self->p.a, 1, self->p.nb, AM_TAG + 1));
	OK(AM_RequestI1(self->p.a, 1, 5, buf, sizeof(buf), 9));
	ASSERT_TRUE(am_poll_until(self->p.eb, &am_ret.n, 1));
	EXPECT_EQ(EBADTAG, am_ret.status[0]);
	EXPECT_EQ(AM_REQUEST_IM, am_ret.opcode[0]);
	EXPECT_EQ(sizeof(buf), am_ret.msg[0].nbytes);
	EXPECT_EQ(0, memcmp(buf, am_ret.data[0], 16));	/* payload came back */

	OK(AM_RequestI0(self->p.a, 0, 99, buf, 10));		/* no handler */
	ASSERT_TRUE(am_poll_until(self->p.eb, &am_ret.n, 2));
	EXPECT_EQ(EBADHANDLER, am_ret.status[1]);
	EXPECT_EQ(AM_REQUEST_IM, am_ret.opcode[1]);

	/* Bulk into an endpoint with no segment, then past its end. */
	OK(AM_RequestXfer0(self->p.a, 0, 0, 5, buf, 10));
	ASSERT_TRUE(am_poll_until(self->p.eb, &am_ret.n, 3));
	EXPECT_EQ(EBADSEGOFF, am_ret.status[2]);
	EXPECT_EQ(AM_REQUEST_XFER_M, am_ret.opcode[2]);
	OK(AM_SetSeg(self->p.b, self->seg, sizeof(self->seg)));
	OK(AM_RequestXfer0(self->p.a, 0, 8000, 5, buf, 200));
	ASSERT_TRUE(am_poll_until(self->p.eb, &am_ret.n, 4));
	EXPECT_EQ(EBADSEGOFF, am_ret.status[3]);
	EXPECT_EQ(8000, am_ret.msg[3].dest_offset);
	EXPECT_EQ(200, am_ret.msg[3].nbytes);
	OK(AMVNET_GetStats(self->p.a, &st));
	EXPECT_EQ(0, st.outstanding);
	EXPECT_EQ(4, st.returned);
	EXPECT_EQ(0, requests);
}

/* Reply errors: the replier's handler 0 hears of them, or ours. */
static void reply_to_nothing(void *t, int32_t how, int32_t a1)
{
	static uint8_t data[64];

	(void)a1;
	requests++;
	if (how == 0 && AM_Reply1(t, 77, 5))		/* a has no 77 */
		bad++;
	if (how == 1 && AM_ReplyXfer0(t, 1 << 20, 3, data, sizeof(data)))
		bad++;					/* past a's segment */
}

TEST_F(ret, replies)
{
	struct amvnet_stats st;
	int i;

	OK(AM_SetHandler(self->p.b, 6, reply_to_nothing));
	OK(AM_SetHandler(self->p.a, 3, count_reply));
	OK(AM_SetSeg(self->p.a, self->seg, sizeof(self->seg)));

	OK(AM_Request2(self->p.a, 0, 6, 0, 0));
	ASSERT_TRUE(am_poll_until(self->p.eb, &am_ret.n, 1));
	EXPECT_EQ(EBADHANDLER, am_ret.status[0]);
	EXPECT_EQ(AM_REPLY_M, am_ret.opcode[0]);	/* at a, no reply to it */
	EXPECT_EQ(77, am_ret.msg[0].handler);
	EXPECT_EQ(5, am_ret.msg[0].args[0]);

	OK(AM_Request2(self->p.a, 0, 6, 1, 0));
	ASSERT_TRUE(am_poll_until(self->p.eb, &am_ret.n, 2));
	EXPECT_EQ(EBADSEGOFF, am_ret.status[1]);
	EXPECT_EQ(AM_REPLY_XFER_M, am_ret.opcode[1]);	/* back at b */
	EXPECT_EQ(-1, am_ret.msg[1].index);
	EXPECT_EQ(self->p.na.ep, am_ret.source[1].ep);
	EXPECT_EQ(0, replies);
	EXPECT_EQ(0, bad);
	/*
	 * The firmware leaves the token of a reply returned for its own fault
	 * usable, and b's library answers with a credit on it: a's credit
	 * comes back without a's handlers seeing anything.
	 */
	for (i = 0; i < 100000; i++) {
		OK(AM_Poll(self->p.eb));
		OK(AMVNET_GetStats(self->p.a, &st));
		if (!st.outstanding)
			break;
	}
	EXPECT_EQ(0, st.outstanding);
	EXPECT_EQ(0, replies);
	EXPECT_EQ(2, am_ret.n);
}

/*
 * Without handler 0 a returned message ends the process, as in AMUDP.  (In
 * a child: the harness reads SIGABRT as a failed assertion.)
 */
TEST(default_error_handler_aborts)
{
	struct am_pair p;
	int status;
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		AM_Init();
		am_pair_open(&p, AM_SEQ);
		AM_Request0(p.a, 9, 1);		/* unmapped: comes back */
		for (;;)
			AM_Poll(p.eb);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFSIGNALED(status));
	EXPECT_EQ(SIGABRT, WTERMSIG(status));
}

/* Every medium size 0..AM_MaxMedium(), checksummed both ways. */
static void medium_request(void *t, void *buf, size_t nb, int32_t size,
			   int32_t sum)
{
	requests++;
	if ((int32_t)nb != size || (int32_t)am_sum(buf, nb) != sum)
		bad++;
	/* Echo every seventh payload back, from where it arrived. */
	if (size % 7 == 0) {
		if (AM_ReplyI2(t, 2, buf, (int)nb, size, sum))
			bad++;
	} else if (AM_Reply2(t, 3, size, sum)) {
		bad++;
	}
}

static void medium_echo(void *t, void *buf, size_t nb, int32_t size,
			int32_t sum)
{
	(void)t;
	if ((int32_t)nb != size || (int32_t)am_sum(buf, nb) != sum)
		bad++;
	replies++;
}

static void medium_ack(void *t, int32_t size, int32_t sum)
{
	(void)t;
	(void)size;
	(void)sum;
	replies++;
}

TEST_F_TIMEOUT(ret, medium_every_size, 300)
{
	static uint8_t buf[VNET_MEDIUM_MAX];
	int size;

	OK(AM_SetHandler(self->p.b, 1, medium_request));
	OK(AM_SetHandler(self->p.a, 2, medium_echo));
	OK(AM_SetHandler(self->p.a, 3, medium_ack));
	for (size = 0; size <= AM_MaxMedium(); size++) {
		am_fill(buf, size, size);
		/* Waits for a credit, polling the bundle, when K are out. */
		OK(AM_RequestI2(self->p.a, 0, 1, buf, size, size,
				am_sum(buf, size)));
	}
	ASSERT_TRUE(am_poll_until(self->p.eb, &replies, AM_MaxMedium() + 1));
	EXPECT_EQ(AM_MaxMedium() + 1, requests);
	EXPECT_EQ(0, bad);
	EXPECT_EQ(0, am_ret.n);
}

/* Bulk: fragments, bounds, one handler run per transfer. */
static struct {
	uint8_t *seg;
	int runs;
	uintptr_t off[16];
	size_t len[16];
	int32_t arg[16];
} x;

static void xfer_done(void *t, void *buf, size_t nb, int32_t a0)
{
	(void)t;
	if (x.runs < 16) {
		x.off[x.runs] = (uintptr_t)((uint8_t *)buf - x.seg);
		x.len[x.runs] = nb;
		x.arg[x.runs] = a0;
	}
	x.runs++;
}

#define SEG	65536
#define GUARD	8192

TEST_F(ret, xfer_bounds)
{
	static const struct { uintptr_t off; int len; } ok[] = {
		{ 1000, 30000 },		/* four fragments */
		{ SEG - 20000, 20000 },		/* up to the last byte */
		{ 0, 8192 }, { 8, 8193 }, { 100, 16384 }, { 3, 16385 },
		{ SEG, 0 },			/* empty, at the end */
	};
	static const struct { uintptr_t off; int len; } bad_xfers[] = {
		{ SEG - 20000 + 1, 20000 },	/* one byte past the end */
		{ SEG + 1, 1 },
		{ SEG, 1 },
		{ 1ULL << 40, 100 },
	};
	static uint8_t src[SEG];
	uint8_t *mem = calloc(1, SEG + GUARD);
	unsigned int i;

	ASSERT_NE(NULL, mem);
	x.seg = mem;
	memset(mem + SEG, 0x5a, GUARD);
	OK(AM_SetSeg(self->p.b, mem, SEG));
	OK(AM_SetHandler(self->p.b, 1, xfer_done));
	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		am_fill(src, ok[i].len, i + 1);
		OK(AM_RequestXfer1(self->p.a, 0, ok[i].off, 1, src, ok[i].len,
				   i));
		ASSERT_TRUE(am_poll_until(self->p.eb, &x.runs, i + 1));
		EXPECT_EQ(ok[i].off, x.off[i]);
		EXPECT_EQ(ok[i].len, x.len[i]);
		EXPECT_EQ(i, x.arg[i]);
		EXPECT_EQ(0, memcmp(src, mem + ok[i].off, ok[i].len));
	}
	for (i = 0; i < sizeof(bad_xfers) / sizeof(bad_xfers[0]); i++) {
		OK(AM_RequestXfer1(self->p.a, 0, bad_xfers[i].off, 1, src,
				   bad_xfers[i].len, 100 + i));
		ASSERT_TRUE(am_poll_until(self->p.eb, &am_ret.n, i + 1));
		EXPECT_EQ(EBADSEGOFF, am_ret.status[i]);
		EXPECT_EQ(AM_REQUEST_XFER_M, am_ret.opcode[i]);
		EXPECT_EQ(100 + i, am_ret.msg[i].args[0]);	/* the last one */
	}
	/* Drain: exactly one report per failed transfer, no handler run. */
	for (i = 0; i < 1000; i++)
		OK(AM_Poll(self->p.eb));
	EXPECT_EQ(sizeof(bad_xfers) / sizeof(bad_xfers[0]), am_ret.n);
	EXPECT_EQ(sizeof(ok) / sizeof(ok[0]), x.runs);
	for (i = 0; i < GUARD; i++)
		if (mem[SEG + i] != 0x5a)
			break;
	EXPECT_EQ(GUARD, i);			/* nothing past the segment */
	free(mem);
}

/*
 * Credits, seen from the other side: a raw endpoint (no library) holds the
 * requests and answers only when K are outstanding, checking on every
 * arrival that no more than K are.
 */
FIXTURE(credits) {
	struct vnet_endpoint srv;
	eb_t eb;
	ep_t a;
	en_t na;
	pthread_t tid;
};

FIXTURE_VARIANT(credits) {
	int k;
};

FIXTURE_VARIANT_ADD(credits, k1) { .k = 1 };
FIXTURE_VARIANT_ADD(credits, k4) { .k = 4 };
FIXTURE_VARIANT_ADD(credits, k16) { .k = 16 };

#define CREDIT_REQS	300

static void *credit_client(void *arg)
{
	ep_t a = arg;
	int i;

	for (i = 0; i < CREDIT_REQS; i++)
		if (AM_Request1(a, 0, 1, i))
			bad++;
	return NULL;
}

FIXTURE_SETUP(credits)
{
	replies = bad = 0;
	ASSERT_EQ(0, vnet_endpoint_open(&self->srv, 0));
	ASSERT_EQ(0, vnet_endpoint_set_tag(&self->srv, AM_TAG));
	ASSERT_EQ(AM_OK, AM_Init());
	ASSERT_EQ(AM_OK, AM_AllocateBundle(AM_PAR, &self->eb));
	ASSERT_EQ(AM_OK, AM_AllocateEndpoint(self->eb, &self->a, &self->na));
	ASSERT_EQ(AM_OK, AM_SetExpectedResources(self->a, 1, variant->k));
	ASSERT_EQ(AM_OK, AM_Map(self->a, 0, self->srv.name, AM_TAG));
	ASSERT_EQ(AM_OK, AM_SetHandler(self->a, 2, count_reply1));
}

FIXTURE_TEARDOWN(credits)
{
	AM_Terminate();
	vnet_endpoint_close(&self->srv);
}

TEST_F_TIMEOUT(credits, never_exceeded, 300)
{
	uint32_t tokens[VNET_QUEUE_DEPTH * 2];
	int received = 0, answered = 0, most = 0;
	double end = vnet_now() + AM_LIMIT_SEC;
	struct amvnet_stats st;

	ASSERT_EQ(0, pthread_create(&self->tid, NULL, credit_client, self->a));
	while (answered < CREDIT_REQS && vnet_now() < end) {
		const struct vnet_desc *d;

		while ((d = vnet_endpoint_peek(&self->srv, VNET_Q_REQ_RECV))) {
			if (d->args[0] != (uint32_t)received)
				bad++;
			tokens[received % (2 * VNET_QUEUE_DEPTH)] = d->token;
			vnet_endpoint_consume(&self->srv, VNET_Q_REQ_RECV);
			received++;
			ASSERT_GE(variant->k, received - answered);
		}
		if (received - answered > most)
			most = received - answered;
		/* Answer only with all K out (or at the very end). */
		if (received - answered == variant->k ||
		    (received == CREDIT_REQS && answered < received)) {
			struct vnet_desc r = { .handler = 2, .nargs = 1 };

			r.token = tokens[answered % (2 * VNET_QUEUE_DEPTH)];
			r.args[0] = answered;
			if (!vnet_endpoint_post(&self->srv, VNET_Q_REP_SEND,
						&r, NULL, 0))
				answered++;
			continue;
		}
		vnet_endpoint_wait(&self->srv, 20);
	}
	pthread_join(self->tid, NULL);
	/* The client's last requests poll for their replies; take them all. */
	ASSERT_TRUE(am_poll_until(self->eb, &replies, CREDIT_REQS));
	EXPECT_EQ(CREDIT_REQS, answered);
	EXPECT_EQ(variant->k, most);		/* K in flight, never more */
	EXPECT_EQ(0, bad);
	OK(AMVNET_GetStats(self->a, &st));
	EXPECT_EQ(variant->k, st.max_outstanding);
	EXPECT_EQ(0, st.outstanding);
	EXPECT_LE(1, st.credit_waits);
}

/* An endpoint with no credit left still answers requests. */
static void answer(void *t, int32_t a0)
{
	requests++;
	if (AM_Reply1(t, 2, a0))
		bad++;
}

TEST_F(credits, replies_need_no_credit)
{
	struct amvnet_stats st;
	eb_t eb2;
	ep_t c;
	en_t nc;

	OK(AM_SetExpectedResources(self->a, 1, 1));
	OK(AM_SetTag(self->a, AM_TAG));
	OK(AM_SetHandler(self->a, 4, answer));
	OK(AM_AllocateBundle(AM_SEQ, &eb2));
	OK(AM_AllocateEndpoint(eb2, &c, &nc));
	OK(AM_Map(c, 0, self->na, AM_TAG));
	OK(AM_SetHandler(c, 2, count_reply1));

	OK(AM_Request1(self->a, 0, 1, 0));	/* held by srv: a's only credit */
	OK(AM_Request1(c, 0, 4, 0));
	while (replies < 1) {
		OK(AM_Poll(self->eb));		/* a answers c ... */
		OK(AM_Poll(eb2));
	}
	OK(AMVNET_GetStats(self->a, &st));
	EXPECT_EQ(1, st.outstanding);		/* ... with its credit still out */
	EXPECT_EQ(1, st.replies_sent);
	EXPECT_EQ(1, requests);
	EXPECT_EQ(0, bad);
}

TEST(a_request_without_credit_polls)
{
	struct amvnet_stats st;
	struct am_pair p;

	replies = requests = 0;
	OK(AM_Init());
	OK(am_pair_open(&p, AM_SEQ));
	OK(AM_SetExpectedResources(p.a, 1, 1));
	OK(AM_SetHandler(p.b, 4, answer));
	OK(AM_SetHandler(p.a, 2, count_reply1));
	OK(AM_Request1(p.a, 0, 4, 0));
	/* No credit: this one runs b's handler and a's reply handler first. */
	OK(AM_Request1(p.a, 0, 4, 1));
	EXPECT_EQ(1, replies);
	OK(AMVNET_GetStats(p.a, &st));
	EXPECT_LE(1, st.credit_waits);
	EXPECT_EQ(1, st.max_outstanding);
	ASSERT_TRUE(am_poll_until(p.eb, &replies, 2));
	OK(AM_Terminate());
}

/* A megabyte each way between the two endpoints' segments. */
static struct {
	uint8_t *a, *b;			/* their segments, 2 MiB each */
	volatile int requests, replies;
	int bad;
} big;

static void big_request(void *t, void *buf, size_t nb, int32_t seed)
{
	uint8_t *want = malloc(VNET_XFER_MAX);

	big.requests++;
	am_fill(want, VNET_XFER_MAX, (uint32_t)seed);
	if (buf != big.b + 4096 || nb != VNET_XFER_MAX ||
	    memcmp(buf, want, nb))
		big.bad++;
	free(want);
	am_fill(big.b + VNET_XFER_MAX, VNET_XFER_MAX, (uint32_t)seed + 1);
	if (AM_ReplyXfer1(t, 0, 7, big.b + VNET_XFER_MAX, VNET_XFER_MAX,
			  seed + 1) != AM_OK)
		big.bad++;
	/* Back from the call, the source is ours again. */
	memset(big.b + VNET_XFER_MAX, 0, VNET_XFER_MAX);
}

static void big_reply(void *t, void *buf, size_t nb, int32_t seed)
{
	uint8_t *want = malloc(VNET_XFER_MAX);

	(void)t;
	am_fill(want, VNET_XFER_MAX, (uint32_t)seed);
	if (buf != big.a || nb != VNET_XFER_MAX || memcmp(buf, want, nb))
		big.bad++;
	free(want);
	big.replies++;
}

TEST_F(ret, bulk_from_segment)
{
	big.a = calloc(1, 2 * VNET_XFER_MAX);
	big.b = calloc(1, 2 * VNET_XFER_MAX);
	ASSERT_NE(NULL, big.a);
	ASSERT_NE(NULL, big.b);
	OK(AM_SetSeg(self->p.a, big.a, 2 * VNET_XFER_MAX));
	OK(AM_SetSeg(self->p.b, big.b, 2 * VNET_XFER_MAX));
	OK(AM_SetHandler(self->p.b, 6, big_request));
	OK(AM_SetHandler(self->p.a, 7, big_reply));
	am_fill(big.a + VNET_XFER_MAX, VNET_XFER_MAX, 5);
	OK(AM_RequestXfer1(self->p.a, 0, 4096, 6, big.a + VNET_XFER_MAX,
			   VNET_XFER_MAX, 5));
	memset(big.a + VNET_XFER_MAX, 0, VNET_XFER_MAX);
	ASSERT_TRUE(am_poll_until(self->p.eb, &big.replies, 1));
	EXPECT_EQ(1, big.requests);
	EXPECT_EQ(0, big.bad);
	EXPECT_EQ(0, am_ret.n);
	EXPECT_EQ(VNET_MAX_SEG_LEN, AM_MaxLong());
	OK(AM_SetSeg(self->p.a, NULL, 0));
	OK(AM_SetSeg(self->p.b, NULL, 0));
	free(big.a);
	free(big.b);
}

/*
 * A bulk request larger than one message carries, from the segment: it
 * goes as several, and its handler runs once, on the whole of it.  A bulk
 * reply is one message, so one that large is refused.
 */
#define HUGE	(3 * VNET_XFER_MAX + 5)

static void huge_request(void *t, void *buf, size_t nb, int32_t seed)
{
	uint8_t *want = malloc(HUGE);

	big.requests++;
	am_fill(want, HUGE, (uint32_t)seed);
	if (buf != big.b || nb != HUGE || memcmp(buf, want, nb))
		big.bad++;
	free(want);
	if (AM_ReplyXfer1(t, 0, 7, big.b, VNET_XFER_MAX + 1, 0) !=
	    AM_ERR_BAD_ARG)
		big.bad++;
	if (AM_Reply1(t, 8, seed) != AM_OK)
		big.bad++;
}

static void huge_reply(void *t, int32_t seed)
{
	(void)t;
	(void)seed;
	big.replies++;
}

TEST_F(ret, bulk_request_larger_than_a_message)
{
	big.a = calloc(1, 4 * VNET_XFER_MAX);
	big.b = calloc(1, 4 * VNET_XFER_MAX);
	big.requests = big.replies = big.bad = 0;
	ASSERT_NE(NULL, big.a);
	ASSERT_NE(NULL, big.b);
	OK(AM_SetSeg(self->p.a, big.a, 4 * VNET_XFER_MAX));
	OK(AM_SetSeg(self->p.b, big.b, 4 * VNET_XFER_MAX));
	OK(AM_SetHandler(self->p.b, 6, huge_request));
	OK(AM_SetHandler(self->p.a, 8, huge_reply));
	am_fill(big.a + 7, HUGE, 9);
	OK(AM_RequestXfer1(self->p.a, 0, 0, 6, big.a + 7, HUGE, 9));
	memset(big.a, 0, 4 * VNET_XFER_MAX);
	ASSERT_TRUE(am_poll_until(self->p.eb, &big.replies, 1));
	EXPECT_EQ(1, big.requests);
	EXPECT_EQ(0, big.bad);
	EXPECT_EQ(0, am_ret.n);
	OK(AM_SetSeg(self->p.a, NULL, 0));
	OK(AM_SetSeg(self->p.b, NULL, 0));
	free(big.a);
	free(big.b);
}

/*
 * A bulk request from the segment in pieces of a megabyte, whose third
 * piece lands past the end of the receiver's segment: the sender stops
 * there, and handler 0 hears once, of that piece, with the user's handler
 * and argument -- the last piece is never posted, so no handler runs on
 * it alone, nor does a piece that comes back go unreported.
 */
TEST_F(ret, bulk_request_stops_at_the_piece_that_comes_back)
{
	struct amvnet_stats st0, st;

	big.a = calloc(1, 4 * VNET_XFER_MAX);
	big.b = calloc(1, 4 * VNET_XFER_MAX);
	big.requests = big.replies = big.bad = 0;
	ASSERT_NE(NULL, big.a);
	ASSERT_NE(NULL, big.b);
	OK(AM_SetSeg(self->p.a, big.a, 4 * VNET_XFER_MAX));
	OK(AM_SetSeg(self->p.b, big.b, 2 * VNET_XFER_MAX + VNET_XFER_MAX / 2));
	OK(AM_SetHandler(self->p.b, 6, huge_request));
	OK(AMVNET_GetStats(self->p.a, &st0));
	OK(AM_RequestXfer1(self->p.a, 0, 0, 6, big.a, HUGE, 9));
	ASSERT_TRUE(am_poll_until(self->p.eb, &am_ret.n, 1));
	EXPECT_EQ(EBADSEGOFF, am_ret.status[0]);
	EXPECT_EQ(AM_REQUEST_XFER_M, am_ret.opcode[0]);
	EXPECT_EQ(6, am_ret.msg[0].handler);
	EXPECT_EQ(1, am_ret.msg[0].numargs);
	EXPECT_EQ(9, am_ret.msg[0].args[0]);
	EXPECT_EQ(2 * VNET_XFER_MAX, am_ret.msg[0].dest_offset);
	EXPECT_EQ(VNET_XFER_MAX, am_ret.msg[0].nbytes);
	OK(AMVNET_GetStats(self->p.a, &st));
	EXPECT_EQ(3, st.requests_sent - st0.requests_sent);
	EXPECT_EQ(0, big.requests);
	OK(AM_SetSeg(self->p.a, NULL, 0));
	OK(AM_SetSeg(self->p.b, NULL, 0));
	free(big.a);
	free(big.b);
}

/*
 * A bulk request through staging (its source cannot be pinned) to an
 * endpoint that does not exist, then one from the segment that does
 * arrive: the pieces of the first come back while the second is being
 * posted, and are the first's alone -- the second is neither cut short
 * nor reported.
 */
TEST_F(ret, staged_bulk_coming_back_leaves_a_segment_transfer_alone)
{
	en_t nowhere = { 0, 60000 };
	int staged = 2 * AM_MaxMedium();
	uint8_t *src = malloc(staged);

	big.a = calloc(1, 4 * VNET_XFER_MAX);
	big.b = calloc(1, 4 * VNET_XFER_MAX);
	big.requests = big.replies = big.bad = 0;
	ASSERT_NE(NULL, src);
	ASSERT_NE(NULL, big.a);
	ASSERT_NE(NULL, big.b);
	OK(AM_SetSeg(self->p.a, big.a, 4 * VNET_XFER_MAX));
	OK(AM_SetSeg(self->p.b, big.b, 4 * VNET_XFER_MAX));
	OK(AM_SetHandler(self->p.b, 6, huge_request));
	OK(AM_SetHandler(self->p.a, 8, huge_reply));
	OK(AM_Map(self->p.a, 3, nowhere, AM_TAG));
	ASSERT_EQ(0, am_no_more_pins());
	am_fill(src, staged, 1);
	OK(AM_RequestXfer1(self->p.a, 3, 0, 6, src, staged, 1));
	am_fill(big.a + 7, HUGE, 9);
	OK(AM_RequestXfer1(self->p.a, 0, 0, 6, big.a + 7, HUGE, 9));
	ASSERT_TRUE(am_poll_until(self->p.eb, &big.replies, 1));
	ASSERT_TRUE(am_poll_until(self->p.eb, &am_ret.n, 1));
	EXPECT_EQ(1, big.requests);
	EXPECT_EQ(0, big.bad);
	EXPECT_EQ(1, am_ret.n);
	EXPECT_EQ(EBADENDPOINT, am_ret.status[0]);
	EXPECT_EQ(AM_REQUEST_XFER_M, am_ret.opcode[0]);
	EXPECT_EQ(3, am_ret.msg[0].index);
	EXPECT_EQ(1, am_ret.msg[0].args[0]);
	OK(AM_SetSeg(self->p.a, NULL, 0));
	OK(AM_SetSeg(self->p.b, NULL, 0));
	free(big.a);
	free(big.b);
	free(src);
}

TEST_HARNESS_MAIN
