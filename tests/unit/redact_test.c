/* redact_test.c -- no credential, path token or query of a URL reaches a log. */
#include "lib/redact.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static void expect(const char *url, const char *want)
{
	char *got = redact_url(url);

	assert_string_equal(got, want);
	free(got);
}

static void test_parts_left_out(void **state)
{
	(void)state;
	expect("https://user:s3cret@chat.example:8443/hooks/T0/B1?token=abc#frag",
	       "https://***@chat.example:8443/***?***#***");
	expect("http://127.0.0.1:9000/ops", "http://127.0.0.1:9000/***");
	expect("https://ntfy.sh/my-secret-topic", "https://ntfy.sh/***");
	expect("https://h.example", "https://h.example");
	expect("https://h.example/", "https://h.example/");
	expect("https://h.example?key=1", "https://h.example?***");
	expect("https://a@b@h.example/x", "https://***@h.example/***");
	expect("http://[::1]:80/p?q", "http://[::1]:80/***?***");
	expect("not a url with password=x", "***");
	expect("://x", "***");
	expect(NULL, "***");
}

/* Generated URLs: the secret parts never survive. */
static void test_generated(void **state)
{
	static const char *const secrets[] = {"hunter2", "tok3n", "Bxyz", "pa:ss"};
	char url[256];
	(void)state;

	srand(3);
	for (int i = 0; i < 2000; i++) {
		const char *s = secrets[rand() % 4];
		int form = rand() % 4;
		if (form == 0)
			snprintf(url, sizeof(url), "https://u:%s@host%d.example/p", s, i);
		else if (form == 1)
			snprintf(url, sizeof(url), "http://host%d.example:%d/%s/x", i, 1000 + i, s);
		else if (form == 2)
			snprintf(url, sizeof(url), "https://host%d.example/?a=%s", i, s);
		else
			snprintf(url, sizeof(url), "https://%s@host%d.example#%s", s, i, s);
		char *r = redact_url(url);
		if (strstr(r, s) != NULL)
			fail_msg("%s kept a secret: %s", url, r);
		if (strstr(r, "host") == NULL)
			fail_msg("%s lost its host: %s", url, r);
		free(r);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parts_left_out),
	    cmocka_unit_test(test_generated),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
