/* seedgate.h -- seeds/gate.yaml: the approval gate's policy (quorum, pending
 * TTL and approval validity per class, per-target and per-agent rules, flood
 * limits, what a hard-to-read command needs), checked and turned into the
 * document airlock.seed_gate() takes. */
#ifndef AIRLOCK_CLI_SEEDGATE_H
#define AIRLOCK_CLI_SEEDGATE_H

#include "lib/yamltree.h"

#include <cjson/cJSON.h>

/* Defaults for what gate.yaml leaves out. */
#define SEEDGATE_QUORUM_CONFIG_MUTATION 1
#define SEEDGATE_QUORUM_DESTRUCTIVE     2
#define SEEDGATE_TTL_S                  3600
#define SEEDGATE_APPROVAL_VALID_FOR_S   900
#define SEEDGATE_HARD_MAX_LINES         24 /* hard_to_read: a command longer than a screen */
#define SEEDGATE_HARD_MAX_BYTES         2000

/* Checks the parsed gate.yaml (doc, read from path) and returns the
 * normalised document: {"classes": {CLASS: {quorum, ttl_s,
 * approval_valid_for_s}}, "rules": [...], "limits": {...}, "network":
 * {"allow": [host globs]}, "hard_to_read": {action, max_lines, max_bytes}}
 * with every default filled in.  NULL after
 * printing "airlock seed: path:line:col: reason" to stderr.  The caller
 * cJSON_Delete()s the result. */
cJSON *seedgate_check(const char *path, const struct yt_node *doc);

/* Parses a duration such as "90s", "15m", "1h", "2d" or "1h30m" into seconds.
 * 0 on success; -1 when it is malformed, zero or over 30 days. */
int seedgate_duration(const char *text, long long *seconds);

/* Writes seconds as the largest exact units ("1h30m", "15m", "45s"). */
void seedgate_format_duration(long long seconds, char *out, size_t outlen);

#endif
