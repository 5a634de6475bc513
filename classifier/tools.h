/* tools.h -- programs whose arguments need special reading (internal to the classifier). */
#ifndef AIRLOCK_TOOLS_H
#define AIRLOCK_TOOLS_H

#include "classifier/judge.h"

#include <stdbool.h>
#include <stddef.h>

/* cd DIR: every directory relative paths may now be under. */
void tools_track_cd(struct judge *j, const struct sh_word *w, size_t n);

/* sed scripts with e or w commands run programs or write files. */
void tools_sed(struct judge *j, struct judge_seg *s, const struct sh_word *w, size_t n,
               enum target_type t);

/* awk programs with system(), pipes or print > file. */
void tools_awk(struct judge *j, struct judge_seg *s, const struct sh_word *w, size_t n,
               enum target_type t);

/* psql -c / mysql -e / sqlite3 DB SQL: true when the SQL decided the class
 * (then *cls is the SQL's class: read_only when plainly a query). */
bool tools_sql(struct judge *j, struct judge_seg *s, const char *name, const struct sh_word *w,
               size_t n, enum target_type t, enum risk_class *cls);

/* dd of=FILE writes FILE. */
void tools_dd(struct judge *j, struct judge_seg *s, const struct sh_word *w, size_t n,
              enum target_type t);

/* read, eval, trap, alias, source/., at/batch: true when fully judged. */
bool tools_builtin(struct judge *j, struct judge_seg *s, const char *name, const struct sh_word *w,
                   size_t n, enum target_type t, const struct judge_stdin *in, bool extra);

/* Can bash's arithmetic evaluation of t[0..n) run code?  names_are_values:
 * the names in it hold values known only at run time. */
bool tools_arith_hazard(const char *t, size_t n, bool names_are_values);

#endif
