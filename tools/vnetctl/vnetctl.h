/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vnetctl: inspect vnet NICs and endpoints, attach NICs and keep their
 * routes.  Declarations shared by the command files, and with vnet-bench,
 * which links sysfs.c, counters.c, msg.c and print.c (libvnetctl.a).
 */
#ifndef _VNETCTL_H
#define _VNETCTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define VNETCTL_NAME		"vnetctl"
#define VNET_SYSFS_CLASS	"/sys/class/vnet"

#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))
#define __printf(a, b)		__attribute__((format(printf, a, b)))

/* Exit statuses */
#define VNETCTL_EXIT_OK		0
#define VNETCTL_EXIT_FAIL	1
#define VNETCTL_EXIT_USAGE	2

/* One endpoint, from /sys/class/vnet/<nic>/endpoints/<index>/. */
struct vnetctl_ep {
	uint32_t index;
	char state[16];
	int32_t frame;			/* -1 when not resident */
	int32_t pid;			/* -1 unless we may read it (root) */
	uint64_t sent;
	uint64_t received;
	uint64_t returned;
	uint64_t rejected;
	uint64_t faults;
	uint64_t evictions;
};

/* The transport counters in /sys/class/vnet/<nic>/stats/, in this order. */
#define VNETCTL_NR_STATS	40
extern const char *const vnetctl_stat_names[VNETCTL_NR_STATS];

/*
 * The columns a fault-in is broken down into (counters.c): the change of
 * the counter @num over that of @den, or over the seconds if @den is NULL,
 * times @scale.
 */
struct vnetctl_col {
	const char *head;		/* table column */
	const char *csv;		/* CSV column */
	const char *num;		/* sysfs file in the NIC's directory */
	const char *den;
	double scale;
};

#define VNETCTL_MAX_COLS	16
#define VNETCTL_COL_FAULT_US	0	/* the mean fault-in time comes first */
extern const struct vnetctl_col vnetctl_cols[];
extern const size_t vnetctl_nr_cols;

/* Each column's two counters, from one snapshot of a NIC's directory. */
struct vnetctl_counters {
	uint64_t num[VNETCTL_MAX_COLS];
	uint64_t den[VNETCTL_MAX_COLS];
	uint32_t present;		/* bit i: column i's files were read */
};

/* One NIC, from /sys/class/vnet/<nic>/, with its endpoints sorted by index. */
struct vnetctl_nic {
	char name[64];
	char ifname[64];		/* empty: the loopback card */
	uint64_t stats[VNETCTL_NR_STATS];
	uint64_t stats_present;		/* bit i: stats[i] was read */
	bool has_stats;			/* any of them */
	uint32_t nic_id;
	uint32_t frames;
	uint64_t resident;
	uint64_t endpoints;
	uint64_t faults;
	uint64_t evictions;
	uint64_t fault_ns;
	struct vnetctl_counters counters;
	struct vnetctl_ep *eps;
	size_t nr_eps;
};

/* msg.c: "<vnetctl_prog>: ..." on stderr */
extern const char *vnetctl_prog;
__printf(2, 3) void vnetctl_err(int err, const char *fmt, ...);
__printf(1, 2) void vnetctl_msg(const char *fmt, ...);
int vnetctl_fclose(FILE *f, const char *path);

/* main.c */
void vnetctl_usage(FILE *f);

/* counters.c: columns @first and on of vnetctl_cols */
void vnetctl_cols_head(FILE *f, size_t first);
void vnetctl_cols_row(FILE *f, size_t first, const struct vnetctl_counters *a,
		      const struct vnetctl_counters *b, double seconds);
void vnetctl_cols_csv_head(FILE *f, size_t first);
void vnetctl_cols_csv_row(FILE *f, size_t first,
			  const struct vnetctl_counters *a,
			  const struct vnetctl_counters *b, double seconds);

/* sysfs.c */
int vnetctl_read_nics(struct vnetctl_nic **nics, size_t *nr, bool with_eps);
int vnetctl_find_nic(uint32_t nic_id, struct vnetctl_nic *nic, bool with_eps);
int vnetctl_read_nic(const char *name, struct vnetctl_nic *nic, bool with_eps);
int vnetctl_read_ep(const char *nic_name, uint32_t index,
		    struct vnetctl_ep *ep);
void vnetctl_nic_release(struct vnetctl_nic *nic);
void vnetctl_free_nics(struct vnetctl_nic *nics, size_t nr);
int vnetctl_sysfs_error(int err);

/* status.c */
int vnetctl_cmd_status(int argc, char **argv);

/* print.c */
void vnetctl_print_nic(FILE *f, const struct vnetctl_nic *nic);
void vnetctl_print_nic_header(FILE *f, const struct vnetctl_nic *nic);
void vnetctl_print_ep(FILE *f, const struct vnetctl_nic *nic,
		      const struct vnetctl_ep *ep);

/* top.c */
int vnetctl_cmd_top(int argc, char **argv);

/* netcmd.c */
int vnetctl_cmd_attach(int argc, char **argv);
int vnetctl_cmd_detach(int argc, char **argv);
int vnetctl_cmd_route(int argc, char **argv);

/* cluster.c */
int vnetctl_cmd_cluster(int argc, char **argv);

/* json.c: a minimal streaming writer, enough for status and top --json. */
#define JSON_MAX_DEPTH		8

struct json {
	FILE *f;
	int depth;
	bool first[JSON_MAX_DEPTH];
};

void json_init(struct json *j, FILE *f);
void json_open(struct json *j, const char *key, char bracket);
void json_close(struct json *j, char bracket);
void json_str(struct json *j, const char *key, const char *val);
void json_u64(struct json *j, const char *key, uint64_t val);
void json_s64(struct json *j, const char *key, int64_t val);
void json_f64(struct json *j, const char *key, double val);

#endif /* _VNETCTL_H */
