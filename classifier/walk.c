/* walk.c -- walks a parsed command: every simple command, its redirections,
 * what it reads on stdin, and the program it really runs after wrappers
 * (unwrap.c) and special programs (tools.c); the policy judges the rest
 * (judge.c).
 *
 * Strings that are code (bash -c '...', eval, a here-doc fed to a shell,
 * echo ... | sh, ssh host '...', watch '...') are parsed again, recursively,
 * within a depth limit and a work budget.  Code in another language is
 * opaque. */
#include "classifier/walk.h"

#include "classifier/arena.h"
#include "classifier/classifier.h"
#include "classifier/dirwrite.h"
#include "classifier/judge.h"
#include "classifier/netclient.h"
#include "classifier/secrets.h"
#include "classifier/shparse.h"
#include "classifier/tools.h"
#include "classifier/unwrap.h"

#include <stdlib.h>
#include <string.h>

static void walk(struct judge *j, const struct sh_node *n, enum target_type t,
                 const struct judge_stdin *in);

/* Joins words with spaces (computed ones contribute their literal parts);
 * *partial tells whether any was computed. */
const char *walk_join_words(struct judge *j, const struct sh_word *w, size_t n, size_t *len,
                            bool *partial)
{
	size_t total = 1;
	char *out, *q;

	*partial = false;
	for (size_t i = 0; i < n; i++)
		total += w[i].len + 1;
	out = arena_alloc(j->a, total);
	if (out == NULL) {
		*len = 0;
		*partial = true;
		return "";
	}
	q = out;
	for (size_t i = 0; i < n; i++) {
		if (i > 0)
			*q++ = ' ';
		memcpy(q, w[i].text, w[i].len);
		q += w[i].len;
		if (!judge_lit(&w[i]))
			*partial = true;
	}
	*q = '\0';
	*len = (size_t)(q - out);
	return out;
}

static struct judge_seg *new_seg(struct judge *j, const struct sh_word *w, size_t n)
{
	struct judge_seg *s = arena_alloc(j->a, sizeof(*s));

	if (s == NULL) {
		/* scratch exhausted: reasons still need a segment to point at */
		s = &j->spare;
		memset(s, 0, sizeof(*s));
		s->text = "(command too large)";
		return s;
	}
	s->num = ++j->nseg;
	s->words = w;
	s->nwords = n;
	s->text = NULL;
	return s;
}

/* Environment names that change which program runs or what it runs. */
static bool dangerous_env(const char *name, size_t n)
{
	static const char *const names[] = {"PATH",
	                                    "BASH_ENV",
	                                    "ENV",
	                                    "PROMPT_COMMAND",
	                                    "PS4",
	                                    "SHELLOPTS",
	                                    "BASHOPTS",
	                                    "GCONV_PATH",
	                                    "PAGER",
	                                    "MANPAGER",
	                                    "GIT_PAGER",
	                                    "SYSTEMD_PAGER",
	                                    "EDITOR",
	                                    "VISUAL",
	                                    "GIT_EDITOR",
	                                    "LESSOPEN",
	                                    "LESSCLOSE",
	                                    "GIT_SSH",
	                                    "GIT_SSH_COMMAND",
	                                    "GIT_EXTERNAL_DIFF",
	                                    "PERL5OPT",
	                                    "PERL5LIB",
	                                    "PYTHONPATH",
	                                    "PYTHONSTARTUP",
	                                    "NODE_OPTIONS",
	                                    "RUBYOPT",
	                                    "BROWSER",
	                                    "SUDO_ASKPASS",
	                                    "SSH_ASKPASS",
	                                    "CDPATH",
	                                    "APT_CONFIG",
	                                    "HOME",
	                                    "XDG_CONFIG_HOME",
	                                    "SYSTEMD_EDITOR",
	                                    "TERMINFO"};

	static const char *const prefixes[] = {"LD_",   "GIT_",   "SYSTEMD_", "PERL5",
	                                       "PERL_", "PYTHON", "RUBY",     "NODE_",
	                                       "LESS",  "GCONV",  "MALLOC_",  "BASH_"};

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (n >= strlen(prefixes[i]) && memcmp(name, prefixes[i], strlen(prefixes[i])) == 0)
			return true;
	if (n >= 11 && memcmp(name + n - 11, "_DEBUG_FILE", 11) == 0)
		return true;
	if (n >= 10 && memcmp(name, "GIT_CONFIG", 10) == 0)
		return true;
	if (n >= 9 && memcmp(name, "BASH_FUNC", 9) == 0)
		return true;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strlen(names[i]) == n && memcmp(names[i], name, n) == 0)
			return true;
	return false;
}

/* NAME=value: harmless unless NAME changes what later commands run. */
void walk_assignment(struct judge *j, struct judge_seg *s, const struct sh_word *w,
                     enum target_type t)
{
	const char *eq = memchr(w->text, '=', w->len);
	size_t vl = eq ? w->len - (size_t)(eq + 1 - w->text) : 0;

	if (j->nassigns < JUDGE_MAX_ASSIGNS)
		j->assigns[j->nassigns++] = w;
	else
		j->assigns_lost = true;
	if (w->name_len > 0 && dangerous_env(w->text, w->name_len)) {
		judge_reason(j, s, "env-changes-program",
		             judge_fmt(j, "sets %.*s, which changes what programs run",
		                       (int)w->name_len, w->text),
		             j->p->unknown_program, t);
		if (eq != NULL)
			judge_scan_words(j, s, eq + 1, vl, t);
	}
}

static bool env_allowed(const struct policy *p, const char *name, size_t n)
{
	for (size_t i = 0; i < p->env_allow.n; i++) {
		const char *a = p->env_allow.v[i];
		size_t l = strlen(a);

		if (l > 0 && a[l - 1] == '*' ? n >= l - 1 && memcmp(a, name, l - 1) == 0
		                             : l == n && memcmp(a, name, n) == 0)
			return true;
	}
	return false;
}

void walk_env_assignment(struct judge *j, struct judge_seg *s, const struct sh_word *w,
                         enum target_type t)
{
	walk_assignment(j, s, w, t);
	if (w->name_len == 0 || dangerous_env(w->text, w->name_len) ||
	    env_allowed(j->p, w->text, w->name_len))
		return;
	judge_reason(j, s, "env-not-allowed",
	             judge_fmt(j,
	                       "sets %.*s in a program's environment: only the policy's "
	                       "environment list is known harmless; cannot prove read-only",
	                       (int)(w->name_len > 60 ? 60 : w->name_len), w->text),
	             j->p->unknown_program, t);
}

/* A program name or code computed at run time may be any value assigned so
 * far (c=reboot; $c): the words of those values raise. */
void walk_scan_assignments(struct judge *j, struct judge_seg *s, enum target_type t)
{
	for (size_t i = 0; i < j->nassigns; i++) {
		const struct sh_word *w = j->assigns[i];
		const char *eq = memchr(w->text, '=', w->len);

		if (eq != NULL)
			judge_scan_words(j, s, eq + 1, w->len - (size_t)(eq + 1 - w->text), t);
		/* x=$(echo reboot): the value's spelling */
		if (!judge_lit(w) && (eq = memchr(w->raw, '=', w->raw_len)) != NULL)
			judge_scan_words(j, s, eq + 1, w->raw_len - (size_t)(eq + 1 - w->raw), t);
	}
}

/* a=re; b=boot; $a$b: a program name made of two values assigned earlier. */
static void scan_assignment_pairs(struct judge *j, struct judge_seg *s, enum target_type t)
{
	size_t n = j->nassigns < 16 ? j->nassigns : 16;

	for (size_t a = 0; a < n; a++) {
		const struct sh_word *x = j->assigns[a];
		const char *ex = memchr(x->text, '=', x->len);

		for (size_t b = 0; ex != NULL && b < n; b++) {
			const struct sh_word *y = j->assigns[b];
			const char *ey = memchr(y->text, '=', y->len);
			size_t lx, ly;
			char *buf;

			if (ey == NULL)
				continue;
			lx = x->len - (size_t)(ex + 1 - x->text);
			ly = y->len - (size_t)(ey + 1 - y->text);
			if (lx + ly > 256 || (buf = arena_alloc(j->a, lx + ly + 1)) == NULL)
				continue;
			memcpy(buf, ex + 1, lx);
			memcpy(buf + lx, ey + 1, ly);
			judge_scan_words(j, s, buf, lx + ly, t);
		}
	}
}

/* Code computed at run time ($(echo reboot), "$X"): what its spelling names
 * may be what runs, so scan the source text of the words as well. */
/* echo -e / printf escapes decoded (\n \t \\ \xHH \NNN \0NNN) into the arena;
 * NULL when there is no backslash. */
static const char *decode_escapes(struct judge *j, const char *t, size_t len, size_t *outlen)
{
	char *d;
	size_t o = 0;

	if (memchr(t, '\\', len) == NULL || (d = arena_alloc(j->a, len + 1)) == NULL)
		return NULL;
	for (size_t i = 0; i < len; i++) {
		unsigned v = 0;
		int k = 0;

		if (t[i] != '\\' || i + 1 >= len) {
			d[o++] = t[i];
			continue;
		}
		i++;
		if (t[i] == 'n' || t[i] == 't' || t[i] == '\\') {
			d[o++] = t[i] == 'n' ? '\n' : t[i] == 't' ? '\t' : '\\';
		} else if (t[i] == 'x') {
			while (k < 2 && i + 1 < len && strchr("0123456789abcdefABCDEF", t[i + 1]) &&
			       t[i + 1] != '\0') {
				char c = t[++i];

				v = v * 16 + (unsigned)(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
				k++;
			}
			d[o++] = k ? (char)v : 'x';
		} else if (t[i] >= '0' && t[i] <= '7') {
			i--;
			while (k < 4 && i + 1 < len && t[i + 1] >= '0' && t[i + 1] <= '7') {
				v = v * 8 + (unsigned)(t[++i] - '0');
				k++;
			}
			d[o++] = (char)v;
		} else {
			d[o++] = '\\';
			d[o++] = t[i];
		}
	}
	d[o] = '\0';
	*outlen = o;
	return d;
}

void walk_scan_raw(struct judge *j, struct judge_seg *s, const struct sh_word *w, size_t n,
                   enum target_type t)
{
	for (size_t i = 0; i < n; i++) {
		const char *dec;
		size_t dl;

		if (judge_lit(&w[i]))
			continue;
		judge_scan_words(j, s, w[i].raw, w[i].raw_len, t);
		/* $(printf '\x72\x65...'): the escapes spelled out */
		dec = decode_escapes(j, w[i].raw, w[i].raw_len, &dl);
		if (dec != NULL)
			judge_scan_words(j, s, dec, dl, t);
	}
	walk_scan_assignments(j, s, t);
}

/* The normalised absolute path a literal word names, or NULL. */
static const char *word_path(struct judge *j, const struct sh_word *w)
{
	if (!judge_lit(w) || w->len == 0 || (w->flags & (SHW_GLOB | SHW_BRACE)))
		return NULL;
	if (w->flags & SHW_TILDE)
		return w->len == 1 || w->text[1] == '/'
		           ? judge_joinpath(j, j->p->home, w->text + 1, w->len - 1)
		           : NULL;
	if (w->text[0] == '/')
		return judge_normpath(j, w->text, w->len);
	if (j->cwd_unknown || j->ncwd == 0)
		return NULL;
	return judge_joinpath(j, j->cwd[j->ncwd - 1], w->text, w->len);
}

const struct judge_file *walk_written_file(struct judge *j, const struct sh_word *w)
{
	const char *path = word_path(j, w);

	for (size_t i = j->nfiles; path != NULL && i > 0; i--)
		if (strcmp(j->files[i - 1].path, path) == 0)
			return &j->files[i - 1];
	return NULL;
}

/* Words of a command that could not be followed (a computed program name,
 * too many wrappers): what they name may still run, so their words raise. */
void walk_scan_rest(struct judge *j, struct judge_seg *s, const struct sh_word *w, size_t n,
                    enum target_type t)
{
	for (size_t i = 0; i < n; i++)
		if (judge_lit(&w[i]) || w[i].prefix > 0)
			judge_scan_words(j, s, w[i].text, judge_lit(&w[i]) ? w[i].len : w[i].prefix,
			                 t);
}

/* --- stdin: what a shell or interpreter in a pipeline would read --- */

static struct judge_stdin stdin_of_redirs(struct judge *j, const struct sh_node *n,
                                          const struct judge_stdin *in)
{
	struct judge_stdin r = *in;

	for (size_t i = 0; i < n->nredirs; i++) {
		const struct sh_redir *rd = &n->redirs[i];

		if (rd->fd > 0)
			continue;
		if (rd->op == SHR_HEREDOC && rd->doc != NULL) {
			r.kind = JUDGE_IN_TEXT;
			r.text = rd->doc->body;
			r.len = rd->doc->len;
			r.partial = rd->doc->computed;
		} else if (rd->op == SHR_HERESTRING) {
			r.kind = JUDGE_IN_TEXT;
			r.text = rd->word.text;
			r.len = rd->word.len;
			r.partial = !judge_lit(&rd->word);
		} else if (rd->op == SHR_IN && walk_written_file(j, &rd->word) != NULL) {
			/* echo reboot > /tmp/x; sh < /tmp/x */
			const struct judge_file *f = walk_written_file(j, &rd->word);

			r = (struct judge_stdin){JUDGE_IN_TEXT, f->text, f->len, f->partial};
		} else if (rd->op == SHR_IN || rd->op == SHR_INOUT || rd->op == SHR_DUP_IN) {
			r.kind = JUDGE_IN_UNKNOWN;
		}
	}
	return r;
}

/* What the pipeline stage n writes to stdout, when it is plain text:
 * echo/printf of words, or cat of a here-doc. */
/* base64 -d, xxd -r -p, rev and rot13 of visible text: the usual ways to hide
 * a command from a reader.  Returns false when w is none of them. */
static bool decode_filter(struct judge *j, const struct sh_word *w, size_t nw,
                          const struct judge_stdin *in, struct judge_stdin *out)
{
	static const char b64[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char *d;
	size_t o = 0;
	bool any_d = false, any_r = false;

	if (in->kind != JUDGE_IN_TEXT || nw == 0)
		return false;
	for (size_t i = 1; i < nw; i++) {
		any_d = any_d || judge_weq(&w[i], "-d") || judge_weq(&w[i], "--decode") ||
		        judge_weq(&w[i], "-D") || judge_weq(&w[i], "-di");
		any_r = any_r || judge_weq(&w[i], "-r") || judge_weq(&w[i], "-rp") ||
		        judge_weq(&w[i], "-pr");
	}
	d = arena_alloc(j->a, in->len + 1);
	if (d == NULL)
		return false;
	if (judge_weq(&w[0], "base64") && any_d) {
		unsigned acc = 0;
		int bits = 0;

		for (size_t i = 0; i < in->len; i++) {
			const char *q = memchr(b64, in->text[i], 64);

			if (q == NULL || in->text[i] == '\0')
				continue;
			acc = (acc << 6) | (unsigned)(q - b64);
			bits += 6;
			if (bits >= 8) {
				bits -= 8;
				d[o++] = (char)((acc >> bits) & 0xff);
			}
		}
	} else if (judge_weq(&w[0], "xxd") && any_r) {
		int hi = -1;

		for (size_t i = 0; i < in->len; i++) {
			int c = (unsigned char)in->text[i];
			int v = c >= '0' && c <= '9'   ? c - '0'
			        : c >= 'a' && c <= 'f' ? c - 'a' + 10
			        : c >= 'A' && c <= 'F' ? c - 'A' + 10
			                               : -1;

			if (v < 0)
				continue;
			if (hi < 0) {
				hi = v;
			} else {
				d[o++] = (char)(hi * 16 + v);
				hi = -1;
			}
		}
	} else if (judge_weq(&w[0], "rev") && nw == 1) {
		size_t st = 0;

		for (size_t i = 0; i <= in->len; i++) {
			if (i == in->len || in->text[i] == '\n') {
				for (size_t k = i; k > st; k--)
					d[o++] = in->text[k - 1];
				if (i < in->len)
					d[o++] = '\n';
				st = i + 1;
			}
		}
	} else if (judge_weq(&w[0], "tr") && nw == 3) {
		/* tr a-z n-za-m and friends: rot13 */
		for (size_t i = 0; i < in->len; i++) {
			char c = in->text[i];

			if (c >= 'a' && c <= 'z')
				c = (char)('a' + (c - 'a' + 13) % 26);
			else if (c >= 'A' && c <= 'Z')
				c = (char)('A' + (c - 'A' + 13) % 26);
			d[o++] = c;
		}
	} else if ((judge_weq(&w[0], "cat") || judge_weq(&w[0], "tee")) && nw == 1) {
		memcpy(d, in->text, in->len);
		o = in->len;
	} else {
		return false;
	}
	d[o] = '\0';
	/* only a guess (tr's sets, base64's options): the reader stays opaque too */
	*out = (struct judge_stdin){JUDGE_IN_TEXT, d, o, true};
	if (judge_weq(&w[0], "cat") || judge_weq(&w[0], "tee"))
		out->partial = in->partial;
	return true;
}

static struct judge_stdin stdout_of(struct judge *j, const struct sh_node *n,
                                    const struct judge_stdin *in)
{
	struct judge_stdin r = {.kind = JUDGE_IN_UNKNOWN};
	const struct sh_word *w;
	size_t nw, i = 0;
	bool guessed = false;

	if (n->kind != SH_SIMPLE)
		return r;
	w = n->words;
	nw = n->nwords;
	/* sudo -u root echo ..., chroot / cat <<EOF: behind a wrapper the text is
	 * only a guess (its options may take values), so it is marked partial and
	 * the reader stays at least opaque */
	while (i < nw && (w[i].flags & SHW_ASSIGN))
		i++;
	if (i < nw && !judge_weq(&w[i], "echo") && !judge_weq(&w[i], "printf") &&
	    !judge_weq(&w[i], "cat")) {
		{
			/* the first echo/printf/cat among the next few words */
			for (size_t k = i + 1; k < nw && k < i + 8; k++) {
				if (judge_weq(&w[k], "echo") || judge_weq(&w[k], "printf") ||
				    judge_weq(&w[k], "cat")) {
					i = k;
					guessed = true;
					break;
				}
			}
		}
	}
	if (i >= nw)
		return r;
	if (judge_weq(&w[i], "echo")) {
		i++;
		while (i < nw && (judge_weq(&w[i], "-n") || judge_weq(&w[i], "-e") ||
		                  judge_weq(&w[i], "-E") || judge_weq(&w[i], "-ne") ||
		                  judge_weq(&w[i], "-en")))
			i++;
		r.text = walk_join_words(j, w + i, nw - i, &r.len, &r.partial);
		r.kind = JUDGE_IN_TEXT;
	} else if (judge_weq(&w[i], "printf") && i + 1 < nw && judge_lit(&w[i + 1]) &&
	           memchr(w[i + 1].text, '%', w[i + 1].len) == NULL) {
		char *d = arena_alloc(j->a, w[i + 1].len + 1);
		size_t o = 0;

		/* printf always decodes \n, \t and \\ in its format */
		for (size_t k = 0; d != NULL && k < w[i + 1].len; k++) {
			char c = w[i + 1].text[k];

			if (c == '\\' && k + 1 < w[i + 1].len &&
			    strchr("nt\\", w[i + 1].text[k + 1])) {
				c = w[i + 1].text[++k];
				c = c == 'n' ? '\n' : c == 't' ? '\t' : c;
			}
			d[o++] = c;
		}
		r.kind = d ? JUDGE_IN_TEXT : JUDGE_IN_UNKNOWN;
		r.text = d;
		r.len = o;
	} else if (judge_weq(&w[i], "cat") && i + 1 == nw) {
		struct judge_stdin none = {.kind = JUDGE_IN_UNKNOWN};

		r = stdin_of_redirs(j, n, &none);
	} else if (judge_weq(&w[i], "cat") && i + 2 == nw && walk_written_file(j, &w[i + 1])) {
		/* echo reboot > /tmp/x; cat /tmp/x | sh */
		const struct judge_file *f = walk_written_file(j, &w[i + 1]);

		r = (struct judge_stdin){JUDGE_IN_TEXT, f->text, f->len, f->partial};
	}
	if (r.kind != JUDGE_IN_TEXT && !guessed) {
		struct judge_stdin mine = stdin_of_redirs(j, n, in);

		decode_filter(j, w + i, nw - i, &mine, &r);
	}
	if (guessed && r.kind == JUDGE_IN_TEXT)
		r.partial = true;
	return r;
}

/* Text a shell reads from stdin, echo's or printf's escapes (\n) both
 * decoded and not: judge both spellings, keep the higher. */
void walk_stdin_script(struct judge *j, struct judge_seg *s, const struct judge_stdin *in,
                       enum target_type t, const char *who)
{
	if (in->kind != JUDGE_IN_TEXT) {
		judge_opaque(j, s,
		             judge_fmt(j, "%s reads commands from stdin that cannot be seen", who),
		             NULL, 0, t);
		return;
	}
	if (in->partial)
		judge_opaque(j, s,
		             judge_fmt(j, "%s reads commands that hold run-time expansions", who),
		             NULL, 0, t);
	walk_text(j, s, in->text, in->len, t, &(struct judge_stdin){.kind = JUDGE_IN_UNKNOWN}, who);
	{
		/* echo -e 'a\nb', printf '\x72...': judged decoded as well */
		size_t dl;
		const char *d = decode_escapes(j, in->text, in->len, &dl);

		if (d != NULL)
			walk_text(j, s, d, dl, t, &(struct judge_stdin){.kind = JUDGE_IN_UNKNOWN},
			          who);
	}
}

/* Resolves the program word to a name the policy can look up; NULL when it
 * is not a plain program (a reason has been recorded). */
static const char *program_name(struct judge *j, struct judge_seg *s, const struct sh_word *w,
                                enum target_type t)
{
	const char *slash;
	const char *base, *dir;

	if (!judge_lit(w)) {
		judge_reason(j, s, "computed-program",
		             judge_fmt(j, "the program name %.*s is known only at run time",
		                       (int)(w->raw_len > 80 ? 80 : w->raw_len), w->raw),
		             j->p->unknown_program, t);
		return NULL;
	}
	if (w->flags & (SHW_GLOB | SHW_BRACE) || w->len == 0 ||
	    memchr(w->text, '\0', w->len) != NULL) {
		judge_reason(j, s, "computed-program",
		             judge_fmt(j, "the program name %.*s is expanded at run time",
		                       (int)(w->raw_len > 80 ? 80 : w->raw_len), w->raw),
		             j->p->unknown_program, t);
		return NULL;
	}
	slash = memrchr(w->text, '/', w->len);
	if (slash == NULL && !(w->flags & SHW_TILDE))
		return w->text;
	base = slash ? slash + 1 : w->text;
	dir = slash ? judge_normpath(j, w->text, (size_t)(slash - w->text)) : "~";
	if (dir != NULL && w->text[0] == '/' && judge_in_list(&j->p->standard_dirs, dir) && *base)
		return base;
	{
		const struct policy_program *pr = policy_program_find(j->p, base, strlen(base));
		enum risk_class cls = j->p->unknown_program;

		if (pr != NULL && pr->base[t] > cls)
			cls = pr->base[t];
		judge_reason(j, s, "program-outside-standard-dirs",
		             judge_fmt(j, "%.*s is not in a standard system directory",
		                       (int)(w->len > 100 ? 100 : w->len), w->text),
		             cls, t);
	}
	return NULL;
}

static bool is_defined_function(const struct judge *j, const char *name)
{
	for (size_t i = 0; i < j->nfuncs; i++)
		if (strcmp(j->funcs[i], name) == 0)
			return true;
	return false;
}

void walk_argv(struct judge *j, struct judge_seg *s, const struct sh_word *w, size_t n,
               enum target_type t, const struct judge_stdin *in, bool extra)
{
	const char *name = n > 0 ? program_name(j, s, w, t) : NULL;
	const struct unwrap_spec *wr;
	struct judge_argv av = {w + 1, n - 1, extra};

	if (n == 0)
		return;
	j->prog_mark = j->write_events;
	if (j->obs != NULL && j->obs->program != NULL)
		j->obs->program(j->obs->ctx, w, n, extra);
	if (name == NULL) {
		j->odd = true;
		const struct judge_file *f = judge_lit(w) ? walk_written_file(j, w) : NULL;

		walk_scan_rest(j, s, w + 1, n - 1, t);
		if (!judge_lit(w)) {
			walk_scan_raw(j, s, w, 1, t);
			scan_assignment_pairs(j, s, t);
		}
		if (f != NULL)
			walk_stdin_script(
			    j, s, &(struct judge_stdin){JUDGE_IN_TEXT, f->text, f->len, f->partial},
			    t, "a script written by this command");
		return;
	}
	for (size_t i = 0; i < j->ninfunc; i++) {
		if (strcmp(j->infunc[i], name) == 0) {
			judge_reason(
			    j, s, "recursive-function",
			    judge_fmt(j, "function %s calls itself (a fork bomb's shape)", name),
			    RISK_DESTRUCTIVE, t);
			return;
		}
	}
	if (is_defined_function(j, name)) {
		j->odd = true;
		judge_reason(j, s, "function-call",
		             judge_fmt(j, "%s (a function defined in this command)", name),
		             RISK_READ_ONLY, t);
		/* f() { "$@"; }; f reboot: a function may run its arguments */
		walk_scan_rest(j, s, w + 1, n - 1, t);
		/* (reboot() { :; }); reboot: the definition may not be in force where the
		 * call runs, so a name the policy knows is also judged as that program */
		if (policy_program_find(j->p, name, strlen(name)) == NULL &&
		    unwrap_find(name) == NULL && !judge_in_list(&j->p->shells, name) &&
		    !judge_in_list(&j->p->interpreters, name))
			return;
	}
	wr = unwrap_find(name);
	if (wr != NULL && unwrap_wrapper(j, s, wr, w, n, t, in, extra))
		return;
	if (extra && wr == NULL &&
	    (judge_in_list(&j->p->shells, name) || judge_in_list(&j->p->interpreters, name))) {
		judge_opaque(j, s, judge_fmt(j, "xargs runs %s with arguments from stdin", name),
		             NULL, 0, t);
	}
	if (judge_in_list(&j->p->shells, name)) {
		j->odd = true;
		unwrap_shell(j, s, w, n, t, in);
		return;
	}
	if (judge_in_list(&j->p->interpreters, name)) {
		j->odd = true;
		unwrap_interpreter(j, s, w, n, t, in);
		return;
	}
	if (tools_builtin(j, s, name, w, n, t, in, extra)) {
		j->odd = true;
		return;
	}
	if (strcmp(name, "ssh") == 0) {
		j->odd = true;
		unwrap_ssh(j, s, w, n, t, in);
		return;
	}
	if (unwrap_guest_exec(j, s, name, w, n, t, in)) {
		j->odd = true;
		return;
	}
	if (strcmp(name, "su") == 0 || strcmp(name, "runuser") == 0) {
		j->odd = true;
		unwrap_su(j, s, w, n, t, in);
		return;
	}
	if (strcmp(name, "watch") == 0) {
		j->odd = true;
		unwrap_watch(j, s, w, n, t, in);
		return;
	}
	if (strcmp(name, "flock") == 0) {
		j->odd = true;
		/* flock FILE ...: creates FILE when it does not exist */
		size_t lk = unwrap_skip_options(w, n, 1, "wE");
		bool fd = lk < n && judge_lit(&w[lk]) && w[lk].len > 0;

		for (size_t k = 0; lk < n && k < w[lk].len && fd; k++)
			fd = w[lk].text[k] >= '0' && w[lk].text[k] <= '9';
		if (lk < n && !fd)
			judge_write(j, s, &w[lk], t);
		for (size_t i = 1; i + 1 < n; i++) {
			if (judge_weq(&w[i], "-c") || judge_weq(&w[i], "--command")) {
				walk_text(j, s, w[i + 1].text, w[i + 1].len, t, in, "flock -c");
				return;
			}
		}
		{
			size_t i = unwrap_skip_options(w, n, 1, "wE");

			if (i + 1 < n) {
				walk_argv(j, s, w + i + 1, n - i - 1, t, in, extra);
				return;
			}
		}
	}
	if (strcmp(name, "psql") == 0 || strcmp(name, "mysql") == 0 ||
	    strcmp(name, "mariadb") == 0 || strcmp(name, "sqlite3") == 0) {
		enum risk_class sql;

		if (tools_sql(j, s, name, w, n, t, &sql)) {
			/* the SQL is judged; the client's options too, and where it goes */
			struct judge_rec rec = {.seg = s->num, .wrapped = j->odd_wrap > 0};
			bool allowed = false;

			j->in_call = true;
			j->call_max = -1;
			judge_prove(j, s, name, &av, t);
			secrets_args(j, s, name, &av, NULL, t);
			if (strcmp(name, "sqlite3") != 0)
				allowed = netclient_sql(j, s, name, &av, sql == RISK_READ_ONLY, t);
			rec.proven =
			    j->call_max < (int)RISK_CONFIG_MUTATION && sql == RISK_READ_ONLY;
			rec.net_read = rec.proven && allowed;
			j->in_call = false;
			judge_rec_add(j, &rec);
			return;
		}
	}
	if (strcmp(name, "find") == 0)
		unwrap_find_exec(j, s, w, n, t);
	j->prog_mark = j->write_events; /* -exec bodies judged: this program's own writes next */
	if (strcmp(name, "cd") == 0 || strcmp(name, "pushd") == 0)
		tools_track_cd(j, w, n);
	if (strcmp(name, "sed") == 0)
		tools_sed(j, s, w, n, t);
	if (strcmp(name, "awk") == 0 || strcmp(name, "gawk") == 0 || strcmp(name, "mawk") == 0 ||
	    strcmp(name, "nawk") == 0)
		tools_awk(j, s, w, n, t);
	if (strcmp(name, "dd") == 0)
		tools_dd(j, s, w, n, t);
	if (strcmp(name, "tar") == 0)
		dirwrite_tar(j, s, w, n, t);
	if (strcmp(name, "wget") == 0 || strcmp(name, "curl") == 0)
		dirwrite_download(j, s, name, w, n, t);
	if (strcmp(name, "git") == 0)
		dirwrite_git(j, s, w, n, t);
	if (strcmp(name, "unzip") == 0 || strcmp(name, "7z") == 0 || strcmp(name, "7za") == 0 ||
	    strcmp(name, "ar") == 0)
		dirwrite_unpack(j, s, name, w, n, t);
	if (strcmp(name, "cpio") == 0 || strcmp(name, "unrar") == 0)
		dirwrite_cpio_unrar(j, s, name, w, n, t);
	if (strcmp(name, "export") == 0 || strcmp(name, "declare") == 0 ||
	    strcmp(name, "typeset") == 0 || strcmp(name, "local") == 0 ||
	    strcmp(name, "readonly") == 0) {
		bool env = strcmp(name, "export") == 0;

		for (size_t i = 1; i < n; i++) {
			if (judge_weq(&w[i], "-x"))
				env = true;
			if ((w[i].flags & SHW_ASSIGN) && env)
				walk_env_assignment(j, s, &w[i], t);
			else if (w[i].flags & SHW_ASSIGN)
				walk_assignment(j, s, &w[i], t);
			else if (!judge_lit(&w[i]))
				judge_reason(
				    j, s, "env-changes-program",
				    judge_fmt(j, "%s of a name known only at run time", name),
				    j->p->unknown_program, t);
		}
	}
	judge_command(j, s, name, &av, t);
}

static void judge_redirs(struct judge *j, struct judge_seg *s, const struct sh_node *n,
                         enum target_type t)
{
	for (size_t i = 0; i < n->nredirs; i++) {
		const struct sh_redir *r = &n->redirs[i];

		if (j->obs != NULL && j->obs->redirect != NULL && r->op != SHR_HEREDOC &&
		    r->op != SHR_HERESTRING)
			j->obs->redirect(j->obs->ctx, &r->word);
		if (r->op != SHR_HEREDOC && r->op != SHR_HERESTRING && r->op != SHR_DUP_IN)
			netclient_redirect(j, s, &r->word, t);
		switch (r->op) {
		case SHR_IN:
			secrets_read(j, s, &r->word, t);
			break;
		case SHR_INOUT:
			secrets_read(j, s, &r->word, t);
			judge_write(j, s, &r->word, t);
			break;
		case SHR_OUT:
		case SHR_APPEND:
		case SHR_CLOBBER:
		case SHR_ALL:
		case SHR_ALL_APPEND:
			judge_write(j, s, &r->word, t);
			break;
		case SHR_DUP_OUT: {
			bool fd = judge_lit(&r->word) && r->word.len > 0;

			for (size_t k = 0; k < r->word.len && fd; k++)
				fd = (r->word.text[k] >= '0' && r->word.text[k] <= '9') ||
				     (k + 1 == r->word.len && r->word.text[k] == '-');
			if (!fd)
				judge_write(j, s, &r->word, t);
			break;
		}
		default:
			break;
		}
	}
}

static void walk(struct judge *j, const struct sh_node *n, enum target_type t,
                 const struct judge_stdin *in);

/* echo TEXT > FILE, cat > FILE <<EOF: remember what FILE will hold. */
static void record_written(struct judge *j, const struct sh_node *n)
{
	struct judge_stdin out;

	if (n->nredirs == 0)
		return;
	out = stdout_of(j, n, &(struct judge_stdin){.kind = JUDGE_IN_UNKNOWN});
	for (size_t i = 0; i < n->nredirs; i++) {
		const struct sh_redir *r = &n->redirs[i];
		const char *path;

		if (r->fd > 1 ||
		    !(r->op == SHR_OUT || r->op == SHR_APPEND || r->op == SHR_CLOBBER ||
		      r->op == SHR_ALL || r->op == SHR_ALL_APPEND))
			continue;
		path = word_path(j, &r->word);
		if (path == NULL)
			continue;
		if (j->nfiles == JUDGE_MAX_FILES)
			memmove(j->files, j->files + 1,
			        (JUDGE_MAX_FILES - 1) * sizeof(j->files[0]));
		else
			j->nfiles++;
		j->files[j->nfiles - 1] = (struct judge_file){
		    .path = path,
		    .text = out.kind == JUDGE_IN_TEXT ? out.text : "",
		    .len = out.kind == JUDGE_IN_TEXT ? out.len : 0,
		    .partial = out.kind != JUDGE_IN_TEXT || out.partial || r->op == SHR_APPEND ||
		               r->op == SHR_ALL_APPEND,
		};
	}
}

#define MAX_BRACE_WORDS 256

/* Brace expansion of one literal word ({a,b}, nested), as bash does before
 * running anything: {apt-get,install,x} is three words.  Returns -1 past
 * MAX_BRACE_WORDS. */
static int brace_expand(struct judge *j, const struct sh_word *tmpl, const char *t, size_t len,
                        struct sh_word *out, size_t *n, int depth_left)
{
	if (depth_left <= 0 || len > 4096)
		return -1; /* {a,b}{c,d}... past 8 groups, or a huge word: computed */
	for (size_t i = 0; i < len; i++) {
		size_t commas[MAX_BRACE_WORDS], nc = 0, k;
		int depth = 0;

		if (t[i] != '{')
			continue;
		for (k = i; k < len; k++) {
			if (t[k] == '{')
				depth++;
			else if (t[k] == '}' && --depth == 0)
				break;
			else if (t[k] == ',' && depth == 1 && nc < MAX_BRACE_WORDS)
				commas[nc++] = k;
		}
		if (k >= len || nc == 0)
			continue;
		for (size_t a = 0; a <= nc; a++) {
			size_t from = a == 0 ? i + 1 : commas[a - 1] + 1;
			size_t to = a == nc ? k : commas[a];
			size_t nl = i + (to - from) + (len - k - 1);
			char *buf = arena_alloc(j->a, nl + 1);

			if (buf == NULL)
				return -1;
			memcpy(buf, t, i);
			memcpy(buf + i, t + from, to - from);
			memcpy(buf + i + (to - from), t + k + 1, len - k - 1);
			buf[nl] = '\0';
			if (brace_expand(j, tmpl, buf, nl, out, n, depth_left - 1) != 0)
				return -1;
		}
		return 0;
	}
	if (*n >= MAX_BRACE_WORDS)
		return -1;
	out[*n] = *tmpl;
	out[*n].text = t;
	out[*n].len = len;
	out[*n].prefix = len;
	out[*n].flags &= ~(unsigned)SHW_BRACE;
	(*n)++;
	return 0;
}

/* The command's words with brace expansions done; a word past the limit, or
 * holding expansions too, becomes computed. */
static const struct sh_word *expand_words(struct judge *j, const struct sh_word *w, size_t n,
                                          size_t *nout)
{
	struct sh_word *out;
	size_t cnt = 0;
	bool any = false;

	for (size_t i = 0; i < n; i++)
		any = any || (w[i].flags & SHW_BRACE);
	*nout = n;
	if (!any)
		return w;
	out = arena_alloc(j->a, (n + MAX_BRACE_WORDS) * sizeof(*out));
	if (out == NULL)
		return w;
	for (size_t i = 0; i < n; i++) {
		size_t before = cnt;

		if ((w[i].flags & SHW_BRACE) && judge_lit(&w[i]) &&
		    cnt + MAX_BRACE_WORDS <= n + MAX_BRACE_WORDS) {
			struct sh_word part[MAX_BRACE_WORDS];
			size_t np = 0;

			if (brace_expand(j, &w[i], w[i].text, w[i].len, part, &np, 8) == 0 &&
			    cnt + np <= n + MAX_BRACE_WORDS - (n - i - 1)) {
				memcpy(out + cnt, part, np * sizeof(*part));
				cnt += np;
				continue;
			}
			cnt = before;
			out[cnt] = w[i];
			out[cnt].flags |= SHW_COMPUTED | SHW_SPLIT;
			out[cnt].prefix = 0;
			cnt++;
			continue;
		}
		out[cnt++] = w[i];
	}
	*nout = cnt;
	return out;
}

/* Expansions that run code hidden in a variable's value: ${x@P} expands the
 * value as a prompt (its $(...) run), ${!x} takes the value as a name, whose
 * subscript is arithmetic (a[$(reboot)]). */
static void walk_value_code(struct judge *j, struct judge_seg *s, const struct sh_word *w, size_t n,
                            enum target_type t)
{
	for (size_t i = 0; i < n; i++) {
		const char *r = w[i].raw;
		size_t rl = w[i].raw_len;

		if (!(w[i].flags & SHW_COMPUTED))
			continue;
		for (size_t k = 0; k + 2 < rl; k++) {
			bool prompt = r[k] == '@' && r[k + 1] == 'P' && r[k + 2] == '}';
			bool indirect = r[k] == '$' && r[k + 1] == '{' && r[k + 2] == '!';

			if (prompt || indirect) {
				judge_reason(
				    j, s, "value-runs-code",
				    prompt ? "${...@P} expands a value as a prompt, running the "
				             "$(...) in it"
				           : "${!...} uses a value as a name, whose subscript can "
				             "run a $(...)",
				    j->p->unknown_program, t);
				return;
			}
		}
	}
}

static void walk_simple(struct judge *j, const struct sh_node *n, enum target_type t,
                        const struct judge_stdin *in)
{
	size_t nw;
	const struct sh_word *w = expand_words(j, n->words, n->nwords, &nw);
	struct judge_seg *s = new_seg(j, w, nw);
	struct judge_stdin mine = stdin_of_redirs(j, n, in);
	size_t i = 0;

	judge_redirs(j, s, n, t);
	record_written(j, n);
	walk_value_code(j, s, n->words, n->nwords, t);
	while (i < nw && (w[i].flags & SHW_ASSIGN))
		i++;
	/* FOO=1 cmd: FOO is in cmd's environment; FOO=1 alone is a shell variable */
	for (size_t k = 0; k < i; k++) {
		if (i < nw)
			walk_env_assignment(j, s, &w[k], t);
		else
			walk_assignment(j, s, &w[k], t);
	}
	if (i == nw) {
		judge_reason(j, s, "assignment-only",
		             nw ? "shell variables only" : "redirection only", RISK_READ_ONLY, t);
		return;
	}
	walk_argv(j, s, w + i, nw - i, t, &mine, false);
}

/* [[ X -eq Y ]] evaluates X and Y as arithmetic, and a variable's value is
 * evaluated again: a value read at run time (a[$(reboot)]) runs code.
 * [[ -v a[...] ]] evaluates the subscript. */
static void walk_cond(struct judge *j, const struct sh_node *n, enum target_type t)
{
	static const char *const ops[] = {"-eq", "-ne", "-lt", "-le", "-gt", "-ge"};
	bool arith = false, hazard = false;

	for (size_t i = 0; i < n->nwords; i++)
		for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++)
			arith = arith || judge_weq(&n->words[i], ops[k]);
	for (size_t i = 0; i < n->nwords; i++) {
		const struct sh_word *w = &n->words[i];
		bool operand_of_v = i > 0 && judge_weq(&n->words[i - 1], "-v");

		if ((arith || operand_of_v) &&
		    (!judge_lit(w) || tools_arith_hazard(w->text, w->len, false)))
			hazard = true;
	}
	if (hazard) {
		struct judge_seg *s = new_seg(j, n->words, n->nwords);

		judge_reason(j, s, "arith-eval",
		             "[[ ]] evaluates arithmetic on a value known only at run time or a "
		             "subscript, which can run a $(...) hidden in it",
		             j->p->unknown_program, t);
	}
}

/* for f in LIST: each word of the list is a value of f (and so of a path
 * spelled "$f"); `for f; do` takes the arguments, unknown. */
static void loop_values(struct judge *j, const struct sh_node *n)
{
	size_t nl = strlen(n->name);

	if (n->nwords == 0) {
		static const struct sh_word unknown = {
		    .text = "", .raw = "", .flags = SHW_COMPUTED};
		struct sh_word *v = arena_alloc(j->a, sizeof(*v));
		char *txt = arena_alloc(j->a, nl + 2);

		if (v == NULL || txt == NULL || j->nassigns == JUDGE_MAX_ASSIGNS) {
			j->assigns_lost = true;
			return;
		}
		memcpy(txt, n->name, nl);
		txt[nl] = '=';
		txt[nl + 1] = '\0';
		*v = unknown;
		v->text = v->raw = txt;
		v->len = v->raw_len = nl + 1;
		v->name_len = nl;
		j->assigns[j->nassigns++] = v;
		return;
	}
	for (size_t i = 0; i < n->nwords; i++) {
		const struct sh_word *w = &n->words[i];
		struct sh_word *v = arena_alloc(j->a, sizeof(*v));
		char *txt = arena_alloc(j->a, nl + 1 + w->len + 1);
		char *raw = arena_alloc(j->a, nl + 1 + w->raw_len + 1);

		if (v == NULL || txt == NULL || raw == NULL || j->nassigns == JUDGE_MAX_ASSIGNS) {
			j->assigns_lost = true;
			return;
		}
		memcpy(txt, n->name, nl);
		txt[nl] = '=';
		memcpy(txt + nl + 1, w->text, w->len);
		txt[nl + 1 + w->len] = '\0';
		memcpy(raw, n->name, nl);
		raw[nl] = '=';
		memcpy(raw + nl + 1, w->raw, w->raw_len);
		raw[nl + 1 + w->raw_len] = '\0';
		*v = *w;
		v->text = txt;
		v->len = nl + 1 + w->len;
		v->prefix = (w->flags & SHW_COMPUTED) ? nl + 1 + w->prefix : v->len;
		v->raw = raw;
		v->raw_len = nl + 1 + w->raw_len;
		v->name_len = nl;
		v->flags |= SHW_ASSIGN;
		j->assigns[j->nassigns++] = v;
	}
}

static void walk(struct judge *j, const struct sh_node *n, enum target_type t,
                 const struct judge_stdin *in)
{
	if (n == NULL)
		return;
	switch (n->kind) {
	case SH_SIMPLE:
		walk_simple(j, n, t, in);
		break;
	case SH_PIPELINE: {
		struct judge_stdin prev = *in;

		for (size_t i = 0; i < n->nkids; i++) {
			struct judge_stdin from =
			    i == 0 ? *in : stdout_of(j, n->kids[i - 1], &prev);

			walk(j, n->kids[i], t, &from);
			prev = from;
		}
	} break;
	case SH_LIST:
		for (size_t i = 0; i < n->nkids; i++)
			walk(j, n->kids[i], t, in);
		break;
	case SH_GROUP:
		if (n->nwords > 0 && strcmp(n->group_kw, "((") == 0) {
			/* ((apt-get install x)) is arithmetic and fails, but say what it names */
			struct judge_seg *s = new_seg(j, n->words, n->nwords);

			judge_scan_words(j, s, n->words[0].text, n->words[0].len, t);
			if (tools_arith_hazard(n->words[0].text, n->words[0].len, false))
				judge_reason(
				    j, s, "arith-eval",
				    "arithmetic with a subscript or substitution can run a "
				    "$(...) hidden in it",
				    j->p->unknown_program, t);
		}
		if (strcmp(n->group_kw, "[[") == 0)
			walk_cond(j, n, t);
		if ((strcmp(n->group_kw, "for") == 0 || strcmp(n->group_kw, "select") == 0) &&
		    n->name != NULL)
			loop_values(j, n);
		if (n->nredirs > 0) {
			struct judge_seg *s = new_seg(j, NULL, 0);

			s->text = judge_fmt(j, "%s ... (redirections of a group)", n->group_kw);
			judge_redirs(j, s, n, t);
		}
		{
			/* { bash; } <<EOF and while read ...; done < file: the group's stdin */
			struct judge_stdin gin = stdin_of_redirs(j, n, in);

			for (size_t i = 0; i < n->nkids; i++)
				walk(j, n->kids[i], t, &gin);
		}
		break;
	case SH_FUNCDEF:
		if (j->nfuncs < JUDGE_MAX_FUNCS)
			j->funcs[j->nfuncs++] = n->name;
		if (j->ninfunc < JUDGE_MAX_FUNCS)
			j->infunc[j->ninfunc++] = n->name;
		for (size_t i = 0; i < n->nkids; i++)
			walk(j, n->kids[i], t, in);
		j->ninfunc--;
		break;
	}
}

/* Parses text as shell and judges everything in it; a parse failure is
 * opaque code (with its words still scanned). */
void walk_text(struct judge *j, struct judge_seg *s, const char *text, size_t len,
               enum target_type t, const struct judge_stdin *in, const char *what)
{
	struct sh_parse res;

	if (j->reparse >= JUDGE_MAX_REPARSE) {
		judge_opaque(j, s, judge_fmt(j, "%s nested too deeply to judge", what), text, len,
		             t);
		return;
	}
	if (len > CLASSIFIER_MAX_COMMAND) {
		judge_opaque(j, s, judge_fmt(j, "%s too long to judge", what), NULL, 0, t);
		return;
	}
	if (len > j->budget) {
		judge_opaque(j, s, judge_fmt(j, "%s: too much nested code to judge", what), NULL, 0,
		             t);
		return;
	}
	j->budget -= len;
	if (j->reparse > 0)
		j->odd = true; /* a string run as code: no root tier, no network view */
	j->reparse++;
	if (sh_parse(j->a, text, len, JUDGE_MAX_NESTING, &res) != 0) {
		judge_opaque(
		    j, s,
		    judge_fmt(j, "%s cannot be parsed: %s at byte %zu", what, res.err, res.err_pos),
		    text, len, t);
	} else {
		if (res.doc_at_eof)
			judge_opaque(j, s,
			             judge_fmt(j, "%s: a here-document is not terminated", what),
			             NULL, 0, t);
		if (j->reparse == 1 && j->top == NULL) {
			j->top = res.root;
			j->top_nsubs = (int)res.nsubs;
		}
		walk(j, res.root, t, in);
		for (size_t i = 0; i < res.nsubs; i++)
			walk(j, res.subs[i], t, &(struct judge_stdin){.kind = JUDGE_IN_UNKNOWN});
	}
	j->reparse--;
}
