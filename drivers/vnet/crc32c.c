// SPDX-License-Identifier: GPL-2.0
/*
 * The firmware's CRC32C from the kernel's own: libcrc32c's crc32c(), which
 * the crypto API backs with its highest-priority driver (on x86 the CPU's
 * CRC32 instruction), or lib/crc32's table (__crc32c_le(), slice-by-8),
 * whichever sums faster on this CPU, timed at load as the kernel times its
 * RAID xor routines.  On real hardware that is the instruction, by far.
 * A CPU that emulates it -- QEMU's TCG runs it at a quarter of the
 * table's speed -- is better served by the table, and every payload byte is summed
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
#include <linux/preempt.h>
#include <linux/random.h>

#include "wire.h"

#define VNET_CRC_BENCH_LEN	8192	/* a fragment's worth a sum */
#define VNET_CRC_BENCH_NS	(NSEC_PER_MSEC / 2)	/* at least, a try */
#define VNET_CRC_BENCH_TRIES	3	/* of which the fastest counts */

static DEFINE_STATIC_KEY_FALSE_RO(vnet_crc_table);

/*
 * Bytes a second the table, or crc32c(), sums @buf at: the best of a few
 * tries, each summing it until half a millisecond has passed since the
 * clock last ticked, preemption off, as the kernel times its xor
 * routines.
 */
static u64 __init vnet_crc_rate(const u8 *buf, bool table)
{
	u64 best = 0;
	unsigned int t;

	for (t = 0; t < VNET_CRC_BENCH_TRIES; t++) {
		u64 start, now, bytes = 0;
		u32 crc = ~0;

		preempt_disable();
		start = ktime_get_ns();
		while ((now = ktime_get_ns()) == start)
			cpu_relax();
		start = now;
		do {
			crc = table ? __crc32c_le(crc, buf, VNET_CRC_BENCH_LEN) :
				      crc32c(crc, buf, VNET_CRC_BENCH_LEN);
			bytes += VNET_CRC_BENCH_LEN;
			now = ktime_get_ns();
		} while (now - start < VNET_CRC_BENCH_NS);
		preempt_enable();
		/* Keep the sums, or the compiler may drop them. */
		barrier_data(&crc);
		best = max(best, div64_u64(bytes * NSEC_PER_SEC, now - start));
	}
	return best;
}

void __init vnet_fw_crc32c_init(void)
{
	static u8 buf[VNET_CRC_BENCH_LEN] __initdata;
	u64 lib, table;

	get_random_bytes(buf, sizeof(buf));
	lib = vnet_crc_rate(buf, false);
	table = vnet_crc_rate(buf, true);
	/* The table only when it is clearly faster: a quarter or more. */
	if (table > lib + lib / 4)
		static_branch_enable(&vnet_crc_table);
	pr_info("vnet: crc32c: %s; MB/s: crc32c() %llu, table %llu\n",
		static_key_enabled(&vnet_crc_table) ? "table" : "crc32c()",
		div64_u64(lib, 1000000), div64_u64(table, 1000000));
}

u32 vnet_crc32c(u32 crc, const void *data, u32 len)
{
	if (static_branch_unlikely(&vnet_crc_table))
		return ~__crc32c_le(~crc, data, len);
	return ~crc32c(~crc, data, len);
}
