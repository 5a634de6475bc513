/* inspect.h -- whole-VM inspection from a checkpoint: a failover test (and its
 * stop) or an offsite clone, at the VPG's recovery site.  The protected VM is
 * not touched.  Live failover and move are DR, not inspection: this client
 * has no call for them. */
#ifndef AIRLOCK_ZERTO_INSPECT_H
#define AIRLOCK_ZERTO_INSPECT_H

#include "zerto/client.h"

#include <stdbool.h>

/* GET /v1/vpgs/{id}: whether ActiveProcessesApi.RunningFailOverTestApi is set. */
int zerto_vpg_test_running(struct zerto_client *c, const char *vpg_id, bool *running,
                           struct zerto_err *e);

/* POST /v1/vpgs/{id}/FailoverTest {"CheckpointIdentifier", "VmIdentifiers": [vm]}:
 * the task id. */
int zerto_failover_test_start(struct zerto_client *c, const char *vpg_id, const char *cp_id,
                              const char *vm_id, char **task_id, struct zerto_err *e);
/* POST /v1/vpgs/{id}/FailoverTestStop {"FailoverTestSuccess": true,
 * "FailoverTestSummary": summary}: the task id. */
int zerto_failover_test_stop(struct zerto_client *c, const char *vpg_id, const char *summary,
                             char **task_id, struct zerto_err *e);
/* POST /v1/vpgs/{id}/CloneStart {"CheckpointId", "VmIdentifiers": [vm]} (the
 * API spells the checkpoint differently here): the task id. */
int zerto_clone_start(struct zerto_client *c, const char *vpg_id, const char *cp_id,
                      const char *vm_id, char **task_id, struct zerto_err *e);

#endif
