/* guestfile.c -- a file's bytes into a VM through `qm guest exec`. */
#include "worker/guestfile.h"

#include "lib/buf.h"
#include "lib/shellquote.h"
#include "lib/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Raw bytes per command: 16 KiB is 21848 base64 characters, well under the
 * transport's one-packet command line limit with the rest of the command. */
#define CHUNK 16384

static void b64_append(struct buf *b, const unsigned char *p, size_t n)
{
	static const char tab[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char q[4];

	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned)p[i] << 16;
		size_t k = n - i < 3 ? n - i : 3;

		if (k > 1)
			v |= (unsigned)p[i + 1] << 8;
		if (k > 2)
			v |= p[i + 2];
		q[0] = tab[(v >> 18) & 63];
		q[1] = tab[(v >> 12) & 63];
		q[2] = k > 1 ? tab[(v >> 6) & 63] : '=';
		q[3] = k > 2 ? tab[v & 63] : '=';
		buf_append(b, q, 4);
	}
}

/* Runs one command in the guest.  0 when it exited 0; -1 with out->error
 * naming what (step) failed and the command's stderr or the transport's
 * reason.  stdout is copied to so (if not NULL). */
static int guest(const struct guestfile_target *g, const char *step, const char *cmd,
                 struct guestfile_result *out, char *so, size_t solen)
{
	struct transport_limits lim = {.timeout_ms = g->timeout_ms > 0 ? g->timeout_ms : 60000,
	                               .output_cap = 8192,
	                               .cancel = g->cancel};
	struct transport_result r;
	int rc = -1;

	out->commands++;
	transport_exec(g->transport, &g->node, TARGET_VM, g->vmid, cmd, &lim, &r);
	if (r.status == TRANSPORT_EXITED && r.exit_code == 0) {
		if (so != NULL)
			snprintf(so, solen, "%s", r.out ? r.out : "");
		rc = 0;
	} else if (r.status == TRANSPORT_EXITED) {
		size_t n = r.err_len;

		while (n > 0 && (r.err[n - 1] == '\n' || r.err[n - 1] == '\r'))
			n--;
		snprintf(out->error, sizeof(out->error), "%s: the guest command exited %d: %.*s",
		         step, r.exit_code, (int)(n > 400 ? 400 : n), r.err ? r.err : "");
	} else {
		snprintf(out->error, sizeof(out->error), "%s: %s", step,
		         r.errmsg[0]                       ? r.errmsg
		         : r.status == TRANSPORT_TIMED_OUT ? "the guest command timed out"
		                                           : "the guest command did not run");
	}
	transport_result_free(&r);
	return rc;
}

/* Step 1: what is at path now. */
static int inspect(const struct guestfile_target *g, const char *qp, struct guestfile_result *out)
{
	struct buf cmd = BUF_INIT;
	char so[512], kind[16] = "";
	int rc = -1;

	buf_init(&cmd, 0);
	/* A directory on the way that is a symbolic link would send the write
	 * somewhere the request did not name: the resolved path is reported. */
	buf_printf(&cmd,
	           "p=%s; d=$(dirname -- \"$p\"); r=$(cd -P -- \"$d\" 2>/dev/null && pwd); "
	           "if [ -n \"$r\" ] && [ \"$r\" != \"$d\" ]; then printf 'linkdir %%s\\n' \"$r\"; "
	           "elif [ -L \"$p\" ]; then echo link; elif [ -f \"$p\" ]; then "
	           "stat -c 'file %%a %%u %%g' -- \"$p\"; elif [ -e \"$p\" ]; then echo other; "
	           "else d=$(dirname -- \"$p\"); if [ -d \"$d\" ] && [ ! -L \"$d\" ]; then "
	           "stat -c 'missing 600 %%u %%g' -- \"$d\"; else echo nodir; fi; fi",
	           qp);
	if (guest(g, "looking at the current file", buf_str(&cmd), out, so, sizeof(so)) < 0)
		goto out;
	if (sscanf(so, "%15s %7s %ld %ld", kind, out->mode, &out->uid, &out->gid) == 4 &&
	    (strcmp(kind, "file") == 0 || strcmp(kind, "missing") == 0)) {
		out->existed = strcmp(kind, "file") == 0;
		rc = 0;
	} else if (strncmp(so, "linkdir ", 8) == 0) {
		so[strcspn(so, "\n")] = '\0';
		snprintf(out->error, sizeof(out->error),
		         "a directory on the path is a symbolic link in the guest (it resolves to "
		         "%.300s); not replaced (restore the path as it really is)",
		         so + 8);
	} else if (strncmp(so, "link", 4) == 0) {
		snprintf(out->error, sizeof(out->error),
		         "the path is a symbolic link in the guest; not replaced (restore its "
		         "target's path instead)");
	} else if (strncmp(so, "nodir", 5) == 0) {
		snprintf(out->error, sizeof(out->error),
		         "its directory does not exist in the guest; not created");
	} else if (strncmp(so, "other", 5) == 0) {
		snprintf(out->error, sizeof(out->error),
		         "the path is not a regular file in the guest (a directory or a device); "
		         "not replaced");
	} else {
		snprintf(out->error, sizeof(out->error),
		         "looking at the current file: unexpected answer from the guest: %.120s",
		         so);
	}
out:
	buf_free(&cmd);
	return rc;
}

static void remove_tmp(const struct guestfile_target *g, const char *qt)
{
	struct guestfile_result ignored = {0};
	char *cmd = xasprintf("rm -f -- %s", qt);

	guest(g, "removing the temporary file", cmd, &ignored, NULL, 0);
	free(cmd);
}

int guestfile_put(const struct guestfile_target *g, const char *path, const unsigned char *data,
                  size_t len, const char *sha256_hex, const char *tmp_suffix,
                  const char *keep_suffix, struct guestfile_result *out)
{
	struct buf cmd = BUF_INIT, tmp = BUF_INIT, keep = BUF_INIT;
	char *qp = shellquote(path), *qt = NULL, *qk = NULL;
	bool tmp_made = false;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	buf_init(&cmd, 0);
	buf_init(&tmp, 0);
	buf_init(&keep, 0);
	buf_printf(&tmp, "%s%s", path, tmp_suffix);
	qt = shellquote(buf_str(&tmp));
	if (inspect(g, qp, out) < 0)
		goto out;
	/* A fresh file: an existing name (or a link planted there) is removed,
	 * then noclobber makes the create fail rather than follow anything. */
	buf_printf(&cmd, "umask 077 && rm -f -- %s && set -C && : > %s", qt, qt);
	if (guest(g, "creating the temporary file", buf_str(&cmd), out, NULL, 0) < 0)
		goto out;
	tmp_made = true;
	for (size_t off = 0; off < len; off += CHUNK) {
		size_t n = len - off < CHUNK ? len - off : CHUNK;

		buf_reset(&cmd);
		buf_puts(&cmd, "printf %s '");
		b64_append(&cmd, data + off, n);
		buf_printf(&cmd, "' | base64 -d >> %s", qt);
		if (guest(g, "copying the bytes into the guest", buf_str(&cmd), out, NULL, 0) < 0)
			goto out;
	}
	buf_reset(&cmd);
	buf_printf(&cmd,
	           "set -e; s=$(sha256sum < %s); if [ \"${s%%%% *}\" != %s ]; then "
	           "echo 'the copy in the guest does not match the checkpoint (SHA-256)' >&2; "
	           "exit 3; fi; chown %ld:%ld -- %s; chmod %s -- %s",
	           qt, sha256_hex, out->uid, out->gid, qt, out->mode, qt);
	if (out->existed && keep_suffix != NULL) {
		buf_printf(&keep, "%s%s", path, keep_suffix);
		qk = shellquote(buf_str(&keep));
		buf_printf(&cmd, "; cp -p -- %s %s", qp, qk);
	}
	buf_printf(&cmd, "; mv -f -- %s %s", qt, qp);
	if (guest(g, "putting the file in place", buf_str(&cmd), out, NULL, 0) < 0)
		goto out;
	tmp_made = false;
	if (qk != NULL)
		snprintf(out->kept_as, sizeof(out->kept_as), "%s", buf_str(&keep));
	rc = 0;
out:
	if (tmp_made)
		remove_tmp(g, qt);
	buf_free(&cmd);
	buf_free(&tmp);
	buf_free(&keep);
	free(qp);
	free(qt);
	free(qk);
	return rc;
}
