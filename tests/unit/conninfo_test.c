/* conninfo_test.c -- a password in a connection string is found in every form libpq takes. */
#include "store/conninfo.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

static void test_forms(void **state)
{
	(void)state;
	assert_true(conninfo_has_password("user=hermes password=s3cret"));
	assert_true(conninfo_has_password("host=db user=hermes password='a b'"));
	assert_true(conninfo_has_password("postgresql://hermes:s3cret@db/airlock"));
	assert_true(conninfo_has_password("postgres://hermes:pw@db:5432/airlock?sslmode=require"));
	assert_true(conninfo_has_password("postgresql://db/airlock?password=x"));
	assert_false(conninfo_has_password("user=hermes"));
	assert_false(conninfo_has_password("postgresql://hermes@db/airlock"));
	assert_false(conninfo_has_password("dbname=password_vault user=hermes"));
	assert_false(conninfo_has_password(""));
	/* Unparsable: judged by the word. */
	assert_true(conninfo_has_password("user=hermes password"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_forms)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
