/* policy_int.h -- the parsed policy's layout, shared by policy.c and the
 * classifier only.  Everything is allocated from the policy's arena. */
#ifndef AIRLOCK_POLICY_INT_H
#define AIRLOCK_POLICY_INT_H

#include "classifier/classes.h"
#include "classifier/policy.h"

#include <stdbool.h>
#include <stddef.h>

struct arena;
struct grammar;

struct strlist {
	const char **v;
	size_t n;
};

enum policy_writes { WRITES_NONE, WRITES_ALL, WRITES_LAST, WRITES_FIRST };

/* One preview of a command rule: an argv template, used only when the
 * command's subcommand is one of `when` and its program one of `programs`
 * (each empty: always). */
struct policy_preview {
	struct strlist run;
	struct strlist when;
	struct strlist programs;
};

struct policy_rule {
	enum policy_rule_kind kind;
	const char *id;
	const char *description;
	enum risk_class cls;
	unsigned targets; /* bit (1 << target_type); all bits when not restricted */
	int line;
	struct strlist programs;   /* COMMAND */
	struct strlist subcommand; /* COMMAND: each entry is one or more words */
	struct strlist args;
	struct strlist flags;
	struct strlist arg_prefix;
	struct strlist arg_contains;
	struct strlist write_options; /* options whose value is a file the program writes */
	enum policy_writes writes;
	bool no_operands; /* COMMAND: holds only when there is no operand */
	bool scan_args;   /* COMMAND: the arguments may run: scan them for code words */
	bool needs_root;  /* COMMAND: `tier: root`: observing this needs uid 0 */
	/* COMMAND, reversible_low only: the change is an action the kernel cannot
	 * confine to paths (a service restart, qm start): `action: true` */
	bool action;
	struct strlist write_paths; /* COMMAND: absolute paths it writes ("dir/": below dir) */
	struct strlist words;       /* PATH: prefixes; CODE: words */
	/* COMMAND: read-only commands that show what this one would do
	 * (classifier/previewtpl.h) */
	struct policy_preview *previews;
	size_t npreviews;
};

/* One program named by some command rule: its rules in file order. */
struct policy_program {
	const char *name;
	size_t *rules;
	size_t nrules;
	struct strlist value_options; /* options that take the next word as their value */
	/* What its command line may hold (grammars:), or NULL: then a use below
	 * config_mutation is proven only when it holds no option at all. */
	const struct grammar *grammar;
	enum risk_class worst[TARGET_TYPE_COUNT]; /* highest class any of its rules gives */
	/* What the program generally does: its last rule without conditions (else
	 * defaults.unknown_program).
	 * Used when only its name is seen (in code, at an unknown path). */
	enum risk_class base[TARGET_TYPE_COUNT];
};

struct policy {
	struct arena *a;
	struct policy_rule *rules;
	size_t nrules;
	struct policy_program *progs;
	size_t nprogs;
	size_t *slots;      /* open addressing: index + 1 into progs, 0 = empty */
	size_t *code_rules; /* indexes of the POLICY_RULE_CODE rules */
	size_t ncode_rules;
	size_t nslots;
	enum risk_class unknown_program; /* >= config_mutation */
	enum risk_class opaque_code;     /* >= config_mutation */
	enum risk_class write_unlisted;  /* an absolute path no path rule names */
	enum risk_class write_unknown;   /* a computed path, or relative after an unknown cd */
	/* per target type: a command that changes anything is at least this class */
	enum risk_class floor[TARGET_TYPE_COUNT];
	const char *home;
	struct strlist standard_dirs;
	struct strlist shells;
	struct strlist interpreters;
	/* environment: names an assignment may set below config_mutation ("LC_*" is a prefix) */
	struct strlist env_allow;
	/* secrets: paths whose reading is at least config_mutation; fnmatch patterns,
	 * "dir/" for everything below, a name without / for the file's last part, and
	 * "!pattern" for exceptions checked first */
	struct strlist secrets;
	/* per secrets entry: its longest run of literal characters, which any path
	 * it matches must contain (a fast filter before fnmatch) */
	/* secret_stores: files and folders that hold credentials (absolute paths
	 * or globs); the jail covers each with an empty one, in both tiers */
	struct strlist secret_stores;
	/* The absolute entries of secrets: and every secret_stores entry, split
	 * into path components: a read of a directory tree (grep -r, tar -c) or of
	 * a path known only in part is judged against them. */
	struct policy_pathpat *pathpats;
	size_t npathpats;
	/* pathpats grouped by their first component (a path is compared only with
	 * the patterns that start like it); a pattern whose first component is a
	 * glob (or that is "/" alone) is in every group's `any` list */
	struct policy_ppgroup *ppgroups;
	size_t nppgroups;
	size_t *pp_any;
	size_t npp_any;
	const char **secret_lits;
	unsigned short *secret_tri; /* per entry: hash of its literal's first 3 bytes, or 0xffff */
};

/* A path pattern split at '/': comps[0..n) (fnmatch globs or literals). */
struct policy_pathpat {
	const char **comps;
	unsigned char *lens; /* strlen of each component */
	bool *globs;         /* each component holds * ? [ */
	size_t n;
	bool tree;   /* matches everything below it too (a folder, "dir/", a store) */
	bool store;  /* from secret_stores */
	bool device; /* below /dev: a device whose content is the disk's (not for blkid & co) */
};

struct policy_ppgroup {
	const char *first;
	unsigned char len;
	size_t *idx; /* into pathpats */
	size_t n;
};

/* The hash secret_tri holds for the 3 bytes at s (policy_tri_hash(s) < 1024). */
static inline unsigned short policy_tri_hash(const char *s)
{
	unsigned h =
	    (unsigned char)s[0] * 31u * 31u + (unsigned char)s[1] * 31u + (unsigned char)s[2];

	return (unsigned short)(h & 1023u);
}

/* The program's entry, or NULL when no command rule names it. */
const struct policy_program *policy_program_find(const struct policy *p, const char *name,
                                                 size_t len);
bool policy_strlist_has(const struct strlist *l, const char *s, size_t len);

#endif
