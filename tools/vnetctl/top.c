// SPDX-License-Identifier: GPL-2.0
/*
 * vnetctl top [--interval S] [--once] [--json] [-n COUNT]: the NICs and
 * their busiest endpoints as rates, refreshed in place.
 *
 * Everything comes from the counters sysfs already has (sysfs.c reads
 * them as vnetctl status does): a rate is the change of a counter between
 * two samples over the CLOCK_MONOTONIC time between them, so a stopped or
 * slow terminal never makes a rate wrong, only late.  The NIC has no
 * message counters of its own: its messages are the sum of its endpoints'.
 *
 * An endpoint is matched across samples by its index, a NIC by its name.
 * One that is new in the second sample was created in between, so all its
 * counts are new; a counter that went back belongs to a new endpoint under
 * a reused index, and counts likewise.  An endpoint closed in between takes
 * its last counts with it.  Tags are never read, so never shown.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "top.h"
#include "vnetctl.h"

struct top_opts {
	double interval;
	unsigned long count;		/* screens to print; 0: until quit */
	bool once;
	bool json;
};

/* One read of every NIC with its endpoints, and when it was taken. */
struct sample {
	struct vnetctl_nic *nics;
	size_t nr;
	double t;
};

/* Per-second rates of one endpoint over the interval. */
struct top_ep {
	const struct vnetctl_nic *nic;	/* in the newer sample */
	const struct vnetctl_ep *ep;
	double sent, received, returned, faults, evictions;
};

struct top_nic {
	const struct vnetctl_nic *nic;
	double sent, received, faults, evictions, retrans;
	bool has_retrans;
	struct top_ep *eps;		/* into view.eps */
	size_t nr_eps;
};

struct view {
	struct top_nic *nics;
	size_t nr_nics;
	struct top_ep *eps;
	size_t nr_eps;
	double seconds;
};

static int take(struct sample *s)
{
	double t0 = top_now();
	int err = vnetctl_read_nics(&s->nics, &s->nr, true);

	/*
	 * Reading every endpoint's files takes a while; the middle of it is
	 * the instant the sample stands for best.
	 */
	s->t = (t0 + top_now()) / 2;
	return err;
}

static void drop(struct sample *s)
{
	vnetctl_free_nics(s->nics, s->nr);
	s->nics = NULL;
	s->nr = 0;
}

static double rate(uint64_t before, uint64_t after, double seconds)
{
	return (double)(after >= before ? after - before : after) / seconds;
}

static int stat_index(const char *name)
{
	size_t i;

	for (i = 0; i < VNETCTL_NR_STATS; i++)
		if (!strcmp(vnetctl_stat_names[i], name))
			return (int)i;
	return -1;
}

static const struct vnetctl_nic *find_nic(const struct sample *s,
					  const char *name)
{
	size_t i;

	for (i = 0; i < s->nr; i++)
		if (!strcmp(s->nics[i].name, name))
			return &s->nics[i];
	return NULL;
}

static int cmp_index(const void *key, const void *elem)
{
	uint32_t k = *(const uint32_t *)key;
	const struct vnetctl_ep *ep = elem;

	return (k > ep->index) - (k < ep->index);
}

static void ep_rates(struct top_ep *r, const struct vnetctl_ep *a,
		     const struct vnetctl_ep *b, double s)
{
	static const struct vnetctl_ep zero;

	if (!a)
		a = &zero;
	r->ep = b;
	r->sent = rate(a->sent, b->sent, s);
	r->received = rate(a->received, b->received, s);
	r->returned = rate(a->returned, b->returned, s);
	r->faults = rate(a->faults, b->faults, s);
	r->evictions = rate(a->evictions, b->evictions, s);
}

/* Busiest first: messages, then paging, then by name for a steady order. */
static int cmp_busy(const void *x, const void *y)
{
	const struct top_ep *a = x, *b = y;
	double ma = a->sent + a->received, mb = b->sent + b->received;
	double pa = a->returned + a->faults + a->evictions;
	double pb = b->returned + b->faults + b->evictions;

	if (ma != mb)
		return ma < mb ? 1 : -1;
	if (pa != pb)
		return pa < pb ? 1 : -1;
	if (a->nic->nic_id != b->nic->nic_id)
		return a->nic->nic_id < b->nic->nic_id ? -1 : 1;
	return (a->ep->index > b->ep->index) - (a->ep->index < b->ep->index);
}

/*
 * The rates from @a to @b, pointing into @b.  With @per_nic each NIC's
 * endpoints are sorted on their own (JSON); otherwise all together.
 */
static int make_view(const struct sample *a, const struct sample *b,
		     bool per_nic, struct view *v)
{
	static const struct vnetctl_nic zero;
	int retrans = stat_index("retransmits");
	size_t i, j, n = 0;

	memset(v, 0, sizeof(*v));
	v->seconds = b->t - a->t;
	for (i = 0; i < b->nr; i++)
		n += b->nics[i].nr_eps;
	v->nics = calloc(b->nr ? b->nr : 1, sizeof(*v->nics));
	v->eps = calloc(n ? n : 1, sizeof(*v->eps));
	if (!v->nics || !v->eps) {
		free(v->nics);
		free(v->eps);
		return -ENOMEM;
	}
	v->nr_nics = b->nr;
	for (i = 0; i < b->nr; i++) {
		const struct vnetctl_nic *nb = &b->nics[i];
		const struct vnetctl_nic *na = find_nic(a, nb->name);
		struct top_nic *t = &v->nics[i];
		double s = v->seconds;

		if (!na)
			na = &zero;
		t->nic = nb;
		t->faults = rate(na->faults, nb->faults, s);
		t->evictions = rate(na->evictions, nb->evictions, s);
		if (retrans >= 0 && na->stats_present & nb->stats_present &
		    1ull << retrans) {
			t->has_retrans = true;
			t->retrans = rate(na->stats[retrans], nb->stats[retrans],
					  s);
		}
		t->eps = &v->eps[v->nr_eps];
		for (j = 0; j < nb->nr_eps; j++) {
			const struct vnetctl_ep *eb = &nb->eps[j], *ea = NULL;
			struct top_ep *r = &t->eps[j];

			if (na->nr_eps)
				ea = bsearch(&eb->index, na->eps, na->nr_eps,
					     sizeof(*na->eps), cmp_index);
			r->nic = nb;
			ep_rates(r, ea, eb, s);
			t->sent += r->sent;
			t->received += r->received;
		}
		t->nr_eps = nb->nr_eps;
		v->nr_eps += nb->nr_eps;
		if (per_nic)
			qsort(t->eps, t->nr_eps, sizeof(*t->eps), cmp_busy);
	}
	if (!per_nic)
		qsort(v->eps, v->nr_eps, sizeof(*v->eps), cmp_busy);
	return 0;
}

static void free_view(struct view *v)
{
	free(v->nics);
	free(v->eps);
	memset(v, 0, sizeof(*v));
}

/* Lines of one screen, no more than the terminal has rows for. */
struct screen {
	size_t left;
	const char *eol;
};

__printf(2, 3) static bool line(struct screen *o, const char *fmt, ...)
{
	va_list ap;

	if (!o->left)
		return false;
	o->left--;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fputs(o->eol, stdout);
	return true;
}

static void print_screen(const struct view *v, double interval)
{
	struct screen o = { top_term_rows(), top_term_eol() };
	size_t i;

	top_term_home();
	line(&o, "vnetctl top: %zu NIC%s, %zu endpoint%s, every %g s, rates over %.2f s%s",
	     v->nr_nics, v->nr_nics == 1 ? "" : "s", v->nr_eps,
	     v->nr_eps == 1 ? "" : "s", interval, v->seconds,
	     top_term_keys() ? "; q quits" : "");
	line(&o, "%-7s %3s %9s %9s %8s %8s %9s %8s %9s", "NIC", "ID",
	     "SENT/S", "RECV/S", "FAULTS/S", "EVICT/S", "RETRANS/S",
	     "RESIDENT", "ENDPOINTS");
	for (i = 0; i < v->nr_nics; i++) {
		const struct top_nic *t = &v->nics[i];
		char res[32], retr[32];

		snprintf(res, sizeof(res), "%" PRIu64 "/%" PRIu32,
			 t->nic->resident, t->nic->frames);
		if (t->has_retrans)
			snprintf(retr, sizeof(retr), "%.1f", t->retrans);
		else
			snprintf(retr, sizeof(retr), "-");
		line(&o, "%-7s %3" PRIu32 " %9.1f %9.1f %8.1f %8.1f %9s %8s %9" PRIu64,
		     t->nic->name, t->nic->nic_id, t->sent, t->received,
		     t->faults, t->evictions, retr, res, t->nic->endpoints);
	}
	line(&o, "%s", "");
	line(&o, "%-8s %-11s %5s %7s %8s %8s %8s %8s %8s", "ENDPOINT", "STATE",
	     "FRAME", "PID", "SENT/S", "RECV/S", "RET/S", "FAULTS/S",
	     "EVICT/S");
	for (i = 0; i < v->nr_eps; i++) {
		const struct top_ep *r = &v->eps[i];
		char id[24], frame[16], pid[16];

		snprintf(id, sizeof(id), "%" PRIu32 ":%" PRIu32,
			 r->nic->nic_id, r->ep->index);
		snprintf(frame, sizeof(frame), "%" PRId32, r->ep->frame);
		snprintf(pid, sizeof(pid), "%" PRId32, r->ep->pid);
		if (r->ep->frame < 0)
			strcpy(frame, "-");
		if (r->ep->pid < 0)
			strcpy(pid, "-");
		if (!line(&o, "%-8s %-11s %5s %7s %8.1f %8.1f %8.1f %8.1f %8.1f",
			  id, r->ep->state, frame, pid, r->sent, r->received,
			  r->returned, r->faults, r->evictions))
			break;
	}
	top_term_end_screen();
}

/* The last screen again, or before the first what it waits for. */
static void redraw(const struct view *v, double interval)
{
	if (v->nics) {
		print_screen(v, interval);
	} else {
		top_term_home();
		printf("vnetctl top: measuring for %g s%s", interval,
		       top_term_eol());
		top_term_end_screen();
	}
	fflush(stdout);
}

static void print_json(const struct view *v)
{
	struct json j;
	size_t i, k;

	json_init(&j, stdout);
	json_open(&j, NULL, '{');
	json_f64(&j, "seconds", v->seconds);
	json_open(&j, "nics", '[');
	for (i = 0; i < v->nr_nics; i++) {
		const struct top_nic *t = &v->nics[i];

		json_open(&j, NULL, '{');
		json_str(&j, "name", t->nic->name);
		json_u64(&j, "nic_id", t->nic->nic_id);
		json_str(&j, "ifname", t->nic->ifname);
		json_u64(&j, "frames", t->nic->frames);
		json_u64(&j, "resident", t->nic->resident);
		json_u64(&j, "endpoints_count", t->nic->endpoints);
		json_f64(&j, "sent_per_s", t->sent);
		json_f64(&j, "received_per_s", t->received);
		json_f64(&j, "faults_per_s", t->faults);
		json_f64(&j, "evictions_per_s", t->evictions);
		if (t->has_retrans)
			json_f64(&j, "retransmits_per_s", t->retrans);
		json_open(&j, "endpoints", '[');
		for (k = 0; k < t->nr_eps; k++) {
			const struct top_ep *r = &t->eps[k];
			char id[32];

			json_open(&j, NULL, '{');
			snprintf(id, sizeof(id), "%" PRIu32 ":%" PRIu32,
				 t->nic->nic_id, r->ep->index);
			json_str(&j, "id", id);
			json_u64(&j, "index", r->ep->index);
			json_str(&j, "state", r->ep->state);
			json_s64(&j, "frame", r->ep->frame);
			if (r->ep->pid >= 0)
				json_s64(&j, "pid", r->ep->pid);
			json_f64(&j, "sent_per_s", r->sent);
			json_f64(&j, "received_per_s", r->received);
			json_f64(&j, "returned_per_s", r->returned);
			json_f64(&j, "faults_per_s", r->faults);
			json_f64(&j, "evictions_per_s", r->evictions);
			json_close(&j, '}');
		}
		json_close(&j, ']');
		json_close(&j, '}');
	}
	json_close(&j, ']');
	json_close(&j, '}');
}

static int usage_error(const char *fmt, const char *arg)
{
	char msg[128];

	snprintf(msg, sizeof(msg), fmt, arg);
	vnetctl_msg("top: %s", msg);
	vnetctl_usage(stderr);
	return VNETCTL_EXIT_USAGE;
}

static int parse_opts(int argc, char **argv, struct top_opts *o)
{
	int a;

	memset(o, 0, sizeof(*o));
	o->interval = 1;
	for (a = 1; a < argc; a++) {
		const char *arg = argv[a], *val;
		bool is_n = !strcmp(arg, "-n");
		char *end;

		if (!strcmp(arg, "--once")) {
			o->once = true;
			continue;
		}
		if (!strcmp(arg, "--json")) {
			o->json = true;
			continue;
		}
		if (strcmp(arg, "--interval") && !is_n) {
			if (!strncmp(arg, "--interval=", 11))
				val = arg + 11;
			else
				return usage_error("unknown option '%s'", arg);
		} else if (a + 1 < argc) {
			val = argv[++a];
		} else {
			return usage_error("option '%s' needs a value", arg);
		}
		errno = 0;
		if (is_n) {
			o->count = strtoul(val, &end, 10);
			if (errno || end == val || *end || *val == '-' ||
			    !o->count)
				return usage_error("bad count '%s' for -n", val);
		} else {
			/* Under 10 ms the reads of sysfs are most of it. */
			o->interval = strtod(val, &end);
			if (errno || end == val || *end ||
			    !isfinite(o->interval) || o->interval < 0.01 ||
			    o->interval > 86400)
				return usage_error("bad value '%s' for --interval",
						   val);
		}
	}
	if (o->once && o->count)
		return usage_error("%s", "--once and -n exclude each other");
	if (o->once)
		o->count = 1;
	return 0;
}

int vnetctl_cmd_top(int argc, char **argv)
{
	struct sample a = { 0 }, b = { 0 };
	struct view v = { 0 };
	enum top_wake w = TOP_TICK;
	struct top_opts o;
	unsigned long shown = 0;
	double deadline;
	int err, ret = VNETCTL_EXIT_OK;

	err = parse_opts(argc, argv, &o);
	if (err)
		return err;
	top_term_start(!o.once && !o.json);
	err = take(&a);
	if (err)
		goto sysfs_failed;
	if (top_term_redraws())
		redraw(&v, o.interval);
	deadline = a.t;
	while (!o.count || shown < o.count) {
		/* From the last deadline, not from now: no drift. */
		deadline += o.interval;
		while ((w = top_term_wait(deadline)) == TOP_REDRAW)
			redraw(&v, o.interval);
		if (w == TOP_QUIT)
			break;
		err = take(&b);
		if (err)
			goto sysfs_failed;
		free_view(&v);
		if (make_view(&a, &b, o.json, &v)) {
			drop(&b);
			vnetctl_err(ENOMEM, "top");
			ret = VNETCTL_EXIT_FAIL;
			break;
		}
		drop(&a);
		a = b;
		b.nics = NULL;
		if (o.json)
			print_json(&v);
		else if (!top_term_redraws() && shown)
			printf("\n");
		if (!o.json)
			print_screen(&v, o.interval);
		if (fflush(stdout) || ferror(stdout)) {
			top_term_restore();
			vnetctl_err(errno ? errno : EIO, "stdout");
			ret = VNETCTL_EXIT_FAIL;
			break;
		}
		shown++;
		/* Late by more than an interval: start over from now. */
		if (top_now() > deadline + o.interval)
			deadline = top_now();
	}
	top_term_restore();
	free_view(&v);
	drop(&a);
	return ret;

sysfs_failed:
	top_term_restore();
	free_view(&v);
	drop(&a);
	return vnetctl_sysfs_error(err);
}
