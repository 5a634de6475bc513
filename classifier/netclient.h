/* netclient.h -- programs that send network traffic (internal to the
 * classifier).
 *
 * A program that sends traffic (curl, ping, dig, SQL and key-value clients,
 * nc, ssh, rsync to a remote, git push, a /dev/tcp redirection ...) is no
 * observation: at least config_mutation with "sends network traffic to
 * <destination>", unless its words prove a harmless form (an HTTP(S) GET or
 * HEAD, an echo request, a DNS lookup, an SQL query) and every destination is
 * one the operator allowed in gate.yaml (network.allow).  Which programs send
 * is known here by name and, for programs the policy adds, by `net: send` in
 * their grammar. */
#ifndef AIRLOCK_NETCLIENT_H
#define AIRLOCK_NETCLIENT_H

#include "classifier/grammar.h"
#include "classifier/judge.h"

#include <stdbool.h>
#include <stddef.h>

/* Does judging name need the grammar's parsed words (gram_proof items)? */
bool netclient_wants_items(const char *name);

/* Judges whether program name with arguments av (gp: its grammar proof, or
 * NULL) sends traffic.  Returns true when it is a proven harmless read whose
 * every destination the operator allowed (the reason says so); false when it
 * sends nothing or when it sends (the reason is at least config_mutation). */
bool netclient_judge(struct judge *j, struct judge_seg *s, const char *name,
                     const struct judge_argv *av, const struct gram_proof *gp, enum target_type t);

/* An SQL client given SQL (psql -c, mysql -e): queries_only says whether the
 * SQL is plainly a query.  Returns true when that query goes only to allowed
 * destinations. */
bool netclient_sql(struct judge *j, struct judge_seg *s, const char *name,
                   const struct judge_argv *av, bool queries_only, enum target_type t);

/* Code in another language (python3 -c, perl -e, a script written by the
 * command): names that open connections make it a sender whose destination
 * is known only at run time.  what names the code in the reason. */
void netclient_code(struct judge *j, struct judge_seg *s, const char *what, const char *text,
                    size_t len, enum target_type t);

/* ssh's host word: the command runs there. */
void netclient_ssh(struct judge *j, struct judge_seg *s, const struct sh_word *host,
                   enum target_type t);

/* A redirection target: bash connects /dev/tcp/HOST/PORT and /dev/udp/HOST/PORT. */
void netclient_redirect(struct judge *j, struct judge_seg *s, const struct sh_word *w,
                        enum target_type t);

/* Is glob an acceptable network.allow entry?  NULL, or why not (static text). */
const char *netclient_allow_glob_problem(const char *glob);

#endif
