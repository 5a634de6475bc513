/* carrycheck.c -- the transport's own answer to "can this command be carried?"
 * for a list of commands, so a test can hold run()'s rule against it.
 *
 * stdin: one command per line, hex-encoded (any byte but NUL).
 * stdout: per line, "<host> <vm>" where each is ok or refused, from
 * transport_check_command() for a proxmox-host and for VM 101. */
#include "transport/transport.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

int main(void)
{
	char *line = NULL, *cmd = NULL;
	size_t cap = 0;
	ssize_t n;
	char err[256];

	while ((n = getline(&line, &cap, stdin)) > 0) {
		size_t len = (size_t)n, j = 0;
		if (line[len - 1] == '\n')
			len--;
		cmd = realloc(cmd, len / 2 + 1);
		if (cmd == NULL)
			return 2;
		for (size_t i = 0; i + 1 < len; i += 2) {
			int hi = hexval(line[i]), lo = hexval(line[i + 1]);
			if (hi < 0 || lo < 0) {
				fprintf(stderr, "carrycheck: bad hex\n");
				return 2;
			}
			cmd[j++] = (char)(hi << 4 | lo);
		}
		cmd[j] = '\0';
		printf("%s %s\n",
		       transport_check_command(TARGET_PROXMOX_HOST, 0, cmd, err, sizeof(err)) == 0
		           ? "ok"
		           : "refused",
		       transport_check_command(TARGET_VM, 101, cmd, err, sizeof(err)) == 0 ? "ok"
		                                                                             : "refused");
	}
	free(line);
	free(cmd);
	return 0;
}
