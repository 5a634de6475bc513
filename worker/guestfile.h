/* guestfile.h -- write a file into a VM through the transport: the bytes
 * travel base64-encoded inside `qm guest exec` commands (the guest agent's
 * command line carries UTF-8 only), so any bytes arrive exactly, NUL and
 * high bytes included.
 *
 * Each guest command is one shell script (run under bash, as every command:
 * transport/shell.h) carrying as many bytes as the
 * transport's one-packet command line leaves room for (about 22 KiB); a
 * small file is one command.  Every script first checks the path (so a
 * change between commands is caught): a regular file (its mode, owner and
 * group are kept), missing (created with mode 0600, owned like its
 * directory), or refused with nothing written: a symbolic link, a directory
 * or a device, a missing directory, or a directory on the way that is a
 * symbolic link.  The first creates a temporary file <path><tmp_suffix>
 * fresh (mode 0600, never following a planted link), each appends its bytes,
 * and the last checks the SHA-256 in the guest, gives the file the mode and
 * owner, keeps the current file as <path><keep_suffix> (cp -p) unless
 * keep_suffix is NULL, and renames the temporary file over the path (atomic:
 * a reader sees the old file or the new one, never a half-written one).
 * A failure removes the temporary file and leaves the current file as it was.
 * The guest needs /bin/bash and coreutils (base64, sha256sum, stat, cp, mv). */
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
	const atomic_bool *cancel; /* optional */
	int timeout_ms;            /* per guest command; 0 = 60000 */
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
