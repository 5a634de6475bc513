/* html.c -- visible, inert HTML text. */
#include "web/html.h"

#include "lib/visible.h"

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
