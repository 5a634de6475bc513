/* anchor_test.c -- keys, signed anchor lines, and every way a line can be wrong. */
#include "lib/anchor.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

static const char HASH[] = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";

struct fx {
	char dir[64], priv[96], pub[96], priv2[96], pub2[96];
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	char err[256];

	snprintf(f->dir, sizeof(f->dir), "/tmp/anchor-test.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->priv, sizeof(f->priv), "%s/k", f->dir);
	snprintf(f->pub, sizeof(f->pub), "%s/k.pub", f->dir);
	snprintf(f->priv2, sizeof(f->priv2), "%s/other", f->dir);
	snprintf(f->pub2, sizeof(f->pub2), "%s/other.pub", f->dir);
	assert_int_equal(anchor_keygen(f->priv, f->pub, err, sizeof(err)), 0);
	assert_int_equal(anchor_keygen(f->priv2, f->pub2, err, sizeof(err)), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	const char *files[] = {f->priv, f->pub, f->priv2, f->pub2};

	for (size_t i = 0; i < 4; i++)
		unlink(files[i]);
	rmdir(f->dir);
	free(f);
	return 0;
}

static void test_sign_and_verify(void **state)
{
	struct fx *f = *state;
	char err[256];
	struct anchor a;
	struct anchor_key *priv = anchor_key_load_private(f->priv, err, sizeof(err));
	struct anchor_key *pub = anchor_key_load_public(f->pub, err, sizeof(err));
	char *line;

	assert_non_null(priv);
	assert_non_null(pub);
	assert_string_equal(anchor_key_id(priv), anchor_key_id(pub));
	line = anchor_sign(priv, 42, HASH, 1764590400, err, sizeof(err));
	assert_non_null(line);
	assert_int_equal(strncmp(line, "airlock-anchor v1 event=42 hash=", 32), 0);
	assert_non_null(strstr(line, " at=2025-12-01T12:00:00Z key="));
	assert_int_equal(line[strlen(line) - 1], '\n');
	line[strlen(line) - 1] = '\0';
	assert_int_equal(anchor_verify(pub, line, &a, err, sizeof(err)), 0);
	assert_int_equal(a.event_id, 42);
	assert_string_equal(a.hash, HASH);
	assert_string_equal(a.at, "2025-12-01T12:00:00Z");
	/* The private key verifies its own lines too (the daemon reads its file back). */
	assert_int_equal(anchor_verify(priv, line, &a, err, sizeof(err)), 0);
	free(line);
	/* A public key does not sign. */
	assert_null(anchor_sign(pub, 1, HASH, 0, err, sizeof(err)));
	anchor_key_free(priv);
	anchor_key_free(pub);
}

/* Every single-character change to a line, anywhere in it, is refused. */
static void test_every_edit_is_refused(void **state)
{
	struct fx *f = *state;
	char err[256];
	struct anchor a;
	struct anchor_key *priv = anchor_key_load_private(f->priv, err, sizeof(err));
	struct anchor_key *pub = anchor_key_load_public(f->pub, err, sizeof(err));
	char *line = anchor_sign(priv, 7, HASH, 1764590400, err, sizeof(err));
	size_t n;

	line[strlen(line) - 1] = '\0';
	n = strlen(line);
	for (size_t i = 0; i < n; i++) {
		static const char repl[] = "0a1f ";
		for (size_t r = 0; r < sizeof(repl) - 1; r++) {
			char saved = line[i];
			if (repl[r] == saved)
				continue;
			line[i] = repl[r];
			if (anchor_verify(pub, line, &a, err, sizeof(err)) == 0)
				fail_msg("an edit at %zu ('%c' -> '%c') was accepted: %s", i, saved,
				         repl[r], line);
			line[i] = saved;
		}
	}
	/* Appended or removed text, a leading zero in the event id. */
	char buf[512];
	snprintf(buf, sizeof(buf), "%s0", line);
	assert_int_equal(anchor_verify(pub, buf, &a, err, sizeof(err)), -1);
	snprintf(buf, sizeof(buf), "%.*s", (int)n - 1, line);
	assert_int_equal(anchor_verify(pub, buf, &a, err, sizeof(err)), -1);
	snprintf(buf, sizeof(buf), "airlock-anchor v1 event=07%s", strstr(line, " hash="));
	assert_int_equal(anchor_verify(pub, buf, &a, err, sizeof(err)), -1);
	assert_int_equal(anchor_verify(pub, "", &a, err, sizeof(err)), -1);
	free(line);
	anchor_key_free(priv);
	anchor_key_free(pub);
}

/* What a write cut short leaves is a piece of an anchor line: every proper
 * prefix of a signed line is one, and nothing else is (the whole line, an
 * edited or glued line, text of another shape), so `audit verify
 * --anchors` can tell an interrupted write from an edit. */
static void test_torn_pieces_are_told_from_edits(void **state)
{
	struct fx *f = *state;
	char err[256], buf[1024];
	struct anchor_key *priv = anchor_key_load_private(f->priv, err, sizeof(err));
	char *line = anchor_sign(priv, 1234, HASH, 1764590400, err, sizeof(err));
	size_t n;

	line[strlen(line) - 1] = '\0';
	n = strlen(line);
	for (size_t i = 1; i < n; i++) {
		snprintf(buf, sizeof(buf), "%.*s", (int)i, line);
		if (!anchor_torn_prefix(buf))
			fail_msg("the piece of %zu bytes is not taken for torn: %s", i, buf);
	}
	assert_false(anchor_torn_prefix(line));
	assert_false(anchor_torn_prefix(""));
	/* An edit keeps the shape or breaks it; either way, not a piece. */
	snprintf(buf, sizeof(buf), "%s", line);
	buf[40] = buf[40] == 'a' ? 'b' : 'a';
	assert_false(anchor_torn_prefix(buf));
	snprintf(buf, sizeof(buf), "%.*sZ", (int)(n / 2), line);
	assert_false(anchor_torn_prefix(buf));
	snprintf(buf, sizeof(buf), "%.60s%s", line, line);
	assert_false(anchor_torn_prefix(buf));
	assert_false(anchor_torn_prefix("hello"));
	assert_false(anchor_torn_prefix("airlock-anchor v1 event= hash="));
	assert_true(anchor_torn_prefix("airlock-anchor v1 event=12"));
	assert_true(anchor_torn_prefix("airlock-anch"));
	free(line);
	anchor_key_free(priv);
}

static void test_other_key_and_file_rules(void **state)
{
	struct fx *f = *state;
	char err[256];
	struct anchor a;
	struct anchor_key *other = anchor_key_load_private(f->priv2, err, sizeof(err));
	struct anchor_key *pub = anchor_key_load_public(f->pub, err, sizeof(err));
	char *line = anchor_sign(other, 9, HASH, 0, err, sizeof(err));

	line[strlen(line) - 1] = '\0';
	assert_int_equal(anchor_verify(pub, line, &a, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "signed by key"));
	free(line);
	anchor_key_free(other);
	anchor_key_free(pub);
	/* An existing key is never overwritten. */
	assert_int_equal(anchor_keygen(f->priv, f->dir, err, sizeof(err)), -1);
	/* A signing key others may read is refused. */
	assert_int_equal(chmod(f->priv, 0640), 0);
	assert_null(anchor_key_load_private(f->priv, err, sizeof(err)));
	assert_non_null(strstr(err, "chmod 600"));
	assert_int_equal(chmod(f->priv, 0600), 0);
	/* A public key is not a private one, and the reverse. */
	assert_null(anchor_key_load_private(f->pub, err, sizeof(err)));
	assert_null(anchor_key_load_public(f->priv, err, sizeof(err)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sign_and_verify),
	    cmocka_unit_test(test_every_edit_is_refused),
	    cmocka_unit_test(test_torn_pieces_are_told_from_edits),
	    cmocka_unit_test(test_other_key_and_file_rules),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
