/* hostkey.c -- host key verification against a pin or known_hosts (see hostkey.h). */
#include "transport/hostkey.h"

#include <stdio.h>
#include <string.h>

#include <libssh2.h>
#include <openssl/evp.h>

static const char *key_type_name(int type)
{
	switch (type) {
	case LIBSSH2_HOSTKEY_TYPE_RSA:
		return "ssh-rsa";
	case LIBSSH2_HOSTKEY_TYPE_DSS:
		return "ssh-dss";
	case LIBSSH2_HOSTKEY_TYPE_ECDSA_256:
		return "ecdsa-sha2-nistp256";
	case LIBSSH2_HOSTKEY_TYPE_ECDSA_384:
		return "ecdsa-sha2-nistp384";
	case LIBSSH2_HOSTKEY_TYPE_ECDSA_521:
		return "ecdsa-sha2-nistp521";
	case LIBSSH2_HOSTKEY_TYPE_ED25519:
		return "ssh-ed25519";
	default:
		return "unknown";
	}
}

static int knownhost_type(int type)
{
	switch (type) {
	case LIBSSH2_HOSTKEY_TYPE_RSA:
		return LIBSSH2_KNOWNHOST_KEY_SSHRSA;
	case LIBSSH2_HOSTKEY_TYPE_DSS:
		return LIBSSH2_KNOWNHOST_KEY_SSHDSS;
	case LIBSSH2_HOSTKEY_TYPE_ECDSA_256:
		return LIBSSH2_KNOWNHOST_KEY_ECDSA_256;
	case LIBSSH2_HOSTKEY_TYPE_ECDSA_384:
		return LIBSSH2_KNOWNHOST_KEY_ECDSA_384;
	case LIBSSH2_HOSTKEY_TYPE_ECDSA_521:
		return LIBSSH2_KNOWNHOST_KEY_ECDSA_521;
	case LIBSSH2_HOSTKEY_TYPE_ED25519:
		return LIBSSH2_KNOWNHOST_KEY_ED25519;
	default:
		return LIBSSH2_KNOWNHOST_KEY_UNKNOWN;
	}
}

int hostkey_fingerprint(LIBSSH2_SESSION *s, char *out, size_t outlen)
{
	const unsigned char *h =
	    (const unsigned char *)libssh2_hostkey_hash(s, LIBSSH2_HOSTKEY_HASH_SHA256);
	unsigned char b64[64];
	int n;

	if (h == NULL)
		return -1;
	n = EVP_EncodeBlock(b64, h, 32);
	while (n > 0 && b64[n - 1] == '=')
		n--;
	b64[n] = '\0';
	snprintf(out, outlen, "SHA256:%s", (const char *)b64);
	return 0;
}

int hostkey_verify(LIBSSH2_SESSION *s, const char *name, const char *host, int port,
                   const char *pinned, const char *known_hosts, char *err, size_t errlen)
{
	LIBSSH2_KNOWNHOSTS *kh = NULL;
	struct libssh2_knownhost *found = NULL;
	char fp[80], where[300];
	const char *key;
	size_t keylen;
	int type, rc = -1;

	if (port == 22)
		snprintf(where, sizeof(where), "%s (node %s)", host, name);
	else
		snprintf(where, sizeof(where), "[%s]:%d (node %s)", host, port, name);
	key = libssh2_session_hostkey(s, &keylen, &type);
	if (key == NULL || hostkey_fingerprint(s, fp, sizeof(fp)) < 0) {
		snprintf(err, errlen, "host key of %s: the server offered no usable key; refusing",
		         where);
		goto out;
	}
	if (pinned && pinned[0]) {
		if (strcmp(pinned, fp) == 0) {
			rc = 0;
			goto out;
		}
		snprintf(err, errlen,
		         "HOST KEY MISMATCH for %s: the server offered %s %s, the node pins %s; "
		         "refusing",
		         where, key_type_name(type), fp, pinned);
		goto out;
	}
	if (known_hosts == NULL || known_hosts[0] == '\0') {
		snprintf(
		    err, errlen,
		    "host key of %s cannot be checked: no pinned fingerprint and no known_hosts "
		    "file (the server offered %s %s); refusing",
		    where, key_type_name(type), fp);
		goto out;
	}
	kh = libssh2_knownhost_init(s);
	if (kh == NULL ||
	    libssh2_knownhost_readfile(kh, known_hosts, LIBSSH2_KNOWNHOST_FILE_OPENSSH) < 0) {
		snprintf(err, errlen,
		         "host key of %s cannot be checked: cannot read known_hosts %s (the server "
		         "offered %s %s); refusing",
		         where, known_hosts, key_type_name(type), fp);
		goto out;
	}
	switch (libssh2_knownhost_checkp(kh, host, port, key, keylen,
	                                 LIBSSH2_KNOWNHOST_TYPE_PLAIN |
	                                     LIBSSH2_KNOWNHOST_KEYENC_RAW | knownhost_type(type),
	                                 &found)) {
	case LIBSSH2_KNOWNHOST_CHECK_MATCH:
		rc = 0;
		break;
	case LIBSSH2_KNOWNHOST_CHECK_MISMATCH:
		snprintf(err, errlen,
		         "HOST KEY CHANGED for %s: the server offered %s %s, which is not the key "
		         "%s lists for it; refusing",
		         where, key_type_name(type), fp, known_hosts);
		break;
	case LIBSSH2_KNOWNHOST_CHECK_NOTFOUND:
		snprintf(err, errlen,
		         "UNKNOWN HOST KEY for %s: the server offered %s %s, and %s has no entry "
		         "for it; refusing",
		         where, key_type_name(type), fp, known_hosts);
		break;
	default:
		snprintf(err, errlen,
		         "host key of %s could not be checked against %s (the server offered %s "
		         "%s); refusing",
		         where, known_hosts, key_type_name(type), fp);
		break;
	}
out:
	if (kh)
		libssh2_knownhost_free(kh);
	return rc;
}
