/* judge.c -- the policy applied to one program's arguments, to a write
 * target, and to code the classifier cannot parse.
 *
 * Arguments the shell computes at run time ($X, $(...)) make a condition
 * "maybe": a rule that maybe matches contributes its class and the chain goes
 * on, so a computed argument can only raise the class. */
#include "classifier/judge.h"

#include "classifier/arena.h"
#include "classifier/grammar.h"
#include "classifier/netclient.h"
#include "classifier/secrets.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

enum tri { NO, MAYBE, YES };

#define SEG_TEXT_MAX 160

const char *judge_fmt(struct judge *j, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	const char *s;

	va_start(ap, fmt);
	vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	s = arena_strndup(j->a, tmp, strlen(tmp));
	return s ? s : "";
}

const char *judge_seg_text(struct judge *j, struct judge_seg *s)
{
	char tmp[SEG_TEXT_MAX + 8];
	size_t n = 0;

	if (s->text != NULL)
		return s->text;
	for (size_t i = 0; i < s->nwords && n < SEG_TEXT_MAX; i++) {
		const struct sh_word *w = &s->words[i];
		const char *t = (w->flags & SHW_COMPUTED) ? w->raw : w->text;
		size_t l = (w->flags & SHW_COMPUTED) ? w->raw_len : w->len;

		if (i > 0)
			tmp[n++] = ' ';
		if (l > SEG_TEXT_MAX - n)
			l = SEG_TEXT_MAX - n;
		memcpy(tmp + n, t, l);
		n += l;
	}
	if (n >= SEG_TEXT_MAX) {
		memcpy(tmp + n, "...", 3);
		n += 3;
	}
	s->text = arena_strndup(j->a, tmp, n);
	if (s->text == NULL)
		s->text = "";
	return s->text;
}

void judge_reason(struct judge *j, struct judge_seg *s, const char *rule, const char *words,
                  enum risk_class cls, enum target_type t)
{
	if (j->in_call && (int)cls > j->call_max)
		j->call_max = (int)cls;
	verdict_add(j->v, s ? s->num : 0, s ? judge_seg_text(j, s) : "", rule, words, cls, t);
}

void judge_write_unknown(struct judge *j, struct judge_seg *s, const char *words,
                         enum target_type t)
{
	j->writes_unknown = true;
	j->write_events++;
	judge_reason(j, s, "write-unknown-path", words, j->p->write_unknown, t);
}

/* Adds path (normalised; "dir/" for a tree) to the write set once.  Past
 * JUDGE_MAX_WRITES the set cannot say what the command changes: the class is
 * raised so that an operator looks. */
static void add_write(struct judge *j, struct judge_seg *s, const char *path, enum target_type t)
{
	j->write_events++;
	for (size_t i = 0; i < j->nwrites; i++)
		if (strcmp(j->writes[i], path) == 0)
			return;
	if (j->writes == NULL)
		j->writes = arena_alloc(j->a, JUDGE_MAX_WRITES * sizeof(*j->writes));
	if (j->writes == NULL || j->nwrites == JUDGE_MAX_WRITES) {
		if (!j->writes_unknown)
			judge_write_unknown(
			    j, s,
			    judge_fmt(j, "writes more than %d paths: too many to confine",
			              JUDGE_MAX_WRITES),
			    t);
		return;
	}
	j->writes[j->nwrites++] = path;
}

/* Could a computed word turn out to be s?  Only its literal prefix is known. */
static bool could_be(const struct sh_word *w, const char *s)
{
	if (w->flags & SHW_SPLIT)
		return true;
	return strncmp(s, w->text, w->prefix) == 0 || strlen(s) < w->prefix;
}

static bool is_value_option(const struct policy_program *pr, const struct sh_word *w)
{
	if (pr == NULL || !judge_lit(w) || w->len < 2 || w->text[0] != '-')
		return false;
	if (policy_strlist_has(&pr->value_options, w->text, w->len))
		return true;
	if (w->text[1] != '-') {
		char opt[3] = {'-', w->text[w->len - 1], '\0'};

		return policy_strlist_has(&pr->value_options, opt, 2);
	}
	return false;
}

/* Up to want operands (words that are not options or option values).
 * *unsure: a computed word or unseen words make later operands unknown. */
static size_t operands(const struct policy_program *pr, const struct judge_argv *av,
                       const struct sh_word **ops, size_t want, bool *unsure)
{
	size_t count = 0;
	bool dd = false;

	*unsure = false;
	for (size_t i = 0; i < av->n && count < want; i++) {
		const struct sh_word *w = &av->w[i];

		if (!judge_lit(w)) {
			*unsure = true;
			return count;
		}
		if (!dd && w->len == 2 && memcmp(w->text, "--", 2) == 0) {
			dd = true;
			continue;
		}
		if (!dd && w->len > 1 && w->text[0] == '-') {
			if (is_value_option(pr, w))
				i++;
			continue;
		}
		ops[count++] = w;
	}
	if (count < want && av->extra_unknown)
		*unsure = true;
	return count;
}

struct matchbuf {
	char s[160];
	size_t n;
};

static void mb_add(struct matchbuf *m, const char *s, size_t len)
{
	if (m->n + len + 2 >= sizeof(m->s))
		return;
	if (m->n > 0)
		m->s[m->n++] = ' ';
	memcpy(m->s + m->n, s, len);
	m->n += len;
	m->s[m->n] = '\0';
}

static enum tri cond_subcommand(const struct policy_program *pr, const struct strlist *l,
                                const struct judge_argv *av, struct matchbuf *mb)
{
	enum tri best = NO;

	for (size_t e = 0; e < l->n && best != YES; e++) {
		const char *seq = l->v[e];
		const struct sh_word *ops[4];
		const char *tok[4];
		size_t tl[4], nt = 0, got;
		bool unsure;
		enum tri r = YES;

		for (const char *q = seq; *q && nt < 4;) {
			while (*q == ' ')
				q++;
			if (!*q)
				break;
			tok[nt] = q;
			while (*q && *q != ' ')
				q++;
			tl[nt] = (size_t)(q - tok[nt]);
			nt++;
		}
		got = operands(pr, av, ops, nt, &unsure);
		for (size_t k = 0; k < nt && r != NO; k++) {
			if (k >= got)
				r = unsure ? MAYBE : NO;
			else if (tl[k] == 1 && tok[k][0] == '*')
				r = ops[k]->len > 0 && ops[k]->text[0] == '+' ? NO : r;
			else if (ops[k]->len != tl[k] || memcmp(ops[k]->text, tok[k], tl[k]) != 0)
				r = NO;
		}
		if (r == YES)
			for (size_t k = 0; k < nt; k++)
				mb_add(mb, ops[k]->text, ops[k]->len);
		if (r > best)
			best = r;
	}
	return best;
}

enum argmode { ARG_EXACT, ARG_PREFIX, ARG_CONTAINS };

static bool arg_hit(const struct sh_word *w, const char *e, enum argmode mode)
{
	size_t el = strlen(e);

	switch (mode) {
	case ARG_EXACT:
		return w->len == el && memcmp(w->text, e, el) == 0;
	case ARG_PREFIX:
		return w->len >= el && memcmp(w->text, e, el) == 0;
	case ARG_CONTAINS:
		return memmem(w->text, w->len, e, el) != NULL;
	}
	return false;
}

static enum tri cond_args(const struct strlist *l, const struct judge_argv *av, enum argmode mode,
                          struct matchbuf *mb)
{
	enum tri best = av->extra_unknown ? MAYBE : NO;

	for (size_t i = 0; i < av->n; i++) {
		const struct sh_word *w = &av->w[i];

		for (size_t e = 0; e < l->n; e++) {
			if (judge_lit(w)) {
				if (arg_hit(w, l->v[e], mode)) {
					mb_add(mb, w->text, w->len);
					return YES;
				}
			} else if (mode == ARG_CONTAINS || could_be(w, l->v[e])) {
				best = MAYBE;
			}
		}
	}
	return best;
}

/* Does option word w set flag f?  Loose on purpose: rules with flags raise
 * the class, so -rf matches -f, --in-pl matches --in-place, --output=x
 * matches --output. */
static bool flag_hits(const char *w, size_t wl, const char *f)
{
	size_t fl = strlen(f);

	if (wl < 2 || w[0] != '-' || fl < 2 || f[0] != '-')
		return false;
	if (f[1] == '-') {
		size_t nl = 0;

		if (wl < 3 || w[1] != '-')
			return false;
		while (nl < wl && w[nl] != '=')
			nl++;
		return nl > 2 && nl <= fl && memcmp(w, f, nl) == 0;
	}
	if (fl == 2) {
		if (w[1] == '-')
			return false;
		return memchr(w + 1, f[1], wl - 1) != NULL;
	}
	/* -exec, -delete: single-dash long options match exactly. */
	return wl == fl && memcmp(w, f, fl) == 0;
}

static enum tri cond_flags(const struct strlist *l, const struct judge_argv *av,
                           struct matchbuf *mb)
{
	enum tri best = av->extra_unknown ? MAYBE : NO;

	for (size_t i = 0; i < av->n; i++) {
		const struct sh_word *w = &av->w[i];

		if (judge_lit(w) && w->len == 2 && memcmp(w->text, "--", 2) == 0)
			break;
		if (!judge_lit(w)) {
			if ((w->flags & SHW_SPLIT) || w->prefix == 0 || w->text[0] == '-')
				best = MAYBE;
			continue;
		}
		for (size_t e = 0; e < l->n; e++) {
			if (flag_hits(w->text, w->len, l->v[e])) {
				mb_add(mb, w->text, w->len);
				return YES;
			}
		}
	}
	return best;
}

static enum tri rule_matches(const struct policy_program *pr, const struct policy_rule *r,
                             const struct judge_argv *av, struct matchbuf *mb)
{
	enum tri res = YES, c;

	if (r->no_operands) {
		const struct sh_word *op;
		bool unsure;

		if (operands(pr, av, &op, 1, &unsure) > 0)
			return NO;
		res = unsure ? MAYBE : YES;
	}
	if (r->subcommand.n) {
		c = cond_subcommand(pr, &r->subcommand, av, mb);
		res = c < res ? c : res;
	}
	if (res != NO && r->args.n) {
		c = cond_args(&r->args, av, ARG_EXACT, mb);
		res = c < res ? c : res;
	}
	if (res != NO && r->arg_prefix.n) {
		c = cond_args(&r->arg_prefix, av, ARG_PREFIX, mb);
		res = c < res ? c : res;
	}
	if (res != NO && r->arg_contains.n) {
		c = cond_args(&r->arg_contains, av, ARG_CONTAINS, mb);
		res = c < res ? c : res;
	}
	if (res != NO && r->flags.n) {
		c = cond_flags(&r->flags, av, mb);
		res = c < res ? c : res;
	}
	return res;
}

static void judge_option_value(struct judge *j, struct judge_seg *s, const struct sh_word *w,
                               size_t off, enum target_type t);

static void judge_rule_writes(struct judge *j, struct judge_seg *s, const struct policy_program *pr,
                              const struct policy_rule *r, const struct judge_argv *av,
                              enum target_type t)
{
	const struct sh_word *ops[64];
	bool unsure, all = r->writes == WRITES_ALL;
	size_t n = operands(pr, av, ops, 64, &unsure);

	for (size_t i = 0; i < av->n; i++) {
		const struct sh_word *x = &av->w[i];
		const char *eq, *tt;

		if (!judge_lit(x) || x->len < 2 || x->text[0] != '-')
			continue;
		if (judge_weq(x, "--"))
			break;
		if (judge_weq(x, "-t") || (x->len >= 8 && memcmp(x->text, "--target", 8) == 0))
			all = true;
		/* --target-directory=DIR (abbreviated too) and -tDIR name the
		 * directory written into inside the option word itself */
		if (x->len >= 8 && memcmp(x->text, "--target", 8) == 0 &&
		    (eq = memchr(x->text, '=', x->len)) != NULL)
			judge_option_value(j, s, x, (size_t)(eq + 1 - x->text), t);
		else if (x->text[1] != '-' && (tt = memchr(x->text + 1, 't', x->len - 1)) != NULL &&
		         tt + 1 < x->text + x->len) {
			judge_option_value(j, s, x, (size_t)(tt + 1 - x->text), t);
			all = true;
		} else if (x->text[1] != '-' && x->text[x->len - 1] == 't') {
			all = true; /* -st DIR: the next word is the directory */
		}
	}
	if (unsure || n == 64) {
		judge_write_unknown(j, s,
		                    judge_fmt(j, "%s writes files named at run time", pr->name), t);
	}
	if (n > 0 && (strcmp(pr->name, "chmod") == 0 || strcmp(pr->name, "chown") == 0 ||
	              strcmp(pr->name, "chgrp") == 0)) {
		/* chmod MODE FILE..., chown OWNER FILE...: the first operand is no
		 * file, unless --reference=RFILE gave the mode */
		bool reference = false;

		for (size_t i = 0; i < av->n; i++)
			reference = reference || (judge_lit(&av->w[i]) && av->w[i].len > 5 &&
			                          memcmp(av->w[i].text, "--ref", 5) == 0);
		if (!reference) {
			memmove(ops, ops + 1, (n - 1) * sizeof(*ops));
			n--;
		}
	}
	if (n > 0 && strcmp(pr->name, "sed") == 0) {
		/* sed -i SCRIPT FILE...: the first operand is the script unless -e or -f
		 * gave it */
		bool script_opt = false;

		for (size_t i = 0; i < av->n && !judge_weq(&av->w[i], "--"); i++) {
			const struct sh_word *x = &av->w[i];

			if (!judge_lit(x) || x->len < 2 || x->text[0] != '-')
				continue;
			if (x->text[1] == '-')
				script_opt = script_opt || strncmp(x->text, "--e", 3) == 0 ||
				             strncmp(x->text, "--f", 3) == 0;
			else
				script_opt = script_opt || memchr(x->text, 'e', x->len) != NULL ||
				             memchr(x->text, 'f', x->len) != NULL;
		}
		if (!script_opt) {
			memmove(ops, ops + 1, (n - 1) * sizeof(*ops));
			n--;
		}
	}
	if (n == 0)
		return;
	if (all) {
		for (size_t i = 0; i < n; i++)
			judge_write(j, s, ops[i], t);
	} else {
		judge_write(j, s, ops[r->writes == WRITES_FIRST ? 0 : n - 1], t);
	}
}

/* A rule's `action: true`: the verdict names the one rule whose action the
 * kernel cannot confine; two different ones cannot be named, so an operator
 * looks. */
static void judge_action(struct judge *j, struct judge_seg *s, const struct policy_rule *r,
                         enum target_type t)
{
	if (j->action_rule == NULL) {
		j->action_rule = r->id;
		return;
	}
	if (strcmp(j->action_rule, r->id) != 0)
		judge_reason(
		    j, s, "actions-differ",
		    judge_fmt(j,
		              "actions of two rules (%s, %s) in one command: the jail can let "
		              "only one through",
		              j->action_rule, r->id),
		    RISK_CONFIG_MUTATION, t);
}

/* -C DIR, --directory=DIR, -oFILE, -so FILE: values of options that name
 * written files ("-" is stdout). */
static void judge_option_value(struct judge *j, struct judge_seg *s, const struct sh_word *w,
                               size_t off, enum target_type t)
{
	struct sh_word val = *w;

	val.text += off;
	val.len -= off;
	if (val.prefix >= off)
		val.prefix -= off;
	val.flags &= ~(unsigned)SHW_TILDE;
	if (val.len > 0 && val.text[0] == '~')
		val.flags |= SHW_TILDE;
	if (judge_lit(&val) && val.len == 1 && val.text[0] == '-')
		return;
	judge_write(j, s, &val, t);
}

static void judge_write_options(struct judge *j, struct judge_seg *s, const struct policy_rule *r,
                                const struct judge_argv *av, enum target_type t)
{
	for (size_t i = 0; i < av->n; i++) {
		const struct sh_word *w = &av->w[i];

		if (!judge_lit(w) || w->len < 2 || w->text[0] != '-')
			continue;
		if (w->len == 2 && w->text[1] == '-')
			break;
		for (size_t k = 0; k < r->write_options.n; k++) {
			const char *o = r->write_options.v[k];
			size_t ol = strlen(o);
			const char *hit;

			if (w->len == ol && memcmp(w->text, o, ol) == 0) {
				if (i + 1 < av->n)
					judge_option_value(j, s, &av->w[i + 1], 0, t);
			} else if (o[1] == '-' || ol > 2) {
				/* --output=FILE, -keyout=...; --out FILE, --out=FILE for
				 * programs that take abbreviations (wget --output-do=F) */
				const char *weq = memchr(w->text, '=', w->len);
				size_t nl = weq ? (size_t)(weq - w->text) : w->len;

				if (w->len > ol && memcmp(w->text, o, ol) == 0 &&
				    w->text[ol] == '=')
					judge_option_value(j, s, w, ol + 1, t);
				else if (o[1] == '-' && w->text[1] == '-' && nl > 3 && nl < ol &&
				         memcmp(w->text, o, nl) == 0) {
					if (weq != NULL)
						judge_option_value(j, s, w, nl + 1, t);
					else if (i + 1 < av->n)
						judge_option_value(j, s, &av->w[i + 1], 0, t);
				}
			} else if (w->text[1] != '-' &&
			           (hit = memchr(w->text + 1, o[1], w->len - 1)) != NULL) {
				/* a short option in a cluster: -so FILE, -oFILE */
				size_t at = (size_t)(hit - w->text);

				if (at + 1 == w->len) {
					if (i + 1 < av->n)
						judge_option_value(j, s, &av->w[i + 1], 0, t);
				} else {
					judge_option_value(j, s, w, at + 1, t);
				}
			}
		}
	}
}

/* The rule chain for one program: every rule that surely or maybe matches
 * adds its reason; returns the highest class given. */
static enum risk_class judge_rules(struct judge *j, struct judge_seg *s,
                                   const struct policy_program *pr, const char *name,
                                   const struct judge_argv *av, enum target_type t,
                                   const struct policy_rule **decided,
                                   const struct policy_rule **low)
{
	enum risk_class got = RISK_READ_ONLY;
	bool any = false;

	*low = NULL;
	for (size_t k = 0; k < pr->nrules; k++) {
		const struct policy_rule *r = &j->p->rules[pr->rules[k]];
		struct matchbuf mb = {.n = 0};
		enum tri m;

		if (!(r->targets & (1u << t)))
			continue;
		mb_add(&mb, name, strlen(name));
		m = rule_matches(pr, r, av, &mb);
		if (m == NO)
			continue;
		if (m == YES || r->cls > got || !any) {
			const char *words = m == YES ? judge_fmt(j, "%s", mb.s)
			                             : judge_fmt(j,
			                                         "%s (arguments known only at run "
			                                         "time)",
			                                         name);

			judge_reason(j, s, r->id, words, r->cls, t);
		}
		any = true;
		if (r->cls > got)
			got = r->cls;
		if (r->action)
			judge_action(j, s, r, t);
		else if (r->cls == RISK_REVERSIBLE_LOW && *low == NULL)
			*low = r;
		if (r->writes != WRITES_NONE)
			judge_rule_writes(j, s, pr, r, av, t);
		if (r->write_options.n)
			judge_write_options(j, s, r, av, t);
		for (size_t i = 0; i < r->write_paths.n; i++) {
			const char *wp = r->write_paths.v[i];
			struct sh_word pw = {.text = wp,
			                     .len = strlen(wp),
			                     .prefix = strlen(wp),
			                     .raw = wp,
			                     .raw_len = strlen(wp)};

			judge_write(j, s, &pw, t);
		}
		if (r->scan_args)
			for (size_t i = 0; i < av->n; i++)
				if (judge_lit(&av->w[i]))
					judge_scan_words(j, s, av->w[i].text, av->w[i].len, t);
		if (m == YES) {
			*decided = r;
			return got;
		}
	}
	*decided = NULL;
	judge_reason(j, s, "no-rule-matched",
	             judge_fmt(j, "%s (no rule of the policy covers this use)", name),
	             j->p->unknown_program, t);
	return j->p->unknown_program > got ? j->p->unknown_program : got;
}

/* Was a value starting with '-' assigned earlier in the command?  Then a word
 * known only at run time may be that option. */
static bool options_in_values(const struct judge *j)
{
	for (size_t i = 0; i < j->nassigns; i++) {
		const struct sh_word *w = j->assigns[i];
		const char *eq = memchr(w->text, '=', w->len);

		if (eq != NULL && eq + 1 < w->text + w->len && eq[1] == '-')
			return true;
		if (eq != NULL && memmem(eq, w->len - (size_t)(eq - w->text), " -", 2) != NULL)
			return true;
	}
	return false;
}

void judge_prove(struct judge *j, struct judge_seg *s, const char *name,
                 const struct judge_argv *av, enum target_type t)
{
	const struct policy_program *pr = policy_program_find(j->p, name, strlen(name));
	struct gram_proof gp = {.ok = true};
	const struct sh_word *o;

	if (pr != NULL && pr->grammar != NULL) {
		grammar_prove(pr->grammar, name, av->w, av->n, av->extra_unknown,
		              options_in_values(j), j->a, &gp);
		if (!gp.ok)
			judge_reason(j, s, "unproven", gp.why, j->p->unknown_program, t);
		return;
	}
	o = grammar_first_option(av->w, av->n);
	if (o != NULL)
		judge_reason(j, s, "unproven",
		             judge_fmt(j,
		                       "`%.*s` for %s: the policy has no grammar for %s; cannot "
		                       "prove read-only",
		                       (int)(o->raw_len > 60 ? 60 : o->raw_len), o->raw, name,
		                       name),
		             j->p->unknown_program, t);
}

void judge_rec_add(struct judge *j, const struct judge_rec *r)
{
	if (j->nrecs == JUDGE_MAX_RECS) {
		j->odd = true;
		return;
	}
	j->recs[j->nrecs++] = *r;
}

void judge_command(struct judge *j, struct judge_seg *s, const char *name,
                   const struct judge_argv *av, enum target_type t)
{
	const struct policy_program *pr = policy_program_find(j->p, name, strlen(name));
	struct gram_proof gp = {.ok = true};
	struct judge_argv cav = *av;
	const struct policy_rule *decided = NULL, *low = NULL;
	enum risk_class got;
	struct judge_rec rec = {.seg = s->num, .wrapped = j->odd_wrap > 0};
	bool net_read;

	j->in_call = true;
	j->call_max = -1;
	if (pr != NULL && pr->grammar != NULL) {
		gp.items_wanted = secrets_wants_items(name) || netclient_wants_items(name);
		grammar_prove(pr->grammar, name, av->w, av->n, av->extra_unknown,
		              options_in_values(j), j->a, &gp);
		if (gp.canon != NULL)
			cav.w = gp.canon;
	}
	secrets_args(j, s, name, av, pr != NULL && pr->grammar != NULL ? &gp : NULL, t);
	if (pr == NULL) {
		judge_reason(j, s, "unknown-program",
		             judge_fmt(j, "%s (a program the policy does not know)", name),
		             j->p->unknown_program, t);
		for (size_t i = 0; i < av->n; i++)
			if (judge_lit(&av->w[i]))
				judge_scan_words(j, s, av->w[i].text, av->w[i].len, t);
		netclient_judge(j, s, name, av, NULL, t);
		judge_rec_add(j, &rec);
		j->in_call = false;
		return;
	}
	got = judge_rules(j, s, pr, name, &cav, t, &decided, &low);
	net_read = netclient_judge(j, s, name, av, pr->grammar != NULL ? &gp : NULL, t);
	if (got < RISK_CONFIG_MUTATION) {
		if (pr->grammar != NULL && !gp.ok) {
			judge_reason(j, s, "unproven", gp.why, j->p->unknown_program, t);
		} else if (pr->grammar == NULL) {
			/* Without a grammar nothing beyond what the deciding rule looked
			 * at is understood: no option at all, and no operand unless that
			 * rule named its subcommand or arguments. */
			const struct sh_word *o = grammar_first_option(av->w, av->n);
			bool named = decided != NULL && (decided->subcommand.n || decided->args.n);

			if (o == NULL && !named && av->n > 0)
				o = &av->w[0];
			if (o != NULL)
				judge_reason(
				    j, s, "unproven",
				    judge_fmt(j,
				              "`%.*s` for %s: the policy has no grammar for %s; "
				              "cannot prove read-only",
				              (int)(o->raw_len > 60 ? 60 : o->raw_len), o->raw,
				              name, name),
				    j->p->unknown_program, t);
		}
	}
	if (low != NULL && j->write_events == j->prog_mark)
		judge_reason(j, s, "unstated-change",
		             judge_fmt(j,
		                       "%s (rule %s) changes something the policy does not name "
		                       "(no path, no action): it cannot be confined to its claim",
		                       name, low->id),
		             RISK_CONFIG_MUTATION, t);
	rec.proven = j->call_max < (int)RISK_CONFIG_MUTATION && (pr->grammar == NULL || gp.ok);
	rec.tier_root = rec.proven && decided != NULL && decided->needs_root;
	rec.net_view = rec.proven && pr->grammar != NULL && grammar_net_view(&gp);
	rec.net_read = rec.proven && net_read;
	rec.filter = rec.proven && pr->grammar != NULL && j->nofilter_seg != s->num &&
	             grammar_is_filter(&gp, av->extra_unknown);
	judge_rec_add(j, &rec);
	j->in_call = false;
}

const char *judge_normpath(struct judge *j, const char *path, size_t len)
{
	char *out = arena_alloc(j->a, len + 2);
	size_t n = 0, i = 0;

	if (out == NULL)
		return NULL;
	out[n++] = '/';
	while (i < len) {
		size_t st, cl;

		while (i < len && path[i] == '/')
			i++;
		st = i;
		while (i < len && path[i] != '/')
			i++;
		cl = i - st;
		if (cl == 0 || (cl == 1 && path[st] == '.'))
			continue;
		if (cl == 2 && path[st] == '.' && path[st + 1] == '.') {
			while (n > 1 && out[n - 1] != '/')
				n--;
			if (n > 1)
				n--;
			continue;
		}
		if (n > 1)
			out[n++] = '/';
		memcpy(out + n, path + st, cl);
		n += cl;
	}
	if (len > 0 && path[len - 1] == '/' && n > 1)
		out[n++] = '/';
	out[n] = '\0';
	return out;
}

const char *judge_joinpath(struct judge *j, const char *dir, const char *rel, size_t len)
{
	size_t dl = strlen(dir);
	char *tmp = arena_alloc(j->a, dl + len + 2);

	if (tmp == NULL)
		return NULL;
	memcpy(tmp, dir, dl);
	tmp[dl] = '/';
	memcpy(tmp + dl + 1, rel, len);
	return judge_normpath(j, tmp, dl + 1 + len);
}

static void judge_abs_path(struct judge *j, struct judge_seg *s, const char *path,
                           enum target_type t)
{
	size_t pl = strlen(path);

	/* a file written with known text and changed again: its text is no longer known */
	for (size_t k = 0; k < j->nfiles; k++)
		if (strcmp(j->files[k].path, path) == 0)
			j->files[k].partial = true;

	for (size_t i = 0; i < j->p->nrules; i++) {
		const struct policy_rule *r = &j->p->rules[i];

		if (r->kind != POLICY_RULE_PATH || !(r->targets & (1u << t)))
			continue;
		for (size_t k = 0; k < r->words.n; k++) {
			const char *pre = r->words.v[k];
			size_t l = strlen(pre);
			bool hit;

			if (pre[l - 1] == '*')
				hit = pl >= l - 1 && memcmp(path, pre, l - 1) == 0;
			else if (pre[l - 1] == '/' && l > 1)
				hit = (pl >= l && memcmp(path, pre, l) == 0) ||
				      (pl == l - 1 && memcmp(path, pre, pl) == 0);
			else
				hit = pl == l && memcmp(path, pre, l) == 0;

			if (hit) {
				judge_reason(j, s, r->id, judge_fmt(j, "writes %s", path), r->cls,
				             t);
				if (r->cls > RISK_READ_ONLY)
					add_write(j, s, path, t);
				else
					j->write_events++; /* /dev/null: stated, nothing to confine
					                    */
				return;
			}
		}
	}
	judge_reason(j, s, "write-unlisted-path", judge_fmt(j, "writes %s", path),
	             j->p->write_unlisted, t);
	add_write(j, s, path, t);
}

/* A path that could not be spelled out (the scratch arena is full): the
 * write is judged as one known only at run time. */
static void judge_path_lost(struct judge *j, struct judge_seg *s, enum target_type t)
{
	judge_write_unknown(j, s, "writes a path the command is too large to spell", t);
}

/* Every path rule whose prefix lies below the absolute directory dir. */
static void judge_abs_tree(struct judge *j, struct judge_seg *s, const char *dir,
                           enum target_type t)
{
	size_t dl = strlen(dir);

	judge_abs_path(j, s, dir, t);
	while (dl > 1 && dir[dl - 1] == '/')
		dl--;
	{
		/* the set holds the tree: "dir/" */
		char *tree = arena_alloc(j->a, dl + 2);
		size_t tl = dl;

		if (tree == NULL) {
			judge_path_lost(j, s, t);
			return;
		}
		memcpy(tree, dir, dl);
		if (tl > 1)
			tree[tl++] = '/';
		tree[tl] = '\0';
		add_write(j, s, tree, t);
	}
	for (size_t i = 0; i < j->p->nrules; i++) {
		const struct policy_rule *r = &j->p->rules[i];

		if (r->kind != POLICY_RULE_PATH || !(r->targets & (1u << t)))
			continue;
		for (size_t k = 0; k < r->words.n; k++) {
			const char *pre = r->words.v[k];

			/* members are regular files: a device or /proc node below is
			 * replaced, not written through, so at most config_mutation */
			enum risk_class cls =
			    r->cls > RISK_CONFIG_MUTATION ? RISK_CONFIG_MUTATION : r->cls;

			if (cls <= j->p->write_unlisted)
				break;
			if ((dl == 1 || (strncmp(pre, dir, dl) == 0 && pre[dl] == '/')) &&
			    strlen(pre) > dl + 1) {
				judge_reason(j, s, r->id,
				             judge_fmt(j, "may write %s (below %s)", pre, dir), cls,
				             t);
				break;
			}
		}
	}
}

void judge_write_tree(struct judge *j, struct judge_seg *s, const struct sh_word *w,
                      enum target_type t)
{
	const char *p = NULL;

	if (!judge_lit(w) || (w->flags & (SHW_BRACE | SHW_GLOB)) || w->len == 0 ||
	    ((w->flags & SHW_TILDE) && !(w->len == 1 || w->text[1] == '/')) ||
	    (w->text[0] != '/' && !(w->flags & SHW_TILDE) && j->cwd_unknown)) {
		judge_write(j, s, w, t);
		return;
	}
	if (w->flags & SHW_TILDE) {
		p = judge_joinpath(j, j->p->home, w->text + 1, w->len - 1);
		if (p != NULL)
			judge_abs_tree(j, s, p, t);
		else
			judge_path_lost(j, s, t);
		return;
	}
	if (w->text[0] == '/') {
		p = judge_normpath(j, w->text, w->len);
		if (p != NULL)
			judge_abs_tree(j, s, p, t);
		else
			judge_path_lost(j, s, t);
		return;
	}
	for (size_t i = 0; i < j->ncwd; i++) {
		p = judge_joinpath(j, j->cwd[i], w->text, w->len);
		if (p != NULL)
			judge_abs_tree(j, s, p, t);
		else
			judge_path_lost(j, s, t);
	}
}

void judge_write(struct judge *j, struct judge_seg *s, const struct sh_word *w, enum target_type t)
{
	const char *text = w->text;
	size_t len = w->len;

	if (!judge_lit(w) || (w->flags & (SHW_BRACE | SHW_GLOB))) {
		judge_write_unknown(j, s,
		                    judge_fmt(j, "writes %.*s (a path known only at run time)",
		                              (int)(w->raw_len > 100 ? 100 : w->raw_len), w->raw),
		                    t);
		return;
	}
	if (len == 0) {
		judge_write_unknown(j, s, "writes an empty path", t);
		return;
	}
	if ((w->flags & SHW_TILDE) && len >= 1 && (len == 1 || text[1] == '/')) {
		const char *p = judge_joinpath(j, j->p->home, text + 1, len - 1);

		if (p != NULL)
			judge_abs_path(j, s, p, t);
		else
			judge_path_lost(j, s, t);
		return;
	}
	if (w->flags & SHW_TILDE) {
		judge_write_unknown(
		    j, s, judge_fmt(j, "writes %.*s (another user's home)", (int)len, text), t);
		return;
	}
	if (text[0] == '/') {
		const char *p = judge_normpath(j, text, len);

		if (p != NULL)
			judge_abs_path(j, s, p, t);
		else
			judge_path_lost(j, s, t);
		return;
	}
	if (j->cwd_unknown) {
		judge_write_unknown(j, s,
		                    judge_fmt(j,
		                              "writes %.*s relative to a directory known only at "
		                              "run time",
		                              (int)(len > 100 ? 100 : len), text),
		                    t);
		return;
	}
	for (size_t i = 0; i < j->ncwd; i++) {
		const char *p = judge_joinpath(j, j->cwd[i], text, len);

		if (p != NULL)
			judge_abs_path(j, s, p, t);
		else
			judge_path_lost(j, s, t);
	}
}

static bool word_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '-' || c == '.' || c == '+';
}

/* One token of code: a code word of the policy or a program it knows. */
static void scan_token(struct judge *j, struct judge_seg *s, const char *tok, size_t n,
                       enum target_type t)
{
	const struct policy_program *pr;
	enum risk_class said = RISK_READ_ONLY;

	while (n > 0 && (tok[n - 1] == '.' || tok[n - 1] == '-'))
		n--;
	while (n > 0 && (*tok == '.' || *tok == '-')) {
		tok++;
		n--;
	}
	if (n == 0)
		return;
	for (size_t i = 0; i < j->p->ncode_rules; i++) {
		const struct policy_rule *r = &j->p->rules[j->p->code_rules[i]];

		if ((r->targets & (1u << t)) && policy_strlist_has(&r->words, tok, n)) {
			judge_reason(j, s, r->id, judge_fmt(j, "code mentions %.*s", (int)n, tok),
			             r->cls, t);
			said = r->cls;
			break;
		}
	}
	pr = policy_program_find(j->p, tok, n);
	if (pr != NULL && pr->base[t] > RISK_READ_ONLY && pr->base[t] > said)
		judge_reason(j, s, "code-mentions-program",
		             judge_fmt(j, "code mentions %s, which can be %s", pr->name,
		                       risk_class_name(pr->base[t])),
		             pr->base[t], t);
}

void judge_scan_words(struct judge *j, struct judge_seg *s, const char *text, size_t len,
                      enum target_type t)
{
	size_t i = 0;

	while (i < len) {
		size_t st;

		while (i < len && !word_char((unsigned char)text[i]))
			i++;
		st = i;
		while (i < len && word_char((unsigned char)text[i]))
			i++;
		if (i > st && i - st <= 64) {
			/* mkfs.ext4 and shutil.rmtree: judge the whole and the parts. */
			scan_token(j, s, text + st, i - st, t);
			for (size_t k = st, ps = st; k <= i; k++) {
				if (k == i || text[k] == '.') {
					if (ps > st || k < i)
						scan_token(j, s, text + ps, k - ps, t);
					ps = k + 1;
				}
			}
		}
	}
}

void judge_opaque(struct judge *j, struct judge_seg *s, const char *what, const char *text,
                  size_t len, enum target_type t)
{
	j->odd = true;
	judge_reason(j, s, "opaque-code", what, j->p->opaque_code, t);
	if (j->obs != NULL && j->obs->opaque != NULL)
		j->obs->opaque(j->obs->ctx, what, text, len);
	if (text == NULL)
		return;
	netclient_code(j, s, what, text, len, t);
	judge_scan_words(j, s, text, len, t);
	if (memchr(text, '\'', len) || memchr(text, '"', len) || memchr(text, '\\', len)) {
		/* mk''fs, re"bo"ot, \reboot: the words after quote removal too */
		char *plain = arena_alloc(j->a, len + 1);
		size_t o = 0;

		for (size_t i = 0; plain != NULL && i < len; i++)
			if (text[i] != '\'' && text[i] != '"' && text[i] != '\\')
				plain[o++] = text[i];
		if (plain != NULL)
			judge_scan_words(j, s, plain, o, t);
	}
}
