/* totp.c -- `airlock operator totp enroll [LOGIN]`.
 *
 * Makes a new random secret (160 bits, the size RFC 4226 recommends for
 * HMAC-SHA1) here, stores it with airlock.totp_enroll() -- which lets an
 * operator enrol only their own login and only once, and an administrator
 * enrol or replace anyone's -- and prints it once, as base32 and as an
 * otpauth:// URI for an authenticator app.  The secret is never read back:
 * no login but airlock-web's own may read it. */
#include "cli/totp.h"

#include "cli/cli.h"
#include "lib/totp.h"
#include "lib/xalloc.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#define SECRET_BYTES 20

static void usage(FILE *f)
{
	fprintf(f, "usage: airlock operator totp enroll [LOGIN] [--db CONNINFO]\n"
	           "Gives an operator's login a one-time-code second factor for the console\n"
	           "(airlock-web): TOTP, HMAC-SHA1, 6 digits, 30-second steps.  Prints the new\n"
	           "secret once, as base32 and as an otpauth:// URI; add it to an\n"
	           "authenticator app.  From then on, signing in to the console needs the\n"
	           "login's password and the app's current code.\n"
	           "LOGIN defaults to the login you connect as.  An operator may enrol only\n"
	           "their own login, and only once; enrolling another login, or replacing a\n"
	           "secret, takes an administrator (a superuser or a member of airlock_owner).\n"
	           "Exit: 0 enrolled, 1 error, 2 usage, 3 refused, 4 no such login.\n");
}

/* Appends s percent-encoded (RFC 3986 unreserved characters kept). */
static void uri_part(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    c == '-' || c == '.' || c == '_' || c == '~')
			fputc(c, f);
		else
			fprintf(f, "%%%02X", c);
	}
}

static int enroll(const char *login, const char *db)
{
	unsigned char secret[SECRET_BYTES];
	char hex[2 * SECRET_BYTES + 3];
	struct store *s = NULL;
	struct store_res *r = NULL;
	char *b32 = NULL, *who = NULL;
	int rc = CLI_ERROR;
	size_t got = 0;

	while (got < sizeof(secret)) {
		ssize_t n = getrandom(secret + got, sizeof(secret) - got, 0);
		if (n < 0 && errno != EINTR) {
			fprintf(stderr, "airlock: operator totp enroll: no random source: %s\n",
			        strerror(errno));
			return CLI_ERROR;
		}
		if (n > 0)
			got += (size_t)n;
	}
	s = cli_connect_write(db);
	if (s == NULL)
		goto out;
	if (login == NULL) {
		r = store_exec(s, "SELECT session_user", 0, NULL);
		if (r == NULL) {
			rc = cli_fail(s, "operator totp enroll");
			goto out;
		}
		who = xstrdup(store_get(r, 0, 0));
		store_clear(r);
		login = who;
	}
	hex[0] = '\\';
	hex[1] = 'x';
	for (size_t i = 0; i < sizeof(secret); i++)
		snprintf(hex + 2 + 2 * i, 3, "%02x", secret[i]);
	r = store_exec(s, "SELECT airlock.totp_enroll($1, $2::bytea)", 2,
	               (const char *const[]){login, hex});
	if (r == NULL) {
		rc = cli_fail(s, "operator totp enroll");
		goto out;
	}
	b32 = totp_base32(secret, sizeof(secret));
	printf("enrolled: %s\nsecret (base32, shown once): %s\nuri: otpauth://totp/airlock:", login,
	       b32);
	uri_part(stdout, login);
	printf("?secret=%s&issuer=airlock&algorithm=SHA1&digits=%d&period=%d\n", b32, TOTP_DIGITS,
	       TOTP_STEP_S);
	printf("Add it to an authenticator app; the console asks for its code from now on.\n");
	rc = CLI_OK;
out:
	explicit_bzero(secret, sizeof(secret));
	explicit_bzero(hex, sizeof(hex));
	if (b32)
		explicit_bzero(b32, strlen(b32));
	free(b32);
	free(who);
	store_clear(r);
	store_close(s);
	return rc;
}

int cli_operator(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"db", required_argument, NULL, 'd'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *db = NULL;
	int c;

	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		usage(stdout);
		return CLI_OK;
	}
	if (argc < 3 || strcmp(argv[1], "totp") != 0 || strcmp(argv[2], "enroll") != 0) {
		usage(stderr);
		return CLI_USAGE;
	}
	argc -= 2;
	argv += 2;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			db = optarg;
			break;
		case 'h':
			usage(stdout);
			return CLI_OK;
		default:
			usage(stderr);
			return CLI_USAGE;
		}
	}
	if (argc - optind > 1) {
		usage(stderr);
		return CLI_USAGE;
	}
	return enroll(optind < argc ? argv[optind] : NULL, db);
}
