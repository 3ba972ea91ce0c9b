// SPDX-License-Identifier: GPL-2.0
/*
 * LD_PRELOAD=failslab_preload.so: run an unmodified vnet test with slab
 * allocation failures injected into the driver calls it makes.
 *
 * Every /dev/vnet ioctl, and every mmap and close of a /dev/vnet file, is
 * made -- one in VNET_FAILSLAB_EVERY (default 3), chosen at random -- with
 * one of its first 16 slab allocations failed (/proc/thread-self/fail-nth,
 * failslab in the debug kernel).  fail-nth covers only the calling thread's
 * allocations in that call, so nothing but vnet's paths sees a failure.
 *
 * A call that fails because of the injection must fail with ENOMEM; it is
 * then made again without one, transparently, so the test itself stays as
 * strict as ever and checks that the failure left nothing broken behind
 * (exactly-once delivery, no leftover endpoint, no leak).  Any other errno
 * is reported on stderr.  Every injected failure appends a line to
 * VNET_FAILSLAB_LOG (if set), as the test's processes may leave by _exit():
 *
 *   failed ioctl 0xc028b502 3	the call returned ENOMEM and was retried
 *   absorbed mmap 0x200000 1	the call succeeded all the same
 *   bad close 0x5 2 Bad file descriptor	it returned another error
 *
 * (what, its request or offset or fd, and which allocation failed).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <linux/vnet.h>

#define MAX_NTH		16

static unsigned int every = 3;
static int log_fd = -1;
static dev_t vnet_rdev;

static void *(*real_mmap)(void *, size_t, int, int, int, off_t);
static int (*real_close)(int);

static unsigned int rnd(void)
{
	static __thread unsigned int seed;
	static __thread pid_t seeded_for;
	pid_t tid = syscall(SYS_gettid);

	/* A forked child must not repeat its parent's choices. */
	if (seeded_for != tid) {
		seeded_for = tid;
		seed = (unsigned int)tid * 2654435761u ^ (unsigned int)time(NULL);
	}
	seed = seed * 1103515245u + 12345u;
	return seed >> 8;
}

static int arm(unsigned int n)
{
	int fd = open("/proc/thread-self/fail-nth", O_RDWR | O_CLOEXEC);
	char buf[16];
	int len = snprintf(buf, sizeof(buf), "%u", n);

	if (fd >= 0 && write(fd, buf, len) != len) {
		real_close(fd);
		fd = -1;
	}
	return fd;
}

/* Disarm; true if the armed allocation was reached and failed. */
static int disarm(int fd)
{
	char buf[16] = "";
	int hit;

	hit = pread(fd, buf, sizeof(buf) - 1, 0) > 0 &&
	      strtoul(buf, NULL, 10) == 0;
	if (write(fd, "0", 1) != 1)
		abort();
	real_close(fd);
	return hit;
}

static int is_vnet_fd(int fd)
{
	struct stat st;

	return vnet_rdev && !fstat(fd, &st) && S_ISCHR(st.st_mode) &&
	       st.st_rdev == vnet_rdev;
}

static void note(const char *outcome, const char *what, unsigned long arg,
		 unsigned int nth, int err)
{
	char line[128];
	int len;

	len = snprintf(line, sizeof(line), "%s %s %#lx %u%s%s\n", outcome,
		       what, arg, nth, err ? " " : "", err ? strerror(err) : "");
	if (err)
		fprintf(stderr, "# failslab_preload: pid %d: %s %#lx: allocation %u failed, the call returned %s, not ENOMEM\n",
			getpid(), what, arg, nth, strerror(err));
	if (log_fd >= 0 && write(log_fd, line, len) != len)
		abort();
}

/*
 * Make @call, maybe with an allocation failed; if that made it return
 * @failure with ENOMEM, make it again.
 */
#define INJECTED_CALL(what, arg, ret, failure, call) do {		\
	unsigned int __nth = 0;						\
	int __fd = -1, __err;						\
	if (rnd() % every == 0) {					\
		__nth = 1 + rnd() % MAX_NTH;				\
		__fd = arm(__nth);					\
	}								\
	ret = call;							\
	__err = errno;							\
	if (__fd >= 0 && disarm(__fd)) {				\
		if (!(ret == failure)) {				\
			note("absorbed", what, arg, __nth, 0);		\
		} else if (__err == ENOMEM) {				\
			note("failed", what, arg, __nth, 0);		\
			ret = call;					\
			__err = errno;					\
		} else {						\
			note("bad", what, arg, __nth, __err);		\
		}							\
	}								\
	errno = __err;							\
} while (0)

int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	void *arg;
	long ret;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (_IOC_TYPE(req) != VNET_IOC_MAGIC || !is_vnet_fd(fd))
		return syscall(SYS_ioctl, fd, req, arg);
	INJECTED_CALL("ioctl", req, ret, -1,
		      syscall(SYS_ioctl, fd, req, arg));
	return ret;
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	void *ret;

	if (fd < 0 || !is_vnet_fd(fd))
		return real_mmap(addr, len, prot, flags, fd, off);
	INJECTED_CALL("mmap", (unsigned long)off, ret, MAP_FAILED,
		      real_mmap(addr, len, prot, flags, fd, off));
	return ret;
}

/* Endpoint teardown runs in close; whatever fails, close succeeds. */
int close(int fd)
{
	int ret;

	if (!is_vnet_fd(fd))
		return real_close(fd);
	INJECTED_CALL("close", (unsigned long)fd, ret, -1, real_close(fd));
	return ret;
}

__attribute__((constructor)) static void failslab_preload_init(void)
{
	const char *s = getenv("VNET_FAILSLAB_EVERY");
	struct stat st;

	real_mmap = dlsym(RTLD_NEXT, "mmap");
	real_close = dlsym(RTLD_NEXT, "close");
	if (!real_mmap || !real_close)
		abort();
	if (s && atoi(s) > 0)
		every = atoi(s);
	if (!stat("/dev/vnet", &st))
		vnet_rdev = st.st_rdev;
	s = getenv("VNET_FAILSLAB_LOG");
	if (s)
		log_fd = open(s, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
}
