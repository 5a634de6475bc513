/* utf8.h -- decoding UTF-8 strictly, one sequence at a time. */
#ifndef AIRLOCK_UTF8_H
#define AIRLOCK_UTF8_H

#include <stddef.h>

/* Decodes the UTF-8 sequence at s (n >= 1 bytes left).  Returns its length
 * and sets *cp, or 0 when the bytes there are not valid UTF-8 (overlong,
 * surrogate, past U+10FFFF, cut short). */
size_t utf8_decode(const unsigned char *s, size_t n, unsigned long *cp);

#endif
