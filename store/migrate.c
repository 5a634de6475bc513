/* migrate.c -- apply migrations/NNNN_name.sql in order, once each. */
#include "store/store.h"

#include "lib/readfile.h"
#include "lib/sha256.h"
#include "lib/xalloc.h"
#include "store/lockkeys.h"

#include <dirent.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIGRATION_MAX_BYTES (4u << 20)

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The migration file names in dir, sorted; NULL on error. */
static char **list_migrations(const char *dir, size_t *count, char *err, size_t errlen)
{
	regex_t re;
	DIR *d;
	struct dirent *de;
	char **names = NULL;
	size_t n = 0, cap = 0;

	d = opendir(dir);
	if (d == NULL) {
		snprintf(err, errlen, "cannot read migrations directory %s (use --dir)", dir);
		return NULL;
	}
	regcomp(&re, "^[0-9]{4}_[a-z0-9_]+\\.sql$", REG_EXTENDED | REG_NOSUB);
	while ((de = readdir(d)) != NULL) {
		if (regexec(&re, de->d_name, 0, NULL, 0) != 0)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			names = xrealloc(names, cap * sizeof(*names));
		}
		names[n++] = xstrdup(de->d_name);
	}
	regfree(&re);
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), name_cmp);
	*count = n;
	if (names == NULL)
		names = xcalloc(1, sizeof(*names));
	return names;
}

static void free_names(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

static int exec_simple(struct store *s, const char *sql)
{
	struct store_res *res = store_exec(s, sql, 0, NULL);

	store_clear(res);
	return res ? 0 : -1;
}

/* Applies one file in its own transaction. */
static int apply_one(struct store *s, const char *name, const char *sql, const char *digest)
{
	const char *params[2] = {name, digest};
	struct store_res *res;
	char why[1024];

	if (exec_simple(s, "BEGIN") < 0)
		return -1;
	/* A migration rewrites tables: the store's bound on one statement is
	 * for queries, not for this. */
	if (exec_simple(s, "SET LOCAL statement_timeout = 0") < 0)
		goto fail;
	if (store_exec_script(s, sql) < 0)
		goto fail;
	res = store_exec(s, "INSERT INTO airlock.schema_migrations (name, sha256) VALUES ($1, $2)",
	                 2, params);
	if (res == NULL)
		goto fail;
	store_clear(res);
	return exec_simple(s, "COMMIT");
fail:
	/* Keep the statement's error, not the rollback's. */
	snprintf(why, sizeof(why), "%s", store_errmsg(s));
	store_exec_quiet(s, "ROLLBACK");
	store_set_error(s, "migration %s failed and was rolled back: %s", name, why);
	return -1;
}

/* The checksum recorded for name in done, or NULL when not applied. */
static const char *recorded_sha(const struct store_res *done, const char *name)
{
	for (int r = 0; r < store_nrows(done); r++)
		if (strcmp(store_get(done, r, 0), name) == 0)
			return store_get(done, r, 1);
	return NULL;
}

static int has_name(char **names, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(names[i], name) == 0)
			return 1;
	return 0;
}

/* Applies names[] in order under the lock already held. */
static int apply_all(struct store *s, const char *dir, char **names, size_t n, int *applied,
                     void (*progress)(const char *line, void *arg), void *arg)
{
	struct store_res *done = NULL;
	char err[512];
	int rc = -1;

	if (exec_simple(s, "SET client_min_messages = warning") < 0 ||
	    exec_simple(s, "CREATE SCHEMA IF NOT EXISTS airlock") < 0 ||
	    exec_simple(s, "CREATE TABLE IF NOT EXISTS airlock.schema_migrations ("
	                   " name text PRIMARY KEY, sha256 text NOT NULL,"
	                   " applied_at timestamptz NOT NULL DEFAULT now(),"
	                   " applied_by text NOT NULL DEFAULT session_user)") < 0)
		return -1;
	done = store_exec(s, "SELECT name, sha256 FROM airlock.schema_migrations ORDER BY name", 0,
	                  NULL);
	if (done == NULL)
		return -1;
	for (int r = 0; r < store_nrows(done); r++)
		if (!has_name(names, n, store_get(done, r, 0))) {
			store_set_error(s,
			                "the database has migration %s, which %s does not contain: "
			                "this airlock is older than the schema; upgrade it",
			                store_get(done, r, 0), dir);
			goto out;
		}
	for (size_t i = 0; i < n; i++) {
		char path[4096], digest[SHA256_HEX_LEN + 1];
		size_t len;
		const char *recorded = recorded_sha(done, names[i]);

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		char *sql = readfile(path, MIGRATION_MAX_BYTES, &len, err, sizeof(err));
		if (sql == NULL) {
			store_set_error(s, "%s", err);
			goto out;
		}
		sha256_hex(sql, len, digest);
		if (recorded && strcmp(recorded, digest) != 0) {
			store_set_error(
			    s,
			    "migration %s was changed after it was applied (applied sha256 "
			    "%.12s, file now %.12s): applied migrations are never edited; "
			    "restore the file and put the change in a new migration",
			    names[i], recorded, digest);
			free(sql);
			goto out;
		}
		int failed = !recorded && apply_one(s, names[i], sql, digest) < 0;
		free(sql);
		if (failed)
			goto out;
		if (!recorded) {
			(*applied)++;
			if (progress) {
				char line[512];
				snprintf(line, sizeof(line), "applied %s", names[i]);
				progress(line, arg);
			}
		}
	}
	rc = 0;
out:
	store_clear(done);
	return rc;
}

int store_migrate(struct store *s, const char *dir, int *applied,
                  void (*progress)(const char *line, void *arg), void *arg)
{
	char err[512];
	char **names;
	size_t n = 0;
	int rc;

	*applied = 0;
	names = list_migrations(dir, &n, err, sizeof(err));
	if (names == NULL) {
		store_set_error(s, "%s", err);
		return -1;
	}
	if (n == 0) {
		store_set_error(s, "no NNNN_name.sql files in %s", dir);
		free_names(names, n);
		return -1;
	}
	if (exec_simple(s, "SELECT pg_advisory_lock(" LOCK_KIND_MIGRATE ", 0)") < 0) {
		free_names(names, n);
		return -1;
	}
	rc = apply_all(s, dir, names, n, applied, progress, arg);
	/* Unlock without losing apply_all's error. */
	store_exec_quiet(s, "SELECT pg_advisory_unlock(" LOCK_KIND_MIGRATE ", 0)");
	free_names(names, n);
	return rc;
}
