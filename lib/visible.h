/* visible.h -- text that came from an agent or a target, made safe to show a person.
 *
 * A command, a reason quoting its words, a change id, a command's output: all
 * of it was written by someone airlock does not trust, and a terminal obeys
 * what it is sent.  A carriage return or an erase-line escape rewrites the
 * line the operator is reading; an OSC sequence retitles the window or fills
 * the clipboard; a right-to-left override reverses what follows; a zero-width
 * or look-alike space hides a word boundary.  visible_text() renders such
 * characters as escapes, so every byte that was sent is on the screen and no
 * byte acts on the terminal.
 *
 * Escapes: \r \n \t; \xNN for other C0 controls, DEL and every byte that is not
 * valid UTF-8; \uXXXX (\UXXXXXXXX past the BMP) for C1 controls, every
 * format character (Unicode category Cf: bidi marks, embeddings, overrides and
 * isolates, zero-width characters, tags, ...), other invisible characters
 * (fillers, the braille blank), every space but U+0020 and the line and
 * paragraph separators, the generic combining marks, variation selectors,
 * private-use and non-characters.  When a text needed any escape, its own
 * backslashes are doubled as well, so the rendering reads back as exactly one
 * text; a text that needed none is returned unchanged. */
#ifndef AIRLOCK_VISIBLE_H
#define AIRLOCK_VISIBLE_H

#include <stdbool.h>
#include <stddef.h>

enum visible_flags {
	/* Keep newline and tab as they are: a block of output, shown line by line. */
	VISIBLE_LINES = 1 << 0,
	/* The text is JSON (e.g. jsonb's text form): its backslashes already are
	 * escapes, so they are not doubled, and \uXXXX escapes stay valid JSON. */
	VISIBLE_JSON = 1 << 1,
};

struct visible_info {
	size_t hidden; /* characters (or invalid bytes) shown as escapes */
	size_t cut;    /* bytes of the input left out because of max */
};

/* Renders s[0..len) (any bytes, NUL included).  max > 0 caps the result at
 * max bytes, cutting only between whole characters and escapes.  The result
 * is valid UTF-8 and the caller's to free; info may be NULL. */
char *visible_text(const char *s, size_t len, unsigned flags, size_t max,
                   struct visible_info *info);

/* visible_text() of a C string, whole; NULL renders as "". */
char *visible_str(const char *s, unsigned flags);

/* Whether code point cp is one that visible_text() escapes. */
bool visible_escapes(unsigned long cp);

#endif
