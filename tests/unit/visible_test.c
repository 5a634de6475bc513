/* visible_test.c -- nothing in a rendering acts on a terminal, and the rendering
 * reads back as exactly the text that was sent. */
#include "lib/visible.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static void expect(const char *in, size_t len, unsigned flags, const char *want)
{
	char *got = visible_text(in, len, flags, 0, NULL);

	assert_string_equal(got, want);
	free(got);
}

/* The literal's own length: texts may hold NUL bytes. */
#define EXPECT(lit, flags, want) expect(lit, sizeof(lit) - 1, flags, want)

static void test_examples(void **state)
{
	(void)state;
	/* The display attack: CR and erase-line make "ls" show over the real command. */
	EXPECT("rm -rf /srv\r\x1b[2Kls -l", 0, "rm -rf /srv\\r\\x1b[2Kls -l");
	/* OSC 52 (clipboard) and OSC 0 (window title) in a command's output. */
	EXPECT("ok\x1b]52;c;Y3VybCB4fHNo\x07\n", VISIBLE_LINES, "ok\\x1b]52;c;Y3VybCB4fHNo\\x07\n");
	EXPECT("\x1b]0;owned\x1b\\", 0, "\\x1b]0;owned\\x1b\\\\");
	/* Right-to-left override, zero-width space, no-break space, BOM. */
	EXPECT("ls \xe2\x80\xae"
	       "fdp.exe",
	       0, "ls \\u202efdp.exe");
	EXPECT("r\xe2\x80\x8bm", 0, "r\\u200bm");
	EXPECT("a\xc2\xa0"
	       "b",
	       0, "a\\u00a0b");
	EXPECT("\xef\xbb\xbfx", 0, "\\ufeffx");
	/* Tags (invisible ASCII look-alikes) past the BMP. */
	EXPECT("x\xf3\xa0\x81\xa1", 0, "x\\U000e0061");
	/* C1 control CSI, encoded as UTF-8. */
	EXPECT("\xc2\x9b"
	       "31m",
	       0, "\\u009b31m");
	/* Invalid UTF-8: a lone continuation byte, an overlong '/', a cut sequence, a surrogate. */
	EXPECT("a\x80z", 0, "a\\x80z");
	EXPECT("\xc0\xaf", 0, "\\xc0\\xaf");
	EXPECT("\xe2\x80", 0, "\\xe2\\x80");
	EXPECT("\xed\xa0\x80", 0, "\\xed\\xa0\\x80");
	/* NUL and DEL. */
	EXPECT("a\0b\x7f", 0, "a\\x00b\\x7f");
	/* Newlines: escaped in a line, kept in a block; CR never kept. */
	EXPECT("a\nb\tc", 0, "a\\nb\\tc");
	EXPECT("a\r\nb\tc", VISIBLE_LINES, "a\\r\nb\tc");
	/* Plain text, UTF-8 letters and backslashes pass unchanged when nothing is hidden. */
	EXPECT("find . -exec rm {} \\; # caf\xc3\xa9 \xe6\x97\xa5", 0,
	       "find . -exec rm {} \\; # caf\xc3\xa9 \xe6\x97\xa5");
	/* ... and backslashes double once something is, so "\\r" typed is not "\r" sent. */
	EXPECT("a\\r\rb", 0, "a\\\\r\\rb");
	/* JSON text: its backslashes are escapes already. */
	EXPECT("{\"c\": \"a\\\\b \xe2\x80\xae\"}", VISIBLE_JSON, "{\"c\": \"a\\\\b \\u202e\"}");
}

static void test_max_cuts_between_escapes(void **state)
{
	struct visible_info info;
	char *got;
	(void)state;

	got = visible_text("abc\x1b[0mdef", 10, 0, 5, &info);
	assert_string_equal(got, "abc"); /* "\x1b" does not fit whole: not cut in half */
	assert_int_equal(info.cut, 7);
	assert_int_equal(info.hidden, 1);
	free(got);
	got = visible_text("\xc3\xa9\xc3\xa9", 4, 0, 3, &info);
	assert_string_equal(got, "\xc3\xa9");
	assert_int_equal(info.cut, 2);
	free(got);
	got = visible_text("short", 5, 0, 100, &info);
	assert_string_equal(got, "short");
	assert_int_equal(info.cut, 0);
	assert_int_equal(info.hidden, 0);
	free(got);
	got = visible_str(NULL, 0);
	assert_string_equal(got, "");
	free(got);
}

/* Reads a rendering back; -1 when it is not one visible_text() could write. */
static long unrender(const char *r, bool escaped, unsigned char *out)
{
	size_t n = 0;

	for (size_t i = 0; r[i];) {
		if (!escaped || r[i] != '\\') {
			out[n++] = (unsigned char)r[i++];
			continue;
		}
		char c = r[i + 1];
		unsigned long cp;
		int digits;
		if (c == '\\' || c == 'r' || c == 'n' || c == 't') {
			out[n++] = c == '\\' ? '\\' : c == 'r' ? '\r' : c == 'n' ? '\n' : '\t';
			i += 2;
			continue;
		}
		digits = c == 'x' ? 2 : c == 'u' ? 4 : c == 'U' ? 8 : 0;
		if (digits == 0)
			return -1;
		char hex[9] = {0};
		memcpy(hex, r + i + 2, (size_t)digits);
		cp = strtoul(hex, NULL, 16);
		i += 2 + (size_t)digits;
		if (c == 'x') {
			out[n++] = (unsigned char)cp;
		} else if (cp < 0x800) {
			out[n++] = (unsigned char)(0xc0 | (cp >> 6));
			out[n++] = (unsigned char)(0x80 | (cp & 0x3f));
		} else if (cp < 0x10000) {
			out[n++] = (unsigned char)(0xe0 | (cp >> 12));
			out[n++] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
			out[n++] = (unsigned char)(0x80 | (cp & 0x3f));
		} else {
			out[n++] = (unsigned char)(0xf0 | (cp >> 18));
			out[n++] = (unsigned char)(0x80 | ((cp >> 12) & 0x3f));
			out[n++] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
			out[n++] = (unsigned char)(0x80 | (cp & 0x3f));
		}
	}
	return (long)n;
}

/* Appends code point cp as UTF-8. */
static size_t put_utf8(unsigned char *p, unsigned long cp)
{
	if (cp < 0x80) {
		p[0] = (unsigned char)cp;
		return 1;
	}
	if (cp < 0x800) {
		p[0] = (unsigned char)(0xc0 | (cp >> 6));
		p[1] = (unsigned char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		p[0] = (unsigned char)(0xe0 | (cp >> 12));
		p[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
		p[2] = (unsigned char)(0x80 | (cp & 0x3f));
		return 3;
	}
	p[0] = (unsigned char)(0xf0 | (cp >> 18));
	p[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3f));
	p[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
	p[3] = (unsigned char)(0x80 | (cp & 0x3f));
	return 4;
}

/* Checks a rendering: valid UTF-8 made only of characters a terminal shows
 * as themselves (newline and tab too under VISIBLE_LINES). */
static void assert_inert(const char *r, unsigned flags)
{
	const unsigned char *s = (const unsigned char *)r;
	size_t n = strlen(r);

	for (size_t i = 0; i < n;) {
		unsigned long cp = 0;
		size_t k;
		unsigned char c = s[i];
		if (c < 0x80) {
			cp = c;
			k = 1;
		} else {
			k = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
			assert_true(c >= 0xc2 && c <= 0xf4 && i + k <= n);
			cp = c & (k == 2 ? 0x1f : k == 3 ? 0x0f : 0x07);
			for (size_t j = 1; j < k; j++) {
				assert_int_equal(s[i + j] & 0xc0, 0x80);
				cp = (cp << 6) | (s[i + j] & 0x3f);
			}
		}
		if ((flags & VISIBLE_LINES) && (cp == '\n' || cp == '\t')) {
			i += k;
			continue;
		}
		if (visible_escapes(cp))
			fail_msg("U+%04lX reached the terminal in \"%s\"", cp, r);
		i += k;
	}
}

/* Random texts from every kind of character: the rendering is inert and
 * reads back as the input, byte for byte. */
static void test_generated(void **state)
{
	static const unsigned long pool[] = {
	    'a',    'Z',    ' ',    '\\',    'x',     'u',     '0',      '\r',   '\n',   '\t',
	    0x1b,   0x07,   0x00,   0x7f,    0x08,    0x85,    0x9b,     0x9d,   0xa0,   0xad,
	    0xe9,   0x300,  0x34f,  0x61c,   0x1680,  0x180e,  0x200b,   0x200d, 0x200e, 0x2028,
	    0x202a, 0x202e, 0x2060, 0x2066,  0x2069,  0x3000,  0x3164,   0xe000, 0xfe0f, 0xfeff,
	    0xfffe, 0x4e2d, 0x41a,  0x1f600, 0xe0041, 0x1d173, 0x10fffd, 0x2800, 0x115f, 0xffa0};
	unsigned char in[512], back[4096];
	(void)state;

	srand(12);
	for (int round = 0; round < 20000; round++) {
		size_t n = 0;
		int len = rand() % 40;
		unsigned flags = (unsigned)(rand() % 2) * VISIBLE_LINES;
		for (int j = 0; j < len; j++) {
			if (rand() % 10 == 0)
				in[n++] = (unsigned char)(0x80 + rand() % 0x80); /* stray byte */
			else
				n += put_utf8(
				    in + n,
				    pool[(size_t)rand() % (sizeof(pool) / sizeof(pool[0]))]);
		}
		struct visible_info info;
		char *r = visible_text((const char *)in, n, flags, 0, &info);
		assert_inert(r, flags);
		long m = unrender(r, info.hidden > 0, back);
		if (m != (long)n || memcmp(back, in, n) != 0)
			fail_msg("round %d: the rendering \"%s\" does not read back", round, r);
		free(r);
	}
}

/* The classes of character that must never reach a terminal, and some that may. */
static void test_classes(void **state)
{
	static const unsigned long hidden[] = {
	    0x00,   0x07,   0x08,    0x0d,    0x1b,    0x7f,    0x85,    0x9b,    0x9d,     0xa0,
	    0xad,   0x300,  0x34f,   0x61c,   0x115f,  0x1680,  0x180e,  0x200b,  0x200c,   0x200d,
	    0x200e, 0x200f, 0x2028,  0x2029,  0x202a,  0x202d,  0x202e,  0x2060,  0x2066,   0x2069,
	    0x206f, 0x2800, 0x3000,  0x3164,  0xe000,  0xfdd0,  0xfe0f,  0xfeff,  0xffa0,   0xfff9,
	    0xfffe, 0xffff, 0x1d173, 0xe0001, 0xe0041, 0xe007f, 0xe0100, 0xf0000, 0x10fffd, 0x0600,
	    0x0605, 0x06dd, 0x070f,  0x0890,  0x08e2,  0x110bd, 0x110cd, 0x13430, 0x1343f};
	static const unsigned long shown[] = {'a',    ' ',    '~',     0xe9,   0x41a,
	                                      0x4e2d, 0x20ac, 0x1f600, 0x2192, 0xfb01};
	(void)state;

	for (size_t i = 0; i < sizeof(hidden) / sizeof(hidden[0]); i++)
		if (!visible_escapes(hidden[i]))
			fail_msg("U+%04lX is not escaped", hidden[i]);
	for (size_t i = 0; i < sizeof(shown) / sizeof(shown[0]); i++)
		if (visible_escapes(shown[i]))
			fail_msg("U+%04lX is escaped", shown[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_examples),
	    cmocka_unit_test(test_max_cuts_between_escapes),
	    cmocka_unit_test(test_classes),
	    cmocka_unit_test(test_generated),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
