/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Mapper datagrams, as they travel in a vnet_mapper_pkt's payload.  Any
 * host on the segment can send anything, so decoding checks every field
 * and every length exactly, and a datagram that fails is dropped whole.
 * All integers are big-endian.
 *
 * Header, every datagram (12 bytes):
 *    0  'V' 'M'       magic
 *    2  u8 version    MAPD_WIRE_VERSION; others are dropped
 *    3  u8 type       HELLO, TABLE, MERGE, LEAVE
 *    4  u64 boot      the sender's boot id, nonzero
 *
 * HELLO (36 bytes), broadcast every heartbeat, and at once when the
 * sender's leader or id changes; a leader also sends one straight to a
 * node it hears for the first time, so that the newcomer knows whose
 * table to take before the next heartbeat:
 *   12  u32 term      of the table the sender installed; 0: none yet
 *   16  u32 version   of that table
 *   20  u8 leader[6]  who published it; zero with term 0
 *   26  u8 follows[6] who the sender believes leads now; zero: nobody.
 *                     A leader followed by a node with an older version
 *                     sends its table again.
 *   32  u16 id        CONFIGURED: the operator's id; HAS_ID: the id the
 *                     table gives the sender; neither: 0
 *   34  u8 flags      ELIGIBLE, LEADER (needs ELIGIBLE), CONFIGURED,
 *                     HAS_ID (not with CONFIGURED)
 *   35  u8 0
 *
 * TABLE (24 + 18 * count bytes), from the leader, broadcast: every chunk
 * of a new version at once, and again while a member reports an older one:
 *   12  u32 term      nonzero
 *   16  u32 version   nonzero
 *   20  u16 entries   in the whole table, nonzero
 *   22  u16 chunk     this one holds entries [chunk * 55, + count), count
 *                     = min(55, entries - chunk * 55), at least one
 *   24  entries
 *
 * MERGE (16 + 18 * count bytes), from a leader that stepped down to the
 * one that took over, when it installs the new table and again a tick
 * later: the DEAD entries the new table lacks, so that ids stay stable
 * across a healed partition.  Taken only within dead_ms of a HELLO from
 * the sender that names it as its table's leader and follows the taker:
 *   12  u16 count     1..55
 *   14  u16 0
 *   16  entries
 *
 * LEAVE (12 bytes), broadcast by a daemon that is stopping: its peers
 * count it dead at once rather than after dead_ms.
 *
 * Entry (18 bytes):
 *    0  u8 mac[6]     unicast, nonzero
 *    6  u16 id        1..65535
 *    8  u64 boot      nonzero
 *   16  u8 state      ALIVE, DEAD, CONFLICT
 *   17  u8 flags      CONFIGURED
 *
 * Whether a table's entries are sorted and its ids consistent is a
 * property of the whole table: table.c checks it once every chunk is in.
 */
#ifndef VNET_MAPD_WIRE_H
#define VNET_MAPD_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mapd.h"

#define MAPD_WIRE_VERSION	1

enum mapd_msg_type {
	MAPD_MSG_HELLO = 1,
	MAPD_MSG_TABLE = 2,
	MAPD_MSG_MERGE = 3,
	MAPD_MSG_LEAVE = 4,
};

#define MAPD_HDR_LEN		12
#define MAPD_HELLO_LEN		36
#define MAPD_TABLE_HDR_LEN	24
#define MAPD_MERGE_HDR_LEN	16
#define MAPD_ENTRY_LEN		18
#define MAPD_CHUNK_ENTRIES	55	/* (MAPD_MTU - 24) / 18 */
#define MAPD_MAX_CHUNKS		((MAPD_MAX_MEMBERS + MAPD_CHUNK_ENTRIES - 1) / \
				 MAPD_CHUNK_ENTRIES)

/* HELLO flags */
#define MAPD_HELLO_ELIGIBLE	0x01
#define MAPD_HELLO_LEADER	0x02
#define MAPD_HELLO_CONFIGURED	0x04
#define MAPD_HELLO_HAS_ID	0x08

/* Terms past this are taken for garbage, so term + 1 never wraps. */
#define MAPD_TERM_LIMIT		0xf0000000u

struct mapd_hello {
	uint32_t term;
	uint32_t version;
	uint8_t leader[6];
	uint8_t follows[6];
	uint16_t id;
	uint8_t flags;
};

struct mapd_msg {
	uint8_t type;			/* enum mapd_msg_type */
	uint64_t boot;
	union {
		struct mapd_hello hello;
		struct {
			uint32_t term;
			uint32_t version;
			uint16_t entries;
			uint16_t chunk;
			uint16_t count;
			const uint8_t *data;	/* count entries */
		} table;
		struct {
			uint16_t count;
			const uint8_t *data;
		} merge;
	};
};

enum mapd_wire_err {
	MAPD_WIRE_OK,
	MAPD_WIRE_SHORT,
	MAPD_WIRE_MAGIC,
	MAPD_WIRE_VERSION_UNKNOWN,
	MAPD_WIRE_TYPE,
	MAPD_WIRE_LENGTH,
	MAPD_WIRE_FIELD,
};

/* Chunks of a table of @entries entries. */
static inline uint32_t mapd_chunks(uint32_t entries)
{
	return (entries + MAPD_CHUNK_ENTRIES - 1) / MAPD_CHUNK_ENTRIES;
}

/* Entries in chunk @chunk of a table of @entries entries. */
static inline uint32_t mapd_chunk_count(uint32_t entries, uint32_t chunk)
{
	uint32_t left = entries - chunk * MAPD_CHUNK_ENTRIES;

	return left < MAPD_CHUNK_ENTRIES ? left : MAPD_CHUNK_ENTRIES;
}

static inline bool mapd_mac_unicast(const uint8_t mac[6])
{
	return !(mac[0] & 1) &&
	       (mac[0] | mac[1] | mac[2] | mac[3] | mac[4] | mac[5]);
}

/* Checks a whole datagram; entries are checked by mapd_wire_entry(). */
enum mapd_wire_err mapd_wire_decode(const void *buf, size_t len,
				    struct mapd_msg *msg);

/* Entry @i of a decoded TABLE or MERGE's data; false if it is invalid. */
bool mapd_wire_entry(const uint8_t *data, uint32_t i, struct mapd_entry *e);

/* Encoders: into @buf of MAPD_MTU bytes, returning the length. */
size_t mapd_wire_hello(uint8_t *buf, uint64_t boot,
		       const struct mapd_hello *h);
size_t mapd_wire_table(uint8_t *buf, uint64_t boot, uint32_t term,
		       uint32_t version, uint32_t entries, uint32_t chunk,
		       const struct mapd_entry *e);
size_t mapd_wire_merge(uint8_t *buf, uint64_t boot,
		       const struct mapd_entry *const *e, uint32_t count);
size_t mapd_wire_leave(uint8_t *buf, uint64_t boot);

#endif /* VNET_MAPD_WIRE_H */
