// SPDX-License-Identifier: GPL-2.0
/*
 * How the mapper scales with the cluster, on the simulated segment: for
 * 16, 64, 256 and 1024 nodes booted over one heartbeat, the virtual time
 * until sim_converged() (in ms and in heartbeats), the datagrams and bytes
 * the whole segment carried to get there, and then the time for one more
 * node to join and for one to be withdrawn after it dies.  Without loss
 * and with 1%.  Deterministic: the same figures on every run.
 *
 *   mapd_bench [SEED]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "sim.h"
#include "wire.h"

#define STEP_MS		10
#define LIMIT_MS	60000

static const uint32_t sizes[] = { 16, 64, 256, 1024 };

static double wall(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int64_t until_converged(struct sim *s)
{
	char why[256];
	int64_t t0 = (int64_t)sim_now_ms(s);
	int64_t t = sim_run_until_converged(s, sim_now_ms(s) + LIMIT_MS,
					    STEP_MS, why, sizeof(why));

	if (t < 0) {
		fprintf(stderr, "not converged: %s\n", why);
		exit(1);
	}
	return t - t0;
}

static void run(uint32_t n, uint32_t loss_ppm, uint64_t seed)
{
	struct sim_opts o = { .n = n + 1, .booted = n, .seed = seed,
			      .loss_ppm = loss_ppm,
			      .start_spread_ms = MAPD_HEARTBEAT_MS };
	uint64_t t0, hello, table, dgrams, bytes;
	int64_t start, join, dead = -1;
	double w = wall();
	struct sim *s = sim_new(&o);
	uint32_t victim, id;

	start = until_converged(s);
	dgrams = s->datagrams;
	bytes = s->bytes;
	hello = s->by_type[MAPD_MSG_HELLO];
	table = s->by_type[MAPD_MSG_TABLE];

	sim_boot(s, n);
	join = until_converged(s);

	sim_pick(s, 1, &victim);
	id = sim_id(s, victim);
	sim_kill(s, victim);
	t0 = sim_now_ms(s);
	while (sim_now_ms(s) < t0 + LIMIT_MS) {
		sim_run_for(s, STEP_MS);
		if (!sim_anyone_routes(s, id)) {
			dead = (int64_t)(sim_now_ms(s) - t0);
			break;
		}
	}
	printf("%5u %5.1f%% %8lld %6.1f %9llu %7.1f %8llu %6llu %10llu %7lld %7lld %6.1f\n",
	       n, loss_ppm / 1e4, (long long)start,
	       (double)start / MAPD_HEARTBEAT_MS, (unsigned long long)dgrams,
	       (double)dgrams / n, (unsigned long long)hello,
	       (unsigned long long)table, (unsigned long long)bytes,
	       (long long)join, (long long)dead, wall() - w);
	fflush(stdout);
	sim_free(s);
}

int main(int argc, char **argv)
{
	uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 1;
	uint32_t loss, i;

	printf("vnet-mapd convergence, simulated: heartbeat %u ms, dead %u ms, nodes booted over one heartbeat, seed %llu\n",
	       MAPD_HEARTBEAT_MS, MAPD_DEAD_MS, (unsigned long long)seed);
	printf("cold start: virtual ms until one leader, one table, every route in place; datagrams the segment carried until then\n");
	printf("join: ms for one more node to be routed everywhere; death: ms from a kill to its route withdrawn everywhere\n\n");
	printf("%5s %6s %8s %6s %9s %7s %8s %6s %10s %7s %7s %6s\n", "nodes",
	       "loss", "start_ms", "beats", "datagrams", "/node", "hello",
	       "table", "bytes", "join", "death", "wall_s");
	for (loss = 0; loss <= 10000; loss += 10000)
		for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
			run(sizes[i], loss, seed);
	return 0;
}
