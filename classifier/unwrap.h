/* unwrap.h -- programs that run other programs (internal to the classifier). */
#ifndef AIRLOCK_UNWRAP_H
#define AIRLOCK_UNWRAP_H

#include "classifier/judge.h"

#include <stdbool.h>
#include <stddef.h>

struct unwrap_spec; /* a wrapper's option spec */

/* The wrapper spec for name, or NULL. */
const struct unwrap_spec *unwrap_find(const char *name);

/* Looks through wrapper wr; false when the wrapper runs nothing (the policy
 * judges it alone). */
bool unwrap_wrapper(struct judge *j, struct judge_seg *s, const struct unwrap_spec *wr,
                    const struct sh_word *w, size_t n, enum target_type t,
                    const struct judge_stdin *in, bool extra);

/* sh -c CODE, sh SCRIPT, sh reading stdin. */
void unwrap_shell(struct judge *j, struct judge_seg *s, const struct sh_word *w, size_t n,
                  enum target_type t, const struct judge_stdin *in);

/* python3 -c CODE, perl -e CODE, node script.js ...: opaque code. */
void unwrap_interpreter(struct judge *j, struct judge_seg *s, const struct sh_word *w, size_t n,
                        enum target_type t, const struct judge_stdin *in);

/* The index of the first operand at or after i; value_opts: short options
 * that take a value.  Never past n. */
size_t unwrap_skip_options(const struct sh_word *w, size_t n, size_t i, const char *value_opts);

/* ssh [options] host [command]: runs elsewhere, at least config_mutation. */
void unwrap_ssh(struct judge *j, struct judge_seg *s, const struct sh_word *w, size_t n,
                enum target_type t, const struct judge_stdin *in);

/* pct exec, qm guest exec, lxc-attach, docker/kubectl exec, ip netns exec:
 * true when it judged the inner command. */
bool unwrap_guest_exec(struct judge *j, struct judge_seg *s, const char *name,
                       const struct sh_word *w, size_t n, enum target_type t,
                       const struct judge_stdin *in);

/* find -exec/-execdir/-ok/-okdir bodies. */
void unwrap_find_exec(struct judge *j, struct judge_seg *s, const struct sh_word *w, size_t n,
                      enum target_type t);

/* su -c CMD, runuser -u USER -- CMD, or a shell on stdin. */
void unwrap_su(struct judge *j, struct judge_seg *s, const struct sh_word *w, size_t n,
               enum target_type t, const struct judge_stdin *in);

/* watch CMD (through sh -c) or watch -x CMD. */
void unwrap_watch(struct judge *j, struct judge_seg *s, const struct sh_word *w, size_t n,
                  enum target_type t, const struct judge_stdin *in);

#endif
