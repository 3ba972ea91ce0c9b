// SPDX-License-Identifier: GPL-2.0
/*
 * Mapper datagrams in the firmware: framed on the way out, checked on the
 * way in, handed to the host whole or not at all, and never mistaken for
 * transport traffic or the other way round.
 */
#include <stdlib.h>

#include "kselftest_harness.h"
#include "wire_sim.h"

struct capture {
	u8 mac[6];
	u8 pkt[VNET_WIRE_MAPPER_LEN + VNET_MAPPER_MTU] __aligned(8);
	u32 len;
	u32 sent;
	u8 from[6];
	u8 payload[VNET_MAPPER_MTU];
	u32 plen;
	u32 received;
};

static struct capture cap;

static void capture_transmit_to(void *ctx, const u8 *mac, const void *hdr,
				u32 hdr_len, const void *payload, u32 len)
{
	memcpy(cap.mac, mac, 6);
	memcpy(cap.pkt, hdr, hdr_len);
	memcpy(cap.pkt + hdr_len, payload, len);
	cap.len = hdr_len + len;
	cap.sent++;
}

static void capture_mapper_rx(void *ctx, const u8 *mac, const void *payload,
			      u32 len)
{
	memcpy(cap.from, mac, 6);
	memcpy(cap.payload, payload, len);
	cap.plen = len;
	cap.received++;
}

FIXTURE(mapper) {
	struct sim_net net;
	struct vnet_fw_ops ops[2];
	u8 mac[2][6];
};

FIXTURE_SETUP(mapper)
{
	u32 i;

	memset(&cap, 0, sizeof(cap));
	sim_net_init(&self->net, 2, 2, 41);
	for (i = 0; i < 2; i++) {
		sim_mac(i, self->mac[i]);
		self->ops[i] = *self->net.nic[i]->fw.ops;
		self->ops[i].transmit_to = capture_transmit_to;
		self->ops[i].mapper_rx = capture_mapper_rx;
		self->net.nic[i]->fw.ops = &self->ops[i];
	}
}

FIXTURE_TEARDOWN(mapper)
{
	sim_net_fini(&self->net);
}

static void reseal(u8 *pkt, u32 len)
{
	struct vnet_wire_hdr *h = (void *)pkt;

	h->csum = 0;
	h->csum = htobe32(vnet_crc32c(0, pkt, len));
}

TEST_F(mapper, round_trip)
{
	const u8 bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	u8 data[VNET_MAPPER_MTU];
	u32 i;

	for (i = 0; i < sizeof(data); i++)
		data[i] = i * 13 + 1;
	ASSERT_TRUE(vnet_fw_mapper_send(&self->net.nic[0]->fw, bcast, data,
					sizeof(data)));
	ASSERT_EQ(1, cap.sent);
	EXPECT_EQ(0, memcmp(cap.mac, bcast, 6));
	EXPECT_EQ(VNET_WIRE_MAPPER_LEN + sizeof(data), cap.len);

	sim_net_inject(&self->net, 1, self->mac[0], cap.pkt, cap.len);
	ASSERT_EQ(1, cap.received);
	EXPECT_EQ(sizeof(data), cap.plen);
	EXPECT_EQ(0, memcmp(cap.payload, data, sizeof(data)));
	EXPECT_EQ(0, memcmp(cap.from, self->mac[0], 6));
	EXPECT_EQ(1, self->net.nic[1]->fw.stats.rx_mapper);
	EXPECT_EQ(0, self->net.nic[1]->fw.stats.bad_frames);

	/* Ethernet pads a short frame; the datagram is what its length says. */
	ASSERT_TRUE(vnet_fw_mapper_send(&self->net.nic[0]->fw, self->mac[1],
					"hi", 2));
	memset(cap.pkt + cap.len, 0, 46 - cap.len);
	sim_net_inject(&self->net, 1, self->mac[0], cap.pkt, 46);
	ASSERT_EQ(2, cap.received);
	EXPECT_EQ(2, cap.plen);
}

TEST_F(mapper, too_large_not_sent)
{
	u8 data[VNET_MAPPER_MTU + 1] = {};

	EXPECT_FALSE(vnet_fw_mapper_send(&self->net.nic[0]->fw, self->mac[1],
					 data, sizeof(data)));
	self->net.nic[0]->fw.mtu = VNET_WIRE_MAPPER_LEN + 100;
	EXPECT_FALSE(vnet_fw_mapper_send(&self->net.nic[0]->fw, self->mac[1],
					 data, 101));
	EXPECT_TRUE(vnet_fw_mapper_send(&self->net.nic[0]->fw, self->mac[1],
					data, 100));
	EXPECT_EQ(1, cap.sent);
}

/*
 * Every way a datagram can be spoiled: each is a bad frame, and none
 * reaches the host or moves the transport.
 */
TEST_F(mapper, spoiled_datagrams_dropped)
{
	struct vnet_fw_nic *fw = &self->net.nic[1]->fw;
	const u8 mcast[6] = { 0x01, 0x00, 0x5e, 0x00, 0x00, 0x01 };
	struct vnet_wire_hdr *h = (void *)cap.pkt;
	struct vnet_wire_mapper *m = (void *)(h + 1);
	u8 good[sizeof(cap.pkt)];
	u32 len, kind, bad = 0;

	ASSERT_TRUE(vnet_fw_mapper_send(&self->net.nic[0]->fw, self->mac[1],
					"abcdefgh", 8));
	len = cap.len;
	memcpy(good, cap.pkt, len);
	for (kind = 0; kind < 10; kind++) {
		const u8 *from = self->mac[0];
		u32 n = len;

		memcpy(cap.pkt, good, len);
		switch (kind) {
		case 0:
			h->csum ^= htobe32(1);
			break;
		case 1:
			h->seq = htobe32(1);
			break;
		case 2:
			h->channel = 1;
			break;
		case 3:
			h->incarnation = htobe32(7);
			break;
		case 4:
			h->dst_nic = htobe16(1);
			break;
		case 5:
			m->__reserved[1] = 1;
			break;
		case 6:
			m->len = htobe16(9);	/* past the packet */
			break;
		case 7:
			m->len = htobe16(VNET_MAPPER_MTU + 1);
			break;
		case 8:
			n = VNET_WIRE_MAPPER_LEN - 1;
			break;
		case 9:
			from = mcast;
			break;
		}
		/* Sealed again where the checksum is not what is spoiled. */
		if (kind >= 1 && kind <= 5)
			reseal(cap.pkt, n);
		sim_net_inject(&self->net, 1, from, cap.pkt, n);
		bad++;
		EXPECT_EQ(bad, fw->stats.bad_frames) {
			TH_LOG("spoiled datagram %u was taken", kind);
		}
	}
	EXPECT_EQ(0, cap.received);
	EXPECT_EQ(0, fw->stats.rx_mapper);
	EXPECT_EQ(0, fw->stats.rx_data);
	EXPECT_EQ(0, fw->stats.no_route);
}

/*
 * A datagram needs no route, and a transport packet is never taken for
 * one: a DATA packet with the MAPPER type's place spelled otherwise is
 * judged by the transport's rules (here: from no routed NIC).
 */
TEST_F(mapper, needs_no_route_and_is_no_transport_packet)
{
	struct vnet_fw_nic *fw = &self->net.nic[1]->fw;
	struct vnet_wire_hdr *h = (void *)cap.pkt;

	ASSERT_TRUE(vnet_fw_route_del(fw, 0, 0));
	ASSERT_TRUE(vnet_fw_mapper_send(&self->net.nic[0]->fw, self->mac[1],
					"x", 1));
	sim_net_inject(&self->net, 1, self->mac[0], cap.pkt, cap.len);
	EXPECT_EQ(1, cap.received);

	h->type = VNET_WIRE_RESUME;
	h->dst_nic = htobe16(1);
	reseal(cap.pkt, VNET_WIRE_RESUME_LEN);
	sim_net_inject(&self->net, 1, self->mac[0], cap.pkt,
		       VNET_WIRE_RESUME_LEN);
	EXPECT_EQ(1, cap.received);
	EXPECT_EQ(1, fw->stats.rx_mapper);
	EXPECT_EQ(1, fw->stats.no_route);
}

/* A NIC whose host takes no datagrams drops them quietly, counted. */
TEST_F(mapper, host_without_a_mapper)
{
	self->ops[1].mapper_rx = NULL;
	ASSERT_TRUE(vnet_fw_mapper_send(&self->net.nic[0]->fw, self->mac[1],
					"x", 1));
	sim_net_inject(&self->net, 1, self->mac[0], cap.pkt, cap.len);
	EXPECT_EQ(0, cap.received);
	EXPECT_EQ(1, self->net.nic[1]->fw.stats.rx_mapper);
	self->ops[0].transmit_to = NULL;
	EXPECT_FALSE(vnet_fw_mapper_send(&self->net.nic[0]->fw, self->mac[1],
					 "x", 1));
}

TEST_HARNESS_MAIN
