/* framing.h -- stdio framing for airlock-mcp: one JSON-RPC message per '\n'-terminated line.
 *
 * A bounded line reader on read(2).  A line longer than the cap is never split
 * into bogus messages and never buffered whole: its bytes are discarded up to
 * the next newline and the caller is told once, so it can answer with an error
 * and keep serving.  Output is written whole with a loop over write(2). */
#ifndef AIRLOCK_MCP_FRAMING_H
#define AIRLOCK_MCP_FRAMING_H

#include <stdbool.h>
#include <stddef.h>

/* Longest accepted message line, in bytes, without its newline. */
#define MCP_LINE_MAX (4u * 1024u * 1024u)

struct mcp_reader;

/* Reads from fd (not owned); max is the line cap (MCP_LINE_MAX in the server). */
struct mcp_reader *mcp_reader_new(int fd, size_t max);
void mcp_reader_free(struct mcp_reader *r); /* NULL is a no-op */

enum mcp_read {
	MCP_READ_LINE, /* line and len hold one line (NUL-terminated; newline, one \r removed) */
	MCP_READ_TOO_LONG, /* a line over the cap was discarded; no *line */
	MCP_READ_AGAIN,    /* no complete line buffered: call mcp_reader_fill() */
	MCP_READ_EOF,      /* input ended and every buffered line was returned */
};

/* Next buffered line.  *line borrows from r and is valid until the next call. */
enum mcp_read mcp_reader_next(struct mcp_reader *r, char **line, size_t *len);
/* One read(2) into the buffer (call when poll() says readable, or to block).
 * Returns 0 on success or EOF (then mcp_reader_next reports what is left, then
 * MCP_READ_EOF), -1 on a read error (errno kept). */
int mcp_reader_fill(struct mcp_reader *r);
bool mcp_reader_at_eof(const struct mcp_reader *r);
int mcp_reader_fd(const struct mcp_reader *r);

/* Writes s (len bytes) and a newline to fd, retrying on EINTR and short
 * writes.  0 on success, -1 when the peer is gone (EPIPE) or on error. */
int mcp_write_line(int fd, const char *s, size_t len);

#endif
