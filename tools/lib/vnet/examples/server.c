// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * A server with one thread per endpoint serving N clients, the way the NOW
 * paper's section 5.4 server works: every client has its own server
 * endpoint (its own virtual network), and every server endpoint has a
 * thread asleep in AM_WaitSema on a bundle of its own.  A thread whose
 * endpoint is not on the card sleeps in the fault while the rest run.
 *
 * Clients send medium requests with data to checksum; the server answers
 * with the checksum.  Each client runs in its own thread with its own
 * bundle and checks every answer.
 *
 *   server [CLIENTS] [REQUESTS]      (default 16 clients, 200 requests each)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vnet/am.h>

#define SUM		1	/* server: checksum a medium payload */
#define STOP		2	/* server: end the thread */
#define ANSWER		3	/* client: the checksum */

struct server {
	eb_t eb;
	ep_t ep;
	en_t name;
	tag_t tag;			/* its client's right to send to it */
	int stop;
	long served;
	pthread_t tid;
};

struct client {
	int id;
	eb_t eb;
	ep_t ep;
	en_t name;
	int requests;
	int answers;
	int wrong;
	uint32_t expect[AMVNET_MAX_CREDITS];
	pthread_t tid;
};

static struct server *servers;
static struct client *clients;

static uint32_t checksum(const uint8_t *p, size_t n)
{
	uint32_t s = 0;

	while (n--)
		s = s * 31 + *p++;
	return s;
}

/* Runs in the thread of the server endpoint the request came to. */
static void sum_handler(void *token, void *buf, size_t nbytes, int32_t seq)
{
	/* The payload is read in place: no copy on the receive side. */
	AM_Reply2(token, ANSWER, seq, (int32_t)checksum(buf, nbytes));
}

static void stop_handler(void *token, int32_t index)
{
	(void)token;
	servers[index].stop = 1;
}

static void answer_handler(void *token, int32_t seq, int32_t sum)
{
	ep_t ep;
	int i;

	AM_GetDestEndpoint(token, &ep);
	for (i = 0; clients[i].ep != ep; i++)
		;
	if ((uint32_t)sum != clients[i].expect[seq % AMVNET_MAX_CREDITS])
		clients[i].wrong++;
	clients[i].answers++;
}

static void *serve(void *arg)
{
	struct server *s = arg;
	struct amvnet_stats st;

	AM_SetEventMask(s->eb, AM_NOTEMPTY);
	/* Sleep until a request arrives, run its handler, sleep again. */
	while (!s->stop)
		if (AM_WaitSema(s->eb) != AM_OK)
			break;
	AMVNET_GetStats(s->ep, &st);
	s->served = (long)st.requests_received - 1;	/* not STOP */
	return NULL;
}

static void *client(void *arg)
{
	struct client *c = arg;
	uint8_t buf[1024];
	int i;

	for (i = 0; i < c->requests; i++) {
		size_t len = 64 + (size_t)(i * 37 + c->id) % (sizeof(buf) - 64);

		memset(buf, c->id + i, len);
		c->expect[i % AMVNET_MAX_CREDITS] = checksum(buf, len);
		/* Blocks, polling, while K requests are out. */
		AM_RequestI1(c->ep, 0, SUM, buf, (int)len, i);
	}
	/* The last answers: asleep until they come, like the server. */
	AM_SetEventMask(c->eb, AM_NOTEMPTY);
	while (c->answers < c->requests)
		AM_WaitSema(c->eb);
	return NULL;
}

#define CHECK(call)							\
	do {								\
		int _e = (call);					\
		if (_e != AM_OK) {					\
			fprintf(stderr, "server: %s: error %d\n",	\
				#call, _e);				\
			exit(1);					\
		}							\
	} while (0)

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 16;
	int requests = argc > 2 ? atoi(argv[2]) : 200;
	long total = 0;
	int i, wrong = 0;

	if (n < 1 || requests < 1)
		return 2;
	servers = calloc(n, sizeof(*servers));
	clients = calloc(n, sizeof(*clients));
	if (!servers || !clients)
		return 1;
	CHECK(AM_Init());
	for (i = 0; i < n; i++) {
		struct server *s = &servers[i];
		struct client *c = &clients[i];

		CHECK(AM_AllocateBundle(AM_SEQ, &s->eb));
		CHECK(AM_AllocateEndpoint(s->eb, &s->ep, &s->name));
		CHECK(AMVNET_RandomTag(&s->tag));
		CHECK(AM_SetTag(s->ep, s->tag));
		CHECK(AM_SetHandler(s->ep, SUM, sum_handler));
		CHECK(AM_SetHandler(s->ep, STOP, stop_handler));

		c->id = i;
		c->requests = requests;
		CHECK(AM_AllocateBundle(AM_SEQ, &c->eb));
		CHECK(AM_AllocateEndpoint(c->eb, &c->ep, &c->name));
		/* Client i's virtual network: itself and server endpoint i. */
		CHECK(AM_Map(c->ep, 0, s->name, s->tag));
		CHECK(AM_SetHandler(c->ep, ANSWER, answer_handler));
	}
	for (i = 0; i < n; i++)
		pthread_create(&servers[i].tid, NULL, serve, &servers[i]);
	for (i = 0; i < n; i++)
		pthread_create(&clients[i].tid, NULL, client, &clients[i]);
	for (i = 0; i < n; i++)
		pthread_join(clients[i].tid, NULL);
	/* A message to each server thread that ends it. */
	for (i = 0; i < n; i++)
		CHECK(AM_Request1(clients[i].ep, 0, STOP, i));
	for (i = 0; i < n; i++) {
		pthread_join(servers[i].tid, NULL);
		total += servers[i].served;
		wrong += clients[i].wrong + (clients[i].answers != requests);
	}
	printf("server: %d server threads answered %ld requests from %d "
	       "clients, %d wrong\n", n, total, n, wrong);
	CHECK(AM_Terminate());
	return wrong ? 1 : 0;
}
