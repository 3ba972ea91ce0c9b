/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers shared by the vnet selftests. */
#ifndef _VNET_SELFTEST_UTIL_H
#define _VNET_SELFTEST_UTIL_H

#include <dirent.h>
#include <grp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <vnet/endpoint.h>

#define VNET_SYSFS	"/sys/class/vnet/vnet0"
#define VNET_DEBUGFS	"/sys/kernel/debug/vnet/vnet0"
#define TEST_TAG	0x5eed0000cafeULL

/*
 * Of the supplementary groups keep only /dev/vnet's (the udev rule's group
 * vnet), as a user the site lets create endpoints has; none unless
 * @member.  Root, about to become an unprivileged user.
 */
static inline int vnet_join_device_group(bool member)
{
	struct stat st;

	if (stat(VNET_DEVICE_PATH, &st))
		return -1;
	return setgroups(member ? 1 : 0, &st.st_gid);
}

static inline long long vnet_read_ll(const char *path)
{
	long long val = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	if (fscanf(f, "%lli", &val) != 1)
		val = -1;
	fclose(f);
	return val;
}

/* The value of "@key: N kB" in /proc/meminfo or /proc/self/status, or -1. */
static inline long long vnet_proc_kb(const char *path, const char *key)
{
	size_t len = strlen(key);
	long long val = -1;
	char line[128];
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, len) && line[len] == ':')
			sscanf(line + len + 1, "%lld", &val);
	fclose(f);
	return val;
}

static inline long long vnet_nic_attr(const char *attr)
{
	char path[256];

	snprintf(path, sizeof(path), VNET_SYSFS "/%s", attr);
	return vnet_read_ll(path);
}

static inline int vnet_write_str(const char *path, const char *val)
{
	FILE *f = fopen(path, "w");
	int err;

	if (!f)
		return -1;
	err = fputs(val, f) < 0;
	return fclose(f) || err ? -1 : 0;
}

static inline int vnet_write_ll(const char *path, long long val)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%lld", val);
	return vnet_write_str(path, buf);
}

/* The state word of endpoint @index from sysfs, or "" if it is gone. */
static inline const char *vnet_ep_state(unsigned int index, char *buf,
					size_t len)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), VNET_SYSFS "/endpoints/%u/state", index);
	buf[0] = 0;
	f = fopen(path, "r");
	if (!f)
		return buf;
	if (!fgets(buf, (int)len, f))
		buf[0] = 0;
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	return buf;
}

/* Touch the frame so the endpoint is faulted onto the card. */
static inline void vnet_touch(struct vnet_endpoint *ep)
{
	__atomic_load_n(&ep->frame->hdr.magic, __ATOMIC_RELAXED);
}

/* The Ethernet address of interface @ifname, from sysfs. */
static inline int vnet_if_mac(const char *ifname, uint8_t *mac)
{
	char path[128];
	FILE *f;
	int n;

	snprintf(path, sizeof(path), "/sys/class/net/%s/address", ifname);
	f = fopen(path, "r");
	if (!f)
		return -1;
	n = fscanf(f, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &mac[0], &mac[1],
		   &mac[2], &mac[3], &mac[4], &mac[5]);
	fclose(f);
	return n == 6 ? 0 : -1;
}

/* The pid of the (kernel) thread called @comm, or -1. */
static inline pid_t vnet_thread_pid(const char *comm)
{
	DIR *proc = opendir("/proc");
	struct dirent *d;
	pid_t pid = -1;

	while (proc && pid < 0 && (d = readdir(proc))) {
		char path[300], name[32] = "";
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%s/comm", d->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(name, sizeof(name), f))
			name[strcspn(name, "\n")] = 0;
		fclose(f);
		if (!strcmp(name, comm))
			pid = atoi(d->d_name);
	}
	if (proc)
		closedir(proc);
	return pid;
}

static inline double vnet_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Hold this process to @bytes of locked memory, even as root, which
 * CAP_IPC_LOCK would let past it: 0 or -1.
 */
static inline int vnet_memlock_limit(unsigned long bytes)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];
	struct rlimit lim = { bytes, bytes };

	if (syscall(SYS_capget, &hdr, data))
		return -1;
	data[CAP_IPC_LOCK / 32].effective &= ~(1u << (CAP_IPC_LOCK % 32));
	if (syscall(SYS_capset, &hdr, data))
		return -1;
	return setrlimit(RLIMIT_MEMLOCK, &lim);
}

static inline struct vnet_desc vnet_short(unsigned int handler,
					  unsigned int slot, uint32_t a0,
					  uint32_t a1)
{
	struct vnet_desc d = { .handler = handler, .nargs = 2, .slot = slot };

	d.args[0] = a0;
	d.args[1] = a1;
	return d;
}

#endif /* _VNET_SELFTEST_UTIL_H */
