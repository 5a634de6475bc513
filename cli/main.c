/* main.c -- `airlock`: the operator's and agent's command line. */
#include "cli/classify.h"
#include "cli/cli.h"
#include "cli/doctor.h"
#include "cli/init.h"
#include "cli/recover.h"
#include "cli/sidedoor.h"
#include "cli/totp.h"
#include "cli/user.h"

#include <stdio.h>
#include <string.h>

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
    {"init", cli_init, "init --seeds DIR: migrate, seed, airlockd's logins, next steps"},
    {"migrate", cli_migrate, "apply database migrations (migrations/NNNN_*.sql)"},
    {"seed", cli_seed, "ingest DIR/policy.yaml, tools.yaml, inventory.yaml, gate.yaml"},
    {"classify", cli_classify, "classify a shell command (or --batch from stdin)"},
    {"run", cli_run, "enqueue a command on a target (airlock.run)"},
    {"pending", cli_pending, "list requests waiting for approval (filters: --target, --agent...)"},
    {"show", cli_show, "show one execution"},
    {"previews", cli_previews, "the read-only previews of a held request"},
    {"output", cli_output,
     "output list | show | release | discard ID: output held for carrying secrets"},
    {"notifications", cli_notifications, "webhook deliveries and their state"},
    {"approve", cli_approve, "approve pending requests: approve ID..."},
    {"reject", cli_reject, "reject pending requests (--reason required): reject ID..."},
    {"cancel", cli_cancel, "cancel a request that has not started running"},
    {"history", cli_history, "every event of one execution"},
    {"audit", cli_audit, "audit verify: check the event hash chain"},
    {"policy", cli_policy, "policy show: the classifier and gate policies in force"},
    {"hook", cli_hook, "the agent host's PreToolUse gate (Claude Code); --install, --check"},
    {"side-door", cli_side_door, "what went, or tried to go, around airlock (operators)"},
    {"doctor", cli_doctor, "check the installation, database, nodes, guests, ZVM, webhooks"},
    {"recover", cli_recover, "ask to restore guest files from a rewind point (always approved)"},
    {"inspect", cli_inspect,
     "operators: a failover test or offsite clone of a VM from a rewind point"},
    {"flr", cli_flr, "flr list | flr end ID: the ZVM's file-level restore sessions"},
    {"user", cli_user, "user add NAME --operator|--agent: a login in one airlock role"},
    {"operator", cli_operator, "operator totp enroll [LOGIN]: a second factor for the console"},
    {"chat", cli_chat, "chat map | unmap | list: which login a chat user's buttons act as"},
};

static void usage(FILE *f)
{
	fprintf(f, "usage: airlock COMMAND [OPTIONS] [ARGS]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-13s %s\n", commands[i].name, commands[i].summary);
	fprintf(f,
	        "\n`airlock COMMAND --help` describes each command.\n"
	        "Database: --db CONNINFO, else $AIRLOCK_DB, else the PG* environment variables.\n"
	        "Add --json for machine-readable output where a command prints data.\n\n"
	        "exit codes: 0 success; 1 error; 2 usage or invalid argument;\n"
	        "            3 refused by airlock (pre-flight, permission denied, illegal state,\n"
	        "              self-approval, not an approver, flood limit, broken audit\n"
	        "              chain); 4 not found.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(argv[1], commands[i].name) == 0)
			return commands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "airlock: unknown command '%s'\n\n", argv[1]);
	usage(stderr);
	return 2;
}
