/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vnet-bench logp, contention and vnets: the AM-II library (libvnet)
 * measured the way the NOW paper measured AM-II.  Options and output are in
 * bench_am.c, the LogP method in bench_logp.c, the client/server load of
 * the other two in bench_load.c.
 */
#ifndef _VNET_BENCH_AM_H
#define _VNET_BENCH_AM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <vnet/am.h>

#define AMB_H_REQUEST		1
#define AMB_H_REPLY		2
#define AMB_H_STOP		3	/* wakes a server thread to end it */
#define AMB_MAX_POINTS		64

struct amb_opts {
	uint32_t nic_id;		/* the servers', and all of logp */
	char nic_name[64];
	uint32_t frames;
	bool remote_clients;		/* clients on client_nic_id */
	uint32_t client_nic_id;
	char client_nic_name[64];
	uint32_t client_frames;
	double seconds;			/* measured, per point */
	double warmup;			/* unmeasured, before each point */
	const char *csv;
	int credits;			/* K */
	bool poll;			/* spin in AM_Poll instead of waiting */
	unsigned int points[AMB_MAX_POINTS];	/* clients, or delays in ns */
	unsigned int nr_points;
	unsigned int burst;		/* logp: the long burst */
};

/* bench_am.c */
double amb_now(void);
void amb_spin_until(double t);
int amb_check(int err, const char *what);
void amb_returned(int status, op_t opcode, void *token);
extern volatile uint64_t amb_errors;
FILE *amb_csv_open(const struct amb_opts *o, const char *header);

/* bench_logp.c */
int amb_logp(struct amb_opts *o);

/* bench_load.c */
int amb_contention(struct amb_opts *o);
int amb_vnets(struct amb_opts *o);

#endif /* _VNET_BENCH_AM_H */
