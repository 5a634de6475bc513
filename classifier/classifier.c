/* classifier.c -- the library's entry points: a classifier over a policy, and
 * one classification into a caller's verdict (walk.c does the reading). */
#include "classifier/classifier.h"

#include "classifier/arena.h"
#include "classifier/judge.h"
#include "classifier/walk.h"
#include "lib/xalloc.h"

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
