/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The ABI torture (torture.c): what its parts share.  The test process
 * maps one struct t_ctl shared before it forks anyone, so every process of
 * the run counts into it and the test reads the verdict from it at the
 * end.  It holds names and counts, never a tag: the chaos processes map it
 * too, and they must not be able to reach the honest endpoints.
 */
#ifndef _VNET_TORTURE_H
#define _VNET_TORTURE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <unistd.h>

#include <linux/vnet.h>

/*
 * NICs: the loopback one, the lossy pair the ledger crosses, and a pair
 * the admin process detaches and attaches again, which chaos and the
 * lives (torture_lives.c) use.
 */
#define T_NIC_A		1
#define T_NIC_B		2
#define T_NIC_C		3
#define T_NIC_D		4
#define T_IF_A		"vtt0"
#define T_IF_B		"vtt1"
#define T_IF_C		"vtc0"
#define T_IF_D		"vtc1"
#define T_WIRE_FRAMES	4

#define T_MAX_PAIRS	16
#define T_WIRE_PAIRS	6	/* half each way across the lossy pair */
#define T_MAX_SEQ	(1 << 18)	/* requests one client may send in a run */
#define T_CREDITS	4
#define T_HONEST_PROCS	4
#define T_HONEST_THREADS 2
#define T_CHAOS		4	/* chaos processes alive at once */
#define T_CHAOS_UID	61100	/* + slot: each chaos process its own user */
#define T_REGIONS	16	/* of a segment, one message's each */
#define T_REGION	65536

enum t_phase { T_SETUP, T_RUN, T_STOP, T_QUIT };

enum t_op {
	T_OP_CREATE, T_OP_CREATE_BAD, T_OP_CLOSE, T_OP_SET_TAG, T_OP_MAP,
	T_OP_MAP_BAD, T_OP_UNMAP, T_OP_SET_SEG, T_OP_SET_SEG_BAD,
	T_OP_DROP_SEG, T_OP_SEND, T_OP_SEND_BAD, T_OP_RECV, T_OP_GARBAGE,
	T_OP_MUNMAP, T_OP_MREMAP, T_OP_MMAP, T_OP_MMAP_BAD, T_OP_IOCTL_BAD,
	T_OP_FORK, T_OP_RACE, T_OP_EXIT, T_OP_KILL, T_OP_DETACH,
	T_OP_ATTACH, T_OP_ROUTE, T_OP_ADMIN_BAD, T_OP_RMMOD, T_OP_PARAM,
	T_OP_PRIV, T_OP_LINK, T_OP_NR
};

/* Request kinds of the ledger, how its payload travels. */
enum t_kind { T_SHORT, T_MEDIUM, T_XFER, T_FROM_SEG, T_KINDS };

/* One request of the ledger; each byte has a single writer. */
struct t_entry {
	uint32_t csum;		/* the client's, before it posts */
	uint8_t kind;
	uint8_t delivered;	/* server: times it took the request */
	uint8_t replied;	/* client: replies it got */
	uint8_t req_ret;	/* client: times the request came back */
	uint8_t req_reason;
	uint8_t rep_ret;	/* server: times its reply came back */
	uint8_t rep_reason;
	uint8_t pad;
};

struct t_pair {
	uint32_t nic_c, nic_s;	/* where its client and server live */
	struct vnet_name client, server;
	uint32_t sent;		/* requests 0 .. sent - 1 were posted */
	uint32_t done;		/* client stopped, everything resolved */
	int srv_idle;		/* server found nothing, client done */
	uint64_t rejected;	/* EP_STAT of both ends when they closed */
	uint64_t st_received;	/* firmware's count, server side */
	uint64_t st_c_received;	/* and client side: its replies */
};

struct t_ledger {
	uint32_t npairs, nlocal;
	struct t_pair pair[T_MAX_PAIRS];
	uint64_t kind_taken[T_KINDS];	/* t_ledger_check() counts them */
	struct t_entry e[T_MAX_PAIRS][T_MAX_SEQ];
};

/*
 * The lives: a pair each way across the pair the admin detaches.  An
 * endpoint's life ends with its NIC; the next is a new endpoint, with a
 * new tag, that the other end maps again.
 */
#define T_LIVES_PAIRS	2
/*
 * The smallest MTU the admin sets on NICs 3 and 4 (torture_admin.c), and
 * more than a packet's headers take: a payload no larger than the one
 * less the other always goes as one packet, and never comes back "too
 * large".
 */
#define T_MTU_MIN	1000
#define T_HDR_ROOM	256
#define T_STR_(x)	#x
#define T_STR(x)	T_STR_(x)

#define T_LIVES_SEQ	(1 << 16)
#define T_LIVES_MAX	1024	/* lives of one end in a run */
#define T_LIVES_DETACHES	4096	/* detaches of one NIC timed */

struct t_lentry {
	uint32_t csum;
	uint32_t ep_c;		/* client: its NIC's t_epoch() as its life began */
	uint32_t ep_s;		/* and the server NIC's as that life began */
	uint16_t life_c;	/* client: its life that sent it */
	uint16_t life_s;	/* client: the server's it was sent to */
	uint16_t life_t;	/* server: its life that took it */
	uint16_t len;		/* client: its payload's */
	uint8_t kind;		/* T_SHORT or T_MEDIUM */
	uint8_t delivered, replied, req_ret, req_reason, rep_ret, rep_reason;
	/* Its destination's NIC detached since that life began, on return */
	uint8_t req_stale, rep_stale;
	/* server: the client life was over when it took the request */
	uint8_t orphan;
	double taken_at;	/* server: t_now() as it took it */
};

struct t_lend {
	uint32_t nic;
	uint32_t life;		/* the current, from 1; 0: none yet */
	int alive;		/* the current is open, its NIC there */
	struct vnet_name name[T_LIVES_MAX + 1];	/* by life */
	uint32_t began[T_LIVES_MAX + 1];	/* its NIC's t_epoch() then */
};

struct t_lpair {
	struct t_lend c, s;
	uint32_t sent;
	uint32_t done;		/* client: stopped, nothing of its life out */
	int srv_idle;		/* server: nothing to take, client done */
	uint64_t refused_open;	/* creates that met a full NIC or quota */
	uint64_t abandoned;	/* client: open when a life ended */
};

struct t_lives {
	/*
	 * Per NIC C and D, bumped by the admin before each detach: an end
	 * whose NIC's count moved since its life began may be gone.
	 */
	uint32_t epoch[2];
	/*
	 * t_now() as the admin began the detach that took epoch 2n to
	 * 2n + 1, by n, for the first T_LIVES_DETACHES; 0 if not known.
	 */
	double detach_at[2][T_LIVES_DETACHES];
	struct t_lpair pair[T_LIVES_PAIRS];
	struct t_lentry e[T_LIVES_PAIRS][T_LIVES_SEQ];
};

#define T_NOTES		8

/*
 * A chaos process's sign of life, bumped once a step.  A step takes
 * milliseconds; one none has finished for T_STALE_S seconds is hung, even
 * on the debug kernel.  The driver waits killably, so SIGKILL would end a
 * lost wakeup silently, and the hung-task detector never sees it: the
 * test looks before it kills.
 */
#define T_STALE_S	30
#define T_SPARE_S	1	/* quiet that long: not killed at random */

struct t_beat {
	uint64_t steps;
	uint64_t at_ms;		/* t_now_ms() of the last */
};

struct t_ctl {
	uint64_t seed;
	int phase;			/* enum t_phase */
	int chaos_stop;			/* chaos and admin: wind down */
	int honest_ready;		/* threads with their slots mapped */
	int clients_done;
	uid_t chaos_uid;		/* 0: chaos stays root */
	gid_t dev_gid;
	double lifetime_s;		/* a message's, on the lossy pair */
	uint64_t ops[T_OP_NR];		/* tried */
	uint64_t refused[T_OP_NR];	/* of them, refused as they should be */
	uint64_t chaos_posted, chaos_received;
	uint64_t chaos_returned[VNET_RET_NR + 1];
	uint64_t faults_caught[2];	/* SIGSEGV, SIGBUS, recovered */
	struct t_beat beat[T_CHAOS];	/* by slot */
	int violations;
	int notes;
	char note[T_NOTES][200];
	struct t_ledger lg;
	struct t_lives lv;
};

/* Every decision of the run comes from one of these, seeded per process. */
static inline uint64_t t_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static inline uint32_t t_below(uint64_t *s, uint32_t n)
{
	return n ? (uint32_t)(t_rand(s) % n) : 0;
}

static inline bool t_chance(uint64_t *s, uint32_t percent)
{
	return t_below(s, 100) < percent;
}

/* The seed of the @id-th process or thread of @role, from the run's. */
static inline uint64_t t_seed_of(uint64_t master, uint32_t role, uint32_t id)
{
	uint64_t s = master ^ ((uint64_t)role << 48) ^ ((uint64_t)id << 16);

	t_rand(&s);
	return t_rand(&s);
}

enum t_role {
	T_ROLE_MAIN, T_ROLE_HONEST, T_ROLE_CHAOS, T_ROLE_ADMIN, T_ROLE_LIVES
};

/* A line to stdout in one write(), so lines of processes never mix. */
static inline void __attribute__((format(printf, 1, 2)))
t_say(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n > (int)sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	buf[n++] = '\n';
	if (write(STDOUT_FILENO, buf, n) < 0)
		return;
}

void t_violation(struct t_ctl *ctl, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * @err (0 or an errno) must be one of the values after it, up to T_END;
 * else a violation, naming the seed of whoever saw it.
 */
#define T_END		(-1)
#define T_NOTHING	(-2)	/* in the list: matches no result */
void t_expect(struct t_ctl *ctl, uint64_t seed, int op, int err, ...);

static inline void t_count(struct t_ctl *ctl, int op, int err)
{
	__atomic_fetch_add(&ctl->ops[op], 1, __ATOMIC_RELAXED);
	if (err)
		__atomic_fetch_add(&ctl->refused[op], 1, __ATOMIC_RELAXED);
}

uint32_t t_sum(const void *buf, uint32_t len);
uint32_t t_fill(void *buf, uint32_t len, uint32_t seed);
const char *t_reason(unsigned int status);
extern const char *const t_op_name[T_OP_NR];
double t_now(void);

static inline uint64_t t_now_ms(void)
{
	return (uint64_t)(t_now() * 1000);
}

/* torture_ledger.c: the honest processes; torture_books.c: their books. */
int t_honest_setup(struct t_ctl *ctl, uint32_t frames0);
void t_honest_run(struct t_ctl *ctl) __attribute__((noreturn));
bool t_ledger_settled(struct t_ctl *ctl);
int t_ledger_check(struct t_ctl *ctl);

/* torture_lives.c: the pairs across detach and attach, and their books. */
void t_lives_setup(struct t_ctl *ctl);
void t_lives_run(struct t_ctl *ctl, uint64_t (*tags)[T_LIVES_MAX + 1],
		 int side) __attribute__((noreturn));
uint32_t t_lives_reply_len(int pair, uint32_t seq);
bool t_lives_reason_ok(unsigned int status, uint32_t len, bool stale);
bool t_lives_settled(struct t_ctl *ctl);
int t_lives_check(struct t_ctl *ctl);

static inline uint32_t t_epoch(struct t_ctl *ctl, uint32_t nic)
{
	return __atomic_load_n(&ctl->lv.epoch[nic - T_NIC_C], __ATOMIC_ACQUIRE);
}

/* torture_chaos.c */
void t_chaos_run(struct t_ctl *ctl, uint64_t seed, int slot)
	__attribute__((noreturn));

/* torture_admin.c */
void t_admin_run(struct t_ctl *ctl, uint64_t seed) __attribute__((noreturn));
int t_attach(int fd, const char *ifname, uint32_t id, uint32_t frames);
int t_route(int fd, unsigned long cmd, uint32_t nic, uint32_t peer,
	    const char *peer_if);

#endif /* _VNET_TORTURE_H */
