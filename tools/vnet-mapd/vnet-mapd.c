// SPDX-License-Identifier: GPL-2.0
/*
 * vnet-mapd IFNAME [--heartbeat-ms N] [--dead-ms N] [--nic-id N]
 *                  [--state-file PATH]
 *
 * The mapper of the vnet NIC attached to IFNAME: it makes an open
 * /dev/vnet the NIC's privileged endpoint and runs the protocol core
 * (mapd.h) on it, with a monotonic clock, until SIGTERM or SIGINT.  What
 * the core decides goes to the kernel through kernel.c; every membership
 * change is one line on stderr (the journal, under systemd); the
 * membership is in the state file, for `vnetctl cluster`.
 *
 * Exit status: 0 after a clean stop, 1 on failure, 2 on a usage error.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "kernel.h"
#include "mapd.h"
#include "state.h"

#define NAME		"vnet-mapd"
#define RX_BURST	256	/* datagrams per wake-up: ticks never starve */
#define STATE_MS	1000	/* the state file at least this often */
#define REPEAT_MS	60000	/* the same error again after this long */

struct daemon {
	const char *ifname;
	struct mapd_nic nic;
	struct mapd *m;
	uint64_t boot_id;
	char state_path[PATH_MAX];
	bool state_dirty;
	uint64_t state_at;
	int state_err;
	bool fatal;
	/* The last error of each kind, so a retried one is said once. */
	int route_err;
	uint64_t route_err_at;
	int id_err;
	int send_err;
};

static volatile sig_atomic_t stopping;

static __attribute__((format(printf, 2, 3)))
void say(const struct daemon *d, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, NAME "[%s]: ", d->ifname);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static const char *mac_str(const uint8_t m[6], char buf[18])
{
	snprintf(buf, 18, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2],
		 m[3], m[4], m[5]);
	return buf;
}

static void op_send(void *ctx, const uint8_t to[6], const void *buf,
		    size_t len)
{
	struct daemon *d = ctx;
	int err = mapd_nic_send(&d->nic, to, buf, len);

	/* A full queue is a lost datagram, which the protocol lives with. */
	if (!err || err == -EAGAIN || err == -ENOBUFS)
		return;
	if (err == -ENODEV) {
		say(d, "%s is gone: stopping", d->nic.name);
		d->fatal = true;
	} else if (err != d->send_err) {
		say(d, "sending a datagram: %s", strerror(-err));
	}
	d->send_err = err;
}

static void route_error(struct daemon *d, const char *what, uint32_t peer,
			int err)
{
	uint64_t now = now_ms();
	const char *hint = "";

	if (err == d->route_err && now - d->route_err_at < REPEAT_MS)
		return;
	d->route_err = err;
	d->route_err_at = now;
	if (err == -ENOSPC)
		hint = " (every route slot is taken: load vnet with max_peers= at least the cluster's size)";
	else if (err == -EINVAL && peer == d->nic.nic_id)
		hint = " (this NIC still has that id)";
	say(d, "%s the route to NIC %u: %s%s; trying again every few seconds",
	    what, peer, strerror(-err), hint);
}

static int op_route_add(void *ctx, uint32_t peer, const uint8_t mac[6])
{
	struct daemon *d = ctx;
	int err = mapd_nic_route_add(&d->nic, peer, mac);

	if (err)
		route_error(d, "adding", peer, err);
	return err;
}

static int op_route_del(void *ctx, uint32_t peer)
{
	struct daemon *d = ctx;
	int err = mapd_nic_route_del(&d->nic, peer);

	if (err)
		route_error(d, "deleting", peer, err);
	return err;
}

static int op_set_id(void *ctx, uint32_t id)
{
	struct daemon *d = ctx;
	int err = mapd_nic_set_id(&d->nic, id);

	if (!err) {
		d->id_err = 0;
		return 0;
	}
	if (err != d->id_err) {
		if (err == -EBUSY)
			say(d, "cannot take NIC id %u while %s has endpoints open; trying again every few seconds",
			    id, d->nic.name);
		else if (err == -EEXIST)
			say(d, "cannot take NIC id %u: another NIC on this host has it",
			    id);
		else
			say(d, "cannot take NIC id %u: %s", id, strerror(-err));
	}
	d->id_err = err;
	return err;
}

static void op_event(void *ctx, const struct mapd_event *ev)
{
	struct daemon *d = ctx;
	char a[18], b[18];

	d->state_dirty = true;
	mac_str(ev->mac, a);
	mac_str(ev->other, b);
	switch (ev->kind) {
	case MAPD_EV_SYNCED:
		say(d, "took table %u.%u: %u members", ev->term, ev->version,
		    ev->count);
		break;
	case MAPD_EV_LEADER:
		say(d, "leader is %s (term %u)", a, ev->term);
		break;
	case MAPD_EV_LEADING:
		say(d, "this node leads (term %u)", ev->term);
		break;
	case MAPD_EV_JOINED:
		say(d, "NIC %u (%s) is alive", ev->id, a);
		break;
	case MAPD_EV_DIED:
		say(d, "NIC %u (%s) is dead: its route is withdrawn", ev->id, a);
		break;
	case MAPD_EV_REBOOTED:
		say(d, "NIC %u (%s) rebooted", ev->id, a);
		break;
	case MAPD_EV_RENUMBERED:
		say(d, "%s moved from NIC %u to NIC %u", a, ev->old_id, ev->id);
		break;
	case MAPD_EV_FORGOTTEN:
		say(d, "%s (NIC %u) left the table", a, ev->id);
		break;
	case MAPD_EV_CONFLICT:
		say(d, "NIC id %u is configured on both %s and %s: refused to both",
		    ev->id, a, b);
		break;
	case MAPD_EV_SELF_ID:
		say(d, "this node is NIC %u", ev->id);
		break;
	case MAPD_EV_REFUSED:
		say(d, "error: --nic-id %u is configured on %s too: the id is refused to both, and no node routes it until one of them stops or is configured with another",
		    ev->id, b);
		break;
	case MAPD_EV_HELD:
		say(d, "NIC id %u is configured on %s, but %s holds it and is alive: refused to %s",
		    ev->id, a, b, a);
		break;
	case MAPD_EV_REFUSED_HELD:
		say(d, "error: --nic-id %u is held by %s, which is alive: the id is refused to this node until %s is dead or stops",
		    ev->id, b, b);
		break;
	case MAPD_EV_STALLED:
		say(d, "not scheduled for %u ms: the peers' silence meanwhile is not counted against them",
		    ev->count);
		break;
	case MAPD_EV_FULL:
		say(d, "the table is full: %u nodes not admitted (at most %u members)",
		    ev->count, MAPD_MAX_MEMBERS);
		break;
	}
}

static const struct mapd_ops ops = {
	.send = op_send,
	.route_add = op_route_add,
	.route_del = op_route_del,
	.set_id = op_set_id,
	.event = op_event,
};

/*
 * The host's boot and this NIC's address, hashed: a restarted daemon
 * keeps the boot id, since its NIC, endpoints and peers' routes are
 * untouched; a reboot changes it, and peers reset their routes to it.
 */
static uint64_t boot_id(const uint8_t mac[6])
{
	uint64_t h = 0xcbf29ce484222325ULL;
	char buf[64];
	ssize_t n = -1;
	int fd, i;

	fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf));
		close(fd);
	}
	if (n <= 0 && getrandom(buf, sizeof(buf), 0) != sizeof(buf))
		return 0;
	for (i = 0; i < (n > 0 ? n : (ssize_t)sizeof(buf)); i++)
		h = (h ^ (uint8_t)buf[i]) * 0x100000001b3ULL;
	for (i = 0; i < 6; i++)
		h = (h ^ mac[i]) * 0x100000001b3ULL;
	return h ? h : 1;
}

static int preset(void *arg, uint32_t peer, const uint8_t mac[6])
{
	struct daemon *d = arg;
	int err = mapd_preset_route(d->m, peer, mac);

	if (err)
		say(d, "route to NIC %u, set before the mapper: %s", peer,
		    strerror(-err));
	return 0;
}

static void write_state(struct daemon *d, uint64_t now)
{
	struct mapd_state_info info = {
		.ifname = d->ifname,
		.nic = d->nic.name,
		.boot_id = d->boot_id,
	};
	int err = mapd_state_write(d->state_path, d->m, &info, now);

	if (err && err != d->state_err)
		say(d, "%s: %s", d->state_path, strerror(-err));
	d->state_err = err;
	d->state_dirty = false;
	d->state_at = now;
}

static void on_signal(int sig)
{
	(void)sig;
	stopping = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: " NAME " IFNAME [options]\n"
		"\n"
		"The mapper of the vnet NIC attached to IFNAME: finds the other nodes\n"
		"on the segment, numbers the NICs and keeps their routes.\n"
		"\n"
		"  --heartbeat-ms N   HELLO every N ms (default %u)\n"
		"  --dead-ms N        a node silent this long is dead (default %u,\n"
		"                     at least 3 heartbeats)\n"
		"  --nic-id N         this NIC's id, 1-65535, instead of one the\n"
		"                     leader assigns\n"
		"  --state-file PATH  the membership as JSON (default\n"
		"                     /run/vnet/mapd-IFNAME.json)\n",
		MAPD_HEARTBEAT_MS, MAPD_DEAD_MS);
}

static int parse_u32(const char *s, uint32_t *out)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || !*s || *end || *s == '-' || v > UINT32_MAX)
		return -1;
	*out = v;
	return 0;
}

static int parse_args(int argc, char **argv, struct daemon *d,
		      struct mapd_config *cfg)
{
	const char *state = NULL;
	bool id_given = false;
	int a;

	for (a = 1; a < argc; a++) {
		const char *opt = argv[a];
		uint32_t *val = NULL;

		if (!strcmp(opt, "--help") || !strcmp(opt, "-h")) {
			usage(stdout);
			exit(0);
		}
		if (opt[0] != '-') {
			if (d->ifname)
				return -1;
			d->ifname = opt;
			continue;
		}
		if (a + 1 == argc) {
			fprintf(stderr, NAME ": %s needs a value\n", opt);
			return -1;
		}
		if (!strcmp(opt, "--heartbeat-ms"))
			val = &cfg->heartbeat_ms;
		else if (!strcmp(opt, "--dead-ms"))
			val = &cfg->dead_ms;
		else if (!strcmp(opt, "--nic-id"))
			val = &cfg->nic_id, id_given = true;
		else if (!strcmp(opt, "--state-file"))
			state = argv[a + 1];
		else {
			fprintf(stderr, NAME ": unknown option '%s'\n", opt);
			return -1;
		}
		if (val && parse_u32(argv[a + 1], val)) {
			fprintf(stderr, NAME ": bad value '%s' for %s\n",
				argv[a + 1], opt);
			return -1;
		}
		a++;
	}
	if (!d->ifname || strlen(d->ifname) >= 16)
		return -1;
	if (id_given && (cfg->nic_id == MAPD_NO_ID || cfg->nic_id > MAPD_MAX_ID)) {
		fprintf(stderr, NAME ": --nic-id must be 1 to %u\n", MAPD_MAX_ID);
		return -1;
	}
	if (state)
		snprintf(d->state_path, sizeof(d->state_path), "%s", state);
	else
		snprintf(d->state_path, sizeof(d->state_path),
			 "/run/vnet/mapd-%s.json", d->ifname);
	return 0;
}

/* Datagrams until none is left or a burst is done. */
static void receive(struct daemon *d)
{
	uint8_t buf[MAPD_MTU], src[6];
	int i;

	for (i = 0; i < RX_BURST && !d->fatal; i++) {
		ssize_t n = mapd_nic_recv(&d->nic, src, buf, sizeof(buf));

		if (n == -EAGAIN)
			return;
		if (n == -EBADMSG || n == -EINTR)
			continue;
		if (n < 0) {
			say(d, "receiving: %s: stopping", strerror((int)-n));
			d->fatal = true;
			return;
		}
		mapd_input(d->m, now_ms(), src, buf, n);
	}
}

static int run(struct daemon *d)
{
	struct pollfd pfd = { .fd = d->nic.fd, .events = POLLIN };
	struct sigaction sa = { .sa_handler = on_signal };
	sigset_t block, orig;

	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	/* Blocked but while in ppoll(): no stop request slips past it. */
	sigprocmask(SIG_BLOCK, &block, &orig);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	while (!stopping && !d->fatal) {
		uint64_t now = now_ms(), next = mapd_tick(d->m, now), wait;
		struct timespec ts;

		if (d->state_dirty || now - d->state_at >= STATE_MS)
			write_state(d, now);
		now = now_ms();
		wait = next > now ? next - now : 0;
		if (wait > STATE_MS)
			wait = STATE_MS;
		ts.tv_sec = wait / 1000;
		ts.tv_nsec = (wait % 1000) * 1000000;
		if (ppoll(&pfd, 1, &ts, &orig) < 0) {
			if (errno == EINTR)
				continue;
			say(d, "poll: %s", strerror(errno));
			return 1;
		}
		if (pfd.revents & POLLIN)
			receive(d);
		if (pfd.revents & (POLLERR | POLLHUP | POLLNVAL)) {
			say(d, "%s is gone: stopping", d->nic.name);
			d->fatal = true;
		}
	}
	return d->fatal;
}

int main(int argc, char **argv)
{
	struct mapd_config cfg = { 0 };
	struct daemon d = { .state_err = 0 };
	const char *bad;
	char why[128], mac[18];
	int err, ret;

	if (parse_args(argc, argv, &d, &cfg)) {
		usage(stderr);
		return 2;
	}
	err = mapd_nic_open(&d.nic, d.ifname, why, sizeof(why));
	if (err) {
		say(&d, "%s: %s", why, strerror(-err));
		return 1;
	}
	if (d.nic.mtu < MAPD_MTU) {
		say(&d, "%s carries mapper datagrams of %u bytes; the mapper needs %u",
		    d.nic.name, d.nic.mtu, MAPD_MTU);
		return 1;
	}
	memcpy(cfg.mac, d.nic.mac, 6);
	cfg.boot_id = d.boot_id = boot_id(d.nic.mac);
	if (getrandom(&cfg.hash_key, sizeof(cfg.hash_key), 0) !=
	    sizeof(cfg.hash_key)) {
		say(&d, "getrandom: %s", strerror(errno));
		return 1;
	}
	bad = mapd_config_error(&cfg);
	if (bad) {
		say(&d, "%s", bad);
		return 2;
	}
	/*
	 * The operator's id is the NIC's from the start, granted or not: a
	 * refused claim is refused by nobody routing it, and meanwhile the
	 * NIC must not keep the placeholder id attach gave it, which a peer
	 * may hold.  Ids from the leader wait for the table; until then the
	 * core routes no peer by the id the NIC has.
	 */
	if (cfg.nic_id)
		op_set_id(&d, cfg.nic_id);
	cfg.nic_id_now = d.nic.nic_id;
	d.m = mapd_create(&cfg, &ops, &d, now_ms());
	if (!d.m) {
		say(&d, "out of memory");
		return 1;
	}
	err = mapd_nic_routes(&d.nic, preset, &d);
	if (err)
		say(&d, "listing the routes %s had: %s", d.nic.name,
		    strerror(-err));
	say(&d, "mapping %s (%s, boot id %016" PRIx64 "), %s%u, heartbeat %u ms, dead after %u ms",
	    d.nic.name, mac_str(d.nic.mac, mac), d.boot_id,
	    cfg.nic_id ? "NIC id " : "NIC id from the leader, now ",
	    cfg.nic_id ? cfg.nic_id : d.nic.nic_id,
	    cfg.heartbeat_ms ? cfg.heartbeat_ms : MAPD_HEARTBEAT_MS,
	    cfg.dead_ms ? cfg.dead_ms : MAPD_DEAD_MS);

	ret = run(&d);
	if (!d.fatal) {
		/* Peers withdraw our routes at once rather than after dead_ms. */
		mapd_leave(d.m, now_ms());
		say(&d, "stopped");
	}
	mapd_state_remove(d.state_path);
	mapd_destroy(d.m);
	mapd_nic_close(&d.nic);
	return ret;
}
