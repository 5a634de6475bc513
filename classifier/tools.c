/* tools.c -- programs whose arguments need more than the policy's rule
 * conditions: cd (where relative paths point), sed and awk programs, SQL
 * given to database clients, dd of=, and shell builtins that carry code. */
#include "classifier/tools.h"

#include "classifier/arena.h"
#include "classifier/judge.h"
#include "classifier/unwrap.h"
#include "classifier/walk.h"

#include <stdbool.h>
#include <string.h>

/* cd DIR: remember every directory relative paths may now be under. */
void tools_track_cd(struct judge *j, const struct sh_word *w, size_t n)
{
	size_t i = unwrap_skip_options(w, n, 1, "");
	const char *dir = NULL;

	if (i >= n) {
		dir = j->p->home;
	} else if (!judge_lit(&w[i]) || (w[i].flags & (SHW_GLOB | SHW_BRACE)) ||
	           judge_weq(&w[i], "-")) {
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

void tools_sed(struct judge *j, struct judge_seg *s, const struct sh_word *w, size_t n,
               enum target_type t)
{
	bool have_e = false;

	for (size_t i = 1; i < n; i++) {
		const struct sh_word *a = &w[i];
		const struct sh_word *script = NULL;

		if (judge_weq(a, "-e") || judge_weq(a, "--expression")) {
			have_e = true;
			script = i + 1 < n ? &w[++i] : NULL;
		} else if (judge_lit(a) && a->len > 13 &&
		           memcmp(a->text, "--expression=", 13) == 0) {
			have_e = true;
		} else if (judge_weq(a, "-f") || judge_weq(a, "--file")) {
			have_e = true;
			judge_opaque(j, s, "sed runs a script file that cannot be read", NULL, 0,
			             t);
			i++;
		}
		if (script != NULL &&
		    (!judge_lit(script) || sed_script_hazard(script->text, script->len))) {
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

		if (judge_lit(a) && a->len > 1 && a->text[0] == '-') {
			if (judge_weq(a, "-l") || judge_weq(a, "--line-length"))
				i++;
			continue;
		}
		if (!judge_lit(a) || sed_script_hazard(a->text, a->len))
			judge_reason(j, s, "sed-script-runs",
			             "sed script runs commands or writes files (e, w)",
			             RISK_CONFIG_MUTATION, t);
		return;
	}
}

/* awk 'program': system(), pipes and print > file run or write things. */
void tools_awk(struct judge *j, struct judge_seg *s, const struct sh_word *w, size_t n,
               enum target_type t)
{
	for (size_t i = 1; i < n; i++) {
		const struct sh_word *a = &w[i];
		const char *p;
		bool hazard = false;

		if (judge_lit(a) && a->len > 1 && a->text[0] == '-') {
			if (judge_weq(a, "-f") || judge_weq(a, "--file") || judge_weq(a, "-i") ||
			    judge_weq(a, "--include") || judge_weq(a, "-E") ||
			    judge_weq(a, "--exec")) {
				judge_opaque(j, s, "awk runs a program file that cannot be read",
				             NULL, 0, t);
				return;
			}
			if (a->len == 2 && strchr("Fvl", a->text[1]) != NULL)
				i++;
			continue;
		}
		if (!judge_lit(a)) {
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
/* Is a (a cluster -xyz) made of letters of flags followed by letter? */
static bool cluster_then(const struct sh_word *a, char letter, const char *flags)
{
	for (size_t k = 1; k < a->len; k++) {
		if (a->text[k] == letter)
			return k > 1;
		if (strchr(flags, a->text[k]) == NULL)
			return false;
	}
	return false;
}

bool tools_sql(struct judge *j, struct judge_seg *s, const char *name, const struct sh_word *w,
               size_t n, enum target_type t)
{
	bool sqlite = strcmp(name, "sqlite3") == 0;
	const char *opt = strcmp(name, "psql") == 0 ? "-c" : "-e";
	const char *lopt = strcmp(name, "psql") == 0 ? "--command" : "--execute";
	/* options of each client that take no value, so may come first in a cluster */
	const char *flags = strcmp(name, "psql") == 0 ? "AtxqXeEabnsSlHz01wW" : "BNstrvEHXACwqU";
	enum risk_class worst = RISK_READ_ONLY;
	size_t nsql = 0, ops = 0;

	for (size_t i = 1; i < n; i++) {
		const struct sh_word *a = &w[i], *sql = NULL;
		size_t ll = strlen(lopt);

		if (!judge_lit(a))
			return false;
		if (!sqlite && (judge_weq(a, opt) || judge_weq(a, lopt)) && i + 1 < n) {
			sql = &w[++i];
		} else if (!sqlite && a->len > 2 && a->text[0] == '-' && a->text[1] != '-' &&
		           cluster_then(a, opt[1], flags)) {
			/* psql -Atc SQL, -AtcSQL: flags, then the option that takes the SQL */
			const char *at = memchr(a->text + 1, opt[1], a->len - 1);
			size_t off = (size_t)(at + 1 - a->text);

			if (off == a->len) {
				if (i + 1 >= n)
					return false;
				sql = &w[++i];
			} else {
				struct sh_word *v = arena_alloc(j->a, sizeof(*v));

				if (v == NULL)
					return false;
				*v = *a;
				v->text += off;
				v->len -= off;
				sql = v;
			}
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
		} else if (!sqlite && (judge_weq(a, "-f") || judge_weq(a, "--file"))) {
			return false;
		}
		if (sql == NULL)
			continue;
		if (!judge_lit(sql))
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
void tools_dd(struct judge *j, struct judge_seg *s, const struct sh_word *w, size_t n,
              enum target_type t)
{
	for (size_t i = 1; i < n; i++) {
		if (!judge_lit(&w[i])) {
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

/* Is text something bash evaluates as arithmetic in a way that can run code?
 * Arithmetic expands $(...) and `...` it finds in the text, and evaluates
 * the value of every variable it names as arithmetic again, where a value
 * such as a[$(reboot)] runs reboot.  Plain numbers and operators are safe;
 * a subscript that is not a plain number, a substitution, or a name whose
 * value is known only at run time is not. */
static bool arith_hazard(const char *t, size_t n, bool names_are_values)
{
	for (size_t i = 0; i < n; i++) {
		char c = t[i];

		if (c == '`' || (c == '$' && i + 1 < n && t[i + 1] == '('))
			return true;
		if (c == '[') {
			size_t k = i + 1;

			while (k < n && t[k] >= '0' && t[k] <= '9')
				k++;
			if (k == i + 1 || k >= n || t[k] != ']')
				return true;
		}
		if (names_are_values &&
		    (c == '$' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'))
			return true;
	}
	return false;
}

bool tools_arith_hazard(const char *t, size_t n, bool names_are_values)
{
	return arith_hazard(t, n, names_are_values);
}

/* NAME[subscript] handed to a builtin that assigns through it (printf -v,
 * read, mapfile, declare, test -v): the subscript is arithmetic. */
static void judge_name_operand(struct judge *j, struct judge_seg *s, const char *name,
                               const struct sh_word *w, enum target_type t)
{
	const char *br = memchr(w->text, '[', w->len);

	if (!judge_lit(w) ||
	    (br != NULL && arith_hazard(br, w->len - (size_t)(br - w->text), false)))
		judge_reason(j, s, "arith-eval",
		             judge_fmt(j,
		                       "%s assigns through `%.*s`: bash evaluates its subscript as "
		                       "arithmetic, which can run a $(...) hidden in it",
		                       name, (int)(w->raw_len > 60 ? 60 : w->raw_len), w->raw),
		             j->p->unknown_program, t);
}

/* Builtins whose operands bash evaluates (let) or that assign through names
 * (printf -v, read, mapfile, declare, test -v) and completion builtins that
 * run code (compgen -C/-F). */
static void tools_eval_builtins(struct judge *j, struct judge_seg *s, const char *name,
                                const struct sh_word *w, size_t n, enum target_type t)
{
	if (strchr("lpt[rmdec", name[0]) == NULL)
		return; /* none of the names below */
	if (strcmp(name, "let") == 0) {
		for (size_t i = 1; i < n; i++)
			if (!judge_lit(&w[i]) || arith_hazard(w[i].text, w[i].len, false))
				judge_reason(
				    j, s, "arith-eval",
				    judge_fmt(j,
				              "let evaluates `%.*s` as arithmetic, which can "
				              "run a $(...) hidden in it",
				              (int)(w[i].raw_len > 60 ? 60 : w[i].raw_len),
				              w[i].raw),
				    j->p->unknown_program, t);
		return;
	}
	if (strcmp(name, "printf") == 0) {
		for (size_t i = 1; i + 1 < n; i++)
			if (judge_weq(&w[i], "-v"))
				judge_name_operand(j, s, name, &w[i + 1], t);
		return;
	}
	if (strcmp(name, "test") == 0 || strcmp(name, "[") == 0) {
		for (size_t i = 1; i + 1 < n; i++)
			if (judge_weq(&w[i], "-v"))
				judge_name_operand(j, s, name, &w[i + 1], t);
		return;
	}
	if (strcmp(name, "read") == 0 || strcmp(name, "mapfile") == 0 ||
	    strcmp(name, "readarray") == 0 || strcmp(name, "declare") == 0 ||
	    strcmp(name, "typeset") == 0 || strcmp(name, "local") == 0 ||
	    strcmp(name, "export") == 0 || strcmp(name, "readonly") == 0) {
		bool nameref = false;

		for (size_t i = 1; i < n; i++) {
			const struct sh_word *x = &w[i];

			if (judge_lit(x) && x->len > 1 && x->text[0] == '-' &&
			    memchr(x->text, 'n', x->len) != NULL && strcmp(name, "read") != 0 &&
			    strcmp(name, "mapfile") != 0 && strcmp(name, "readarray") != 0)
				nameref = true; /* declare -n r=NAME: NAME is evaluated on use */
			if (nameref && (x->flags & SHW_ASSIGN) && x->name_len < x->len &&
			    arith_hazard(x->text + x->name_len, x->len - x->name_len, false))
				judge_name_operand(j, s, name, x, t);
			if (nameref && !(x->flags & SHW_ASSIGN) && memchr(x->text, '=', x->len) &&
			    arith_hazard(x->text, x->len, false))
				judge_name_operand(j, s, name, x, t);
			if (judge_lit(x) && x->len > 1 && x->text[0] == '-') {
				bool takes =
				    strcmp(name, "read") == 0
				        ? strchr("adinNptu", x->text[x->len - 1]) != NULL
				        : (strcmp(name, "mapfile") == 0 ||
				           strcmp(name, "readarray") == 0) &&
				              strchr("dnOsuCc", x->text[x->len - 1]) != NULL;

				if ((strcmp(name, "mapfile") == 0 ||
				     strcmp(name, "readarray") == 0) &&
				    memchr(x->text, 'C', x->len) != NULL)
					judge_reason(j, s, "builtin-runs-code",
					             judge_fmt(j, "%s -C runs a callback", name),
					             j->p->unknown_program, t);
				if (takes)
					i++;
				continue;
			}
			if (x->flags & SHW_ASSIGN) {
				struct sh_word nm = *x;

				nm.len = nm.prefix = x->name_len;
				if (memchr(x->text, '[', x->name_len) != NULL ||
				    (x->name_len < x->len && x->text[x->name_len] == '['))
					judge_name_operand(j, s, name, x, t);
				continue;
			}
			if (!judge_lit(x) || memchr(x->text, '[', x->len) != NULL)
				judge_name_operand(j, s, name, x, t);
		}
		return;
	}
	if (strcmp(name, "compgen") == 0 || strcmp(name, "complete") == 0) {
		for (size_t i = 1; i < n; i++)
			if (judge_lit(&w[i]) && w[i].len > 1 && w[i].text[0] == '-' &&
			    (memchr(w[i].text, 'C', w[i].len) || memchr(w[i].text, 'F', w[i].len)))
				judge_reason(
				    j, s, "builtin-runs-code",
				    judge_fmt(j, "%s -C/-F runs a command or function", name),
				    j->p->unknown_program, t);
	}
}

/* Shell builtins that carry code or data: read VAR <<< text, eval, trap,
 * alias, source/., at/batch.  Returns true when the command is fully judged;
 * false lets the policy judge the program too. */
bool tools_builtin(struct judge *j, struct judge_seg *s, const char *name, const struct sh_word *w,
                   size_t n, enum target_type t, const struct judge_stdin *in, bool extra)
{
	tools_eval_builtins(j, s, name, w, n, t);
	if ((strcmp(name, "read") == 0 || strcmp(name, "mapfile") == 0 ||
	     strcmp(name, "readarray") == 0) &&
	    in->kind == JUDGE_IN_TEXT && j->nassigns < JUDGE_MAX_ASSIGNS) {
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
	if (strcmp(name, "printf") == 0 && n >= 3 && judge_weq(&w[1], "-v") &&
	    j->nassigns < JUDGE_MAX_ASSIGNS) {
		/* printf -v c %s reboot; $c: the words become a value */
		size_t len;
		bool partial;
		const char *val = walk_join_words(j, w + 2, n - 2, &len, &partial);
		struct sh_word *v = arena_alloc(j->a, sizeof(*v));
		char *txt = arena_alloc(j->a, len + 3);

		if (v != NULL && txt != NULL) {
			memcpy(txt, "_=", 2);
			memcpy(txt + 2, val, len + 1);
			memset(v, 0, sizeof(*v));
			v->text = txt;
			v->len = len + 2;
			v->prefix = v->len;
			v->raw = v->text;
			v->raw_len = v->len;
			j->assigns[j->nassigns++] = v;
		}
	}
	if (strcmp(name, "eval") == 0) {
		size_t len;
		bool partial;
		const char *code = walk_join_words(j, w + 1, n - 1, &len, &partial);

		if (partial || extra) {
			judge_opaque(j, s, "eval of text known only at run time", NULL, 0, t);
			walk_scan_raw(j, s, w + 1, n - 1, t);
		}
		walk_text(j, s, code, len, t, in, "eval");
		return true;
	}
	if (strcmp(name, "trap") == 0 && n >= 3 && !judge_weq(&w[1], "-") &&
	    !judge_weq(&w[1], "-p") && !judge_weq(&w[1], "-l")) {
		if (!judge_lit(&w[1]))
			judge_opaque(j, s, "trap action known only at run time", NULL, 0, t);
		walk_text(j, s, w[1].text, w[1].len, t, in, "trap action");
	}
	if (strcmp(name, "alias") == 0) {
		for (size_t i = 1; i < n; i++) {
			const char *eq = memchr(w[i].text, '=', w[i].len);

			if (!judge_lit(&w[i]))
				judge_opaque(j, s, "alias known only at run time", NULL, 0, t);
			else if (eq != NULL)
				walk_text(j, s, eq + 1, w[i].len - (size_t)(eq + 1 - w[i].text), t,
				          in, "alias");
		}
	}
	if (strcmp(name, "source") == 0 || strcmp(name, ".") == 0) {
		if (n >= 2 &&
		    (judge_weq(&w[1], "/dev/stdin") || judge_weq(&w[1], "-") ||
		     judge_weq(&w[1], "/dev/fd/0") || judge_weq(&w[1], "/proc/self/fd/0")))
			walk_stdin_script(j, s, in, t, name);
		else if (n >= 2 && walk_written_file(j, &w[1]) != NULL)
			walk_stdin_script(
			    j, s,
			    &(struct judge_stdin){JUDGE_IN_TEXT, walk_written_file(j, &w[1])->text,
			                          walk_written_file(j, &w[1])->len,
			                          walk_written_file(j, &w[1])->partial},
			    t, "a script written by this command");
		else
			judge_opaque(
			    j, s, judge_fmt(j, "%s runs a script file that cannot be read", name),
			    NULL, 0, t);
		return true;
	}
	if ((strcmp(name, "at") == 0 || strcmp(name, "batch") == 0) &&
	    unwrap_skip_options(w, n, 1, "fqtb") <= n) {
		bool listing = false, from_file = false;

		for (size_t i = 1; i < n; i++) {
			if (judge_weq(&w[i], "-l") || judge_weq(&w[i], "-r") ||
			    judge_weq(&w[i], "-d") || judge_weq(&w[i], "-c") ||
			    judge_weq(&w[i], "-V"))
				listing = true;
			if (judge_weq(&w[i], "-f"))
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
				walk_stdin_script(j, s, in, t, name);
			return true;
		}
	}
	return false;
}

/* tar x writes the archive's members below the directory it extracts into
 * (-C DIR, else the working directory): they may land on any path below it,
 * ~/.bashrc and ~/.ssh/ included, or anywhere with -P. */
void tools_tar_extract(struct judge *j, struct judge_seg *s, const struct sh_word *w, size_t n,
                       enum target_type t)
{
	bool extract = false, absolute = false;
	const struct sh_word *dir = NULL;

	for (size_t i = 1; i < n; i++) {
		const struct sh_word *a = &w[i];

		if (!judge_lit(a))
			continue;
		if (judge_weq(a, "--extract") || judge_weq(a, "--get"))
			extract = true;
		else if (judge_weq(a, "-P") || judge_weq(a, "--absolute-names"))
			absolute = true;
		else if ((judge_weq(a, "-C") || judge_weq(a, "--directory")) && i + 1 < n)
			dir = &w[++i];
		else if (a->len > 12 && memcmp(a->text, "--directory=", 12) == 0)
			dir = NULL, absolute = absolute || a->text[12] == '\0';
		else if (a->len > 1 && a->text[0] == '-' && a->text[1] != '-') {
			extract = extract || memchr(a->text, 'x', a->len) != NULL;
			absolute = absolute || memchr(a->text, 'P', a->len) != NULL;
		} else if (i == 1 && a->len > 0 && a->text[0] != '-') {
			/* tar xzf x.tgz: the old style's first word is the options */
			extract = memchr(a->text, 'x', a->len) != NULL;
			absolute = memchr(a->text, 'P', a->len) != NULL;
		}
	}
	if (!extract)
		return;
	tools_extract_into(j, s, dir, absolute, t);
}

void tools_extract_into(struct judge *j, struct judge_seg *s, const struct sh_word *dir,
                        bool absolute, enum target_type t)
{
	if (absolute) {
		judge_reason(j, s, "write-unknown-path",
		             "tar -P extracts members to the absolute paths they name",
		             j->p->write_unknown, t);
		return;
	}
	if (dir != NULL) {
		judge_write_tree(j, s, dir, t);
		return;
	}
	judge_write_tree(
	    j, s, &(struct sh_word){.text = ".", .len = 1, .prefix = 1, .raw = ".", .raw_len = 1},
	    t);
}

/* The file name a download of url is saved under: its last path component,
 * without query or fragment ("index.html" when it has none). */
static const char *url_basename(struct judge *j, const struct sh_word *u, size_t *len)
{
	const char *t = u->text, *p = memmem(t, u->len, "://", 3);
	size_t start, end, last;

	if (p == NULL)
		return NULL;
	start = (size_t)(p - t) + 3;
	end = start;
	while (end < u->len && t[end] != '?' && t[end] != '#')
		end++;
	last = end;
	while (last > start && t[last - 1] != '/')
		last--;
	if (last == start || last == end) {
		/* http://host or http://host/dir/: wget saves index.html */
		*len = 10;
		return "index.html";
	}
	*len = end - last;
	return arena_strndup(j->a, t + last, *len);
}

/* wget (and curl -O/-J) save what they fetch in the working directory under
 * a name from the URL, or under names the server or the site's links choose
 * (-r, -m, -x, -p, --content-disposition, curl -J): the file, or every path
 * rule below the directory, is judged as written. */
void tools_download(struct judge *j, struct judge_seg *s, const char *name, const struct sh_word *w,
                    size_t n, enum target_type t)
{
	bool curl = strcmp(name, "curl") == 0, remote_name = false, tree = false;
	static const struct sh_word dot = {
	    .text = ".", .len = 1, .prefix = 1, .raw = ".", .raw_len = 1};

	for (size_t i = 1; i < n; i++) {
		const struct sh_word *a = &w[i];
		const char *x = a->text;

		if (!judge_lit(a) || a->len < 2 || x[0] != '-')
			continue;
		if (judge_weq(a, "--"))
			break;
		if (x[1] == '-') {
			/* named output or no file at all: the rules judge these */
			if ((a->len >= 9 && memcmp(x, "--output-", 9) == 0 && !curl) ||
			    (a->len >= 8 && memcmp(x, "--output", 8) == 0 && curl) ||
			    (a->len >= 8 && memcmp(x, "--spider", 8) == 0) ||
			    (a->len >= 12 && memcmp(x, "--directory-", 12) == 0))
				return;
			if (curl && (memcmp(x, "--remote-name", a->len < 13 ? a->len : 13) == 0 &&
			             a->len >= 10))
				remote_name = true;
			if ((!curl && ((a->len >= 5 && memcmp(x, "--rec", 5) == 0) ||
			               (a->len >= 5 && memcmp(x, "--mir", 5) == 0) ||
			               (a->len >= 9 && memcmp(x, "--force-d", 9) == 0) ||
			               (a->len >= 6 && memcmp(x, "--page", 6) == 0) ||
			               (a->len >= 10 && memcmp(x, "--content-", 10) == 0) ||
			               (a->len >= 7 && memcmp(x, "--input", 7) == 0))) ||
			    (curl && a->len >= 15 && memcmp(x, "--remote-header", 15) == 0))
				tree = true;
			continue;
		}
		for (size_t k = 1; k < a->len; k++) {
			char c = x[k];

			if (!curl && (c == 'O' || c == 'P' || c == 'o' || c == 'a'))
				return; /* -O/-P name where; -o/-a are logs, -O follows */
			if (curl && (c == 'o'))
				return;
			if (curl && c == 'O')
				remote_name = true;
			if (curl && c == 'J')
				tree = true;
			if (!curl && (c == 'r' || c == 'm' || c == 'x' || c == 'p' || c == 'i'))
				tree = true;
			if (!curl && strchr("nTtUwlARBe", c) != NULL)
				break; /* the rest of the word is a value */
			if (curl && strchr("wXHAemdubxryYzFKCTDc", c) != NULL)
				break;
		}
	}
	if (curl && !remote_name && !tree)
		return; /* curl writes to stdout */
	if (tree) {
		judge_write_tree(j, s, &dot, t);
		return;
	}
	for (size_t i = 1; i < n; i++) {
		size_t len;
		const char *b;

		if (!judge_lit(&w[i]) || (b = url_basename(j, &w[i], &len)) == NULL)
			continue;
		judge_write(j, s,
		            &(struct sh_word){
		                .text = b, .len = len, .prefix = len, .raw = b, .raw_len = len},
		            t);
	}
}

/* unzip, 7z x/e and ar x extract into the working directory unless told
 * where (unzip -d DIR, 7z -oDIR); listing and testing write nothing. */
void tools_unpack(struct judge *j, struct judge_seg *s, const char *name, const struct sh_word *w,
                  size_t n, enum target_type t)
{
	bool seven = strcmp(name, "7z") == 0 || strcmp(name, "7za") == 0;
	bool ar = strcmp(name, "ar") == 0;
	const struct sh_word *dir = NULL;
	size_t ops = 0;

	for (size_t i = 1; i < n; i++) {
		const struct sh_word *a = &w[i];

		if (!judge_lit(a))
			continue;
		if (!seven && !ar &&
		    (judge_weq(a, "-l") || judge_weq(a, "-t") || judge_weq(a, "-v") ||
		     judge_weq(a, "-p") || judge_weq(a, "-c") || judge_weq(a, "-z") ||
		     judge_weq(a, "-Z") || judge_weq(a, "-Z1")))
			return; /* unzip lists, tests or prints */
		if (!seven && !ar && judge_weq(a, "-d"))
			return; /* unzip -d DIR: the rule judges DIR */
		if (seven && a->len > 2 && memcmp(a->text, "-o", 2) == 0)
			return; /* 7z -oDIR: the rule judges it */
		if (a->len > 0 && a->text[0] == '-')
			continue;
		ops++;
		if ((seven || ar) && ops == 1) {
			/* the command letter: 7z x/e, ar x extract; anything else does not */
			bool x = seven ? (judge_weq(a, "x") || judge_weq(a, "e"))
			               : memchr(a->text, 'x', a->len) != NULL;

			if (!x)
				return;
		}
	}
	tools_extract_into(j, s, dir, false, t);
}

/* git subcommands that write the work tree (or, for clone and init, a new
 * directory): what they write lies below the repository's directory (-C DIR,
 * else the working directory), so every path rule below it counts. */
void tools_git(struct judge *j, struct judge_seg *s, const struct sh_word *w, size_t n,
               enum target_type t)
{
	static const char *const writers[] = {
	    "checkout",  "switch",        "restore",  "reset",       "pull",
	    "merge",     "rebase",        "stash",    "cherry-pick", "revert",
	    "am",        "apply",         "clean",    "rm",          "mv",
	    "clone",     "init",          "worktree", "submodule",   "sparse-checkout",
	    "read-tree", "checkout-index"};
	const struct sh_word *dir = NULL;
	static const struct sh_word dot = {
	    .text = ".", .len = 1, .prefix = 1, .raw = ".", .raw_len = 1};
	size_t i = 1;

	while (i < n && judge_lit(&w[i]) && w[i].len > 1 && w[i].text[0] == '-') {
		const struct sh_word *a = &w[i];

		if (judge_weq(a, "-C") && i + 1 < n) {
			dir = &w[i + 1]; /* several -C: relative to each other; the last decides */
			i += 2;
			continue;
		}
		if (judge_weq(a, "-c") && i + 1 < n) {
			i += 2;
			continue;
		}
		if ((a->len > 11 && memcmp(a->text, "--work-tree", 11) == 0) ||
		    (a->len > 9 && memcmp(a->text, "--git-dir", 9) == 0)) {
			judge_reason(j, s, "write-unknown-path",
			             "git with a work tree or repository named elsewhere",
			             j->p->write_unknown, t);
			return;
		}
		i++;
	}
	if (i >= n || !judge_lit(&w[i]))
		return;
	for (size_t k = 0; k < sizeof(writers) / sizeof(writers[0]); k++) {
		if (!judge_weq(&w[i], writers[k]))
			continue;
		if (strcmp(writers[k], "clone") == 0 || strcmp(writers[k], "init") == 0) {
			/* the last operand names the new directory, else it is made here */
			const struct sh_word *last = NULL;
			size_t ops = 0;

			for (size_t m = i + 1; m < n; m++)
				if (!(w[m].len > 0 && w[m].text[0] == '-' && judge_lit(&w[m]))) {
					last = &w[m];
					ops++;
				}
			if (ops >= (strcmp(writers[k], "clone") == 0 ? 2u : 1u) && last != NULL &&
			    dir == NULL) {
				judge_write_tree(j, s, last, t);
				return;
			}
		}
		judge_write_tree(j, s, dir ? dir : &dot, t);
		return;
	}
}
