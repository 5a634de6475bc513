/* sshkey.h -- OpenSSH public keys as text: an authorized_keys line or a
 * public key file parsed, the public half of a private key file read
 * (OpenSSH's own format and PuTTY's .ppk keep it unencrypted), and a key
 * named by its fingerprint as ssh-keygen -l prints it.  No I/O. */
#ifndef AIRLOCK_SSHKEY_H
#define AIRLOCK_SSHKEY_H

#include <stdbool.h>
#include <stddef.h>

struct sshkey_pub {
	char type[64];       /* "ssh-ed25519", "ssh-rsa", "ecdsa-sha2-nistp256" ... */
	char *b64;           /* the key blob, base64 as written */
	unsigned char *blob; /* decoded */
	size_t bloblen;
	char comment[256]; /* "" when none */
	char *options; /* authorized_keys options before the key ("from=..,restrict"), or NULL */
};

/* Parses "[options] type base64 [comment]" (an authorized_keys line, a
 * .pub file's line).  0, or -1 when the line holds no key (a comment, a
 * blank line, garbage). */
int sshkey_parse_line(const char *line, size_t len, struct sshkey_pub *out);
/* The public key stored in a private key file's text: OpenSSH's format
 * ("-----BEGIN OPENSSH PRIVATE KEY-----", encrypted or not) or PuTTY's
 * .ppk.  0, or -1 with why in err (PEM keys keep no public half: read the
 * .pub beside them, or derive it with the key). */
int sshkey_public_of_private(const char *text, size_t len, struct sshkey_pub *out, char *err,
                             size_t errlen);
/* Whether text looks like a private key file of any format. */
bool sshkey_is_private(const char *text, size_t len);
/* "ED25519 SHA256:<base64, no padding>" into out, as ssh-keygen -l. */
void sshkey_fingerprint(const struct sshkey_pub *k, char *out, size_t outlen);
bool sshkey_same(const struct sshkey_pub *a, const struct sshkey_pub *b);
/* "type base64" (no options or comment) into out; caller frees. */
char *sshkey_public_line(const struct sshkey_pub *k);
void sshkey_clear(struct sshkey_pub *k);

#endif
