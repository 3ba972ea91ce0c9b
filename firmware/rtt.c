// SPDX-License-Identifier: GPL-2.0
/*
 * How long a transmission waits for its answer before it goes again: the
 * retransmission timeout of a peer, from the round trips its answers show.
 *
 * A quantum is enough on an idle LAN.  But a receiver that runs late -- a
 * loaded host, a guest its hypervisor does not schedule, a firmware round
 * long with work -- can answer later than that, and a sender that goes
 * again every quantum then has a newer transmission out whenever the
 * answer to an older one arrives.  Such an answer is no answer to the
 * message: an ACK is still good (the receiver has it), but a NACK of an
 * older transmission cannot resolve it, as the newer one may yet be taken.
 * So the message stays unresolved for the flush rule, and every eviction
 * of its sender waits for it, until it runs out of time -- while the
 * receiver answers every single transmission.
 *
 * So each peer keeps a smoothed round trip and its variation, measured on
 * answers to a message's latest transmission (the stamp says which one it
 * answers, so no sample is ambiguous, unlike TCP's without timestamps),
 * and waits srtt + 4 * rttvar, as TCP does (RFC 6298): never less than a
 * quantum, never more than vnet_fw_rto_max().  An answer to an older
 * transmission after the timer sent a newer one is a timeout that was too
 * short: the wait doubles then, at once, rather than after the next few
 * samples.
 *
 * None of it bounds anything: a message with no word from its receiver
 * -- an ACK, or a NACK of its latest transmission other than RESYNC -- is
 * still returned max_retries quanta after the last word or its first
 * transmission after a NACK (answer.c),
 * refused ones after busy_timeout (and the wait for the answer to a
 * transmission already out), and all of them within their lifetime,
 * checked at every timer scan whatever the retransmission timeout.  Each
 * transmission gives one sample at most, so a peer that answers late, or
 * twice, can only slow the retransmissions of the messages sent to it.
 */
#include "fw_transport.h"

/*
 * The longest wait: a quarter of the silence after which a message comes
 * back unreachable, so that a message gets four transmissions in it (with
 * max_retries of 4 or more), and one lost answer does not make it
 * unreachable.  A round trip longer than that is a receiver as good as
 * gone.
 */
static u64 vnet_fw_rto_max(const struct vnet_fw_nic *nic)
{
	u64 max = (u64)nic->max_retries * nic->quantum / 4;

	return max > nic->quantum ? max : nic->quantum;
}

u64 vnet_fw_rto(const struct vnet_fw_nic *nic, const struct vnet_fw_peer *p)
{
	return p->rto ? p->rto : nic->quantum;
}

static void vnet_fw_rto_set(struct vnet_fw_nic *nic, struct vnet_fw_peer *p,
			    u64 rto)
{
	if (rto < nic->quantum)
		rto = nic->quantum;
	if (rto > vnet_fw_rto_max(nic))
		rto = vnet_fw_rto_max(nic);
	p->rto = rto;
}

/* A new route, or a new NIC behind it: nothing known of its round trip. */
void vnet_fw_rtt_reset(struct vnet_fw_peer *p)
{
	p->srtt = 0;
	p->rttvar = 0;
	p->rto = 0;
}

/*
 * Which of a train's fragments on the wire @stamp is the latest
 * transmission of: an answer to any of them is a round trip, whichever
 * fragment it names (a receiver that has more than the fragment it was
 * sent again says how far it got).  Its slot, or -1.
 */
static int vnet_fw_rtt_frag(const struct vnet_fw_send_chan *ch, u32 stamp,
			    u32 *seq)
{
	u32 s;

	for (s = ch->una_seq; (s32)(ch->seq - s) >= 0; s++)
		if (ch->win_stamp[s % VNET_FW_TRAIN_WINDOW_MAX] == stamp) {
			*seq = s;
			return s % VNET_FW_TRAIN_WINDOW_MAX;
		}
	return -1;
}

/*
 * The peer answered transmission @stamp of the message on @ch, which is
 * one of its own (vnet_fw_answered() checked that); @took: with an ACK
 * saying it took it.
 */
void vnet_fw_rtt_answered(struct vnet_fw_nic *nic, struct vnet_fw_peer *p,
			  struct vnet_fw_send_chan *ch, u32 stamp, bool took)
{
	u32 seq = 0;
	int i = ch->is_train ? vnet_fw_rtt_frag(ch, stamp, &seq) : -1;
	u64 rtt, err, sent_at;

	if (ch->is_train ? i < 0 : stamp != ch->stamp) {
		/*
		 * Late: only a sign when the timer sent the newer one.  After
		 * a NACK or a RESUME it is a duplicate, or overtaken.
		 */
		if (ch->retries)
			vnet_fw_rto_set(nic, p, 2 * vnet_fw_rto(nic, p));
		return;
	}
	/* Once a transmission: a duplicate answer is no later round trip. */
	if (i >= 0) {
		sent_at = ch->win_sent[i];
		if ((ch->win_sampled >> i & 1) || nic->now < sent_at)
			return;
		ch->win_sampled |= 1u << i;
	} else {
		sent_at = ch->sent_at;
		if (ch->sampled || nic->now < sent_at)
			return;
		ch->sampled = true;
	}
	rtt = nic->now - sent_at;
	/*
	 * For the pipeline: a whole message, or a train's first fragment,
	 * that its receiver took.  A refusal costs the receiver no copy: its
	 * round trip says nothing of the bytes.
	 */
	if (took && i < 0)
		vnet_fw_pipe_answered(p, ch, stamp, ch->msg.len, rtt);
	else if (took && seq == ch->train)
		vnet_fw_pipe_answered(p, ch, stamp, ch->win_end[i], rtt);
	if (!p->srtt) {
		p->srtt = rtt ? rtt : 1;
		p->rttvar = rtt / 2;
	} else {
		err = rtt > p->srtt ? rtt - p->srtt : p->srtt - rtt;
		p->rttvar = p->rttvar - p->rttvar / 4 + err / 4;
		p->srtt = p->srtt - p->srtt / 8 + rtt / 8;
	}
	vnet_fw_rto_set(nic, p, p->srtt + 4 * p->rttvar);
}
