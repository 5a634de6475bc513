/* seeddoor.h -- gate.yaml's blocks for the agent's door: `door_limits:` (the
 * flood limits of the agent's other SQL functions) and `scopes:` (what each
 * agent may act on).  Checked like the rest of gate.yaml: every error names
 * file, line and column, and nothing is ingested unless the whole file is
 * right. */
#ifndef AIRLOCK_CLI_SEEDDOOR_H
#define AIRLOCK_CLI_SEEDDOOR_H

#include "lib/yamltree.h"

#include <cjson/cJSON.h>
#include <stddef.h>

/* One door limit: its gate.yaml key, default and allowed range. */
struct seeddoor_limit {
	const char *name;
	long long dflt, min, max;
};

/* The door limits, in the order gate.yaml and `airlock policy show` list them. */
extern const struct seeddoor_limit seeddoor_limits[];
extern const size_t seeddoor_nlimits;

/* Checks doc's door_limits and scopes (either may be absent) and adds
 * "door_limits": {every limit, defaults filled in} and "scopes": [{"agent",
 * "targets", "target_types", "max_class"}] to out.  0, or -1 after printing
 * "airlock seed: path:line:col: reason" to stderr. */
int seeddoor_check(const char *path, const struct yt_node *doc, cJSON *out);

#endif
