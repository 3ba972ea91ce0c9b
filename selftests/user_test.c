// SPDX-License-Identifier: GPL-2.0
/*
 * Protection between users: /dev/vnet is its group's (the udev rule: group
 * vnet, 0660), so a user outside it cannot open it; two unprivileged users
 * of that group share NIC 0.  One cannot learn the other's tag from
 * anything it may read, nor reach the other's endpoint without it, nor
 * take every endpoint (max_endpoints_per_user); and what an endpoint costs
 * the kernel is charged to its creator's memory cgroup.
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
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "vnet_util.h"

#define UID_A		61001	/* owns the endpoint */
#define UID_B		61002	/* tries to reach it */
#define UID_C		61003	/* runs into its limit */
#define UID_D		61004	/* is not held back by C's */
#define SCAN_DEPTH	8
#define SCAN_FILE_MAX	(1 << 20)

/*
 * Leave root for @uid for good: no capabilities, and of the supplementary
 * groups only /dev/vnet's when @member, as a user the site lets create
 * endpoints has.
 */
static int become_member(uid_t uid, bool member)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct caps[2];

	if (vnet_join_device_group(member) || setresgid(uid, uid, uid) ||
	    setresuid(uid, uid, uid))
		return -1;
	/* As after an exec: /proc/PID belongs to the user, not to root. */
	if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) ||
	    syscall(SYS_capget, &hdr, caps))
		return -1;
	return caps[0].effective || caps[1].effective ||
	       caps[0].permitted || caps[1].permitted ? -1 : 0;
}

static int become(uid_t uid)
{
	return become_member(uid, true);
}

/*
 * The device is not everyone's: a user outside its group cannot open it,
 * one in it can, and nobody but root can write its mode.
 */
TEST(device_is_its_group_s_alone)
{
	struct stat st;
	int status;
	pid_t pid;

	if (getuid())
		SKIP(return, "needs root to become other users");
	ASSERT_EQ(0, stat(VNET_DEVICE_PATH, &st));
	EXPECT_EQ(0, st.st_mode & 0007);
	EXPECT_NE(0, st.st_gid);
	EXPECT_EQ(0660, st.st_mode & 0777);

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		int fd;

		if (become_member(UID_B, false))
			_exit(10);
		fd = open(VNET_DEVICE_PATH, O_RDWR);
		if (fd >= 0 || errno != EACCES)
			_exit(11);
		if (!chmod(VNET_DEVICE_PATH, 0666) || errno != EPERM)
			_exit(12);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		int fd;

		if (become(UID_B))
			_exit(10);
		fd = open(VNET_DEVICE_PATH, O_RDWR);
		_exit(fd < 0 ? 11 : 0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
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

/* One byte through a pipe, to take turns between processes. */
static int signal_peer(int fd)
{
	return write(fd, "", 1) == 1 ? 0 : -1;
}

static int await_peer(int fd)
{
	char c;

	return read(fd, &c, 1) == 1 ? 0 : -1;
}

#define PER_USER	3
#define QUOTA_NIC	71

/*
 * max_endpoints_per_user set to PER_USER, and a second NIC on a veth pair,
 * since the limit holds for all NICs together.
 */
FIXTURE(quota) {
	const char *skip;		/* why, if the test cannot run */
	long long old;
	bool attached;
};

#define PER_USER_PARAM	"/sys/module/vnet/parameters/max_endpoints_per_user"

FIXTURE_SETUP(quota)
{
	struct vnet_attach att = { .ifname = "vqt0", .nic_id = QUOTA_NIC };
	char buf[16];
	int fd;

	/* A SKIP here would not keep the test from running. */
	if (getuid()) {
		self->skip = "needs root to become other users";
		return;
	}
	self->old = vnet_read_ll(PER_USER_PARAM);
	ASSERT_LT(0, self->old);
	snprintf(buf, sizeof(buf), "%d", PER_USER);
	ASSERT_EQ(0, vnet_write_str(PER_USER_PARAM, buf));
	ASSERT_EQ(0, system("ip link add vqt0 type veth peer name vqt1 && "
			    "ip link set vqt0 up"));
	fd = open(VNET_DEVICE_PATH, O_RDWR);
	ASSERT_LE(0, fd);
	EXPECT_EQ(0, ioctl(fd, VNET_IOC_ATTACH, &att));
	self->attached = !ioctl(fd, VNET_IOC_NIC_INFO,
				&(struct vnet_nic_info){ .index = 1 });
	close(fd);
	ASSERT_TRUE(self->attached);
}

FIXTURE_TEARDOWN(quota)
{
	uint32_t id = QUOTA_NIC;
	char buf[32];
	int fd;

	if (self->attached) {
		fd = open(VNET_DEVICE_PATH, O_RDWR);
		EXPECT_EQ(0, ioctl(fd, VNET_IOC_DETACH, &id));
		close(fd);
	}
	EXPECT_EQ(0, system("ip link del vqt0 2>/dev/null || true"));
	if (self->old > 0) {
		snprintf(buf, sizeof(buf), "%lld", self->old);
		EXPECT_EQ(0, vnet_write_str(PER_USER_PARAM, buf));
	}
}

enum quota_failure {
	QUOTA_SETUP = 30,
	QUOTA_BELOW_LIMIT_REFUSED,
	QUOTA_NOT_ENFORCED,
	QUOTA_NOT_GIVEN_BACK,
};

/*
 * As @uid: fill the limit on both NICs and be refused on either.  With a
 * parent to wait for (@to_parent >= 0), then close one and get one again.
 */
static int fill_quota(uid_t uid, int to_parent, int from_parent)
{
	static const uint32_t nics[PER_USER] = { 0, QUOTA_NIC, 0 };
	struct vnet_endpoint eps[PER_USER], extra;
	int i;

	if (become(uid))
		return QUOTA_SETUP;
	for (i = 0; i < PER_USER; i++)
		if (vnet_endpoint_open(&eps[i], nics[i]))
			return QUOTA_BELOW_LIMIT_REFUSED;
	if (vnet_endpoint_open(&extra, 0) != -EDQUOT ||
	    vnet_endpoint_open(&extra, QUOTA_NIC) != -EDQUOT)
		return QUOTA_NOT_ENFORCED;
	if (to_parent < 0)
		return 0;
	/* Hold them while the other user creates its own. */
	if (signal_peer(to_parent) || await_peer(from_parent))
		return QUOTA_SETUP;
	vnet_endpoint_close(&eps[1]);
	if (vnet_endpoint_open(&eps[1], 0))
		return QUOTA_NOT_GIVEN_BACK;
	return 0;
}

TEST_F(quota, per_user_limit)
{
	int up[2], down[2];
	pid_t c, d;

	if (self->skip)
		SKIP(return, "%s", self->skip);
	ASSERT_EQ(0, pipe(up));
	ASSERT_EQ(0, pipe(down));
	c = fork();
	ASSERT_LE(0, c);
	if (!c) {
		close(up[0]);
		close(down[1]);
		_exit(fill_quota(UID_C, up[1], down[0]));
	}
	close(up[1]);
	close(down[0]);
	ASSERT_EQ(0, await_peer(up[0]));

	/* C is at its limit; D has a limit of its own. */
	d = fork();
	ASSERT_LE(0, d);
	if (!d)
		_exit(fill_quota(UID_D, -1, -1));
	EXPECT_EQ(0, exit_code(d));

	EXPECT_EQ(0, signal_peer(down[1]));
	EXPECT_EQ(0, exit_code(c));
	close(up[0]);
	close(down[1]);
}

/* Enough that the frame images alone outweigh the charge batch below. */
#define MEMCG_EPS	32
/*
 * memory.current moves in batches: a charge takes up to 64 pages at once
 * (MEMCG_CHARGE_BATCH) and keeps the rest for the next ones.
 */
#define MEMCG_SLACK	(64LL * 4096)
#define MEMCG_DIR	"vnet_user_test"

/* The cgroup v2 hierarchy with the memory controller, mounted if need be. */
#define CG_ROOT_MAX	200
#define CG_PATH_MAX	256

static int memcg_root(char root[CG_ROOT_MAX], const char **why)
{
	char dev[64], dir[CG_ROOT_MAX], type[32], line[512];
	bool found = false;
	FILE *f = fopen("/proc/mounts", "r");

	while (f && !found && fgets(line, sizeof(line), f))
		found = sscanf(line, "%63s %199s %31s", dev, dir, type) == 3 &&
			!strcmp(type, "cgroup2");
	if (f)
		fclose(f);
	if (!found) {
		snprintf(dir, sizeof(dir), "/sys/fs/cgroup");
		if (mount("none", dir, "cgroup2", 0, NULL)) {
			*why = "cannot mount cgroup2 on /sys/fs/cgroup";
			return -1;
		}
	}
	strcpy(root, dir);
	snprintf(line, sizeof(line), "%s/cgroup.controllers", root);
	f = fopen(line, "r");
	found = f && fgets(line, sizeof(line), f) && strstr(line, "memory");
	if (f)
		fclose(f);
	if (!found) {
		*why = "no memory controller in cgroup v2";
		return -1;
	}
	snprintf(line, sizeof(line), "%s/cgroup.subtree_control", root);
	vnet_write_str(line, "+memory");
	return 0;
}

/* "@key N" of the cgroup's memory.stat, or memory.current for NULL. */
static long long memcg_read(const char *cg, const char *key)
{
	char path[CG_PATH_MAX + 32], line[256];
	long long val = -1;
	size_t len;
	FILE *f;

	if (!key) {
		snprintf(path, sizeof(path), "%s/memory.current", cg);
		return vnet_read_ll(path);
	}
	len = strlen(key);
	snprintf(path, sizeof(path), "%s/memory.stat", cg);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, len) && line[len] == ' ')
			val = strtoll(line + len + 1, NULL, 10);
	if (f)
		fclose(f);
	return val;
}

/* In cgroup @cg: open MEMCG_EPS endpoints, then close them, on cue. */
static int memcg_child(const char *cg, int to_parent, int from_parent)
{
	struct vnet_endpoint eps[MEMCG_EPS];
	char path[CG_PATH_MAX + 32];
	int i;

	snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
	if (vnet_write_str(path, "0") || signal_peer(to_parent) ||
	    await_peer(from_parent))
		return 1;
	for (i = 0; i < MEMCG_EPS; i++)
		if (vnet_endpoint_open(&eps[i], 0))
			return 2;
	if (signal_peer(to_parent) || await_peer(from_parent))
		return 1;
	for (i = 0; i < MEMCG_EPS; i++)
		vnet_endpoint_close(&eps[i]);
	if (signal_peer(to_parent) || await_peer(from_parent))
		return 1;
	return 0;
}

FIXTURE(memcg) {
	const char *skip;		/* why, if the test cannot run */
	char cg[CG_PATH_MAX];
};

FIXTURE_SETUP(memcg)
{
	char root[CG_ROOT_MAX];

	self->cg[0] = 0;
	/* A SKIP here would not keep the test from running. */
	if (memcg_root(root, &self->skip))
		return;
	snprintf(self->cg, sizeof(self->cg), "%s/" MEMCG_DIR, root);
	rmdir(self->cg);
	ASSERT_EQ(0, mkdir(self->cg, 0755));
}

FIXTURE_TEARDOWN(memcg)
{
	if (self->cg[0])
		rmdir(self->cg);
}

/*
 * The staging area and the frame image, at least, of every endpoint: the
 * staging area is also in memory.stat's vmalloc.
 */
TEST_F(memcg, endpoint_memory_is_charged)
{
	const long long per_ep = VNET_STAGING_SIZE + VNET_FRAME_SIZE;
	long long cur0, vm0, cur1, vm1, cur2, vm2;
	int up[2], down[2];
	pid_t pid;

	if (self->skip)
		SKIP(return, "%s", self->skip);
	ASSERT_EQ(0, pipe(up));
	ASSERT_EQ(0, pipe(down));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(up[0]);
		close(down[1]);
		_exit(memcg_child(self->cg, up[1], down[0]));
	}
	/* A child that fails early is seen as the end of the pipe. */
	close(up[1]);
	close(down[0]);

	ASSERT_EQ(0, await_peer(up[0]));
	cur0 = memcg_read(self->cg, NULL);
	vm0 = memcg_read(self->cg, "vmalloc");
	ASSERT_EQ(0, signal_peer(down[1]));
	ASSERT_EQ(0, await_peer(up[0]));
	cur1 = memcg_read(self->cg, NULL);
	vm1 = memcg_read(self->cg, "vmalloc");
	ASSERT_EQ(0, signal_peer(down[1]));
	ASSERT_EQ(0, await_peer(up[0]));
	cur2 = memcg_read(self->cg, NULL);
	vm2 = memcg_read(self->cg, "vmalloc");
	ASSERT_EQ(0, signal_peer(down[1]));
	EXPECT_EQ(0, exit_code(pid));

	TH_LOG("memory.current %lld -> %lld -> %lld, vmalloc %lld -> %lld -> %lld",
	       cur0, cur1, cur2, vm0, vm1, vm2);
	ASSERT_LE(0, cur0);
	ASSERT_LE(0, vm0);
	EXPECT_LE(MEMCG_EPS * per_ep - MEMCG_SLACK, cur1 - cur0);
	EXPECT_LE(MEMCG_EPS * (long long)VNET_STAGING_SIZE, vm1 - vm0);
	/* Closing gives it back. */
	EXPECT_GT(MEMCG_EPS * per_ep / 2, cur2 - cur0);
	EXPECT_GT(MEMCG_EPS * (long long)VNET_STAGING_SIZE / 2, vm2 - vm0);
}

TEST_HARNESS_MAIN
