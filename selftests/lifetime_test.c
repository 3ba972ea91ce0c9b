// SPDX-License-Identifier: GPL-2.0
/*
 * Lifetimes the driver must get right whatever user space does: endpoint
 * indices handed out again only once their sysfs directory is gone, and
 * closing endpoints while they are being evicted.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "vnet_util.h"

#define MIN_RESIDENT	"/sys/module/vnet/parameters/min_resident_us"

#define CHURN_PROCS	4
#define CHURN_ROUNDS	300

/* Nothing to set up: a fixture only for the longer timeout. */
FIXTURE(churn) {
	int unused;
};

FIXTURE_SETUP(churn)
{
}

FIXTURE_TEARDOWN(churn)
{
}

/*
 * Several processes create, touch and close endpoints on one NIC, as AM
 * programs do that open a second endpoint briefly.  Each create must
 * succeed: an index is not handed out while the previous holder's sysfs
 * directory still exists.  (A debug kernel takes a minute over it.)
 */
TEST_F_TIMEOUT(churn, create_close_reuses_indices, 300)
{
	pid_t pid[CHURN_PROCS];
	int i, status, failed = 0;

	for (i = 0; i < CHURN_PROCS; i++) {
		pid[i] = fork();
		ASSERT_LE(0, pid[i]);
		if (!pid[i]) {
			int n, bad = 0;

			for (n = 0; n < CHURN_ROUNDS; n++) {
				struct vnet_endpoint ep;
				int err = vnet_endpoint_open(&ep, 0);

				if (err) {
					fprintf(stderr, "# create: %s\n",
						strerror(-err));
					bad++;
					continue;
				}
				vnet_touch(&ep);
				vnet_endpoint_close(&ep);
			}
			_exit(bad ? 1 : 0);
		}
	}
	for (i = 0; i < CHURN_PROCS; i++) {
		ASSERT_EQ(pid[i], waitpid(pid[i], &status, 0));
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			failed++;
	}
	EXPECT_EQ(0, failed);
}

#define EVICTING_EPS	12

/*
 * One process touches more endpoints than there are frames, so every
 * fault evicts a victim, while another keeps creating, touching and closing
 * an endpoint of its own: that one is often closed while it is the victim
 * of the first one's fault.  The debug kernel's KASAN catches any use of a
 * victim after its owner freed it.
 */
TEST(close_while_evicted)
{
	unsigned int closes = 0;
	int status;
	double end;
	pid_t pid;

	ASSERT_EQ(0, vnet_write_str(MIN_RESIDENT, "0"));
	ASSERT_EQ(0, vnet_write_str(VNET_DEBUGFS "/page_delay_ms", "1"));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct vnet_endpoint ep[EVICTING_EPS];
		unsigned int i;

		for (i = 0; i < EVICTING_EPS; i++)
			if (vnet_endpoint_open(&ep[i], 0))
				_exit(2);
		for (i = 0;; i = (i + 1) % EVICTING_EPS)
			vnet_touch(&ep[i]);
	}
	end = vnet_now() + 3;
	while (vnet_now() < end) {
		struct vnet_endpoint ep;

		ASSERT_EQ(0, vnet_endpoint_open(&ep, 0));
		vnet_touch(&ep);
		vnet_endpoint_close(&ep);
		closes++;
	}
	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status));
	vnet_write_str(VNET_DEBUGFS "/page_delay_ms", "0");
	vnet_write_str(MIN_RESIDENT, "2000");
	TH_LOG("%u closes under eviction, %lld evictions", closes,
	       vnet_nic_attr("evictions"));
}

TEST_HARNESS_MAIN
