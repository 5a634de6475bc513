/* sha256.c -- SHA-256 as lowercase hex. */
#include "lib/sha256.h"

#include <openssl/sha.h>

void sha256_hex(const void *data, size_t len, char out[SHA256_HEX_LEN + 1])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char md[SHA256_DIGEST_LENGTH];

	SHA256(data, len, md);
	for (int i = 0; i < SHA256_DIGEST_LENGTH; i++) {
		out[2 * i] = hex[md[i] >> 4];
		out[2 * i + 1] = hex[md[i] & 15];
	}
	out[SHA256_HEX_LEN] = '\0';
}
