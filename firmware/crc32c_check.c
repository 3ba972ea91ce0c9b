// SPDX-License-Identifier: GPL-2.0
/*
 * What every vnet_crc32c() must compute, whoever supplies it: the CRC32C of
 * RFC 3720 (iSCSI), appendix B.4, and the check value of the CRC catalogue.
 * A checksum is chained by passing the previous result as @crc, the way
 * the firmware sums a header and then a payload, so a split must not change
 * the result either, nor two sums joined by vnet_crc32c_cat().  The
 * module runs this on vnet_crc32c() at load and refuses to load on a
 * mismatch; the host tests run it on the portable table, and on the
 * mistakes a wrapper of the kernel's crc32c() could make.
 */
#include "wire.h"

struct vnet_crc32c_vector {
	u8 fill;		/* byte i is fill + i * step */
	s8 step;
	u8 len;
	u32 crc;
};

static const struct vnet_crc32c_vector vnet_crc32c_vectors[] = {
	{ 0x00, 0, 32, 0x8a9136aa },	/* 32 bytes of zeros */
	{ 0xff, 0, 32, 0x62a8ab43 },	/* 32 bytes of ones */
	{ 0x00, 1, 32, 0x46dd794e },	/* 0x00, 0x01, ... 0x1f */
	{ 0x1f, -1, 32, 0x113fdb5c },	/* 0x1f, 0x1e, ... 0x00 */
	{ 0x31, 1, 9, 0xe3069283 },	/* "123456789" */
	{ 0x00, 0, 0, 0x00000000 },	/* nothing */
};

bool vnet_fw_crc32c_selftest(u32 (*crc32c)(u32 crc, const void *data,
					   u32 len))
{
	unsigned int i, j;
	u8 buf[32];

	for (i = 0; i < ARRAY_SIZE(vnet_crc32c_vectors); i++) {
		const struct vnet_crc32c_vector *v = &vnet_crc32c_vectors[i];

		for (j = 0; j < v->len; j++)
			buf[j] = v->fill + v->step * (int)j;
		if (crc32c(0, buf, v->len) != v->crc)
			return false;
		for (j = 0; j <= v->len; j++)
			if (crc32c(crc32c(0, buf, j), buf + j,
				   v->len - j) != v->crc ||
			    vnet_crc32c_cat(crc32c(0, buf, j),
					    crc32c(0, buf + j, v->len - j),
					    v->len - j) != v->crc)
				return false;
	}
	return true;
}
