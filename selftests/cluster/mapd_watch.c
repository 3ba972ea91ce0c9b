// SPDX-License-Identifier: GPL-2.0
/*
 * mapd_watch FILE [INTERVAL_MS]: every version of vnet-mapd's state file,
 * for selftests/cluster/run.sh to time the mapper by.
 *
 * The daemon rewrites FILE (a rename, so a new inode) on every membership
 * change and every second, and stamps each version with its own wall
 * clock (written_at_ms).  This prints each version it sees as one line of
 * JSON, newlines dropped (they only separate tokens), polling every
 * INTERVAL_MS (default 20) until SIGTERM or SIGINT.  A version replaced
 * within one interval is missed, so a time read from the first version
 * that shows a change is late by at most INTERVAL_MS, never early.
 *
 * Polling rather than inotify: it costs a stat(2) per interval, and works
 * the same whether or not /run/vnet exists yet when it starts.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_FILE	(1 << 20)	/* a 4-node cluster writes ~1 KiB */

static volatile sig_atomic_t stop;

static void on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

/*
 * Print the file open on @fd as one line: 1 if it did, 0 if there was
 * nothing whole to print (try again), -1 if stdout failed.
 */
static int print_version(int fd)
{
	static char buf[MAX_FILE];
	size_t len = 0, i;
	ssize_t n;

	while (len < sizeof(buf)) {
		n = read(fd, buf + len, sizeof(buf) - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += n;
	}
	if (!len || len == sizeof(buf) || buf[len - 1] != '\n')
		return 0;
	for (i = 0; i < len; i++)
		if (buf[i] != '\n')
			putchar(buf[i]);
	putchar('\n');
	return fflush(stdout) ? -1 : 1;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_stop };
	struct timespec nap;
	struct stat last = { 0 }, st;
	unsigned long ms = 20;
	char *end;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: mapd_watch FILE [INTERVAL_MS]\n");
		return 2;
	}
	if (argc == 3) {
		ms = strtoul(argv[2], &end, 10);
		if (*end || !ms || ms > 10000) {
			fprintf(stderr, "mapd_watch: bad interval '%s'\n", argv[2]);
			return 2;
		}
	}
	nap.tv_sec = ms / 1000;
	nap.tv_nsec = (ms % 1000) * 1000000;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	while (!stop) {
		int fd = open(argv[1], O_RDONLY | O_CLOEXEC);

		/* Missing: the daemon has not written it yet, or has stopped. */
		if (fd >= 0 && !fstat(fd, &st) &&
		    (st.st_ino != last.st_ino ||
		     st.st_mtim.tv_sec != last.st_mtim.tv_sec ||
		     st.st_mtim.tv_nsec != last.st_mtim.tv_nsec ||
		     st.st_size != last.st_size)) {
			int ret = print_version(fd);

			if (ret < 0) {
				perror("mapd_watch: stdout");
				close(fd);
				return 1;
			}
			if (ret)
				last = st;
		}
		if (fd >= 0)
			close(fd);
		nanosleep(&nap, NULL);
	}
	return 0;
}
