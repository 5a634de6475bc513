/* schema.c -- the database's migrations against the binary's. */
#include "store/schema.h"

#include "build/gen/buildinfo.h"

#include <stdio.h>
#include <string.h>

static const char *const shipped[] = {AIRLOCK_MIGRATIONS_SHIPPED};
#define NSHIPPED (sizeof(shipped) / sizeof(shipped[0]))

const char *const *schema_shipped(size_t *count)
{
	*count = NSHIPPED;
	return shipped;
}

/* "0009_exactly_once.sql" -> "0009_exactly_once" into out. */
static void version_of(const char *file, char *out, size_t outlen)
{
	size_t n = strlen(file);

	if (n > 4 && strcmp(file + n - 4, ".sql") == 0)
		n -= 4;
	snprintf(out, outlen, "%.*s", (int)n, file);
}

const char *schema_binary_version(void)
{
	static char v[128];

	if (v[0] == '\0')
		version_of(shipped[NSHIPPED - 1], v, sizeof(v));
	return v;
}

static int is_shipped(const char *name)
{
	for (size_t i = 0; i < NSHIPPED; i++)
		if (strcmp(shipped[i], name) == 0)
			return 1;
	return 0;
}

static int is_applied(const struct store_res *applied, const char *name)
{
	for (int r = 0; r < store_nrows(applied); r++)
		if (strcmp(store_get(applied, r, 0), name) == 0)
			return 1;
	return 0;
}

/* The applied migrations, sorted by name: through airlock.schema_version()
 * when it exists, else straight from the table (an administrator can read
 * it).  NULL when neither works; *no_function tells which case it was. */
static struct store_res *read_applied(struct store *s, int *no_function)
{
	struct store_res *res;
	int has_fn;

	res = store_exec(s, "SELECT to_regprocedure('airlock.schema_version()') IS NOT NULL", 0,
	                 NULL);
	if (res == NULL)
		return NULL;
	has_fn = strcmp(store_get(res, 0, 0), "t") == 0;
	store_clear(res);
	*no_function = !has_fn;
	if (has_fn)
		return store_exec(s, "SELECT name FROM airlock.schema_version() ORDER BY name", 0,
		                  NULL);
	return store_exec(s, "SELECT name FROM airlock.schema_migrations ORDER BY name", 0, NULL);
}

static void compare(const struct store_res *applied, const char *who, struct schema_report *out)
{
	const char *extra = NULL, *missing = NULL;
	int n = store_nrows(applied);

	for (int r = 0; r < n && extra == NULL; r++)
		if (!is_shipped(store_get(applied, r, 0)))
			extra = store_get(applied, r, 0);
	for (size_t i = 0; i < NSHIPPED && missing == NULL; i++)
		if (!is_applied(applied, shipped[i]))
			missing = shipped[i];
	if (n > 0)
		version_of(store_get(applied, n - 1, 0), out->db_version, sizeof(out->db_version));
	else
		snprintf(out->db_version, sizeof(out->db_version), "no migration applied");
	if (extra) {
		out->state = SCHEMA_NEWER;
		snprintf(out->message, sizeof(out->message),
		         "the database schema (%s) is newer than this %s understands (%s): it has "
		         "migration %s, which this version does not ship; upgrade airlock to the "
		         "version that applied it",
		         out->db_version, who, out->bin_version, extra);
	} else if (missing) {
		out->state = SCHEMA_OLDER;
		snprintf(out->message, sizeof(out->message),
		         "the database schema (%s) is older than this %s needs (%s): migration %s "
		         "is not applied; run `airlock migrate` (as the database administrator) "
		         "with this version",
		         out->db_version, who, out->bin_version, missing);
	} else {
		out->state = SCHEMA_MATCH;
		snprintf(out->message, sizeof(out->message),
		         "the database schema (%s) is the one this %s understands", out->db_version,
		         who);
	}
}

int store_schema_check(struct store *s, const char *who, struct schema_report *out)
{
	struct store_res *res = NULL;
	int no_function = 0, rc = -1;

	memset(out, 0, sizeof(*out));
	snprintf(out->bin_version, sizeof(out->bin_version), "%s", schema_binary_version());
	res = store_exec(s, "SELECT to_regnamespace('airlock') IS NOT NULL", 0, NULL);
	if (res == NULL)
		goto out;
	if (strcmp(store_get(res, 0, 0), "t") != 0) {
		out->state = SCHEMA_MISSING;
		snprintf(out->db_version, sizeof(out->db_version), "none");
		snprintf(out->message, sizeof(out->message),
		         "the database has no airlock schema; this %s needs %s: run `airlock "
		         "migrate` (as the database administrator)",
		         who, out->bin_version);
		rc = 0;
		goto out;
	}
	store_clear(res);
	res = read_applied(s, &no_function);
	if (res == NULL && no_function) {
		/* Only the function added by 0010 lets every role read the list:
		 * a role that cannot read it looks at a schema from before it. */
		out->state = SCHEMA_OLDER;
		snprintf(out->db_version, sizeof(out->db_version),
		         "older than 0010_schema_version");
		snprintf(out->message, sizeof(out->message),
		         "the database schema (%s) is older than this %s needs (%s): "
		         "airlock.schema_version() does not exist; run `airlock migrate` (as the "
		         "database administrator) with this version",
		         out->db_version, who, out->bin_version);
		rc = 0;
		goto out;
	}
	if (res == NULL)
		goto out;
	compare(res, who, out);
	rc = 0;
out:
	store_clear(res);
	return rc;
}

int store_schema_require(struct store *s, const char *who, char *err, size_t errlen)
{
	struct schema_report rep;

	if (store_schema_check(s, who, &rep) < 0) {
		snprintf(err, errlen, "cannot read the database's schema version: %s",
		         store_errmsg(s));
		return -1;
	}
	if (rep.state != SCHEMA_MATCH) {
		snprintf(err, errlen, "%s", rep.message);
		return -1;
	}
	return 0;
}
