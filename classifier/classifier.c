/* classifier.c -- walks a parsed command, looks through wrappers to what
 * really runs, and hands each program to the policy (judge.c).
 *
 * Strings that are code (bash -c '...', eval, a here-doc fed to a shell,
 * echo ... | sh, ssh host '...', watch '...') are parsed again, recursively,
 * with a depth limit.  Code in another language is opaque. */
#include "classifier/classifier.h"

#include "classifier/arena.h"
#include "classifier/judge.h"
#include "classifier/shparse.h"
#include "lib/xalloc.h"

#include <stdlib.h>
#include <string.h>

#define MAX_NESTING 48 /* groups and substitutions inside one parse */
#define MAX_REPARSE 12 /* bash -c inside bash -c ... */
#define MAX_UNWRAP  64 /* sudo env nice timeout ... */

struct classifier {
	const struct policy *p;
};

/* What a command reads on stdin. */
enum stdin_kind { IN_NONE, IN_TEXT, IN_UNKNOWN };

struct stdin_src {
	enum stdin_kind kind;
	const char *text;
	size_t len;
	bool partial; /* text holds expansions: only its literal parts are known */
};

static void judge_text(struct judge *j, struct judge_seg *s, const char *text, size_t len,
                       enum target_type t, const struct stdin_src *in, const char *what);
static void judge_argv(struct judge *j, struct judge_seg *s, const struct sh_word *w, size_t n,
                       enum target_type t, const struct stdin_src *in, bool extra);

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

static bool lit(const struct sh_word *w)
{
	return !(w->flags & SHW_COMPUTED);
}

static bool weq(const struct sh_word *w, const char *s)
{
	return lit(w) && strlen(s) == w->len && memcmp(w->text, s, w->len) == 0;
}

static bool in_list(const struct strlist *l, const char *s)
{
	return policy_strlist_has(l, s, strlen(s));
}

/* Joins words with spaces (computed ones contribute their literal parts);
 * *partial tells whether any was computed. */
static const char *join_words(struct judge *j, const struct sh_word *w, size_t n, size_t *len,
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
		if (!lit(&w[i]))
			*partial = true;
	}
	*q = '\0';
	*len = (size_t)(q - out);
	return out;
}

static struct judge_seg *new_seg(struct judge *j, const struct sh_word *w, size_t n)
{
	struct judge_seg *s = arena_alloc(j->a, sizeof(*s));
	static struct judge_seg overflow = {0};

	if (s == NULL)
		return &overflow;
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

	if (n >= 3 && memcmp(name, "LD_", 3) == 0)
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
static void judge_assignment(struct judge *j, struct judge_seg *s, const struct sh_word *w,
                             enum target_type t)
{
	const char *eq = memchr(w->text, '=', w->len);
	size_t vl = eq ? w->len - (size_t)(eq + 1 - w->text) : 0;

	if (j->nassigns < JUDGE_MAX_ASSIGNS)
		j->assigns[j->nassigns++] = w;
	if (w->name_len > 0 && dangerous_env(w->text, w->name_len)) {
		judge_reason(j, s, "env-changes-program",
		             judge_fmt(j, "sets %.*s, which changes what programs run",
		                       (int)w->name_len, w->text),
		             j->p->unknown_program, t);
		if (eq != NULL)
			judge_scan_words(j, s, eq + 1, vl, t);
	}
}

/* A program name or code computed at run time may be any value assigned so
 * far (c=reboot; $c): the words of those values raise. */
static void scan_assignments(struct judge *j, struct judge_seg *s, enum target_type t)
{
	for (size_t i = 0; i < j->nassigns; i++) {
		const struct sh_word *w = j->assigns[i];
		const char *eq = memchr(w->text, '=', w->len);

		if (eq != NULL)
			judge_scan_words(j, s, eq + 1, w->len - (size_t)(eq + 1 - w->text), t);
	}
}

/* Code computed at run time ($(echo reboot), "$X"): what its spelling names
 * may be what runs, so scan the source text of the words as well. */
static void scan_raw(struct judge *j, struct judge_seg *s, const struct sh_word *w, size_t n,
                     enum target_type t)
{
	for (size_t i = 0; i < n; i++)
		if (!lit(&w[i]))
			judge_scan_words(j, s, w[i].raw, w[i].raw_len, t);
	scan_assignments(j, s, t);
}

/* The normalised absolute path a literal word names, or NULL. */
static const char *word_path(struct judge *j, const struct sh_word *w)
{
	if (!lit(w) || w->len == 0 || (w->flags & (SHW_GLOB | SHW_BRACE)))
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

static const struct judge_file *written_file(struct judge *j, const struct sh_word *w)
{
	const char *path = word_path(j, w);

	for (size_t i = j->nfiles; path != NULL && i > 0; i--)
		if (strcmp(j->files[i - 1].path, path) == 0)
			return &j->files[i - 1];
	return NULL;
}

/* Words of a command that could not be followed (a computed program name,
 * too many wrappers): what they name may still run, so their words raise. */
static void scan_rest(struct judge *j, struct judge_seg *s, const struct sh_word *w, size_t n,
                      enum target_type t)
{
	for (size_t i = 0; i < n; i++)
		if (lit(&w[i]) || w[i].prefix > 0)
			judge_scan_words(j, s, w[i].text, lit(&w[i]) ? w[i].len : w[i].prefix, t);
}

/* --- stdin: what a shell or interpreter in a pipeline would read --- */

static struct stdin_src stdin_of_redirs(const struct sh_node *n, const struct stdin_src *in)
{
	struct stdin_src r = *in;

	for (size_t i = 0; i < n->nredirs; i++) {
		const struct sh_redir *rd = &n->redirs[i];

		if (rd->fd > 0)
			continue;
		if (rd->op == SHR_HEREDOC && rd->doc != NULL) {
			r.kind = IN_TEXT;
			r.text = rd->doc->body;
			r.len = rd->doc->len;
			r.partial = rd->doc->computed;
		} else if (rd->op == SHR_HERESTRING) {
			r.kind = IN_TEXT;
			r.text = rd->word.text;
			r.len = rd->word.len;
			r.partial = !lit(&rd->word);
		} else if (rd->op == SHR_IN || rd->op == SHR_INOUT || rd->op == SHR_DUP_IN) {
			r.kind = IN_UNKNOWN;
		}
	}
	return r;
}

/* What the pipeline stage n writes to stdout, when it is plain text:
 * echo/printf of words, or cat of a here-doc. */
static struct stdin_src stdout_of(struct judge *j, const struct sh_node *n)
{
	struct stdin_src r = {.kind = IN_UNKNOWN};
	const struct sh_word *w;
	size_t nw, i = 0;

	if (n->kind != SH_SIMPLE)
		return r;
	w = n->words;
	nw = n->nwords;
	while (i < nw && (w[i].flags & SHW_ASSIGN))
		i++;
	if (i >= nw)
		return r;
	if (weq(&w[i], "echo")) {
		i++;
		while (i < nw && (weq(&w[i], "-n") || weq(&w[i], "-e") || weq(&w[i], "-E") ||
		                  weq(&w[i], "-ne") || weq(&w[i], "-en")))
			i++;
		r.text = join_words(j, w + i, nw - i, &r.len, &r.partial);
		r.kind = IN_TEXT;
	} else if (weq(&w[i], "printf") && i + 1 < nw && lit(&w[i + 1]) &&
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
		r.kind = d ? IN_TEXT : IN_UNKNOWN;
		r.text = d;
		r.len = o;
	} else if (weq(&w[i], "cat") && i + 1 == nw) {
		struct stdin_src none = {.kind = IN_UNKNOWN};

		r = stdin_of_redirs(n, &none);
	}
	return r;
}

/* Text a shell reads from stdin, echo's or printf's escapes (\n) both
 * decoded and not: judge both spellings, keep the higher. */
static void judge_stdin_script(struct judge *j, struct judge_seg *s, const struct stdin_src *in,
                               enum target_type t, const char *who)
{
	if (in->kind != IN_TEXT) {
		judge_opaque(j, s,
		             judge_fmt(j, "%s reads commands from stdin that cannot be seen", who),
		             NULL, 0, t);
		return;
	}
	if (in->partial)
		judge_opaque(j, s,
		             judge_fmt(j, "%s reads commands that hold run-time expansions", who),
		             NULL, 0, t);
	judge_text(j, s, in->text, in->len, t, &(struct stdin_src){.kind = IN_UNKNOWN}, who);
	if (memchr(in->text, '\\', in->len) != NULL) {
		char *d = arena_alloc(j->a, in->len + 1);
		size_t n = 0;

		if (d == NULL)
			return;
		for (size_t i = 0; i < in->len; i++) {
			if (in->text[i] == '\\' && i + 1 < in->len &&
			    strchr("nt", in->text[i + 1]) != NULL) {
				d[n++] = in->text[i + 1] == 'n' ? '\n' : '\t';
				i++;
			} else {
				d[n++] = in->text[i];
			}
		}
		judge_text(j, s, d, n, t, &(struct stdin_src){.kind = IN_UNKNOWN}, who);
	}
}

/* --- wrappers: programs that run the rest of their arguments --- */

struct wrapper {
	const char *name;
	const char *short_val;       /* short options that take a value */
	const char *const *long_val; /* long options that take the next word */
	const char *nocmd;           /* short options after which no command follows */
	int npos;                    /* operands before the command */
	bool assignments;            /* NAME=value words before the command */
	bool extra;                  /* the command gets more, unseen arguments (xargs) */
};

static const char *const lv_sudo[] = {"--user",       "--group",           "--host",   "--prompt",
                                      "--close-from", "--chdir",           "--role",   "--type",
                                      "--other-user", "--command-timeout", "--chroot", NULL};
static const char *const lv_env[] = {"--unset", "--chdir", "--split-string", NULL};
static const char *const lv_nice[] = {"--adjustment", NULL};
static const char *const lv_ionice[] = {"--class", "--classdata", NULL};
static const char *const lv_timeout[] = {"--signal", "--kill-after", NULL};
static const char *const lv_stdbuf[] = {"--input", "--output", "--error", NULL};
static const char *const lv_time[] = {"--format", "--output", NULL};
static const char *const lv_xargs[] = {"--arg-file",  "--delimiter", "--max-args",
                                       "--max-procs", "--max-chars", "--process-slot-var",
                                       NULL};
static const char *const lv_sysrun[] = {"--unit",
                                        "--property",
                                        "--setenv",
                                        "--machine",
                                        "--host",
                                        "--description",
                                        "--slice",
                                        "--uid",
                                        "--gid",
                                        "--nice",
                                        "--working-directory",
                                        "--on-active",
                                        "--on-boot",
                                        "--on-startup",
                                        "--on-unit-active",
                                        "--on-unit-inactive",
                                        "--on-calendar",
                                        "--timer-property",
                                        "--path-property",
                                        "--socket-property",
                                        "--service-type",
                                        "--remain-after-exit",
                                        NULL};
static const char *const lv_none[] = {NULL};

static const struct wrapper wrappers[] = {
    {"sudo", "ugpChDrtUTR", lv_sudo, "lvKV", 0, true, false},
    {"doas", "uC", lv_none, "L", 0, false, false},
    {"env", "uCS", lv_env, "", 0, true, false},
    {"nice", "n", lv_nice, "", 0, false, false},
    {"ionice", "cn", lv_ionice, "pPu", 0, false, false},
    {"nohup", "", lv_none, "", 0, false, false},
    {"timeout", "sk", lv_timeout, "", 1, false, false},
    {"stdbuf", "ioe", lv_stdbuf, "", 0, false, false},
    {"chrt", "TPD", lv_none, "p", 1, false, false},
    {"taskset", "", lv_none, "p", 1, false, false},
    {"time", "fo", lv_time, "", 0, false, false},
    {"command", "", lv_none, "vV", 0, false, false},
    {"builtin", "", lv_none, "", 0, false, false},
    {"exec", "a", lv_none, "", 0, false, false},
    {"setsid", "", lv_none, "", 0, false, false},
    {"unbuffer", "", lv_none, "", 0, false, false},
    {"chroot", "", lv_none, "", 1, false, false},
    {"nsenter", "tSG", lv_none, "", 0, false, false},
    {"systemd-run", "upEMH", lv_sysrun, "", 0, false, false},
    {"fakeroot", "isbl", lv_none, "", 0, false, false},
    {"numactl", "CNmpil", lv_none, "", 0, false, false},
    {"busybox", "", lv_none, "", 0, false, false},
    {"toybox", "", lv_none, "", 0, false, false},
    {"torsocks", "", lv_none, "", 0, false, false},
    {"proxychains", "f", lv_none, "", 0, false, false},
    {"proxychains4", "f", lv_none, "", 0, false, false},
    {"dbus-run-session", "", lv_none, "", 0, false, false},
    {"catchsegv", "", lv_none, "", 0, false, false},
    {"xargs", "adEILnPs", lv_xargs, "", 0, false, true},
};

static const struct wrapper *find_wrapper(const char *name)
{
	for (size_t i = 0; i < sizeof(wrappers) / sizeof(wrappers[0]); i++)
		if (strcmp(wrappers[i].name, name) == 0)
			return &wrappers[i];
	return NULL;
}

static bool long_takes_value(const char *const *lv, const struct sh_word *w)
{
	for (size_t i = 0; lv[i] != NULL; i++)
		if (weq(w, lv[i]))
			return true;
	return false;
}

/* Looks through wrapper wr; returns true when it handled the command. */
static bool judge_wrapper(struct judge *j, struct judge_seg *s, const struct wrapper *wr,
                          const struct sh_word *w, size_t n, enum target_type t,
                          const struct stdin_src *in, bool extra)
{
	size_t i = 1;
	bool nocmd = false, shell = false, edit = false;
	const struct sh_word *split = NULL;

	while (i < n) {
		const struct sh_word *a = &w[i];

		if (!lit(a)) {
			judge_reason(
			    j, s, "wrapper-computed",
			    judge_fmt(j, "%s with options known only at run time", wr->name),
			    j->p->unknown_program, t);
			scan_rest(j, s, w + i, n - i, t);
			return true;
		}
		if (weq(a, "--")) {
			i++;
			break;
		}
		if (a->len < 2 || a->text[0] != '-')
			break;
		if (a->text[1] == '-') {
			if (memchr(a->text, '=', a->len) == NULL &&
			    long_takes_value(wr->long_val, a)) {
				if (weq(a, "--split-string"))
					split = i + 1 < n ? &w[i + 1] : NULL;
				i++;
			} else if (a->len > 15 && memcmp(a->text, "--split-string=", 15) == 0) {
				split = a;
			}
			if (weq(a, "--shell") || weq(a, "--login"))
				shell = true;
			if (weq(a, "--edit"))
				edit = true;
			i++;
			continue;
		}
		for (size_t k = 1; k < a->len; k++) {
			char c = a->text[k];

			if (strchr(wr->nocmd, c) != NULL)
				nocmd = true;
			if (strcmp(wr->name, "sudo") == 0 || strcmp(wr->name, "doas") == 0) {
				if (c == 's' || c == 'i')
					shell = true;
				if (c == 'e' && strcmp(wr->name, "sudo") == 0)
					edit = true;
			}
			if (c != '\0' && strchr(wr->short_val, c) != NULL) {
				if (c == 'S' && strcmp(wr->name, "env") == 0)
					split = k + 1 < a->len ? a : (i + 1 < n ? &w[i + 1] : NULL);
				if (k + 1 == a->len)
					i++;
				break;
			}
		}
		i++;
	}
	if (i > n)
		i = n; /* a value option at the end had no value */
	if (split != NULL) {
		judge_text(j, s, split->text, split->len, t, in, "env -S");
		return true;
	}
	if (edit) {
		struct judge_argv av = {w + i, n - i, false};

		judge_command(j, s, "sudoedit", &av, t);
		return true;
	}
	if (nocmd)
		return false;
	if (wr->assignments) {
		while (i < n && (w[i].flags & SHW_ASSIGN)) {
			judge_assignment(j, s, &w[i], t);
			i++;
		}
	}
	for (int k = 0; k < wr->npos && i < n; k++, i++) {
		if (w[i].flags & SHW_SPLIT) {
			judge_reason(
			    j, s, "wrapper-computed",
			    judge_fmt(j, "%s with operands known only at run time", wr->name),
			    j->p->unknown_program, t);
			scan_rest(j, s, w + i, n - i, t);
			return true;
		}
	}
	if (i >= n) {
		if (shell) {
			judge_stdin_script(j, s, in, t, judge_fmt(j, "%s -s", wr->name));
			return true;
		}
		if (wr->extra) {
			static const struct sh_word echo = {
			    .text = "echo", .len = 4, .prefix = 4, .raw = "echo", .raw_len = 4};

			judge_argv(j, s, &echo, 1, t, in, true);
			return true;
		}
		return false; /* the wrapper alone: the policy says what it does */
	}
	if (wr->extra && in->kind == IN_TEXT && i < n) {
		/* echo reboot | xargs sudo: the words xargs reads are visible */
		size_t cl;
		bool partial;
		const char *cmd = join_words(j, w + i, n - i, &cl, &partial);
		char *full = arena_alloc(j->a, cl + in->len + 2);

		if (full != NULL) {
			memcpy(full, cmd, cl);
			full[cl] = ' ';
			memcpy(full + cl + 1, in->text, in->len);
			judge_text(j, s, full, cl + 1 + in->len, t,
			           &(struct stdin_src){.kind = IN_UNKNOWN}, "xargs with its input");
		}
	}
	if (++j->unwrap > MAX_UNWRAP) {
		judge_reason(j, s, "nesting-too-deep", "too many wrappers", j->p->unknown_program,
		             t);
		scan_rest(j, s, w + i, n - i, t);
		return true;
	}
	judge_argv(j, s, w + i, n - i, t, in, extra || wr->extra);
	j->unwrap--;
	return true;
}

/* sh -c CODE, sh SCRIPT, sh < stdin */
static void judge_shell(struct judge *j, struct judge_seg *s, const struct sh_word *w, size_t n,
                        enum target_type t, const struct stdin_src *in)
{
	size_t i = 1;
	bool has_c = false, from_stdin = false, version = false;

	while (i < n) {
		const struct sh_word *a = &w[i];

		if (!lit(a))
			break; /* the code or script operand, computed */
		if (weq(a, "--") || weq(a, "-")) {
			from_stdin = weq(a, "-");
			i++;
			break;
		}
		if (a->len < 2 || (a->text[0] != '-' && a->text[0] != '+'))
			break;
		if (a->text[1] == '-') {
			if (weq(a, "--rcfile") || weq(a, "--init-file"))
				i++;
			if (weq(a, "--version") || weq(a, "--help"))
				version = true;
			i++;
			continue;
		}
		for (size_t k = 1; k < a->len; k++) {
			if (a->text[k] == 'c')
				has_c = true;
			else if (a->text[k] == 's')
				from_stdin = true;
			else if (a->text[k] == 'o' || a->text[k] == 'O')
				i++;
		}
		i++;
	}
	if (version && i >= n && !has_c) {
		judge_reason(j, s, "shell-version", judge_fmt(j, "%s --version", w->text),
		             RISK_READ_ONLY, t);
		return;
	}
	if (has_c) {
		if (i >= n) {
			judge_opaque(j, s, judge_fmt(j, "%s -c without code", w->text), NULL, 0, t);
			return;
		}
		if (!lit(&w[i])) {
			judge_opaque(
			    j, s, judge_fmt(j, "%s -c with code known only at run time", w->text),
			    NULL, 0, t);
			scan_raw(j, s, &w[i], 1, t);
		}
		judge_text(j, s, w[i].text, w[i].len, t, in, judge_fmt(j, "%s -c", w->text));
		if (!lit(&w[i]) || memchr(w[i].text, '$', w[i].len) != NULL)
			scan_rest(j, s, w + i + 1, n - i - 1, t); /* sh -c '"$@"' _ reboot */
		return;
	}
	if (i < n && !from_stdin && written_file(j, &w[i]) != NULL) {
		const struct judge_file *f = written_file(j, &w[i]);

		struct stdin_src as_in = {IN_TEXT, f->text, f->len, f->partial};

		judge_stdin_script(j, s, &as_in, t, "a script written by this command");
		return;
	}
	if (i < n && !from_stdin && !lit(&w[i])) {
		judge_opaque(j, s, judge_fmt(j, "%s runs a script named at run time", w->text),
		             NULL, 0, t);
		scan_assignments(j, s, t);
		return;
	}
	if (i < n && !from_stdin && !weq(&w[i], "/dev/stdin")) {
		judge_opaque(j, s,
		             judge_fmt(j, "%s runs the script file %.*s, which cannot be read",
		                       w->text, (int)(w[i].len > 80 ? 80 : w[i].len), w[i].text),
		             NULL, 0, t);
		return;
	}
	judge_stdin_script(j, s, in, t, w->text);
}

/* python3 -c CODE, perl -e CODE, node script.js, ruby < stdin ... */
static void judge_interpreter(struct judge *j, struct judge_seg *s, const struct sh_word *w,
                              size_t n, enum target_type t, const struct stdin_src *in)
{
	static const char *const code_opts[] = {"-c", "-e",      "-E", "-r", "--eval",
	                                        "-p", "--print", "-x", NULL};
	bool only_info = n > 1;

	for (size_t i = 1; i < n; i++) {
		const struct sh_word *a = &w[i];

		if (!(weq(a, "--version") || weq(a, "-V") || weq(a, "-v") || weq(a, "--help") ||
		      weq(a, "-h") || weq(a, "-VV")))
			only_info = false;
	}
	if (only_info) {
		judge_reason(j, s, "interpreter-version", judge_fmt(j, "%s --version", w->text),
		             RISK_READ_ONLY, t);
		return;
	}
	if (n == 3 && weq(&w[1], "-m") && weq(&w[2], "json.tool")) {
		judge_reason(j, s, "interpreter-json-tool", "python -m json.tool (formats stdin)",
		             RISK_READ_ONLY, t);
		return;
	}
	for (size_t i = 1; i < n; i++) {
		const struct sh_word *a = &w[i];

		if (!lit(a) || a->len < 2 || a->text[0] != '-')
			continue;
		for (size_t k = 0; code_opts[k] != NULL; k++) {
			size_t cl = strlen(code_opts[k]);

			if (a->len >= cl && memcmp(a->text, code_opts[k], cl) == 0) {
				const struct sh_word *code =
				    a->len > cl ? a : (i + 1 < n ? &w[i + 1] : a);

				judge_opaque(j, s,
				             judge_fmt(j, "%s %s (code in another language)",
				                       w->text, code_opts[k]),
				             code->text, code->len, t);
				return;
			}
		}
		/* perl -pie, python -Ic: a cluster ending in a code option */
		if (a->text[1] != '-' && strchr("ceE", a->text[a->len - 1]) != NULL) {
			const struct sh_word *code = i + 1 < n ? &w[i + 1] : a;

			judge_opaque(j, s,
			             judge_fmt(j, "%s %.*s (code in another language)", w->text,
			                       (int)a->len, a->text),
			             code->text, code->len, t);
			return;
		}
	}
	for (size_t i = 1; i < n; i++) {
		if (!lit(&w[i]) || w[i].len == 0 || w[i].text[0] != '-') {
			judge_opaque(
			    j, s,
			    judge_fmt(j, "%s runs a script or module that cannot be read", w->text),
			    NULL, 0, t);
			return;
		}
	}
	if (in->kind == IN_TEXT) {
		judge_opaque(j, s, judge_fmt(j, "%s reads code from stdin", w->text), in->text,
		             in->len, t);
		return;
	}
	judge_opaque(j, s, judge_fmt(j, "%s reads code that cannot be seen", w->text), NULL, 0, t);
}

/* Options before the first operand; returns the index of the first operand.
 * value_opts: short options taking a value. */
static size_t skip_options(const struct sh_word *w, size_t n, size_t i, const char *value_opts)
{
	while (i < n) {
		const struct sh_word *a = &w[i];

		if (!lit(a) || a->len < 2 || a->text[0] != '-')
			break;
		if (weq(a, "--"))
			return i + 1;
		if (a->text[1] != '-' && strchr(value_opts, a->text[a->len - 1]) != NULL)
			i++;
		i++;
	}
	return i > n ? n : i;
}

/* ssh [options] host [command ...]: the command runs on another machine. */
static void judge_ssh(struct judge *j, struct judge_seg *s, const struct sh_word *w, size_t n,
                      enum target_type t, const struct stdin_src *in)
{
	size_t i = skip_options(w, n, 1, "BbcDEeFIiJLlmOopQRSWw");
	size_t len;
	bool partial;
	const char *cmd;

	if (i >= n) {
		judge_command(j, s, "ssh", &(struct judge_argv){w + 1, n - 1, false}, t);
		return;
	}
	scan_rest(j, s, w + 1, i - 1, t); /* -o ProxyCommand=... runs here */
	i++;                              /* the host */
	judge_reason(j, s, "ssh-remote", "ssh runs a command on another machine, outside this gate",
	             RISK_CONFIG_MUTATION, t);
	if (i >= n) {
		judge_stdin_script(j, s, in, TARGET_PROXMOX_HOST, "ssh (remote shell)");
		return;
	}
	cmd = join_words(j, w + i, n - i, &len, &partial);
	if (partial)
		judge_opaque(j, s, "ssh remote command known only at run time", NULL, 0, t);
	judge_text(j, s, cmd, len, TARGET_PROXMOX_HOST, in, "ssh remote command");
}

/* pct exec CTID -- cmd, qm guest exec VMID -- cmd, lxc-attach -n CT -- cmd:
 * the inner command runs in the guest and is judged by the guest's rules. */
static bool judge_guest_exec(struct judge *j, struct judge_seg *s, const char *name,
                             const struct sh_word *w, size_t n, enum target_type t,
                             const struct stdin_src *in)
{
	size_t i;
	enum target_type inner;

	if (strcmp(name, "pct") == 0 && n >= 3 && weq(&w[1], "exec")) {
		inner = TARGET_LXC;
		i = 3;
	} else if (strcmp(name, "qm") == 0 && n >= 4 && weq(&w[1], "guest") && weq(&w[2], "exec")) {
		inner = TARGET_VM;
		i = 4;
	} else if (strcmp(name, "lxc-attach") == 0) {
		inner = TARGET_LXC;
		i = 1;
	} else if (strcmp(name, "ip") == 0 && n >= 4 && weq(&w[1], "netns") && weq(&w[2], "exec")) {
		judge_argv(j, s, w + 4, n - 4, t, in, false);
		return true;
	} else if ((strcmp(name, "docker") == 0 || strcmp(name, "podman") == 0 ||
	            strcmp(name, "nerdctl") == 0) &&
	           n >= 3 && weq(&w[1], "exec")) {
		i = skip_options(w, n, 2, "euw");
		if (i + 1 >= n)
			return false;
		judge_argv(j, s, w + i + 1, n - i - 1, t, in, false);
		return true;
	} else if ((strcmp(name, "kubectl") == 0 || strcmp(name, "lxc") == 0) && n >= 3 &&
	           weq(&w[1], "exec")) {
		inner = t;
		i = 2;
	} else {
		return false;
	}
	while (i < n && !weq(&w[i], "--")) {
		if (!lit(&w[i]) && strcmp(name, "lxc-attach") != 0)
			break;
		i++;
	}
	if (i >= n) {
		if (strcmp(name, "lxc-attach") == 0) {
			judge_stdin_script(j, s, in, inner,
			                   "lxc-attach (a shell in the container)");
			return true;
		}
		return false;
	}
	i++;
	if (i >= n)
		return false;
	judge_argv(j, s, w + i, n - i, inner, in, false);
	return true;
}

/* find ... -exec cmd {} ; : every -exec/-execdir/-ok/-okdir body runs. */
static void judge_find_exec(struct judge *j, struct judge_seg *s, const struct sh_word *w, size_t n,
                            enum target_type t)
{
	for (size_t i = 1; i < n; i++) {
		size_t st;

		if (!(weq(&w[i], "-exec") || weq(&w[i], "-execdir") || weq(&w[i], "-ok") ||
		      weq(&w[i], "-okdir")))
			continue;
		st = ++i;
		while (i < n && !weq(&w[i], ";") && !weq(&w[i], "+"))
			i++;
		if (i > st)
			judge_argv(j, s, w + st, i - st, t, &(struct stdin_src){.kind = IN_UNKNOWN},
			           false);
	}
}

/* su [opts] [user] [-c cmd]; runuser -u user -- cmd / runuser -c cmd */
static void judge_su(struct judge *j, struct judge_seg *s, const struct sh_word *w, size_t n,
                     enum target_type t, const struct stdin_src *in)
{
	bool dashdash = false;

	for (size_t i = 1; i < n; i++) {
		const struct sh_word *a = &w[i];
		const struct sh_word *code = NULL;

		if (weq(a, "--")) {
			dashdash = true;
			if (weq(&w[0], "runuser") && i + 1 < n) {
				judge_argv(j, s, w + i + 1, n - i - 1, t, in, false);
				return;
			}
			continue;
		}
		if (!lit(a)) {
			judge_opaque(j, s, "su with arguments known only at run time", NULL, 0, t);
			return;
		}
		if (weq(a, "-c") || weq(a, "--command") || weq(a, "--session-command"))
			code = i + 1 < n ? &w[i + 1] : NULL;
		else if (a->len > 10 && memcmp(a->text, "--command=", 10) == 0)
			code = a;
		else if (!dashdash && a->len > 2 && a->text[0] == '-' && a->text[1] != '-' &&
		         a->text[a->len - 1] == 'c')
			code = i + 1 < n ? &w[i + 1] : NULL;
		if (code != NULL) {
			const char *txt = code->text;
			size_t len = code->len;

			if (code == a) {
				txt += 10;
				len -= 10;
			}
			if (!lit(code)) {
				judge_opaque(j, s, "su -c with code known only at run time", NULL,
				             0, t);
				scan_raw(j, s, code, 1, t);
			}
			judge_text(j, s, txt, len, t, in, "su -c");
			return;
		}
	}
	judge_stdin_script(j, s, in, t, w[0].text);
}

/* watch [opts] cmd ...: run through sh -c (or directly with -x). */
static void judge_watch(struct judge *j, struct judge_seg *s, const struct sh_word *w, size_t n,
                        enum target_type t, const struct stdin_src *in)
{
	size_t i = 1, len;
	bool direct = false, partial;
	const char *cmd;

	while (i < n && lit(&w[i]) && w[i].len > 1 && w[i].text[0] == '-') {
		if (weq(&w[i], "--")) {
			i++;
			break;
		}
		if (weq(&w[i], "-x") || weq(&w[i], "--exec"))
			direct = true;
		if (weq(&w[i], "-n") || weq(&w[i], "--interval") || weq(&w[i], "-q") ||
		    weq(&w[i], "--equexit"))
			i++;
		i++;
	}
	if (i >= n) {
		judge_command(j, s, "watch", &(struct judge_argv){w + 1, n - 1, false}, t);
		return;
	}
	if (direct) {
		judge_argv(j, s, w + i, n - i, t, in, false);
		return;
	}
	cmd = join_words(j, w + i, n - i, &len, &partial);
	if (partial)
		judge_opaque(j, s, "watch command known only at run time", NULL, 0, t);
	judge_text(j, s, cmd, len, t, in, "watch");
}

/* cd DIR: remember every directory relative paths may now be under. */
static void track_cd(struct judge *j, const struct sh_word *w, size_t n)
{
	size_t i = skip_options(w, n, 1, "");
	const char *dir = NULL;

	if (i >= n) {
		dir = j->p->home;
	} else if (!lit(&w[i]) || (w[i].flags & (SHW_GLOB | SHW_BRACE)) || weq(&w[i], "-")) {
		j->cwd_unknown = true;
		return;
	} else if (w[i].flags & SHW_TILDE) {
		if (w[i].len > 1 && w[i].text[1] != '/') {
			j->cwd_unknown = true;
			return;
		}
		dir = judge_joinpath(j, j->p->home, w[i].text + 1, w[i].len - 1);
	} else if (w[i].len > 0 && w[i].text[0] == '/') {
		dir = judge_normpath(j, w[i].text, w[i].len);
	} else {
		size_t before = j->ncwd;

		for (size_t k = 0; k < before && j->ncwd < JUDGE_MAX_CWD; k++)
			j->cwd[j->ncwd++] = judge_joinpath(j, j->cwd[k], w[i].text, w[i].len);
		if (j->ncwd >= JUDGE_MAX_CWD)
			j->cwd_unknown = true;
		return;
	}
	if (dir == NULL || j->ncwd >= JUDGE_MAX_CWD) {
		j->cwd_unknown = true;
		return;
	}
	j->cwd[j->ncwd++] = dir;
}

/* sed scripts: the e and w commands and the s///e and s///w flags run
 * programs or write files.  Returns true when the script may do either. */
static bool sed_script_hazard(const char *p, size_t n)
{
	size_t i = 0;

	while (i < n) {
		char c;

		while (i < n && strchr(" \t\n;!{}", p[i]) != NULL)
			i++;
		/* addresses: numbers, $, /re/, \cREc, ranges, steps */
		for (;;) {
			if (i < n && (p[i] == '$' || (p[i] >= '0' && p[i] <= '9') || p[i] == ',' ||
			              p[i] == '~' || p[i] == '+' || p[i] == ' ')) {
				i++;
			} else if (i < n && (p[i] == '/' || p[i] == '\\')) {
				char d = p[i] == '\\' ? (i + 1 < n ? p[i + 1] : '/') : '/';

				i += p[i] == '\\' ? 2 : 1;
				while (i < n && p[i] != d)
					i += p[i] == '\\' ? 2 : 1;
				i++;
				while (i < n && (p[i] == 'I' || p[i] == 'M'))
					i++;
			} else {
				break;
			}
		}
		while (i < n && (p[i] == '!' || p[i] == ' '))
			i++;
		if (i >= n)
			return false;
		c = p[i++];
		switch (c) {
		case 'e':
		case 'w':
		case 'W':
			return true;
		case 's':
		case 'y': {
			char d;
			int parts = 2;

			if (i >= n)
				return true;
			d = p[i++];
			if (d == '\\' || d == '\n')
				return true;
			while (parts > 0 && i < n) {
				if (p[i] == '\\')
					i += 2;
				else if (p[i++] == d)
					parts--;
			}
			if (parts > 0)
				return true;
			while (i < n && strchr("gpiImM0123456789", p[i]) != NULL)
				i++;
			if (i < n && (p[i] == 'e' || p[i] == 'w'))
				return true;
			break;
		}
		case 'a':
		case 'i':
		case 'c':
		case 'r':
		case 'R':
		case 'b':
		case 't':
		case 'T':
		case ':':
		case 'v':
			while (i < n && p[i] != '\n' &&
			       (c == 'a' || c == 'i' || c == 'c' || c == 'r' || c == 'R' ||
			        p[i] != ';'))
				i++;
			break;
		case 'q':
		case 'Q':
		case 'l':
		case 'L':
			while (i < n && p[i] >= '0' && p[i] <= '9')
				i++;
			break;
		default:
			if (strchr("pPnNdDgGhHxz=F#", c) == NULL)
				return true;
			if (c == '#')
				while (i < n && p[i] != '\n')
					i++;
		}
	}
	return false;
}

static void judge_sed(struct judge *j, struct judge_seg *s, const struct sh_word *w, size_t n,
                      enum target_type t)
{
	bool have_e = false;

	for (size_t i = 1; i < n; i++) {
		const struct sh_word *a = &w[i];
		const struct sh_word *script = NULL;

		if (weq(a, "-e") || weq(a, "--expression")) {
			have_e = true;
			script = i + 1 < n ? &w[++i] : NULL;
		} else if (lit(a) && a->len > 13 && memcmp(a->text, "--expression=", 13) == 0) {
			have_e = true;
		} else if (weq(a, "-f") || weq(a, "--file")) {
			have_e = true;
			judge_opaque(j, s, "sed runs a script file that cannot be read", NULL, 0,
			             t);
			i++;
		}
		if (script != NULL &&
		    (!lit(script) || sed_script_hazard(script->text, script->len))) {
			judge_reason(j, s, "sed-script-runs",
			             "sed script runs commands or writes files (e, w)",
			             RISK_CONFIG_MUTATION, t);
			return;
		}
	}
	if (have_e)
		return;
	for (size_t i = 1; i < n; i++) {
		const struct sh_word *a = &w[i];

		if (lit(a) && a->len > 1 && a->text[0] == '-') {
			if (weq(a, "-l") || weq(a, "--line-length"))
				i++;
			continue;
		}
		if (!lit(a) || sed_script_hazard(a->text, a->len))
			judge_reason(j, s, "sed-script-runs",
			             "sed script runs commands or writes files (e, w)",
			             RISK_CONFIG_MUTATION, t);
		return;
	}
}

/* awk 'program': system(), pipes and print > file run or write things. */
static void judge_awk(struct judge *j, struct judge_seg *s, const struct sh_word *w, size_t n,
                      enum target_type t)
{
	for (size_t i = 1; i < n; i++) {
		const struct sh_word *a = &w[i];
		const char *p;
		bool hazard = false;

		if (lit(a) && a->len > 1 && a->text[0] == '-') {
			if (weq(a, "-f") || weq(a, "--file") || weq(a, "-i") ||
			    weq(a, "--include") || weq(a, "-E") || weq(a, "--exec")) {
				judge_opaque(j, s, "awk runs a program file that cannot be read",
				             NULL, 0, t);
				return;
			}
			if (a->len == 2 && strchr("Fvl", a->text[1]) != NULL)
				i++;
			continue;
		}
		if (!lit(a)) {
			judge_opaque(j, s, "awk program known only at run time", NULL, 0, t);
			return;
		}
		p = a->text;
		for (size_t k = 0; k < a->len && !hazard; k++) {
			if (p[k] == '|' && !(k + 1 < a->len && p[k + 1] == '|') &&
			    !(k > 0 && p[k - 1] == '|'))
				hazard = true;
			if (k + 6 <= a->len && memcmp(p + k, "system", 6) == 0)
				hazard = true;
			if (p[k] == '>') {
				/* print > "file", printf >> f; comparisons stay harmless */
				size_t b = k;

				while (b > 0 && strchr(";{}\n", p[b - 1]) == NULL)
					b--;
				for (size_t q = b; q + 5 <= k; q++)
					if (memcmp(p + q, "print", 5) == 0)
						hazard = true;
			}
		}
		if (hazard)
			judge_opaque(j, s, "awk program runs commands or writes files", a->text,
			             a->len, t);
		return;
	}
}

/* The class of SQL given to psql -c / mysql -e / sqlite3 DB SQL: read_only
 * only when every statement is plainly a query. */
static enum risk_class sql_class(const char *q, size_t n)
{
	static const char *const reads[] = {
	    "select",  "show",    "explain",    "describe",   "desc",     "values", "table",
	    "\\d",     "\\l",     "\\x",        "\\conninfo", "\\timing", "\\du",   "\\dn",
	    ".tables", ".schema", ".databases", ".indexes",   ".headers", ".mode",  "pragma"};
	static const char *const bad[] = {
	    "into",     "pg_terminate", "pg_cancel", "pg_reload", "set_config", "nextval",
	    "setval",   "lo_",          "copy",      "dblink",    "for update", "\\!",
	    "\\o",      "\\w",          "\\g",       "\\copy",    ".shell",     ".system",
	    ".output",  ".once",        ".import",   ".save",     ".backup",    ".restore",
	    "pg_write", "pg_file",      "pg_rotate", "_write",    "load_file",  "outfile",
	    "dumpfile", "sys_exec",     "writefile"};
	static const char *const destroy[] = {"drop ", "truncate", "delete ", "dropdb"};
	char low[4096];
	size_t l = n < sizeof(low) - 1 ? n : sizeof(low) - 1;
	enum risk_class cls = RISK_READ_ONLY;
	char *st, *save = NULL;

	if (n >= sizeof(low))
		return RISK_CONFIG_MUTATION;
	for (size_t i = 0; i < l; i++)
		low[i] = (char)((q[i] >= 'A' && q[i] <= 'Z') ? q[i] + 32 : q[i]);
	low[l] = '\0';
	for (size_t i = 0; i < sizeof(destroy) / sizeof(destroy[0]); i++)
		if (strstr(low, destroy[i]) != NULL)
			return RISK_DESTRUCTIVE;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (strstr(low, bad[i]) != NULL)
			return RISK_CONFIG_MUTATION;
	for (st = strtok_r(low, ";\n", &save); st != NULL; st = strtok_r(NULL, ";\n", &save)) {
		bool ok = false;

		while (*st == ' ' || *st == '\t' || *st == '(')
			st++;
		if (*st == '\0')
			continue;
		for (size_t i = 0; i < sizeof(reads) / sizeof(reads[0]) && !ok; i++)
			ok = strncmp(st, reads[i], strlen(reads[i])) == 0;
		if (strncmp(st, "pragma", 6) == 0 && strchr(st, '=') != NULL)
			ok = false; /* PRAGMA x = y sets */
		if (!ok)
			cls = RISK_CONFIG_MUTATION;
	}
	return cls;
}

/* psql -c SQL, mysql -e SQL, sqlite3 DB SQL: true when the SQL decided. */
static bool judge_sql(struct judge *j, struct judge_seg *s, const char *name,
                      const struct sh_word *w, size_t n, enum target_type t)
{
	bool sqlite = strcmp(name, "sqlite3") == 0;
	const char *opt = strcmp(name, "psql") == 0 ? "-c" : "-e";
	const char *lopt = strcmp(name, "psql") == 0 ? "--command" : "--execute";
	enum risk_class worst = RISK_READ_ONLY;
	size_t nsql = 0, ops = 0;

	for (size_t i = 1; i < n; i++) {
		const struct sh_word *a = &w[i], *sql = NULL;
		size_t ll = strlen(lopt);

		if (!lit(a))
			return false;
		if (!sqlite && (weq(a, opt) || weq(a, lopt)) && i + 1 < n) {
			sql = &w[++i];
		} else if (!sqlite && a->len > ll + 1 && memcmp(a->text, lopt, ll) == 0 &&
		           a->text[ll] == '=') {
			struct sh_word *v = arena_alloc(j->a, sizeof(*v));

			if (v == NULL)
				return false;
			*v = *a;
			v->text += ll + 1;
			v->len -= ll + 1;
			sql = v;
		} else if (sqlite && (a->len == 0 || a->text[0] != '-') && ++ops == 2) {
			sql = a;
		} else if (!sqlite && (weq(a, "-f") || weq(a, "--file"))) {
			return false;
		}
		if (sql == NULL)
			continue;
		if (!lit(sql))
			return false;
		nsql++;
		{
			enum risk_class c = sql_class(sql->text, sql->len);

			if (c > worst)
				worst = c;
			if (c > RISK_READ_ONLY) /* mysql -e 'system reboot' */
				judge_scan_words(j, s, sql->text, sql->len, t);
		}
	}
	if (nsql == 0)
		return false;
	judge_reason(j, s, worst == RISK_READ_ONLY ? "sql-query" : "sql-change",
	             judge_fmt(j, "%s %s", name,
	                       worst == RISK_READ_ONLY     ? "with queries only"
	                       : worst == RISK_DESTRUCTIVE ? "dropping, truncating or deleting data"
	                                                   : "with statements that change data"),
	             worst, t);
	return true;
}

/* dd of=FILE writes FILE. */
static void judge_dd(struct judge *j, struct judge_seg *s, const struct sh_word *w, size_t n,
                     enum target_type t)
{
	for (size_t i = 1; i < n; i++) {
		if (!lit(&w[i])) {
			judge_reason(j, s, "write-unknown-path",
			             "dd operands known only at run time", j->p->write_unknown, t);
		} else if (w[i].len > 3 && memcmp(w[i].text, "of=", 3) == 0) {
			struct sh_word target = w[i];

			target.text += 3;
			target.len -= 3;
			target.flags &= ~(unsigned)SHW_TILDE;
			if (target.len > 0 && target.text[0] == '~')
				target.flags |= SHW_TILDE;
			judge_write(j, s, &target, t);
		}
	}
}

/* Resolves the program word to a name the policy can look up; NULL when it
 * is not a plain program (a reason has been recorded). */
static const char *program_name(struct judge *j, struct judge_seg *s, const struct sh_word *w,
                                enum target_type t)
{
	const char *slash;
	const char *base, *dir;

	if (!lit(w)) {
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
	if (dir != NULL && w->text[0] == '/' && in_list(&j->p->standard_dirs, dir) && *base)
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

static void judge_argv(struct judge *j, struct judge_seg *s, const struct sh_word *w, size_t n,
                       enum target_type t, const struct stdin_src *in, bool extra)
{
	const char *name = program_name(j, s, w, t);
	const struct wrapper *wr;
	struct judge_argv av = {w + 1, n - 1, extra};

	if (name == NULL) {
		const struct judge_file *f = lit(w) ? written_file(j, w) : NULL;

		scan_rest(j, s, w + 1, n - 1, t);
		if (!lit(w))
			scan_raw(j, s, w, 1, t);
		if (f != NULL)
			judge_stdin_script(
			    j, s, &(struct stdin_src){IN_TEXT, f->text, f->len, f->partial}, t,
			    "a script written by this command");
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
		judge_reason(j, s, "function-call",
		             judge_fmt(j, "%s (a function defined in this command)", name),
		             RISK_READ_ONLY, t);
		/* f() { "$@"; }; f reboot: a function may run its arguments */
		scan_rest(j, s, w + 1, n - 1, t);
		/* (reboot() { :; }); reboot: the definition may not be in force where the
		 * call runs, so a name the policy knows is also judged as that program */
		if (policy_program_find(j->p, name, strlen(name)) == NULL &&
		    find_wrapper(name) == NULL && !in_list(&j->p->shells, name) &&
		    !in_list(&j->p->interpreters, name))
			return;
	}
	wr = find_wrapper(name);
	if (wr != NULL && judge_wrapper(j, s, wr, w, n, t, in, extra))
		return;
	if (extra && wr == NULL &&
	    (in_list(&j->p->shells, name) || in_list(&j->p->interpreters, name))) {
		judge_opaque(j, s, judge_fmt(j, "xargs runs %s with arguments from stdin", name),
		             NULL, 0, t);
	}
	if (in_list(&j->p->shells, name)) {
		judge_shell(j, s, w, n, t, in);
		return;
	}
	if (in_list(&j->p->interpreters, name)) {
		judge_interpreter(j, s, w, n, t, in);
		return;
	}
	if ((strcmp(name, "read") == 0 || strcmp(name, "mapfile") == 0 ||
	     strcmp(name, "readarray") == 0) &&
	    in->kind == IN_TEXT && j->nassigns < JUDGE_MAX_ASSIGNS) {
		/* while read c; do $c; done <<< 'reboot': the text becomes a value */
		struct sh_word *v = arena_alloc(j->a, sizeof(*v));
		char *txt = arena_alloc(j->a, in->len + 3);

		if (v != NULL && txt != NULL) {
			memcpy(txt, "_=", 2);
			memcpy(txt + 2, in->text, in->len);
			memset(v, 0, sizeof(*v));
			v->text = txt;
			v->len = in->len + 2;
			v->prefix = v->len;
			v->raw = v->text;
			v->raw_len = v->len;
			j->assigns[j->nassigns++] = v;
		}
	}
	if (strcmp(name, "eval") == 0) {
		size_t len;
		bool partial;
		const char *code = join_words(j, w + 1, n - 1, &len, &partial);

		if (partial || extra) {
			judge_opaque(j, s, "eval of text known only at run time", NULL, 0, t);
			scan_raw(j, s, w + 1, n - 1, t);
		}
		judge_text(j, s, code, len, t, in, "eval");
		return;
	}
	if (strcmp(name, "trap") == 0 && n >= 3 && !weq(&w[1], "-") && !weq(&w[1], "-p") &&
	    !weq(&w[1], "-l")) {
		if (!lit(&w[1]))
			judge_opaque(j, s, "trap action known only at run time", NULL, 0, t);
		judge_text(j, s, w[1].text, w[1].len, t, in, "trap action");
	}
	if (strcmp(name, "alias") == 0) {
		for (size_t i = 1; i < n; i++) {
			const char *eq = memchr(w[i].text, '=', w[i].len);

			if (!lit(&w[i]))
				judge_opaque(j, s, "alias known only at run time", NULL, 0, t);
			else if (eq != NULL)
				judge_text(j, s, eq + 1, w[i].len - (size_t)(eq + 1 - w[i].text), t,
				           in, "alias");
		}
	}
	if (strcmp(name, "source") == 0 || strcmp(name, ".") == 0) {
		if (n >= 2 && (weq(&w[1], "/dev/stdin") || weq(&w[1], "-")))
			judge_stdin_script(j, s, in, t, name);
		else if (n >= 2 && written_file(j, &w[1]) != NULL)
			judge_stdin_script(j, s,
			                   &(struct stdin_src){IN_TEXT,
			                                       written_file(j, &w[1])->text,
			                                       written_file(j, &w[1])->len,
			                                       written_file(j, &w[1])->partial},
			                   t, "a script written by this command");
		else
			judge_opaque(
			    j, s, judge_fmt(j, "%s runs a script file that cannot be read", name),
			    NULL, 0, t);
		return;
	}
	if ((strcmp(name, "at") == 0 || strcmp(name, "batch") == 0) &&
	    skip_options(w, n, 1, "fqtb") <= n) {
		bool listing = false, from_file = false;

		for (size_t i = 1; i < n; i++) {
			if (weq(&w[i], "-l") || weq(&w[i], "-r") || weq(&w[i], "-d") ||
			    weq(&w[i], "-c") || weq(&w[i], "-V"))
				listing = true;
			if (weq(&w[i], "-f"))
				from_file = true;
		}
		if (!listing) {
			judge_reason(j, s, "deferred-commands",
			             judge_fmt(j, "%s schedules commands to run later", name),
			             RISK_REVERSIBLE_LOW, t);
			if (from_file)
				judge_opaque(j, s, "at -f runs a script file that cannot be read",
				             NULL, 0, t);
			else
				judge_stdin_script(j, s, in, t, name);
			return;
		}
	}
	if (strcmp(name, "ssh") == 0) {
		judge_ssh(j, s, w, n, t, in);
		return;
	}
	if (judge_guest_exec(j, s, name, w, n, t, in))
		return;
	if (strcmp(name, "su") == 0 || strcmp(name, "runuser") == 0) {
		judge_su(j, s, w, n, t, in);
		return;
	}
	if (strcmp(name, "watch") == 0) {
		judge_watch(j, s, w, n, t, in);
		return;
	}
	if (strcmp(name, "flock") == 0) {
		for (size_t i = 1; i + 1 < n; i++) {
			if (weq(&w[i], "-c") || weq(&w[i], "--command")) {
				judge_text(j, s, w[i + 1].text, w[i + 1].len, t, in, "flock -c");
				return;
			}
		}
		{
			size_t i = skip_options(w, n, 1, "wE");

			if (i + 1 < n) {
				judge_argv(j, s, w + i + 1, n - i - 1, t, in, extra);
				return;
			}
		}
	}
	if ((strcmp(name, "psql") == 0 || strcmp(name, "mysql") == 0 ||
	     strcmp(name, "mariadb") == 0 || strcmp(name, "sqlite3") == 0) &&
	    judge_sql(j, s, name, w, n, t))
		return;
	if (strcmp(name, "find") == 0)
		judge_find_exec(j, s, w, n, t);
	if (strcmp(name, "cd") == 0 || strcmp(name, "pushd") == 0)
		track_cd(j, w, n);
	if (strcmp(name, "sed") == 0)
		judge_sed(j, s, w, n, t);
	if (strcmp(name, "awk") == 0 || strcmp(name, "gawk") == 0 || strcmp(name, "mawk") == 0 ||
	    strcmp(name, "nawk") == 0)
		judge_awk(j, s, w, n, t);
	if (strcmp(name, "dd") == 0)
		judge_dd(j, s, w, n, t);
	if (strcmp(name, "export") == 0 || strcmp(name, "declare") == 0 ||
	    strcmp(name, "typeset") == 0 || strcmp(name, "local") == 0 ||
	    strcmp(name, "readonly") == 0) {
		for (size_t i = 1; i < n; i++) {
			if (w[i].flags & SHW_ASSIGN)
				judge_assignment(j, s, &w[i], t);
			else if (!lit(&w[i]))
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

		switch (r->op) {
		case SHR_OUT:
		case SHR_APPEND:
		case SHR_CLOBBER:
		case SHR_INOUT:
		case SHR_ALL:
		case SHR_ALL_APPEND:
			judge_write(j, s, &r->word, t);
			break;
		case SHR_DUP_OUT: {
			bool fd = lit(&r->word) && r->word.len > 0;

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
                 const struct stdin_src *in);

/* echo TEXT > FILE, cat > FILE <<EOF: remember what FILE will hold. */
static void record_written(struct judge *j, const struct sh_node *n)
{
	struct stdin_src out;

	if (n->nredirs == 0)
		return;
	out = stdout_of(j, n);
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
		    .text = out.kind == IN_TEXT ? out.text : "",
		    .len = out.kind == IN_TEXT ? out.len : 0,
		    .partial = out.kind != IN_TEXT || out.partial,
		};
	}
}

static void walk_simple(struct judge *j, const struct sh_node *n, enum target_type t,
                        const struct stdin_src *in)
{
	struct judge_seg *s = new_seg(j, n->words, n->nwords);
	struct stdin_src mine = stdin_of_redirs(n, in);
	size_t i = 0;

	judge_redirs(j, s, n, t);
	record_written(j, n);
	while (i < n->nwords && (n->words[i].flags & SHW_ASSIGN)) {
		judge_assignment(j, s, &n->words[i], t);
		i++;
	}
	if (i == n->nwords) {
		judge_reason(j, s, "assignment-only",
		             n->nwords ? "shell variables only" : "redirection only",
		             RISK_READ_ONLY, t);
		return;
	}
	judge_argv(j, s, n->words + i, n->nwords - i, t, &mine, false);
}

static void walk(struct judge *j, const struct sh_node *n, enum target_type t,
                 const struct stdin_src *in)
{
	if (n == NULL)
		return;
	switch (n->kind) {
	case SH_SIMPLE:
		walk_simple(j, n, t, in);
		break;
	case SH_PIPELINE:
		for (size_t i = 0; i < n->nkids; i++) {
			struct stdin_src from = i == 0 ? *in : stdout_of(j, n->kids[i - 1]);

			walk(j, n->kids[i], t, &from);
		}
		break;
	case SH_LIST:
		for (size_t i = 0; i < n->nkids; i++)
			walk(j, n->kids[i], t, in);
		break;
	case SH_GROUP:
		if (n->nwords > 0 && strcmp(n->group_kw, "((") == 0) {
			/* ((apt-get install x)) is arithmetic and fails, but say what it names */
			struct judge_seg *s = new_seg(j, n->words, n->nwords);

			judge_scan_words(j, s, n->words[0].text, n->words[0].len, t);
		}
		if (n->nredirs > 0) {
			struct judge_seg *s = new_seg(j, NULL, 0);

			s->text = judge_fmt(j, "%s ... (redirections of a group)", n->group_kw);
			judge_redirs(j, s, n, t);
		}
		{
			/* { bash; } <<EOF and while read ...; done < file: the group's stdin */
			struct stdin_src gin = stdin_of_redirs(n, in);

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
static void judge_text(struct judge *j, struct judge_seg *s, const char *text, size_t len,
                       enum target_type t, const struct stdin_src *in, const char *what)
{
	struct sh_parse res;

	if (j->reparse >= MAX_REPARSE) {
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
	j->reparse++;
	if (sh_parse(j->a, text, len, MAX_NESTING, &res) != 0) {
		judge_opaque(
		    j, s,
		    judge_fmt(j, "%s cannot be parsed: %s at byte %zu", what, res.err, res.err_pos),
		    text, len, t);
	} else {
		walk(j, res.root, t, in);
		for (size_t i = 0; i < res.nsubs; i++)
			walk(j, res.subs[i], t, &(struct stdin_src){.kind = IN_UNKNOWN});
	}
	j->reparse--;
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
	judge_text(&j, NULL, command ? command : "", len, t, &(struct stdin_src){.kind = IN_NONE},
	           "the command");
	if (declared > out->cls && (unsigned)declared < RISK_CLASS_COUNT)
		judge_reason(&j, NULL, "declared-risk", "the agent declared this risk", declared,
		             t);
	if (out->nreasons == 0)
		judge_reason(&j, NULL, "empty-command", "nothing to run", RISK_READ_ONLY, t);
	verdict_finish(out);
	return 0;
}
