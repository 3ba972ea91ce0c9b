// SPDX-License-Identifier: GPL-2.0
/*
 * XFERs read in place from memory the sender pinned (VNET_IOC_PIN,
 * VNET_DESC_FROM_PIN), on the loopback NIC and across a veth pair of MTU
 * 1500 (there sent from the pinned pages themselves): what is sent is what
 * the sender's memory holds when it is sent.  After munmap and a new
 * mapping at the same address, or an mremap away, the old pages are never
 * sent -- a message from the address comes back "source gone" until the
 * range is pinned again, and then carries the new bytes.  The pin cache
 * keeps VNET_NR_PINS ranges, drops the least recently asked for, and
 * accounts every pinned page to the locked memory of the process, which
 * gets it all back.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/select.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "wire_util.h"

#define LEN		(256u << 10)	/* about 180 fragments at MTU 1500 */
#define NIC_A		9
#define NIC_B		10

static void fill(uint8_t *buf, uint32_t len, uint32_t seed)
{
	uint32_t i;

	for (i = 0; i < len; i++) {
		seed = seed * 1103515245u + 12345u;
		buf[i] = seed >> 16;
	}
}

static bool same(const uint8_t *buf, uint32_t len, uint32_t seed)
{
	uint32_t i;

	for (i = 0; i < len; i++) {
		seed = seed * 1103515245u + 12345u;
		if (buf[i] != (uint8_t)(seed >> 16))
			return false;
	}
	return true;
}

static int pin(struct vnet_endpoint *ep, const void *addr, uint64_t len)
{
	struct vnet_pin p = { .addr = (uintptr_t)addr, .len = len };

	return ioctl(ep->fd, VNET_IOC_PIN, &p) ? -errno : 0;
}

/* The kB of locked memory this process is charged with. */
static long long locked_kb(void)
{
	return vnet_proc_kb("/proc/self/status", "VmLck");
}

static void *map_anon(void *at, size_t len)
{
	return mmap(at, len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | (at ? MAP_FIXED : 0), -1, 0);
}

FIXTURE(pin) {
	struct vnet_endpoint cli, srv;
	uint8_t *seg;			/* the server's: XFERs land at 0 */
	uint8_t *src;			/* LEN bytes of the client's */
	long long locked;		/* kB locked before the test */
	bool no_pins;			/* PIN says EOPNOTSUPP */
};

/* A kernel without MMU notifiers cannot tell when a pin goes stale. */
#define NEED_PINS() do {						\
	if (self->no_pins)						\
		SKIP(return, "VNET_IOC_PIN: not supported by this kernel"); \
} while (0)

FIXTURE_VARIANT(pin) {
	bool wire;
};

FIXTURE_VARIANT_ADD(pin, loopback) { .wire = false };
FIXTURE_VARIANT_ADD(pin, wire) { .wire = true };

FIXTURE_SETUP(pin)
{
	int nic_a = 0, nic_b = 0;
	struct vnet_seg s;

	if (variant->wire) {
		vnet_veth_down("vnq0", NIC_A, NIC_B);
		ASSERT_EQ(0, vnet_veth_up("vnq0", "vnq1", NIC_A, NIC_B, 1500,
					  NULL));
		nic_a = NIC_A;
		nic_b = NIC_B;
	}
	ASSERT_LE(0, locked_kb());
	self->seg = map_anon(NULL, VNET_XFER_MAX);
	self->src = map_anon(NULL, LEN);
	ASSERT_NE(MAP_FAILED, self->seg);
	ASSERT_NE(MAP_FAILED, self->src);
	ASSERT_EQ(0, vnet_endpoint_open(&self->srv, nic_b));
	ASSERT_EQ(0, vnet_endpoint_open(&self->cli, nic_a));
	s.addr = (uintptr_t)self->seg;
	s.len = VNET_XFER_MAX;
	ASSERT_EQ(0, ioctl(self->srv.fd, VNET_IOC_SET_SEG, &s));
	ASSERT_EQ(0, vnet_endpoint_set_tag(&self->srv, TEST_TAG));
	ASSERT_EQ(0, vnet_endpoint_map(&self->cli, 0, self->srv.name,
				       TEST_TAG));
	/* The server's segment is pinned too, and counted. */
	self->locked = locked_kb();
	self->no_pins = pin(&self->cli, self->src, 1) == -EOPNOTSUPP;
	pin(&self->cli, NULL, 0);
}

FIXTURE_TEARDOWN(pin)
{
	vnet_endpoint_close(&self->cli);
	vnet_endpoint_close(&self->srv);
	munmap(self->src, LEN);
	munmap(self->seg, VNET_XFER_MAX);
	if (variant->wire)
		vnet_veth_down("vnq0", NIC_A, NIC_B);
}

/*
 * Send the @len bytes at @addr from the client's pins to offset 0 of the
 * server's segment: 0 once they are there, or the status the message
 * came back with; -ETIMEDOUT after 30 s of neither.
 */
static int send_from(FIXTURE_DATA(pin) *self, const void *addr,
		     uint32_t len)
{
	struct vnet_desc q = vnet_short(1, 0, 0, 0);
	double deadline = vnet_now() + 30;
	const struct vnet_desc *d;
	int ret;

	q.flags = VNET_DESC_XFER | VNET_DESC_FROM_PIN;
	q.len = len;
	q.src_offset = (uintptr_t)addr;
	if (vnet_endpoint_post(&self->cli, VNET_Q_REQ_SEND, &q, NULL, 0))
		return -EIO;
	while (vnet_now() < deadline) {
		d = vnet_endpoint_peek(&self->srv, VNET_Q_REQ_RECV);
		if (d) {
			ret = d->len == len ? 0 : -EMSGSIZE;
			vnet_endpoint_consume(&self->srv, VNET_Q_REQ_RECV);
			return ret;
		}
		d = vnet_endpoint_peek(&self->cli, VNET_Q_REP_RECV);
		if (d) {
			ret = (d->flags & VNET_DESC_RETURNED) ? d->status :
								-EPROTO;
			vnet_endpoint_consume(&self->cli, VNET_Q_REP_RECV);
			return ret;
		}
		vnet_endpoint_wait(&self->srv, 10);
	}
	return -ETIMEDOUT;
}

/* Until the locked memory is back to @kb (the work drops stale pins). */
static bool locked_back_to(long long kb)
{
	double deadline = vnet_now() + 5;

	while (locked_kb() != kb)
		if (vnet_now() > deadline)
			return false;
		else
			usleep(10000);
	return true;
}

/*
 * munmap, and new memory mapped at the same address: a message from the
 * address comes back "source gone" rather than carry the old pages, whose
 * pin and locked memory go; pinned again, the address sends its new bytes.
 */
TEST_F(pin, new_memory_at_the_address_is_sent)
{
	NEED_PINS();
	fill(self->src, LEN, 1);
	ASSERT_EQ(0, pin(&self->cli, self->src, LEN));
	EXPECT_LE(self->locked + LEN / 1024, locked_kb());
	ASSERT_EQ(0, send_from(self, self->src, LEN));
	EXPECT_TRUE(same(self->seg, LEN, 1));

	ASSERT_EQ(0, munmap(self->src, LEN));
	ASSERT_EQ(self->src, map_anon(self->src, LEN));
	fill(self->src, LEN, 2);
	memset(self->seg, 0, LEN);
	EXPECT_EQ(VNET_RET_SOURCE_GONE, send_from(self, self->src, LEN));
	EXPECT_TRUE(locked_back_to(self->locked));

	ASSERT_EQ(0, pin(&self->cli, self->src, LEN));
	ASSERT_EQ(0, send_from(self, self->src, LEN));
	EXPECT_TRUE(same(self->seg, LEN, 2));
}

/*
 * mremap moves the pages away: the old address sends nothing until it is
 * pinned again, with the memory mapped there now; the new one, pinned,
 * sends the bytes that moved.
 */
TEST_F(pin, moved_by_mremap)
{
	uint8_t *to = map_anon(NULL, LEN);

	NEED_PINS();

	ASSERT_NE(MAP_FAILED, to);
	fill(self->src, LEN, 3);
	ASSERT_EQ(0, pin(&self->cli, self->src, LEN));
	ASSERT_EQ(0, send_from(self, self->src, LEN));
	EXPECT_TRUE(same(self->seg, LEN, 3));

	ASSERT_EQ(to, mremap(self->src, LEN, LEN,
			     MREMAP_MAYMOVE | MREMAP_FIXED, to));
	ASSERT_EQ(self->src, map_anon(self->src, LEN));
	fill(self->src, LEN, 4);
	EXPECT_EQ(VNET_RET_SOURCE_GONE, send_from(self, self->src, LEN));

	ASSERT_EQ(0, pin(&self->cli, self->src, LEN));
	ASSERT_EQ(0, send_from(self, self->src, LEN));
	EXPECT_TRUE(same(self->seg, LEN, 4));
	ASSERT_EQ(0, pin(&self->cli, to, LEN));
	ASSERT_EQ(0, send_from(self, to, LEN));
	EXPECT_TRUE(same(self->seg, LEN, 3));
	munmap(to, LEN);
}

/* A pin holds the pages, not a copy: what is written later is sent. */
TEST_F(pin, written_after_pinning_is_sent_as_written)
{
	NEED_PINS();
	ASSERT_EQ(0, pin(&self->cli, self->src, LEN));
	fill(self->src, LEN, 5);
	ASSERT_EQ(0, send_from(self, self->src, LEN));
	EXPECT_TRUE(same(self->seg, LEN, 5));
	fill(self->src + 1000, LEN - 2000, 6);
	ASSERT_EQ(0, pin(&self->cli, self->src + 1000, LEN - 2000));
	ASSERT_EQ(0, send_from(self, self->src + 1000, LEN - 2000));
	EXPECT_TRUE(same(self->seg, LEN - 2000, 6));
}

/*
 * VNET_NR_PINS ranges stay pinned; asking again for one, or for part of
 * one, pins nothing more; one more drops the least recently asked for,
 * whose messages then come back; len 0 drops them all.
 */
TEST_F(pin, the_least_recently_asked_for_goes)
{
	const size_t piece = 64 << 10;
	uint8_t *area = map_anon(NULL, (VNET_NR_PINS + 1) * piece);
	long long full;
	int i;

	NEED_PINS();

	ASSERT_NE(MAP_FAILED, area);
	fill(area, (VNET_NR_PINS + 1) * piece, 7);
	for (i = 0; i < VNET_NR_PINS; i++)
		ASSERT_EQ(0, pin(&self->cli, area + i * piece, piece));
	full = locked_kb();
	EXPECT_EQ(self->locked + VNET_NR_PINS * piece / 1024, full);
	ASSERT_EQ(0, pin(&self->cli, area + piece + 100, 1000));
	ASSERT_EQ(0, pin(&self->cli, area, piece));
	EXPECT_EQ(full, locked_kb());

	/* Pieces 1 and 0 were just asked for again: piece 2 goes. */
	ASSERT_EQ(0, pin(&self->cli, area + VNET_NR_PINS * piece, piece));
	EXPECT_EQ(full, locked_kb());
	EXPECT_EQ(VNET_RET_SOURCE_GONE,
		  send_from(self, area + 2 * piece, piece));
	ASSERT_EQ(0, send_from(self, area + piece, piece));
	ASSERT_EQ(0, send_from(self, area + VNET_NR_PINS * piece, piece));
	ASSERT_EQ(0, send_from(self, area, piece));
	EXPECT_TRUE(same(self->seg, piece, 7));

	ASSERT_EQ(0, pin(&self->cli, NULL, 0));
	EXPECT_EQ(self->locked, locked_kb());
	EXPECT_EQ(VNET_RET_SOURCE_GONE, send_from(self, area, piece));
	munmap(area, (VNET_NR_PINS + 1) * piece);
}

/*
 * Past the locked-memory limit the least recently asked for pins make
 * room; a range that would not fit even without them fails, and leaves
 * them pinned.
 */
TEST_F(pin, the_locked_memory_limit_makes_room)
{
	const size_t piece = 64 << 10;
	uint8_t *area = map_anon(NULL, 4 * piece);

	NEED_PINS();
	ASSERT_NE(MAP_FAILED, area);
	fill(area, 4 * piece, 13);
	ASSERT_EQ(0, vnet_memlock_limit(self->locked * 1024 + 3 * piece));
	ASSERT_EQ(0, pin(&self->cli, area, piece));
	ASSERT_EQ(0, pin(&self->cli, area + piece, piece));
	ASSERT_EQ(0, pin(&self->cli, area + 2 * piece, piece));
	ASSERT_EQ(0, pin(&self->cli, area + 3 * piece, piece));
	EXPECT_EQ(self->locked + 3 * piece / 1024, locked_kb());
	EXPECT_EQ(VNET_RET_SOURCE_GONE, send_from(self, area, piece));
	ASSERT_EQ(0, send_from(self, area + 3 * piece, piece));
	EXPECT_EQ(0, memcmp(self->seg, area + 3 * piece, piece));

	EXPECT_EQ(-ENOMEM, pin(&self->cli, self->src, LEN));
	EXPECT_EQ(self->locked + 3 * piece / 1024, locked_kb());
	ASSERT_EQ(0, send_from(self, area + piece, piece));
	EXPECT_EQ(0, memcmp(self->seg, area + piece, piece));
	munmap(area, 4 * piece);
}

/*
 * What cannot be pinned: nothing, too much, a range that wraps, memory
 * not mapped or not readable, and the endpoint's own frame.  Read-only
 * memory can be, and is sent.
 */
TEST_F(pin, refused_ranges)
{
	uint8_t *ro;

	NEED_PINS();

	struct vnet_pin flagged = { .addr = (uintptr_t)self->src, .len = 4096,
				    .flags = 1 };

	EXPECT_EQ(-1, ioctl(self->cli.fd, VNET_IOC_PIN, &flagged));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-EINVAL, pin(&self->cli, self->src, 0));
	EXPECT_EQ(-EINVAL, pin(&self->cli, self->src, VNET_MAX_SEG_LEN + 1));
	EXPECT_EQ(-EINVAL, pin(&self->cli, (void *)~0UL, 2));
	ASSERT_EQ(0, munmap(self->src + LEN - 4096, 4096));
	EXPECT_EQ(-EFAULT, pin(&self->cli, self->src, LEN));
	ASSERT_EQ(0, mprotect(self->src, 4096, PROT_NONE));
	EXPECT_EQ(-EFAULT, pin(&self->cli, self->src, 4096));
	EXPECT_EQ(-EFAULT, pin(&self->cli, self->cli.frame, 4096));
	EXPECT_EQ(self->locked, locked_kb());

	fill(self->src + 4096, 8192, 8);
	ASSERT_EQ(0, mprotect(self->src + 4096, 8192, PROT_READ));
	ro = self->src + 4096;
	ASSERT_EQ(0, pin(&self->cli, ro, 8192));
	ASSERT_EQ(0, send_from(self, ro, 8192));
	EXPECT_TRUE(same(self->seg, 8192, 8));
}

/*
 * The pins are one process's at a time.  Another process that shares the
 * endpoint (here a child, its copy of the memory at the same address
 * written since) is refused while the parent has pins, and pins once the
 * parent has dropped them; a message from the address then carries the
 * child's bytes, and the parent is refused.  Once the child is gone, its
 * pins go with it.
 */
TEST_F(pin, one_process_at_a_time)
{
	int status, up[2], down[2];
	char c;
	pid_t pid;

	NEED_PINS();
	ASSERT_EQ(0, pipe(up));
	ASSERT_EQ(0, pipe(down));
	fill(self->src, LEN, 11);
	ASSERT_EQ(0, pin(&self->cli, self->src, LEN));
	ASSERT_EQ(0, send_from(self, self->src, LEN));
	EXPECT_TRUE(same(self->seg, LEN, 11));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		fill(self->src, LEN, 12);
		c = pin(&self->cli, self->src, LEN) == -EBUSY &&
		    pin(&self->cli, NULL, 0) == -EBUSY ? 'b' : 'n';
		if (write(up[1], &c, 1) != 1 || read(down[0], &c, 1) != 1)
			_exit(1);
		c = pin(&self->cli, self->src, LEN) ? 'n' : 'y';
		if (write(up[1], &c, 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	ASSERT_EQ(1, read(up[0], &c, 1));
	EXPECT_EQ('b', c);
	EXPECT_EQ(self->locked + LEN / 1024, locked_kb());
	ASSERT_EQ(0, pin(&self->cli, NULL, 0));
	EXPECT_EQ(self->locked, locked_kb());
	ASSERT_EQ(1, write(down[1], &c, 1));
	ASSERT_EQ(1, read(up[0], &c, 1));
	EXPECT_EQ('y', c);
	ASSERT_EQ(0, send_from(self, self->src, LEN));
	EXPECT_TRUE(same(self->seg, LEN, 12));
	EXPECT_EQ(-EBUSY, pin(&self->cli, self->src, LEN));

	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, pin(&self->cli, self->src, LEN));
	ASSERT_EQ(0, send_from(self, self->src, LEN));
	EXPECT_TRUE(same(self->seg, LEN, 11));
	close(up[0]);
	close(up[1]);
	close(down[0]);
	close(down[1]);
}

/*
 * The sender is killed with a train from its pin halfway out: the
 * receiver takes nothing of it, and lets go of what it had.
 */
TEST_F_TIMEOUT(pin, killed_with_a_train_out, 120)
{
	long long base, dropped;
	int status, pipefd[2];
	double deadline;
	uint8_t back;
	pid_t pid;

	NEED_PINS();

	if (!variant->wire)
		SKIP(return, "a train goes on the wire only");
	ASSERT_EQ(0, pipe(pipefd));
	base = vnet_nic_stat(NIC_B, "fragments_received");
	dropped = vnet_nic_stat(NIC_B, "trains_dropped");
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct vnet_desc q = vnet_short(1, 0, 0, 0);
		struct vnet_endpoint ep;
		uint8_t *buf = map_anon(NULL, VNET_XFER_MAX);

		const struct vnet_desc *d;

		if (buf == MAP_FAILED || vnet_endpoint_open(&ep, NIC_A) ||
		    vnet_endpoint_map(&ep, 0, self->srv.name, TEST_TAG))
			_exit(1);
		fill(buf, VNET_XFER_MAX, 9);
		if (pin(&ep, buf, VNET_XFER_MAX))
			_exit(1);
		q.flags = VNET_DESC_XFER | VNET_DESC_FROM_PIN;
		q.len = VNET_XFER_MAX;
		q.src_offset = (uintptr_t)buf;
		if (vnet_endpoint_post(&ep, VNET_Q_REQ_SEND, &q, NULL, 0))
			_exit(1);
		/* Should it come back before it is killed: the reason. */
		while (!(d = vnet_endpoint_peek(&ep, VNET_Q_REP_RECV)))
			vnet_endpoint_wait(&ep, 100);
		back = d->status;
		if (write(pipefd[1], &back, 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(pipefd[1]);
	deadline = vnet_now() + 30;
	while (vnet_nic_stat(NIC_B, "fragments_received") < base + 100 &&
	       vnet_now() < deadline) {
		struct timespec ts = { 0, 0 };
		fd_set fds;

		FD_ZERO(&fds);
		FD_SET(pipefd[0], &fds);
		if (pselect(pipefd[0] + 1, &fds, NULL, NULL, &ts, NULL) > 0) {
			EXPECT_EQ(0, read(pipefd[0], &back, 1) == 1 ? back : -1)
				TH_LOG("it came back before it was killed");
			break;
		}
		usleep(1000);
	}
	close(pipefd[0]);
	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFSIGNALED(status));
	EXPECT_LE(base + 100, vnet_nic_stat(NIC_B, "fragments_received"));

	deadline = vnet_now() + 10;
	while (vnet_nic_stat(NIC_B, "trains_dropped") == dropped &&
	       vnet_now() < deadline)
		usleep(10000);
	EXPECT_EQ(dropped + 1, vnet_nic_stat(NIC_B, "trains_dropped"));
	EXPECT_EQ(NULL, vnet_endpoint_peek(&self->srv, VNET_Q_REQ_RECV));

	/* The wire goes on: the next one arrives whole. */
	fill(self->src, LEN, 10);
	ASSERT_EQ(0, pin(&self->cli, self->src, LEN));
	ASSERT_EQ(0, send_from(self, self->src, LEN));
	EXPECT_TRUE(same(self->seg, LEN, 10));
}

TEST_HARNESS_MAIN
