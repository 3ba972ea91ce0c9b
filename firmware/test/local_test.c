// SPDX-License-Identifier: GPL-2.0
/*
 * Firmware delivery between endpoints of one NIC: what arrives, what comes
 * back to the sender and why, and that nothing user space writes into its
 * own frame gets the firmware to misbehave.
 */
#include <stdlib.h>

#include "kselftest_harness.h"
#include "sim.h"

#define TAG	0x1234abcdULL

static struct vnet_desc request(u16 slot, u8 handler, u32 arg0)
{
	struct vnet_desc d = { .handler = handler, .nargs = 1, .slot = slot };

	d.args[0] = arg0;
	return d;
}

/* Endpoint 0 sends @d to endpoint 1, which takes it; its reply token. */
static u32 request_0_to_1(struct __test_metadata *_metadata,
			  struct sim_nic *sim, const struct vnet_desc *d)
{
	const struct vnet_desc *got;
	u32 token;

	sim_map(sim, 0, 0, 0, 1, TAG + 1);
	ASSERT_EQ(0, sim_post(sim, 0, VNET_Q_REQ_SEND, d, NULL));
	sim_run(sim, 10);
	got = sim_peek(sim, 1, VNET_Q_REQ_RECV);
	ASSERT_NE(NULL, got);
	token = got->token;
	sim_consume(sim, 1, VNET_Q_REQ_RECV);
	return token;
}

FIXTURE(nic) {
	struct sim_nic sim;
};

FIXTURE_SETUP(nic)
{
	u32 i;

	sim_init(&self->sim, 0, 8, 256);
	for (i = 0; i < 8; i++) {
		self->sim.ep[i].fw.tag = TAG + i;
		sim_load(&self->sim, i);
	}
}

FIXTURE_TEARDOWN(nic)
{
	sim_fini(&self->sim);
}

TEST_F(nic, request_and_reply)
{
	struct vnet_desc d = request(3, 7, 42), r = { .handler = 9, .nargs = 2 };
	const struct vnet_desc *got;

	sim_map(&self->sim, 0, 3, 0, 1, TAG + 1);
	ASSERT_EQ(0, sim_post(&self->sim, 0, VNET_Q_REQ_SEND, &d, NULL));
	ASSERT_EQ(1, sim_run(&self->sim, 10));

	got = sim_peek(&self->sim, 1, VNET_Q_REQ_RECV);
	ASSERT_NE(NULL, got);
	EXPECT_EQ(7, got->handler);
	EXPECT_EQ(42, got->args[0]);
	EXPECT_EQ(0, got->peer.nic);
	EXPECT_EQ(0, got->peer.ep);
	EXPECT_EQ(TAG + 1, got->tag);
	EXPECT_EQ(0, got->flags);

	r.token = got->token;
	r.args[1] = 99;
	sim_consume(&self->sim, 1, VNET_Q_REQ_RECV);
	EXPECT_EQ(NULL, sim_peek(&self->sim, 1, VNET_Q_REQ_RECV));
	ASSERT_EQ(0, sim_post(&self->sim, 1, VNET_Q_REP_SEND, &r, NULL));
	ASSERT_EQ(1, sim_run(&self->sim, 10));

	got = sim_peek(&self->sim, 0, VNET_Q_REP_RECV);
	ASSERT_NE(NULL, got);
	EXPECT_EQ(9, got->handler);
	EXPECT_EQ(99, got->args[1]);
	EXPECT_EQ(1, got->peer.ep);
	EXPECT_EQ(1, self->sim.ep[0].fw.stats.sent);
	EXPECT_EQ(1, self->sim.ep[1].fw.stats.received);
	EXPECT_EQ(1, self->sim.ep[0].fw.stats.received);
}

TEST_F(nic, reply_only_once_and_only_to_a_request)
{
	struct vnet_desc d = request(0, 1, 0), r = { .handler = 2 };
	const struct vnet_desc *got;

	r.token = request_0_to_1(_metadata, &self->sim, &d);

	ASSERT_EQ(0, sim_post(&self->sim, 1, VNET_Q_REP_SEND, &r, NULL));
	ASSERT_EQ(0, sim_post(&self->sim, 1, VNET_Q_REP_SEND, &r, NULL));
	r.token += 1000;
	ASSERT_EQ(0, sim_post(&self->sim, 1, VNET_Q_REP_SEND, &r, NULL));
	sim_run(&self->sim, 10);

	ASSERT_NE(NULL, sim_peek(&self->sim, 0, VNET_Q_REP_RECV));
	sim_consume(&self->sim, 0, VNET_Q_REP_RECV);
	EXPECT_EQ(NULL, sim_peek(&self->sim, 0, VNET_Q_REP_RECV));

	/* Both bad replies come back to the replier. */
	got = sim_peek(&self->sim, 1, VNET_Q_REP_RECV);
	ASSERT_NE(NULL, got);
	EXPECT_TRUE(got->flags & VNET_DESC_RETURNED);
	EXPECT_EQ(VNET_RET_BAD_TOKEN, got->status);
	sim_consume(&self->sim, 1, VNET_Q_REP_RECV);
	got = sim_peek(&self->sim, 1, VNET_Q_REP_RECV);
	ASSERT_NE(NULL, got);
	EXPECT_EQ(VNET_RET_BAD_TOKEN, got->status);
}

/*
 * A reply that comes back for a fault of its own leaves the token usable,
 * and returned messages wake the sender like any other arrival.
 */
TEST_F(nic, returned_reply_keeps_its_token_and_wakes)
{
	struct vnet_desc d = request(0, 1, 0), r = { .handler = 2 };
	const struct vnet_desc *got;
	u32 before;

	r.token = request_0_to_1(_metadata, &self->sim, &d);

	/* Bulk into a requester with no segment: back to the replier. */
	r.flags = VNET_DESC_XFER;
	r.len = 10;
	before = self->sim.notifications;
	ASSERT_EQ(0, sim_post(&self->sim, 1, VNET_Q_REP_SEND, &r, "0123456789"));
	sim_run(&self->sim, 10);
	got = sim_peek(&self->sim, 1, VNET_Q_REP_RECV);
	ASSERT_NE(NULL, got);
	EXPECT_EQ(VNET_RET_BAD_SEGMENT, got->status);
	EXPECT_TRUE(got->flags & VNET_DESC_REPLY);
	EXPECT_LT(before, self->sim.notifications);
	sim_consume(&self->sim, 1, VNET_Q_REP_RECV);

	/* The same token still answers the request, once. */
	r.flags = VNET_DESC_CREDIT;
	r.len = 0;
	ASSERT_EQ(0, sim_post(&self->sim, 1, VNET_Q_REP_SEND, &r, NULL));
	sim_run(&self->sim, 10);
	got = sim_peek(&self->sim, 0, VNET_Q_REP_RECV);
	ASSERT_NE(NULL, got);
	EXPECT_FALSE(got->flags & VNET_DESC_RETURNED);
	EXPECT_TRUE(got->flags & VNET_DESC_CREDIT);
	EXPECT_TRUE(got->flags & VNET_DESC_REPLY);
	ASSERT_EQ(0, sim_post(&self->sim, 1, VNET_Q_REP_SEND, &r, NULL));
	sim_run(&self->sim, 10);
	got = sim_peek(&self->sim, 1, VNET_Q_REP_RECV);
	ASSERT_NE(NULL, got);
	EXPECT_EQ(VNET_RET_BAD_TOKEN, got->status);
}

/* The reader caught up after the firmware judged the queue non-empty. */
TEST_F(nic, reader_that_caught_up_is_woken)
{
	struct vnet_desc d = request(0, 1, 0);
	u32 before;

	sim_map(&self->sim, 0, 0, 0, 1, TAG + 1);
	ASSERT_EQ(0, sim_post(&self->sim, 0, VNET_Q_REQ_SEND, &d, NULL));
	sim_run(&self->sim, 10);
	sim_consume(&self->sim, 1, VNET_Q_REQ_RECV);
	before = self->sim.notifications;
	ASSERT_EQ(0, sim_post(&self->sim, 0, VNET_Q_REQ_SEND, &d, NULL));
	sim_run(&self->sim, 10);
	EXPECT_EQ(before + 1, self->sim.notifications);
	/* Into a queue that already holds an entry: nobody to wake. */
	ASSERT_EQ(0, sim_post(&self->sim, 0, VNET_Q_REQ_SEND, &d, NULL));
	sim_run(&self->sim, 10);
	EXPECT_EQ(before + 1, self->sim.notifications);
}

FIXTURE(returns) {
	struct sim_nic sim;
};

FIXTURE_VARIANT(returns) {
	u16 slot;
	bool map;
	u32 dest_nic;
	u32 dest_ep;
	u64 map_tag;
	u64 dest_tag;
	enum vnet_return_reason reason;
};

FIXTURE_VARIANT_ADD(returns, bad_tag) {
	.slot = 5, .map = true, .dest_ep = 1, .map_tag = 7, .dest_tag = 8,
	.reason = VNET_RET_BAD_TAG,
};

FIXTURE_VARIANT_ADD(returns, tag_none_accepts_nothing) {
	.slot = 5, .map = true, .dest_ep = 1, .map_tag = VNET_TAG_NONE,
	.dest_tag = VNET_TAG_NONE, .reason = VNET_RET_BAD_TAG,
};

FIXTURE_VARIANT_ADD(returns, tag_any_accepts_all) {
	.slot = 5, .map = true, .dest_ep = 1, .map_tag = 77,
	.dest_tag = VNET_TAG_ANY, .reason = VNET_RET_NONE,
};

FIXTURE_VARIANT_ADD(returns, unmapped_slot) {
	.slot = 5, .map = false, .reason = VNET_RET_NO_SLOT,
};

FIXTURE_VARIANT_ADD(returns, slot_out_of_range) {
	.slot = VNET_MAX_SLOTS, .map = false, .reason = VNET_RET_BAD_DESC,
};

FIXTURE_VARIANT_ADD(returns, no_such_endpoint) {
	.slot = 5, .map = true, .dest_ep = 40, .map_tag = 1,
	.reason = VNET_RET_NO_ENDPOINT,
};

FIXTURE_VARIANT_ADD(returns, other_nic_without_route) {
	.slot = 5, .map = true, .dest_nic = 9, .dest_ep = 1, .map_tag = 1,
	.reason = VNET_RET_UNREACHABLE,
};

FIXTURE_SETUP(returns)
{
	sim_init(&self->sim, 0, 2, 16);
	sim_load(&self->sim, 0);
	sim_load(&self->sim, 1);
	self->sim.ep[1].fw.tag = variant->dest_tag;
	if (variant->map)
		sim_map(&self->sim, 0, variant->slot, variant->dest_nic,
			variant->dest_ep, variant->map_tag);
}

FIXTURE_TEARDOWN(returns)
{
	sim_fini(&self->sim);
}

TEST_F(returns, reason)
{
	struct vnet_desc d = request(variant->slot, 11, 0xfeed);
	const struct vnet_desc *got;

	d.nargs = 8;
	d.args[7] = 0xbeef;
	ASSERT_EQ(0, sim_post(&self->sim, 0, VNET_Q_REQ_SEND, &d, NULL));
	ASSERT_EQ(1, sim_run(&self->sim, 10));

	got = sim_peek(&self->sim, 0, VNET_Q_REP_RECV);
	if (variant->reason == VNET_RET_NONE) {
		EXPECT_EQ(NULL, got);
		EXPECT_NE(NULL, sim_peek(&self->sim, 1, VNET_Q_REQ_RECV));
		return;
	}
	ASSERT_NE(NULL, got);
	EXPECT_TRUE(got->flags & VNET_DESC_RETURNED);
	EXPECT_EQ(variant->reason, got->status);
	EXPECT_EQ(11, got->handler);
	EXPECT_EQ(0xfeed, got->args[0]);
	EXPECT_EQ(0xbeef, got->args[7]);
	EXPECT_EQ(variant->slot, got->slot);
	EXPECT_EQ(NULL, sim_peek(&self->sim, 1, VNET_Q_REQ_RECV));
	EXPECT_EQ(1, self->sim.ep[0].fw.stats.returned);
}

FIXTURE(garbage) {
	struct sim_nic sim;
};

FIXTURE_VARIANT(garbage) {
	u8 nargs;
	u8 flags;
	u32 len;
	u16 reserved;
	u64 src_offset;
	enum vnet_return_reason reason;
};

FIXTURE_VARIANT_ADD(garbage, too_many_args) {
	.nargs = 9, .reason = VNET_RET_BAD_DESC,
};

FIXTURE_VARIANT_ADD(garbage, unknown_flag) {
	.flags = 0x80, .reason = VNET_RET_BAD_DESC,
};

FIXTURE_VARIANT_ADD(garbage, returned_flag_forged) {
	.flags = VNET_DESC_RETURNED, .reason = VNET_RET_BAD_DESC,
};

FIXTURE_VARIANT_ADD(garbage, length_without_payload) {
	.len = 100, .reason = VNET_RET_BAD_DESC,
};

FIXTURE_VARIANT_ADD(garbage, medium_too_long) {
	.flags = VNET_DESC_MEDIUM, .len = VNET_MEDIUM_MAX + 1,
	.reason = VNET_RET_BAD_DESC,
};

FIXTURE_VARIANT_ADD(garbage, huge_length) {
	.flags = VNET_DESC_MEDIUM, .len = 0xffffffff,
	.reason = VNET_RET_BAD_DESC,
};

FIXTURE_VARIANT_ADD(garbage, reserved_field) {
	.reserved = 1, .reason = VNET_RET_BAD_DESC,
};

FIXTURE_VARIANT_ADD(garbage, xfer_without_segment) {
	.flags = VNET_DESC_XFER, .len = 64, .reason = VNET_RET_BAD_SEGMENT,
};

FIXTURE_VARIANT_ADD(garbage, xfer_from_staging_too_long) {
	.flags = VNET_DESC_XFER, .len = VNET_MEDIUM_MAX + 1,
	.reason = VNET_RET_BAD_DESC,
};

FIXTURE_VARIANT_ADD(garbage, from_seg_without_xfer) {
	.flags = VNET_DESC_MEDIUM | VNET_DESC_FROM_SEG, .len = 64,
	.reason = VNET_RET_BAD_DESC,
};

FIXTURE_VARIANT_ADD(garbage, from_seg_too_long) {
	.flags = VNET_DESC_XFER | VNET_DESC_FROM_SEG, .len = VNET_XFER_MAX + 1,
	.reason = VNET_RET_BAD_DESC,
};

FIXTURE_VARIANT_ADD(garbage, src_offset_without_from_seg) {
	.flags = VNET_DESC_XFER, .len = 64, .src_offset = 8,
	.reason = VNET_RET_BAD_DESC,
};

FIXTURE_VARIANT_ADD(garbage, from_seg_without_own_segment) {
	.flags = VNET_DESC_XFER | VNET_DESC_FROM_SEG, .len = 64,
	.reason = VNET_RET_BAD_SEGMENT,
};

FIXTURE_SETUP(garbage)
{
	sim_init(&self->sim, 0, 2, 16);
	sim_load(&self->sim, 0);
	sim_load(&self->sim, 1);
	self->sim.ep[1].fw.tag = TAG;
	sim_map(&self->sim, 0, 0, 0, 1, TAG);
}

FIXTURE_TEARDOWN(garbage)
{
	sim_fini(&self->sim);
}

TEST_F(garbage, returned_with_reason)
{
	struct vnet_desc d = request(0, 1, 0);
	const struct vnet_desc *got;

	d.nargs = variant->nargs;
	d.flags = variant->flags;
	d.len = variant->len;
	d.__reserved0 = variant->reserved;
	d.src_offset = variant->src_offset;
	ASSERT_EQ(0, sim_post(&self->sim, 0, VNET_Q_REQ_SEND, &d, NULL));
	sim_run(&self->sim, 10);

	got = sim_peek(&self->sim, 0, VNET_Q_REP_RECV);
	ASSERT_NE(NULL, got);
	EXPECT_EQ(variant->reason, got->status);
	EXPECT_LE(got->nargs, VNET_MAX_ARGS);
	/* From the segment it comes back whole; from staging, no more. */
	if (!(got->flags & VNET_DESC_FROM_SEG))
		EXPECT_LE(got->len, VNET_MEDIUM_MAX);
	EXPECT_EQ(NULL, sim_peek(&self->sim, 1, VNET_Q_REQ_RECV));
	if (variant->reason == VNET_RET_BAD_DESC)
		EXPECT_EQ(1, self->sim.ep[0].fw.stats.rejected);
}

TEST_F(nic, medium_payload_sizes)
{
	static u8 buf[VNET_MEDIUM_MAX];
	u32 len, i;

	sim_map(&self->sim, 0, 0, 0, 1, TAG + 1);
	for (len = 0; len <= VNET_MEDIUM_MAX; len += len < 64 ? 1 : 509) {
		struct vnet_desc d = request(0, 1, len);
		const struct vnet_desc *got;

		d.flags = VNET_DESC_MEDIUM;
		d.len = len;
		for (i = 0; i < len; i++)
			buf[i] = (u8)(len * 31 + i * 7);
		ASSERT_EQ(0, sim_post(&self->sim, 0, VNET_Q_REQ_SEND, &d, buf));
		ASSERT_EQ(1, sim_run(&self->sim, 10));
		got = sim_peek(&self->sim, 1, VNET_Q_REQ_RECV);
		ASSERT_NE(NULL, got);
		ASSERT_EQ(len, got->len);
		ASSERT_EQ(0, memcmp(buf, sim_payload(&self->sim, 1,
						     VNET_Q_REQ_RECV), len));
		sim_consume(&self->sim, 1, VNET_Q_REQ_RECV);
	}
}

TEST_F(nic, xfer_lands_in_segment_bounds_checked)
{
	static u8 seg[3000], buf[VNET_MEDIUM_MAX];
	struct {
		u64 offset;
		u32 len;
		bool fits;
	} cases[] = {
		{ 0, 100, true }, { 2900, 100, true }, { 2901, 100, false },
		{ 0, 3000, true }, { 0, 3001, false }, { 3000, 0, true },
		{ 3001, 0, false }, { ~0ULL - 10, 100, false },
	};
	unsigned int i, j;

	self->sim.ep[1].fw.seg = seg;
	self->sim.ep[1].fw.seg_len = sizeof(seg);
	sim_map(&self->sim, 0, 0, 0, 1, TAG + 1);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct vnet_desc d = request(0, 1, i);
		const struct vnet_desc *got;

		d.flags = VNET_DESC_XFER;
		d.offset = cases[i].offset;
		d.len = cases[i].len;
		for (j = 0; j < d.len; j++)
			buf[j] = (u8)(i * 13 + j);
		memset(seg, 0, sizeof(seg));
		ASSERT_EQ(0, sim_post(&self->sim, 0, VNET_Q_REQ_SEND, &d, buf));
		sim_run(&self->sim, 10);
		if (cases[i].fits) {
			got = sim_peek(&self->sim, 1, VNET_Q_REQ_RECV);
			ASSERT_NE(NULL, got);
			EXPECT_TRUE(got->flags & VNET_DESC_XFER);
			EXPECT_EQ(cases[i].offset, got->offset);
			EXPECT_EQ(cases[i].len, got->len);
			EXPECT_EQ(0, memcmp(seg + d.offset, buf, d.len));
			sim_consume(&self->sim, 1, VNET_Q_REQ_RECV);
		} else {
			got = sim_peek(&self->sim, 0, VNET_Q_REP_RECV);
			ASSERT_NE(NULL, got);
			EXPECT_EQ(VNET_RET_BAD_SEGMENT, got->status);
			sim_consume(&self->sim, 0, VNET_Q_REP_RECV);
			for (j = 0; j < sizeof(seg); j++)
				ASSERT_EQ(0, seg[j]);
		}
	}
}

/*
 * An XFER read from the sender's own segment: up to a megabyte, one copy,
 * into another endpoint's segment or, overlapping, its own; its source
 * range checked against the sender's segment, its entry taken at once.
 */
TEST_F(nic, xfer_from_own_segment)
{
	u8 *a = malloc(2 * VNET_XFER_MAX), *b = calloc(1, VNET_XFER_MAX);
	struct vnet_desc d = request(0, 1, 7);
	const struct vnet_desc *got;
	u32 i;

	for (i = 0; i < 2 * VNET_XFER_MAX; i++)
		a[i] = (u8)(i * 7 + i / 251);
	self->sim.ep[0].fw.seg = a;
	self->sim.ep[0].fw.seg_len = 2 * VNET_XFER_MAX;
	self->sim.ep[1].fw.seg = b;
	self->sim.ep[1].fw.seg_len = VNET_XFER_MAX;
	sim_map(&self->sim, 0, 0, 0, 1, TAG + 1);
	d.flags = VNET_DESC_XFER | VNET_DESC_FROM_SEG;
	d.len = VNET_XFER_MAX;
	d.src_offset = VNET_XFER_MAX - 3;
	ASSERT_EQ(0, sim_post(&self->sim, 0, VNET_Q_REQ_SEND, &d, NULL));
	ASSERT_EQ(1, sim_run(&self->sim, 10));
	EXPECT_EQ(1, self->sim.ep[0].frame->cons[VNET_Q_REQ_SEND].val);
	got = sim_peek(&self->sim, 1, VNET_Q_REQ_RECV);
	ASSERT_NE(NULL, got);
	EXPECT_EQ(VNET_DESC_XFER, got->flags);
	EXPECT_EQ(VNET_XFER_MAX, got->len);
	EXPECT_EQ(0, got->src_offset);
	EXPECT_EQ(0, memcmp(b, a + VNET_XFER_MAX - 3, VNET_XFER_MAX));
	sim_consume(&self->sim, 1, VNET_Q_REQ_RECV);

	/* To itself, overlapping: as memmove. */
	memcpy(b, a + 100, 5000);
	self->sim.ep[0].fw.tag = TAG;
	sim_map(&self->sim, 0, 1, 0, 0, TAG);
	d.slot = 1;
	d.len = 5000;
	d.src_offset = 100;
	d.offset = 1000;
	ASSERT_EQ(0, sim_post(&self->sim, 0, VNET_Q_REQ_SEND, &d, NULL));
	ASSERT_EQ(1, sim_run(&self->sim, 10));
	ASSERT_NE(NULL, sim_peek(&self->sim, 0, VNET_Q_REQ_RECV));
	EXPECT_EQ(0, memcmp(a + 1000, b, 5000));

	/* A source past the end of its own segment: back, whole. */
	d.slot = 0;
	d.len = 4096;
	d.src_offset = 2 * VNET_XFER_MAX - 4095;
	ASSERT_EQ(0, sim_post(&self->sim, 0, VNET_Q_REQ_SEND, &d, NULL));
	sim_run(&self->sim, 10);
	got = sim_peek(&self->sim, 0, VNET_Q_REP_RECV);
	ASSERT_NE(NULL, got);
	EXPECT_EQ(VNET_RET_BAD_SEGMENT, got->status);
	EXPECT_EQ(4096, got->len);
	EXPECT_EQ(2 * VNET_XFER_MAX - 4095, got->src_offset);
	EXPECT_TRUE(got->flags & VNET_DESC_FROM_SEG);
	self->sim.ep[0].fw.seg = NULL;
	self->sim.ep[1].fw.seg = NULL;
	free(a);
	free(b);
}

TEST_F(nic, full_receive_queue_holds_not_drops)
{
	struct vnet_desc d = request(0, 1, 0);
	u32 i, seen = 0;

	sim_map(&self->sim, 0, 0, 0, 1, TAG + 1);
	sim_map(&self->sim, 2, 0, 0, 1, TAG + 1);
	for (i = 0; i < VNET_QUEUE_DEPTH; i++) {
		d.args[0] = i;
		ASSERT_EQ(0, sim_post(&self->sim, 0, VNET_Q_REQ_SEND, &d, NULL));
		d.args[0] = 100 + i;
		ASSERT_EQ(0, sim_post(&self->sim, 2, VNET_Q_REQ_SEND, &d, NULL));
	}
	EXPECT_EQ(VNET_QUEUE_DEPTH, sim_run(&self->sim, 100));
	EXPECT_TRUE(self->sim.fw.held);

	while (seen < 2 * VNET_QUEUE_DEPTH) {
		const struct vnet_desc *got;

		sim_run(&self->sim, 100);
		got = sim_peek(&self->sim, 1, VNET_Q_REQ_RECV);
		ASSERT_NE(NULL, got);
		sim_consume(&self->sim, 1, VNET_Q_REQ_RECV);
		seen++;
	}
	sim_run(&self->sim, 100);
	EXPECT_EQ(NULL, sim_peek(&self->sim, 1, VNET_Q_REQ_RECV));
	EXPECT_EQ(2 * VNET_QUEUE_DEPTH, self->sim.ep[1].fw.stats.received);
	EXPECT_EQ(0, self->sim.ep[0].fw.stats.returned);
}

TEST_F(nic, nonresident_destination_is_faulted_in)
{
	struct vnet_desc d = request(0, 1, 5);

	sim_map(&self->sim, 0, 0, 0, 4, TAG + 4);
	sim_unload(&self->sim, 4);
	ASSERT_EQ(0, sim_post(&self->sim, 0, VNET_Q_REQ_SEND, &d, NULL));
	EXPECT_EQ(0, sim_run(&self->sim, 10));
	EXPECT_TRUE(self->sim.fw.held);
	EXPECT_GE(self->sim.faults_requested[4], 1);

	sim_load(&self->sim, 4);
	EXPECT_EQ(1, sim_run(&self->sim, 10));
	ASSERT_NE(NULL, sim_peek(&self->sim, 4, VNET_Q_REQ_RECV));
}

/*
 * The cache keeps a newcomer until it is served: a local exchange serves
 * both ends at once, and nobody else.  The first service since a load is
 * stamped, so the host learns how long a load waited to pay off.
 */
TEST_F(nic, local_exchange_serves_both_ends)
{
	struct vnet_desc d = request(0, 1, 5);
	u32 i;

	for (i = 0; i < 8; i++)
		EXPECT_FALSE(self->sim.ep[i].fw.served);
	sim_map(&self->sim, 0, 0, 0, 4, TAG + 4);
	self->sim.now = 1000;
	ASSERT_EQ(0, sim_post(&self->sim, 0, VNET_Q_REQ_SEND, &d, NULL));
	ASSERT_EQ(1, sim_run(&self->sim, 10));
	EXPECT_TRUE(self->sim.ep[0].fw.served);
	EXPECT_TRUE(self->sim.ep[4].fw.served);
	EXPECT_EQ(1000, self->sim.ep[0].fw.served_at);
	EXPECT_EQ(1000, self->sim.ep[4].fw.served_at);
	for (i = 1; i < 8; i++)
		if (i != 4)
			EXPECT_FALSE(self->sim.ep[i].fw.served);

	/* Served again in the same residency: the first time stays. */
	self->sim.now = 2000;
	ASSERT_EQ(0, sim_post(&self->sim, 0, VNET_Q_REQ_SEND, &d, NULL));
	ASSERT_EQ(1, sim_run(&self->sim, 10));
	EXPECT_EQ(1000, self->sim.ep[0].fw.served_at);
	EXPECT_EQ(1000, self->sim.ep[4].fw.served_at);

	/* Held for a destination off the card: the sender is not served. */
	sim_unload(&self->sim, 4);
	sim_load(&self->sim, 0);
	self->sim.now = 3000;
	ASSERT_EQ(0, sim_post(&self->sim, 0, VNET_Q_REQ_SEND, &d, NULL));
	EXPECT_EQ(0, sim_run(&self->sim, 10));
	EXPECT_FALSE(self->sim.ep[0].fw.served);
	sim_load(&self->sim, 4);
	self->sim.now = 5000;
	EXPECT_EQ(1, sim_run(&self->sim, 10));
	EXPECT_TRUE(self->sim.ep[0].fw.served);
	EXPECT_TRUE(self->sim.ep[4].fw.served);
	EXPECT_EQ(5000, self->sim.ep[0].fw.served_at);
	EXPECT_EQ(5000, self->sim.ep[4].fw.served_at);
}

TEST_F(nic, bogus_indices_are_contained)
{
	struct vnet_desc d = request(0, 1, 0);
	struct vnet_frame *f0 = self->sim.ep[0].frame;

	sim_map(&self->sim, 0, 0, 0, 1, TAG + 1);
	sim_map(&self->sim, 2, 0, 0, 1, TAG + 1);

	/* A producer index a thousand entries ahead: the queue is ignored. */
	f0->prod[VNET_Q_REQ_SEND].val = 1000;
	EXPECT_EQ(0, sim_run(&self->sim, 10));
	EXPECT_EQ(1, self->sim.ep[0].fw.stats.rejected);
	EXPECT_EQ(0, self->sim.ep[1].fw.stats.received);

	/* Another endpoint is unaffected. */
	ASSERT_EQ(0, sim_post(&self->sim, 2, VNET_Q_REQ_SEND, &d, NULL));
	EXPECT_EQ(1, sim_run(&self->sim, 10));

	/* The offender recovers by writing a sane index back. */
	f0->prod[VNET_Q_REQ_SEND].val = 0;
	ASSERT_EQ(0, sim_post(&self->sim, 0, VNET_Q_REQ_SEND, &d, NULL));
	EXPECT_EQ(1, sim_run(&self->sim, 10));
	EXPECT_EQ(2, self->sim.ep[1].fw.stats.received);

	/* A receiver's bogus consumer index makes its queue look full. */
	self->sim.ep[1].frame->cons[VNET_Q_REQ_RECV].val = 0x80000000u;
	ASSERT_EQ(0, sim_post(&self->sim, 2, VNET_Q_REQ_SEND, &d, NULL));
	EXPECT_EQ(0, sim_run(&self->sim, 10));
	EXPECT_TRUE(self->sim.fw.held);
}

/*
 * Random bytes over a whole frame, again and again, while two well-behaved
 * endpoints exchange numbered requests: they see every request exactly
 * once, and the firmware never writes outside the frames it owns.
 */
TEST_F(nic, random_frame_contents)
{
	u32 round, next = 0, expect = 0, seed = 12345;
	struct vnet_frame *victim = self->sim.ep[5].frame;

	sim_map(&self->sim, 2, 0, 0, 3, TAG + 3);
	for (round = 0; round < 2000; round++) {
		u8 *bytes = (u8 *)victim;
		struct vnet_desc d = request(0, 1, next);
		const struct vnet_desc *got;
		u32 i;

		for (i = 0; i < 64; i++) {
			seed = seed * 1103515245u + 12345u;
			bytes[(seed >> 8) % sizeof(*victim)] = (u8)(seed >> 24);
		}
		/* Sometimes aim the garbage at the translation slots in use. */
		if (round % 7 == 0)
			sim_map(&self->sim, 5, seed % VNET_MAX_SLOTS, 0,
				seed % 9, TAG + seed % 8);
		if (sim_post(&self->sim, 2, VNET_Q_REQ_SEND, &d, NULL) == 0)
			next++;
		sim_run(&self->sim, 4);
		while ((got = sim_peek(&self->sim, 3, VNET_Q_REQ_RECV))) {
			if (got->peer.ep == 2) {
				ASSERT_EQ(expect, got->args[0]);
				expect++;
			}
			sim_consume(&self->sim, 3, VNET_Q_REQ_RECV);
		}
		while (sim_peek(&self->sim, 2, VNET_Q_REP_RECV))
			sim_consume(&self->sim, 2, VNET_Q_REP_RECV);
	}
	sim_run(&self->sim, 100);
	while (sim_peek(&self->sim, 3, VNET_Q_REQ_RECV)) {
		if (sim_peek(&self->sim, 3, VNET_Q_REQ_RECV)->peer.ep == 2)
			expect++;
		sim_consume(&self->sim, 3, VNET_Q_REQ_RECV);
	}
	EXPECT_EQ(next, expect);
	EXPECT_EQ(0, self->sim.ep[2].fw.stats.returned);
}

TEST_F(nic, weighted_round_robin_burst)
{
	struct vnet_desc d = request(0, 1, 0);
	u32 i;

	self->sim.fw.burst = 2;
	sim_map(&self->sim, 0, 0, 0, 1, TAG + 1);
	sim_map(&self->sim, 2, 0, 0, 3, TAG + 3);
	for (i = 0; i < 6; i++) {
		ASSERT_EQ(0, sim_post(&self->sim, 0, VNET_Q_REQ_SEND, &d, NULL));
		ASSERT_EQ(0, sim_post(&self->sim, 2, VNET_Q_REQ_SEND, &d, NULL));
	}
	EXPECT_EQ(4, vnet_fw_poll(&self->sim.fw, 0).messages);
	EXPECT_EQ(2, self->sim.ep[1].fw.stats.received);
	EXPECT_EQ(2, self->sim.ep[3].fw.stats.received);
}

static void close_ep2_later(struct sim_nic *sim)
{
	if (sim->pauses == 1)
		vnet_fw_ep_forget(&sim->fw, &sim->ep[2].fw);
	sim->now += 7;
}

/*
 * A round pauses between two endpoints' turns, where the host may take
 * the firmware lock and change what the firmware sees: an endpoint closed
 * in a pause gets no turn after it, and the firmware's clock moves on.
 */
TEST_F(nic, round_pauses_between_turns)
{
	struct vnet_desc d = request(0, 1, 0);
	struct vnet_fw_round round;

	sim_map(&self->sim, 0, 0, 0, 1, TAG + 1);
	sim_map(&self->sim, 2, 0, 0, 3, TAG + 3);
	ASSERT_EQ(0, sim_post(&self->sim, 0, VNET_Q_REQ_SEND, &d, NULL));
	ASSERT_EQ(0, sim_post(&self->sim, 2, VNET_Q_REQ_SEND, &d, NULL));
	self->sim.on_pause = close_ep2_later;
	round = vnet_fw_poll(&self->sim.fw, 0);
	EXPECT_EQ(1, round.messages);
	EXPECT_EQ(1, self->sim.pauses);
	EXPECT_EQ(7, self->sim.fw.now);
	EXPECT_EQ(1, self->sim.ep[1].fw.stats.received);
	EXPECT_EQ(0, self->sim.ep[3].fw.stats.received);
}

static void run_host_commands(struct sim_nic *sim)
{
	sim->fw.host_waits = false;
}

/*
 * A command the host posted ends the turn in progress after its next send
 * attempt rather than after the whole burst: the host moving a frame
 * waits for one message, not for a loiter over a full queue.  The turn
 * after the pause, with nothing posted, has its whole burst, and the
 * endpoint whose turn was cut goes first again in the next round.
 */
TEST_F(nic, posted_command_ends_the_turn)
{
	struct vnet_desc d = request(0, 1, 0);
	u32 i;

	sim_map(&self->sim, 0, 0, 0, 1, TAG + 1);
	sim_map(&self->sim, 2, 0, 0, 3, TAG + 3);
	for (i = 0; i < 6; i++) {
		ASSERT_EQ(0, sim_post(&self->sim, 0, VNET_Q_REQ_SEND, &d, NULL));
		ASSERT_EQ(0, sim_post(&self->sim, 2, VNET_Q_REQ_SEND, &d, NULL));
	}
	self->sim.fw.host_waits = true;
	self->sim.on_pause = run_host_commands;
	EXPECT_EQ(7, vnet_fw_poll(&self->sim.fw, 0).messages);
	EXPECT_EQ(1, self->sim.ep[1].fw.stats.received);
	EXPECT_EQ(6, self->sim.ep[3].fw.stats.received);
	EXPECT_EQ(0, self->sim.fw.rr_next);
	EXPECT_EQ(5, vnet_fw_poll(&self->sim.fw, 0).messages);
	EXPECT_EQ(6, self->sim.ep[1].fw.stats.received);
}

TEST_F(nic, need_wakeup_only_when_idle)
{
	struct vnet_desc d = request(0, 1, 0);

	sim_map(&self->sim, 0, 0, 0, 1, TAG + 1);
	EXPECT_FALSE(vnet_fw_arm_wakeup(&self->sim.fw));
	EXPECT_TRUE(self->sim.ep[0].frame->hdr.flags & VNET_FRAME_NEED_WAKEUP);
	vnet_fw_disarm_wakeup(&self->sim.fw);
	EXPECT_FALSE(self->sim.ep[0].frame->hdr.flags & VNET_FRAME_NEED_WAKEUP);

	ASSERT_EQ(0, sim_post(&self->sim, 0, VNET_Q_REQ_SEND, &d, NULL));
	EXPECT_TRUE(vnet_fw_arm_wakeup(&self->sim.fw));
	EXPECT_FALSE(self->sim.ep[0].frame->hdr.flags & VNET_FRAME_NEED_WAKEUP);
}

/*
 * A message held for a full receive queue is no reason to stay awake: the
 * firmware sleeps with NEED_WAKEUP raised, so every other sender still
 * rings the doorbell, and wakes for a post that is not stuck behind it.
 */
TEST_F(nic, held_queue_keeps_need_wakeup_raised)
{
	struct vnet_desc d = request(0, 1, 0);
	u32 i;

	sim_map(&self->sim, 0, 0, 0, 1, TAG + 1);
	for (i = 0; i < VNET_QUEUE_DEPTH; i++)
		ASSERT_EQ(0, sim_post(&self->sim, 0, VNET_Q_REQ_SEND, &d, NULL));
	EXPECT_EQ(VNET_QUEUE_DEPTH, sim_run(&self->sim, 10));
	ASSERT_EQ(0, sim_post(&self->sim, 0, VNET_Q_REQ_SEND, &d, NULL));
	EXPECT_EQ(0, sim_run(&self->sim, 10));
	EXPECT_TRUE(self->sim.fw.held);

	EXPECT_FALSE(vnet_fw_arm_wakeup(&self->sim.fw));
	for (i = 0; i < 8; i++)
		EXPECT_TRUE(self->sim.ep[i].frame->hdr.flags &
			    VNET_FRAME_NEED_WAKEUP);

	sim_map(&self->sim, 2, 0, 0, 3, TAG + 3);
	ASSERT_EQ(0, sim_post(&self->sim, 2, VNET_Q_REQ_SEND, &d, NULL));
	EXPECT_TRUE(vnet_fw_arm_wakeup(&self->sim.fw));
	vnet_fw_disarm_wakeup(&self->sim.fw);
	EXPECT_EQ(1, sim_run(&self->sim, 10));
	EXPECT_EQ(1, self->sim.ep[3].fw.stats.received);
}

/*
 * A spent token stays spent: a malformed reply that quotes it comes back
 * for its own fault, and must not bring the token back to life for a
 * second answer to the same request.
 */
TEST_F(nic, spent_token_is_not_revived_by_a_malformed_reply)
{
	struct vnet_desc d = request(0, 1, 0), r = { .handler = 2 };
	const struct vnet_desc *got;

	r.token = request_0_to_1(_metadata, &self->sim, &d);
	ASSERT_EQ(0, sim_post(&self->sim, 1, VNET_Q_REP_SEND, &r, NULL));
	sim_run(&self->sim, 10);
	ASSERT_NE(NULL, sim_peek(&self->sim, 0, VNET_Q_REP_RECV));
	sim_consume(&self->sim, 0, VNET_Q_REP_RECV);

	r.__reserved0 = 1;
	ASSERT_EQ(0, sim_post(&self->sim, 1, VNET_Q_REP_SEND, &r, NULL));
	sim_run(&self->sim, 10);
	got = sim_peek(&self->sim, 1, VNET_Q_REP_RECV);
	ASSERT_NE(NULL, got);
	EXPECT_EQ(VNET_RET_BAD_DESC, got->status);
	sim_consume(&self->sim, 1, VNET_Q_REP_RECV);

	r.__reserved0 = 0;
	ASSERT_EQ(0, sim_post(&self->sim, 1, VNET_Q_REP_SEND, &r, NULL));
	sim_run(&self->sim, 10);
	EXPECT_EQ(NULL, sim_peek(&self->sim, 0, VNET_Q_REP_RECV));
	got = sim_peek(&self->sim, 1, VNET_Q_REP_RECV);
	ASSERT_NE(NULL, got);
	EXPECT_EQ(VNET_RET_BAD_TOKEN, got->status);
}

TEST_HARNESS_MAIN
