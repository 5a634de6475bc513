/* totp.c -- time-based one-time passwords: HOTP with HMAC-SHA1, base32. */
#include "lib/totp.h"

#include "lib/xalloc.h"

#include <ctype.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <string.h>

static const char b32[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

uint32_t totp_hotp(const unsigned char *key, size_t keylen, uint64_t counter)
{
	unsigned char msg[8], mac[EVP_MAX_MD_SIZE];
	unsigned int maclen = 0;

	for (int i = 7; i >= 0; i--) {
		msg[i] = (unsigned char)(counter & 0xff);
		counter >>= 8;
	}
	if (HMAC(EVP_sha1(), key, (int)keylen, msg, sizeof(msg), mac, &maclen) == NULL ||
	    maclen < 20)
		return UINT32_MAX; /* never a 6-digit value: matches no code */
	/* Dynamic truncation (RFC 4226, 5.3). */
	unsigned off = mac[maclen - 1] & 0x0f;
	uint32_t bin = ((uint32_t)(mac[off] & 0x7f) << 24) | ((uint32_t)mac[off + 1] << 16) |
	               ((uint32_t)mac[off + 2] << 8) | (uint32_t)mac[off + 3];
	return bin % 1000000u;
}

uint64_t totp_check(const unsigned char *key, size_t keylen, const char *code, int64_t now,
                    uint64_t not_after)
{
	uint32_t want = 0;
	int digits = 0;

	if (code == NULL || now < TOTP_STEP_S)
		return 0;
	for (const char *p = code; *p; p++) {
		if (*p == ' ')
			continue;
		if (!isdigit((unsigned char)*p) || ++digits > TOTP_DIGITS)
			return 0;
		want = want * 10 + (uint32_t)(*p - '0');
	}
	if (digits != TOTP_DIGITS)
		return 0;
	uint64_t step = (uint64_t)now / TOTP_STEP_S;
	uint64_t found = 0;
	/* Compare every candidate, so the time taken does not say which matched. */
	for (uint64_t s = step - 1; s <= step + 1; s++) {
		uint32_t v = totp_hotp(key, keylen, s);
		if (v == want && s > not_after && found == 0)
			found = s;
	}
	return found;
}

char *totp_base32(const unsigned char *data, size_t len)
{
	char *out = xmalloc((len * 8 + 4) / 5 + 1);
	size_t n = 0;
	unsigned acc = 0;
	int bits = 0;

	for (size_t i = 0; i < len; i++) {
		acc = (acc << 8) | data[i];
		bits += 8;
		while (bits >= 5) {
			out[n++] = b32[(acc >> (bits - 5)) & 31];
			bits -= 5;
		}
	}
	if (bits > 0)
		out[n++] = b32[(acc << (5 - bits)) & 31];
	out[n] = '\0';
	return out;
}

int totp_unbase32(const char *s, unsigned char *out, size_t outcap)
{
	unsigned acc = 0;
	int bits = 0;
	size_t n = 0;

	for (; *s; s++) {
		if (*s == '=' || *s == ' ')
			continue;
		const char *p = strchr(b32, toupper((unsigned char)*s));
		if (p == NULL || *p == '\0')
			return -1;
		acc = ((acc << 5) | (unsigned)(p - b32)) & 0xfff;
		bits += 5;
		if (bits >= 8) {
			if (n >= outcap)
				return -1;
			out[n++] = (unsigned char)(acc >> (bits - 8));
			bits -= 8;
		}
	}
	return (int)n;
}
