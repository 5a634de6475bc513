/* guestfile.c -- a file's bytes into a VM through `qm guest exec`.
 *
 * Each guest command is one script: the first checks the path and creates
 * the temporary file, the last checks the checksum and puts the file in
 * place, and each carries as many bytes as the one-packet command line
 * leaves room for.  A small file is one command. */
#include "worker/guestfile.h"

#include "lib/buf.h"
#include "lib/shellquote.h"
#include "lib/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The transport's limit on a quoted command line (transport.c), less room
 * for the qm wrapper around it. */
#define CMDLINE_BUDGET (32640 - 1024)
/* Never carry less than this per command (a path near its 1024-byte limit
 * still leaves far more room than this). */
#define MIN_CHUNK 3072

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

/* Length of s once single-quoted for the node's shell. */
static size_t quoted_len(const char *s)
{
	size_t n = strlen(s) + 2;

	for (; *s; s++)
		if (*s == '\'')
			n += 3;
	return n;
}

/* Runs one command in the guest.  0 when it exited 0, with its stdout in so;
 * -1 with out->error: the script's own "airlock: ..." refusal, or what
 * failed and how. */
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
		const char *e = r.err ? r.err : "";

		while (n > 0 && (e[n - 1] == '\n' || e[n - 1] == '\r'))
			n--;
		if (n > 9 && strncmp(e, "airlock: ", 9) == 0)
			snprintf(out->error, sizeof(out->error), "%.*s", (int)(n - 9), e + 9);
		else
			snprintf(out->error, sizeof(out->error),
			         "%s: the guest command exited %d: %.*s", step, r.exit_code,
			         (int)(n > 400 ? 400 : n), e);
	} else {
		snprintf(out->error, sizeof(out->error), "%s: %s", step,
		         r.errmsg[0]                       ? r.errmsg
		         : r.status == TRANSPORT_TIMED_OUT ? "the guest command timed out"
		                                           : "the guest command did not run");
	}
	transport_result_free(&r);
	return rc;
}

/* The checks every script starts with (path in $p): refusals go to stderr
 * as "airlock: ..." and exit 3.  A directory on the way that is a symbolic
 * link would send the write somewhere the request did not name. */
static const char checks[] =
    "d=$(dirname -- \"$p\"); r=$(cd -P -- \"$d\" 2>/dev/null && pwd) || r=; "
    "if [ -z \"$r\" ]; then echo 'airlock: its directory does not exist in the guest; not "
    "created' >&2; exit 3; fi; "
    "if [ \"$r\" != \"$d\" ]; then printf 'airlock: a directory on the path is a symbolic link "
    "in the guest (it resolves to %s); not replaced (restore the path as it really is)\\n' "
    "\"$r\" >&2; exit 3; fi; "
    "if [ -L \"$p\" ]; then echo 'airlock: the path is a symbolic link in the guest; not "
    "replaced (restore its target'\\''s path instead)' >&2; exit 3; fi; "
    "if [ -e \"$p\" ] && [ ! -f \"$p\" ]; then echo 'airlock: the path is not a regular file "
    "in the guest (a directory or a device); not replaced' >&2; exit 3; fi; ";

/* The head of a script: variables, checks, and on the first command a fresh
 * temporary file (an existing name, or a link planted there, is removed;
 * noclobber then makes the create fail rather than follow anything). */
static void head(struct buf *b, const char *qp, const char *qt, bool first)
{
	buf_printf(b, "set -e; p=%s; t=%s; %s", qp, qt, checks);
	if (first)
		buf_puts(b, "umask 077; rm -f -- \"$t\"; set -C; : > \"$t\"; set +C; ");
}

/* The tail of the last script: checksum, owner and mode (the current
 * file's; a new file is 0600, owned like its directory), the current file
 * kept (cp -p) when qk is not NULL, the rename, and what was done on stdout:
 * "existed|new MODE UID GID". */
static void tail(struct buf *b, const char *qp, const char *qt, const char *qk,
                 const char *sha256_hex)
{
	(void)qp;
	(void)qt;
	buf_printf(b,
	           "s=$(sha256sum < \"$t\"); if [ \"${s%%%% *}\" != %s ]; then rm -f -- \"$t\"; "
	           "echo 'airlock: the copy in the guest does not match the checkpoint (SHA-256)' "
	           ">&2; exit 3; fi; "
	           "if [ -f \"$p\" ]; then w=existed; o=$(stat -c %%u:%%g -- \"$p\"); "
	           "m=$(stat -c %%a -- \"$p\"); else w=new; o=$(stat -c %%u:%%g -- \"$d\"); m=600; "
	           "fi; chown \"$o\" -- \"$t\"; chmod \"$m\" -- \"$t\"; ",
	           sha256_hex);
	if (qk != NULL)
		buf_printf(b, "if [ $w = existed ]; then cp -p -- \"$p\" %s; fi; ", qk);
	buf_puts(b, "mv -f -- \"$t\" \"$p\"; echo \"$w $m ${o%%:*} ${o#*:}\"");
}

int guestfile_put(const struct guestfile_target *g, const char *path, const unsigned char *data,
                  size_t len, const char *sha256_hex, const char *tmp_suffix,
                  const char *keep_suffix, struct guestfile_result *out)
{
	struct buf cmd = BUF_INIT, tmp = BUF_INIT, keep = BUF_INIT, probe = BUF_INIT;
	char *qp = shellquote(path), *qt = NULL, *qk = NULL;
	char so[256], what[16] = "";
	bool tmp_made = false;
	size_t chunk, off = 0;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	buf_init(&cmd, 0);
	buf_init(&tmp, 0);
	buf_init(&keep, 0);
	buf_init(&probe, 0);
	buf_printf(&tmp, "%s%s", path, tmp_suffix);
	qt = shellquote(buf_str(&tmp));
	if (keep_suffix != NULL) {
		buf_printf(&keep, "%s%s", path, keep_suffix);
		qk = shellquote(buf_str(&keep));
	}
	/* Room for data: the longest script (first and last at once) without it. */
	head(&probe, qp, qt, true);
	buf_puts(&probe, "printf %s '' | base64 -d >> \"$t\"; ");
	tail(&probe, qp, qt, qk, sha256_hex);
	chunk = quoted_len(buf_str(&probe)) < CMDLINE_BUDGET
	            ? (CMDLINE_BUDGET - quoted_len(buf_str(&probe))) / 4 * 3
	            : 0;
	if (chunk < MIN_CHUNK) {
		snprintf(out->error, sizeof(out->error),
		         "the path is too long to carry the file through the guest agent");
		goto out;
	}
	do {
		size_t n = len - off < chunk ? len - off : chunk;
		bool first = off == 0, last = off + n == len;

		buf_reset(&cmd);
		head(&cmd, qp, qt, first);
		if (n > 0) {
			buf_puts(&cmd, "printf %s '");
			b64_append(&cmd, data + off, n);
			buf_puts(&cmd, "' | base64 -d >> \"$t\"; ");
		}
		if (last)
			tail(&cmd, qp, qt, qk, sha256_hex);
		else
			buf_puts(&cmd, ":");
		tmp_made = true;
		if (guest(g,
		          last ? "putting the file in place" : "copying the bytes into the guest",
		          buf_str(&cmd), out, so, sizeof(so)) < 0)
			goto out;
		off += n;
	} while (off < len);
	tmp_made = false;
	if (sscanf(so, "%15s %7s %ld %ld", what, out->mode, &out->uid, &out->gid) != 4 ||
	    (strcmp(what, "existed") != 0 && strcmp(what, "new") != 0)) {
		snprintf(out->error, sizeof(out->error),
		         "the file was put in place, but the guest's answer was unexpected: %.120s",
		         so);
		goto out;
	}
	out->existed = strcmp(what, "existed") == 0;
	if (out->existed && qk != NULL)
		snprintf(out->kept_as, sizeof(out->kept_as), "%s", buf_str(&keep));
	rc = 0;
out:
	if (tmp_made) {
		struct guestfile_result ignored = {0};
		char *rm = xasprintf("rm -f -- %s", qt);

		guest(g, "removing the temporary file", rm, &ignored, NULL, 0);
		free(rm);
	}
	buf_free(&cmd);
	buf_free(&tmp);
	buf_free(&keep);
	buf_free(&probe);
	free(qp);
	free(qt);
	free(qk);
	return rc;
}
