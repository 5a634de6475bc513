/* guard.c -- find protection, tag every VPG, read the task, wait for the tag. */
#include "zerto/guard.h"

#include "zerto/api.h"
#include "zerto/policy.h"

#include "lib/deadline.h"
#include "lib/buf.h"
#include "lib/log.h"
#include "lib/xalloc.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_VPGS             16    /* a VM is in at most three; more is a bad answer */
#define CADENCE_SHORT_S      600   /* first look for checkpoints to measure cadence */
#define CADENCE_LONG_S       7200  /* second look when the first had too few */
#define CADENCE_MIN_STAMPS   4     /* three gaps make a median worth having */
#define CADENCE_MAX_GAPS     20    /* the recent past, not the whole journal */
#define TAG_SEARCH_MARGIN_MS 60000 /* list checkpoints from insert time minus this */
#define REQUESTS_OUTSIDE_WAITS                                                                     \
	20 /* localsite, vms, 2 x time, per VPG: 2 cadence, tasks, insert                          \
	    */

enum phase { PH_NEW, PH_TASK, PH_TAG, PH_DONE }; /* NEW: not inserted yet */

struct vpg_work {
	struct zerto_rewind_point *pt;
	enum phase phase;
	bool locked;
	/* The insert's answer did not come (a timeout, a 5xx): it may have
	 * happened, so its tag is looked for as if its task had Completed. */
	bool unanswered;
	double deadline;  /* monotonic seconds, for the current phase */
	double next_poll; /* monotonic seconds */
	int transient;    /* transient poll errors seen */
};

struct guard {
	struct zerto_client *c;
	const struct zerto_guard_request *req;
	const struct zerto_guard_hooks *hooks;
	struct zerto_guard_result *out;
	struct vpg_work *w;
	const char *lid; /* log prefix */
	const char *vm;  /* the VM as the operator knows it, for messages */
	double t0;
	double deadline_s; /* the outer deadline, monotonic seconds */
	double scale;
	int64_t since_ms; /* ZVM time: list tagged checkpoints from here */
	bool gone;        /* the request was withdrawn */
};

static long since_start_ms(const struct guard *g)
{
	return (long)((deadline_now_s() - g->t0) * 1000.0);
}

/* Sleeps until monotonic time t, never past the outer deadline (or not at
 * all if either has passed). */
static void sleep_until(const struct guard *g, double t)
{
	struct timespec ts;
	double d = (t < g->deadline_s ? t : g->deadline_s) - deadline_now_s();

	if (d <= 0)
		return;
	ts.tv_sec = (time_t)d;
	ts.tv_nsec = (long)((d - (double)ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

const char *zerto_outcome_str(enum zerto_outcome o)
{
	switch (o) {
	case ZERTO_GUARD_NONE:
		return "none";
	case ZERTO_GUARD_AMBIGUOUS:
		return "ambiguous";
	case ZERTO_GUARD_REFUSED:
		return "refused";
	case ZERTO_GUARD_OK:
		return "ok";
	}
	return "refused";
}

/* Records an event (hook + log line) and deletes detail. */
static void emit(struct guard *g, const char *name, cJSON *detail)
{
	char *flat = cJSON_PrintUnformatted(detail);
	char q[600];

	if (g->hooks != NULL && g->hooks->event != NULL)
		g->hooks->event(g->hooks->ctx, name, detail);
	log_msg(LOG_INFO, "%s%sevt=%s detail=%s", g->lid, g->lid[0] ? " " : "", name,
	        log_quote(flat ? flat : "{}", q, sizeof(q)));
	cJSON_free(flat);
	cJSON_Delete(detail);
}

static void set_message(struct guard *g, enum zerto_outcome o, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_message(struct guard *g, enum zerto_outcome o, const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		fatal("out of memory"); /* as xalloc does */
	va_end(ap);
	free(g->out->message);
	g->out->message = s;
	g->out->outcome = o;
}

/* True once the outer deadline has passed; the refusal then says so, and
 * whether an insert had been started (it may still complete in Zerto). */
static bool past_outer(struct guard *g, const char *doing)
{
	bool inserted = false;

	if (deadline_now_s() < g->deadline_s)
		return false;
	for (size_t i = 0; g->w != NULL && i < g->out->npoints; i++)
		inserted = inserted || g->out->points[i].task_id != NULL;
	set_message(g, ZERTO_GUARD_REFUSED,
	            "Zerto guard refused: the guard ran past its outer deadline of %.1f s while "
	            "%s. %s The command did not run. Submit the request again; if this "
	            "repeats, look at how fast the ZVM answers.",
	            g->deadline_s - g->t0, doing,
	            inserted ? "A checkpoint insert was started but is not confirmed."
	                     : "No checkpoint was inserted.");
	cJSON *d = cJSON_CreateObject();
	cJSON_AddStringToObject(d, "doing", doing);
	cJSON_AddNumberToObject(d, "deadline_ms", (g->deadline_s - g->t0) * 1000.0);
	cJSON_AddBoolToObject(d, "inserted", inserted);
	emit(g, "guard.deadline", d);
	return true;
}

/* True once the request was withdrawn (the hook says so); the refusal then
 * says so, once. */
static bool withdrawn(struct guard *g)
{
	if (g->gone)
		return true;
	if (g->hooks == NULL || g->hooks->withdrawn == NULL || !g->hooks->withdrawn(g->hooks->ctx))
		return false;
	g->gone = true;
	set_message(g, ZERTO_GUARD_REFUSED,
	            "Zerto guard stopped: the request was withdrawn (cancelled) while its guard "
	            "ran. The command did not run.");
	emit(g, "guard.withdrawn", cJSON_CreateObject());
	return true;
}

/* A refusal caused by a failed ZVM call: what happened, that nothing ran,
 * and what to do, by kind of failure. */
static void refuse_err(struct guard *g, const char *doing, const struct zerto_err *e)
{
	const char *url = zerto_client_base_url(g->c);

	switch (e->kind) {
	case ZERTO_ERR_UNREACHABLE:
		set_message(g, ZERTO_GUARD_REFUSED,
		            "Zerto guard refused: the ZVM at %s did not answer while %s (%s). No "
		            "checkpoint was confirmed, so the command did not run. Check that the "
		            "ZVM is up and reachable from airlock (URL, CA bundle, firewall), then "
		            "submit the request again.",
		            url, doing, e->msg);
		break;
	case ZERTO_ERR_AUTH:
		set_message(
		    g, ZERTO_GUARD_REFUSED,
		    "Zerto guard refused: the ZVM at %s refused airlock's credentials while "
		    "%s (%s). No checkpoint was made, so the command did not run. Check the "
		    "client id, secret and Keycloak roles in airlock's zerto config, then "
		    "submit the request again.",
		    url, doing, e->msg);
		break;
	case ZERTO_ERR_SHAPE:
		set_message(g, ZERTO_GUARD_REFUSED,
		            "Zerto guard refused: the ZVM at %s gave an answer airlock cannot use "
		            "while %s (%s). No checkpoint was confirmed, so the command did not "
		            "run. Report this with the ZVM version; airlock may need an update.",
		            url, doing, e->msg);
		break;
	default:
		set_message(g, ZERTO_GUARD_REFUSED,
		            "Zerto guard refused: the ZVM at %s answered with an error while %s "
		            "(%s). No checkpoint was confirmed, so the command did not run. Check "
		            "the ZVM's health in the Zerto UI, then submit the request again.",
		            url, doing, e->msg);
		break;
	}
	cJSON *d = cJSON_CreateObject();
	cJSON_AddStringToObject(d, "while", doing);
	cJSON_AddStringToObject(d, "error", e->msg);
	cJSON_AddNumberToObject(d, "http_status", (double)e->http_status);
	emit(g, "guard.zvm_error", d);
}

/* Step 1.  Fills rows; sets NONE / AMBIGUOUS messages; -1 on ZVM error. */
static int find(struct guard *g, struct zerto_vm_row **rows, size_t *n)
{
	struct zerto_err e = {0};
	const struct zerto_guard_request *r = g->req;

	if (zerto_list_vms(g->c, r->vm_id, r->vm_id ? NULL : r->vm_name, rows, n, &e) < 0) {
		refuse_err(g, "looking up the VM's protection", &e);
		return -1;
	}
	cJSON *d = cJSON_CreateObject();
	cJSON_AddStringToObject(d, "vm", g->vm);
	cJSON *arr = cJSON_AddArrayToObject(d, "rows");
	for (size_t i = 0; i < *n; i++) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "vm_id", (*rows)[i].vm_id);
		cJSON_AddStringToObject(o, "vpg_id", (*rows)[i].vpg_id);
		cJSON_AddStringToObject(o, "vpg_name", (*rows)[i].vpg_name);
		cJSON_AddNumberToObject(o, "status", (*rows)[i].status);
		cJSON_AddNumberToObject(o, "substatus", (*rows)[i].substatus);
		cJSON_AddItemToArray(arr, o);
	}
	emit(g, "guard.find", d);
	return 0;
}

/* Step 2: every protecting VPG must be taggable now. */
static int check_taggable(struct guard *g, const struct zerto_vm_row *rows, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (zerto_vpg_taggable(rows[i].status, rows[i].substatus))
			continue;
		set_message(
		    g, ZERTO_GUARD_REFUSED,
		    "Zerto guard refused: VPG '%s' protecting %s is %s/%s (Status %d, "
		    "SubStatus %d): it is not protecting, or it is syncing, so it cannot take "
		    "a tagged checkpoint (a resync deletes checkpoints). No checkpoint was "
		    "inserted into any VPG and the command did not run. Wait until the VPG "
		    "is Meeting SLA with no sync in progress (Zerto UI), then submit the "
		    "request again.",
		    rows[i].vpg_name, g->vm, zerto_vpg_status_name(rows[i].status),
		    zerto_vpg_substatus_name(rows[i].substatus), rows[i].status, rows[i].substatus);
		cJSON *d = cJSON_CreateObject();
		cJSON_AddStringToObject(d, "vpg", rows[i].vpg_name);
		cJSON_AddNumberToObject(d, "status", rows[i].status);
		cJSON_AddNumberToObject(d, "substatus", rows[i].substatus);
		emit(g, "guard.not_taggable", d);
		return -1;
	}
	return 0;
}

/* Median gap of the VPG's recent automatic checkpoints; -1 when too few. */
static int measure_cadence(struct guard *g, struct vpg_work *w, int64_t zvm_now)
{
	const long windows[] = {CADENCE_SHORT_S, CADENCE_LONG_S};
	struct zerto_err e = {0};
	double cadence = -1;

	for (size_t k = 0; k < 2; k++) {
		struct zerto_checkpoint *cps = NULL;
		size_t n = 0, m = 0;

		if (zerto_list_checkpoints(g->c, w->pt->vpg_id, zvm_now - windows[k] * 1000, 0,
		                           &cps, &n, &e) < 0) {
			refuse_err(g, "measuring the VPG's checkpoint cadence", &e);
			return -1;
		}
		int64_t *stamps = xcalloc(n + 1, sizeof(*stamps));
		for (size_t i = 0; i < n; i++)
			if (cps[i].tag == NULL) /* inserts are off-cadence */
				stamps[m++] = cps[i].ts_ms;
		if (m >= CADENCE_MIN_STAMPS || k == 1)
			cadence = zerto_cadence_s(stamps, m, CADENCE_MAX_GAPS);
		free(stamps);
		zerto_checkpoints_free(cps, n);
		if (m >= CADENCE_MIN_STAMPS)
			break;
	}
	w->pt->cadence_s = cadence;
	w->pt->budget_s = zerto_budget_s(cadence);
	cJSON *d = cJSON_CreateObject();
	cJSON_AddStringToObject(d, "vpg", w->pt->vpg_name);
	cJSON_AddNumberToObject(d, "cadence_s", cadence);
	cJSON_AddNumberToObject(d, "budget_s", w->pt->budget_s);
	cJSON_AddNumberToObject(d, "poll_s", zerto_poll_s(cadence));
	emit(g, "guard.cadence", d);
	return 0;
}

static int cmp_work(const void *a, const void *b)
{
	const struct vpg_work *x = a, *y = b;

	return strcmp(x->pt->vpg_id, y->pt->vpg_id);
}

/* Step 3a: every VPG's lock, in id order, within one shared deadline. */
static int lock_all(struct guard *g, size_t n)
{
	double wait_s = 0;

	for (size_t i = 0; i < n; i++) {
		double b = (double)zerto_guard_budget_ms(g->c, g->w[i].pt->cadence_s) / 1000.0;
		if (b > wait_s)
			wait_s = b;
	}
	double deadline = deadline_now_s() + wait_s;
	if (deadline > g->deadline_s)
		deadline = g->deadline_s;
	for (size_t i = 0; i < n; i++) {
		struct vpg_work *w = &g->w[i];
		long left = (long)((deadline - deadline_now_s()) * 1000.0);

		if (g->hooks == NULL || g->hooks->lock_vpg == NULL)
			continue; /* a single process with no other workers */
		if (left < 0 || g->hooks->lock_vpg(g->hooks->ctx, w->pt->vpg_id, left) < 0) {
			set_message(
			    g, ZERTO_GUARD_REFUSED,
			    "Zerto guard refused: another checkpoint insert on VPG '%s' was "
			    "still in progress after %.0f s (inserts on one VPG are "
			    "serialized; two at once make the second fail). No checkpoint was "
			    "inserted and the command did not run. Submit the request again; if "
			    "this repeats, look for a stuck airlock worker.",
			    w->pt->vpg_name, wait_s);
			return -1;
		}
		w->locked = true;
		w->pt->lock_ms = since_start_ms(g);
	}
	return 0;
}

static void unlock(struct guard *g, struct vpg_work *w)
{
	if (!w->locked)
		return;
	w->locked = false;
	if (g->hooks != NULL && g->hooks->unlock_vpg != NULL)
		g->hooks->unlock_vpg(g->hooks->ctx, w->pt->vpg_id);
}

/* Step 3b: insert the tag; the first task poll happens at once. */
static int insert(struct guard *g, struct vpg_work *w)
{
	struct zerto_err e = {0};

	if (zerto_insert_checkpoint(g->c, w->pt->vpg_id, g->out->tag, &w->pt->task_id, &e) < 0) {
		if (e.kind == ZERTO_ERR_UNREACHABLE ||
		    (e.kind == ZERTO_ERR_HTTP && (e.http_status >= 500 || e.http_status == 429))) {
			/* No answer is not a no: the ZVM may have taken the insert.
			 * Its tag, which only this request uses, says whether it did:
			 * looked for with the tag's budget, as after a Completed task. */
			w->unanswered = true;
			w->pt->unanswered = true;
			w->pt->insert_ms = since_start_ms(g);
			w->phase = PH_TAG;
			w->deadline = deadline_now_s() + w->pt->budget_s / g->scale;
			w->next_poll = deadline_now_s();
			cJSON *d = cJSON_CreateObject();
			cJSON_AddStringToObject(d, "vpg", w->pt->vpg_name);
			cJSON_AddStringToObject(d, "error", e.msg);
			cJSON_AddStringToObject(d, "tag", g->out->tag);
			cJSON_AddStringToObject(
			    d, "then",
			    "the insert may have happened: its tag is looked for on the ZVM");
			emit(g, "guard.insert_unanswered", d);
			return 0;
		}
		if (e.kind == ZERTO_ERR_HTTP && e.http_status == 400) {
			set_message(
			    g, ZERTO_GUARD_REFUSED,
			    "Zerto guard refused: the ZVM rejected the tagged checkpoint on "
			    "VPG '%s' (%s). Tagged checkpoints may be unsupported for this "
			    "VPG's protected site (Azure/AWS). The insert did not happen and "
			    "the command did not run. Insert checkpoints through the "
			    "vSphere-protected ZVM, or fix the VPG in the Zerto UI, then submit "
			    "the request again.",
			    w->pt->vpg_name, e.msg);
			cJSON *d = cJSON_CreateObject();
			cJSON_AddStringToObject(d, "vpg", w->pt->vpg_name);
			cJSON_AddStringToObject(d, "error", e.msg);
			emit(g, "guard.insert_rejected", d);
		} else {
			refuse_err(g, "inserting the tagged checkpoint", &e);
		}
		return -1;
	}
	w->pt->insert_ms = since_start_ms(g);
	w->phase = PH_TASK;
	w->deadline = deadline_now_s() + w->pt->budget_s / g->scale;
	w->next_poll = deadline_now_s();
	cJSON *d = cJSON_CreateObject();
	cJSON_AddStringToObject(d, "vpg", w->pt->vpg_name);
	cJSON_AddStringToObject(d, "task_id", w->pt->task_id);
	cJSON_AddStringToObject(d, "tag", g->out->tag);
	emit(g, "guard.insert", d);
	return 0;
}

/* A poll failed: transient (no answer, 5xx, 429) keeps polling to the deadline. */
static int poll_error(struct guard *g, struct vpg_work *w, const char *doing,
                      const struct zerto_err *e)
{
	char lq[512];
	bool transient =
	    e->kind == ZERTO_ERR_UNREACHABLE ||
	    (e->kind == ZERTO_ERR_HTTP && (e->http_status >= 500 || e->http_status == 429));

	if (!transient || deadline_now_s() >= w->deadline) {
		refuse_err(g, doing, e);
		return -1;
	}
	w->transient++;
	log_msg(LOG_WARN, "%s%sevt=guard.poll_error vpg=%s n=%d", g->lid, g->lid[0] ? " " : "",
	        log_quote(w->pt->vpg_name, lq, sizeof(lq)), w->transient);
	return 0;
}

static void schedule(struct guard *g, struct vpg_work *w, double poll_s)
{
	double t = deadline_now_s() + poll_s / g->scale;

	/* The last look happens at the deadline, not a poll interval after it. */
	w->next_poll = t < w->deadline ? t : w->deadline;
	(void)g;
}

/* Step 4: one look at the insert's task. */
static int poll_task(struct guard *g, struct vpg_work *w)
{
	struct zerto_task t = {0};
	struct zerto_err e = {0};
	char sb[24];
	int rc = -1;

	if (zerto_get_task(g->c, w->pt->task_id, &t, &e) < 0) {
		rc = poll_error(g, w, "reading the checkpoint insert's task", &e);
		if (rc == 0)
			schedule(g, w, zerto_task_poll_s(w->pt->cadence_s));
		goto out;
	}
	w->pt->task_state = t.state;
	const char *sname = zerto_task_state_name(t.state, sb, sizeof(sb));
	if (!zerto_task_terminal(t.state)) {
		if (deadline_now_s() >= w->deadline) {
			set_message(
			    g, ZERTO_GUARD_REFUSED,
			    "Zerto guard refused: the checkpoint insert task %s on VPG '%s' "
			    "was still %s (%d) after %.0f s. The checkpoint is not confirmed, "
			    "so the command did not run. Look at the task in the Zerto UI "
			    "(Monitoring > Tasks); once it is resolved, submit the request again.",
			    w->pt->task_id, w->pt->vpg_name, sname, t.state, w->pt->budget_s);
			goto event;
		}
		schedule(g, w, zerto_task_poll_s(w->pt->cadence_s));
		rc = 0;
		goto out;
	}
	w->pt->task_ms = since_start_ms(g);
	if (t.state != ZERTO_TASK_COMPLETED) {
		set_message(
		    g, ZERTO_GUARD_REFUSED,
		    "Zerto guard refused: the checkpoint insert task %s on VPG '%s' ended "
		    "%s (%d)%s%s. The checkpoint was not created and the command did not "
		    "run. Submit the request again; if it fails again, check the VPG in the "
		    "Zerto UI.",
		    w->pt->task_id, w->pt->vpg_name, sname, t.state, t.reason[0] ? ": " : "",
		    t.reason);
		goto event;
	}
	/* Completed: now the tag.  Look at once, before any sleep. */
	w->phase = PH_TAG;
	w->deadline = deadline_now_s() + w->pt->budget_s / g->scale;
	w->next_poll = deadline_now_s();
	rc = 0;
event:;
	cJSON *d = cJSON_CreateObject();
	cJSON_AddStringToObject(d, "vpg", w->pt->vpg_name);
	cJSON_AddStringToObject(d, "task_id", w->pt->task_id);
	cJSON_AddNumberToObject(d, "state", t.state);
	cJSON_AddStringToObject(d, "state_name", sname);
	cJSON_AddStringToObject(d, "reason", t.reason ? t.reason : "");
	emit(g, "guard.task", d);
out:
	zerto_task_clear(&t);
	return rc;
}

/* Step 5: one look for the tag. */
static int poll_tag(struct guard *g, struct vpg_work *w)
{
	struct zerto_checkpoint *cps = NULL;
	struct zerto_err e = {0};
	size_t n = 0;
	int rc = -1;
	char tb[40];

	if (zerto_list_checkpoints(g->c, w->pt->vpg_id, g->since_ms, 0, &cps, &n, &e) < 0) {
		rc = poll_error(g, w, "waiting for the tagged checkpoint to be listed", &e);
		if (rc == 0)
			schedule(g, w, zerto_poll_s(w->pt->cadence_s));
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		if (cps[i].tag == NULL || strcmp(cps[i].tag, g->out->tag) != 0)
			continue;
		w->pt->checkpoint_id = xstrdup(cps[i].id);
		w->pt->checkpoint_time = xstrdup(zerto_time_format(cps[i].ts_ms, tb, sizeof(tb)));
		w->pt->listed_ms = since_start_ms(g);
		w->phase = PH_DONE;
		unlock(g, w);
		cJSON *d = cJSON_CreateObject();
		cJSON_AddStringToObject(d, "vpg", w->pt->vpg_name);
		cJSON_AddStringToObject(d, "checkpoint", w->pt->checkpoint_id);
		cJSON_AddNumberToObject(d, "ms", (double)w->pt->listed_ms);
		emit(g, "guard.tagged", d);
		rc = 0;
		goto out;
	}
	if (deadline_now_s() < w->deadline) {
		schedule(g, w, zerto_poll_s(w->pt->cadence_s));
		rc = 0;
		goto out;
	}
	char cad[64];
	if (w->pt->cadence_s < 0)
		snprintf(cad, sizeof(cad), "could not be measured");
	else
		snprintf(cad, sizeof(cad), "is %.0f s", w->pt->cadence_s);
	if (w->unanswered) {
		set_message(g, ZERTO_GUARD_REFUSED,
		            "Zerto guard refused: the ZVM did not answer the checkpoint insert on "
		            "VPG '%s', and its tag was not listed within %.0f s, so the insert is "
		            "not confirmed and the command did not run. The insert may still "
		            "complete: look for the tag '%s' in the VPG's journal (Zerto UI), then "
		            "submit the request again.",
		            w->pt->vpg_name, w->pt->budget_s, g->out->tag);
		cJSON *d = cJSON_CreateObject();
		cJSON_AddStringToObject(d, "vpg", w->pt->vpg_name);
		cJSON_AddNumberToObject(d, "budget_s", w->pt->budget_s);
		cJSON_AddBoolToObject(d, "insert_answered", false);
		emit(g, "guard.tag_not_listed", d);
		goto out;
	}
	set_message(g, ZERTO_GUARD_REFUSED,
	            "Zerto guard refused: the insert task %s on VPG '%s' Completed, but the "
	            "tagged checkpoint was not listed within %.0f s. The VPG's measured "
	            "checkpoint cadence %s (budget 2 x cadence + %.0f s, clamped to %.0f..%.0f "
	            "s). The wait was short; the insert was not rejected, and the checkpoint may "
	            "still appear. No confirmed rewind point, so the command did not run. Look "
	            "for the tag '%s' in the VPG's journal (Zerto UI); submit the request again "
	            "once checkpoints are being listed.",
	            w->pt->task_id, w->pt->vpg_name, w->pt->budget_s, cad, ZERTO_BUDGET_HEADROOM_S,
	            ZERTO_BUDGET_MIN_S, ZERTO_BUDGET_MAX_S, g->out->tag);
	cJSON *d = cJSON_CreateObject();
	cJSON_AddStringToObject(d, "vpg", w->pt->vpg_name);
	cJSON_AddNumberToObject(d, "cadence_s", w->pt->cadence_s);
	cJSON_AddNumberToObject(d, "budget_s", w->pt->budget_s);
	emit(g, "guard.tag_not_listed", d);
out:
	zerto_checkpoints_free(cps, n);
	return rc;
}

/* Steps 4 and 5 for all VPGs at once: each on its own schedule. */
static int wait_all(struct guard *g, size_t n)
{
	for (;;) {
		double next = 0;
		bool pending = false;

		for (size_t i = 0; i < n; i++) {
			struct vpg_work *w = &g->w[i];

			if (w->phase == PH_DONE)
				continue;
			if (deadline_now_s() >= w->next_poll) {
				int rc = w->phase == PH_TASK ? poll_task(g, w) : poll_tag(g, w);
				if (rc < 0)
					return -1;
			}
			if (w->phase != PH_DONE &&
			    past_outer(g, w->phase == PH_TASK
			                      ? "waiting for the checkpoint insert's task"
			                      : "waiting for the tagged checkpoint to be listed"))
				return -1;
			if (w->phase == PH_DONE)
				continue;
			if (!pending || w->next_poll < next)
				next = w->next_poll;
			pending = true;
		}
		if (!pending)
			return 0;
		if (withdrawn(g))
			return -1;
		sleep_until(g, next);
	}
}

/* Builds the work list from rows (one per VPG) and measures cadences. */
static int prepare(struct guard *g, const struct zerto_vm_row *rows, size_t n)
{
	struct zerto_err e = {0};
	int64_t zvm_now;

	if (n > MAX_VPGS) {
		zerto_err_set(&e, ZERTO_ERR_SHAPE, 200, "GET /v1/vms: %zu VPGs for one VM", n);
		refuse_err(g, "looking up the VM's protection", &e);
		return -1;
	}
	if (zerto_server_time(g->c, &zvm_now, &e) < 0) {
		refuse_err(g, "reading the ZVM's clock", &e);
		return -1;
	}
	g->out->points = xcalloc(n, sizeof(*g->out->points));
	g->out->npoints = n;
	g->w = xcalloc(n, sizeof(*g->w));
	for (size_t i = 0; i < n; i++) {
		struct zerto_rewind_point *p = &g->out->points[i];

		p->vpg_id = xstrdup(rows[i].vpg_id);
		p->vpg_name = xstrdup(rows[i].vpg_name);
		p->task_state = -1;
		p->lock_ms = p->insert_ms = p->task_ms = p->listed_ms = -1;
		g->w[i].pt = p;
		if (measure_cadence(g, &g->w[i], zvm_now) < 0)
			return -1;
	}
	qsort(g->w, n, sizeof(*g->w), cmp_work);
	return 0;
}

/* Step 3, before inserting: an insert started elsewhere (a worker killed
 * mid-guard, the Zerto UI, another tool) would make ours the failed second of
 * two back-to-back inserts.  Wait, within the task budget, until none runs on
 * any of our VPGs.  Best effort: if the ZVM cannot list tasks, say so and go
 * on; the insert's own task still decides. */
static void wait_other_inserts(struct guard *g, size_t n)
{
	char lq2[512];
	char lq[512];
	double deadline = deadline_now_s();

	for (size_t i = 0; i < n; i++) /* one deadline for all: the largest budget */
		if (deadline_now_s() + g->w[i].pt->budget_s / g->scale > deadline)
			deadline = deadline_now_s() + g->w[i].pt->budget_s / g->scale;
	for (size_t i = 0; i < n; i++) {
		struct vpg_work *w = &g->w[i];
		double start = deadline_now_s();
		int count = 0, seen = 0;
		struct zerto_err e = {0};

		for (;;) {
			if (zerto_count_running_inserts(g->c, w->pt->vpg_id, &count, &e) < 0) {
				log_msg(LOG_WARN, "%s%sevt=guard.tasks_unlisted vpg=%s error=%s",
				        g->lid, g->lid[0] ? " " : "",
				        log_quote(w->pt->vpg_name, lq2, sizeof(lq2)),
				        log_quote(e.msg, lq, sizeof(lq)));
				break;
			}
			if (count == 0 || deadline_now_s() >= deadline ||
			    deadline_now_s() >= g->deadline_s || withdrawn(g))
				break;
			seen = count;
			sleep_until(g, deadline_now_s() +
			                   zerto_task_poll_s(w->pt->cadence_s) / g->scale);
		}
		if (seen == 0)
			continue;
		cJSON *d = cJSON_CreateObject();
		cJSON_AddStringToObject(d, "vpg", w->pt->vpg_name);
		cJSON_AddNumberToObject(d, "running", seen);
		cJSON_AddNumberToObject(d, "still_running", count);
		cJSON_AddNumberToObject(d, "ms", (deadline_now_s() - start) * 1000.0);
		emit(g, "guard.waited_for_other_insert", d);
	}
}

/* Steps 3-5 once the VPGs are known and taggable. */
static void tag_all(struct guard *g, size_t n)
{
	struct zerto_err e = {0};
	int64_t zvm_now;

	if (lock_all(g, n) < 0)
		return;
	wait_other_inserts(g, n);
	if (past_outer(g, "waiting for another checkpoint insert to end"))
		return;
	/* The ZVM's clock, not ours: skew cannot hide the new checkpoint. */
	if (zerto_server_time(g->c, &zvm_now, &e) < 0) {
		refuse_err(g, "reading the ZVM's clock", &e);
		return;
	}
	g->since_ms = zvm_now - TAG_SEARCH_MARGIN_MS;
	for (size_t i = 0; i < n; i++)
		if (withdrawn(g) || past_outer(g, "inserting the tagged checkpoints") ||
		    insert(g, &g->w[i]) < 0)
			return;
	if (wait_all(g, n) < 0)
		return;
	size_t lost = 0;
	for (size_t i = 0; i < n; i++)
		lost += g->w[i].unanswered;
	if (lost == 0)
		set_message(g, ZERTO_GUARD_OK,
		            "Zerto guard: %s is tagged in %zu VPG%s with '%s'; every insert task "
		            "Completed and every tag is listed.",
		            g->vm, n, n == 1 ? "" : "s", g->out->tag);
	else
		set_message(
		    g, ZERTO_GUARD_OK,
		    "Zerto guard: %s is tagged in %zu VPG%s with '%s' and every tag is "
		    "listed; the ZVM did not answer %zu of the inserts, whose tags it lists.",
		    g->vm, n, n == 1 ? "" : "s", g->out->tag, lost);
}

static void classify(struct guard *g, struct zerto_vm_row *rows, size_t n)
{
	struct buf ids;

	buf_init(&ids, 0);
	if (n == 0) {
		set_message(
		    g, ZERTO_GUARD_NONE,
		    "Zerto does not protect %s (no VPG lists it), so no rewind point can be "
		    "made for this change.",
		    g->vm);
		goto out;
	}
	size_t k = zerto_vm_rows_distinct(rows, n, &ids);
	if (k > 1) {
		set_message(
		    g, ZERTO_GUARD_AMBIGUOUS,
		    "Zerto guard refused: the name '%s' matches %zu different Zerto VMs (%s). "
		    "airlock will not guess which one to checkpoint, so the command did not "
		    "run. Set the target's Zerto VM identifier to the one you mean, then "
		    "submit the request again.",
		    g->vm, k, buf_str(&ids));
		goto out;
	}
	g->out->vm_id = xstrdup(rows[0].vm_id);
	if (check_taggable(g, rows, n) < 0 || prepare(g, rows, n) < 0 ||
	    past_outer(g, "measuring the VPGs' checkpoint cadence"))
		goto out;
	tag_all(g, n);
out:
	buf_free(&ids);
}

/* One look for the tag on the VPG; 1 when listed (the point gets it). */
static int find_tag(struct guard *g, struct vpg_work *w)
{
	struct zerto_checkpoint *cps = NULL;
	struct zerto_err e = {0};
	size_t n = 0;
	char tb[40];
	int found = 0;

	if (zerto_list_checkpoints(g->c, w->pt->vpg_id, g->since_ms, 0, &cps, &n, &e) < 0)
		return 0;
	for (size_t i = 0; i < n && !found; i++) {
		if (cps[i].tag == NULL || strcmp(cps[i].tag, g->out->tag) != 0)
			continue;
		w->pt->checkpoint_id = xstrdup(cps[i].id);
		w->pt->checkpoint_time = xstrdup(zerto_time_format(cps[i].ts_ms, tb, sizeof(tb)));
		w->pt->listed_ms = since_start_ms(g);
		found = 1;
	}
	zerto_checkpoints_free(cps, n);
	return found;
}

/* The guard refused after inserting: before the row says so, the ZVM is
 * asked for every tag it inserted, waiting (within the VPG's tag budget)
 * for one whose task Completed or whose insert was not answered, so that a
 * checkpoint it caused is recorded with the refusal.  The message then says
 * which. */
static void record_what_was_made(struct guard *g)
{
	struct buf made;
	size_t found = 0;

	buf_init(&made, 0);
	for (size_t i = 0; g->w != NULL && i < g->out->npoints; i++) {
		struct vpg_work *w = &g->w[i];
		int st = w->pt->task_state;

		if ((w->pt->task_id == NULL && !w->unanswered) || w->pt->checkpoint_id != NULL ||
		    st == ZERTO_TASK_FAILED || st == ZERTO_TASK_STOPPED)
			continue;
		for (;;) {
			/* A task still running is followed to its end (within its
			 * budget): a Completed one makes a checkpoint after all. */
			if (w->phase == PH_TASK) {
				struct zerto_task t = {0};
				struct zerto_err e = {0};
				if (zerto_get_task(g->c, w->pt->task_id, &t, &e) == 0 &&
				    zerto_task_terminal(t.state)) {
					w->pt->task_state = t.state;
					w->phase =
					    t.state == ZERTO_TASK_COMPLETED ? PH_TAG : PH_DONE;
					w->deadline = deadline_now_s() + w->pt->budget_s / g->scale;
				}
				zerto_task_clear(&t);
				if (w->phase == PH_DONE)
					break;
			}
			if (w->phase == PH_TAG && find_tag(g, w))
				break;
			/* Waited for only within the VPG's budget, and the guard's,
			 * and not for a withdrawn request (one look each). */
			if (deadline_now_s() >= w->deadline || deadline_now_s() >= g->deadline_s ||
			    withdrawn(g))
				break;
			sleep_until(g,
			            deadline_now_s() + zerto_poll_s(w->pt->cadence_s) / g->scale);
		}
		unlock(g, w);
		if (w->pt->checkpoint_id == NULL)
			continue;
		buf_printf(&made, "%s VPG '%s' checkpoint %s", found++ ? "," : "", w->pt->vpg_name,
		           w->pt->checkpoint_id);
		cJSON *d = cJSON_CreateObject();
		cJSON_AddStringToObject(d, "vpg", w->pt->vpg_name);
		cJSON_AddStringToObject(d, "checkpoint", w->pt->checkpoint_id);
		cJSON_AddStringToObject(d, "tag", g->out->tag);
		cJSON_AddStringToObject(d, "why", "inserted by this request, which was refused");
		emit(g, "guard.checkpoint_made", d);
	}
	if (found > 0) {
		char *m = xasprintf("%s Checkpoints this request inserted anyway are recorded with "
		                    "it:%s.",
		                    g->out->message ? g->out->message : "", buf_str(&made));
		free(g->out->message);
		g->out->message = m;
	}
	buf_free(&made);
}

enum zerto_outcome zerto_guard_run(struct zerto_client *c, const struct zerto_guard_request *req,
                                   const struct zerto_guard_hooks *hooks,
                                   struct zerto_guard_result *out)
{
	struct guard g = {0};
	struct zerto_vm_row *rows = NULL;
	size_t n = 0;

	memset(out, 0, sizeof(*out));
	out->outcome = ZERTO_GUARD_REFUSED;
	g.c = c;
	g.req = req;
	g.hooks = hooks;
	g.out = out;
	g.lid = req->log_id ? req->log_id : "";
	g.vm = req->vm_name ? req->vm_name : req->vm_id ? req->vm_id : "";
	g.t0 = deadline_now_s();
	g.deadline_s = req->deadline_ms > 0 ? (double)req->deadline_ms / 1000.0
	                                    : g.t0 + (double)zerto_guard_worst_case_ms(c) / 1000.0;
	g.scale = zerto_client_time_scale(c);
	out->time_scale = g.scale;
	if (req->vm_id == NULL && (req->vm_name == NULL || req->vm_name[0] == '\0')) {
		set_message(&g, ZERTO_GUARD_REFUSED,
		            "Zerto guard refused: the request names no VM (neither a Zerto VM "
		            "identifier nor a name), so its protection cannot be looked up. The "
		            "command did not run. Fix the target's inventory entry.");
		goto out;
	}
	out->tag = zerto_tag_format(req->agent, req->action, g.vm, req->change_id, req->now);
	if (find(&g, &rows, &n) == 0)
		classify(&g, rows, n);
	if (out->outcome == ZERTO_GUARD_REFUSED)
		record_what_was_made(&g);
out:
	for (size_t i = 0; g.w != NULL && i < out->npoints; i++)
		unlock(&g, &g.w[i]);
	free(g.w);
	zerto_vm_rows_free(rows, n);
	out->elapsed_ms = since_start_ms(&g);
	cJSON *d = cJSON_CreateObject();
	cJSON_AddStringToObject(d, "outcome", zerto_outcome_str(out->outcome));
	cJSON_AddStringToObject(d, "message", out->message ? out->message : "");
	cJSON_AddNumberToObject(d, "ms", (double)out->elapsed_ms);
	emit(&g, out->outcome == ZERTO_GUARD_OK ? "guard.ok" : "guard.end", d);
	return out->outcome;
}

void zerto_guard_result_clear(struct zerto_guard_result *r)
{
	for (size_t i = 0; r->points != NULL && i < r->npoints; i++) {
		struct zerto_rewind_point *p = &r->points[i];

		free(p->vpg_id);
		free(p->vpg_name);
		free(p->task_id);
		free(p->checkpoint_id);
		free(p->checkpoint_time);
	}
	free(r->points);
	free(r->message);
	free(r->tag);
	free(r->vm_id);
	memset(r, 0, sizeof(*r));
}

static void add_str_or_null(cJSON *o, const char *k, const char *v)
{
	if (v != NULL)
		cJSON_AddStringToObject(o, k, v);
	else
		cJSON_AddNullToObject(o, k);
}

cJSON *zerto_guard_result_json(const struct zerto_guard_result *r)
{
	cJSON *o = cJSON_CreateObject();
	char sb[24];

	cJSON_AddStringToObject(o, "outcome", zerto_outcome_str(r->outcome));
	add_str_or_null(o, "message", r->message);
	add_str_or_null(o, "tag", r->tag);
	add_str_or_null(o, "vm_id", r->vm_id);
	cJSON_AddNumberToObject(o, "elapsed_ms", (double)r->elapsed_ms);
	cJSON *arr = cJSON_AddArrayToObject(o, "rewind_points");
	for (size_t i = 0; i < r->npoints; i++) {
		const struct zerto_rewind_point *p = &r->points[i];
		cJSON *e = cJSON_CreateObject();

		cJSON_AddStringToObject(e, "vpg_id", p->vpg_id);
		cJSON_AddStringToObject(e, "vpg_name", p->vpg_name);
		add_str_or_null(e, "task_id", p->task_id);
		cJSON_AddNumberToObject(e, "task_state", p->task_state);
		add_str_or_null(e, "task_state_name",
		                p->task_state < 0
		                    ? NULL
		                    : zerto_task_state_name(p->task_state, sb, sizeof(sb)));
		add_str_or_null(e, "checkpoint_id", p->checkpoint_id);
		add_str_or_null(e, "checkpoint_time", p->checkpoint_time);
		add_str_or_null(e, "tag", p->task_id || p->unanswered ? r->tag : NULL);
		cJSON_AddBoolToObject(e, "insert_answered", !p->unanswered);
		cJSON_AddNumberToObject(e, "cadence_s", p->cadence_s);
		cJSON_AddNumberToObject(
		    e, "cadence_real_s",
		    p->cadence_s > 0 && r->time_scale > 0 ? p->cadence_s / r->time_scale : -1);
		cJSON_AddNumberToObject(e, "budget_s", p->budget_s);
		cJSON_AddNumberToObject(e, "lock_ms", (double)p->lock_ms);
		cJSON_AddNumberToObject(e, "insert_ms", (double)p->insert_ms);
		cJSON_AddNumberToObject(e, "task_ms", (double)p->task_ms);
		cJSON_AddNumberToObject(e, "listed_ms", (double)p->listed_ms);
		cJSON_AddItemToArray(arr, e);
	}
	return o;
}

long zerto_guard_budget_ms(const struct zerto_client *c, double cadence_s)
{
	/* Waiting out another tool's insert, our task, our tag: each gets the
	 * budget, and one request may overrun each deadline by its timeout. */
	double waits = 3.0 * zerto_budget_s(cadence_s) / zerto_client_time_scale(c);

	return (long)(waits * 1000.0) + 3 * zerto_client_request_ms(c);
}

long zerto_guard_worst_case_ms(const struct zerto_client *c)
{
	/* Lock wait (another guard's whole budget) + our own budget + the
	 * requests outside the waits. */
	return 2 * zerto_guard_budget_ms(c, -1) +
	       REQUESTS_OUTSIDE_WAITS * zerto_client_request_ms(c);
}
