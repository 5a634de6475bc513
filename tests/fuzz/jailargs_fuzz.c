/* jailargs_fuzz.c -- libFuzzer over the jail helper's argument parser
 * (jail/airlock-jail.c, jail_parse_args).
 *
 * The helper is the security boundary on every target and its arguments
 * arrive through a remote shell line: the parser must never crash or read
 * past an argument, and what it accepts must hold its own rules.  The input
 * is split at NUL bytes into argv[1..]. */
#define AIRLOCK_JAIL_NO_MAIN
#include "../../jail/airlock-jail.c"

#include <assert.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *copy = malloc(size + 1), *argv[512];
	int argc = 1;
	struct jopts o;
	char err[512];

	if (copy == NULL)
		return 0;
	memcpy(copy, data, size);
	copy[size] = '\0';
	argv[0] = "airlock-jail";
	for (size_t i = 0; i <= size && argc < 511;) {
		argv[argc++] = copy + i;
		i += strlen(copy + i) + 1;
	}
	argv[argc] = NULL;
	if (jail_parse_args(argc, argv, &o, err, sizeof(err)) == 0) {
		/* What was accepted keeps the parser's promises. */
		assert(o.command != NULL);
		assert(o.tier == TIER_WRITE || o.nwrites == 0);
		for (int w = 0; w < o.nwrites; w++) {
			assert(o.writes[w][0] == '/' && strstr(o.writes[w], "/../") == NULL);
			for (size_t k = 0; k < sizeof(no_write) / sizeof(no_write[0]); k++)
				assert(!path_within(o.writes[w], no_write[k]));
		}
		assert(o.mem >= 1 << 20 && o.tasks >= 1 && o.cpu_pct >= 1);
	} else {
		assert(err[0] != '\0');
	}
	free(copy);
	return 0;
}
