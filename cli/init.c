/* init.c -- `airlock init`: a fresh database made ready for airlockd.
 *
 * What a new operator runs once, as the database administrator, in order:
 * the migrations, the seeds, and the two logins airlockd itself uses (its
 * workers' and its scheduler's), each with a random SCRAM password that is
 * written only to a pgpass file for the daemon; then the next steps.
 * Logins for people and agents are `airlock user add`'s (a password typed
 * by the person, or a certificate), and init makes none of them.  Every
 * step may be run again: migrate and seed change only what changed, and
 * the logins get new passwords (the pgpass file follows). */
#include "cli/init.h"

#include "cli/cli.h"
#include "cli/user.h"
#include "lib/log.h"
#include "lib/paths.h"
#include "lib/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#define INIT_PASSWORD_BYTES 24 /* 48 hex digits: no character pgpass must escape */

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: airlock init --seeds DIR [--db CONNINFO] [--worker NAME]\n"
	        "                    [--scheduler NAME] [--pgpass FILE]\n"
	        "Makes a fresh database ready for airlockd, as the database administrator,\n"
	        "in order: applies the migrations (airlock migrate), ingests DIR (airlock\n"
	        "seed DIR: your policy, tools, inventory and gate), creates airlockd's two\n"
	        "logins with random SCRAM-SHA-256 passwords -- NAME in airlock_worker\n"
	        "(default airlockd) and NAME in airlock_scheduler (default airlock_probe)\n"
	        "-- writes their passwords to FILE (default %s/pgpass, mode 0600; other\n"
	        "lines are kept), and prints the next steps.  Running it again changes\n"
	        "only what changed and gives both logins new passwords.\n"
	        "One login, one airlock role: a name that is already an agent, an\n"
	        "operator or another airlock login, a superuser, or the same name for\n"
	        "both is refused (exit 3) and no login is created or changed.  People\n"
	        "and agents get their logins from `airlock user add`.\n"
	        "Exit: 0 done, 1 error, 2 usage, 3 refused.\n",
	        paths_confdir());
}

static char *random_password(void)
{
	unsigned char raw[INIT_PASSWORD_BYTES];
	char *out = xmalloc(2 * sizeof(raw) + 1);
	size_t got = 0;

	while (got < sizeof(raw)) {
		ssize_t n = getrandom(raw + got, sizeof(raw) - got, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			fatal("airlock init: getrandom: %s", strerror(errno));
		got += (size_t)n;
	}
	for (size_t i = 0; i < sizeof(raw); i++)
		snprintf(out + 2 * i, 3, "%02x", raw[i]);
	return out;
}

/* Does this pgpass line name one of the logins (its fourth field)? */
static bool line_for(const char *line, const struct user_login *l, size_t n)
{
	const char *p = line;

	for (int field = 0; field < 3; field++) {
		while (*p && *p != ':') {
			if (*p == '\\' && p[1])
				p++;
			p++;
		}
		if (*p != ':')
			return false;
		p++;
	}
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(l[i].name);
		if (strncmp(p, l[i].name, len) == 0 && p[len] == ':')
			return true;
	}
	return false;
}

/* Rewrites path (mode 0600) with the logins' lines, keeping every other
 * line; the new file replaces the old one at once (rename). */
static int write_pgpass(const char *path, const char *dbname, const struct user_login *l, size_t n)
{
	char *tmp = xasprintf("%s.new.%d", path, (int)getpid());
	FILE *in = fopen(path, "r"), *out = NULL;
	char line[4096];
	int fd, rc = -1;

	if (in == NULL && errno != ENOENT) {
		fprintf(stderr, "airlock init: cannot read %s: %s\n", path, strerror(errno));
		goto out;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (fd < 0 || (out = fdopen(fd, "w")) == NULL) {
		fprintf(stderr, "airlock init: cannot write %s: %s\n", tmp, strerror(errno));
		if (fd >= 0)
			close(fd);
		goto out;
	}
	while (in && fgets(line, sizeof(line), in))
		if (!line_for(line, l, n))
			fputs(line, out);
	for (size_t i = 0; i < n; i++)
		fprintf(out, "*:*:%s:%s:%s\n", dbname, l[i].name, l[i].password);
	if (fflush(out) != 0 || fsync(fileno(out)) != 0 || fclose(out) != 0) {
		out = NULL;
		fprintf(stderr, "airlock init: cannot write %s: %s\n", tmp, strerror(errno));
		unlink(tmp);
		goto out;
	}
	out = NULL;
	if (rename(tmp, path) != 0) {
		fprintf(stderr, "airlock init: cannot replace %s: %s\n", path, strerror(errno));
		unlink(tmp);
		goto out;
	}
	rc = 0;
out:
	if (out)
		fclose(out);
	if (in)
		fclose(in);
	free(tmp);
	return rc;
}

static void next_steps(struct store *s, const struct user_login *l, const char *pgpass)
{
	const char *host = store_host(s), *port = store_port(s), *db = store_dbname(s);
	bool socket = host[0] == '\0' || host[0] == '/';

	printf("\nnext steps:\n"
	       "1. pg_hba.conf (above any broader line for this database), then reload\n"
	       "   PostgreSQL:\n");
	for (int i = 0; i < 2; i++)
		printf("     local    %s  %s  scram-sha-256\n", db, l[i].name);
	printf("   (from another host: hostssl  %s  NAME  ADDRESS/32  scram-sha-256)\n", db);
	printf("2. airlockd's configuration (%s), without passwords:\n", paths_daemon_config());
	printf("     database: \"%s%s%sport=%s dbname=%s user=%s\"\n",
	       socket ? "" : "host=", socket ? "" : host, socket ? "" : " ", port, db, l[0].name);
	printf("     scheduler_database: \"%s%s%sport=%s dbname=%s user=%s\"\n",
	       socket ? "" : "host=", socket ? "" : host, socket ? "" : " ", port, db, l[1].name);
	printf("   and give it the passwords: PGPASSFILE=%s (under systemd:\n"
	       "   LoadCredential=pgpass:%s and Environment=PGPASSFILE=%%d/pgpass)\n",
	       pgpass, pgpass);
	printf("3. operators and agents, one login each (never both):\n"
	       "     airlock user add alice --operator\n"
	       "     airlock user add bob --operator      (destructive changes need two)\n"
	       "     airlock user add hermes --agent --cert\n"
	       "4. airlock doctor, then: systemctl enable --now airlockd\n");
}

int cli_init(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"seeds", required_argument, NULL, 'S'},
	    {"db", required_argument, NULL, 'd'},
	    {"worker", required_argument, NULL, 'w'},
	    {"scheduler", required_argument, NULL, 's'},
	    {"pgpass", required_argument, NULL, 'p'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *seeds = NULL, *db = NULL, *worker = "airlockd", *scheduler = "airlock_probe";
	char *pgpass = xasprintf("%s/pgpass", paths_confdir());
	struct user_login logins[2];
	char *pw[2] = {NULL, NULL};
	struct store *s = NULL;
	int c, rc = CLI_USAGE;

	memset(logins, 0, sizeof(logins));
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'S':
			seeds = optarg;
			break;
		case 'd':
			db = optarg;
			break;
		case 'w':
			worker = optarg;
			break;
		case 's':
			scheduler = optarg;
			break;
		case 'p':
			free(pgpass);
			pgpass = xstrdup(optarg);
			break;
		case 'h':
			usage(stdout);
			rc = CLI_OK;
			goto out;
		default:
			usage(stderr);
			goto out;
		}
	}
	if (optind != argc || seeds == NULL) {
		fprintf(stderr, "airlock init: %s\n",
		        optind != argc ? "unexpected argument"
		                       : "--seeds DIR is required: your policy, tools, inventory "
		                         "and gate (the shipped inventory is only an example)");
		usage(stderr);
		goto out;
	}
	if (strcmp(worker, scheduler) == 0) {
		fprintf(
		    stderr,
		    "airlock init: the worker and the scheduler need two logins (one login, one "
		    "airlock role); %s was given for both\n",
		    worker);
		rc = CLI_REFUSED;
		goto out;
	}
	logins[0] = (struct user_login){.name = worker, .role = "airlock_worker"};
	logins[1] = (struct user_login){.name = scheduler, .role = "airlock_scheduler"};

	printf("== 1/4 migrate\n");
	fflush(stdout);
	char *margv[] = {"migrate", "--db", (char *)db, NULL};
	rc = cli_migrate(db ? 3 : 1, margv);
	if (rc != CLI_OK)
		goto out;
	printf("== 2/4 seed %s\n", seeds);
	fflush(stdout);
	char *sargv[] = {"seed", "--db", (char *)db, (char *)seeds, NULL};
	char *sargv_nodb[] = {"seed", (char *)seeds, NULL};
	rc = db ? cli_seed(4, sargv) : cli_seed(2, sargv_nodb);
	if (rc != CLI_OK)
		goto out;
	printf("== 3/4 airlockd's logins\n");
	fflush(stdout);
	rc = CLI_ERROR;
	s = cli_connect_write(db);
	if (s == NULL)
		goto out;
	for (int i = 0; i < 2; i++)
		logins[i].password = pw[i] = random_password();
	rc = user_apply(s, logins, 2);
	if (rc != CLI_OK)
		goto out;
	for (int i = 0; i < 2; i++)
		printf("%s login %s in %s (SCRAM-SHA-256, random password)\n",
		       logins[i].existed ? "updated" : "created", logins[i].name, logins[i].role);
	printf("== 4/4 passwords to %s\n", pgpass);
	if (write_pgpass(pgpass, store_dbname(s), logins, 2) < 0) {
		fprintf(stderr,
		        "airlock init: the logins exist but their passwords could not be saved; "
		        "fix the path and run airlock init again (it sets new passwords)\n");
		rc = CLI_ERROR;
		goto out;
	}
	printf("wrote %s (mode 0600): the passwords of %s and %s\n", pgpass, worker, scheduler);
	next_steps(s, logins, pgpass);
	rc = CLI_OK;
out:
	for (int i = 0; i < 2; i++)
		if (pw[i]) {
			memset(pw[i], 0, strlen(pw[i]));
			free(pw[i]);
		}
	store_close(s);
	free(pgpass);
	return rc;
}
