// SPDX-License-Identifier: GPL-2.0
/*
 * Protection between users: two unprivileged users share /dev/vnet (mode
 * 0666) and NIC 0.  One cannot learn the other's tag from anything it may
 * read, nor reach the other's endpoint without it.
 */
#define _GNU_SOURCE		/* setresuid(), memmem() */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/capability.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "vnet_util.h"

#define UID_A		61001	/* owns the endpoint */
#define UID_B		61002	/* tries to reach it */
#define SCAN_DEPTH	8
#define SCAN_FILE_MAX	(1 << 20)

/* Leave root for @uid for good: no capabilities, no supplementary groups. */
static int become(uid_t uid)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct caps[2];

	if (setgroups(0, NULL) || setresgid(uid, uid, uid) ||
	    setresuid(uid, uid, uid))
		return -1;
	/* As after an exec: /proc/PID belongs to the user, not to root. */
	if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) ||
	    syscall(SYS_capget, &hdr, caps))
		return -1;
	return caps[0].effective || caps[1].effective ||
	       caps[0].permitted || caps[1].permitted ? -1 : 0;
}

/* What the owner tells the test harness (not the other user). */
struct victim {
	struct vnet_name name;
	uint64_t tag;
	pid_t pid;
};

/* Every way the tag could be written down. */
struct scan {
	char needle[6][24];
	size_t len[6];
	pid_t victim_pid;
	unsigned int files;		/* read successfully */
	unsigned int ep_files;		/* of them, the victim's sysfs ones */
	char ep_dir[64];
	char found[PATH_MAX];
};

static void scan_init(struct scan *sc, const struct victim *v)
{
	uint64_t be = __builtin_bswap64(v->tag);
	int i = 0;

	memset(sc, 0, sizeof(*sc));
	sc->len[i++] = snprintf(sc->needle[0], 24, "%" PRIx64, v->tag);
	sc->len[i++] = snprintf(sc->needle[1], 24, "%" PRIX64, v->tag);
	sc->len[i++] = snprintf(sc->needle[2], 24, "%" PRIu64, v->tag);
	sc->len[i++] = snprintf(sc->needle[3], 24, "%" PRId64, (int64_t)v->tag);
	memcpy(sc->needle[4], &v->tag, 8);
	sc->len[i++] = 8;
	memcpy(sc->needle[5], &be, 8);
	sc->len[i++] = 8;
	sc->victim_pid = v->pid;
	snprintf(sc->ep_dir, sizeof(sc->ep_dir), "/vnet%u/endpoints/%u/",
		 v->name.nic, v->name.ep);
}

static bool scan_file(struct scan *sc, const char *path)
{
	static char buf[SCAN_FILE_MAX];
	size_t len = 0;
	ssize_t n;
	int fd, i;

	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return false;
	while (len < sizeof(buf) &&
	       (n = read(fd, buf + len, sizeof(buf) - len)) > 0)
		len += n;
	close(fd);
	sc->files++;
	if (strstr(path, sc->ep_dir))
		sc->ep_files++;
	for (i = 0; i < 6; i++) {
		if (memmem(buf, len, sc->needle[i], sc->len[i])) {
			snprintf(sc->found, sizeof(sc->found), "%s", path);
			return true;
		}
	}
	return false;
}

/*
 * Other processes' /proc directories cannot hold the tag (only the owner
 * and the kernel know it), and ours holds it in our memory: of the pid
 * directories only the owner's is read.
 */
static bool skip_proc_entry(const struct scan *sc, const char *name)
{
	char *end;
	long pid = strtol(name, &end, 10);

	return !*end && pid != sc->victim_pid;
}

static bool scan_dir(struct scan *sc, const char *dir, int depth)
{
	bool found = false;
	struct dirent *de;
	DIR *d = opendir(dir);

	if (!d)
		return false;
	while (!found && (de = readdir(d))) {
		char path[PATH_MAX];
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (!strcmp(dir, "/proc") && skip_proc_entry(sc, de->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (lstat(path, &st))
			continue;
		if (S_ISDIR(st.st_mode) && depth < SCAN_DEPTH)
			found = scan_dir(sc, path, depth + 1);
		else if (S_ISREG(st.st_mode))
			found = scan_file(sc, path);
	}
	closedir(d);
	return found;
}

/* Everything vnet shows, debugfs if we may, and /proc. */
static bool scan_all(struct scan *sc)
{
	static const char * const roots[] = {
		"/sys/module/vnet", "/sys/kernel/debug", "/proc",
	};
	char real[PATH_MAX], path[PATH_MAX];
	struct dirent *de;
	bool found = false;
	unsigned int i;
	DIR *d;

	/* /sys/class/vnet/ holds symbolic links to the NICs' directories. */
	d = opendir("/sys/class/vnet");
	while (d && !found && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/class/vnet/%s", de->d_name);
		if (realpath(path, real))
			found = scan_dir(sc, real, 0);
	}
	if (d)
		closedir(d);
	for (i = 0; !found && i < ARRAY_SIZE(roots); i++)
		found = scan_dir(sc, roots[i], 0);
	return found;
}

/* The next returned message on @ep, within 10 s: its reason, or -1. */
static int next_return(struct vnet_endpoint *ep)
{
	double deadline = vnet_now() + 10;
	const struct vnet_desc *d;
	int reason;

	while (!(d = vnet_endpoint_peek(ep, VNET_Q_REP_RECV))) {
		if (vnet_now() > deadline)
			return -1;
		vnet_endpoint_wait(ep, 100);
	}
	reason = d->flags & VNET_DESC_RETURNED ? d->status : -1;
	vnet_endpoint_consume(ep, VNET_Q_REP_RECV);
	return reason;
}

/*
 * Map @slot at the victim with @tag and send it a short request and a bulk
 * transfer into its segment: both must come back for their tag.
 */
static int try_tag(struct vnet_endpoint *ep, const struct victim *v,
		   uint32_t slot, uint64_t tag)
{
	struct vnet_desc req = vnet_short(1, slot, 0xbad, 0xbad);
	struct vnet_desc xfer = vnet_short(2, slot, 0xbad, 0xbad);
	uint8_t payload[256];

	memset(payload, 0xa5, sizeof(payload));
	xfer.flags = VNET_DESC_XFER;
	xfer.len = sizeof(payload);
	if (vnet_endpoint_map(ep, slot, v->name, tag) ||
	    vnet_endpoint_post(ep, VNET_Q_REQ_SEND, &req, NULL, 0) ||
	    vnet_endpoint_post(ep, VNET_Q_REQ_SEND, &xfer, payload,
			       sizeof(payload)))
		return -1;
	if (next_return(ep) != VNET_RET_BAD_TAG ||
	    next_return(ep) != VNET_RET_BAD_TAG) {
		fprintf(stderr, "# tag 0x%016" PRIx64 " not refused\n", tag);
		return -1;
	}
	return 0;
}

enum attacker_failure {
	ATTACK_SETUP = 10,
	ATTACK_TAG_SEEN,
	ATTACK_SCAN_BLIND,
	ATTACK_OWNER_SEEN,
	ATTACK_ROUTES_SEEN,
	ATTACK_REACHED,
};

/* The creator's pid in sysfs is root's business (0400). */
static bool owner_readable(const struct victim *v)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "/sys/class/vnet/vnet%u/endpoints/%u/pid",
		 v->name.nic, v->name.ep);
	fd = open(path, O_RDONLY);
	if (fd >= 0)
		close(fd);
	return fd >= 0 || errno != EACCES;
}

static int attacker(int from_victim, int to_victim)
{
	struct vnet_route_list routes = { .nic_id = 0 };
	struct vnet_endpoint ep;
	uint64_t guesses[12];
	struct scan sc;
	struct victim v;
	unsigned int i, n = 0;
	int ret = 0;

	if (read(from_victim, &v, sizeof(v)) != sizeof(v) || become(UID_B))
		return ATTACK_SETUP;

	scan_init(&sc, &v);
	if (scan_all(&sc)) {
		fprintf(stderr, "# the tag is readable in %s\n", sc.found);
		return ATTACK_TAG_SEEN;
	}
	/* A scan that read nothing proves nothing. */
	fprintf(stderr, "# read %u files, %u of the endpoint's sysfs\n",
		sc.files, sc.ep_files);
	if (sc.files < 100 || sc.ep_files < 4)
		return ATTACK_SCAN_BLIND;
	if (owner_readable(&v))
		return ATTACK_OWNER_SEEN;

	if (vnet_endpoint_open(&ep, 0))
		return ATTACK_SETUP;
	routes.count = 0;
	if (ioctl(ep.fd, VNET_IOC_ROUTE_LIST, &routes) != -1 || errno != EPERM)
		ret = ATTACK_ROUTES_SEEN;

	guesses[n++] = VNET_TAG_NONE;
	guesses[n++] = VNET_TAG_ANY;
	for (i = 0; i < 4; i++)		/* what the benchmarks once used */
		guesses[n++] = 0x766e657462000000ULL + i;
	guesses[n++] = 0x766e657477000000ULL;
	guesses[n++] = v.tag ^ 1;
	guesses[n++] = ~v.tag;
	if (vnet_tag_random(&guesses[n++]))
		return ATTACK_SETUP;
	for (i = 0; !ret && i < n; i++)
		if (guesses[i] != v.tag && try_tag(&ep, &v, i, guesses[i]))
			ret = ATTACK_REACHED;
	vnet_endpoint_close(&ep);
	if (write(to_victim, "", 1) != 1)
		return ATTACK_SETUP;
	return ret;
}

enum victim_failure {
	VICTIM_SETUP = 20,
	VICTIM_GOT_REQUEST,
	VICTIM_SEGMENT_WRITTEN,
};

static int victim(int to_attacker, int from_attacker)
{
	static uint8_t seg[4 * VNET_MEDIUM_MAX];
	struct vnet_seg s = { (uintptr_t)seg, sizeof(seg) };
	struct vnet_endpoint ep;
	struct vnet_ep_stat st;
	struct victim v = { .pid = getpid() };
	size_t i;
	char done;

	if (become(UID_A) || vnet_endpoint_open(&ep, 0) ||
	    vnet_tag_random(&v.tag) || vnet_endpoint_set_tag(&ep, v.tag) ||
	    ioctl(ep.fd, VNET_IOC_SET_SEG, &s))
		return VICTIM_SETUP;
	v.name = ep.name;
	if (write(to_attacker, &v, sizeof(v)) != sizeof(v) ||
	    read(from_attacker, &done, 1) != 1)
		return VICTIM_SETUP;
	if (vnet_endpoint_peek(&ep, VNET_Q_REQ_RECV) ||
	    ioctl(ep.fd, VNET_IOC_EP_STAT, &st) || st.received)
		return VICTIM_GOT_REQUEST;
	for (i = 0; i < sizeof(seg); i++)
		if (seg[i])
			return VICTIM_SEGMENT_WRITTEN;
	vnet_endpoint_close(&ep);
	return 0;
}

static int exit_code(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

FIXTURE(users) {
	int unused;
};

FIXTURE_SETUP(users)
{
}

FIXTURE_TEARDOWN(users)
{
}

/* The scan reads a few thousand files: slow under emulation. */
TEST_F_TIMEOUT(users, tag_is_secret_and_unreachable, 180)
{
	int a2b[2], b2a[2];
	pid_t a, b;

	if (getuid())
		SKIP(return, "needs root to become two users");

	ASSERT_EQ(0, pipe(a2b));
	ASSERT_EQ(0, pipe(b2a));
	a = fork();
	ASSERT_LE(0, a);
	if (!a) {
		/* Only the other side's exit may end a read: close the rest. */
		close(a2b[0]);
		close(b2a[1]);
		_exit(victim(a2b[1], b2a[0]));
	}
	b = fork();
	ASSERT_LE(0, b);
	if (!b) {
		close(a2b[1]);
		close(b2a[0]);
		_exit(attacker(a2b[0], b2a[1]));
	}
	close(a2b[0]);
	close(a2b[1]);
	close(b2a[0]);
	close(b2a[1]);
	EXPECT_EQ(0, exit_code(b));
	EXPECT_EQ(0, exit_code(a));
}

TEST_HARNESS_MAIN
