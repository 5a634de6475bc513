/* policy.h -- the classifier's rules, parsed from self-contained YAML text
 * (seeds/policy.yaml, or the copy the database stores after `airlock seed`).
 *
 * A policy is immutable once parsed; a classifier borrows it.  See
 * docs/classifier.md for the format. */
#ifndef AIRLOCK_POLICY_H
#define AIRLOCK_POLICY_H

#include "classifier/classes.h"

#include <stddef.h>

struct policy;

enum policy_rule_kind {
	POLICY_RULE_COMMAND, /* matches a program and its arguments */
	POLICY_RULE_PATH,    /* matches a file a command writes */
	POLICY_RULE_CODE,    /* matches words inside code that cannot be parsed */
};

/* Parses yaml[0..len).  origin names the text in messages ("seeds/policy.yaml").
 * NULL on error with "origin:line:col: reason" in err.  Free with policy_free(). */
struct policy *policy_parse(const char *yaml, size_t len, const char *origin, char *err,
                            size_t errlen);
void policy_free(struct policy *p); /* NULL is a no-op */

/* Every rule, in file order: command rules, then path rules, then code words.
 * Strings are borrowed from p. */
size_t policy_rule_count(const struct policy *p);
const char *policy_rule_id(const struct policy *p, size_t i);
enum policy_rule_kind policy_rule_kind(const struct policy *p, size_t i);
enum risk_class policy_rule_class(const struct policy *p, size_t i);
/* One line, never NULL (the rule's description, or "" when it has none). */
const char *policy_rule_description(const struct policy *p, size_t i);

/* The policy's `secret_stores:` list: absolute paths or globs (fnmatch, as
 * glob(3) expands them on the target) of files and folders that hold
 * credentials.  The jail covers every match with an empty file or folder, in
 * both tiers; reading them is secret material to the classifier.  Borrowed
 * from p; NULL past the end. */
size_t policy_secret_store_count(const struct policy *p);
const char *policy_secret_store(const struct policy *p, size_t i);

/* The rule with this id, or -1. */
long policy_rule_find(const struct policy *p, const char *id);
/* A command rule carries at most this many `preview:` commands (see
 * classifier/previewtpl.h). */
#define POLICY_MAX_PREVIEWS 4

#endif
