// SPDX-License-Identifier: GPL-2.0
/*
 * The datagram formats (wire.h) and the table invariants (table.c), one
 * rule at a time: what round-trips, every length but the right one
 * refused, every field outside its range refused, and every decodable
 * mutation of a valid datagram within the ranges.  Buffers are exactly as
 * long as the datagram, on the heap, so ASan sees any read past the end.
 */
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "core.h"

static const uint8_t mac_a[6] = { 0x02, 0, 0, 0, 0, 1 };
static const uint8_t mac_b[6] = { 0x02, 0, 0, 0, 0, 2 };

/*
 * Decode the first @len bytes of @buf from an exact-size heap copy, which
 * lives until the next call: msg's entries point into it.
 */
static enum mapd_wire_err decode(const uint8_t *buf, size_t len,
				 struct mapd_msg *msg)
{
	static uint8_t *copy;

	free(copy);
	copy = malloc(len ? len : 1);
	if (!copy)
		abort();
	memcpy(copy, buf, len);
	return mapd_wire_decode(copy, len, msg);
}

static struct mapd_entry entry(uint8_t last, uint16_t id, uint8_t state)
{
	struct mapd_entry e = { .boot = 0x1122334455667788ULL, .id = id,
				.state = state };

	memcpy(e.mac, mac_a, 6);
	e.mac[5] = last;
	return e;
}

TEST(hello_round_trip)
{
	struct mapd_hello h = { .term = 7, .version = 9, .id = 42,
				.flags = MAPD_HELLO_ELIGIBLE |
					 MAPD_HELLO_LEADER |
					 MAPD_HELLO_CONFIGURED };
	uint8_t buf[MAPD_MTU];
	struct mapd_msg msg;
	size_t len;

	memcpy(h.leader, mac_a, 6);
	memcpy(h.follows, mac_b, 6);
	len = mapd_wire_hello(buf, 0xabcdef, &h);
	ASSERT_EQ(MAPD_HELLO_LEN, len);
	ASSERT_EQ(MAPD_WIRE_OK, decode(buf, len, &msg));
	EXPECT_EQ(MAPD_MSG_HELLO, msg.type);
	EXPECT_EQ(0xabcdef, msg.boot);
	EXPECT_EQ(7, msg.hello.term);
	EXPECT_EQ(9, msg.hello.version);
	EXPECT_EQ(42, msg.hello.id);
	EXPECT_EQ(h.flags, msg.hello.flags);
	EXPECT_EQ(0, memcmp(msg.hello.leader, mac_a, 6));
	EXPECT_EQ(0, memcmp(msg.hello.follows, mac_b, 6));
}

TEST(every_wrong_length_is_refused)
{
	struct mapd_entry e[MAPD_CHUNK_ENTRIES + 1];
	struct mapd_hello h = { 0 };
	uint8_t buf[MAPD_MTU];
	struct mapd_msg msg;
	size_t len, l;
	uint32_t i;

	for (i = 0; i <= MAPD_CHUNK_ENTRIES; i++)
		e[i] = entry(i + 1, i + 1, MAPD_ALIVE);
	for (i = 0; i < 4; i++) {
		if (i == 0)
			len = mapd_wire_hello(buf, 1, &h);
		else if (i == 1)
			len = mapd_wire_table(buf, 1, 1, 1, 56, 1, e);
		else if (i == 2)
			len = mapd_wire_merge(buf, 1,
					      (const struct mapd_entry *[]){
						      &e[0], &e[1] }, 2);
		else
			len = mapd_wire_leave(buf, 1);
		ASSERT_EQ(MAPD_WIRE_OK, decode(buf, len, &msg));
		for (l = 0; l < len; l++)
			EXPECT_NE(MAPD_WIRE_OK, decode(buf, l, &msg));
		for (l = len + 1; l <= len + 18 && l <= MAPD_MTU; l++)
			EXPECT_NE(MAPD_WIRE_OK, decode(buf, l, &msg));
	}
	/* A full chunk is the largest datagram, and fits the MTU. */
	len = mapd_wire_table(buf, 1, 1, 1, 4096, 0, e);
	EXPECT_GE(MAPD_MTU, len);
	EXPECT_EQ(MAPD_TABLE_HDR_LEN + 55 * MAPD_ENTRY_LEN, len);
}

TEST(table_chunks_and_their_counts)
{
	struct mapd_entry e[MAPD_CHUNK_ENTRIES];
	uint8_t buf[MAPD_MTU];
	struct mapd_msg msg;
	size_t len;
	uint32_t i;

	for (i = 0; i < MAPD_CHUNK_ENTRIES; i++)
		e[i] = entry(i + 1, i + 1, MAPD_ALIVE);
	EXPECT_EQ(1, mapd_chunks(55));
	EXPECT_EQ(2, mapd_chunks(56));
	EXPECT_EQ(19, mapd_chunks(1024));
	EXPECT_EQ(MAPD_MAX_CHUNKS, mapd_chunks(MAPD_MAX_MEMBERS));
	/* The last chunk of 56 entries holds one. */
	len = mapd_wire_table(buf, 1, 3, 4, 56, 1, e - 55);
	ASSERT_EQ(MAPD_WIRE_OK, decode(buf, len, &msg));
	EXPECT_EQ(1, msg.table.count);
	EXPECT_EQ(3, msg.table.term);
	EXPECT_EQ(4, msg.table.version);
	/* A chunk past the last, no entries, term or version 0: refused. */
	buf[23] = 2;
	EXPECT_EQ(MAPD_WIRE_FIELD, decode(buf, len, &msg));
	len = mapd_wire_table(buf, 1, 3, 4, 1, 0, e);
	buf[21] = 0;
	EXPECT_EQ(MAPD_WIRE_FIELD, decode(buf, len, &msg));
	len = mapd_wire_table(buf, 1, 0, 4, 1, 0, e);
	EXPECT_EQ(MAPD_WIRE_FIELD, decode(buf, len, &msg));
	len = mapd_wire_table(buf, 1, 3, 0, 1, 0, e);
	EXPECT_EQ(MAPD_WIRE_FIELD, decode(buf, len, &msg));
	len = mapd_wire_table(buf, 1, MAPD_TERM_LIMIT, 1, 1, 0, e);
	EXPECT_EQ(MAPD_WIRE_FIELD, decode(buf, len, &msg));
}

TEST(header_fields_are_checked)
{
	struct mapd_hello h = { 0 };
	uint8_t buf[MAPD_MTU];
	struct mapd_msg msg;
	size_t len = mapd_wire_hello(buf, 1, &h);

	buf[0] = 'X';
	EXPECT_EQ(MAPD_WIRE_MAGIC, decode(buf, len, &msg));
	len = mapd_wire_hello(buf, 1, &h);
	buf[2] = MAPD_WIRE_VERSION + 1;
	EXPECT_EQ(MAPD_WIRE_VERSION_UNKNOWN, decode(buf, len, &msg));
	len = mapd_wire_hello(buf, 1, &h);
	buf[3] = 9;
	EXPECT_EQ(MAPD_WIRE_TYPE, decode(buf, len, &msg));
	len = mapd_wire_hello(buf, 0, &h);
	EXPECT_EQ(MAPD_WIRE_FIELD, decode(buf, len, &msg));
	EXPECT_EQ(MAPD_WIRE_SHORT, decode(buf, 5, &msg));
	memset(buf, 0, sizeof(buf));
	EXPECT_NE(MAPD_WIRE_OK, decode(buf, MAPD_MTU, &msg));
}

TEST(hello_fields_are_checked)
{
	static const struct {
		uint32_t term, version;
		uint16_t id;
		uint8_t flags, leader, follows;
		bool ok;
	} c[] = {
		{ 0, 0, 0, 0, 0, 0, true },
		{ 0, 1, 0, 0, 0, 0, false },	/* a version of no table */
		{ 0, 0, 0, 0, 1, 0, false },	/* a leader of no table */
		{ 1, 1, 0, 0, 1, 0, true },
		{ 1, 0, 0, 0, 1, 0, false },
		{ 1, 1, 0, 0, 0, 0, false },	/* a table without a leader */
		{ 1, 1, 0, 0, 0xff, 0, false },	/* ...or a multicast one */
		{ 0, 0, 0, 0, 0, 0xff, false },
		{ 0, 0, 0, 0, 0, 1, true },
		{ 0, 0, 0, MAPD_HELLO_LEADER, 0, 0, false },
		{ 0, 0, 0, MAPD_HELLO_LEADER | MAPD_HELLO_ELIGIBLE, 0, 0, true },
		{ 0, 0, 5, 0, 0, 0, false },	/* an id nobody claims */
		{ 0, 0, 0, MAPD_HELLO_HAS_ID, 0, 0, false },
		{ 0, 0, 5, MAPD_HELLO_HAS_ID, 0, 0, true },
		{ 0, 0, 5, MAPD_HELLO_CONFIGURED | MAPD_HELLO_HAS_ID, 0, 0, false },
		{ 0, 0, 0, 0x10, 0, 0, false },
		{ MAPD_TERM_LIMIT, 1, 0, 0, 1, 0, false },
	};
	uint8_t buf[MAPD_MTU];
	struct mapd_msg msg;
	uint32_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct mapd_hello h = { .term = c[i].term,
					.version = c[i].version,
					.id = c[i].id, .flags = c[i].flags };
		size_t len;

		if (c[i].leader)
			memcpy(h.leader, mac_a, 6);
		if (c[i].follows)
			memcpy(h.follows, mac_b, 6);
		if (c[i].leader == 0xff)
			memset(h.leader, 0xff, 6);
		if (c[i].follows == 0xff)
			memset(h.follows, 0xff, 6);
		len = mapd_wire_hello(buf, 1, &h);
		EXPECT_EQ(c[i].ok, decode(buf, len, &msg) == MAPD_WIRE_OK)
			TH_LOG("case %u", i);
	}
	/* The byte that must be zero. */
	{
		struct mapd_hello h = { 0 };
		size_t len = mapd_wire_hello(buf, 1, &h);

		buf[len - 1] = 1;
		EXPECT_EQ(MAPD_WIRE_FIELD, decode(buf, len, &msg));
	}
}

TEST(entry_fields_are_checked)
{
	struct mapd_entry bad[] = {
		entry(1, 0, MAPD_ALIVE),	/* id 0 */
		entry(1, 1, 0),			/* no state */
		entry(1, 1, MAPD_CONFLICT + 1),
		entry(1, 1, MAPD_ALIVE),	/* multicast, below */
		entry(1, 1, MAPD_ALIVE),	/* zero MAC, below */
		entry(1, 1, MAPD_ALIVE),	/* boot 0, below */
		entry(1, 1, MAPD_ALIVE),	/* unknown flag, below */
	};
	struct mapd_entry good = entry(1, MAPD_MAX_ID, MAPD_CONFLICT), out;
	uint8_t buf[MAPD_MTU];
	struct mapd_msg msg;
	uint32_t i;
	size_t len;

	bad[3].mac[0] = 0x01;
	memset(bad[4].mac, 0, 6);
	bad[5].boot = 0;
	bad[6].flags = 0x02;
	good.flags = MAPD_ENTRY_CONFIGURED;
	len = mapd_wire_table(buf, 1, 1, 1, 1, 0, &good);
	ASSERT_EQ(MAPD_WIRE_OK, decode(buf, len, &msg));
	ASSERT_TRUE(mapd_wire_entry(msg.table.data, 0, &out));
	EXPECT_TRUE(mapd_entry_equal(&good, &out));
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		len = mapd_wire_table(buf, 1, 1, 1, 1, 0, &bad[i]);
		ASSERT_EQ(MAPD_WIRE_OK, mapd_wire_decode(buf, len, &msg));
		EXPECT_FALSE(mapd_wire_entry(msg.table.data, 0, &out))
			TH_LOG("entry %u", i);
	}
}

TEST(merge_counts_are_checked)
{
	struct mapd_entry e = entry(1, 1, MAPD_DEAD);
	const struct mapd_entry *p[MAPD_CHUNK_ENTRIES + 1];
	uint8_t buf[2 * MAPD_MTU];
	struct mapd_msg msg;
	uint32_t i;
	size_t len;

	for (i = 0; i <= MAPD_CHUNK_ENTRIES; i++)
		p[i] = &e;
	len = mapd_wire_merge(buf, 1, p, MAPD_CHUNK_ENTRIES);
	ASSERT_EQ(MAPD_WIRE_OK, decode(buf, len, &msg));
	EXPECT_EQ(MAPD_CHUNK_ENTRIES, msg.merge.count);
	len = mapd_wire_merge(buf, 1, p, MAPD_CHUNK_ENTRIES + 1);
	EXPECT_NE(MAPD_WIRE_OK, decode(buf, len, &msg));
	len = mapd_wire_merge(buf, 1, p, 0);
	EXPECT_NE(MAPD_WIRE_OK, decode(buf, len, &msg));
	len = mapd_wire_merge(buf, 1, p, 1);
	buf[15] = 1;
	EXPECT_NE(MAPD_WIRE_OK, decode(buf, len, &msg));
}

/* Every byte of a valid chunk set to every value: decodes stay in range. */
TEST(every_mutation_of_a_chunk_decodes_within_range)
{
	struct mapd_entry e[3] = {
		entry(1, 5, MAPD_ALIVE), entry(2, 6, MAPD_DEAD),
		entry(3, 7, MAPD_ALIVE),
	}, out;
	uint8_t buf[MAPD_MTU], orig[MAPD_MTU];
	uint32_t pos, v, i, ok = 0, entries_ok = 0;
	struct mapd_msg msg;
	size_t len = mapd_wire_table(orig, 1, 1, 1, 3, 0, e);

	for (pos = 0; pos < len; pos++) {
		for (v = 0; v < 256; v++) {
			memcpy(buf, orig, len);
			buf[pos] = v;
			if (decode(buf, len, &msg) != MAPD_WIRE_OK)
				continue;
			ok++;
			ASSERT_EQ(MAPD_MSG_TABLE, msg.type);
			ASSERT_LE(1, msg.table.term);
			ASSERT_GT(MAPD_TERM_LIMIT, msg.table.term);
			ASSERT_EQ(3, msg.table.count);
			for (i = 0; i < msg.table.count; i++) {
				if (!mapd_wire_entry(msg.table.data, i, &out))
					continue;
				entries_ok++;
				ASSERT_TRUE(mapd_mac_unicast(out.mac));
				ASSERT_NE(0, out.id);
				ASSERT_NE(0, out.boot);
				ASSERT_LE(MAPD_ALIVE, out.state);
				ASSERT_GE(MAPD_CONFLICT, out.state);
			}
		}
	}
	TH_LOG("%u of %zu single-byte mutations decode", ok, len * 256);
	EXPECT_LT(0, ok);
	EXPECT_LT(0, entries_ok);
}

TEST(random_bytes_never_read_past_the_end)
{
	uint8_t buf[MAPD_MTU + 1];
	uint64_t x = 7;
	struct mapd_msg msg;
	uint32_t i, ok = 0;

	for (i = 0; i < 200000; i++) {
		size_t len, j;

		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		len = (x >> 33) % (MAPD_MTU + 2);
		for (j = 0; j < len; j++) {
			x = x * 6364136223846793005ULL + 1;
			buf[j] = x >> 56;
		}
		/* Half of them with a valid header, to get past the magic. */
		if (i % 2 && len >= MAPD_HDR_LEN) {
			buf[0] = 'V';
			buf[1] = 'M';
			buf[2] = MAPD_WIRE_VERSION;
			buf[3] = 1 + buf[3] % 4;
		}
		ok += decode(buf, len, &msg) == MAPD_WIRE_OK;
	}
	TH_LOG("%u of 200000 random datagrams decoded", ok);
}

static int table_ok(struct mapd_entry *e, uint32_t n)
{
	struct mapd_table t = { .e = e, .n = n };
	uint32_t idx[16];

	return mapd_table_check(&t, idx);
}

TEST(table_invariants)
{
	struct mapd_entry e[4];

	e[0] = entry(1, 1, MAPD_ALIVE);
	e[1] = entry(2, 2, MAPD_DEAD);
	e[2] = entry(3, 3, MAPD_CONFLICT);
	e[3] = entry(4, 3, MAPD_CONFLICT);
	EXPECT_TRUE(table_ok(e, 4));
	/* Out of MAC order, or a MAC twice. */
	e[1].mac[5] = 5;
	EXPECT_FALSE(table_ok(e, 4));
	e[1].mac[5] = 1;
	EXPECT_FALSE(table_ok(e, 4));
	e[1].mac[5] = 2;
	/* An id held twice, alive or dead. */
	e[1].id = 1;
	EXPECT_FALSE(table_ok(e, 4));
	e[1].id = 2;
	/* A conflict of one, unless beside the id's holder. */
	EXPECT_FALSE(table_ok(e, 3));
	e[1].id = 3;
	EXPECT_TRUE(table_ok(e, 3));
	EXPECT_TRUE(table_ok(e, 4));
	/* Two holders beside a conflict. */
	e[0].id = 3;
	EXPECT_FALSE(table_ok(e, 4));
	e[0].id = 1;
	e[1].id = 2;
	EXPECT_TRUE(table_ok(e, 4));
}

TEST_HARNESS_MAIN
