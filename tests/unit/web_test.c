/* web_test.c -- the console's pure parts: TOTP and base32, sessions and
 * cookies, CSRF tokens, the sign-in rate limit, form decoding, HTML
 * escaping, a command's marked hidden characters, the page a sign-in
 * returns to (open-redirect attempts), action-link tokens, the queue's
 * filters, the chats' signatures and the config's refusals. */
#include "lib/buf.h"
#include "lib/totp.h"
#include "lib/utf8.h"
#include "lib/visible.h"
#include "web/chat.h"
#include "web/config.h"
#include "web/form.h"
#include "web/html.h"
#include "web/links.h"
#include "web/pages.h"
#include "web/ratelimit.h"
#include "web/session.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

static const unsigned char rfc_key[] = "12345678901234567890"; /* RFC 6238's SHA-1 key */

/* RFC 6238 appendix B, SHA-1, the last six of its eight digits. */
static void test_totp_rfc_vectors(void **state)
{
	static const struct {
		int64_t t;
		uint32_t code;
	} v[] = {{59, 287082},       {1111111109, 81804},  {1111111111, 50471},
	         {1234567890, 5924}, {2000000000, 279037}, {20000000000, 353130}};
	(void)state;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		char code[8];
		assert_int_equal(totp_hotp(rfc_key, 20, (uint64_t)v[i].t / 30), v[i].code);
		snprintf(code, sizeof(code), "%06u", v[i].code);
		assert_int_equal(totp_check(rfc_key, 20, code, v[i].t, 0), (uint64_t)v[i].t / 30);
	}
}

static void test_totp_window_and_replay(void **state)
{
	int64_t now = 1700000000;
	uint64_t step = (uint64_t)now / 30;
	char prev[8], next[8], far[8], spaced[10];
	(void)state;

	snprintf(prev, sizeof(prev), "%06u", totp_hotp(rfc_key, 20, step - 1));
	snprintf(next, sizeof(next), "%06u", totp_hotp(rfc_key, 20, step + 1));
	snprintf(far, sizeof(far), "%06u", totp_hotp(rfc_key, 20, step + 3));
	assert_int_equal(totp_check(rfc_key, 20, prev, now, 0), step - 1);
	assert_int_equal(totp_check(rfc_key, 20, next, now, 0), step + 1);
	if (strcmp(far, prev) != 0 && strcmp(far, next) != 0 &&
	    totp_hotp(rfc_key, 20, step) != (uint32_t)atoi(far))
		assert_int_equal(totp_check(rfc_key, 20, far, now, 0), 0);
	/* A step already used, or one before it, never matches again. */
	assert_int_equal(totp_check(rfc_key, 20, prev, now, step - 1), 0);
	assert_int_equal(totp_check(rfc_key, 20, prev, now, step), 0);
	/* Spaces between digits are fine; anything else is not. */
	snprintf(spaced, sizeof(spaced), "%.3s %.3s", next, next + 3);
	assert_int_equal(totp_check(rfc_key, 20, spaced, now, 0), step + 1);
	assert_int_equal(totp_check(rfc_key, 20, "12345", now, 0), 0);
	assert_int_equal(totp_check(rfc_key, 20, "1234567", now, 0), 0);
	assert_int_equal(totp_check(rfc_key, 20, "12a456", now, 0), 0);
	assert_int_equal(totp_check(rfc_key, 20, "", now, 0), 0);
	assert_int_equal(totp_check(rfc_key, 20, NULL, now, 0), 0);
}

static void test_base32(void **state)
{
	static const char *const plain[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
	static const char *const enc[] = {"",        "MY",       "MZXQ",      "MZXW6",
	                                  "MZXW6YQ", "MZXW6YTB", "MZXW6YTBOI"};
	unsigned char out[32];
	(void)state;

	for (size_t i = 0; i < 7; i++) {
		char *e = totp_base32((const unsigned char *)plain[i], strlen(plain[i]));
		assert_string_equal(e, enc[i]);
		free(e);
		int n = totp_unbase32(enc[i], out, sizeof(out));
		assert_int_equal(n, (int)strlen(plain[i]));
		assert_memory_equal(out, plain[i], (size_t)n);
	}
	assert_int_equal(totp_unbase32("mzxw 6ytb oi==", out, sizeof(out)), 6);
	assert_int_equal(totp_unbase32("MZXW1", out, sizeof(out)), -1); /* 1 is not base32 */
	assert_int_equal(totp_unbase32("MZXW6YTBOI", out, 3), -1);      /* overflow */
}

static int released;
static void count_release(void *db)
{
	(void)db;
	released++;
}

static void test_session_expiry(void **state)
{
	struct session_table *t = session_table_new(4, 10, 100, count_release);
	int marker;
	(void)state;

	released = 0;
	struct session *s = session_create(t, "alice", &marker, 1000);
	assert_non_null(s);
	assert_int_equal(strlen(s->id), SESSION_TOKEN_LEN);
	assert_int_equal(strlen(s->csrf), SESSION_TOKEN_LEN);
	assert_string_not_equal(s->id, s->csrf);
	char id[SESSION_TOKEN_LEN + 1];
	strcpy(id, s->id);
	session_put(t, s);
	/* Use within the idle time keeps it alive up to the absolute limit. */
	for (time_t now = 1009; now < 1100; now += 9) {
		s = session_find(t, id, now);
		assert_non_null(s);
		session_put(t, s);
	}
	assert_null(session_find(t, id, 1100)); /* absolute expiry */
	assert_int_equal(released, 1);
	/* Idle expiry. */
	s = session_create(t, "bob", &marker, 2000);
	strcpy(id, s->id);
	session_put(t, s);
	assert_null(session_find(t, id, 2010));
	assert_int_equal(released, 2);
	/* A clock that went backwards does not extend a session. */
	s = session_create(t, "carol", &marker, 3000);
	strcpy(id, s->id);
	session_put(t, s);
	assert_null(session_find(t, id, 2999));
	session_table_free(t);
}

static void test_session_lookup_and_csrf(void **state)
{
	struct session_table *t = session_table_new(2, 100, 1000, count_release);
	int m;
	char ids[3][SESSION_TOKEN_LEN + 1];
	(void)state;

	released = 0;
	for (int i = 0; i < 3; i++) {
		struct session *s = session_create(t, "op", &m, 10 + i);
		strcpy(ids[i], s->id);
		assert_true(session_csrf_ok(s, s->csrf));
		assert_false(session_csrf_ok(s, s->id));
		assert_false(session_csrf_ok(s, ""));
		assert_false(session_csrf_ok(s, NULL));
		char bad[SESSION_TOKEN_LEN + 1];
		strcpy(bad, s->csrf);
		bad[5] = bad[5] == 'a' ? 'b' : 'a';
		assert_false(session_csrf_ok(s, bad));
		session_put(t, s);
	}
	/* The table holds 2: the least recently used one went. */
	assert_int_equal(session_count(t), 2);
	assert_null(session_find(t, ids[0], 20));
	assert_int_equal(released, 1);
	struct session *s = session_find(t, ids[2], 20);
	assert_non_null(s);
	/* Ending it while referenced frees it only on the last put. */
	session_end(t, s);
	assert_int_equal(released, 1);
	assert_false(session_live(t, s, 20));
	session_put(t, s);
	assert_int_equal(released, 2);
	assert_null(session_find(t, ids[2], 20));
	/* Malformed ids never match. */
	assert_null(session_find(t, "", 20));
	assert_null(session_find(t, "zz", 20));
	char upper[SESSION_TOKEN_LEN + 1];
	strcpy(upper, ids[1]);
	for (char *p = upper; *p; p++)
		if (*p >= 'a' && *p <= 'f')
			*p = (char)(*p - 'a' + 'A');
	if (strcmp(upper, ids[1]) != 0)
		assert_null(session_find(t, upper, 20));
	session_table_free(t);
	assert_int_equal(released, 3);
}

static void test_cookies(void **state)
{
	char v[80];
	struct buf b = BUF_INIT;
	(void)state;

	assert_true(session_cookie_get("a=1; airlock=abc; b=2", "airlock", v, sizeof(v)));
	assert_string_equal(v, "abc");
	assert_false(session_cookie_get("xairlock=abc", "airlock", v, sizeof(v)));
	assert_false(session_cookie_get("airlockx=abc", "airlock", v, sizeof(v)));
	assert_false(session_cookie_get("airlock=0123456789", "airlock", v, 5));
	assert_false(session_cookie_get("", "airlock", v, sizeof(v)));
	session_cookie_set(&b, "__Host-airlock", "abc", true, 60);
	assert_string_equal(
	    buf_str(&b),
	    "__Host-airlock=abc; Path=/; HttpOnly; SameSite=Strict; Secure; Max-Age=60");
	buf_reset(&b);
	session_cookie_set(&b, "airlock", "", false, 0);
	assert_string_equal(buf_str(&b), "airlock=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0");
	buf_free(&b);
}

static void test_ratelimit(void **state)
{
	struct ratelimit *r = ratelimit_new(3, 60, 2);
	int retry = 0;
	(void)state;

	for (int i = 0; i < 3; i++) {
		assert_true(ratelimit_allowed(r, "addr:1", 100 + i, NULL));
		ratelimit_failed(r, "addr:1", 100 + i);
	}
	assert_false(ratelimit_allowed(r, "addr:1", 110, &retry));
	assert_int_equal(retry, 50);
	assert_true(ratelimit_allowed(r, "addr:2", 110, NULL)); /* other keys are not affected */
	assert_true(ratelimit_allowed(r, "addr:1", 160, NULL)); /* the first left the window */
	ratelimit_failed(r, "addr:1", 160);
	assert_false(ratelimit_allowed(r, "addr:1", 160, NULL));
	ratelimit_clear(r, "addr:1");
	assert_true(ratelimit_allowed(r, "addr:1", 161, NULL));
	/* A full table forgets the stalest key, never refuses to count. */
	ratelimit_failed(r, "a", 200);
	ratelimit_failed(r, "b", 201);
	ratelimit_failed(r, "c", 202);
	for (int i = 0; i < 3; i++)
		ratelimit_failed(r, "c", 203);
	assert_false(ratelimit_allowed(r, "c", 204, NULL));
	ratelimit_free(r);
}

static void test_form(void **state)
{
	struct form f;
	(void)state;

	const char *s = "csrf=ab12&note=a+b%20c%26d%3D&empty=&flag&reason=%E2%80%AE";
	assert_int_equal(form_parse(&f, s, strlen(s)), 0);
	assert_string_equal(form_get(&f, "csrf"), "ab12");
	assert_string_equal(form_get(&f, "note"), "a b c&d=");
	assert_string_equal(form_get(&f, "empty"), "");
	assert_string_equal(form_get(&f, "flag"), "");
	assert_string_equal(form_get(&f, "reason"), "\xe2\x80\xae");
	assert_null(form_get(&f, "missing"));
	form_free(&f);
	/* Malformed escapes and encoded NULs are refused, and leave nothing. */
	static const char *const bad[] = {"a=%", "a=%4", "a=%zz", "a=x%00y", "%00=1"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(form_parse(&f, bad[i], strlen(bad[i])), -1);
		assert_int_equal(f.n, 0);
	}
	struct buf many = BUF_INIT;
	for (int i = 0; i <= FORM_MAX_FIELDS; i++)
		buf_printf(&many, "k%d=v&", i);
	assert_int_equal(form_parse(&f, buf_str(&many), many.len), -1);
	buf_free(&many);
	/* Only len bytes count. */
	assert_int_equal(form_parse(&f, "a=12345", 4), 0);
	assert_string_equal(form_get(&f, "a"), "12");
	form_free(&f);
}

static void test_html(void **state)
{
	struct buf b = BUF_INIT;
	(void)state;

	assert_int_equal(html_text(&b, "<script>alert('x')</script> & \"q\""), 0);
	assert_string_equal(buf_str(&b), "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; "
	                                 "&quot;q&quot;");
	buf_reset(&b);
	/* An escape sequence, a carriage return and a right-to-left override:
	 * each shown as an escape, the text marked. */
	size_t hidden = html_text(&b, "ls\x1b[2K\rrm -rf / \xe2\x80\xae<b>");
	assert_int_equal(hidden, 3);
	assert_non_null(strstr(buf_str(&b), "ls\\x1b[2K\\rrm -rf / \\u202e&lt;b&gt;"));
	assert_non_null(strstr(buf_str(&b), "class=\"hidden-chars\""));
	assert_null(strchr(buf_str(&b), '\x1b'));
	assert_null(strstr(buf_str(&b), "\xe2\x80\xae"));
	buf_reset(&b);
	html_text(&b, NULL);
	assert_string_equal(buf_str(&b), "");
	/* Output blocks keep lines, cap the size and say so. */
	html_block(&b, "a\nb\tc\0d", 7, 0);
	assert_non_null(strstr(buf_str(&b), "a\nb\tc\\x00d"));
	buf_reset(&b);
	html_block(&b, "0123456789", 10, 4);
	assert_non_null(strstr(buf_str(&b), "0123"));
	assert_non_null(strstr(buf_str(&b), "[6 more bytes not shown]"));
	buf_reset(&b);
	html_esc(&b, "<&>'\"");
	assert_string_equal(buf_str(&b), "&lt;&amp;&gt;&#39;&quot;");
	buf_free(&b);
}

/* Pieces an attacker would put in a command, an output or a name, per
 * category: terminal escapes (CSI, OSC, DCS), C0 and C1 controls, bidi
 * overrides and isolates, zero-width and other invisible characters,
 * markup and script, entities, invalid UTF-8, and ordinary text. */
static const char *const pieces[] = {
    "\x1b[2K",
    "\x1b[1A",
    "\x1b]0;title\x07",
    "\x1b]52;c;cm0gLXJmIC8=\x07",
    "\x1bP1$r\x1b\\",
    "\x1b[?1049h",
    "\r",
    "\n",
    "\t",
    "\b",
    "\x07",
    "\x7f",
    "\x01",
    "\x1f",
    "\xc2\x85",
    "\xc2\x9b",
    "\xc2\x9d", /* C1: NEL, CSI, OSC */
    "\xe2\x80\xae",
    "\xe2\x80\xad",
    "\xe2\x81\xa6",
    "\xe2\x81\xa9",
    "\xe2\x80\x8f", /* bidi */
    "\xe2\x80\x8b",
    "\xe2\x80\x8d",
    "\xef\xbb\xbf",
    "\xe2\x81\xa0",
    "\xc2\xa0", /* invisible */
    "\xe3\x80\x80",
    "\xf3\xa0\x80\x81",
    "\xe2\xa0\x80", /* spaces, tags */
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "\"><svg onload=alert(1)>",
    "' onmouseover='alert(1)",
    "&lt;b&gt;",
    "&#x3c;",
    "javascript:alert(1)",
    "</pre><b>",
    "\xff",
    "\xc0\xaf",
    "\xed\xa0\x80",
    "\xe2\x80", /* invalid UTF-8 */
    "rm -rf /",
    " ",
    "qm destroy 102",
    "\\x1b",
    "\\",
    "caf\xc3\xa9",
    "\xf0\x9f\x94\xa5",
};

static bool starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* What must never reach a page: a raw markup character, a control, or a
 * character visible_text() would escape; and the result is valid UTF-8. */
static void assert_inert(const char *html, bool lines)
{
	const unsigned char *p = (const unsigned char *)html;
	size_t n = strlen(html), i = 0;
	bool in_tag = false;

	while (i < n) {
		unsigned long cp;
		size_t k = utf8_decode(p + i, n - i, &cp);
		if (k == 0)
			fail_msg("invalid UTF-8 at byte %zu of: %s", i, html);
		/* Our own wrapper spans are the only markup. */
		if (cp == '<') {
			if (!starts(html + i, "<span class=\"hidden-chars\" ") &&
			    !starts(html + i, "</span>") &&
			    !starts(html + i, "<em class=\"cut\">") && !starts(html + i, "</em>"))
				fail_msg("raw '<' at byte %zu of: %s", i, html);
			in_tag = true;
		} else if (cp == '>') {
			if (!in_tag)
				fail_msg("raw '>' at byte %zu of: %s", i, html);
			in_tag = false;
		} else if (!in_tag && (cp == '"' || cp == '\'')) {
			fail_msg("raw quote at byte %zu of: %s", i, html);
		} else if (cp == '&') {
			if (strncmp(html + i, "&amp;", 5) && strncmp(html + i, "&lt;", 4) &&
			    strncmp(html + i, "&gt;", 4) && strncmp(html + i, "&quot;", 6) &&
			    strncmp(html + i, "&#39;", 5))
				fail_msg("a bare '&' at byte %zu of: %s", i, html);
		} else if (cp < 0x20 && !(lines && (cp == '\n' || cp == '\t'))) {
			fail_msg("control 0x%02lx at byte %zu of: %s", cp, i, html);
		} else if (cp >= 0x20 &&
		           (cp == 0x7f || (cp >= 0x80 && cp <= 0x9f) || visible_escapes(cp))) {
			fail_msg("U+%04lX reached the page at byte %zu", cp, i);
		}
		i += k;
	}
}

static void test_html_generated(void **state)
{
	unsigned seed = 20261201;
	(void)state;

	for (int round = 0; round < 20000; round++) {
		struct buf in = BUF_INIT, out = BUF_INIT;
		int parts = 1 + (int)(rand_r(&seed) % 8);
		for (int k = 0; k < parts; k++)
			buf_puts(&in, pieces[rand_r(&seed) % (sizeof(pieces) / sizeof(pieces[0]))]);
		html_text(&out, buf_str(&in));
		assert_inert(buf_str(&out), false);
		buf_reset(&out);
		html_block(&out, in.data, in.len, (size_t)(rand_r(&seed) % 64));
		assert_inert(buf_str(&out), true);
		buf_free(&in);
		buf_free(&out);
	}
}

/* Writes text to a temporary config file and loads it. */
static int load(const char *text, struct web_config *c, char *err, size_t errlen)
{
	char path[] = "/tmp/airlock-web-test.XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	int rc = web_config_load(path, c, err, errlen);
	unlink(path);
	return rc;
}

static void test_config(void **state)
{
	struct web_config c;
	char err[512];
	(void)state;

	assert_int_equal(load("listen: 127.0.0.1:8080\ndatabase: \"user=web\"\n"
	                      "operator_database: \"host=127.0.0.1\"\nsession_idle_s: 60\n",
	                      &c, err, sizeof(err)),
	                 0);
	assert_string_equal(c.listen_host, "127.0.0.1");
	assert_int_equal(c.listen_port, 8080);
	assert_int_equal(c.session_idle_s, 60);
	assert_int_equal(c.session_max_s, 8 * 3600);
	web_config_free(&c);
	assert_int_equal(load("listen: \"[::1]:8080\"\ndatabase: x\noperator_database: y\n", &c,
	                      err, sizeof(err)),
	                 0);
	assert_string_equal(c.listen_host, "::1");
	web_config_free(&c);
	static const struct {
		const char *text, *want;
	} bad[] = {
	    {"listen: 0.0.0.0:8080\ndatabase: x\noperator_database: y\n", "plain HTTP is refused"},
	    {"listen: 10.1.2.3:8080\ndatabase: x\noperator_database: y\n", "plain HTTP is refused"},
	    {"listen: 0.0.0.0:8080\ntls_cert: /c\ndatabase: x\noperator_database: y\n",
	     "go together"},
	    {"listen: localhost:8080\ndatabase: x\noperator_database: y\n", "numeric"},
	    {"listen: 127.0.0.1:99999\ndatabase: x\noperator_database: y\n", "numeric"},
	    {"listen: 127.0.0.1:80\ndatabase: \"user=w password=s\"\noperator_database: y\n",
	     "must not hold a password"},
	    {"listen: 127.0.0.1:80\ndatabase: x\n", "operator_database"},
	    {"listen: 127.0.0.1:80\ndatabase: x\noperator_database: y\nsesion_idle_s: 3\n",
	     "unknown key \"sesion_idle_s\""},
	    {"listen: 127.0.0.1:80\ndatabase: x\noperator_database: y\nsession_idle_s: 0\n",
	     "1..86400"},
	    {"listen: 127.0.0.1:80\ndatabase: x\noperator_database: y\nsession_idle_s: 500\n"
	     "session_max_s: 100\n",
	     "longer than session_max_s"},
	    {"listen: 127.0.0.1:80\ndatabase: x\noperator_database: y\npublic_url: console\n",
	     "public_url must be the console's address"},
	    {"listen: 127.0.0.1:80\ndatabase: x\noperator_database: y\n"
	     "slack_response_prefix: hooks.slack.com\n",
	     "slack_response_prefix must be"},
	    {"listen: 127.0.0.1:80\ndatabase: x\noperator_database: y\n"
	     "slack_signing_secret_file: /nonexistent/slack\n",
	     "slack_signing_secret_file: cannot read /nonexistent/slack"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(load(bad[i].text, &c, err, sizeof(err)), -1);
		if (strstr(err, bad[i].want) == NULL)
			fail_msg("config %zu: wanted \"%s\" in \"%s\"", i, bad[i].want, err);
	}
	assert_true(web_config_loopback("127.0.0.1"));
	assert_true(web_config_loopback("127.8.9.1"));
	assert_true(web_config_loopback("::1"));
	assert_false(web_config_loopback("128.0.0.1"));
	assert_false(web_config_loopback("::"));
}

/* A sign-in returns only to a path on this console: every spelling of
 * another host, scheme or trick is sent to the Pending page instead. */
static void test_safe_next(void **state)
{
	static const char *const good[] = {"/",
	                                   "/r/42",
	                                   "/a/0123abcd",
	                                   "/?target=vm%3A%2A&agent=h",
	                                   "/agents/hermes",
	                                   "/history?q=nfs",
	                                   "/%2F%2Fevil.example",
	                                   "/login2"};
	static const char *const bad[] = {"//evil.example",
	                                  "//evil.example/r/1",
	                                  "/\\evil.example",
	                                  "\\/evil.example",
	                                  "https://evil.example/",
	                                  "http:/evil.example",
	                                  "evil.example",
	                                  "javascript:alert(1)",
	                                  "/\tevil",
	                                  "/ /evil",
	                                  "/r/1\r\nSet-Cookie: x",
	                                  "",
	                                  "/login",
	                                  "/login?next=/",
	                                  "/r/\xc3\xa9",
	                                  "///evil.example",
	                                  "/\\/evil.example",
	                                  "/r/1\\..",
	                                  "data:text/html,x",
	                                  NULL};
	char longer[LINKS_NEXT_MAX + 2];

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		if (!links_safe_next(good[i]))
			fail_msg("refused a path of this console: %s", good[i]);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (links_safe_next(bad[i]))
			fail_msg("accepted an unsafe return address: %s", bad[i] ? bad[i] : "NULL");
	memset(longer, 'a', sizeof(longer));
	longer[0] = '/';
	longer[LINKS_NEXT_MAX + 1] = '\0';
	assert_false(links_safe_next(longer));
	longer[LINKS_NEXT_MAX] = '\0';
	assert_true(links_safe_next(longer));
}

static void test_links(void **state)
{
	struct buf b = BUF_INIT;

	(void)state;
	links_encode(&b, "/r/5?x=vm:* a&b\xc3\xa9");
	assert_string_equal(buf_str(&b), "%2Fr%2F5%3Fx%3Dvm%3A%2A%20a%26b%C3%A9");
	buf_free(&b);
	assert_true(
	    links_token_ok("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"));
	assert_false(
	    links_token_ok("0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef"));
	assert_false(links_token_ok("0123456789abcdef"));
	assert_false(links_token_ok("../../r/1"));
	assert_false(links_token_ok(NULL));
}

/* A command to decide on: each hidden character marked on its own and
 * counted, newlines and tabs kept, markup inert, backslashes doubled once
 * anything is marked. */
static void test_html_command(void **state)
{
	struct buf b = BUF_INIT;
	size_t bidi = 9;

	(void)state;
	assert_int_equal(html_command(&b, "apt-get install -y nfs\n\tdone <b>", &bidi), 0);
	assert_int_equal(bidi, 0);
	assert_string_equal(buf_str(&b), "apt-get install -y nfs\n\tdone &lt;b&gt;");
	buf_reset(&b);
	assert_int_equal(html_command(&b, "echo \\ ok\x1b[2K\r \xe2\x80\xaegpj\xff", &bidi), 4);
	assert_int_equal(bidi, 1);
	const char *h = buf_str(&b);
	assert_non_null(
	    strstr(h, "echo \\\\ ok<mark class=\"hidden-char\" title=\"U+001B\">\\x1b</mark>[2K"));
	assert_non_null(strstr(h, "<mark class=\"hidden-char\" title=\"U+000D\">\\r</mark>"));
	assert_non_null(strstr(h, "<mark class=\"hidden-char bidi\" title=\"U+202E, changes the "
	                          "direction of the text\">\\u202e</mark>gpj"));
	assert_non_null(strstr(h, "title=\"byte 0xff, not UTF-8\">\\xff</mark>"));
	assert_null(strchr(h, '\x1b'));
	assert_null(strstr(h, "\xe2\x80\xae"));
	/* the same count as visible_text's, less newlines and tabs */
	for (unsigned long cp = 1; cp < 0x110000; cp++) {
		unsigned char u[5];
		size_t n;
		if (cp >= 0xd800 && cp <= 0xdfff)
			continue;
		if (cp < 0x80) {
			u[0] = (unsigned char)cp;
			n = 1;
		} else if (cp < 0x800) {
			u[0] = (unsigned char)(0xc0 | cp >> 6);
			u[1] = (unsigned char)(0x80 | (cp & 0x3f));
			n = 2;
		} else if (cp < 0x10000) {
			u[0] = (unsigned char)(0xe0 | cp >> 12);
			u[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
			u[2] = (unsigned char)(0x80 | (cp & 0x3f));
			n = 3;
		} else {
			u[0] = (unsigned char)(0xf0 | cp >> 18);
			u[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3f));
			u[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
			u[3] = (unsigned char)(0x80 | (cp & 0x3f));
			n = 4;
		}
		u[n] = '\0';
		buf_reset(&b);
		size_t marked = html_command(&b, (const char *)u, NULL);
		if (marked != (visible_escapes(cp) && cp != '\n' && cp != '\t'))
			fail_msg("U+%04lX: marked %zu", cp, marked);
	}
	buf_free(&b);
}

/* The queue's filters: what they accept, and their query string. */
static void test_queue_filter(void **state)
{
	struct queue_filter f = {.target = "vm:*",
	                         .agent = "intern-?",
	                         .cls = "destructive",
	                         .state = "open",
	                         .older = "15m"};
	struct buf b = BUF_INIT;

	(void)state;
	assert_null(queue_filter_problem(&f));
	queue_filter_query(&b, &f);
	assert_string_equal(
	    buf_str(&b),
	    "?target=vm%3A%2A&agent=intern-%3F&class=destructive&state=open&older=15m");
	buf_free(&b);
	struct queue_filter none = {0};
	assert_null(queue_filter_problem(&none));
	static const struct queue_filter bad[] = {{.target = "vm:x' OR 1=1"},
	                                          {.target = "vm:<b>"},
	                                          {.agent = "a b"},
	                                          {.cls = "harmless"},
	                                          {.state = "succeeded"},
	                                          {.older = "15 minutes"},
	                                          {.older = "m"},
	                                          {.older = "-5m"},
	                                          {.older = "5y"}};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_non_null(queue_filter_problem(&bad[i]));
}

/* Slack's own documented example request and signature; a forged, altered
 * or replayed one is refused.  Mattermost's context HMAC, computed apart. */
static void test_chat_signatures(void **state)
{
	static const char secret[] = "8f742231b10e8888abcd99yyyzzz85a5";
	static const char body[] =
	    "token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id="
	    "G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%"
	    "2Fwebhook-"
	    "collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%"
	    "2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121."
	    "803a0bc887a14d10d2c447fce8b6703c";
	static const char sig[] =
	    "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503";
	const time_t then = 1531420618;

	(void)state;
	assert_true(chat_slack_verified(secret, strlen(secret), "1531420618", body, strlen(body),
	                                sig, then + 10));
	assert_false(chat_slack_verified(secret, strlen(secret), "1531420618", body, strlen(body),
	                                 sig, then + CHAT_SLACK_SKEW_S + 1)); /* replayed later */
	assert_false(chat_slack_verified(secret, strlen(secret), "1531420619", body, strlen(body),
	                                 sig, then)); /* another timestamp */
	assert_false(chat_slack_verified(secret, strlen(secret), "1531420618", body,
	                                 strlen(body) - 1, sig, then)); /* the body cut */
	assert_false(chat_slack_verified("other", 5, "1531420618", body, strlen(body), sig, then));
	assert_false(chat_slack_verified(secret, strlen(secret), "1531420618", body, strlen(body),
	                                 "v0=00", then));
	assert_false(
	    chat_slack_verified(secret, strlen(secret), NULL, body, strlen(body), sig, then));
	assert_false(chat_slack_verified(secret, strlen(secret), "1531420618x", body, strlen(body),
	                                 sig, then));
	static const char token[] =
	    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	assert_true(chat_mattermost_verified(
	    "mm-secret", 9, token,
	    "sha256=97d31e584197a1b44f14ed6d0f93e75e8bf39074544b00b226042a97dc207b05"));
	assert_false(chat_mattermost_verified(
	    "mm-secret", 9, token,
	    "sha256=97d31e584197a1b44f14ed6d0f93e75e8bf39074544b00b226042a97dc207b06"));
	assert_false(chat_mattermost_verified("mm-secret", 9, token, NULL));
	assert_false(chat_mattermost_verified("mm-secret", 9, NULL, "sha256=x"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_totp_rfc_vectors),
	    cmocka_unit_test(test_totp_window_and_replay),
	    cmocka_unit_test(test_base32),
	    cmocka_unit_test(test_session_expiry),
	    cmocka_unit_test(test_session_lookup_and_csrf),
	    cmocka_unit_test(test_cookies),
	    cmocka_unit_test(test_ratelimit),
	    cmocka_unit_test(test_form),
	    cmocka_unit_test(test_html),
	    cmocka_unit_test(test_html_generated),
	    cmocka_unit_test(test_config),
	    cmocka_unit_test(test_safe_next),
	    cmocka_unit_test(test_links),
	    cmocka_unit_test(test_html_command),
	    cmocka_unit_test(test_queue_filter),
	    cmocka_unit_test(test_chat_signatures),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
