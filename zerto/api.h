/* api.h -- the few ZVM endpoints the guard uses, parsed into C structs.
 *
 * Lenient about case and unknown fields (cJSON's lookups are case-blind and
 * the rest of an answer is ignored), strict about the fields used: a missing
 * or mistyped one fails with ZERTO_ERR_SHAPE and a message naming the
 * endpoint and the field.  Every returned string is the caller's, freed with
 * the matching _free function. */
#ifndef AIRLOCK_ZERTO_API_H
#define AIRLOCK_ZERTO_API_H

#include "zerto/client.h"

#include "lib/buf.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One row of GET /v1/vms: a (VM, VPG) pair protected FROM this site. */
struct zerto_vm_row {
	char *vm_id;
	char *vm_name;
	char *vpg_id;
	char *vpg_name;
	int status;
	int substatus;
	char *recovery_site;    /* RecoverySiteName, or "" */
	char *recovery_site_id; /* RecoverySite.identifier, or "" */
	bool recovers_here;     /* the recovery site is this ZVM's site (FLR runs here) */
	bool flr_enabled;       /* EnabledActions.IsFlrEnabled (true when absent) */
};

struct zerto_checkpoint {
	char *id;
	int64_t ts_ms;
	char *tag; /* NULL for automatic checkpoints */
};

struct zerto_task {
	int state;    /* enum zerto_task_state, or any value the ZVM sends */
	int progress; /* 0..100, -1 when absent */
	char *reason; /* CompleteReason, "" when none */
};

/* GET /v1/localsite: this site's SiteIdentifier. */
int zerto_local_site(struct zerto_client *c, char **site_id, struct zerto_err *e);

/* GET /v1/vms filtered by vm_id (if not NULL) else vm_name; keeps only rows
 * whose ProtectedSite is the local site. */
int zerto_list_vms(struct zerto_client *c, const char *vm_id, const char *vm_name,
                   struct zerto_vm_row **rows, size_t *n, struct zerto_err *e);
void zerto_vm_rows_free(struct zerto_vm_row *rows, size_t n);
/* How many different VmIdentifiers rows name; appends them to ids, ", "-joined. */
size_t zerto_vm_rows_distinct(const struct zerto_vm_row *rows, size_t n, struct buf *ids);

/* GET /v1/serverDateTime/serverDateTimeUtc, in milliseconds since the epoch. */
int zerto_server_time(struct zerto_client *c, int64_t *ms, struct zerto_err *e);

/* GET /v1/vpgs/{id}/checkpoints?startDate=..[&endDate=..] (end_ms 0: none). */
int zerto_list_checkpoints(struct zerto_client *c, const char *vpg_id, int64_t start_ms,
                           int64_t end_ms, struct zerto_checkpoint **cps, size_t *n,
                           struct zerto_err *e);
void zerto_checkpoints_free(struct zerto_checkpoint *cps, size_t n);

/* POST /v1/vpgs/{id}/checkpoints {"CheckpointName": name}: the task id. */
int zerto_insert_checkpoint(struct zerto_client *c, const char *vpg_id, const char *name,
                            char **task_id, struct zerto_err *e);

/* GET /v1/tasks?type=InsertTaggedCP&status=InProgress: how many insert tasks
 * not yet ended name vpg_id among their RelatedEntities.Vpgs. */
int zerto_count_running_inserts(struct zerto_client *c, const char *vpg_id, int *count,
                                struct zerto_err *e);

/* GET /v1/tasks/{id}. */
int zerto_get_task(struct zerto_client *c, const char *task_id, struct zerto_task *t,
                   struct zerto_err *e);
void zerto_task_clear(struct zerto_task *t);

#endif
