// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Ping-pong over libvnet: a server thread that answers every ping with a
 * pong, and a client that sends one ping at a time and waits for its pong.
 * Prints the mean round-trip time.  The server sleeps in AM_WaitSema
 * between pings; the client spins in AM_Poll, or with -w sleeps too.
 *
 *   pingpong [-w] [ROUNDS]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <vnet/am.h>

#define PING		1
#define PONG		2
#define STOP		3
#define TAG		0x70696e67ULL	/* "ping" */

static volatile int pongs, stopped;

/* Server: answer with the same sequence number. */
static void ping(void *token, int32_t seq)
{
	AM_Reply1(token, PONG, seq);
}

static void stop(void *token)
{
	(void)token;
	stopped = 1;
}

/* Client: count the pongs. */
static void pong(void *token, int32_t seq)
{
	(void)token;
	if (seq != pongs) {
		fprintf(stderr, "pingpong: pong %d, expected %d\n", seq, pongs);
		exit(1);
	}
	pongs++;
}

static void *serve(void *arg)
{
	eb_t eb = arg;

	/* Sleep in AM_WaitSema between messages instead of spinning. */
	AM_SetEventMask(eb, AM_NOTEMPTY);
	while (!stopped)
		AM_WaitSema(eb);
	return NULL;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

#define CHECK(call)							\
	do {								\
		int _e = (call);					\
		if (_e != AM_OK) {					\
			fprintf(stderr, "pingpong: %s: error %d\n",	\
				#call, _e);				\
			return 1;					\
		}							\
	} while (0)

int main(int argc, char **argv)
{
	int wait = argc > 1 && !strcmp(argv[1], "-w");
	int rounds = argc > 1 + wait ? atoi(argv[1 + wait]) : 1000;
	eb_t ceb, seb;
	ep_t cep, sep;
	en_t cname, sname;
	pthread_t server;
	double t0, t1;
	int i;

	CHECK(AM_Init());
	CHECK(AM_AllocateBundle(AM_SEQ, &ceb));
	CHECK(AM_AllocateBundle(AM_SEQ, &seb));
	CHECK(AM_AllocateEndpoint(ceb, &cep, &cname));
	CHECK(AM_AllocateEndpoint(seb, &sep, &sname));
	CHECK(AM_SetTag(sep, TAG));
	CHECK(AM_SetTag(cep, TAG));
	CHECK(AM_SetHandler(sep, PING, ping));
	CHECK(AM_SetHandler(sep, STOP, stop));
	CHECK(AM_SetHandler(cep, PONG, pong));
	CHECK(AM_Map(cep, 0, sname, TAG));
	AM_SetEventMask(ceb, AM_NOTEMPTY);
	if (pthread_create(&server, NULL, serve, seb))
		return 1;

	t0 = now();
	for (i = 0; i < rounds; i++) {
		CHECK(AM_Request1(cep, 0, PING, i));
		while (pongs <= i)
			CHECK(wait ? AM_WaitSema(ceb) : AM_Poll(ceb));
	}
	t1 = now();
	CHECK(AM_Request0(cep, 0, STOP));
	pthread_join(server, NULL);
	printf("pingpong: %d round trips between %u:%u and %u:%u, %.1f us each\n",
	       rounds, cname.nic, cname.ep, sname.nic, sname.ep,
	       (t1 - t0) / rounds * 1e6);
	CHECK(AM_Terminate());
	return 0;
}
