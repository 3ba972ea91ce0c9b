/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tracepoints of the endpoint cache: where a fault's time goes, and what
 * the frames were doing while a fault waited for one.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM vnet

#if !defined(_VNET_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _VNET_TRACE_H

#include <linux/tracepoint.h>

#include "vnet.h"

/*
 * One fault-in done: how long it waited for a frame, then for its victim's
 * flush, and how long the copies out and in took.  A victim of -1 means a
 * free frame; victim_served says whether the victim had been served since
 * it was loaded (an unserved one was evicted only because it aged).
 */
TRACE_EVENT(vnet_fault,
	    TP_PROTO(const struct vnet_ep *ep, const struct vnet_fault_times *t),
	    TP_ARGS(ep, t),
	    TP_STRUCT__entry(__field(u32, nic)
			     __field(u32, ep)
			     __field(int, frame)
			     __field(int, victim)
			     __field(bool, victim_served)
			     __field(u64, wait_ns)
			     __field(u64, flush_ns)
			     __field(u64, unload_ns)
			     __field(u64, load_ns)),
	    TP_fast_assign(__entry->nic = ep->nic->id;
			   __entry->ep = ep->index;
			   __entry->frame = ep->frame;
			   __entry->victim = t->victim;
			   __entry->victim_served = t->victim_served;
			   __entry->wait_ns = t->wait_ns;
			   __entry->flush_ns = t->flush_ns;
			   __entry->unload_ns = t->unload_ns;
			   __entry->load_ns = t->load_ns;),
	    TP_printk("vnet%u ep %u frame %d victim %d%s wait %llu flush %llu unload %llu load %llu ns",
		      __entry->nic, __entry->ep, __entry->frame,
		      __entry->victim,
		      __entry->victim_served ? " (served)" : "",
		      __entry->wait_ns, __entry->flush_ns, __entry->unload_ns,
		      __entry->load_ns)
);

TRACE_DEFINE_ENUM(VNET_WAIT_TURN);
TRACE_DEFINE_ENUM(VNET_WAIT_SLICE);
TRACE_DEFINE_ENUM(VNET_WAIT_MOVE);

/*
 * A fault slept before it could claim a frame, and why: behind earlier
 * faults, until a resident endpoint's slice ends or it goes idle, or with
 * every frame in motion.  late_ns is how far past the policy's time it
 * woke.
 */
TRACE_EVENT(vnet_frame_wait,
	    TP_PROTO(const struct vnet_ep *ep, enum vnet_frame_wait_why why,
		     u64 slept_ns, u64 late_ns),
	    TP_ARGS(ep, why, slept_ns, late_ns),
	    TP_STRUCT__entry(__field(u32, nic)
			     __field(u32, ep)
			     __field(int, why)
			     __field(u64, slept_ns)
			     __field(u64, late_ns)),
	    TP_fast_assign(__entry->nic = ep->nic->id;
			   __entry->ep = ep->index;
			   __entry->why = why;
			   __entry->slept_ns = slept_ns;
			   __entry->late_ns = late_ns;),
	    TP_printk("vnet%u ep %u slept %llu ns (%s), woke %llu ns late",
		      __entry->nic, __entry->ep, __entry->slept_ns,
		      __print_symbolic(__entry->why,
				       { VNET_WAIT_TURN, "turn" },
				       { VNET_WAIT_SLICE, "slice" },
				       { VNET_WAIT_MOVE, "move" }),
		      __entry->late_ns)
);

#endif /* _VNET_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
