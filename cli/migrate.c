/* migrate.c -- `airlock migrate`: bring the schema up to date. */
#include "cli/cli.h"

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
	struct store *s;
	int c, applied = 0, rc;

	if (dir == NULL)
		dir = "migrations";
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
			    "Applies DIR/NNNN_name.sql (default ./migrations, or "
			    "$AIRLOCK_MIGRATIONS)\n"
			    "not yet applied, in order, each in its own transaction.  Running it\n"
			    "again does nothing; a changed applied file is refused.\n");
			return CLI_OK;
		default:
			return CLI_USAGE;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "airlock migrate: unexpected argument '%s'\n", argv[optind]);
		return CLI_USAGE;
	}
	s = cli_connect_write(db);
	if (s == NULL)
		return CLI_ERROR;
	if (store_migrate(s, dir, &applied, print_line, NULL) < 0) {
		rc = cli_fail(s, "migrate");
		store_close(s);
		return rc;
	}
	printf(applied ? "migrate: %d applied\n" : "migrate: up to date (%d applied)\n", applied);
	store_close(s);
	return CLI_OK;
}
