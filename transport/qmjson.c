/* qmjson.c -- incremental decoder of qm's exec JSON (see qmjson.h). */
#include "transport/qmjson.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/buf.h"
#include "lib/xalloc.h"

enum state {
	ST_OBJ_OPEN,     /* before '{' */
	ST_KEY_OR_CLOSE, /* after '{' */
	ST_KEY_OPEN,     /* after ',' */
	ST_KEY,          /* inside a key string */
	ST_COLON,
	ST_VALUE,
	ST_STRING, /* inside a value string */
	ST_NUMBER,
	ST_LITERAL,
	ST_AFTER_VALUE,
	ST_DONE,
	ST_ERROR,
};

enum key { K_OTHER, K_EXITED, K_EXITCODE, K_SIGNAL, K_PID, K_OUT, K_ERR, K_OUTTR, K_ERRTR };

struct qmjson {
	enum state st;
	struct qmjson_result r;
	char key[32];
	size_t keylen;
	bool key_odd; /* longer than key[] or not ASCII: never one we know */
	enum key cur;
	struct buf *sink; /* the stream a value string decodes into, or NULL */
	int esc;          /* 0, 1 after a backslash, 2..5 reading \u hex digits */
	unsigned ucp;
	int u8need; /* UTF-8 continuation bytes still expected */
	unsigned u8cp;
	unsigned u8min; /* smallest code point valid for this sequence length */
	int64_t num;
	bool neg;
	int ndigits;
	char lit[8];
	size_t litlen;
	char err[128];
};

static const struct {
	const char *name;
	enum key key;
} keys[] = {
    {"exited", K_EXITED},       {"exitcode", K_EXITCODE},
    {"signal", K_SIGNAL},       {"pid", K_PID},
    {"out-data", K_OUT},        {"err-data", K_ERR},
    {"out-truncated", K_OUTTR}, {"err-truncated", K_ERRTR},
};

struct qmjson *qmjson_new(size_t cap)
{
	struct qmjson *p = xcalloc(1, sizeof(*p));

	buf_init(&p->r.out, cap);
	buf_init(&p->r.err, cap);
	p->r.exitcode = -1;
	return p;
}

void qmjson_free(struct qmjson *p)
{
	if (p == NULL)
		return;
	buf_free(&p->r.out);
	buf_free(&p->r.err);
	free(p);
}

struct qmjson_result *qmjson_result(struct qmjson *p)
{
	return &p->r;
}

const char *qmjson_error(const struct qmjson *p)
{
	return p->err;
}

static int fail(struct qmjson *p, const char *why)
{
	if (p->st != ST_ERROR)
		snprintf(p->err, sizeof(p->err), "qm output is not the expected JSON: %s", why);
	p->st = ST_ERROR;
	return -1;
}

static int is_ws(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* One decoded code point of the current string. */
static int emit(struct qmjson *p, unsigned cp)
{
	if (p->st == ST_KEY) {
		if (cp < 0x80 && p->keylen < sizeof(p->key) - 1)
			p->key[p->keylen++] = (char)cp;
		else
			p->key_odd = true;
		return 0;
	}
	if (p->sink == NULL)
		return 0;
	if (cp > 0xff)
		return fail(p, "a code point above U+00FF in out-data/err-data");
	char byte = (char)cp;
	buf_append(p->sink, &byte, 1);
	return 0;
}

static void key_done(struct qmjson *p)
{
	p->cur = K_OTHER;
	p->key[p->keylen] = '\0';
	if (p->key_odd)
		return;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (strcmp(p->key, keys[i].name) == 0)
			p->cur = keys[i].key;
}

/* A scalar value for the current key; isnull: JSON null (ignored). */
static int assign(struct qmjson *p, int64_t v, bool isnull)
{
	if (isnull)
		return 0;
	switch (p->cur) {
	case K_EXITED:
		p->r.has_exited = true;
		p->r.exited = v != 0;
		break;
	case K_EXITCODE:
		p->r.has_exitcode = true;
		p->r.exitcode = (int)v;
		break;
	case K_SIGNAL:
		p->r.has_signal = true;
		p->r.signal = (int)v;
		break;
	case K_PID:
		p->r.has_pid = true;
		p->r.pid = v;
		break;
	case K_OUTTR:
		p->r.out_truncated = v != 0;
		break;
	case K_ERRTR:
		p->r.err_truncated = v != 0;
		break;
	case K_OUT:
	case K_ERR:
		return fail(p, "out-data/err-data is not a string");
	case K_OTHER:
		break;
	}
	return 0;
}

/* One byte inside a string (key or value); handles escapes and UTF-8. */
static int string_byte(struct qmjson *p, unsigned char c)
{
	if (p->esc == 1) {
		static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
		const char *e = c ? strchr(from, c) : NULL;

		if (c == 'u') {
			p->esc = 2;
			p->ucp = 0;
			return 0;
		}
		if (e == NULL)
			return fail(p, "a bad escape");
		p->esc = 0;
		return emit(p, (unsigned char)to[e - from]);
	}
	if (p->esc >= 2) {
		int v = c >= '0' && c <= '9'   ? c - '0'
		        : c >= 'a' && c <= 'f' ? c - 'a' + 10
		        : c >= 'A' && c <= 'F' ? c - 'A' + 10
		                               : -1;
		if (v < 0)
			return fail(p, "a bad \\u escape");
		p->ucp = p->ucp * 16 + (unsigned)v;
		if (++p->esc < 6)
			return 0;
		p->esc = 0;
		return emit(p, p->ucp);
	}
	if (p->u8need > 0) {
		if ((c & 0xc0) != 0x80)
			return fail(p, "invalid UTF-8");
		p->u8cp = (p->u8cp << 6) | (c & 0x3f);
		if (--p->u8need > 0)
			return 0;
		if (p->u8cp < p->u8min || p->u8cp > 0x10ffff)
			return fail(p, "invalid UTF-8");
		return emit(p, p->u8cp);
	}
	if (c == '\\') {
		p->esc = 1;
		return 0;
	}
	if (c == '"') {
		if (p->st == ST_KEY) {
			key_done(p);
			p->st = ST_COLON;
		} else {
			p->st = ST_AFTER_VALUE;
		}
		return 0;
	}
	if (c < 0x20)
		return fail(p, "a control character in a string");
	if (c < 0x80)
		return emit(p, c);
	if (c >= 0xc2 && c <= 0xdf) {
		p->u8need = 1, p->u8cp = c & 0x1f, p->u8min = 0x80;
	} else if (c >= 0xe0 && c <= 0xef) {
		p->u8need = 2, p->u8cp = c & 0x0f, p->u8min = 0x800;
	} else if (c >= 0xf0 && c <= 0xf4) {
		p->u8need = 3, p->u8cp = c & 0x07, p->u8min = 0x10000;
	} else {
		return fail(p, "invalid UTF-8");
	}
	return 0;
}

static int start_value(struct qmjson *p, unsigned char c)
{
	if (c == '"') {
		if (p->cur != K_OUT && p->cur != K_ERR && p->cur != K_OTHER)
			return fail(p, "a string where a number belongs");
		p->sink = p->cur == K_OUT ? &p->r.out : p->cur == K_ERR ? &p->r.err : NULL;
		p->st = ST_STRING;
		return 0;
	}
	if (c == '-' || (c >= '0' && c <= '9')) {
		p->st = ST_NUMBER;
		p->neg = c == '-';
		p->num = c == '-' ? 0 : c - '0';
		p->ndigits = c == '-' ? 0 : 1;
		return 0;
	}
	if (c == 't' || c == 'f' || c == 'n') {
		p->st = ST_LITERAL;
		p->lit[0] = (char)c;
		p->litlen = 1;
		return 0;
	}
	return fail(p, "an unexpected value");
}

/* The byte after a number or literal ends it; returns the assign status. */
static int end_scalar(struct qmjson *p)
{
	if (p->st == ST_NUMBER) {
		if (p->ndigits == 0)
			return fail(p, "a bad number");
		p->st = ST_AFTER_VALUE;
		return assign(p, p->neg ? -p->num : p->num, false);
	}
	p->lit[p->litlen] = '\0';
	p->st = ST_AFTER_VALUE;
	if (strcmp(p->lit, "true") == 0)
		return assign(p, 1, false);
	if (strcmp(p->lit, "false") == 0)
		return assign(p, 0, false);
	if (strcmp(p->lit, "null") == 0)
		return assign(p, 0, true);
	return fail(p, "a bad literal");
}

static int step(struct qmjson *p, unsigned char c)
{
	switch (p->st) {
	case ST_OBJ_OPEN:
		if (is_ws(c))
			return 0;
		if (c != '{')
			return fail(p, "no opening brace");
		p->st = ST_KEY_OR_CLOSE;
		return 0;
	case ST_KEY_OR_CLOSE:
	case ST_KEY_OPEN:
		if (is_ws(c))
			return 0;
		if (c == '}' && p->st == ST_KEY_OR_CLOSE) {
			p->st = ST_DONE;
			return 0;
		}
		if (c != '"')
			return fail(p, "a key that is not a string");
		p->st = ST_KEY;
		p->keylen = 0;
		p->key_odd = false;
		return 0;
	case ST_KEY:
	case ST_STRING:
		return string_byte(p, c);
	case ST_COLON:
		if (is_ws(c))
			return 0;
		if (c != ':')
			return fail(p, "no colon after a key");
		p->st = ST_VALUE;
		return 0;
	case ST_VALUE:
		if (is_ws(c))
			return 0;
		return start_value(p, c);
	case ST_NUMBER:
		if (c >= '0' && c <= '9') {
			if (p->num > (INT64_MAX - 9) / 10)
				return fail(p, "a number out of range");
			p->num = p->num * 10 + (c - '0');
			p->ndigits++;
			return 0;
		}
		if (c == '.' || c == 'e' || c == 'E')
			return fail(p, "a number that is not an integer");
		if (end_scalar(p) < 0)
			return -1;
		return step(p, c);
	case ST_LITERAL:
		if (c >= 'a' && c <= 'z') {
			if (p->litlen >= 5)
				return fail(p, "a bad literal");
			p->lit[p->litlen++] = (char)c;
			return 0;
		}
		if (end_scalar(p) < 0)
			return -1;
		return step(p, c);
	case ST_AFTER_VALUE:
		if (is_ws(c))
			return 0;
		if (c == ',') {
			p->st = ST_KEY_OPEN;
			return 0;
		}
		if (c == '}') {
			p->st = ST_DONE;
			return 0;
		}
		return fail(p, "no comma or closing brace after a value");
	case ST_DONE:
		if (is_ws(c))
			return 0;
		return fail(p, "data after the object");
	case ST_ERROR:
		return -1;
	}
	return -1;
}

int qmjson_feed(struct qmjson *p, const char *data, size_t n)
{
	const unsigned char *s = (const unsigned char *)data, *end = s + n;

	while (s < end) {
		if (p->st == ST_ERROR)
			return -1;
		/* Fast path: a run of plain ASCII inside a value string. */
		if (p->st == ST_STRING && p->esc == 0 && p->u8need == 0) {
			const unsigned char *r = s;
			while (r < end && *r >= 0x20 && *r < 0x80 && *r != '"' && *r != '\\')
				r++;
			if (r > s) {
				if (p->sink)
					buf_append(p->sink, s, (size_t)(r - s));
				s = r;
				continue;
			}
		}
		if (step(p, *s++) < 0)
			return -1;
	}
	return 0;
}

int qmjson_finish(struct qmjson *p)
{
	if (p->st == ST_ERROR)
		return -1;
	if (p->st != ST_DONE)
		return fail(p, "the object is incomplete");
	return 0;
}
