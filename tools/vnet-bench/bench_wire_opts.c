// SPDX-License-Identifier: GPL-2.0
/*
 * The command line of vnet-bench pingpong, bw and serve, and the NICs
 * it names: two local ones by default; or a local client and a --peer
 * server on another node, which "vnet-bench serve" runs there and whose name
 * and tag it prints for the client's --peer and VNET_TAG.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "vnetctl.h"
#include "vnet-bench.h"
#include "bench_wire.h"

/* The largest payload both NICs' links carry, from VNET_IOC_NIC_INFO. */
int wire_max_payload(const struct wire_opts *o, uint32_t *max)
{
	struct vnet_nic_info info = { 0 };
	int fd = open(VNET_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	bool from = false, to = false;

	if (fd < 0) {
		vnetctl_err(errno, VNET_DEVICE_PATH);
		return -1;
	}
	*max = VNET_XFER_MAX;
	for (; !ioctl(fd, VNET_IOC_NIC_INFO, &info); info.index++) {
		bool used_from = !o->serve && info.nic_id == o->from;
		bool used_to = !o->remote && info.nic_id == o->to;

		from |= used_from;
		to |= used_to;
		if ((used_from || used_to) && info.max_payload < *max)
			*max = info.max_payload;
	}
	close(fd);
	/* The other side's link is its own: it returns what it cannot take. */
	from |= o->serve;
	to |= o->remote;
	if (!from || !to)
		vnetctl_msg("%s: no NIC vnet%" PRIu32, o->bench,
			    from ? o->to : o->from);
	return from && to ? 0 : -1;
}

/*
 * --from and --to not given are the attached NICs (those with an
 * interface) not named, lowest id first; there must be just enough.
 */
int wire_pick_nics(struct wire_opts *o)
{
	unsigned int need = (!o->serve && !o->have_from) +
			    (!o->remote && !o->have_to), n = 0;
	struct vnetctl_nic *nics;
	bool unattached = false;
	uint32_t cand[2] = { 0, 0 };
	size_t nr, i;
	int err = vnetctl_read_nics(&nics, &nr, false);

	if (err)
		return vnetctl_sysfs_error(err);
	for (i = 0; i < nr; i++) {
		uint32_t id = nics[i].nic_id;
		bool named = (o->have_from && id == o->from) ||
			     (o->have_to && id == o->to);

		if (named && !nics[i].ifname[0]) {
			vnetctl_msg("%s: vnet%" PRIu32 " is not attached "
				    "to an interface (vnetctl attach)",
				    o->bench, id);
			unattached = true;
		} else if (!named && nics[i].ifname[0]) {
			if (n < ARRAY_SIZE(cand))
				cand[n] = id;
			n++;
		}
	}
	vnetctl_free_nics(nics, nr);
	if (unattached)
		return VNETCTL_EXIT_USAGE;
	if (need && n != need) {
		vnetctl_msg("%s: %u attached NIC%s besides those named, "
			    "need %u: name %s", o->bench, n, n == 1 ? "" : "s",
			    need, o->serve ? "it with --nic vnetN" :
			    o->remote ? "it with --from vnetN" :
			    "them with --from vnetA --to vnetB");
		return VNETCTL_EXIT_USAGE;
	}
	if (!o->serve && !o->have_from)
		o->from = cand[0];
	if (!o->remote && !o->have_to)
		o->to = cand[need - 1];
	if (o->serve || o->remote || o->from != o->to)
		return 0;
	vnetctl_msg("%s: --from and --to name the same NIC", o->bench);
	return VNETCTL_EXIT_USAGE;
}

static int parse_name(const char *s, struct vnet_name *name)
{
	char buf[64], *colon;

	if (!s || strlen(s) >= sizeof(buf))
		return -1;
	strcpy(buf, s);
	colon = strchr(buf, ':');
	if (!colon)
		return -1;
	*colon = 0;
	return bench_parse_u32(strncmp(buf, "vnet", 4) ? buf : buf + 4, &name->nic,
			 VNET_MAX_NIC_ID) ||
	       bench_parse_u32(colon + 1, &name->ep, UINT32_MAX - 1);
}

enum { OPT_FROM, OPT_TO, OPT_PEER, OPT_COUNT, OPT_SECONDS, OPT_SIZES,
       OPT_CSV, OPT_PINNED };

static const struct bench_opt pingpong_opts[] = {
	{ "--from", OPT_FROM, false },
	{ "--to", OPT_TO, false },
	{ "--peer", OPT_PEER, false },
	{ "--count", OPT_COUNT, false },
	{ "--sizes", OPT_SIZES, false },
	{ "--csv", OPT_CSV, false },
	{ "--pinned", OPT_PINNED, true },
	{ NULL, 0, false }
};

static const struct bench_opt bw_opts[] = {
	{ "--from", OPT_FROM, false },
	{ "--to", OPT_TO, false },
	{ "--peer", OPT_PEER, false },
	{ "--seconds", OPT_SECONDS, false },
	{ "--sizes", OPT_SIZES, false },
	{ "--csv", OPT_CSV, false },
	{ "--pinned", OPT_PINNED, true },
	{ NULL, 0, false }
};

/* The server's NIC, --to for the others, is --nic here (--to goes too). */
static const struct bench_opt serve_opts[] = {
	{ "--nic", OPT_TO, false },
	{ "--to", OPT_TO, false },
	{ "--seconds", OPT_SECONDS, false },
	{ NULL, 0, false }
};

/* One option and its value; non-zero if the value is bad. */
static int wire_option(int id, const char *v, struct wire_opts *o)
{
	switch (id) {
	case OPT_FROM:
	case OPT_TO:
		if (!strncmp(v, "vnet", 4))
			v += 4;
		*(id == OPT_FROM ? &o->have_from : &o->have_to) = true;
		return bench_parse_u32(v, id == OPT_FROM ? &o->from : &o->to,
				 VNET_MAX_NIC_ID);
	case OPT_PEER:
		o->remote = true;
		return parse_name(v, &o->peer);
	case OPT_COUNT:
		return bench_parse_u32(v, &o->count, 10000000) || !o->count;
	case OPT_SECONDS:
		return bench_parse_seconds(v, &o->seconds);
	case OPT_SIZES:
		return bench_parse_sizes(v, o->sizes, WIRE_MAX_SIZES,
					 &o->nr_sizes, 0, VNET_XFER_MAX);
	case OPT_PINNED:
		o->pinned = true;
		return 0;
	default:	/* OPT_CSV */
		o->csv = v;
		return !*v;
	}
}

int wire_parse(int argc, char **argv, struct wire_opts *o)
{
	static const uint32_t sizes[] = { 0, 64, 1024, 8192 };
	const struct bench_opt *opts, *opt;
	const char *v;
	int a;

	memset(o, 0, sizeof(*o));
	o->bench = argv[1];
	o->bw = !strcmp(argv[1], "bw");
	o->serve = !strcmp(argv[1], "serve");
	o->count = 1000;
	o->seconds = o->serve ? 0 : 2;
	memcpy(o->sizes, sizes, sizeof(sizes));
	o->nr_sizes = ARRAY_SIZE(sizes);
	opts = o->serve ? serve_opts : o->bw ? bw_opts : pingpong_opts;
	for (a = 2; a < argc; a++) {
		opt = bench_next_opt(o->bench, argc, argv, &a, opts, &v);
		if (!opt)
			return -1;
		/* --peer names the server on another node instead of --to. */
		if (!o->serve && ((opt->id == OPT_TO && o->remote) ||
				  (opt->id == OPT_PEER && o->have_to))) {
			vnetctl_msg("%s: --to and --peer together", o->bench);
			return -1;
		}
		if (wire_option(opt->id, v, o)) {
			bench_bad_value(o->bench, opt, v);
			return -1;
		}
	}
	/*
	 * The tag is the server's capability: from the environment, since a
	 * command line is anyone's to read in /proc.
	 */
	if (o->remote) {
		const char *t = getenv("VNET_TAG");
		char *end = NULL;

		errno = 0;
		o->tag = t ? strtoull(t, &end, 16) : 0;
		if (!t || end == t || *end || errno) {
			vnetctl_msg("%s: --peer needs the server's tag in "
				    "VNET_TAG (hex, as vnet-bench serve prints it)",
				    o->bench);
			return -1;
		}
	}
	return 0;
}
