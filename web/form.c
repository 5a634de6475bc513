/* form.c -- urlencoded key=value&... parsing. */
#include "web/form.h"

#include "lib/xalloc.h"

#include <stdlib.h>
#include <string.h>

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Decodes s[0..len) into a new string; NULL when malformed. */
static char *decode(const char *s, size_t len)
{
	char *out = xmalloc(len + 1);
	size_t n = 0;

	for (size_t i = 0; i < len; i++) {
		if (s[i] == '+') {
			out[n++] = ' ';
		} else if (s[i] == '%') {
			if (i + 2 >= len) {
				free(out);
				return NULL;
			}
			int hi = hexval(s[i + 1]);
			int lo = hexval(s[i + 2]);
			if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) {
				free(out);
				return NULL;
			}
			out[n++] = (char)(hi * 16 + lo);
			i += 2;
		} else {
			out[n++] = s[i];
		}
	}
	out[n] = '\0';
	return out;
}

int form_parse(struct form *f, const char *s, size_t len)
{
	size_t i = 0;

	memset(f, 0, sizeof(*f));
	while (i < len) {
		size_t end = i;
		while (end < len && s[end] != '&')
			end++;
		if (end > i) {
			const char *eq = memchr(s + i, '=', end - i);
			size_t klen = eq ? (size_t)(eq - (s + i)) : end - i;
			if (f->n == FORM_MAX_FIELDS)
				goto bad;
			f->key[f->n] = decode(s + i, klen);
			f->val[f->n] =
			    eq ? decode(eq + 1, (size_t)(s + end - eq - 1)) : xstrdup("");
			f->n++;
			if (f->key[f->n - 1] == NULL || f->val[f->n - 1] == NULL)
				goto bad;
		}
		i = end + 1;
	}
	return 0;
bad:
	form_free(f);
	return -1;
}

const char *form_get(const struct form *f, const char *key)
{
	for (size_t i = 0; i < f->n; i++)
		if (f->key[i] && strcmp(f->key[i], key) == 0)
			return f->val[i];
	return NULL;
}

void form_free(struct form *f)
{
	for (size_t i = 0; i < f->n; i++) {
		free(f->key[i]);
		free(f->val[i]);
	}
	memset(f, 0, sizeof(*f));
}
