// SPDX-License-Identifier: GPL-2.0
/*
 * The firmware's CRC32C from the kernel's own: libcrc32c's crc32c(), which
 * the crypto API backs with its highest-priority driver (on x86 the CPU's
 * CRC32 instruction), or lib/crc32's table (__crc32c_le(), slice-by-8),
 * whichever sums faster on this CPU, timed at load as the kernel times its
 * RAID xor routines.  On real hardware that is the instruction, by far.
 * A CPU that emulates it -- QEMU's TCG runs it at a third of the table's
 * speed -- is better served by the table, and every payload byte is summed
 * once by its sender and once by its receiver.  The host tests use the
 * portable table in firmware/crc32c.c instead.
 *
 * The two differ in convention.  vnet_crc32c() is the checksum proper: it
 * starts from ~0 and inverts its result, and it is chained by passing the
 * previous result back in.  crc32c() and __crc32c_le() do neither
 * inversion (they are the raw register update, seeded by the caller), so
 * the register is ~crc on the way in and the checksum is its complement
 * on the way out.  vnet_fw_crc32c_selftest() checks the result against
 * known values at load: a mistake here would make every frame from
 * another node look corrupt.
 */
#include <linux/crc32.h>
#include <linux/crc32c.h>
#include <linux/jump_label.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/random.h>
#include <linux/slab.h>

#include "wire.h"

#define VNET_CRC_BENCH_LEN	8192	/* a fragment's worth */
#define VNET_CRC_BENCH_ROUNDS	8	/* of which the fastest counts */

static DEFINE_STATIC_KEY_FALSE(vnet_crc_table);

/* Nanoseconds the fastest of a few sums of @buf took, with the table or not. */
static u64 vnet_crc_time(const u8 *buf, bool table)
{
	u64 best = U64_MAX;
	unsigned int i;

	for (i = 0; i < VNET_CRC_BENCH_ROUNDS; i++) {
		u64 start = ktime_get_ns(), took;
		u32 crc = table ? __crc32c_le(~0, buf, VNET_CRC_BENCH_LEN) :
				  crc32c(~0, buf, VNET_CRC_BENCH_LEN);

		took = ktime_get_ns() - start;
		/* Keep the sum, or the compiler may drop it. */
		barrier_data(&crc);
		best = min(best, took);
	}
	return best;
}

void vnet_fw_crc32c_init(void)
{
	u64 lib, table;
	u8 *buf;

	buf = kmalloc(VNET_CRC_BENCH_LEN, GFP_KERNEL);
	if (!buf)
		return;
	get_random_bytes(buf, VNET_CRC_BENCH_LEN);
	lib = vnet_crc_time(buf, false);
	table = vnet_crc_time(buf, true);
	kfree(buf);
	if (table < lib)
		static_branch_enable(&vnet_crc_table);
	pr_info("vnet: crc32c: %s, %llu MB/s (crc32c() %llu, table %llu)\n",
		table < lib ? "table" : "crc32c()",
		div64_u64(VNET_CRC_BENCH_LEN * 1000ULL, min(lib, table) ?: 1),
		div64_u64(VNET_CRC_BENCH_LEN * 1000ULL, lib ?: 1),
		div64_u64(VNET_CRC_BENCH_LEN * 1000ULL, table ?: 1));
}

u32 vnet_crc32c(u32 crc, const void *data, u32 len)
{
	if (static_branch_unlikely(&vnet_crc_table))
		return ~__crc32c_le(~crc, data, len);
	return ~crc32c(~crc, data, len);
}
