/* classifier.c -- the library's entry points: a classifier over a policy, and
 * one classification into a caller's verdict (walk.c does the reading). */
#include "classifier/classifier.h"

#include "classifier/arena.h"
#include "classifier/judge.h"
#include "classifier/walk.h"
#include "lib/xalloc.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct classifier {
	const struct policy *p;
};

struct classifier *classifier_new(const struct policy *p, char *err, size_t errlen)
{
	struct classifier *c;

	if (p == NULL) {
		if (errlen > 0)
			strncpy(err, "no policy", errlen - 1), err[errlen - 1] = '\0';
		return NULL;
	}
	c = xcalloc(1, sizeof(*c));
	c->p = p;
	return c;
}

void classifier_free(struct classifier *c)
{
	free(c);
}

/* Control characters (other than tab and newline), bidi controls and other
 * invisible code points make what an approver reads differ from what runs.
 * Names up to four of them in out; returns how many were found. */
static size_t invisible_chars(const char *s, size_t len, char *out, size_t outlen)
{
	size_t found = 0, o = 0;

	out[0] = '\0';
	for (size_t i = 0; i < len;) {
		const unsigned char *u = (const unsigned char *)s + i;
		unsigned cp = 0;
		size_t step = 1;
		bool bad = false;

		if (u[0] < 0x20 && u[0] != '\t' && u[0] != '\n') {
			cp = u[0], bad = true;
		} else if (u[0] == 0x7f) {
			cp = u[0], bad = true;
		} else if (u[0] == 0xc2 && i + 1 < len && u[1] >= 0x80 && u[1] <= 0xa0) {
			cp = u[1], step = 2; /* C1 controls and U+00A0 */
			bad = cp != 0xa0;
		} else if (u[0] == 0xc2 && i + 1 < len && u[1] == 0xad) {
			cp = 0xad, step = 2, bad = true; /* soft hyphen */
		} else if (u[0] == 0xe2 && i + 2 < len && u[1] == 0x80) {
			cp = 0x2000 | ((unsigned)(u[2] & 0x3f)), step = 3;
			bad = (cp >= 0x200b && cp <= 0x200f) || (cp >= 0x2028 && cp <= 0x202e);
		} else if (u[0] == 0xe2 && i + 2 < len && u[1] == 0x81) {
			cp = 0x2040 | ((unsigned)(u[2] & 0x3f)), step = 3;
			bad = (cp >= 0x2060 && cp <= 0x2064) || (cp >= 0x2066 && cp <= 0x206f);
		} else if (u[0] == 0xef && i + 2 < len && u[1] == 0xbb && u[2] == 0xbf) {
			cp = 0xfeff, step = 3, bad = true;
		} else if (u[0] == 0xe1 && i + 2 < len && u[1] == 0xa0 && u[2] == 0x8e) {
			cp = 0x180e, step = 3, bad = true;
		}
		if (bad) {
			found++;
			if (found <= 4 && o + 12 < outlen)
				o += (size_t)snprintf(out + o, outlen - o, "%s%s%0*x",
				                      o ? ", " : "", cp < 0x80 ? "\\x" : "\\u",
				                      cp < 0x80 ? 2 : 4, cp);
		}
		i += step;
	}
	return found;
}

int classifier_classify(const struct classifier *c, enum target_type t, const char *command,
                        size_t len, enum risk_class declared, struct verdict *out)
{
	struct judge j;

	if (c == NULL || out == NULL || (command == NULL && len > 0) ||
	    (unsigned)t >= TARGET_TYPE_COUNT)
		return -1;
	memset(&j, 0, sizeof(j));
	j.p = c->p;
	j.v = out;
	j.a = verdict_begin(out);
	j.cwd[0] = c->p->home;
	j.budget = ((size_t)8 << 20) + 16 * len;
	j.ncwd = 1;
	out->classifier_version = CLASSIFIER_VERSION;
	walk_text(&j, NULL, command ? command : "", len, t,
	          &(struct judge_stdin){.kind = JUDGE_IN_NONE}, "the command");
	{
		char seen[80];

		if (command != NULL && invisible_chars(command, len, seen, sizeof(seen)) > 0)
			judge_reason(
			    &j, NULL, "invisible-characters",
			    judge_fmt(&j,
			              "command contains invisible or control characters "
			              "(%s): what an approver sees may differ from what runs",
			              seen),
			    RISK_READ_ONLY, t);
	}
	if (out->cls > RISK_READ_ONLY && out->cls < c->p->floor[t])
		judge_reason(&j, NULL, "target-floor",
		             judge_fmt(&j, "any change on a %s is at least %s", target_type_name(t),
		                       risk_class_name(c->p->floor[t])),
		             c->p->floor[t], t);
	if (declared > out->cls && (unsigned)declared < RISK_CLASS_COUNT)
		judge_reason(&j, NULL, "declared-risk", "the agent declared this risk", declared,
		             t);
	if (out->nreasons == 0)
		judge_reason(&j, NULL, "empty-command", "nothing to run", RISK_READ_ONLY, t);
	verdict_finish(out);
	return 0;
}
