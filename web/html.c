/* html.c -- visible, inert HTML text. */
#include "web/html.h"

#include "lib/utf8.h"
#include "lib/visible.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void html_esc(struct buf *b, const char *s)
{
	if (s == NULL)
		return;
	for (; *s; s++) {
		switch (*s) {
		case '&':
			buf_puts(b, "&amp;");
			break;
		case '<':
			buf_puts(b, "&lt;");
			break;
		case '>':
			buf_puts(b, "&gt;");
			break;
		case '"':
			buf_puts(b, "&quot;");
			break;
		case '\'':
			buf_puts(b, "&#39;");
			break;
		default:
			buf_putc(b, *s);
		}
	}
}

static size_t render(struct buf *b, const char *s, size_t len, unsigned flags, size_t max)
{
	struct visible_info vi = {0};
	char *v = visible_text(s ? s : "", s ? len : 0, flags, max, &vi);

	if (vi.hidden)
		buf_puts(
		    b,
		    "<span class=\"hidden-chars\" title=\"contains characters shown as escapes\">");
	html_esc(b, v);
	if (vi.hidden)
		buf_puts(b, "</span>");
	if (vi.cut)
		buf_printf(b, "<em class=\"cut\"> [%zu more bytes not shown]</em>", vi.cut);
	free(v);
	return vi.hidden;
}

size_t html_text(struct buf *b, const char *s)
{
	return render(b, s, s ? strlen(s) : 0, 0, 0);
}

size_t html_text_cut(struct buf *b, const char *s, size_t max)
{
	return render(b, s, s ? strlen(s) : 0, 0, max);
}

size_t html_block(struct buf *b, const char *data, size_t len, size_t max)
{
	return render(b, data, len, VISIBLE_LINES, max);
}

bool html_is_bidi(unsigned long cp)
{
	return cp == 0x061c || cp == 0x200e || cp == 0x200f || (cp >= 0x202a && cp <= 0x202e) ||
	       (cp >= 0x2066 && cp <= 0x2069);
}

/* Whether the character (or invalid byte) at s[i] is marked; its length. */
static bool marked(const unsigned char *s, size_t n, size_t i, size_t *step, unsigned long *cp)
{
	size_t k = utf8_decode(s + i, n - i, cp);

	if (k == 0) {
		*step = 1;
		*cp = s[i];
		return true; /* not UTF-8: shown as \xNN */
	}
	*step = k;
	return *cp != '\n' && *cp != '\t' && visible_escapes(*cp);
}

size_t html_command(struct buf *b, const char *str, size_t *bidi)
{
	const unsigned char *s = (const unsigned char *)(str ? str : "");
	size_t n = strlen((const char *)s), i, step, hidden = 0, dir = 0;
	unsigned long cp;
	char esc[48];

	for (i = 0; i < n; i += step)
		hidden += marked(s, n, i, &step, &cp);
	for (i = 0; i < n; i += step) {
		bool valid = utf8_decode(s + i, n - i, &cp) != 0;
		if (!marked(s, n, i, &step, &cp)) {
			if (s[i] == '\\' && hidden > 0)
				buf_puts(b, "\\\\");
			else if (s[i] == '&' || s[i] == '<' || s[i] == '>' || s[i] == '"' ||
			         s[i] == '\'') {
				char one[2] = {(char)s[i], '\0'};
				html_esc(b, one);
			} else
				buf_append(b, (const char *)s + i, step);
			continue;
		}
		bool is_bidi = valid && html_is_bidi(cp);
		dir += is_bidi;
		if (!valid)
			snprintf(esc, sizeof(esc), "\\x%02x", s[i]);
		else if (cp == '\r')
			snprintf(esc, sizeof(esc), "\\r");
		else if (cp < 0x80)
			snprintf(esc, sizeof(esc), "\\x%02lx", cp);
		else if (cp <= 0xffff)
			snprintf(esc, sizeof(esc), "\\u%04lx", cp);
		else
			snprintf(esc, sizeof(esc), "\\U%08lx", cp);
		if (valid)
			buf_printf(b, "<mark class=\"hidden-char%s\" title=\"U+%04lX%s\">",
			           is_bidi ? " bidi" : "", cp,
			           is_bidi ? ", changes the direction of the text" : "");
		else
			buf_printf(b,
			           "<mark class=\"hidden-char\" title=\"byte 0x%02x, not UTF-8\">",
			           s[i]);
		buf_puts(b, esc);
		buf_puts(b, "</mark>");
	}
	if (bidi)
		*bidi = dir;
	return hidden;
}

void html_duration(struct buf *out, const char *secs)
{
	if (secs == NULL) {
		buf_puts(out, "&ndash;");
		return;
	}
	long long s = atoll(secs);
	if (s < 0) {
		buf_puts(out, "overdue");
		return;
	}
	if (s < 60)
		buf_printf(out, "%lld s", s);
	else if (s < 3600)
		buf_printf(out, "%lld min", s / 60);
	else if (s < 86400)
		buf_printf(out, "%lld h %lld min", s / 3600, s % 3600 / 60);
	else
		buf_printf(out, "%lld d %lld h", s / 86400, s % 86400 / 3600);
}
