/* anchor.c -- Ed25519 anchors (OpenSSL EVP): keys, signing, verifying lines. */
#include "lib/anchor.h"

#include "lib/sha256.h"
#include "lib/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SIG_LEN 64 /* an Ed25519 signature */

struct anchor_key {
	EVP_PKEY *pkey;
	bool private_key;
	char id[17];
};

/* OpenSSL's reason for the last failure, or a fallback. */
static void ossl_error(char *err, size_t errlen, const char *what, const char *path)
{
	unsigned long e = ERR_get_error();
	char buf[256] = "";

	if (e != 0)
		ERR_error_string_n(e, buf, sizeof(buf));
	ERR_clear_error();
	snprintf(err, errlen, "%s%s%s%s%s", path ? path : "", path ? ": " : "", what,
	         buf[0] ? ": " : "", buf);
}

static struct anchor_key *wrap(EVP_PKEY *pkey, bool private_key, const char *path, char *err,
                               size_t errlen)
{
	unsigned char raw[32];
	size_t rawlen = sizeof(raw);
	char hex[SHA256_HEX_LEN + 1];
	struct anchor_key *k;

	if (EVP_PKEY_id(pkey) != EVP_PKEY_ED25519) {
		snprintf(err, errlen,
		         "%s: not an Ed25519 key (make one with `airlock audit keygen`)", path);
		EVP_PKEY_free(pkey);
		return NULL;
	}
	if (EVP_PKEY_get_raw_public_key(pkey, raw, &rawlen) != 1 || rawlen != sizeof(raw)) {
		ossl_error(err, errlen, "cannot read the public key", path);
		EVP_PKEY_free(pkey);
		return NULL;
	}
	k = xcalloc(1, sizeof(*k));
	k->pkey = pkey;
	k->private_key = private_key;
	sha256_hex(raw, rawlen, hex);
	memcpy(k->id, hex, 16);
	k->id[16] = '\0';
	return k;
}

static FILE *open_pem(const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");

	if (f == NULL)
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
	return f;
}

struct anchor_key *anchor_key_load_private(const char *path, char *err, size_t errlen)
{
	struct stat st;
	EVP_PKEY *pkey;
	FILE *f = open_pem(path, err, errlen);

	if (f == NULL)
		return NULL;
	if (fstat(fileno(f), &st) == 0 && (st.st_mode & 077) != 0) {
		snprintf(err, errlen,
		         "%s: the signing key may be read or written by group or others "
		         "(mode %03o); chmod 600 it",
		         path, (unsigned)(st.st_mode & 0777));
		fclose(f);
		return NULL;
	}
	pkey = PEM_read_PrivateKey(f, NULL, NULL, NULL);
	fclose(f);
	if (pkey == NULL) {
		ossl_error(err, errlen, "not a PEM private key", path);
		return NULL;
	}
	return wrap(pkey, true, path, err, errlen);
}

struct anchor_key *anchor_key_load_public(const char *path, char *err, size_t errlen)
{
	EVP_PKEY *pkey;
	FILE *f = open_pem(path, err, errlen);

	if (f == NULL)
		return NULL;
	pkey = PEM_read_PUBKEY(f, NULL, NULL, NULL);
	fclose(f);
	if (pkey == NULL) {
		ossl_error(err, errlen, "not a PEM public key", path);
		return NULL;
	}
	return wrap(pkey, false, path, err, errlen);
}

void anchor_key_free(struct anchor_key *k)
{
	if (k == NULL)
		return;
	EVP_PKEY_free(k->pkey);
	free(k);
}

const char *anchor_key_id(const struct anchor_key *k)
{
	return k->id;
}

/* Writes one PEM to a new file with the given mode; -1 with err, and the file
 * removed, on any failure. */
static int write_pem(const char *path, mode_t mode, EVP_PKEY *pkey, bool private_key, char *err,
                     size_t errlen)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, mode);
	FILE *f;
	int ok;

	if (fd < 0) {
		snprintf(err, errlen, "%s: %s%s", path, strerror(errno),
		         errno == EEXIST ? " (an existing key is never overwritten)" : "");
		return -1;
	}
	f = fdopen(fd, "w");
	if (f == NULL) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		close(fd);
		unlink(path);
		return -1;
	}
	ok = private_key ? PEM_write_PrivateKey(f, pkey, NULL, NULL, 0, NULL, NULL)
	                 : PEM_write_PUBKEY(f, pkey);
	if (!ok)
		ossl_error(err, errlen, "cannot write the key", path);
	if (fflush(f) != 0 || fsync(fileno(f)) != 0) {
		if (ok)
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
		ok = 0;
	}
	if (fclose(f) != 0 && ok) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		ok = 0;
	}
	if (!ok) {
		unlink(path);
		return -1;
	}
	return 0;
}

int anchor_keygen(const char *priv_path, const char *pub_path, char *err, size_t errlen)
{
	EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, NULL);
	EVP_PKEY *pkey = NULL;
	int rc = -1;

	if (ctx == NULL || EVP_PKEY_keygen_init(ctx) != 1 || EVP_PKEY_keygen(ctx, &pkey) != 1) {
		ossl_error(err, errlen, "cannot generate an Ed25519 key", NULL);
		goto out;
	}
	if (access(pub_path, F_OK) == 0) {
		snprintf(err, errlen, "%s: exists (an existing key is never overwritten)",
		         pub_path);
		goto out;
	}
	if (write_pem(priv_path, 0600, pkey, true, err, errlen) < 0)
		goto out;
	if (write_pem(pub_path, 0644, pkey, false, err, errlen) < 0) {
		unlink(priv_path);
		goto out;
	}
	rc = 0;
out:
	EVP_PKEY_free(pkey);
	EVP_PKEY_CTX_free(ctx);
	return rc;
}

/* The signed part of a line. */
static int format_body(char *out, size_t outlen, long long event_id, const char *hash,
                       const char *at, const char *key_id)
{
	int n = snprintf(out, outlen, "airlock-anchor v1 event=%lld hash=%s at=%s key=%s", event_id,
	                 hash, at, key_id);
	return n > 0 && (size_t)n < outlen ? n : -1;
}

static bool is_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return s[n] == '\0';
}

char *anchor_sign(const struct anchor_key *k, long long event_id, const char *hash, time_t at,
                  char *err, size_t errlen)
{
	char body[256], when[21], *line = NULL;
	unsigned char sig[SIG_LEN];
	size_t siglen = sizeof(sig);
	struct tm tm;
	EVP_MD_CTX *md = NULL;
	int n;

	if (!k->private_key) {
		snprintf(err, errlen, "a public key cannot sign");
		return NULL;
	}
	if (event_id <= 0 || strlen(hash) != 64 || !is_hex(hash, 64)) {
		snprintf(err, errlen, "event %lld: not an event id and a SHA-256 hash", event_id);
		return NULL;
	}
	gmtime_r(&at, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	n = format_body(body, sizeof(body), event_id, hash, when, k->id);
	md = EVP_MD_CTX_new();
	if (n < 0 || md == NULL || EVP_DigestSignInit(md, NULL, NULL, NULL, k->pkey) != 1 ||
	    EVP_DigestSign(md, sig, &siglen, (const unsigned char *)body, (size_t)n) != 1 ||
	    siglen != SIG_LEN) {
		ossl_error(err, errlen, "signing failed", NULL);
		goto out;
	}
	line = xmalloc((size_t)n + 5 + 2 * SIG_LEN + 2);
	memcpy(line, body, (size_t)n);
	memcpy(line + n, " sig=", 5);
	for (size_t i = 0; i < SIG_LEN; i++)
		snprintf(line + n + 5 + 2 * i, 3, "%02x", sig[i]);
	memcpy(line + n + 5 + 2 * SIG_LEN, "\n", 2);
out:
	EVP_MD_CTX_free(md);
	return line;
}

int anchor_verify(const struct anchor_key *k, const char *line, struct anchor *a, char *err,
                  size_t errlen)
{
	char body[256];
	unsigned char sig[SIG_LEN];
	const char *s;
	EVP_MD_CTX *md = NULL;
	int used = 0, n, rc = -1;
	long long id;

	memset(a, 0, sizeof(*a));
	/* Parse the fields, then require the line to be exactly their canonical form. */
	if (sscanf(line, "airlock-anchor v1 event=%lld hash=%64s at=%20s key=%16s sig=%n", &id,
	           a->hash, a->at, a->key_id, &used) != 4 ||
	    used == 0) {
		snprintf(err, errlen, "not an anchor line");
		return -1;
	}
	a->event_id = id;
	s = line + used;
	n = format_body(body, sizeof(body), id, a->hash, a->at, a->key_id);
	if (n < 0 || id <= 0 || !is_hex(a->hash, 64) || strlen(s) != 2 * SIG_LEN ||
	    !is_hex(s, 2 * SIG_LEN) || strncmp(line, body, (size_t)n) != 0 ||
	    strncmp(line + n, " sig=", 5) != 0 || line + n + 5 != s) {
		snprintf(err, errlen, "not a well-formed anchor line");
		return -1;
	}
	if (strcmp(a->key_id, k->id) != 0) {
		snprintf(err, errlen, "signed by key %s, not by the given public key %s", a->key_id,
		         k->id);
		return -1;
	}
	for (size_t i = 0; i < SIG_LEN; i++) {
		unsigned int byte;
		sscanf(s + 2 * i, "%2x", &byte);
		sig[i] = (unsigned char)byte;
	}
	md = EVP_MD_CTX_new();
	if (md == NULL || EVP_DigestVerifyInit(md, NULL, NULL, NULL, k->pkey) != 1) {
		ossl_error(err, errlen, "cannot verify", NULL);
		goto out;
	}
	if (EVP_DigestVerify(md, sig, SIG_LEN, (const unsigned char *)body, (size_t)n) != 1) {
		ERR_clear_error();
		snprintf(err, errlen,
		         "the signature does not match: the line was altered or forged");
		goto out;
	}
	rc = 0;
out:
	EVP_MD_CTX_free(md);
	return rc;
}

/* The fields of an anchor line in order: literal text, or a run of one
 * class of characters (exactly n of them, or at least one when n is 0). */
struct shape_part {
	const char *lit;
	char cls; /* 'd' digit, 'x' lower-case hex, 't' the time's YYYY-MM-DDTHH:MM:SSZ */
	size_t n;
};

static bool in_class(char cls, size_t i, char c)
{
	static const char when[] = "dddd-dd-ddTdd:dd:ddZ";

	switch (cls) {
	case 'd':
		return c >= '0' && c <= '9';
	case 'x':
		return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
	case 't':
		return when[i] == 'd' ? c >= '0' && c <= '9' : c == when[i];
	}
	return false;
}

bool anchor_torn_prefix(const char *line)
{
	static const struct shape_part shape[] = {{"airlock-anchor v1 event=", 0, 0},
	                                          {NULL, 'd', 0},
	                                          {" hash=", 0, 0},
	                                          {NULL, 'x', 64},
	                                          {" at=", 0, 0},
	                                          {NULL, 't', 20},
	                                          {" key=", 0, 0},
	                                          {NULL, 'x', 16},
	                                          {" sig=", 0, 0},
	                                          {NULL, 'x', 2 * SIG_LEN}};
	const char *p = line;

	if (line == NULL || *line == '\0')
		return false;
	for (size_t k = 0; k < sizeof(shape) / sizeof(shape[0]); k++) {
		const struct shape_part *f = &shape[k];
		size_t i = 0;

		if (f->lit) {
			for (; f->lit[i]; i++, p++) {
				if (*p == '\0')
					return true;
				if (*p != f->lit[i])
					return false;
			}
			continue;
		}
		for (; f->n == 0 || i < f->n; i++, p++) {
			if (*p == '\0')
				return true;
			if (!in_class(f->cls, i, *p))
				break;
		}
		if (i == 0 || (f->n && i < f->n))
			return false;
	}
	return false; /* the whole shape: not cut short */
}
