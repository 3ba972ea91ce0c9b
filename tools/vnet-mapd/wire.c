// SPDX-License-Identifier: GPL-2.0
/*
 * Encoding and checking mapper datagrams (the format is in wire.h).  The
 * decoder reads only within @len and accepts a datagram only if its length
 * is exactly what its fields say, so a truncated, padded or spliced one
 * never gets through.
 */
#include <string.h>

#include "wire.h"

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, v >> 16);
	put16(p + 2, v);
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, v >> 32);
	put32(p + 4, v);
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)get16(p) << 16 | get16(p + 2);
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) << 32 | get32(p + 4);
}

static bool mac_zero(const uint8_t mac[6])
{
	return !(mac[0] | mac[1] | mac[2] | mac[3] | mac[4] | mac[5]);
}

static size_t put_hdr(uint8_t *buf, uint8_t type, uint64_t boot)
{
	buf[0] = 'V';
	buf[1] = 'M';
	buf[2] = MAPD_WIRE_VERSION;
	buf[3] = type;
	put64(buf + 4, boot);
	return MAPD_HDR_LEN;
}

static enum mapd_wire_err decode_hello(const uint8_t *p, size_t len,
				       struct mapd_hello *h)
{
	const uint8_t known = MAPD_HELLO_ELIGIBLE | MAPD_HELLO_LEADER |
			      MAPD_HELLO_CONFIGURED | MAPD_HELLO_HAS_ID;
	bool claims;

	if (len != MAPD_HELLO_LEN)
		return MAPD_WIRE_LENGTH;
	h->term = get32(p + 12);
	h->version = get32(p + 16);
	memcpy(h->leader, p + 20, 6);
	memcpy(h->follows, p + 26, 6);
	h->id = get16(p + 32);
	h->flags = p[34];
	if (p[35] || (h->flags & ~known))
		return MAPD_WIRE_FIELD;
	if (!mac_zero(h->follows) && !mapd_mac_unicast(h->follows))
		return MAPD_WIRE_FIELD;
	if ((h->flags & MAPD_HELLO_LEADER) && !(h->flags & MAPD_HELLO_ELIGIBLE))
		return MAPD_WIRE_FIELD;
	if ((h->flags & MAPD_HELLO_CONFIGURED) && (h->flags & MAPD_HELLO_HAS_ID))
		return MAPD_WIRE_FIELD;
	claims = h->flags & (MAPD_HELLO_CONFIGURED | MAPD_HELLO_HAS_ID);
	if (claims != (h->id != MAPD_NO_ID))
		return MAPD_WIRE_FIELD;
	/* No table: nothing about one; a table: a real publisher. */
	if (!h->term)
		return h->version || !mac_zero(h->leader) ?
		       MAPD_WIRE_FIELD : MAPD_WIRE_OK;
	if (!h->version || h->term >= MAPD_TERM_LIMIT ||
	    !mapd_mac_unicast(h->leader))
		return MAPD_WIRE_FIELD;
	return MAPD_WIRE_OK;
}

static enum mapd_wire_err decode_table(const uint8_t *p, size_t len,
				       struct mapd_msg *msg)
{
	uint32_t entries, chunk, count;

	if (len < MAPD_TABLE_HDR_LEN)
		return MAPD_WIRE_LENGTH;
	msg->table.term = get32(p + 12);
	msg->table.version = get32(p + 16);
	entries = get16(p + 20);
	chunk = get16(p + 22);
	if (!msg->table.term || msg->table.term >= MAPD_TERM_LIMIT ||
	    !msg->table.version || !entries || chunk >= mapd_chunks(entries))
		return MAPD_WIRE_FIELD;
	count = mapd_chunk_count(entries, chunk);
	if (len != MAPD_TABLE_HDR_LEN + (size_t)count * MAPD_ENTRY_LEN)
		return MAPD_WIRE_LENGTH;
	msg->table.entries = entries;
	msg->table.chunk = chunk;
	msg->table.count = count;
	msg->table.data = p + MAPD_TABLE_HDR_LEN;
	return MAPD_WIRE_OK;
}

static enum mapd_wire_err decode_merge(const uint8_t *p, size_t len,
				       struct mapd_msg *msg)
{
	uint32_t count;

	if (len < MAPD_MERGE_HDR_LEN)
		return MAPD_WIRE_LENGTH;
	count = get16(p + 12);
	if (!count || count > MAPD_CHUNK_ENTRIES || get16(p + 14))
		return MAPD_WIRE_FIELD;
	if (len != MAPD_MERGE_HDR_LEN + (size_t)count * MAPD_ENTRY_LEN)
		return MAPD_WIRE_LENGTH;
	msg->merge.count = count;
	msg->merge.data = p + MAPD_MERGE_HDR_LEN;
	return MAPD_WIRE_OK;
}

enum mapd_wire_err mapd_wire_decode(const void *buf, size_t len,
				    struct mapd_msg *msg)
{
	const uint8_t *p = buf;

	if (len < MAPD_HDR_LEN)
		return MAPD_WIRE_SHORT;
	if (len > MAPD_MTU)
		return MAPD_WIRE_LENGTH;
	if (p[0] != 'V' || p[1] != 'M')
		return MAPD_WIRE_MAGIC;
	if (p[2] != MAPD_WIRE_VERSION)
		return MAPD_WIRE_VERSION_UNKNOWN;
	msg->type = p[3];
	msg->boot = get64(p + 4);
	if (!msg->boot)
		return MAPD_WIRE_FIELD;
	switch (msg->type) {
	case MAPD_MSG_HELLO:
		return decode_hello(p, len, &msg->hello);
	case MAPD_MSG_TABLE:
		return decode_table(p, len, msg);
	case MAPD_MSG_MERGE:
		return decode_merge(p, len, msg);
	case MAPD_MSG_LEAVE:
		return len == MAPD_HDR_LEN ? MAPD_WIRE_OK : MAPD_WIRE_LENGTH;
	default:
		return MAPD_WIRE_TYPE;
	}
}

bool mapd_wire_entry(const uint8_t *data, uint32_t i, struct mapd_entry *e)
{
	const uint8_t *p = data + (size_t)i * MAPD_ENTRY_LEN;

	memcpy(e->mac, p, 6);
	e->id = get16(p + 6);
	e->boot = get64(p + 8);
	e->state = p[16];
	e->flags = p[17];
	return mapd_mac_unicast(e->mac) && e->id != MAPD_NO_ID && e->boot &&
	       e->state >= MAPD_ALIVE && e->state <= MAPD_CONFLICT &&
	       !(e->flags & ~MAPD_ENTRY_CONFIGURED);
}

static void put_entry(uint8_t *p, const struct mapd_entry *e)
{
	memcpy(p, e->mac, 6);
	put16(p + 6, e->id);
	put64(p + 8, e->boot);
	p[16] = e->state;
	p[17] = e->flags;
}

size_t mapd_wire_hello(uint8_t *buf, uint64_t boot,
		       const struct mapd_hello *h)
{
	put_hdr(buf, MAPD_MSG_HELLO, boot);
	put32(buf + 12, h->term);
	put32(buf + 16, h->version);
	memcpy(buf + 20, h->leader, 6);
	memcpy(buf + 26, h->follows, 6);
	put16(buf + 32, h->id);
	buf[34] = h->flags;
	buf[35] = 0;
	return MAPD_HELLO_LEN;
}

size_t mapd_wire_table(uint8_t *buf, uint64_t boot, uint32_t term,
		       uint32_t version, uint32_t entries, uint32_t chunk,
		       const struct mapd_entry *e)
{
	uint32_t i, count = mapd_chunk_count(entries, chunk);
	uint8_t *p = buf + MAPD_TABLE_HDR_LEN;

	put_hdr(buf, MAPD_MSG_TABLE, boot);
	put32(buf + 12, term);
	put32(buf + 16, version);
	put16(buf + 20, entries);
	put16(buf + 22, chunk);
	e += chunk * MAPD_CHUNK_ENTRIES;
	for (i = 0; i < count; i++, p += MAPD_ENTRY_LEN)
		put_entry(p, &e[i]);
	return MAPD_TABLE_HDR_LEN + (size_t)count * MAPD_ENTRY_LEN;
}

size_t mapd_wire_merge(uint8_t *buf, uint64_t boot,
		       const struct mapd_entry *const *e, uint32_t count)
{
	uint8_t *p = buf + MAPD_MERGE_HDR_LEN;
	uint32_t i;

	put_hdr(buf, MAPD_MSG_MERGE, boot);
	put16(buf + 12, count);
	put16(buf + 14, 0);
	for (i = 0; i < count; i++, p += MAPD_ENTRY_LEN)
		put_entry(p, e[i]);
	return MAPD_MERGE_HDR_LEN + (size_t)count * MAPD_ENTRY_LEN;
}

size_t mapd_wire_leave(uint8_t *buf, uint64_t boot)
{
	return put_hdr(buf, MAPD_MSG_LEAVE, boot);
}
