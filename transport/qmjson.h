/* qmjson.h -- decode what `qm guest exec` and `qm guest exec-status` print.
 *
 * qm prints Perl JSON::PP output (pretty, sorted keys, 1/0 booleans) of one
 * flat object: exited, exitcode, signal, pid, out-data, err-data,
 * out-truncated, err-truncated (proxmox.md 2.3).  out-data/err-data are the
 * guest's bytes "double encoded": each byte became one code point
 * U+0000..U+00FF before UTF-8 encoding, so decoding maps each code point back
 * to one byte (a code point above U+00FF is a protocol error).
 *
 * The parser is incremental (feed it the SSH channel's chunks as they come) and
 * writes the decoded streams straight into capped buffers, so a 16 MiB
 * out-data never has to be held twice.  It accepts any JSON whitespace, escape
 * and key order, and true/false as well as 1/0. */
#ifndef AIRLOCK_QMJSON_H
#define AIRLOCK_QMJSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/buf.h"

struct qmjson_result {
	bool has_exited, has_exitcode, has_signal, has_pid;
	bool exited;
	int exitcode;
	int signal;
	int64_t pid;
	struct buf out, err; /* decoded guest bytes; .truncated set past the cap */
	bool out_truncated;  /* the agent's out-truncated flag */
	bool err_truncated;  /* the agent's err-truncated flag */
};

struct qmjson;

/* cap: the most bytes kept per stream (0 = unbounded). */
struct qmjson *qmjson_new(size_t cap);
/* 0, or -1 once the input is not such an object (sticky; see qmjson_error). */
int qmjson_feed(struct qmjson *p, const char *data, size_t n);
/* 0 when a complete object was read (trailing whitespace only); -1 otherwise. */
int qmjson_finish(struct qmjson *p);
/* Borrowed until qmjson_free(): the fields read so far. */
struct qmjson_result *qmjson_result(struct qmjson *p);
/* Borrowed until qmjson_free(): why the input was rejected, "" if it was not. */
const char *qmjson_error(const struct qmjson *p);
void qmjson_free(struct qmjson *p); /* NULL is a no-op */

#endif
