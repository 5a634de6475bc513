/* sha256.h -- SHA-256 as lowercase hex (OpenSSL underneath). */
#ifndef AIRLOCK_SHA256_H
#define AIRLOCK_SHA256_H

#include <stddef.h>

#define SHA256_HEX_LEN 64

/* Writes the 64 hex digits and a NUL into out. */
void sha256_hex(const void *data, size_t len, char out[SHA256_HEX_LEN + 1]);

#endif
