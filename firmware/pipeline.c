// SPDX-License-Identifier: GPL-2.0
/*
 * How large a train's fragments are: the fragment size that delivers a
 * message soonest through the pipeline between us and a peer, from that
 * pipeline's costs as its answers show them, with the Fixed-sized Theorem
 * of Wang, Chien et al.'s "Optimal communication pipelines".
 *
 * A fragment goes through stages -- our copy and checksum, the link, the
 * receiver's checksum and copy -- each with a cost per fragment and a
 * cost per byte.  Small fragments let the stages work at once on
 * different ones; every fragment pays every stage's cost per fragment
 * again.  The theorem needs two figures: the bottleneck's cost per
 * fragment, and what the other stages cost per byte.  We measure both the
 * paper's indirect way (its section 5.3.2), from what the sender sees
 * anyway, per peer, all the time:
 *
 *  - alone: the round trip of a packet with nothing of ours ahead of it
 *    (a whole message, or a train's first fragment, which goes alone),
 *    taken by its receiver, by its payload size.  A line through those is
 *    every stage's cost per packet and per byte, plus the answer's way
 *    back.
 *  - gap: once a train's window is open, the time each fragment after
 *    the first takes, by fragment size, over the train: the receiver had
 *    them waiting, so that is the bottleneck's cost per fragment and per
 *    byte.
 *
 * What the bottleneck does not account for of alone's cost per byte is
 * the other stages'.  Where they share one processor -- two NICs of one
 * kernel with one CPU -- the bottleneck is all of them and the difference
 * is nothing.  Where they overlap, it is not.
 *
 * A train here is not the paper's plain pipeline: its first fragment goes
 * alone, and the rest only once its answer is back; and no more than
 * train_window fragments are out at once.  So a train of k fragments of x
 * bytes takes, until its last answer,
 *
 *	T(k) = 2 * alone(x) + (k - 2) * max(gap(x), alone(x) / window)
 *
 * and the choice is the k, near the theorem's and at the fewest the link
 * allows, with the least T.  Until both lines are first known -- samples
 * enough, of sizes far enough apart -- fragments are as large as the link
 * carries; a line with samples enough of one size only gets one train in
 * four in fragments of half that, so that it sees a second size.  Once
 * known, the lines as they were are kept for when fresh samples, all of
 * the size chosen, no longer tell a line: then one train in four goes in
 * fragments of twice or half that size.  Where half of what the link
 * carries is less than a fragment's least (an MTU below about 2450
 * bytes, 1500 among them) there is nothing to choose.
 *
 * Times are in the firmware's units times 1000 (nanoseconds in the
 * module), the sums keep the latest 64 to 128 samples' worth, and all of
 * it is integer, with 64-bit divisions through fw_div64_*() for 32-bit
 * hosts.
 */
#include "fw_transport.h"

/*
 * A sample weighs this much in the sums; a gap sample, that much for each
 * fragment after the first two of its train, up to VNET_FW_GAP_MAX_N.
 */
#define VNET_FW_FIT_ONE		16
/*
 * Past twice this many samples' weight, every sum is halved: what is
 * learned follows what the pipeline does now.  Halving, not a decay at
 * every sample: the sums stay in proportion, where each rounded on its
 * own would make samples of one size look like two.
 */
#define VNET_FW_FIT_KEEP	(64 * VNET_FW_FIT_ONE)
#define VNET_FW_GAP_MAX_N	16
/* A line is known after this many samples' weight... */
#define VNET_FW_FIT_MIN_W	(8 * VNET_FW_FIT_ONE)
/* ...of sizes this far apart (standard deviation, bytes). */
#define VNET_FW_FIT_MIN_SD	128
/*
 * No sample is longer than this (milli-units, 134 ms in the module): a
 * stall, not a cost.  With sizes below 2^14 and a weight below 2^13 in
 * all, it keeps xt below 2^54.
 */
#define VNET_FW_FIT_MAX_T	(128ULL << 20)

void vnet_fw_pipe_reset(struct vnet_fw_pipe *pipe)
{
	fw_memset(pipe, 0, sizeof(*pipe));
}

/* Add @w samples whose mean size is @x bytes and mean time @t. */
static void vnet_fw_fit_add(struct vnet_fw_fit *f, u64 w, u64 x, u64 t)
{
	u64 one = w * VNET_FW_FIT_ONE;

	if (t > VNET_FW_FIT_MAX_T)
		return;
	if (f->w >= 2 * VNET_FW_FIT_KEEP) {
		f->w >>= 1;
		f->x >>= 1;
		f->xx >>= 1;
		f->t >>= 1;
		f->xt >>= 1;
	}
	f->w += one;
	f->x += one * x;
	f->xx += one * x * x;
	f->t += one * t;
	f->xt += one * x * t;
}

/* The mean of @f's sizes in bytes, Q8. */
static u64 vnet_fw_fit_mean8(const struct vnet_fw_fit *f)
{
	return fw_div64_u64(f->x << 8, f->w);
}

/* The variance of @f's sizes, bytes squared; 0 with no weight. */
static u64 vnet_fw_fit_var(const struct vnet_fw_fit *f)
{
	u64 mx8, var16;

	if (!f->w)
		return 0;
	mx8 = vnet_fw_fit_mean8(f);
	var16 = fw_div64_u64(f->xx << 16, f->w);
	return var16 > mx8 * mx8 ? (var16 - mx8 * mx8) >> 16 : 0;
}

/* Samples enough, but all of about one size: no line through them. */
static bool vnet_fw_fit_one_size(const struct vnet_fw_fit *f)
{
	return f->w >= VNET_FW_FIT_MIN_W &&
	       vnet_fw_fit_var(f) < VNET_FW_FIT_MIN_SD * VNET_FW_FIT_MIN_SD;
}

/*
 * The least-squares line through @f's samples: the time at 0 bytes in
 * @base (milli-units), and per byte in @per_byte (milli-units, Q16).
 * False while it is not known.
 */
static bool vnet_fw_fit_line(const struct vnet_fw_fit *f, s64 *base,
			     s64 *per_byte)
{
	u64 mx8, mt, var = vnet_fw_fit_var(f);
	s64 cov;

	if (f->w < VNET_FW_FIT_MIN_W ||
	    var < VNET_FW_FIT_MIN_SD * VNET_FW_FIT_MIN_SD)
		return false;
	mx8 = vnet_fw_fit_mean8(f);
	mt = fw_div64_u64(f->t, f->w);
	cov = (s64)fw_div64_u64(f->xt, f->w) - (s64)(mx8 * mt >> 8);
	*per_byte = fw_div64_s64(cov * 65536, (s64)var);
	*base = (s64)mt - (*per_byte * (s64)mx8 >> 24);
	/*
	 * No stage takes less than nothing, per packet or per byte.  Samples
	 * bunched at a few sizes, as the traffic makes them, can tilt the
	 * line past that; then the best line that does not: through 0, or
	 * flat at the mean.
	 */
	if (*per_byte < 0) {
		*per_byte = 0;
		*base = mt;
	} else if (*base < 0) {
		*base = 0;
		*per_byte = f->xx >> 16 ?
			    (s64)fw_div64_u64(f->xt, f->xx >> 16) : 0;
	}
	return true;
}

/*
 * A packet of @len payload bytes to @p, alone on the way, was taken
 * @rtt after it went.
 */
void vnet_fw_pipe_alone(struct vnet_fw_peer *p, u32 len, u64 rtt)
{
	if (rtt <= VNET_FW_FIT_MAX_T / 1000)
		vnet_fw_fit_add(&p->pipe.alone, 1, len, rtt * 1000);
}

static u64 vnet_fw_line_at(s64 base, s64 per_byte, u32 x)
{
	s64 t = base + (per_byte * (s64)x >> 16);

	return t > 0 ? t : 0;
}

/*
 * The answer to fragment @seq of the train on @ch came (before its window
 * moves past it), @last the train's last.  The first fragment's answer
 * opens the window; from then to the last answer the rest take, by the
 * model, alone(x) for the first of them and gap(x) for each after it: so
 * that time less alone(x), over their number less one, is a gap sample.
 * Over the whole train, not answer by answer, and from the total, not
 * from the answers' spacing: a host takes answers in batches, and one
 * that runs both ends on one CPU answers a whole window at once.  Only a
 * train of three fragments or more that had the way to @p to itself:
 * exactly its own fragments went to @p meanwhile, each once, and its
 * sender never stopped it to move.
 */
void vnet_fw_pipe_gap(struct vnet_fw_nic *nic, struct vnet_fw_peer *p,
		      struct vnet_fw_send_chan *ch, u32 seq, bool last)
{
	bool moving = ch->src && fw_read_once(ch->src->moving);
	u64 alone, per_frag;
	s64 a0, a1, t;
	u32 n, x;

	/* Sent once, and the train's own: nothing else to @p meanwhile. */
	if (seq == ch->train) {
		ch->gap_open = p->unacked == 1 && !moving &&
			       ch->stamp == ch->first_stamp;
		ch->gap_from = nic->now;
		ch->gap_off = ch->win_end[seq % VNET_FW_TRAIN_WINDOW_MAX];
		ch->gap_sent = p->pipe.sent;
		return;
	}
	if (moving)
		ch->gap_open = false;
	if (!last)
		return;
	n = seq - ch->train;		/* fragments after the first */
	if (!ch->gap_open || p->unacked != 1 || n < 2 ||
	    p->pipe.sent - ch->gap_sent != n || nic->now < ch->gap_from ||
	    nic->now - ch->gap_from > VNET_FW_FIT_MAX_T / 1000 * n)
		return;
	if (!vnet_fw_fit_line(&p->pipe.alone, &a0, &a1)) {
		if (!p->pipe.known)
			return;
		a0 = p->pipe.last.a0;
		a1 = p->pipe.last.a1;
	}
	x = (ch->msg.len - ch->gap_off) / n;
	alone = vnet_fw_line_at(a0, a1, x);
	t = (s64)(nic->now - ch->gap_from) * 1000 - (s64)alone;
	if (t <= 0)
		return;
	n--;
	per_frag = fw_div64_u64((u64)t, n);
	/*
	 * No stage takes longer than all of them: a fragment that did was
	 * held up by something else -- a stalled host, a guest not run.
	 */
	if (per_frag <= 2 * alone)
		vnet_fw_fit_add(&p->pipe.gap,
				n < VNET_FW_GAP_MAX_N ? n : VNET_FW_GAP_MAX_N,
				x, per_frag);
}

/* alone(x) and the time between fragments of x bytes, for T(k). */
struct vnet_fw_pipe_model {
	struct vnet_fw_pipe_lines l;
	u32 window;
};

/* T(k) for @len bytes in @k fragments, k >= 2. */
static u64 vnet_fw_train_time(const struct vnet_fw_pipe_model *m, u32 len,
			      u32 k)
{
	u32 x = (len + k - 1) / k;
	u64 alone = vnet_fw_line_at(m->l.a0, m->l.a1, x);
	u64 gap = vnet_fw_line_at(m->l.g0, m->l.g1, x);
	u64 paced = fw_div64_u64(alone, m->window);

	return 2 * alone + (u64)(k - 2) * (gap > paced ? gap : paced);
}

/*
 * The lines to @p as they are now, or false; either way, @known says
 * whether they were known once, and then @m holds them as last known.
 */
static bool vnet_fw_pipe_model(const struct vnet_fw_nic *nic,
			       const struct vnet_fw_peer *p,
			       struct vnet_fw_pipe_model *m, bool *known)
{
	bool now = vnet_fw_fit_line(&p->pipe.alone, &m->l.a0, &m->l.a1) &&
		   vnet_fw_fit_line(&p->pipe.gap, &m->l.g0, &m->l.g1);

	if (!now)
		m->l = p->pipe.last;
	m->window = nic->train_window ? nic->train_window : 1;
	*known = now || p->pipe.known;
	return now;
}

/* floor(sqrt(@v)) */
static u64 vnet_fw_isqrt(u64 v)
{
	u64 r = 0, bit = 1ULL << 62;

	while (bit > v)
		bit >>= 2;
	while (bit) {
		if (v >= r + bit) {
			v -= r + bit;
			r = (r >> 1) + bit;
		} else {
			r >>= 1;
		}
		bit >>= 2;
	}
	return r;
}

/*
 * The number of fragments with the least T(k) where the window does not
 * pace the train, by the Fixed-sized Theorem's argument: with x = len / k,
 *
 *	T(k) = 2 * (a0 + a1 * len / k) + (k - 2) * (g0 + g1 * len / k)
 *
 * whose derivative in k is zero at k = sqrt(2 * (a1 - g1) * len / g0).
 * The theorem's own sqrt(len * G_others / g_b) but for the 2: a train's
 * first fragment crosses every stage, and back, before the rest go.
 */
static u64 vnet_fw_theorem_k(const struct vnet_fw_pipe_model *m, u32 len)
{
	s64 others = m->l.a1 - m->l.g1;

	if (others <= 0 || m->l.g0 <= 0)
		return 1;
	return vnet_fw_isqrt(fw_div64_u64(2 * (u64)len * (u64)others >> 16,
					  (u64)m->l.g0));
}

u32 vnet_fw_pipe_predict(const struct vnet_fw_nic *nic,
			 const struct vnet_fw_peer *p, u32 len, u32 x, u64 *t)
{
	struct vnet_fw_pipe_model m;
	bool known;
	u32 k;

	vnet_fw_pipe_model(nic, p, &m, &known);
	if (!x || !known)
		return 0;
	k = (len + x - 1) / x;
	*t = k < 2 ? vnet_fw_line_at(m.l.a0, m.l.a1, len) :
		     vnet_fw_train_time(&m, len, k);
	return k;
}

static u32 vnet_fw_apart(u32 a, u32 b)
{
	return a > b ? a - b : b - a;
}

/*
 * The size a probe takes: half or twice @x, near enough to cost little,
 * else 1168 bytes or what the link carries -- the first of them that
 * fragments may have and that is far enough from @x to tell a line.
 */
static u32 vnet_fw_probe_size(u32 x, u32 room)
{
	u32 cand[4] = { x / 2, 2 * x, VNET_WIRE_FRAG_MIN, room };
	u32 i;

	for (i = 0; i < 4; i++)
		if (cand[i] >= VNET_WIRE_FRAG_MIN && cand[i] <= room &&
		    vnet_fw_apart(cand[i], x) >= 4 * VNET_FW_FIT_MIN_SD)
			return cand[i];
	return room;
}

/*
 * The largest fragment of a train of @len bytes to @p, whose first
 * fragment carries @room bytes at most: 0 for as large as the link
 * carries, unless the model says more, smaller ones deliver it sooner.
 * Every fragment but the last is VNET_WIRE_FRAG_MIN at least.
 */
u32 vnet_fw_pipe_frag(struct vnet_fw_nic *nic, struct vnet_fw_peer *p,
		      u32 len, u32 room)
{
	struct vnet_fw_pipe_model m;
	u32 kmin, kmax, best_k, k, i, x;
	u64 best, t, kt;
	bool fresh, known;

	/* A bad frame's worth is no fragment, whatever the host says. */
	if (nic->frag_size)
		return nic->frag_size > VNET_WIRE_FRAG_MIN ? nic->frag_size :
							     VNET_WIRE_FRAG_MIN;
	if (room / 2 < VNET_WIRE_FRAG_MIN)
		return 0;
	fresh = vnet_fw_pipe_model(nic, p, &m, &known);
	if (fresh) {
		p->pipe.last = m.l;
		p->pipe.known = true;
	} else if (!known) {
		/* A line short of a second size: a train in four in halves. */
		if (!vnet_fw_fit_one_size(&p->pipe.alone) &&
		    !vnet_fw_fit_one_size(&p->pipe.gap))
			return 0;
		return ++p->pipe.probes & 3 ? 0 : room / 2;
	}
	kmin = (len + room - 1) / room;
	if (kmin < 2)
		kmin = 2;
	kmax = len / VNET_WIRE_FRAG_MIN;
	best_k = kmin;
	best = vnet_fw_train_time(&m, len, kmin);
	/* T(k) falls, then rises: around the theorem's k, and next to kmin. */
	kt = vnet_fw_theorem_k(&m, len);
	for (i = 0; i < 5; i++) {
		if (i && kt + i < 2 + kmin)
			continue;
		k = i ? kt + i - 2 : kmin + 1;
		if (k <= kmin || k > kmax)
			continue;
		t = vnet_fw_train_time(&m, len, k);
		if (t < best) {
			best = t;
			best_k = k;
		}
	}
	/* Fragments alike, as T(k) has them. */
	x = (len + best_k - 1) / best_k;
	p->pipe.frags = best_k;
	/*
	 * Known once, but the fresh samples, all of the size chosen, no
	 * longer tell a line: a train in four at another size.
	 */
	if (fresh || ++p->pipe.probes & 3)
		return x;
	return vnet_fw_probe_size(x, room);
}

/*
 * The transmission of a DATA or FRAG packet to @p on @ch: whether it goes
 * alone, and, for its answer and for gap samples, what else went since.
 */
void vnet_fw_pipe_sent(struct vnet_fw_peer *p, struct vnet_fw_send_chan *ch)
{
	ch->alone_sent = ++p->pipe.sent;
	ch->alone_tx = p->unacked == 1;
}

/*
 * The answer to transmission @stamp of the message on @ch, taken by its
 * receiver @rtt after it went: a packet of @len bytes alone on the way if
 * it was its message's only transmission and nothing else of ours went
 * to @p from before it to its answer.  A retransmission's answer may be
 * to a duplicate the receiver did not copy.
 */
void vnet_fw_pipe_answered(struct vnet_fw_peer *p,
			   const struct vnet_fw_send_chan *ch, u32 stamp,
			   u32 len, u64 rtt)
{
	if (ch->alone_tx && p->unacked == 1 && stamp == ch->first_stamp &&
	    p->pipe.sent == ch->alone_sent)
		vnet_fw_pipe_alone(p, len, rtt);
}

bool vnet_fw_pipe_show(const struct vnet_fw_peer *p,
		       struct vnet_fw_pipe_info *in)
{
	fw_memset(in, 0, sizeof(*in));
	in->alone_known = vnet_fw_fit_line(&p->pipe.alone, &in->alone_base,
					   &in->alone_per_byte);
	in->gap_known = vnet_fw_fit_line(&p->pipe.gap, &in->gap_base,
					 &in->gap_per_byte);
	in->alone_samples = p->pipe.alone.w / VNET_FW_FIT_ONE;
	in->gap_samples = p->pipe.gap.w / VNET_FW_FIT_ONE;
	if (in->alone_known && in->gap_known)
		return true;
	/* The lines the firmware goes by: as last known. */
	if (p->pipe.known) {
		in->stored = true;
		in->alone_base = p->pipe.last.a0;
		in->alone_per_byte = p->pipe.last.a1;
		in->gap_base = p->pipe.last.g0;
		in->gap_per_byte = p->pipe.last.g1;
	}
	return false;
}
