// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libvnet: initialization, bundles, endpoints and their state -- tags,
 * translations, segments, handlers, credits.  Everything here is set up
 * once and read on the message path (am_send.c, am_recv.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "am_internal.h"

static pthread_mutex_t amv_global = PTHREAD_MUTEX_INITIALIZER;
static int amv_init_count;		/* atomic reads, written under amv_global */
static struct amvnet_eb *amv_bundles;	/* under amv_global */

bool amv_initialized(void)
{
	return __atomic_load_n(&amv_init_count, __ATOMIC_ACQUIRE) > 0;
}

int AM_Init(void)
{
	pthread_mutex_lock(&amv_global);
	__atomic_store_n(&amv_init_count, amv_init_count + 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&amv_global);
	return AM_OK;
}

static uint64_t amv_linger_until(void);
static void amv_free_bundle_locked(struct amvnet_eb *eb,
				   const uint64_t *linger_end);

int AM_Terminate(void)
{
	AMV_CHECK_INIT();
	AMV_CHECK(amv_in_handler(), RESOURCE);
	pthread_mutex_lock(&amv_global);
	if (amv_init_count == 1) {
		uint64_t end = amv_linger_until();

		while (amv_bundles)
			amv_free_bundle_locked(amv_bundles, &end);
	}
	__atomic_store_n(&amv_init_count, amv_init_count - 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&amv_global);
	return AM_OK;
}

int AM_MaxSegLength(uintptr_t *nbytes)
{
	AMV_CHECK_INIT();
	AMV_CHECK(!nbytes, BAD_ARG);
	*nbytes = (uintptr_t)VNET_MAX_SEG_LEN;
	return AM_OK;
}

/* Which NIC_INFO index is NIC @nic_id now; NICs come and go. */
static int amv_nic_info(struct amvnet_ep *ep, struct vnet_nic_info *info)
{
	uint32_t nic = ep->raw.name.nic, i;

	info->index = ep->nic_index;
	if (!ioctl(ep->raw.fd, VNET_IOC_NIC_INFO, info) && info->nic_id == nic)
		return 0;
	for (i = 0; i <= VNET_MAX_NIC_ID; i++) {
		info->index = i;
		if (ioctl(ep->raw.fd, VNET_IOC_NIC_INFO, info))
			return -errno;
		if (info->nic_id == nic) {
			ep->nic_index = i;
			return 0;
		}
	}
	return -ENODEV;
}

uint32_t amv_max_payload(struct amvnet_ep *ep, en_t dest)
{
	struct vnet_nic_info info;

	/* On the card itself a payload is a staging slot. */
	if (dest.nic == ep->raw.name.nic || amv_nic_info(ep, &info) ||
	    !info.max_payload || info.max_payload > VNET_MEDIUM_MAX)
		return VNET_MEDIUM_MAX;
	return info.max_payload;
}

int AMVNET_MaxPayload(ep_t ea, uint32_t *nbytes)
{
	struct vnet_nic_info info;

	AMV_CHECK_INIT();
	AMV_CHECK(!ea || !nbytes, BAD_ARG);
	if (amv_nic_info(ea, &info))
		return AM_ERR_RESOURCE;
	*nbytes = info.max_payload;
	return AM_OK;
}

int AM_AllocateBundle(int type, eb_t *endb)
{
	struct amvnet_eb *eb;

	AMV_CHECK_INIT();
	AMV_CHECK(type != AM_SEQ && type != AM_PAR, BAD_ARG);
	AMV_CHECK(!endb, BAD_ARG);
	AMV_CHECK(amv_in_handler(), RESOURCE);
	eb = calloc(1, sizeof(*eb));
	AMV_CHECK(!eb, RESOURCE);
	eb->mode = type;
	eb->event_mask = AM_NOEVENTS;
	eb->rescue_ms = AMVNET_DEFAULT_RESCUE_MS;
	pthread_mutex_lock(&amv_global);
	eb->next = amv_bundles;
	amv_bundles = eb;
	pthread_mutex_unlock(&amv_global);
	*endb = eb;
	return AM_OK;
}

static int amv_bundle_add(struct amvnet_eb *eb, struct amvnet_ep *ep)
{
	if (eb->nr_eps == eb->cap) {
		unsigned int cap = eb->cap ? 2 * eb->cap : 4;
		struct amvnet_ep **eps = realloc(eb->eps, cap * sizeof(*eps));

		if (!eps)
			return AM_ERR_RESOURCE;
		eb->eps = eps;
		eb->cap = cap;
	}
	eb->eps[eb->nr_eps++] = ep;
	ep->eb = eb;
	return AM_OK;
}

static bool amv_bundle_del(struct amvnet_eb *eb, struct amvnet_ep *ep)
{
	unsigned int i;

	for (i = 0; i < eb->nr_eps; i++) {
		if (eb->eps[i] != ep)
			continue;
		eb->eps[i] = eb->eps[--eb->nr_eps];
		return true;
	}
	return false;
}

/*
 * What a closing endpoint posted and the firmware has not taken goes with
 * it (the driver drops it).  A program's last message -- the STOP to its
 * server, the reply to a last request -- is often just that, so the calls
 * that close endpoints give the firmware until one deadline, AMV_LINGER_S
 * after the call, to take what they posted, as close(2) lets a socket's
 * data go.  Nothing here runs handlers: a message stuck behind a full
 * receive queue of this very endpoint is dropped when the time is up.
 */
#define AMV_LINGER_S	1

static uint64_t amv_linger_until(void)
{
	return amv_now_ns() + AMV_LINGER_S * 1000000000ull;
}

static void amv_linger(struct amvnet_ep *ep, const uint64_t *end)
{
	struct timespec nap = { 0, 200000 };
	unsigned int q;

	/* A forked child's copies: what they posted is the parent's. */
	if (!end || ep->owner != getpid())
		return;
	for (q = VNET_Q_REQ_SEND; q <= VNET_Q_REP_SEND; q++) {
		/*
		 * Nothing ever posted: reading the frame could only bring an
		 * idle endpoint back onto the card for nothing.
		 */
		if (!ep->raw.send_prod[q])
			continue;
		for (;;) {
			/* Its NIC gone, the frame would answer with SIGBUS. */
			if (ioctl(ep->raw.fd, VNET_IOC_KICK) && errno == ENODEV)
				return;
			if (vnet_endpoint_taken(&ep->raw, q,
						ep->raw.send_prod[q]))
				break;
			if (amv_now_ns() >= *end)
				return;
			nanosleep(&nap, NULL);
		}
	}
}

/* Close @ep, after lingering until @linger_end unless that is NULL. */
static void amv_free_ep(struct amvnet_ep *ep, const uint64_t *linger_end)
{
	amv_linger(ep, linger_end);
	vnet_endpoint_close(&ep->raw);
	pthread_mutex_destroy(&ep->lock);
	free(ep->runs);
	free(ep);
}

static void amv_free_bundle_locked(struct amvnet_eb *eb,
				   const uint64_t *linger_end)
{
	struct amvnet_eb **p;

	for (p = &amv_bundles; *p; p = &(*p)->next) {
		if (*p == eb) {
			*p = eb->next;
			break;
		}
	}
	while (eb->nr_eps)
		amv_free_ep(eb->eps[--eb->nr_eps], linger_end);
	free(eb->eps);
	free(eb);
}

static bool amv_bundle_known(struct amvnet_eb *eb)
{
	struct amvnet_eb *b;

	for (b = amv_bundles; b; b = b->next)
		if (b == eb)
			return true;
	return false;
}

int AM_FreeBundle(eb_t bundle)
{
	uint64_t end;

	AMV_CHECK_INIT();
	AMV_CHECK(!bundle, BAD_ARG);
	AMV_CHECK(amv_in_handler(), RESOURCE);
	pthread_mutex_lock(&amv_global);
	if (!amv_bundle_known(bundle)) {
		pthread_mutex_unlock(&amv_global);
		return AM_ERR_BAD_ARG;
	}
	end = amv_linger_until();
	amv_free_bundle_locked(bundle, &end);
	pthread_mutex_unlock(&amv_global);
	return AM_OK;
}

static int amv_errno_to_am(int err)
{
	switch (err) {
	case -EINVAL:
	case -EFAULT:
	case -ENOENT:
		return AM_ERR_BAD_ARG;
	case -EBUSY:
		return AM_ERR_IN_USE;
	default:
		return AM_ERR_RESOURCE;
	}
}

int AMVNET_AllocateEndpointOnNIC(eb_t bundle, uint32_t nic_id, ep_t *endp,
				 en_t *endpoint_name)
{
	struct amvnet_ep *ep;
	int err;

	AMV_CHECK_INIT();
	AMV_CHECK(!bundle || !endp || !endpoint_name, BAD_ARG);
	AMV_CHECK(nic_id > VNET_MAX_NIC_ID, BAD_ARG);
	AMV_CHECK(amv_in_handler(), RESOURCE);
	ep = calloc(1, sizeof(*ep));
	AMV_CHECK(!ep, RESOURCE);
	err = vnet_endpoint_open(&ep->raw, nic_id);
	if (err) {
		free(ep);
		/* No such NIC is a bad argument; the rest is resources. */
		return err == -ENODEV ? AM_ERR_BAD_ARG : AM_ERR_RESOURCE;
	}
	pthread_mutex_init(&ep->lock, NULL);
	ep->handler[0] = (handler_fn_t)amv_default_returned;
	ep->credits = AMVNET_DEFAULT_CREDITS;
	ep->tag = AM_NONE;
	ep->tok.ep = ep;
	ep->owner = getpid();
	err = amv_bundle_add(bundle, ep);
	if (err) {
		amv_free_ep(ep, NULL);
		return err;
	}
	*endp = ep;
	*endpoint_name = ep->raw.name;
	return AM_OK;
}

int AM_AllocateEndpoint(eb_t bundle, ep_t *endp, en_t *endpoint_name)
{
	return AMVNET_AllocateEndpointOnNIC(bundle, 0, endp, endpoint_name);
}

int AM_FreeEndpoint(ep_t ea)
{
	uint64_t end;

	AMV_CHECK_INIT();
	AMV_CHECK(!ea, BAD_ARG);
	AMV_CHECK(amv_in_handler(), RESOURCE);
	if (!amv_bundle_del(ea->eb, ea))
		return AM_ERR_BAD_ARG;
	end = amv_linger_until();
	amv_free_ep(ea, &end);
	return AM_OK;
}

int AM_MoveEndpoint(ep_t ea, eb_t from_bundle, eb_t to_bundle)
{
	AMV_CHECK_INIT();
	AMV_CHECK(!ea || !from_bundle || !to_bundle, BAD_ARG);
	AMV_CHECK(ea->eb != from_bundle, BAD_ARG);
	AMV_CHECK(amv_in_handler(), RESOURCE);
	if (from_bundle == to_bundle)
		return AM_OK;
	/* The endpoint's lock is not held: nothing else may use it now. */
	if (amv_bundle_add(to_bundle, ea))
		return AM_ERR_RESOURCE;
	amv_bundle_del(from_bundle, ea);
	return AM_OK;
}

int AM_SetSeg(ep_t ea, void *addr, uintptr_t nbytes)
{
	struct vnet_seg seg = { .addr = (uintptr_t)addr, .len = nbytes };
	int err = 0;

	AMV_CHECK_INIT();
	AMV_CHECK(!ea, BAD_ARG);
	AMV_CHECK(!addr && nbytes, BAD_ARG);
	AMV_CHECK(nbytes > VNET_MAX_SEG_LEN, BAD_ARG);
	AMV_CHECK(amv_in_handler(), RESOURCE);
	amv_lock(ea);
	if (ioctl(ea->raw.fd, VNET_IOC_SET_SEG, &seg))
		err = -errno;
	if (!err) {
		ea->seg_addr = nbytes ? addr : NULL;
		ea->seg_len = nbytes;
	}
	amv_unlock(ea);
	return err ? amv_errno_to_am(err) : AM_OK;
}

/*
 * Queries take the endpoint's lock, except in a handler: there the lock of
 * the handler's own endpoint is already held, and taking another one could
 * deadlock against a thread in that endpoint's handler doing the same.
 */
static bool amv_lock_query(struct amvnet_ep *ep)
{
	if (amv_in_handler())
		return false;
	amv_lock(ep);
	return true;
}

static void amv_unlock_query(struct amvnet_ep *ep, bool locked)
{
	if (locked)
		amv_unlock(ep);
}

int AM_GetSeg(ep_t ea, void **addr, uintptr_t *nbytes)
{
	bool locked;

	AMV_CHECK_INIT();
	AMV_CHECK(!ea || !addr || !nbytes, BAD_ARG);
	locked = amv_lock_query(ea);
	*addr = ea->seg_addr;
	*nbytes = ea->seg_len;
	amv_unlock_query(ea, locked);
	return AM_OK;
}

int AM_SetTag(ep_t ea, tag_t tag)
{
	int err;

	AMV_CHECK_INIT();
	AMV_CHECK(!ea, BAD_ARG);
	err = vnet_endpoint_set_tag(&ea->raw, tag);
	if (err)
		return amv_errno_to_am(err);
	__atomic_store_n(&ea->tag, tag, __ATOMIC_RELAXED);
	return AM_OK;
}

int AM_GetTag(ep_t ea, tag_t *tag)
{
	AMV_CHECK_INIT();
	AMV_CHECK(!ea || !tag, BAD_ARG);
	*tag = __atomic_load_n(&ea->tag, __ATOMIC_RELAXED);
	return AM_OK;
}

int AMVNET_RandomTag(tag_t *tag)
{
	AMV_CHECK(!tag, BAD_ARG);
	return vnet_tag_random(tag) ? AM_ERR_RESOURCE : AM_OK;
}

static int amv_map_locked(struct amvnet_ep *ep, int index, en_t name,
			  tag_t tag)
{
	int err;

	if (ep->xlate[index].inuse)
		return AM_ERR_RESOURCE;
	err = vnet_endpoint_map(&ep->raw, (uint32_t)index, name, tag);
	if (err)
		return amv_errno_to_am(err);
	ep->xlate[index].inuse = true;
	ep->xlate[index].name = name;
	ep->xlate[index].tag = tag;
	return AM_OK;
}

int AM_Map(ep_t ea, int index, en_t name, tag_t tag)
{
	int err;

	AMV_CHECK_INIT();
	AMV_CHECK(!ea || index < 0 || index >= AMVNET_MAX_TRANSLATIONS, BAD_ARG);
	AMV_CHECK(name.nic > VNET_MAX_NIC_ID, BAD_ARG);
	AMV_CHECK(amv_in_handler(), RESOURCE);
	amv_lock(ea);
	err = amv_map_locked(ea, index, name, tag);
	amv_unlock(ea);
	return err;
}

int AM_MapAny(ep_t ea, int *index, en_t name, tag_t tag)
{
	int i, err = AM_ERR_RESOURCE;

	AMV_CHECK_INIT();
	AMV_CHECK(!ea || !index, BAD_ARG);
	AMV_CHECK(name.nic > VNET_MAX_NIC_ID, BAD_ARG);
	AMV_CHECK(amv_in_handler(), RESOURCE);
	amv_lock(ea);
	for (i = 0; i < AMVNET_MAX_TRANSLATIONS; i++) {
		if (ea->xlate[i].inuse)
			continue;
		err = amv_map_locked(ea, i, name, tag);
		if (!err)
			*index = i;
		break;
	}
	amv_unlock(ea);
	return err;
}

int AM_UnMap(ep_t ea, int index)
{
	struct amvnet_xlate *x;
	uint32_t slot = (uint32_t)index;
	int err = AM_OK;

	AMV_CHECK_INIT();
	AMV_CHECK(!ea || index < 0 || index >= AMVNET_MAX_TRANSLATIONS, BAD_ARG);
	AMV_CHECK(amv_in_handler(), RESOURCE);
	amv_lock(ea);
	x = &ea->xlate[index];
	if (!x->inuse)
		err = AM_ERR_RESOURCE;
	else if (ioctl(ea->raw.fd, VNET_IOC_UNMAP, &slot))
		err = amv_errno_to_am(-errno);
	else
		x->inuse = false;
	amv_unlock(ea);
	return err;
}

int AM_Unmap(ep_t ea, int index)
{
	return AM_UnMap(ea, index);
}

/* The three translation queries read one entry under the lock. */
static int amv_xlate(ep_t ea, int index, struct amvnet_xlate *x)
{
	bool locked;

	AMV_CHECK_INIT();
	AMV_CHECK(!ea || index < 0 || index >= AMVNET_MAX_TRANSLATIONS, BAD_ARG);
	locked = amv_lock_query(ea);
	*x = ea->xlate[index];
	amv_unlock_query(ea, locked);
	return x->inuse ? AM_OK : AM_ERR_RESOURCE;
}

int AM_GetTranslationInuse(ep_t ea, int index)
{
	struct amvnet_xlate x;

	return amv_xlate(ea, index, &x);
}

int AM_GetTranslationTag(ep_t ea, int index, tag_t *tag)
{
	struct amvnet_xlate x;
	int err;

	AMV_CHECK(!tag, BAD_ARG);
	err = amv_xlate(ea, index, &x);
	if (!err)
		*tag = x.tag;
	return err;
}

int AM_GetTranslationName(ep_t ea, int index, en_t *gan)
{
	struct amvnet_xlate x;
	int err;

	AMV_CHECK(!gan, BAD_ARG);
	err = amv_xlate(ea, index, &x);
	if (!err)
		*gan = x.name;
	return err;
}

int AM_SetExpectedResources(ep_t ea, int n_endpoints,
			    int n_outstanding_requests)
{
	AMV_CHECK_INIT();
	AMV_CHECK(!ea || n_endpoints < 0, BAD_ARG);
	AMV_CHECK(n_outstanding_requests < 1, BAD_ARG);
	AMV_CHECK(n_outstanding_requests > AMVNET_MAX_CREDITS, RESOURCE);
	AMV_CHECK(amv_in_handler(), RESOURCE);
	amv_lock(ea);
	ea->credits = (uint32_t)n_outstanding_requests;
	amv_unlock(ea);
	return AM_OK;
}

int AMVNET_SetHandler(ep_t ea, handler_t handler, handler_fn_t function)
{
	AMV_CHECK_INIT();
	AMV_CHECK(!ea || !function, BAD_ARG);
	/* Handlers read the table under no lock: one atomic store. */
	__atomic_store_n(&ea->handler[handler], function, __ATOMIC_RELEASE);
	return AM_OK;
}

int AMVNET_SetHandlerAny(ep_t ea, handler_t *handler, handler_fn_t function)
{
	int i, err = AM_ERR_RESOURCE;

	AMV_CHECK_INIT();
	AMV_CHECK(!ea || !handler || !function, BAD_ARG);
	AMV_CHECK(amv_in_handler(), RESOURCE);
	amv_lock(ea);
	/* Handler 0 is the error handler, never a free entry. */
	for (i = 1; i < AM_MaxNumHandlers(); i++) {
		if (__atomic_load_n(&ea->handler[i], __ATOMIC_RELAXED))
			continue;
		__atomic_store_n(&ea->handler[i], function, __ATOMIC_RELEASE);
		*handler = (handler_t)i;
		err = AM_OK;
		break;
	}
	amv_unlock(ea);
	return err;
}

int AMVNET_GetStats(ep_t ea, struct amvnet_stats *stats)
{
	bool locked;

	AMV_CHECK_INIT();
	AMV_CHECK(!ea || !stats, BAD_ARG);
	locked = amv_lock_query(ea);
	*stats = ea->st;
	stats->credits = ea->credits;
	stats->outstanding = ea->outstanding;
	amv_unlock_query(ea, locked);
	return AM_OK;
}

int AMVNET_GetFd(ep_t ea)
{
	if (!amv_initialized())
		return -1;
	return ea ? ea->raw.fd : -1;
}
