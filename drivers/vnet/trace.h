/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vnet's tracepoints (Documentation/vnet/abi.rst, "Tracepoints"): the
 * endpoint cache -- where a fault's time goes, what the frames were doing
 * while a fault waited for one, evictions and their flushes -- and what an
 * operator looks for on the wire: refusals, retransmissions, messages
 * returned, route changes.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM vnet

#if !defined(_VNET_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _VNET_TRACE_H

#include <linux/if_ether.h>
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
			     __field(u64, fence_ns)
			     __field(u64, zap_ns)
			     __field(u64, unload_ns)
			     __field(u64, load_ns)),
	    TP_fast_assign(__entry->nic = ep->nic->id;
			   __entry->ep = ep->index;
			   __entry->frame = ep->frame;
			   __entry->victim = t->victim;
			   __entry->victim_served = t->victim_served;
			   __entry->wait_ns = t->wait_ns;
			   __entry->flush_ns = t->flush_ns;
			   __entry->fence_ns = t->fence_ns;
			   __entry->zap_ns = t->zap_ns;
			   __entry->unload_ns = t->unload_ns;
			   __entry->load_ns = t->load_ns;),
	    TP_printk("vnet%u ep %u frame %d victim %d%s wait %llu flush %llu (fence %llu zap %llu) unload %llu load %llu ns",
		      __entry->nic, __entry->ep, __entry->frame,
		      __entry->victim,
		      __entry->victim_served ? " (served)" : "",
		      __entry->wait_ns, __entry->flush_ns, __entry->fence_ns,
		      __entry->zap_ns, __entry->unload_ns, __entry->load_ns)
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

/*
 * An endpoint left its frame: as the victim of @newcomer's fault (the
 * index, -1 when it is being closed), served or not since it was loaded.
 * The flush and the copy out are the times of its vnet_flush and the
 * copy; a closing endpoint is dropped without either.
 */
TRACE_EVENT(vnet_evict,
	    TP_PROTO(const struct vnet_ep *victim, int frame,
		     const struct vnet_ep *newcomer, bool served,
		     u64 unload_ns),
	    TP_ARGS(victim, frame, newcomer, served, unload_ns),
	    TP_STRUCT__entry(__field(u32, nic)
			     __field(u32, ep)
			     __field(int, frame)
			     __field(int, newcomer)
			     __field(bool, served)
			     __field(u64, unload_ns)),
	    TP_fast_assign(__entry->nic = victim->nic->id;
			   __entry->ep = victim->index;
			   __entry->frame = frame;
			   __entry->newcomer = newcomer ? newcomer->index : -1;
			   __entry->served = served;
			   __entry->unload_ns = unload_ns;),
	    TP_printk("vnet%u ep %u frame %d for %d%s unload %llu ns",
		      __entry->nic, __entry->ep, __entry->frame,
		      __entry->newcomer,
		      __entry->served ? " (served)" : " (unserved)",
		      __entry->unload_ns)
);

/*
 * The flush rule's wait before an endpoint leaves frame @frame: for the
 * @unresolved messages it had on the wire to be answered.  @err is 0, or
 * why the eviction gave up (-EINTR, -ENODEV) and the endpoint stayed.
 */
TRACE_EVENT(vnet_flush,
	    TP_PROTO(const struct vnet_ep *ep, int frame, u32 unresolved,
		     u64 waited_ns, int err),
	    TP_ARGS(ep, frame, unresolved, waited_ns, err),
	    TP_STRUCT__entry(__field(u32, nic)
			     __field(u32, ep)
			     __field(int, frame)
			     __field(u32, unresolved)
			     __field(u64, waited_ns)
			     __field(int, err)),
	    TP_fast_assign(__entry->nic = ep->nic->id;
			   __entry->ep = ep->index;
			   __entry->frame = frame;
			   __entry->unresolved = unresolved;
			   __entry->waited_ns = waited_ns;
			   __entry->err = err;),
	    TP_printk("vnet%u ep %u frame %d unresolved %u waited %llu ns err %d",
		      __entry->nic, __entry->ep, __entry->frame,
		      __entry->unresolved, __entry->waited_ns, __entry->err)
);

TRACE_DEFINE_ENUM(VNET_NACK_QUEUE_FULL);
TRACE_DEFINE_ENUM(VNET_NACK_NOT_RESIDENT);
TRACE_DEFINE_ENUM(VNET_NACK_RESYNC);
TRACE_DEFINE_ENUM(VNET_NACK_RESTART);

#define vnet_show_nack(r)						\
	__print_symbolic(r,						\
			 { VNET_NACK_QUEUE_FULL, "queue_full" },	\
			 { VNET_NACK_NOT_RESIDENT, "not_resident" },	\
			 { VNET_NACK_RESYNC, "resync" },		\
			 { VNET_NACK_RESTART, "restart" })

/* A DATA packet refused: by this NIC (sent), or by @peer (received). */
TRACE_EVENT(vnet_nack,
	    TP_PROTO(const struct vnet_nic *nic, const struct vnet_fw_event *ev),
	    TP_ARGS(nic, ev),
	    TP_STRUCT__entry(__field(u32, nic)
			     __field(bool, sent)
			     __field(u32, peer)
			     __field(u8, channel)
			     __field(u32, seq)
			     __field(u8, reason)),
	    TP_fast_assign(__entry->nic = nic->id;
			   __entry->sent = ev->type == VNET_FW_EV_NACK_TX;
			   __entry->peer = ev->peer;
			   __entry->channel = ev->channel;
			   __entry->seq = ev->seq;
			   __entry->reason = ev->reason;),
	    TP_printk("vnet%u %s NIC %u channel %u seq %u %s",
		      __entry->nic, __entry->sent ? "refused" : "refused by",
		      __entry->peer, __entry->channel, __entry->seq,
		      vnet_show_nack(__entry->reason))
);

/*
 * A DATA packet sent again: on the timer after @retries transmissions
 * nobody answered since the last answer (0: the last was refused), or at
 * once on a RESUME.
 */
TRACE_EVENT(vnet_retransmit,
	    TP_PROTO(const struct vnet_nic *nic, const struct vnet_fw_event *ev),
	    TP_ARGS(nic, ev),
	    TP_STRUCT__entry(__field(u32, nic)
			     __field(u32, peer)
			     __field(u8, channel)
			     __field(u32, seq)
			     __field(u32, retries)
			     __field(bool, resumed)),
	    TP_fast_assign(__entry->nic = nic->id;
			   __entry->peer = ev->peer;
			   __entry->channel = ev->channel;
			   __entry->seq = ev->seq;
			   __entry->retries = ev->retries;
			   __entry->resumed = ev->resumed;),
	    TP_printk("vnet%u to NIC %u channel %u seq %u retries %u%s",
		      __entry->nic, __entry->peer, __entry->channel,
		      __entry->seq, __entry->retries,
		      __entry->resumed ? " (resume)" : "")
);

TRACE_DEFINE_ENUM(VNET_RET_NONE);
TRACE_DEFINE_ENUM(VNET_RET_BAD_TAG);
TRACE_DEFINE_ENUM(VNET_RET_NO_SLOT);
TRACE_DEFINE_ENUM(VNET_RET_NO_ENDPOINT);
TRACE_DEFINE_ENUM(VNET_RET_BAD_DESC);
TRACE_DEFINE_ENUM(VNET_RET_BAD_TOKEN);
TRACE_DEFINE_ENUM(VNET_RET_UNREACHABLE);
TRACE_DEFINE_ENUM(VNET_RET_BAD_SEGMENT);
TRACE_DEFINE_ENUM(VNET_RET_TOO_LARGE);
TRACE_DEFINE_ENUM(VNET_RET_BUSY);
TRACE_DEFINE_ENUM(VNET_RET_SOURCE_GONE);

/* A message written back to its sender, with the reason it gets. */
TRACE_EVENT(vnet_returned,
	    TP_PROTO(const struct vnet_nic *nic, const struct vnet_fw_event *ev),
	    TP_ARGS(nic, ev),
	    TP_STRUCT__entry(__field(u32, nic)
			     __field(u32, ep)
			     __field(u32, dst_nic)
			     __field(u32, dst_ep)
			     __field(u8, reason)),
	    TP_fast_assign(__entry->nic = nic->id;
			   __entry->ep = ev->src.ep;
			   __entry->dst_nic = ev->dst.nic;
			   __entry->dst_ep = ev->dst.ep;
			   __entry->reason = ev->reason;),
	    TP_printk("vnet%u ep %u to %u:%u %s",
		      __entry->nic, __entry->ep, __entry->dst_nic,
		      __entry->dst_ep,
		      __print_symbolic(__entry->reason,
				       { VNET_RET_NONE, "none" },
				       { VNET_RET_BAD_TAG, "bad_tag" },
				       { VNET_RET_NO_SLOT, "no_slot" },
				       { VNET_RET_NO_ENDPOINT, "no_endpoint" },
				       { VNET_RET_BAD_DESC, "bad_desc" },
				       { VNET_RET_BAD_TOKEN, "bad_token" },
				       { VNET_RET_UNREACHABLE, "unreachable" },
				       { VNET_RET_BAD_SEGMENT, "bad_segment" },
				       { VNET_RET_TOO_LARGE, "too_large" },
				       { VNET_RET_BUSY, "busy" },
				       { VNET_RET_SOURCE_GONE, "source_gone" }))
);

/*
 * A route to NIC @peer added at @mac, or deleted (@mac all zero); @err is
 * the ioctl's result, so a refused change shows too.
 */
TRACE_EVENT(vnet_route,
	    TP_PROTO(u32 nic, u32 peer, bool add, const u8 *mac, int err),
	    TP_ARGS(nic, peer, add, mac, err),
	    TP_STRUCT__entry(__field(u32, nic)
			     __field(u32, peer)
			     __field(bool, add)
			     __array(u8, mac, ETH_ALEN)
			     __field(int, err)),
	    TP_fast_assign(__entry->nic = nic;
			   __entry->peer = peer;
			   __entry->add = add;
			   memcpy(__entry->mac, mac, ETH_ALEN);
			   __entry->err = err;),
	    TP_printk("vnet%u %s NIC %u at %pM err %d", __entry->nic,
		      __entry->add ? "add" : "del", __entry->peer,
		      __entry->mac, __entry->err)
);

#endif /* _VNET_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
