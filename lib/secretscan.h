/* secretscan.h -- does a command's output carry secret material?  Pure: no I/O,
 * no allocation.
 *
 * The worker scans the output of every command nobody approved before it is
 * recorded, and holds what matches for an operator (docs/operators.md, "Held
 * output").  The scanner recognises secrets by their published formats, not by
 * guessing at entropy: private key blocks (PEM, OpenSSH, PuTTY, PGP, and a PEM
 * block base64-encoded from its first byte, as kubeconfig stores it), crypt(3)
 * and LDAP password hashes, shadow-style lines, SCRAM-SHA-256 verifiers and
 * PostgreSQL md5 hashes, NTLM/LM hash lines, Proxmox API token secrets and
 * tickets, cloud and Kubernetes credentials, bearer and basic credentials,
 * JWTs, well-known API token prefixes, passwords in URLs and in .pgpass,
 * .netrc, sasl_passwd, ipsec.secrets and key = value settings.  It cannot see
 * a secret that is encrypted, compressed or encoded (other than the above),
 * split or reordered, nor one in a format of its own (docs/operators.md lists
 * both).
 *
 * Cost: one pass over the bytes, each position looking at most a small
 * constant distance ahead or behind within its own line (SECRETSCAN_REACH
 * bytes); the per-line checks are linear in the line.  So time is linear in
 * the (capped) output and memory constant. */
#ifndef AIRLOCK_SECRETSCAN_H
#define AIRLOCK_SECRETSCAN_H

#include <stdbool.h>
#include <stddef.h>

/* The furthest any check looks from the byte it starts at. */
#define SECRETSCAN_REACH 512

enum secretscan_kind {
	SECRET_NONE = 0,
	SECRET_PRIVATE_KEY,         /* PEM: RSA, EC, DSA, PKCS#8, encrypted, SSH2 */
	SECRET_OPENSSH_PRIVATE_KEY, /* -----BEGIN OPENSSH PRIVATE KEY----- */
	SECRET_PUTTY_PRIVATE_KEY,   /* PuTTY-User-Key-File-N: */
	SECRET_PGP_PRIVATE_KEY,     /* -----BEGIN PGP PRIVATE KEY BLOCK----- */
	SECRET_ENCODED_PRIVATE_KEY, /* base64 of a PEM private key block */
	SECRET_GCP_SERVICE_ACCOUNT, /* "private_key": "-----BEGIN PRIVATE KEY----- */
	SECRET_PASSWORD_HASH,       /* $1$ $5$ $6$ $y$ $gy$ $7$ $2b$ $argon2id$ ... */
	SECRET_SHADOW_LINE,         /* name:DESHASH:lastchange: */
	SECRET_LDAP_PASSWORD_HASH,  /* {SSHA}... */
	SECRET_SCRAM_VERIFIER,      /* SCRAM-SHA-256$4096:salt$stored:server */
	SECRET_POSTGRES_MD5,        /* md5 + 32 hex */
	SECRET_NTLM_HASH,           /* user:rid:LM:NT::: and NetNTLM lines */
	SECRET_PVE_API_TOKEN,       /* PVEAPIToken=user@realm!id=UUID, token.cfg */
	SECRET_PVE_TICKET,          /* PVE:user@realm:HEXTIME::signature */
	SECRET_TOTP_SECRET,         /* otpauth://...secret= */
	SECRET_CEPH_KEY,            /* AQ...== (40 bytes) */
	SECRET_AWS_ACCESS_KEY,      /* AKIA/ASIA + 16 */
	SECRET_AZURE_KEY,           /* AccountKey=, SharedAccessKey=, SAS sig= */
	SECRET_GOOGLE_TOKEN,        /* AIza..., ya29., 1//0 */
	SECRET_KUBE_CREDENTIAL,     /* client-key-data: */
	SECRET_BEARER_TOKEN,        /* Bearer <token> */
	SECRET_BASIC_AUTH,          /* Authorization: Basic <base64> */
	SECRET_JWT,                 /* eyJ....eyJ.... */
	SECRET_API_TOKEN,           /* ghp_, glpat-, xoxb-, hvs., npm_, pypi-, sk_live_, SG. */
	SECRET_WIREGUARD_KEY,       /* PrivateKey = / PresharedKey = */
	SECRET_URL_CREDENTIALS,     /* scheme://user:password@host */
	SECRET_PGPASS_LINE,         /* host:port:db:user:password */
	SECRET_NETRC_PASSWORD,      /* machine h login u password p; msmtprc */
	SECRET_SASL_PASSWORD,       /* [relay]:587 user:password */
	SECRET_IPSEC_SECRET,        /* : PSK "..." */
	SECRET_PASSWORD_SETTING,    /* password = ..., "client_secret": "...", TOKEN=... */
	SECRET_KIND_COUNT
};

struct secretscan_match {
	enum secretscan_kind kind;
	size_t line;   /* 1-based; lines end at \n (a \r before it is part of the ending) */
	size_t offset; /* the byte where the match starts */
};

/* Scans data[0..len) (any bytes: NUL and invalid UTF-8 are ordinary bytes).
 * truncated: the capture was cut at len, so a secret the cut ends in the
 * middle of counts with fewer bytes than its format has (what was kept is
 * still part of it).  1 with the first matching line's first match in *m
 * (kind, line, offset), 0 when nothing matches (*m zeroed). */
int secretscan_find(const char *data, size_t len, bool truncated, struct secretscan_match *m);

/* "openssh_private_key": the stable name recorded with a hold; "" for NONE. */
const char *secretscan_kind_name(enum secretscan_kind k);
/* "an OpenSSH private key": what the agent and the operators read. */
const char *secretscan_kind_label(enum secretscan_kind k);

#endif
