// SPDX-License-Identifier: GPL-2.0
/*
 * The torture's chaos: a process, each a user of its own where the device
 * lets its group in, doing random valid and invalid things with the ABI on
 * every NIC.  It creates and closes endpoints, sets tags, maps and unmaps
 * slots to its own endpoints, to endpoints sysfs lists (the honest ones
 * among them, with tags it can only guess) and to names that do not
 * exist, registers and drops segments good and bad, sends well-formed and
 * malformed messages, answers what it receives, writes garbage over its
 * own frames and staging areas, unmaps, remaps and moves them, forks
 * children that go on with its files, and a second thread keeps calling
 * into the files the first one closes.
 *
 * What the driver must refuse (torture_refuse.c), and what it must allow,
 * is checked against the errno abi.rst gives; anything else is a
 * violation.  What it does to its own memory, it survives: a fault on a
 * mapping it tore down itself, or on an endpoint whose NIC was detached
 * (SIGBUS), returns to where the access began.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ucontext.h>
#include <sys/wait.h>

#include <vnet/endpoint.h>

#include "torture_chaos.h"

__thread sigjmp_buf *c_guard;
/* What the process is doing, for the report of a fault nobody guarded. */
static uint64_t c_seed;
static __thread int c_doing = -1;

static unsigned long long c_pc(const void *uc)
{
#ifdef __x86_64__
	return ((const ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
	return ((const ucontext_t *)uc)->uc_mcontext.pc;
#else
	return 0;
#endif
}

static void c_on_fault(int sig, siginfo_t *si, void *uc)
{
	unsigned long long pc = c_pc(uc);
	Dl_info di = { .dli_fname = "?", .dli_sname = "?" };
	char line[320];
	int len;

	if (c_guard)
		siglongjmp(*c_guard, sig);
	/*
	 * Not an access we guard: a bug of the torture's (or of the driver's,
	 * if the address is one of its mappings).  Say where, then die of
	 * it, as we would have.  snprintf() is not async-signal-safe, but
	 * nothing runs after it here but the death.
	 */
	/*
	 * The object and the offset in it, for addr2line: the torture's own
	 * functions are not exported, so dladdr() names only the C library's.
	 */
	if (!dladdr((void *)(uintptr_t)pc, &di))
		di.dli_fbase = NULL;
	len = snprintf(line, sizeof(line), "# chaos %llu, pid %d: unguarded "
		       "%s at %p, pc %s+%#llx (%s), in %s\n",
		       (unsigned long long)c_seed, (int)getpid(),
		       sig == SIGBUS ? "SIGBUS" : "SIGSEGV", si->si_addr,
		       di.dli_fname ? di.dli_fname : "?",
		       pc - (uintptr_t)di.dli_fbase,
		       di.dli_sname ? di.dli_sname : "?",
		       c_doing < 0 ? "no operation" : t_op_name[c_doing]);
	if (len > 0)
		(void)!write(STDERR_FILENO, line, len);
	signal(sig, SIG_DFL);
}

/*
 * A guarded access faulted.  A SIGSEGV is the process's own doing: a hole
 * it punched, a range it unmapped or moved.  A SIGBUS is the driver
 * refusing a fault: fine for an endpoint of the pair the admin detaches,
 * a violation on any other NIC, where every mapping we keep is of an
 * endpoint that lives as long as the mapping does.
 */
void c_faulted(struct chaos *c, int sig, uint32_t nic)
{
	__atomic_fetch_add(&c->ctl->faults_caught[sig == SIGBUS], 1,
			   __ATOMIC_RELAXED);
	if (sig == SIGBUS && nic < T_NIC_C)
		t_violation(c->ctl, "chaos %llu: SIGBUS on a mapping of an "
			    "endpoint of NIC %u, which is never detached",
			    (unsigned long long)c->seed, nic);
}

static void c_publish(struct chaos *c, struct c_ep *e)
{
	int i = e - c->ep;

	__atomic_store_n(&c->race_fd[i], e->fd, __ATOMIC_RELAXED);
	__atomic_store_n(&c->race_frame[i], e->frame.addr, __ATOMIC_RELAXED);
}

/* Keep @m mapped, its file closed or mapped again, for garbage later. */
static void c_ghost(struct chaos *c, struct c_map *m)
{
	int i = t_below(&c->rng, C_GHOSTS);

	if (!m->addr)
		return;
	if (c->ghost[i].addr)
		munmap(c->ghost[i].addr, c->ghost[i].len);
	c->ghost[i] = *m;
	m->addr = NULL;
}

static void c_mmap_one(struct chaos *c, struct c_ep *e, bool frame)
{
	struct c_map *m = frame ? &e->frame : &e->staging;
	size_t len = frame ? VNET_FRAME_SIZE : VNET_STAGING_SIZE;
	void *p;

	if (m->addr)
		c_ghost(c, m);	/* the same file mapped twice */
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, e->fd,
		 frame ? e->frame_off : e->staging_off);
	c_expect(c, T_OP_MMAP, p == MAP_FAILED ? errno : 0, 0, c_gone(e),
		 ENOMEM, T_END);
	if (p != MAP_FAILED)
		*m = (struct c_map){ p, len, e->nic };
}

static void c_create(struct chaos *c)
{
	static const uint32_t nics[] = { 0, 0, T_NIC_A, T_NIC_B, T_NIC_C,
					 T_NIC_D };
	struct vnet_ep_create req = { .abi_version = VNET_ABI_VERSION };
	struct c_ep *e = NULL;
	int i, err;

	for (i = 0; i < C_EPS && !e; i++)
		if (c->ep[i].fd < 0)
			e = &c->ep[i];
	if (!e)
		return;
	req.nic_id = nics[t_below(&c->rng, sizeof(nics) / sizeof(nics[0]))];
	e->fd = open(VNET_DEVICE_PATH, O_RDWR | O_CLOEXEC);
	if (e->fd < 0) {
		c_expect(c, T_OP_CREATE, errno, T_END);
		return;
	}
	err = c_ioctl(e->fd, VNET_IOC_EP_CREATE, &req);
	/* Only the pair the admin detaches may be missing. */
	c_expect(c, T_OP_CREATE, err, 0, ENOSPC, EDQUOT, ENOMEM,
		 req.nic_id >= T_NIC_C ? ENODEV : 0, T_END);
	if (err) {
		close(e->fd);
		e->fd = -1;
		return;
	}
	e->nic = req.nic_id;
	e->name = req.name;
	e->frame_off = req.frame_offset;
	e->staging_off = req.staging_offset;
	e->tag = VNET_TAG_NONE;
	if (t_chance(&c->rng, 85))
		c_mmap_one(c, e, true);
	if (t_chance(&c->rng, 85))
		c_mmap_one(c, e, false);
	c_publish(c, e);
}

static void c_close(struct chaos *c, struct c_ep *e)
{
	int fd = e->fd, i = e - c->ep;

	/* Mappings kept hold the file, and so the endpoint, a while longer. */
	if (t_chance(&c->rng, 30)) {
		c_ghost(c, &e->frame);
		c_ghost(c, &e->staging);
	}
	if (e->frame.addr)
		munmap(e->frame.addr, e->frame.len);
	if (e->staging.addr)
		munmap(e->staging.addr, e->staging.len);
	memset(e, 0, sizeof(*e));
	e->fd = -1;
	__atomic_store_n(&c->race_frame[i], NULL, __ATOMIC_RELAXED);
	t_count(c->ctl, T_OP_CLOSE, close(fd) ? errno : 0);
	/* The racer may be in a call on it still: that is the point. */
	__atomic_store_n(&c->race_fd[i], -1, __ATOMIC_RELAXED);
}

/*
 * A name to send to: one of ours, with its tag; an honest endpoint, whose
 * name is no secret (the ledger has it, as sysfs does) but whose tag we
 * can only guess; any endpoint sysfs lists; or a name nobody has.
 */
static void c_target(struct chaos *c, struct vnet_name *name, __u64 *tag)
{
	uint32_t pick = t_below(&c->rng, 20), nic = t_below(&c->rng, 5), n = 0;
	struct t_ledger *lg = &c->ctl->lg;
	struct c_ep *e = c_pick(c);
	struct t_pair *pp;
	struct dirent *d;
	char path[64];
	DIR *dir;

	*tag = t_chance(&c->rng, 50) ? t_rand(&c->rng) :
	       t_below(&c->rng, 2) ? VNET_TAG_ANY : VNET_TAG_NONE;
	name->nic = nic;
	name->ep = t_below(&c->rng, 48);
	if (pick < 6 && e) {
		*name = e->name;
		*tag = e->tag;
		return;
	}
	if (pick < 12) {
		pp = &lg->pair[t_below(&c->rng, lg->npairs)];
		*name = t_below(&c->rng, 4) ? pp->server : pp->client;
		return;
	}
	if (pick >= 16)
		return;
	snprintf(path, sizeof(path), "/sys/class/vnet/vnet%u/endpoints", nic);
	dir = opendir(path);
	while (dir && (d = readdir(dir)))
		if (d->d_name[0] != '.' && !t_below(&c->rng, ++n))
			name->ep = atoi(d->d_name);
	if (dir)
		closedir(dir);
}

static void c_set_tag(struct chaos *c, struct c_ep *e)
{
	uint64_t tags[] = { VNET_TAG_NONE, VNET_TAG_ANY, t_rand(&c->rng),
			    t_rand(&c->rng) };
	uint64_t tag = tags[t_below(&c->rng, 4)];
	int err = c_ioctl(e->fd, VNET_IOC_SET_TAG, &tag);

	c_expect(c, T_OP_SET_TAG, err, 0, c_gone(e), T_END);
	if (!err)
		e->tag = tag;
}

static void c_map(struct chaos *c, struct c_ep *e)
{
	struct vnet_map map = { .slot = t_below(&c->rng, 4) };
	uint32_t slot = t_below(&c->rng, 4);
	int err;

	if (t_chance(&c->rng, 20))
		map.slot = t_below(&c->rng, VNET_MAX_SLOTS);
	c_target(c, &map.name, &map.tag);
	err = c_ioctl(e->fd, VNET_IOC_MAP, &map);
	c_expect(c, T_OP_MAP, err, 0, c_gone(e), T_END);
	if (t_chance(&c->rng, 50))
		return;
	if (t_chance(&c->rng, 10))
		slot = VNET_MAX_SLOTS + t_below(&c->rng, 1000);
	err = c_ioctl(e->fd, VNET_IOC_UNMAP, &slot);
	c_expect(c, T_OP_UNMAP, err, 0, ENOENT, c_gone(e),
		 slot >= VNET_MAX_SLOTS ? EINVAL : 0, T_END);
}

static void c_set_seg(struct chaos *c, struct c_ep *e, bool drop)
{
	uint32_t off = t_below(&c->rng, C_BUF - 1);
	struct vnet_seg seg;

	if (drop) {
		seg.addr = t_rand(&c->rng);
		seg.len = 0;
		c_expect(c, T_OP_DROP_SEG, c_ioctl(e->fd, VNET_IOC_SET_SEG,
			 &seg), 0, c_gone(e), T_END);
		return;
	}
	/* Unaligned, and overlapping our other endpoints' segments. */
	seg.addr = (uintptr_t)c->buf + off;
	seg.len = 1 + t_below(&c->rng, C_BUF - off);
	c_expect(c, T_OP_SET_SEG, c_ioctl(e->fd, VNET_IOC_SET_SEG, &seg), 0,
		 ENOMEM, c_gone(e), T_END);
}

/*
 * Whether @m reaches @len bytes from its start.  Past the end of a mapping
 * we shrank lies memory that is not ours to scribble on: another of our
 * mappings, or the C library's.
 */
static bool c_reaches(const struct c_map *m, uint64_t len)
{
	return m->addr && m->len >= len;
}

/*
 * Post @d on send queue @q by the indices the frame holds now, if room;
 * the caller has seen that the frame is mapped whole.
 */
static bool c_post(struct c_ep *e, unsigned int q, const struct vnet_desc *d,
		   const void *payload, uint32_t len)
{
	struct vnet_frame *f = (struct vnet_frame *)e->frame.addr;
	uint32_t prod = __atomic_load_n(&f->prod[q].val, __ATOMIC_RELAXED);
	uint32_t cons = __atomic_load_n(&f->cons[q].val, __ATOMIC_ACQUIRE);
	unsigned int i = prod % VNET_QUEUE_DEPTH;

	if (prod - cons >= VNET_QUEUE_DEPTH)
		return false;
	if (len && c_reaches(&e->staging, VNET_STAGING_SLOT(q, i) + len))
		memcpy(e->staging.addr + VNET_STAGING_SLOT(q, i), payload, len);
	f->queue[q][i] = *d;
	__atomic_store_n(&f->prod[q].val, prod + 1, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&f->hdr.flags, __ATOMIC_RELAXED) &
	    VNET_FRAME_NEED_WAKEUP)
		ioctl(e->fd, VNET_IOC_KICK);
	return true;
}

static void c_post_guarded(struct chaos *c, struct c_ep *e, unsigned int q,
			   const struct vnet_desc *d, const void *payload,
			   uint32_t len)
{
	C_GUARDED(c, e->nic, if (c_post(e, q, d, payload, len))
			__atomic_fetch_add(&c->ctl->chaos_posted, 1,
					   __ATOMIC_RELAXED));
}

static void c_send(struct chaos *c, struct c_ep *e, bool bad)
{
	struct vnet_desc d = { .handler = t_below(&c->rng, 256),
			       .nargs = t_below(&c->rng, VNET_MAX_ARGS + 1),
			       .slot = t_below(&c->rng, 4) };
	unsigned int q = VNET_Q_REQ_SEND, i;
	uint8_t payload[512];

	for (i = 0; i < VNET_MAX_ARGS; i++)
		d.args[i] = (uint32_t)t_rand(&c->rng);
	for (i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)t_rand(&c->rng);
	switch (t_below(&c->rng, 5)) {
	case 0:
		break;
	case 1:
		d.flags = VNET_DESC_MEDIUM;
		d.len = 1 + t_below(&c->rng, VNET_MEDIUM_MAX);
		break;
	case 2:
		d.flags = VNET_DESC_XFER;
		d.len = 1 + t_below(&c->rng, VNET_MEDIUM_MAX);
		d.offset = t_below(&c->rng, C_BUF);
		break;
	case 3:
		d.flags = VNET_DESC_XFER | VNET_DESC_FROM_SEG;
		d.len = 1 + t_below(&c->rng, 65536);
		d.offset = t_below(&c->rng, C_BUF);
		d.src_offset = t_below(&c->rng, C_BUF);
		break;
	default:
		/* A reply: to a request we took, or with a token made up. */
		q = VNET_Q_REP_SEND;
		d.token = t_chance(&c->rng, 50) ? e->token : t_rand(&c->rng);
		d.flags = t_chance(&c->rng, 20) ? VNET_DESC_CREDIT : 0;
		break;
	}
	if (bad)
		c_spoil(c, &d);
	t_count(c->ctl, bad ? T_OP_SEND_BAD : T_OP_SEND, 0);
	if (!c_reaches(&e->frame, VNET_FRAME_SIZE))
		return;
	c_post_guarded(c, e, q, &d, payload, d.len > sizeof(payload) ?
		       sizeof(payload) : d.len);
}

static void c_recv_one(struct chaos *c, struct c_ep *e, unsigned int q)
{
	struct vnet_frame *f = (struct vnet_frame *)e->frame.addr;
	uint32_t prod = __atomic_load_n(&f->prod[q].val, __ATOMIC_ACQUIRE);
	uint32_t cons = __atomic_load_n(&f->cons[q].val, __ATOMIC_RELAXED);
	int n;

	for (n = 0; n < VNET_QUEUE_DEPTH && cons != prod; n++, cons++) {
		struct vnet_desc d = f->queue[q][cons % VNET_QUEUE_DEPTH];

		if (d.flags & VNET_DESC_RETURNED)
			__atomic_fetch_add(&c->ctl->chaos_returned
					   [d.status < VNET_RET_NR ? d.status :
					    VNET_RET_NR], 1, __ATOMIC_RELAXED);
		else
			__atomic_fetch_add(&c->ctl->chaos_received, 1,
					   __ATOMIC_RELAXED);
		if (q == VNET_Q_REQ_RECV && !(d.flags & VNET_DESC_RETURNED)) {
			struct vnet_desc r = { .handler = d.handler,
					       .nargs = 1, .token = d.token };

			e->token = d.token;
			r.args[0] = d.args[0];
			if (t_chance(&c->rng, 60) &&
			    c_post(e, VNET_Q_REP_SEND, &r, NULL, 0))
				__atomic_fetch_add(&c->ctl->chaos_posted, 1,
						   __ATOMIC_RELAXED);
		}
		__atomic_store_n(&f->cons[q].val, cons + 1, __ATOMIC_RELEASE);
	}
}

static void c_recv(struct chaos *c, struct c_ep *e)
{
	struct pollfd pfd = { e->fd, POLLIN, 0 };

	t_count(c->ctl, T_OP_RECV, 0);
	if (poll(&pfd, 1, t_below(&c->rng, 3)) <= 0 ||
	    !c_reaches(&e->frame, VNET_FRAME_SIZE) ||
	    !(pfd.revents & POLLIN))
		return;
	C_GUARDED(c, e->nic, c_recv_one(c, e, VNET_Q_REQ_RECV);
		  c_recv_one(c, e, VNET_Q_REP_RECV));
}

static void c_scribble(struct chaos *c, struct c_map *m)
{
	uint32_t off, len, i;

	if (!m->addr || !m->len)
		return;
	off = t_below(&c->rng, m->len);
	len = 1 + t_below(&c->rng, 256);
	if (len > m->len - off)
		len = m->len - off;
	for (i = 0; i < len; i++)
		m->addr[off + i] = (uint8_t)t_rand(&c->rng);
}

/* An index anywhere, or a little off where it was. */
static void c_index(struct chaos *c, struct c_ep *e)
{
	struct vnet_frame *f = (struct vnet_frame *)e->frame.addr;
	unsigned int q = t_below(&c->rng, VNET_NR_QUEUES);
	uint32_t *idx = t_below(&c->rng, 2) ? &f->prod[q].val :
					      &f->cons[q].val;
	uint32_t val = (uint32_t)t_rand(&c->rng), near = t_below(&c->rng, 40);

	if (t_chance(&c->rng, 50))
		*idx = val;
	else
		*idx += near - 20;
}

static void c_garbage(struct chaos *c, struct c_ep *e)
{
	t_count(c->ctl, T_OP_GARBAGE, 0);
	switch (t_below(&c->rng, 5)) {
	case 0:
		if (c_reaches(&e->frame, VNET_FRAME_SIZE))
			C_GUARDED(c, e->nic, c_index(c, e));
		return;
	case 1:
		C_GUARDED(c, e->frame.nic, c_scribble(c, &e->frame));
		return;
	case 2:
		C_GUARDED(c, e->staging.nic, c_scribble(c, &e->staging));
		return;
	default: {
		struct c_map *g = &c->ghost[t_below(&c->rng, C_GHOSTS)];

		C_GUARDED(c, g->nic, c_scribble(c, g));
		return;
	}
	}
}

/*
 * How far the mapping holding @addr reaches from it, as the kernel has it
 * (0: nothing there; -1: /proc/self/maps unreadable).  Our own books
 * cannot say: a failed move may have cut the tail of a range already.
 */
static long long c_extent(const uint8_t *addr)
{
	unsigned long long start, end;
	uintptr_t a = (uintptr_t)addr;
	long long extent = 0;
	char line[4200];
	FILE *f = fopen("/proc/self/maps", "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx-%llx", &start, &end) == 2 &&
		    start <= a && a < end) {
			extent = end - a;
			break;
		}
	fclose(f);
	return extent;
}

/*
 * mremap() @m to @len bytes: when @fixed, into a range reserved for it,
 * so that it moves; else wherever mm likes.  The driver's mappings are
 * VM_DONTEXPAND: growing one is a violation.  Shrinking or moving one
 * that is whole must work; one we cut (a hole, a failed move) may not.
 */
static void c_mremap(struct chaos *c, struct c_map *m, size_t len, bool fixed)
{
	int flags = MREMAP_MAYMOVE, err;
	long long extent = c_extent(m->addr);
	bool grow = len > m->len, whole = extent >= (long long)m->len;
	void *dst = NULL, *p;

	if (fixed) {
		dst = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS |
			   MAP_NORESERVE, -1, 0);
		if (dst == MAP_FAILED)
			return;
		flags |= MREMAP_FIXED;
	}
	p = mremap(m->addr, m->len, len, flags, dst);
	err = p == MAP_FAILED ? errno : 0;
	t_count(c->ctl, T_OP_MREMAP, err);
	if (!err && grow)
		t_violation(c->ctl, "chaos %llu: mremap grew a mapping of the "
			    "driver's from %zu to %zu bytes",
			    (unsigned long long)c->seed, m->len, len);
	if (err && !grow && whole)
		t_violation(c->ctl, "chaos %llu: mremap of a whole mapping of "
			    "the driver's from %zu to %zu bytes%s failed: %s",
			    (unsigned long long)c->seed, m->len, len,
			    fixed ? ", moved" : "", strerror(err));
	if (err) {
		if (fixed)
			munmap(dst, len);
		/* A failed move may have cut the tail: keep to what is left. */
		extent = c_extent(m->addr);
		if (extent >= 0 && (size_t)extent < m->len)
			m->len = extent;
		if (!m->len)
			m->addr = NULL;
		return;
	}
	/* One mapping now, whatever it was. */
	*m = (struct c_map){ p, len, m->nic };
}

static void c_remap(struct chaos *c, struct c_ep *e)
{
	struct c_map *m = t_below(&c->rng, 2) ? &e->frame : &e->staging;
	bool fixed = t_chance(&c->rng, 70);

	if (!m->addr) {
		c_mmap_one(c, e, m == &e->frame);
		c_publish(c, e);
		return;
	}
	switch (t_below(&c->rng, 4)) {
	case 0:
		t_count(c->ctl, T_OP_MUNMAP, munmap(m->addr, m->len) ? errno : 0);
		m->addr = NULL;
		break;
	case 1:
		/*
		 * A hole in the middle: later touches there fault.  Not an
		 * unmapped one, where a later mapping could land and take
		 * our garbage: a page of PROT_NONE in its place.
		 */
		if (m->len > 8192) {
			void *hole = m->addr + 4096 * (1 + t_below(&c->rng,
						m->len / 4096 - 2));

			t_count(c->ctl, T_OP_MUNMAP,
				mmap(hole, 4096, PROT_NONE, MAP_PRIVATE |
				     MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE,
				     -1, 0) == MAP_FAILED ? errno : 0);
		}
		break;
	case 2:
		/* Moved whole, and used where it is now. */
		c_mremap(c, m, m->len, true);
		break;
	default:
		/* Shrunk, moved or not, or grown, which must fail. */
		c_mremap(c, m, t_chance(&c->rng, 50) ? 4096 : m->len * 2,
			 fixed);
		break;
	}
	c_publish(c, e);
}

static void c_reap(struct chaos *c, bool all)
{
	int k, status;

	for (k = 0; k < C_KIDS; k++) {
		if (c->kid[k] <= 0)
			continue;
		if (all)
			kill(c->kid[k], SIGKILL);
		if (waitpid(c->kid[k], &status, all ? 0 : WNOHANG) != c->kid[k])
			continue;
		c->kid[k] = 0;
		if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
			continue;
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			t_violation(c->ctl, "chaos %llu: a child it forked ended "
				    "with status %#x",
				    (unsigned long long)c->seed, status);
	}
}

static void c_step(struct chaos *c, bool child);

/* A child goes on with our files and mappings a while, then exits. */
static void c_fork(struct chaos *c)
{
	pid_t parent = getpid(), pid;
	int k, n;

	for (k = 0; k < C_KIDS && c->kid[k] > 0; k++)
		;
	if (k == C_KIDS)
		return;
	c->rng ^= t_rand(&c->rng);
	pid = fork();
	t_count(c->ctl, T_OP_FORK, pid < 0 ? errno : 0);
	if (pid < 0)
		return;
	if (pid) {
		c->kid[k] = pid;
		return;
	}
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(0);
	c->rng ^= 0xc4ceb9fe1a85ec53ULL;
	memset(c->kid, 0, sizeof(c->kid));
	for (n = 1 + t_below(&c->rng, 8); n > 0; n--)
		c_step(c, true);
	_exit(0);
}

static void c_do(struct chaos *c, bool child)
{
	static const uint8_t weight[T_OP_NR] = {
		[T_OP_CREATE] = 8, [T_OP_CREATE_BAD] = 3, [T_OP_CLOSE] = 5,
		[T_OP_SET_TAG] = 4, [T_OP_MAP] = 8, [T_OP_MAP_BAD] = 2,
		[T_OP_SET_SEG] = 3, [T_OP_SET_SEG_BAD] = 3,
		[T_OP_DROP_SEG] = 2, [T_OP_SEND] = 20, [T_OP_SEND_BAD] = 5,
		[T_OP_RECV] = 15, [T_OP_GARBAGE] = 6, [T_OP_MUNMAP] = 4,
		[T_OP_MMAP_BAD] = 2, [T_OP_IOCTL_BAD] = 3, [T_OP_FORK] = 1,
	};
	uint32_t total = 0, pick;
	struct c_ep *e = c_pick(c);
	int op;

	for (op = 0; op < T_OP_NR; op++)
		total += weight[op];
	pick = t_below(&c->rng, total);
	for (op = 0; pick >= weight[op]; op++)
		pick -= weight[op];
	if (!e && op != T_OP_CREATE_BAD)
		op = T_OP_CREATE;
	/* A child leaves the making of files and children to its parent. */
	if (child && (op == T_OP_CREATE || op == T_OP_FORK))
		op = T_OP_SEND;
	if (!e && child)
		return;
	c_doing = op;
	switch (op) {
	case T_OP_CREATE:
		c_create(c);
		break;
	case T_OP_CREATE_BAD:
		c_create_bad(c, e);
		break;
	case T_OP_CLOSE:
		c_close(c, e);
		break;
	case T_OP_SET_TAG:
		c_set_tag(c, e);
		break;
	case T_OP_MAP:
		c_map(c, e);
		break;
	case T_OP_MAP_BAD:
		c_map_bad(c, e);
		break;
	case T_OP_SET_SEG:
	case T_OP_DROP_SEG:
		c_set_seg(c, e, op == T_OP_DROP_SEG);
		break;
	case T_OP_SET_SEG_BAD:
		c_set_seg_bad(c, e);
		break;
	case T_OP_SEND:
	case T_OP_SEND_BAD:
		c_send(c, e, op == T_OP_SEND_BAD);
		break;
	case T_OP_RECV:
		c_recv(c, e);
		break;
	case T_OP_GARBAGE:
		c_garbage(c, e);
		break;
	case T_OP_MUNMAP:
		c_remap(c, e);
		break;
	case T_OP_MMAP_BAD:
		c_mmap_bad(c, e);
		break;
	case T_OP_IOCTL_BAD:
		c_ioctl_bad(c, e);
		break;
	default:
		c_fork(c);
		break;
	}
	c_doing = -1;
}

/*
 * One step, drawing from a state of its own that one draw of the
 * process's sequence seeds: how many draws a step takes depends on what
 * its calls meet, and this way that changes the step, not every decision
 * after it.  A replay of the seed gives the n-th step the same draws.
 */
static void c_step(struct chaos *c, bool child)
{
	uint64_t step = t_rand(&c->rng), outer = c->rng;

	c->rng = step;
	c_do(c, child);
	c->rng = outer;
}

/* Alive: a step done.  See T_STALE_S. */
static void c_beat(struct chaos *c)
{
	struct t_beat *b = &c->ctl->beat[c->slot];

	__atomic_fetch_add(&b->steps, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&b->at_ms, t_now_ms(), __ATOMIC_RELEASE);
}

/* Calls into the files the other thread uses, closes and replaces. */
static void *c_racer(void *arg)
{
	struct chaos *c = arg;

	while (!__atomic_load_n(&c->stop, __ATOMIC_RELAXED)) {
		int i = t_below(&c->race_rng, C_EPS);
		int fd = __atomic_load_n(&c->race_fd[i], __ATOMIC_RELAXED);
		volatile uint32_t *frame = (volatile uint32_t *)
			__atomic_load_n(&c->race_frame[i], __ATOMIC_RELAXED);
		struct pollfd pfd = { fd, POLLIN, 0 };
		uint64_t tag = t_rand(&c->race_rng);
		struct vnet_ep_stat st;

		c_doing = T_OP_RACE;
		switch (t_below(&c->race_rng, 5)) {
		case 0:
			ioctl(fd, VNET_IOC_EP_STAT, &st);
			break;
		case 1:
			ioctl(fd, VNET_IOC_KICK);
			break;
		case 2:
			poll(&pfd, 1, t_below(&c->race_rng, 3));
			break;
		case 3:
			/* Faults the endpoint in, unless it is gone. */
			if (frame)
				C_GUARDED(c, C_ANY_NIC, (void)*frame);
			break;
		default:
			ioctl(fd, VNET_IOC_SET_TAG, &tag);
			break;
		}
		c_doing = -1;
		t_count(c->ctl, T_OP_RACE, 0);
		usleep(t_below(&c->race_rng, 2000));
	}
	return NULL;
}

static int c_become(struct t_ctl *ctl, int slot)
{
	uid_t uid = ctl->chaos_uid + slot;

	if (!ctl->chaos_uid)
		return 0;
	if (setgroups(1, &ctl->dev_gid) || setresgid(uid, uid, uid) ||
	    setresuid(uid, uid, uid))
		return -1;
	/* A change of credentials clears it. */
	return prctl(PR_SET_PDEATHSIG, SIGKILL);
}

void t_chaos_run(struct t_ctl *ctl, uint64_t seed, int slot)
{
	struct sigaction sa = { .sa_sigaction = c_on_fault,
				.sa_flags = SA_SIGINFO };
	struct chaos *c = calloc(1, sizeof(*c));
	pthread_t racer;
	int i;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (!c || c_become(ctl, slot)) {
		t_violation(ctl, "chaos %llu: cannot become user %u",
			    (unsigned long long)seed, ctl->chaos_uid + slot);
		_exit(1);
	}
	c->ctl = ctl;
	c->slot = slot;
	c->seed = c->rng = seed;
	c_seed = seed;
	c->race_rng = t_seed_of(seed, T_ROLE_CHAOS, 1);
	c->root = !ctl->chaos_uid;
	t_say("# seed %llu: chaos process in slot %d, uid %u",
	      (unsigned long long)seed, slot, (unsigned int)getuid());
	c->buf = mmap(NULL, C_BUF, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	c->ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	c->hole = mmap(NULL, 8192, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);
	if (c->buf == MAP_FAILED || c->ro == MAP_FAILED ||
	    c->hole == MAP_FAILED)
		_exit(1);
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	for (i = 0; i < C_EPS; i++)
		c->ep[i].fd = c->race_fd[i] = -1;
	if (pthread_create(&racer, NULL, c_racer, c))
		_exit(1);
	while (!__atomic_load_n(&ctl->chaos_stop, __ATOMIC_ACQUIRE)) {
		c_step(c, false);
		c_reap(c, false);
		c_beat(c);
		/* Gone without closing anything: exit does it. */
		if (!t_below(&c->rng, 3000)) {
			t_count(ctl, T_OP_EXIT, 0);
			_exit(0);
		}
		usleep(t_below(&c->rng, 500));
	}
	/* Winding down is steps too: each may hang as well. */
	__atomic_store_n(&c->stop, 1, __ATOMIC_RELAXED);
	pthread_join(racer, NULL);
	c_beat(c);
	c_reap(c, true);
	c_beat(c);
	for (i = 0; i < C_EPS; i++)
		if (c->ep[i].fd >= 0) {
			c_close(c, &c->ep[i]);
			c_beat(c);
		}
	_exit(0);
}
