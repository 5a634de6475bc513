/* sidedoor.h -- is the side door closed on this host?  For every node
 * airlock manages, every way this host could log in or call its API:
 *
 *   - every SSH key it holds: the private keys in ~/.ssh, the identities
 *     ~/.ssh/config and ssh's defaults name, the running ssh-agent's keys,
 *     PuTTY's .ppk files; each is offered to the node's sshd as the node's
 *     SSH user.  The check never logs in: the ssh it runs holds only the
 *     public half, so it can ask whether the key would be accepted (the
 *     protocol's question before a signature) and no more; the node's log
 *     shows no login, and nothing runs there;
 *   - a password for sshpass in the environment;
 *   - Proxmox API tokens and passwords in the environment and in the files
 *     where clients keep them, and ~/.netrc entries for a node;
 *   - whether the node's SSH and API ports answer from here at all (the
 *     second wall: nodes should accept both only from airlockd's and the
 *     cluster's addresses).
 *
 * Each finding says what it is and what to remove.  No database access
 * here: the caller names the nodes and records the result. */
#ifndef AIRLOCK_HOOK_SIDEDOOR_H
#define AIRLOCK_HOOK_SIDEDOOR_H

#include <stdbool.h>
#include <stddef.h>

struct sidedoor_target {
	const char *slug;    /* proxmox-host:hubris */
	const char *address; /* how airlock reaches it */
	int ssh_port;
	const char *ssh_user; /* the user airlock logs in as (root) */
	int api_port;         /* 8006 */
	const char *pin;      /* "SHA256:..." of its host key, or NULL */
};

enum sidedoor_status {
	SIDEDOOR_CLOSED,  /* this way in is shut */
	SIDEDOOR_OPEN,    /* a credential that works, or would: remove it */
	SIDEDOOR_WALL,    /* a port answers from here: the second wall is missing */
	SIDEDOOR_UNKNOWN, /* could not be told: counts as open */
};

struct sidedoor_finding {
	enum sidedoor_status status;
	const char *subject; /* the node, or "this host" */
	const char *detail;
	const char *fix; /* NULL when nothing is to be done */
};

typedef void (*sidedoor_fn)(void *ctx, const struct sidedoor_finding *f);

struct sidedoor_opts {
	const struct sidedoor_target *targets;
	size_t ntargets;
	const char *home; /* whose keys and files: NULL for $HOME */
	int timeout_ms;   /* each network probe; 0: 5000 */
};

/* Runs every check and reports each finding to fn; returns how many are
 * SIDEDOOR_OPEN or SIDEDOOR_UNKNOWN (the door is proven closed at 0). */
int sidedoor_check(const struct sidedoor_opts *o, sidedoor_fn fn, void *ctx);

const char *sidedoor_status_name(enum sidedoor_status s); /* "closed", "open", "wall", "unknown" */

#endif
