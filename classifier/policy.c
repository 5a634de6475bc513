/* policy.c -- seeds/policy.yaml into struct policy, refusing anything unclear.
 *
 * Every key is checked: an unknown key, a wrong type, an unknown class or
 * target type, a duplicate id or a default that would call the unknown safe
 * is an error naming the line and column, so a typo cannot silently widen
 * what passes without approval. */
#include "classifier/policy.h"

#include "classifier/arena.h"
#include "classifier/grammar.h"
#include "classifier/policy_int.h"
#include "lib/xalloc.h"
#include "lib/yamltree.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define POLICY_ARENA_LIMIT ((size_t)64 << 20)

struct pctx {
	struct policy *p;
	const char *origin;
	char *err;
	size_t errlen;
	bool failed;
};

__attribute__((format(printf, 3, 4))) static void perr(struct pctx *c, const struct yt_node *at,
                                                       const char *fmt, ...)
{
	va_list ap;
	int n;

	if (c->failed)
		return;
	c->failed = true;
	if (c->errlen == 0)
		return;
	n = snprintf(c->err, c->errlen, "%s:%d:%d: ", c->origin, at ? at->line : 1,
	             at ? at->col : 1);
	if (n < 0 || (size_t)n >= c->errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(c->err + n, c->errlen - (size_t)n, fmt, ap);
	va_end(ap);
}

static void *palloc(struct pctx *c, size_t n)
{
	void *v = arena_alloc(c->p->a, n);

	if (v == NULL) {
		perr(c, NULL, "policy too large");
		return NULL;
	}
	memset(v, 0, n);
	return v;
}

static const char *pstr(struct pctx *c, const char *s)
{
	char *d = arena_strndup(c->p->a, s, strlen(s));

	if (d == NULL)
		perr(c, NULL, "policy too large");
	return d;
}

/* A scalar, or a list of non-empty scalars, into l. */
static void get_strlist(struct pctx *c, const struct yt_node *n, const char *key, struct strlist *l)
{
	if (n->kind == YT_SCALAR) {
		if (n->scalar[0] == '\0') {
			perr(c, n, "%s: empty value", key);
			return;
		}
		l->v = palloc(c, sizeof(char *));
		if (l->v == NULL)
			return;
		l->v[0] = pstr(c, n->scalar);
		l->n = 1;
		return;
	}
	if (n->kind != YT_SEQ) {
		perr(c, n, "%s: expected a list, got a %s", key, yt_kind_name(n->kind));
		return;
	}
	if (n->n == 0) {
		perr(c, n, "%s: empty list", key);
		return;
	}
	l->v = palloc(c, n->n * sizeof(char *));
	if (l->v == NULL)
		return;
	for (size_t i = 0; i < n->n && !c->failed; i++) {
		const struct yt_node *it = n->items[i];

		if (it->kind != YT_SCALAR || it->scalar[0] == '\0') {
			perr(c, it, "%s: items must be non-empty text", key);
			return;
		}
		l->v[i] = pstr(c, it->scalar);
	}
	l->n = n->n;
}

static void get_class(struct pctx *c, const struct yt_node *n, enum risk_class *out)
{
	if (n->kind != YT_SCALAR || risk_class_parse(n->scalar, out) != 0)
		perr(c, n,
		     "unknown class (expected read_only, reversible_low, config_mutation or "
		     "destructive)");
}

static void get_targets(struct pctx *c, const struct yt_node *n, unsigned *out)
{
	struct strlist l = {0};

	get_strlist(c, n, "targets", &l);
	*out = 0;
	for (size_t i = 0; i < l.n && !c->failed; i++) {
		enum target_type t;

		if (target_type_parse(l.v[i], &t) != 0) {
			perr(c, n, "unknown target type '%s' (expected proxmox-host, vm or lxc)",
			     l.v[i]);
			return;
		}
		*out |= 1u << t;
	}
}

static bool key_is(const struct yt_node *k, const char *s)
{
	return k->kind == YT_SCALAR && strcmp(k->scalar, s) == 0;
}

/* A preview template's word: a literal, or exactly one of the placeholders. */
static bool preview_placeholder(const char *w)
{
	return strcmp(w, "{subcommand}") == 0 || strcmp(w, "{operands}") == 0 ||
	       strcmp(w, "{operand}") == 0 || strcmp(w, "{options}") == 0 ||
	       strcmp(w, "{program}") == 0 || strcmp(w, "{operand1}") == 0;
}

/* One argv template: the program is a literal or {program}; a word holding a
 * brace is one of the placeholders, whole; {operand} and {operands} do not
 * mix. */
static void get_preview_run(struct pctx *c, const struct yt_node *t, struct strlist *l)
{
	bool one = false, all = false;

	if (t->kind != YT_SEQ || t->n == 0 || t->n > 32) {
		perr(c, t, "preview: each command is a list of 1..32 words, as argv");
		return;
	}
	get_strlist(c, t, "preview", l);
	for (size_t j = 0; j < l->n && !c->failed; j++) {
		const char *w = l->v[j];
		if (strpbrk(w, "{}") && !preview_placeholder(w))
			perr(c, t->items[j],
			     "preview: '%s' is not a placeholder ({program}, {subcommand}, "
			     "{options}, {operands}, {operand}, {operand1}) and a literal word "
			     "holds no brace",
			     w);
		else if (j == 0 && preview_placeholder(w) && strcmp(w, "{program}") != 0)
			perr(c, t->items[j],
			     "preview: the first word is the program: a literal or "
			     "{program}");
		else if (j > 0 && strcmp(w, "{program}") == 0)
			perr(c, t->items[j], "preview: {program} only as the first word");
		one = one || strcmp(w, "{operand}") == 0;
		all = all || strcmp(w, "{operands}") == 0;
	}
	if (!c->failed && one && all)
		perr(c, t,
		     "preview: use {operand} (one preview per operand) or {operands}, not "
		     "both");
}

/* preview: a list of commands, each an argv list, or a mapping
 * {run: argv, when: [subcommands], programs: [programs]}. */
static void get_previews(struct pctx *c, const struct yt_node *n, struct policy_rule *r)
{
	if (n->kind != YT_SEQ || n->n == 0 || n->n > POLICY_MAX_PREVIEWS) {
		perr(c, n, "preview: expected a list of 1..%d commands", POLICY_MAX_PREVIEWS);
		return;
	}
	r->previews = palloc(c, n->n * sizeof(struct policy_preview));
	if (r->previews == NULL)
		return;
	memset(r->previews, 0, n->n * sizeof(struct policy_preview));
	for (size_t i = 0; i < n->n && !c->failed; i++) {
		const struct yt_node *t = n->items[i];
		struct policy_preview *pv = &r->previews[i];

		if (t->kind != YT_MAP) {
			get_preview_run(c, t, &pv->run);
			continue;
		}
		for (size_t k = 0; k < t->n && !c->failed; k++) {
			const struct yt_node *key = t->items[2 * k], *val = t->items[2 * k + 1];
			if (key_is(key, "run"))
				get_preview_run(c, val, &pv->run);
			else if (key_is(key, "when"))
				get_strlist(c, val, "when", &pv->when);
			else if (key_is(key, "programs"))
				get_strlist(c, val, "programs", &pv->programs);
			else
				perr(c, key, "preview: unknown key '%s' (run, when, programs)",
				     key->kind == YT_SCALAR ? key->scalar : "?");
		}
		if (!c->failed && pv->run.n == 0)
			perr(c, t, "preview: a mapping needs run: [program, words...]");
	}
	r->npreviews = n->n;
}

static void parse_rule(struct pctx *c, const struct yt_node *m, enum policy_rule_kind kind,
                       struct policy_rule *r)
{
	bool have_class = false;

	r->kind = kind;
	r->line = m->line;
	r->targets = (1u << TARGET_TYPE_COUNT) - 1;
	r->description = "";
	if (m->kind != YT_MAP) {
		perr(c, m, "a rule must be a mapping");
		return;
	}
	for (size_t i = 0; i < m->n && !c->failed; i++) {
		const struct yt_node *k = m->items[2 * i], *v = m->items[2 * i + 1];

		if (key_is(k, "id") && v->kind == YT_SCALAR && v->scalar[0] != '\0') {
			r->id = pstr(c, v->scalar);
		} else if (key_is(k, "description") && v->kind == YT_SCALAR) {
			if (strchr(v->scalar, '\n') != NULL)
				perr(c, v, "description must be one line");
			r->description = pstr(c, v->scalar);
		} else if (key_is(k, "class")) {
			get_class(c, v, &r->cls);
			have_class = true;
		} else if (key_is(k, "targets")) {
			get_targets(c, v, &r->targets);
		} else if (kind == POLICY_RULE_COMMAND && key_is(k, "programs")) {
			get_strlist(c, v, "programs", &r->programs);
		} else if (kind == POLICY_RULE_COMMAND && key_is(k, "subcommand")) {
			get_strlist(c, v, "subcommand", &r->subcommand);
		} else if (kind == POLICY_RULE_COMMAND && key_is(k, "args")) {
			get_strlist(c, v, "args", &r->args);
		} else if (kind == POLICY_RULE_COMMAND && key_is(k, "flags")) {
			get_strlist(c, v, "flags", &r->flags);
		} else if (kind == POLICY_RULE_COMMAND && key_is(k, "arg_prefix")) {
			get_strlist(c, v, "arg_prefix", &r->arg_prefix);
		} else if (kind == POLICY_RULE_COMMAND && key_is(k, "write_options")) {
			get_strlist(c, v, "write_options", &r->write_options);
		} else if (kind == POLICY_RULE_COMMAND && key_is(k, "arg_contains")) {
			get_strlist(c, v, "arg_contains", &r->arg_contains);
		} else if (kind == POLICY_RULE_COMMAND &&
		           (key_is(k, "no_operands") || key_is(k, "scan_args"))) {
			bool *flag = key_is(k, "no_operands") ? &r->no_operands : &r->scan_args;

			if (v->kind == YT_SCALAR && strcmp(v->scalar, "true") == 0)
				*flag = true;
			else if (!(v->kind == YT_SCALAR && strcmp(v->scalar, "false") == 0))
				perr(c, v, "%s: expected true or false", k->scalar);
		} else if (kind == POLICY_RULE_COMMAND && key_is(k, "tier")) {
			if (v->kind == YT_SCALAR && strcmp(v->scalar, "root") == 0)
				r->needs_root = true;
			else if (!(v->kind == YT_SCALAR && strcmp(v->scalar, "user") == 0))
				perr(c, v, "tier: expected root or user");
		} else if (kind == POLICY_RULE_COMMAND && key_is(k, "writes")) {
			if (v->kind == YT_SCALAR && strcmp(v->scalar, "all") == 0)
				r->writes = WRITES_ALL;
			else if (v->kind == YT_SCALAR && strcmp(v->scalar, "last") == 0)
				r->writes = WRITES_LAST;
			else if (v->kind == YT_SCALAR && strcmp(v->scalar, "first") == 0)
				r->writes = WRITES_FIRST;
			else
				perr(c, v, "writes: expected all, first or last");
		} else if (kind == POLICY_RULE_COMMAND && key_is(k, "write_paths")) {
			get_strlist(c, v, "write_paths", &r->write_paths);
			for (size_t j = 0; j < r->write_paths.n && !c->failed; j++) {
				const char *wp = r->write_paths.v[j];

				if (wp[0] != '/' || strstr(wp, "/../") != NULL ||
				    strstr(wp, "/./") != NULL || strpbrk(wp, "*?[") != NULL)
					perr(
					    c, v,
					    "write_paths: `%s` must be an absolute path without "
					    "globs "
					    "or . and .. parts (\"dir/\" for everything below dir)",
					    wp);
			}
		} else if (kind == POLICY_RULE_COMMAND && key_is(k, "action")) {
			if (v->kind == YT_SCALAR && strcmp(v->scalar, "true") == 0)
				r->action = true;
			else if (!(v->kind == YT_SCALAR && strcmp(v->scalar, "false") == 0))
				perr(c, v, "action: expected true or false");
		} else if (kind == POLICY_RULE_COMMAND && key_is(k, "preview")) {
			get_previews(c, v, r);
		} else if (kind == POLICY_RULE_PATH && key_is(k, "prefixes")) {
			get_strlist(c, v, "prefixes", &r->words);
			for (size_t j = 0; j < r->words.n && !c->failed; j++)
				if (r->words.v[j][0] != '/')
					perr(c, v, "prefixes must be absolute paths");
		} else if (kind == POLICY_RULE_CODE && key_is(k, "words")) {
			get_strlist(c, v, "words", &r->words);
		} else {
			perr(c, k, "unknown or invalid key '%s' in a rule",
			     k->kind == YT_SCALAR ? k->scalar : "?");
		}
	}
	if (c->failed)
		return;
	if (r->id == NULL)
		perr(c, m, "rule without an id");
	else if (!have_class)
		perr(c, m, "rule '%s' has no class", r->id);
	else if (kind == POLICY_RULE_COMMAND && r->programs.n == 0)
		perr(c, m, "rule '%s' names no programs", r->id);
	else if (kind != POLICY_RULE_COMMAND && r->words.n == 0)
		perr(c, m, "rule '%s' has no %s", r->id,
		     kind == POLICY_RULE_PATH ? "prefixes" : "words");
	else if (r->action && r->cls == RISK_READ_ONLY)
		perr(c, m,
		     "rule '%s': `action: true` on a read_only rule: an observation does not act "
		     "(actions are reversible_low, or higher for an operator to approve)",
		     r->id);
}

/* s split at '/' into a path pattern (s is absolute). */
static void split_pathpat(struct pctx *c, const char *s, bool tree, bool store,
                          struct policy_pathpat *out)
{
	size_t n = 0, len = strlen(s);
	const char *q;

	for (q = s; *q; q++)
		n += *q == '/';
	out->comps = palloc(c, (n + 1) * sizeof(char *));
	out->lens = palloc(c, n + 1);
	out->globs = palloc(c, (n + 1) * sizeof(bool));
	if (out->lens == NULL || out->globs == NULL)
		return;
	out->n = 0;
	out->tree = tree || (len > 1 && s[len - 1] == '/');
	out->store = store;
	out->device = strncmp(s, "/dev/", 5) == 0;
	for (q = s; out->comps != NULL && *q;) {
		size_t l;

		while (*q == '/')
			q++;
		l = strcspn(q, "/");
		if (l == 0)
			break;
		if (l > 255) {
			perr(c, NULL, "secret path `%s` has a part longer than 255 bytes", s);
			return;
		}
		out->lens[out->n] = (unsigned char)l;
		out->globs[out->n] = strcspn(q, "*?[") < l;
		out->comps[out->n] = arena_strndup(c->p->a, q, l);
		if (out->comps[out->n] == NULL) {
			perr(c, NULL, "policy too large");
			return;
		}
		out->n++;
		q += l;
	}
}

/* Every absolute secrets: entry and every secret_stores entry as components. */
static void build_pathpats(struct pctx *c)
{
	struct policy *p = c->p;
	size_t total = p->secrets.n + p->secret_stores.n;

	if (total == 0)
		return;
	p->pathpats = palloc(c, total * sizeof(*p->pathpats));
	for (size_t i = 0; p->pathpats != NULL && !c->failed && i < p->secrets.n; i++)
		if (p->secrets.v[i][0] == '/')
			split_pathpat(c, p->secrets.v[i], false, false,
			              &p->pathpats[p->npathpats++]);
	for (size_t i = 0; p->pathpats != NULL && !c->failed && i < p->secret_stores.n; i++)
		split_pathpat(c, p->secret_stores.v[i], true, true, &p->pathpats[p->npathpats++]);
	if (c->failed || p->npathpats == 0)
		return;
	p->ppgroups = palloc(c, p->npathpats * sizeof(*p->ppgroups));
	p->pp_any = palloc(c, p->npathpats * sizeof(size_t));
	for (size_t i = 0; !c->failed && i < p->npathpats; i++) {
		const struct policy_pathpat *pp = &p->pathpats[i];
		struct policy_ppgroup *g = NULL;

		if (pp->n == 0 || pp->globs[0]) {
			p->pp_any[p->npp_any++] = i;
			continue;
		}
		for (size_t k = 0; k < p->nppgroups && g == NULL; k++)
			if (p->ppgroups[k].len == pp->lens[0] &&
			    memcmp(p->ppgroups[k].first, pp->comps[0], pp->lens[0]) == 0)
				g = &p->ppgroups[k];
		if (g == NULL) {
			g = &p->ppgroups[p->nppgroups++];
			g->first = pp->comps[0];
			g->len = pp->lens[0];
			g->idx = palloc(c, p->npathpats * sizeof(size_t));
			if (c->failed)
				return;
		}
		g->idx[g->n++] = i;
	}
}

static size_t hash_name(const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
	return (size_t)h;
}

/* An empty entry (get_strlist refuses them, so never in practice). */
static bool policy_strlist_has_empty(const struct strlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i][0] == '\0')
			return true;
	return false;
}

const struct policy_program *policy_program_find(const struct policy *p, const char *name,
                                                 size_t len)
{
	size_t i;

	if (p->nslots == 0)
		return NULL;
	for (i = hash_name(name, len) & (p->nslots - 1); p->slots[i] != 0;
	     i = (i + 1) & (p->nslots - 1)) {
		const struct policy_program *pr = &p->progs[p->slots[i] - 1];

		if (strlen(pr->name) == len && memcmp(pr->name, name, len) == 0)
			return pr;
	}
	return NULL;
}

bool policy_strlist_has(const struct strlist *l, const char *s, size_t len)
{
	for (size_t i = 0; i < l->n; i++)
		if (len > 0 && l->v[i][0] == s[0] && strlen(l->v[i]) == len &&
		    memcmp(l->v[i], s, len) == 0)
			return true;
	return len == 0 && policy_strlist_has_empty(l);
}

/* Builds the program index: each program's command rules in file order. */
static void build_index(struct pctx *c, const struct yt_node *value_options)
{
	struct policy *p = c->p;
	size_t total = 0, np = 0;

	for (size_t i = 0; i < p->nrules; i++)
		total += p->rules[i].programs.n;
	p->nslots = 16;
	while (p->nslots < total * 2)
		p->nslots *= 2;
	p->slots = palloc(c, p->nslots * sizeof(size_t));
	p->code_rules = palloc(c, (p->nrules ? p->nrules : 1) * sizeof(size_t));
	for (size_t i = 0; p->code_rules != NULL && i < p->nrules; i++)
		if (p->rules[i].kind == POLICY_RULE_CODE)
			p->code_rules[p->ncode_rules++] = i;
	p->progs = palloc(c, (total ? total : 1) * sizeof(*p->progs));
	if (c->failed)
		return;
	for (size_t i = 0; i < p->nrules; i++) {
		const struct policy_rule *r = &p->rules[i];

		for (size_t j = 0; j < r->programs.n; j++) {
			const char *name = r->programs.v[j];
			struct policy_program *pr =
			    (struct policy_program *)policy_program_find(p, name, strlen(name));

			if (pr == NULL) {
				size_t s = hash_name(name, strlen(name)) & (p->nslots - 1);

				while (p->slots[s] != 0)
					s = (s + 1) & (p->nslots - 1);
				pr = &p->progs[np++];
				pr->name = name;
				pr->rules = palloc(c, p->nrules * sizeof(size_t));
				if (c->failed)
					return;
				p->slots[s] = np;
				p->nprogs = np;
			}
			pr->rules[pr->nrules++] = i;
			for (int t = 0; t < TARGET_TYPE_COUNT; t++)
				if ((r->targets & (1u << t)) && r->cls > pr->worst[t])
					pr->worst[t] = r->cls;
		}
	}
	for (size_t k = 0; k < p->nprogs; k++) {
		struct policy_program *pr = &p->progs[k];

		for (int t = 0; t < TARGET_TYPE_COUNT; t++) {
			/* without a catch-all, an unmatched use is an unknown program */
			pr->base[t] = p->unknown_program;
			for (size_t i = pr->nrules; i > 0; i--) {
				const struct policy_rule *r = &p->rules[pr->rules[i - 1]];

				if (!(r->targets & (1u << t)))
					continue;
				if (!r->no_operands && !r->subcommand.n && !r->args.n &&
				    !r->flags.n && !r->arg_prefix.n && !r->arg_contains.n)
					pr->base[t] = r->cls;
				break;
			}
		}
	}
	if (value_options == NULL)
		return;
	if (value_options->kind != YT_MAP) {
		perr(c, value_options, "value_options: expected a mapping of program to options");
		return;
	}
	for (size_t i = 0; i < value_options->n && !c->failed; i++) {
		const struct yt_node *k = value_options->items[2 * i];
		struct policy_program *pr;

		if (k->kind != YT_SCALAR) {
			perr(c, k, "value_options: keys must be program names");
			return;
		}
		pr = (struct policy_program *)policy_program_find(p, k->scalar, strlen(k->scalar));
		if (pr == NULL) {
			perr(c, k, "value_options: no rule names program '%s'", k->scalar);
			return;
		}
		get_strlist(c, value_options->items[2 * i + 1], "value_options",
		            &pr->value_options);
	}
}

/* grammars: {program: grammar, "prog1|prog2": grammar}: every program named must
 * have a command rule, and gets one grammar. */
static void parse_grammars(struct pctx *c, const struct yt_node *m)
{
	if (m == NULL)
		return;
	if (m->kind != YT_MAP) {
		perr(c, m, "grammars: expected a mapping of program names to grammars");
		return;
	}
	for (size_t i = 0; i < m->n && !c->failed; i++) {
		const struct yt_node *k = m->items[2 * i], *v = m->items[2 * i + 1];
		struct grammar *g;
		char gerr[300];
		int line = 0, col = 0;
		const char *p;

		if (k->kind != YT_SCALAR || k->scalar[0] == '\0') {
			perr(c, k, "grammars: keys must be program names");
			return;
		}
		g = palloc(c, sizeof(*g));
		if (c->failed)
			return;
		for (p = k->scalar; *p && !c->failed;) {
			size_t l = strcspn(p, "|");
			struct policy_program *pr =
			    (struct policy_program *)policy_program_find(c->p, p, l);

			if (l == 0 || pr == NULL) {
				perr(c, k, "grammars: no rule names program '%.*s'", (int)l, p);
				return;
			}
			if (pr->grammar != NULL) {
				perr(c, k, "grammars: program '%s' has two grammars", pr->name);
				return;
			}
			pr->grammar = g;
			p += l;
			if (*p == '|')
				p++;
		}
		if (grammar_parse(c->p->a, v, pstr(c, k->scalar), g, gerr, sizeof(gerr), &line,
		                  &col) != 0) {
			struct yt_node at = {.line = line, .col = col};

			perr(c, &at, "grammar of %s: %s", k->scalar, gerr);
			return;
		}
	}
}

static void parse_rules(struct pctx *c, const struct yt_node *seq, enum policy_rule_kind kind,
                        const char *key)
{
	struct policy *p = c->p;

	if (seq == NULL)
		return;
	if (seq->kind != YT_SEQ) {
		perr(c, seq, "%s: expected a list of rules", key);
		return;
	}
	for (size_t i = 0; i < seq->n && !c->failed; i++) {
		struct policy_rule *r = &p->rules[p->nrules];

		parse_rule(c, seq->items[i], kind, r);
		if (c->failed)
			return;
		for (size_t j = 0; j < p->nrules; j++) {
			if (strcmp(p->rules[j].id, r->id) == 0) {
				perr(c, seq->items[i], "duplicate rule id '%s' (first on line %d)",
				     r->id, p->rules[j].line);
				return;
			}
		}
		p->nrules++;
	}
}

/* floors: {proxmox-host: config_mutation}: on that target, a command that
 * changes anything is at least that class. */
static void parse_floors(struct pctx *c, const struct yt_node *m)
{
	if (m == NULL)
		return;
	if (m->kind != YT_MAP) {
		perr(c, m, "floors: expected a mapping of target type to class");
		return;
	}
	for (size_t i = 0; i < m->n && !c->failed; i++) {
		const struct yt_node *k = m->items[2 * i];
		enum target_type t;

		if (k->kind != YT_SCALAR || target_type_parse(k->scalar, &t) != 0) {
			perr(c, k,
			     "floors: unknown target type (expected proxmox-host, vm or lxc)");
			return;
		}
		get_class(c, m->items[2 * i + 1], &c->p->floor[t]);
	}
}

static void parse_defaults(struct pctx *c, const struct yt_node *m)
{
	struct policy *p = c->p;

	if (m == NULL) {
		perr(c, NULL, "missing 'defaults'");
		return;
	}
	if (m->kind != YT_MAP) {
		perr(c, m, "defaults: expected a mapping");
		return;
	}
	for (size_t i = 0; i < m->n && !c->failed; i++) {
		const struct yt_node *k = m->items[2 * i], *v = m->items[2 * i + 1];

		if (key_is(k, "unknown_program") || key_is(k, "opaque_code")) {
			enum risk_class cls = RISK_DESTRUCTIVE;

			get_class(c, v, &cls);
			if (!c->failed && cls < RISK_CONFIG_MUTATION)
				perr(c, v,
				     "%s must be at least config_mutation: what cannot be "
				     "understood is not safe",
				     k->scalar);
			if (key_is(k, "unknown_program"))
				p->unknown_program = cls;
			else
				p->opaque_code = cls;
		} else if (key_is(k, "write_unlisted")) {
			get_class(c, v, &p->write_unlisted);
		} else if (key_is(k, "write_unknown")) {
			get_class(c, v, &p->write_unknown);
			if (!c->failed && p->write_unknown < RISK_CONFIG_MUTATION)
				perr(c, v, "write_unknown must be at least config_mutation");
		} else if (key_is(k, "home") && v->kind == YT_SCALAR && v->scalar[0] == '/') {
			p->home = pstr(c, v->scalar);
		} else if (key_is(k, "standard_dirs")) {
			get_strlist(c, v, "standard_dirs", &p->standard_dirs);
		} else if (key_is(k, "shells")) {
			get_strlist(c, v, "shells", &p->shells);
		} else if (key_is(k, "interpreters")) {
			get_strlist(c, v, "interpreters", &p->interpreters);
		} else {
			perr(c, k, "unknown or invalid key '%s' in defaults",
			     k->kind == YT_SCALAR ? k->scalar : "?");
		}
	}
}

struct policy *policy_parse(const char *yaml, size_t len, const char *origin, char *err,
                            size_t errlen)
{
	struct yt_node *root = NULL;
	struct policy *p = NULL;
	struct pctx c = {.origin = origin ? origin : "policy", .err = err, .errlen = errlen};
	static const char *const top_keys[] = {
	    "version",       "description", "defaults", "rules",       "paths",   "code_words",
	    "value_options", "floors",      "grammars", "environment", "secrets", "secret_stores"};
	size_t nrules = 0;

	if (errlen > 0)
		err[0] = '\0';
	root = yt_parse(yaml, len, c.origin, err, errlen);
	if (root == NULL)
		return NULL;
	if (root->kind != YT_MAP) {
		perr(&c, root, "the policy must be a mapping");
		goto out;
	}
	for (size_t i = 0; i < root->n && !c.failed; i++) {
		const struct yt_node *k = root->items[2 * i];
		bool known = false;

		for (size_t j = 0; j < sizeof(top_keys) / sizeof(top_keys[0]); j++)
			known = known || key_is(k, top_keys[j]);
		if (!known)
			perr(&c, k, "unknown top-level key '%s'",
			     k->kind == YT_SCALAR ? k->scalar : "?");
	}
	if (c.failed)
		goto out;
	p = xcalloc(1, sizeof(*p));
	c.p = p;
	p->a = arena_new(POLICY_ARENA_LIMIT);
	p->unknown_program = RISK_CONFIG_MUTATION;
	p->opaque_code = RISK_CONFIG_MUTATION;
	p->write_unlisted = RISK_REVERSIBLE_LOW;
	p->write_unknown = RISK_CONFIG_MUTATION;
	p->home = "/root";
	parse_defaults(&c, yt_get(root, "defaults"));
	{
		const char *keys[] = {"rules", "paths", "code_words"};

		for (int i = 0; i < 3; i++) {
			const struct yt_node *s = yt_get(root, keys[i]);

			if (s != NULL && s->kind == YT_SEQ)
				nrules += s->n;
		}
	}
	if (yt_get(root, "rules") == NULL)
		perr(&c, root, "missing 'rules'");
	if (c.failed)
		goto out;
	p->rules = palloc(&c, (nrules ? nrules : 1) * sizeof(*p->rules));
	if (c.failed)
		goto out;
	parse_rules(&c, yt_get(root, "rules"), POLICY_RULE_COMMAND, "rules");
	parse_rules(&c, yt_get(root, "paths"), POLICY_RULE_PATH, "paths");
	parse_rules(&c, yt_get(root, "code_words"), POLICY_RULE_CODE, "code_words");
	if (!c.failed)
		build_index(&c, yt_get(root, "value_options"));
	if (!c.failed)
		parse_floors(&c, yt_get(root, "floors"));
	if (!c.failed)
		parse_grammars(&c, yt_get(root, "grammars"));
	if (!c.failed && yt_get(root, "environment") != NULL)
		get_strlist(&c, yt_get(root, "environment"), "environment", &p->env_allow);
	if (!c.failed && yt_get(root, "secrets") != NULL)
		get_strlist(&c, yt_get(root, "secrets"), "secrets", &p->secrets);
	for (size_t i = 0; !c.failed && i < p->secrets.n; i++) {
		const char *s = p->secrets.v[i];

		if (s[0] == '!')
			s++;
		if (s[0] == '\0' || (s[0] != '/' && strchr(s, '/') != NULL))
			perr(&c, yt_get(root, "secrets"),
			     "secrets: `%s` must be an absolute path pattern or a file name",
			     p->secrets.v[i]);
	}
	if (!c.failed && yt_get(root, "secret_stores") != NULL)
		get_strlist(&c, yt_get(root, "secret_stores"), "secret_stores", &p->secret_stores);
	for (size_t i = 0; !c.failed && i < p->secret_stores.n; i++) {
		const char *s = p->secret_stores.v[i];

		if (s[0] != '/' || strstr(s, "/../") != NULL || strstr(s, "/./") != NULL ||
		    strcspn(s, " \t\n\r'\"\\") != strlen(s))
			perr(&c, yt_get(root, "secret_stores"),
			     "secret_stores: `%s` must be an absolute path or glob without "
			     "spaces, quotes, backslashes or . and .. parts",
			     s);
	}
	if (!c.failed)
		build_pathpats(&c);
	if (!c.failed && p->secrets.n > 0) {
		p->secret_lits = palloc(&c, p->secrets.n * sizeof(char *));
		p->secret_tri = palloc(&c, p->secrets.n * sizeof(unsigned short));
	}
	for (size_t i = 0; !c.failed && i < p->secrets.n; i++) {
		const char *s = p->secrets.v[i], *best = "";
		size_t bl = 0;

		s += s[0] == '!';
		for (const char *q = s; *q;) {
			size_t l = strcspn(q, "*?[\\");

			if (l > bl)
				best = q, bl = l;
			q += l;
			if (*q)
				q++;
		}
		p->secret_lits[i] = arena_strndup(p->a, best, bl);
		if (p->secret_lits[i] == NULL)
			perr(&c, NULL, "policy too large");
		else
			p->secret_tri[i] = bl >= 3 ? policy_tri_hash(best) : 0xffff;
	}
	for (size_t i = 0; !c.failed && i < p->env_allow.n; i++) {
		const char *s = p->env_allow.v[i];
		size_t l = strlen(s);

		for (size_t k = 0; k < l; k++)
			if (!((s[k] >= 'A' && s[k] <= 'Z') || (s[k] >= 'a' && s[k] <= 'z') ||
			      s[k] == '_' || (k > 0 && s[k] >= '0' && s[k] <= '9') ||
			      (k + 1 == l && k > 0 && s[k] == '*')))
				perr(&c, yt_get(root, "environment"),
				     "environment: `%s` is not a variable name (a trailing * "
				     "makes it a prefix)",
				     s);
	}
out:
	yt_free(root);
	if (c.failed) {
		policy_free(p);
		return NULL;
	}
	return p;
}

void policy_free(struct policy *p)
{
	if (p == NULL)
		return;
	arena_free(p->a);
	free(p);
}

size_t policy_rule_count(const struct policy *p)
{
	return p->nrules;
}

const char *policy_rule_id(const struct policy *p, size_t i)
{
	return i < p->nrules ? p->rules[i].id : NULL;
}

enum policy_rule_kind policy_rule_kind(const struct policy *p, size_t i)
{
	return i < p->nrules ? p->rules[i].kind : POLICY_RULE_COMMAND;
}

enum risk_class policy_rule_class(const struct policy *p, size_t i)
{
	return i < p->nrules ? p->rules[i].cls : RISK_DESTRUCTIVE;
}

const char *policy_rule_description(const struct policy *p, size_t i)
{
	return i < p->nrules ? p->rules[i].description : "";
}

size_t policy_secret_store_count(const struct policy *p)
{
	return p->secret_stores.n;
}

const char *policy_secret_store(const struct policy *p, size_t i)
{
	return i < p->secret_stores.n ? p->secret_stores.v[i] : NULL;
}

long policy_rule_find(const struct policy *p, const char *id)
{
	for (size_t i = 0; i < p->nrules; i++)
		if (strcmp(p->rules[i].id, id) == 0)
			return (long)i;
	return -1;
}
