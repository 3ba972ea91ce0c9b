// SPDX-License-Identifier: GPL-2.0
/*
 * vnetctl status [--json]: every NIC's frames and paging counters, and a
 * table of its endpoints.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "vnetctl.h"

/* Mean fault-in time in microseconds, or "-" before the first fault. */
static const char *mean_fault_us(uint64_t fault_ns, uint64_t faults,
				 char *buf, size_t len)
{
	if (!faults)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.1f", (double)fault_ns / faults / 1000.0);
	return buf;
}

/* The NIC's line and the endpoint table's heading. */
void vnetctl_print_nic_header(FILE *f, const struct vnetctl_nic *nic)
{
	char mean[32];

	fprintf(f, "%s: id %" PRIu32 ", frames %" PRIu32
		", resident %" PRIu64 "/%" PRIu32 ", endpoints %" PRIu64
		", faults %" PRIu64 ", evictions %" PRIu64
		", mean fault-in %s us\n",
		nic->name, nic->nic_id, nic->frames, nic->resident, nic->frames,
		nic->endpoints, nic->faults, nic->evictions,
		mean_fault_us(nic->fault_ns, nic->faults, mean, sizeof(mean)));
	if (nic->ifname[0])
		fprintf(f, "  on %s\n", nic->ifname);
	if (nic->has_stats && nic->ifname[0]) {
		size_t i, n = 0;

		for (i = 0; i < VNETCTL_NR_STATS; i++) {
			if (!(nic->stats_present & 1ull << i))
				continue;
			fprintf(f, "%s%s %" PRIu64 "%s", n % 4 ? ", " : "  ",
				vnetctl_stat_names[i], nic->stats[i],
				n % 4 == 3 ? "\n" : "");
			n++;
		}
		if (n % 4)
			fputc('\n', f);
	}
	fprintf(f, "  %-9s %-11s %5s %7s %9s %9s %6s %6s %7s %7s\n",
		"ID", "STATE", "FRAME", "PID", "SENT", "RECV", "RET", "REJ",
		"FAULTS", "EVICT");
}

void vnetctl_print_ep(FILE *f, const struct vnetctl_nic *nic,
		      const struct vnetctl_ep *ep)
{
	char id[24], frame[16], pid[16];

	snprintf(id, sizeof(id), "%" PRIu32 ":%" PRIu32, nic->nic_id,
		 ep->index);
	if (ep->frame < 0)
		snprintf(frame, sizeof(frame), "-");
	else
		snprintf(frame, sizeof(frame), "%" PRId32, ep->frame);
	if (ep->pid < 0)
		snprintf(pid, sizeof(pid), "-");
	else
		snprintf(pid, sizeof(pid), "%" PRId32, ep->pid);
	fprintf(f, "  %-9s %-11s %5s %7s %9" PRIu64 " %9" PRIu64 " %6" PRIu64
		" %6" PRIu64 " %7" PRIu64 " %7" PRIu64 "\n", id, ep->state,
		frame, pid, ep->sent, ep->received, ep->returned, ep->rejected,
		ep->faults, ep->evictions);
}

void vnetctl_print_nic(FILE *f, const struct vnetctl_nic *nic)
{
	size_t i;

	vnetctl_print_nic_header(f, nic);
	for (i = 0; i < nic->nr_eps; i++)
		vnetctl_print_ep(f, nic, &nic->eps[i]);
	if (!nic->nr_eps)
		fprintf(f, "  (no endpoints)\n");
}

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
