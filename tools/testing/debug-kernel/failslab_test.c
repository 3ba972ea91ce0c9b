// SPDX-License-Identifier: GPL-2.0
/*
 * Allocation failures in vnet, injected one at a time (the debug kernel's
 * failslab and /proc/<tid>/fail-nth).
 *
 * Every way into the driver -- loading and unloading the module, opening
 * /dev/vnet, creating an endpoint, mapping it, its first touch (with the card
 * full, so it evicts), its ioctls, closing it, attaching a NIC to an
 * interface and detaching it -- is repeated with its 1st, 2nd, 3rd ... slab
 * allocation failed, until the call makes fewer allocations than that
 * (on load, the module loader's own allocations before vnet's init, and
 * those that make the loopback card, walked one by one under ATTACH, are
 * sampled).
 * fail-nth counts only the calling thread's allocations during that one
 * call, so what fails is an allocation made on vnet's behalf and nothing
 * else in the system.  (failslab's require-start/require-end stack filter
 * would say "inside vnet.ko" directly, but it does not exist on x86-64.)
 *
 * A failed call must return ENOMEM (a touch: EFAULT, what SIGBUS is to a
 * system call), leave nothing behind, and succeed when simply retried; a
 * failure the driver absorbs must still leave a working endpoint, checked
 * by sending it a message.  Leaks are then kmemleak's business, and the
 * kernel log is checked for splats, by the caller (check-debug).
 *
 *   VNET_KO  the module, for the load and unload tests (skipped without)
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <stdbool.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "vnet_util.h"

#define FAILSLAB	"/sys/kernel/debug/failslab"
#define MAX_SITES	5000	/* more allocations in one call is a bug */
#define SEG_LEN		(64 << 10)
#define MAX_FILL	64
#define VETH_A		"vnetfsa"
#define VETH_B		"vnetfsb"

/* Fail the calling thread's @n-th allocation from now on; 0 disarms. */
static int inject_arm(unsigned int n)
{
	int fd = open("/proc/thread-self/fail-nth", O_RDWR | O_CLOEXEC);
	char buf[16];
	int len = snprintf(buf, sizeof(buf), "%u", n);

	if (fd < 0 || write(fd, buf, len) != len) {
		perror("# fail-nth");
		abort();
	}
	return fd;
}

/* Disarm; was the armed allocation reached (and failed)? */
static bool inject_disarm(int fd)
{
	char buf[16] = "";

	if (pread(fd, buf, sizeof(buf) - 1, 0) <= 0 || write(fd, "0", 1) != 1) {
		perror("# fail-nth");
		abort();
	}
	close(fd);
	return strtoul(buf, NULL, 10) == 0;
}

/* Evaluate @expr with the @n-th allocation failed; errno is @expr's. */
#define INJECT(n, injected, expr) ({					\
	int __fd = inject_arm(n);					\
	long __ret = (expr);						\
	int __err = errno;						\
	(injected) = inject_disarm(__fd);				\
	errno = __err;							\
	__ret;								\
})

static int failslab_setup(void)
{
	/* GFP_KERNEL allocations are the interesting ones. */
	if (vnet_write_str(FAILSLAB "/ignore-gfp-wait", "N"))
		return -1;
	/* One line per injected failure in the log, no stack dump. */
	return vnet_write_str(FAILSLAB "/verbose", "1");
}

static int count_dir(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

static bool exists(const char *path)
{
	return !access(path, F_OK);
}

/* nr_endpoints of vnet0 back at @want within a few seconds? */
static bool endpoints_settle(long long want)
{
	double deadline = vnet_now() + 5;

	while (vnet_nic_attr("nr_endpoints") != want && vnet_now() < deadline)
		usleep(10000);
	return vnet_nic_attr("nr_endpoints") == want &&
	       count_dir(VNET_SYSFS "/endpoints") == want;
}

static long long status_kb(const char *key)
{
	return vnet_proc_kb("/proc/self/status", key);
}

/* ------------------------------------------------------------------------
 * The module: loading and unloading.
 */

static bool module_gone(void)
{
	return !exists("/sys/module/vnet") && !exists("/dev/vnet") &&
	       !exists("/sys/class/vnet");
}

static int load_module(const char *ko, unsigned int n, bool *injected)
{
	int fd = open(ko, O_RDONLY | O_CLOEXEC);
	long ret;
	int err;

	if (fd < 0)
		return -errno;
	if (n)
		ret = INJECT(n, *injected, syscall(SYS_finit_module, fd, "", 0));
	else
		ret = syscall(SYS_finit_module, fd, "", 0);
	err = ret ? errno : 0;
	close(fd);
	return -err;
}

static int unload_module(void)
{
	return syscall(SYS_delete_module, "vnet", O_NONBLOCK) ? -errno : 0;
}

FIXTURE(module) {
	const char *ko;
};

FIXTURE_SETUP(module)
{
	self->ko = getenv("VNET_KO");
	if (!self->ko)
		SKIP(return, "VNET_KO not set");
	if (failslab_setup())
		SKIP(return, "no failslab in this kernel");
	if (exists("/sys/module/vnet"))
		ASSERT_EQ(0, unload_module());
}

/* The kernel log from now on: a descriptor to pass to failed_allocation(). */
static int kmsg_mark(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd >= 0)
		lseek(fd, 0, SEEK_END);
	return fd;
}

enum whose {
	UNREPORTED,	/* no report: the allocation asked for no warning */
	LOADERS,	/* the module loader's, before vnet's init runs */
	VNETS,		/* vnet's init, or after it */
	CARDS,		/* vnet's init creating the loopback card */
};

/*
 * Whose allocation failed since kmsg_mark()?  failslab's report (verbose
 * 2) has the stack trace: vnet's frames are tagged "[vnet]", and anything
 * from do_init_module() on runs vnet's init or comes after it;
 * vnet_nic_create() on the stack is the loopback card being made.  A
 * failure injected into an allocation that asked for no warning is not
 * reported at all: kmemleak's record of each allocation is one, about
 * every other allocation.
 */
static enum whose failed_allocation(int fd)
{
	enum whose whose = UNREPORTED;
	char rec[8192];
	ssize_t len;

	for (;;) {
		len = read(fd, rec, sizeof(rec) - 1);
		if (len < 0 && errno == EPIPE)
			continue;	/* records overwritten: read on */
		if (len <= 0)
			break;
		rec[len] = '\0';
		if (strstr(rec, "FAULT_INJECTION: forcing a failure"))
			whose = whose == UNREPORTED ? LOADERS : whose;
		else if (whose != UNREPORTED && strstr(rec, "vnet_nic_create"))
			whose = CARDS;
		else if (whose == LOADERS && (strstr(rec, "[vnet]") ||
					      strstr(rec, "do_init_module")))
			whose = VNETS;
	}
	close(fd);
	return whose;
}

/*
 * Most of a load's allocations are the module loader's and the kernel's
 * own, made before vnet's init runs (the module's sysfs and tracefs
 * entries, kmemleak's record of them), and a failure in most of those is
 * absorbed.  Most of the rest make the loopback card, in vnet_nic_create()
 * -- its frames' sysfs entries, say -- which nic.attach_detach fails one
 * by one: all a load adds is init's unwinding, the same from any of them.
 * So in a run of allocations reported as the loader's, or as the card's,
 * the walk goes on STRIDE allocations further; an unreported one says
 * nothing, and the walk takes the next.  When a stride lands on an
 * allocation reported as someone else's, it steps back and fails every
 * one it strode over, so that each boundary, and all of vnet's other
 * allocations, are failed one by one.
 */
#define STRIDE	32

static bool sampled(enum whose whose)
{
	return whose == LOADERS || whose == CARDS;
}

/* Whatever happens, the rest of the suite gets a loaded module. */
FIXTURE_TEARDOWN(module)
{
	vnet_write_str(FAILSLAB "/verbose", "1");
	if (self->ko && !exists("/sys/module/vnet"))
		load_module(self->ko, 0, NULL);
}

TEST_F_TIMEOUT(module, load, 1200)
{
	int n, next, ret, failed = 0, absorbed = 0, first_vnet = 0;
	int strode_from = 0, walk_to = 0, tried = 0;
	int samples[CARDS + 1] = {};
	enum whose whose, last = UNREPORTED;
	bool injected;

	ASSERT_EQ(0, vnet_write_str(FAILSLAB "/verbose", "2"));
	for (n = 1; n < MAX_SITES; n = next) {
		int kmsg = kmsg_mark();

		ASSERT_LE(0, kmsg);
		ret = load_module(self->ko, n, &injected);
		whose = failed_allocation(kmsg);
		tried++;
		next = n + 1;
		if (!injected) {
			ASSERT_EQ(0, ret);
			ASSERT_EQ(0, unload_module());
			if (!strode_from)
				break;
			/* Strode past the end: walk the last stride. */
			walk_to = n;
			next = strode_from + 1;
			strode_from = 0;
			continue;
		}
		if (ret) {
			EXPECT_EQ(-ENOMEM, ret)
				TH_LOG("allocation %d failed, load returned %d",
				       n, ret);
			EXPECT_TRUE(module_gone())
				TH_LOG("allocation %d failed, load left the module behind",
				       n);
		} else {
			EXPECT_TRUE(exists("/dev/vnet"));
			ASSERT_EQ(0, unload_module());
			ASSERT_TRUE(module_gone());
		}
		/* A step back fails the stride's last allocation again. */
		if (n != walk_to) {
			failed += !!ret;
			absorbed += !ret;
		}
		if ((whose == VNETS || whose == CARDS) && !first_vnet)
			first_vnet = n;
		if (n < walk_to || whose == UNREPORTED)
			continue;
		if (strode_from && whose != last) {
			/* Someone else's allocation in the stride. */
			walk_to = n;
			next = strode_from + 1;
			strode_from = 0;
			continue;
		}
		strode_from = 0;
		if (sampled(whose) && whose == last) {
			strode_from = n;
			next = n + STRIDE;
			samples[whose]++;
		}
		last = whose;
	}
	TH_LOG("%d allocations: %d failed the load, %d absorbed, in %d loads; vnet's code reported at the %dth; one in %d sampled where the loader's (%d times) and the loopback card's (%d times)",
	       n - 1, failed, absorbed, tried, first_vnet, STRIDE,
	       samples[LOADERS], samples[CARDS]);
	/* Without stack traces, every failure would look like the loader's. */
	EXPECT_LT(0, first_vnet);
	EXPECT_LT(0, samples[CARDS]);
	EXPECT_LT(1, n);
}

TEST_F_TIMEOUT(module, unload, 1200)
{
	bool injected;
	int n, ret;

	for (n = 1; n < MAX_SITES; n++) {
		ASSERT_EQ(0, load_module(self->ko, 0, NULL));
		ret = INJECT(n, injected, unload_module());
		EXPECT_EQ(0, ret)
			TH_LOG("allocation %d failed, unload returned %d", n,
			       -errno);
		EXPECT_TRUE(module_gone())
			TH_LOG("allocation %d failed, unload left the module behind",
			       n);
		if (!injected)
			break;
	}
	TH_LOG("%d allocations on unload", n - 1);
}

/* ------------------------------------------------------------------------
 * An endpoint's life, step by step.
 */

enum step {
	OPEN, CREATE, MMAP_FRAME, MMAP_STAGING, TOUCH, SET_TAG, MAP, SET_SEG,
	EP_STAT, UNMAP, KICK, CLOSE,
};

static const char * const step_names[] = {
	"open", "EP_CREATE", "mmap frame", "mmap staging", "first touch",
	"SET_TAG", "MAP", "SET_SEG", "EP_STAT", "UNMAP", "KICK", "close",
};

FIXTURE(endpoint) {
	struct vnet_endpoint peer;
	struct vnet_endpoint filler[MAX_FILL];
	int nfill;
	int pipe[2];
	void *seg;
	long long base;
};

FIXTURE_VARIANT(endpoint) {
	enum step step;
};

FIXTURE_VARIANT_ADD(endpoint, open) { .step = OPEN };
FIXTURE_VARIANT_ADD(endpoint, create) { .step = CREATE };
FIXTURE_VARIANT_ADD(endpoint, mmap_frame) { .step = MMAP_FRAME };
FIXTURE_VARIANT_ADD(endpoint, mmap_staging) { .step = MMAP_STAGING };
FIXTURE_VARIANT_ADD(endpoint, touch_evicting) { .step = TOUCH };
FIXTURE_VARIANT_ADD(endpoint, set_tag) { .step = SET_TAG };
FIXTURE_VARIANT_ADD(endpoint, map) { .step = MAP };
FIXTURE_VARIANT_ADD(endpoint, set_seg) { .step = SET_SEG };
FIXTURE_VARIANT_ADD(endpoint, ep_stat) { .step = EP_STAT };
FIXTURE_VARIANT_ADD(endpoint, unmap) { .step = UNMAP };
FIXTURE_VARIANT_ADD(endpoint, kick) { .step = KICK };
FIXTURE_VARIANT_ADD(endpoint, close) { .step = CLOSE };

FIXTURE_SETUP(endpoint)
{
	long long frames;
	int i;

	if (failslab_setup())
		SKIP(return, "no failslab in this kernel");
	frames = vnet_nic_attr("frames");
	ASSERT_LT(0, frames);
	ASSERT_GE(MAX_FILL, frames);
	ASSERT_EQ(0, vnet_endpoint_open(&self->peer, 0));
	ASSERT_EQ(0, vnet_endpoint_set_tag(&self->peer, TEST_TAG));
	/* Enough endpoints to fill the card, for the touch to evict one. */
	for (i = 0; i < frames; i++, self->nfill++)
		ASSERT_EQ(0, vnet_endpoint_open(&self->filler[i], 0));
	ASSERT_EQ(0, pipe(self->pipe));
	self->seg = mmap(NULL, SEG_LEN, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	ASSERT_NE(MAP_FAILED, self->seg);
	self->base = vnet_nic_attr("nr_endpoints");
}

FIXTURE_TEARDOWN(endpoint)
{
	int i;

	for (i = 0; i < self->nfill; i++)
		vnet_endpoint_close(&self->filler[i]);
	vnet_endpoint_close(&self->peer);
}

/*
 * Run @expr for step @s: with the @n-th allocation failed if @s is the step
 * under test, and then, if that failed, again without.  The retry must
 * succeed; the injected failure must have been @fail_errno, and must have
 * left the endpoint count and the locked memory as they were.
 */
#define STEP(s, fail_errno, expr) ({					\
	long __r;							\
	if ((s) == variant->step) {					\
		long long __lck = status_kb("VmLck");			\
		long long __eps = vnet_nic_attr("nr_endpoints");	\
		__r = INJECT(n, injected, (expr));			\
		if (__r < 0 && injected) {				\
			failed++;					\
			EXPECT_EQ(fail_errno, errno)			\
				TH_LOG("%s: allocation %d failed: %s",	\
				       step_names[s], n,		\
				       strerror(errno));		\
			EXPECT_EQ(__eps, vnet_nic_attr("nr_endpoints"))	\
				TH_LOG("%s: allocation %d failed, the endpoint count changed", \
				       step_names[s], n);		\
			EXPECT_EQ(__lck, status_kb("VmLck"));		\
			__r = (expr);					\
		} else if (injected) {					\
			absorbed++;					\
		}							\
	} else {							\
		__r = (expr);						\
	}								\
	ASSERT_LE(0, __r)						\
		TH_LOG("%s, allocation %d of %s: %s", step_names[s], n,	\
		       step_names[variant->step], strerror(errno));	\
	__r;								\
})

/* The first touch of the frame, as a system call: EFAULT if it faults. */
static long touch_frame(int pipefd[2], struct vnet_frame *frame)
{
	char c;

	if (write(pipefd[1], frame, 1) != 1)
		return -1;
	return read(pipefd[0], &c, 1) == 1 ? 0 : -1;
}

/* @ep sends a request to the peer, which must get it. */
static bool delivers(struct vnet_endpoint *ep, struct vnet_endpoint *peer,
		     unsigned int seq)
{
	struct vnet_desc d = vnet_short(1, 0, 0xfa17, seq);
	double deadline = vnet_now() + 20;
	const struct vnet_desc *got;

	if (vnet_endpoint_post(ep, VNET_Q_REQ_SEND, &d, NULL, 0))
		return false;
	ioctl(ep->fd, VNET_IOC_KICK);
	while (vnet_now() < deadline) {
		got = vnet_endpoint_peek(peer, VNET_Q_REQ_RECV);
		if (got) {
			bool ok = got->args[0] == 0xfa17 && got->args[1] == seq;

			vnet_endpoint_consume(peer, VNET_Q_REQ_RECV);
			return ok;
		}
		vnet_endpoint_wait(peer, 50);
	}
	return false;
}

TEST_F_TIMEOUT(endpoint, lifecycle, 900)
{
	int n, i, failed = 0, absorbed = 0;
	long long locked_vm = status_kb("VmLck");
	bool injected = false;

	for (n = 1; n < MAX_SITES; n++) {
		struct vnet_ep_create req = { .abi_version = VNET_ABI_VERSION };
		struct vnet_map map = { .slot = 0, .tag = TEST_TAG };
		struct vnet_seg seg = {
			.addr = (uintptr_t)self->seg, .len = SEG_LEN,
		};
		struct vnet_endpoint ep = { .fd = -1 };
		struct vnet_ep_stat st;
		uint64_t tag = TEST_TAG;
		uint32_t slot = 0;
		void *p;

		injected = false;
		ep.fd = STEP(OPEN, ENOMEM,
			     open(VNET_DEVICE_PATH, O_RDWR | O_CLOEXEC));
		STEP(CREATE, ENOMEM, ioctl(ep.fd, VNET_IOC_EP_CREATE, &req));
		ep.name = req.name;
		ep.frame_size = req.frame_size;
		ep.staging_size = req.staging_size;
		p = (void *)STEP(MMAP_FRAME, ENOMEM,
			 (long)mmap(NULL, req.frame_size, PROT_READ | PROT_WRITE,
				    MAP_SHARED, ep.fd, (off_t)req.frame_offset));
		ep.frame = p;
		p = (void *)STEP(MMAP_STAGING, ENOMEM,
			 (long)mmap(NULL, req.staging_size, PROT_READ | PROT_WRITE,
				    MAP_SHARED, ep.fd, (off_t)req.staging_offset));
		ep.staging = p;
		if (variant->step == TOUCH)
			for (i = 0; i < self->nfill; i++)
				vnet_touch(&self->filler[i]);
		STEP(TOUCH, EFAULT, touch_frame(self->pipe, ep.frame));
		STEP(SET_TAG, ENOMEM, ioctl(ep.fd, VNET_IOC_SET_TAG, &tag));
		map.name = self->peer.name;
		STEP(MAP, ENOMEM, ioctl(ep.fd, VNET_IOC_MAP, &map));
		STEP(SET_SEG, ENOMEM, ioctl(ep.fd, VNET_IOC_SET_SEG, &seg));
		STEP(EP_STAT, ENOMEM, ioctl(ep.fd, VNET_IOC_EP_STAT, &st));
		EXPECT_TRUE(delivers(&ep, &self->peer, n))
			TH_LOG("allocation %d of %s: the endpoint does not work",
			       n, step_names[variant->step]);
		STEP(UNMAP, ENOMEM, ioctl(ep.fd, VNET_IOC_UNMAP, &slot));
		STEP(KICK, ENOMEM, ioctl(ep.fd, VNET_IOC_KICK));
		munmap(ep.staging, ep.staging_size);
		munmap(ep.frame, ep.frame_size);
		STEP(CLOSE, ENOMEM, close(ep.fd));
		EXPECT_TRUE(endpoints_settle(self->base))
			TH_LOG("allocation %d of %s: endpoint left behind", n,
			       step_names[variant->step]);
		EXPECT_EQ(locked_vm, status_kb("VmLck"));
		if (!injected || _metadata->passed == 0)
			break;
	}
	TH_LOG("%s: %d allocations: %d failed the call, %d absorbed",
	       step_names[variant->step], n - 1, failed, absorbed);
}

/* ------------------------------------------------------------------------
 * NICs on Ethernet: attaching one to an interface and taking it away.
 */

FIXTURE(nic) {
	int fd;
	int nics;
};

FIXTURE_SETUP(nic)
{
	if (failslab_setup())
		SKIP(return, "no failslab in this kernel");
	if (system("ip link del " VETH_A " 2>/dev/null")) {
		/* it was not there */
	}
	ASSERT_EQ(0, system("ip link add " VETH_A " type veth peer name " VETH_B
			    " && ip link set " VETH_A " up && ip link set "
			    VETH_B " up"));
	self->fd = open(VNET_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd);
	self->nics = count_dir("/sys/class/vnet");
}

FIXTURE_TEARDOWN(nic)
{
	close(self->fd);
	if (system("ip link del " VETH_A " 2>/dev/null")) {
		/* it was not there */
	}
}

TEST_F_TIMEOUT(nic, attach_detach, 900)
{
	int n, ret, failed = 0, absorbed = 0, detach_sites = 0;
	bool injected, detach_injected = true;

	for (n = 1; n < MAX_SITES; n++) {
		struct vnet_attach at = { .ifname = VETH_A,
					  .nic_id = VNET_NIC_ID_ANY };

		ret = INJECT(n, injected, ioctl(self->fd, VNET_IOC_ATTACH, &at));
		if (ret && injected) {
			failed++;
			EXPECT_EQ(ENOMEM, errno)
				TH_LOG("ATTACH: allocation %d failed: %s", n,
				       strerror(errno));
			EXPECT_EQ(self->nics, count_dir("/sys/class/vnet"))
				TH_LOG("ATTACH: allocation %d failed, a NIC was left behind",
				       n);
			at.nic_id = VNET_NIC_ID_ANY;
			ret = ioctl(self->fd, VNET_IOC_ATTACH, &at);
		} else if (injected) {
			absorbed++;
		}
		ASSERT_EQ(0, ret) TH_LOG("ATTACH: %s", strerror(errno));
		EXPECT_EQ(self->nics + 1, count_dir("/sys/class/vnet"));

		/* Detaching must work whatever fails on the way. */
		if (detach_injected) {
			ret = INJECT(n, detach_injected,
				     ioctl(self->fd, VNET_IOC_DETACH, &at.nic_id));
			detach_sites += detach_injected;
		} else {
			ret = ioctl(self->fd, VNET_IOC_DETACH, &at.nic_id);
		}
		ASSERT_EQ(0, ret)
			TH_LOG("DETACH, allocation %d: %s", n, strerror(errno));
		EXPECT_EQ(self->nics, count_dir("/sys/class/vnet"));
		if (!injected && !detach_injected)
			break;
	}
	TH_LOG("ATTACH: %d allocations: %d failed the call, %d absorbed; DETACH: %d",
	       n - 1, failed, absorbed, detach_sites);
}

TEST_HARNESS_MAIN
