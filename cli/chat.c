/* chat.c -- `airlock chat`: which database login a chat user is.  A chat
 * button (Slack, Mattermost) reaches the console's confirmation page as the
 * login its user maps to; an administrator sets the mapping, and every
 * change is kept (airlock.chat_identity_log). */
#include "cli/cli.h"

#include "lib/visible.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: airlock chat map SERVICE CHAT_USER LOGIN [--db CONNINFO]\n"
    "       airlock chat unmap SERVICE CHAT_USER [--db CONNINFO]\n"
    "       airlock chat list [--json] [--db CONNINFO]\n"
    "SERVICE is slack or mattermost; CHAT_USER the chat's id of the person (Slack:\n"
    "U024BE7LH, Mattermost: the 26-character user id); LOGIN their own database\n"
    "login, an operator.  A button in a notification then answers that chat user\n"
    "with a link for LOGIN to the console's confirmation page, which still asks\n"
    "them to sign in as LOGIN before anything is decided.  Mapping and unmapping\n"
    "take an administrator (a superuser or a member of airlock_owner); list shows\n"
    "the mappings and every change to them.\n";

static int list(struct store *s, bool json)
{
	struct store_res *r = store_exec(
	    s,
	    json ? "SELECT coalesce(jsonb_agg(to_jsonb(c) ORDER BY service, chat_user), '[]')::text"
	           " FROM airlock.chat_identities c"
	         : "SELECT service, chat_user, login, mapped_by,"
	           " to_char(mapped_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI \"UTC\"')"
	           " FROM airlock.chat_identities ORDER BY service, chat_user",
	    0, NULL);

	if (r == NULL)
		return cli_fail(s, "chat list");
	if (json) {
		printf("%s\n", store_get(r, 0, 0));
		store_clear(r);
		return CLI_OK;
	}
	if (store_nrows(r) == 0)
		printf("no chat user is mapped to a login\n");
	else
		printf("%-11s %-28s %-16s %s\n", "SERVICE", "CHAT USER", "LOGIN", "MAPPED BY");
	for (int i = 0; i < store_nrows(r); i++) {
		char *u = visible_str(store_get(r, i, 1), 0),
		     *l = visible_str(store_get(r, i, 2), 0);
		printf("%-11s %-28s %-16s %s at %s\n", store_get(r, i, 0), u, l, store_get(r, i, 3),
		       store_get(r, i, 4));
		free(u);
		free(l);
	}
	store_clear(r);
	r = store_exec(
	    s,
	    "SELECT to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI \"UTC\"'), change,"
	    " service, chat_user, coalesce(login, '-'), by_login"
	    " FROM airlock.chat_identity_log ORDER BY id DESC LIMIT 20",
	    0, NULL);
	if (r == NULL)
		return cli_fail(s, "chat list");
	if (store_nrows(r) > 0)
		printf("\nchanges (newest first)\n");
	for (int i = 0; i < store_nrows(r); i++) {
		char *u = visible_str(store_get(r, i, 3), 0);
		printf("%s %-5s %s %s -> %s by %s\n", store_get(r, i, 0), store_get(r, i, 1),
		       store_get(r, i, 2), u, store_get(r, i, 4), store_get(r, i, 5));
		free(u);
	}
	store_clear(r);
	return CLI_OK;
}

int cli_chat(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"db", required_argument, NULL, 'd'},
	    {"json", no_argument, NULL, 'j'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *db = NULL;
	bool json = false;
	struct store *s;
	struct store_res *r;
	int c, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'd')
			db = optarg;
		else if (c == 'j')
			json = true;
		else if (c == 'h') {
			fputs(usage, stdout);
			return CLI_OK;
		} else
			return CLI_USAGE;
	}
	int n = argc - optind;
	const char *verb = n > 0 ? argv[optind] : "";
	if (!((strcmp(verb, "map") == 0 && n == 4) || (strcmp(verb, "unmap") == 0 && n == 3) ||
	      (strcmp(verb, "list") == 0 && n == 1))) {
		fputs(usage, stderr);
		return CLI_USAGE;
	}
	s = strcmp(verb, "list") == 0 ? cli_connect(db) : cli_connect_write(db);
	if (s == NULL)
		return CLI_ERROR;
	if (strcmp(verb, "list") == 0) {
		rc = list(s, json);
	} else if (strcmp(verb, "map") == 0) {
		r = store_exec(
		    s, "SELECT airlock.chat_map($1, $2, $3)", 3,
		    (const char *const[]){argv[optind + 1], argv[optind + 2], argv[optind + 3]});
		rc = r ? CLI_OK : cli_fail(s, "chat map");
		if (r)
			printf("%s user %s is %s now\n", argv[optind + 1], argv[optind + 2],
			       argv[optind + 3]);
		store_clear(r);
	} else {
		r = store_exec(s, "SELECT airlock.chat_unmap($1, $2)", 2,
		               (const char *const[]){argv[optind + 1], argv[optind + 2]});
		rc = r ? CLI_OK : cli_fail(s, "chat unmap");
		if (r && store_get(r, 0, 0)[0] == 't') {
			printf("%s user %s is mapped to no login now\n", argv[optind + 1],
			       argv[optind + 2]);
		} else if (r) {
			fprintf(stderr, "airlock chat unmap: %s user %s was not mapped\n",
			        argv[optind + 1], argv[optind + 2]);
			rc = CLI_NOT_FOUND;
		}
		store_clear(r);
	}
	store_close(s);
	return rc;
}
