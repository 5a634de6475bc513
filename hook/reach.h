/* reach.h -- which parts of a shell command reach another machine, and where.
 *
 * The command is read by the classifier's own walker (classifier_observe):
 * wrappers (sudo, env, nice, timeout, xargs ...), sh -c, eval, $(...),
 * pipelines into a shell, here-docs, ssh's remote command.  Every program it
 * may run is looked at here: remote-access programs (ssh, scp, sftp, rsync,
 * mosh, sshpass, ansible*, pssh and friends, nc, socat, telnet, curl, wget,
 * httpie, git over ssh) give the destinations they would connect to, and the
 * Proxmox tools (qm, pct, pvesh, pvesm, virsh ...) reach this machine's
 * guests directly.  No I/O here: names are resolved later (dest.h). */
#ifndef AIRLOCK_HOOK_REACH_H
#define AIRLOCK_HOOK_REACH_H

#include <stdbool.h>
#include <stddef.h>

struct classifier;

enum reach_kind {
	REACH_DEST,      /* connects to dest */
	REACH_COMPUTED,  /* connects somewhere known only at run time */
	REACH_HIDDEN,    /* connects to hosts it reads from elsewhere (an inventory file) */
	REACH_LOCAL_PVE, /* a Proxmox/libvirt tool run on this machine */
	REACH_NAMED,     /* code or an unknown program whose words name dest (matters if managed) */
	REACH_OPAQUE,    /* runs code airlock cannot read (interpreter code, text generated for a
	                    shell, a host-network container ...): it may reach anything */
};

#define REACH_SSH_ARGS 24

struct reach {
	enum reach_kind kind;
	char program[32]; /* what reaches: "ssh", "curl", "qm" ... */
	char *dest;       /* REACH_DEST/REACH_NAMED: normalised (lower case, canonical IP);
	                     REACH_HIDDEN: where it reads its hosts from */
	char *why;        /* REACH_OPAQUE: what cannot be read, and why */
	int port;         /* 0 when not given */
	bool ssh_config;  /* an ssh-family destination: ssh -G can resolve its alias */
	char *ssh_args[REACH_SSH_ARGS]; /* -F/-o/-p/-l/-J options to resolve it with */
	size_t nssh_args;
};

struct reach_list {
	struct reach *v;
	size_t n, cap;
	bool overflow; /* more than REACH_MAX parts: the rest were not looked at */
	size_t nnamed; /* REACH_NAMED parts */
	bool
	    named_overflow; /* more than REACH_NAMED_MAX words of code: the rest were not checked */
	char err[160];      /* why reading failed, when reach_scan returned -1 */
};

#define REACH_MAX       128
#define REACH_NAMED_MAX 32

/* Reads command[0..len) and appends what reaches another machine to out.
 * c must be a classifier over the hook's reading policy (reach_policy_yaml).
 * Returns 0, or -1 with out->err set (the command could not be read at
 * all; the hook then denies). */
int reach_scan(const struct classifier *c, const char *command, size_t len, struct reach_list *out);
void reach_list_clear(struct reach_list *l);
/* Whether some part of l is REACH_OPAQUE. */
bool reach_any_opaque(const struct reach_list *l);
/* Adds the host-like words of text (an environment value) to l as
 * REACH_NAMED parts of `prog`, within REACH_NAMED_MAX. */
void reach_add_named_text(struct reach_list *l, const char *prog, const char *text, size_t len);

/* A policy that only tells the walker which programs are shells and
 * interpreters and where standard programs live: the hook needs the
 * walker's reading, not its risk classes. */
extern const char reach_policy_yaml[];

/* Normalises a host spelling into out (lower case, no trailing dot, no
 * brackets or zone; every IPv4 spelling inet_aton accepts as a dotted quad;
 * IPv6 in canonical form, v4-mapped as IPv4).  false when s is not a
 * plausible host name or address. */
bool reach_norm_host(const char *s, size_t len, char *out, size_t outlen);

#endif
