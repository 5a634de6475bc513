/* reach_int.h -- shared by reach.c (hosts, options, the reading and its
 * dispatch) and reachprogs.c (each remote-access program's destinations);
 * internal to the hook. */
#ifndef AIRLOCK_HOOK_REACH_INT_H
#define AIRLOCK_HOOK_REACH_INT_H

#include "classifier/shparse.h"
#include "hook/reach.h"

#include <stdbool.h>
#include <stddef.h>

/* One reading: where its findings go, how deep nested code went. */
struct reach_ctx {
	const struct classifier *c;
	struct reach_list *out;
	int depth;
	int failed;            /* a nested reading failed: out->err says why */
	bool computed_program; /* some program's name is known only at run time */
	int printed_known;     /* shells whose computed code was read in full (printf) */
};

/* An option with its value, as reach_parse_opts() hands it over. */
struct reach_opt {
	char opt;         /* short option letter, or 0 for a long one */
	const char *name; /* long option name (without --), NULL for short */
	size_t namelen;
	const char *text; /* the value */
	size_t len;
	const struct sh_word *word; /* the value's word when it is a whole word */
	bool computed;
};

typedef void (*reach_opt_fn)(struct reach_ctx *sc, const char *prog, const struct reach_opt *v,
                             void *arg);

/* Hosts a fleet tool (ansible, pssh, pdsh ...) names, and whether some are hidden. */
struct reach_fleet {
	bool hidden;
	size_t found;
};

/* ---- reach.c: findings, host spellings, words, options, reading */
struct reach *reach_add(struct reach_ctx *sc, enum reach_kind k, const char *prog);
struct reach *reach_add_dest(struct reach_ctx *sc, const char *prog, const char *s, size_t len,
                             int port, enum reach_kind k);
void reach_add_computed(struct reach_ctx *sc, const char *prog, const struct sh_word *w);
bool reach_lit(const struct sh_word *w);
bool reach_weq(const struct sh_word *w, const char *s);
int reach_parse_port(const char *s, size_t len);
bool reach_parse_url(const char *s, size_t len, const char **host, size_t *hlen, int *port);
void reach_split_hostport(const char *s, size_t len, const char **host, size_t *hlen, int *port);
bool reach_url_dest(struct reach_ctx *sc, const char *prog, const struct sh_word *w,
                    enum reach_kind k);
bool reach_remote_operand(const char *s, size_t len, const char **host, size_t *hlen);
void reach_named_tokens(struct reach_ctx *sc, const char *prog, const char *t, size_t len);
size_t reach_parse_opts(struct reach_ctx *sc, const char *prog, const struct sh_word *w, size_t n,
                        const char *valopts, const char *longval, reach_opt_fn fn, void *arg,
                        const struct sh_word **ops, size_t *nops, size_t maxops);
bool reach_opt_is(const struct reach_opt *v, char s, const char *l);
void reach_value_dest(struct reach_ctx *sc, const char *prog, const struct reach_opt *v);
void reach_value_code(struct reach_ctx *sc, const struct reach_opt *v);
void reach_on_program(void *ctx, const struct sh_word *w, size_t n, bool extra);
void reach_scan_text(struct reach_ctx *sc, const char *text, size_t len);
void reach_add_opaque(struct reach_ctx *sc, const char *prog, const char *why);
/* NAME=value words anywhere in the command that set where a program goes
 * (GIT_SSH_COMMAND, DOCKER_HOST, RSYNC_RSH, BORG_REPO ...). */
void reach_env_assignments(struct reach_ctx *sc, const char *command, size_t len);

/* ---- reachmore.c: containers, fleets, tunnels, mounts, backups */
bool reach_more_known(const char *name);
/* true when name was handled (its destinations are in sc->out) */
bool reach_more_program(struct reach_ctx *sc, const char *name, const struct sh_word *w, size_t n,
                        bool extra);

/* ---- reachprogs.c: each program's destinations */
void reach_prog_ssh(struct reach_ctx *sc, const char *prog, const struct sh_word *w, size_t n);
void reach_prog_scp(struct reach_ctx *sc, const char *prog, const struct sh_word *w, size_t n);
void reach_prog_rsync(struct reach_ctx *sc, const char *prog, const struct sh_word *w, size_t n);
void reach_prog_mosh(struct reach_ctx *sc, const char *prog, const struct sh_word *w, size_t n);
void reach_prog_sshpass(struct reach_ctx *sc, const struct sh_word *w, size_t n, bool extra);
void reach_host_list(struct reach_ctx *sc, const char *prog, const char *t, size_t len,
                     struct reach_fleet *fs);
void reach_fleet_opt(struct reach_ctx *sc, const char *prog, const struct reach_opt *v, void *arg);
void reach_prog_fleet(struct reach_ctx *sc, const char *prog, const struct sh_word *w, size_t n);
void reach_prog_nc(struct reach_ctx *sc, const char *prog, const struct sh_word *w, size_t n);
void reach_prog_telnet(struct reach_ctx *sc, const char *prog, const struct sh_word *w, size_t n);
void reach_prog_socat(struct reach_ctx *sc, const char *prog, const struct sh_word *w, size_t n);
void reach_prog_http(struct reach_ctx *sc, const char *prog, const struct sh_word *w, size_t n);
void reach_prog_git(struct reach_ctx *sc, const char *prog, const struct sh_word *w, size_t n);

#endif
