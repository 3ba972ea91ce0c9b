// SPDX-License-Identifier: GPL-2.0
/*
 * A schedule of what happens to a cluster: the fuzzer's bytes say what
 * befalls the two NICs of fuzz_net.h while their users talk -- the wire
 * starts to lose, duplicate, reorder or corrupt packets, a NIC's link goes
 * down and comes back, a route is deleted and added again, endpoints of
 * either NIC are moved off the card, clients fall silent and talk again --
 * and the checks of fuzz_net.c hold throughout: every packet and queue
 * entry is what the firmware may produce, and once it is over everything
 * settles within the firmware's timeouts, every channel, buffer and queue
 * given back, and the exact clients' books balance: each request served
 * at most once, replied to at most once, and replied to -- or, for a
 * client across a wire with faults, returned unreachable or busy, or its
 * reply returned to the server -- in the end.
 *
 * An input is a sequence of two-byte records, op and arg:
 *
 *   RUN     (arg & 63) + 1 steps of the wire, each a quantum long with
 *           arg & 64
 *   FAULTS  loss, duplication, reordering and corruption: two bits each
 *           of arg, 0, 1, 5 or 20% of packets
 *   LINK    the link of NIC arg & 1 goes down (arg & 2) or comes up
 *   MOVE    endpoint (arg >> 1) % FZ_EPS of NIC arg & 1 leaves the card
 *           (and comes back when it is wanted)
 *   ROUTE   NIC arg & 1's route to the other is deleted (arg & 2), or
 *           added again
 *   MUTE    the user of endpoint (arg >> 1) % FZ_EPS of NIC arg & 1
 *           falls silent -- posts nothing, answers nothing -- or talks
 *           again; all talk again when the input ends
 *   CLOSE   the user of endpoint (arg >> 1) % FZ_EPS of NIC arg & 1
 *           closes it, for the rest of the input
 *   REBOOT  NIC arg & 1 reboots: its firmware and users start afresh
 *           (FZ_MAX_REBOOTS in an input at most)
 *
 * Every client is held to exactly one reply per request here (fuzz_net.h):
 * both NICs are honest.  A closed or rebooted server settles what it
 * took and did not answer; what it did not take is still owed, by its
 * next life or back "no endpoint".  A request on the wire when its
 * server's NIC rebooted may be taken and answered once more by each
 * life that began while it was.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "fuzz_net.h"

/*
 * Steps an input's RUN records may take in all.  Moves wait for flushes,
 * and the cluster settles at the end, both within the firmware's
 * timeouts: an input takes a second at worst under ASan.
 */
#define CLUSTER_MAX_STEPS	4096

static const u32 cluster_rate[4] = { 0, 10, 50, 200 };	/* per thousand */

static void cluster_route(struct fz_net *f, u32 nic, bool del)
{
	struct sim_nic *s = f->net.nic[nic];
	u32 other = 1 - nic;
	u8 mac[6];

	if (del) {
		if (vnet_fw_route_del(&s->fw, other, f->net.now))
			f->faults = true;
		return;
	}
	/* A slot kept for the deleted route may not be free yet: so be it. */
	sim_mac(other, mac);
	vnet_fw_route_add(&s->fw, other, mac, f->net.now);
}

int LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
	static struct fz_net f;
	u32 budget = CLUSTER_MAX_STEPS;
	size_t pos;

	fz_init(&f, true);
	f.all_exact = true;
	f.bulk_replies = true;
	for (pos = 0; pos + 2 <= size && budget; pos += 2) {
		u8 op = data[pos] % C_NR, arg = data[pos + 1];
		u32 nic = arg & 1, ep = (arg >> 1) % FZ_EPS, steps;

		switch (op) {
		case C_RUN:
			steps = (arg & 63) + 1;
			if (steps > budget)
				steps = budget;
			budget -= steps;
			/*
			 * Steps a quantum long: the NICs run once a timeout,
			 * as on a stalled host, and each answer comes after
			 * the retransmission it answers.  After a reboot or a
			 * close that is a fault: a RESYNC or RESTART that
			 * answers a superseded transmission is no word from
			 * the peer, and a message may come back unreachable
			 * (design.rst, Receiving).
			 */
			f.faults |= !!(arg & 64) && (f.reboots || f.closes);
			fz_run(&f, steps, arg & 64 ?
				   f.net.nic[0]->fw.quantum : FZ_DT);
			break;
		case C_FAULTS:
			/* Only a faulty wire excuses a return: 0% is none. */
			f.faults |= arg != 0;
			f.net.loss = cluster_rate[arg & 3];
			f.net.dup = cluster_rate[(arg >> 2) & 3];
			f.net.reorder = cluster_rate[(arg >> 4) & 3];
			f.net.corrupt = cluster_rate[(arg >> 6) & 3];
			break;
		case C_LINK:
			f.faults |= (arg & 2) && !f.net.down[nic];
			f.net.down[nic] = arg & 2;
			break;
		case C_MOVE:
			fz_move(&f, nic, ep);
			break;
		case C_ROUTE:
			cluster_route(&f, nic, arg & 2);
			break;
		case C_MUTE:
			f.mute[nic][ep] = !f.mute[nic][ep];
			break;
		case C_CLOSE:
			fz_close(&f, nic, ep);
			break;
		case C_REBOOT:
			if (f.reboots < FZ_MAX_REBOOTS)
				fz_reboot(&f, nic);
			break;
		}
	}
	fz_settle(&f);
	fz_fini(&f);
	return 0;
}
