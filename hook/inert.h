/* inert.h -- can a piece of interpreter code reach another machine?
 *
 * The hook cannot run code to see what it does, so it reads it for the
 * capabilities any reach needs: a module or library that opens sockets or
 * starts programs, a primitive that runs text as code (eval, exec, a
 * backquote), a way around those names (dunders, getattr, reflection).  Code
 * with none of them is inert: it can compute and print, not connect.  Any
 * capability, or a language this file does not read, makes it not inert, and
 * the hook asks.  Every word of the code counts, inside string literals too
 * (an f-string or an interpolation is code), so a word there can only make
 * the answer more careful.  No I/O. */
#ifndef AIRLOCK_HOOK_INERT_H
#define AIRLOCK_HOOK_INERT_H

#include <stdbool.h>
#include <stddef.h>

/* True when `code` (for interpreter `prog`: python3, perl, node, ruby,
 * php, lua and their variants) uses no capability that could reach another
 * machine or run a program.  Otherwise false, with what was found ("it
 * imports socket", "perl cannot be read here") in why. */
bool inert_code(const char *prog, const char *code, size_t len, char *why, size_t whylen);

#endif
