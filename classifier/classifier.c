/* classifier.c -- the library's entry points: a classifier over a policy, and
 * one classification into a caller's verdict (walk.c does the reading). */
#include "classifier/classifier.h"

#include "lib/utf8.h"
#include "lib/visible.h"

#include "classifier/arena.h"
#include "classifier/judge.h"
#include "classifier/netclient.h"
#include "classifier/walk.h"
#include "lib/xalloc.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct classifier {
	const struct policy *p;
	char **net_allow; /* lowercase host globs */
	size_t nnet_allow;
};

const char *classifier_network_glob_problem(const char *glob)
{
	return netclient_allow_glob_problem(glob);
}

struct classifier *classifier_new_opts(const struct policy *p, const struct classifier_options *o,
                                       char *err, size_t errlen)
{
	struct classifier *c;

	if (p == NULL) {
		if (errlen > 0)
			strncpy(err, "no policy", errlen - 1), err[errlen - 1] = '\0';
		return NULL;
	}
	for (size_t i = 0; o != NULL && i < o->nnetwork_allow; i++) {
		const char *why = netclient_allow_glob_problem(o->network_allow[i]);

		if (why != NULL) {
			snprintf(err, errlen, "network.allow: `%.100s`: %s", o->network_allow[i],
			         why);
			return NULL;
		}
	}
	c = xcalloc(1, sizeof(*c));
	c->p = p;
	if (o != NULL && o->nnetwork_allow > 0) {
		c->net_allow = xcalloc(o->nnetwork_allow, sizeof(char *));
		for (size_t i = 0; i < o->nnetwork_allow; i++) {
			char *g = xstrdup(o->network_allow[i]);

			for (char *q = g; *q; q++)
				if (*q >= 'A' && *q <= 'Z')
					*q = (char)(*q + 32);
			c->net_allow[c->nnet_allow++] = g;
		}
	}
	return c;
}

struct classifier *classifier_new(const struct policy *p, char *err, size_t errlen)
{
	return classifier_new_opts(p, NULL, err, errlen);
}

const struct policy *classifier_policy(const struct classifier *c)
{
	return c->p;
}

void classifier_free(struct classifier *c)
{
	if (c == NULL)
		return;
	for (size_t i = 0; i < c->nnet_allow; i++)
		free(c->net_allow[i]);
	free(c->net_allow);
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

/* May the jail give the command its root tier?  Only when it is one proven
 * invocation of a `tier: root` program, optionally piped into proven text
 * filters that read only the pipe: one pipeline of simple commands, no
 * substitution, no code in strings, no assignment, no redirection but
 * descriptor copies and /dev/null, each stage exactly one judged program
 * reached through plain wrappers only. */
static bool root_tier(const struct judge *j, const struct verdict *v)
{
	const struct sh_node *k, *const *stages;
	size_t n;

	if (v->cls >= RISK_CONFIG_MUTATION || j->odd || j->top == NULL || j->top_nsubs != 0 ||
	    j->top->kind != SH_LIST || j->top->nkids != 1)
		return false;
	k = j->top->kids[0];
	if (k->kind == SH_SIMPLE) {
		stages = (const struct sh_node *const *)&j->top->kids[0];
		n = 1;
	} else if (k->kind == SH_PIPELINE) {
		stages = (const struct sh_node *const *)k->kids;
		n = k->nkids;
	} else {
		return false;
	}
	if (n == 0 || j->nseg != (int)n || j->nrecs != n)
		return false;
	for (size_t i = 0; i < n; i++) {
		const struct sh_node *st = stages[i];
		const struct judge_rec *r = &j->recs[i];

		if (st->kind != SH_SIMPLE || r->seg != (int)i + 1 || r->wrapped || !r->proven ||
		    (i == 0 ? !r->tier_root : !r->filter))
			return false;
		for (size_t w = 0; w < st->nwords; w++)
			if (st->words[w].flags & SHW_ASSIGN)
				return false;
		for (size_t q = 0; q < st->nredirs; q++) {
			const struct sh_redir *rd = &st->redirs[q];
			bool fd = rd->op == SHR_DUP_OUT && judge_lit(&rd->word) && rd->word.len > 0;

			for (size_t c = 0; fd && c < rd->word.len; c++)
				fd = (rd->word.text[c] >= '0' && rd->word.text[c] <= '9') ||
				     (c + 1 == rd->word.len && rd->word.text[c] == '-');
			if (fd)
				continue;
			if ((rd->op == SHR_OUT || rd->op == SHR_APPEND || rd->op == SHR_ALL ||
			     rd->op == SHR_ALL_APPEND || rd->op == SHR_CLOBBER) &&
			    judge_weq(&rd->word, "/dev/null"))
				continue;
			return false;
		}
	}
	return true;
}

/* May the jail keep the target's network namespace?  Only when every
 * program is marked `net: view` where its words led, or is a proven
 * harmless read of allowed destinations, or a text filter; and one of them
 * needs the network. */
static bool net_view(const struct judge *j, const struct verdict *v)
{
	bool need = false;

	if (v->cls >= RISK_CONFIG_MUTATION || j->odd || j->nrecs == 0)
		return false;
	for (size_t i = 0; i < j->nrecs; i++) {
		const struct judge_rec *r = &j->recs[i];

		if (r->wrapped || !r->proven || !(r->net_view || r->net_read || r->filter))
			return false;
		need = need || r->net_view || r->net_read;
	}
	return need;
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
	j.net_allow = (const char *const *)c->net_allow;
	j.nnet_allow = c->nnet_allow;
	j.call_max = -1;
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
	out->writes = j.writes;
	out->nwrites = j.nwrites;
	out->writes_unknown = j.writes_unknown;
	out->action_rule = j.action_rule;
	out->needs_root = root_tier(&j, out);
	out->net_view = net_view(&j, out);
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
