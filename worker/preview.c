/* preview.c -- the read-only previews of a held request, run and recorded. */
#include "worker/preview.h"

#include "classifier/classifier.h"
#include "classifier/previewtpl.h"
#include "lib/buf.h"
#include "lib/log.h"
#include "lib/utf8.h"
#include "lib/xalloc.h"
#include "worker/outscan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How long a preview waits for a slot on a node whose slots are all busy. */
#define PREVIEW_SLOT_WAIT_MS 2000

/* PostgreSQL text holds valid UTF-8 without NUL: other bytes become U+FFFD. */
static char *as_text(const char *s, size_t n)
{
	struct buf b = BUF_INIT;

	for (size_t i = 0; i < n;) {
		unsigned long cp;
		size_t l = utf8_decode((const unsigned char *)s + i, n - i, &cp);
		if (l == 0 || cp == 0) {
			buf_puts(&b, "\xef\xbf\xbd");
			i++;
		} else {
			buf_append(&b, s + i, l);
			i += l;
		}
	}
	return buf_steal(&b);
}

/* Records one preview; a failure is logged, never more.  Its output is
 * scanned like an observation's: secret material in it is marked held, and
 * the operators' views show it only when asked. */
static void record(struct store *db, const struct queue_item *it, int ord, const char *command,
                   const struct target_result *r, const char *error)
{
	char id[24], o[16], ex[16];
	char *out = NULL, *err = NULL, *hold = NULL;
	struct store_res *res;
	struct outscan_hold h;

	snprintf(id, sizeof(id), "%lld", (long long)it->id);
	snprintf(o, sizeof(o), "%d", ord);
	if (r && r->exit_code >= 0)
		snprintf(ex, sizeof(ex), "%d", r->exit_code);
	if (r) {
		out = as_text(r->out.data ? r->out.data : "", r->out.len);
		err = as_text(r->err.data ? r->err.data : "", r->err.len);
	}
	outscan_result(r ? r->out.data : NULL, r ? r->out.len : 0, r && r->out.truncated,
	               r ? r->err.data : NULL, r ? r->err.len : 0, r && r->err.truncated, error,
	               &h);
	if (h.held) {
		hold = outscan_hold_json(&h);
		log_msg(LOG_INFO,
		        "exec=%lld evt=preview.output_held ord=%d kind=%s stream=%s line=%zu",
		        (long long)it->id, ord, secretscan_kind_name(h.kind), h.stream, h.line);
	}
	res = store_exec(
	    db,
	    "SELECT airlock.worker_preview($1::bigint, $2::int, $3, $4::int, $5, $6, "
	    "$7::boolean, $8, $9::jsonb)",
	    9,
	    (const char *const[]){id, o, command, r && r->exit_code >= 0 ? ex : NULL, out, err,
	                          r && (r->out.truncated || r->err.truncated) ? "true" : "false",
	                          error, hold});
	if (res == NULL) {
		char q[512];
		log_msg(LOG_WARN, "exec=%lld evt=preview.record_failed ord=%d error=%s",
		        (long long)it->id, ord, log_quote(store_errmsg(db), q, sizeof(q)));
	}
	store_clear(res);
	free(out);
	free(err);
	free(hold);
}

/* One preview: classified, then run in the jail only when read_only. */
static void one(const struct pipeline_env *env, struct store *db, const struct queue_item *it,
                const struct classifier *cl, int ord, const char *command)
{
	struct verdict pv = VERDICT_INIT;
	enum target_type tt = TARGET_PROXMOX_HOST;
	struct target_result r;
	char why[1200];

	target_type_parse(it->target_type, &tt);
	classifier_classify(cl, tt, command, strlen(command), RISK_READ_ONLY, &pv);
	if (pv.cls != RISK_READ_ONLY) {
		char *reasons = verdict_reasons_text(&pv);
		snprintf(
		    why, sizeof(why),
		    "not run: the preview itself classifies as %s, and only read_only previews "
		    "run (%.900s)",
		    risk_class_name(pv.cls), reasons);
		free(reasons);
		log_msg(LOG_INFO, "exec=%lld evt=preview.refused ord=%d class=%s",
		        (long long)it->id, ord, risk_class_name(pv.cls));
		record(db, it, ord, command, NULL, why);
		verdict_free(&pv);
		return;
	}
	enum transport_jail jail = pv.needs_root ? TRANSPORT_JAIL_ROOT : TRANSPORT_JAIL_USER;
	struct target_jail tj = {
	    .tier = jail, .net_view = pv.net_view, .policy = classifier_policy(cl)};
	verdict_free(&pv);
	/* A bounded wait: a worker never waits long for a busy node's slot. */
	if (!slots_take_within(env->node_slots, it->node, PREVIEW_SLOT_WAIT_MS, env->stopping)) {
		record(db, it, ord, command, NULL,
		       atomic_load(env->stopping)
		           ? "not run: airlockd was stopping"
		           : "not run: every execution slot of the node (per_node) stayed busy; "
		             "the preview was skipped");
		return;
	}
	struct queue_item copy = *it;
	copy.command = (char *)command;
	targets_run_jailed(env->targets, &copy, &tj, env->cancel, &r);
	slots_give(env->node_slots, it->node);
	log_msg(LOG_INFO, "exec=%lld evt=preview.ran ord=%d state=%s exit=%d ms=%lld jail=%s%s",
	        (long long)it->id, ord, exec_state_name(r.state), r.exit_code, r.duration_ms,
	        jail_name(jail), r.unconfinable ? " unconfinable=1" : "");
	if (r.unconfinable)
		snprintf(why, sizeof(why), "not run: the read-only jail could not be built: %s",
		         r.error);
	else
		snprintf(why, sizeof(why), "%s", r.error);
	record(db, it, ord, command, r.unconfinable ? NULL : &r, why[0] ? why : NULL);
	target_result_clear(&r);
}

void preview_run(const struct pipeline_env *env, struct store *db, const struct queue_item *it,
                 const struct verdict *v, const struct classifier *cl)
{
	struct previewtpl t;
	char why[512];
	int rc;

	rc = previewtpl_build(classifier_policy(cl), v, it->command, strlen(it->command), &t, why,
	                      sizeof(why));
	if (rc < 0) {
		char q[600];
		log_msg(LOG_INFO, "exec=%lld evt=preview.none rule=%s why=%s", (long long)it->id,
		        t.rule, log_quote(why, q, sizeof(q)));
		record(db, it, 1, "", NULL, why);
	}
	for (size_t i = 0; rc > 0 && i < t.n && !*env->stopping; i++)
		one(env, db, it, cl, (int)i + 1, t.commands[i]);
	previewtpl_clear(&t);
}
