// SPDX-License-Identifier: GPL-2.0
/*
 * The torture's administrator: root, in a process of its own, doing to the
 * NICs what only CAP_NET_ADMIN may while everyone else works.  It detaches
 * the chaos pair's NICs and attaches them again, with a frame count of its
 * choosing and then their routes (a detach mostly waits for the lives);
 * deletes and adds routes; asks for what
 * attach, detach and the routes must refuse; makes a NIC's privileged
 * endpoint and sends a datagram through it; writes the writable module
 * parameters and the debugfs delays, in range and out; takes the chaos
 * pair's link down and up and changes its MTU, and the ledger's link down
 * for a few seconds now and then; and tries to remove the module, which
 * must be refused while files are open.  It holds one open itself, so
 * that no unload can succeed mid-run whatever the others have closed.
 * The ledger's NICs it never detaches: that orphans the honest endpoints
 * on them, by design; the lives (torture_lives.c) on the chaos pair's
 * follow each detach by its epoch, and at the end it attaches those
 * NICs again, so that the lives drain on NICs that are there.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include <vnet/endpoint.h>

#include "vnet_util.h"
#include "torture.h"

#define A_PARAMS	"/sys/module/vnet/parameters/"
#define A_DEBUGFS	"/sys/kernel/debug/vnet/"

/*
 * The longest a NIC stays detached, about: mostly a few seconds, now and
 * then longer than a message takes to come back unreachable (max_retries
 * quanta, 5.1 s in the suite).
 */
#define A_AWAY_S	2.0
#define A_AWAY_LONG_S	8.0

struct admin {
	struct t_ctl *ctl;
	uint64_t rng, seed;
	int fd;
	bool attached[2];		/* NICs C and D */
	uint32_t sent_then[T_LIVES_PAIRS];	/* lives' requests at the last attach */
	double back_by[2];		/* when NIC C or D is attached again */
	double ledger_up_at;		/* its link is down until then */
};

/* Knobs it turns, with what they held before. */
static struct {
	const char *path;
	uint32_t lo, hi;		/* what it writes in range */
	uint32_t bad;			/* out of range, 0: none */
	char saved[32];
} a_knobs[] = {
	{ A_PARAMS "poll_us", 0, 200, 10001, "" },
	{ A_PARAMS "min_resident_us", 0, 5000, 1000001, "" },
	{ A_PARAMS "slice_faults", 1, 64, 1001, "" },
	{ A_DEBUGFS "vnet0/page_delay_ms", 0, 2, 0, "" },
	{ A_DEBUGFS "vnet0/wake_delay_us", 0, 300, 0, "" },
	{ A_DEBUGFS "vnet3/page_delay_ms", 0, 3, 0, "" },
};

#define A_NKNOBS	(sizeof(a_knobs) / sizeof(a_knobs[0]))
#define a_expect(a, op, err, ...) \
	t_expect((a)->ctl, (a)->seed, op, err, __VA_ARGS__)

static int a_ioctl(struct admin *a, unsigned long cmd, void *arg)
{
	return ioctl(a->fd, cmd, arg) ? errno : 0;
}

int t_attach(int fd, const char *ifname, uint32_t id, uint32_t frames)
{
	struct vnet_attach att = { .nic_id = id, .frames = frames };

	strncpy(att.ifname, ifname, sizeof(att.ifname) - 1);
	return ioctl(fd, VNET_IOC_ATTACH, &att) ? errno : 0;
}

/* ROUTE_ADD or ROUTE_DEL of @peer, at @peer_if's address, on NIC @nic. */
int t_route(int fd, unsigned long cmd, uint32_t nic, uint32_t peer,
	    const char *peer_if)
{
	struct vnet_route r = { .nic_id = nic, .peer_id = peer };

	if (peer_if && vnet_if_mac(peer_if, r.mac))
		return ENODEV;
	return ioctl(fd, cmd, &r) ? errno : 0;
}

static int a_write(const char *path, uint32_t val)
{
	char buf[32];
	int fd = open(path, O_WRONLY), n, err = 0;

	if (fd < 0)
		return errno;
	n = snprintf(buf, sizeof(buf), "%u", val);
	if (write(fd, buf, n) != n)
		err = errno;
	close(fd);
	return err;
}

static void a_knob(struct admin *a)
{
	unsigned int k = t_below(&a->rng, A_NKNOBS);
	bool bad = a_knobs[k].bad && t_chance(&a->rng, 25);
	uint32_t val = bad ? a_knobs[k].bad + t_below(&a->rng, 100) :
		       a_knobs[k].lo + t_below(&a->rng, a_knobs[k].hi -
					       a_knobs[k].lo + 1);
	int err = a_write(a_knobs[k].path, val);

	/* debugfs may not be there, nor vnet3 while it is detached. */
	if (err == ENOENT && strstr(a_knobs[k].path, A_DEBUGFS))
		return;
	a_expect(a, T_OP_PARAM, err, bad ? EINVAL : 0, T_END);
}

static void a_knobs_save(bool restore)
{
	unsigned int k;

	for (k = 0; k < A_NKNOBS; k++) {
		FILE *f;

		if (restore) {
			if (a_knobs[k].saved[0])
				a_write(a_knobs[k].path,
					strtoul(a_knobs[k].saved, NULL, 10));
			continue;
		}
		f = fopen(a_knobs[k].path, "r");
		if (!f)
			continue;
		if (!fgets(a_knobs[k].saved, sizeof(a_knobs[k].saved), f))
			a_knobs[k].saved[0] = 0;
		fclose(f);
	}
}

static const char *a_if(int i)
{
	return i ? T_IF_D : T_IF_C;
}

/* Requests lives pair @k has sent so far. */
static uint32_t a_lives_sent(struct admin *a, int k)
{
	return __atomic_load_n(&a->ctl->lv.pair[k].sent, __ATOMIC_ACQUIRE);
}

static void a_attach(struct admin *a, int i)
{
	uint32_t id = T_NIC_C + i, peer = T_NIC_D - i;
	uint32_t frames = t_chance(&a->rng, 20) ? 0 :
			  2 + t_below(&a->rng, 7);
	int err = t_attach(a->fd, a_if(i), id, frames), k;

	a_expect(a, T_OP_ATTACH, err, 0, ENOMEM, T_END);
	if (err)
		return;
	a->attached[i] = true;
	for (k = 0; k < T_LIVES_PAIRS; k++)
		a->sent_then[k] = a_lives_sent(a, k);
	/* The peer's route to us survived us; ours to it is new. */
	if (a->attached[!i]) {
		a_expect(a, T_OP_ROUTE, t_route(a->fd, VNET_IOC_ROUTE_ADD, id,
			 peer, a_if(!i)), 0, EAGAIN, T_END);
		a_expect(a, T_OP_ROUTE, t_route(a->fd, VNET_IOC_ROUTE_ADD, peer,
			 id, a_if(i)), 0, EAGAIN, T_END);
	}
}

static void a_detach(struct admin *a, int i)
{
	uint32_t id = T_NIC_C + i, n = a->ctl->lv.epoch[i] / 2;
	int err;

	if (n < T_LIVES_DETACHES)
		a->ctl->lv.detach_at[i][n] = t_now();
	/* Odd while it may be under way (torture_lives.c). */
	__atomic_fetch_add(&a->ctl->lv.epoch[i], 1, __ATOMIC_ACQ_REL);
	err = a_ioctl(a, VNET_IOC_DETACH, &id);
	__atomic_fetch_add(&a->ctl->lv.epoch[i], 1, __ATOMIC_ACQ_REL);

	a_expect(a, T_OP_DETACH, err, a->attached[i] ? 0 : ENODEV,
		 T_END);
	if (!err) {
		a->attached[i] = false;
		a->back_by[i] = t_now() + (t_chance(&a->rng, 25) ?
					   A_AWAY_LONG_S : A_AWAY_S);
	}
}

/*
 * Has every lives pair sent a request since the last attach?  Until then
 * another detach mostly waits: on a slow kernel the admin's turns come
 * seconds apart, and a detach right after an attach could leave a pair a
 * run without one life on each end at once, proving nothing.  One in ten
 * goes ahead all the same, so that a detach still meets lives that are
 * just starting.
 */
static bool a_lives_went_on(struct admin *a)
{
	int k;

	for (k = 0; k < T_LIVES_PAIRS; k++) {
		uint32_t sent = a_lives_sent(a, k);

		if (sent == a->sent_then[k] && sent < T_LIVES_SEQ)
			return false;
	}
	return true;
}

static void a_route(struct admin *a, int i)
{
	uint32_t id = T_NIC_C + i, peer = T_NIC_D - i;
	bool add = t_chance(&a->rng, 50);
	int err = t_route(a->fd, add ? VNET_IOC_ROUTE_ADD : VNET_IOC_ROUTE_DEL,
			  id, peer, a_if(!i));

	if (!a->attached[i])
		a_expect(a, T_OP_ROUTE, err, ENODEV, T_END);
	else if (add)
		a_expect(a, T_OP_ROUTE, err, 0, EAGAIN, T_END);
	else
		a_expect(a, T_OP_ROUTE, err, 0, ENOENT, T_END);
}

/* What attach, detach and the routes must refuse. */
static void a_bad(struct admin *a)
{
	struct vnet_attach att = { .nic_id = 77 };
	uint32_t id = 0, i = t_below(&a->rng, 2);
	int c_live = a->attached[i];

	switch (t_below(&a->rng, 9)) {
	case 0:
		a_expect(a, T_OP_ADMIN_BAD, a_ioctl(a, VNET_IOC_DETACH, &id),
			 EINVAL, T_END);
		id = 1000 + t_below(&a->rng, 60000);
		a_expect(a, T_OP_ADMIN_BAD, a_ioctl(a, VNET_IOC_DETACH, &id),
			 ENODEV, T_END);
		break;
	case 1:
		a_expect(a, T_OP_ADMIN_BAD, t_attach(a->fd, "lo", 77, 0),
			 EINVAL, T_END);
		a_expect(a, T_OP_ADMIN_BAD, t_attach(a->fd, "vtnone0", 77, 0),
			 ENODEV, T_END);
		break;
	case 2:
		a_expect(a, T_OP_ADMIN_BAD, t_attach(a->fd, a_if(i), 77,
			 t_chance(&a->rng, 50) ? 1 : VNET_MAX_FRAMES + 1 +
			 t_below(&a->rng, 1000)), EINVAL, T_END);
		break;
	case 3:
		/* The ledger's interfaces are taken. */
		a_expect(a, T_OP_ADMIN_BAD, t_attach(a->fd, T_IF_A, 77, 0),
			 EBUSY, T_END);
		break;
	case 4:
		a_expect(a, T_OP_ADMIN_BAD, t_attach(a->fd, a_if(i),
			 VNET_MAX_NIC_ID + 1 + t_below(&a->rng, 1000), 0),
			 EINVAL, c_live ? EBUSY : EINVAL, T_END);
		a_expect(a, T_OP_ADMIN_BAD, t_attach(a->fd, a_if(i), T_NIC_A,
			 0), EEXIST, c_live ? EBUSY : EEXIST, T_END);
		break;
	case 5:
		memset(att.ifname, 'x', sizeof(att.ifname));
		a_expect(a, T_OP_ADMIN_BAD, a_ioctl(a, VNET_IOC_ATTACH, &att),
			 EINVAL, T_END);
		break;
	case 6:
		a_expect(a, T_OP_ADMIN_BAD, t_route(a->fd, VNET_IOC_ROUTE_ADD,
			 0, T_NIC_C, T_IF_C), EOPNOTSUPP, T_END);
		a_expect(a, T_OP_ADMIN_BAD, t_route(a->fd, VNET_IOC_ROUTE_ADD,
			 T_NIC_C + i, T_NIC_C + i, a_if(!i)), EINVAL,
			 c_live ? EINVAL : ENODEV, T_END);
		break;
	case 7: {
		struct vnet_route r = { .nic_id = T_NIC_C + i, .peer_id = 99,
					.mac = { 0x01, 0, 0x5e, 0, 0, 1 } };

		a_expect(a, T_OP_ADMIN_BAD, a_ioctl(a, VNET_IOC_ROUTE_ADD, &r),
			 c_live ? EINVAL : ENODEV, EINVAL, T_END);
		a_expect(a, T_OP_ADMIN_BAD, t_route(a->fd, VNET_IOC_ROUTE_DEL,
			 T_NIC_C + i, 999, NULL), c_live ? ENOENT : ENODEV,
			 T_END);
		break;
	}
	default: {
		struct vnet_route routes[4];
		struct vnet_route_list l = { .nic_id = T_NIC_C + i,
					     .count = 4,
					     .routes = (uintptr_t)routes };

		a_expect(a, T_OP_ROUTE, a_ioctl(a, VNET_IOC_ROUTE_LIST, &l),
			 c_live ? 0 : ENODEV, T_END);
		break;
	}
	}
}

/* The NIC's privileged endpoint: one datagram out, whatever is in. */
static void a_priv(struct admin *a)
{
	struct vnet_priv_create pc = { .nic_id = T_NIC_C };
	struct {
		struct vnet_mapper_pkt h;
		uint8_t payload[64];
	} pkt = { .h = { .mac = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff },
			 .len = 64 } };
	uint32_t id = VNET_MAX_NIC_ID + 1;
	int fd = open(VNET_DEVICE_PATH, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	int err;

	if (fd < 0)
		return;
	err = ioctl(fd, VNET_IOC_PRIV_CREATE, &pc) ? errno : 0;
	a_expect(a, T_OP_PRIV, err, a->attached[0] ? 0 : ENODEV, T_END);
	if (!err) {
		a_expect(a, T_OP_PRIV, write(fd, &pkt, sizeof(pkt)) < 0 ?
			 errno : 0, 0, ENETDOWN, T_END);
		if (read(fd, &pkt, sizeof(pkt)) < 0 && errno != EAGAIN)
			t_violation(a->ctl, "privileged endpoint read: %s",
				    strerror(errno));
		a_expect(a, T_OP_PRIV, ioctl(fd, VNET_IOC_PRIV_SET_ID, &id) ?
			 errno : 0, EINVAL, T_END);
	}
	close(fd);
}

/* The module is in use: refused, by the syscall and by rmmod(8). */
static void a_rmmod(struct admin *a)
{
	int err;

	if (t_chance(&a->rng, 10)) {
		err = system("rmmod vnet 2>/dev/null");
		if (!err)
			t_violation(a->ctl, "rmmod vnet succeeded mid-run");
		t_count(a->ctl, T_OP_RMMOD, 1);
		return;
	}
	err = syscall(SYS_delete_module, "vnet", O_NONBLOCK) ? errno : 0;
	a_expect(a, T_OP_RMMOD, err, EWOULDBLOCK, T_END);
}

static void a_link(struct admin *a)
{
	static const char *const cmds[] = {
		"ip link set " T_IF_D " down && ip link set " T_IF_D " up",
		"ip link set " T_IF_C " mtu " T_STR(T_MTU_MIN) " && "
		"ip link set " T_IF_D " mtu " T_STR(T_MTU_MIN),
		"ip link set " T_IF_C " mtu 1500 && ip link set " T_IF_D
		" mtu 1500",
		"ip link set " T_IF_C " mtu 9000 && ip link set " T_IF_D
		" mtu 9000",
	};

	t_count(a->ctl, T_OP_LINK,
		system(cmds[t_below(&a->rng, sizeof(cmds) / sizeof(cmds[0]))]));
}

/*
 * The ledger's link down for two to nine seconds, now and then: what
 * crosses it meanwhile comes back unreachable once max_retries quanta
 * pass without a word, and whether it was taken stays open, which the
 * ledger allows for.  That is all a link going down may do.
 */
static void a_flap(struct admin *a, bool stop)
{
	double now = t_now();

	if (a->ledger_up_at && (stop || now >= a->ledger_up_at)) {
		t_count(a->ctl, T_OP_LINK, system("ip link set " T_IF_B " up"));
		a->ledger_up_at = 0;
	} else if (!a->ledger_up_at && !stop && !t_below(&a->rng, 120)) {
		t_count(a->ctl, T_OP_LINK, system("ip link set " T_IF_B " down"));
		a->ledger_up_at = now + 2 + t_below(&a->rng, 7000) / 1000.0;
	}
}

void t_admin_run(struct t_ctl *ctl, uint64_t seed)
{
	struct admin a = { .ctl = ctl, .rng = seed, .seed = seed,
			   .attached = { true, true } };
	unsigned int n;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	t_say("# seed %llu: admin", (unsigned long long)seed);
	a.fd = open(VNET_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	if (a.fd < 0)
		_exit(1);
	a_knobs_save(false);
	for (n = 0; !__atomic_load_n(&ctl->chaos_stop, __ATOMIC_ACQUIRE); n++) {
		uint32_t pick = t_below(&a.rng, 100);
		int i = t_below(&a.rng, 2), k;

		a_flap(&a, false);
		/*
		 * Away for a few seconds at most, whatever the dice say: on a
		 * slow kernel a turn can take seconds, and a NIC left away for
		 * the rest of the run would leave the lives nothing to do.
		 */
		for (k = 0; k < 2; k++)
			if (!a.attached[k] && t_now() > a.back_by[k]) {
				pick = 0;
				i = k;
			}
		/* However few turns it gets, a detach, an attach, an rmmod. */
		if (n < 3) {
			pick = n < 2 ? 0 : 50;
			i = 0;
		}
		if (pick < 15 && !a.attached[i])
			a_attach(&a, i);
		else if (pick < 15 && (n < 3 || a_lives_went_on(&a) ||
				       t_chance(&a.rng, 10)))
			a_detach(&a, i);
		else if (pick < 25)
			a_route(&a, i);	/* or a detach that must wait */
		else if (pick < 45)
			a_bad(&a);
		else if (pick < 60)
			a_rmmod(&a);
		else if (pick < 85)
			a_knob(&a);
		else if (pick < 95)
			a_priv(&a);
		else
			a_link(&a);
		usleep(10000 + t_below(&a.rng, 150000));
	}
	a_flap(&a, true);
	/* The lives drain on NICs that are there. */
	for (n = 0; n < 2; n++) {
		if (!a.attached[n])
			a_attach(&a, n);
		if (a.attached[0] && a.attached[1])
			a_expect(&a, T_OP_ROUTE, t_route(a.fd,
				 VNET_IOC_ROUTE_ADD, T_NIC_C + n, T_NIC_D - n,
				 a_if(!n)), 0, EAGAIN, T_END);
	}
	a_knobs_save(true);
	close(a.fd);
	_exit(0);
}
