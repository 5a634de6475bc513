/* hostkey.h -- is the SSH server the node we mean?  Host key verification.
 *
 * The server's key is trusted when it matches the fingerprint pinned on the
 * node's entity row ("SHA256:<base64>", as `ssh-keygen -l -E sha256` prints),
 * or, when nothing is pinned, an entry for the host in an OpenSSH known_hosts
 * file ("[addr]:port" form for a port other than 22; hashed names work).  An
 * unknown or changed key is a refusal whose message names the host and the
 * fingerprint the server offered -- never a silent accept, never a prompt. */
#ifndef AIRLOCK_HOSTKEY_H
#define AIRLOCK_HOSTKEY_H

#include <stddef.h>

#include <libssh2.h>

/* 0 when the session's host key is trusted; -1 with the refusal in err.
 * name: the node's entity name, for the message.  pinned may be NULL or "";
 * known_hosts may be NULL when pinned is set. */
int hostkey_verify(LIBSSH2_SESSION *s, const char *name, const char *host, int port,
                   const char *pinned, const char *known_hosts, char *err, size_t errlen);

/* "SHA256:<base64 without padding>" of the session's host key into out;
 * 0, or -1 when the key is unavailable. */
int hostkey_fingerprint(LIBSSH2_SESSION *s, char *out, size_t outlen);

#endif
