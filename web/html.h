/* html.h -- text into HTML so that it reads exactly as it was sent and can
 * do nothing.  Everything from the database goes through html_text(): hidden
 * and control characters become visible escapes (lib/visible.h), then the
 * five HTML metacharacters become entities, so neither a terminal trick nor
 * markup survives. */
#ifndef AIRLOCK_WEB_HTML_H
#define AIRLOCK_WEB_HTML_H

#include "lib/buf.h"

#include <stdbool.h>
#include <stddef.h>

/* Appends s with & < > " ' as entities; nothing else changes.  For text that
 * is already visible (our own labels, or html_text's first stage). */
void html_esc(struct buf *b, const char *s);

/* Appends s (NULL as "") rendered visibly then escaped; a text that needed
 * escapes is marked so the reader knows (class "hidden-chars").  Returns how
 * many characters were shown as escapes. */
size_t html_text(struct buf *b, const char *s);

/* html_text() of at most max bytes of s, saying how much more there was. */
size_t html_text_cut(struct buf *b, const char *s, size_t max);

/* The same for a block of output (data[0..len), any bytes): newlines and tabs
 * kept, at most max bytes shown, and a note when more was left out. */
size_t html_block(struct buf *b, const char *data, size_t len, size_t max);

/* A command to decide on: newlines and tabs kept, every other character
 * that visible_text() escapes shown as its escape inside its own
 * <mark class="hidden-char" title="U+XXXX ...">, so each one stands out
 * and can be counted; backslashes are doubled when there is any, as
 * visible_text() does.  Returns how many were marked; *bidi (may be NULL)
 * gets how many of them change the text's direction. */
size_t html_command(struct buf *b, const char *s, size_t *bidi);

/* A number of seconds (decimal text; NULL as a dash) for people: "42 s",
 * "5 min", "3 h 10 min", "2 d 4 h"; a negative one as "overdue". */
void html_duration(struct buf *b, const char *secs);

/* Whether code point cp changes the direction of text (bidi embeddings,
 * overrides, isolates and marks). */
bool html_is_bidi(unsigned long cp);

#endif
