// SPDX-License-Identifier: GPL-2.0
/*
 * vnetctl status [--json]: every NIC's frames and paging counters, and a
 * table of its endpoints.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "vnetctl.h"

static void print_json(const struct vnetctl_nic *nics, size_t nr)
{
	struct json j;
	size_t n, i;

	json_init(&j, stdout);
	json_open(&j, NULL, '{');
	json_open(&j, "nics", '[');
	for (n = 0; n < nr; n++) {
		const struct vnetctl_nic *nic = &nics[n];

		json_open(&j, NULL, '{');
		json_str(&j, "name", nic->name);
		json_u64(&j, "nic_id", nic->nic_id);
		json_u64(&j, "frames", nic->frames);
		json_u64(&j, "resident", nic->resident);
		json_u64(&j, "endpoints_count", nic->endpoints);
		json_u64(&j, "faults", nic->faults);
		json_u64(&j, "evictions", nic->evictions);
		json_u64(&j, "fault_ns", nic->fault_ns);
		json_str(&j, "ifname", nic->ifname);
		if (nic->has_stats) {
			json_open(&j, "stats", '{');
			for (i = 0; i < VNETCTL_NR_STATS; i++)
				if (nic->stats_present & 1ull << i)
					json_u64(&j, vnetctl_stat_names[i],
						 nic->stats[i]);
			json_close(&j, '}');
		}
		json_open(&j, "endpoints", '[');
		for (i = 0; i < nic->nr_eps; i++) {
			const struct vnetctl_ep *ep = &nic->eps[i];
			char buf[32];

			json_open(&j, NULL, '{');
			snprintf(buf, sizeof(buf), "%" PRIu32 ":%" PRIu32,
				 nic->nic_id, ep->index);
			json_str(&j, "id", buf);
			json_u64(&j, "index", ep->index);
			json_str(&j, "state", ep->state);
			json_s64(&j, "frame", ep->frame);
			if (ep->pid >= 0)
				json_s64(&j, "pid", ep->pid);
			json_u64(&j, "sent", ep->sent);
			json_u64(&j, "received", ep->received);
			json_u64(&j, "returned", ep->returned);
			json_u64(&j, "rejected", ep->rejected);
			json_u64(&j, "faults", ep->faults);
			json_u64(&j, "evictions", ep->evictions);
			json_close(&j, '}');
		}
		json_close(&j, ']');
		json_close(&j, '}');
	}
	json_close(&j, ']');
	json_close(&j, '}');
}

int vnetctl_cmd_status(int argc, char **argv)
{
	struct vnetctl_nic *nics;
	bool json = false;
	size_t nr, i;
	int err, a;

	for (a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "--json")) {
			json = true;
		} else {
			vnetctl_msg("status: unknown option '%s'", argv[a]);
			vnetctl_usage(stderr);
			return VNETCTL_EXIT_USAGE;
		}
	}

	err = vnetctl_read_nics(&nics, &nr, true);
	if (err)
		return vnetctl_sysfs_error(err);

	if (json) {
		print_json(nics, nr);
	} else {
		for (i = 0; i < nr; i++) {
			if (i)
				putchar('\n');
			vnetctl_print_nic(stdout, &nics[i]);
		}
	}
	vnetctl_free_nics(nics, nr);

	if (fflush(stdout) || ferror(stdout)) {
		vnetctl_err(errno ? errno : EIO, "stdout");
		return VNETCTL_EXIT_FAIL;
	}
	return VNETCTL_EXIT_OK;
}
