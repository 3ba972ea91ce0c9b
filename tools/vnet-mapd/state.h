/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The membership as JSON in a state file, for `vnetctl cluster`: written
 * whole to a new PATH.XXXXXX (mkostemp) and renamed over PATH, so a reader sees one complete
 * version or the one before.
 */
#ifndef VNET_MAPD_STATE_H
#define VNET_MAPD_STATE_H

#include <stdint.h>

#include "mapd.h"

struct mapd_state_info {
	const char *ifname;
	const char *nic;		/* vnetN */
	uint64_t boot_id;
};

/* 0 or a negative errno. */
int mapd_state_write(const char *path, const struct mapd *m,
		     const struct mapd_state_info *info, uint64_t now);
void mapd_state_remove(const char *path);

#endif /* VNET_MAPD_STATE_H */
