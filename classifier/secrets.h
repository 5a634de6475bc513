/* secrets.h -- reading secret material (the policy's `secrets:` list) is at
 * least config_mutation, on every target type. */
#ifndef AIRLOCK_SECRETS_H
#define AIRLOCK_SECRETS_H

#include "classifier/judge.h"

/* Judges a file the command reads (an argument, an option's value, a <
 * redirection): secret material gets a "reads secret material" reason. */
void secrets_read(struct judge *j, struct judge_seg *s, const struct sh_word *w,
                  enum target_type t);
/* Judges every argument of program name that names secret material, option
 * values included (--key=PATH, dd if=PATH).  Programs that look only at
 * names and metadata (ls, stat, du...) have only their option values checked. */
void secrets_args(struct judge *j, struct judge_seg *s, const char *name,
                  const struct judge_argv *av, enum target_type t);

#endif
