/* jsonrpc.h -- JSON-RPC 2.0 as MCP uses it: strict parsing, exact ids, replies.
 *
 * cJSON alone is too lenient for a protocol door: it accepts
 * trailing garbage, invalid UTF-8, "\u0000" that silently cuts a string, and
 * duplicate keys, and it prints large integers as doubles.  This module puts
 * the strictness around it and keeps numeric ids as the literal text the
 * client sent, so they round-trip byte for byte. */
#ifndef AIRLOCK_MCP_JSONRPC_H
#define AIRLOCK_MCP_JSONRPC_H

#include <cjson/cJSON.h>
#include <stddef.h>

enum {
	MCP_PARSE_ERROR = -32700,
	MCP_INVALID_REQUEST = -32600,
	MCP_METHOD_NOT_FOUND = -32601,
	MCP_INVALID_PARAMS = -32602,
	MCP_INTERNAL_ERROR = -32603,
};

/* Parses text[0..len) (text[len] must be NUL) as exactly one JSON value:
 * valid UTF-8, no NUL byte, no "\u0000" escape, nothing but whitespace after
 * the value, nesting within cJSON's limit.  NULL with the reason in err. */
cJSON *mcp_json_parse(const char *text, size_t len, char *err, size_t errlen);

/* The first key found twice in one object anywhere inside item, or NULL.
 * Borrowed from item. */
const char *mcp_json_duplicate_key(const cJSON *item);

/* Source spans of the elements of the top-level array in text (which must
 * already have parsed as an array): spans[2i], spans[2i+1] = start, end.
 * Returns an array the caller frees and sets *n. */
size_t *mcp_json_element_spans(const char *text, size_t len, size_t *n);

enum mcp_msg_kind {
	MCP_MSG_REQUEST,      /* method and a valid id: must be answered */
	MCP_MSG_NOTIFICATION, /* method, no id: never answered */
	MCP_MSG_RESPONSE,     /* result or error: a reply to us (we send no requests) */
	MCP_MSG_INVALID,      /* answer -32600 with id (NULL = null) */
};

struct mcp_msg {
	enum mcp_msg_kind kind;
	cJSON *id;           /* owned; the id for replies, NULL = null */
	const char *method;  /* borrowed from the parsed item */
	const cJSON *params; /* borrowed; NULL when absent */
	char why[160];       /* INVALID: what is wrong, for the error message */
};

/* Classifies one parsed message.  raw/rawlen is the message's own source text
 * (the whole line, or one batch element) so that numeric ids are echoed as
 * written.  Release with mcp_msg_clear(). */
void mcp_msg_classify(const cJSON *item, const char *raw, size_t rawlen, struct mcp_msg *m);
void mcp_msg_clear(struct mcp_msg *m);

/* Replies.  id is copied (NULL = null); result and data are taken over. */
cJSON *mcp_reply_result(const cJSON *id, cJSON *result);
cJSON *mcp_reply_error(const cJSON *id, int code, const char *message, cJSON *data);

/* One line of compact JSON (cJSON escapes control characters, so never a
 * newline inside).  The caller frees it. */
char *mcp_json_print(const cJSON *item);

#endif
