/* judge.h -- the classifier's internals shared by classifier.c and judge.c:
 * one classification's context, and the judgements that consult the policy
 * (command rule chains, write targets, words in opaque code). */
#ifndef AIRLOCK_JUDGE_H
#define AIRLOCK_JUDGE_H

#include "classifier/classes.h"
#include "classifier/classifier.h"
#include "classifier/policy_int.h"
#include "classifier/shparse.h"
#include "classifier/verdict.h"

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#define JUDGE_MAX_CWD     8
#define JUDGE_MAX_FUNCS   64
#define JUDGE_MAX_NESTING 48 /* groups and substitutions inside one parse */
#define JUDGE_MAX_REPARSE 12 /* bash -c inside bash -c ... */
#define JUDGE_MAX_UNWRAP  64 /* sudo env nice timeout ... */
#define JUDGE_MAX_ASSIGNS 64
#define JUDGE_MAX_FILES   8
#define JUDGE_MAX_RECS    32 /* programs remembered for the jail's tier and network */
#define JUDGE_MAX_WRITES  64 /* paths in a verdict's write set */

/* A file this command writes with literal text (echo ... > /tmp/x.sh), so a
 * later `sh /tmp/x.sh` is judged by what it will contain. */
struct judge_file {
	const char *path;
	const char *text;
	size_t len;
	bool partial;
};

/* One program the command runs, as judge_command saw it: what the jail may
 * give it (verdict needs_root and net_view). */
struct judge_rec {
	int seg;
	bool proven;    /* judged below config_mutation with every word accounted for */
	bool tier_root; /* its deciding rule says `tier: root` */
	bool net_view;  /* its grammar, where the words led, says `net: view` */
	bool net_read;  /* a proven harmless network read of destinations the operator allowed */
	bool filter;    /* a text filter reading only stdin */
	bool wrapped;   /* reached through a wrapper other than sudo, timeout, nice... */
};

/* One command in reading order. */
struct judge_seg {
	int num;
	const struct sh_word *words;
	size_t nwords;
	const char *text; /* built on first use */
};

struct judge {
	const struct policy *p;
	struct verdict *v;
	struct arena *a;
	int nseg;      /* segments numbered so far */
	int reparse;   /* strings re-parsed as shell, nested (bash -c 'bash -c ...') */
	int unwrap;    /* wrappers looked through, nested */
	size_t budget; /* bytes of code still allowed to be parsed (bounds re-parsing) */
	const char *cwd[JUDGE_MAX_CWD]; /* every directory a cd may have reached */
	size_t ncwd;
	bool cwd_unknown;
	const char *funcs[JUDGE_MAX_FUNCS]; /* functions defined so far */
	size_t nfuncs;
	const char *infunc[JUDGE_MAX_FUNCS]; /* bodies being judged */
	size_t ninfunc;
	const struct sh_word *assigns[JUDGE_MAX_ASSIGNS]; /* NAME=value words seen so far */
	size_t nassigns;
	struct judge_file files[JUDGE_MAX_FILES];
	size_t nfiles;
	struct judge_seg spare;                /* a segment when the scratch arena is full */
	const struct classifier_observer *obs; /* classifier_observe() only, else NULL */
	bool assigns_lost; /* more assignments than assigns[] holds: values are unknown */

	/* gate.yaml's network allow list (host globs, lowercase) */
	const char *const *net_allow;
	size_t nnet_allow;

	/* What the jail may give the command (classifier.c decides at the end). */
	struct judge_rec recs[JUDGE_MAX_RECS];
	size_t nrecs;
	bool odd;      /* something runs that is no judged program (shell code, opaque,
	                  a function, ssh, guest exec ...) or recs[] overflowed */
	int odd_wrap;  /* wrappers being looked through that are not plain (chroot, nsenter) */
	int call_max;  /* highest class given since judge_command began (-1: none) */
	bool in_call;  /* judge_command is running: judge_reason feeds call_max */
	int top_nsubs; /* the command's own parse: substitutions, and its root */
	const struct sh_node *top;

	/* The write set (verdict writes): normalised absolute paths, "dir/" below. */
	const char **writes;
	size_t nwrites;
	bool writes_unknown;
	size_t write_events; /* writes judged so far (also those not kept) */
	size_t prog_mark;    /* write_events when the program being judged began */
	const char *action_rule;

	int nofilter_seg; /* this segment's script reads files (sed r, awk getline <) */
	bool extra_seen;  /* the words xargs adds are visible and were judged as a command */
	/* the last path secrets.c judged, and how (a repeat is not judged again) */
	const char *last_read;
	int last_read_mode;
	bool last_read_glob, last_read_nodev;
	/* find -exec/-execdir body being judged: `{}` names files below these */
	const struct sh_word *find_dirs;
	size_t nfind_dirs;
	bool in_find_exec;
};

/* The arguments a program gets; extra_unknown: more words nobody can see
 * are appended (xargs). */
struct judge_argv {
	const struct sh_word *w;
	size_t n;
	bool extra_unknown;
};

/* What a command reads on stdin. */
enum judge_stdin_kind { JUDGE_IN_NONE, JUDGE_IN_TEXT, JUDGE_IN_UNKNOWN };

struct judge_stdin {
	enum judge_stdin_kind kind;
	const char *text; /* JUDGE_IN_TEXT */
	size_t len;
	bool partial; /* text holds expansions: only its literal parts are known */
};

static inline bool judge_lit(const struct sh_word *w)
{
	return !(w->flags & SHW_COMPUTED);
}

/* A literal word spelled exactly s. */
static inline bool judge_weq(const struct sh_word *w, const char *s)
{
	size_t n = strlen(s);

	return judge_lit(w) && n == w->len && memcmp(w->text, s, n) == 0;
}

static inline bool judge_in_list(const struct strlist *l, const char *s)
{
	return policy_strlist_has(l, s, strlen(s));
}

/* The segment's words as the operator should read them (shortened). */
const char *judge_seg_text(struct judge *j, struct judge_seg *s);
/* Records a reason for segment s. */
void judge_reason(struct judge *j, struct judge_seg *s, const char *rule, const char *words,
                  enum risk_class cls, enum target_type t);
/* printf into the scratch arena; "" when it is full. */
const char *judge_fmt(struct judge *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Remembers one judged program for the verdict's tier and network (past
 * JUDGE_MAX_RECS the command is odd: no root tier, no network view). */
void judge_rec_add(struct judge *j, const struct judge_rec *r);
/* Applies the policy's rules for program name to its arguments. */
void judge_command(struct judge *j, struct judge_seg *s, const char *name,
                   const struct judge_argv *av, enum target_type t);
/* Only the proof of judge_command: program name's grammar over its
 * arguments (for a program judged another way, such as psql -c SQL). */
void judge_prove(struct judge *j, struct judge_seg *s, const char *name,
                 const struct judge_argv *av, enum target_type t);
/* A write whose path is known only at run time: the reason (write_unknown
 * class) and the verdict's writes_unknown. */
void judge_write_unknown(struct judge *j, struct judge_seg *s, const char *words,
                         enum target_type t);
/* Judges a file the command writes (a redirection target, tee's operand...). */
void judge_write(struct judge *j, struct judge_seg *s, const struct sh_word *w, enum target_type t);
/* Judges a directory below which the command writes files it does not name
 * (tar -x): the directory, and every path rule below it. */
void judge_write_tree(struct judge *j, struct judge_seg *s, const struct sh_word *w,
                      enum target_type t);
/* Judges code that cannot be parsed (python -c, a parse failure): at least
 * the policy's opaque_code class, raised by any code word or program name in
 * it.  what says what the code is ("python3 -c"). */
void judge_opaque(struct judge *j, struct judge_seg *s, const char *what, const char *text,
                  size_t len, enum target_type t);
/* Raises by code words and program names found in text, without the
 * opaque_code floor. */
void judge_scan_words(struct judge *j, struct judge_seg *s, const char *text, size_t len,
                      enum target_type t);
/* Normalises an absolute path (., .., //) into the arena. */
const char *judge_normpath(struct judge *j, const char *path, size_t len);
/* Joins a relative path to dir and normalises it. */
const char *judge_joinpath(struct judge *j, const char *dir, const char *rel, size_t len);

#endif
