/* totp.h -- time-based one-time passwords (RFC 6238 over RFC 4226's HOTP):
 * HMAC-SHA1, 30-second steps, 6 digits, the parameters every authenticator
 * app assumes.  Pure: the caller passes the time. */
#ifndef AIRLOCK_TOTP_H
#define AIRLOCK_TOTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TOTP_STEP_S 30
#define TOTP_DIGITS 6

/* The HOTP value of counter under key (a number below 10^6). */
uint32_t totp_hotp(const unsigned char *key, size_t keylen, uint64_t counter);

/* Checks a code typed by a person ("123456", spaces allowed between digits)
 * against the steps around now (one step either side, for clock drift).
 * Returns the matching step, or 0 when the code is malformed or matches
 * none; a step <= not_after (already used) never matches. */
uint64_t totp_check(const unsigned char *key, size_t keylen, const char *code, int64_t now,
                    uint64_t not_after);

/* RFC 4648 base32 without padding, as authenticator apps take secrets.
 * totp_base32 returns a string the caller frees.  totp_unbase32 decodes
 * (case-insensitive, '=' padding and spaces ignored) into out and returns
 * the byte count, or -1 on a character outside the alphabet or overflow. */
char *totp_base32(const unsigned char *data, size_t len);
int totp_unbase32(const char *s, unsigned char *out, size_t outcap);

#endif
