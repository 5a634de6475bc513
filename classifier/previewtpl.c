/* previewtpl.c -- a command's words carried into its rule's preview templates. */
#include "classifier/previewtpl.h"

#include "classifier/arena.h"
#include "classifier/policy_int.h"
#include "classifier/shparse.h"
#include "lib/buf.h"
#include "lib/shellquote.h"
#include "lib/xalloc.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_WORDS 256

/* The command's words, split the way the templates need them. */
struct parts {
	const char *program; /* basename of argv[0] */
	const struct sh_word *sub[8];
	size_t nsub;
	const struct sh_word *opers[MAX_WORDS];
	size_t nopers;
	const struct sh_word *opts[MAX_WORDS];
	size_t nopts;
};

static const unsigned unknown_flags = SHW_COMPUTED | SHW_SPLIT | SHW_GLOB | SHW_BRACE | SHW_TILDE;

/* The one simple command of literal words the text is, or NULL with why. */
static const struct sh_node *simple_command(struct arena *a, const char *cmd, size_t len, char *why,
                                            size_t whylen)
{
	struct sh_parse res;
	const struct sh_node *n;

	if (sh_parse(a, cmd, len, 8, &res) != 0 || res.root == NULL) {
		snprintf(why, whylen, "no preview: the command does not parse");
		return NULL;
	}
	n = res.root;
	while (n->kind == SH_LIST && n->nkids == 1)
		n = n->kids[0];
	if (n->kind != SH_SIMPLE || res.nsubs > 0 || n->nredirs > 0 || n->nwords == 0) {
		snprintf(why, whylen,
		         "no preview: only one simple command (no list, pipe, redirection or "
		         "substitution) is previewed");
		return NULL;
	}
	for (size_t i = 0; i < n->nwords; i++)
		if ((n->words[i].flags & (unknown_flags | SHW_ASSIGN)) ||
		    memchr(n->words[i].text, '\0', n->words[i].len)) {
			snprintf(
			    why, whylen,
			    "no preview: word %zu is known only at run time or sets a variable",
			    i + 1);
			return NULL;
		}
	if (n->nwords > MAX_WORDS) {
		snprintf(why, whylen, "no preview: more than %d words", MAX_WORDS);
		return NULL;
	}
	return n;
}

static bool has_program(const struct policy_rule *r, const char *prog)
{
	for (size_t i = 0; i < r->programs.n; i++)
		if (strcmp(r->programs.v[i], prog) == 0)
			return true;
	return false;
}

/* How many leading operands the subcommand entry e ("pool destroy", "*") matches; 0: none. */
static size_t sub_match(const char *e, const struct sh_word *const *opers, size_t n)
{
	size_t k = 0;

	while (*e) {
		size_t wl = strcspn(e, " ");
		if (k >= n)
			return 0;
		if (!(wl == 1 && e[0] == '*' && opers[k]->text[0] != '+') &&
		    !(opers[k]->len == wl && memcmp(opers[k]->text, e, wl) == 0))
			return 0;
		k++;
		e += wl;
		while (*e == ' ')
			e++;
	}
	return k;
}

/* Options and operands after argv[0] (a leading plain `sudo` is looked through). */
static int split(const struct policy *p, const struct policy_rule *r, const struct sh_node *n,
                 size_t first, struct parts *pt, char *why, size_t whylen)
{
	const struct policy_program *pp = policy_program_find(p, pt->program, strlen(pt->program));
	const struct sh_word *opers[MAX_WORDS];
	size_t nopers = 0, best = 0;
	bool dashdash = false;

	for (size_t i = first + 1; i < n->nwords; i++) {
		const struct sh_word *w = &n->words[i];
		if (!dashdash && w->len == 2 && strcmp(w->text, "--") == 0) {
			dashdash = true;
		} else if (!dashdash && w->len > 1 && w->text[0] == '-') {
			if (pp && policy_strlist_has(&pp->value_options, w->text, w->len))
				i++; /* the option and its value stay behind */
			else if (!strchr(w->text, '='))
				pt->opts[pt->nopts++] = w;
		} else {
			opers[nopers++] = w;
		}
	}
	for (size_t i = 0; i < r->subcommand.n; i++) {
		size_t k = sub_match(r->subcommand.v[i], opers, nopers);
		best = k > best ? k : best;
	}
	if (r->subcommand.n > 0 && best == 0) {
		snprintf(why, whylen, "no preview: the command's subcommand is not the rule's");
		return -1;
	}
	if (best > sizeof(pt->sub) / sizeof(pt->sub[0]))
		best = sizeof(pt->sub) / sizeof(pt->sub[0]);
	for (size_t i = 0; i < best; i++)
		pt->sub[pt->nsub++] = opers[i];
	for (size_t i = best; i < nopers; i++) {
		if (opers[i]->text[0] == '-') {
			snprintf(
			    why, whylen,
			    "no preview: operand %zu starts with '-' and would become an option",
			    i + 1 - best);
			return -1;
		}
		pt->opers[pt->nopers++] = opers[i];
	}
	return 0;
}

static void put_word(struct buf *b, const char *s, size_t n)
{
	if (b->len > 0)
		buf_putc(b, ' ');
	shellquote_append(b, s, n);
}

static void put_words(struct buf *b, const struct sh_word *const *w, size_t n)
{
	for (size_t i = 0; i < n; i++)
		put_word(b, w[i]->text, w[i]->len);
}

/* One template, with `one` the operand {operand} stands for (or NULL). */
static char *fill(const char *const *tpl, size_t nw, const struct parts *pt,
                  const struct sh_word *one)
{
	struct buf b = BUF_INIT;

	for (size_t i = 0; i < nw; i++) {
		if (strcmp(tpl[i], "{subcommand}") == 0)
			put_words(&b, pt->sub, pt->nsub);
		else if (strcmp(tpl[i], "{operands}") == 0)
			put_words(&b, pt->opers, pt->nopers);
		else if (strcmp(tpl[i], "{options}") == 0)
			put_words(&b, pt->opts, pt->nopts);
		else if (strcmp(tpl[i], "{operand}") == 0)
			put_word(&b, one->text, one->len);
		else if (strcmp(tpl[i], "{operand1}") == 0)
			put_word(&b, pt->opers[0]->text, pt->opers[0]->len);
		else if (strcmp(tpl[i], "{program}") == 0)
			put_word(&b, pt->program, strlen(pt->program));
		else
			put_word(&b, tpl[i], strlen(tpl[i]));
	}
	return buf_steal(&b);
}

/* Whether preview pv is for this program and subcommand. */
static bool applies(const struct policy_preview *pv, const struct parts *pt)
{
	char sub[256] = "";
	size_t at = 0;

	if (pv->programs.n > 0 &&
	    !policy_strlist_has(&pv->programs, pt->program, strlen(pt->program)))
		return false;
	if (pv->when.n == 0)
		return true;
	for (size_t i = 0; i < pt->nsub; i++) {
		int w =
		    snprintf(sub + at, sizeof(sub) - at, "%s%s", i ? " " : "", pt->sub[i]->text);
		if (w < 0 || (size_t)w >= sizeof(sub) - at)
			return false;
		at += (size_t)w;
	}
	return policy_strlist_has(&pv->when, sub, at);
}

static bool uses(const char *const *tpl, size_t nw, const char *placeholder)
{
	for (size_t i = 0; i < nw; i++)
		if (strcmp(tpl[i], placeholder) == 0)
			return true;
	return false;
}

/* The first rule the verdict names that has previews for this program. */
static long preview_rule(const struct policy *p, const struct verdict *v, const char *prog)
{
	for (size_t i = 0; i < v->nreasons; i++) {
		if (v->reasons[i].rule_id == NULL)
			continue;
		long r = policy_rule_find(p, v->reasons[i].rule_id);
		if (r >= 0 && p->rules[r].npreviews > 0 && has_program(&p->rules[r], prog))
			return r;
	}
	return -1;
}

int previewtpl_build(const struct policy *p, const struct verdict *v, const char *command,
                     size_t len, struct previewtpl *out, char *why, size_t whylen)
{
	struct arena *a = arena_new(1 << 20);
	struct parts *pt = xcalloc(1, sizeof(*pt));
	const struct sh_node *n;
	size_t first = 0;
	long ri;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	why[0] = '\0';
	n = simple_command(a, command, len, why, whylen);
	if (n == NULL) {
		/* Worth saying only when some rule of the verdict has previews. */
		for (size_t i = 0; i < v->nreasons && rc == 0; i++) {
			long r =
			    v->reasons[i].rule_id ? policy_rule_find(p, v->reasons[i].rule_id) : -1;
			if (r >= 0 && p->rules[r].npreviews > 0) {
				snprintf(out->rule, sizeof(out->rule), "%s", p->rules[r].id);
				rc = -1;
			}
		}
		goto out;
	}
	if (n->nwords > 1 && strcmp(n->words[0].text, "sudo") == 0 && n->words[1].text[0] != '-')
		first = 1;
	pt->program = strrchr(n->words[first].text, '/') ? strrchr(n->words[first].text, '/') + 1
	                                                 : n->words[first].text;
	ri = preview_rule(p, v, pt->program);
	if (ri < 0)
		goto out;
	snprintf(out->rule, sizeof(out->rule), "%s", p->rules[ri].id);
	if (split(p, &p->rules[ri], n, first, pt, why, whylen) < 0) {
		rc = -1;
		goto out;
	}
	size_t applicable = 0;
	for (size_t j = 0; j < p->rules[ri].npreviews && out->n < PREVIEWTPL_MAX; j++) {
		const struct policy_preview *pv = &p->rules[ri].previews[j];
		const char *const *tpl = pv->run.v;
		size_t nw = pv->run.n;
		if (!applies(pv, pt))
			continue;
		applicable++;
		if (uses(tpl, nw, "{operand1}") && pt->nopers == 0)
			continue;
		if (!uses(tpl, nw, "{operand}")) {
			out->commands[out->n++] = fill(tpl, nw, pt, NULL);
			continue;
		}
		for (size_t k = 0; k < pt->nopers && out->n < PREVIEWTPL_MAX; k++)
			out->commands[out->n++] = fill(tpl, nw, pt, pt->opers[k]);
	}
	rc = out->n > 0 ? 1 : applicable > 0 ? -1 : 0;
	if (rc < 0)
		snprintf(why, whylen, "no preview: the command names no operand to look at");
out:
	free(pt);
	arena_free(a);
	return rc;
}

void previewtpl_clear(struct previewtpl *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->commands[i]);
	memset(t, 0, sizeof(*t));
}
