/* hmac.c -- HMAC-SHA256 (OpenSSL) in hex; constant-time comparison. */
#include "lib/hmac.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdio.h>
#include <string.h>

void hmac_sha256_hex(const void *key, size_t keylen, const void *msg, size_t msglen, char *out)
{
	unsigned char mac[EVP_MAX_MD_SIZE];
	unsigned int maclen = 0;

	HMAC(EVP_sha256(), key, (int)keylen, msg, msglen, mac, &maclen);
	for (unsigned int i = 0; i < maclen && i < HMAC_HEX_LEN / 2; i++)
		snprintf(out + 2 * i, 3, "%02x", mac[i]);
	out[HMAC_HEX_LEN] = '\0';
	OPENSSL_cleanse(mac, sizeof(mac));
}

bool hmac_equal(const char *a, const char *b)
{
	size_t n;

	if (a == NULL || b == NULL || (n = strlen(a)) != strlen(b))
		return false;
	return CRYPTO_memcmp(a, b, n) == 0;
}
