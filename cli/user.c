/* user.c -- `airlock user add NAME --operator|--agent|--worker|--scheduler`.
 *
 * One login, one airlock role: a login that already holds another airlock
 * role is refused (an agent that is also an operator could approve what it
 * asked for).  The password never crosses argv or the wire in clear: it is
 * read from a file or the terminal and turned into a SCRAM-SHA-256 verifier
 * by libpq on this side (store_scram_verifier).  CREATE ROLE takes no bind
 * parameters, so the name (checked against a strict pattern first) and the
 * verifier are quoted by the store (store_quote_ident/store_quote_literal). */
#include "cli/user.h"

#include "cli/cli.h"
#include "lib/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <regex.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#define PASSWORD_MIN 12
#define PASSWORD_MAX 1024

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: airlock user add NAME --operator|--agent|--worker|--scheduler\n"
	        "                        [--password-file FILE | --cert] [--from CIDR]\n"
	        "                        [--db CONNINFO]\n"
	        "Creates the database login NAME in one airlock role (as the database\n"
	        "administrator), then prints the pg_hba.conf line and the conninfo the\n"
	        "login's client uses.  One login, one role: a login that already holds\n"
	        "another airlock role is refused (exit 3); run again with the same role to\n"
	        "set a new password.\n"
	        "  --password-file FILE  the password, first line of FILE (at least %d\n"
	        "                        characters); without it and without --cert the\n"
	        "                        password is asked on the terminal, twice.  It is\n"
	        "                        stored as a SCRAM-SHA-256 verifier made here.\n"
	        "  --cert                no password: the client presents a certificate whose\n"
	        "                        CN is NAME (pg_hba method cert, over TLS)\n"
	        "  --from CIDR           the client's network for the pg_hba line\n"
	        "                        (default samenet)\n"
	        "NAME: lower-case letters, digits and _, starting with a letter; not pg_*,\n"
	        "and not a group role (airlock_agent, ...: refused, exit 3).\n"
	        "Exit: 0 created or updated, 1 error, 2 usage, 3 refused.\n",
	        PASSWORD_MIN);
}

static bool valid_name(const char *name)
{
	regex_t re;
	bool ok;

	if (regcomp(&re, "^[a-z][a-z0-9_]{0,62}$", REG_EXTENDED | REG_NOSUB) != 0)
		return false;
	ok = regexec(&re, name, 0, NULL, 0) == 0;
	regfree(&re);
	return ok && strncmp(name, "pg_", 3) != 0 && strcmp(name, "public") != 0 &&
	       strcmp(name, "postgres") != 0;
}

/* A CIDR or one of pg_hba's keywords; no spaces or quotes reach the line. */
static bool valid_from(const char *from)
{
	regex_t re;
	bool ok;

	if (strcmp(from, "samenet") == 0 || strcmp(from, "samehost") == 0 ||
	    strcmp(from, "all") == 0)
		return true;
	if (regcomp(&re, "^[0-9a-fA-F.:]+/[0-9]{1,3}$", REG_EXTENDED | REG_NOSUB) != 0)
		return false;
	ok = regexec(&re, from, 0, NULL, 0) == 0;
	regfree(&re);
	return ok;
}

/* Strips one trailing newline (and a CR before it). */
static void chomp(char *s)
{
	size_t n = strlen(s);

	if (n && s[n - 1] == '\n')
		s[--n] = '\0';
	if (n && s[n - 1] == '\r')
		s[--n] = '\0';
}

static char *password_from_file(const char *path)
{
	char buf[PASSWORD_MAX + 2];
	struct stat st;
	FILE *f = fopen(path, "r");

	if (f == NULL) {
		fprintf(stderr, "airlock user: cannot read --password-file %s: %s\n", path,
		        strerror(errno));
		return NULL;
	}
	if (fstat(fileno(f), &st) == 0 && (st.st_mode & 0044))
		fprintf(stderr,
		        "airlock user: warning: %s is readable by others (chmod 600 it, or "
		        "remove it once the login exists)\n",
		        path);
	if (fgets(buf, sizeof(buf), f) == NULL) {
		fprintf(stderr, "airlock user: %s is empty\n", path);
		fclose(f);
		return NULL;
	}
	fclose(f);
	if (strlen(buf) > PASSWORD_MAX) {
		fprintf(stderr, "airlock user: the password in %s is longer than %d characters\n",
		        path, PASSWORD_MAX);
		return NULL;
	}
	chomp(buf);
	return xstrdup(buf);
}

/* Reads one line from the terminal with echo off: echo goes off before the
 * prompt is shown, so nothing typed after the prompt is echoed or flushed. */
static char *ask(FILE *tty, const char *prompt)
{
	struct termios old, quiet;
	char buf[PASSWORD_MAX + 2];
	bool restore = false;
	char *got;

	if (tcgetattr(fileno(tty), &old) == 0) {
		quiet = old;
		quiet.c_lflag &= ~(tcflag_t)ECHO;
		restore = tcsetattr(fileno(tty), TCSAFLUSH, &quiet) == 0;
	}
	fputs(prompt, tty);
	fflush(tty);
	got = fgets(buf, sizeof(buf), tty);
	if (restore)
		tcsetattr(fileno(tty), TCSANOW, &old);
	fputc('\n', tty);
	fflush(tty);
	if (got == NULL)
		return NULL;
	chomp(buf);
	return xstrdup(buf);
}

static char *password_from_terminal(const char *name)
{
	FILE *tty = fopen("/dev/tty", "r+");
	char prompt[160], *a = NULL, *b = NULL;

	if (tty == NULL) {
		fprintf(stderr, "airlock user: no terminal to ask the password on: give "
		                "--password-file FILE, or --cert\n");
		return NULL;
	}
	snprintf(prompt, sizeof(prompt), "password for %s: ", name);
	a = ask(tty, prompt);
	if (a)
		b = ask(tty, "again: ");
	fclose(tty);
	if (a == NULL || b == NULL || strcmp(a, b) != 0) {
		fprintf(stderr, "airlock user: the passwords differ (or none was given)\n");
		free(a);
		a = NULL;
	}
	free(b);
	return a;
}

/* Refuses when NAME exists and is a superuser, not a login, or holds another
 * airlock role.  *exists tells whether it exists.  CLI_OK to go on. */
static int check_existing(struct store *s, const char *name, const char *role, bool *exists)
{
	const char *p[1] = {name};
	struct store_res *res =
	    store_exec(s,
	               "SELECT r.rolsuper, r.rolcanlogin, coalesce((SELECT"
	               "  string_agg(g.rolname, ', ' ORDER BY g.rolname)"
	               "  FROM pg_auth_members m JOIN pg_roles g ON g.oid = m.roleid"
	               "  WHERE m.member = r.oid AND g.rolname LIKE 'airlock\\_%'), '')"
	               " FROM pg_roles r WHERE r.rolname = $1",
	               1, p);
	int rc = CLI_OK;

	if (res == NULL)
		return cli_fail(s, "user add");
	*exists = store_nrows(res) == 1;
	if (!*exists)
		goto out;
	const char *held = store_get(res, 0, 2);
	if (strcmp(store_get(res, 0, 0), "t") == 0) {
		fprintf(stderr,
		        "airlock user: %s is a superuser: airlock refuses its decisions; give "
		        "the person a login of their own\n",
		        name);
		rc = CLI_REFUSED;
	} else if (strcmp(store_get(res, 0, 1), "t") != 0) {
		fprintf(stderr,
		        "airlock user: %s exists and is not a login (a group role such as "
		        "airlock_agent is never a person's or program's login)\n",
		        name);
		rc = CLI_REFUSED;
	} else if (held[0] && strcmp(held, role) != 0) {
		fprintf(stderr,
		        "airlock user: %s already holds %s: one login, one airlock role (an "
		        "agent that is also an operator could approve its own requests); "
		        "choose another name\n",
		        name, held);
		rc = CLI_REFUSED;
	}
out:
	store_clear(res);
	return rc;
}

static int exec_ddl(struct store *s, const char *sql)
{
	struct store_res *res = store_exec(s, sql, 0, NULL);

	store_clear(res);
	return res ? 0 : -1;
}

/* Creates or updates one login inside the caller's transaction.  verifier
 * NULL: no password (certificate authentication). */
static int apply_one(struct store *s, const char *name, const char *role, const char *verifier,
                     bool *existed)
{
	char *ident = NULL, *lit = NULL, *sql = NULL;
	size_t len;
	int rc;

	rc = check_existing(s, name, role, existed);
	if (rc != CLI_OK)
		goto out;
	rc = CLI_ERROR;
	ident = store_quote_ident(s, name);
	lit = verifier ? store_quote_literal(s, verifier) : NULL;
	if (ident == NULL || (verifier && lit == NULL)) {
		fprintf(stderr, "airlock user: %s\n", store_errmsg(s));
		goto out;
	}
	len = strlen(ident) + (lit ? strlen(lit) : 0) + 128;
	sql = xmalloc(len);
	snprintf(sql, len, "%s ROLE %s LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE %s%s",
	         *existed ? "ALTER" : "CREATE", ident, lit ? "PASSWORD " : "PASSWORD NULL",
	         lit ? lit : "");
	if (exec_ddl(s, sql) < 0) {
		rc = cli_fail(s, "user add");
		goto out;
	}
	snprintf(sql, len, "GRANT %s TO %s", role, ident);
	if (exec_ddl(s, sql) < 0) {
		rc = cli_fail(s, "user add");
		goto out;
	}
	rc = CLI_OK;
out:
	free(ident);
	free(lit);
	free(sql);
	return rc;
}

int user_apply(struct store *s, struct user_login *logins, size_t n)
{
	int rc = CLI_OK;

	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < i; j++)
			if (strcmp(logins[i].name, logins[j].name) == 0 &&
			    strcmp(logins[i].role, logins[j].role) != 0) {
				fprintf(stderr,
				        "airlock user: %s cannot be both %s and %s: one login, one "
				        "airlock role; choose another name\n",
				        logins[i].name, logins[j].role, logins[i].role);
				return CLI_REFUSED;
			}
	if (exec_ddl(s, "BEGIN") < 0)
		return cli_fail(s, "user add");
	for (size_t i = 0; i < n && rc == CLI_OK; i++) {
		char *verifier = NULL;
		if (!valid_name(logins[i].name)) {
			fprintf(stderr, "airlock user: '%s' is not a login name airlock creates\n",
			        logins[i].name);
			rc = CLI_USAGE;
			break;
		}
		if (logins[i].password) {
			verifier = store_scram_verifier(s, logins[i].name, logins[i].password);
			if (verifier == NULL) {
				fprintf(stderr,
				        "airlock user: cannot make the SCRAM verifier: %s\n",
				        store_errmsg(s));
				rc = CLI_ERROR;
				break;
			}
		}
		rc = apply_one(s, logins[i].name, logins[i].role, verifier, &logins[i].existed);
		free(verifier);
	}
	if (rc == CLI_OK && exec_ddl(s, "COMMIT") < 0)
		rc = cli_fail(s, "user add");
	if (rc != CLI_OK)
		store_exec_quiet(s, "ROLLBACK");
	return rc;
}

static void print_client(struct store *s, const char *name, const char *role, bool cert,
                         const char *from)
{
	const char *host = store_host(s), *port = store_port(s), *db = store_dbname(s);
	bool socket = host[0] == '\0' || host[0] == '/';
	const char *shown = socket ? "DB_HOST" : host;

	printf("pg_hba.conf (above any broader line for this database; then reload PostgreSQL):\n");
	if (cert)
		printf("  hostssl  %s  %s  %s  cert\n", db, name, from);
	else
		printf("  hostssl  %s  %s  %s  scram-sha-256\n", db, name, from);
	if (strcmp(role, "airlock_worker") == 0 || strcmp(role, "airlock_scheduler") == 0)
		printf("  (airlockd on the database host may use the socket instead:\n"
		       "   local  %s  %s  scram-sha-256)\n",
		       db, name);
	printf("conninfo for %s:\n", name);
	if (cert)
		printf("  host=%s port=%s dbname=%s user=%s sslmode=verify-full "
		       "sslrootcert=ROOT_CA.pem sslcert=%s.crt sslkey=%s.key\n"
		       "  (the client certificate's CN must be %s, signed by the CA in the\n"
		       "   server's ssl_ca_file)\n",
		       shown, port, db, name, name, name, name);
	else
		printf("  host=%s port=%s dbname=%s user=%s sslmode=verify-full "
		       "sslrootcert=ROOT_CA.pem\n"
		       "  password: in the client's ~/.pgpass (mode 0600) as\n"
		       "  %s:%s:%s:%s:PASSWORD, never on a command line\n",
		       shown, port, db, name, shown, port, db, name);
	if (socket)
		printf("  (DB_HOST: the name clients use for this database server)\n");
}

static int user_add(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"operator", no_argument, NULL, 'o'},
	    {"agent", no_argument, NULL, 'a'},
	    {"worker", no_argument, NULL, 'w'},
	    {"scheduler", no_argument, NULL, 's'},
	    {"password-file", required_argument, NULL, 'p'},
	    {"cert", no_argument, NULL, 'C'},
	    {"from", required_argument, NULL, 'f'},
	    {"db", required_argument, NULL, 'd'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *role = NULL, *pwfile = NULL, *from = "samenet", *db = NULL, *name;
	char *password = NULL;
	struct store *s = NULL;
	bool cert = false, existed = false;
	int c, nroles = 0, rc = CLI_USAGE;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			role = "airlock_operator";
			nroles++;
			break;
		case 'a':
			role = "airlock_agent";
			nroles++;
			break;
		case 'w':
			role = "airlock_worker";
			nroles++;
			break;
		case 's':
			role = "airlock_scheduler";
			nroles++;
			break;
		case 'p':
			pwfile = optarg;
			break;
		case 'C':
			cert = true;
			break;
		case 'f':
			from = optarg;
			break;
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
	if (optind != argc - 1) {
		usage(stderr);
		return CLI_USAGE;
	}
	name = argv[optind];
	if (nroles != 1) {
		fprintf(stderr, "airlock user: give exactly one of --operator, --agent, --worker, "
		                "--scheduler (one login, one role)\n");
		return CLI_USAGE;
	}
	if (!valid_name(name)) {
		fprintf(stderr,
		        "airlock user: '%s' is not a login name airlock creates: lower-case "
		        "letters, digits and _, starting with a letter, at most 63, not pg_*\n",
		        name);
		return CLI_USAGE;
	}
	if (!valid_from(from)) {
		fprintf(stderr, "airlock user: --from takes a CIDR (10.0.0.0/24) or samenet, "
		                "samehost, all\n");
		return CLI_USAGE;
	}
	if (cert && pwfile) {
		fprintf(stderr, "airlock user: --cert and --password-file exclude each other\n");
		return CLI_USAGE;
	}
	if (!cert) {
		password = pwfile ? password_from_file(pwfile) : password_from_terminal(name);
		if (password == NULL)
			goto out;
		if (strlen(password) < PASSWORD_MIN) {
			fprintf(stderr,
			        "airlock user: the password has %zu characters; at least %d\n",
			        strlen(password), PASSWORD_MIN);
			goto out;
		}
	}
	rc = CLI_ERROR;
	s = cli_connect(db);
	if (s == NULL)
		goto out;
	struct user_login login = {.name = name, .role = role, .password = password};
	rc = user_apply(s, &login, 1);
	if (rc != CLI_OK)
		goto out;
	existed = login.existed;
	printf("%s login %s in %s (%s)\n", existed ? "updated" : "created", name, role,
	       cert ? "certificate authentication, no password" : "SCRAM-SHA-256 password");
	print_client(s, name, role, cert, from);
out:
	if (password) {
		memset(password, 0, strlen(password));
		free(password);
	}
	store_close(s);
	return rc;
}

int cli_user(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "add") == 0)
		return user_add(argc - 1, argv + 1);
	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		usage(stdout);
		return CLI_OK;
	}
	usage(stderr);
	return CLI_USAGE;
}
