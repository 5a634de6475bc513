/* redact.c -- a URL cut down to what a log may show. */
#include "lib/redact.h"

#include "lib/buf.h"

#include <string.h>

char *redact_url(const char *url)
{
	struct buf out = BUF_INIT;
	const char *sep, *auth, *end, *at, *rest;

	sep = url ? strstr(url, "://") : NULL;
	if (sep == NULL || sep == url ||
	    strspn(url, "abcdefghijklmnopqrstuvwxyz"
	                "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-") != (size_t)(sep - url)) {
		buf_puts(&out, "***");
		return buf_steal(&out);
	}
	auth = sep + 3;
	end = auth + strcspn(auth, "/?#");
	/* The last '@' before the path ends the user information. */
	at = NULL;
	for (const char *p = auth; p < end; p++)
		if (*p == '@')
			at = p;
	buf_append(&out, url, (size_t)(auth - url));
	if (at != NULL) {
		buf_puts(&out, "***@");
		auth = at + 1;
	}
	/* The host and port: only characters a host name or address may hold. */
	for (const char *p = auth; p < end; p++)
		buf_putc(
		    &out,
		    strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:[]_",
		           *p)
		        ? *p
		        : '?');
	rest = end;
	if (*rest == '/' && rest[1] != '\0' && rest[1] != '?' && rest[1] != '#')
		buf_puts(&out, "/***");
	else if (*rest == '/')
		buf_putc(&out, '/');
	if (strchr(rest, '?') != NULL)
		buf_puts(&out, "?***");
	if (strchr(rest, '#') != NULL)
		buf_puts(&out, "#***");
	return buf_steal(&out);
}
