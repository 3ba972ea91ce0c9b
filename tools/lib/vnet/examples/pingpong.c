// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Ping-pong over libvnet: a server that answers every ping with a pong, and
 * a client that sends one ping at a time and waits for its pong.  Prints the
 * mean round-trip time.  The server sleeps in AM_WaitSema between pings; the
 * client spins in AM_Poll, or with -w sleeps too.
 *
 *   pingpong [-w] [ROUNDS]                 both ends here, on NIC 0
 *   pingpong server NIC                    serve on NIC until a client stops it
 *   VNET_TAG=TAG pingpong client NIC PEER_NIC:PEER_EP [-w] [ROUNDS]
 *                                          ping a server, maybe on another node
 *
 * The server's tag is random and only the server's user sees it (on
 * stdout); that user hands it to the client, which is how the client gets
 * the right to send to the server.  The client takes it from its
 * environment, which only its own user can read, not from its command
 * line, which /proc shows to everyone.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <vnet/am.h>

#define PING		1
#define PONG		2
#define STOP		3

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

static int server_setup(uint32_t nic, eb_t *seb, en_t *sname, tag_t *tag)
{
	ep_t sep;

	CHECK(AM_AllocateBundle(AM_SEQ, seb));
	CHECK(AMVNET_AllocateEndpointOnNIC(*seb, nic, &sep, sname));
	CHECK(AMVNET_RandomTag(tag));
	CHECK(AM_SetTag(sep, *tag));
	CHECK(AM_SetHandler(sep, PING, ping));
	CHECK(AM_SetHandler(sep, STOP, stop));
	return 0;
}

/* pingpong server NIC: until a client sends STOP. */
static int server_main(uint32_t nic)
{
	en_t sname;
	tag_t tag;
	eb_t seb;

	CHECK(AM_Init());
	if (server_setup(nic, &seb, &sname, &tag))
		return 1;
	printf("pingpong: serving at %u:%u, tag 0x%016" PRIx64 "\n", sname.nic,
	       sname.ep, tag);
	fflush(stdout);
	serve(seb);
	CHECK(AM_Terminate());
	return 0;
}

static int client_run(uint32_t nic, en_t sname, tag_t tag, int wait,
		      int rounds)
{
	double t0, t1;
	en_t cname;
	eb_t ceb;
	ep_t cep;
	int i;

	CHECK(AM_AllocateBundle(AM_SEQ, &ceb));
	CHECK(AMVNET_AllocateEndpointOnNIC(ceb, nic, &cep, &cname));
	/* Replies need no tag: the client keeps AM_NONE and takes no requests. */
	CHECK(AM_SetHandler(cep, PONG, pong));
	CHECK(AM_Map(cep, 0, sname, tag));
	AM_SetEventMask(ceb, AM_NOTEMPTY);

	t0 = now();
	for (i = 0; i < rounds; i++) {
		CHECK(AM_Request1(cep, 0, PING, i));
		while (pongs <= i)
			CHECK(wait ? AM_WaitSema(ceb) : AM_Poll(ceb));
	}
	t1 = now();
	CHECK(AM_Request0(cep, 0, STOP));
	printf("pingpong: %d round trips between %u:%u and %u:%u, %.1f us each\n",
	       rounds, cname.nic, cname.ep, sname.nic, sname.ep,
	       (t1 - t0) / rounds * 1e6);
	return 0;
}

int main(int argc, char **argv)
{
	pthread_t server;
	en_t sname;
	tag_t tag;
	eb_t seb;
	int wait, rounds, err;
	char *end;

	if (argc == 3 && !strcmp(argv[1], "server"))
		return server_main(strtoul(argv[2], NULL, 0));
	if (argc >= 4 && !strcmp(argv[1], "client")) {
		const char *secret = getenv("VNET_TAG");

		if (sscanf(argv[3], "%u:%u", &sname.nic, &sname.ep) != 2) {
			fprintf(stderr, "pingpong: PEER is NIC:EP\n");
			return 2;
		}
		if (!secret || !*secret ||
		    (tag = strtoull(secret, &end, 0), *end)) {
			fprintf(stderr, "pingpong: VNET_TAG must hold the tag the server printed\n");
			return 2;
		}
		wait = argc > 4 && !strcmp(argv[4], "-w");
		rounds = argc > 4 + wait ? atoi(argv[4 + wait]) : 1000;
		CHECK(AM_Init());
		err = client_run(strtoul(argv[2], NULL, 0), sname, tag, wait,
				 rounds);
		CHECK(AM_Terminate());
		return err;
	}

	wait = argc > 1 && !strcmp(argv[1], "-w");
	rounds = argc > 1 + wait ? atoi(argv[1 + wait]) : 1000;
	CHECK(AM_Init());
	if (server_setup(0, &seb, &sname, &tag))
		return 1;
	if (pthread_create(&server, NULL, serve, seb))
		return 1;
	err = client_run(0, sname, tag, wait, rounds);
	pthread_join(server, NULL);
	CHECK(AM_Terminate());
	return err;
}
