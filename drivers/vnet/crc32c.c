// SPDX-License-Identifier: GPL-2.0
/*
 * The firmware's CRC32C from the kernel's crc32c() (libcrc32c), which the
 * crypto API backs with the CPU's CRC32 instruction where it has one.  The
 * host tests use the portable table in firmware/crc32c.c instead.
 *
 * The two differ in convention.  vnet_crc32c() is the checksum proper: it
 * starts from ~0 and inverts its result, and it is chained by passing the
 * previous result back in.  crc32c() does neither inversion (it is the raw
 * register update, seeded by the caller), so the register is ~crc on the
 * way in and the checksum is its complement on the way out.
 * vnet_fw_crc32c_selftest() checks the result against known values at
 * load: a mistake here would make every frame from another node look
 * corrupt.
 */
#include <linux/crc32c.h>

#include "wire.h"

void vnet_fw_crc32c_init(void)
{
}

u32 vnet_crc32c(u32 crc, const void *data, u32 len)
{
	return ~crc32c(~crc, data, len);
}
