// SPDX-License-Identifier: GPL-2.0
/*
 * The checksum every packet carries: the portable CRC32C the host tests
 * build, against the known values the module checks the kernel's crc32c()
 * against at load, and the conventions a wrapper of crc32c() could get
 * wrong.
 */
#include <stdlib.h>

#include "kselftest_harness.h"
#include "wire_sim.h"

/*
 * The kernel's crc32c(): the bare register update, seeded by the caller,
 * with no inversion on either side.  Built here from the portable checksum.
 */
static u32 raw_crc32c(u32 reg, const void *data, u32 len)
{
	return ~vnet_crc32c(~reg, data, len);
}

/* drivers/vnet/crc32c.c */
static u32 kernel_style(u32 crc, const void *data, u32 len)
{
	return ~raw_crc32c(~crc, data, len);
}

/* The mistakes: no inversion, only the seed's, only the result's. */
static u32 no_inversion(u32 crc, const void *data, u32 len)
{
	return raw_crc32c(crc, data, len);
}

static u32 seed_only(u32 crc, const void *data, u32 len)
{
	return raw_crc32c(~crc, data, len);
}

static u32 result_only(u32 crc, const void *data, u32 len)
{
	return ~raw_crc32c(crc, data, len);
}

/* Right on a whole buffer, wrong when chained: the seed taken as is. */
static u32 unchained(u32 crc, const void *data, u32 len)
{
	return vnet_crc32c(0, data, len) ^ crc;
}

TEST(crc32c_known_values)
{
	static const char check[] = "123456789";
	u8 buf[32];
	u32 i;

	vnet_fw_crc32c_init();
	EXPECT_EQ(0xe3069283, vnet_crc32c(0, check, 9));
	memset(buf, 0, sizeof(buf));
	EXPECT_EQ(0x8a9136aa, vnet_crc32c(0, buf, sizeof(buf)));
	memset(buf, 0xff, sizeof(buf));
	EXPECT_EQ(0x62a8ab43, vnet_crc32c(0, buf, sizeof(buf)));
	for (i = 0; i < sizeof(buf); i++)
		buf[i] = i;
	EXPECT_EQ(0x46dd794e, vnet_crc32c(0, buf, sizeof(buf)));
	/* Chained in two pieces, as a header and then its payload. */
	EXPECT_EQ(0x46dd794e, vnet_crc32c(vnet_crc32c(0, buf, 5), buf + 5,
					  sizeof(buf) - 5));
	EXPECT_TRUE(vnet_fw_crc32c_selftest(vnet_crc32c));
}

TEST(crc32c_check_catches_a_wrong_convention)
{
	vnet_fw_crc32c_init();
	EXPECT_TRUE(vnet_fw_crc32c_selftest(kernel_style));
	EXPECT_FALSE(vnet_fw_crc32c_selftest(no_inversion));
	EXPECT_FALSE(vnet_fw_crc32c_selftest(seed_only));
	EXPECT_FALSE(vnet_fw_crc32c_selftest(result_only));
	EXPECT_FALSE(vnet_fw_crc32c_selftest(unchained));
}

TEST_HARNESS_MAIN
