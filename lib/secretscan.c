/* secretscan.c -- secret material in output, by its published formats. */
#include "lib/secretscan.h"

#include <string.h>

typedef const unsigned char uc;

/* One line of the output, and what a check may look at around a position. */
struct line {
	uc *start, *end;    /* [start, end): without the \n, and without a \r before it */
	bool relax;         /* the capture was cut at end: a body the cut ends counts */
	bool pve_token_ctx; /* "full-tokenid" was seen earlier: a "value" UUID is a secret */
	/* The first "secret=" at or after secret_from (NULL: none up to the
	 * line's end), so that otpauth:// anchors share one search. */
	uc *secret_from, *secret_at;
};

static const struct {
	const char *name, *label;
} kinds[SECRET_KIND_COUNT] = {
    [SECRET_NONE] = {"", ""},
    [SECRET_PRIVATE_KEY] = {"private_key", "a private key block"},
    [SECRET_OPENSSH_PRIVATE_KEY] = {"openssh_private_key", "an OpenSSH private key"},
    [SECRET_PUTTY_PRIVATE_KEY] = {"putty_private_key", "a PuTTY private key"},
    [SECRET_PGP_PRIVATE_KEY] = {"pgp_private_key", "a PGP private key block"},
    [SECRET_ENCODED_PRIVATE_KEY] = {"encoded_private_key", "a base64-encoded private key"},
    [SECRET_GCP_SERVICE_ACCOUNT] = {"gcp_service_account_key", "a GCP service account key"},
    [SECRET_PASSWORD_HASH] = {"password_hash", "a password hash"},
    [SECRET_SHADOW_LINE] = {"shadow_line", "a shadow password line"},
    [SECRET_LDAP_PASSWORD_HASH] = {"ldap_password_hash", "an LDAP password hash"},
    [SECRET_SCRAM_VERIFIER] = {"scram_verifier", "a SCRAM-SHA-256 verifier"},
    [SECRET_POSTGRES_MD5] = {"postgres_md5_password", "a PostgreSQL md5 password hash"},
    [SECRET_NTLM_HASH] = {"ntlm_hash", "an NTLM/LM hash"},
    [SECRET_PVE_API_TOKEN] = {"pve_api_token", "a Proxmox API token secret"},
    [SECRET_PVE_TICKET] = {"pve_ticket", "a Proxmox authentication ticket"},
    [SECRET_TOTP_SECRET] = {"totp_secret", "a TOTP secret"},
    [SECRET_CEPH_KEY] = {"ceph_key", "a Ceph key"},
    [SECRET_AWS_ACCESS_KEY] = {"aws_access_key", "an AWS access key"},
    [SECRET_AZURE_KEY] = {"azure_key", "an Azure key or signature"},
    [SECRET_GOOGLE_TOKEN] = {"google_token", "a Google API key or OAuth token"},
    [SECRET_KUBE_CREDENTIAL] = {"kube_credential", "a Kubernetes client key"},
    [SECRET_BEARER_TOKEN] = {"bearer_token", "a bearer token"},
    [SECRET_BASIC_AUTH] = {"basic_auth", "HTTP basic credentials"},
    [SECRET_JWT] = {"jwt", "a JSON Web Token"},
    [SECRET_API_TOKEN] = {"api_token", "an API token"},
    [SECRET_WIREGUARD_KEY] = {"wireguard_key", "a WireGuard key"},
    [SECRET_URL_CREDENTIALS] = {"url_credentials", "a password in a URL"},
    [SECRET_PGPASS_LINE] = {"pgpass_line", "a .pgpass password line"},
    [SECRET_NETRC_PASSWORD] = {"netrc_password", "a .netrc or msmtp password"},
    [SECRET_SASL_PASSWORD] = {"sasl_password", "a mail relay password"},
    [SECRET_IPSEC_SECRET] = {"ipsec_secret", "an IPsec pre-shared secret"},
    [SECRET_PASSWORD_SETTING] = {"password_setting", "a password or secret setting"},
};

const char *secretscan_kind_name(enum secretscan_kind k)
{
	return k >= 0 && k < SECRET_KIND_COUNT ? kinds[k].name : "";
}

const char *secretscan_kind_label(enum secretscan_kind k)
{
	return k >= 0 && k < SECRET_KIND_COUNT ? kinds[k].label : "";
}

/* ---------------------------------------------------------------- character classes */

static bool is_digit(int c)
{
	return c >= '0' && c <= '9';
}

static bool is_upper(int c)
{
	return c >= 'A' && c <= 'Z';
}

static bool is_lower(int c)
{
	return c >= 'a' && c <= 'z';
}

static bool is_alnum(int c)
{
	return is_digit(c) || is_upper(c) || is_lower(c);
}

static bool is_hex(int c)
{
	return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static bool is_b64(int c)
{
	return is_alnum(c) || c == '+' || c == '/';
}

static bool is_b64url(int c)
{
	return is_alnum(c) || c == '-' || c == '_';
}

static bool is_crypt(int c) /* crypt(3)'s alphabet, and base64's extra two */
{
	return is_alnum(c) || c == '.' || c == '/' || c == '+';
}

static bool is_space(int c)
{
	return c == ' ' || c == '\t';
}

static int lower(int c)
{
	return is_upper(c) ? c - 'A' + 'a' : c;
}

/* Bytes from p while cls holds, at most max, within the line. */
static size_t run(const struct line *l, uc *p, bool (*cls)(int), size_t max)
{
	size_t n = 0;

	while (p + n < l->end && n < max && cls(p[n]))
		n++;
	return n;
}

static bool at_n(const struct line *l, uc *p, const char *s, size_t n)
{
	return (size_t)(l->end - p) >= n && memcmp(p, s, n) == 0;
}

static bool at(const struct line *l, uc *p, const char *s)
{
	return at_n(l, p, s, strlen(s));
}

/* at() for a literal: its length is known when compiled. */
#define AT(l, p, lit) at_n((l), (p), "" lit, sizeof(lit) - 1)

static bool at_nocase(const struct line *l, uc *p, const char *s)
{
	size_t n = strlen(s);

	if ((size_t)(l->end - p) < n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (lower(p[i]) != s[i])
			return false;
	return true;
}

/* A body of n bytes that needs want: enough, or cut by the end of a truncated
 * capture after at least 4 bytes (what was kept is still part of a secret). */
static bool long_enough(const struct line *l, uc *p, size_t n, size_t want)
{
	return n >= want || (l->relax && p + n == l->end && n >= 4);
}

/* The byte before p is not cls (a token starts at p). */
static bool starts_token(const struct line *l, uc *p, bool (*cls)(int))
{
	return p == l->start || !cls(p[-1]);
}

static bool ends_token(const struct line *l, uc *p, bool (*cls)(int))
{
	return p == l->end || !cls(p[0]);
}

/* 8-4-4-4-12 hex digits at p (or its start, cut by a truncated capture). */
static bool uuid_at(const struct line *l, uc *p)
{
	static const int groups[] = {8, 4, 4, 4, 12};
	uc *q = p;

	for (int g = 0; g < 5; g++) {
		size_t n = run(l, q, is_hex, 12);
		if (n != (size_t)groups[g])
			return l->relax && q + n == l->end && (q - p) + n >= 8;
		q += n;
		if (g < 4) {
			if (q == l->end)
				return l->relax && q - p >= 8;
			if (*q != '-')
				return false;
			q++;
		}
	}
	return ends_token(l, q, is_hex);
}

/* Is needle within [from, to)?  Bounded by the caller's window. */
static bool within(uc *from, uc *to, const char *needle)
{
	size_t n = strlen(needle);

	return to > from && (size_t)(to - from) >= n &&
	       memmem(from, (size_t)(to - from), needle, n);
}

static uc *back(const struct line *l, uc *p, size_t n)
{
	return (size_t)(p - l->start) > n ? p - n : l->start;
}

/* ---------------------------------------------------------------- private keys */

/* "-----BEGIN <LABEL>-----" with PRIVATE KEY in the label. */
static enum secretscan_kind pem(const struct line *l, uc *p)
{
	uc *q, *lab;
	size_t n;

	if (AT(l, p, "---- BEGIN SSH2 ENCRYPTED PRIVATE KEY"))
		return SECRET_PRIVATE_KEY;
	if (!AT(l, p, "-----BEGIN "))
		return SECRET_NONE;
	lab = p + 11;
	for (n = 0; lab + n < l->end && n < 64 &&
	            (is_upper(lab[n]) || is_digit(lab[n]) || lab[n] == ' ' || lab[n] == '-');
	     n++)
		if (lab[n] == '-' && AT(l, lab + n, "-----"))
			break;
	q = lab + n;
	if (!AT(l, q, "-----") || !within(lab, q, "PRIVATE KEY"))
		return SECRET_NONE;
	if (within(lab, q, "OPENSSH"))
		return SECRET_OPENSSH_PRIVATE_KEY;
	if (within(lab, q, "PGP"))
		return SECRET_PGP_PRIVATE_KEY;
	/* A GCP service account's key file names it "private_key". */
	if (within(back(l, p, 40), p, "\"private_key\""))
		return SECRET_GCP_SERVICE_ACCOUNT;
	return SECRET_PRIVATE_KEY;
}

static int b64val(int c)
{
	if (is_upper(c))
		return c - 'A';
	if (is_lower(c))
		return c - 'a' + 26;
	if (is_digit(c))
		return c - '0' + 52;
	return c == '+' ? 62 : c == '/' ? 63 : -1;
}

/* base64 of "-----BEGIN " starting at p: decoded, does it go on to PRIVATE KEY? */
static bool encoded_pem(const struct line *l, uc *p)
{
	unsigned char out[64];
	size_t n = run(l, p, is_b64, 84), o = 0;

	if (n < 40)
		return false;
	for (size_t i = 0; i + 4 <= n && o + 3 <= sizeof(out); i += 4) {
		unsigned v = (unsigned)b64val(p[i]) << 18 | (unsigned)b64val(p[i + 1]) << 12 |
		             (unsigned)b64val(p[i + 2]) << 6 | (unsigned)b64val(p[i + 3]);
		out[o++] = (unsigned char)(v >> 16);
		out[o++] = (unsigned char)(v >> 8);
		out[o++] = (unsigned char)v;
	}
	return o > 11 && memmem(out, o, "PRIVATE KEY", 11) != NULL;
}

/* ---------------------------------------------------------------- hashes */

struct crypt_id {
	const char *id;    /* between the first two $ */
	unsigned min_hash; /* bytes of the last field */
	unsigned fields;   /* fields after the id, the last being the hash */
	bool hex;          /* the hash is hex (NT) */
};

static const struct crypt_id crypt_ids[] = {
    {"1", 22, 2, false},
    {"apr1", 22, 2, false},
    {"5", 43, 2, false},
    {"6", 86, 2, false},
    {"y", 43, 3, false},
    {"gy", 43, 3, false},
    {"7", 43, 2, false},
    {"2a", 53, 2, false},
    {"2b", 53, 2, false},
    {"2x", 53, 2, false},
    {"2y", 53, 2, false},
    {"sha1", 28, 3, false},
    {"md5", 22, 2, false},
    {"argon2i", 22, 4, false},
    {"argon2d", 22, 4, false},
    {"argon2id", 22, 4, false},
    {"pbkdf2-sha256", 20, 3, false},
    {"pbkdf2-sha512", 20, 3, false},
    {"pbkdf2", 20, 3, false},
    {"scrypt", 20, 3, false},
    {"NT", 32, 1, true},
};

/* "$id$...$hash": a crypt(3) (or passlib/argon2) hash, rounds= and params allowed. */
static bool crypt_hash(const struct line *l, uc *p)
{
	uc *q = p + 1;
	size_t idn = 0;

	while (q + idn < l->end && idn < 16 && (is_alnum(q[idn]) || q[idn] == '-'))
		idn++;
	if (idn == 0 || q + idn == l->end || q[idn] != '$')
		return false;
	for (size_t i = 0; i < sizeof(crypt_ids) / sizeof(crypt_ids[0]); i++) {
		const struct crypt_id *c = &crypt_ids[i];
		if (strlen(c->id) != idn || memcmp(q, c->id, idn) != 0)
			continue;
		uc *f = q + idn + 1;
		for (unsigned k = 1; k <= c->fields; k++) {
			size_t n = 0;
			if (c->hex && k == c->fields)
				n = run(l, f, is_hex, 64);
			else
				while (
				    f + n < l->end && n < 128 &&
				    (is_crypt(f[n]) || f[n] == '=' || f[n] == ',' || f[n] == '-'))
					n++;
			if (k == c->fields)
				return long_enough(l, f, n, c->min_hash);
			/* md5's and sha1's own "$$" and bcrypt's cost are fields too. */
			if (f + n == l->end)
				return false;
			if (f[n] != '$')
				return false;
			f += n + 1;
		}
		return false;
	}
	return false;
}

/* SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey> (and SCRAM-SHA-1). */
static bool scram(const struct line *l, uc *p)
{
	uc *q;
	size_t n;

	if (AT(l, p, "SCRAM-SHA-256$"))
		q = p + 14;
	else if (AT(l, p, "SCRAM-SHA-1$"))
		q = p + 12;
	else
		return false;
	n = run(l, q, is_digit, 8);
	if (n == 0 || q + n == l->end || q[n] != ':')
		return false;
	q += n + 1;
	n = run(l, q, is_b64, 100);
	while (q + n < l->end && q[n] == '=' && n < 104)
		n++;
	if (n < 8 || q + n == l->end || q[n] != '$')
		return false;
	q += n + 1;
	n = run(l, q, is_b64, 100);
	return long_enough(l, q, n, 20);
}

/* :RID:LM:NT: (pwdump, smbpasswd, secretsdump) or ::DOMAIN:challenge:NTproof:blob (NetNTLM). */
static bool ntlm(const struct line *l, uc *p)
{
	uc *q = p + 1;
	size_t n;

	if (AT(l, p, "::")) {
		q = p + 2;
		n = 0;
		while (q + n < l->end && n < 64 && q[n] != ':' && !is_space(q[n]))
			n++;
		if (n == 0 || q + n == l->end || q[n] != ':')
			return false;
		q += n + 1;
		if (run(l, q, is_hex, 16) != 16 || !AT(l, q + 16, ":"))
			return false;
		q += 17;
		n = run(l, q, is_hex, 32);
		if (n < 32)
			return long_enough(l, q, n, 32);
		if (!AT(l, q + 32, ":"))
			return false;
		return long_enough(l, q + 33, run(l, q + 33, is_hex, 64), 32);
	}
	if (p == l->start || is_space(p[-1]))
		return false;
	n = run(l, q, is_digit, 10);
	if (n == 0 || !AT(l, q + n, ":"))
		return false;
	q += n + 1;
	n = run(l, q, is_hex, 33);
	if (n < 32 && l->relax && q + n == l->end && n >= 4)
		return true; /* cut by the capture inside the LM hash */
	if (n != 32) {
		size_t x = 0;
		while (q + x < l->end && x < 32 && (q[x] == 'X' || q[x] == '*'))
			x++;
		if (x != 32)
			return false;
	}
	q += 32;
	if (!AT(l, q, ":"))
		return false;
	q++;
	n = run(l, q, is_hex, 33);
	return n == 32 ? AT(l, q + 32, ":") || q + 32 == l->end : long_enough(l, q, n, 32);
}

/* {SSHA}..., {CRYPT}$6$..., LDAP's scheme-tagged password values. */
static bool ldap_hash(const struct line *l, uc *p)
{
	static const char *const schemes[] = {
	    "{SSHA}",   "{SHA}",           "{SSHA256}",       "{SSHA512}",  "{SHA256}",
	    "{SHA512}", "{SMD5}",          "{MD5}",           "{CRYPT}",    "{ARGON2}",
	    "{PBKDF2}", "{PBKDF2-SHA256}", "{PBKDF2-SHA512}", "{BSDCRYPT}",
	};

	for (size_t i = 0; i < sizeof(schemes) / sizeof(schemes[0]); i++) {
		if (!at(l, p, schemes[i]))
			continue;
		uc *q = p + strlen(schemes[i]);
		size_t n = 0;
		while (q + n < l->end && n < 128 && (is_crypt(q[n]) || q[n] == '=' || q[n] == '$'))
			n++;
		return long_enough(l, q, n, 12);
	}
	return false;
}

/* ---------------------------------------------------------------- Proxmox */

/* PVEAPIToken=user@realm!tokenid=UUID (also PBS's, and with a ':' before the secret). */
static bool pve_token(const struct line *l, uc *p)
{
	uc *q;
	size_t n = 0;

	if (!AT(l, p, "PVEAPIToken") && !AT(l, p, "PBSAPIToken"))
		return false;
	q = p + 11;
	if (q == l->end || (*q != '=' && *q != ' ' && *q != ':'))
		return false;
	q++;
	while (q + n < l->end && n < 128 && q[n] != '!' && !is_space(q[n]))
		n++;
	if (q + n == l->end || q[n] != '!')
		return false;
	q += n + 1;
	n = 0;
	while (q + n < l->end && n < 64 &&
	       (is_alnum(q[n]) || q[n] == '_' || q[n] == '-' || q[n] == '.'))
		n++;
	if (n == 0 || q + n == l->end || (q[n] != '=' && q[n] != ':'))
		return false;
	return uuid_at(l, q + n + 1);
}

/* PVE:user@realm:HEXTIME::signature (the PVEAuthCookie), PBS likewise. */
static bool pve_ticket(const struct line *l, uc *p)
{
	uc *q = p + 4;
	size_t n = 0;
	bool realm = false;

	if (AT(l, p, "PVEAuthCookie=") || AT(l, p, "PBSAuthCookie=")) {
		q = p + 14;
		while (q + n < l->end && n < 64 && !is_space(q[n]) && q[n] != ';' && q[n] != '"')
			n++;
		return long_enough(l, q, n, 40);
	}
	if (!AT(l, p, "PVE:") && !AT(l, p, "PBS:"))
		return false;
	while (q + n < l->end && n < 128 && q[n] != ':' && !is_space(q[n]))
		realm |= q[n++] == '@';
	if (!realm || !AT(l, q + n, ":"))
		return false;
	q += n + 1;
	if (run(l, q, is_hex, 16) != 8 || !AT(l, q + 8, "::"))
		return false;
	q += 10;
	n = run(l, q, is_b64, 400);
	return long_enough(l, q, n, 40);
}

/* A "value" UUID after pvesh printed a new token's full-tokenid (JSON or table). */
static bool pve_token_value(const struct line *l, uc *p)
{
	uc *q = p + 5;
	size_t n = 0;

	if (!l->pve_token_ctx || !AT(l, p, "value") || !starts_token(l, p, is_alnum))
		return false;
	while (q + n < l->end && n < 24) {
		if (q[n] == '\\' && q + n + 6 <= l->end && q[n + 1] == 'u')
			n += 6; /* \u2502, a table's rule as JSON writes it */
		else if (!is_alnum(q[n]))
			n++;
		else
			break;
	}
	return n > 0 && uuid_at(l, q + n);
}

/* ---------------------------------------------------------------- tokens */

/* prefix + at least min bytes of cls, starting a token. */
static bool prefixed_n(const struct line *l, uc *p, const char *prefix, size_t k, bool (*cls)(int),
                       size_t min)
{
	if (!at_n(l, p, prefix, k) || !starts_token(l, p, is_alnum))
		return false;
	return long_enough(l, p + k, run(l, p + k, cls, min + 1), min);
}

#define prefixed(l, p, lit, cls, min) prefixed_n((l), (p), "" lit, sizeof(lit) - 1, (cls), (min))

static bool is_tok(int c) /* RFC 6750 token68, and the dots JWTs have */
{
	return is_alnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '+' ||
	       c == '/' || c == '=';
}

/* Bearer <token>: long enough, and not a word (it has a digit or a symbol). */
static bool bearer(const struct line *l, uc *p)
{
	uc *q = p + 6;
	size_t n, sp;
	bool mixed = false;

	if (!AT(l, p, "Bearer") || !starts_token(l, p, is_alnum))
		return false;
	sp = run(l, q, is_space, 8);
	if (sp == 0)
		return false;
	q += sp;
	n = run(l, q, is_tok, 40);
	for (size_t i = 0; i < n; i++)
		mixed |= !is_lower(q[i]) && !is_upper(q[i]);
	/* cut by the capture, what was kept counts whatever it is made of */
	return (mixed || (l->relax && q + n == l->end)) && long_enough(l, q, n, 20);
}

/* Authorization: Basic <base64 of user:password>. */
static bool basic(const struct line *l, uc *p)
{
	uc *q = p + 6;
	size_t n;

	if (!AT(l, p, "Basic ") || !starts_token(l, p, is_alnum))
		return false;
	n = run(l, q, is_b64, 40);
	if (!long_enough(l, q, n, 8))
		return false;
	for (uc *b = back(l, p, 40); b < p; b++)
		if (at_nocase(l, b, "authorization"))
			return true;
	return false;
}

/* header.payload[.signature], both parts JSON objects in base64url. */
static bool jwt(const struct line *l, uc *p)
{
	size_t h, n;

	if (!AT(l, p, "eyJ") || !starts_token(l, p, is_b64url))
		return false;
	h = run(l, p, is_b64url, 400);
	if (l->relax && p + h == l->end && h >= 4)
		return true; /* cut by the capture inside the header */
	if (h < 12 || p + h == l->end || p[h] != '.')
		return false;
	n = run(l, p + h + 1, is_b64url, 12);
	return long_enough(l, p + h + 1, n, 12) && AT(l, p + h + 1, "eyJ");
}

/* AKIA/ASIA + 16: an AWS access key id (long-term or temporary). */
static bool aws_key(const struct line *l, uc *p)
{
	if ((!AT(l, p, "AKIA") && !AT(l, p, "ASIA")) || !starts_token(l, p, is_alnum))
		return false;
	for (int i = 4; i < 20; i++)
		if (p + i == l->end || !(is_upper(p[i]) || is_digit(p[i])))
			return l->relax && p + i == l->end && i >= 8;
	return ends_token(l, p + 20, is_alnum);
}

/* A Ceph key: base64 of 28 bytes that starts with its type (AQ), 40 characters. */
static bool ceph(const struct line *l, uc *p)
{
	size_t n;

	if (!AT(l, p, "AQ") || !starts_token(l, p, is_b64))
		return false;
	n = run(l, p, is_b64, 41);
	if (n < 38 && l->relax && p + n == l->end && n >= 8)
		return true;
	if (n == 38 && AT(l, p + 38, "=="))
		return ends_token(l, p + 40, is_b64) && (p + 40 == l->end || p[40] != '=');
	return false;
}

static bool azure(const struct line *l, uc *p)
{
	static const char *const keys[] = {"AccountKey=", "SharedAccessKey=", "SharedKey="};

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (at(l, p, keys[i])) {
			uc *q = p + strlen(keys[i]);
			return long_enough(l, q, run(l, q, is_b64, 44), 20);
		}
	return false;
}

/* A SAS token's signature: sig=... on a line that also has sv= (its version). */
static bool sas(const struct line *l, uc *p)
{
	uc *q = p + 4;
	size_t n = 0;

	if (!AT(l, p, "sig=") || p == l->start || (p[-1] != '&' && p[-1] != '?'))
		return false;
	while (q + n < l->end && n < 44 && (is_b64(q[n]) || q[n] == '%' || q[n] == '='))
		n++;
	if (!long_enough(l, q, n, 20))
		return false;
	return within(back(l, p, SECRETSCAN_REACH), p, "sv=");
}

static bool wireguard(const struct line *l, uc *p)
{
	uc *q;
	size_t n;

	if (AT(l, p, "PrivateKey"))
		q = p + 10;
	else if (AT(l, p, "PresharedKey"))
		q = p + 12;
	else
		return false;
	q += run(l, q, is_space, 8);
	if (!AT(l, q, "="))
		return false;
	q++;
	q += run(l, q, is_space, 8);
	n = run(l, q, is_b64, 44);
	return (n == 43 && AT(l, q + 43, "=")) || (l->relax && q + n == l->end && n >= 8);
}

static bool totp(struct line *l, uc *p)
{
	uc *q;
	size_t n = 0;

	if (!AT(l, p, "otpauth://"))
		return false;
	if (l->secret_from == NULL || p + 10 < l->secret_from ||
	    (l->secret_at != NULL && l->secret_at < p + 10)) {
		l->secret_from = p + 10;
		l->secret_at = memmem(p + 10, (size_t)(l->end - p - 10), "secret=", 7);
	}
	q = l->secret_at;
	if (q == NULL || q - p > SECRETSCAN_REACH)
		return false;
	while (q + 7 + n < l->end && n < 17 &&
	       (is_upper(q[7 + n]) || is_lower(q[7 + n]) || (q[7 + n] >= '2' && q[7 + n] <= '7')))
		n++;
	return long_enough(l, q + 7, n, 16);
}

static bool kube(const struct line *l, uc *p)
{
	uc *q;

	if (!AT(l, p, "client-key-data:"))
		return false;
	q = p + 16;
	q += run(l, q, is_space, 8);
	if (AT(l, q, "\""))
		q++;
	return long_enough(l, q, run(l, q, is_b64, 24), 20);
}

/* Prefixes that name the service a token belongs to. */
static bool api_token(const struct line *l, uc *p)
{
	switch (*p) {
	case 'g':
		return prefixed(l, p, "ghp_", is_alnum, 36) ||
		       prefixed(l, p, "gho_", is_alnum, 36) ||
		       prefixed(l, p, "ghu_", is_alnum, 36) ||
		       prefixed(l, p, "ghs_", is_alnum, 36) ||
		       prefixed(l, p, "ghr_", is_alnum, 36) ||
		       prefixed(l, p, "github_pat_", is_b64url, 40) ||
		       prefixed(l, p, "glpat-", is_b64url, 20);
	case 'x':
		return (AT(l, p, "xoxb-") || AT(l, p, "xoxp-") || AT(l, p, "xoxa-") ||
		        AT(l, p, "xoxs-") || AT(l, p, "xoxr-") || AT(l, p, "xoxo-")) &&
		       prefixed(l, p, "xox", is_b64url, 20);
	case 'h':
		return prefixed(l, p, "hvs.", is_b64url, 24) ||
		       prefixed(l, p, "hvb.", is_b64url, 24) ||
		       prefixed(l, p, "hvr.", is_b64url, 24);
	case 'n':
		return prefixed(l, p, "npm_", is_alnum, 36);
	case 'p':
		return prefixed(l, p, "pypi-AgEIcHlwaS5vcmc", is_b64url, 20);
	case 's':
		return prefixed(l, p, "sk_live_", is_alnum, 20);
	case 'S':
		if (prefixed(l, p, "SG.", is_b64url, 22)) {
			size_t n = run(l, p + 3, is_b64url, 23);
			if (n < 22)
				return long_enough(l, p + 3, n, 22);
			return n == 22 && AT(l, p + 25, ".") &&
			       long_enough(l, p + 26, run(l, p + 26, is_b64url, 43), 43);
		}
		return false;
	}
	return false;
}

static bool google(const struct line *l, uc *p)
{
	return prefixed(l, p, "AIza", is_b64url, 35) || prefixed(l, p, "ya29.", is_b64url, 20) ||
	       prefixed(l, p, "1//0", is_b64url, 30);
}

/* ---------------------------------------------------------------- passwords */

/* A value nobody would keep secret: a placeholder, a variable, a boolean. */
static bool placeholder(uc *v, size_t n)
{
	static const char *const words[] = {
	    "null",   "none",     "nil",       "true",      "false",    "yes",
	    "no",     "on",       "off",       "empty",     "unset",    "redacted",
	    "hidden", "password", "secret",    "xxx",       "required", "string",
	    "value",  "example",  "changeit",  "undefined", "pass",     "passwd",
	    "token",  "masked",   "sensitive", "sample",    "dummy",    "placeholder",
	};
	bool same = true;

	if (n == 0 || v[0] == '$' || v[0] == '%' || v[0] == '<' || v[0] == '{' || v[0] == '(' ||
	    v[0] == '[' || v[0] == '|' || v[0] == '>' || v[0] == '&')
		return true;
	for (size_t i = 1; i < n; i++)
		same &= v[i] == v[0];
	if (same)
		return true;
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		size_t k = strlen(words[i]);
		if (k != n)
			continue;
		size_t j = 0;
		while (j < k && lower(v[j]) == words[i][j])
			j++;
		if (j == k)
			return true;
	}
	return false;
}

/* Which bytes can start a match, and which bytes may follow them ("" any):
 * every other position is skipped at once. */
static const char *const starter[256] = {
    ['-'] = "-",      ['$'] = "1256y7gasmpN",
    ['{'] = "SMCAPB", ['S'] = "ChG",
    ['m'] = "d",      [':'] = "",
    ['='] = "",       ['P'] = "VBur",
    ['A'] = "KScQI",  ['L'] = "S",
    ['B'] = "ea",     ['e'] = "y",
    ['c'] = "l",      ['o'] = "t",
    ['f'] = "u",      ['v'] = "a",
    ['s'] = "ik",     ['r'] = "k",
    ['y'] = "a",      ['1'] = "/",
    ['g'] = "hil",    ['x'] = "o",
    ['h'] = "v",      ['n'] = "p",
    ['p'] = "y",
};

static bool starts_here(uc *p, uc *end)
{
	const char *next = starter[*p];

	if (next == NULL)
		return false;
	if (next[0] == '\0')
		return true;
	if (p + 1 == end)
		return false;
	for (; *next; next++)
		if (*next == p[1])
			return true;
	return false;
}

enum keyfamily { KEY_NONE, KEY_PASSWORD, KEY_TOKEN };

/* A setting's name, lower-cased without _ . - (db_password, MYSQL_ROOT_PASSWORD,
 * client-secret, "SecretAccessKey"), by how it ends. */
struct suffix {
	const char *s;
	size_t n;
};
#define SUFFIX(lit)                                                                                \
	{                                                                                          \
		lit, sizeof(lit) - 1                                                               \
	}

static bool ends_with_one(const char *k, size_t n, const struct suffix *x, size_t nx)
{
	for (size_t i = 0; i < nx; i++)
		if (n >= x[i].n && memcmp(k + n - x[i].n, x[i].s, x[i].n) == 0)
			return true;
	return false;
}

static enum keyfamily key_family(const char *k, size_t n)
{
	static const struct suffix pw[] = {SUFFIX("password"), SUFFIX("passwd"),
	                                   SUFFIX("passphrase"), SUFFIX("psk")};
	static const struct suffix tok[] = {
	    SUFFIX("secret"),       SUFFIX("secretkey"),   SUFFIX("secretaccesskey"),
	    SUFFIX("apikey"),       SUFFIX("accesstoken"), SUFFIX("refreshtoken"),
	    SUFFIX("authtoken"),    SUFFIX("idtoken"),     SUFFIX("privatekey"),
	    SUFFIX("sessiontoken"), SUFFIX("token"),       SUFFIX("accountkey"),
	    SUFFIX("clientsecret"), SUFFIX("apitoken"),
	};

	if (n < 3)
		return KEY_NONE;
	/* (not "pwd": the shell's PWD is the working directory) */
	if (n == 4 && memcmp(k, "pass", 4) == 0)
		return KEY_PASSWORD;
	if (n == 4 && memcmp(k, "auth", 4) == 0)
		return KEY_TOKEN; /* a container registry's "auth": base64 of user:password */
	if (ends_with_one(k, n, pw, sizeof(pw) / sizeof(pw[0])))
		return KEY_PASSWORD;
	if (ends_with_one(k, n, tok, sizeof(tok) / sizeof(tok[0])))
		return KEY_TOKEN;
	return KEY_NONE;
}

static enum secretscan_kind at_byte(struct line *l, uc *p);

static bool is_keych(int c)
{
	return is_alnum(c) || c == '_' || c == '.' || c == '-';
}

/* A quoted value with two spaces or more is a sentence, not a password
 * (documentation: password = 'Password used to generate key'). */
static bool prose(uc *v, size_t n)
{
	size_t spaces = 0;

	for (size_t i = 0; i < n; i++)
		spaces += v[i] == ' ';
	return spaces >= 2;
}

/* An unquoted value that reads as source code rather than as a secret: a
 * call, an index, an arrow or a member (argv[3], self.get_token(),
 * Keyword.Type), or a statement's end right after it (password = pw;). */
static bool code(const struct line *l, uc *v, size_t n)
{
	bool dot = false, digit = false, under = false, lower_ = false, upper_ = false;
	bool ident = true;

	for (size_t i = 0; i < n; i++) {
		if (strchr("()[]<>", v[i]) != NULL || (v[i] == '-' && i + 1 < n && v[i + 1] == '>'))
			return true;
		dot |= v[i] == '.';
		digit |= is_digit(v[i]);
		under |= v[i] == '_';
		lower_ |= is_lower(v[i]);
		upper_ |= is_upper(v[i]);
		ident &= is_alnum(v[i]) || v[i] == '_' || (v[i] == '.' && i > 0 && v[i - 1] != '.');
	}
	/* the end of a statement or an argument right after it */
	if (v + n < l->end && (v[n] == ';' || v[n] == ',' || v[n] == ')'))
		return true;
	if (!ident || digit)
		return false;
	/* a dotted name (Keyword.Type, self.token), a snake_case variable
	 * (key_password), a constant (SEC_ERROR_BASE) */
	return dot || (under && !(lower_ && upper_));
}

/* Bytes a setting's value in a text file is made of: printable ASCII. */
static bool printable(uc *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] < 0x20 || v[i] >= 0x7f)
			return false;
	return true;
}

/* At a '=' or ':': is this "<secret key> = <value>" (shell, INI, YAML, JSON,
 * headers, LDIF, --flag=value)? */
static bool setting(const struct line *l, uc *p)
{
	char key[48];
	size_t kn = 0, n = 0;
	uc *k = p, *v;
	bool colon = *p == ':', quoted = false, classes[4] = {false};
	enum keyfamily fam;

	if (colon && p > l->start && p[-1] == ':')
		return false; /* the second ':' of LDIF's "::" was the first's business */
	while (k > l->start && p - k < 8 && is_space(k[-1]))
		k--;
	if (k > l->start && (k[-1] == '"' || k[-1] == '\''))
		k--;
	if (k > l->start && k[-1] == '\\')
		k--; /* a JSON string inside JSON: \"key\": */
	uc *kend = k;
	while (k > l->start && kend - k < (ptrdiff_t)sizeof(key) && is_keych(k[-1]))
		k--;
	if (k == kend || (k > l->start && is_keych(k[-1])))
		return false;
	for (uc *c = k; c < kend; c++)
		if (is_alnum(*c))
			key[kn++] = (char)lower(*c);
	fam = key_family(key, kn);
	if (fam == KEY_NONE)
		return false;
	v = p + 1;
	if (colon && AT(l, v, ":"))
		v++; /* LDIF: base64 follows */
	v += run(l, v, is_space, 8);
	if (AT(l, v, "\\\"")) {
		v += 2; /* \"value\" */
		while (v + n < l->end && n < 256 && v[n] != '\\' && v[n] != '"')
			n++;
		if (v + n == l->end && !l->relax)
			return false;
		quoted = true;
	} else if (v < l->end && (*v == '"' || *v == '\'')) {
		int qch = *v++;
		while (v + n < l->end && n < 256 && v[n] != qch)
			n++;
		if (v + n == l->end && !l->relax)
			return false;
		quoted = true;
	} else {
		while (v + n < l->end && n < 256 && !is_space(v[n]) && v[n] != '"' &&
		       v[n] != '\'' && v[n] != ',' && v[n] != ';' && v[n] != '&' && v[n] != '}' &&
		       v[n] != '\\')
			n++;
		/* "key: value" unquoted is YAML only when nothing but a comment
		 * follows (or an escaped line break: YAML inside a JSON string). */
		if (colon) {
			uc *r = v + n;
			r += run(l, r, is_space, SECRETSCAN_REACH);
			if (r < l->end && *r != '#' && *r != '\\')
				return false;
		}
	}
	/* A value a more particular check knows (a PEM block, a JWT, a
	 * Google token) is left to it: its kind says more. */
	struct line copy = *l;
	if (n > 0 && *v != ':' && *v != '=' && starts_here(v, l->end) &&
	    at_byte(&copy, v) != SECRET_NONE)
		return false;
	if (!long_enough(l, v, n, fam == KEY_PASSWORD ? 4u : 12u) || placeholder(v, n))
		return false;
	if (!printable(v, n) || v[0] == '/' || v[0] == ':')
		return false; /* binary, a path, a type annotation */
	if (quoted ? prose(v, n) || (v + n + 1 < l->end && v[n + 1] == ')') : code(l, v, n))
		return false;
	if (fam == KEY_TOKEN && n >= 12 && !(l->relax && v + n == l->end)) {
		for (size_t i = 0; i < n; i++)
			classes[is_lower(v[i])   ? 0
			        : is_upper(v[i]) ? 1
			        : is_digit(v[i]) ? 2
			                         : 3] = true;
		if (classes[0] + classes[1] + classes[2] + classes[3] < 2)
			return false;
		/* a random token of this length has a digit, nearly always; a
		 * name (_RSAPrivateKey, challengePassword) has none */
		if (!classes[2] && n < 32)
			return false;
	}
	return true;
}

/* scheme://user:password@host, the password not a placeholder. */
static bool url_credentials(const struct line *l, uc *p)
{
	uc *s = p, *u = p + 3, *pw;
	size_t n = 0, m = 0;

	if (!AT(l, p, "://"))
		return false;
	while (s > l->start && p - s < 24 &&
	       (is_alnum(s[-1]) || s[-1] == '+' || s[-1] == '.' || s[-1] == '-'))
		s--;
	if (s == p || !(is_lower(*s) || is_upper(*s)))
		return false;
	while (u + n < l->end && n < 128 && u[n] != ':' && u[n] != '@' && u[n] != '/' &&
	       !is_space(u[n]))
		n++;
	if (n == 0 || !AT(l, u + n, ":"))
		return false;
	pw = u + n + 1;
	while (pw + m < l->end && m < 256 && pw[m] != '@' && pw[m] != '/' && !is_space(pw[m]))
		m++;
	if (l->relax && pw + m == l->end && m >= 4)
		return true; /* cut by the capture before the host */
	if (m == 0 || placeholder(pw, m) || !AT(l, pw + m, "@") || !printable(u, n + 1 + m))
		return false;
	if (pw + m + 1 >= l->end || !(is_alnum(pw[m + 1]) || pw[m + 1] == '['))
		return false;
	/* RFC 2606's names are documentation's examples */
	uc *host = pw + m + 1, *he = host;
	while (he < l->end && he - host < 256 && (is_alnum(*he) || *he == '.' || *he == '-'))
		he++;
	size_t hn = (size_t)(he - host);
	static const struct suffix docs[] = {SUFFIX("example.com"), SUFFIX("example.org"),
	                                     SUFFIX("example.net"), SUFFIX(".example"),
	                                     SUFFIX(".invalid"),    SUFFIX(".test")};
	for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++)
		if (hn >= docs[i].n && memcmp(he - docs[i].n, docs[i].s, docs[i].n) == 0)
			return false;
	return true;
}

/* ---------------------------------------------------------------- per byte */

static enum secretscan_kind at_byte(struct line *l, uc *p)
{
	enum secretscan_kind k;

	switch (*p) {
	case '-':
		return pem(l, p);
	case '$':
		return crypt_hash(l, p) ? SECRET_PASSWORD_HASH : SECRET_NONE;
	case '{':
		return ldap_hash(l, p) ? SECRET_LDAP_PASSWORD_HASH : SECRET_NONE;
	case 'S':
		if (scram(l, p))
			return SECRET_SCRAM_VERIFIER;
		if (AT(l, p, "SharedAccessKey=") && azure(l, p))
			return SECRET_AZURE_KEY;
		return api_token(l, p) ? SECRET_API_TOKEN : SECRET_NONE;
	case 'm':
		if (AT(l, p, "md5") && starts_token(l, p, is_alnum)) {
			size_t n = run(l, p + 3, is_hex, 33);
			if (!(n == 32 && ends_token(l, p + 35, is_alnum)) &&
			    !(n < 32 && long_enough(l, p + 3, n, 32)))
				return SECRET_NONE;
			for (size_t i = 3; i < 3 + n; i++)
				if (is_upper(p[i]))
					return SECRET_NONE;
			return SECRET_POSTGRES_MD5;
		}
		return SECRET_NONE;
	case ':':
		if (AT(l, p, "://"))
			return url_credentials(l, p) ? SECRET_URL_CREDENTIALS : SECRET_NONE;
		if (ntlm(l, p))
			return SECRET_NTLM_HASH;
		return setting(l, p) ? SECRET_PASSWORD_SETTING : SECRET_NONE;
	case '=':
		return setting(l, p) ? SECRET_PASSWORD_SETTING : SECRET_NONE;
	case 'P':
		if (pve_token(l, p))
			return SECRET_PVE_API_TOKEN;
		if (pve_ticket(l, p))
			return SECRET_PVE_TICKET;
		if (AT(l, p, "PuTTY-User-Key-File-") && p + 20 < l->end && is_digit(p[20]))
			return SECRET_PUTTY_PRIVATE_KEY;
		return wireguard(l, p) ? SECRET_WIREGUARD_KEY : SECRET_NONE;
	case 'A':
		if (aws_key(l, p))
			return SECRET_AWS_ACCESS_KEY;
		if (azure(l, p))
			return SECRET_AZURE_KEY;
		if (ceph(l, p))
			return SECRET_CEPH_KEY;
		return google(l, p) ? SECRET_GOOGLE_TOKEN : SECRET_NONE;
	case 'L':
		return AT(l, p, "LS0tLS1CRUdJTi") && starts_token(l, p, is_b64) && encoded_pem(l, p)
		           ? SECRET_ENCODED_PRIVATE_KEY
		           : SECRET_NONE;
	case 'B':
		if (bearer(l, p))
			return SECRET_BEARER_TOKEN;
		return basic(l, p) ? SECRET_BASIC_AUTH : SECRET_NONE;
	case 'e':
		return jwt(l, p) ? SECRET_JWT : SECRET_NONE;
	case 'c':
		return kube(l, p) ? SECRET_KUBE_CREDENTIAL : SECRET_NONE;
	case 'o':
		return totp(l, p) ? SECRET_TOTP_SECRET : SECRET_NONE;
	case 'f':
		if (AT(l, p, "full-tokenid"))
			l->pve_token_ctx = true;
		return SECRET_NONE;
	case 'v':
		return pve_token_value(l, p) ? SECRET_PVE_API_TOKEN : SECRET_NONE;
	case 's':
		if (sas(l, p))
			return SECRET_AZURE_KEY;
		return api_token(l, p) ? SECRET_API_TOKEN : SECRET_NONE;
	case 'r':
		return prefixed(l, p, "rk_live_", is_alnum, 20) ? SECRET_API_TOKEN : SECRET_NONE;
	case 'y':
	case '1':
		return google(l, p) ? SECRET_GOOGLE_TOKEN : SECRET_NONE;
	case 'g':
	case 'x':
	case 'h':
	case 'n':
	case 'p':
		k = api_token(l, p) ? SECRET_API_TOKEN : SECRET_NONE;
		return k;
	}
	return SECRET_NONE;
}

/* ---------------------------------------------------------------- per line */

/* Up to max fields split at ':' (a '\:' is part of a field): their bounds. */
static int fields(const struct line *l, uc **f, size_t *fl, int max)
{
	int nf = 0;
	uc *s = l->start;

	for (uc *c = l->start;; c++) {
		if (c == l->end || (*c == ':' && (c == l->start || c[-1] != '\\'))) {
			if (nf == max)
				return max + 1;
			f[nf] = s;
			fl[nf++] = (size_t)(c - s);
			if (c == l->end)
				return nf;
			s = c + 1;
		}
	}
}

static bool all(uc *s, size_t n, bool (*cls)(int))
{
	for (size_t i = 0; i < n; i++)
		if (!cls(s[i]))
			return false;
	return n > 0;
}

static bool has(uc *s, size_t n, int ch)
{
	return memchr(s, ch, n) != NULL;
}

static bool is_user(int c)
{
	return is_alnum(c) || c == '_' || c == '.' || c == '-' || c == '$';
}

/* /etc/shadow's name:hash:lastchange:... with a DES (or any crypt) hash. */
static bool shadow_line(const struct line *l, uc **f, size_t *fl, int nf)
{
	uc *h = f[1];
	size_t n = fl[1];

	if (nf < 2 || !all(f[0], fl[0], is_user) || fl[0] > 32)
		return false;
	while (n > 0 && *h == '!') {
		h++;
		n--;
	}
	if (nf == 2) /* cut by the capture inside the hash */
		return l->relax && h + n == l->end && n >= 2 && n < 13 && all(h, n, is_crypt);
	if (n != 13 || !all(h, n, is_crypt) || !(fl[2] == 0 || all(f[2], fl[2], is_digit)))
		return false;
	/* a DES hash is 13 random characters: one of them is not a lower-case
	 * letter or a dot (launchpad.net is a host name) */
	for (size_t i = 0; i < n; i++)
		if (is_digit(h[i]) || is_upper(h[i]) || h[i] == '/')
			return true;
	return false;
}

/* ~/.pgpass: hostname:port:database:username:password. */
static bool pgpass_line(uc **f, size_t *fl, int nf)
{
	if (nf != 5 || fl[0] < 2 || has(f[0], fl[0], ' ') || all(f[0], fl[0], is_digit))
		return false;
	if (has(f[2], fl[2], ' ') || has(f[1], fl[1], ' '))
		return false;
	if (!(fl[1] == 1 && f[1][0] == '*') && !(fl[1] <= 5 && all(f[1], fl[1], is_digit)))
		return false;
	return fl[2] > 0 && fl[3] > 0 && !has(f[3], fl[3], ' ') && fl[4] > 0 && f[4][0] != ' ' &&
	       printable(f[0], (size_t)(f[4] + fl[4] - f[0])) && !placeholder(f[4], fl[4]);
}

static uc *skip_space(const struct line *l, uc *p)
{
	while (p < l->end && is_space(*p))
		p++;
	return p;
}

static uc *token_end(const struct line *l, uc *p)
{
	while (p < l->end && !is_space(*p))
		p++;
	return p;
}

/* /etc/pve/priv/token.cfg: user@realm!tokenid UUID. */
static bool token_cfg(const struct line *l)
{
	uc *p = skip_space(l, l->start), *e = token_end(l, p);

	if (e == p || !has(p, (size_t)(e - p), '@') || !has(p, (size_t)(e - p), '!'))
		return false;
	p = skip_space(l, e);
	if (p == e || !uuid_at(l, p))
		return false;
	return l->relax || skip_space(l, p + 36) == l->end;
}

/* sasl_passwd: [relay]:port user:password (or relay.example user:password). */
static bool sasl_line(const struct line *l)
{
	uc *p = skip_space(l, l->start), *e = token_end(l, p), *u, *ue;
	uc *colon;

	/* the relay: [host] or [host]:port, or host:port */
	if (e == p)
		return false;
	uc *h = p, *he = e;
	if (*p == '[') {
		uc *close = memchr(p, ']', (size_t)(e - p));
		if (close == NULL || close == p + 1)
			return false;
		h = p + 1;
		he = close;
		if (close + 1 < e &&
		    !(close[1] == ':' && all(close + 2, (size_t)(e - close - 2), is_digit)))
			return false;
	} else {
		uc *c = memchr(p, ':', (size_t)(e - p));
		if (c == NULL || !all(c + 1, (size_t)(e - c - 1), is_digit))
			return false;
		he = c;
	}
	for (uc *c = h; c < he; c++)
		if (!is_alnum(*c) && *c != '.' && *c != '-')
			return false;
	if (!has(h, (size_t)(he - h), '.'))
		return false;
	/* then user:password, the user a login or an address */
	u = skip_space(l, e);
	ue = token_end(l, u);
	if (u == e || ue == u || skip_space(l, ue) != l->end)
		return false;
	colon = memchr(u, ':', (size_t)(ue - u));
	if (colon == NULL || colon == u || colon + 1 == ue || colon[1] == '/')
		return false;
	for (uc *c = u; c < colon; c++)
		if (!is_alnum(*c) && !strchr("._%+@-", *c))
			return false;
	return !placeholder(colon + 1, (size_t)(ue - colon - 1));
}

/* .netrc (machine h login u password p) and msmtprc (password p alone). */
static bool netrc_line(const struct line *l)
{
	uc *p = skip_space(l, l->start);

	if (AT(l, p, "password ") || AT(l, p, "passwd ")) {
		uc *v = skip_space(l, token_end(l, p)), *ve = token_end(l, v);
		return ve > v && skip_space(l, ve) == l->end && !placeholder(v, (size_t)(ve - v));
	}
	if (!AT(l, p, "machine ") && !AT(l, p, "default"))
		return false;
	for (uc *w = p; w < l->end; w = skip_space(l, token_end(l, w)))
		if (AT(l, w, "password ")) {
			uc *v = skip_space(l, w + 9), *ve = token_end(l, v);
			return ve > v && !placeholder(v, (size_t)(ve - v));
		}
	return false;
}

/* ipsec.secrets: [selectors] : PSK|EAP|XAUTH|NTLM "secret". */
static bool ipsec_line(const struct line *l, uc *colon)
{
	for (uc *c = colon; c; c = memchr(c + 1, ':', (size_t)(l->end - c - 1))) {
		uc *v = NULL;
		if (AT(l, c, ": PSK ") || AT(l, c, ": EAP "))
			v = c + 6;
		else if (AT(l, c, ": XAUTH ") || AT(l, c, ": NTLM "))
			v = c + (c[3] == 'X' ? 8 : 7);
		if (v) {
			v = skip_space(l, v);
			return v < l->end && (*v == '"' || *v == '\'' || *v == '\\' || *v == '0');
		}
		if (c + 1 >= l->end)
			break;
	}
	return false;
}

static enum secretscan_kind per_segment(const struct line *l)
{
	uc *f[5];
	size_t fl[5];
	int nf;
	size_t len = (size_t)(l->end - l->start);

	if (len == 0)
		return SECRET_NONE;
	if (memchr(l->start, ':', len) == NULL) {
		/* only token.cfg (user@realm!id UUID) and .netrc lines have none */
		if (memchr(l->start, '!', len) && token_cfg(l))
			return SECRET_PVE_API_TOKEN;
		return netrc_line(l) ? SECRET_NETRC_PASSWORD : SECRET_NONE;
	}
	/* nf is 6 for more than five fields; the first five are filled. */
	nf = fields(l, f, fl, 5);
	if (nf >= 2 && shadow_line(l, f, fl, nf))
		return SECRET_SHADOW_LINE;
	if (nf == 5 && pgpass_line(f, fl, nf))
		return SECRET_PGPASS_LINE;
	if (token_cfg(l))
		return SECRET_PVE_API_TOKEN;
	if (sasl_line(l))
		return SECRET_SASL_PASSWORD;
	if (netrc_line(l))
		return SECRET_NETRC_PASSWORD;
	return SECRET_NONE;
}

/* The line-shaped formats, on the line and on each piece of it between
 * quotes and JSON's escaped line breaks (\n, \r, \t): a file's lines
 * inside a JSON string are lines too. */
static enum secretscan_kind per_line(const struct line *l)
{
	struct line seg = *l;
	enum secretscan_kind k;
	size_t len = (size_t)(l->end - l->start);
	uc *colon = memchr(l->start, ':', len);

	if (colon && ipsec_line(l, colon))
		return SECRET_IPSEC_SECRET;
	if (memchr(l->start, '"', len) == NULL && memchr(l->start, '\\', len) == NULL)
		return per_segment(l);
	seg.start = l->start;
	for (uc *c = l->start;; c++) {
		bool esc =
		    c + 1 < l->end && *c == '\\' && (c[1] == 'n' || c[1] == 'r' || c[1] == 't');
		if (c < l->end && *c != '"' && !esc)
			continue;
		seg.end = c;
		seg.relax = l->relax && c == l->end;
		if ((k = per_segment(&seg)) != SECRET_NONE)
			return k;
		if (c == l->end)
			return SECRET_NONE;
		if (esc)
			c++;
		seg.start = c + 1;
	}
}

int secretscan_find(const char *data, size_t len, bool truncated, struct secretscan_match *m)
{
	uc *p = (uc *)data, *end = p + len;
	struct line l = {0};
	size_t lineno = 1;

	memset(m, 0, sizeof(*m));
	if (data == NULL)
		return 0;
	while (p < end) {
		uc *nl = memchr(p, '\n', (size_t)(end - p));
		l.start = p;
		l.end = nl ? nl : end;
		if (l.end > l.start && l.end[-1] == '\r')
			l.end--;
		l.relax = truncated && nl == NULL;
		l.secret_from = l.secret_at = NULL;
		for (uc *c = l.start; c < l.end; c++) {
			if (!starts_here(c, l.end))
				continue;
			enum secretscan_kind k = at_byte(&l, c);
			if (k != SECRET_NONE) {
				m->kind = k;
				m->line = lineno;
				m->offset = (size_t)(c - (uc *)data);
				return 1;
			}
		}
		enum secretscan_kind k = per_line(&l);
		if (k != SECRET_NONE) {
			m->kind = k;
			m->line = lineno;
			m->offset = (size_t)(l.start - (uc *)data);
			return 1;
		}
		if (nl == NULL)
			break;
		p = nl + 1;
		lineno++;
	}
	return 0;
}
