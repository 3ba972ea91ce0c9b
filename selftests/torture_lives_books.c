// SPDX-License-Identifier: GPL-2.0
/*
 * The lives' books (torture_lives.c): what a detach may do to a message,
 * checked as each comes back, and once the run has drained.
 */
#include "torture.h"

/* The server's answer to request @seq of @pair, so its client can check. */
uint32_t t_lives_reply_len(int pair, uint32_t seq)
{
	return (seq * 2654435761u + pair) % 2049u;
}

/*
 * Only a payload that needs a train at the smallest MTU the admin sets
 * can come back "too large": its sender's NIC starts no train on a link
 * that cannot carry one.
 */
static bool l_may_be_too_large(uint32_t len)
{
	return len > T_MTU_MIN - T_HDR_ROOM;
}

/*
 * Why a message of @len bytes may come back: @stale, its destination may
 * be gone.
 */
bool t_lives_reason_ok(unsigned int status, uint32_t len, bool stale)
{
	if (status == VNET_RET_BUSY || status == VNET_RET_UNREACHABLE)
		return true;
	if (status == VNET_RET_TOO_LARGE)
		return l_may_be_too_large(len);
	if (!stale)
		return false;
	/* A reply to a gone requester meets another key: "bad tag". */
	return status == VNET_RET_BAD_TAG || status == VNET_RET_NO_ENDPOINT;
}

/*
 * Taken, yet back for a reason other than "unreachable": design.rst,
 * "Receiving" -- a message is delivered at most once in each life of its
 * receiver, and one taken before a detach, its ACK lost, is sent again
 * with a new start to the next life, which refuses it ("bad tag", "no
 * endpoint"), or, a train, is "too large" to start again on a link the
 * admin has set to MTU 1000 since.  Only if the life that took it is
 * over, and its NIC was detached since the life the message was sent to
 * began (@stale, as it came back; t_lives_reason_ok() held it to that).
 */
static bool l_next_life(uint8_t reason, bool stale, uint32_t len,
			uint32_t life, uint32_t last)
{
	if (life == last || !stale)
		return false;
	if (reason == VNET_RET_TOO_LARGE)
		return l_may_be_too_large(len);
	return reason == VNET_RET_BAD_TAG || reason == VNET_RET_NO_ENDPOINT;
}

/*
 * Did server life @life of @lp last long after @at -- past twice a
 * message's lifetime and five seconds, time enough for anything it sent
 * then to come back?  Its last life lasted to the end.
 */
static bool l_lasted_past(struct t_ctl *ctl, struct t_lpair *lp,
			  uint32_t life, uint32_t last, double at)
{
	uint32_t n = lp->s.began[life] / 2;
	double end;

	if (life == last)
		return true;
	if (n >= T_LIVES_DETACHES)
		return false;
	end = ctl->lv.detach_at[lp->s.nic - T_NIC_C][n];
	return end && end > at + 2 * ctl->lifetime_s + 5;
}

/* An end's last life, if it was open to the end: 0 if not. */
static uint32_t l_last(const struct t_lend *end)
{
	return __atomic_load_n(&end->alive, __ATOMIC_ACQUIRE) ?
	       __atomic_load_n(&end->life, __ATOMIC_ACQUIRE) : 0;
}

/*
 * Drained: both clients done, both servers seen idle since, and every
 * request between the lives still open, or taken by a lasting server once
 * its client's life was over, answered.
 */
bool t_lives_settled(struct t_ctl *ctl)
{
	uint32_t k, s, sent;

	for (k = 0; k < T_LIVES_PAIRS; k++) {
		struct t_lpair *lp = &ctl->lv.pair[k];
		uint32_t client = l_last(&lp->c), server = l_last(&lp->s);

		if (!__atomic_load_n(&lp->done, __ATOMIC_ACQUIRE) ||
		    !__atomic_load_n(&lp->srv_idle, __ATOMIC_ACQUIRE))
			return false;
		sent = __atomic_load_n(&lp->sent, __ATOMIC_ACQUIRE);
		for (s = 0; s < sent; s++) {
			struct t_lentry *x = &ctl->lv.e[k][s];

			if (__atomic_load_n(&x->delivered, __ATOMIC_ACQUIRE) &&
			    x->life_t == server &&
			    (x->life_c == client || x->orphan) &&
			    !__atomic_load_n(&x->replied, __ATOMIC_ACQUIRE) &&
			    !__atomic_load_n(&x->rep_ret, __ATOMIC_ACQUIRE))
				return false;
		}
	}
	return true;
}

/*
 * The books, once drained: at most once everywhere, exactly once where
 * both lives lasted.
 */
int t_lives_check(struct t_ctl *ctl)
{
	uint64_t sent = 0, taken = 0, replied = 0, back = 0, strict = 0;
	uint64_t open = 0, open_done = 0, refused = 0, bad = 0, again = 0;
	uint64_t reasons[VNET_RET_NR + 1] = {}, abandoned = 0, orphans = 0;
	uint64_t lasting_orphans = 0;
	char line[400];
	uint32_t k, s;
	int len;

	for (k = 0; k < T_LIVES_PAIRS; k++) {
		struct t_lpair *lp = &ctl->lv.pair[k];
		uint32_t client = l_last(&lp->c), server = l_last(&lp->s);

		refused += lp->refused_open;
		abandoned += lp->abandoned;

		for (s = 0; s < lp->sent; s++) {
			struct t_lentry *x = &ctl->lv.e[k][s];
			bool lasted = x->life_c == client &&
				      x->life_s == server;
			bool done = x->replied || x->req_ret || x->rep_ret;
			/* Taken, then back for more than silence. */
			bool req_again = x->req_ret && x->delivered &&
				x->req_reason != VNET_RET_UNREACHABLE;
			bool rep_again = x->replied && x->rep_ret &&
				x->rep_reason != VNET_RET_UNREACHABLE;
			bool ok = true, owed;

			sent++;
			taken += x->delivered;
			replied += x->replied;
			back += x->req_ret;
			if (x->req_ret)
				reasons[x->req_reason < VNET_RET_NR ?
					x->req_reason : VNET_RET_NR]++;
			strict += lasted;
			open += !lasted;
			open_done += !lasted && done;
			if (x->delivered > 1 || x->replied > 1 ||
			    x->req_ret > 1 || x->rep_ret > 1)
				ok = false;
			if ((x->replied || x->rep_ret) && !x->delivered)
				ok = false;
			if (req_again &&
			    !l_next_life(x->req_reason, x->req_stale, x->len,
					 x->life_t, server))
				ok = false;
			if (rep_again &&
			    !l_next_life(x->rep_reason, x->rep_stale,
					 t_lives_reply_len(k, s), x->life_c,
					 client))
				ok = false;
			again += req_again + rep_again;
			/*
			 * Between lasting lives, taken, it was answered: its
			 * reply arrived or came back.  So was one a lasting
			 * server took once its client's life was over: that
			 * reply can only come back.  (One it took before may
			 * have reached that life and died unread with it.)
			 */
			if (lasted && !done)
				ok = false;
			/* Set only as it was taken. */
			owed = x->orphan &&
			       l_lasted_past(ctl, lp, x->life_t, server,
					     x->taken_at);
			if (x->delivered && !x->replied && !x->rep_ret &&
			    (lasted || owed))
				ok = false;
			orphans += x->orphan;
			lasting_orphans += owed;
			if (ok)
				continue;
			if (bad++ < 8)
				t_say("# lives: pair %u request %u (client life "
				      "%u, server life %u, last %u/%u): taken %u "
				      "by %u, replied %u, returned %u (%s), reply "
				      "returned %u (%s)", k, s, x->life_c,
				      x->life_s, client, server, x->delivered,
				      x->life_t, x->replied, x->req_ret,
				      t_reason(x->req_reason), x->rep_ret,
				      t_reason(x->rep_reason));
		}
		t_say("# lives: pair %u (vnet%u to vnet%u): %u client lives, %u "
		      "server lives; %u requests", k, lp->c.nic, lp->s.nic,
		      lp->c.life, lp->s.life, lp->sent);
	}
	t_say("# lives: requests: %llu sent, %llu taken, %llu replied, %llu "
	      "returned; %llu between lives that lasted, all resolved once; "
	      "%llu of lives that ended (%llu resolved all the same), %llu "
	      "of them delivered and then returned by a later life; %llu "
	      "taken after their client's life ended, %llu of them by a "
	      "server life that lasted long after, each reply back; %llu "
	      "creates refused, the NIC or quota full",
	      (unsigned long long)sent, (unsigned long long)taken,
	      (unsigned long long)replied, (unsigned long long)back,
	      (unsigned long long)strict, (unsigned long long)open,
	      (unsigned long long)open_done, (unsigned long long)again,
	      (unsigned long long)orphans,
	      (unsigned long long)lasting_orphans,
	      (unsigned long long)refused);
	len = snprintf(line, sizeof(line), "# lives: %llu left open when a "
		       "life ended; returned", (unsigned long long)abandoned);
	for (k = 0; k <= VNET_RET_NR && len < (int)sizeof(line); k++)
		if (reasons[k])
			len += snprintf(line + len, sizeof(line) - len,
					" %s %llu", t_reason(k),
					(unsigned long long)reasons[k]);
	t_say("%s", line);
	return bad ? -1 : 0;
}
