/* sshkey.c -- OpenSSH public keys: parsed, read out of private key files,
 * fingerprinted. */
#include "lib/sshkey.h"

#include "lib/xalloc.h"

#include <ctype.h>
#include <openssl/evp.h>
#include <openssl/sha.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOB_MAX (64 * 1024)

/* Decodes base64 (whitespace skipped); NULL when it is not base64. */
static unsigned char *b64_decode(const char *s, size_t len, size_t *outlen)
{
	char *clean = xmalloc(len + 1);
	size_t n = 0, pad = 0;
	unsigned char *out;
	int got;

	for (size_t i = 0; i < len; i++) {
		if (isspace((unsigned char)s[i]))
			continue;
		if (!isalnum((unsigned char)s[i]) && s[i] != '+' && s[i] != '/' && s[i] != '=') {
			free(clean);
			return NULL;
		}
		clean[n++] = s[i];
	}
	if (n == 0 || n % 4 != 0 || n / 4 * 3 > BLOB_MAX) {
		free(clean);
		return NULL;
	}
	for (size_t i = n; i > 0 && clean[i - 1] == '=' && pad < 2; i--)
		pad++;
	out = xmalloc(n / 4 * 3 + 1);
	got = EVP_DecodeBlock(out, (const unsigned char *)clean, (int)n);
	free(clean);
	if (got < 0) {
		free(out);
		return NULL;
	}
	*outlen = (size_t)got - pad;
	return out;
}

static char *b64_encode(const unsigned char *d, size_t len)
{
	char *out = xmalloc((len + 2) / 3 * 4 + 1);

	EVP_EncodeBlock((unsigned char *)out, d, (int)len);
	return out;
}

/* An SSH wire string at *p (uint32 length, bytes) within end. */
static bool wire_string(const unsigned char **p, const unsigned char *end, const unsigned char **s,
                        size_t *slen)
{
	uint32_t l;

	if (end - *p < 4)
		return false;
	l = (uint32_t)(*p)[0] << 24 | (uint32_t)(*p)[1] << 16 | (uint32_t)(*p)[2] << 8 | (*p)[3];
	*p += 4;
	if ((size_t)(end - *p) < l)
		return false;
	*s = *p;
	*slen = l;
	*p += l;
	return true;
}

/* The key type named inside a blob (its first string). */
static bool blob_type(const unsigned char *blob, size_t len, char *type, size_t typelen)
{
	const unsigned char *p = blob, *s;
	size_t sl;

	if (!wire_string(&p, blob + len, &s, &sl) || sl == 0 || sl >= typelen)
		return false;
	for (size_t i = 0; i < sl; i++)
		if (!isgraph(s[i]))
			return false;
	memcpy(type, s, sl);
	type[sl] = '\0';
	return true;
}

static bool key_type_word(const char *s, size_t len)
{
	static const char *const prefixes[] = {"ssh-",      "ecdsa-sha2-", "sk-ssh-",
	                                       "sk-ecdsa-", "rsa-sha2-",   NULL};

	for (size_t i = 0; prefixes[i]; i++)
		if (len > strlen(prefixes[i]) && strncmp(s, prefixes[i], strlen(prefixes[i])) == 0)
			return true;
	return false;
}

/* The end of the word at i: a space ends it unless inside double quotes. */
static size_t word_end(const char *line, size_t len, size_t i)
{
	bool quoted = false;

	for (; i < len; i++) {
		if (line[i] == '"')
			quoted = !quoted;
		else if (!quoted && isspace((unsigned char)line[i]))
			break;
	}
	return i;
}

int sshkey_parse_line(const char *line, size_t len, struct sshkey_pub *out)
{
	size_t i = 0, ts, we;

	memset(out, 0, sizeof(*out));
	while (i < len && isspace((unsigned char)line[i]))
		i++;
	if (i >= len || line[i] == '#')
		return -1;
	/* an options field (comma-separated, spaces only inside quotes) comes
	 * first unless the first word is a key type */
	we = word_end(line, len, i);
	if (!key_type_word(line + i, we - i)) {
		out->options = xstrndup(line + i, we - i);
		i = we;
		while (i < len && isspace((unsigned char)line[i]))
			i++;
		we = word_end(line, len, i);
		if (!key_type_word(line + i, we - i)) {
			sshkey_clear(out);
			return -1;
		}
	}
	ts = i;
	i = we;
	if (i - ts >= sizeof(out->type)) {
		sshkey_clear(out);
		return -1;
	}
	memcpy(out->type, line + ts, i - ts);
	out->type[i - ts] = '\0';
	while (i < len && isspace((unsigned char)line[i]))
		i++;
	ts = i;
	while (i < len && !isspace((unsigned char)line[i]))
		i++;
	out->blob = b64_decode(line + ts, i - ts, &out->bloblen);
	if (out->blob == NULL) {
		sshkey_clear(out);
		return -1;
	}
	out->b64 = xstrndup(line + ts, i - ts);
	while (i < len && isspace((unsigned char)line[i]))
		i++;
	{
		size_t cl = len - i;

		while (cl > 0 && isspace((unsigned char)line[i + cl - 1]))
			cl--;
		snprintf(out->comment, sizeof(out->comment), "%.*s", (int)cl, line + i);
	}
	return 0;
}

bool sshkey_is_private(const char *text, size_t len)
{
	return (memmem(text, len, "-----BEGIN", 10) != NULL &&
	        memmem(text, len, "PRIVATE KEY-----", 16) != NULL) ||
	       (len > 20 && strncmp(text, "PuTTY-User-Key-File-", 20) == 0);
}

static int from_blob(struct sshkey_pub *out, unsigned char *blob, size_t len, char *err,
                     size_t errlen)
{
	if (!blob_type(blob, len, out->type, sizeof(out->type))) {
		free(blob);
		snprintf(err, errlen, "the public key inside it is malformed");
		return -1;
	}
	out->blob = blob;
	out->bloblen = len;
	out->b64 = b64_encode(blob, len);
	return 0;
}

int sshkey_public_of_private(const char *text, size_t len, struct sshkey_pub *out, char *err,
                             size_t errlen)
{
	static const char begin[] = "-----BEGIN OPENSSH PRIVATE KEY-----";
	static const char end[] = "-----END OPENSSH PRIVATE KEY-----";
	const char *b, *e;

	memset(out, 0, sizeof(*out));
	if (len > 20 && strncmp(text, "PuTTY-User-Key-File-", 20) == 0) {
		/* "Public-Lines: N" then N lines of the key blob in base64 */
		const char *p = memmem(text, len, "\nPublic-Lines:", 14), *q;
		int lines;
		size_t bl;
		unsigned char *blob;
		const char *c = memmem(text, len, "\nComment:", 9);

		if (p == NULL || (lines = atoi(p + 14)) <= 0 || lines > 100) {
			snprintf(err, errlen, "a PuTTY key file without its Public-Lines");
			return -1;
		}
		q = memchr(p + 1, '\n', (size_t)(text + len - p - 1));
		for (e = q; e != NULL && lines > 0; lines--)
			e = memchr(e + 1, '\n', (size_t)(text + len - e - 1));
		if (q == NULL) {
			snprintf(err, errlen, "a PuTTY key file cut short");
			return -1;
		}
		blob = b64_decode(q + 1, (size_t)((e ? e : text + len) - q - 1), &bl);
		if (blob == NULL) {
			snprintf(err, errlen, "a PuTTY key file whose public lines are not base64");
			return -1;
		}
		if (c != NULL) {
			const char *ce = memchr(c + 1, '\n', (size_t)(text + len - c - 1));
			size_t cl = (size_t)((ce ? ce : text + len) - (c + 9));
			while (cl > 0 && (c[9] == ' '))
				c++, cl--;
			snprintf(out->comment, sizeof(out->comment), "%.*s", (int)cl, c + 9);
		}
		return from_blob(out, blob, bl, err, errlen);
	}
	b = memmem(text, len, begin, sizeof(begin) - 1);
	e = b ? memmem(b, (size_t)(text + len - b), end, sizeof(end) - 1) : NULL;
	if (b == NULL || e == NULL) {
		snprintf(err, errlen,
		         "not in OpenSSH's key format (a PEM key keeps no public half)");
		return -1;
	}
	{
		/* openssh-key-v1\0, cipher, kdf, kdf options, number of keys,
		 * then the first public key, never encrypted */
		size_t dl;
		unsigned char *d =
		    b64_decode(b + sizeof(begin) - 1, (size_t)(e - b - (sizeof(begin) - 1)), &dl);
		const unsigned char *p, *s;
		size_t sl;

		if (d == NULL || dl < 15 || memcmp(d, "openssh-key-v1", 15) != 0) {
			free(d);
			snprintf(err, errlen, "an OpenSSH key file that cannot be read");
			return -1;
		}
		p = d + 15;
		for (int f = 0; f < 3; f++)
			if (!wire_string(&p, d + dl, &s, &sl))
				goto bad;
		if (d + dl - p < 4)
			goto bad;
		p += 4;
		if (!wire_string(&p, d + dl, &s, &sl))
			goto bad;
		{
			unsigned char *blob = xmalloc(sl);

			memcpy(blob, s, sl);
			free(d);
			return from_blob(out, blob, sl, err, errlen);
		}
	bad:
		free(d);
		snprintf(err, errlen, "an OpenSSH key file cut short");
		return -1;
	}
}

void sshkey_fingerprint(const struct sshkey_pub *k, char *out, size_t outlen)
{
	unsigned char md[SHA256_DIGEST_LENGTH];
	char b64[64], kind[32];
	const char *t = k->type;
	size_t n = 0;

	SHA256(k->blob, k->bloblen, md);
	EVP_EncodeBlock((unsigned char *)b64, md, sizeof(md));
	for (char *p = b64 + strlen(b64); p > b64 && p[-1] == '='; p--)
		p[-1] = '\0';
	/* the key's kind as ssh-keygen -l names it */
	if (strncmp(t, "ssh-", 4) == 0)
		t += 4;
	else if (strncmp(t, "ecdsa-", 6) == 0)
		t = "ecdsa";
	for (; *t && *t != '-' && n + 1 < sizeof(kind); t++)
		kind[n++] = (char)toupper((unsigned char)*t);
	kind[n] = '\0';
	if (strstr(k->type, "-cert-") != NULL && n + 6 < sizeof(kind))
		strcat(kind, "-CERT");
	snprintf(out, outlen, "%s SHA256:%s", kind, b64);
}

bool sshkey_same(const struct sshkey_pub *a, const struct sshkey_pub *b)
{
	return a->bloblen == b->bloblen && a->bloblen > 0 &&
	       memcmp(a->blob, b->blob, a->bloblen) == 0;
}

char *sshkey_public_line(const struct sshkey_pub *k)
{
	return xasprintf("%s %s", k->type, k->b64 ? k->b64 : "");
}

void sshkey_clear(struct sshkey_pub *k)
{
	free(k->b64);
	free(k->blob);
	free(k->options);
	memset(k, 0, sizeof(*k));
}
