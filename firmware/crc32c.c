// SPDX-License-Identifier: GPL-2.0
/*
 * CRC32C (Castagnoli), table driven, for the host-side tests.  The module
 * uses the kernel's crc32c() behind the same two functions
 * (drivers/vnet/crc32c.c), which is hardware accelerated where the CPU has
 * an instruction for it; vnet_fw_crc32c_selftest() holds both to the same
 * known values, since nodes whose checksums differ drop each other's frames.
 */
#include "wire.h"

static u32 vnet_crc32c_table[256];

/* Once, before any NIC runs: the host calls it from its init. */
void vnet_fw_crc32c_init(void)
{
	u32 i, j;

	for (i = 0; i < 256; i++) {
		u32 c = i;

		for (j = 0; j < 8; j++)
			c = (c >> 1) ^ ((c & 1) ? 0x82f63b78 : 0);
		vnet_crc32c_table[i] = c;
	}
}

u32 vnet_crc32c(u32 crc, const void *data, u32 len)
{
	const u8 *p = data;

	crc = ~crc;
	while (len--)
		crc = vnet_crc32c_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}
