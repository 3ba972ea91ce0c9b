// SPDX-License-Identifier: GPL-2.0
/*
 * Where the time of a fault-in goes, as vnet-bench paging and vnets print
 * it: columns derived from the paging counters of /sys/class/vnet/<nic>/.
 *
 * A column is the change of one counter over a measurement divided by the
 * change of another, or by the seconds it took.  sysfs.c reads every
 * counter a column names, so a counter the driver grows later takes one
 * entry below to show up in both tables and both CSV files.  A module
 * without a counter shows "-" (empty in CSV), as does a column whose
 * divisor did not move.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "vnetctl.h"

#define NS_TO_US	1e-3

const struct vnetctl_col vnetctl_cols[] = {
	/* Claiming a frame to the endpoint running: FLUSH, UNLOAD and LOAD. */
	{ "FAULT_US", "mean_fault_us", "fault_ns", "faults", NS_TO_US },
	/*
	 * Taking the victim out of its frame: the next 2, then waiting for
	 * its messages on the wire to be resolved.
	 */
	{ "FLUSH_US", "mean_flush_us", "flush_ns", "faults", NS_TO_US },
	/* For the firmware to let go of fw_lock, to fence it off the victim. */
	{ "FENCE_US", "mean_fence_us", "fence_ns", "faults", NS_TO_US },
	/* Removing the victim's mapping from its owner. */
	{ "ZAP_US", "mean_zap_us", "zap_ns", "faults", NS_TO_US },
	/* Copying the victim out of its frame. */
	{ "UNLOAD_US", "mean_unload_us", "unload_ns", "faults", NS_TO_US },
	/* Copying the endpoint in, and waking its waiters. */
	{ "LOAD_US", "mean_load_us", "load_ns", "faults", NS_TO_US },
	/* Sleeps of a fault that could not claim a frame. */
	{ "WAITS/S", "frame_waits_per_s", "frame_waits", NULL, 1 },
	{ "WAIT_US", "mean_frame_wait_us", "frame_wait_ns", "frame_waits",
	  NS_TO_US },
	/* Per fault-in: in line behind others, then for a slice to end. */
	{ "TURN_US", "mean_turn_wait_us", "wait_turn_ns", "faults", NS_TO_US },
	{ "SLICE_US", "mean_slice_wait_us", "wait_slice_ns", "faults",
	  NS_TO_US },
	/* How far past the policy's time a sleeper woke: tick rounding. */
	{ "LATE_US", "mean_wake_late_us", "wake_late_ns", "frame_waits",
	  NS_TO_US },
	/* Victims evicted before any message was delivered to them. */
	{ "UNSERVED%", "unserved_victims_pct", "evicted_unserved", "evictions",
	  100 },
	/* From a load to being served (design.rst): what a load waits. */
	{ "SERVE_US", "mean_serve_wait_us", "serve_wait_ns", "serve_waits",
	  NS_TO_US },
};

const size_t vnetctl_nr_cols = ARRAY_SIZE(vnetctl_cols);

_Static_assert(ARRAY_SIZE(vnetctl_cols) <= VNETCTL_MAX_COLS,
	       "raise VNETCTL_MAX_COLS");

static int col_width(const struct vnetctl_col *c)
{
	int w = (int)strlen(c->head);

	return w < 9 ? 9 : w;
}

/*
 * Column @i between the snapshots @a and @b, @seconds apart; false when a
 * counter is missing or the divisor did not change.
 */
static bool col_value(size_t i, const struct vnetctl_counters *a,
		      const struct vnetctl_counters *b, double seconds,
		      double *v)
{
	const struct vnetctl_col *c = &vnetctl_cols[i];
	double den;

	if (!(a->present & b->present & (1u << i)))
		return false;
	den = c->den ? (double)(b->den[i] - a->den[i]) : seconds;
	if (den <= 0)
		return false;
	*v = (double)(b->num[i] - a->num[i]) * c->scale / den;
	return true;
}

void vnetctl_cols_head(FILE *f, size_t first)
{
	size_t i;

	for (i = first; i < vnetctl_nr_cols; i++)
		fprintf(f, " %*s", col_width(&vnetctl_cols[i]),
			vnetctl_cols[i].head);
}

void vnetctl_cols_row(FILE *f, size_t first, const struct vnetctl_counters *a,
		      const struct vnetctl_counters *b, double seconds)
{
	size_t i;
	double v;

	for (i = first; i < vnetctl_nr_cols; i++) {
		int w = col_width(&vnetctl_cols[i]);

		if (col_value(i, a, b, seconds, &v))
			fprintf(f, " %*.1f", w, v);
		else
			fprintf(f, " %*s", w, "-");
	}
}

void vnetctl_cols_csv_head(FILE *f, size_t first)
{
	size_t i;

	for (i = first; i < vnetctl_nr_cols; i++)
		fprintf(f, ",%s", vnetctl_cols[i].csv);
}

void vnetctl_cols_csv_row(FILE *f, size_t first,
			  const struct vnetctl_counters *a,
			  const struct vnetctl_counters *b, double seconds)
{
	size_t i;
	double v;

	for (i = first; i < vnetctl_nr_cols; i++) {
		if (col_value(i, a, b, seconds, &v))
			fprintf(f, ",%.1f", v);
		else
			fputc(',', f);
	}
}
