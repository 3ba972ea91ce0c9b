// SPDX-License-Identifier: GPL-2.0
/*
 * libvnet, bulk transfers from anywhere in the sender's memory: past a
 * medium payload, a source outside the segment is pinned (VNET_IOC_PIN)
 * and read in place, one message per megabyte as from the segment, request
 * and reply; a buffer freed and allocated again at the same address sends
 * its new bytes; a pin dropped while a request is being sent from it is
 * pinned again and the piece that came back sent again; and where the
 * source cannot be pinned (no locked memory left) a request goes through
 * staging as before and still arrives whole.
 */
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "am_util.h"

#define OK(call)	ASSERT_EQ(AM_OK, (call))
#define LEN		(3 * VNET_XFER_MAX + 5)	/* four messages */

static struct {
	uint8_t *seg_b;			/* where requests land */
	uint8_t *seg_a;			/* where replies land */
	uint8_t *reply_src;		/* the server's, outside its segment */
	uint32_t len;
	volatile int requests, replies;
	int bad;
	int failed;			/* handler 0 ran */
} x;

static void got_returned(int status, op_t opcode, void *token)
{
	(void)status;
	(void)opcode;
	(void)token;
	x.failed++;
}

static void got_request(void *t, void *buf, size_t nb, int32_t seed)
{
	uint8_t *want = malloc(nb);

	x.requests++;
	am_fill(want, nb, (uint32_t)seed);
	if (buf != x.seg_b || nb != x.len || memcmp(buf, want, nb))
		x.bad++;
	free(want);
	am_fill(x.reply_src, VNET_XFER_MAX, (uint32_t)seed + 1);
	if (AM_ReplyXfer1(t, 0, 7, x.reply_src, VNET_XFER_MAX,
			  seed + 1) != AM_OK)
		x.bad++;
}

static void got_reply(void *t, void *buf, size_t nb, int32_t seed)
{
	uint8_t *want = malloc(VNET_XFER_MAX);

	(void)t;
	am_fill(want, VNET_XFER_MAX, (uint32_t)seed);
	if (buf != x.seg_a || nb != VNET_XFER_MAX || memcmp(buf, want, nb))
		x.bad++;
	free(want);
	x.replies++;
}

static void *map_anon(void *at, size_t len)
{
	return mmap(at, len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | (at ? MAP_FIXED : 0), -1, 0);
}

FIXTURE(bulk) {
	struct am_pair p;
	uint8_t *src;			/* the client's, outside its segment */
};

FIXTURE_SETUP(bulk)
{
	memset(&x, 0, sizeof(x));
	ASSERT_EQ(AM_OK, AM_Init());
	ASSERT_EQ(AM_OK, am_pair_open(&self->p, AM_SEQ));
	x.seg_a = calloc(1, VNET_XFER_MAX);
	x.seg_b = calloc(1, 4 * VNET_XFER_MAX);
	x.reply_src = map_anon(NULL, VNET_XFER_MAX);
	self->src = map_anon(NULL, 4 * VNET_XFER_MAX);
	ASSERT_NE(NULL, x.seg_a);
	ASSERT_NE(NULL, x.seg_b);
	ASSERT_NE(MAP_FAILED, x.reply_src);
	ASSERT_NE(MAP_FAILED, self->src);
	OK(AM_SetSeg(self->p.a, x.seg_a, VNET_XFER_MAX));
	OK(AM_SetSeg(self->p.b, x.seg_b, 4 * VNET_XFER_MAX));
	OK(AM_SetHandler(self->p.b, 6, got_request));
	OK(AM_SetHandler(self->p.a, 7, got_reply));
}

FIXTURE_TEARDOWN(bulk)
{
	AM_Terminate();
	munmap(self->src, 4 * VNET_XFER_MAX);
	munmap(x.reply_src, VNET_XFER_MAX);
	free(x.seg_a);
	free(x.seg_b);
}

/* Is VNET_IOC_PIN there (a kernel with MMU notifiers)? */
static bool pins_work(struct am_pair *p, void *addr)
{
	struct vnet_pin pin = { .addr = (uintptr_t)addr, .len = 1 };
	struct vnet_endpoint ep;
	bool ok;

	(void)p;
	if (vnet_endpoint_open(&ep, 0))
		return false;
	ok = !ioctl(ep.fd, VNET_IOC_PIN, &pin);
	vnet_endpoint_close(&ep);
	return ok;
}

/* Request @len bytes of src seeded @seed; the reply comes from outside. */
static void round_trip(struct __test_metadata *_metadata,
		       FIXTURE_DATA(bulk) *self, uint32_t len, int32_t seed)
{
	int replies = x.replies;

	x.len = len;
	am_fill(self->src + 3, len, (uint32_t)seed);
	OK(AM_RequestXfer1(self->p.a, 0, 0, 6, self->src + 3, (int)len, seed));
	/* Back from the call, the source is ours again. */
	memset(self->src, 0, 4 * VNET_XFER_MAX);
	ASSERT_TRUE(am_poll_until(self->p.eb, &x.replies, replies + 1));
	EXPECT_EQ(0, x.bad);
}

/*
 * From outside the segment, a megabyte's request and its reply are one
 * message each, read in place; four megabytes are four messages; freed
 * and mapped again at the same address, the source sends its new bytes.
 */
TEST_F(bulk, from_anywhere_read_in_place)
{
	struct amvnet_stats st0, st;

	if (!pins_work(&self->p, self->src))
		SKIP(return, "VNET_IOC_PIN: not supported by this kernel");
	OK(AMVNET_GetStats(self->p.a, &st0));
	round_trip(_metadata, self, VNET_XFER_MAX, 1);
	OK(AMVNET_GetStats(self->p.a, &st));
	EXPECT_EQ(1, st.requests_sent - st0.requests_sent);

	round_trip(_metadata, self, LEN, 2);
	OK(AMVNET_GetStats(self->p.a, &st0));
	EXPECT_EQ(4, st0.requests_sent - st.requests_sent);

	ASSERT_EQ(0, munmap(self->src, 4 * VNET_XFER_MAX));
	ASSERT_EQ(self->src, map_anon(self->src, 4 * VNET_XFER_MAX));
	round_trip(_metadata, self, VNET_XFER_MAX, 3);
	OK(AMVNET_GetStats(self->p.a, &st));
	EXPECT_EQ(1, st.requests_sent - st0.requests_sent);
	EXPECT_EQ(3, x.requests);
	EXPECT_EQ(0, st.returned);
}

/*
 * Drops every pin of an endpoint four times, 10 ms apart, while a transfer
 * of tens of milliseconds goes out: fewer times than the library pins a
 * transfer's source again.
 */
static int drops;

static void *drop_pins(void *arg)
{
	struct vnet_pin none = { 0 };
	int fd = *(int *)arg, i;

	for (i = 0; i < 4; i++) {
		usleep(10000);
		if (!ioctl(fd, VNET_IOC_PIN, &none))
			__atomic_fetch_add(&drops, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

/*
 * Pins dropped while a four-megabyte request goes out (here by the sender
 * itself, as reclaim or migration would drop them): a piece that finds
 * its pin gone comes back whole, "source gone", and the library pins the
 * source again and sends it again.  The request arrives whole, its
 * handler runs once, and nothing is reported.  The old library reported
 * the transfer failed.  Until a drop falls between two pieces, again.
 */
TEST_F(bulk, dropped_pin_is_pinned_again)
{
	struct amvnet_stats st0, st;
	int fd = AMVNET_GetFd(self->p.a), i;

	if (!pins_work(&self->p, self->src))
		SKIP(return, "VNET_IOC_PIN: not supported by this kernel");
	ASSERT_LE(0, fd);
	OK(AM_SetHandler(self->p.a, 0, (handler_fn_t)got_returned));
	OK(AMVNET_GetStats(self->p.a, &st0));
	st = st0;
	for (i = 0; i < 50 && st.repinned == st0.repinned; i++) {
		pthread_t dropper;

		ASSERT_EQ(0, pthread_create(&dropper, NULL, drop_pins, &fd));
		round_trip(_metadata, self, LEN, 20 + i);
		ASSERT_EQ(0, pthread_join(dropper, NULL));
		OK(AMVNET_GetStats(self->p.a, &st));
	}
	TH_LOG("%d transfers, %d drops, %u pieces sent again", i, drops,
	       st.repinned - st0.repinned);
	EXPECT_LT(st0.repinned, st.repinned);
	EXPECT_EQ(i, x.requests);
	EXPECT_EQ(0, x.failed);
	/* Every piece that came back was sent again. */
	EXPECT_EQ(st.returned - st0.returned, st.repinned - st0.repinned);
}

/*
 * With no locked memory left the source cannot be pinned: a request goes
 * through staging, a medium payload's worth a message, and arrives whole.
 */
TEST_F(bulk, unpinnable_goes_through_staging)
{
	struct amvnet_stats st0, st;
	int replies = x.replies;

	ASSERT_EQ(0, am_no_more_pins());
	OK(AMVNET_GetStats(self->p.a, &st0));
	x.len = 4 * AM_MaxMedium();
	am_fill(self->src, x.len, 4);
	/* The server's reply cannot be pinned either: it says so. */
	OK(AM_RequestXfer1(self->p.a, 0, 0, 6, self->src, (int)x.len, 4));
	ASSERT_TRUE(am_poll_until(self->p.eb, &x.requests, 1));
	OK(AMVNET_GetStats(self->p.a, &st));
	EXPECT_EQ(4, st.requests_sent - st0.requests_sent);
	EXPECT_EQ(1, x.bad);
	EXPECT_EQ(replies, x.replies);
}

TEST_HARNESS_MAIN
