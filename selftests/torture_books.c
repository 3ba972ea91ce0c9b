// SPDX-License-Identifier: GPL-2.0
/*
 * The ledger's books (torture_ledger.c keeps them): when the run has
 * drained, and whether they say what the ABI promises.
 */
#include <stdbool.h>

#include "torture.h"

/*
 * Drained: every client done, every server seen idle since, and every
 * request a server took answered, its reply arrived or back.
 */
bool t_ledger_settled(struct t_ctl *ctl)
{
	struct t_ledger *lg = &ctl->lg;
	uint32_t p, s, sent;

	for (p = 0; p < lg->npairs; p++) {
		struct t_pair *pp = &lg->pair[p];

		if (!__atomic_load_n(&pp->done, __ATOMIC_ACQUIRE) ||
		    !__atomic_load_n(&pp->srv_idle, __ATOMIC_ACQUIRE))
			return false;
		/* Its client's to write, while this process reads. */
		sent = __atomic_load_n(&pp->sent, __ATOMIC_ACQUIRE);
		for (s = 0; s < sent; s++) {
			struct t_entry *e = &lg->e[p][s];

			if (__atomic_load_n(&e->delivered, __ATOMIC_ACQUIRE) &&
			    !__atomic_load_n(&e->replied, __ATOMIC_ACQUIRE) &&
			    !__atomic_load_n(&e->rep_ret, __ATOMIC_ACQUIRE))
				return false;
		}
	}
	return true;
}

/*
 * The books, once the run drained.  Every request sent was taken at most
 * once; it was replied to, or came back, or its reply came back; one
 * taken was answered; "busy" means not taken; only "unreachable" leaves
 * it open whether it was.  Prints the figures, and what broke a rule.
 */
int t_ledger_check(struct t_ctl *ctl)
{
	struct t_ledger *lg = &ctl->lg;
	uint64_t sent = 0, delivered = 0, replied = 0, unresolved = 0;
	uint64_t req_ret[VNET_RET_NR + 1] = {}, rep_ret[VNET_RET_NR + 1] = {};
	uint64_t kinds[T_KINDS] = {}, bad = 0, late = 0;
	uint32_t p, s, r;
	char line[400];
	int n;

	for (r = 0; r < T_KINDS; r++)
		lg->kind_taken[r] = 0;
	for (p = 0; p < lg->npairs; p++) {
		struct t_pair *pp = &lg->pair[p];
		uint64_t taken = 0, maybe = 0, got = 0;

		for (s = 0; s < pp->sent; s++) {
			struct t_entry *e = &lg->e[p][s];
			bool ok = true;

			sent++;
			kinds[e->kind < T_KINDS ? e->kind : 0]++;
			delivered += e->delivered;
			taken += e->delivered;
			got += e->replied;
			replied += e->replied;
			if (e->delivered && e->kind < T_KINDS)
				lg->kind_taken[e->kind]++;
			if (e->req_ret)
				req_ret[e->req_reason < VNET_RET_NR ?
					e->req_reason : VNET_RET_NR]++;
			if (e->rep_ret)
				rep_ret[e->rep_reason < VNET_RET_NR ?
					e->rep_reason : VNET_RET_NR]++;
			if (e->req_ret && e->req_reason == VNET_RET_UNREACHABLE &&
			    !e->delivered)
				maybe++;
			if (e->delivered > 1 || e->replied > 1 ||
			    e->req_ret > 1 || e->rep_ret > 1)
				ok = false;
			if (!e->replied && !e->req_ret && !e->rep_ret) {
				unresolved++;
				ok = false;
			}
			if ((e->replied || e->rep_ret) && !e->delivered)
				ok = false;
			if (e->delivered && !e->replied && !e->rep_ret)
				ok = false;
			if (e->req_ret && e->delivered &&
			    e->req_reason != VNET_RET_UNREACHABLE)
				ok = false;
			if (e->replied && e->rep_ret &&
			    e->rep_reason != VNET_RET_UNREACHABLE)
				ok = false;
			if (ok)
				continue;
			if (bad++ < 8)
				t_say("# ledger: pair %u request %u (kind %u): "
				      "taken %u, replied %u, returned %u (%s), "
				      "reply returned %u (%s)", p, s, e->kind,
				      e->delivered, e->replied, e->req_ret,
				      t_reason(e->req_reason), e->rep_ret,
				      t_reason(e->rep_reason));
		}
		/*
		 * The firmware's count: what it delivered that the server
		 * never took can only be requests back "unreachable".
		 */
		if (pp->st_received < taken || pp->st_received > taken + maybe) {
			t_say("# ledger: pair %u: firmware delivered %llu, server "
			      "took %llu, %llu came back unreachable untaken", p,
			      (unsigned long long)pp->st_received,
			      (unsigned long long)taken,
			      (unsigned long long)maybe);
			bad++;
		}
		if (pp->st_received > taken)
			late += pp->st_received - taken;
		/* Every reply the client read, the firmware delivered. */
		if (pp->st_c_received < got) {
			t_say("# ledger: pair %u: firmware delivered %llu to the "
			      "client, which read %llu replies", p,
			      (unsigned long long)pp->st_c_received,
			      (unsigned long long)got);
			bad++;
		}
		if (pp->sent == T_MAX_SEQ)
			t_say("# ledger: pair %u sent all the %u requests the "
			      "ledger has room for", p, T_MAX_SEQ);
		if (pp->rejected) {
			t_say("# ledger: pair %u: %llu descriptors of its honest "
			      "endpoints rejected", p,
			      (unsigned long long)pp->rejected);
			bad++;
		}
	}
	t_say("# ledger: %u pairs (%u on vnet0, %u across vnet%d-vnet%d); "
	      "requests: %llu sent (short %llu, medium %llu, xfer %llu, "
	      "from segment %llu), %llu taken, %llu replied, %llu unresolved",
	      lg->npairs, lg->nlocal, lg->npairs - lg->nlocal, T_NIC_A,
	      T_NIC_B, (unsigned long long)sent,
	      (unsigned long long)kinds[T_SHORT],
	      (unsigned long long)kinds[T_MEDIUM],
	      (unsigned long long)kinds[T_XFER],
	      (unsigned long long)kinds[T_FROM_SEG],
	      (unsigned long long)delivered, (unsigned long long)replied,
	      (unsigned long long)unresolved);
	for (n = 0; n < 2; n++) {
		uint64_t *c = n ? rep_ret : req_ret, all = 0;
		int len = 0;

		for (r = 0; r <= VNET_RET_NR; r++)
			all += c[r];
		len = snprintf(line, sizeof(line), "# ledger: %s returned %llu",
			       n ? "replies" : "requests",
			       (unsigned long long)all);
		for (r = 0; r <= VNET_RET_NR && len < (int)sizeof(line); r++)
			if (c[r])
				len += snprintf(line + len, sizeof(line) - len,
						", %s %llu", t_reason(r),
						(unsigned long long)c[r]);
		t_say("%s", line);
	}
	if (late)
		t_say("# ledger: %llu requests back unreachable were delivered "
		      "after all, once their servers had stopped looking",
		      (unsigned long long)late);
	return bad ? -1 : 0;
}
