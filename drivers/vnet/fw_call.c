// SPDX-License-Identifier: GPL-2.0
/*
 * Commands to the card: the host asks the firmware to run a short step
 * under fw_lock between two endpoints' turns, as a host would post a
 * command to a real NIC, rather than take fw_lock from the firmware.
 *
 * Taking the lock from a busy firmware thread on another CPU means
 * waiting for it to let go (it does so between turns only after holding
 * the lock a while, vnet_card_pause()) and then winning the hand-over:
 * that was 42 to 45% of what a fault-in cost (design.rst, "The flush,
 * split", measured before this).  The firmware looks for commands after
 * every turn that sent something, between two received packets and
 * before and after each round, and a posted command ends the turn in
 * progress at its next send attempt (nic->fw.host_waits): a command waits
 * for the message in progress, not for the rest of a turn's burst.
 *
 * A command is run exactly once, under fw_lock, by whoever holds the lock
 * next at a point where the firmware touches no endpoint: the firmware
 * thread at a turn boundary, or the poster itself -- when the lock is
 * free, when the firmware does not get to it within VNET_FW_CALL_SPIN_NS
 * (a long turn, the firmware asleep, another holder), or when the
 * firmware has stopped.  With one CPU the firmware cannot run while the
 * poster spins, and the poster just takes the lock.  The poster waits no
 * longer than it would for the lock.
 */
#include <linux/ktime.h>
#include <linux/cpumask.h>
#include <linux/llist.h>
#include <linux/mutex.h>
#include <linux/sched.h>

#include "vnet.h"

/* About the longest the firmware holds fw_lock before it lets go anyway. */
#define VNET_FW_CALL_SPIN_NS	(50 * NSEC_PER_USEC)

/* Run every command posted so far, in the order posted. */
void vnet_fw_run_calls(struct vnet_nic *nic)
{
	struct vnet_fw_call *call, *next;
	struct llist_node *calls;

	lockdep_assert_held(&nic->fw_lock);
	/*
	 * Cleared before the list is read, the barrier pairing with the
	 * poster's llist_add(): a command posted after that read sets it
	 * again, one posted before is run now.  A poster whose command this
	 * takes may still set it: that costs one turn of one message.  Read
	 * first, so that turn boundaries write nothing when no command came.
	 */
	if (READ_ONCE(nic->fw.host_waits)) {
		WRITE_ONCE(nic->fw.host_waits, false);
		/* Pairs with llist_add() in vnet_fw_call_post(). */
		smp_mb();
	}
	/* Looked at between every two turns: no atomic when there is none. */
	if (llist_empty(&nic->fw_calls))
		return;
	calls = llist_del_all(&nic->fw_calls);
	llist_for_each_entry_safe(call, next, llist_reverse_order(calls),
				  node) {
		call->fn(nic, call->arg);
		/*
		 * Publishes what fn wrote to the poster, whose stack frame may
		 * be gone once it sees this store.
		 */
		smp_store_release(&call->done, 1);
	}
}

/* With fw_lock held: what is pending, then @fn(@nic, @arg); unlocks. */
static void vnet_fw_call_locked(struct vnet_nic *nic, vnet_fw_call_fn fn,
				void *arg)
{
	vnet_fw_run_calls(nic);
	fn(nic, arg);
	mutex_unlock(&nic->fw_lock);
}

/* With fw_lock held: what is pending, @call with it; unlocks. */
static void vnet_fw_run_posted(struct vnet_nic *nic, struct vnet_fw_call *call)
{
	vnet_fw_run_calls(nic);
	mutex_unlock(&nic->fw_lock);
	/*
	 * Whoever took the command off the list ran it and marked it done
	 * before letting go of the lock: ordered by it, the acquire only
	 * for the check.
	 */
	WARN_ON_ONCE(!smp_load_acquire(&call->done));
}

/*
 * Have @call->fn(@nic, @call->arg) run under fw_lock at the firmware's next
 * turn boundary, and return without waiting for it: the caller does what
 * else it must meanwhile, then vnet_fw_call_wait().  @call lives until then.
 */
void vnet_fw_call_post(struct vnet_nic *nic, struct vnet_fw_call *call)
{
	call->done = 0;
	call->ran_at_post = false;
	might_sleep();
	might_lock(&nic->fw_lock);
	/* A free lock: run it now, there is nothing to overlap it with. */
	if (mutex_trylock(&nic->fw_lock)) {
		vnet_fw_call_locked(nic, call->fn, call->arg);
		call->ran_at_post = true;
		return;
	}
	llist_add(&call->node, &nic->fw_calls);
	/* A busy firmware ends the turn in progress at its next message. */
	WRITE_ONCE(nic->fw.host_waits, true);
	/* An asleep firmware looks at its commands when it wakes. */
	vnet_card_doorbell(nic);
}

/*
 * Return once the command posted as @call has run.  May sleep; not to be
 * called with fw_lock or nic->lock held.
 */
void vnet_fw_call_wait(struct vnet_nic *nic, struct vnet_fw_call *call)
{
	u64 give_up;

	/* Run while we did something else: what it wrote is ours. */
	if (call->ran_at_post || smp_load_acquire(&call->done))
		return;
	/* With one CPU the holder cannot let go while we spin: queue up. */
	if (num_online_cpus() == 1) {
		mutex_lock(&nic->fw_lock);
		vnet_fw_run_posted(nic, call);
		return;
	}
	/* From here, as a wait for the lock would be: not from the post. */
	give_up = ktime_get_ns() + VNET_FW_CALL_SPIN_NS;
	/* Pairs with the runner's release: what the command read is ours. */
	while (!smp_load_acquire(&call->done)) {
		/* Free (the firmware between turns, another holder done). */
		if (!mutex_is_locked(&nic->fw_lock) &&
		    mutex_trylock(&nic->fw_lock)) {
			vnet_fw_run_posted(nic, call);
			return;
		}
		if (need_resched() || ktime_get_ns() > give_up ||
		    READ_ONCE(nic->fw_stopped)) {
			mutex_lock(&nic->fw_lock);
			vnet_fw_run_posted(nic, call);
			return;
		}
		cpu_relax();
	}
}

/*
 * Run @fn(@nic, @arg) under fw_lock, at the firmware's next turn boundary,
 * and return once it has run.  @fn must not sleep.  May sleep; not to be
 * called with fw_lock or nic->lock held.
 */
void vnet_fw_call(struct vnet_nic *nic, vnet_fw_call_fn fn, void *arg)
{
	struct vnet_fw_call call = { .fn = fn, .arg = arg };

	vnet_fw_call_post(nic, &call);
	vnet_fw_call_wait(nic, &call);
}
