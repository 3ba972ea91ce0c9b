// SPDX-License-Identifier: GPL-2.0
/*
 * Endpoints per user.  max_endpoints bounds one NIC; without a bound per
 * user one user could take every endpoint of every NIC, and with them the
 * memory each endpoint holds.  An endpoint is charged to its creator's real
 * uid (or to the owner of the creator's user namespace) when it is
 * created, on whichever NIC, and uncharged when its memory is freed.  Root
 * is counted like anyone else: a runaway daemon starves the others as
 * well, and the administrator can raise max_endpoints_per_user.
 */
#include <linux/cred.h>
#include <linux/err.h>
#include <linux/hashtable.h>
#include <linux/lockdep.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/uidgid.h>
#include <linux/user_namespace.h>

#include "vnet.h"

/* A user with endpoints; gone when the last one is. */
struct vnet_user {
	struct hlist_node node;		/* in vnet_users */
	kuid_t uid;
	unsigned int endpoints;		/* vnet_users_lock */
};

#define VNET_USERS_BITS		6

/* Protects vnet_users and every vnet_user's count. */
static DEFINE_SPINLOCK(vnet_users_lock);
static DEFINE_HASHTABLE(vnet_users, VNET_USERS_BITS);

static struct vnet_user *vnet_user_find(kuid_t uid)
{
	struct vnet_user *user;

	lockdep_assert_held(&vnet_users_lock);
	hash_for_each_possible(vnet_users, user, node, __kuid_val(uid))
		if (uid_eq(user->uid, uid))
			return user;
	return NULL;
}

/*
 * Who pays for the caller's endpoints: its real uid, or, inside a user
 * namespace, the user who created the outermost one.  Otherwise a user
 * with a range of subordinate uids would map them into a namespace and
 * have a quota for each.
 */
static kuid_t vnet_quota_payer(void)
{
	const struct user_namespace *ns = current_user_ns();
	kuid_t uid = current_uid();

	for (; ns != &init_user_ns; ns = ns->parent)
		uid = ns->owner;
	return uid;
}

/*
 * Charge one endpoint to the caller's payer.  Returns the user to hand to
 * vnet_quota_uncharge() later, ERR_PTR(-EDQUOT) when the user holds
 * max_endpoints_per_user already, or ERR_PTR(-ENOMEM).
 */
struct vnet_user *vnet_quota_charge(void)
{
	unsigned int max = READ_ONCE(vnet_max_endpoints_per_user);
	kuid_t uid = vnet_quota_payer();
	struct vnet_user *user, *fresh;

	/* Allocated before the lock, freed unused if the user is known. */
	fresh = kzalloc(sizeof(*fresh), GFP_KERNEL_ACCOUNT);
	if (!fresh)
		return ERR_PTR(-ENOMEM);

	spin_lock(&vnet_users_lock);
	user = vnet_user_find(uid);
	if (!user) {
		user = fresh;
		fresh = NULL;
		user->uid = uid;
		hash_add(vnet_users, &user->node, __kuid_val(uid));
	}
	if (user->endpoints < max)
		user->endpoints++;
	else
		user = ERR_PTR(-EDQUOT);
	spin_unlock(&vnet_users_lock);

	kfree(fresh);
	return user;
}

void vnet_quota_uncharge(struct vnet_user *user)
{
	spin_lock(&vnet_users_lock);
	if (--user->endpoints)
		user = NULL;
	else
		hash_del(&user->node);
	spin_unlock(&vnet_users_lock);
	kfree(user);
}
