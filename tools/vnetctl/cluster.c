// SPDX-License-Identifier: GPL-2.0
/*
 * vnetctl cluster [--json] [--state-dir DIR] [IFNAME ...]: the membership
 * as each interface's vnet-mapd sees it, from the state file the daemon
 * rewrites on every change and every second (tools/vnet-mapd/state.c has
 * the format).  A file whose daemon is gone, or that has not been written
 * for three heartbeats, is shown as stale rather than as the truth.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "vnetctl.h"
#include "json_read.h"

#define CLUSTER_STATE_DIR	"/run/vnet"
#define CLUSTER_MAX_FILE	(4 << 20)	/* 4096 members fit many times */
#define CLUSTER_MAX_IFS		64

/* The whole file, or NULL with errno saying why. */
static char *slurp(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	char *buf = NULL;
	ssize_t n;
	int err = 0;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st)) {
		err = errno;
		goto out;
	}
	if (st.st_size > CLUSTER_MAX_FILE) {
		err = EFBIG;
		goto out;
	}
	buf = malloc(st.st_size + 1);
	if (!buf) {
		err = ENOMEM;
		goto out;
	}
	n = read(fd, buf, st.st_size);
	if (n != st.st_size) {
		/* Changed under us, or unreadable: no half a file. */
		err = n < 0 ? errno : EIO;
		free(buf);
		buf = NULL;
		goto out;
	}
	buf[n] = '\0';
	*len = n;
out:
	close(fd);
	errno = err;
	return buf;
}

/*
 * @s fit for a terminal: the state file is the daemon's, but what it
 * names (interfaces, MACs) may come from elsewhere, and a control
 * character must not reach the operator's terminal as one.  Four calls
 * may share one printf().
 */
static const char *printable(const char *s)
{
	static char bufs[4][128];
	static unsigned int next;
	char *out = bufs[next++ % 4];
	size_t i;

	for (i = 0; s[i] && i < sizeof(bufs[0]) - 1; i++)
		out[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' :
								      s[i];
	out[i] = '\0';
	return out;
}

/* Why @state cannot be believed now, or NULL. */
static const char *stale(const struct jv *state, char *buf, size_t len)
{
	double pid, written, hb = 500;
	struct timespec ts;
	double now_ms;

	clock_gettime(CLOCK_REALTIME, &ts);
	now_ms = ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
	/* A pid the kernel can have (pid_max is at most 2^22). */
	if (jv_num(state, "pid", &pid) && pid > 0 && pid <= (1 << 22) &&
	    pid == (double)(pid_t)pid && kill((pid_t)pid, 0) &&
	    errno == ESRCH) {
		snprintf(buf, len, "its daemon (pid %.0f) is not running", pid);
		return buf;
	}
	jv_num(state, "heartbeat_ms", &hb);
	if (!jv_num(state, "written_at_ms", &written))
		return "it says nothing of when it was written";
	if (now_ms - written > 3 * (hb > 1000 ? hb : 1000)) {
		snprintf(buf, len, "last written %.1f s ago",
			 (now_ms - written) / 1e3);
		return buf;
	}
	return NULL;
}

static void print_member(const struct jv *m)
{
	double id, heard;
	const char *mark = jv_bool(m, "self") ? "self" :
			   jv_bool(m, "leader") ? "leader" : "";
	char when[32] = "-";

	if (jv_num(m, "last_heartbeat_ms", &heard))
		snprintf(when, sizeof(when), "%.1f s", heard / 1e3);
	if (jv_num(m, "nic_id", &id))
		printf("  %5.0f", id);
	else
		printf("  %5s", "-");
	printf("  %-17s  %-8s  %10s  %-16s%s%s\n",
	       printable(jv_str(m, "mac", "?")),
	       printable(jv_str(m, "state", "?")), when,
	       printable(jv_str(m, "boot_id", "?")), *mark ? "  " : "", mark);
}

static void print_state(const struct jv *s, const char *why_stale)
{
	const struct jv *members = jv_get(s, "members");
	double id, term = 0, version = 0;
	char nic_id[24] = "none yet";
	size_t i;

	if (jv_num(s, "nic_id", &id))
		snprintf(nic_id, sizeof(nic_id), "%.0f", id);
	jv_num(s, "term", &term);
	jv_num(s, "version", &version);
	printf("%s: %s, NIC id %s, %s%s\n", printable(jv_str(s, "ifname", "?")),
	       printable(jv_str(s, "nic", "?")), nic_id,
	       printable(jv_str(s, "mac", "?")),
	       jv_bool(s, "refused") ? "; its --nic-id is REFUSED, "
				       "another node claims it too" : "");
	if (why_stale)
		printf("  STALE: %s\n", why_stale);
	if (jv_bool(s, "is_leader"))
		printf("  this node leads");
	else
		printf("  leader %s", printable(jv_str(s, "leader", "unknown")));
	if (term)
		printf("; table %.0f.%.0f from %s\n", term, version,
		       printable(jv_str(s, "table_leader", "?")));
	else
		printf("; no table yet\n");
	printf("  %5s  %-17s  %-8s  %10s  %s\n", "NIC", "MAC", "STATE",
	       "LAST_HEARD", "BOOT_ID");
	for (i = 0; members && members->kind == JV_ARRAY && i < members->n; i++)
		print_member(members->items[i]);
}

static void write_value(FILE *f, const struct jv *v);

static void write_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void write_value(FILE *f, const struct jv *v)
{
	size_t i;

	switch (v->kind) {
	case JV_NULL:
		fputs("null", f);
		break;
	case JV_BOOL:
		fputs(v->boolean ? "true" : "false", f);
		break;
	case JV_NUMBER:
		fprintf(f, "%.17g", v->num);
		break;
	case JV_STRING:
		write_string(f, v->str);
		break;
	case JV_ARRAY:
	case JV_OBJECT:
		fputc(v->kind == JV_ARRAY ? '[' : '{', f);
		for (i = 0; i < v->n; i++) {
			if (i)
				fputc(',', f);
			if (v->kind == JV_OBJECT) {
				write_string(f, v->keys[i]);
				fputc(':', f);
			}
			write_value(f, v->items[i]);
		}
		fputc(v->kind == JV_ARRAY ? ']' : '}', f);
		break;
	}
}

/* The state files to show: those named, or every one in @dir. */
static int list_files(const char *dir, char **names, int nr, char **paths,
		      int *n)
{
	struct dirent *de;
	DIR *d;
	int i;

	*n = 0;
	for (i = 0; i < nr && *n < CLUSTER_MAX_IFS; i++)
		if (asprintf(&paths[(*n)++], "%s/mapd-%s.json", dir,
			     names[i]) < 0)
			return -ENOMEM;
	if (nr)
		return 0;
	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d)) && *n < CLUSTER_MAX_IFS) {
		size_t len = strlen(de->d_name);

		if (strncmp(de->d_name, "mapd-", 5) || len < 11 ||
		    strcmp(de->d_name + len - 5, ".json"))
			continue;
		if (asprintf(&paths[(*n)++], "%s/%s", dir, de->d_name) < 0) {
			closedir(d);
			return -ENOMEM;
		}
	}
	closedir(d);
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int vnetctl_cmd_cluster(int argc, char **argv)
{
	const char *dir = CLUSTER_STATE_DIR;
	char *names[CLUSTER_MAX_IFS], *paths[CLUSTER_MAX_IFS];
	int a, i, n, nr = 0, err, ret = VNETCTL_EXIT_OK, shown = 0;
	bool json = false;

	for (a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "--json")) {
			json = true;
		} else if (!strcmp(argv[a], "--state-dir") && a + 1 < argc) {
			dir = argv[++a];
		} else if (argv[a][0] != '-' && nr < CLUSTER_MAX_IFS &&
			   !strchr(argv[a], '/')) {
			names[nr++] = argv[a];
		} else {
			vnetctl_msg("cluster: bad argument '%s'", argv[a]);
			vnetctl_usage(stderr);
			return VNETCTL_EXIT_USAGE;
		}
	}
	err = list_files(dir, names, nr, paths, &n);
	if (err) {
		vnetctl_err(-err, "%s", dir);
		return VNETCTL_EXIT_FAIL;
	}
	if (!n) {
		vnetctl_msg("cluster: no vnet-mapd state in %s: is vnet-mapd "
			    "running (systemctl start vnet-mapd@IFNAME)?", dir);
		return VNETCTL_EXIT_FAIL;
	}
	qsort(paths, n, sizeof(*paths), cmp_str);
	if (json)
		fputs("{\"interfaces\":[", stdout);
	for (i = 0; i < n; i++) {
		char why[96];
		const char *why_stale;
		size_t len = 0;
		char *text = slurp(paths[i], &len);
		struct jv *state = text ? jv_parse(text, len) : NULL;

		if (!state || state->kind != JV_OBJECT) {
			vnetctl_msg("cluster: %s: %s", paths[i],
				    text ? "not a vnet-mapd state file" :
					   strerror(errno));
			ret = VNETCTL_EXIT_FAIL;
		} else {
			why_stale = stale(state, why, sizeof(why));
			if (json) {
				printf("%s{\"stale\":%s,\"state\":", shown ?
				       "," : "", why_stale ? "true" : "false");
				write_value(stdout, state);
				putchar('}');
			} else {
				if (shown)
					putchar('\n');
				print_state(state, why_stale);
			}
			shown++;
		}
		jv_free(state);
		free(text);
		free(paths[i]);
	}
	if (json)
		puts("]}");
	return ret;
}
