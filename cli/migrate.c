/* migrate.c -- `airlock migrate`: bring the schema up to date. */
#include "cli/cli.h"

#include "lib/paths.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

static void print_line(const char *line, void *arg)
{
	(void)arg;
	printf("%s\n", line);
}

int cli_migrate(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"db", required_argument, NULL, 'd'},
	    {"dir", required_argument, NULL, 'D'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *db = NULL;
	const char *dir = getenv("AIRLOCK_MIGRATIONS");
	char *shipped = paths_share_sub("migrations");
	struct store *s;
	int c, applied = 0, rc = CLI_USAGE;

	if (dir == NULL || dir[0] == '\0')
		dir = shipped;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			db = optarg;
			break;
		case 'D':
			dir = optarg;
			break;
		case 'h':
			printf(
			    "usage: airlock migrate [--db CONNINFO] [--dir DIR]\n"
			    "Applies DIR/NNNN_name.sql not yet applied, in order, each in its own\n"
			    "transaction.  Running it again does nothing; a changed applied file\n"
			    "is refused.  DIR defaults to $AIRLOCK_MIGRATIONS, else the "
			    "migrations\n"
			    "this airlock ships: %s\n"
			    "(the share directory is $AIRLOCK_SHARE, else the source checkout for\n"
			    "a binary in build/bin/, else the one chosen at build time).\n",
			    shipped);
			rc = CLI_OK;
			goto out;
		default:
			goto out;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "airlock migrate: unexpected argument '%s'\n", argv[optind]);
		goto out;
	}
	rc = CLI_ERROR;
	s = cli_connect_write(db);
	if (s == NULL)
		goto out;
	if (store_migrate(s, dir, &applied, print_line, NULL) < 0) {
		rc = cli_fail(s, "migrate");
		store_close(s);
		goto out;
	}
	printf(applied ? "migrate: %d applied\n" : "migrate: up to date (%d applied)\n", applied);
	store_close(s);
	rc = CLI_OK;
out:
	free(shipped);
	return rc;
}
