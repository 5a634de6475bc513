/* classifier.c -- the library's entry points: a classifier over a policy, and
 * one classification into a caller's verdict (walk.c does the reading). */
#include "classifier/classifier.h"

#include "lib/utf8.h"
#include "lib/visible.h"

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

const struct policy *classifier_policy(const struct classifier *c)
{
	return c->p;
}

void classifier_free(struct classifier *c)
{
	free(c);
}

/* Control characters (other than tab and newline), bidi controls, other
 * invisible code points and bytes that are not UTF-8 make what an approver
 * reads differ from what runs: the same characters every human view shows as
 * escapes (lib/visible.h).  Names up to four of them in out; returns how many
 * were found. */
static size_t invisible_chars(const char *s, size_t len, char *out, size_t outlen)
{
	size_t found = 0, o = 0;

	out[0] = '\0';
	for (size_t i = 0; i < len;) {
		unsigned long cp;
		size_t step = utf8_decode((const unsigned char *)s + i, len - i, &cp);
		bool bad;

		if (step == 0) { /* not UTF-8: shown as the byte */
			cp = (unsigned char)s[i];
			step = 1;
			bad = true;
		} else {
			bad = cp != '\t' && cp != '\n' && visible_escapes(cp);
		}
		if (bad) {
			found++;
			if (found <= 4 && o + 14 < outlen)
				o += (size_t)snprintf(out + o, outlen - o, "%s%s%0*lx",
				                      o ? ", " : "",
				                      cp < 0x80 || step == 1 ? "\\x" : "\\u",
				                      cp < 0x80 || step == 1 ? 2 : 4, cp);
		}
		i += step;
	}
	return found;
}

static int classify(const struct classifier *c, enum target_type t, const char *command, size_t len,
                    enum risk_class declared, struct verdict *out,
                    const struct classifier_observer *obs)
{
	struct judge j;

	if (c == NULL || out == NULL || (command == NULL && len > 0) ||
	    (unsigned)t >= TARGET_TYPE_COUNT)
		return -1;
	memset(&j, 0, sizeof(j));
	j.obs = obs;
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

int classifier_classify(const struct classifier *c, enum target_type t, const char *command,
                        size_t len, enum risk_class declared, struct verdict *out)
{
	return classify(c, t, command, len, declared, out, NULL);
}

int classifier_observe(const struct classifier *c, enum target_type t, const char *command,
                       size_t len, const struct classifier_observer *obs, struct verdict *scratch)
{
	if (obs == NULL)
		return -1;
	return classify(c, t, command, len, RISK_READ_ONLY, scratch, obs);
}
