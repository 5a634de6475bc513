/* guestfile.h -- write a file into a VM through the transport: the bytes
 * travel base64-encoded inside `qm guest exec` commands (the guest agent's
 * command line carries UTF-8 only), so any bytes arrive exactly, NUL and
 * high bytes included.
 *
 * Steps, each one guest command (bounded by the transport's deadline):
 *   1 look at the path: a regular file (its mode, owner and group are kept),
 *     missing (created with mode 0600, owned like its directory), or anything
 *     else (a symbolic link, a directory, a device, or a directory on the way
 *     that is a symbolic link: refused, nothing written);
 *   2 write a temporary file beside it (<path><tmp_suffix>, created fresh,
 *     mode 0600) in base64 chunks;
 *   3 check its SHA-256 in the guest, give it the mode and owner, keep the
 *     current file as <path><keep_suffix> (cp -p) unless keep_suffix is NULL,
 *     and rename the temporary file over the path (atomic: a reader sees the
 *     old file or the new one, never a half-written one).
 * A failure removes the temporary file and leaves the current file as it was.
 * The guest needs /bin/sh and coreutils (base64, sha256sum, stat, cp, mv). */
#ifndef AIRLOCK_WORKER_GUESTFILE_H
#define AIRLOCK_WORKER_GUESTFILE_H

#include "transport/transport.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

struct guestfile_target {
	struct transport *transport;
	struct transport_node node;
	int vmid;
	const atomic_int *cancel; /* optional */
	int timeout_ms;           /* per guest command; 0 = 60000 */
};

struct guestfile_result {
	bool existed;       /* a regular file was there and was replaced */
	char mode[8];       /* octal mode given to the new file, e.g. "644" */
	long uid, gid;      /* owner given to the new file */
	char kept_as[1100]; /* where the replaced file was kept, "" when not kept */
	int commands;       /* guest commands sent */
	char error[600];    /* "" or a sentence */
};

/* Writes len bytes at data to path (absolute, in the guest); sha256_hex is
 * their SHA-256.  0 on success, -1 with out->error set. */
int guestfile_put(const struct guestfile_target *g, const char *path, const unsigned char *data,
                  size_t len, const char *sha256_hex, const char *tmp_suffix,
                  const char *keep_suffix, struct guestfile_result *out);

#endif
