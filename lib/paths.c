/* paths.c -- the share and configuration directories. */
#include "lib/paths.h"

#include "build/gen/buildinfo.h"
#include "lib/xalloc.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The checkout a binary in <checkout>/build/bin/ was built from, or NULL. */
static char *checkout_dir(void)
{
	char exe[PATH_MAX], probe[PATH_MAX + 64];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	struct stat st;
	char *slash;

	if (n <= 0)
		return NULL;
	exe[n] = '\0';
	slash = strrchr(exe, '/'); /* .../build/bin/airlock -> .../build/bin */
	if (slash == NULL)
		return NULL;
	*slash = '\0';
	n = (ssize_t)strlen(exe);
	if (n < 10 || strcmp(exe + n - 10, "/build/bin") != 0)
		return NULL;
	exe[n - 10] = '\0';
	snprintf(probe, sizeof(probe), "%s/migrations/0001_schema.sql", exe);
	if (stat(probe, &st) != 0 || !S_ISREG(st.st_mode))
		return NULL;
	return xstrdup(exe[0] ? exe : "/");
}

const char *paths_share_origin(void)
{
	const char *env = getenv("AIRLOCK_SHARE");
	char *c;
	int in_checkout;

	if (env && env[0])
		return "AIRLOCK_SHARE";
	c = checkout_dir();
	in_checkout = c != NULL;
	free(c);
	return in_checkout ? "checkout" : "built-in";
}

char *paths_share(void)
{
	const char *env = getenv("AIRLOCK_SHARE");
	char *c;

	if (env && env[0])
		return xstrdup(env);
	c = checkout_dir();
	return c ? c : xstrdup(AIRLOCK_SHAREDIR);
}

char *paths_share_sub(const char *sub)
{
	char *dir = paths_share();
	size_t len = strlen(dir) + strlen(sub) + 2;
	char *p = xmalloc(len);

	snprintf(p, len, "%s/%s", dir, sub);
	free(dir);
	return p;
}

const char *paths_confdir(void)
{
	return AIRLOCK_SYSCONFDIR "/airlock";
}

const char *paths_daemon_config(void)
{
	return AIRLOCK_SYSCONFDIR "/airlock/airlockd.yaml";
}
