// SPDX-License-Identifier: GPL-2.0
/*
 * libvnet, the AM-II API: every call's success and error returns, and short,
 * medium and bulk requests and replies with 0 to 8 arguments, with the
 * message interrogation calls inside their handlers.
 */
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "am_util.h"

#define OK(call)	ASSERT_EQ(AM_OK, (call))

TEST(not_initialized)
{
	en_t name = { 0, 0 };
	eb_t eb = NULL;
	ep_t ep = NULL;
	uintptr_t len;

	EXPECT_EQ(AM_ERR_NOT_INIT, AM_Terminate());
	EXPECT_EQ(AM_ERR_NOT_INIT, AM_AllocateBundle(AM_SEQ, &eb));
	EXPECT_EQ(AM_ERR_NOT_INIT, AM_AllocateEndpoint(eb, &ep, &name));
	EXPECT_EQ(AM_ERR_NOT_INIT, AM_MaxSegLength(&len));
	EXPECT_EQ(AM_ERR_NOT_INIT, AM_Poll(eb));
	EXPECT_EQ(AM_ERR_NOT_INIT, AM_Map(ep, 0, name, AM_TAG));
	EXPECT_EQ(AM_ERR_NOT_INIT, AM_Request0(ep, 0, 1));
	EXPECT_EQ(AM_ERR_NOT_INIT, AM_WaitSema(eb));

	/* Counted: every AM_Init needs its AM_Terminate. */
	OK(AM_Init());
	OK(AM_Init());
	OK(AM_AllocateBundle(AM_SEQ, &eb));
	OK(AM_Terminate());
	OK(AM_Poll(eb));		/* still there after the first */
	OK(AM_Terminate());
	EXPECT_EQ(AM_ERR_NOT_INIT, AM_Terminate());
	EXPECT_EQ(AM_ERR_NOT_INIT, AM_AllocateBundle(AM_SEQ, &eb));
}

TEST(bundles_and_endpoints)
{
	en_t n1, n2;
	eb_t eb, eb2;
	ep_t e1, e2;

	OK(AM_Init());
	EXPECT_EQ(AM_ERR_BAD_ARG, AM_AllocateBundle(AM_NUM_BUNDLE_MODES, &eb));
	EXPECT_EQ(AM_ERR_BAD_ARG, AM_AllocateBundle(-1, &eb));
	EXPECT_EQ(AM_ERR_BAD_ARG, AM_AllocateBundle(AM_SEQ, NULL));
	OK(AM_AllocateBundle(AM_SEQ, &eb));
	OK(AM_AllocateBundle(AM_PAR, &eb2));

	EXPECT_EQ(AM_ERR_BAD_ARG, AM_AllocateEndpoint(NULL, &e1, &n1));
	EXPECT_EQ(AM_ERR_BAD_ARG, AM_AllocateEndpoint(eb, NULL, &n1));
	EXPECT_EQ(AM_ERR_BAD_ARG, AM_AllocateEndpoint(eb, &e1, NULL));
	EXPECT_EQ(AM_ERR_BAD_ARG,
		  AMVNET_AllocateEndpointOnNIC(eb, 4242, &e1, &n1));
	EXPECT_EQ(AM_ERR_BAD_ARG,
		  AMVNET_AllocateEndpointOnNIC(eb, VNET_MAX_NIC_ID + 1, &e1,
					       &n1));
	OK(AM_AllocateEndpoint(eb, &e1, &n1));
	OK(AMVNET_AllocateEndpointOnNIC(eb, 0, &e2, &n2));
	EXPECT_EQ(0, n1.nic);
	EXPECT_EQ(0, n2.nic);
	EXPECT_NE(n1.ep, n2.ep);
	EXPECT_LE(0, AMVNET_GetFd(e1));
	EXPECT_EQ(-1, AMVNET_GetFd(NULL));

	EXPECT_EQ(AM_ERR_BAD_ARG, AM_MoveEndpoint(NULL, eb, eb2));
	EXPECT_EQ(AM_ERR_BAD_ARG, AM_MoveEndpoint(e1, eb2, eb));
	OK(AM_MoveEndpoint(e1, eb, eb2));
	OK(AM_MoveEndpoint(e1, eb2, eb2));
	EXPECT_EQ(AM_ERR_BAD_ARG, AM_MoveEndpoint(e1, eb, eb2));

	EXPECT_EQ(AM_ERR_BAD_ARG, AM_FreeEndpoint(NULL));
	OK(AM_FreeEndpoint(e2));
	EXPECT_EQ(AM_ERR_BAD_ARG, AM_FreeBundle(NULL));
	OK(AM_FreeBundle(eb));
	EXPECT_EQ(AM_ERR_BAD_ARG, AM_FreeBundle(eb));	/* already gone */
	OK(AM_FreeBundle(eb2));				/* and e1 with it */
	OK(AM_Terminate());
}

TEST(tags_and_translations)
{
	en_t name, other = { 0, 12345 }, got;
	int i, idx;
	eb_t eb;
	ep_t ep;
	tag_t tag;

	OK(AM_Init());
	OK(AM_AllocateBundle(AM_SEQ, &eb));
	OK(AM_AllocateEndpoint(eb, &ep, &name));

	OK(AM_GetTag(ep, &tag));
	EXPECT_EQ(AM_NONE, tag);		/* accepts nothing yet */
	OK(AM_SetTag(ep, AM_TAG));
	OK(AM_GetTag(ep, &tag));
	EXPECT_EQ(AM_TAG, tag);
	EXPECT_EQ(AM_ERR_BAD_ARG, AM_SetTag(NULL, AM_TAG));
	EXPECT_EQ(AM_ERR_BAD_ARG, AM_GetTag(ep, NULL));
	OK(AMVNET_RandomTag(&tag));		/* never a special tag */
	EXPECT_NE(AM_NONE, tag);
	EXPECT_NE(AM_ALL, tag);
	EXPECT_EQ(AM_ERR_BAD_ARG, AMVNET_RandomTag(NULL));

	EXPECT_EQ(AM_ERR_BAD_ARG, AM_Map(ep, -1, name, AM_TAG));
	EXPECT_EQ(AM_ERR_BAD_ARG, AM_Map(ep, AMVNET_MAX_TRANSLATIONS, name, AM_TAG));
	EXPECT_EQ(AM_ERR_BAD_ARG, AM_Map(NULL, 0, name, AM_TAG));
	other.nic = VNET_MAX_NIC_ID + 1;
	EXPECT_EQ(AM_ERR_BAD_ARG, AM_Map(ep, 0, other, AM_TAG));
	other.nic = 0;
	OK(AM_Map(ep, 5, name, AM_TAG));
	EXPECT_EQ(AM_ERR_RESOURCE, AM_Map(ep, 5, other, AM_TAG));
	OK(AM_GetTranslationInuse(ep, 5));
	EXPECT_EQ(AM_ERR_RESOURCE, AM_GetTranslationInuse(ep, 6));
	OK(AM_GetTranslationTag(ep, 5, &tag));
	EXPECT_EQ(AM_TAG, tag);
	OK(AM_GetTranslationName(ep, 5, &got));
	EXPECT_EQ(name.ep, got.ep);
	EXPECT_EQ(AM_ERR_BAD_ARG, AM_GetTranslationName(ep, 5, NULL));
	EXPECT_EQ(AM_ERR_BAD_ARG, AM_GetTranslationTag(ep, 300, &tag));

	/* MapAny: lowest free entry, until none is left. */
	OK(AM_MapAny(ep, &idx, other, 7));
	EXPECT_EQ(0, idx);
	for (i = 1; i < AMVNET_MAX_TRANSLATIONS - 1; i++)
		OK(AM_MapAny(ep, &idx, other, 7));
	EXPECT_EQ(AMVNET_MAX_TRANSLATIONS - 1, idx);
	EXPECT_EQ(AM_ERR_RESOURCE, AM_MapAny(ep, &idx, other, 7));
	EXPECT_EQ(AM_ERR_BAD_ARG, AM_MapAny(ep, NULL, other, 7));
	OK(AM_GetNumTranslations(ep, &i));
	EXPECT_EQ(AMVNET_MAX_TRANSLATIONS, i);
	OK(AM_MaxNumTranslations(&i));
	EXPECT_EQ(AM_ERR_RESOURCE, AM_SetNumTranslations(ep, 17));

	OK(AM_UnMap(ep, 5));
	EXPECT_EQ(AM_ERR_RESOURCE, AM_UnMap(ep, 5));	/* not mapped */
	EXPECT_EQ(AM_ERR_BAD_ARG, AM_UnMap(ep, AMVNET_MAX_TRANSLATIONS));
	OK(AM_Unmap(ep, 6));
	OK(AM_MapAny(ep, &idx, name, AM_TAG));
	EXPECT_EQ(5, idx);
	OK(AM_Terminate());
}

TEST(segments)
{
	uint32_t payload;
	uintptr_t len;
	void *addr, *ro;
	static char seg[65536];
	en_t name;
	eb_t eb;
	ep_t ep;

	OK(AM_Init());
	OK(AM_AllocateBundle(AM_SEQ, &eb));
	OK(AM_AllocateEndpoint(eb, &ep, &name));
	OK(AM_MaxSegLength(&len));
	EXPECT_EQ(VNET_MAX_SEG_LEN, len);
	OK(AMVNET_MaxPayload(ep, &payload));
	EXPECT_EQ(VNET_XFER_MAX, payload);	/* the loopback NIC */
	EXPECT_EQ(AM_ERR_BAD_ARG, AMVNET_MaxPayload(ep, NULL));
	EXPECT_EQ(AM_ERR_BAD_ARG, AM_MaxSegLength(NULL));

	OK(AM_GetSeg(ep, &addr, &len));
	EXPECT_EQ(NULL, addr);
	EXPECT_EQ(0, len);
	EXPECT_EQ(AM_ERR_BAD_ARG, AM_SetSeg(ep, NULL, 4096));
	EXPECT_EQ(AM_ERR_BAD_ARG, AM_SetSeg(ep, seg, VNET_MAX_SEG_LEN + 1));
	EXPECT_EQ(AM_ERR_BAD_ARG, AM_SetSeg(NULL, seg, sizeof(seg)));
	ro = mmap(NULL, 8192, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ro);
	EXPECT_EQ(AM_ERR_BAD_ARG, AM_SetSeg(ep, ro, 8192));	/* read-only */
	munmap(ro, 8192);
	OK(AM_SetSeg(ep, seg, sizeof(seg)));
	OK(AM_GetSeg(ep, &addr, &len));
	EXPECT_EQ((void *)seg, addr);
	EXPECT_EQ(sizeof(seg), len);
	EXPECT_EQ(AM_ERR_BAD_ARG, AM_GetSeg(ep, NULL, &len));
	OK(AM_SetSeg(ep, NULL, 0));
	OK(AM_GetSeg(ep, &addr, &len));
	EXPECT_EQ(0, len);
	OK(AM_Terminate());
}

static void nop_handler(void *token)
{
	(void)token;
}

TEST(handlers_resources_events)
{
	handler_t h;
	int i, mask;
	en_t name;
	eb_t eb, empty;
	ep_t ep;

	OK(AM_Init());
	OK(AM_AllocateBundle(AM_SEQ, &eb));
	OK(AM_AllocateBundle(AM_SEQ, &empty));
	OK(AM_AllocateEndpoint(eb, &ep, &name));

	EXPECT_EQ(AM_ERR_BAD_ARG, AM_SetHandler(ep, 3, NULL));
	EXPECT_EQ(AM_ERR_BAD_ARG, AM_SetHandler(NULL, 3, nop_handler));
	OK(AM_SetHandler(ep, 3, nop_handler));
	OK(AM_SetHandler(ep, 0, am_ret_handler));
	OK(AM_SetHandlerAny(ep, &h, nop_handler));
	EXPECT_EQ(1, h);			/* 0 is never free */
	for (i = 2; i < AM_MaxNumHandlers() - 1; i++)
		OK(AM_SetHandlerAny(ep, &h, nop_handler));
	EXPECT_EQ(AM_MaxNumHandlers() - 1, h);
	EXPECT_EQ(AM_ERR_RESOURCE, AM_SetHandlerAny(ep, &h, nop_handler));
	EXPECT_EQ(AM_ERR_BAD_ARG, AM_SetHandlerAny(ep, NULL, nop_handler));
	OK(AM_GetNumHandlers(ep, &i));
	EXPECT_EQ(256, i);

	EXPECT_EQ(AM_ERR_BAD_ARG, AM_SetExpectedResources(ep, 1, 0));
	EXPECT_EQ(AM_ERR_BAD_ARG, AM_SetExpectedResources(ep, -1, 4));
	EXPECT_EQ(AM_ERR_RESOURCE,
		  AM_SetExpectedResources(ep, 1, AMVNET_MAX_CREDITS + 1));
	OK(AM_SetExpectedResources(ep, 1, AMVNET_MAX_CREDITS));
	OK(AM_SetExpectedResources(ep, 8, 2));	/* again: a new K */

	OK(AM_GetEventMask(eb, &mask));
	EXPECT_EQ(AM_NOEVENTS, mask);
	EXPECT_EQ(AM_ERR_BAD_ARG, AM_SetEventMask(eb, AM_NUMEVENTMASKS));
	EXPECT_EQ(AM_ERR_BAD_ARG, AM_SetEventMask(NULL, AM_NOTEMPTY));
	EXPECT_EQ(AM_ERR_BAD_ARG, AM_GetEventMask(eb, NULL));
	/* Waiting with no event enabled would never end. */
	EXPECT_EQ(AM_ERR_RESOURCE, AM_WaitSema(eb));
	OK(AM_SetEventMask(eb, AM_NOTEMPTY));
	OK(AM_GetEventMask(eb, &mask));
	EXPECT_EQ(AM_NOTEMPTY, mask);
	OK(AM_SetEventMask(empty, AM_NOTEMPTY));
	EXPECT_EQ(AM_ERR_RESOURCE, AM_Wait(empty));	/* nothing to wait on */
	EXPECT_EQ(AM_ERR_BAD_ARG, AM_WaitSema(NULL));
	EXPECT_EQ(AM_ERR_BAD_ARG, AMVNET_SetWaitRescue(eb, -1));
	EXPECT_EQ(AM_ERR_BAD_ARG, AM_Poll(NULL));
	OK(AM_Poll(eb));
	OK(AM_Terminate());
}

TEST(request_argument_errors)
{
	static char buf[VNET_MEDIUM_MAX + 1];
	struct am_pair p;
	void *tok = NULL;

	OK(AM_Init());
	OK(am_pair_open(&p, AM_SEQ));
	EXPECT_EQ(AM_ERR_BAD_ARG, AM_Request0(NULL, 0, 1));
	EXPECT_EQ(AM_ERR_BAD_ARG, AM_Request0(p.a, -1, 1));
	EXPECT_EQ(AM_ERR_BAD_ARG,
		  AM_Request0(p.a, AMVNET_MAX_TRANSLATIONS, 1));
	EXPECT_EQ(AM_ERR_BAD_ARG, AM_Request0(p.a, 0, 0));	/* handler 0 */
	EXPECT_EQ(AM_ERR_BAD_ARG, AMVNET_Request(p.a, 0, 1, 9, 1, 2, 3, 4, 5,
						 6, 7, 8, 9));
	EXPECT_EQ(AM_ERR_BAD_ARG, AMVNET_Request(p.a, 0, 1, -1));
	EXPECT_EQ(AM_ERR_BAD_ARG, AM_RequestI0(p.a, 0, 1, buf,
					       VNET_MEDIUM_MAX + 1));
	EXPECT_EQ(AM_ERR_BAD_ARG, AM_RequestI0(p.a, 0, 1, buf, -1));
	EXPECT_EQ(AM_ERR_BAD_ARG, AM_RequestI0(p.a, 0, 1, NULL, 10));
	EXPECT_EQ(AM_ERR_BAD_ARG, AM_RequestXfer0(p.a, 0, 0, 1, buf,
						  AM_MaxLong() + 1));
	EXPECT_EQ(AM_ERR_BAD_ARG, AM_RequestXfer0(p.a, 0, UINTPTR_MAX, 1,
						  buf, 2));
	EXPECT_EQ(AM_ERR_BAD_ARG, AM_RequestXfer0(p.a, 0, 0, 1, NULL, 2));

	/* Replies and interrogation need a running handler's token. */
	EXPECT_EQ(AM_ERR_BAD_ARG, AM_Reply0(NULL, 1));
	EXPECT_EQ(AM_ERR_BAD_ARG, AM_GetSourceEndpoint(NULL, &p.na));
	EXPECT_EQ(AM_ERR_BAD_ARG, AM_GetMsgTag(tok, NULL));
	EXPECT_EQ(AM_ERR_BAD_ARG, AM_GetDestEndpoint(NULL, &p.a));
	OK(AM_Terminate());
}

/*
 * Messages with 0..8 arguments.  Argument i of an N-argument message is
 * 1000 * N + i; handlers check what they got and where it came from.
 */
static struct {
	struct am_pair p;
	int n;				/* arguments in flight */
	int reqs, reps, bad;
	uint32_t sum;			/* of the payload in flight */
	uint8_t *aseg, *bseg;
	int inner;			/* calls made inside a handler */
} m;

static void note(void *t, bool req, int n, const int32_t *v, void *buf,
		 size_t nb, bool bulk)
{
	en_t src, want = req ? m.p.na : m.p.nb;
	ep_t dst;
	tag_t tag;
	int i;

	if (n != m.n)
		m.bad++;
	for (i = 0; i < n; i++)
		if (v[i] != 1000 * n + i)
			m.bad++;
	if (AM_GetSourceEndpoint(t, &src) || src.ep != want.ep ||
	    AM_GetDestEndpoint(t, &dst) || dst != (req ? m.p.b : m.p.a) ||
	    AM_GetMsgTag(t, &tag) || tag != AM_TAG)
		m.bad++;
	if (buf && am_sum(buf, nb) != m.sum)
		m.bad++;
	if (bulk && buf != (req ? m.bseg + 128 : m.aseg + 256))
		m.bad++;
	/* What a handler may not do. */
	if (AM_Poll(m.p.eb) != AM_ERR_RESOURCE ||
	    AM_Request0(m.p.a, 0, 1) != AM_ERR_RESOURCE ||
	    AM_WaitSema(m.p.eb) != AM_ERR_RESOURCE ||
	    AM_Map(m.p.a, 9, src, 1) != AM_ERR_RESOURCE)
		m.bad++;
	if (!req && AM_Reply0(t, 20) != AM_ERR_RESOURCE)
		m.bad++;			/* no reply to a reply */
	m.inner++;
}

#define P0
#define P1 , int32_t a0
#define P2 P1, int32_t a1
#define P3 P2, int32_t a2
#define P4 P3, int32_t a3
#define P5 P4, int32_t a4
#define P6 P5, int32_t a5
#define P7 P6, int32_t a6
#define P8 P7, int32_t a7
#define L0
#define L1 , a0
#define L2 L1, a1
#define L3 L2, a2
#define L4 L3, a3
#define L5 L4, a4
#define L6 L5, a5
#define L7 L6, a6
#define L8 L7, a7

/* Expands the argument list first, so L##N splits into arguments. */
#define CALL(fn, ...)	fn(__VA_ARGS__)

/* Handlers: short 10+N/20+N, medium 30+N/40+N, bulk 50+N/60+N. */
#define HANDLERS(N)							\
static void sreq##N(void *t P##N)					\
{									\
	int32_t v[] = { 0 L##N };					\
	note(t, true, N, v + 1, NULL, 0, false);			\
	if (CALL(AM_Reply##N, t, 20 + N L##N))				\
		m.bad++;						\
	if (CALL(AM_Reply##N, t, 20 + N L##N) != AM_ERR_RESOURCE)		\
		m.bad++;	/* at most once */			\
	m.reqs++;							\
}									\
static void srep##N(void *t P##N)					\
{									\
	int32_t v[] = { 0 L##N };					\
	note(t, false, N, v + 1, NULL, 0, false);			\
	m.reps++;							\
}									\
static void mreq##N(void *t, void *buf, size_t nb P##N)		\
{									\
	int32_t v[] = { 0 L##N };					\
	note(t, true, N, v + 1, buf, nb, false);			\
	if (CALL(AM_ReplyI##N, t, 40 + N, buf, (int)nb L##N))			\
		m.bad++;						\
	m.reqs++;							\
}									\
static void mrep##N(void *t, void *buf, size_t nb P##N)		\
{									\
	int32_t v[] = { 0 L##N };					\
	note(t, false, N, v + 1, buf, nb, false);			\
	m.reps++;							\
}									\
static void xreq##N(void *t, void *buf, size_t nb P##N)		\
{									\
	int32_t v[] = { 0 L##N };					\
	note(t, true, N, v + 1, buf, nb, true);				\
	if (CALL(AM_ReplyXfer##N, t, 256, 60 + N, buf, (int)nb L##N))		\
		m.bad++;						\
	m.reqs++;							\
}									\
static void xrep##N(void *t, void *buf, size_t nb P##N)		\
{									\
	int32_t v[] = { 0 L##N };					\
	note(t, false, N, v + 1, buf, nb, true);			\
	m.reps++;							\
}

HANDLERS(0) HANDLERS(1) HANDLERS(2) HANDLERS(3) HANDLERS(4)
HANDLERS(5) HANDLERS(6) HANDLERS(7) HANDLERS(8)

#define REG(N)								\
	do {								\
		OK(AM_SetHandler(m.p.b, 10 + N, sreq##N));		\
		OK(AM_SetHandler(m.p.a, 20 + N, srep##N));		\
		OK(AM_SetHandler(m.p.b, 30 + N, mreq##N));		\
		OK(AM_SetHandler(m.p.a, 40 + N, mrep##N));		\
		OK(AM_SetHandler(m.p.b, 50 + N, xreq##N));		\
		OK(AM_SetHandler(m.p.a, 60 + N, xrep##N));		\
	} while (0)

#define K(i)	(1000 * n + (i))

static int send_short(int n)
{
	ep_t a = m.p.a;

	switch (n) {
	case 0: return AM_Request0(a, 0, 10);
	case 1: return AM_Request1(a, 0, 11, K(0));
	case 2: return AM_Request2(a, 0, 12, K(0), K(1));
	case 3: return AM_Request3(a, 0, 13, K(0), K(1), K(2));
	case 4: return AM_Request4(a, 0, 14, K(0), K(1), K(2), K(3));
	case 5: return AM_Request5(a, 0, 15, K(0), K(1), K(2), K(3), K(4));
	case 6: return AM_Request6(a, 0, 16, K(0), K(1), K(2), K(3), K(4),
				   K(5));
	case 7: return AM_Request7(a, 0, 17, K(0), K(1), K(2), K(3), K(4),
				   K(5), K(6));
	default: return AM_Request8(a, 0, 18, K(0), K(1), K(2), K(3), K(4),
				    K(5), K(6), K(7));
	}
}

static int send_medium(int n, void *b, int len)
{
	ep_t a = m.p.a;

	switch (n) {
	case 0: return AM_RequestI0(a, 0, 30, b, len);
	case 1: return AM_RequestI1(a, 0, 31, b, len, K(0));
	case 2: return AM_RequestI2(a, 0, 32, b, len, K(0), K(1));
	case 3: return AM_RequestI3(a, 0, 33, b, len, K(0), K(1), K(2));
	case 4: return AM_RequestI4(a, 0, 34, b, len, K(0), K(1), K(2), K(3));
	case 5: return AM_RequestI5(a, 0, 35, b, len, K(0), K(1), K(2), K(3),
				    K(4));
	case 6: return AM_RequestI6(a, 0, 36, b, len, K(0), K(1), K(2), K(3),
				    K(4), K(5));
	case 7: return AM_RequestI7(a, 0, 37, b, len, K(0), K(1), K(2), K(3),
				    K(4), K(5), K(6));
	default: return AM_RequestI8(a, 0, 38, b, len, K(0), K(1), K(2), K(3),
				     K(4), K(5), K(6), K(7));
	}
}

static int send_bulk(int n, void *b, int len)
{
	ep_t a = m.p.a;

	switch (n) {
	case 0: return AM_RequestXfer0(a, 0, 128, 50, b, len);
	case 1: return AM_RequestXfer1(a, 0, 128, 51, b, len, K(0));
	case 2: return AM_RequestXfer2(a, 0, 128, 52, b, len, K(0), K(1));
	case 3: return AM_RequestXfer3(a, 0, 128, 53, b, len, K(0), K(1),
				       K(2));
	case 4: return AM_RequestXfer4(a, 0, 128, 54, b, len, K(0), K(1),
				       K(2), K(3));
	case 5: return AM_RequestXfer5(a, 0, 128, 55, b, len, K(0), K(1),
				       K(2), K(3), K(4));
	case 6: return AM_RequestXfer6(a, 0, 128, 56, b, len, K(0), K(1),
				       K(2), K(3), K(4), K(5));
	case 7: return AM_RequestXfer7(a, 0, 128, 57, b, len, K(0), K(1),
				       K(2), K(3), K(4), K(5), K(6));
	default: return AM_RequestXfer8(a, 0, 128, 58, b, len, K(0), K(1),
					K(2), K(3), K(4), K(5), K(6), K(7));
	}
}

TEST(zero_to_eight_arguments)
{
	static uint8_t aseg[16384], bseg[16384], payload[4000];
	int n, sent = 0;

	OK(AM_Init());
	OK(am_pair_open(&m.p, AM_SEQ));
	OK(AM_SetHandler(m.p.a, 0, am_ret_handler));
	OK(AM_SetHandler(m.p.b, 0, am_ret_handler));
	REG(0); REG(1); REG(2); REG(3); REG(4); REG(5); REG(6); REG(7);
	REG(8);
	m.aseg = aseg;
	m.bseg = bseg;
	OK(AM_SetSeg(m.p.a, aseg, sizeof(aseg)));
	OK(AM_SetSeg(m.p.b, bseg, sizeof(bseg)));

	for (n = 0; n <= AM_MaxShort(); n++) {
		m.n = n;
		OK(send_short(n));
		ASSERT_TRUE(am_poll_until(m.p.eb, &m.reps, ++sent));

		am_fill(payload, sizeof(payload), n);
		m.sum = am_sum(payload, 100 * n + 7);
		OK(send_medium(n, payload, 100 * n + 7));
		ASSERT_TRUE(am_poll_until(m.p.eb, &m.reps, ++sent));

		m.sum = am_sum(payload, 300 * n + 1);
		OK(send_bulk(n, payload, 300 * n + 1));
		ASSERT_TRUE(am_poll_until(m.p.eb, &m.reps, ++sent));
		EXPECT_EQ(0, memcmp(payload, bseg + 128, 300 * n + 1));
		EXPECT_EQ(0, memcmp(payload, aseg + 256, 300 * n + 1));
	}
	EXPECT_EQ(sent, m.reqs);
	EXPECT_EQ(2 * sent, m.inner);
	EXPECT_EQ(0, m.bad);
	EXPECT_EQ(0, am_ret.n);
	OK(AM_Terminate());
}

/* What a request handler may get wrong when it replies. */
static int reply_errors, reply_checks;

static void check_reply_errors(void *t, void *buf, size_t nb)
{
	static char big[VNET_MEDIUM_MAX + 1];
	struct amvnet_returned ret;
	void *none = mmap(NULL, 2 * VNET_MEDIUM_MAX, PROT_NONE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	(void)nb;
	reply_checks++;
	reply_errors += AM_Reply0(t, 0) != AM_ERR_BAD_ARG;	/* handler 0 */
	reply_errors += AMVNET_Reply(t, 2, 9, 1, 2, 3, 4, 5, 6, 7, 8, 9) !=
			AM_ERR_BAD_ARG;
	reply_errors += AM_ReplyI0(t, 2, big, sizeof(big)) != AM_ERR_BAD_ARG;
	reply_errors += AM_ReplyI0(t, 2, NULL, 5) != AM_ERR_BAD_ARG;
	reply_errors += AM_ReplyI0(t, 2, buf, -1) != AM_ERR_BAD_ARG;
	/* A bulk reply is one message: past a medium one, read in place,
	 * which memory that cannot be read cannot be.
	 */
	reply_errors += none == MAP_FAILED ||
			AM_ReplyXfer0(t, 0, 2, none, sizeof(big)) !=
			AM_ERR_BAD_ARG;
	if (none != MAP_FAILED)
		munmap(none, 2 * VNET_MEDIUM_MAX);
	reply_errors += AM_GetMsgTag(t, NULL) != AM_ERR_BAD_ARG;
	reply_errors += AM_GetSourceEndpoint(t, NULL) != AM_ERR_BAD_ARG;
	reply_errors += AM_GetDestEndpoint(t, NULL) != AM_ERR_BAD_ARG;
	reply_errors += AMVNET_GetReturnedMessage(t, &ret) != AM_ERR_RESOURCE;
	/* None of that was a reply: this one is, and the only one. */
	reply_errors += AM_ReplyI0(t, 2, buf, (int)nb) != AM_OK;
	reply_errors += AM_Reply0(t, 2) != AM_ERR_RESOURCE;
}

static volatile int got_reply;

static void note_reply(void *t, void *buf, size_t nb)
{
	(void)t;
	(void)buf;
	got_reply += nb == 5;
}

TEST(reply_and_query_errors)
{
	struct amvnet_stats st;
	uint64_t w, r;
	struct am_pair p;

	OK(AM_Init());
	OK(am_pair_open(&p, AM_SEQ));
	OK(AM_SetHandler(p.b, 1, check_reply_errors));
	OK(AM_SetHandler(p.a, 2, note_reply));
	OK(AM_RequestI0(p.a, 0, 1, "hello", 5));
	ASSERT_TRUE(am_poll_until(p.eb, &got_reply, 1));
	EXPECT_EQ(1, reply_checks);
	EXPECT_EQ(0, reply_errors);

	EXPECT_EQ(AM_ERR_BAD_ARG, AMVNET_GetStats(NULL, &st));
	EXPECT_EQ(AM_ERR_BAD_ARG, AMVNET_GetStats(p.a, NULL));
	OK(AMVNET_GetStats(p.b, &st));
	EXPECT_EQ(1, st.requests_received);
	EXPECT_EQ(1, st.replies_sent);
	EXPECT_EQ(AM_ERR_BAD_ARG, AMVNET_GetWaitStats(NULL, &w, &r));
	EXPECT_EQ(AM_ERR_BAD_ARG, AMVNET_GetWaitStats(p.eb, NULL, &r));
	OK(AMVNET_GetWaitStats(p.eb, &w, &r));
	EXPECT_EQ(0, w);
	OK(AMVNET_SetWaitRescue(p.eb, 0));
	EXPECT_EQ(AM_ERR_BAD_ARG, AMVNET_MaxPayload(NULL, &st.credits));
	EXPECT_EQ(AM_ERR_BAD_ARG, AMVNET_GetReturnedMessage(NULL, NULL));
	OK(AM_Terminate());
}

/* A token outlives its handler only as a pointer: using it is refused. */
static void *stale;

static void keep_token(void *t)
{
	stale = t;
}

TEST(stale_token)
{
	struct am_pair p;
	en_t src;
	int done;

	OK(AM_Init());
	OK(am_pair_open(&p, AM_PAR));
	OK(AM_SetHandler(p.b, 7, keep_token));
	OK(AM_Request0(p.a, 0, 7));
	done = 0;
	while (!stale && done++ < 1000000)
		OK(AM_Poll(p.eb));
	ASSERT_NE(NULL, stale);
	EXPECT_EQ(AM_ERR_RESOURCE, AM_Reply0(stale, 7));
	EXPECT_EQ(AM_ERR_RESOURCE, AM_GetSourceEndpoint(stale, &src));
	OK(AM_Terminate());
}

/* The command line of an example in tools/lib/vnet/examples/. */
static int example_cmd(char *cmd, size_t len, const char *args)
{
	char dir[4096];
	ssize_t n = readlink("/proc/self/exe", dir, sizeof(dir) - 1);

	if (n <= 0)
		return -1;
	dir[n] = '\0';
	*strrchr(dir, '/') = '\0';
	snprintf(cmd, len, "%s/../tools/lib/vnet/examples/%s", dir, args);
	return 0;
}

/* The examples run and succeed. */
static int run_example(const char *args)
{
	char cmd[4200];

	return example_cmd(cmd, sizeof(cmd), args) ? -1 : system(cmd);
}

TEST(examples)
{
	EXPECT_EQ(0, run_example("pingpong 200"));
	EXPECT_EQ(0, run_example("pingpong -w 200"));
	EXPECT_EQ(0, run_example("server 4 100"));
}

/*
 * The README's two-node ping-pong, on one NIC: the server prints its name
 * and its random tag, and the client needs both, the tag in its
 * environment (its command line is world readable in /proc).
 */
TEST(example_pingpong_client_takes_the_tag)
{
	char path[4200], cmd[4300], line[256], tag[32], args[128];
	unsigned int nic, ep;
	FILE *server;

	ASSERT_EQ(0, example_cmd(path, sizeof(path), "pingpong server 0"));
	/* A server whose client never comes must not outlive the test. */
	snprintf(cmd, sizeof(cmd), "timeout 20 %s", path);
	server = popen(cmd, "r");
	ASSERT_NE(NULL, server);
	ASSERT_NE(NULL, fgets(line, sizeof(line), server));
	ASSERT_EQ(3, sscanf(line, "pingpong: serving at %u:%u, tag %31s",
			    &nic, &ep, tag)) {
		TH_LOG("server said: %s", line);
	}
	snprintf(args, sizeof(args), "pingpong client 0 %u:%u 100", nic, ep);
	ASSERT_EQ(0, setenv("VNET_TAG", tag, 1));
	EXPECT_EQ(0, run_example(args));
	unsetenv("VNET_TAG");
	EXPECT_EQ(0, pclose(server));	/* the client's STOP ends it */
}

/*
 * A program's last messages, posted just before it frees its endpoint,
 * arrive: the driver drops what a closing endpoint posted and the firmware
 * has not taken, so the library lets the firmware take it first.  Each
 * round the server is off the card (fillers have its frame), so the
 * firmware holds a child's first request until the server is faulted back
 * in, and the child frees its bundle right after posting; the server looks
 * only once the child is gone.
 */
#define LAST_ROUNDS	10
#define LAST_EACH	16
#define LAST_FILLERS	16
#define LAST_OFF_CARD	10	/* the child's exit status: server off the card */

static int last_count;

static void count_last(void *token)
{
	(void)token;
	last_count++;
}

/*
 * The child: a bundle of its own (the parent's, inherited, stay untouched:
 * reading their frames would bring the server back), LAST_EACH requests,
 * and AM_FreeBundle() at once.
 */
static void post_last_and_exit(en_t server, tag_t tag)
{
	char state[32];
	bool off_card;
	en_t name;
	eb_t eb;
	ep_t ep;
	int i;

	if (AM_AllocateBundle(AM_SEQ, &eb) != AM_OK ||
	    AM_AllocateEndpoint(eb, &ep, &name) != AM_OK ||
	    AM_SetExpectedResources(ep, 1, LAST_EACH) != AM_OK ||
	    AM_Map(ep, 0, server, tag) != AM_OK)
		_exit(2);
	off_card = !strcmp(vnet_ep_state(server.ep, state, sizeof(state)),
			   "nonresident");
	for (i = 0; i < LAST_EACH; i++)
		if (AM_Request0(ep, 0, 1) != AM_OK)
			_exit(3);
	if (AM_FreeBundle(eb) != AM_OK)
		_exit(4);
	_exit(off_card ? LAST_OFF_CARD : 0);
}

TEST(last_requests_before_terminate_arrive)
{
	int round, status, off_card = 0, i;
	long long frames = vnet_read_ll("/sys/module/vnet/parameters/frames");
	char state[32];
	en_t name, fname;
	eb_t eb, fillers;
	double deadline;
	tag_t tag;
	ep_t ep, fep;
	pid_t pid;

	if (frames <= 0 || frames > LAST_FILLERS - 2)
		SKIP(return, "wants at most %d frames, module has %lld",
		     LAST_FILLERS - 2, frames);
	OK(AM_Init());
	OK(AM_AllocateBundle(AM_SEQ, &eb));
	OK(AM_AllocateBundle(AM_SEQ, &fillers));
	OK(AM_AllocateEndpoint(eb, &ep, &name));
	for (i = 0; i < LAST_FILLERS; i++)
		OK(AM_AllocateEndpoint(fillers, &fep, &fname));
	OK(AMVNET_RandomTag(&tag));
	OK(AM_SetTag(ep, tag));
	OK(AM_SetHandler(ep, 1, count_last));
	for (round = 0; round < LAST_ROUNDS; round++) {
		/* Polling the fillers faults them in, the server out. */
		deadline = vnet_now() + 5;
		while (strcmp(vnet_ep_state(name.ep, state, sizeof(state)),
			      "nonresident") && vnet_now() < deadline)
			OK(AM_Poll(fillers));
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid)
			post_last_and_exit(name, tag);
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		ASSERT_TRUE(WIFEXITED(status));
		ASSERT_TRUE(!WEXITSTATUS(status) ||
			    WEXITSTATUS(status) == LAST_OFF_CARD) {
			TH_LOG("round %d: the child failed (exit %d)", round,
			       WEXITSTATUS(status));
		}
		off_card += WEXITSTATUS(status) == LAST_OFF_CARD;
		/* What was taken arrives; a lost one never does. */
		deadline = vnet_now() + 3;
		while (last_count < (round + 1) * LAST_EACH &&
		       vnet_now() < deadline)
			OK(AM_Poll(eb));
		ASSERT_EQ((round + 1) * LAST_EACH, last_count) {
			TH_LOG("round %d: %d of the %d requests arrived", round,
			       last_count - round * LAST_EACH, LAST_EACH);
		}
	}
	/* Else it raced nothing the other tests do not. */
	EXPECT_LT(0, off_card);
	OK(AM_Terminate());
}

TEST_HARNESS_MAIN
