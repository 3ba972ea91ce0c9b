/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vnet-bench pingpong, bw and serve: what their measuring
 * (bench_wire.c) and their command line (bench_wire_opts.c) share.
 */
#ifndef _VNET_BENCH_WIRE_H
#define _VNET_BENCH_WIRE_H

#include <stdbool.h>
#include <stdint.h>

#include <vnet/endpoint.h>

/*
 * A request the server answers with its payload (pingpong), or with a
 * short reply (bw): the handler says which, so a server on another node
 * needs no option to serve either.
 */
#define WIRE_H_REQUEST		1
#define WIRE_H_REPLY		2
#define WIRE_H_REQUEST_NOECHO	3
#define WIRE_MAX_SIZES		32

/*
 * A payload past VNET_MEDIUM_MAX goes as an XFER from its sender's segment
 * (VNET_DESC_FROM_SEG) into the receiver's, in one of WIRE_SLOTS areas of
 * the largest size measured at either end: a bw request has an area of its
 * own until its reply comes, so none is written while a train reads it.
 * pingpong's request goes from area 0 to area 0, its echo back to area 1.
 */
#define WIRE_SLOTS		16

/* A segment of @len bytes registered with an endpoint, or none (NULL). */
struct wire_seg {
	uint8_t *mem;
	uint64_t len;
};

struct wire_opts {
	const char *bench;		/* "pingpong", "bw" or "serve" */
	bool bw;
	bool serve;			/* only a server, until stopped */
	bool remote;			/* the server is --peer, elsewhere */
	bool have_from, have_to;
	uint32_t from, to;		/* serve: the server's NIC is to */
	struct vnet_name peer;
	uint64_t tag;			/* the remote server's */
	uint32_t count;
	double seconds;
	uint32_t sizes[WIRE_MAX_SIZES];
	unsigned int nr_sizes;
	const char *csv;
	bool pinned;			/* XFERs from pinned memory, not the */
					/* client's segment */
};

/*
 * What went wrong on one side; written by that side's thread only, but
 * read by the client's while the server runs, hence the atomics.
 */
struct wire_errs {
	uint64_t returned;
	uint64_t reason[VNET_RET_NR + 1];
	uint64_t bad;			/* wrong handler, sequence or payload */
};

struct wire {
	const struct wire_opts *o;
	struct vnet_endpoint cli, srv;
	int stop;			/* atomic: ends the server thread */
	uint64_t served;		/* atomic: requests answered */
	struct wire_errs ce, se;	/* the client's, the server's */
	struct wire_seg cseg, sseg;	/* segments, for XFERs */
	struct wire_seg pin;		/* --pinned: the client's source */
	uint8_t *xsrc;			/* where the client's XFERs are read */
	uint64_t area;			/* bytes of one of WIRE_SLOTS areas */
	uint32_t size;			/* where the client is, for stall() */
	uint64_t sent, done;
};

struct wire_row {
	uint32_t size;
	uint64_t n;			/* round trips or messages measured */
	double seconds;			/* bw: measured time */
	double median, p10, p90, min;	/* pingpong: microseconds */
	uint64_t retrans, errors;
	double copies;			/* bw: payload copies per byte */
};

int wire_parse(int argc, char **argv, struct wire_opts *o);
int wire_pick_nics(struct wire_opts *o);
int wire_max_payload(const struct wire_opts *o, uint32_t *max);
int wire_seg_give(struct vnet_endpoint *ep, struct wire_seg *seg,
		  uint64_t len);
void wire_seg_drop(struct wire_seg *seg);
int wire_pin_give(struct vnet_endpoint *ep, struct wire_seg *pin,
		  uint64_t len);

#endif /* _VNET_BENCH_WIRE_H */
