// SPDX-License-Identifier: GPL-2.0
/*
 * The daemon's state file writer (state.c): what it leaves in the
 * directory, and that nothing there it did not make is written through.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <dirent.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "state.h"

static void nop_send(void *ctx, const uint8_t to[6], const void *buf,
		     size_t len)
{
}

static int nop_route_add(void *ctx, uint32_t peer, const uint8_t mac[6])
{
	return 0;
}

static int nop_route_del(void *ctx, uint32_t peer)
{
	return 0;
}

static int nop_set_id(void *ctx, uint32_t id)
{
	return 0;
}

static const struct mapd_ops ops = {
	.send = nop_send,
	.route_add = nop_route_add,
	.route_del = nop_route_del,
	.set_id = nop_set_id,
};

static struct mapd *core(void)
{
	struct mapd_config cfg = { .mac = { 2, 0, 0, 0, 0, 1 }, .boot_id = 1,
				   .hash_key = 1 };

	return mapd_create(&cfg, &ops, NULL, 1000);
}

static int entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)))
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

FIXTURE(dir) {
	char dir[64], path[128], other[128];
};

FIXTURE_SETUP(dir)
{
	strcpy(self->dir, "/tmp/mapd-state-XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	snprintf(self->path, sizeof(self->path), "%s/mapd.json", self->dir);
	snprintf(self->other, sizeof(self->other), "%s/other", self->dir);
}

FIXTURE_TEARDOWN(dir)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", self->dir);
	if (system(cmd))
		TH_LOG("could not remove %s", self->dir);
}

/* A symlink where the old writer put PATH.tmp is neither followed nor kept. */
TEST_F(dir, a_symlink_in_the_way_is_not_followed)
{
	struct mapd_state_info info = { .ifname = "eth1", .nic = "vnet1",
					.boot_id = 1 };
	struct mapd *m = core();
	char tmp[160], buf[16] = "";
	struct stat st;
	int fd;

	ASSERT_NE(NULL, m);
	fd = open(self->other, O_WRONLY | O_CREAT | O_EXCL, 0644);
	ASSERT_LE(0, fd);
	ASSERT_EQ(5, write(fd, "keep\n", 5));
	close(fd);
	snprintf(tmp, sizeof(tmp), "%s.tmp", self->path);
	ASSERT_EQ(0, symlink(self->other, tmp));

	EXPECT_EQ(0, mapd_state_write(self->path, m, &info, 2000));
	fd = open(self->other, O_RDONLY);
	ASSERT_LE(0, fd);
	EXPECT_EQ(5, read(fd, buf, sizeof(buf)));
	close(fd);
	EXPECT_STREQ("keep\n", buf);
	ASSERT_EQ(0, lstat(self->path, &st));
	EXPECT_TRUE(S_ISREG(st.st_mode));
	EXPECT_EQ(0600, st.st_mode & 0777);
	/* The file, the symlink and the other file: no temporary left. */
	EXPECT_EQ(3, entries(self->dir));
	mapd_destroy(m);
}

/* The directory is made when it is missing. */
TEST_F(dir, a_missing_directory_is_made)
{
	struct mapd_state_info info = { .ifname = "eth1", .nic = "vnet1",
					.boot_id = 1 };
	struct mapd *m = core();
	char sub[160];
	struct stat st;

	ASSERT_NE(NULL, m);
	snprintf(sub, sizeof(sub), "%s/run/mapd.json", self->dir);
	EXPECT_EQ(0, mapd_state_write(sub, m, &info, 2000));
	EXPECT_EQ(0, stat(sub, &st));
	mapd_destroy(m);
}

TEST_HARNESS_MAIN
