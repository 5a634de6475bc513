/* verdict.h -- a classification's result: the class and why.
 *
 * A verdict owns reusable scratch memory: classify into the same verdict
 * again and again (no heap growth for typical commands), then verdict_free().
 * Reasons and their strings are borrowed from the verdict and stay valid
 * until the next classification into it or verdict_free(). */
#ifndef AIRLOCK_VERDICT_H
#define AIRLOCK_VERDICT_H

#include "classifier/classes.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#define VERDICT_MAX_REASONS 48

struct verdict_reason {
	int segment;              /* 1-based, in reading order; 0 = the request as a whole */
	const char *segment_text; /* the command words of that segment (shortened) */
	const char *rule_id;      /* a policy rule id, or a built-in id such as "parse-error" */
	const char *words;        /* the words that matched */
	enum risk_class cls;      /* the class this reason gives */
	enum target_type target;  /* where that segment runs (pct exec: lxc, ...) */
};

struct verdict_mem;

struct verdict {
	enum risk_class cls; /* the highest class of anything the command runs or writes */
	const struct verdict_reason *reasons;
	size_t nreasons;
	size_t nomitted; /* reasons dropped past VERDICT_MAX_REASONS (lowest classes first) */
	const char *classifier_version;
	struct verdict_mem *mem; /* private */

	/* How the jail must run the command when nobody approved it
	 * (docs/transport.md).  verdict_begin() resets each to its most
	 * confined value; only the classifier's proof loosens them. */
	bool needs_root; /* the command is one proven invocation of a `tier: root` program
	                    (optionally piped into proven text filters): the jail's root tier */
	bool net_view;   /* every program in it is marked `net: view` in its grammar and none
	                    can send data: the jail keeps the target's network namespace
	                    (otherwise the command gets a network namespace of its own) */
	/* reversible_low: the absolute paths the command writes ("dir/" means
	 * everything below dir), each normalised; the jail makes only these
	 * writable.  Borrowed like reasons. */
	const char *const *writes;
	size_t nwrites;
	bool writes_unknown;     /* some write's path is known only at run time */
	const char *action_rule; /* non-NULL: the change is an action the kernel cannot
	                            confine to paths (a service restart, qm start); it may
	                            run only as this rule (its id) names it */
};

#define VERDICT_INIT                                                                               \
	{                                                                                          \
		RISK_DESTRUCTIVE, NULL, 0, 0, NULL, NULL                                           \
	}

/* Releases the verdict's scratch; the verdict may be reused afterwards. */
void verdict_free(struct verdict *v);
/* The reasons as a JSON array of {segment, text, rule, words, class, target}.
 * The caller owns the result (cJSON_Delete). */
cJSON *verdict_reasons_json(const struct verdict *v);
/* cJSON_AddStringToObject with s made valid UTF-8 (invalid bytes become
 * U+FFFD): a command may hold any byte, jsonb takes only UTF-8. */
void verdict_json_add_string(cJSON *o, const char *key, const char *s);
/* One line: "segment 2: apt-get install (rule host-packages) on proxmox-host
 * => config_mutation; ...".  Tabs and newlines never appear in it.  The
 * caller frees the result. */
char *verdict_reasons_text(const struct verdict *v);

/* For the classifier: starts a classification (resets scratch, class
 * read_only, no reasons) and returns the scratch arena. */
struct arena *verdict_begin(struct verdict *v);
/* For the classifier: raises v->cls to cls and records why.  Strings must
 * live in the arena verdict_begin() returned (or be static). */
void verdict_add(struct verdict *v, int segment, const char *segment_text, const char *rule_id,
                 const char *words, enum risk_class cls, enum target_type target);
/* For the classifier: sorts the reasons by segment; call once at the end. */
void verdict_finish(struct verdict *v);

#endif
