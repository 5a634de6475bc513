/* shparse.c -- lexer and recursive-descent parser for shell commands.
 *
 * One struct parser walks the source once.  Words are lexed with quote
 * removal as they are read; a $( ... ) is parsed by recursing into the list
 * parser on the same source, a `...` body is unescaped and parsed by a child
 * parser.  Here-doc bodies are read when the lexer passes the newline that
 * ends their line, as the shell does.  Any error stops the parse: the caller
 * treats an unparsed command as not understood. */
#include "classifier/shparse.h"

#include "classifier/arena.h"

#include <stdint.h>
#include <string.h>

enum tok_type { T_EOF, T_NEWLINE, T_WORD, T_OP, T_REDIR };
enum tok_op { O_SEMI, O_DSEMI, O_AMP, O_AND, O_OR, O_PIPE, O_LPAREN, O_RPAREN };

struct tok {
	enum tok_type type;
	int op; /* enum tok_op for T_OP, enum sh_redir_op for T_REDIR */
	int fd;
	struct sh_word w;
	size_t start;
};

struct vec {
	char *d;
	size_t n, cap, esz;
};

struct wbuf {
	char *d;
	size_t n, cap;
	size_t first_exp; /* length of text before the first expansion; SIZE_MAX: none yet */
	bool discard;
};

/* Notes that an expansion happened at the current end of b. */
static void mark_expansion(struct wbuf *b, unsigned *flags, unsigned add)
{
	if (!(*flags & SHW_COMPUTED) && b->first_exp == SIZE_MAX)
		b->first_exp = b->n;
	*flags |= add;
}

struct pending_doc {
	struct sh_heredoc *doc;
	const char *delim;
	size_t dlen;
	bool strip, quoted;
};

#define MAX_PENDING_DOCS 32

struct parser {
	struct arena *a;
	const char *s;
	size_t len, pos;
	int depth, max_depth;
	const char *err;
	size_t err_pos;
	struct tok la;
	bool have_la;
	struct pending_doc docs[MAX_PENDING_DOCS];
	int ndocs;
	struct vec *subs; /* shared with child parsers */
	int in_cmdsub;    /* inside $( ... ): a here-doc may end at "DELIM)" */
	bool *doc_at_eof; /* shared: a here-doc ran to the end of the input */
	int *retries;     /* shared: $(( re-read as $( ( -- bounded, or it is exponential */
};

#define MAX_RETRIES 32

static struct sh_node *parse_list(struct parser *p);
static struct sh_node *parse_command(struct parser *p);
static void lex_dollar(struct parser *p, struct wbuf *b, unsigned *flags, bool in_dq);
static void lex_backtick(struct parser *p, struct wbuf *b, unsigned *flags, bool in_dq);

static void fail(struct parser *p, const char *why)
{
	if (p->err == NULL) {
		p->err = why;
		p->err_pos = p->pos;
	}
}

static void *vec_push(struct parser *p, struct vec *v)
{
	if (v->n == v->cap) {
		size_t ncap = v->cap ? v->cap * 2 : 4;
		char *nd = arena_alloc(p->a, ncap * v->esz);

		if (nd == NULL) {
			fail(p, "command too large to judge");
			return NULL;
		}
		if (v->n)
			memcpy(nd, v->d, v->n * v->esz);
		v->d = nd;
		v->cap = ncap;
	}
	return v->d + v->esz * v->n++;
}

static void wb_add(struct parser *p, struct wbuf *b, const char *s, size_t n)
{
	if (b->discard || p->err)
		return;
	if (b->n + n + 1 > b->cap) {
		size_t ncap = b->cap ? b->cap * 2 : 32;
		char *nd;

		while (ncap < b->n + n + 1)
			ncap *= 2;
		nd = arena_alloc(p->a, ncap);
		if (nd == NULL) {
			fail(p, "command too large to judge");
			return;
		}
		if (b->n)
			memcpy(nd, b->d, b->n);
		b->d = nd;
		b->cap = ncap;
	}
	memcpy(b->d + b->n, s, n);
	b->n += n;
	b->d[b->n] = '\0';
}

static void wb_addc(struct parser *p, struct wbuf *b, char c)
{
	wb_add(p, b, &c, 1);
}

static int peekc(const struct parser *p, size_t off)
{
	size_t i = p->pos + off;

	return i < p->len ? (unsigned char)p->s[i] : -1;
}

static bool is_meta(int c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '&' || c == '|' || c == '<' ||
	       c == '>' || c == '(' || c == ')';
}

static bool is_name_start(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_name_char(int c)
{
	return is_name_start(c) || (c >= '0' && c <= '9');
}

static bool depth_enter(struct parser *p)
{
	if (++p->depth > p->max_depth) {
		fail(p, "nesting too deep to judge");
		return false;
	}
	return true;
}

static void add_sub(struct parser *p, struct sh_node *n)
{
	struct sh_node **slot = vec_push(p, p->subs);

	if (slot != NULL)
		*slot = n;
}

/* Parses text as a separate source (a `...` body, a here-doc body) with the
 * same arena, depth budget and substitution list. */
static void child_init(struct parser *c, const struct parser *p, const char *s, size_t len)
{
	memset(c, 0, sizeof(*c));
	c->a = p->a;
	c->s = s;
	c->len = len;
	c->depth = p->depth;
	c->max_depth = p->max_depth;
	c->subs = p->subs;
	c->doc_at_eof = p->doc_at_eof;
	c->retries = p->retries;
}

static void child_done(struct parser *p, const struct parser *c)
{
	if (c->err != NULL && p->err == NULL) {
		p->err = c->err;
		p->err_pos = p->pos;
	}
}

/* $'...': ANSI-C escapes decoded into b. */
static void lex_ansi_c(struct parser *p, struct wbuf *b)
{
	p->pos += 2;
	while (p->pos < p->len && p->s[p->pos] != '\'') {
		int c = (unsigned char)p->s[p->pos++];
		unsigned long v = 0;
		int k;

		if (c != '\\' || p->pos >= p->len) {
			wb_addc(p, b, (char)c);
			continue;
		}
		c = (unsigned char)p->s[p->pos++];
		switch (c) {
		case 'a':
			wb_addc(p, b, '\a');
			break;
		case 'b':
			wb_addc(p, b, '\b');
			break;
		case 'e':
		case 'E':
			wb_addc(p, b, 27);
			break;
		case 'f':
			wb_addc(p, b, '\f');
			break;
		case 'n':
			wb_addc(p, b, '\n');
			break;
		case 'r':
			wb_addc(p, b, '\r');
			break;
		case 't':
			wb_addc(p, b, '\t');
			break;
		case 'v':
			wb_addc(p, b, '\v');
			break;
		case 'c':
			if (p->pos < p->len)
				wb_addc(p, b, (char)(p->s[p->pos++] & 0x1f));
			break;
		case 'x':
		case 'u':
		case 'U': {
			int maxd = c == 'x' ? 2 : c == 'u' ? 4 : 8;

			for (k = 0; k < maxd && p->pos < p->len; k++) {
				int h = (unsigned char)p->s[p->pos];
				int d = h >= '0' && h <= '9'   ? h - '0'
				        : h >= 'a' && h <= 'f' ? h - 'a' + 10
				        : h >= 'A' && h <= 'F' ? h - 'A' + 10
				                               : -1;
				if (d < 0)
					break;
				v = v * 16 + (unsigned long)d;
				p->pos++;
			}
			if (k == 0) {
				wb_addc(p, b, '\\');
				wb_addc(p, b, (char)c);
			} else if (c == 'x' || v < 0x80) {
				wb_addc(p, b, (char)v);
			} else {
				char u[4];
				int n;

				if (v > 0x10ffff)
					v = 0xfffd;
				if (v < 0x800) {
					u[0] = (char)(0xc0 | (v >> 6));
					u[1] = (char)(0x80 | (v & 0x3f));
					n = 2;
				} else if (v < 0x10000) {
					u[0] = (char)(0xe0 | (v >> 12));
					u[1] = (char)(0x80 | ((v >> 6) & 0x3f));
					u[2] = (char)(0x80 | (v & 0x3f));
					n = 3;
				} else {
					u[0] = (char)(0xf0 | (v >> 18));
					u[1] = (char)(0x80 | ((v >> 12) & 0x3f));
					u[2] = (char)(0x80 | ((v >> 6) & 0x3f));
					u[3] = (char)(0x80 | (v & 0x3f));
					n = 4;
				}
				wb_add(p, b, u, (size_t)n);
			}
			break;
		}
		default:
			if (c >= '0' && c <= '7') {
				v = (unsigned long)(c - '0');
				for (k = 1; k < 3 && p->pos < p->len && p->s[p->pos] >= '0' &&
				            p->s[p->pos] <= '7';
				     k++)
					v = v * 8 + (unsigned long)(p->s[p->pos++] - '0');
				wb_addc(p, b, (char)v);
			} else if (c == '\\' || c == '\'' || c == '"' || c == '?') {
				wb_addc(p, b, (char)c);
			} else {
				wb_addc(p, b, '\\');
				wb_addc(p, b, (char)c);
			}
		}
	}
	if (p->pos >= p->len) {
		fail(p, "unterminated $'...' quote");
		return;
	}
	p->pos++;
}

/* The inside of "..." (term '"') or of an unquoted here-doc body (term -1). */
static void lex_dq_body(struct parser *p, struct wbuf *b, unsigned *flags, int term)
{
	while (p->err == NULL) {
		int c = peekc(p, 0);

		if (c < 0) {
			if (term >= 0)
				fail(p, "unterminated double quote");
			return;
		}
		if (c == term) {
			p->pos++;
			return;
		}
		if (c == '\\') {
			int n = peekc(p, 1);

			if (n == '\n') {
				p->pos += 2;
			} else if (n == '$' || n == '`' || n == '\\' || (n == '"' && term == '"')) {
				wb_addc(p, b, (char)n);
				p->pos += 2;
			} else {
				wb_addc(p, b, '\\');
				p->pos++;
			}
		} else if (c == '$') {
			lex_dollar(p, b, flags, true);
		} else if (c == '`') {
			lex_backtick(p, b, flags, true);
		} else {
			wb_addc(p, b, (char)c);
			p->pos++;
		}
	}
}

/* Skips a single-quoted string starting at p->pos, appending its text. */
static void lex_squote(struct parser *p, struct wbuf *b)
{
	const char *end = memchr(p->s + p->pos + 1, '\'', p->len - p->pos - 1);

	if (end == NULL) {
		p->pos = p->len;
		fail(p, "unterminated single quote");
		return;
	}
	wb_add(p, b, p->s + p->pos + 1, (size_t)(end - (p->s + p->pos + 1)));
	p->pos = (size_t)(end - p->s) + 1;
}

/* ${ ... }: its text is discarded (the value is computed); substitutions
 * inside are parsed because they run. */
static void scan_braced(struct parser *p)
{
	struct wbuf sink = {.discard = true};
	unsigned fl = 0;
	int depth = 0;

	p->pos += 2;
	while (p->err == NULL) {
		int c = peekc(p, 0);

		if (c < 0) {
			fail(p, "unterminated ${...}");
			return;
		}
		if (c == '}' && depth == 0) {
			p->pos++;
			return;
		}
		if (c == '{') {
			depth++;
			p->pos++;
		} else if (c == '}') {
			depth--;
			p->pos++;
		} else if (c == '\\') {
			p->pos += peekc(p, 1) < 0 ? 1 : 2;
		} else if (c == '\'') {
			lex_squote(p, &sink);
		} else if (c == '"') {
			p->pos++;
			lex_dq_body(p, &sink, &fl, '"');
		} else if (c == '$') {
			lex_dollar(p, &sink, &fl, false);
		} else if (c == '`') {
			lex_backtick(p, &sink, &fl, false);
		} else {
			p->pos++;
		}
	}
}

/* Arithmetic: p->pos is just past the opening (( or [; stops after the
 * matching )) or ].  Substitutions inside are parsed. */
static void scan_arith(struct parser *p, bool bracket)
{
	struct wbuf sink = {.discard = true};
	unsigned fl = 0;
	int depth = 0;

	while (p->err == NULL) {
		int c = peekc(p, 0);

		if (c < 0) {
			fail(p, "unterminated arithmetic expression");
			return;
		}
		if (bracket && c == ']' && depth == 0) {
			p->pos++;
			return;
		}
		if (!bracket && c == ')' && depth == 0) {
			if (peekc(p, 1) != ')') {
				fail(p, "unbalanced parentheses in arithmetic");
				return;
			}
			p->pos += 2;
			return;
		}
		if (c == '(' || (bracket && c == '[')) {
			depth++;
			p->pos++;
		} else if (c == ')' || (bracket && c == ']')) {
			depth--;
			p->pos++;
		} else if (c == '\\') {
			p->pos += peekc(p, 1) < 0 ? 1 : 2;
		} else if (c == '\'') {
			lex_squote(p, &sink);
		} else if (c == '"') {
			p->pos++;
			lex_dq_body(p, &sink, &fl, '"');
		} else if (c == '$') {
			lex_dollar(p, &sink, &fl, false);
		} else if (c == '`') {
			lex_backtick(p, &sink, &fl, false);
		} else {
			p->pos++;
		}
	}
}

/* $(( ... )) and $[ ... ]: kept as a "((" group among the substitutions, so the
 * classifier can see what the expression names ($((reboot)) is an error in
 * bash, but other shells differ). */
static void add_arith(struct parser *p, size_t start, size_t end)
{
	struct sh_node *n = arena_alloc(p->a, sizeof(*n));
	struct sh_word *w = arena_alloc(p->a, sizeof(*w));

	if (n == NULL || w == NULL) {
		fail(p, "command too large to judge");
		return;
	}
	memset(n, 0, sizeof(*n));
	memset(w, 0, sizeof(*w));
	w->text = p->s + start;
	w->len = end > start ? end - start : 0;
	w->prefix = w->len;
	w->raw = w->text;
	w->raw_len = w->len;
	n->kind = SH_GROUP;
	n->group_kw = "((";
	n->words = w;
	n->nwords = 1;
	add_sub(p, n);
}

/* $( ... ) parsed in place: the body is a list ended by ')'. */
static void lex_cmdsub(struct parser *p)
{
	struct sh_node *n;

	if (!depth_enter(p))
		return;
	p->in_cmdsub++;
	n = parse_list(p);
	p->in_cmdsub--;
	if (p->err == NULL) {
		if (!p->have_la || p->la.type != T_OP || p->la.op != O_RPAREN)
			fail(p, "unterminated $(...)");
		else
			p->have_la = false;
	}
	if (p->err == NULL)
		add_sub(p, n);
	p->depth--;
}

static void lex_dollar(struct parser *p, struct wbuf *b, unsigned *flags, bool in_dq)
{
	int c = peekc(p, 1);
	unsigned computed = SHW_COMPUTED | (in_dq ? 0 : SHW_SPLIT);

	if (c == '{') {
		scan_braced(p);
	} else if (c == '(' && peekc(p, 2) == '(') {
		size_t save = p->pos;

		p->pos += 3;
		scan_arith(p, false);
		if (p->err != NULL && strcmp(p->err, "unbalanced parentheses in arithmetic") == 0 &&
		    ++*p->retries <= MAX_RETRIES) {
			/* $( (subshell) ...): not arithmetic after all. */
			p->err = NULL;
			p->pos = save + 2;
			lex_cmdsub(p);
		} else if (p->err == NULL) {
			add_arith(p, save + 3, p->pos - 2);
		}
	} else if (c == '(') {
		p->pos += 2;
		lex_cmdsub(p);
	} else if (c == '[') {
		size_t save = p->pos;

		p->pos += 2;
		scan_arith(p, true);
		if (p->err == NULL)
			add_arith(p, save + 2, p->pos - 1);
	} else if (c == '\'' && !in_dq) {
		lex_ansi_c(p, b);
		*flags |= SHW_QUOTED;
		return;
	} else if (c == '"' && !in_dq) {
		p->pos += 2;
		lex_dq_body(p, b, flags, '"');
		*flags |= SHW_QUOTED;
		return;
	} else if (c >= 0 && is_name_start(c)) {
		p->pos += 2;
		while (is_name_char(peekc(p, 0)))
			p->pos++;
	} else if (c >= 0 && strchr("@*#?-$!0123456789", c) != NULL) {
		p->pos += 2;
	} else {
		wb_addc(p, b, '$');
		p->pos++;
		return;
	}
	mark_expansion(b, flags, computed);
}

/* `...`: the body is unescaped and parsed by a child parser. */
static void lex_backtick(struct parser *p, struct wbuf *b, unsigned *flags, bool in_dq)
{
	struct wbuf body = {0};
	struct parser c;

	p->pos++;
	for (;;) {
		int ch = peekc(p, 0);

		if (ch < 0) {
			fail(p, "unterminated backquote");
			return;
		}
		p->pos++;
		if (ch == '`')
			break;
		if (ch == '\\') {
			int n = peekc(p, 0);

			if (n == '$' || n == '`' || n == '\\' || (in_dq && n == '"')) {
				ch = n;
				p->pos++;
			}
		}
		wb_addc(p, &body, (char)ch);
	}
	if (p->err != NULL || !depth_enter(p))
		return;
	child_init(&c, p, body.d ? body.d : "", body.n);
	{
		struct sh_node *n = parse_list(&c);

		if (c.err == NULL && (c.have_la ? c.la.type != T_EOF : false))
			fail(&c, "unexpected token in `...`");
		if (c.err == NULL && c.ndocs > 0)
			*c.doc_at_eof = true; /* bash reads such a body to the end */
		if (c.err == NULL)
			add_sub(p, n);
	}
	child_done(p, &c);
	p->depth--;
	mark_expansion(b, flags, SHW_COMPUTED | (in_dq ? 0 : SHW_SPLIT));
}

/* Does an unquoted { at p->pos start a brace expansion ({a,b} or {1..3})? */
static bool brace_expansion_at(const struct parser *p)
{
	bool comma = false;

	for (size_t i = p->pos + 1; i < p->len; i++) {
		char c = p->s[i];

		if (c == '}')
			return comma;
		if (is_meta((unsigned char)c) || c == '\'' || c == '"' || c == '{')
			return false;
		if (c == ',' || (c == '.' && i + 1 < p->len && p->s[i + 1] == '.'))
			comma = true;
	}
	return false;
}

static void classify_assignment(struct sh_word *w)
{
	size_t i = 0;

	if (w->raw_len == 0 || !is_name_start((unsigned char)w->raw[0]))
		return;
	while (i < w->raw_len && is_name_char((unsigned char)w->raw[i]))
		i++;
	w->name_len = i;
	if (i < w->raw_len && w->raw[i] == '[') {
		while (i < w->raw_len && w->raw[i] != ']')
			i++;
		i++;
	}
	if (i < w->raw_len && w->raw[i] == '+')
		i++;
	if (i < w->raw_len && w->raw[i] == '=')
		w->flags |= SHW_ASSIGN;
}

static void lex_word(struct parser *p, struct sh_word *w);

/* NAME=( ... ): an array assignment; its elements are words. */
static void lex_array(struct parser *p, struct wbuf *b, unsigned *flags)
{
	p->pos++;
	for (;;) {
		int c;
		struct sh_word elem;

		while ((c = peekc(p, 0)) == ' ' || c == '\t' || c == '\n')
			p->pos++;
		if (c < 0) {
			fail(p, "unterminated array assignment");
			return;
		}
		if (c == ')') {
			p->pos++;
			break;
		}
		if (is_meta(c)) {
			fail(p, "unexpected operator in array assignment");
			return;
		}
		lex_word(p, &elem);
		if (p->err != NULL)
			return;
		/* the elements' text stays visible: a=(reboot); "${a[@]}" */
		wb_addc(p, b, ' ');
		wb_add(p, b, elem.text, elem.len);
	}
	*flags |= SHW_COMPUTED;
}

static void lex_word(struct parser *p, struct sh_word *w)
{
	struct wbuf b = {.first_exp = SIZE_MAX};
	unsigned flags = 0;
	size_t start = p->pos;

	memset(w, 0, sizeof(*w));
	if (peekc(p, 0) == '~')
		flags |= SHW_TILDE;
	while (p->err == NULL) {
		int c = peekc(p, 0);

		if (c < 0)
			break;
		if (c == '(' && b.n > 0 && !(flags & SHW_QUOTED) && b.d[b.n - 1] == '=') {
			struct sh_word tmp = {.raw = p->s + start, .raw_len = p->pos - start};

			classify_assignment(&tmp);
			if (tmp.flags & SHW_ASSIGN) {
				lex_array(p, &b, &flags);
				continue;
			}
		}
		if (is_meta(c))
			break;
		if (c == '\0') {
			fail(p, "NUL byte in command");
			break;
		}
		switch (c) {
		case '\\':
			if (peekc(p, 1) == '\n') {
				p->pos += 2;
			} else if (peekc(p, 1) < 0) {
				wb_addc(p, &b, '\\');
				p->pos++;
			} else {
				wb_addc(p, &b, p->s[p->pos + 1]);
				flags |= SHW_QUOTED;
				p->pos += 2;
			}
			break;
		case '\'':
			lex_squote(p, &b);
			flags |= SHW_QUOTED;
			break;
		case '"':
			p->pos++;
			lex_dq_body(p, &b, &flags, '"');
			flags |= SHW_QUOTED;
			break;
		case '$':
			lex_dollar(p, &b, &flags, false);
			break;
		case '`':
			lex_backtick(p, &b, &flags, false);
			break;
		case '[':
			/* [ is a glob only with a closing ] in the same word ([ alone is test) */
			for (size_t k = p->pos + 1; k < p->len && !is_meta((unsigned char)p->s[k]);
			     k++) {
				if (p->s[k] == ']') {
					flags |= SHW_GLOB;
					break;
				}
			}
			wb_addc(p, &b, (char)c);
			p->pos++;
			break;
		case '*':
		case '?':
			flags |= SHW_GLOB;
			wb_addc(p, &b, (char)c);
			p->pos++;
			break;
		case '{':
			if (brace_expansion_at(p))
				flags |= SHW_BRACE;
			wb_addc(p, &b, (char)c);
			p->pos++;
			break;
		default:
			wb_addc(p, &b, (char)c);
			p->pos++;
		}
	}
	w->text = b.d ? b.d : "";
	w->len = b.n;
	w->prefix = b.first_exp == SIZE_MAX ? b.n : b.first_exp;
	w->flags = flags;
	w->raw = p->s + start;
	w->raw_len = p->pos - start;
	classify_assignment(w);
}

static void read_heredocs(struct parser *p)
{
	for (int i = 0; i < p->ndocs && p->err == NULL; i++) {
		struct pending_doc *d = &p->docs[i];
		struct wbuf body = {0};
		bool found = false;

		while (p->pos < p->len) {
			const char *line = p->s + p->pos;
			const char *nl = memchr(line, '\n', p->len - p->pos);
			size_t ll = nl ? (size_t)(nl - line) : p->len - p->pos;
			const char *cmp = line;
			size_t cl = ll;

			if (d->strip) {
				while (cl > 0 && *cmp == '\t') {
					cmp++;
					cl--;
				}
			}
			if (cl == d->dlen && memcmp(cmp, d->delim, cl) == 0) {
				p->pos += ll + (nl ? 1 : 0);
				found = true;
				break;
			}
			if (p->in_cmdsub > 0 && cl > d->dlen &&
			    memcmp(cmp, d->delim, d->dlen) == 0 && cmp[d->dlen] == ')') {
				/* $(cat <<EOF ... EOF): bash ends the body with the substitution */
				p->pos = (size_t)(cmp + d->dlen - p->s);
				found = true;
				break;
			}
			p->pos += ll + (nl ? 1 : 0);
			wb_add(p, &body, cmp, cl);
			wb_addc(p, &body, '\n');
		}
		if (!found)
			*p->doc_at_eof =
			    true; /* bash takes the rest of the input, with a warning */
		if (d->quoted) {
			d->doc->body = body.d ? body.d : "";
			d->doc->len = body.n;
		} else {
			struct parser c;
			struct wbuf text = {0};
			unsigned fl = 0;

			child_init(&c, p, body.d ? body.d : "", body.n);
			lex_dq_body(&c, &text, &fl, -1);
			child_done(p, &c);
			d->doc->body = text.d ? text.d : "";
			d->doc->len = text.n;
			d->doc->computed = (fl & SHW_COMPUTED) != 0;
		}
	}
	p->ndocs = 0;
}

static void skip_blanks(struct parser *p)
{
	for (;;) {
		int c = peekc(p, 0);

		if (c == ' ' || c == '\t' || c == '\r') {
			p->pos++;
		} else if (c == '\\' && peekc(p, 1) == '\n') {
			p->pos += 2;
		} else if (c == '#') {
			const char *nl = memchr(p->s + p->pos, '\n', p->len - p->pos);

			p->pos = nl ? (size_t)(nl - p->s) : p->len;
		} else {
			return;
		}
	}
}

static void lex_procsub(struct parser *p, struct tok *t)
{
	size_t start = p->pos;

	p->pos += 2;
	lex_cmdsub(p);
	memset(&t->w, 0, sizeof(t->w));
	t->w.text = "";
	t->w.flags = SHW_COMPUTED;
	t->w.raw = p->s + start;
	t->w.raw_len = p->pos - start;
	t->type = T_WORD;
}

static void lex_redir(struct parser *p, struct tok *t)
{
	int c = peekc(p, 0), n = peekc(p, 1), n2 = peekc(p, 2);

	t->type = T_REDIR;
	if (c == '<') {
		if (n == '<' && n2 == '<') {
			t->op = SHR_HERESTRING;
			p->pos += 3;
		} else if (n == '<') {
			t->op = SHR_HEREDOC;
			p->pos += 2;
			if (n2 == '-') {
				p->pos++;
				t->start = SIZE_MAX; /* <<-: strip leading tabs */
			}
		} else if (n == '>') {
			t->op = SHR_INOUT;
			p->pos += 2;
		} else if (n == '&') {
			t->op = SHR_DUP_IN;
			p->pos += 2;
		} else {
			t->op = SHR_IN;
			p->pos++;
		}
	} else {
		if (n == '>') {
			t->op = SHR_APPEND;
			p->pos += 2;
		} else if (n == '|') {
			t->op = SHR_CLOBBER;
			p->pos += 2;
		} else if (n == '&') {
			t->op = SHR_DUP_OUT;
			p->pos += 2;
		} else {
			t->op = SHR_OUT;
			p->pos++;
		}
	}
}

static void next_token(struct parser *p, struct tok *t)
{
	int c;

	memset(t, 0, sizeof(*t));
	t->fd = -1;
	skip_blanks(p);
	t->start = p->pos;
	c = peekc(p, 0);
	if (c < 0) {
		t->type = T_EOF;
		return;
	}
	if (c == '\n') {
		p->pos++;
		t->type = T_NEWLINE;
		if (p->ndocs > 0)
			read_heredocs(p);
		return;
	}
	if (c >= '0' && c <= '9') {
		size_t i = p->pos;
		int fd = 0;

		while (i < p->len && p->s[i] >= '0' && p->s[i] <= '9' && fd < 100000)
			fd = fd * 10 + (p->s[i++] - '0');
		if (i < p->len && (p->s[i] == '<' || p->s[i] == '>') &&
		    !(i + 1 < p->len && p->s[i + 1] == '(')) {
			p->pos = i;
			t->fd = fd;
			lex_redir(p, t);
			return;
		}
	}
	if ((c == '<' || c == '>') && peekc(p, 1) == '(') {
		lex_procsub(p, t);
		return;
	}
	if (c == '<' || c == '>') {
		lex_redir(p, t);
		return;
	}
	t->type = T_OP;
	switch (c) {
	case '&':
		if (peekc(p, 1) == '&') {
			t->op = O_AND;
			p->pos += 2;
		} else if (peekc(p, 1) == '>') {
			t->type = T_REDIR;
			t->op = peekc(p, 2) == '>' ? SHR_ALL_APPEND : SHR_ALL;
			p->pos += t->op == SHR_ALL_APPEND ? 3 : 2;
		} else {
			t->op = O_AMP;
			p->pos++;
		}
		return;
	case '|':
		if (peekc(p, 1) == '|') {
			t->op = O_OR;
			p->pos += 2;
		} else {
			t->op = O_PIPE;
			p->pos += peekc(p, 1) == '&' ? 2 : 1;
		}
		return;
	case ';':
		if (peekc(p, 1) == ';') {
			t->op = O_DSEMI;
			p->pos += peekc(p, 2) == '&' ? 3 : 2;
		} else if (peekc(p, 1) == '&') {
			t->op = O_DSEMI;
			p->pos += 2;
		} else {
			t->op = O_SEMI;
			p->pos++;
		}
		return;
	case '(':
		t->op = O_LPAREN;
		p->pos++;
		return;
	case ')':
		t->op = O_RPAREN;
		p->pos++;
		return;
	default:
		break;
	}
	t->type = T_WORD;
	lex_word(p, &t->w);
}

static struct tok *peek(struct parser *p)
{
	if (!p->have_la) {
		struct tok t;

		next_token(p, &t);
		p->la = t;
		p->have_la = true;
	}
	return &p->la;
}

static void consume(struct parser *p)
{
	p->have_la = false;
}

static bool word_is(const struct tok *t, const char *kw)
{
	return t->type == T_WORD && (t->w.flags & ~SHW_GLOB) == 0 && strlen(kw) == t->w.len &&
	       memcmp(t->w.text, kw, t->w.len) == 0;
}

static bool is_terminator(const struct tok *t)
{
	static const char *const kws[] = {"}", "then", "else", "elif", "fi", "do", "done", "esac"};

	if (t->type == T_EOF)
		return true;
	if (t->type == T_OP && (t->op == O_RPAREN || t->op == O_DSEMI))
		return true;
	for (size_t i = 0; i < sizeof(kws) / sizeof(kws[0]); i++)
		if (word_is(t, kws[i]))
			return true;
	return false;
}

static void skip_newlines(struct parser *p)
{
	while (p->err == NULL && peek(p)->type == T_NEWLINE)
		consume(p);
}

static struct sh_node *node_new(struct parser *p, enum sh_kind k)
{
	struct sh_node *n = arena_alloc(p->a, sizeof(*n));

	if (n == NULL) {
		fail(p, "command too large to judge");
		return NULL;
	}
	memset(n, 0, sizeof(*n));
	n->kind = k;
	return n;
}

static void push_kid(struct parser *p, struct vec *kids, struct sh_node *k)
{
	struct sh_node **slot;

	if (k == NULL)
		return;
	slot = vec_push(p, kids);
	if (slot != NULL)
		*slot = k;
}

static void expect_word(struct parser *p, const char *kw)
{
	if (p->err != NULL)
		return;
	if (!word_is(peek(p), kw)) {
		fail(p, "unexpected token: a compound command is not closed");
		return;
	}
	consume(p);
}

/* A redirection whose operator token is already peeked. */
static void parse_redir(struct parser *p, struct vec *redirs)
{
	struct tok op = *peek(p);
	struct sh_redir *r;
	struct tok *t;

	consume(p);
	t = peek(p);
	if (t->type != T_WORD) {
		fail(p, "redirection without a target");
		return;
	}
	r = vec_push(p, redirs);
	if (r == NULL)
		return;
	r->op = (enum sh_redir_op)op.op;
	r->fd = op.fd;
	r->word = t->w;
	r->doc = NULL;
	consume(p);
	if (r->op == SHR_HEREDOC) {
		struct pending_doc *d;
		struct sh_heredoc *doc;

		if (p->ndocs >= MAX_PENDING_DOCS) {
			fail(p, "too many here-documents on one line");
			return;
		}
		doc = arena_alloc(p->a, sizeof(*doc));
		if (doc == NULL) {
			fail(p, "command too large to judge");
			return;
		}
		memset(doc, 0, sizeof(*doc));
		doc->body = "";
		r->doc = doc;
		d = &p->docs[p->ndocs++];
		d->doc = doc;
		d->delim = r->word.text;
		d->dlen = r->word.len;
		d->quoted = (r->word.flags & SHW_QUOTED) != 0;
		d->strip = op.start == SIZE_MAX;
	}
}

static void finish_vecs(struct sh_node *n, struct vec *words, struct vec *redirs, struct vec *kids)
{
	if (words != NULL) {
		n->words = (struct sh_word *)words->d;
		n->nwords = words->n;
	}
	if (redirs != NULL) {
		n->redirs = (struct sh_redir *)redirs->d;
		n->nredirs = redirs->n;
	}
	if (kids != NULL) {
		n->kids = (struct sh_node **)kids->d;
		n->nkids = kids->n;
	}
}

static void parse_trailing_redirs(struct parser *p, struct sh_node *n)
{
	struct vec redirs = {.esz = sizeof(struct sh_redir)};

	while (p->err == NULL && peek(p)->type == T_REDIR)
		parse_redir(p, &redirs);
	if (n != NULL && redirs.n > 0)
		finish_vecs(n, NULL, &redirs, NULL);
}

/* Does "( )" follow at p->pos (the function-definition form name ( ))? */
static bool funcdef_parens_follow(struct parser *p)
{
	size_t i = p->pos;

	while (i < p->len && (p->s[i] == ' ' || p->s[i] == '\t'))
		i++;
	if (i >= p->len || p->s[i] != '(')
		return false;
	i++;
	while (i < p->len && (p->s[i] == ' ' || p->s[i] == '\t'))
		i++;
	if (i >= p->len || p->s[i] != ')')
		return false;
	p->pos = i + 1;
	return true;
}

static struct sh_node *parse_funcdef_body(struct parser *p, const struct sh_word *name)
{
	struct sh_node *n = node_new(p, SH_FUNCDEF);
	struct vec kids = {.esz = sizeof(struct sh_node *)};

	if (n == NULL)
		return NULL;
	n->name = arena_strndup(p->a, name->text, name->len);
	skip_newlines(p);
	push_kid(p, &kids, parse_command(p));
	finish_vecs(n, NULL, NULL, &kids);
	return p->err ? NULL : n;
}

static struct sh_node *parse_simple(struct parser *p)
{
	struct sh_node *n = node_new(p, SH_SIMPLE);
	struct vec words = {.esz = sizeof(struct sh_word)};
	struct vec redirs = {.esz = sizeof(struct sh_redir)};

	while (n != NULL && p->err == NULL) {
		struct tok *t = peek(p);

		if (t->type == T_REDIR) {
			parse_redir(p, &redirs);
		} else if (t->type == T_WORD) {
			struct sh_word w = t->w;
			struct sh_word *slot;

			if (words.n == 0 && redirs.n == 0 && !(w.flags & ~SHW_GLOB) &&
			    funcdef_parens_follow(p)) {
				consume(p);
				return parse_funcdef_body(p, &w);
			}
			consume(p);
			slot = vec_push(p, &words);
			if (slot != NULL)
				*slot = w;
		} else {
			break;
		}
	}
	if (p->err != NULL)
		return NULL;
	if (words.n == 0 && redirs.n == 0) {
		fail(p, "syntax error: expected a command");
		return NULL;
	}
	finish_vecs(n, &words, &redirs, NULL);
	return n;
}

/* Data words of a compound command (for-list, case word, [[ ]] operands). */
static void push_word(struct parser *p, struct vec *words, const struct sh_word *w)
{
	struct sh_word *slot = vec_push(p, words);

	if (slot != NULL)
		*slot = *w;
}

static void parse_for(struct parser *p, struct sh_node *n, struct vec *kids, struct vec *words)
{
	struct tok *t;

	if (p->pos + 1 < p->len && p->s[p->pos] == '(' && p->s[p->pos + 1] == '(' && !p->have_la) {
		p->pos += 2;
		scan_arith(p, false);
	} else {
		skip_blanks(p);
		if (p->pos + 1 < p->len && p->s[p->pos] == '(' && p->s[p->pos + 1] == '(' &&
		    !p->have_la) {
			p->pos += 2;
			scan_arith(p, false);
		} else {
			t = peek(p);
			if (t->type != T_WORD) {
				fail(p, "for without a variable name");
				return;
			}
			/* the loop's variable: its values are the list's words */
			n->name = arena_strndup(p->a, t->w.text, t->w.len);
			consume(p);
			skip_newlines(p);
			if (word_is(peek(p), "in")) {
				consume(p);
				while (p->err == NULL && peek(p)->type == T_WORD) {
					push_word(p, words, &peek(p)->w);
					consume(p);
				}
			}
		}
	}
	if (p->err)
		return;
	t = peek(p);
	if (t->type == T_OP && t->op == O_SEMI)
		consume(p);
	skip_newlines(p);
	if (word_is(peek(p), "{")) {
		consume(p);
		push_kid(p, kids, parse_list(p));
		expect_word(p, "}");
		return;
	}
	expect_word(p, "do");
	push_kid(p, kids, parse_list(p));
	expect_word(p, "done");
}

static void parse_case(struct parser *p, struct vec *kids, struct vec *words)
{
	struct tok *t = peek(p);

	if (t->type != T_WORD) {
		fail(p, "case without a word");
		return;
	}
	push_word(p, words, &t->w);
	consume(p);
	skip_newlines(p);
	expect_word(p, "in");
	skip_newlines(p);
	while (p->err == NULL && !word_is(peek(p), "esac")) {
		t = peek(p);
		if (t->type == T_OP && t->op == O_LPAREN) {
			consume(p);
			t = peek(p);
		}
		for (;;) {
			if (t->type != T_WORD) {
				fail(p, "case pattern expected");
				return;
			}
			push_word(p, words, &t->w);
			consume(p);
			t = peek(p);
			if (t->type == T_OP && t->op == O_PIPE) {
				consume(p);
				t = peek(p);
				continue;
			}
			break;
		}
		if (t->type != T_OP || t->op != O_RPAREN) {
			fail(p, "case pattern without )");
			return;
		}
		consume(p);
		push_kid(p, kids, parse_list(p));
		if (p->err)
			return;
		t = peek(p);
		if (t->type == T_OP && t->op == O_DSEMI) {
			consume(p);
			skip_newlines(p);
		} else if (!word_is(t, "esac")) {
			fail(p, "case item not ended by ;;");
			return;
		}
	}
	expect_word(p, "esac");
}

static void parse_dbracket(struct parser *p, struct vec *words)
{
	for (;;) {
		struct tok *t = peek(p);

		if (p->err != NULL)
			return;
		if (word_is(t, "]]")) {
			consume(p);
			return;
		}
		if (t->type == T_EOF) {
			fail(p, "unterminated [[");
			return;
		}
		if (t->type == T_WORD)
			push_word(p, words, &t->w);
		consume(p);
	}
}

/* A compound command whose first word (a reserved word) is peeked. */
static struct sh_node *parse_compound(struct parser *p, const char *kw)
{
	struct sh_node *n = node_new(p, SH_GROUP);
	struct vec kids = {.esz = sizeof(struct sh_node *)};
	struct vec words = {.esz = sizeof(struct sh_word)};

	if (n == NULL || !depth_enter(p))
		return NULL;
	n->group_kw = kw;
	consume(p);
	if (strcmp(kw, "{") == 0) {
		push_kid(p, &kids, parse_list(p));
		expect_word(p, "}");
	} else if (strcmp(kw, "if") == 0) {
		push_kid(p, &kids, parse_list(p));
		expect_word(p, "then");
		push_kid(p, &kids, parse_list(p));
		while (p->err == NULL && word_is(peek(p), "elif")) {
			consume(p);
			push_kid(p, &kids, parse_list(p));
			expect_word(p, "then");
			push_kid(p, &kids, parse_list(p));
		}
		if (p->err == NULL && word_is(peek(p), "else")) {
			consume(p);
			push_kid(p, &kids, parse_list(p));
		}
		expect_word(p, "fi");
	} else if (strcmp(kw, "while") == 0 || strcmp(kw, "until") == 0) {
		push_kid(p, &kids, parse_list(p));
		expect_word(p, "do");
		push_kid(p, &kids, parse_list(p));
		expect_word(p, "done");
	} else if (strcmp(kw, "for") == 0 || strcmp(kw, "select") == 0) {
		parse_for(p, n, &kids, &words);
	} else if (strcmp(kw, "case") == 0) {
		parse_case(p, &kids, &words);
	} else if (strcmp(kw, "[[") == 0) {
		parse_dbracket(p, &words);
	}
	p->depth--;
	if (p->err)
		return NULL;
	finish_vecs(n, &words, NULL, &kids);
	parse_trailing_redirs(p, n);
	return p->err ? NULL : n;
}

static struct sh_node *parse_command(struct parser *p)
{
	static const char *const compounds[] = {"{",   "if",     "while", "until",
	                                        "for", "select", "case",  "[["};
	struct tok *t = peek(p);

	if (p->err != NULL)
		return NULL;
	if (t->type == T_OP && t->op == O_LPAREN) {
		struct sh_node *n;
		struct vec kids = {.esz = sizeof(struct sh_node *)};

		if (p->pos < p->len && p->s[p->pos] == '(' && p->pos == t->start + 1) {
			consume(p);
			p->pos++;
			n = node_new(p, SH_GROUP);
			if (n == NULL)
				return NULL;
			n->group_kw = "((";
			{
				size_t st = p->pos;
				struct sh_word *w = arena_alloc(p->a, sizeof(*w));

				scan_arith(p, false);
				if (w == NULL) {
					fail(p, "command too large to judge");
					return NULL;
				}
				memset(w, 0, sizeof(*w));
				w->text = p->s + st;
				w->len = p->pos > st + 2 ? p->pos - st - 2 : 0;
				w->prefix = w->len;
				w->raw = w->text;
				w->raw_len = w->len;
				n->words = w;
				n->nwords = 1;
			}
			parse_trailing_redirs(p, n);
			return p->err ? NULL : n;
		}
		consume(p);
		n = node_new(p, SH_GROUP);
		if (n == NULL || !depth_enter(p))
			return NULL;
		n->group_kw = "(";
		push_kid(p, &kids, parse_list(p));
		if (p->err == NULL) {
			t = peek(p);
			if (t->type != T_OP || t->op != O_RPAREN)
				fail(p, "unterminated subshell");
			else
				consume(p);
		}
		p->depth--;
		if (p->err)
			return NULL;
		finish_vecs(n, NULL, NULL, &kids);
		parse_trailing_redirs(p, n);
		return p->err ? NULL : n;
	}
	if (t->type == T_WORD && (t->w.flags & ~SHW_GLOB) == 0) {
		for (size_t i = 0; i < sizeof(compounds) / sizeof(compounds[0]); i++)
			if (word_is(t, compounds[i]))
				return parse_compound(p, compounds[i]);
		if (word_is(t, "function")) {
			struct sh_word name;

			consume(p);
			t = peek(p);
			if (t->type != T_WORD) {
				fail(p, "function without a name");
				return NULL;
			}
			name = t->w;
			consume(p);
			t = peek(p);
			if (t->type == T_OP && t->op == O_LPAREN) {
				consume(p);
				t = peek(p);
				if (t->type != T_OP || t->op != O_RPAREN) {
					fail(p, "function name ( not followed by )");
					return NULL;
				}
				consume(p);
			}
			return parse_funcdef_body(p, &name);
		}
		if (is_terminator(t)) {
			fail(p, "syntax error: unexpected reserved word");
			return NULL;
		}
	}
	if (t->type != T_WORD && t->type != T_REDIR) {
		fail(p, "syntax error: expected a command");
		return NULL;
	}
	return parse_simple(p);
}

static struct sh_node *parse_pipeline(struct parser *p)
{
	struct sh_node *n = NULL;
	struct vec kids = {.esz = sizeof(struct sh_node *)};

	while (p->err == NULL && (word_is(peek(p), "!") || word_is(peek(p), "time"))) {
		bool was_time = word_is(peek(p), "time");

		consume(p);
		if (was_time && word_is(peek(p), "-p"))
			consume(p);
	}
	for (;;) {
		struct tok *t;

		push_kid(p, &kids, parse_command(p));
		if (p->err)
			return NULL;
		t = peek(p);
		if (t->type != T_OP || t->op != O_PIPE)
			break;
		consume(p);
		skip_newlines(p);
	}
	if (kids.n == 1)
		return ((struct sh_node **)kids.d)[0];
	n = node_new(p, SH_PIPELINE);
	if (n != NULL)
		finish_vecs(n, NULL, NULL, &kids);
	return n;
}

static struct sh_node *parse_list(struct parser *p)
{
	struct sh_node *n = node_new(p, SH_LIST);
	struct vec kids = {.esz = sizeof(struct sh_node *)};

	if (n == NULL)
		return NULL;
	skip_newlines(p);
	while (p->err == NULL && !is_terminator(peek(p))) {
		struct tok *t;

		push_kid(p, &kids, parse_pipeline(p));
		if (p->err)
			break;
		t = peek(p);
		if (t->type == T_OP && (t->op == O_AND || t->op == O_OR)) {
			consume(p);
			skip_newlines(p);
			if (is_terminator(peek(p)))
				fail(p, "syntax error: && or || without a command after it");
			continue;
		}
		if (t->type == T_OP && (t->op == O_SEMI || t->op == O_AMP)) {
			consume(p);
			skip_newlines(p);
			continue;
		}
		if (t->type == T_NEWLINE) {
			skip_newlines(p);
			continue;
		}
		break;
	}
	if (p->err)
		return NULL;
	finish_vecs(n, NULL, NULL, &kids);
	return n;
}

int sh_parse(struct arena *a, const char *src, size_t len, int max_depth, struct sh_parse *out)
{
	struct parser p;
	struct vec subs = {.esz = sizeof(struct sh_node *)};
	bool doc_at_eof = false;
	int retries = 0;

	memset(&p, 0, sizeof(p));
	memset(out, 0, sizeof(*out));
	p.doc_at_eof = &doc_at_eof;
	p.retries = &retries;
	p.a = a;
	p.s = src;
	p.len = len;
	p.max_depth = max_depth;
	p.subs = &subs;
	out->root = parse_list(&p);
	if (p.err == NULL) {
		struct tok *t = peek(&p);

		if (t->type != T_EOF)
			fail(&p, t->type == T_OP && t->op == O_RPAREN
			             ? "syntax error: unmatched )"
			             : "syntax error: unexpected token");
	}
	if (p.err == NULL && p.ndocs > 0)
		doc_at_eof = true; /* `cat <<EOF` and nothing after: an empty body */
	out->subs = (struct sh_node **)subs.d;
	out->nsubs = subs.n;
	out->doc_at_eof = doc_at_eof;
	if (p.err != NULL) {
		out->root = NULL;
		out->err = p.err;
		out->err_pos = p.err_pos;
		return -1;
	}
	return 0;
}
