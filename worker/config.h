/* config.h -- airlockd's one configuration file, validated whole.
 *
 * YAML (see docs/airlockd.example.yaml).  Secrets never come from the file's
 * values or argv: a password comes from a file named here or from the
 * environment (PGPASSWORD / PGPASSFILE, as libpq reads them). */
#ifndef AIRLOCK_WORKER_CONFIG_H
#define AIRLOCK_WORKER_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#define CONFIG_MAX_WEBHOOKS    16
#define CONFIG_MAX_NODE_KEYS   64
#define CONFIG_MAX_TEST_WRITES 32

/* ssh.node_keys: a node that has a key of its own. */
struct config_node_key {
	char *node;        /* the node entity's name (proxmox-host:NAME) */
	char *private_key; /* readable at load */
};

/* How a webhook's receiver wants its messages (docs/operators.md). */
enum webhook_format {
	WEBHOOK_JSON,       /* airlock's own JSON object */
	WEBHOOK_NTFY,       /* ntfy's JSON publishing: topic, title, message, click */
	WEBHOOK_SLACK,      /* Slack incoming webhook: text with <url|label> links */
	WEBHOOK_MATTERMOST, /* Mattermost incoming webhook: Markdown text */
	WEBHOOK_DISCORD,    /* Discord webhook: content and an embed, no mentions */
	WEBHOOK_MATRIX,     /* Matrix client-server API: PUT m.room.message */
};

#define CONFIG_MAX_EVENTS 16

struct config_webhook {
	char *name; /* its name in the delivery records; default "webhook-N" */
	char *url;
	char *operator_name; /* NULL: a shared channel; else skipped for this requester */
	int timeout_ms;
	enum webhook_format format;
	char *secret;                    /* HMAC-SHA256 key read from secret_file; NULL: unsigned */
	size_t secret_len;               /* bytes of secret */
	char *token;                     /* matrix: the access token read from token_file */
	bool escalation;                 /* receives only escalations */
	bool chat_callback;              /* slack, mattermost: buttons call airlock-web back */
	char *events[CONFIG_MAX_EVENTS]; /* NULL-terminated; none: every event */
	int nevents;
};

/* Linux file-level restore of files over 1.5 GiB is not supported well. */
#define CONFIG_RECOVER_MAX_FILE_BYTES ((size_t)1536 << 20)

struct config {
	char *path;               /* where it was read from */
	char *worker_id;          /* claimed_by; default "<hostname>-<pid>" */
	char *database;           /* conninfo; NULL = AIRLOCK_DB / PG* */
	char *scheduler_database; /* conninfo for probes; NULL = probes off */
	int workers;              /* concurrent executions, 1..256 */
	int per_node;             /* concurrent executions per node, 1..workers */
	int poll_interval_ms;     /* backstop wake-up without NOTIFY */
	int reap_interval_ms;     /* settle rows of dead workers */
	int seal_interval_ms;     /* seal new audit events into the chain */
	int expire_interval_ms;   /* expire pending rows past their TTL */
	int log_level;            /* enum log_level */
	/* ssh transport */
	char *ssh_private_key;
	char *ssh_known_hosts;
	struct config_node_key ssh_node_keys[CONFIG_MAX_NODE_KEYS]; /* others use ssh_private_key */
	int nssh_node_keys;
	int ssh_connect_timeout_ms;
	int ssh_keepalive_s;
	/* execution */
	int command_timeout_s; /* airlock's own deadline for one command */
	int qm_timeout_s;      /* qm guest exec --timeout before polling exec-status */
	size_t output_cap;     /* bytes kept per stream */
	/* durability: what the database must promise before a mutation is sent */
	bool durability_allow_fsync_off; /* test clusters only; default false */
	bool durability_failover;        /* a standby may be promoted: require it synchronous */
	/* probes */
	int probe_interval_s;
	bool probe_discover; /* ask the nodes for the cluster's guests each round; default true */
	/* guard policy when a target has no rewind point */
	bool reversible_low_without_rewind; /* default true: run and record "no rewind point" */
	/* zerto: NULL url = no checkpoint provider configured */
	char *zerto_url;
	char *zerto_token_url;
	char *zerto_realm;
	bool zerto_password_grant; /* false: client credentials */
	char *zerto_client_id;
	char *zerto_username;
	char *zerto_secret_file;
	char *zerto_secret_env;
	char *zerto_ca_file;
	bool zerto_verify_tls; /* default true; false is logged loudly */
	int zerto_connect_timeout_ms;
	int zerto_request_timeout_ms;
	double zerto_time_scale; /* tests only: the simulator's virtual clock speed */
	/* recover: file-level restore from a rewind point */
	size_t recover_max_file_bytes;  /* larger files are refused; default 1.5 GiB */
	int recover_flr_session_warn_s; /* an FLR session older than this is reported */
	/* audit anchors: NULL signing key = the daemon does not anchor */
	char *audit_signing_key;   /* Ed25519 private key (PEM, mode 0600) */
	char *audit_anchor_file;   /* signed anchors are appended here */
	int audit_every_events;    /* anchor after this many new events ... */
	int audit_every_seconds;   /* ... or this long after the last anchor */
	bool audit_syslog;         /* also send each anchor to syslog */
	bool audit_hold_mutations; /* hold mutations while an anchor cannot be written */
	struct config_webhook webhooks[CONFIG_MAX_WEBHOOKS];
	int nwebhooks;
	/* notifications: how webhooks are delivered */
	char *notify_base_url;       /* the console's address when none published its own */
	int notify_remind_after_s;   /* 0: no reminders */
	int notify_escalate_after_s; /* 0: no escalations */
	int notify_max_attempts;     /* per delivery */
	int notify_backoff_ms;       /* first retry delay; doubled each attempt */
	int notify_backoff_max_ms;   /* ceiling of the retry delay */
	int notify_poll_ms;          /* how often the outbox is read */
	/* one side_door notice per agent host per this long (sidedoornote.h) */
	int notify_side_door_interval_s;
	/* metrics: the Prometheus endpoint; port 0 = off */
	char *metrics_address;
	int metrics_port;
	/* TEST ONLY -- testing.classify_all_read_only: the classifier answers
	 * read_only for every command, so every command runs unreviewed in the
	 * read-only jail (how the tests prove the jail holds).  Off by default;
	 * config_load refuses it unless $AIRLOCK_RIG_ROOT names a directory
	 * holding the test rig's marker file (.airlock-rig, written by
	 * tests/rig/rigctl): a production host has no rig, so the switch cannot
	 * be turned on there by a stray line in a config. */
	bool test_classify_all_read_only;
	/* TEST ONLY -- testing.classify_all_reversible_low: {writes: [...]}:
	 * every command is reversible_low with exactly this write set, so it
	 * runs unreviewed in the jail's write tier.  Refused outside the rig
	 * like the switch above, and together with it. */
	bool test_classify_all_reversible_low;
	char *test_writes[CONFIG_MAX_TEST_WRITES];
	int ntest_writes;
	/* jail: what every request nobody approved is bounded by on its target */
	char *jail_helper;    /* the helper airlockd copies to targets; NULL: found
	                         beside the share directory (paths_share) */
	size_t jail_memory;   /* bytes; 512 MiB */
	int jail_tasks;       /* 256 */
	int jail_cpu_percent; /* 100: one core */
	size_t jail_scratch;  /* bytes per private tmpfs; 64 MiB */
};

/* "json", "ntfy", ... for a format, and back; -1 for an unknown name. */
const char *webhook_format_name(enum webhook_format f);
int webhook_format_parse(const char *s);

/* A deep copy of src into dst, and its release (secrets wiped). */
void config_webhook_copy(struct config_webhook *dst, const struct config_webhook *src);
void config_webhook_clear(struct config_webhook *h);

/* Reads and validates path; NULL with "path:line:col: reason" in err.
 * Free with config_free(). */
struct config *config_load(const char *path, char *err, size_t errlen);
void config_free(struct config *c); /* NULL is a no-op */

#endif
