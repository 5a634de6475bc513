/* grammar.c -- program grammars: parsed from the policy, then used to prove
 * that every word of a command is understood.
 *
 * Proving is a walk over the words with the grammar of the subcommand reached
 * so far; options of the enclosing levels stay valid (most tools parse their
 * options anywhere on the line).  Whatever is not explained stops the walk
 * and is named in the result.  Nothing here raises a class: the caller
 * decides what an unproven command is worth. */
#include "classifier/grammar.h"

#include "classifier/arena.h"
#include "lib/yamltree.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GRAM_MAX_DEPTH 8 /* subcommand levels */
#define WORD_SHOWN     60

/* ---- parsing ------------------------------------------------------------------------ */

struct gctx {
	struct arena *a;
	char *err;
	size_t errlen;
	int *line, *col;
	bool failed;
};

__attribute__((format(printf, 3, 4))) static void gerr(struct gctx *c, const struct yt_node *at,
                                                       const char *fmt, ...)
{
	va_list ap;

	if (c->failed)
		return;
	c->failed = true;
	*c->line = at ? at->line : 1;
	*c->col = at ? at->col : 1;
	if (c->errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(c->err, c->errlen, fmt, ap);
	va_end(ap);
}

static void *galloc(struct gctx *c, const struct yt_node *at, size_t n)
{
	void *v = arena_alloc(c->a, n ? n : 1);

	if (v == NULL)
		gerr(c, at, "policy too large");
	else
		memset(v, 0, n ? n : 1);
	return v;
}

static bool is_opt_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       ch == '-' || ch == '_' || ch == '.' || ch == '?' || ch == '@' || ch == '#' ||
	       ch == '+';
}

/* One option token: -x, -x=, -x=?, --long, --long=, --long=?, -long (dash style). */
static void parse_token(struct gctx *c, const struct yt_node *at, const char *tok, size_t tl,
                        bool refused, bool dash, struct gram_opt *o)
{
	size_t nl = tl;
	char *name;

	o->arity = GRAM_FLAG;
	if (tl >= 2 && tok[tl - 2] == '=' && tok[tl - 1] == 'b') {
		o->arity = GRAM_BOOL;
		nl = tl - 2;
	} else if (tl >= 2 && tok[tl - 2] == '=' && tok[tl - 1] == ';') {
		o->arity = GRAM_COMMAND;
		nl = tl - 2;
	} else if (tl >= 2 && tok[tl - 2] == '=' && tok[tl - 1] == '?') {
		o->arity = GRAM_OPTIONAL;
		nl = tl - 2;
	} else if (tl >= 1 && tok[tl - 1] == '=') {
		o->arity = GRAM_VALUE;
		nl = tl - 1;
	}
	if (nl < 2 || tok[0] != '-' || (nl == 2 && tok[1] == '-') || nl > 64) {
		gerr(
		    c, at,
		    "option `%.*s` must be -x, --name or -name, optionally followed by =, =? or =;",
		    (int)tl, tok);
		return;
	}
	for (size_t i = 1; i < nl; i++) {
		if (!is_opt_char(tok[i])) {
			gerr(c, at, "option `%.*s` holds an invalid character", (int)tl, tok);
			return;
		}
	}
	if (!dash && tok[1] != '-' && nl != 2) {
		gerr(c, at,
		     "option `%.*s`: a single-dash option has one letter unless the grammar has "
		     "`style: dash`",
		     (int)tl, tok);
		return;
	}
	name = arena_strndup(c->a, tok, nl);
	if (name == NULL) {
		gerr(c, at, "policy too large");
		return;
	}
	o->name = name;
	o->len = (unsigned char)nl;
	o->refused = refused;
}

/* Counts or fills the option tokens of a scalar or a list of scalars. */
static size_t parse_tokens(struct gctx *c, const struct yt_node *v, const char *key, bool refused,
                           bool dash, struct gram_opt *out)
{
	size_t count = 0;
	size_t nitems = v->kind == YT_SEQ ? v->n : 1;

	if (v->kind == YT_MAP) {
		gerr(c, v, "%s: expected option tokens (text or a list), got a mapping", key);
		return 0;
	}
	for (size_t i = 0; i < nitems && !c->failed; i++) {
		const struct yt_node *it = v->kind == YT_SEQ ? v->items[i] : v;
		const char *s;

		if (it->kind != YT_SCALAR) {
			gerr(c, it, "%s: items must be option tokens", key);
			return 0;
		}
		s = it->scalar;
		while (*s && !c->failed) {
			size_t tl = 0;

			while (*s == ' ' || *s == '\t' || *s == '\n' || *s == ',')
				s++;
			while (s[tl] && s[tl] != ' ' && s[tl] != '\t' && s[tl] != '\n' &&
			       s[tl] != ',')
				tl++;
			if (tl == 0)
				break;
			if (out != NULL)
				parse_token(c, it, s, tl, refused, dash, &out[count]);
			count++;
			s += tl;
		}
	}
	return count;
}

static void parse_operands(struct gctx *c, const struct yt_node *v, int *max)
{
	char *end;
	long n;

	if (v->kind != YT_SCALAR) {
		gerr(c, v, "operands: expected any, none or a number");
		return;
	}
	if (strcmp(v->scalar, "any") == 0) {
		*max = -1;
		return;
	}
	if (strcmp(v->scalar, "none") == 0) {
		*max = 0;
		return;
	}
	n = strtol(v->scalar, &end, 10);
	if (end == v->scalar || *end != '\0' || n < 0 || n > 64) {
		gerr(c, v, "operands: expected any, none or a number from 0 to 64, got `%s`",
		     v->scalar);
		return;
	}
	*max = (int)n;
}

static bool parse_bool(struct gctx *c, const struct yt_node *k, const struct yt_node *v)
{
	if (v->kind == YT_SCALAR && strcmp(v->scalar, "true") == 0)
		return true;
	if (!(v->kind == YT_SCALAR && strcmp(v->scalar, "false") == 0))
		gerr(c, v, "%s: expected true or false", k->scalar);
	return false;
}

static void parse_node(struct gctx *c, const struct yt_node *m, struct grammar *g,
                       const struct grammar *parent, int depth);

/* filter_refuse: options of this grammar (its `options:`) with which the
 * program reads more than stdin (grep -f FILE, -r); net_options: options
 * with which it reads the target's network view (iptables -L).  Marked on
 * the options. */
static void parse_marked(struct gctx *c, const struct yt_node *v, struct grammar *g,
                         const char *key)
{
	size_t n = parse_tokens(c, v, key, false, g->dash_long, NULL);
	bool filter = strcmp(key, "filter_refuse") == 0;
	struct gram_opt *tmp;

	if (c->failed || n == 0)
		return;
	if (filter && g->filter_ops < 0) {
		gerr(c, v, "filter_refuse: only a grammar with `filter:` refuses filter options");
		return;
	}
	tmp = galloc(c, v, n * sizeof(*tmp));
	if (c->failed)
		return;
	parse_tokens(c, v, key, false, g->dash_long, tmp);
	for (size_t i = 0; i < n && !c->failed; i++) {
		bool found = false;

		for (size_t k = 0; k < g->nopts; k++) {
			if (strcmp(g->opts[k].name, tmp[i].name) == 0) {
				if (filter)
					g->opts[k].not_filter = true;
				else
					g->opts[k].net_view = true;
				found = true;
			}
		}
		if (!found)
			gerr(c, v, "%s: `%s` is not one of this grammar's options", key,
			     tmp[i].name);
	}
}

/* subcommands: {name: node, "name|alias": node, name: any|none|N} */
static void parse_subs(struct gctx *c, const struct yt_node *m, struct grammar *g, int depth)
{
	if (m->kind != YT_MAP || m->n == 0) {
		gerr(c, m, "subcommands: expected a mapping of subcommand names to grammars");
		return;
	}
	if (depth >= GRAM_MAX_DEPTH) {
		gerr(c, m, "subcommands nested deeper than %d levels", GRAM_MAX_DEPTH);
		return;
	}
	g->subs = galloc(c, m, m->n * sizeof(*g->subs));
	if (c->failed)
		return;
	g->nsubs = m->n;
	for (size_t i = 0; i < m->n && !c->failed; i++) {
		const struct yt_node *k = m->items[2 * i], *v = m->items[2 * i + 1];
		struct grammar *s = &g->subs[i];
		size_t nnames = 1, at = 0;
		const char *p;

		if (k->kind != YT_SCALAR || k->scalar[0] == '\0' || k->scalar[0] == '-' ||
		    k->scalar[0] == '|' || strstr(k->scalar, "||") != NULL ||
		    k->scalar[strlen(k->scalar) - 1] == '|' || strchr(k->scalar, ' ') != NULL) {
			gerr(c, k,
			     "subcommands: a key is a name or names joined by | (no spaces, no "
			     "leading -)");
			return;
		}
		for (p = k->scalar; *p; p++)
			nnames += *p == '|';
		s->aliases = galloc(c, k, nnames * sizeof(char *));
		if (c->failed)
			return;
		for (p = k->scalar; *p;) {
			size_t l = strcspn(p, "|");
			char *nm = arena_strndup(c->a, p, l);

			if (nm == NULL) {
				gerr(c, k, "policy too large");
				return;
			}
			if (at == 0)
				s->name = nm;
			s->aliases[at++] = nm;
			p += l;
			if (*p == '|')
				p++;
		}
		s->naliases = at;
		for (size_t j = 0; j < i; j++)
			for (size_t a = 0; a < g->subs[j].naliases; a++)
				for (size_t b = 0; b < s->naliases; b++)
					if (strcmp(g->subs[j].aliases[a], s->aliases[b]) == 0) {
						gerr(c, k, "subcommand `%s` listed twice",
						     s->aliases[b]);
						return;
					}
		s->max_ops = 0;
		s->filter_ops = -1;
		s->abbrev = g->abbrev;
		s->dash_long = g->dash_long;
		s->separators = g->separators;
		s->nseparators = g->nseparators;
		if (v->kind == YT_SCALAR) {
			if (v->scalar[0] != '\0')
				parse_operands(c, v, &s->max_ops);
		} else {
			parse_node(c, v, s, g, depth + 1);
		}
	}
}

static void parse_node(struct gctx *c, const struct yt_node *m, struct grammar *g,
                       const struct grammar *parent, int depth)
{
	const struct yt_node *opts = NULL, *refuse = NULL, *subs = NULL, *nofilter = NULL;
	const struct yt_node *netopts = NULL;
	size_t n1 = 0, n2 = 0;

	if (m->kind != YT_MAP) {
		gerr(c, m,
		     "a grammar must be a mapping (options, refuse, operands, subcommands...)");
		return;
	}
	g->max_ops = 0;
	g->filter_ops = -1;
	if (parent != NULL) {
		g->abbrev = parent->abbrev;
		g->dash_long = parent->dash_long;
		g->separators = parent->separators;
		g->nseparators = parent->nseparators;
	}
	for (size_t i = 0; i < m->n && !c->failed; i++) {
		const struct yt_node *k = m->items[2 * i], *v = m->items[2 * i + 1];
		const char *key = k->kind == YT_SCALAR ? k->scalar : "?";

		if (strcmp(key, "options") == 0) {
			opts = v;
		} else if (strcmp(key, "refuse") == 0) {
			refuse = v;
		} else if (strcmp(key, "operands") == 0) {
			parse_operands(c, v, &g->max_ops);
		} else if (strcmp(key, "subcommands") == 0) {
			subs = v;
		} else if (strcmp(key, "abbrev") == 0) {
			if (v->kind == YT_SCALAR && strcmp(v->scalar, "none") == 0)
				g->abbrev = GRAM_ABBREV_NONE;
			else if (v->kind == YT_SCALAR && strcmp(v->scalar, "unique") == 0)
				g->abbrev = GRAM_ABBREV_UNIQUE;
			else if (v->kind == YT_SCALAR && strcmp(v->scalar, "first") == 0)
				g->abbrev = GRAM_ABBREV_FIRST;
			else
				gerr(c, v, "abbrev: expected none, unique or first");
		} else if (strcmp(key, "style") == 0) {
			if (v->kind == YT_SCALAR && strcmp(v->scalar, "dash") == 0)
				g->dash_long = true;
			else if (v->kind == YT_SCALAR && strcmp(v->scalar, "gnu") == 0)
				g->dash_long = false;
			else
				gerr(c, v, "style: expected gnu or dash");
		} else if (strcmp(key, "sub_abbrev") == 0) {
			if (v->kind == YT_SCALAR && strcmp(v->scalar, "prefix") == 0)
				g->sub_prefix = true;
			else if (!(v->kind == YT_SCALAR && strcmp(v->scalar, "none") == 0))
				gerr(c, v, "sub_abbrev: expected prefix or none");
		} else if (strcmp(key, "numeric") == 0) {
			g->numeric = parse_bool(c, k, v);
		} else if (strcmp(key, "separators") == 0) {
			size_t cnt = v->kind == YT_SEQ ? v->n : 1;

			g->separators = galloc(c, v, cnt * sizeof(char *));
			for (size_t q = 0; q < cnt && !c->failed; q++) {
				const struct yt_node *it = v->kind == YT_SEQ ? v->items[q] : v;

				if (it->kind != YT_SCALAR || it->scalar[0] == '\0') {
					gerr(c, it, "separators: expected words");
					break;
				}
				g->separators[q] =
				    arena_strndup(c->a, it->scalar, strlen(it->scalar));
				if (g->separators[q] == NULL)
					gerr(c, it, "policy too large");
			}
			g->nseparators = cnt;
		} else if (strcmp(key, "signals") == 0) {
			g->signals = parse_bool(c, k, v);
		} else if (strcmp(key, "free") == 0) {
			g->free_words = parse_bool(c, k, v);
		} else if (strcmp(key, "net") == 0) {
			if (v->kind == YT_SCALAR && strcmp(v->scalar, "view") == 0)
				g->net = GRAM_NET_VIEW;
			else if (v->kind == YT_SCALAR && strcmp(v->scalar, "send") == 0)
				g->net = GRAM_NET_SEND;
			else if (v->kind == YT_SCALAR && strcmp(v->scalar, "none") == 0)
				g->net = GRAM_NET_NONE;
			else
				gerr(c, v, "net: expected view, send or none");
		} else if (strcmp(key, "filter") == 0) {
			int n = 0;

			parse_operands(c, v, &n);
			if (!c->failed && n < 0)
				gerr(
				    c, v,
				    "filter: expected how many operands a filter takes (a number)");
			g->filter_ops = n;
		} else if (strcmp(key, "filter_refuse") == 0) {
			nofilter = v;
		} else if (strcmp(key, "net_options") == 0) {
			netopts = v;
		} else {
			gerr(c, k, "unknown key `%s` in a grammar", key);
		}
	}
	if (c->failed)
		return;
	if (opts != NULL)
		n1 = parse_tokens(c, opts, "options", false, g->dash_long, NULL);
	if (refuse != NULL && !c->failed)
		n2 = parse_tokens(c, refuse, "refuse", true, g->dash_long, NULL);
	if (c->failed)
		return;
	g->opts = galloc(c, m, (n1 + n2) * sizeof(*g->opts));
	if (c->failed)
		return;
	if (opts != NULL)
		parse_tokens(c, opts, "options", false, g->dash_long, g->opts);
	if (refuse != NULL && !c->failed)
		parse_tokens(c, refuse, "refuse", true, g->dash_long, g->opts + n1);
	g->nopts = n1 + n2;
	for (size_t i = 0; i < g->nopts && !c->failed; i++)
		for (size_t k = 0; k < i; k++)
			if (strcmp(g->opts[i].name, g->opts[k].name) == 0)
				gerr(c, i < n1 ? opts : refuse, "option `%s` listed twice",
				     g->opts[i].name);
	if (nofilter != NULL && !c->failed)
		parse_marked(c, nofilter, g, "filter_refuse");
	if (netopts != NULL && !c->failed)
		parse_marked(c, netopts, g, "net_options");
	if (subs != NULL && !c->failed)
		parse_subs(c, subs, g, depth);
}

int grammar_parse(struct arena *a, const struct yt_node *n, const char *prog, struct grammar *g,
                  char *err, size_t errlen, int *at_line, int *at_col)
{
	struct gctx c = {.a = a, .err = err, .errlen = errlen, .line = at_line, .col = at_col};

	memset(g, 0, sizeof(*g));
	g->name = prog;
	g->filter_ops = -1;
	parse_node(&c, n, g, NULL, 0);
	return c.failed ? -1 : 0;
}

/* ---- proving -------------------------------------------------------------------------- */

static bool word_is(const struct sh_word *w, const char *s)
{
	size_t n = strlen(s);

	return !(w->flags & SHW_COMPUTED) && w->len == n && memcmp(w->text, s, n) == 0;
}

struct walker {
	const char *prog;
	const struct grammar *chain[GRAM_MAX_DEPTH + 1];
	const char *names[GRAM_MAX_DEPTH + 1]; /* the subcommand words, spelled out */
	size_t depth;
	struct arena *a;
	struct gram_proof *out;
	size_t cap; /* room in out->items (items_wanted) */
};

/* Records one option or operand for out->items (items_wanted). */
static void add_item(struct walker *k, const struct gram_opt *o, const struct sh_word *word,
                     const char *value, size_t vlen, const struct sh_word *vword)
{
	struct gram_proof *out = k->out;

	if (!out->items_wanted)
		return;
	if (out->items == NULL || out->nitems >= k->cap) {
		out->items_lost = true;
		return;
	}
	out->items[out->nitems++] = (struct gram_item){.opt = o,
	                                               .word = word,
	                                               .value = value,
	                                               .vlen = vlen,
	                                               .vword = vword,
	                                               .level = k->chain[k->depth]};
}

static const char *path_name(struct walker *k)
{
	char buf[200];
	size_t n = 0;

	for (size_t i = 0; i <= k->depth; i++) {
		const char *s = i == 0 ? k->prog : k->names[i];
		size_t l = strlen(s);

		if (n + l + 2 >= sizeof(buf))
			break;
		if (i > 0)
			buf[n++] = ' ';
		memcpy(buf + n, s, l);
		n += l;
	}
	buf[n] = '\0';
	{
		const char *r = arena_strndup(k->a, buf, n);

		return r ? r : k->prog;
	}
}

__attribute__((format(printf, 2, 3))) static void refuse(struct walker *k, const char *fmt, ...)
{
	char buf[400];
	va_list ap;
	const char *s;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	s = arena_strndup(k->a, buf, strlen(buf));
	k->out->ok = false;
	k->out->why = s ? s : "a word is not accounted for; cannot prove read-only";
}

static int shown(const struct sh_word *w)
{
	return (int)(w->len > WORD_SHOWN ? WORD_SHOWN : w->len);
}

/* The option named name[0..nl) in the chain: exact first, then by the
 * grammar's abbreviation rule.  *ambiguous when several prefixes match. */
static const struct gram_opt *find_opt(struct walker *k, const char *name, size_t nl, bool is_long,
                                       bool *ambiguous)
{
	const struct gram_opt *hit = NULL;
	unsigned char ab = k->chain[k->depth]->abbrev;

	*ambiguous = false;
	for (size_t d = k->depth + 1; d-- > 0;) {
		const struct grammar *g = k->chain[d];

		for (size_t i = 0; i < g->nopts; i++)
			if (g->opts[i].len == nl && memcmp(g->opts[i].name, name, nl) == 0)
				return &g->opts[i];
	}
	if (ab == GRAM_ABBREV_NONE || !is_long)
		return NULL;
	for (size_t d = k->depth + 1; d-- > 0;) {
		const struct grammar *g = k->chain[d];

		for (size_t i = 0; i < g->nopts; i++) {
			const struct gram_opt *o = &g->opts[i];

			if (o->len <= nl || memcmp(o->name, name, nl) != 0)
				continue;
			if (ab == GRAM_ABBREV_FIRST)
				return o;
			if (hit != NULL && hit != o) {
				*ambiguous = true;
				return NULL;
			}
			hit = o;
		}
	}
	return hit;
}

static bool all_digits(const char *s, size_t n)
{
	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

/* A signal's name, with or without SIG (kill -HUP, pkill -SIGTERM). */
static bool is_signal(const char *s, size_t n)
{
	static const char *const names[] = {
	    "HUP",  "INT",   "QUIT", "ILL",  "TRAP", "ABRT", "IOT",   "BUS",    "FPE",
	    "KILL", "USR1",  "SEGV", "USR2", "PIPE", "ALRM", "TERM",  "STKFLT", "CHLD",
	    "CONT", "STOP",  "TSTP", "TTIN", "TTOU", "URG",  "XCPU",  "XFSZ",   "VTALRM",
	    "PROF", "WINCH", "IO",   "POLL", "PWR",  "SYS",  "RTMIN", "RTMAX"};

	if (n > 3 && memcmp(s, "SIG", 3) == 0) {
		s += 3;
		n -= 3;
	}
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strlen(names[i]) == n && memcmp(names[i], s, n) == 0)
			return true;
	return false;
}

/* One option word at w[*i]; consumes its value.  false: refused (out set). */
static bool take_option(struct walker *k, const struct sh_word *w, size_t n, size_t *i)
{
	const struct sh_word *x = &w[*i];
	const struct grammar *g = k->chain[k->depth];
	const char *t = x->text;
	size_t len = x->len;
	const struct gram_opt *o;
	bool amb;

	if (g->numeric && all_digits(t + 1, len - 1))
		return true;
	if (g->signals && is_signal(t + 1, len - 1))
		return true;
	if (g->dash_long || (len > 2 && t[1] == '-')) {
		/* one long option: --name[=value], or -name in dash style */
		size_t nl = len;
		const char *eq = NULL;

		if (!g->dash_long) {
			eq = memchr(t, '=', len);
			nl = eq ? (size_t)(eq - t) : len;
		} else if (len > 2 && t[1] == '-') {
			/* ip and friends take --name for -name */
			t++;
			len--;
			nl = len;
		}
		o = find_opt(k, t, nl, true, &amb);
		if (o == NULL) {
			refuse(k, "%s option `%.*s` for %s; cannot prove read-only",
			       amb ? "ambiguous" : "unknown", shown(x), x->text, path_name(k));
			return false;
		}
		if (o->refused) {
			refuse(k,
			       "option `%s` of %s writes or runs something; cannot prove read-only",
			       o->name, path_name(k));
			return false;
		}
		if (o->not_filter)
			k->out->filter_refused = true;
		if (o->net_view)
			k->out->net_option = true;
		if (eq != NULL && o->arity == GRAM_FLAG) {
			refuse(k,
			       "option `%s` of %s takes no value (`%.*s`); cannot prove read-only",
			       o->name, path_name(k), shown(x), x->text);
			return false;
		}
		if (o->arity == GRAM_COMMAND) {
			add_item(k, o, x, NULL, 0, NULL);
			while (++(*i) < n && !word_is(&w[*i], ";") && !word_is(&w[*i], "+"))
				;
			if (*i >= n) {
				refuse(
				    k,
				    "option `%s` of %s has no closing `;`; cannot prove read-only",
				    o->name, path_name(k));
				return false;
			}
			return true;
		}
		if (eq == NULL && o->arity == GRAM_BOOL) {
			static const char *const b[] = {"0",   "1",  "true", "false",
			                                "yes", "no", "on",   "off"};

			for (size_t q = 0; *i + 1 < n && q < sizeof(b) / sizeof(b[0]); q++)
				if (word_is(&w[*i + 1], b[q])) {
					(*i)++;
					add_item(k, o, x, w[*i].text, w[*i].len, &w[*i]);
					return true;
				}
			add_item(k, o, x, NULL, 0, NULL);
			return true;
		}
		if (eq == NULL && o->arity == GRAM_VALUE) {
			if (*i + 1 >= n) {
				refuse(k,
				       "option `%s` of %s lacks its value; cannot prove read-only",
				       o->name, path_name(k));
				return false;
			}
			(*i)++;
			add_item(k, o, x, w[*i].text, w[*i].len, &w[*i]);
			return true;
		}
		if (eq != NULL)
			add_item(k, o, x, eq + 1, (size_t)(x->text + x->len - (eq + 1)), NULL);
		else
			add_item(k, o, x, NULL, 0, NULL);
		return true;
	}
	/* a cluster of short options: -alh, -n5, -ofile */
	for (size_t c = 1; c < len; c++) {
		char nm[3] = {'-', t[c], '\0'};

		o = find_opt(k, nm, 2, false, &amb);
		if (o == NULL) {
			refuse(k, "unknown option `-%c` (in `%.*s`) for %s; cannot prove read-only",
			       t[c], shown(x), x->text, path_name(k));
			return false;
		}
		if (o->refused) {
			refuse(k,
			       "option `%s` of %s writes or runs something; cannot prove read-only",
			       o->name, path_name(k));
			return false;
		}
		if (o->not_filter)
			k->out->filter_refused = true;
		if (o->net_view)
			k->out->net_option = true;
		if (o->arity == GRAM_FLAG) {
			add_item(k, o, x, NULL, 0, NULL);
			continue;
		}
		if (c + 1 < len || o->arity == GRAM_OPTIONAL) {
			/* the rest of the word is the value */
			add_item(k, o, x, c + 1 < len ? t + c + 1 : NULL,
			         c + 1 < len ? len - c - 1 : 0, NULL);
			return true;
		}
		if (*i + 1 >= n) {
			refuse(k, "option `%s` of %s lacks its value; cannot prove read-only",
			       o->name, path_name(k));
			return false;
		}
		(*i)++;
		add_item(k, o, x, w[*i].text, w[*i].len, &w[*i]);
		return true;
	}
	return true;
}

/* Could a word known only at run time be an option? */
static bool may_be_option(const struct sh_word *w, bool options_from_values)
{
	/* what prints words the command spelled, decodes them, or reads a file
	 * someone wrote; other programs' output (find, hostname, qm list | awk)
	 * is data */
	static const char *const makers[] = {"echo",  "printf", "cat", "tr",      "rev", "base64",
	                                     "xxd",   "eval",   "--",  "$'",      "<",   "tac",
	                                     "paste", "jq",     "yq",  "envsubst"};

	if (w->prefix > 0)
		return w->text[0] == '-';
	if (w->raw_len > 1 && (w->raw[0] == '<' || w->raw[0] == '>') && w->raw[1] == '(')
		return false; /* <(...) is a /dev/fd path */
	if (options_from_values)
		return true;
	for (size_t i = 0; i < sizeof(makers) / sizeof(makers[0]); i++)
		if (memmem(w->raw, w->raw_len, makers[i], strlen(makers[i])) != NULL)
			return true;
	return false;
}

/* The subcommand w names, and the name it stands for (*name: the alias it
 * spells, or the one it abbreviates). */
static const struct grammar *find_sub(const struct grammar *g, const struct sh_word *w,
                                      const char **name)
{
	for (size_t i = 0; i < g->nsubs; i++)
		for (size_t a = 0; a < g->subs[i].naliases; a++)
			if (strlen(g->subs[i].aliases[a]) == w->len &&
			    memcmp(g->subs[i].aliases[a], w->text, w->len) == 0) {
				*name = g->subs[i].aliases[a];
				return &g->subs[i];
			}
	if (!g->sub_prefix || w->len == 0)
		return NULL;
	for (size_t i = 0; i < g->nsubs; i++)
		for (size_t a = 0; a < g->subs[i].naliases; a++)
			if (strlen(g->subs[i].aliases[a]) > w->len &&
			    memcmp(g->subs[i].aliases[a], w->text, w->len) == 0) {
				*name = g->subs[i].aliases[a];
				return &g->subs[i];
			}
	return NULL;
}

static void rewrite(struct walker *k, const struct sh_word *w, size_t n, size_t i, const char *name)
{
	struct sh_word *c = (struct sh_word *)k->out->canon;

	if (c == NULL) {
		c = arena_alloc(k->a, (n ? n : 1) * sizeof(*c));
		if (c == NULL) {
			/* the rules would see the abbreviation, not what it means */
			refuse(k,
			       "command too large to spell out %s's abbreviations; cannot prove "
			       "read-only",
			       k->prog);
			return;
		}
		memcpy(c, w, n * sizeof(*c));
		k->out->canon = c;
	}
	c[i].text = name;
	c[i].len = strlen(name);
	c[i].prefix = c[i].len;
}

void grammar_prove(const struct grammar *g, const char *prog, const struct sh_word *w, size_t n,
                   bool extra, bool options_from_values, struct arena *a, struct gram_proof *out)
{
	struct walker k = {.prog = prog, .a = a, .out = out};
	bool dd = false, sub_pending, braces = false;
	int ops = 0;

	out->ok = true;
	out->why = NULL;
	out->canon = NULL;
	out->node = g;
	out->ops = 0;
	out->filter_refused = false;
	out->net_option = false;
	out->items_lost = false;
	out->items = NULL;
	out->nitems = 0;
	if (out->items_wanted && n > 0) {
		size_t cap = 0;

		/* a cluster (-sSfL) is one item per letter (a few: past them the
		 * parse says it lost some) */
		for (size_t i = 0; i < n; i++)
			cap += !(w[i].flags & SHW_COMPUTED) && w[i].len > 2 &&
			               w[i].text[0] == '-' && w[i].text[1] != '-'
			           ? (w[i].len - 1 < 16 ? w[i].len - 1 : 16)
			           : 1;
		out->items = arena_alloc(a, cap * sizeof(*out->items));
		k.cap = out->items ? cap : 0;
	}
	k.chain[0] = g;
	if (g->free_words)
		return;
	sub_pending = g->nsubs > 0;
	for (size_t i = 0; i < n; i++) {
		const struct sh_word *x = &w[i];
		const struct grammar *cur = k.chain[k.depth];

		for (size_t q = 0; q < cur->nseparators; q++) {
			if (word_is(x, cur->separators[q])) {
				refuse(&k,
				       "`%s` starts another command for %s; cannot prove read-only",
				       cur->separators[q], path_name(&k));
				return;
			}
		}
		if (!dd && word_is(x, "--")) {
			dd = true;
			continue;
		}
		if (!dd && !(x->flags & SHW_COMPUTED) && x->len > 1 && x->text[0] == '-') {
			if (!take_option(&k, w, n, &i))
				return;
			continue;
		}
		if (x->flags & SHW_COMPUTED) {
			if (!dd && may_be_option(x, options_from_values)) {
				refuse(&k,
				       "word `%.*s` for %s is known only at run time and may be an "
				       "option; cannot prove read-only",
				       (int)(x->raw_len > WORD_SHOWN ? WORD_SHOWN : x->raw_len),
				       x->raw, path_name(&k));
				return;
			}
			if (sub_pending) {
				refuse(&k,
				       "subcommand of %s known only at run time (`%.*s`); cannot "
				       "prove "
				       "read-only",
				       path_name(&k),
				       (int)(x->raw_len > WORD_SHOWN ? WORD_SHOWN : x->raw_len),
				       x->raw);
				return;
			}
		} else if (sub_pending) {
			const char *nm = NULL;
			const struct grammar *sub = find_sub(cur, x, &nm);

			if (sub == NULL) {
				refuse(&k,
				       "unknown subcommand `%.*s` for %s; cannot prove read-only",
				       shown(x), x->text, path_name(&k));
				return;
			}
			if (strlen(nm) != x->len) {
				rewrite(&k, w, n, i, nm);
				if (!out->ok)
					return;
			}
			k.names[k.depth + 1] = nm;
			k.chain[++k.depth] = sub;
			out->node = sub;
			sub_pending = sub->nsubs > 0;
			ops = 0;
			out->ops = 0;
			if (sub->free_words)
				return;
			continue;
		}
		ops++;
		out->ops = ops;
		add_item(&k, NULL, x, NULL, 0, NULL);
		braces = braces || word_is(x, "{}");
		if (cur->max_ops >= 0 && ops > cur->max_ops) {
			refuse(&k, "extra operand `%.*s` for %s; cannot prove read-only",
			       (int)(x->raw_len > WORD_SHOWN ? WORD_SHOWN : x->raw_len), x->raw,
			       path_name(&k));
			return;
		}
	}
	if (extra && !braces) {
		/* xargs -I{} cmd {}: its words replace {}; otherwise they are appended */
		const struct grammar *cur = k.chain[k.depth];

		if (sub_pending)
			refuse(&k, "xargs supplies the subcommand of %s; cannot prove read-only",
			       path_name(&k));
		else if (cur->max_ops >= 0 && ops >= cur->max_ops)
			refuse(&k, "xargs adds words %s does not take; cannot prove read-only",
			       path_name(&k));
	}
}

bool grammar_net_view(const struct gram_proof *gp)
{
	return gp->ok && gp->node != NULL && (gp->node->net == GRAM_NET_VIEW || gp->net_option);
}

bool grammar_is_filter(const struct gram_proof *gp, bool extra)
{
	return gp->ok && gp->node != NULL && gp->node->filter_ops >= 0 && !extra &&
	       gp->ops <= gp->node->filter_ops && !gp->filter_refused;
}

const struct sh_word *grammar_first_option(const struct sh_word *w, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (word_is(&w[i], "--"))
			return NULL;
		if (!(w[i].flags & SHW_COMPUTED) && w[i].len > 1 && w[i].text[0] == '-')
			return &w[i];
		if ((w[i].flags & SHW_COMPUTED) && w[i].prefix > 0 && w[i].text[0] == '-')
			return &w[i];
	}
	return NULL;
}
