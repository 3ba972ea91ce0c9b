// SPDX-License-Identifier: GPL-2.0
/*
 * The peers a node has heard: found by MAC in constant time whatever
 * MACs a hostile host makes up, and never more than max_members of them,
 * so a flood of HELLOs from made-up addresses costs no memory.
 */
#include <stdlib.h>

#include "core.h"

static uint32_t view_hash(const struct mapd_view *v, const uint8_t mac[6])
{
	uint64_t x = (uint64_t)mac[0] << 40 | (uint64_t)mac[1] << 32 |
		     (uint64_t)mac[2] << 24 | (uint64_t)mac[3] << 16 |
		     (uint64_t)mac[4] << 8 | mac[5];

	/* splitmix64's finalizer over the keyed address */
	x ^= v->key;
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return (uint32_t)x & v->mask;
}

int mapd_view_init(struct mapd_view *v, uint32_t cap, uint64_t key)
{
	uint32_t slots = 1;

	while (slots < 2 * cap)
		slots <<= 1;
	v->peer = calloc(cap, sizeof(*v->peer));
	v->slot = calloc(slots, sizeof(*v->slot));
	if (!v->peer || !v->slot) {
		mapd_view_free(v);
		return -1;
	}
	v->n = 0;
	v->cap = cap;
	v->mask = slots - 1;
	v->key = key;
	return 0;
}

void mapd_view_free(struct mapd_view *v)
{
	free(v->peer);
	free(v->slot);
	v->peer = NULL;
	v->slot = NULL;
}

struct mapd_peer *mapd_view_find(const struct mapd_view *v,
				 const uint8_t mac[6])
{
	uint32_t i;

	for (i = view_hash(v, mac); v->slot[i]; i = (i + 1) & v->mask) {
		struct mapd_peer *p = &v->peer[v->slot[i] - 1];

		if (!mapd_mac_cmp(p->mac, mac))
			return p;
	}
	return NULL;
}

/* A new, zeroed peer for @mac, which the caller made sure is not here. */
struct mapd_peer *mapd_view_add(struct mapd_view *v, const uint8_t mac[6])
{
	struct mapd_peer *p;
	uint32_t i;

	if (v->n == v->cap)
		return NULL;
	for (i = view_hash(v, mac); v->slot[i]; i = (i + 1) & v->mask)
		;
	p = &v->peer[v->n];
	memset(p, 0, sizeof(*p));
	memcpy(p->mac, mac, 6);
	p->slot = i;
	v->slot[i] = ++v->n;
	return p;
}

void mapd_view_remove(struct mapd_view *v, uint32_t i)
{
	uint32_t hole = v->peer[i].slot, k, last = v->n - 1;

	/*
	 * Backward-shift deletion: pull later members of the probe run into
	 * the hole when that keeps them reachable from their home slot, so
	 * that no tombstones pile up under churn.
	 */
	v->slot[hole] = 0;
	for (k = (hole + 1) & v->mask; v->slot[k]; k = (k + 1) & v->mask) {
		struct mapd_peer *q = &v->peer[v->slot[k] - 1];
		uint32_t home = view_hash(v, q->mac);

		if (((k - home) & v->mask) >= ((k - hole) & v->mask)) {
			v->slot[hole] = v->slot[k];
			v->slot[k] = 0;
			q->slot = hole;
			hole = k;
		}
	}
	if (i != last) {
		v->peer[i] = v->peer[last];
		v->slot[v->peer[i].slot] = i + 1;
	}
	v->n--;
}
