// SPDX-License-Identifier: GPL-2.0
/*
 * Bytes in pieces (struct vnet_fw_bytes): a payload summed and copied
 * where it goes straight from the pieces the link received it in.
 *
 * A view never reaches past its pieces: vnet_fw_bytes_sub() is only given
 * ranges the caller checked against the packet's length, and the walks
 * below stop at the last piece whatever the lengths say.
 */
#include "vnet_fw.h"

void vnet_fw_bytes_flat(struct vnet_fw_bytes *b, const void *data, u32 len)
{
	b->one.data = data;
	b->one.len = len;
	b->piece = &b->one;
	b->npieces = 1;
	b->skip = 0;
	b->len = len;
}

/* The @len bytes at @off of @in, which holds them. */
void vnet_fw_bytes_sub(struct vnet_fw_bytes *out,
		       const struct vnet_fw_bytes *in, u32 off, u32 len)
{
	const struct vnet_fw_piece *pc = in->piece;
	u32 n = in->npieces, skip;

	if (fw_warn_on(off > in->len || len > in->len - off)) {
		off = 0;
		len = 0;
	}
	skip = in->skip + off;
	while (n > 1 && skip >= pc->len) {
		skip -= pc->len;
		pc++;
		n--;
	}
	if (in->piece == &in->one) {
		/* @in may go before @out does: its piece comes along. */
		out->one = in->one;
		pc = &out->one;
	}
	out->piece = pc;
	out->npieces = n;
	out->skip = skip;
	out->len = len;
}

/* The contiguous run of @b at *@pc, from *@skip, at most @left bytes. */
static u32 vnet_fw_bytes_run(const struct vnet_fw_piece **pc, u32 *n,
			     u32 *skip, u32 left, const u8 **at)
{
	u32 run;

	while (*n && (*pc)->len <= *skip) {
		*skip -= (*pc)->len;
		(*pc)++;
		(*n)--;
	}
	if (fw_warn_on(!*n))
		return 0;
	run = (*pc)->len - *skip;
	if (run > left)
		run = left;
	*at = (*pc)->data + *skip;
	*skip += run;
	return run;
}

u32 vnet_fw_bytes_crc(u32 crc, const struct vnet_fw_bytes *b)
{
	const struct vnet_fw_piece *pc = b->piece;
	u32 n = b->npieces, skip = b->skip, left = b->len, run;
	const u8 *at;

	while (left) {
		run = vnet_fw_bytes_run(&pc, &n, &skip, left, &at);
		if (!run)
			break;
		crc = vnet_crc32c(crc, at, run);
		left -= run;
	}
	return crc;
}

/*
 * Copied with memmove: a local XFER's source and destination may be the
 * same segment, a single piece.
 */
void vnet_fw_bytes_copy(void *dst, const struct vnet_fw_bytes *b)
{
	const struct vnet_fw_piece *pc = b->piece;
	u32 n = b->npieces, skip = b->skip, left = b->len, run;
	u8 *to = dst;
	const u8 *at;

	while (left) {
		run = vnet_fw_bytes_run(&pc, &n, &skip, left, &at);
		if (!run)
			break;
		fw_memmove(to, at, run);
		to += run;
		left -= run;
	}
}
