// SPDX-License-Identifier: GPL-2.0
/*
 * The state file (state.h).  Its format, one JSON object:
 *
 *   ifname, nic, mac, nic_id      this node: its NIC (vnetN, named by the
 *                                 id it has now), the id the table gives
 *                                 it (null: none yet, or refused), boot_id
 *   pid, written_at_ms            the daemon, and the wall clock when it
 *                                 wrote this (Unix ms): a reader can tell
 *                                 a stale file
 *   heartbeat_ms, dead_ms
 *   leader, is_leader             who this node believes leads
 *   term, version, table_leader   the installed table; term 0: none yet
 *   refused                       this node's --nic-id is refused
 *   members: [ { nic_id, mac, boot_id, state, self, leader,
 *                last_heartbeat_ms } ]
 *       state: alive, suspect (alive in the table but silent for two
 *       heartbeats), dead, refused (its configured id is claimed twice,
 *       or held by a live node), joining (heard,
 *       not in the table yet); last_heartbeat_ms: how long before
 *       written_at_ms its last HELLO came, null if not heard
 *   stats: the core's counters
 *
 * The file is 0600, like the route list it mirrors (ROUTE_LIST needs
 * CAP_NET_ADMIN).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "state.h"

static void put_mac(FILE *f, const char *key, const uint8_t *m)
{
	fprintf(f, "\"%s\":\"%02x:%02x:%02x:%02x:%02x:%02x\"", key, m[0], m[1],
		m[2], m[3], m[4], m[5]);
}

/* Interface and NIC names are short and plain, but escape them anyway. */
static void put_str(FILE *f, const char *key, const char *s)
{
	fprintf(f, "\"%s\":\"", key);
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static const char *const local_names[] = {
	[MAPD_LOCAL_ALIVE] = "alive",
	[MAPD_LOCAL_SUSPECT] = "suspect",
	[MAPD_LOCAL_DEAD] = "dead",
	[MAPD_LOCAL_REFUSED] = "refused",
	[MAPD_LOCAL_JOINING] = "joining",
};

struct members {
	FILE *f;
	uint64_t now;
	const uint8_t *leader;
	bool first;
};

static void member_fn(void *arg, const struct mapd_member *mb)
{
	struct members *w = arg;
	FILE *f = w->f;

	fprintf(f, "%s\n  {", w->first ? "" : ",");
	w->first = false;
	if (mb->e.id)
		fprintf(f, "\"nic_id\":%u,", mb->e.id);
	else
		fprintf(f, "\"nic_id\":null,");
	put_mac(f, "mac", mb->e.mac);
	fprintf(f, ",\"boot_id\":\"%016" PRIx64 "\",\"state\":\"%s\","
		"\"self\":%s,\"leader\":%s,\"last_heartbeat_ms\":",
		mb->e.boot, local_names[mb->local], mb->self ? "true" : "false",
		w->leader && !memcmp(w->leader, mb->e.mac, 6) ? "true" : "false");
	if (mb->heard)
		fprintf(f, "%" PRIu64 "}", w->now - mb->last_heard);
	else
		fprintf(f, "null}");
}

static void put_state(FILE *f, const struct mapd *m,
		      const struct mapd_state_info *info, uint64_t now)
{
	struct members w = { .f = f, .now = now, .first = true };
	struct mapd_status st;
	struct timespec ts;

	mapd_get_status(m, &st);
	clock_gettime(CLOCK_REALTIME, &ts);
	w.leader = st.have_leader ? st.leader : NULL;
	fputc('{', f);
	put_str(f, "ifname", info->ifname);
	fputc(',', f);
	put_str(f, "nic", info->nic);
	fputc(',', f);
	put_mac(f, "mac", st.mac);
	if (st.id)
		fprintf(f, ",\"nic_id\":%u", st.id);
	else
		fprintf(f, ",\"nic_id\":null");
	fprintf(f, ",\"boot_id\":\"%016" PRIx64 "\",\"pid\":%ld,"
		"\"written_at_ms\":%" PRIu64 ",\"heartbeat_ms\":%u,"
		"\"dead_ms\":%u,", info->boot_id, (long)getpid(),
		(uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000,
		st.heartbeat_ms, st.dead_ms);
	if (st.have_leader)
		put_mac(f, "leader", st.leader);
	else
		fprintf(f, "\"leader\":null");
	fprintf(f, ",\"is_leader\":%s,\"term\":%u,\"version\":%u,",
		st.is_leader ? "true" : "false", st.term, st.version);
	if (st.term)
		put_mac(f, "table_leader", st.table_leader);
	else
		fprintf(f, "\"table_leader\":null");
	fprintf(f, ",\"refused\":%s,\"members\":[", st.refused ? "true" : "false");
	mapd_foreach_member(m, now, member_fn, &w);
	fprintf(f, "\n],\"stats\":{\"rx\":%" PRIu64 ",\"rx_bad\":%" PRIu64
		",\"rx_forged\":%" PRIu64 ",\"rx_stale\":%" PRIu64
		",\"rx_dropped\":%" PRIu64 ",\"tx_hello\":%" PRIu64
		",\"tx_table\":%" PRIu64 ",\"tx_merge\":%" PRIu64
		",\"tables_bad\":%" PRIu64 ",\"installs\":%" PRIu64
		",\"publishes\":%" PRIu64 ",\"resends\":%" PRIu64
		",\"route_errors\":%" PRIu64 "}}\n",
		st.stats.rx, st.stats.rx_bad, st.stats.rx_forged,
		st.stats.rx_stale, st.stats.rx_dropped, st.stats.tx_hello,
		st.stats.tx_table, st.stats.tx_merge, st.stats.tables_bad,
		st.stats.installs, st.stats.publishes, st.stats.resends,
		st.stats.route_errors);
}

/* The directory of @path, made if missing (/run/vnet after a boot). */
static int make_dir(const char *path)
{
	char dir[4096];

	if (snprintf(dir, sizeof(dir), "%s", path) >= (int)sizeof(dir))
		return -ENAMETOOLONG;
	if (mkdir(dirname(dir), 0755) && errno != EEXIST)
		return -errno;
	return 0;
}

/*
 * A new file of our own beside PATH (mkostemp: O_EXCL, mode 0600), never
 * an existing PATH.tmp: the directory may be writable by others, and
 * opening a fixed name there with O_TRUNC would follow a symlink left in
 * its place.  The fd, or a negative errno.
 */
static int open_tmp(const char *path, char *tmp, size_t len)
{
	int fd;

	if (snprintf(tmp, len, "%s.XXXXXX", path) >= (int)len)
		return -ENAMETOOLONG;
	fd = mkostemp(tmp, O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int mapd_state_write(const char *path, const struct mapd *m,
		     const struct mapd_state_info *info, uint64_t now)
{
	char tmp[4096];
	int fd, err;
	FILE *f;

	fd = open_tmp(path, tmp, sizeof(tmp));
	if (fd == -ENOENT && !make_dir(path))
		fd = open_tmp(path, tmp, sizeof(tmp));
	if (fd < 0)
		return fd;
	f = fdopen(fd, "w");
	if (!f) {
		err = -errno;
		close(fd);
		unlink(tmp);
		return err;
	}
	put_state(f, m, info, now);
	err = ferror(f) ? -EIO : 0;
	if (fclose(f) && !err)
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}

void mapd_state_remove(const char *path)
{
	unlink(path);
}
