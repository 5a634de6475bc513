/* framing.c -- newline-delimited framing with a hard line cap. */
#include "mcp/framing.h"

#include "lib/xalloc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define READ_CHUNK (64u * 1024u)

struct mcp_reader {
	int fd;
	size_t max;      /* line cap */
	char *buf;       /* unconsumed bytes live in [start, len) */
	size_t start;    /* first unconsumed byte */
	size_t scanned;  /* bytes after start already known to hold no newline */
	size_t len;      /* bytes held */
	size_t cap;      /* bytes allocated */
	bool discarding; /* inside an over-long line: drop bytes until a newline */
	bool eof;        /* read(2) returned 0 */
};

struct mcp_reader *mcp_reader_new(int fd, size_t max)
{
	struct mcp_reader *r = xcalloc(1, sizeof(*r));

	r->fd = fd;
	r->max = max;
	r->cap = READ_CHUNK + 1;
	r->buf = xmalloc(r->cap);
	return r;
}

void mcp_reader_free(struct mcp_reader *r)
{
	if (r == NULL)
		return;
	free(r->buf);
	free(r);
}

bool mcp_reader_at_eof(const struct mcp_reader *r)
{
	return r->eof;
}

int mcp_reader_fd(const struct mcp_reader *r)
{
	return r->fd;
}

/* Hands out [start, end) as a line; the byte at end (newline or spare) becomes NUL. */
static enum mcp_read take_line(struct mcp_reader *r, size_t end, size_t next, char **line,
                               size_t *len)
{
	char *s = r->buf + r->start;
	size_t n = end - r->start;

	if (n > 0 && s[n - 1] == '\r')
		n--;
	s[n] = '\0';
	r->start = next;
	r->scanned = 0;
	if (r->discarding) {
		r->discarding = false;
		return MCP_READ_TOO_LONG;
	}
	*line = s;
	*len = n;
	return MCP_READ_LINE;
}

enum mcp_read mcp_reader_next(struct mcp_reader *r, char **line, size_t *len)
{
	size_t from = r->start + r->scanned;
	char *nl = memchr(r->buf + from, '\n', r->len - from);

	if (nl != NULL) {
		size_t end = (size_t)(nl - r->buf);
		/* A line that arrived whole in one read is over the cap all the
		 * same: how the bytes were split must not decide. */
		if (end - r->start > r->max)
			r->discarding = true;
		return take_line(r, end, end + 1, line, len);
	}
	r->scanned = r->len - r->start;
	if (r->scanned > r->max || (r->discarding && r->scanned > 0)) {
		/* Over the cap: forget what we hold, remember to drop the rest. */
		r->discarding = true;
		r->start = r->len = r->scanned = 0;
	}
	if (!r->eof)
		return MCP_READ_AGAIN;
	if (r->len > r->start || r->discarding) {
		/* A last line without its newline still counts (the buffer always
		 * keeps one spare byte for the NUL). */
		return take_line(r, r->len, r->len, line, len);
	}
	return MCP_READ_EOF;
}

int mcp_reader_fill(struct mcp_reader *r)
{
	ssize_t n;

	if (r->eof)
		return 0;
	if (r->start > 0) {
		memmove(r->buf, r->buf + r->start, r->len - r->start);
		r->len -= r->start;
		r->start = 0;
	}
	if (r->cap - r->len < READ_CHUNK + 1) {
		/* Never more than the cap plus one chunk: longer lines are discarded. */
		r->cap = r->len + READ_CHUNK + 1;
		r->buf = xrealloc(r->buf, r->cap);
	}
	do
		n = read(r->fd, r->buf + r->len, READ_CHUNK);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -1;
	if (n == 0)
		r->eof = true;
	r->len += (size_t)n;
	return 0;
}

int mcp_write_line(int fd, const char *s, size_t len)
{
	char *msg = xmalloc(len + 1);
	size_t off = 0;
	int rc = -1;

	memcpy(msg, s, len);
	msg[len] = '\n';
	while (off < len + 1) {
		ssize_t n = write(fd, msg + off, len + 1 - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			goto out;
		off += (size_t)n;
	}
	rc = 0;
out:
	free(msg);
	return rc;
}
