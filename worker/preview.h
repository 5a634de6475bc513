/* preview.h -- show the approver what a held command would do.
 *
 * When a request is held for approval, the policy rule that held it may name
 * read-only previews (`apt-get -s install X` for `apt-get install X`;
 * classifier/previewtpl.h builds them from the command's own words).  Each
 * preview is classified like any command and runs only when it is read_only:
 * through the same transport, in the read-only jail, under the same per-node
 * limit, deadline and output cap as an execution.  Its outcome -- output, exit
 * code, or why it did not run -- is stored in airlock.execution_previews for
 * the approver.  A preview never changes the request: whatever happens to it
 * is recorded on the preview and approval goes on. */
#ifndef AIRLOCK_WORKER_PREVIEW_H
#define AIRLOCK_WORKER_PREVIEW_H

#include "classifier/verdict.h"
#include "worker/pipeline.h"

/* Runs and records the previews for it, held with verdict v under the
 * classifier in cl.  Returns when all are recorded (or the daemon stops). */
void preview_run(const struct pipeline_env *env, struct store *db, const struct queue_item *it,
                 const struct verdict *v, const struct classifier *cl);

#endif
