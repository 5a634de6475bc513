/* jsonrpc.c -- strict JSON-RPC 2.0 framing on top of cJSON. */
#include "mcp/jsonrpc.h"

#include "lib/log.h"
#include "lib/utf8.h"
#include "lib/xalloc.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 2^53 - 1: the largest integer a double (and a JavaScript client) holds exactly. */
#define MAX_SAFE_ID 9007199254740991.0

/* Length of the valid UTF-8 sequence at s (at most n bytes), 0 if invalid. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
	unsigned long cp;

	return utf8_decode(s, n, &cp);
}

/* Length of the JSON number at s[0..n) (RFC 8259: -? (0 | [1-9][0-9]*)
 * (.[0-9]+)? ([eE][+-]?[0-9]+)?), or 0 when the characters a number could
 * hold there do not make one.  cJSON hands anything strtod() takes to it, so
 * 01, -01, 1., .5 after a minus, or 1.e5 would pass it and then be echoed as
 * ids that are not JSON at all. */
static size_t json_number_len(const char *s, size_t n)
{
	size_t i = 0, run = strspn(s, "0123456789+-.eE");

	if (run > n)
		run = n;
	if (i < run && s[i] == '-')
		i++;
	if (i < run && s[i] == '0')
		i++;
	else if (i < run && s[i] >= '1' && s[i] <= '9')
		while (i < run && s[i] >= '0' && s[i] <= '9')
			i++;
	else
		return 0;
	if (i < run && s[i] == '.') {
		size_t d = ++i;
		while (i < run && s[i] >= '0' && s[i] <= '9')
			i++;
		if (i == d)
			return 0;
	}
	if (i < run && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < run && (s[i] == '+' || s[i] == '-'))
			i++;
		size_t d = i;
		while (i < run && s[i] >= '0' && s[i] <= '9')
			i++;
		if (i == d)
			return 0;
	}
	return i == run ? i : 0;
}

/* Checks the raw bytes before cJSON sees them: valid UTF-8, no NUL, no
 * \u0000, and every number outside strings a JSON number as written. */
static const char *raw_check(const char *text, size_t len, char *why, size_t whylen)
{
	const unsigned char *s = (const unsigned char *)text;
	bool in_string = false;

	for (size_t i = 0; i < len;) {
		size_t k;
		if (s[i] == '\0')
			return "a NUL byte in the message";
		if (in_string && s[i] == '\\' && i + 1 < len) {
			if (s[i + 1] == 'u' && i + 5 < len && memcmp(s + i + 2, "0000", 4) == 0)
				return "\\u0000 in a string (NUL characters are not accepted)";
			i += 2;
			continue;
		}
		if (s[i] == '"') {
			in_string = !in_string;
			i++;
			continue;
		}
		if (!in_string && (s[i] == '-' || (s[i] >= '0' && s[i] <= '9'))) {
			k = json_number_len(text + i, len - i);
			if (k == 0) {
				size_t run = strspn(text + i, "0123456789+-.eE");
				snprintf(why, whylen, "%.*s near byte %zu is not a JSON number",
				         (int)(run > 40 ? 40 : run), text + i, i);
				return why;
			}
			i += k;
			continue;
		}
		k = utf8_seq(s + i, len - i);
		if (k == 0)
			return "invalid UTF-8";
		i += k;
	}
	return NULL;
}

cJSON *mcp_json_parse(const char *text, size_t len, char *err, size_t errlen)
{
	char numwhy[96];
	const char *why = raw_check(text, len, numwhy, sizeof(numwhy));
	const char *end = NULL;
	cJSON *item;

	if (why != NULL) {
		snprintf(err, errlen, "%s", why);
		return NULL;
	}
	item = cJSON_ParseWithOpts(text, &end, 1);
	if (item == NULL) {
		size_t at = end != NULL && end >= text ? (size_t)(end - text) : 0;
		snprintf(err, errlen, "invalid JSON near byte %zu", at);
	}
	return item;
}

static int cmp_keys(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

const char *mcp_json_duplicate_key(const cJSON *item)
{
	const char *dup = NULL;
	const cJSON *c;
	const char **keys = NULL;
	size_t n = 0;

	if (!cJSON_IsObject(item) && !cJSON_IsArray(item))
		return NULL;
	for (c = item->child; c != NULL; c = c->next) {
		dup = mcp_json_duplicate_key(c);
		if (dup != NULL)
			return dup;
		n++;
	}
	if (!cJSON_IsObject(item) || n < 2)
		return NULL;
	keys = xmalloc(n * sizeof(*keys));
	n = 0;
	for (c = item->child; c != NULL; c = c->next)
		keys[n++] = c->string;
	qsort(keys, n, sizeof(*keys), cmp_keys);
	for (size_t i = 1; i < n && dup == NULL; i++)
		if (strcmp(keys[i - 1], keys[i]) == 0)
			dup = keys[i];
	free(keys);
	return dup;
}

/* A skimmer over text that cJSON has already accepted: it only has to find
 * where values begin and end, never to validate. */
static size_t skip_ws(const char *s, size_t i, size_t n)
{
	while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n'))
		i++;
	return i;
}

static size_t skip_string(const char *s, size_t i, size_t n)
{
	for (i++; i < n && s[i] != '"'; i++)
		if (s[i] == '\\')
			i++;
	return i < n ? i + 1 : n;
}

static size_t skip_value(const char *s, size_t i, size_t n)
{
	size_t depth = 0;

	if (i < n && s[i] == '"')
		return skip_string(s, i, n);
	if (i < n && s[i] != '{' && s[i] != '[') {
		while (i < n && !strchr(",]} \t\r\n", s[i]))
			i++;
		return i;
	}
	while (i < n) {
		if (s[i] == '"') {
			i = skip_string(s, i, n);
			continue;
		}
		if (s[i] == '{' || s[i] == '[')
			depth++;
		else if ((s[i] == '}' || s[i] == ']') && --depth == 0)
			return i + 1;
		i++;
	}
	return n;
}

size_t *mcp_json_element_spans(const char *text, size_t len, size_t *n)
{
	size_t cap = 16, count = 0;
	size_t *spans = xmalloc(2 * cap * sizeof(*spans));
	size_t i = skip_ws(text, 0, len);

	if (i < len && text[i] == '[')
		i++;
	for (;;) {
		i = skip_ws(text, i, len);
		if (i >= len || text[i] == ']')
			break;
		if (count == cap) {
			cap *= 2;
			spans = xrealloc(spans, 2 * cap * sizeof(*spans));
		}
		spans[2 * count] = i;
		i = skip_value(text, i, len);
		spans[2 * count + 1] = i;
		count++;
		i = skip_ws(text, i, len);
		if (i < len && text[i] == ',')
			i++;
	}
	*n = count;
	return spans;
}

/* Finds the source text of the top-level "id" member of the object in raw. */
static bool raw_id_token(const char *raw, size_t n, size_t *v0, size_t *v1)
{
	size_t i = skip_ws(raw, 0, n);

	if (i >= n || raw[i] != '{')
		return false;
	for (i++;;) {
		size_t k0, k1;
		i = skip_ws(raw, i, n);
		if (i >= n || raw[i] != '"')
			return false;
		k0 = i;
		k1 = i = skip_string(raw, i, n);
		i = skip_ws(raw, i, n);
		if (i >= n || raw[i] != ':')
			return false;
		i = skip_ws(raw, i + 1, n);
		*v0 = i;
		i = *v1 = skip_value(raw, i, n);
		if (k1 - k0 == 4 && memcmp(raw + k0, "\"id\"", 4) == 0)
			return true;
		i = skip_ws(raw, i, n);
		if (i >= n || raw[i] != ',')
			return false;
		i++;
	}
}

/* Whether the JSON number literal s[0..n) denotes an integer, decided on its
 * decimal digits, not on a double: 1e5, 1.0 and 12.50e1 do; 1.5 and 1e-1 do
 * not.  The exponent saturates, so no literal overflows the arithmetic. */
static bool literal_is_integer(const char *s, size_t n)
{
	size_t i = 0, int0, int1, frac0 = 0, frac1 = 0;
	long long exp = 0;
	bool neg = false;

	if (i < n && s[i] == '-')
		i++;
	int0 = i;
	while (i < n && s[i] >= '0' && s[i] <= '9')
		i++;
	int1 = i;
	if (i < n && s[i] == '.') {
		frac0 = ++i;
		while (i < n && s[i] >= '0' && s[i] <= '9')
			i++;
		frac1 = i;
	}
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < n && (s[i] == '+' || s[i] == '-'))
			neg = s[i++] == '-';
		for (; i < n && s[i] >= '0' && s[i] <= '9'; i++)
			if (exp < 1000000000LL)
				exp = exp * 10 + (s[i] - '0');
	}
	if (neg)
		exp = -exp;
	/* The digits are int||frac and the value digits * 10^(exp - len(frac)):
	 * an integer when every significant digit sits left of the point. */
	long long point = exp - (long long)(frac1 - frac0);
	size_t last = frac1 > frac0 ? frac1 : int1; /* one past the last digit */
	bool any = false;
	for (size_t j = int0; j < int1; j++)
		any |= s[j] != '0';
	for (size_t j = frac0; j < frac1; j++)
		any |= s[j] != '0';
	if (!any)
		return true; /* zero */
	while (last > int0) {
		char c = s[last - 1];
		if (c == '.') {
			last--;
			continue;
		}
		if (c != '0')
			break;
		point++;
		last--;
	}
	return point >= 0;
}

/* The id for replies, or NULL when it is not a string or an integer.  A
 * numeric id is echoed as the client wrote it, byte for byte (the message
 * passed raw_check, so the literal is a valid JSON number). */
static cJSON *copy_id(const cJSON *id, const char *raw, size_t rawlen)
{
	size_t v0, v1;
	char num[32];
	double d;

	if (cJSON_IsString(id))
		return cJSON_CreateString(id->valuestring);
	if (!cJSON_IsNumber(id))
		return NULL;
	if (raw != NULL && raw_id_token(raw, rawlen, &v0, &v1)) {
		if (json_number_len(raw + v0, v1 - v0) != v1 - v0 ||
		    !literal_is_integer(raw + v0, v1 - v0))
			return NULL;
		char *lit = xstrndup(raw + v0, v1 - v0);
		cJSON *r = cJSON_CreateRaw(lit);
		free(lit);
		return r;
	}
	/* No source text to echo: only an integer a double holds exactly. */
	d = id->valuedouble;
	if (!isfinite(d) || d != floor(d) || fabs(d) > MAX_SAFE_ID)
		return NULL;
	snprintf(num, sizeof(num), "%.0f", d);
	return cJSON_CreateRaw(num);
}

static void invalid(struct mcp_msg *m, const char *why)
{
	m->kind = MCP_MSG_INVALID;
	snprintf(m->why, sizeof(m->why), "%s", why);
}

void mcp_msg_classify(const cJSON *item, const char *raw, size_t rawlen, struct mcp_msg *m)
{
	const cJSON *jsonrpc, *method, *id;

	memset(m, 0, sizeof(*m));
	if (!cJSON_IsObject(item)) {
		invalid(m, "a JSON-RPC message must be a JSON object");
		return;
	}
	id = cJSON_GetObjectItemCaseSensitive(item, "id");
	if (id != NULL)
		m->id = copy_id(id, raw, rawlen);
	jsonrpc = cJSON_GetObjectItemCaseSensitive(item, "jsonrpc");
	if (!cJSON_IsString(jsonrpc) || strcmp(jsonrpc->valuestring, "2.0") != 0) {
		invalid(m, "\"jsonrpc\" must be the string \"2.0\"");
		return;
	}
	method = cJSON_GetObjectItemCaseSensitive(item, "method");
	if (method == NULL) {
		if (cJSON_GetObjectItemCaseSensitive(item, "result") != NULL ||
		    cJSON_GetObjectItemCaseSensitive(item, "error") != NULL) {
			m->kind = MCP_MSG_RESPONSE;
			return;
		}
		invalid(m, "missing \"method\"");
		return;
	}
	if (!cJSON_IsString(method)) {
		invalid(m, "\"method\" must be a string");
		return;
	}
	if (id != NULL && m->id == NULL) {
		invalid(m, "\"id\" must be a string or an integer (not null, boolean, fraction, "
		           "object or array)");
		return;
	}
	m->method = method->valuestring;
	m->params = cJSON_GetObjectItemCaseSensitive(item, "params");
	if (m->params != NULL && !cJSON_IsObject(m->params) && !cJSON_IsArray(m->params)) {
		invalid(m, "\"params\" must be an object");
		return;
	}
	m->kind = id != NULL ? MCP_MSG_REQUEST : MCP_MSG_NOTIFICATION;
}

void mcp_msg_clear(struct mcp_msg *m)
{
	cJSON_Delete(m->id);
	memset(m, 0, sizeof(*m));
}

static cJSON *reply(const cJSON *id)
{
	cJSON *r = cJSON_CreateObject();

	cJSON_AddStringToObject(r, "jsonrpc", "2.0");
	cJSON_AddItemToObject(r, "id", id != NULL ? cJSON_Duplicate(id, 1) : cJSON_CreateNull());
	return r;
}

cJSON *mcp_reply_result(const cJSON *id, cJSON *result)
{
	cJSON *r = reply(id);

	cJSON_AddItemToObject(r, "result", result);
	return r;
}

cJSON *mcp_reply_error(const cJSON *id, int code, const char *message, cJSON *data)
{
	cJSON *r = reply(id);
	cJSON *e = cJSON_AddObjectToObject(r, "error");

	cJSON_AddNumberToObject(e, "code", code);
	cJSON_AddStringToObject(e, "message", message);
	if (data != NULL)
		cJSON_AddItemToObject(e, "data", data);
	return r;
}

char *mcp_json_print(const cJSON *item)
{
	char *s = cJSON_PrintUnformatted(item);

	if (s == NULL)
		fatal("evt=mcp.json_print_failed");
	return s;
}
