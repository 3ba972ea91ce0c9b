// SPDX-License-Identifier: GPL-2.0
/*
 * A NIC's privileged endpoint, the mapper's: only with CAP_NET_ADMIN, one
 * per NIC, and then the file is the capability, for its own NIC only;
 * mapper datagrams between two NICs on a veth pair, unicast and broadcast,
 * and never into an ordinary endpoint; forged ones dropped; unnumbered
 * NICs and renumbering; a reader woken when its NIC goes.
 */
#define _GNU_SOURCE		/* setresuid() */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "vnet_util.h"

#define NIC_A		11
#define NIC_B		12
#define NIC_FREE	13
#define ETH_P_VNET	0x88b5
#define PKT_HDR		sizeof(struct vnet_mapper_pkt)

static int sh(const char *cmd)
{
	int st = system(cmd);

	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int attach(const char *ifname, uint32_t id)
{
	struct vnet_attach att = { .nic_id = id };
	int fd = open("/dev/vnet", O_RDWR), err;

	snprintf(att.ifname, sizeof(att.ifname), "%s", ifname);
	err = ioctl(fd, VNET_IOC_ATTACH, &att) ? -errno : 0;
	close(fd);
	return err;
}

static int priv_open(uint32_t nic, struct vnet_priv_create *out)
{
	struct vnet_priv_create req = { .nic_id = nic };
	int fd = open("/dev/vnet", O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (ioctl(fd, VNET_IOC_PRIV_CREATE, &req)) {
		int err = -errno;

		close(fd);
		return err;
	}
	if (out)
		*out = req;
	return fd;
}

static ssize_t dgram_send(int fd, const uint8_t *mac, const void *data,
			  size_t len)
{
	uint8_t buf[PKT_HDR + VNET_MAPPER_MTU + 64];
	struct vnet_mapper_pkt *h = (void *)buf;

	memcpy(h->mac, mac, 6);
	h->len = len;
	memcpy(buf + PKT_HDR, data, len);
	return write(fd, buf, PKT_HDR + len) < 0 ? -errno : 0;
}

/* One datagram within @ms, its payload in @data; its length or -errno. */
static ssize_t dgram_recv(int fd, uint8_t *mac, void *data, size_t room,
			  int ms)
{
	uint8_t buf[PKT_HDR + VNET_MAPPER_MTU];
	struct vnet_mapper_pkt *h = (void *)buf;
	struct pollfd p = { .fd = fd, .events = POLLIN };
	ssize_t n;

	if (poll(&p, 1, ms) != 1)
		return -ETIMEDOUT;
	n = read(fd, buf, sizeof(buf));
	if (n < 0)
		return -errno;
	if (n < (ssize_t)PKT_HDR || n != (ssize_t)(PKT_HDR + h->len))
		return -EPROTO;
	memcpy(mac, h->mac, 6);
	memcpy(data, buf + PKT_HDR, h->len < room ? h->len : room);
	return h->len;
}

static long long nic_stat(uint32_t nic, const char *attr)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/class/vnet/vnet%u/%s", nic, attr);
	return vnet_read_ll(path);
}

static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

static int route_add(uint32_t nic, uint32_t peer, const uint8_t *mac)
{
	struct vnet_route r = { .nic_id = nic, .peer_id = peer };
	int fd = open("/dev/vnet", O_RDWR), err;

	memcpy(r.mac, mac, 6);
	err = ioctl(fd, VNET_IOC_ROUTE_ADD, &r) ? -errno : 0;
	close(fd);
	return err;
}

static int route_count(uint32_t nic)
{
	struct vnet_route_list list = { .nic_id = nic };
	int fd = open("/dev/vnet", O_RDWR), n;

	n = ioctl(fd, VNET_IOC_ROUTE_LIST, &list) ? -errno : (int)list.count;
	close(fd);
	return n;
}

FIXTURE(priv) {
	uint8_t mac_a[6], mac_b[6];
	int a, b;
};

FIXTURE_SETUP(priv)
{
	ASSERT_EQ(0, sh("modprobe veth && "
			"ip link add vnp0 type veth peer name vnp1 && "
			"ip link set vnp0 up && ip link set vnp1 up"));
	ASSERT_EQ(0, attach("vnp0", NIC_A));
	ASSERT_EQ(0, attach("vnp1", NIC_B));
	ASSERT_EQ(0, vnet_if_mac("vnp0", self->mac_a));
	ASSERT_EQ(0, vnet_if_mac("vnp1", self->mac_b));
	self->a = priv_open(NIC_A, NULL);
	self->b = priv_open(NIC_B, NULL);
	ASSERT_LE(0, self->a);
	ASSERT_LE(0, self->b);
}

FIXTURE_TEARDOWN(priv)
{
	if (self->a >= 0)
		close(self->a);
	if (self->b >= 0)
		close(self->b);
	sh("ip link del vnp0 2>/dev/null");
}

TEST_F(priv, create_says_what_it_is)
{
	struct vnet_priv_create req;
	int fd;

	close(self->a);
	self->a = -1;
	fd = priv_open(NIC_A, &req);
	ASSERT_LE(0, fd);
	EXPECT_EQ(NIC_A, req.nic_id);
	EXPECT_EQ(VNET_MAPPER_MTU, req.mtu);
	EXPECT_EQ(0, memcmp(req.mac, self->mac_a, 6));
	self->a = fd;
}

/* All but nic_id must be zero on the way in; mtu is what the link carries. */
TEST_F(priv, create_checks_its_input_and_the_mtu)
{
	struct vnet_priv_create req = { .nic_id = NIC_B, .mtu = 1 };
	int fd = open("/dev/vnet", O_RDWR);

	ASSERT_LE(0, fd);
	close(self->b);
	self->b = -1;
	EXPECT_EQ(-1, ioctl(fd, VNET_IOC_PRIV_CREATE, &req));
	EXPECT_EQ(EINVAL, errno);
	req.mtu = 0;
	req.__pad[1] = 1;
	EXPECT_EQ(-1, ioctl(fd, VNET_IOC_PRIV_CREATE, &req));
	EXPECT_EQ(EINVAL, errno);
	req.__pad[1] = 0;
	req.mac[5] = 1;
	EXPECT_EQ(-1, ioctl(fd, VNET_IOC_PRIV_CREATE, &req));
	EXPECT_EQ(EINVAL, errno);
	close(fd);

	/* A link of MTU 1000 carries 1000 - 28 bytes of datagram. */
	ASSERT_EQ(0, sh("ip link set vnp1 mtu 1000"));
	fd = priv_open(NIC_B, &req);
	ASSERT_LE(0, fd);
	EXPECT_EQ(1000 - 28, req.mtu);
	close(fd);
}

TEST_F(priv, one_per_nic_and_not_on_loopback)
{
	struct vnet_ep_create ep = { .abi_version = VNET_ABI_VERSION };
	struct vnet_priv_create req = { .nic_id = NIC_A };
	int fd;

	EXPECT_EQ(-EBUSY, priv_open(NIC_A, NULL));
	EXPECT_EQ(-EOPNOTSUPP, priv_open(0, NULL));
	EXPECT_EQ(-ENODEV, priv_open(NIC_FREE, NULL));

	/* A file is one thing: an endpoint, or a privileged endpoint. */
	fd = open("/dev/vnet", O_RDWR);
	ASSERT_LE(0, fd);
	ep.nic_id = NIC_A;
	ASSERT_EQ(0, ioctl(fd, VNET_IOC_EP_CREATE, &ep));
	EXPECT_EQ(-1, ioctl(fd, VNET_IOC_PRIV_CREATE, &req));
	EXPECT_EQ(EBUSY, errno);
	EXPECT_EQ(-1, write(fd, &req, sizeof(req)));
	EXPECT_EQ(EINVAL, errno);
	close(fd);
	EXPECT_EQ(-1, ioctl(self->a, VNET_IOC_EP_CREATE, &ep));
	EXPECT_EQ(EBUSY, errno);
	EXPECT_EQ(-1, ioctl(self->a, VNET_IOC_KICK));
	EXPECT_EQ(EINVAL, errno);
}

/*
 * Making one needs CAP_NET_ADMIN; then the file is the capability, for
 * its own NIC only: a daemon may drop its privileges and keep its file.
 */
TEST_F(priv, cap_to_make_then_the_file_for_its_nic)
{
	struct vnet_route r = { .nic_id = NIC_A, .peer_id = 77 };
	struct vnet_route_list list = { .nic_id = NIC_A };
	int status;
	pid_t pid;

	memcpy(r.mac, self->mac_b, 6);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct vnet_priv_create req = { .nic_id = NIC_A };
		uint32_t id = NIC_FREE;
		int fd;

		if (vnet_join_device_group(true) || setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(10);
		fd = open("/dev/vnet", O_RDWR);
		if (fd < 0)
			_exit(11);
		if (ioctl(fd, VNET_IOC_PRIV_CREATE, &req) != -1 ||
		    errno != EPERM)
			_exit(12);
		/* No routes through a plain file without the capability. */
		if (ioctl(fd, VNET_IOC_ROUTE_ADD, &r) != -1 || errno != EPERM)
			_exit(13);
		/* Through the inherited privileged endpoint, its NIC's only. */
		if (ioctl(self->a, VNET_IOC_ROUTE_ADD, &r))
			_exit(14);
		r.nic_id = NIC_B;
		if (ioctl(self->a, VNET_IOC_ROUTE_ADD, &r) != -1 ||
		    errno != EINVAL)
			_exit(15);
		list.nic_id = NIC_B;
		if (ioctl(self->a, VNET_IOC_ROUTE_LIST, &list) != -1 ||
		    errno != EINVAL)
			_exit(16);
		if (ioctl(self->a, VNET_IOC_PRIV_SET_ID, &id))
			_exit(17);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	/* NIC_A, now NIC_FREE, has the route; NIC_B has none. */
	EXPECT_EQ(1, route_count(NIC_FREE));
	EXPECT_EQ(0, route_count(NIC_B));
}

TEST_F(priv, unicast_and_broadcast)
{
	char msg[VNET_MAPPER_MTU], got[VNET_MAPPER_MTU];
	uint8_t from[6];
	unsigned int i;

	for (i = 0; i < sizeof(msg); i++)
		msg[i] = i * 7 + 3;
	ASSERT_EQ(0, dgram_send(self->a, self->mac_b, "hello", 5));
	ASSERT_EQ(5, dgram_recv(self->b, from, got, sizeof(got), 2000));
	EXPECT_EQ(0, memcmp(got, "hello", 5));
	EXPECT_EQ(0, memcmp(from, self->mac_a, 6));

	ASSERT_EQ(0, dgram_send(self->b, bcast, msg, sizeof(msg)));
	ASSERT_EQ(sizeof(msg), dgram_recv(self->a, from, got, sizeof(got), 2000));
	EXPECT_EQ(0, memcmp(got, msg, sizeof(msg)));
	EXPECT_EQ(0, memcmp(from, self->mac_b, 6));

	ASSERT_EQ(0, dgram_send(self->a, self->mac_b, "", 0));
	EXPECT_EQ(0, dgram_recv(self->b, from, got, sizeof(got), 2000));

	/* Nothing else came: no echo of our own broadcast either. */
	EXPECT_EQ(-ETIMEDOUT, dgram_recv(self->a, from, got, sizeof(got), 200));
	EXPECT_EQ(-ETIMEDOUT, dgram_recv(self->b, from, got, sizeof(got), 200));
	EXPECT_LE(2, nic_stat(NIC_A, "stats/mapper_sent"));
	EXPECT_LE(1, nic_stat(NIC_A, "stats/mapper_received"));
}

TEST_F(priv, bad_writes_and_reads_refused)
{
	uint8_t buf[PKT_HDR + VNET_MAPPER_MTU + 1] = {};
	struct vnet_mapper_pkt *h = (void *)buf;
	const uint8_t mcast[6] = { 0x01, 0x00, 0x5e, 0x00, 0x00, 0x01 };
	const uint8_t zero[6] = {};

	memcpy(h->mac, self->mac_b, 6);
	h->len = 10;
	EXPECT_EQ(-1, write(self->a, buf, PKT_HDR + 9));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, write(self->a, buf, PKT_HDR - 1));
	EXPECT_EQ(EINVAL, errno);
	h->len = VNET_MAPPER_MTU + 1;
	EXPECT_EQ(-1, write(self->a, buf, sizeof(buf)));
	EXPECT_EQ(EMSGSIZE, errno);
	EXPECT_EQ(-EINVAL, dgram_send(self->a, mcast, "x", 1));
	EXPECT_EQ(-EINVAL, dgram_send(self->a, zero, "x", 1));
	EXPECT_EQ(-1, read(self->b, buf, PKT_HDR - 1));
	EXPECT_EQ(EINVAL, errno);
	/* Nothing to read, and we do not wait for it. */
	ASSERT_EQ(0, fcntl(self->b, F_SETFL, O_NONBLOCK));
	EXPECT_EQ(-1, read(self->b, buf, sizeof(buf)));
	EXPECT_EQ(EAGAIN, errno);
}

/* A mapper datagram as the firmware frames one; @mangle spoils it. */
static size_t forge(uint8_t *f, const uint8_t *dst, const uint8_t *src,
		    int mangle);

TEST_F(priv, forged_datagrams_dropped)
{
	struct sockaddr_ll to = { .sll_family = AF_PACKET };
	long long bad = nic_stat(NIC_B, "stats/bad_frames");
	long long got = nic_stat(NIC_B, "stats/mapper_received");
	uint8_t frame[256], from[6], data[64];
	int s, mangle;

	s = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_VNET));
	ASSERT_LE(0, s);
	to.sll_ifindex = if_nametoindex("vnp0");
	to.sll_halen = 6;
	memcpy(to.sll_addr, self->mac_b, 6);

	/* The well-formed one first, so the forging is known to be right. */
	for (mangle = 0; mangle <= 6; mangle++) {
		size_t len = forge(frame, self->mac_b, self->mac_a, mangle);

		ASSERT_EQ((ssize_t)len, sendto(s, frame, len, 0,
					       (void *)&to, sizeof(to)));
		if (!mangle)
			ASSERT_EQ(4, dgram_recv(self->b, from, data,
						sizeof(data), 2000));
	}
	usleep(200000);
	EXPECT_EQ(-ETIMEDOUT, dgram_recv(self->b, from, data, sizeof(data), 100));
	EXPECT_EQ(got + 1, nic_stat(NIC_B, "stats/mapper_received"));
	EXPECT_EQ(bad + 6, nic_stat(NIC_B, "stats/bad_frames"));
	close(s);
}

TEST_F(priv, never_reach_an_endpoint)
{
	struct vnet_endpoint ep;
	uint8_t from[6], data[16];
	int i;

	ASSERT_EQ(0, vnet_endpoint_open(&ep, NIC_B));
	ASSERT_EQ(0, vnet_endpoint_set_tag(&ep, VNET_TAG_ANY));
	for (i = 0; i < 20; i++)
		ASSERT_EQ(0, dgram_send(self->a, i % 2 ? bcast : self->mac_b,
					"abcd", 4));
	for (i = 0; i < 20; i++)
		ASSERT_EQ(4, dgram_recv(self->b, from, data, sizeof(data),
					2000));
	for (i = VNET_Q_REQ_RECV; i <= VNET_Q_REP_RECV; i++)
		EXPECT_EQ(NULL, vnet_endpoint_peek(&ep, i));
	vnet_endpoint_close(&ep);
}

/* A request from an endpoint on @from to one on @to, and its reply. */
static int exchange(uint32_t from, uint32_t to)
{
	struct vnet_endpoint a, b;
	struct vnet_desc r = vnet_short(1, 0, 7, 8);
	const struct vnet_desc *d;
	double deadline = vnet_now() + 5;
	int got = 0;

	if (vnet_endpoint_open(&a, from))
		return -1;
	if (vnet_endpoint_open(&b, to)) {
		vnet_endpoint_close(&a);
		return -1;
	}
	if (vnet_endpoint_set_tag(&b, 0x5eed) ||
	    vnet_endpoint_map(&a, 0, b.name, 0x5eed) ||
	    vnet_endpoint_post(&a, VNET_Q_REQ_SEND, &r, NULL, 0))
		goto out;
	while (got < 2 && vnet_now() < deadline) {
		d = vnet_endpoint_peek(&b, VNET_Q_REQ_RECV);
		if (d && got == 0) {
			struct vnet_desc rep = vnet_short(2, 0, 9, 10);

			rep.token = d->token;
			if (!vnet_endpoint_post(&b, VNET_Q_REP_SEND, &rep,
						NULL, 0)) {
				vnet_endpoint_consume(&b, VNET_Q_REQ_RECV);
				got = 1;
			}
		}
		d = vnet_endpoint_peek(&a, VNET_Q_REP_RECV);
		if (d) {
			got = d->flags & VNET_DESC_RETURNED ? -1 : 2;
			break;
		}
		vnet_endpoint_wait(&a, 10);
	}
out:
	vnet_endpoint_close(&b);
	vnet_endpoint_close(&a);
	return got == 2 ? 0 : -1;
}

TEST_F(priv, renumber)
{
	struct vnet_endpoint ep;
	uint8_t from[6], data[8];
	struct stat st;
	uint32_t id;

	ASSERT_EQ(0, route_add(NIC_A, NIC_B, self->mac_b));
	ASSERT_EQ(0, route_add(NIC_B, NIC_A, self->mac_a));
	ASSERT_EQ(0, exchange(NIC_A, NIC_B));
	ASSERT_EQ(0, route_add(NIC_A, NIC_FREE, self->mac_b));
	ASSERT_EQ(0, vnet_endpoint_open(&ep, NIC_A));
	id = NIC_FREE;
	EXPECT_EQ(-1, ioctl(self->a, VNET_IOC_PRIV_SET_ID, &id));
	EXPECT_EQ(EBUSY, errno);
	vnet_endpoint_close(&ep);

	id = NIC_B;
	EXPECT_EQ(-1, ioctl(self->a, VNET_IOC_PRIV_SET_ID, &id));
	EXPECT_EQ(EEXIST, errno);
	id = VNET_MAX_NIC_ID + 1;
	EXPECT_EQ(-1, ioctl(self->a, VNET_IOC_PRIV_SET_ID, &id));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(2, route_count(NIC_A));

	/* The route to NIC_B stays; the one to its own new number goes. */
	id = NIC_FREE;
	ASSERT_EQ(0, ioctl(self->a, VNET_IOC_PRIV_SET_ID, &id));
	EXPECT_EQ(0, stat("/sys/class/vnet/vnet13", &st));
	EXPECT_EQ(-1, stat("/sys/class/vnet/vnet11", &st));
	EXPECT_EQ(1, route_count(NIC_FREE));

	/* Endpoints on it now carry the new number; datagrams still flow. */
	ASSERT_EQ(0, vnet_endpoint_open(&ep, NIC_FREE));
	EXPECT_EQ(NIC_FREE, ep.name.nic);
	vnet_endpoint_close(&ep);
	/* Its peer knew it by the old number; under the new one, both ways. */
	ASSERT_EQ(0, route_add(NIC_B, NIC_FREE, self->mac_a));
	EXPECT_EQ(0, exchange(NIC_FREE, NIC_B));
	EXPECT_EQ(0, exchange(NIC_B, NIC_FREE));
	ASSERT_EQ(0, dgram_send(self->a, self->mac_b, "ok", 2));
	EXPECT_EQ(2, dgram_recv(self->b, from, data, sizeof(data), 2000));
}

static void *detach_later(void *arg)
{
	int fd = open("/dev/vnet", O_RDWR);
	uint32_t id = NIC_B;

	usleep(300000);
	ioctl(fd, VNET_IOC_DETACH, &id);
	close(fd);
	return NULL;
}

TEST_F(priv, reader_woken_when_its_nic_goes)
{
	uint8_t buf[PKT_HDR + 16];
	struct pollfd p = { .fd = self->b, .events = POLLIN };
	pthread_t t;
	double start;

	ASSERT_EQ(0, pthread_create(&t, NULL, detach_later, NULL));
	start = vnet_now();
	EXPECT_EQ(-1, read(self->b, buf, sizeof(buf)));
	EXPECT_EQ(ENODEV, errno);
	EXPECT_GT(5.0, vnet_now() - start);
	pthread_join(t, NULL);
	EXPECT_EQ(1, poll(&p, 1, 0));
	EXPECT_TRUE(p.revents & POLLHUP);
	EXPECT_EQ(-1, write(self->b, buf, PKT_HDR));
	EXPECT_EQ(ENODEV, errno);
}

/* What was queued goes with the NIC: read and poll agree it is gone. */
TEST_F(priv, queued_datagrams_go_with_the_nic)
{
	uint8_t buf[PKT_HDR + 16];
	struct pollfd p = { .fd = self->b, .events = POLLIN };
	uint32_t id = NIC_B;
	int fd, i;

	for (i = 0; i < 5; i++)
		ASSERT_EQ(0, dgram_send(self->a, self->mac_b, "q", 1));
	usleep(200000);
	ASSERT_EQ(1, poll(&p, 1, 0));
	fd = open("/dev/vnet", O_RDWR);
	ASSERT_EQ(0, ioctl(fd, VNET_IOC_DETACH, &id));
	close(fd);
	EXPECT_EQ(1, poll(&p, 1, 0));
	EXPECT_EQ(POLLERR | POLLHUP, p.revents);
	EXPECT_EQ(-1, read(self->b, buf, sizeof(buf)));
	EXPECT_EQ(ENODEV, errno);
}

static int ep_create_errno(uint32_t nic)
{
	struct vnet_ep_create req = { .abi_version = VNET_ABI_VERSION,
				      .nic_id = nic };
	int fd = open("/dev/vnet", O_RDWR), err;

	err = ioctl(fd, VNET_IOC_EP_CREATE, &req) ? errno : 0;
	close(fd);
	return err;
}

static int attach_any(const char *ifname, uint32_t *id)
{
	struct vnet_attach att = { .nic_id = VNET_NIC_ID_ANY };
	int fd = open("/dev/vnet", O_RDWR), err;

	snprintf(att.ifname, sizeof(att.ifname), "%s", ifname);
	err = ioctl(fd, VNET_IOC_ATTACH, &att) ? -errno : 0;
	*id = att.nic_id;
	close(fd);
	return err;
}

/*
 * Attached without an id, a NIC waits for its mapper: a placeholder from
 * the top of the range, so two on one host never hold the low ids a
 * mapper hands out, and no endpoint -- anyone's -- until it is numbered.
 */
TEST(unnumbered_until_its_mapper_numbers_it)
{
	uint32_t id0, id1, id = 5;
	char path[96];
	int fd, status;
	pid_t pid;

	ASSERT_EQ(0, sh("modprobe veth && "
			"ip link add vnu0 type veth peer name vnu1 && "
			"ip link set vnu0 up && ip link set vnu1 up"));
	ASSERT_EQ(0, attach_any("vnu0", &id0));
	ASSERT_EQ(0, attach_any("vnu1", &id1));
	EXPECT_EQ(VNET_MAX_NIC_ID, id0);
	EXPECT_EQ(VNET_MAX_NIC_ID - 1, id1);
	snprintf(path, sizeof(path), "/sys/class/vnet/vnet%u/numbered", id0);
	EXPECT_EQ(0, vnet_read_ll(path));
	EXPECT_EQ(EADDRNOTAVAIL, ep_create_errno(id0));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		if (vnet_join_device_group(true) || setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(10);
		_exit(ep_create_errno(id1) == EADDRNOTAVAIL ? 0 : 11);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);

	fd = priv_open(id0, NULL);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ioctl(fd, VNET_IOC_PRIV_SET_ID, &id));
	close(fd);
	snprintf(path, sizeof(path), "/sys/class/vnet/vnet%u/numbered", id);
	EXPECT_EQ(1, vnet_read_ll(path));
	EXPECT_EQ(0, ep_create_errno(id));
	/* The placeholder may be the id the mapper gives: numbered as it is. */
	fd = priv_open(id1, NULL);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ioctl(fd, VNET_IOC_PRIV_SET_ID, &id1));
	close(fd);
	EXPECT_EQ(0, ep_create_errno(id1));
	sh("ip link del vnu0");
}

TEST_F(priv, closed_with_datagrams_queued)
{
	uint8_t from[6], data[8];
	int i;

	for (i = 0; i < 50; i++)
		ASSERT_EQ(0, dgram_send(self->a, self->mac_b, "q", 1));
	/* Whatever is queued goes with the file; a new one starts empty. */
	usleep(200000);
	close(self->b);
	self->b = priv_open(NIC_B, NULL);
	ASSERT_LE(0, self->b);
	EXPECT_EQ(-ETIMEDOUT, dgram_recv(self->b, from, data, sizeof(data), 200));
}

/* What firmware/wire.h says a MAPPER packet is, spelled out again here. */
struct wire_hdr {
	uint8_t version, type, channel, flags;
	uint16_t src_nic, dst_nic;
	uint32_t incarnation, seq, stamp, csum;
} __attribute__((packed));

static uint32_t crc32c(uint32_t crc, const uint8_t *p, size_t n)
{
	int k;

	crc = ~crc;
	while (n--) {
		crc ^= *p++;
		for (k = 0; k < 8; k++)
			crc = crc & 1 ? (crc >> 1) ^ 0x82f63b78 : crc >> 1;
	}
	return ~crc;
}

static size_t forge(uint8_t *f, const uint8_t *dst, const uint8_t *src,
		    int mangle)
{
	struct wire_hdr *h = (void *)(f + 14);
	uint8_t *m = (uint8_t *)(h + 1);
	uint16_t plen = 4;

	memcpy(f, dst, 6);
	memcpy(f + 6, src, 6);
	f[12] = ETH_P_VNET >> 8;
	f[13] = ETH_P_VNET & 0xff;
	memset(h, 0, sizeof(*h));
	h->version = 5;		/* VNET_WIRE_VERSION */
	h->type = 5;
	h->src_nic = htons(NIC_A);
	h->dst_nic = htons(0xffff);
	m[0] = plen >> 8;
	m[1] = plen & 0xff;
	m[2] = m[3] = 0;
	memcpy(m + 4, "forg", 4);
	switch (mangle) {
	case 2:
		h->seq = htonl(1);	/* a transport field set */
		break;
	case 3:
		m[1] = 200;		/* longer than the packet */
		break;
	case 4:
		h->dst_nic = htons(NIC_B);
		break;
	case 5:
		m[3] = 1;		/* reserved */
		break;
	case 6:
		m[0] = 0x10;		/* over VNET_MAPPER_MTU */
		break;
	}
	h->csum = htonl(crc32c(0, (uint8_t *)h, sizeof(*h) + 4 + plen));
	if (mangle == 1)
		h->csum ^= htonl(1);
	return 14 + sizeof(*h) + 4 + plen;
}

TEST_HARNESS_MAIN
