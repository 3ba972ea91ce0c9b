// SPDX-License-Identifier: GPL-2.0
/*
 * A stateful torture of the whole /dev/vnet ABI, for a fixed time.
 *
 * Honest client/server pairs (torture_ledger.c) exchange well-formed
 * messages on the overcommitted loopback NIC and across a veth pair that
 * netem makes lossy, booking every request in an exactly-once ledger.
 * Beside them chaos processes (torture_chaos.c), each as a user of its
 * own, do random valid and invalid things with endpoints on every NIC;
 * this process kills them with SIGKILL at random moments and starts new
 * ones; an admin process (torture_admin.c) detaches and attaches the NICs
 * of a second veth pair, changes routes, parameters and links, and tries
 * to remove the module.  Two more honest pairs (torture_lives.c) cross
 * that second pair, open new endpoints whenever a detach ends the old
 * ones, and keep books of their own across those lives.  Once the time is up, chaos
 * stops, the ledger drains, and the test holds the books to the ABI's
 * promises, checks that every process was reaped and no endpoint is left,
 * and prints what happened.
 *
 * Every decision comes from a PRNG seeded from one number, printed first;
 * VNET_TORTURE_SEED=N seeds every process as before, VNET_TORTURE_SECONDS=S
 * runs for S seconds (60 by default).  A chaos process draws each step
 * from a seed of its own, so its n-th step decides the same whatever the
 * earlier ones met; how many steps it gets, which the kills and the
 * timing decide, and what its calls meet are the machine's.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "vnet_util.h"
#include "torture.h"

#define T_NETEM		"loss 10% duplicate 2% delay 1ms reorder 25% corrupt 1%"
#define T_CHAOS_NETEM	"loss 5% duplicate 1%"
#define T_PARAMS	"/sys/module/vnet/parameters/"
#define T_SECONDS	60

const char *const t_op_name[T_OP_NR] = {
	"create", "create_bad", "close", "set_tag", "map", "map_bad", "unmap",
	"set_seg", "set_seg_bad", "drop_seg", "send", "send_bad", "recv",
	"garbage", "munmap", "mremap", "mmap", "mmap_bad", "ioctl_bad",
	"fork", "race", "exit", "kill9", "detach", "attach", "route",
	"admin_bad", "rmmod", "param", "priv", "link",
};

const char *t_reason(unsigned int status)
{
	static const char *const name[VNET_RET_NR + 1] = {
		"none", "bad_tag", "no_slot", "no_endpoint", "bad_desc",
		"bad_token", "unreachable", "bad_segment", "too_large", "busy",
		"source_gone", "other",
	};

	return name[status < VNET_RET_NR ? status : VNET_RET_NR];
}

double t_now(void)
{
	return vnet_now();
}

uint32_t t_sum(const void *buf, uint32_t len)
{
	const uint8_t *p = buf;
	uint32_t sum = 0x811c9dc5;

	while (len--)
		sum = (sum ^ *p++) * 0x01000193;
	return sum;
}

/* Bytes from @seed into @buf; their t_sum(). */
uint32_t t_fill(void *buf, uint32_t len, uint32_t seed)
{
	uint8_t *p = buf;
	uint32_t i;

	for (i = 0; i < len; i++) {
		seed = seed * 1103515245u + 12345u;
		p[i] = seed >> 16;
	}
	return t_sum(buf, len);
}

void t_violation(struct t_ctl *ctl, const char *fmt, ...)
{
	char msg[sizeof(ctl->note[0])];
	va_list ap;
	int n;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	n = __atomic_fetch_add(&ctl->violations, 1, __ATOMIC_RELAXED);
	if (n < 20)
		t_say("# violation: %s", msg);
	if (n < T_NOTES)
		memcpy(ctl->note[n], msg, sizeof(msg));
}

void t_expect(struct t_ctl *ctl, uint64_t seed, int op, int err, ...)
{
	va_list ap;
	int v, ok = 0;

	va_start(ap, err);
	while ((v = va_arg(ap, int)) != T_END)
		ok |= v == err;
	va_end(ap);
	t_count(ctl, op, err);
	if (!ok)
		t_violation(ctl, "seed %llu: %s: %s", (unsigned long long)seed,
			    t_op_name[op], err ? strerror(err) : "succeeded");
}

static int t_sh(const char *cmd)
{
	int st;

	fflush(stdout);
	st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static long long t_nic(uint32_t nic, const char *attr)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/class/vnet/vnet%u/%s", nic, attr);
	return vnet_read_ll(path);
}

static void t_wire_down(void)
{
	uint32_t id;
	int fd = open(VNET_DEVICE_PATH, O_RDWR | O_CLOEXEC);

	for (id = T_NIC_A; fd >= 0 && id <= T_NIC_D; id++)
		ioctl(fd, VNET_IOC_DETACH, &id);
	if (fd >= 0)
		close(fd);
	t_sh("ip link del " T_IF_A " 2>/dev/null; ip link del " T_IF_C
	     " 2>/dev/null");
}

/* The ledger's lossy pair, A and B, and the chaos pair, C and D. */
static int t_wire_up(void)
{
	static const char *const ifs[] = { T_IF_A, T_IF_B, T_IF_C, T_IF_D };
	int fd, i, err = 0;

	if (t_sh("modprobe veth 2>/dev/null; modprobe sch_netem 2>/dev/null; "
		 "ip link add " T_IF_A " type veth peer name " T_IF_B " && "
		 "ip link add " T_IF_C " type veth peer name " T_IF_D " && "
		 "ip link set " T_IF_A " up && ip link set " T_IF_B " up && "
		 "ip link set " T_IF_C " mtu 9000 up && "
		 "ip link set " T_IF_D " mtu 9000 up && "
		 "tc qdisc add dev " T_IF_A " root netem " T_NETEM " && "
		 "tc qdisc add dev " T_IF_B " root netem " T_NETEM " && "
		 "tc qdisc add dev " T_IF_C " root netem " T_CHAOS_NETEM))
		return -1;
	fd = open(VNET_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -1;
	for (i = 0; i < 4 && !err; i++)
		err = t_attach(fd, ifs[i], T_NIC_A + i, T_WIRE_FRAMES);
	for (i = 0; i < 4 && !err; i++)
		err = t_route(fd, VNET_IOC_ROUTE_ADD, T_NIC_A + i,
			      T_NIC_A + (i ^ 1), ifs[i ^ 1]);
	close(fd);
	return err ? -1 : 0;
}

FIXTURE(torture) {
	char max_retries[32];
};

FIXTURE_SETUP(torture)
{
	FILE *f = fopen(T_PARAMS "max_retries", "r");
	int err;

	ASSERT_NE(NULL, f);
	ASSERT_NE(NULL, fgets(self->max_retries, sizeof(self->max_retries), f));
	fclose(f);
	/*
	 * Five seconds of silence before "unreachable", as wire_test's
	 * overcommitted test has: a debug guest can go a second without
	 * running a NIC's thread.  A NIC takes the value when attached.
	 */
	ASSERT_EQ(0, vnet_write_str(T_PARAMS "max_retries", "250"));
	t_wire_down();
	err = t_wire_up();
	/* A failed setup gets no teardown: undo what it did here. */
	if (err) {
		t_wire_down();
		vnet_write_str(T_PARAMS "max_retries", self->max_retries);
	}
	ASSERT_EQ(0, err);
}

FIXTURE_TEARDOWN(torture)
{
	t_wire_down();
	vnet_write_str(T_PARAMS "max_retries", self->max_retries);
}

static unsigned long long t_env(const char *name, unsigned long long def)
{
	const char *v = getenv(name);

	return v && *v ? strtoull(v, NULL, 0) : def;
}

/* What the run starts and must reap. */
struct t_procs {
	pid_t honest, admin, chaos[T_CHAOS];
	pid_t hung[T_CHAOS];		/* reported hung already */
	uint32_t generation;		/* chaos processes started so far */
	uint32_t killed, exited, reaped, orphans;
};

static pid_t t_spawn_chaos(struct t_ctl *ctl, struct t_procs *pr, int slot)
{
	uint64_t seed = t_seed_of(ctl->seed, T_ROLE_CHAOS, pr->generation++);
	pid_t pid;

	/* Alive as of now: its first step may take a while. */
	__atomic_store_n(&ctl->beat[slot].steps, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&ctl->beat[slot].at_ms, t_now_ms(), __ATOMIC_RELEASE);
	fflush(stdout);
	pid = fork();
	if (!pid)
		t_chaos_run(ctl, seed, slot);
	pr->chaos[slot] = pid > 0 ? pid : 0;
	return pid;
}

/* One child gone: which it was and how it ended. */
static void t_reaped(struct t_ctl *ctl, struct t_procs *pr, pid_t pid,
		     int status, bool respawn)
{
	int i;

	pr->reaped++;
	if (pid == pr->honest || pid == pr->admin) {
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			t_violation(ctl, "%s process ended with status %#x",
				    pid == pr->admin ? "admin" : "honest",
				    status);
		if (pid == pr->admin)
			pr->admin = 0;
		else
			pr->honest = 0;
		return;
	}
	for (i = 0; i < T_CHAOS; i++)
		if (pr->chaos[i] == pid)
			break;
	if (i == T_CHAOS) {
		/*
		 * A chaos process's child, outliving it for a moment: it
		 * exits, or dies with its parent (PR_SET_PDEATHSIG), as the
		 * children its parent reaps must.
		 */
		pr->orphans++;
		if (!(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) &&
		    !(WIFEXITED(status) && !WEXITSTATUS(status)))
			t_violation(ctl, "a chaos process's child, orphaned, "
				    "ended with status %#x", status);
		return;
	}
	pr->chaos[i] = 0;
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
		pr->killed++;
	else if (WIFEXITED(status) && !WEXITSTATUS(status))
		pr->exited++;
	else
		t_violation(ctl, "a chaos process ended with status %#x",
			    status);
	if (respawn)
		t_spawn_chaos(ctl, pr, i);
}

static void t_reap(struct t_ctl *ctl, struct t_procs *pr, bool respawn)
{
	int status;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
		t_reaped(ctl, pr, pid, status, respawn);
}

/* Wait up to @seconds for every child to be reaped; true if they were. */
static bool t_reap_all(struct t_ctl *ctl, struct t_procs *pr, double seconds)
{
	double deadline = t_now() + seconds;
	int status;
	pid_t pid;

	for (;;) {
		pid = waitpid(-1, &status, WNOHANG);
		if (pid > 0) {
			t_reaped(ctl, pr, pid, status, false);
			continue;
		}
		if (pid < 0 && errno == ECHILD)
			return true;
		if (t_now() > deadline)
			return false;
		usleep(10000);
	}
}

/* The kernel stack of every thread of process @pid. */
static void t_stack(const char *pid)
{
	char path[300], line[256];
	struct dirent *d;
	DIR *task;

	snprintf(path, sizeof(path), "/proc/%s/task", pid);
	task = opendir(path);
	while (task && (d = readdir(task))) {
		FILE *f;

		if (d->d_name[0] == '.')
			continue;
		t_say("#  thread %s:", d->d_name);
		snprintf(path, sizeof(path), "/proc/%s/task/%s/stack", pid,
			 d->d_name);
		f = fopen(path, "r");
		while (f && fgets(line, sizeof(line), f))
			t_say("#   %s", strtok(line, "\n"));
		if (f)
			fclose(f);
	}
	if (task)
		closedir(task);
}

/* Children still there: the kernel stacks of those that will not go. */
static void t_stuck(void)
{
	char path[300];
	struct dirent *d;
	DIR *proc = opendir("/proc");

	while (proc && (d = readdir(proc))) {
		FILE *f;
		int ppid = -1;

		snprintf(path, sizeof(path), "/proc/%s/stat", d->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fscanf(f, "%*d %*s %*c %d", &ppid) != 1)
			ppid = -1;
		fclose(f);
		if (ppid != getpid())
			continue;
		t_say("# child %s did not exit; its kernel stacks:", d->d_name);
		t_stack(d->d_name);
	}
	if (proc)
		closedir(proc);
}

/* Seconds since chaos slot @i last finished a step. */
static double t_quiet(struct t_ctl *ctl, int i)
{
	uint64_t at = __atomic_load_n(&ctl->beat[i].at_ms, __ATOMIC_ACQUIRE);

	return ((double)t_now_ms() - at) / 1000;
}

/*
 * A chaos process that has not finished a step for T_STALE_S is hung in
 * the driver, or in something of its own the driver made wait: a
 * violation, with its stacks, before anyone kills it.  True if it was.
 */
static bool t_hung(struct t_ctl *ctl, struct t_procs *pr, int i)
{
	char pid[16];
	double quiet = t_quiet(ctl, i);

	if (pr->chaos[i] <= 0 || quiet < T_STALE_S ||
	    pr->hung[i] == pr->chaos[i])
		return false;
	pr->hung[i] = pr->chaos[i];
	t_violation(ctl, "chaos process %d (slot %d) hung: no step for %.0f s "
		    "after %llu", pr->chaos[i], i, quiet,
		    (unsigned long long)ctl->beat[i].steps);
	snprintf(pid, sizeof(pid), "%d", pr->chaos[i]);
	t_stack(pid);
	return true;
}

/* The resident counts never pass the frames, whatever runs. */
static void t_sample(struct t_ctl *ctl, long long *max_eps)
{
	static const uint32_t nics[] = { 0, T_NIC_A, T_NIC_B };
	long long eps = t_nic(0, "nr_endpoints");
	unsigned int i;

	if (eps > *max_eps)
		*max_eps = eps;
	for (i = 0; i < sizeof(nics) / sizeof(nics[0]); i++) {
		long long resident = t_nic(nics[i], "resident");
		long long frames = t_nic(nics[i], "frames");

		if (resident > frames)
			t_violation(ctl, "vnet%u: %lld resident on %lld frames",
				    nics[i], resident, frames);
	}
}

static void t_report(struct t_ctl *ctl, struct t_procs *pr)
{
	char line[400];
	int op, len = 0, r;
	uint64_t all = 0;

	for (op = 0; op < T_OP_NR; op++) {
		if (!len)
			len = snprintf(line, sizeof(line), "# operations:");
		len += snprintf(line + len, sizeof(line) - len, " %s %llu",
				t_op_name[op], (unsigned long long)ctl->ops[op]);
		if (ctl->refused[op])
			len += snprintf(line + len, sizeof(line) - len,
					" (refused %llu)",
					(unsigned long long)ctl->refused[op]);
		len += snprintf(line + len, sizeof(line) - len, ",");
		if (len > 120 || op == T_OP_NR - 1) {
			line[len - 1] = 0;
			t_say("%s", line);
			len = 0;
		}
	}
	for (r = 0; r <= VNET_RET_NR; r++)
		all += ctl->chaos_returned[r];
	len = snprintf(line, sizeof(line), "# chaos messages: %llu posted, "
		       "%llu received, %llu returned",
		       (unsigned long long)ctl->chaos_posted,
		       (unsigned long long)ctl->chaos_received,
		       (unsigned long long)all);
	for (r = 0; r <= VNET_RET_NR && len < (int)sizeof(line); r++)
		if (ctl->chaos_returned[r])
			len += snprintf(line + len, sizeof(line) - len,
					", %s %llu", t_reason(r),
					(unsigned long long)ctl->chaos_returned[r]);
	t_say("%s", line);
	t_say("# processes: %u chaos started, %u killed, %u exited (at random "
	      "or at the end); %u reaped in all, %u of them orphans; faults "
	      "survived: %llu SIGSEGV, %llu SIGBUS", pr->generation, pr->killed,
	      pr->exited, pr->reaped, pr->orphans,
	      (unsigned long long)ctl->faults_caught[0],
	      (unsigned long long)ctl->faults_caught[1]);
}

/* Honest threads ready, or the run cannot start. */
static bool t_wait_ready(struct t_ctl *ctl, struct t_procs *pr)
{
	double deadline = t_now() + 120;

	while (__atomic_load_n(&ctl->honest_ready, __ATOMIC_ACQUIRE) <
	       T_HONEST_PROCS * T_HONEST_THREADS + T_LIVES_PAIRS) {
		if (t_now() > deadline || ctl->violations)
			return false;
		t_reap(ctl, pr, false);
		usleep(10000);
	}
	return true;
}

/* Until every request is settled, or a lifetime's time and more. */
static double t_drain(struct t_ctl *ctl)
{
	double start = t_now(), deadline = start + 2 * ctl->lifetime_s + 30;
	int settled = 0;

	__atomic_store_n(&ctl->phase, T_STOP, __ATOMIC_RELEASE);
	while (settled < 3 && t_now() < deadline) {
		settled = t_ledger_settled(ctl) && t_lives_settled(ctl) ?
			  settled + 1 : 0;
		usleep(100000);
	}
	__atomic_store_n(&ctl->phase, T_QUIT, __ATOMIC_RELEASE);
	return t_now() - start;
}

TEST_F_TIMEOUT(torture, abi, 600)
{
	unsigned int seconds = t_env("VNET_TORTURE_SECONDS", T_SECONDS);
	long long frames0 = vnet_nic_attr("frames");
	long long eps0 = vnet_nic_attr("nr_endpoints"), max_eps = 0;
	struct t_procs pr = {};
	double start, end, drained;
	struct t_ctl *ctl;
	struct stat st;
	uint64_t rng;
	bool reaped;
	int i;

	ctl = mmap(NULL, sizeof(*ctl), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ctl);
	if (getrandom(&ctl->seed, sizeof(ctl->seed), 0) != sizeof(ctl->seed))
		ctl->seed = (uint64_t)time(NULL) * 2654435761u;
	ctl->seed = t_env("VNET_TORTURE_SEED", ctl->seed);
	rng = t_seed_of(ctl->seed, T_ROLE_MAIN, 0);
	t_say("# seed %llu: VNET_TORTURE_SEED=%llu VNET_TORTURE_SECONDS=%u "
	      "replays this run", (unsigned long long)ctl->seed,
	      (unsigned long long)ctl->seed, seconds);
	ctl->lifetime_s = (vnet_read_ll(T_PARAMS "busy_timeout_ms") +
			   2.0 * vnet_read_ll(T_PARAMS "max_retries") *
			   vnet_read_ll(T_PARAMS "retrans_ms")) / 1000;
	ASSERT_LT(0, frames0);
	ASSERT_EQ(0, stat(VNET_DEVICE_PATH, &st));
	/* Chaos as other users, where the device lets a group in. */
	if (getuid() == 0 && st.st_gid && (st.st_mode & 0060) == 0060) {
		ctl->chaos_uid = T_CHAOS_UID;
		ctl->dev_gid = st.st_gid;
	}
	ASSERT_EQ(0, t_honest_setup(ctl, frames0));
	t_lives_setup(ctl);
	t_say("# %u pairs: %u on vnet0 (%lld frames), %u across vnet%d-vnet%d "
	      "(%d frames each, netem %s); %d chaos processes as %s",
	      ctl->lg.npairs, ctl->lg.nlocal, frames0,
	      ctl->lg.npairs - ctl->lg.nlocal, T_NIC_A, T_NIC_B,
	      T_WIRE_FRAMES, T_NETEM, T_CHAOS,
	      ctl->chaos_uid ? "users of the device's group" : "root");
	ASSERT_EQ(0, prctl(PR_SET_CHILD_SUBREAPER, 1));

	fflush(stdout);
	pr.honest = fork();
	ASSERT_LE(0, pr.honest);
	if (!pr.honest)
		t_honest_run(ctl);
	if (!t_wait_ready(ctl, &pr)) {
		t_violation(ctl, "the honest pairs did not get ready");
		seconds = 0;
	}
	fflush(stdout);
	pr.admin = fork();
	if (!pr.admin)
		t_admin_run(ctl, t_seed_of(ctl->seed, T_ROLE_ADMIN, 0));
	for (i = 0; i < T_CHAOS && seconds; i++)
		t_spawn_chaos(ctl, &pr, i);
	__atomic_store_n(&ctl->phase, T_RUN, __ATOMIC_RELEASE);

	end = t_now() + seconds;
	while (t_now() < end && ctl->violations < 20) {
		usleep(20000 + t_below(&rng, 180000));
		t_reap(ctl, &pr, true);
		t_sample(ctl, &max_eps);
		for (i = 0; i < T_CHAOS; i++)
			if (t_hung(ctl, &pr, i))
				kill(pr.chaos[i], SIGKILL);
		i = t_below(&rng, T_CHAOS);
		/*
		 * One quiet a while is spared: killed at random, a hung
		 * process would almost never live to be seen hung.
		 */
		if (t_chance(&rng, 15) && pr.chaos[i] > 0 &&
		    t_quiet(ctl, i) < T_SPARE_S) {
			kill(pr.chaos[i], SIGKILL);
			t_count(ctl, T_OP_KILL, 0);
		}
	}

	/*
	 * Chaos winds down.  After 20 s, one still there is waited for until
	 * it, too, has been quiet T_STALE_S, and then it is hung.
	 */
	__atomic_store_n(&ctl->chaos_stop, 1, __ATOMIC_RELEASE);
	start = t_now();
	while (t_now() < start + 20 + T_STALE_S + 5) {
		bool left = pr.admin, fresh = false;

		t_reap(ctl, &pr, false);
		for (i = 0; i < T_CHAOS; i++) {
			left |= pr.chaos[i] > 0;
			fresh |= pr.chaos[i] > 0 && t_quiet(ctl, i) < T_STALE_S;
		}
		if (!left || (t_now() > start + 20 && !fresh))
			break;
		usleep(10000);
	}
	for (i = 0; i < T_CHAOS; i++) {
		t_hung(ctl, &pr, i);
		if (pr.chaos[i] > 0)
			kill(pr.chaos[i], SIGKILL);
	}

	drained = t_drain(ctl);
	reaped = t_reap_all(ctl, &pr, 60);
	if (!reaped)
		t_stuck();
	EXPECT_TRUE(reaped);

	EXPECT_EQ(0, t_ledger_check(ctl));
	EXPECT_EQ(0, t_lives_check(ctl));
	t_report(ctl, &pr);
	/* Every endpoint goes with its last file. */
	end = t_now() + 30;
	while (t_now() < end && (t_nic(0, "nr_endpoints") != eps0 ||
				 t_nic(T_NIC_A, "nr_endpoints") ||
				 t_nic(T_NIC_B, "nr_endpoints") ||
				 t_nic(T_NIC_C, "nr_endpoints") > 0 ||
				 t_nic(T_NIC_D, "nr_endpoints") > 0))
		usleep(100000);
	t_say("# drained in %.1f s; vnet0 held %lld endpoints at most on %lld "
	      "frames; endpoints after: vnet0 %lld (%lld before), vnet%d %lld, "
	      "vnet%d %lld", drained, max_eps, frames0, t_nic(0, "nr_endpoints"),
	      eps0, T_NIC_A, t_nic(T_NIC_A, "nr_endpoints"), T_NIC_B,
	      t_nic(T_NIC_B, "nr_endpoints"));
	EXPECT_EQ(eps0, t_nic(0, "nr_endpoints"));
	EXPECT_EQ(0, t_nic(T_NIC_A, "nr_endpoints"));
	EXPECT_EQ(0, t_nic(T_NIC_B, "nr_endpoints"));
	EXPECT_GE(0, t_nic(T_NIC_C, "nr_endpoints"));
	EXPECT_GE(0, t_nic(T_NIC_D, "nr_endpoints"));
	for (i = 0; i < ctl->violations && i < T_NOTES; i++)
		TH_LOG("violation: %s", ctl->note[i]);
	EXPECT_EQ(0, ctl->violations);
	/* It did what it is for, or it proves nothing. */
	EXPECT_LT(0, ctl->lg.pair[0].sent);
	EXPECT_LT(0, ctl->lg.pair[ctl->lg.npairs - 1].sent);
	if (seconds >= 20) {
		/* Done, not merely tried. */
		EXPECT_LT(ctl->refused[T_OP_CREATE], ctl->ops[T_OP_CREATE]);
		EXPECT_LT(0, ctl->chaos_posted);
		EXPECT_LT(0, ctl->ops[T_OP_KILL]);
		EXPECT_LT(0, ctl->ops[T_OP_DETACH]);
		EXPECT_LT(0, ctl->ops[T_OP_RMMOD]);
		for (i = 0; i < T_KINDS; i++)
			EXPECT_LT(0, ctl->lg.kind_taken[i]);
		/* The first detach is vnet3's: an end of each pair on it. */
		for (i = 0; i < T_LIVES_PAIRS; i++) {
			EXPECT_LT(0, ctl->lv.pair[i].sent);
			EXPECT_LT(2, ctl->lv.pair[i].c.life +
				  ctl->lv.pair[i].s.life);
		}
	}
	munmap(ctl, sizeof(*ctl));
}

/*
 * The harness's timeout follows the run's length: the time, a drain,
 * the setup and the reaping.
 */
static void __attribute__((constructor)) t_timeout(void)
{
	_torture_abi_object.timeout =
		t_env("VNET_TORTURE_SECONDS", T_SECONDS) + 420;
}

TEST_HARNESS_MAIN
