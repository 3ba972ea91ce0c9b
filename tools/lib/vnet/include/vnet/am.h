/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * libvnet: the Active Messages 2.0 (AM-II) API over vnet endpoints.
 *
 * Names, argument order, types and constants follow GASNet's AMUDP
 * (other/amudp/amudp.h), the maintained implementation of the AM-II
 * specification (Mainwaring and Culler, UCB CSD-96-918).  Where vnet
 * differs, the reason is written next to the difference and collected in
 * Documentation/vnet/libvnet.rst.  Extensions start with AMVNET_.
 *
 * Model.  An endpoint (ep_t) is one vnet endpoint: one open file of
 * /dev/vnet with its frame and staging area mapped.  Endpoints live in
 * bundles (eb_t); AM_Poll and AM_WaitSema act on a whole bundle.  A request
 * goes through the sender's translation table (AM_Map) to an endpoint name
 * (en_t: the NIC id and the endpoint's index there, so an endpoint on
 * another NIC is mapped like a local one) with a tag; the destination runs
 * the request handler, which may reply once.  Each endpoint may have K
 * requests outstanding (credits, AM_SetExpectedResources; 4 by
 * default as in the NOW paper); a request without a credit polls the bundle
 * until a reply hands one back.  Replies never wait for credits.  Messages
 * the network cannot deliver come back to handler 0, the error handler.
 *
 * Thread safety.
 *  - AM_Init and AM_Terminate: never concurrently with any other call.
 *  - AM_SEQ bundles: the library takes no lock.  One thread at a time may
 *    call into the bundle and its endpoints; different AM_SEQ bundles may be
 *    used by different threads at the same time.
 *  - AM_PAR bundles: AM_Poll, AM_WaitSema/AM_Wait, every request, AM_Map,
 *    AM_MapAny, AM_UnMap, AM_SetTag, AM_SetSeg, AM_SetHandler(Any),
 *    AM_SetExpectedResources, AM_Set/GetEventMask and the AM_Get* calls may
 *    be made on the bundle and its endpoints from any number of threads at
 *    once.  Each endpoint has a lock, held while its messages are handled:
 *    the handlers of one endpoint run one at a time, handlers of different
 *    endpoints may run at the same time in different threads.  AM_Poll skips
 *    an endpoint another thread is already servicing.
 *  - AM_AllocateEndpoint, AM_FreeEndpoint, AM_MoveEndpoint and AM_FreeBundle
 *    change a bundle's membership: never concurrently with any other call on
 *    that bundle or those endpoints, in either mode.
 *  - Handlers run inside AM_Poll, AM_WaitSema and requests (which poll).  A
 *    handler may call AM_Reply* (request handlers only, at most once), and
 *    AM_GetSourceEndpoint, AM_GetDestEndpoint, AM_GetMsgTag and
 *    AMVNET_GetReturnedMessage on its token.  Requests, AM_Poll, AM_Wait*,
 *    and the calls that allocate, free, map or set a segment fail with
 *    AM_ERR_RESOURCE inside a handler.  A token, and the payload pointer a
 *    medium or bulk handler gets, are valid only until the handler returns.
 */
#ifndef _VNET_AM_H
#define _VNET_AM_H

#include <stddef.h>
#include <stdint.h>
#include <stdarg.h>

#include <linux/vnet.h>

#ifdef __cplusplus
extern "C" {
#endif

/* libvnet is built with hidden visibility; this is its interface. */
#ifdef __GNUC__
#pragma GCC visibility push(default)
#endif

/* Types, as AMUDP names them. */
typedef uint64_t tag_t;			/* endpoint tag */
typedef uint8_t handler_t;		/* handler table index */
/*
 * An endpoint's global name.  AMUDP's en_t is a socket address; vnet's is
 * the driver's {nic, ep}, so a name on another NIC needs no translation.
 */
typedef struct vnet_name en_t;
typedef struct amvnet_ep *ep_t;		/* endpoint */
typedef struct amvnet_eb *eb_t;		/* bundle */
typedef int op_t;			/* what a returned message was */
/*
 * Generic handler pointer; AM_SetHandler casts to it.  AMUDP uses
 * void (*)(); void (*)(void) is the same thing without an old-style
 * declaration, and the one function type GCC lets every other cast to.
 */
typedef void (*handler_fn_t)(void);
typedef handler_fn_t amvnet_handler_fn_t;

/*
 * Handler prototypes, N the number of int32_t arguments (0..AM_MaxShort()):
 *   short:      void h(void *token, int32_t a0, ..., aN-1);
 *   medium:     void h(void *token, void *buf, size_t nbytes, a0, ...);
 *   bulk (Xfer): the same as medium; buf points into this endpoint's
 *               segment at the destination offset.
 *   handler 0:  void h(int status, op_t opcode, void *token);
 * A medium handler's buf is the receive queue entry's staging slot: the
 * data is not copied on the receive side.
 */
typedef void (*amvnet_returned_fn_t)(int status, op_t opcode, void *token);

/* Tags.  AM_NONE accepts nothing, AM_ALL every tag. */
#define AM_NONE		((tag_t)VNET_TAG_NONE)
/*
 * AMUDP defines AM_ALL as 1.  vnet's firmware reserves ~0 as the tag that
 * accepts every tag and treats 1 as an ordinary tag, so AM_ALL is ~0 here.
 */
#define AM_ALL		((tag_t)VNET_TAG_ANY)

/* Event masks */
enum {
	AM_NOEVENTS,		/* no event: AM_WaitSema refuses to block */
	AM_NOTEMPTY,		/* a message in (or arriving into) a receive queue */
	AM_NUMEVENTMASKS
};

/* Bundle modes */
enum {
	AM_SEQ,			/* one thread at a time */
	AM_PAR,			/* concurrent access, see above */
	AM_NUM_BUNDLE_MODES
};

/* Return values of the API calls */
#define AM_OK		0	/* success */
#define AM_ERR_NOT_INIT	1	/* AM_Init not called */
#define AM_ERR_BAD_ARG	2	/* invalid argument */
#define AM_ERR_RESOURCE	3	/* resource problem, or not allowed now */
#define AM_ERR_NOT_SENT	4	/* message not sent */
#define AM_ERR_IN_USE	5	/* resource in use */

/* Status codes handler 0 gets for a returned message */
#define EBADARGS	1	/* malformed message (vnet: bad descriptor) */
#define EBADENTRY	2	/* translation table entry not mapped */
#define EBADTAG		3	/* tag did not match the destination's */
#define EBADHANDLER	4	/* no such handler at the destination */
#define EBADSEGOFF	5	/* bulk transfer outside the destination segment */
#define EBADLENGTH	6	/* payload too large for the link (remote NIC) */
#define EBADENDPOINT	7	/* destination endpoint does not exist */
#define ECONGESTION	8	/* destination refused it for busy_timeout_ms */
#define EUNREACHABLE	9	/* destination NIC unreachable */
#define EREPLYREJECTED	10	/* reply to no, or an answered, request */

/* Opcodes handler 0 gets: what the returned message was */
#define AM_REQUEST_M		1
#define AM_REQUEST_IM		2
#define AM_REQUEST_XFER_M	3
#define AM_REPLY_M		4
#define AM_REPLY_IM		5
#define AM_REPLY_XFER_M		6

/*
 * System parameters.  AMUDP allows 16 arguments; a vnet descriptor carries
 * 8.  A medium payload is one staging slot.  A bulk request is bounded
 * by the largest segment: the library sends it as messages of up to
 * VNET_XFER_MAX (1 MiB) each from the sender's own segment, or of
 * AM_MaxMedium() from elsewhere, and the firmware cuts each to fit the
 * link.  A bulk reply is one message (the firmware accepts one reply per
 * request token): past AM_MaxMedium() its source must lie in the
 * sender's segment, and it is VNET_XFER_MAX at most.  To an endpoint on
 * another NIC whose link is narrower than 1280 bytes, everything must
 * also fit one packet: AMVNET_MaxPayload().
 */
#define AM_MaxShort()		VNET_MAX_ARGS
#define AM_MaxMedium()		VNET_MEDIUM_MAX
#define AM_MaxLong()		((int)VNET_MAX_SEG_LEN)
#define AM_MaxNumHandlers()	256
#define AMVNET_MAX_TRANSLATIONS	VNET_MAX_SLOTS
#define AM_MaxNumTranslations(trans) \
	(*(trans) = AMVNET_MAX_TRANSLATIONS, AM_OK)
#define AMVNET_DEFAULT_CREDITS	4	/* requests outstanding per endpoint */
#define AMVNET_MAX_CREDITS	VNET_QUEUE_DEPTH

int AM_MaxSegLength(uintptr_t *nbytes);
/*
 * The largest payload the link of the endpoint's NIC carries (VNET_IOC_
 * NIC_INFO's max_payload): VNET_XFER_MAX on any link of an MTU of 1280 or
 * more, where the firmware cuts messages into fragments; on a narrower one,
 * the bound for every message to other NICs.
 */
int AMVNET_MaxPayload(ep_t ea, uint32_t *nbytes);

/* Initialization.  Counted: the last AM_Terminate frees every bundle. */
int AM_Init(void);
int AM_Terminate(void);

/* Bundles and endpoints */
int AM_AllocateBundle(int type, eb_t *endb);
int AM_FreeBundle(eb_t bundle);
/* On NIC 0; the name goes to *endpoint_name. */
int AM_AllocateEndpoint(eb_t bundle, ep_t *endp, en_t *endpoint_name);
int AMVNET_AllocateEndpointOnNIC(eb_t bundle, uint32_t nic_id, ep_t *endp,
				 en_t *endpoint_name);
int AM_FreeEndpoint(ep_t ea);
int AM_MoveEndpoint(ep_t ea, eb_t from_bundle, eb_t to_bundle);

/*
 * The segment bulk messages land in.  The pages are pinned while it is
 * registered (RLIMIT_MEMLOCK applies); nbytes 0 unregisters.
 */
int AM_SetSeg(ep_t ea, void *addr, uintptr_t nbytes);
int AM_GetSeg(ep_t ea, void **addr, uintptr_t *nbytes);
int AM_SetTag(ep_t ea, tag_t tag);
int AM_GetTag(ep_t ea, tag_t *tag);
/*
 * A tag nobody can guess, from getrandom(): never AM_NONE or AM_ALL.  The
 * tag is what keeps other users' processes out of an endpoint; tell it
 * only to the processes that should reach it.
 */
int AMVNET_RandomTag(tag_t *tag);

/* Translation table, AMVNET_MAX_TRANSLATIONS entries */
int AM_Map(ep_t ea, int index, en_t name, tag_t tag);
int AM_MapAny(ep_t ea, int *index, en_t name, tag_t tag);
int AM_UnMap(ep_t ea, int index);
int AM_Unmap(ep_t ea, int index);	/* the spelling the vnet issue uses */
int AM_GetTranslationInuse(ep_t ea, int index);	/* AM_OK if mapped */
int AM_GetTranslationTag(ep_t ea, int index, tag_t *tag);
int AM_GetTranslationName(ep_t ea, int index, en_t *gan);
#define AM_GetNumTranslations(ep, pntrans) \
	((ep) ? ((*(pntrans) = AMVNET_MAX_TRANSLATIONS), AM_OK) : \
		AM_ERR_BAD_ARG)
#define AM_SetNumTranslations(ep, ntrans) \
	((ep) ? ((ntrans) == AMVNET_MAX_TRANSLATIONS ? AM_OK : \
		 AM_ERR_RESOURCE) : \
		AM_ERR_BAD_ARG)

/*
 * Credits.  n_outstanding_requests is K, the requests this endpoint may have
 * in flight (1..AMVNET_MAX_CREDITS: more than a queue's worth would let
 * replies back up in the firmware).  AMUDP allows one call before the first
 * message because it sizes buffers here; vnet has nothing to size and takes
 * a new K at any time.  n_endpoints is checked and otherwise unused.
 */
int AM_SetExpectedResources(ep_t ea, int n_endpoints,
			    int n_outstanding_requests);

/* Handler table.  Handler 0 is the error handler; messages may not use it. */
int AMVNET_SetHandler(ep_t ea, handler_t handler, handler_fn_t function);
int AMVNET_SetHandlerAny(ep_t ea, handler_t *handler, handler_fn_t function);
#define AM_SetHandler(ea, handler, function) \
	AMVNET_SetHandler((ea), (handler), (handler_fn_t)(function))
#define AM_SetHandlerAny(ea, handler, function) \
	AMVNET_SetHandlerAny((ea), (handler), (handler_fn_t)(function))
#define AM_GetNumHandlers(ep, pnhandlers) \
	((ep) ? ((*(pnhandlers) = AM_MaxNumHandlers()), AM_OK) : AM_ERR_BAD_ARG)
#define AM_SetNumHandlers(ep, nhandlers) \
	((ep) ? ((nhandlers) == AM_MaxNumHandlers() ? AM_OK : \
		 AM_ERR_RESOURCE) : AM_ERR_BAD_ARG)

/*
 * Events.  With AM_NOTEMPTY set, AM_WaitSema sleeps in poll(2) on the
 * bundle's endpoint files until one of them holds a message -- poll does not
 * fault an endpoint in, so a sleeping thread costs no frame -- then runs
 * AM_Poll.  It returns at once if a message is already waiting.  AMUDP
 * aborts the process when asked to wait with AM_NOEVENTS; vnet returns
 * AM_ERR_RESOURCE.  AM_Wait is the same call under the name.  A
 * signal ends the wait early (AM_OK after the poll): callers loop.  Nothing
 * else does: to end a thread asleep here, send its endpoint a message.
 * AM_Poll, by contrast, reads every endpoint's queues and so faults each
 * in: a thread with more endpoints than the NIC has frames should sleep
 * here rather than spin in AM_Poll.
 */
int AM_GetEventMask(eb_t eb, int *mask);
int AM_SetEventMask(eb_t eb, int mask);
int AM_WaitSema(eb_t eb);
int AM_Wait(eb_t eb);

/*
 * Message interrogation, on the token a handler got.  For a returned
 * message the source is the endpoint it could not reach.
 */
int AM_GetSourceEndpoint(void *token, en_t *gan);
int AM_GetDestEndpoint(void *token, ep_t *endp);
int AM_GetMsgTag(void *token, tag_t *tagp);

/* Handle what has arrived at every endpoint of the bundle. */
int AM_Poll(eb_t bundle);

/* The message handler 0 was given, for inspection inside handler 0. */
struct amvnet_returned {
	int status;			/* as handler 0's status */
	op_t opcode;			/* as handler 0's opcode */
	unsigned int reason;		/* the firmware's enum vnet_return_reason */
	handler_t handler;		/* the handler the message named */
	int numargs;
	int32_t args[VNET_MAX_ARGS];
	void *data;			/* medium payload (a copy), or NULL */
	size_t nbytes;			/* payload or fragment length */
	uintptr_t dest_offset;		/* bulk: destination offset */
	int index;			/* request: translation index; reply: -1 */
};
int AMVNET_GetReturnedMessage(void *token, struct amvnet_returned *ret);

/* Counters of one endpoint; messages count bulk fragments one by one. */
struct amvnet_stats {
	uint64_t requests_sent;
	uint64_t replies_sent;		/* by handlers */
	uint64_t credit_replies_sent;	/* automatic: the handler did not reply */
	uint64_t requests_received;
	uint64_t replies_received;
	uint64_t returned;		/* messages the firmware handed back */
	uint64_t credit_waits;		/* requests that found no credit */
	uint64_t credit_sleeps;		/* 1 ms sleeps in poll(2) for one */
	uint64_t credit_sleeps_full;	/* ... that ran the whole 1 ms */
	uint32_t credits;		/* K */
	uint32_t outstanding;		/* requests in flight now */
	uint32_t max_outstanding;	/* the most ever in flight */
	/* bulk pieces sent again, their source pinned again (was padding) */
	uint32_t repinned;
};
int AMVNET_GetStats(ep_t ea, struct amvnet_stats *stats);

/*
 * The driver wakes a waiter when a message arrives into an empty queue.
 * Drivers before commit 2640379 missed two such wake-ups (libvnet.rst), so
 * as a safety net AM_WaitSema looks at the queues again after 1 ms, then
 * after twice as long each time, up to rescue_ms milliseconds (0 turns the
 * net off: a missed wake-up then sleeps until the next message).
 * *rescued counts waits that ended at such a look: missed wake-ups, or
 * wake-ups later than the slice.
 */
#define AMVNET_DEFAULT_RESCUE_MS	100
int AMVNET_SetWaitRescue(eb_t eb, int rescue_ms);
int AMVNET_GetWaitStats(eb_t eb, uint64_t *waits, uint64_t *rescued);

/* The endpoint's file, for an application's own poll/epoll loop. */
int AMVNET_GetFd(ep_t ea);

/*
 * Requests and replies.  reply_endpoint is the translation index of the
 * destination (AMUDP's name for it).  Arguments after numargs are int32_t.
 */
int AMVNET_Request(ep_t request_endpoint, int reply_endpoint,
		   handler_t handler, int numargs, ...);
int AMVNET_RequestI(ep_t request_endpoint, int reply_endpoint,
		    handler_t handler, void *source_addr, int nbytes,
		    int numargs, ...);
int AMVNET_RequestXfer(ep_t request_endpoint, int reply_endpoint,
		       handler_t handler, void *source_addr, int nbytes,
		       uintptr_t dest_offset, int numargs, ...);
int AMVNET_Reply(void *token, handler_t handler, int numargs, ...);
int AMVNET_ReplyI(void *token, handler_t handler, void *source_addr,
		  int nbytes, int numargs, ...);
int AMVNET_ReplyXfer(void *token, handler_t handler, void *source_addr,
		     int nbytes, uintptr_t dest_offset, int numargs, ...);

int AMVNET_RequestVA(ep_t request_endpoint, int reply_endpoint,
		     handler_t handler, int numargs, va_list argptr);
int AMVNET_RequestIVA(ep_t request_endpoint, int reply_endpoint,
		      handler_t handler, void *source_addr, int nbytes,
		      int numargs, va_list argptr);
int AMVNET_RequestXferVA(ep_t request_endpoint, int reply_endpoint,
			 handler_t handler, void *source_addr, int nbytes,
			 uintptr_t dest_offset, int numargs, va_list argptr);
int AMVNET_ReplyVA(void *token, handler_t handler, int numargs,
		   va_list argptr);
int AMVNET_ReplyIVA(void *token, handler_t handler, void *source_addr,
		    int nbytes, int numargs, va_list argptr);
int AMVNET_ReplyXferVA(void *token, handler_t handler, void *source_addr,
		       int nbytes, uintptr_t dest_offset, int numargs,
		       va_list argptr);

/* The argument lists of the numbered forms: each argument as an int32_t. */
#define _AMV_A0()
#define _AMV_A1(a0)		, (int32_t)(a0)
#define _AMV_A2(a0, a1)		_AMV_A1(a0), (int32_t)(a1)
#define _AMV_A3(a0, a1, a2)	_AMV_A2(a0, a1), (int32_t)(a2)
#define _AMV_A4(a0, a1, a2, a3)	_AMV_A3(a0, a1, a2), (int32_t)(a3)
#define _AMV_A5(a0, a1, a2, a3, a4) \
	_AMV_A4(a0, a1, a2, a3), (int32_t)(a4)
#define _AMV_A6(a0, a1, a2, a3, a4, a5) \
	_AMV_A5(a0, a1, a2, a3, a4), (int32_t)(a5)
#define _AMV_A7(a0, a1, a2, a3, a4, a5, a6) \
	_AMV_A6(a0, a1, a2, a3, a4, a5), (int32_t)(a6)
#define _AMV_A8(a0, a1, a2, a3, a4, a5, a6, a7) \
	_AMV_A7(a0, a1, a2, a3, a4, a5, a6), (int32_t)(a7)

/* Short requests: AM_RequestN(ep, destep, hnum, a0, ...) */
#define AM_Request0(ep, d, h) AMVNET_Request(ep, d, h, 0)
#define AM_Request1(ep, d, h, a0) AMVNET_Request(ep, d, h, 1 _AMV_A1(a0))
#define AM_Request2(ep, d, h, a0, a1) \
	AMVNET_Request(ep, d, h, 2 _AMV_A2(a0, a1))
#define AM_Request3(ep, d, h, a0, a1, a2) \
	AMVNET_Request(ep, d, h, 3 _AMV_A3(a0, a1, a2))
#define AM_Request4(ep, d, h, a0, a1, a2, a3) \
	AMVNET_Request(ep, d, h, 4 _AMV_A4(a0, a1, a2, a3))
#define AM_Request5(ep, d, h, a0, a1, a2, a3, a4) \
	AMVNET_Request(ep, d, h, 5 _AMV_A5(a0, a1, a2, a3, a4))
#define AM_Request6(ep, d, h, a0, a1, a2, a3, a4, a5) \
	AMVNET_Request(ep, d, h, 6 _AMV_A6(a0, a1, a2, a3, a4, a5))
#define AM_Request7(ep, d, h, a0, a1, a2, a3, a4, a5, a6) \
	AMVNET_Request(ep, d, h, 7 _AMV_A7(a0, a1, a2, a3, a4, a5, a6))
#define AM_Request8(ep, d, h, a0, a1, a2, a3, a4, a5, a6, a7) \
	AMVNET_Request(ep, d, h, 8 _AMV_A8(a0, a1, a2, a3, a4, a5, a6, a7))

/* Medium requests: AM_RequestIN(ep, destep, hnum, sa, cnt, a0, ...) */
#define AM_RequestI0(ep, d, h, sa, n) AMVNET_RequestI(ep, d, h, sa, n, 0)
#define AM_RequestI1(ep, d, h, sa, n, a0) \
	AMVNET_RequestI(ep, d, h, sa, n, 1 _AMV_A1(a0))
#define AM_RequestI2(ep, d, h, sa, n, a0, a1) \
	AMVNET_RequestI(ep, d, h, sa, n, 2 _AMV_A2(a0, a1))
#define AM_RequestI3(ep, d, h, sa, n, a0, a1, a2) \
	AMVNET_RequestI(ep, d, h, sa, n, 3 _AMV_A3(a0, a1, a2))
#define AM_RequestI4(ep, d, h, sa, n, a0, a1, a2, a3) \
	AMVNET_RequestI(ep, d, h, sa, n, 4 _AMV_A4(a0, a1, a2, a3))
#define AM_RequestI5(ep, d, h, sa, n, a0, a1, a2, a3, a4) \
	AMVNET_RequestI(ep, d, h, sa, n, 5 _AMV_A5(a0, a1, a2, a3, a4))
#define AM_RequestI6(ep, d, h, sa, n, a0, a1, a2, a3, a4, a5) \
	AMVNET_RequestI(ep, d, h, sa, n, 6 _AMV_A6(a0, a1, a2, a3, a4, a5))
#define AM_RequestI7(ep, d, h, sa, n, a0, a1, a2, a3, a4, a5, a6) \
	AMVNET_RequestI(ep, d, h, sa, n, 7 \
			_AMV_A7(a0, a1, a2, a3, a4, a5, a6))
#define AM_RequestI8(ep, d, h, sa, n, a0, a1, a2, a3, a4, a5, a6, a7) \
	AMVNET_RequestI(ep, d, h, sa, n, 8 \
			_AMV_A8(a0, a1, a2, a3, a4, a5, a6, a7))

/* Bulk requests: AM_RequestXferN(ep, destep, desto, hnum, sa, cnt, a0, ...) */
#define AM_RequestXfer0(ep, d, o, h, sa, n) \
	AMVNET_RequestXfer(ep, d, h, sa, n, o, 0)
#define AM_RequestXfer1(ep, d, o, h, sa, n, a0) \
	AMVNET_RequestXfer(ep, d, h, sa, n, o, 1 _AMV_A1(a0))
#define AM_RequestXfer2(ep, d, o, h, sa, n, a0, a1) \
	AMVNET_RequestXfer(ep, d, h, sa, n, o, 2 _AMV_A2(a0, a1))
#define AM_RequestXfer3(ep, d, o, h, sa, n, a0, a1, a2) \
	AMVNET_RequestXfer(ep, d, h, sa, n, o, 3 _AMV_A3(a0, a1, a2))
#define AM_RequestXfer4(ep, d, o, h, sa, n, a0, a1, a2, a3) \
	AMVNET_RequestXfer(ep, d, h, sa, n, o, 4 _AMV_A4(a0, a1, a2, a3))
#define AM_RequestXfer5(ep, d, o, h, sa, n, a0, a1, a2, a3, a4) \
	AMVNET_RequestXfer(ep, d, h, sa, n, o, 5 _AMV_A5(a0, a1, a2, a3, a4))
#define AM_RequestXfer6(ep, d, o, h, sa, n, a0, a1, a2, a3, a4, a5) \
	AMVNET_RequestXfer(ep, d, h, sa, n, o, 6 \
			   _AMV_A6(a0, a1, a2, a3, a4, a5))
#define AM_RequestXfer7(ep, d, o, h, sa, n, a0, a1, a2, a3, a4, a5, a6) \
	AMVNET_RequestXfer(ep, d, h, sa, n, o, 7 \
			   _AMV_A7(a0, a1, a2, a3, a4, a5, a6))
#define AM_RequestXfer8(ep, d, o, h, sa, n, a0, a1, a2, a3, a4, a5, a6, a7) \
	AMVNET_RequestXfer(ep, d, h, sa, n, o, 8 \
			   _AMV_A8(a0, a1, a2, a3, a4, a5, a6, a7))

/* Short replies: AM_ReplyN(token, hnum, a0, ...) */
#define AM_Reply0(t, h) AMVNET_Reply(t, h, 0)
#define AM_Reply1(t, h, a0) AMVNET_Reply(t, h, 1 _AMV_A1(a0))
#define AM_Reply2(t, h, a0, a1) AMVNET_Reply(t, h, 2 _AMV_A2(a0, a1))
#define AM_Reply3(t, h, a0, a1, a2) \
	AMVNET_Reply(t, h, 3 _AMV_A3(a0, a1, a2))
#define AM_Reply4(t, h, a0, a1, a2, a3) \
	AMVNET_Reply(t, h, 4 _AMV_A4(a0, a1, a2, a3))
#define AM_Reply5(t, h, a0, a1, a2, a3, a4) \
	AMVNET_Reply(t, h, 5 _AMV_A5(a0, a1, a2, a3, a4))
#define AM_Reply6(t, h, a0, a1, a2, a3, a4, a5) \
	AMVNET_Reply(t, h, 6 _AMV_A6(a0, a1, a2, a3, a4, a5))
#define AM_Reply7(t, h, a0, a1, a2, a3, a4, a5, a6) \
	AMVNET_Reply(t, h, 7 _AMV_A7(a0, a1, a2, a3, a4, a5, a6))
#define AM_Reply8(t, h, a0, a1, a2, a3, a4, a5, a6, a7) \
	AMVNET_Reply(t, h, 8 _AMV_A8(a0, a1, a2, a3, a4, a5, a6, a7))

/* Medium replies: AM_ReplyIN(token, hnum, sa, cnt, a0, ...) */
#define AM_ReplyI0(t, h, sa, n) AMVNET_ReplyI(t, h, sa, n, 0)
#define AM_ReplyI1(t, h, sa, n, a0) AMVNET_ReplyI(t, h, sa, n, 1 _AMV_A1(a0))
#define AM_ReplyI2(t, h, sa, n, a0, a1) \
	AMVNET_ReplyI(t, h, sa, n, 2 _AMV_A2(a0, a1))
#define AM_ReplyI3(t, h, sa, n, a0, a1, a2) \
	AMVNET_ReplyI(t, h, sa, n, 3 _AMV_A3(a0, a1, a2))
#define AM_ReplyI4(t, h, sa, n, a0, a1, a2, a3) \
	AMVNET_ReplyI(t, h, sa, n, 4 _AMV_A4(a0, a1, a2, a3))
#define AM_ReplyI5(t, h, sa, n, a0, a1, a2, a3, a4) \
	AMVNET_ReplyI(t, h, sa, n, 5 _AMV_A5(a0, a1, a2, a3, a4))
#define AM_ReplyI6(t, h, sa, n, a0, a1, a2, a3, a4, a5) \
	AMVNET_ReplyI(t, h, sa, n, 6 _AMV_A6(a0, a1, a2, a3, a4, a5))
#define AM_ReplyI7(t, h, sa, n, a0, a1, a2, a3, a4, a5, a6) \
	AMVNET_ReplyI(t, h, sa, n, 7 _AMV_A7(a0, a1, a2, a3, a4, a5, a6))
#define AM_ReplyI8(t, h, sa, n, a0, a1, a2, a3, a4, a5, a6, a7) \
	AMVNET_ReplyI(t, h, sa, n, 8 _AMV_A8(a0, a1, a2, a3, a4, a5, a6, a7))

/* Bulk replies: AM_ReplyXferN(token, desto, hnum, sa, cnt, a0, ...) */
#define AM_ReplyXfer0(t, o, h, sa, n) AMVNET_ReplyXfer(t, h, sa, n, o, 0)
#define AM_ReplyXfer1(t, o, h, sa, n, a0) \
	AMVNET_ReplyXfer(t, h, sa, n, o, 1 _AMV_A1(a0))
#define AM_ReplyXfer2(t, o, h, sa, n, a0, a1) \
	AMVNET_ReplyXfer(t, h, sa, n, o, 2 _AMV_A2(a0, a1))
#define AM_ReplyXfer3(t, o, h, sa, n, a0, a1, a2) \
	AMVNET_ReplyXfer(t, h, sa, n, o, 3 _AMV_A3(a0, a1, a2))
#define AM_ReplyXfer4(t, o, h, sa, n, a0, a1, a2, a3) \
	AMVNET_ReplyXfer(t, h, sa, n, o, 4 _AMV_A4(a0, a1, a2, a3))
#define AM_ReplyXfer5(t, o, h, sa, n, a0, a1, a2, a3, a4) \
	AMVNET_ReplyXfer(t, h, sa, n, o, 5 _AMV_A5(a0, a1, a2, a3, a4))
#define AM_ReplyXfer6(t, o, h, sa, n, a0, a1, a2, a3, a4, a5) \
	AMVNET_ReplyXfer(t, h, sa, n, o, 6 _AMV_A6(a0, a1, a2, a3, a4, a5))
#define AM_ReplyXfer7(t, o, h, sa, n, a0, a1, a2, a3, a4, a5, a6) \
	AMVNET_ReplyXfer(t, h, sa, n, o, 7 \
			 _AMV_A7(a0, a1, a2, a3, a4, a5, a6))
#define AM_ReplyXfer8(t, o, h, sa, n, a0, a1, a2, a3, a4, a5, a6, a7) \
	AMVNET_ReplyXfer(t, h, sa, n, o, 8 \
			 _AMV_A8(a0, a1, a2, a3, a4, a5, a6, a7))

#ifdef __GNUC__
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif

#endif /* _VNET_AM_H */
