/* walk.h -- walking a parsed command (internal to the classifier). */
#ifndef AIRLOCK_WALK_H
#define AIRLOCK_WALK_H

#include "classifier/judge.h"

#include <stdbool.h>
#include <stddef.h>

/* Words joined with spaces into the arena; *partial: some were computed. */
const char *walk_join_words(struct judge *j, const struct sh_word *w, size_t n, size_t *len,
                            bool *partial);

/* NAME=value: remembered; at least config_mutation when NAME changes what runs. */
/* NAME=value put in a program's environment (FOO=1 cmd, env FOO=1, export):
 * also at least config_mutation unless the policy's environment list has NAME. */
void walk_env_assignment(struct judge *j, struct judge_seg *s, const struct sh_word *w,
                         enum target_type t);
void walk_assignment(struct judge *j, struct judge_seg *s, const struct sh_word *w,
                     enum target_type t);

/* Scans every value assigned so far (c=reboot; $c). */
void walk_scan_assignments(struct judge *j, struct judge_seg *s, enum target_type t);

/* Computed code: scans the source spelling of the words and every value
 * assigned so far. */
void walk_scan_raw(struct judge *j, struct judge_seg *s, const struct sh_word *w, size_t n,
                   enum target_type t);

/* The text this command wrote to the file w names (echo ... > /tmp/x.sh), or NULL. */
const struct judge_file *walk_written_file(struct judge *j, const struct sh_word *w);

/* Words that may run although they could not be followed: scanned as code. */
void walk_scan_rest(struct judge *j, struct judge_seg *s, const struct sh_word *w, size_t n,
                    enum target_type t);

/* Judges commands a shell reads on stdin (echo's escapes both decoded and not). */
void walk_stdin_script(struct judge *j, struct judge_seg *s, const struct judge_stdin *in,
                       enum target_type t, const char *who);

/* Judges one command: w[0] is the program; extra: it gets unseen arguments. */
void walk_argv(struct judge *j, struct judge_seg *s, const struct sh_word *w, size_t n,
               enum target_type t, const struct judge_stdin *in, bool extra);

/* Parses text as shell and judges everything in it (a parse failure is
 * opaque code, its words still scanned).  what names the text in reasons. */
void walk_text(struct judge *j, struct judge_seg *s, const char *text, size_t len,
               enum target_type t, const struct judge_stdin *in, const char *what);

#endif
