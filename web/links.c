/* links.c -- sign-in return paths, tokens, percent-encoding. */
#include "web/links.h"

#include <string.h>

bool links_safe_next(const char *next)
{
	size_t n;

	if (next == NULL || next[0] != '/' || next[1] == '/' || next[1] == '\\')
		return false;
	n = strlen(next);
	if (n > LINKS_NEXT_MAX)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)next[i];
		if (c < 0x21 || c > 0x7e || c == '\\')
			return false;
	}
	/* The sign-in form itself is no page to come back to. */
	return strncmp(next, "/login", 6) != 0 || (next[6] != '\0' && next[6] != '?');
}

void links_encode(struct buf *b, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";

	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    c == '-' || c == '.' || c == '_' || c == '~') {
			buf_putc(b, (char)c);
		} else {
			buf_putc(b, '%');
			buf_putc(b, hex[c >> 4]);
			buf_putc(b, hex[c & 15]);
		}
	}
}

bool links_token_ok(const char *t)
{
	if (t == NULL || strlen(t) != LINKS_TOKEN_LEN)
		return false;
	for (const char *p = t; *p; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
			return false;
	return true;
}
