/* sshkey_test.c -- OpenSSH public keys read from authorized_keys lines,
 * .pub files and the public half of private key files (OpenSSH's format,
 * encrypted or not, and PuTTY's .ppk), named by fingerprint exactly as
 * ssh-keygen -l names them.  The fingerprints below are ssh-keygen's own
 * for these keys; the private key files are built here around each public
 * key, with private sections that hold nothing secret. */
#include "lib/sshkey.h"

#include "lib/xalloc.h"

#include <openssl/evp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static const char ed_line[] = "ssh-ed25519 "
                              "AAAAC3NzaC1lZDI1NTE5AAAAINz7y2UJq0MovaCPtJswsJGGfs+c69uY706F8cAux5jX"
                              " unit@test";
static const char ed_fp[] = "ED25519 SHA256:0VBM07Jxz6B9c70v7vfUN73BjTst/3sUU9uFAzy4oHI";
static const char rsa_line[] =
    "ssh-rsa "
    "AAAAB3NzaC1yc2EAAAADAQABAAAAgQDgiIdmF1zSP5jtW9/C6wpllSVORms2yJjs6T3s4DVksv8nMjx0zMZ6ZrIqB+3U/"
    "AzunsZt1hyGSUIVljUYXCSlgvMkKbwIPiXndk6GTFDXjLqgnWBvwY1syidbx5nj0L2++Mae/"
    "bQlRxsMf3ShH/TiZzWPluESVknGeLN6Dxathw== rsa enc";
static const char rsa_fp[] = "RSA SHA256:vZMmb3TScnZ+Rgn2gTtkRYfeHk4OZFkmzdVNQflO45M";
static const char ec_line[] = "ecdsa-sha2-nistp256 "
                              "AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBHWB1UXvJpfw+"
                              "XBUppTMo7bN8+UTUvQcXyMH4VbD4Xm0"
                              "X9hIyyoeXOrrz/uoUPZMP5QyRWfdQMiDl+cSUEqZF7k= ";
static const char ec_fp[] = "ECDSA SHA256:bQi0vNE3fGqdyXIBljDgp96SaE246iCJgTCoc++Bv7U";

static void test_lines(void **state)
{
	struct sshkey_pub k;
	char fp[128];

	(void)state;
	assert_int_equal(sshkey_parse_line(ed_line, strlen(ed_line), &k), 0);
	assert_string_equal(k.type, "ssh-ed25519");
	assert_string_equal(k.comment, "unit@test");
	assert_null(k.options);
	sshkey_fingerprint(&k, fp, sizeof(fp));
	assert_string_equal(fp, ed_fp);
	sshkey_clear(&k);

	/* base64 padding, a comment with a space */
	assert_int_equal(sshkey_parse_line(rsa_line, strlen(rsa_line), &k), 0);
	assert_string_equal(k.comment, "rsa enc");
	sshkey_fingerprint(&k, fp, sizeof(fp));
	assert_string_equal(fp, rsa_fp);
	sshkey_clear(&k);

	assert_int_equal(sshkey_parse_line(ec_line, strlen(ec_line), &k), 0);
	assert_string_equal(k.comment, "");
	sshkey_fingerprint(&k, fp, sizeof(fp));
	assert_string_equal(fp, ec_fp);
	sshkey_clear(&k);
}

static void test_options(void **state)
{
	char *line =
	    xasprintf("restrict,from=\"10.0.0.5, 10.0.0.6\",command=\"echo hi there\" %s", ed_line);
	struct sshkey_pub k, plain;
	char fp[128];

	(void)state;
	assert_int_equal(sshkey_parse_line(line, strlen(line), &k), 0);
	assert_string_equal(k.options,
	                    "restrict,from=\"10.0.0.5, 10.0.0.6\",command=\"echo hi there\"");
	assert_string_equal(k.type, "ssh-ed25519");
	sshkey_fingerprint(&k, fp, sizeof(fp));
	assert_string_equal(fp, ed_fp);
	assert_int_equal(sshkey_parse_line(ed_line, strlen(ed_line), &plain), 0);
	assert_true(sshkey_same(&k, &plain));
	sshkey_clear(&plain);
	assert_int_equal(sshkey_parse_line(rsa_line, strlen(rsa_line), &plain), 0);
	assert_false(sshkey_same(&k, &plain));
	sshkey_clear(&plain);
	sshkey_clear(&k);
	free(line);
}

static void test_not_keys(void **state)
{
	static const char *const bad[] = {
	    "",
	    "   ",
	    "# ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAINz7y2UJq0MovaCPtJswsJGGfs+c69uY706F8cAux5jX",
	    "no key here at all",
	    "ssh-ed25519 not*base64",
	    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAINz7y2UJq0MovaCPtJswsJGGfs+c69uY706F8cAux5j",
	    "from=\"x\" something ssh-ed25519 AAAA",
	};
	struct sshkey_pub k;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(sshkey_parse_line(bad[i], strlen(bad[i]), &k), -1);
}

static void put_string(unsigned char *buf, size_t *n, const void *s, size_t len)
{
	buf[(*n)++] = (unsigned char)(len >> 24);
	buf[(*n)++] = (unsigned char)(len >> 16);
	buf[(*n)++] = (unsigned char)(len >> 8);
	buf[(*n)++] = (unsigned char)len;
	memcpy(buf + *n, s, len);
	*n += len;
}

/* An OpenSSH private key file around the key of line: its format's header
 * and public key, and a private section of zeros. */
static char *openssh_file(const char *line, const char *cipher, const char *kdf)
{
	struct sshkey_pub k;
	unsigned char buf[4096], zeros[64] = {0};
	size_t n = 0;
	char b64[6000], *out, *o;

	assert_int_equal(sshkey_parse_line(line, strlen(line), &k), 0);
	memcpy(buf, "openssh-key-v1", 15);
	n = 15;
	put_string(buf, &n, cipher, strlen(cipher));
	put_string(buf, &n, kdf, strlen(kdf));
	put_string(buf, &n, zeros, strcmp(kdf, "none") == 0 ? 0 : 24);
	buf[n++] = 0, buf[n++] = 0, buf[n++] = 0, buf[n++] = 1;
	put_string(buf, &n, k.blob, k.bloblen);
	put_string(buf, &n, zeros, sizeof(zeros));
	sshkey_clear(&k);
	EVP_EncodeBlock((unsigned char *)b64, buf, (int)n);
	out = o = xmalloc(strlen(b64) + strlen(b64) / 70 + 100);
	o += sprintf(o, "-----BEGIN OPENSSH PRIVATE KEY-----\n");
	for (size_t i = 0; i < strlen(b64); i += 70)
		o += sprintf(o, "%.70s\n", b64 + i);
	sprintf(o, "-----END OPENSSH PRIVATE KEY-----\n");
	return out;
}

static void test_openssh_private(void **state)
{
	const char *const lines[] = {ed_line, rsa_line, ec_line};
	const char *const fps[] = {ed_fp, rsa_fp, ec_fp};
	char err[256], fp[128];

	(void)state;
	for (size_t i = 0; i < 3; i++) {
		for (int enc = 0; enc < 2; enc++) {
			char *text = openssh_file(lines[i], enc ? "aes256-ctr" : "none",
			                          enc ? "bcrypt" : "none");
			struct sshkey_pub k;

			assert_true(sshkey_is_private(text, strlen(text)));
			assert_int_equal(
			    sshkey_public_of_private(text, strlen(text), &k, err, sizeof(err)), 0);
			sshkey_fingerprint(&k, fp, sizeof(fp));
			assert_string_equal(fp, fps[i]);
			/* the public line written back reads as the same key */
			{
				char *pl = sshkey_public_line(&k);
				struct sshkey_pub again;

				assert_int_equal(sshkey_parse_line(pl, strlen(pl), &again), 0);
				assert_true(sshkey_same(&k, &again));
				sshkey_clear(&again);
				free(pl);
			}
			sshkey_clear(&k);
			/* cut short: refused with a reason */
			text[strlen(text) / 3] = '\0';
			assert_int_equal(
			    sshkey_public_of_private(text, strlen(text), &k, err, sizeof(err)), -1);
			assert_true(err[0] != '\0');
			free(text);
		}
	}
}

static void test_ppk_and_pem(void **state)
{
	static const char ppk[] =
	    "PuTTY-User-Key-File-3: ssh-ed25519\n"
	    "Encryption: none\n"
	    "Comment: unit@test\n"
	    "Public-Lines: 2\n"
	    "AAAAC3NzaC1lZDI1NTE5AAAAINz7y2UJq0MovaCPtJswsJGGfs+c69uY706F8cAu\n"
	    "x5jX\n"
	    "Private-Lines: 1\n"
	    "AAAAIAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n"
	    "Private-MAC: 00\n";
	static const char pem[] =
	    "-----BEGIN RSA PRIVATE KEY-----\n"
	    "MIIBOgIBAAJBAKj34GkxFhD90vcNLYLInFEX6Ppy1tPf9Cnzj4p4WGeKLs1Pt8Qu\n"
	    "-----END RSA PRIVATE KEY-----\n";
	struct sshkey_pub k;
	char err[256], fp[128];

	(void)state;
	assert_true(sshkey_is_private(ppk, strlen(ppk)));
	assert_int_equal(sshkey_public_of_private(ppk, strlen(ppk), &k, err, sizeof(err)), 0);
	assert_string_equal(k.comment, "unit@test");
	sshkey_fingerprint(&k, fp, sizeof(fp));
	assert_string_equal(fp, ed_fp);
	sshkey_clear(&k);
	/* a PEM key keeps no public half: said so */
	assert_true(sshkey_is_private(pem, strlen(pem)));
	assert_int_equal(sshkey_public_of_private(pem, strlen(pem), &k, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "PEM"));
	assert_false(sshkey_is_private(ed_line, strlen(ed_line)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_lines),       cmocka_unit_test(test_options),
	    cmocka_unit_test(test_not_keys),    cmocka_unit_test(test_openssh_private),
	    cmocka_unit_test(test_ppk_and_pem),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
