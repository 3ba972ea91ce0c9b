// SPDX-License-Identifier: GPL-2.0
/*
 * A NIC's line and its endpoint table as vnetctl status prints them; the
 * paging benchmark's watchdog (vnet-bench) prints its state with them too.
 */
#include <inttypes.h>
#include <stdio.h>

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
