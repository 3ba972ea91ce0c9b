// SPDX-License-Identifier: GPL-2.0
/*
 * CRC32C (Castagnoli), table driven, for the host-side tests.  The module
 * uses the kernel's crc32c() behind the same two functions
 * (drivers/vnet/crc32c.c), which is hardware accelerated where the CPU has
 * an instruction for it; vnet_fw_crc32c_selftest() holds both to the same
 * known values, since nodes whose checksums differ drop each other's frames.
 *
 * Eight bytes a step ("slicing by 8"): the simulations checksum every
 * frame twice, and a byte a step took a quarter of cluster_fuzz's time.
 * Bytes are read one by one, so neither alignment nor byte order matters.
 */
#include "wire.h"

/* crc32c_table[k][b]: byte b's contribution, k bytes further on. */
static u32 crc32c_table[8][256];

/* Once, before any NIC runs: the host calls it from its init. */
void vnet_fw_crc32c_init(void)
{
	u32 i, j, k;

	for (i = 0; i < 256; i++) {
		u32 c = i;

		for (j = 0; j < 8; j++)
			c = (c >> 1) ^ ((c & 1) ? 0x82f63b78 : 0);
		crc32c_table[0][i] = c;
	}
	for (k = 1; k < 8; k++)
		for (i = 0; i < 256; i++) {
			u32 c = crc32c_table[k - 1][i];

			crc32c_table[k][i] = (c >> 8) ^
					     crc32c_table[0][c & 0xff];
		}
}

static u32 crc32c_le32(const u8 *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (u32)p[3] << 24;
}

u32 vnet_crc32c(u32 crc, const void *data, u32 len)
{
	const u32 (*t)[256] = crc32c_table;
	const u8 *p = data;

	crc = ~crc;
	for (; len >= 8; len -= 8, p += 8) {
		u32 lo = crc ^ crc32c_le32(p), hi = crc32c_le32(p + 4);

		crc = t[7][lo & 0xff] ^ t[6][(lo >> 8) & 0xff] ^
		      t[5][(lo >> 16) & 0xff] ^ t[4][lo >> 24] ^
		      t[3][hi & 0xff] ^ t[2][(hi >> 8) & 0xff] ^
		      t[1][(hi >> 16) & 0xff] ^ t[0][hi >> 24];
	}
	while (len--)
		crc = t[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}
