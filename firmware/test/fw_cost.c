// SPDX-License-Identifier: GPL-2.0
/*
 * What the firmware costs per message, in instructions: two simulated NICs
 * on the simulated wire, one client keeping a request out to one server,
 * which answers each.  Run under callgrind (make -C firmware/test cost),
 * which counts only inside the firmware's entry points, vnet_fw_poll() and
 * vnet_fw_receive(), and not inside the simulator's callbacks (the wire
 * and the host) they call: instructions are repeatable where VM timings
 * are not, so a change to the firmware's hot path shows up as a number.
 * The firmware polls on every step of the simulation, messages or not:
 * "fw_cost idle STEPS" takes as many steps with nothing to send, and the
 * difference between the two runs is what the messages cost.
 *
 *   fw_cost [ROUND_TRIPS [PAYLOAD_BYTES]]
 *   fw_cost idle STEPS
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wire_sim.h"

#define TAG	0x5eedULL

static u8 payload[VNET_MEDIUM_MAX];

int main(int argc, char **argv)
{
	bool idle = argc > 1 && !strcmp(argv[1], "idle");
	unsigned long want = argc > 1 + idle ? strtoul(argv[1 + idle], NULL, 0) :
					       20000;
	unsigned long len = argc > 2 && !idle ? strtoul(argv[2], NULL, 0) : 0;
	unsigned long done = 0, out = 0, steps = 0;
	struct sim_net net;
	struct sim_nic *a, *b;

	if (!want || len > VNET_MEDIUM_MAX) {
		fprintf(stderr, "usage: fw_cost [ROUND_TRIPS [0..%u]]\n",
			VNET_MEDIUM_MAX);
		return 2;
	}
	memset(payload, 0xa5, sizeof(payload));
	sim_net_init(&net, 2, 2, 7);
	/* As veth hands packets over: the common case, and the figures'. */
	net.whole = true;
	a = net.nic[0];
	b = net.nic[1];
	b->ep[1].fw.tag = TAG;
	sim_map(a, 0, 0, 1, 1, TAG);

	for (; idle && steps < want; steps++)
		sim_net_step(&net, 20);
	while (!idle && done < want) {
		const struct vnet_desc *d;

		while ((d = sim_peek(b, 1, VNET_Q_REQ_RECV))) {
			struct vnet_desc r = { .handler = 2, .token = d->token };

			if (sim_post(b, 1, VNET_Q_REP_SEND, &r, NULL))
				break;
			sim_consume(b, 1, VNET_Q_REQ_RECV);
		}
		while ((d = sim_peek(a, 0, VNET_Q_REP_RECV))) {
			if (d->flags & VNET_DESC_RETURNED) {
				fprintf(stderr, "fw_cost: a request came back (reason %u)\n",
					d->status);
				return 1;
			}
			done++;
			out--;
			sim_consume(a, 0, VNET_Q_REP_RECV);
		}
		if (!out) {
			struct vnet_desc q = sim_request(done);

			if (len) {
				q.flags = VNET_DESC_MEDIUM;
				q.len = len;
			}
			if (!sim_post(a, 0, VNET_Q_REQ_SEND, &q,
				      len ? payload : NULL))
				out++;
		}
		sim_net_step(&net, 20);
		steps++;
	}
	printf("%lu round trips, %lu-byte requests, %lu steps, %llu packets\n",
	       done, len, steps, (unsigned long long)net.sent);
	sim_net_fini(&net);
	return 0;
}
