// SPDX-License-Identifier: GPL-2.0
/*
 * Snapshots of /sys/class/vnet: one struct vnetctl_nic per NIC directory,
 * with the endpoints under its endpoints/ directory.
 *
 * Endpoints come and go while we read: one that disappears between readdir
 * and the read of its files is left out without a word.  Each file is read
 * on its own, so a snapshot is not one instant; evictions are read before
 * faults so that they at least never look ahead of them.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vnetctl.h"

#define EPS_DIR		"endpoints"

enum attr_kind {
	ATTR_U32,
	ATTR_S32,
	ATTR_U64,
	ATTR_STR,
};

struct attr_desc {
	const char *name;
	enum attr_kind kind;
	size_t off;
	size_t size;			/* ATTR_STR buffer */
};

#define NIC_ATTR(n, k)	{ #n, k, offsetof(struct vnetctl_nic, n), 0 }
#define EP_ATTR(n, k)	{ #n, k, offsetof(struct vnetctl_ep, n), 0 }

static const struct attr_desc nic_attrs[] = {
	NIC_ATTR(nic_id, ATTR_U32),
	NIC_ATTR(frames, ATTR_U32),
	NIC_ATTR(resident, ATTR_U64),
	NIC_ATTR(evictions, ATTR_U64),	/* before faults: never ahead of them */
	NIC_ATTR(faults, ATTR_U64),
	NIC_ATTR(fault_ns, ATTR_U64),
};

static const struct attr_desc ep_attrs[] = {
	{ "state", ATTR_STR, offsetof(struct vnetctl_ep, state),
	  sizeof(((struct vnetctl_ep *)0)->state) },
	EP_ATTR(frame, ATTR_S32),
	EP_ATTR(sent, ATTR_U64),
	EP_ATTR(received, ATTR_U64),
	EP_ATTR(returned, ATTR_U64),
	EP_ATTR(rejected, ATTR_U64),
	EP_ATTR(evictions, ATTR_U64),
	EP_ATTR(faults, ATTR_U64),
};

/* The file that made the last call fail, for the error message. */
static char failed_path[PATH_MAX];

/* "@a/@b" into @buf; sysfs paths are short, but say so if one is not. */
static int join(char *buf, size_t len, const char *a, const char *b)
{
	int n = snprintf(buf, len, "%s/%s", a, b);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static void set_failed(const char *dir, const char *name)
{
	if (!name)
		name = "";
	if (join(failed_path, sizeof(failed_path), dir, name))
		snprintf(failed_path, sizeof(failed_path), "%s", VNET_SYSFS_CLASS);
	else if (!*name)
		failed_path[strlen(failed_path) - 1] = '\0';
}

/* Read a small attribute file, without its trailing newline. */
static int read_file(int dirfd, const char *name, char *buf, size_t len)
{
	ssize_t n;
	int fd, err;

	fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	err = errno;
	close(fd);
	if (n < 0)
		return -err;
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return 0;
}

static int parse_attr(const char *s, const struct attr_desc *d, void *obj)
{
	char *p = (char *)obj + d->off;
	unsigned long long u;
	long long v;
	char *end;

	if (d->kind == ATTR_STR) {
		snprintf(p, d->size, "%s", s);
		return 0;
	}
	if (!*s)
		return -EINVAL;
	errno = 0;
	if (d->kind == ATTR_S32) {
		v = strtoll(s, &end, 10);
		if (errno || *end || v < INT32_MIN || v > INT32_MAX)
			return -EINVAL;
		*(int32_t *)p = (int32_t)v;
		return 0;
	}
	if (*s == '-')
		return -EINVAL;
	u = strtoull(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	if (d->kind == ATTR_U32) {
		if (u > UINT32_MAX)
			return -EINVAL;
		*(uint32_t *)p = (uint32_t)u;
	} else {
		*(uint64_t *)p = u;
	}
	return 0;
}

static int read_attrs(int dirfd, const char *dir, const struct attr_desc *d,
		      size_t n, void *obj)
{
	char buf[128];
	size_t i;
	int err;

	for (i = 0; i < n; i++) {
		err = read_file(dirfd, d[i].name, buf, sizeof(buf));
		if (!err)
			err = parse_attr(buf, &d[i], obj);
		if (err) {
			set_failed(dir, d[i].name);
			return err;
		}
	}
	return 0;
}

/* Is @name all digits, as endpoint directories are? */
static bool is_index(const char *name)
{
	if (!*name)
		return false;
	for (; *name; name++)
		if (*name < '0' || *name > '9')
			return false;
	return true;
}

static int cmp_ep(const void *a, const void *b)
{
	const struct vnetctl_ep *x = a, *y = b;

	return (x->index > y->index) - (x->index < y->index);
}

static int cmp_nic(const void *a, const void *b)
{
	const struct vnetctl_nic *x = a, *y = b;

	return (x->nic_id > y->nic_id) - (x->nic_id < y->nic_id);
}

/* Gone between readdir and read: the endpoint was closed meanwhile. */
static bool vanished(int err)
{
	return err == -ENOENT || err == -ENODEV;
}

/* The creator's pid is for root only (0400): -1 for anyone else. */
static void read_pid(int dirfd, struct vnetctl_ep *ep)
{
	static const struct attr_desc pid = EP_ATTR(pid, ATTR_S32);
	char buf[32];

	ep->pid = -1;
	if (!read_file(dirfd, "pid", buf, sizeof(buf)))
		parse_attr(buf, &pid, ep);
}

/* Endpoint @name of the directory @epsfd (path @epsdir) into @ep. */
static int read_ep(int epsfd, const char *epsdir, const char *name,
		   struct vnetctl_ep *ep)
{
	char dir[PATH_MAX];
	int fd, err;

	memset(ep, 0, sizeof(*ep));
	ep->index = (uint32_t)strtoul(name, NULL, 10);
	if (join(dir, sizeof(dir), epsdir, name)) {
		set_failed(epsdir, NULL);
		return -ENAMETOOLONG;
	}
	fd = openat(epsfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		set_failed(dir, NULL);
		return -errno;
	}
	err = read_attrs(fd, dir, ep_attrs,
			 ARRAY_SIZE(ep_attrs), ep);
	if (!err)
		read_pid(fd, ep);
	close(fd);
	return err;
}

static int add_ep(struct vnetctl_nic *nic, size_t *cap,
		  const struct vnetctl_ep *ep)
{
	if (nic->nr_eps == *cap) {
		size_t n = *cap ? 2 * *cap : 16;
		struct vnetctl_ep *eps = realloc(nic->eps, n * sizeof(*eps));

		if (!eps)
			return -ENOMEM;
		nic->eps = eps;
		*cap = n;
	}
	nic->eps[nic->nr_eps++] = *ep;
	return 0;
}

/* Read (or with @count_only, just count) the endpoints of a NIC. */
static int read_eps(int nicfd, const char *nicdir, struct vnetctl_nic *nic,
		    bool count_only)
{
	char dir[PATH_MAX];
	struct dirent *de;
	size_t cap = 0;
	int fd, err = 0;
	DIR *d;

	if (join(dir, sizeof(dir), nicdir, EPS_DIR)) {
		set_failed(nicdir, NULL);
		return -ENAMETOOLONG;
	}
	fd = openat(nicfd, EPS_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	d = fd < 0 ? NULL : fdopendir(fd);
	if (!d) {
		err = -errno;
		if (fd >= 0)
			close(fd);
		set_failed(dir, NULL);
		return err;
	}
	while ((errno = 0, de = readdir(d))) {
		struct vnetctl_ep ep;

		if (!is_index(de->d_name))
			continue;
		if (count_only) {
			nic->nr_eps++;
			continue;
		}
		err = read_ep(fd, dir, de->d_name, &ep);
		if (vanished(err)) {
			err = 0;
			continue;
		}
		if (!err)
			err = add_ep(nic, &cap, &ep);
		if (err) {
			if (err == -ENOMEM)
				set_failed(dir, NULL);
			break;
		}
	}
	if (!de && errno && !err) {
		err = -errno;
		set_failed(dir, NULL);
	}
	closedir(d);
	if (nic->eps)
		qsort(nic->eps, nic->nr_eps, sizeof(*nic->eps), cmp_ep);
	return err;
}

const char *const vnetctl_stat_names[VNETCTL_NR_STATS] = {
	"packets_sent", "packets_received", "acks_sent", "acks_received",
	"nacks_sent_queue_full", "nacks_sent_not_resident",
	"nacks_received_queue_full", "nacks_received_not_resident",
	"retransmits", "resumes_sent", "resumes_received",
	"resume_retransmits", "returned_bad_tag", "returned_no_endpoint",
	"returned_unreachable", "returned_bad_segment", "returned_busy",
	"bad_frames", "bad_source", "duplicates_dropped", "stale_acks",
	"no_route", "rx_dropped", "tx_dropped", "mapper_sent",
	"mapper_received", "mapper_dropped", "nacks_sent_restart",
	"nacks_received_restart", "returned_too_large", "trains_sent",
	"fragments_sent", "trains_received", "fragments_received",
	"trains_dropped", "tx_copied_bytes", "tx_segment_bytes",
	"rx_gathered_bytes", "payload_copied_bytes", "returned_source_gone",
};

static int read_u64(int dirfd, const char *name, uint64_t *val)
{
	static const struct attr_desc d = { "", ATTR_U64, 0, 0 };
	char buf[32];
	int err = read_file(dirfd, name, buf, sizeof(buf));

	return err ? err : parse_attr(buf, &d, val);
}

/*
 * The counters of the fault breakdown, divisor first and each column's two
 * together, so that a column is as near one instant as two reads get.  A
 * module without a file leaves its column out.
 */
static void read_counters(int nicfd, struct vnetctl_counters *c)
{
	size_t i;

	for (i = 0; i < vnetctl_nr_cols; i++) {
		const struct vnetctl_col *col = &vnetctl_cols[i];

		if (col->den && read_u64(nicfd, col->den, &c->den[i]))
			continue;
		if (!read_u64(nicfd, col->num, &c->num[i]))
			c->present |= 1u << i;
	}
}

/* Optional files: a driver without them just shows less. */
static void read_transport(int nicfd, struct vnetctl_nic *nic)
{
	char buf[64], path[96];
	size_t i;

	if (!read_file(nicfd, "ifname", buf, sizeof(buf))) {
		buf[strcspn(buf, "\n")] = 0;
		snprintf(nic->ifname, sizeof(nic->ifname), "%s", buf);
	}
	/* Each on its own: a module older than this tool lacks some. */
	for (i = 0; i < VNETCTL_NR_STATS; i++) {
		snprintf(path, sizeof(path), "stats/%s", vnetctl_stat_names[i]);
		if (read_file(nicfd, path, buf, sizeof(buf)))
			continue;
		nic->stats[i] = strtoull(buf, NULL, 10);
		nic->stats_present |= 1ull << i;
	}
	nic->has_stats = nic->stats_present != 0;
}

static int read_nic(int classfd, const char *name, struct vnetctl_nic *nic,
		    bool with_eps)
{
	static const struct attr_desc count = {
		"nr_endpoints", ATTR_U64, offsetof(struct vnetctl_nic, endpoints), 0
	};
	char dir[PATH_MAX];
	int fd, err;

	memset(nic, 0, sizeof(*nic));
	snprintf(nic->name, sizeof(nic->name), "%s", name);
	if (join(dir, sizeof(dir), VNET_SYSFS_CLASS, name)) {
		set_failed(VNET_SYSFS_CLASS, NULL);
		return -ENAMETOOLONG;
	}
	fd = openat(classfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		set_failed(dir, NULL);
		return -errno;
	}
	err = read_attrs(fd, dir, nic_attrs,
			 ARRAY_SIZE(nic_attrs), nic);
	if (!err) {
		read_transport(fd, nic);
		read_counters(fd, &nic->counters);
	}
	if (!err && with_eps)
		err = read_eps(fd, dir, nic, false);
	/* A driver without the count file: count the directories. */
	if (!err && read_attrs(fd, dir, &count, 1, nic)) {
		if (with_eps) {
			nic->endpoints = nic->nr_eps;
		} else {
			err = read_eps(fd, dir, nic, true);
			nic->endpoints = nic->nr_eps;
			nic->nr_eps = 0;
		}
	}
	close(fd);
	if (err)
		vnetctl_nic_release(nic);
	return err;
}

/*
 * One NIC by directory name, and one endpoint by index: the watchdog of
 * vnet-bench paging uses these while the process may be stuck in a fault,
 * so they allocate no memory (without @with_eps, and with a driver that
 * has nr_endpoints).
 */
int vnetctl_read_nic(const char *name, struct vnetctl_nic *nic, bool with_eps)
{
	int fd, err;

	fd = open(VNET_SYSFS_CLASS, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		set_failed(VNET_SYSFS_CLASS, NULL);
		return -errno;
	}
	err = read_nic(fd, name, nic, with_eps);
	close(fd);
	return err;
}

int vnetctl_read_ep(const char *nic_name, uint32_t index,
		    struct vnetctl_ep *ep)
{
	char nicdir[PATH_MAX], dir[PATH_MAX], name[16];
	int fd, err;

	snprintf(name, sizeof(name), "%" PRIu32, index);
	if (join(nicdir, sizeof(nicdir), VNET_SYSFS_CLASS, nic_name) ||
	    join(dir, sizeof(dir), nicdir, EPS_DIR)) {
		set_failed(VNET_SYSFS_CLASS, NULL);
		return -ENAMETOOLONG;
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		set_failed(dir, NULL);
		return -errno;
	}
	err = read_ep(fd, dir, name, ep);
	close(fd);
	return err;
}

void vnetctl_nic_release(struct vnetctl_nic *nic)
{
	free(nic->eps);
	nic->eps = NULL;
	nic->nr_eps = 0;
}

void vnetctl_free_nics(struct vnetctl_nic *nics, size_t nr)
{
	size_t i;

	for (i = 0; i < nr; i++)
		vnetctl_nic_release(&nics[i]);
	free(nics);
}

/*
 * Every NIC, sorted by id.  -ENOENT: no /sys/class/vnet (module not
 * loaded); -ENODEV: the class is there but holds no NIC.
 */
int vnetctl_read_nics(struct vnetctl_nic **nicsp, size_t *nrp, bool with_eps)
{
	struct vnetctl_nic *nics = NULL;
	size_t nr = 0, cap = 0;
	struct dirent *de;
	int err = 0;
	DIR *d;

	*nicsp = NULL;
	*nrp = 0;
	d = opendir(VNET_SYSFS_CLASS);
	if (!d) {
		set_failed(VNET_SYSFS_CLASS, NULL);
		return -errno;
	}
	while ((errno = 0, de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (nr == cap) {
			struct vnetctl_nic *n;

			cap = cap ? 2 * cap : 4;
			n = realloc(nics, cap * sizeof(*n));
			if (!n) {
				err = -ENOMEM;
				set_failed(VNET_SYSFS_CLASS, NULL);
				break;
			}
			nics = n;
		}
		err = read_nic(dirfd(d), de->d_name, &nics[nr], with_eps);
		if (vanished(err)) {
			/* The module is going away under us. */
			err = 0;
			continue;
		}
		if (err)
			break;
		nr++;
	}
	if (!de && errno && !err) {
		err = -errno;
		set_failed(VNET_SYSFS_CLASS, NULL);
	}
	closedir(d);
	if (!err && !nr)
		err = -ENODEV;
	if (err) {
		vnetctl_free_nics(nics, nr);
		return err;
	}
	qsort(nics, nr, sizeof(*nics), cmp_nic);
	*nicsp = nics;
	*nrp = nr;
	return 0;
}

/* The NIC with id @nic_id, or -ENXIO; other errors as vnetctl_read_nics(). */
int vnetctl_find_nic(uint32_t nic_id, struct vnetctl_nic *nic, bool with_eps)
{
	struct vnetctl_nic *nics;
	size_t nr, i;
	int err;

	err = vnetctl_read_nics(&nics, &nr, with_eps);
	if (err)
		return err;
	err = -ENXIO;
	for (i = 0; i < nr; i++) {
		if (nics[i].nic_id != nic_id)
			continue;
		*nic = nics[i];
		memset(&nics[i], 0, sizeof(nics[i]));
		err = 0;
		break;
	}
	vnetctl_free_nics(nics, nr);
	return err;
}

/* Report a failure of the functions above; returns the exit status. */
int vnetctl_sysfs_error(int err)
{
	if (err == -ENOENT && !strcmp(failed_path, VNET_SYSFS_CLASS))
		vnetctl_msg("vnet module not loaded (no " VNET_SYSFS_CLASS ")");
	else if (err == -ENODEV)
		vnetctl_msg("no NIC in " VNET_SYSFS_CLASS);
	else
		vnetctl_err(err, "%s", failed_path);
	return VNETCTL_EXIT_FAIL;
}
