/* outscan.h -- should a command's result be held for an operator?  The worker's
 * side of lib/secretscan.h: which of a result's texts carries secret material
 * first, named as the database records a hold (migration 0028). */
#ifndef AIRLOCK_WORKER_OUTSCAN_H
#define AIRLOCK_WORKER_OUTSCAN_H

#include "lib/secretscan.h"

#include <stdbool.h>
#include <stddef.h>

struct outscan_hold {
	bool held;
	enum secretscan_kind kind;
	const char *stream; /* "stdout", "stderr" or "error" (static) */
	size_t line;
	bool error_held; /* the error text carries secret material too */
};

/* Scans stdout, then stderr, then the error text (each may be NULL or empty;
 * a stream cut by the output cap is scanned as cut).  The first stream with
 * a match names the hold; the error is held too when it matches. */
void outscan_result(const char *out, size_t outlen, bool out_truncated, const char *err,
                    size_t errlen, bool err_truncated, const char *error, struct outscan_hold *h);

/* The hold as worker_finish and worker_preview take it:
 * {"kind", "label", "stream", "line", "error_held"}.  The caller frees. */
char *outscan_hold_json(const struct outscan_hold *h);

/* A text that is not output but may quote some (a refusal's reason carries
 * the first line a check in front of the command printed): reason itself
 * when it has no secret material, else the part before the match and a note
 * naming what followed, with *kind set.  NULL for NULL; the caller frees. */
char *outscan_clean_reason(const char *reason, enum secretscan_kind *kind);

#endif
