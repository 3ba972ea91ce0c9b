// SPDX-License-Identifier: GPL-2.0
/*
 * Error and progress messages on stderr, prefixed with the program's name:
 * vnetctl's, or that of another program linking these helpers (vnet-bench).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "vnetctl.h"

const char *vnetctl_prog = VNETCTL_NAME;

/* "<prog>: <message>", without the newline. */
static __printf(1, 0) void vmsg(const char *fmt, va_list ap)
{
	fflush(stdout);
	fprintf(stderr, "%s: ", vnetctl_prog);
	vfprintf(stderr, fmt, ap);
}

/* "<prog>: <what>: <strerror>" for a positive or negative errno. */
void vnetctl_err(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
	fprintf(stderr, ": %s\n", strerror(err < 0 ? -err : err));
}

/* Close an output file, naming it if its last write failed. */
int vnetctl_fclose(FILE *f, const char *path)
{
	if (f && fclose(f)) {
		vnetctl_err(errno, "%s", path);
		return -1;
	}
	return 0;
}

/* "<prog>: <message>" */
void vnetctl_msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}
