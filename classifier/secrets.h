/* secrets.h -- reading secret material (the policy's `secrets:` list) is at
 * least config_mutation, on every target type. */
#ifndef AIRLOCK_SECRETS_H
#define AIRLOCK_SECRETS_H

#include "classifier/grammar.h"
#include "classifier/judge.h"

/* Judges a file the command reads (an argument, an option's value, a <
 * redirection): secret material gets a "reads secret material" reason. */
void secrets_read(struct judge *j, struct judge_seg *s, const struct sh_word *w,
                  enum target_type t);
/* Judges every argument of program name that names secret material, option
 * values included (--key=PATH, dd if=PATH).  Programs that look only at
 * names and metadata (ls, stat, du...) have only their option values checked.
 * gp, the program's grammar proof (or NULL), says which operands a reader
 * (cat, grep, tar -c ...) reads: a computed one may be a secret, and trees
 * read whole are judged by what lies below them. */
void secrets_args(struct judge *j, struct judge_seg *s, const char *name,
                  const struct judge_argv *av, const struct gram_proof *gp, enum target_type t);
/* Does secrets_args want the grammar's parsed words (gram_proof items) for name? */
bool secrets_wants_items(const char *name);
/* SQL text: credential tables, files read by the server, paths spelled in it. */
void secrets_sql(struct judge *j, struct judge_seg *s, const char *sql, size_t len,
                 enum target_type t);

#endif
