// SPDX-License-Identifier: GPL-2.0
/*
 * vnet-bench memcpy: how fast this machine copies a stream of messages of
 * each size, what a design that copies each byte once pays per byte; make
 * bench-wire prints it beside vnet's and its peers' bandwidth.
 *
 * Each copy goes from and to the next SIZE bytes of two 64 MiB buffers,
 * wrapping at their end, so that neither side is the same cache-warm
 * bytes every time, as a stream of messages is not: a copy of bytes still
 * in the cache can be faster.  The destination is 256 bytes further into
 * its page than the source, as two unrelated buffers would be, not at the
 * same offset, which slows some copy routines.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vnetctl.h"
#include "vnet-bench.h"

#define MEMCPY_BUF		(64u << 20)
#define MEMCPY_DST_SKEW		256
#define MEMCPY_MAX_SIZES	32

struct memcpy_opts {
	uint32_t sizes[MEMCPY_MAX_SIZES];
	unsigned int nr_sizes;
	double seconds;
	const char *csv;
};

enum { OPT_SIZES, OPT_SECONDS, OPT_CSV };

static const struct bench_opt memcpy_opts[] = {
	{ "--sizes", OPT_SIZES, false },
	{ "--seconds", OPT_SECONDS, false },
	{ "--csv", OPT_CSV, false },
	{ NULL, 0, false }
};

static int memcpy_parse(int argc, char **argv, struct memcpy_opts *o)
{
	const struct bench_opt *opt;
	const char *v;
	int a;

	memset(o, 0, sizeof(*o));
	o->seconds = 1;
	bench_parse_sizes("64,1024,8192,65536,1048576", o->sizes,
			  MEMCPY_MAX_SIZES, &o->nr_sizes, 1, MEMCPY_BUF);
	for (a = 2; a < argc; a++) {
		opt = bench_next_opt(argv[1], argc, argv, &a, memcpy_opts, &v);
		if (!opt)
			return -1;
		switch (opt->id) {
		case OPT_SIZES:
			if (bench_parse_sizes(v, o->sizes, MEMCPY_MAX_SIZES,
					      &o->nr_sizes, 1, MEMCPY_BUF))
				goto bad;
			break;
		case OPT_SECONDS:
			if (bench_parse_seconds(v, &o->seconds))
				goto bad;
			break;
		default:	/* OPT_CSV */
			if (!*v)
				goto bad;
			o->csv = v;
		}
	}
	return 0;
bad:
	bench_bad_value(argv[1], opt, v);
	return -1;
}

static double memcpy_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Bytes per second copying @size bytes at a time for @seconds. */
static double memcpy_rate(char *dst, const char *src, uint32_t size,
			  double seconds)
{
	double start = memcpy_now(), now;
	uint64_t bytes = 0;
	size_t off = 0;
	unsigned int i;

	do {
		/* The clock is read once per 256 KiB or so, at least. */
		for (i = 0; i < 1 + (256u << 10) / size; i++) {
			if (off + size > MEMCPY_BUF)
				off = 0;
			memcpy(dst + off, src + off, size);
			/* The copies must happen, though nothing reads them. */
			__asm__ volatile("" : : "r"(dst) : "memory");
			off += size;
			bytes += size;
		}
		now = memcpy_now();
	} while (now - start < seconds);
	return bytes / (now - start);
}

int bench_cmd_memcpy(int argc, char **argv)
{
	struct memcpy_opts o;
	FILE *csv = NULL;
	char *src, *dst;
	unsigned int i;

	if (memcpy_parse(argc, argv, &o))
		return VNETCTL_EXIT_USAGE;
	src = malloc(MEMCPY_BUF);
	dst = malloc(MEMCPY_BUF + MEMCPY_DST_SKEW);
	if (!src || !dst) {
		vnetctl_err(ENOMEM, "memcpy: two buffers of %u MiB",
			    MEMCPY_BUF >> 20);
		free(src);
		free(dst);
		return VNETCTL_EXIT_FAIL;
	}
	/*
	 * Faulted in before the clock starts.  Not with zeroes: malloc() and
	 * a memset() to 0 may be compiled into a calloc(), which leaves
	 * fresh pages untouched.
	 */
	memset(src, 0x5a, MEMCPY_BUF);
	memset(dst, 0xa5, MEMCPY_BUF + MEMCPY_DST_SKEW);
	if (o.csv) {
		csv = fopen(o.csv, "w");
		if (!csv) {
			vnetctl_err(errno, "%s", o.csv);
			free(src);
			free(dst);
			return VNETCTL_EXIT_FAIL;
		}
		fprintf(csv, "size,mb_per_s\n");
	}
	printf("%8s %10s\n", "SIZE", "MB/S");
	for (i = 0; i < o.nr_sizes; i++) {
		double mbs = memcpy_rate(dst + MEMCPY_DST_SKEW, src,
					 o.sizes[i], o.seconds) / 1e6;

		printf("%8u %10.1f\n", o.sizes[i], mbs);
		if (csv)
			fprintf(csv, "%u,%.1f\n", o.sizes[i], mbs);
	}
	printf("MB/s: 10^6 bytes copied per second, each copy from and to "
	       "the next SIZE bytes of two %u MiB buffers (not in the cache).\n",
	       MEMCPY_BUF >> 20);
	free(src);
	free(dst);
	return bench_finish(csv, o.csv, VNETCTL_EXIT_OK);
}
