// SPDX-License-Identifier: GPL-2.0
/*
 * Messages larger than a frame, across a veth pair of MTU 1500 and 9000:
 * every medium size from 0 to VNET_MEDIUM_MAX and XFERs up to
 * VNET_XFER_MAX, from staging and from the segment, as requests and as
 * replies, each checksummed end to end; the same through netem's loss,
 * duplication, reordering and corruption, exactly once; and a process
 * killed with a train in flight, sending or receiving: nothing arrives in
 * part, the other side gets its message back whole, and the wire goes on.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "wire_util.h"

#define NIC_A		5
#define NIC_B		6
#define SEG		(2u * VNET_XFER_MAX)	/* landing, then source */
#define OUT		8			/* requests a client keeps out */

#define MAX_RETRIES	"/sys/module/vnet/parameters/max_retries"

/*
 * max_retries as the suite found it: a NIC takes it when attached, and
 * every fixture attaches its NICs with it unless it says otherwise, so a
 * test that failed or timed out after changing it changes no other.
 */
static long long suite_max_retries = -1;

__attribute__((constructor)) static void params_save(void)
{
	suite_max_retries = vnet_read_ll(MAX_RETRIES);
}

/* Also at exit: a test killed in its fixture leaves no teardown. */
__attribute__((destructor)) static void params_restore(void)
{
	if (suite_max_retries > 0)
		vnet_write_ll(MAX_RETRIES, suite_max_retries);
}

static void wire_down(void)
{
	vnet_veth_down("vnf0", NIC_A, NIC_B);
	params_restore();
}

/* Attach both NICs with @max_retries, or the suite's if NULL. */
static int wire_up_retries(int mtu, const char *netem,
			   const char *max_retries)
{
	wire_down();
	if (max_retries && vnet_write_str(MAX_RETRIES, max_retries))
		return -1;
	return vnet_veth_up("vnf0", "vnf1", NIC_A, NIC_B, mtu, netem);
}

static int wire_up(int mtu, const char *netem)
{
	return wire_up_retries(mtu, netem, NULL);
}

static long long stat_of(int nic, const char *name)
{
	return vnet_nic_stat(nic, name);
}

/*
 * The debug kernel (KASAN, lockdep, kmemleak: make check-debug) runs the
 * firmware ten times slower or more, and a sweep of every size would take
 * it most of an hour.  There the sweeps take every SPARSE-th size, and
 * every size around the first fragment boundaries still; the checks stay
 * the same.
 */
#define SPARSE		37

static bool debug_kernel(void)
{
	static int debug = -1;
	struct utsname u;

	if (debug < 0)
		debug = !uname(&u) && strstr(u.release, "-vnet-debug");
	return debug;
}

/* The size after @len in a sweep of every size, near boundary @edge. */
static uint32_t next_size(uint32_t len, uint32_t edge)
{
	if (!debug_kernel() || len % edge < 3 || len % edge > edge - 3)
		return len + 1;
	return len + SPARSE;
}

/* The XFERs from staging: every size to 3000, every 5th past it. */
static uint32_t next_xfer_size(uint32_t len, uint32_t edge)
{
	if (len < 3000)
		return next_size(len, edge);
	return len + (debug_kernel() ? SPARSE : 5);
}

/* Bytes that follow from @seed, and their checksum. */
static uint32_t fill(uint8_t *buf, uint32_t len, uint32_t seed)
{
	uint32_t i, sum = 0;

	for (i = 0; i < len; i++) {
		seed = seed * 1103515245u + 12345u;
		buf[i] = seed >> 16;
		sum = sum * 31 + buf[i];
	}
	return sum;
}

static uint32_t sum_of(const uint8_t *buf, uint32_t len)
{
	uint32_t i, sum = 0;

	for (i = 0; i < len; i++)
		sum = sum * 31 + buf[i];
	return sum;
}

/* An endpoint with a segment of SEG bytes. */
struct node {
	struct vnet_endpoint ep;
	uint8_t *seg;
};

static int node_open(struct node *n, int nic)
{
	struct vnet_seg s;

	n->seg = mmap(NULL, SEG, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (n->seg == MAP_FAILED || vnet_endpoint_open(&n->ep, nic))
		return -1;
	s.addr = (uintptr_t)n->seg;
	s.len = SEG;
	return ioctl(n->ep.fd, VNET_IOC_SET_SEG, &s);
}

static void node_close(struct node *n)
{
	vnet_endpoint_close(&n->ep);
	munmap(n->seg, SEG);
}

enum kind { MEDIUM, XFER, XFER_SEG };

/* What a client sends and the server sends back: kind and size each. */
struct job {
	enum kind kind;
	uint32_t len;
};

struct run {
	struct node cli, srv;
	struct job *jobs;
	uint32_t nr, sent, done, out, slot_busy;
	uint8_t *seen, *answered;
	uint32_t bad, returned, status;
	uint32_t replies_returned, reply_status, reply_job;
};

/* Where job n's XFER lands, at either end: one of OUT areas, or 0. */
static uint64_t land_at(const struct run *r, uint32_t n, uint32_t slot)
{
	return r->jobs[n].kind == XFER_SEG ? 0 :
	       (uint64_t)slot * VNET_MEDIUM_MAX;
}

/*
 * A reply that cannot be delivered comes back to the server, into its own
 * reply queue: its client never gets it, and the run cannot finish.
 */
static void reap_returned_replies(struct run *r)
{
	struct vnet_endpoint *s = &r->srv.ep;
	const struct vnet_desc *d;

	while ((d = vnet_endpoint_peek(s, VNET_Q_REP_RECV))) {
		if (d->flags & VNET_DESC_RETURNED) {
			r->replies_returned++;
			r->reply_status = d->status;
			r->reply_job = d->args[0];
		} else {
			r->bad++;
		}
		vnet_endpoint_consume(s, VNET_Q_REP_RECV);
	}
}

static void serve(struct run *r)
{
	struct vnet_endpoint *s = &r->srv.ep;
	const struct vnet_desc *d;

	reap_returned_replies(r);
	while ((d = vnet_endpoint_peek(s, VNET_Q_REQ_RECV))) {
		uint32_t n = d->args[0], slot = d->args[1], sum = d->args[2];
		struct vnet_desc rep;
		const uint8_t *bytes;
		bool whole;

		if (n >= r->nr || d->len != r->jobs[n].len) {
			r->bad++;
			vnet_endpoint_consume(s, VNET_Q_REQ_RECV);
			continue;
		}
		bytes = vnet_endpoint_payload(s, VNET_Q_REQ_RECV);
		if (d->flags & VNET_DESC_XFER)
			bytes = r->srv.seg + d->offset;
		whole = sum_of(bytes, d->len) == sum &&
			d->offset == land_at(r, n, slot);

		memset(&rep, 0, sizeof(rep));
		rep.handler = 2;
		rep.nargs = 3;
		memcpy(rep.args, d->args, sizeof(rep.args));
		rep.token = d->token;
		rep.len = d->len;
		rep.flags = d->flags & (VNET_DESC_MEDIUM | VNET_DESC_XFER);
		if (r->jobs[n].kind == XFER_SEG) {
			/* Back from the server's segment, the same bytes. */
			memcpy(r->srv.seg + VNET_XFER_MAX, bytes, d->len);
			rep.flags |= VNET_DESC_FROM_SEG;
			rep.src_offset = VNET_XFER_MAX;
			bytes = NULL;
		}
		rep.offset = land_at(r, n, slot);
		if (vnet_endpoint_post(s, VNET_Q_REP_SEND, &rep, bytes,
				       bytes ? rep.len : 0))
			break;
		if (r->seen[n]++ || !whole)
			r->bad++;
		vnet_endpoint_consume(s, VNET_Q_REQ_RECV);
	}
}

static void client(struct run *r)
{
	struct vnet_endpoint *c = &r->cli.ep;
	static uint8_t buf[VNET_MEDIUM_MAX];
	const struct vnet_desc *d;

	while ((d = vnet_endpoint_peek(c, VNET_Q_REP_RECV))) {
		uint32_t n = d->args[0], slot = d->args[1];
		const uint8_t *bytes = vnet_endpoint_payload(c, VNET_Q_REP_RECV);

		if (d->flags & VNET_DESC_RETURNED) {
			r->returned++;
			r->status = d->status;
		} else if (n >= r->nr || d->len != r->jobs[n].len ||
			   r->answered[n]++) {
			r->bad++;
		} else {
			if (d->flags & VNET_DESC_XFER)
				bytes = r->cli.seg + d->offset;
			if (sum_of(bytes, d->len) != d->args[2])
				r->bad++;
		}
		if (slot < OUT)
			r->slot_busy &= ~(1u << slot);
		r->out--;
		r->done++;
		vnet_endpoint_consume(c, VNET_Q_REP_RECV);
	}
	while (r->sent < r->nr) {
		const struct job *j = &r->jobs[r->sent];
		struct vnet_desc q = vnet_short(1, 0, r->sent, 0);
		uint32_t slot = __builtin_ctz(~r->slot_busy);
		const uint8_t *bytes = buf;

		/* XFERs from the segment one at a time: one landing area. */
		if (r->out >= OUT || (j->kind == XFER_SEG && r->out))
			break;
		if (r->sent && r->jobs[r->sent - 1].kind == XFER_SEG && r->out)
			break;
		q.nargs = 3;
		q.args[1] = slot;
		q.len = j->len;
		q.flags = j->kind == MEDIUM ? VNET_DESC_MEDIUM : VNET_DESC_XFER;
		q.offset = land_at(r, r->sent, slot);
		if (j->kind == XFER_SEG) {
			q.flags |= VNET_DESC_FROM_SEG;
			q.src_offset = VNET_XFER_MAX;
			q.args[2] = fill(r->cli.seg + VNET_XFER_MAX, j->len,
					 r->sent);
			bytes = NULL;
		} else {
			q.args[2] = fill(buf, j->len, r->sent);
		}
		if (vnet_endpoint_post(c, VNET_Q_REQ_SEND, &q, bytes,
				       bytes ? q.len : 0))
			break;
		r->slot_busy |= 1u << slot;
		r->out++;
		r->sent++;
	}
}

static int run_open(struct run *r, struct job *jobs, uint32_t nr)
{
	memset(r, 0, sizeof(*r));
	r->jobs = jobs;
	r->nr = nr;
	r->seen = calloc(nr, 1);
	r->answered = calloc(nr, 1);
	if (node_open(&r->cli, NIC_A) || node_open(&r->srv, NIC_B) ||
	    vnet_endpoint_set_tag(&r->srv.ep, TEST_TAG) ||
	    vnet_endpoint_map(&r->cli.ep, 0, r->srv.ep.name, TEST_TAG))
		return -1;
	return 0;
}

static void run_close(struct run *r)
{
	node_close(&r->cli);
	node_close(&r->srv);
	free(r->seen);
	free(r->answered);
}

/*
 * Drive client and server until every job is answered, a reply comes back
 * to the server (its job can never be answered), or @secs pass.
 */
static bool run_all(struct run *r, double secs)
{
	double deadline = vnet_now() + secs;

	while (r->done < r->nr && !r->replies_returned &&
	       vnet_now() < deadline) {
		client(r);
		serve(r);
		if (!vnet_endpoint_peek(&r->cli.ep, VNET_Q_REP_RECV) &&
		    !vnet_endpoint_peek(&r->srv.ep, VNET_Q_REQ_RECV) &&
		    !vnet_endpoint_peek(&r->srv.ep, VNET_Q_REP_RECV))
			vnet_endpoint_wait(&r->srv.ep, 1);
	}
	/* A reply both delivered and returned: counted as well. */
	reap_returned_replies(r);
	return r->done == r->nr && !r->replies_returned;
}

static void run_check(struct __test_metadata *_metadata, struct run *r)
{
	uint32_t n;

	EXPECT_EQ(0, r->bad);
	EXPECT_EQ(0, r->returned);
	if (r->returned)
		TH_LOG("%u returned, the last with reason %u", r->returned,
		       r->status);
	EXPECT_EQ(0, r->replies_returned);
	if (r->replies_returned)
		TH_LOG("%u replies returned to the server, the last job %u's "
		       "with reason %u", r->replies_returned, r->reply_job,
		       r->reply_status);
	for (n = 0; n < r->nr; n++) {
		if (r->seen[n] == 1 && r->answered[n] == 1)
			continue;
		TH_LOG("job %u (kind %d, %u bytes): seen %u, answered %u", n,
		       r->jobs[n].kind, r->jobs[n].len, r->seen[n],
		       r->answered[n]);
		EXPECT_TRUE(false);
		break;
	}
}

FIXTURE(sizes) {
	int mtu;
};

FIXTURE_VARIANT(sizes) {
	int mtu;
};

FIXTURE_VARIANT_ADD(sizes, mtu1500) {
	.mtu = 1500,
};

FIXTURE_VARIANT_ADD(sizes, mtu9000) {
	.mtu = 9000,
};

FIXTURE_SETUP(sizes)
{
	ASSERT_EQ(0, wire_up(variant->mtu, NULL));
	self->mtu = variant->mtu;
}

FIXTURE_TEARDOWN(sizes)
{
	wire_down();
}

/*
 * Every medium size from 0 to 8 KiB, and XFERs from staging at every
 * size to 8 KiB (every 5th past the first fragment, to bound the time);
 * then XFERs from the segment around every fragment boundary of the first
 * few fragments, and at steps up to the largest.  Each is answered with
 * the same bytes the same way, checksummed both ways.
 */
TEST_F_TIMEOUT(sizes, every_size, 600)
{
	uint32_t n = 0, len, room = self->mtu - 40, edge = self->mtu - 112;
	struct job *jobs = calloc(20000, sizeof(*jobs));
	struct run r;
	double start = vnet_now();

	ASSERT_NE(NULL, jobs);
	for (len = 0; len <= VNET_MEDIUM_MAX; len = next_size(len, edge))
		jobs[n++] = (struct job){ MEDIUM, len };
	for (len = 0; len <= VNET_MEDIUM_MAX; len = next_xfer_size(len, edge))
		jobs[n++] = (struct job){ XFER, len };
	for (len = VNET_MEDIUM_MAX + 1; len < 8 * room; len += room)
		for (uint32_t k = 0; k < 3; k++)
			jobs[n++] = (struct job){ XFER_SEG, len + k };
	for (len = VNET_XFER_MAX; len > 64 * 1024; len -= len / 3 + 1)
		if (!debug_kernel() || len == VNET_XFER_MAX)
			jobs[n++] = (struct job){ XFER_SEG, len };
	ASSERT_EQ(0, run_open(&r, jobs, n));
	EXPECT_TRUE(run_all(&r, 500));
	run_check(_metadata, &r);
	TH_LOG("MTU %d: %u messages each way in %.1f s; %lld trains, %lld "
	       "fragments, %lld retransmissions", self->mtu, n,
	       vnet_now() - start, stat_of(NIC_A, "trains_sent") +
	       stat_of(NIC_B, "trains_sent"),
	       stat_of(NIC_A, "fragments_sent") +
	       stat_of(NIC_B, "fragments_sent"),
	       stat_of(NIC_A, "retransmits") + stat_of(NIC_B, "retransmits"));
	if (self->mtu < 8288)
		EXPECT_LT(0, stat_of(NIC_B, "trains_received"));
	run_close(&r);
	free(jobs);
}

/*
 * Eight megabytes each way (two on the debug kernel), one XFER of 1 MiB
 * at a time from segment to segment: what a train carries, stop-and-wait,
 * fragment by fragment.
 */
/* Do the NICs, attached with the parameter as it is, send from pages? */
static bool zero_copy(void)
{
	FILE *f = fopen("/sys/module/vnet/parameters/zero_copy", "r");
	int c = f ? fgetc(f) : EOF;

	if (f)
		fclose(f);
	return c != 'N';
}

/* Payload bytes copied on both NICs, wherever: into frames, out, in. */
static long long copied_bytes(void)
{
	static const char *const stats[] = { "tx_copied_bytes",
		"rx_gathered_bytes", "payload_copied_bytes" };
	long long sum = 0;
	unsigned int i;

	for (i = 0; i < 3; i++)
		sum += stat_of(NIC_A, stats[i]) + stat_of(NIC_B, stats[i]);
	return sum;
}

/*
 * Eight megabytes each way (two on the debug kernel), one XFER of 1 MiB
 * at a time from segment to segment: what a train carries, stop-and-wait,
 * fragment by fragment.  Sent from the segments' pages (zero_copy), with
 * no copy on the way out; on veth the receiving NIC gathers them (their
 * owner may still write them), then lands them: two copies a byte.
 * Without zero_copy, three: into a pool buffer, into the frame, landed.
 */
TEST_F_TIMEOUT(sizes, megabyte_rate, 300)
{
	uint32_t n, nr = debug_kernel() ? 2 : 8;
	long long copied, pinned, bytes = 2LL * nr * VNET_XFER_MAX;
	int copies = zero_copy() ? 2 : 3;
	struct job jobs[8];
	struct run r;
	double took;

	for (n = 0; n < nr; n++)
		jobs[n] = (struct job){ XFER_SEG, VNET_XFER_MAX };
	ASSERT_EQ(0, run_open(&r, jobs, nr));
	copied = copied_bytes();
	pinned = stat_of(NIC_A, "tx_segment_bytes") +
		 stat_of(NIC_B, "tx_segment_bytes");
	took = vnet_now();
	EXPECT_TRUE(run_all(&r, 250));
	took = vnet_now() - took;
	copied = copied_bytes() - copied;
	pinned = stat_of(NIC_A, "tx_segment_bytes") +
		 stat_of(NIC_B, "tx_segment_bytes") - pinned;
	run_check(_metadata, &r);
	TH_LOG("MTU %d: 2 x %u MiB in %.2f s, %.1f MB/s, %.2f copies a byte, "
	       "%.2f sent from the segment", self->mtu, nr, took,
	       bytes / took / 1e6, (double)copied / bytes,
	       (double)pinned / bytes);
	if (copies == 2) {
		EXPECT_LE(bytes, pinned);
	} else {
		EXPECT_EQ(0, pinned);
	}
	/* Retransmissions add a few; a duplicate is not landed again. */
	EXPECT_LE(copies * bytes, copied);
	EXPECT_GE(copies * bytes + bytes / 10, copied);
	run_close(&r);
}

/* MTU 1500, through netem. */
FIXTURE(netem) {
	int unused;
};

/*
 * A debug guest can go a second without running a NIC's thread, which is
 * all the suite's retries wait before "unreachable" (50 quanta of
 * run_vm.sh's retrans_ms=20): five seconds here, as wire_test gives its
 * lossy wire, since what this counts is exactly once.
 */
FIXTURE_SETUP(netem)
{
	ASSERT_EQ(0, wire_up_retries(1500, "loss 20% duplicate 5% delay 1ms "
					   "reorder 25% corrupt 1%", "250"));
}

FIXTURE_TEARDOWN(netem)
{
	wire_down();
}

/*
 * Through netem: mediums of every size class and XFERs from the segment
 * of up to 64 KiB, requests and replies, each exactly once and whole (200
 * of them; 60 on the debug kernel).
 */
TEST_F_TIMEOUT(netem, exactly_once, 600)
{
	uint32_t n, nr = debug_kernel() ? 60 : 200, seed = 7;
	struct job jobs[200];
	struct run r;
	double start = vnet_now();

	for (n = 0; n < nr; n++) {
		seed = seed * 1103515245u + 12345u;
		if (n % 10 == 9)
			jobs[n] = (struct job){ XFER_SEG,
						VNET_MEDIUM_MAX + 1 +
						(seed >> 8) % (56u << 10) };
		else
			jobs[n] = (struct job){ n % 2 ? XFER : MEDIUM,
						(seed >> 8) %
						(VNET_MEDIUM_MAX + 1) };
	}
	ASSERT_EQ(0, run_open(&r, jobs, nr));
	EXPECT_TRUE(run_all(&r, 500));
	run_check(_metadata, &r);
	TH_LOG("%u each way in %.1f s; %lld trains, %lld retransmissions, "
	       "%lld restarts, %lld bad frames", nr, vnet_now() - start,
	       stat_of(NIC_A, "trains_sent") + stat_of(NIC_B, "trains_sent"),
	       stat_of(NIC_A, "retransmits") + stat_of(NIC_B, "retransmits"),
	       stat_of(NIC_A, "nacks_received_restart") +
	       stat_of(NIC_B, "nacks_received_restart"),
	       stat_of(NIC_A, "bad_frames") + stat_of(NIC_B, "bad_frames"));
	EXPECT_LT(0, stat_of(NIC_B, "trains_received"));
	run_close(&r);
}

/* MTU 1500, a clean wire. */
FIXTURE(wire) {
	int unused;
};

FIXTURE_SETUP(wire)
{
	ASSERT_EQ(0, wire_up(1500, NULL));
}

FIXTURE_TEARDOWN(wire)
{
	wire_down();
}

/* Wait until NIC_B has taken @more fragments than @base, up to @secs. */
static bool frags_arrive(long long base, long long more, double secs)
{
	double deadline = vnet_now() + secs;

	while (stat_of(NIC_B, "fragments_received") < base + more)
		if (vnet_now() > deadline)
			return false;
		else
			usleep(1000);
	return true;
}

/*
 * The sender is killed with a 1 MiB train halfway out: the receiver gets
 * nothing of it, lets go of what it had, and takes the next train whole.
 */
TEST_F_TIMEOUT(wire, sender_killed_halfway, 120)
{
	struct job next = { XFER_SEG, 256 << 10 };
	long long base = stat_of(NIC_B, "fragments_received");
	long long dropped = stat_of(NIC_B, "trains_dropped");
	struct run r;
	double deadline;
	int status;
	pid_t pid;

	ASSERT_EQ(0, run_open(&r, &next, 1));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct node n;
		struct vnet_desc q = vnet_short(1, 0, 0, 0);

		if (node_open(&n, NIC_A) ||
		    vnet_endpoint_map(&n.ep, 0, r.srv.ep.name, TEST_TAG))
			_exit(1);
		fill(n.seg + VNET_XFER_MAX, VNET_XFER_MAX, 99);
		q.flags = VNET_DESC_XFER | VNET_DESC_FROM_SEG;
		q.len = VNET_XFER_MAX;
		q.src_offset = VNET_XFER_MAX;
		if (vnet_endpoint_post(&n.ep, VNET_Q_REQ_SEND, &q, NULL, 0))
			_exit(1);
		for (;;)
			pause();
	}
	ASSERT_TRUE(frags_arrive(base, 100, 30));
	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status));
	EXPECT_GT(base + 700, stat_of(NIC_B, "fragments_received"));

	/* Nothing of it arrives; its part goes within busy_timeout. */
	deadline = vnet_now() + 10;
	while (stat_of(NIC_B, "trains_dropped") == dropped &&
	       vnet_now() < deadline)
		usleep(10000);
	EXPECT_EQ(dropped + 1, stat_of(NIC_B, "trains_dropped"));
	EXPECT_EQ(NULL, vnet_endpoint_peek(&r.srv.ep, VNET_Q_REQ_RECV));

	EXPECT_TRUE(run_all(&r, 60));
	run_check(_metadata, &r);
	run_close(&r);
}

/* The message @ep gets back on its reply queue within @secs, or NULL. */
static const struct vnet_desc *returned_within(struct vnet_endpoint *ep,
					       double secs)
{
	double deadline = vnet_now() + secs;
	const struct vnet_desc *d;

	while (!(d = vnet_endpoint_peek(ep, VNET_Q_REP_RECV)) &&
	       vnet_now() < deadline)
		vnet_endpoint_wait(ep, 50);
	return d;
}

/*
 * The sender drops its segment and unmaps it with a 1 MiB train halfway
 * out, its fragments sent from the segment's pages (zero_copy): the train
 * comes back "bad segment", the receiver lets go of what it had, and the
 * pages of the fragments still on their way stay until they are sent
 * (the debug kernel's KASAN would see them freed under the frames).  New
 * memory at the same address is never sent.
 */
TEST_F_TIMEOUT(wire, segment_dropped_halfway, 120)
{
	struct job next = { XFER_SEG, 256 << 10 };
	long long base = stat_of(NIC_B, "fragments_received");
	long long dropped = stat_of(NIC_B, "trains_dropped");
	struct vnet_desc q = vnet_short(1, 0, 0, 0);
	const struct vnet_desc *back = NULL;
	struct vnet_seg none = { 0 };
	struct run r;
	struct node n;
	double deadline;
	void *again;

	ASSERT_EQ(0, run_open(&r, &next, 1));
	ASSERT_EQ(0, node_open(&n, NIC_A));
	ASSERT_EQ(0, vnet_endpoint_map(&n.ep, 0, r.srv.ep.name, TEST_TAG));
	fill(n.seg + VNET_XFER_MAX, VNET_XFER_MAX, 98);
	q.flags = VNET_DESC_XFER | VNET_DESC_FROM_SEG;
	q.len = VNET_XFER_MAX;
	q.src_offset = VNET_XFER_MAX;
	ASSERT_EQ(0, vnet_endpoint_post(&n.ep, VNET_Q_REQ_SEND, &q, NULL, 0));
	ASSERT_TRUE(frags_arrive(base, 100, 30));
	ASSERT_EQ(0, ioctl(n.ep.fd, VNET_IOC_SET_SEG, &none));
	ASSERT_EQ(0, munmap(n.seg, SEG));
	again = mmap(n.seg, SEG, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	ASSERT_EQ((void *)n.seg, again);
	memset(n.seg, 0x5a, SEG);

	back = returned_within(&n.ep, 30);
	ASSERT_NE(NULL, back);
	EXPECT_TRUE(back->flags & VNET_DESC_RETURNED);
	EXPECT_EQ(VNET_RET_BAD_SEGMENT, back->status);
	EXPECT_EQ(VNET_XFER_MAX, back->len);
	vnet_endpoint_consume(&n.ep, VNET_Q_REP_RECV);
	deadline = vnet_now() + 10;
	while (stat_of(NIC_B, "trains_dropped") == dropped &&
	       vnet_now() < deadline)
		usleep(10000);
	EXPECT_EQ(dropped + 1, stat_of(NIC_B, "trains_dropped"));
	EXPECT_EQ(NULL, vnet_endpoint_peek(&r.srv.ep, VNET_Q_REQ_RECV));
	node_close(&n);

	EXPECT_TRUE(run_all(&r, 60));
	run_check(_metadata, &r);
	run_close(&r);
}

/*
 * The receiver is killed with a 1 MiB train halfway in: the sender gets
 * its message back whole, "no endpoint", and the entry it was read from.
 */
TEST_F_TIMEOUT(wire, receiver_killed_halfway, 120)
{
	long long base = stat_of(NIC_B, "fragments_received");
	struct vnet_desc q = vnet_short(1, 0, 0, 0);
	int pipefd[2], status;
	const struct vnet_desc *d = NULL;
	struct vnet_name name;
	struct node c;
	double deadline;
	pid_t pid;

	ASSERT_EQ(0, pipe(pipefd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct node s;

		if (node_open(&s, NIC_B) ||
		    vnet_endpoint_set_tag(&s.ep, TEST_TAG) ||
		    write(pipefd[1], &s.ep.name, sizeof(s.ep.name)) !=
		    sizeof(s.ep.name))
			_exit(1);
		for (;;)
			pause();
	}
	ASSERT_EQ(sizeof(name), read(pipefd[0], &name, sizeof(name)));
	ASSERT_EQ(0, node_open(&c, NIC_A));
	ASSERT_EQ(0, vnet_endpoint_map(&c.ep, 0, name, TEST_TAG));
	fill(c.seg + VNET_XFER_MAX, VNET_XFER_MAX, 98);
	q.flags = VNET_DESC_XFER | VNET_DESC_FROM_SEG;
	q.len = VNET_XFER_MAX;
	q.src_offset = VNET_XFER_MAX;
	ASSERT_EQ(0, vnet_endpoint_post(&c.ep, VNET_Q_REQ_SEND, &q, NULL, 0));
	ASSERT_TRUE(frags_arrive(base, 100, 30));
	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));

	d = returned_within(&c.ep, 30);
	ASSERT_NE(NULL, d);
	EXPECT_TRUE(d->flags & VNET_DESC_RETURNED);
	EXPECT_EQ(VNET_RET_NO_ENDPOINT, d->status);
	EXPECT_EQ(VNET_XFER_MAX, d->len);
	EXPECT_EQ(VNET_XFER_MAX, d->src_offset);
	EXPECT_TRUE(d->flags & VNET_DESC_FROM_SEG);
	vnet_endpoint_consume(&c.ep, VNET_Q_REP_RECV);
	deadline = vnet_now() + 5;
	while (!vnet_endpoint_taken(&c.ep, VNET_Q_REQ_SEND, 1) &&
	       vnet_now() < deadline)
		usleep(1000);
	EXPECT_TRUE(vnet_endpoint_taken(&c.ep, VNET_Q_REQ_SEND, 1));
	node_close(&c);
	close(pipefd[0]);
	close(pipefd[1]);
}

TEST_HARNESS_MAIN
