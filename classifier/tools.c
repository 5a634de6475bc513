/* tools.c -- programs whose arguments need more than the policy's rule
 * conditions: cd (where relative paths point), sed and awk programs, SQL
 * given to database clients, dd of=, and shell builtins that carry code. */
#include "classifier/tools.h"

#include "classifier/arena.h"
#include "classifier/judge.h"
#include "classifier/secrets.h"
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
static void sed_reads(struct judge *j, struct judge_seg *s, const char *f, size_t fl,
                      enum target_type t)
{
	struct sh_word w = {.text = f, .len = fl, .prefix = fl, .raw = f, .raw_len = fl};

	while (w.len > 0 && (w.text[w.len - 1] == ' ' || w.text[w.len - 1] == '\t'))
		w.len--;
	w.prefix = w.raw_len = w.len;
	if (w.len > 0 && w.text[0] == '~')
		w.flags |= SHW_TILDE;
	if (w.len > 0)
		secrets_read(j, s, &w, t);
	j->nofilter_seg = s->num; /* it reads a file: not a filter of its stdin */
}

/* j != NULL: the files r and R read are judged as reads. */
static bool sed_script_hazard(const char *p, size_t n, struct judge *j, struct judge_seg *s,
                              enum target_type t)
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
		case 'v': {
			size_t st;

			while ((c == 'r' || c == 'R') && i < n && (p[i] == ' ' || p[i] == '\t'))
				i++;
			st = i;
			while (i < n && p[i] != '\n' &&
			       (c == 'a' || c == 'i' || c == 'c' || c == 'r' || c == 'R' ||
			        p[i] != ';'))
				i++;
			if ((c == 'r' || c == 'R') && j != NULL)
				sed_reads(j, s, p + st, i - st,
				          t); /* r FILE: its text is printed */
			break;
		}
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
			struct sh_word *v = arena_alloc(j->a, sizeof(*v));

			have_e = true;
			if (v != NULL) {
				*v = *a;
				v->text += 13;
				v->len -= 13;
				v->prefix = v->prefix > 13 ? v->prefix - 13 : 0;
				script = v;
			}
		} else if (judge_weq(a, "-f") || judge_weq(a, "--file")) {
			have_e = true;
			judge_opaque(j, s, "sed runs a script file that cannot be read", NULL, 0,
			             t);
			i++;
		}
		if (script != NULL &&
		    (!judge_lit(script) || sed_script_hazard(script->text, script->len, j, s, t))) {
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
		if (!judge_lit(a) || sed_script_hazard(a->text, a->len, j, s, t))
			judge_reason(j, s, "sed-script-runs",
			             "sed script runs commands or writes files (e, w)",
			             RISK_CONFIG_MUTATION, t);
		return;
	}
}

/* getline < FILE reads a file (its text is then the program's to print);
 * gawk's /inet/tcp/... special files are network connections. */
static void awk_files(struct judge *j, struct judge_seg *s, const char *p, size_t n,
                      enum target_type t)
{
	for (size_t k = 0; k + 7 <= n; k++) {
		size_t q;

		if (k + 6 <= n &&
		    (memcmp(p + k, "/inet/", 6) == 0 || memcmp(p + k, "/inet4/", 7) == 0 ||
		     memcmp(p + k, "/inet6/", 7) == 0)) {
			judge_reason(
			    j, s, "network-send",
			    "awk sends network traffic through a /inet special file (gawk)",
			    RISK_CONFIG_MUTATION, t);
			j->nofilter_seg = s->num;
			return;
		}
		if (memcmp(p + k, "getline", 7) != 0)
			continue;
		for (q = k + 7; q < n && strchr(";}\n", p[q]) == NULL && p[q] != '<'; q++)
			;
		if (q >= n || p[q] != '<')
			continue;
		j->nofilter_seg = s->num;
		for (q++; q < n && (p[q] == ' ' || p[q] == '\t'); q++)
			;
		if (q < n && p[q] == '"') {
			const char *e = memchr(p + q + 1, '"', n - q - 1);
			size_t fl = e ? (size_t)(e - (p + q + 1)) : 0;
			struct sh_word w = {.text = p + q + 1,
			                    .len = fl,
			                    .prefix = fl,
			                    .raw = p + q + 1,
			                    .raw_len = fl};

			if (e != NULL && memchr(w.text, '\\', fl) == NULL) {
				secrets_read(j, s, &w, t);
				continue;
			}
		}
		judge_reason(j, s, "secret-read",
		             "reads secret material: awk's getline reads a file named only at run "
		             "time, which may be a secret",
		             RISK_CONFIG_MUTATION, t);
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
		awk_files(j, s, p, a->len, t);
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
               size_t n, enum target_type t, enum risk_class *cls)
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
		secrets_sql(j, s, sql->text, sql->len, t);
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
	*cls = worst;
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
			judge_write_unknown(j, s, "dd operands known only at run time", t);
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

/* One assignment name=value[0..vl) remembered (read, mapfile, printf -v). */
static void remember(struct judge *j, const char *name, size_t nl, const char *v, size_t vl,
                     bool computed)
{
	struct sh_word *w;
	char *txt;

	if (j->nassigns >= JUDGE_MAX_ASSIGNS) {
		j->assigns_lost = true;
		return;
	}
	w = arena_alloc(j->a, sizeof(*w));
	txt = arena_alloc(j->a, nl + vl + 2);
	if (w == NULL || txt == NULL) {
		j->assigns_lost = true;
		return;
	}
	memcpy(txt, name, nl);
	txt[nl] = '=';
	memcpy(txt + nl + 1, v, vl);
	txt[nl + 1 + vl] = '\0';
	memset(w, 0, sizeof(*w));
	w->text = w->raw = txt;
	w->len = w->raw_len = nl + 1 + vl;
	w->prefix = computed ? nl + 1 : w->len;
	w->name_len = nl;
	w->flags = SHW_ASSIGN | (computed ? SHW_COMPUTED : 0);
	j->assigns[j->nassigns++] = w;
}

/* Has the command set IFS (IFS=: read ..., or earlier)?  Then the fields a
 * read splits are not the ones seen here. */
static bool ifs_set(const struct judge *j, const struct sh_word *w, size_t n)
{
	(void)w;
	(void)n;
	for (size_t i = 0; i < j->nassigns; i++)
		if (j->assigns[i]->name_len == 3 && memcmp(j->assigns[i]->text, "IFS", 3) == 0)
			return true;
	return j->assigns_lost;
}

/* read NAME..., mapfile NAME: each name takes the fields (or lines) of what
 * stdin holds when it is visible, else a value known only at run time. */
static void read_names(struct judge *j, const char *prog, const struct sh_word *w, size_t n,
                       const struct judge_stdin *in)
{
	bool rd = strcmp(prog, "read") == 0, any = false;
	const char *opts = rd ? "adinNptu" : "dnOsuCc";

	for (size_t i = 1; i < n; i++) {
		const struct sh_word *x = &w[i];
		const char *nm;
		size_t nl;

		if (judge_lit(x) && x->len > 1 && x->text[0] == '-') {
			/* read -a NAME: the value is the array's name */
			if (rd && x->text[x->len - 1] == 'a' && i + 1 < n)
				continue;
			if (strchr(opts, x->text[x->len - 1]) != NULL)
				i++;
			continue;
		}
		if (!judge_lit(x))
			continue;
		nm = x->text;
		nl = strcspn(nm, "[");
		if (nl == 0)
			continue;
		any = true;
		if (in->kind != JUDGE_IN_TEXT || in->partial || ifs_set(j, w, n)) {
			remember(j, nm, nl, "", 0, true);
			continue;
		}
		/* every field split at blanks, and at the separators an IFS might
		 * hold: a superset of what the name gets */
		for (int pass = 0; pass < 2; pass++) {
			const char *sep = pass == 0 ? " \t\n" : " \t\n:,;|=";

			for (size_t k = 0, cnt = 0; k < in->len && cnt < 8;) {
				size_t st;

				while (k < in->len && strchr(sep, in->text[k]) != NULL)
					k++;
				st = k;
				while (k < in->len && strchr(sep, in->text[k]) == NULL)
					k++;
				if (k > st) {
					remember(j, nm, nl, in->text + st, k - st, false);
					cnt++;
				}
			}
		}
	}
	if (!any)
		remember(j, rd ? "REPLY" : "MAPFILE", rd ? 5 : 7, "", 0, in->kind != JUDGE_IN_TEXT);
}

/* Shell builtins that carry code or data: read VAR <<< text, eval, trap,
 * alias, source/., at/batch.  Returns true when the command is fully judged;
 * false lets the policy judge the program too. */
bool tools_builtin(struct judge *j, struct judge_seg *s, const char *name, const struct sh_word *w,
                   size_t n, enum target_type t, const struct judge_stdin *in, bool extra)
{
	tools_eval_builtins(j, s, name, w, n, t);
	if ((strcmp(name, "read") == 0 || strcmp(name, "mapfile") == 0 ||
	     strcmp(name, "readarray") == 0))
		read_names(j, name, w, n, in);
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

		if (judge_lit(&w[2]) && w[2].len > 0) {
			/* printf -v NAME FORMAT ARGS: the value when it can be told */
			size_t nl = strcspn(w[2].text, "[");

			if (n == 4 && judge_lit(&w[3]) &&
			    memchr(w[3].text, '%', w[3].len) == NULL &&
			    memchr(w[3].text, '\\', w[3].len) == NULL)
				remember(j, w[2].text, nl, w[3].text, w[3].len, false);
			else if (n == 5 && judge_weq(&w[3], "%s") && judge_lit(&w[4]))
				remember(j, w[2].text, nl, w[4].text, w[4].len, false);
			else
				remember(j, w[2].text, nl, "", 0, true);
		}
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
			/* the job runs later, as root, outside the request and its jail */
			judge_reason(j, s, "deferred-commands",
			             judge_fmt(j,
			                       "%s schedules commands to run later, outside this "
			                       "request and its confinement",
			                       name),
			             RISK_CONFIG_MUTATION, t);
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
