/* hmac.h -- HMAC-SHA256 in hex, and comparing secrets without telling by
 * the time it takes where they differ. */
#ifndef AIRLOCK_HMAC_H
#define AIRLOCK_HMAC_H

#include <stdbool.h>
#include <stddef.h>

#define HMAC_HEX_LEN 64 /* hex characters of an HMAC-SHA256 */

/* out (HMAC_HEX_LEN + 1 bytes) gets the lowercase hex HMAC-SHA256 of
 * msg[0..msglen) under key[0..keylen). */
void hmac_sha256_hex(const void *key, size_t keylen, const void *msg, size_t msglen, char *out);

/* Whether a and b (NUL-terminated; NULL never matches) are equal, in time
 * that depends only on their lengths. */
bool hmac_equal(const char *a, const char *b);

#endif
