// SPDX-License-Identifier: GPL-2.0
/*
 * LD_PRELOAD=trinity_preload.so trinity -V DIR ...: aim Debian's trinity
 * at vnet.
 *
 * Trinity opens its victim files at start, with fopen() or open(), and
 * makes its system calls through syscall(3) with random arguments.  Unaided it reaches
 * little of /dev/vnet: a file with no endpoint refuses most commands, and
 * a random ioctl command is never one of vnet's.  So this shim
 *
 *  - puts each /dev/vnet file trinity opens into one of the states a
 *    process's file can be in, in turn: no endpoint; an endpoint; one with
 *    a tag; one that can send to the previous file's endpoint, with its
 *    frame and staging mapped and touched (faulted onto the card);
 *  - gives each ioctl trinity makes on a /dev/vnet file one of vnet's
 *    commands, chosen by trinity's random command, and keeps trinity's
 *    argument (a random value, or a pointer to random or unmapped memory);
 *  - sends each mmap of a /dev/vnet file with an endpoint, one in two, to
 *    an offset that file has (its frame's or its staging area's), with
 *    trinity's length, protection and flags or, one in two of those, the
 *    area's length and a shared read-write mapping, as a program maps it;
 *
 * and counts what it did in memory shared with trinity's children.  The
 * main process prints the counts when it exits, on stderr:
 *
 *   # trinity_preload: 16 files, 12 endpoints, 4 mapped; 9811 ioctls
 *   sent to vnet (312 succeeded), 402 mmaps aimed (97 succeeded)
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/vnet.h>

static const unsigned long vnet_cmds[] = {
	VNET_IOC_INFO, VNET_IOC_NIC_INFO, VNET_IOC_EP_CREATE,
	VNET_IOC_SET_TAG, VNET_IOC_MAP, VNET_IOC_UNMAP, VNET_IOC_KICK,
	VNET_IOC_EP_STAT, VNET_IOC_SET_SEG, VNET_IOC_ATTACH,
	VNET_IOC_DETACH, VNET_IOC_ROUTE_ADD, VNET_IOC_ROUTE_DEL,
	VNET_IOC_ROUTE_LIST, VNET_IOC_PRIV_CREATE, VNET_IOC_PRIV_SET_ID,
};

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define SHIM_FDS	256

struct shim_counts {
	atomic_ulong files, endpoints, mapped;
	atomic_ulong ioctls, ioctls_ok;
	atomic_ulong mmaps, mmaps_ok;
	/* The last endpoint set up, the next one's destination. */
	struct vnet_name last;
	__u64 last_tag;
	atomic_bool have_last;
	/*
	 * What each file's endpoint maps: its offsets (the endpoint's own) by
	 * descriptor, and the sizes (every endpoint's).
	 */
	__u64 frame_offset[SHIM_FDS], staging_offset[SHIM_FDS];
	atomic_uint frame_size, staging_size;
};

static struct shim_counts *counts;
static pid_t main_pid;
static dev_t vnet_rdev;
static long (*real_syscall)(long, ...);
static FILE *(*real_fopen)(const char *, const char *);
static FILE *(*real_fopen64)(const char *, const char *);
static int (*real_open)(const char *, int, ...);
static int (*real_open64)(const char *, int, ...);

static int is_vnet_fd(long fd)
{
	struct stat st;

	return vnet_rdev && fd >= 0 && fd <= INT32_MAX &&
	       !fstat((int)fd, &st) && S_ISCHR(st.st_mode) &&
	       st.st_rdev == vnet_rdev;
}

static unsigned long shim_rand(void)
{
	static __thread unsigned long long x;

	if (!x)
		x = (unsigned long long)real_syscall(SYS_gettid) *
		    0x9e3779b97f4a7c15ULL | 1;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return (unsigned long)x;
}

/* One more step along the states a file can be in, for file @n. */
static void shim_set_up(int fd, unsigned long n)
{
	struct vnet_ep_create c = { .abi_version = VNET_ABI_VERSION };
	unsigned int stage = n % 4;
	__u64 tag = ((__u64)shim_rand() << 1) | 1;
	void *frame, *staging;

	if (stage == 0)
		return;
	if (real_syscall(SYS_ioctl, fd, VNET_IOC_EP_CREATE, &c))
		return;
	atomic_fetch_add(&counts->endpoints, 1);
	if (fd < SHIM_FDS) {
		counts->frame_offset[fd] = c.frame_offset;
		counts->staging_offset[fd] = c.staging_offset;
	}
	atomic_store(&counts->frame_size, c.frame_size);
	atomic_store(&counts->staging_size, c.staging_size);
	if (stage == 1 ||
	    real_syscall(SYS_ioctl, fd, VNET_IOC_SET_TAG, &tag))
		return;
	if (stage == 3 && atomic_load(&counts->have_last)) {
		struct vnet_map m = {
			.slot = 0,
			.name = counts->last,
			.tag = counts->last_tag,
		};

		real_syscall(SYS_ioctl, fd, VNET_IOC_MAP, &m);
		frame = mmap(NULL, c.frame_size, PROT_READ | PROT_WRITE,
			     MAP_SHARED, fd, c.frame_offset);
		staging = mmap(NULL, c.staging_size, PROT_READ | PROT_WRITE,
			       MAP_SHARED, fd, c.staging_offset);
		if (frame != MAP_FAILED && staging != MAP_FAILED) {
			/* Touched: the endpoint is faulted onto the card. */
			*(volatile char *)frame;
			*(volatile char *)staging = 0;
			atomic_fetch_add(&counts->mapped, 1);
		}
	}
	counts->last = c.name;
	counts->last_tag = tag;
	atomic_store(&counts->have_last, true);
}

static int shim_opened(int fd)
{
	if (counts && is_vnet_fd(fd))
		shim_set_up(fd, atomic_fetch_add(&counts->files, 1));
	return fd;
}

static FILE *shim_fopened(FILE *f)
{
	if (f)
		shim_opened(fileno(f));
	return f;
}

FILE *fopen(const char *path, const char *mode)
{
	if (!real_fopen)
		real_fopen = dlsym(RTLD_NEXT, "fopen");
	return shim_fopened(real_fopen(path, mode));
}

FILE *fopen64(const char *path, const char *mode)
{
	if (!real_fopen64)
		real_fopen64 = dlsym(RTLD_NEXT, "fopen64");
	return shim_fopened(real_fopen64(path, mode));
}

static mode_t open_mode(int flags, va_list ap)
{
	return flags & (O_CREAT | O_TMPFILE) ? va_arg(ap, mode_t) : 0;
}

int open(const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode;

	va_start(ap, flags);
	mode = open_mode(flags, ap);
	va_end(ap);
	if (!real_open)
		real_open = dlsym(RTLD_NEXT, "open");
	return shim_opened(real_open(path, flags, mode));
}

int open64(const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode;

	va_start(ap, flags);
	mode = open_mode(flags, ap);
	va_end(ap);
	if (!real_open64)
		real_open64 = dlsym(RTLD_NEXT, "open64");
	return shim_opened(real_open64(path, flags, mode));
}

long syscall(long nr, ...)
{
	long a[6], ret;
	bool ioctl = false, aimed = false;
	va_list ap;
	int i;

	va_start(ap, nr);
	for (i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);

	if (counts && nr == SYS_ioctl && is_vnet_fd(a[0])) {
		a[1] = (long)vnet_cmds[(unsigned long)a[1] %
				       ARRAY_SIZE(vnet_cmds)];
		ioctl = true;
	} else if (counts && nr == SYS_mmap && (shim_rand() & 1) &&
		   a[4] < SHIM_FDS && is_vnet_fd(a[4]) &&
		   counts->staging_offset[a[4]]) {
		bool frame = shim_rand() & 1;

		a[5] = (long)(frame ? counts->frame_offset[a[4]] :
			      counts->staging_offset[a[4]]);
		if (shim_rand() & 1) {
			a[1] = frame ? atomic_load(&counts->frame_size) :
				       atomic_load(&counts->staging_size);
			a[2] = PROT_READ | PROT_WRITE;
			a[3] = (a[3] & ~(long)MAP_TYPE) | MAP_SHARED;
		}
		aimed = true;
	}
	if (!real_syscall)
		real_syscall = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	ret = real_syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	if (ioctl) {
		atomic_fetch_add(&counts->ioctls, 1);
		if (ret >= 0)
			atomic_fetch_add(&counts->ioctls_ok, 1);
	} else if (aimed) {
		atomic_fetch_add(&counts->mmaps, 1);
		if (ret != -1)
			atomic_fetch_add(&counts->mmaps_ok, 1);
	}
	return ret;
}

__attribute__((constructor)) static void trinity_preload_init(void)
{
	struct stat st;
	void *p;

	real_syscall = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	real_fopen = dlsym(RTLD_NEXT, "fopen");
	real_fopen64 = dlsym(RTLD_NEXT, "fopen64");
	real_open = dlsym(RTLD_NEXT, "open");
	real_open64 = dlsym(RTLD_NEXT, "open64");
	if (!real_syscall || !real_fopen || !real_fopen64 || !real_open ||
	    !real_open64)
		abort();
	if (stat("/dev/vnet", &st))
		return;
	/* Shared with the children trinity forks, which do the calls. */
	p = mmap(NULL, sizeof(*counts), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return;
	counts = p;
	vnet_rdev = st.st_rdev;
	main_pid = getpid();
}

__attribute__((destructor)) static void trinity_preload_fini(void)
{
	if (!counts || getpid() != main_pid)
		return;
	fprintf(stderr,
		"# trinity_preload: %lu files, %lu endpoints, %lu mapped; %lu ioctls sent to vnet (%lu succeeded), %lu mmaps aimed (%lu succeeded)\n",
		atomic_load(&counts->files), atomic_load(&counts->endpoints),
		atomic_load(&counts->mapped), atomic_load(&counts->ioctls),
		atomic_load(&counts->ioctls_ok), atomic_load(&counts->mmaps),
		atomic_load(&counts->mmaps_ok));
}
