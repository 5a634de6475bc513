/* recreq.h -- a claimed recovery request and the steps every kind of
 * recovery shares (file restore in recover.c, whole-VM inspection in
 * inspect.c): reading the request, the Zerto client, finding the rewind
 * point in the VM's VPGs, recording steps, refusing and finishing. */
#ifndef AIRLOCK_WORKER_RECREQ_H
#define AIRLOCK_WORKER_RECREQ_H

#include "store/queue.h"
#include "worker/pipeline.h"
#include "zerto/api.h"
#include "zerto/client.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

/* Polling interval of Zerto tasks and sessions, ZVM seconds. */
#define REC_POLL_S 2.0

/* One claimed recovery row (a plain record: rec_load fills it). */
struct rec {
	const struct pipeline_env *env;
	struct store *db;
	struct queue_item *it;
	char id[24]; /* the execution id as text */
	struct zerto_client *zc;
	/* the request */
	char mode[24]; /* files, failover_test, stop_failover_test, clone */
	cJSON *paths;  /* files: the guest paths; else NULL */
	bool keep;
	char *checkpoint;     /* id or tag, when named so */
	cJSON *source_points; /* the source execution's rewind points, when named so */
	cJSON *plan;          /* once planned */
	char *zvm_id;         /* the entity's Zerto VM identifier, or NULL */
};

/* Reads what was asked (and the plan, once made).  -1 on a database error. */
int rec_load(struct rec *r);
void rec_clear(struct rec *r);

/* A string member of o, or NULL. */
const char *rec_str(const cJSON *o, const char *k);

/* Refuses the row with reason (a sentence); detail (may be NULL) is borrowed. */
void rec_refuse(struct rec *r, const char *reason, const cJSON *detail);
/* Records one step of a running row as an event, and logs it: name (a
 * literal such as "flr.mounted" or "recover.written") is the event's name
 * in both, so each step is listed in docs/operators.md as it is.  detail is
 * consumed. */
void rec_step(struct rec *r, const char *name, cJSON *detail);
/* running -> state (succeeded|failed) with the report as stdout; retried while
 * the database is away (bounded). */
void rec_finish(struct rec *r, const char *state, cJSON *report, const char *error);

/* received -> pending_approval with plan (recorded; covered by the approval)
 * and summary (what the operator reads).  A database failure releases the
 * row for a retry. */
void rec_hold(struct rec *r, const cJSON *plan, const char *summary);

/* Sets r->zc from the daemon's zerto section.  -1 with a refusal in why. */
int rec_client(struct rec *r, char *why, size_t whylen);
/* Sleeps s ZVM seconds in real time (at least 50 ms). */
void rec_sleep(struct rec *r, double s);

/* The VM's rows in GET /v1/vms (by Zerto id, else by the slug's name).
 * -1 after refusing the row (ZVM unreachable, not protected, ambiguous). */
int rec_find_vm(struct rec *r, struct zerto_vm_row **rows, size_t *n);
/* Candidate rewind points [{vpg_id, vpg_name, checkpoint_id, checkpoint_time,
 * tag}]: the source execution's, or the named checkpoint looked up in each
 * VPG's journal.  NULL with e set when the ZVM failed. */
cJSON *rec_candidates(struct rec *r, const struct zerto_vm_row *rows, size_t n,
                      struct zerto_err *e);
const struct zerto_vm_row *rec_row_of(const struct zerto_vm_row *rows, size_t n,
                                      const char *vpg_id);

/* Waits until task_id ends, at most budget_s ZVM seconds.  0 with *state (the
 * terminal state) and *reason (CompleteReason, the caller's) set; -1 with a
 * sentence in why when it did not end or could not be read. */
int rec_wait_task(struct rec *r, const char *task_id, double budget_s, int *state, char **reason,
                  char *why, size_t whylen);

#endif
