// SPDX-License-Identifier: GPL-2.0
/*
 * Tables: entries sorted by MAC, and the invariants every published table
 * keeps, which a member checks before it installs one: no MAC twice, an
 * ALIVE or DEAD entry's id held by no other ALIVE or DEAD entry, and a
 * CONFLICT id either held by one ALIVE or DEAD entry (a configured claim
 * on a live node's id, refused to the claimant) or claimed by at least
 * two entries, all CONFLICT.
 */
#include "core.h"

int32_t mapd_table_find(const struct mapd_table *t, const uint8_t mac[6])
{
	uint32_t lo = 0, hi = t->n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		int c = mapd_mac_cmp(t->e[mid].mac, mac);

		if (!c)
			return (int32_t)mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

bool mapd_entry_equal(const struct mapd_entry *a, const struct mapd_entry *b)
{
	return !mapd_mac_cmp(a->mac, b->mac) && a->id == b->id &&
	       a->boot == b->boot && a->state == b->state &&
	       a->flags == b->flags;
}

bool mapd_table_same(const struct mapd_table *a, const struct mapd_table *b)
{
	uint32_t i;

	if (a->n != b->n)
		return false;
	for (i = 0; i < a->n; i++)
		if (!mapd_entry_equal(&a->e[i], &b->e[i]))
			return false;
	return true;
}

static int by_id(const void *ctx, uint32_t a, uint32_t b)
{
	const struct mapd_entry *e = ctx;

	return (int)e[a].id - (int)e[b].id;
}

bool mapd_table_check(const struct mapd_table *t, uint32_t *idx)
{
	uint32_t i, j;

	for (i = 1; i < t->n; i++)
		if (mapd_mac_cmp(t->e[i - 1].mac, t->e[i].mac) >= 0)
			return false;
	for (i = 0; i < t->n; i++)
		idx[i] = i;
	mapd_sort(idx, t->n, by_id, t->e);
	for (i = 0; i < t->n; i = j) {
		uint32_t held = 0, conflict = 0;

		for (j = i; j < t->n && t->e[idx[j]].id == t->e[idx[i]].id; j++) {
			if (t->e[idx[j]].state == MAPD_CONFLICT)
				conflict++;
			else
				held++;
		}
		if (held > 1 || (!held && conflict < 2))
			return false;
	}
	return true;
}

static void sift(uint32_t *idx, uint32_t root, uint32_t n, mapd_cmp_fn cmp,
		 const void *ctx)
{
	for (;;) {
		uint32_t child = 2 * root + 1, top = root, t;

		if (child < n && cmp(ctx, idx[child], idx[top]) > 0)
			top = child;
		if (child + 1 < n && cmp(ctx, idx[child + 1], idx[top]) > 0)
			top = child + 1;
		if (top == root)
			return;
		t = idx[root];
		idx[root] = idx[top];
		idx[top] = t;
		root = top;
	}
}

void mapd_sort(uint32_t *idx, uint32_t n, mapd_cmp_fn cmp, const void *ctx)
{
	uint32_t i, t;

	for (i = n / 2; i-- > 0;)
		sift(idx, i, n, cmp, ctx);
	for (i = n; i-- > 1;) {
		t = idx[0];
		idx[0] = idx[i];
		idx[i] = t;
		sift(idx, 0, i, cmp, ctx);
	}
}
