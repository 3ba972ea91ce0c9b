// SPDX-License-Identifier: GPL-2.0
/*
 * Lifetimes the driver must get right whatever user space does: card pages
 * no one can pin, endpoint indices handed out again only once their sysfs
 * directory is gone, a file that outlives a fault sleeping on it, closing
 * endpoints while they are being evicted (also in the instant after the
 * eviction), and a firmware thread that does not spin on a receiver that
 * never drains.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "vnet_util.h"

#define MIN_RESIDENT	"/sys/module/vnet/parameters/min_resident_us"
#define SLICE_FAULTS	"/sys/module/vnet/parameters/slice_faults"

static bool vnet_ep_listed(unsigned int index)
{
	char path[256];

	snprintf(path, sizeof(path), VNET_SYSFS "/endpoints/%u", index);
	return access(path, F_OK) == 0;
}

/*
 * A frame page holds another endpoint's queues once its owner is evicted:
 * nothing may hold a reference to it, so GUP refuses the mapping, be it for
 * a segment registration, process_vm_readv() or O_DIRECT.
 */
TEST(frame_pages_cannot_be_pinned)
{
	struct vnet_endpoint ep;
	struct vnet_seg seg;
	char buf[64];
	struct iovec local = { buf, sizeof(buf) };
	struct iovec remote;
	ssize_t ret;

	ASSERT_EQ(0, vnet_endpoint_open(&ep, 0));
	vnet_touch(&ep);

	seg.addr = (uintptr_t)ep.frame;
	seg.len = 4096;
	EXPECT_EQ(-1, ioctl(ep.fd, VNET_IOC_SET_SEG, &seg));
	EXPECT_EQ(EFAULT, errno);

	remote.iov_base = ep.frame;
	remote.iov_len = sizeof(buf);
	ret = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
	if (ret == -1 && errno == ENOSYS) {
		TH_LOG("no process_vm_readv() in this kernel");
	} else {
		EXPECT_EQ(-1, ret);
		EXPECT_EQ(EFAULT, errno);
	}

	/* The owner itself still reads and writes it. */
	EXPECT_EQ(VNET_FRAME_MAGIC, ep.frame->hdr.magic);
	vnet_endpoint_close(&ep);
}

#define CHURN_PROCS	4
#define CHURN_ROUNDS	300

/* Nothing to set up: a fixture only for the longer timeout. */
FIXTURE(churn) {
	int unused;
};

FIXTURE_SETUP(churn)
{
}

FIXTURE_TEARDOWN(churn)
{
}

/*
 * Several processes create, touch and close endpoints on one NIC, as AM
 * programs do that open a second endpoint briefly.  Each create must
 * succeed: an index is not handed out while the previous holder's sysfs
 * directory still exists.  (A debug kernel takes a minute over it.)
 */
TEST_F_TIMEOUT(churn, create_close_reuses_indices, 300)
{
	pid_t pid[CHURN_PROCS];
	int i, status, failed = 0;

	for (i = 0; i < CHURN_PROCS; i++) {
		pid[i] = fork();
		ASSERT_LE(0, pid[i]);
		if (!pid[i]) {
			int n, bad = 0;

			for (n = 0; n < CHURN_ROUNDS; n++) {
				struct vnet_endpoint ep;
				int err = vnet_endpoint_open(&ep, 0);

				if (err) {
					fprintf(stderr, "# create: %s\n",
						strerror(-err));
					bad++;
					continue;
				}
				vnet_touch(&ep);
				vnet_endpoint_close(&ep);
			}
			_exit(bad ? 1 : 0);
		}
	}
	for (i = 0; i < CHURN_PROCS; i++) {
		ASSERT_EQ(pid[i], waitpid(pid[i], &status, 0));
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			failed++;
	}
	EXPECT_EQ(0, failed);
}

struct toucher {
	struct vnet_endpoint *ep;
	pthread_t thread;
};

static void *touch_thread(void *arg)
{
	struct toucher *t = arg;

	vnet_touch(t->ep);
	return NULL;
}

/*
 * A fault that waits for a frame does so without mmap_lock, so the owner
 * can unmap the frame and close the file meanwhile.  The fault still runs
 * driver code on that endpoint: the file (and with it the endpoint and the
 * module) stays until the fault is done, and goes right after.
 */
TEST(file_outlives_a_sleeping_fault)
{
	long long frames = vnet_nic_attr("frames");
	char old[32] = "";
	int pipefd[2], status;
	unsigned int index;
	FILE *f;
	pid_t pid;

	ASSERT_LT(0, frames);
	ASSERT_GE(64, frames);
	f = fopen(MIN_RESIDENT, "r");
	ASSERT_NE(NULL, f);
	ASSERT_NE(NULL, fgets(old, sizeof(old), f));
	fclose(f);
	/* Every frame will hold a newcomer that keeps it this long. */
	ASSERT_EQ(0, vnet_write_str(MIN_RESIDENT, "1000000"));
	ASSERT_EQ(0, pipe(pipefd));

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct vnet_endpoint fill[64], x;
		struct toucher t = { .ep = &x };
		long long i;

		for (i = 0; i < frames; i++) {
			if (vnet_endpoint_open(&fill[i], 0))
				_exit(2);
			vnet_touch(&fill[i]);
		}
		if (vnet_endpoint_open(&x, 0))
			_exit(2);
		pthread_create(&t.thread, NULL, touch_thread, &t);
		usleep(200 * 1000);
		/* The toucher sleeps in the fault: take its file away. */
		munmap(x.frame, x.frame_size);
		munmap(x.staging, x.staging_size);
		close(x.fd);
		index = x.name.ep;
		if (write(pipefd[1], &index, sizeof(index)) != sizeof(index))
			_exit(2);
		/* Its retried fault finds nothing mapped: SIGSEGV ends us. */
		pthread_join(t.thread, NULL);
		_exit(3);
	}
	close(pipefd[1]);
	ASSERT_EQ(sizeof(index), read(pipefd[0], &index, sizeof(index)));
	usleep(300 * 1000);
	EXPECT_TRUE(vnet_ep_listed(index));

	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status));
	if (WIFSIGNALED(status))
		EXPECT_EQ(SIGSEGV, WTERMSIG(status));
	EXPECT_FALSE(vnet_ep_listed(index));
	vnet_write_str(MIN_RESIDENT, old);
	close(pipefd[0]);
}

#define EVICTING_EPS	12

/*
 * One process touches more endpoints than there are frames, so every
 * fault evicts a victim, while another keeps creating, touching and closing
 * an endpoint of its own: that one is often closed while it is the victim
 * of the first one's fault.  The debug kernel's KASAN catches any use of a
 * victim after its owner freed it.
 */
TEST(close_while_evicted)
{
	long long evictions = vnet_nic_attr("evictions");
	long long min_resident = vnet_read_ll(MIN_RESIDENT);
	long long slice_faults = vnet_read_ll(SLICE_FAULTS);
	unsigned int closes = 0;
	int status;
	double end;
	pid_t pid;

	/* The shortest slice there is: a fault's worth. */
	ASSERT_EQ(0, vnet_write_str(MIN_RESIDENT, "0"));
	ASSERT_EQ(0, vnet_write_str(SLICE_FAULTS, "1"));
	ASSERT_EQ(0, vnet_write_str(VNET_DEBUGFS "/page_delay_ms", "1"));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct vnet_endpoint ep[EVICTING_EPS];
		unsigned int i;

		for (i = 0; i < EVICTING_EPS; i++)
			if (vnet_endpoint_open(&ep[i], 0))
				_exit(2);
		for (i = 0;; i = (i + 1) % EVICTING_EPS)
			vnet_touch(&ep[i]);
	}
	end = vnet_now() + 3;
	while (vnet_now() < end) {
		struct vnet_endpoint ep;

		ASSERT_EQ(0, vnet_endpoint_open(&ep, 0));
		vnet_touch(&ep);
		vnet_endpoint_close(&ep);
		closes++;
		EXPECT_GE(vnet_nic_attr("frames"), vnet_nic_attr("resident"));
	}
	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status));
	vnet_write_str(VNET_DEBUGFS "/page_delay_ms", "0");
	vnet_write_ll(MIN_RESIDENT, min_resident);
	vnet_write_ll(SLICE_FAULTS, slice_faults);
	evictions = vnet_nic_attr("evictions") - evictions;
	TH_LOG("%u closes under eviction, %lld evictions", closes, evictions);
	/* Or the closes raced nothing. */
	EXPECT_LT(0, evictions);
	EXPECT_LT(10, closes);
}

#define WAKE_DELAY	VNET_DEBUGFS "/wake_delay_us"
#define MAX_FRAMES	256

/* The knobs it turns, put back however the test ends. */
FIXTURE(wake_window) {
	long long min_resident, slice_faults;
};

FIXTURE_SETUP(wake_window)
{
	self->min_resident = vnet_read_ll(MIN_RESIDENT);
	self->slice_faults = vnet_read_ll(SLICE_FAULTS);
}

FIXTURE_TEARDOWN(wake_window)
{
	vnet_write_str(WAKE_DELAY, "0");
	vnet_write_ll(MIN_RESIDENT, self->min_resident);
	vnet_write_ll(SLICE_FAULTS, self->slice_faults);
}

/* The one of @n endpoints that is out of its frame, or -1; *@out counts. */
static int nonresident(struct vnet_endpoint *eps, int n, int *out)
{
	char state[32];
	int i, found = -1;

	*out = 0;
	for (i = 0; i < n; i++)
		if (!strcmp(vnet_ep_state(eps[i].name.ep, state,
					  sizeof(state)), "nonresident")) {
			found = i;
			(*out)++;
		}
	return found;
}

/*
 * An eviction marks its victim non-resident, drops nic->lock and only then
 * wakes the victim's sleepers; the victim's owner can close it in between.
 * wake_delay_us holds that window open for 3 s while the test closes the
 * victim (then every other endpoint in a frame).  Without a reference of
 * its own the eviction then wakes freed memory, which the debug kernel's
 * KASAN reports (and the debug lane fails on); on any kernel the fault
 * that evicted must still complete.
 */
TEST_F_TIMEOUT(wake_window, close_in_the_eviction_wake_window, 60)
{
	long long frames = vnet_nic_attr("frames");
	long long evictions = vnet_nic_attr("evictions");
	struct vnet_endpoint eps[MAX_FRAMES], newcomer;
	struct toucher t = { .ep = &newcomer };
	double start, seen, closed;
	int i, victim = -1, out = 0;
	char state[32];

	ASSERT_LT(0, frames);
	ASSERT_GE(MAX_FRAMES, frames);
	ASSERT_EQ(0, vnet_nic_attr("resident"));
	ASSERT_EQ(0, vnet_write_str(MIN_RESIDENT, "0"));
	ASSERT_EQ(0, vnet_write_str(SLICE_FAULTS, "1"));
	for (i = 0; i < frames; i++) {
		ASSERT_EQ(0, vnet_endpoint_open(&eps[i], 0));
		vnet_touch(&eps[i]);
	}
	ASSERT_EQ(frames, vnet_nic_attr("resident"));
	ASSERT_EQ(0, vnet_endpoint_open(&newcomer, 0));

	ASSERT_EQ(0, vnet_write_str(WAKE_DELAY, "3000000"));
	start = vnet_now();
	ASSERT_EQ(0, pthread_create(&t.thread, NULL, touch_thread, &t));
	/* Until the eviction is in its window: victim out, newcomer not in. */
	while (victim < 0 && vnet_now() < start + 2.5) {
		usleep(10 * 1000);
		victim = nonresident(eps, frames, &out);
	}
	seen = vnet_now();
	ASSERT_LE(0, victim);
	EXPECT_EQ(1, out);
	vnet_endpoint_close(&eps[victim]);
	closed = vnet_now();
	/* Still in the window: the eviction has not woken anyone yet. */
	EXPECT_STREQ("loading", vnet_ep_state(newcomer.name.ep, state,
					      sizeof(state)));
	for (i = 0; i < frames; i++)
		if (i != victim)
			vnet_endpoint_close(&eps[i]);
	ASSERT_EQ(0, pthread_join(t.thread, NULL));
	TH_LOG("victim out %.0f ms after the fault began, closed %.0f ms later; the fault done after %.0f ms",
	       (seen - start) * 1000, (closed - seen) * 1000,
	       (vnet_now() - start) * 1000);
	EXPECT_EQ(1, vnet_nic_attr("evictions") - evictions);
	EXPECT_STREQ("resident", vnet_ep_state(newcomer.name.ep, state,
					       sizeof(state)));
	vnet_endpoint_close(&newcomer);
}

/* The firmware thread's context switches so far. */
static long long fw_thread_switches(const char *comm)
{
	pid_t pid = vnet_thread_pid(comm);
	char path[64];

	if (pid < 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	return vnet_proc_kb(path, "voluntary_ctxt_switches") +
	       vnet_proc_kb(path, "nonvoluntary_ctxt_switches");
}

/*
 * A message held for a receiver that never drains is retried, but the
 * firmware backs off to its retransmission quantum instead of waking on
 * every tick (250 a second on a HZ=250 kernel).
 */
TEST(held_message_does_not_spin_the_firmware)
{
	struct vnet_endpoint a, b;
	struct vnet_desc d = vnet_short(1, 0, 0, 0);
	long long before, after;
	unsigned int i;

	ASSERT_EQ(0, vnet_endpoint_open(&a, 0));
	ASSERT_EQ(0, vnet_endpoint_open(&b, 0));
	ASSERT_EQ(0, vnet_endpoint_set_tag(&b, TEST_TAG));
	ASSERT_EQ(0, vnet_endpoint_map(&a, 0, b.name, TEST_TAG));
	vnet_touch(&b);
	/* A queue's worth fills b's receive queue; the rest are held. */
	for (i = 0; i < VNET_QUEUE_DEPTH + 4; i++) {
		if (i == VNET_QUEUE_DEPTH)
			usleep(300 * 1000);
		ASSERT_EQ(0, vnet_endpoint_post(&a, VNET_Q_REQ_SEND, &d,
						NULL, 0));
	}
	usleep(300 * 1000);

	before = fw_thread_switches("vnet0_fw");
	ASSERT_LE(0, before);
	sleep(2);
	after = fw_thread_switches("vnet0_fw");
	TH_LOG("firmware thread: %lld wake-ups in 2 s with a message held",
	       after - before);
	EXPECT_LT(after - before, 2 * 100);
	EXPECT_NE(NULL, vnet_endpoint_peek(&b, VNET_Q_REQ_RECV));
	vnet_endpoint_close(&a);
	vnet_endpoint_close(&b);
}

TEST_HARNESS_MAIN
