/* visible.c -- render untrusted text with its hidden characters as escapes. */
#include "lib/visible.h"

#include "lib/buf.h"
#include "lib/utf8.h"
#include "lib/xalloc.h"

#include <stdio.h>
#include <string.h>

/* Code point ranges escaped besides the C0/C1 controls and DEL. */
static const struct {
	unsigned long lo, hi;
} hidden_ranges[] = {
    {0x00a0, 0x00a0},   /* no-break space */
    {0x00ad, 0x00ad},   /* soft hyphen */
    {0x0300, 0x036f},   /* combining diacritical marks */
    {0x034f, 0x034f},   /* combining grapheme joiner */
    {0x0600, 0x0605},   /* Arabic number signs (format characters) */
    {0x061c, 0x061c},   /* Arabic letter mark (bidi) */
    {0x06dd, 0x06dd},   /* Arabic end of ayah (format) */
    {0x070f, 0x070f},   /* Syriac abbreviation mark (format) */
    {0x0890, 0x0891},   /* Arabic pound/piastre marks above (format) */
    {0x08e2, 0x08e2},   /* Arabic disputed end of ayah (format) */
    {0x115f, 0x1160},   /* Hangul fillers */
    {0x1680, 0x1680},   /* Ogham space mark */
    {0x17b4, 0x17b5},   /* Khmer inherent vowels (invisible) */
    {0x180b, 0x180f},   /* Mongolian variation selectors, vowel separator */
    {0x1ab0, 0x1aff},   /* combining marks extended */
    {0x1dc0, 0x1dff},   /* combining marks supplement */
    {0x2000, 0x200f},   /* spaces, zero-width space/joiners, LRM, RLM */
    {0x2028, 0x202f},   /* line/paragraph separators, bidi embeddings and overrides */
    {0x205f, 0x206f},   /* math space, word joiner, invisible operators, isolates */
    {0x20d0, 0x20ff},   /* combining marks for symbols */
    {0x2800, 0x2800},   /* braille blank */
    {0x3000, 0x3000},   /* ideographic space */
    {0x3164, 0x3164},   /* Hangul filler */
    {0xe000, 0xf8ff},   /* private use */
    {0xfdd0, 0xfdef},   /* non-characters */
    {0xfe00, 0xfe0f},   /* variation selectors */
    {0xfe20, 0xfe2f},   /* combining half marks */
    {0xfeff, 0xfeff},   /* zero-width no-break space (BOM) */
    {0xffa0, 0xffa0},   /* halfwidth Hangul filler */
    {0xfff0, 0xfffb},   /* specials: interlinear annotation controls */
    {0x110bd, 0x110bd}, /* Kaithi number sign (format) */
    {0x110cd, 0x110cd}, /* Kaithi number sign above (format) */
    {0x13430, 0x1343f}, /* Egyptian hieroglyph format controls */
    {0x1bca0, 0x1bca3}, /* shorthand format controls */
    {0x1d173, 0x1d17a}, /* musical formatting controls */
    {0xe0000, 0xe0fff}, /* tags, variation selectors supplement */
    {0xf0000, 0x10ffff} /* supplementary private use */
};

bool visible_escapes(unsigned long cp)
{
	if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f))
		return true;
	if ((cp & 0xfffe) == 0xfffe) /* U+nFFFE, U+nFFFF: non-characters */
		return true;
	for (size_t i = 0; i < sizeof(hidden_ranges) / sizeof(hidden_ranges[0]); i++)
		if (cp >= hidden_ranges[i].lo && cp <= hidden_ranges[i].hi)
			return true;
	return false;
}

/* The rendering of the character (or invalid byte) at s[i]: its escape in
 * esc (returns true) or itself (returns false).  *step gets its length. */
static bool render_one(const unsigned char *s, size_t n, size_t i, unsigned flags, char *esc,
                       size_t esclen, size_t *step)
{
	unsigned long cp;
	size_t k = utf8_decode(s + i, n - i, &cp);

	if (k == 0) {
		*step = 1;
		snprintf(esc, esclen, "\\x%02x", s[i]);
		return true;
	}
	*step = k;
	if ((flags & VISIBLE_LINES) && (cp == '\n' || cp == '\t'))
		return false;
	if (!visible_escapes(cp))
		return false;
	if (cp == '\r')
		snprintf(esc, esclen, "\\r");
	else if (cp == '\n')
		snprintf(esc, esclen, "\\n");
	else if (cp == '\t')
		snprintf(esc, esclen, "\\t");
	else if (cp < 0x80)
		snprintf(esc, esclen, "\\x%02lx", cp);
	else if (cp <= 0xffff)
		snprintf(esc, esclen, "\\u%04lx", cp);
	else
		snprintf(esc, esclen, "\\U%08x", (unsigned)cp); /* cp <= 0x10ffff */
	return true;
}

char *visible_text(const char *text, size_t len, unsigned flags, size_t max,
                   struct visible_info *info)
{
	const unsigned char *s = (const unsigned char *)text;
	struct buf out = BUF_INIT;
	size_t hidden = 0, step, i;
	char esc[16];
	bool double_backslash;

	if (text == NULL)
		len = 0;
	for (i = 0; i < len; i += step)
		if (render_one(s, len, i, flags, esc, sizeof(esc), &step))
			hidden++;
	double_backslash = hidden > 0 && !(flags & VISIBLE_JSON);
	for (i = 0; i < len; i += step) {
		const char *piece = (const char *)s + i;
		size_t plen;
		if (render_one(s, len, i, flags, esc, sizeof(esc), &step)) {
			piece = esc;
			plen = strlen(esc);
		} else if (s[i] == '\\' && double_backslash) {
			piece = "\\\\";
			plen = 2;
		} else {
			plen = step;
		}
		if (max > 0 && out.len + plen > max)
			break;
		buf_append(&out, piece, plen);
	}
	if (info != NULL) {
		info->hidden = hidden;
		info->cut = len - i;
	}
	return buf_steal(&out);
}

char *visible_str(const char *s, unsigned flags)
{
	return visible_text(s, s ? strlen(s) : 0, flags, 0, NULL);
}
