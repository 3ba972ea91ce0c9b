// SPDX-License-Identifier: GPL-2.0
/*
 * The CRC32C of a concatenation from the CRC32C of its parts.  A train's
 * fragment is summed twice on each side of the wire: into the packet's
 * checksum, and into the checksum of the payload to its end.  Summing its
 * bytes once and joining that sum to each of the other two halves the
 * work, and where the CPU has no CRC instruction (an emulated one, say)
 * that work is most of a fragment's cost.
 *
 * A CRC is linear over GF(2): the register after A then B is the register
 * after A moved on by |B| zero bytes, plus the register B alone leaves
 * from zero.  Moving a register on by n zero bytes multiplies it by
 * x^(8n) modulo the polynomial: by x^(8 * 2^k) for each bit k set in n,
 * each product 32 shifts and exclusive ors, against eight for every byte
 * of a fragment of kilobytes.  The inversions at both ends of
 * vnet_crc32c() cancel in the sum.
 */
#include "wire.h"

/* Castagnoli's polynomial, bit-reflected: bit 31 is x^0. */
#define VNET_CRC32C_POLY	0x82f63b78u

/* a(x) * b(x) modulo the polynomial, both bit-reflected. */
static u32 vnet_crc32c_mul(u32 a, u32 b)
{
	u32 product = 0;
	int i;

	for (i = 31; i >= 0; i--) {
		if (a & (1u << i))
			product ^= b;
		b = (b >> 1) ^ ((b & 1) ? VNET_CRC32C_POLY : 0);
	}
	return product;
}

/*
 * x^(8 * 2^k) modulo the polynomial, bit-reflected: x^8, then each the
 * square of the one before.  A fragment's length has a few bits set, so
 * moving a register on by it takes a few products.
 */
static const u32 vnet_crc32c_x8pow2[32] = {
	0x00800000, 0x00008000, 0x82f63b78, 0x6ea2d55c,
	0x18b8ea18, 0x510ac59a, 0xb82be955, 0xb8fdb1e7,
	0x88e56f72, 0x74c360a4, 0xe4172b16, 0x0d65762a,
	0x35d73a62, 0x28461564, 0xbf455269, 0xe2ea32dc,
	0xfe7740e6, 0xf946610b, 0x3c204f8f, 0x538586e3,
	0x59726915, 0x734d5309, 0xbc1ac763, 0x7d0722cc,
	0xd289cabe, 0xe94ca9bc, 0x05b74f3f, 0xa51e1f42,
	0x40000000, 0x20000000, 0x08000000, 0x00800000,
};

u32 vnet_crc32c_cat(u32 crc_a, u32 crc_b, u32 len_b)
{
	u32 k;

	for (k = 0; len_b; k++, len_b >>= 1)
		if (len_b & 1)
			crc_a = vnet_crc32c_mul(vnet_crc32c_x8pow2[k], crc_a);
	return crc_a ^ crc_b;
}
