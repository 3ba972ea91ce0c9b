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
 * is still returned max_retries quanta after the last word (transport.c),
 * refused ones after busy_timeout, and all of them within their lifetime,
 * checked at every timer scan whatever the retransmission timeout.  A
 * peer can only slow the retransmissions of the messages sent to it.
 */
#include "fw_transport.h"

/*
 * The longest wait: half the silence after which a message comes back
 * unreachable, so that it gets two transmissions at least.  A round trip
 * longer than that is a receiver as good as gone.
 */
static u64 vnet_fw_rto_max(const struct vnet_fw_nic *nic)
{
	u64 max = (u64)nic->max_retries * nic->quantum / 2;

	return max > nic->quantum ? max : nic->quantum;
}

static u64 vnet_fw_rtt_timeout(const struct vnet_fw_nic *nic,
			       const struct vnet_fw_rtt *r)
{
	return r->rto ? r->rto : nic->quantum;
}

u64 vnet_fw_rto(const struct vnet_fw_nic *nic, const struct vnet_fw_peer *p)
{
	return vnet_fw_rtt_timeout(nic, &p->rtt);
}

/*
 * How long a sender refused "not resident" takes to come back once the
 * endpoint is in: the RESUME's way there and the message's way back, a
 * round trip, as every peer's answers together measure it, with the same
 * margin and bounds as a retransmission timeout.  The cache keeps an
 * endpoint brought in for such a message at least that long before it
 * may go unserved: for a quantum only, on a host slow enough that round
 * trips took longer, most endpoints brought in were evicted again before
 * their message came back, and brought in once more for it.  A peer that
 * answers late raises it in proportion to the answers that are its, and
 * no further than the bound on a timeout.
 */
u64 vnet_fw_rtt_wait(const struct vnet_fw_nic *nic)
{
	u64 rto = fw_read_once(nic->rtt.rto);

	return rto ? rto : nic->quantum;
}

static void vnet_fw_rto_set(struct vnet_fw_nic *nic, struct vnet_fw_rtt *r,
			    u64 rto)
{
	if (rto < nic->quantum)
		rto = nic->quantum;
	if (rto > vnet_fw_rto_max(nic))
		rto = vnet_fw_rto_max(nic);
	/* The NIC's is read by the host, without the firmware's lock. */
	fw_write_once(r->rto, rto);
}

static void vnet_fw_rtt_sample(struct vnet_fw_nic *nic, struct vnet_fw_rtt *r,
			       u64 rtt)
{
	u64 err;

	if (!r->srtt) {
		r->srtt = rtt ? rtt : 1;
		r->rttvar = rtt / 2;
	} else {
		err = rtt > r->srtt ? rtt - r->srtt : r->srtt - rtt;
		r->rttvar = r->rttvar - r->rttvar / 4 + err / 4;
		r->srtt = r->srtt - r->srtt / 8 + rtt / 8;
	}
	vnet_fw_rto_set(nic, r, r->srtt + 4 * r->rttvar);
}

/* A new route, or a new NIC behind it: nothing known of its round trip. */
void vnet_fw_rtt_reset(struct vnet_fw_peer *p)
{
	fw_memset(&p->rtt, 0, sizeof(p->rtt));
}

/*
 * The peer answered transmission @stamp of the message on @ch, which is
 * one of its own (vnet_fw_answered() checked that).
 */
void vnet_fw_rtt_answered(struct vnet_fw_nic *nic, struct vnet_fw_peer *p,
			  const struct vnet_fw_send_chan *ch, u32 stamp)
{
	if (stamp != ch->stamp) {
		/*
		 * Late: only a sign when the timer sent the newer one.  After
		 * a NACK or a RESUME it is a duplicate, or overtaken.
		 */
		if (ch->retries)
			vnet_fw_rto_set(nic, &p->rtt, 2 * vnet_fw_rto(nic, p));
		return;
	}
	vnet_fw_rtt_sample(nic, &p->rtt, nic->now - ch->sent_at);
	vnet_fw_rtt_sample(nic, &nic->rtt, nic->now - ch->sent_at);
}
