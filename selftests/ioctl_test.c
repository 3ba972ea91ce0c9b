// SPDX-License-Identifier: GPL-2.0
/*
 * The /dev/vnet ABI: every ioctl and mmap with good and bad arguments, and
 * the messages the firmware hands back to their sender.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <linux/capability.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "vnet_util.h"

FIXTURE(dev) {
	int fd;
	struct vnet_ep_create req;
};

FIXTURE_SETUP(dev)
{
	self->fd = open(VNET_DEVICE_PATH, O_RDWR);
	ASSERT_LE(0, self->fd);
	memset(&self->req, 0, sizeof(self->req));
	self->req.abi_version = VNET_ABI_VERSION;
}

FIXTURE_TEARDOWN(dev)
{
	close(self->fd);
}

TEST_F(dev, info)
{
	struct vnet_nic_info nic = { .index = 0 };
	struct vnet_info info;

	ASSERT_EQ(0, ioctl(self->fd, VNET_IOC_INFO, &info));
	EXPECT_EQ(VNET_ABI_VERSION, info.abi_version);
	EXPECT_LE(1, info.nr_nics);
	EXPECT_EQ(VNET_FRAME_SIZE, info.frame_size);
	EXPECT_EQ(VNET_STAGING_SIZE, info.staging_size);
	EXPECT_EQ(VNET_QUEUE_DEPTH, info.queue_depth);

	ASSERT_EQ(0, ioctl(self->fd, VNET_IOC_NIC_INFO, &nic));
	EXPECT_STREQ("vnet0", nic.name);
	EXPECT_EQ(0, nic.nic_id);
	EXPECT_EQ(vnet_nic_attr("frames"), nic.frames);

	nic.index = 4096;
	EXPECT_EQ(-1, ioctl(self->fd, VNET_IOC_NIC_INFO, &nic));
	EXPECT_EQ(ENODEV, errno);
}

TEST_F(dev, create_map_close)
{
	struct vnet_map map = { .slot = 3, .tag = TEST_TAG };
	struct vnet_ep_stat st;
	uint64_t tag = TEST_TAG;
	void *frame, *staging;
	char path[128];

	ASSERT_EQ(0, ioctl(self->fd, VNET_IOC_EP_CREATE, &self->req));
	EXPECT_EQ(0, self->req.name.nic);
	EXPECT_EQ(VNET_FRAME_SIZE, self->req.frame_size);
	EXPECT_EQ(VNET_STAGING_SIZE, self->req.staging_size);

	snprintf(path, sizeof(path), VNET_SYSFS "/endpoints/%u/pid",
		 self->req.name.ep);
	EXPECT_EQ(getpid(), vnet_read_ll(path));

	ASSERT_EQ(0, ioctl(self->fd, VNET_IOC_SET_TAG, &tag));
	map.name = self->req.name;
	ASSERT_EQ(0, ioctl(self->fd, VNET_IOC_MAP, &map));
	ASSERT_EQ(0, ioctl(self->fd, VNET_IOC_UNMAP, &map.slot));
	EXPECT_EQ(-1, ioctl(self->fd, VNET_IOC_UNMAP, &map.slot));
	EXPECT_EQ(ENOENT, errno);

	ASSERT_EQ(0, ioctl(self->fd, VNET_IOC_EP_STAT, &st));
	EXPECT_EQ(VNET_EP_NONRESIDENT, st.state);
	EXPECT_EQ(-1, st.frame);
	EXPECT_EQ(TEST_TAG, st.tag);

	frame = mmap(NULL, VNET_FRAME_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
		     self->fd, self->req.frame_offset);
	ASSERT_NE(MAP_FAILED, frame);
	staging = mmap(NULL, VNET_STAGING_SIZE, PROT_READ | PROT_WRITE,
		       MAP_SHARED, self->fd, self->req.staging_offset);
	ASSERT_NE(MAP_FAILED, staging);

	/* The first touch brings the endpoint onto the card. */
	EXPECT_EQ(VNET_FRAME_MAGIC, ((struct vnet_frame *)frame)->hdr.magic);
	EXPECT_EQ(self->req.name.ep,
		  ((struct vnet_frame *)frame)->hdr.name.ep);
	ASSERT_EQ(0, ioctl(self->fd, VNET_IOC_EP_STAT, &st));
	EXPECT_EQ(VNET_EP_RESIDENT, st.state);
	EXPECT_LE(0, st.frame);
	EXPECT_EQ(1, st.faults);

	EXPECT_EQ(0, munmap(frame, VNET_FRAME_SIZE));
	EXPECT_EQ(0, munmap(staging, VNET_STAGING_SIZE));
	EXPECT_EQ(0, close(self->fd));
	EXPECT_EQ(-1, access(path, F_OK));
	self->fd = open(VNET_DEVICE_PATH, O_RDWR);
}

TEST_F(dev, abi_mismatch)
{
	self->req.abi_version = VNET_ABI_VERSION + 1;
	EXPECT_EQ(-1, ioctl(self->fd, VNET_IOC_EP_CREATE, &self->req));
	EXPECT_EQ(EPROTO, errno);
	self->req.abi_version = 0;
	EXPECT_EQ(-1, ioctl(self->fd, VNET_IOC_EP_CREATE, &self->req));
	EXPECT_EQ(EPROTO, errno);
}

TEST_F(dev, one_endpoint_per_file)
{
	ASSERT_EQ(0, ioctl(self->fd, VNET_IOC_EP_CREATE, &self->req));
	EXPECT_EQ(-1, ioctl(self->fd, VNET_IOC_EP_CREATE, &self->req));
	EXPECT_EQ(EBUSY, errno);
}

TEST_F(dev, no_such_nic)
{
	self->req.nic_id = 4000;
	EXPECT_EQ(-1, ioctl(self->fd, VNET_IOC_EP_CREATE, &self->req));
	EXPECT_EQ(ENODEV, errno);
}

TEST_F(dev, endpoint_ioctls_need_an_endpoint)
{
	uint64_t tag = 1;
	uint32_t slot = 0;

	EXPECT_EQ(-1, ioctl(self->fd, VNET_IOC_SET_TAG, &tag));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ioctl(self->fd, VNET_IOC_UNMAP, &slot));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ioctl(self->fd, VNET_IOC_KICK));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(MAP_FAILED, mmap(NULL, VNET_FRAME_SIZE, PROT_READ,
				   MAP_SHARED, self->fd, 0));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(dev, bad_ioctls)
{
	struct vnet_map map = { .slot = VNET_MAX_SLOTS };

	EXPECT_EQ(-1, ioctl(self->fd, _IO(VNET_IOC_MAGIC, 0x7f)));
	EXPECT_EQ(ENOTTY, errno);
	EXPECT_EQ(-1, ioctl(self->fd, _IOR('T', 1, int)));
	EXPECT_EQ(ENOTTY, errno);
	/* The size is part of the number: a wrong struct size is unknown. */
	EXPECT_EQ(-1, ioctl(self->fd, _IOWR(VNET_IOC_MAGIC, 0x02, int),
			    &self->req));
	EXPECT_EQ(ENOTTY, errno);

	EXPECT_EQ(-1, ioctl(self->fd, VNET_IOC_INFO, (void *)8));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, ioctl(self->fd, VNET_IOC_EP_CREATE, NULL));
	EXPECT_EQ(EFAULT, errno);

	ASSERT_EQ(0, ioctl(self->fd, VNET_IOC_EP_CREATE, &self->req));
	EXPECT_EQ(-1, ioctl(self->fd, VNET_IOC_MAP, &map));
	EXPECT_EQ(EINVAL, errno);
	map.slot = 0;
	map.name.nic = VNET_MAX_NIC_ID + 1;
	EXPECT_EQ(-1, ioctl(self->fd, VNET_IOC_MAP, &map));
	EXPECT_EQ(EINVAL, errno);
	map.name.nic = 0;
	map.__pad = 1;
	EXPECT_EQ(-1, ioctl(self->fd, VNET_IOC_MAP, &map));
	EXPECT_EQ(EINVAL, errno);
	map.slot = 0xffffffff;
	EXPECT_EQ(-1, ioctl(self->fd, VNET_IOC_UNMAP, &map.slot));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ioctl(self->fd, VNET_IOC_MAP, (void *)-1L));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, ioctl(self->fd, VNET_IOC_EP_STAT, (void *)16));
	EXPECT_EQ(EFAULT, errno);
}

TEST_F(dev, segment)
{
	struct vnet_seg seg = { .len = 1 << 20 };
	void *mem = mmap(NULL, seg.len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct vnet_info info;

	ASSERT_NE(MAP_FAILED, mem);
	ASSERT_EQ(0, ioctl(self->fd, VNET_IOC_INFO, &info));
	EXPECT_EQ(VNET_MAX_SEG_LEN, info.max_seg_len);
	ASSERT_EQ(0, ioctl(self->fd, VNET_IOC_EP_CREATE, &self->req));

	seg.addr = (uintptr_t)mem + 100;
	seg.len = 4096 * 3;
	EXPECT_EQ(0, ioctl(self->fd, VNET_IOC_SET_SEG, &seg));
	seg.len = VNET_MAX_SEG_LEN + 1;
	EXPECT_EQ(-1, ioctl(self->fd, VNET_IOC_SET_SEG, &seg));
	EXPECT_EQ(EINVAL, errno);
	seg.addr = ~0ULL - 10;
	seg.len = 100;
	EXPECT_EQ(-1, ioctl(self->fd, VNET_IOC_SET_SEG, &seg));
	EXPECT_EQ(EINVAL, errno);
	seg.addr = 4096;	/* nothing mapped there */
	seg.len = 4096;
	EXPECT_EQ(-1, ioctl(self->fd, VNET_IOC_SET_SEG, &seg));
	EXPECT_EQ(EFAULT, errno);
	seg.len = 0;
	EXPECT_EQ(0, ioctl(self->fd, VNET_IOC_SET_SEG, &seg));
	munmap(mem, 1 << 20);
}

TEST(xfer_into_segment)
{
	struct vnet_endpoint a, b;
	static uint8_t seg[20000];
	struct vnet_seg s = { (uintptr_t)seg, sizeof(seg) };
	uint8_t payload[VNET_MEDIUM_MAX];
	struct vnet_desc d = vnet_short(3, 0, 1, 2);
	const struct vnet_desc *got = NULL;
	double deadline = vnet_now() + 10;
	unsigned int i;

	ASSERT_EQ(0, vnet_endpoint_open(&a, 0));
	ASSERT_EQ(0, vnet_endpoint_open(&b, 0));
	ASSERT_EQ(0, vnet_endpoint_set_tag(&b, TEST_TAG));
	ASSERT_EQ(0, ioctl(b.fd, VNET_IOC_SET_SEG, &s));
	ASSERT_EQ(0, vnet_endpoint_map(&a, 0, b.name, TEST_TAG));
	for (i = 0; i < sizeof(payload); i++)
		payload[i] = i * 7;

	d.flags = VNET_DESC_XFER;
	d.offset = 10000;
	d.len = sizeof(payload);
	ASSERT_EQ(0, vnet_endpoint_post(&a, VNET_Q_REQ_SEND, &d, payload,
					sizeof(payload)));
	d.offset = sizeof(seg) - 100;	/* runs off the end */
	ASSERT_EQ(0, vnet_endpoint_post(&a, VNET_Q_REQ_SEND, &d, payload,
					sizeof(payload)));

	while (!(got = vnet_endpoint_peek(&b, VNET_Q_REQ_RECV)) &&
	       vnet_now() < deadline)
		vnet_endpoint_wait(&b, 100);
	ASSERT_NE(NULL, got);
	EXPECT_TRUE(got->flags & VNET_DESC_XFER);
	EXPECT_EQ(10000, got->offset);
	EXPECT_EQ(0, memcmp(seg + 10000, payload, sizeof(payload)));
	EXPECT_EQ(0, seg[9999]);
	EXPECT_EQ(0, seg[10000 + sizeof(payload)]);

	while (!(got = vnet_endpoint_peek(&a, VNET_Q_REP_RECV)) &&
	       vnet_now() < deadline)
		vnet_endpoint_wait(&a, 100);
	ASSERT_NE(NULL, got);
	EXPECT_EQ(VNET_RET_BAD_SEGMENT, got->status);
	vnet_endpoint_close(&a);
	vnet_endpoint_close(&b);
}

/* Changing the network needs CAP_NET_ADMIN, and so does listing its routes. */
TEST(privileged_ioctls_need_net_admin)
{
	int status;
	pid_t pid = fork();

	ASSERT_LE(0, pid);
	if (!pid) {
		struct __user_cap_header_struct hdr = {
			.version = _LINUX_CAPABILITY_VERSION_3,
		};
		struct __user_cap_data_struct data[2] = {};
		struct vnet_attach att = { .ifname = "lo", .nic_id = 9 };
		struct vnet_route r = { .nic_id = 0, .peer_id = 5,
					.mac = { 2, 0, 0, 0, 0, 1 } };
		struct vnet_route_list list = { .nic_id = 0 };
		uint32_t id = 0;
		int fd = open(VNET_DEVICE_PATH, O_RDWR);

		if (fd < 0 || syscall(SYS_capset, &hdr, data))
			_exit(10);
		if (ioctl(fd, VNET_IOC_ATTACH, &att) != -1 || errno != EPERM)
			_exit(11);
		if (ioctl(fd, VNET_IOC_DETACH, &id) != -1 || errno != EPERM)
			_exit(12);
		if (ioctl(fd, VNET_IOC_ROUTE_ADD, &r) != -1 || errno != EPERM)
			_exit(13);
		if (ioctl(fd, VNET_IOC_ROUTE_DEL, &r) != -1 || errno != EPERM)
			_exit(14);
		if (ioctl(fd, VNET_IOC_ROUTE_LIST, &list) != -1 ||
		    errno != EPERM)
			_exit(15);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

TEST_F(dev, admin_errors)
{
	struct vnet_attach att = { .ifname = "no-such-if0", .nic_id = 9 };
	struct vnet_route r = { .nic_id = 0, .peer_id = 5,
				.mac = { 2, 0, 0, 0, 0, 1 } };
	uint32_t id = 0;

	EXPECT_EQ(-1, ioctl(self->fd, VNET_IOC_ATTACH, &att));
	EXPECT_EQ(ENODEV, errno);
	strcpy(att.ifname, "lo");	/* not Ethernet */
	EXPECT_EQ(-1, ioctl(self->fd, VNET_IOC_ATTACH, &att));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ioctl(self->fd, VNET_IOC_DETACH, &id));
	EXPECT_EQ(EINVAL, errno);	/* the loopback card stays */
	id = 4000;
	EXPECT_EQ(-1, ioctl(self->fd, VNET_IOC_DETACH, &id));
	EXPECT_EQ(ENODEV, errno);
	EXPECT_EQ(-1, ioctl(self->fd, VNET_IOC_ROUTE_ADD, &r));
	EXPECT_EQ(EOPNOTSUPP, errno);
	r.mac[0] = 1;			/* multicast */
	EXPECT_EQ(-1, ioctl(self->fd, VNET_IOC_ROUTE_ADD, &r));
	EXPECT_EQ(EINVAL, errno);
}

FIXTURE(bad_mmap) {
	int fd;
	struct vnet_ep_create req;
};

FIXTURE_VARIANT(bad_mmap) {
	int region;		/* 0 frame, 1 staging */
	long long delta;	/* added to the offset */
	long long size_delta;
	int flags;
};

FIXTURE_VARIANT_ADD(bad_mmap, frame_offset_off_by_page) {
	.region = 0, .delta = 4096, .flags = MAP_SHARED,
};
FIXTURE_VARIANT_ADD(bad_mmap, frame_too_long) {
	.region = 0, .size_delta = 4096, .flags = MAP_SHARED,
};
FIXTURE_VARIANT_ADD(bad_mmap, frame_too_short) {
	.region = 0, .size_delta = -4096, .flags = MAP_SHARED,
};
FIXTURE_VARIANT_ADD(bad_mmap, frame_private) {
	.region = 0, .flags = MAP_PRIVATE,
};
FIXTURE_VARIANT_ADD(bad_mmap, staging_too_long) {
	.region = 1, .size_delta = 4096, .flags = MAP_SHARED,
};
FIXTURE_VARIANT_ADD(bad_mmap, staging_private) {
	.region = 1, .flags = MAP_PRIVATE,
};
FIXTURE_VARIANT_ADD(bad_mmap, far_offset) {
	.region = 0, .delta = 1LL << 40, .flags = MAP_SHARED,
};

FIXTURE_SETUP(bad_mmap)
{
	self->fd = open(VNET_DEVICE_PATH, O_RDWR);
	ASSERT_LE(0, self->fd);
	memset(&self->req, 0, sizeof(self->req));
	self->req.abi_version = VNET_ABI_VERSION;
	ASSERT_EQ(0, ioctl(self->fd, VNET_IOC_EP_CREATE, &self->req));
}

FIXTURE_TEARDOWN(bad_mmap)
{
	close(self->fd);
}

TEST_F(bad_mmap, refused)
{
	long long off = variant->region ? self->req.staging_offset :
					  self->req.frame_offset;
	long long size = variant->region ? self->req.staging_size :
					   self->req.frame_size;

	EXPECT_EQ(MAP_FAILED, mmap(NULL, size + variant->size_delta,
				   PROT_READ | PROT_WRITE, variant->flags,
				   self->fd, off + variant->delta));
	EXPECT_EQ(EINVAL, errno);
}

TEST(other_files_endpoint_cannot_be_mapped)
{
	struct vnet_endpoint a, b;

	ASSERT_EQ(0, vnet_endpoint_open(&a, 0));
	ASSERT_EQ(0, vnet_endpoint_open(&b, 0));
	EXPECT_EQ(MAP_FAILED, mmap(NULL, a.frame_size, PROT_READ, MAP_SHARED,
				   b.fd, (off_t)a.frame_offset));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(MAP_FAILED, mmap(NULL, a.staging_size, PROT_READ, MAP_SHARED,
				   b.fd, (off_t)a.staging_offset));
	EXPECT_EQ(EINVAL, errno);
	vnet_endpoint_close(&a);
	vnet_endpoint_close(&b);
}

TEST(too_many_endpoints)
{
	const char *param = "/sys/module/vnet/parameters/max_endpoints";
	long long old = vnet_read_ll(param), base = vnet_nic_attr("nr_endpoints");
	struct vnet_endpoint eps[4];
	char buf[32];
	int i;

	ASSERT_LT(0, old);
	snprintf(buf, sizeof(buf), "%lld", base + 2);
	ASSERT_EQ(0, vnet_write_str(param, buf));
	ASSERT_EQ(0, vnet_endpoint_open(&eps[0], 0));
	ASSERT_EQ(0, vnet_endpoint_open(&eps[1], 0));
	EXPECT_EQ(-ENOSPC, vnet_endpoint_open(&eps[2], 0));
	vnet_endpoint_close(&eps[1]);
	EXPECT_EQ(0, vnet_endpoint_open(&eps[1], 0));
	snprintf(buf, sizeof(buf), "%lld", old);
	ASSERT_EQ(0, vnet_write_str(param, buf));
	for (i = 0; i < 2; i++)
		vnet_endpoint_close(&eps[i]);
}

/*
 * Every writable parameter refuses a value outside its range with EINVAL
 * from the write, and keeps the value it had.
 */
FIXTURE(param) {
	char path[128];
	long long old;
};

FIXTURE_VARIANT(param) {
	const char *name;
	const char *bad[3];
	const char *good;
};

FIXTURE_VARIANT_ADD(param, max_endpoints) {
	.name = "max_endpoints", .bad = { "0", "1048577", "-1" },
	.good = "1048576",
};
FIXTURE_VARIANT_ADD(param, max_endpoints_per_user) {
	.name = "max_endpoints_per_user", .bad = { "0", "1048577", "-5" },
	.good = "1048576",
};
FIXTURE_VARIANT_ADD(param, poll_us) {
	.name = "poll_us", .bad = { "10001", "4294967295", "x" }, .good = "0",
};
FIXTURE_VARIANT_ADD(param, min_resident_us) {
	.name = "min_resident_us", .bad = { "1000001", "4294967295", "20x" },
	.good = "0",
};
FIXTURE_VARIANT_ADD(param, slice_faults) {
	.name = "slice_faults", .bad = { "0", "1001", "4294967295" },
	.good = "1000",
};
FIXTURE_VARIANT_ADD(param, retrans_ms) {
	.name = "retrans_ms", .bad = { "0", "10001", "4294967295" },
	.good = "10000",
};
FIXTURE_VARIANT_ADD(param, busy_timeout_ms) {
	.name = "busy_timeout_ms", .bad = { "0", "3600001", "4294967295" },
	.good = "3600000",
};
FIXTURE_VARIANT_ADD(param, max_retries) {
	.name = "max_retries", .bad = { "0", "65536", "4294967295" },
	.good = "65535",
};

FIXTURE_SETUP(param)
{
	snprintf(self->path, sizeof(self->path),
		 "/sys/module/vnet/parameters/%s", variant->name);
	self->old = vnet_read_ll(self->path);
	ASSERT_LE(0, self->old);
}

FIXTURE_TEARDOWN(param)
{
	EXPECT_EQ(0, vnet_write_ll(self->path, self->old));
}

/* write(2) the value in one go: -errno, or 0. */
static int write_param(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;
	int err;

	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	err = n < 0 ? -errno : 0;
	close(fd);
	return err;
}

TEST_F(param, out_of_range_refused)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(variant->bad); i++) {
		EXPECT_EQ(-EINVAL, write_param(self->path, variant->bad[i])) {
			TH_LOG("%s=\"%s\"", variant->name, variant->bad[i]);
		}
		EXPECT_EQ(self->old, vnet_read_ll(self->path));
	}
	/* The bounds themselves are in range. */
	EXPECT_EQ(0, write_param(self->path, variant->good));
	EXPECT_EQ(strtoll(variant->good, NULL, 0), vnet_read_ll(self->path));
}

FIXTURE(returned) {
	struct vnet_endpoint src, dst;
};

FIXTURE_VARIANT(returned) {
	bool map;
	uint64_t dst_tag;
	bool bogus_dest;
	enum vnet_return_reason reason;
};

FIXTURE_VARIANT_ADD(returned, tag_mismatch) {
	.map = true, .dst_tag = TEST_TAG + 1, .reason = VNET_RET_BAD_TAG,
};
FIXTURE_VARIANT_ADD(returned, unmapped_slot) {
	.map = false, .dst_tag = TEST_TAG, .reason = VNET_RET_NO_SLOT,
};
FIXTURE_VARIANT_ADD(returned, no_such_endpoint) {
	.map = true, .dst_tag = TEST_TAG, .bogus_dest = true,
	.reason = VNET_RET_NO_ENDPOINT,
};
FIXTURE_VARIANT_ADD(returned, delivered) {
	.map = true, .dst_tag = TEST_TAG, .reason = VNET_RET_NONE,
};

FIXTURE_SETUP(returned)
{
	struct vnet_name name;

	ASSERT_EQ(0, vnet_endpoint_open(&self->src, 0));
	ASSERT_EQ(0, vnet_endpoint_open(&self->dst, 0));
	ASSERT_EQ(0, vnet_endpoint_set_tag(&self->dst, variant->dst_tag));
	name = self->dst.name;
	if (variant->bogus_dest)
		name.ep += 100000;
	if (variant->map)
		ASSERT_EQ(0, vnet_endpoint_map(&self->src, 7, name, TEST_TAG));
}

FIXTURE_TEARDOWN(returned)
{
	vnet_endpoint_close(&self->src);
	vnet_endpoint_close(&self->dst);
}

TEST_F(returned, to_sender_with_reason)
{
	struct vnet_desc d = vnet_short(12, 7, 0xabc, 0xdef);
	const struct vnet_desc *got = NULL;
	unsigned int q = variant->reason ? VNET_Q_REP_RECV : VNET_Q_REQ_RECV;
	struct vnet_endpoint *rx = variant->reason ? &self->src : &self->dst;
	double deadline = vnet_now() + 10;

	ASSERT_EQ(0, vnet_endpoint_post(&self->src, VNET_Q_REQ_SEND, &d,
					NULL, 0));
	while (!(got = vnet_endpoint_peek(rx, q)) && vnet_now() < deadline)
		vnet_endpoint_wait(rx, 100);
	ASSERT_NE(NULL, got);
	EXPECT_EQ(12, got->handler);
	EXPECT_EQ(0xabc, got->args[0]);
	EXPECT_EQ(0xdef, got->args[1]);
	if (variant->reason) {
		EXPECT_TRUE(got->flags & VNET_DESC_RETURNED);
		EXPECT_EQ(variant->reason, got->status);
		EXPECT_EQ(7, got->slot);
	} else {
		EXPECT_EQ(self->src.name.ep, got->peer.ep);
		EXPECT_EQ(TEST_TAG, got->tag);
	}
}

TEST_HARNESS_MAIN
