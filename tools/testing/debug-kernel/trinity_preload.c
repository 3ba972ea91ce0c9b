// SPDX-License-Identifier: GPL-2.0
/*
 * LD_PRELOAD=trinity_preload.so trinity -V DIR ...: aim Debian's trinity
 * at vnet.
 *
 * Trinity opens its victim files at start, with fopen() or open(), and
 * makes its system calls through syscall(3) with random arguments.
 * Unaided it reaches little of /dev/vnet: a file with no endpoint refuses
 * most commands, and a random ioctl command is never one of vnet's.  So
 * this shim
 *
 *  - puts each /dev/vnet file trinity opens into one of the states a
 *    process's file can be in, in turn: no endpoint; an endpoint; one with
 *    a tag; one that can send to the previous file's endpoint, with its
 *    frame and staging mapped and touched (faulted onto the card);
 *  - gives each ioctl trinity makes on a /dev/vnet file one of vnet's
 *    commands, chosen by trinity's random command, and keeps trinity's
 *    argument (a random value, or a pointer to random or unmapped memory);
 *  - sends each mmap of a /dev/vnet file with an endpoint, one in two, to
 *    an offset that file has (its frame's or its staging area's): with
 *    trinity's length, protection and flags, which vnet refuses for the
 *    length (trinity asks for 4 KiB, 1 MiB or 2 MiB), or, one in two, as
 *    a program maps it: the area's length, shared and read-write, inside
 *    a reservation of trinity's length, which trinity goes on to use,
 *    unmap and remap as its own;
 *
 * and counts what it did in memory shared with trinity's children: the
 * file VNET_TRINITY_COUNTS, which outlives trinity however it ends (its
 * main process too dies of a fault now and then, see vm-check), begins with
 * eight 64-bit counts: files, endpoints, mapped, ioctls sent to vnet and
 * of them succeeded, mmaps aimed and of them succeeded, and the calls
 * trinity made through syscall(3) (its fuzzed calls), counted as they
 * return.
 *
 * VNET_TRINITY_SEED seeds its choices, each child's its own.
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

/* Its head is read by vm-check: the eight counts, in this order. */
struct shim_counts {
	atomic_ulong files, endpoints, mapped;
	atomic_ulong ioctls, ioctls_ok;
	atomic_ulong mmaps, mmaps_ok;
	atomic_ulong calls;
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

static unsigned long long shim_seed;

/*
 * A child forked by trinity must not repeat its parent's or its siblings'
 * choices: the state is seeded again whenever the pid changes.
 */
static unsigned long shim_rand(void)
{
	static __thread unsigned long long x;
	static __thread pid_t seeded_for;
	pid_t pid = getpid();

	if (seeded_for != pid) {
		seeded_for = pid;
		x = (shim_seed ^ (unsigned long long)pid) *
		    0x9e3779b97f4a7c15ULL | 1;
	}
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
	bool mapped;

	if (stage == 0)
		return;
	if (real_syscall(SYS_ioctl, fd, VNET_IOC_EP_CREATE, &c))
		return;
	atomic_fetch_add(&counts->endpoints, 1);
	/* Never 0, unlike a frame's: marks the files with an endpoint. */
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

		mapped = !real_syscall(SYS_ioctl, fd, VNET_IOC_MAP, &m);
		frame = mmap(NULL, c.frame_size, PROT_READ | PROT_WRITE,
			     MAP_SHARED, fd, c.frame_offset);
		staging = mmap(NULL, c.staging_size, PROT_READ | PROT_WRITE,
			       MAP_SHARED, fd, c.staging_offset);
		if (mapped && frame != MAP_FAILED && staging != MAP_FAILED) {
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

/* Only these take a mode (O_TMPFILE holds O_DIRECTORY's bit too). */
static mode_t open_mode(int flags, va_list ap)
{
	return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ?
	       va_arg(ap, mode_t) : 0;
}

static int shim_open(int (**real)(const char *, int, ...), const char *sym,
		     const char *path, int flags, va_list ap)
{
	mode_t mode = open_mode(flags, ap);

	if (!*real)
		*real = dlsym(RTLD_NEXT, sym);
	return shim_opened((*real)(path, flags, mode));
}

int open(const char *path, int flags, ...)
{
	va_list ap;
	int fd;

	va_start(ap, flags);
	fd = shim_open(&real_open, "open", path, flags, ap);
	va_end(ap);
	return fd;
}

int open64(const char *path, int flags, ...)
{
	va_list ap;
	int fd;

	va_start(ap, flags);
	fd = shim_open(&real_open64, "open64", path, flags, ap);
	va_end(ap);
	return fd;
}

/*
 * An area mapped as a program maps it, where trinity asked for @len bytes
 * at @hint: inside a reservation of the larger length, returned as
 * trinity's mapping, so that whatever trinity does with its length later
 * it does to memory it holds.
 */
static long shim_mmap_area(long hint, unsigned long len, unsigned long area,
			   long flags, long fd, long off)
{
	unsigned long size = len > area ? len : area;
	long base, ret;

	base = real_syscall(SYS_mmap, hint, size, PROT_NONE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (base == -1)
		return -1;
	/* Of trinity's flags, those a program could add to a shared one. */
	flags = (flags & (MAP_POPULATE | MAP_LOCKED | MAP_NONBLOCK)) |
		MAP_SHARED | MAP_FIXED;
	ret = real_syscall(SYS_mmap, base, area, PROT_READ | PROT_WRITE, flags,
			   fd, off);
	if (ret == -1) {
		int err = errno;

		real_syscall(SYS_munmap, base, size);
		errno = err;
	}
	return ret;
}

/*
 * glibc's syscall(3) passes six arguments whatever the call takes, and so
 * does trinity: reading six is what the real one does on x86-64.
 */
long syscall(long nr, ...)
{
	bool ioctl = false, aimed = false;
	int saved_errno = errno;
	long a[6], ret;
	va_list ap;
	int i;

	va_start(ap, nr);
	for (i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (!real_syscall)
		real_syscall = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");

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
		aimed = true;
		if (shim_rand() & 1) {
			unsigned long area = frame ?
				atomic_load(&counts->frame_size) :
				atomic_load(&counts->staging_size);

			errno = saved_errno;
			ret = shim_mmap_area(a[0], a[1], area, a[3], a[4],
					     a[5]);
			goto count;
		}
	}
	/* The fstat() of is_vnet_fd() must not show in errno. */
	errno = saved_errno;
	ret = real_syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
count:
	if (counts)
		atomic_fetch_add(&counts->calls, 1);
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
	const char *s;
	void *p;
	int fd;

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
	s = getenv("VNET_TRINITY_COUNTS");
	if (!s)
		return;
	fd = open(s, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || ftruncate(fd, sizeof(*counts)))
		abort();
	p = mmap(NULL, sizeof(*counts), PROT_READ | PROT_WRITE, MAP_SHARED,
		 fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		abort();
	counts = p;
	vnet_rdev = st.st_rdev;
	s = getenv("VNET_TRINITY_SEED");
	shim_seed = s ? strtoull(s, NULL, 0) : (unsigned long long)getpid();
}
