/* hiddencheck.c -- the code points the console and the command line show
 * as escapes in a command (lib/visible.c), less newline and tab, one per
 * line, so a test can hold the database's count of hidden characters
 * (airlock._hidden_class()) against them. */
#include "lib/visible.h"

#include <stdio.h>

int main(void)
{
	for (unsigned long cp = 1; cp <= 0x10ffff; cp++) {
		if ((cp >= 0xd800 && cp <= 0xdfff) || cp == '\n' || cp == '\t')
			continue;
		if (visible_escapes(cp))
			printf("%lu\n", cp);
	}
	return 0;
}
