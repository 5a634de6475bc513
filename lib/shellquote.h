/* shellquote.h -- POSIX single-quote escaping: one string becomes one shell word.
 *
 * The only rule: wrap in single quotes, and write each ' inside as '\'' (close
 * the quote, an escaped quote, reopen).  Inside single quotes a POSIX shell
 * interprets nothing -- no $, `, \, globbing, word splitting or newline -- so
 * the word is the exact bytes of the input, whatever they are (any byte but
 * NUL, which no argv element can hold).  Used wherever airlock builds a
 * command line that a remote login shell will parse (transport/). */
#ifndef AIRLOCK_SHELLQUOTE_H
#define AIRLOCK_SHELLQUOTE_H

#include <stddef.h>

#include "lib/buf.h"

/* Appends the quoted form of the n bytes at s to b. */
void shellquote_append(struct buf *b, const char *s, size_t n);
/* The quoted form of the NUL-terminated s; the caller frees it. */
char *shellquote(const char *s);

#endif
