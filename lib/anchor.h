/* anchor.h -- signed anchors of the audit chain, kept outside the database.
 *
 * The event chain makes an edited event visible only to someone who trusts
 * the database to show the chain as it was: a superuser can edit an event and
 * re-hash every later one, or delete the newest events.  An anchor is a line
 * that says "the chain's event N had hash H", signed with an Ed25519 key the
 * database never sees.  Checked later against the chain, an anchor whose
 * event is gone reveals a truncation, and one whose hash differs reveals a
 * rewrite of every event up to N.
 *
 * One anchor per line, all of it printable ASCII:
 *   airlock-anchor v1 event=N hash=<64 hex> at=<YYYY-MM-DDTHH:MM:SSZ> key=<16 hex> sig=<128 hex>
 * The signature covers the line up to (not including) " sig=".  key is the
 * first 16 hex digits of the SHA-256 of the raw public key. */
#ifndef AIRLOCK_ANCHOR_H
#define AIRLOCK_ANCHOR_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

struct anchor_key; /* an Ed25519 key: private (signs) or public (verifies) */

/* Loads a PEM private key (PKCS#8, as `airlock audit keygen` writes it).
 * Refuses a key that is not Ed25519, and a file that group or others may
 * read or write.  NULL with the reason in err. */
struct anchor_key *anchor_key_load_private(const char *path, char *err, size_t errlen);
/* Loads a PEM public key (SubjectPublicKeyInfo).  NULL with the reason. */
struct anchor_key *anchor_key_load_public(const char *path, char *err, size_t errlen);
void anchor_key_free(struct anchor_key *k); /* NULL is a no-op */
/* The key's id (16 hex digits), borrowed from k. */
const char *anchor_key_id(const struct anchor_key *k);

/* Writes a new key pair: the private key to priv_path (created, never
 * overwritten, mode 0600) and the public key to pub_path (mode 0644).
 * 0, or -1 with the reason in err (nothing is left half-written). */
int anchor_keygen(const char *priv_path, const char *pub_path, char *err, size_t errlen);

struct anchor {
	long long event_id;
	char hash[65];   /* lower-case hex */
	char at[21];     /* YYYY-MM-DDTHH:MM:SSZ */
	char key_id[17]; /* the signer's key id */
};

/* One signed anchor line, newline included, for event_id/hash at time `at`.
 * NULL with the reason in err (k must be a private key). */
char *anchor_sign(const struct anchor_key *k, long long event_id, const char *hash, time_t at,
                  char *err, size_t errlen);

/* Parses one line (without its newline) and checks its signature with k.
 * 0 and *a filled; -1 with the reason in err: malformed, signed by another
 * key, or a signature that does not match (the line was edited or forged). */
int anchor_verify(const struct anchor_key *k, const char *line, struct anchor *a, char *err,
                  size_t errlen);

/* Whether line (without its newline) is what a write of an anchor line
 * leaves when it is cut short: a non-empty, proper prefix of a well-formed
 * anchor line (each field as far as it goes).  Such a fragment signs
 * nothing and proves nothing; it is not an edited anchor, which keeps the
 * full shape and fails its signature instead. */
bool anchor_torn_prefix(const char *line);

#endif
