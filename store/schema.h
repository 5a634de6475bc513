/* schema.h -- does the database's schema match this binary?
 *
 * A binary understands exactly the migrations it was built with (the
 * migrations/ directory at build time).  The database's schema is the set of
 * migrations recorded in airlock.schema_migrations, read through
 * airlock.schema_version() so every airlock role may read it. */
#ifndef AIRLOCK_STORE_SCHEMA_H
#define AIRLOCK_STORE_SCHEMA_H

#include "store/store.h"

#include <stddef.h>

enum schema_state {
	SCHEMA_MATCH,   /* every shipped migration applied, nothing else */
	SCHEMA_OLDER,   /* a shipped migration is not applied: run airlock migrate */
	SCHEMA_NEWER,   /* the database has a migration this binary lacks: upgrade */
	SCHEMA_MISSING, /* no airlock schema at all: run airlock migrate */
};

struct schema_report {
	enum schema_state state;
	char db_version[128];  /* the highest applied migration, or a description */
	char bin_version[128]; /* the highest migration this binary ships */
	char message[1024];    /* one sentence naming both versions and what to run */
};

/* The migrations this binary ships, in order (file names).  Static. */
const char *const *schema_shipped(size_t *count);
/* The highest shipped migration's name without ".sql".  Static. */
const char *schema_binary_version(void);

/* Compares the database's applied migrations with the shipped ones; fills
 * *out (also on a mismatch, which is not a failure).  `who` names the binary
 * in the message ("airlockd").  -1 with the reason on s when the database
 * could not be read. */
int store_schema_check(struct store *s, const char *who, struct schema_report *out);

/* 0 when the schema matches; else -1 with the report's message (or why the
 * database could not be read) in err.  For a binary that must not start on
 * a schema it does not understand. */
int store_schema_require(struct store *s, const char *who, char *err, size_t errlen);

#endif
