// SPDX-License-Identifier: GPL-2.0
/*
 * Which of a client's bulk bytes the fuzzers' books may check where they
 * land.  Bulk requests and replies of a client land in two halves of the
 * segments, taking turns; a half is dirty while an old request of it, or
 * its reply, may still land on a newer one's bytes (fz_dirty()), and
 * clean again once nothing of those can (fz_clean_halves()).
 */
#include "fuzz_net.h"

/* May request @n of @u, or its reply, be checked where it lands? */
bool fz_half_clean(const struct fz_user *u, u32 n)
{
	u32 h;

	if (n >= u->posted)
		return false;
	h = u->req[n].half;
	return !u->dirty[h] && n >= u->clean_from[h];
}

/* Every request of half @half of @u posted so far may be landed on. */
void fz_dirty_half(struct fz_user *u, u32 half)
{
	u->dirty[half] = true;
	u->dirty_upto[half] = u->posted;
	u->clean_after[half] = 0;
}

/*
 * Request @n of @u settled, its copies perhaps still on the wire: a later
 * request (or reply) of its half may be landed on.
 */
void fz_dirty(struct fz_user *u, u32 n)
{
	if (n < u->posted)
		fz_dirty_half(u, u->req[n].half);
}

/* Is @n one of @u's requests below dirty_upto in half @half? */
static bool fz_of_half(const struct fz_user *u, u32 half, u32 n)
{
	return n < u->dirty_upto[half] && u->req[n].half == half;
}

/*
 * Does the send queue of endpoint @j of NIC @i hold a reply to one of
 * (@nic, @ep)'s requests of half @half below dirty_upto, posted and not
 * yet taken by the firmware?
 */
static bool fz_half_reply_posted(const struct fz_net *f, u32 nic, u32 ep,
				 u32 half, u32 i, u32 j)
{
	const struct fz_user *u = &f->user[nic][ep];
	const struct sim_ep *e = &f->net.nic[i]->ep[j];
	u32 cons = fw_read_once(e->frame->cons[VNET_Q_REP_SEND].val);
	u32 prod = e->send_prod[VNET_Q_REP_SEND], k;

	if (prod - cons > VNET_QUEUE_DEPTH)
		return false;
	for (k = cons; k != prod; k++) {
		u32 n = e->frame->queue[VNET_Q_REP_SEND][k % VNET_QUEUE_DEPTH]
				.args[0];

		if (fz_of_half(u, half, n) && u->req[n].to.nic == i &&
		    u->req[n].to.ep == j)
			return true;
	}
	return false;
}

/*
 * Does a receive queue hold, untaken, a request of (@nic, @ep)'s half
 * @half below dirty_upto, or that user a reply to one: landed, with its
 * bytes checked only once its reader takes it?  Or a server's send queue
 * a reply to one, not yet sent?
 */
static bool fz_half_queued(const struct fz_net *f, u32 nic, u32 ep, u32 half)
{
	const struct fz_user *u = &f->user[nic][ep];
	u32 i, j, k, q;

	for (i = 0; i < FZ_NICS; i++) {
		for (j = 0; j < FZ_EPS; j++) {
			const struct sim_ep *e = &f->net.nic[i]->ep[j];

			if (e->exists &&
			    fz_half_reply_posted(f, nic, ep, half, i, j))
				return true;

			for (q = VNET_Q_REQ_RECV; e->exists && q <= VNET_Q_REP_RECV;
			     q++) {
				u32 cons = e->recv_cons[q - VNET_Q_REQ_RECV];
				u32 prod = fw_read_once(e->frame->prod[q].val);

				if (q == VNET_Q_REP_RECV && (i != nic || j != ep))
					continue;
				/* A hostile reader's indices say nothing. */
				if (prod - cons > VNET_QUEUE_DEPTH)
					continue;
				for (k = cons; k != prod; k++) {
					const struct vnet_desc *d =
						&e->frame->queue[q][k % VNET_QUEUE_DEPTH];

					if (q == VNET_Q_REQ_RECV &&
					    (d->peer.nic != nic || d->peer.ep != ep))
						continue;
					if (q == VNET_Q_REP_RECV &&
					    (d->flags & VNET_DESC_RETURNED))
						continue;
					if (fz_of_half(u, half, d->args[0]))
						return true;
				}
			}
		}
	}
	return false;
}

/*
 * Does a channel of either NIC hold a request of (@nic, @ep)'s half @half
 * below dirty_upto, or a reply to one: may it still send some of it?  Or
 * a receive queue, untaken?
 */
static bool fz_half_held(const struct fz_net *f, u32 nic, u32 ep, u32 half)
{
	const struct fz_user *u = &f->user[nic][ep];
	u32 i, p, c;

	for (i = 0; i < FZ_NICS; i++) {
		const struct vnet_fw_nic *fw = &f->net.nic[i]->fw;

		for (p = 0; p < fw->max_peers; p++) {
			for (c = 0; fw->peers[p].used && c < fw->nchannels;
			     c++) {
				const struct vnet_fw_send_chan *ch =
					&fw->peers[p].tx[c];
				u32 n = ch->msg.args[0];
				bool mine = ch->queue == VNET_Q_REQ_SEND ?
					    i == nic && ch->src_ep == ep :
					    ch->msg.peer.nic == nic &&
					    ch->msg.peer.ep == ep;

				if ((ch->state == VNET_CHAN_INFLIGHT ||
				     ch->state == VNET_CHAN_PAUSED) && mine &&
				    fz_of_half(u, half, n))
					return true;
			}
		}
	}
	return fz_half_queued(f, nic, ep, half);
}

void fz_clean_halves(struct fz_net *f)
{
	const struct sim_net *net = &f->net;
	u32 i, h, k;

	for (i = 0; i < FZ_NICS * FZ_EPS; i++) {
		struct fz_user *u = &f->user[i / FZ_EPS][i % FZ_EPS];

		for (h = 0; h < 2; h++) {
			if (!u->dirty[h])
				continue;
			if (fz_half_held(f, i / FZ_EPS, i % FZ_EPS, h)) {
				u->clean_after[h] = 0;
				continue;
			}
			if (!u->clean_after[h])
				u->clean_after[h] = net->sent + 1;
			for (k = 0; k < net->qlen; k++)
				if (net->q[k].serial < u->clean_after[h])
					break;
			u->dirty[h] = k < net->qlen;
			if (!u->dirty[h])
				u->clean_from[h] = u->posted;
		}
	}
}
