/* secrets.c -- reading secret material is not an observation.
 *
 * The policy's `secrets:` list names files whose content an operator must
 * see being read (shadow files, private keys, keyrings, credentials,
 * /proc/PID/environ, raw disks), and `secret_stores:` the files and folders
 * that hold credentials (the jail masks them).  Every argument of a command,
 * the values of its options and its input redirections are checked against
 * both; a hit is at least config_mutation with the reason "reads secret
 * material".  Paths are followed through what the command itself says:
 * values assigned in it (variables, loop lists, arrays, read, ${x:-...},
 * $HOME), /proc/PID/root/, globs, and trees read recursively (grep -r, tar
 * -c, cp -r, rg, find -exec cat {}).  A file a program reads whose path is
 * known only at run time may be anything, secrets included: it is judged
 * as secret material too. */
#include "classifier/secrets.h"

#include "classifier/arena.h"
#include "classifier/nameidx.h"

#include <fnmatch.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_COMPS 64
#define MAX_CANDS 16

enum rmode {
	R_NAME, /* a word that may name a file (any argument) */
	R_READ, /* a file the program reads */
	R_TREE, /* a directory the program reads all of */
};

/* Could the glob p name something below directory pat[0..pl) (which ends
 * in '/')?  Its directory part, as a pattern, matches the directory. */
static bool glob_under(const char *p, const char *pat, size_t pl)
{
	const char *slash = strrchr(p, '/');
	char dir[512], want[512];
	size_t dl = slash ? (size_t)(slash - p) : 0;

	if (dl == 0 || dl >= sizeof(dir) || pl >= sizeof(want))
		return false;
	memcpy(dir, p, dl);
	dir[dl] = '\0';
	memcpy(want, pat, pl - 1);
	want[pl - 1] = '\0';
	return fnmatch(dir, want, 0) == 0;
}

/* Is the basename of p one of the exceptions ("!*.pub")? */
static bool excepted(const struct policy *pol, const char *p)
{
	const char *base = strrchr(p, '/');

	base = base ? base + 1 : p;
	for (size_t i = 0; i < pol->secrets.n; i++) {
		const char *pat = pol->secrets.v[i];

		if (pat[0] != '!')
			continue;
		if (fnmatch(pat + 1, pat[1] == '/' ? p : base, 0) == 0)
			return true;
	}
	return false;
}

/* Does the absolute path p (a glob when glob) match a `secrets:` entry?
 * no_dev: entries below /dev do not count (the program reads a device's
 * metadata, not its content). */
static bool secret_hit(const struct policy *pol, const char *p, bool glob, bool no_dev)
{
	const char *base = strrchr(p, '/');

	uint64_t tri[16] = {0};

	base = base ? base + 1 : p;
	/* which 3-byte runs the path holds: a pattern whose literal starts with a
	 * run the path lacks cannot match it (skips almost every fnmatch) */
	for (const char *q = p; q[0] && q[1] && q[2]; q++) {
		unsigned short h = policy_tri_hash(q);

		tri[h >> 6] |= (uint64_t)1 << (h & 63);
	}
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < pol->secrets.n; i++) {
			const char *pat = pol->secrets.v[i];
			size_t pl;
			bool hit, both;

			if ((pat[0] == '!') != (pass == 0))
				continue;
			if (no_dev && strncmp(pat, "/dev/", 5) == 0)
				continue;
			/* a path the pattern matches holds its literal part */
			if (!(glob && pass == 1) && pol->secret_tri[i] != 0xffff &&
			    !(tri[pol->secret_tri[i] >> 6] &
			      ((uint64_t)1 << (pol->secret_tri[i] & 63))))
				continue;
			if (!(glob && pass == 1) && pol->secret_lits[i][0] != '\0' &&
			    strstr(pat[0] == '/' || (pat[0] == '!' && pat[1] == '/') ? p : base,
			           pol->secret_lits[i]) == NULL)
				continue;
			if (pat[0] == '!')
				pat++;
			pl = strlen(pat);
			/* a glob word may name the pattern too (cat /etc/sha*); an
			 * exception holds only for the word itself */
			both = glob && pass == 1;
			if (pat[0] != '/')
				/* a bare * names every file: only a glob with some known
				 * letters of the name (id_*) is taken as naming a key */
				hit =
				    fnmatch(pat, base, 0) == 0 ||
				    (both && strcmp(base, "*") != 0 && fnmatch(base, pat, 0) == 0);
			else if (pat[pl - 1] == '/')
				hit = (strncmp(p, pat, pl) == 0 && p[pl] != '\0') ||
				      (both && glob_under(p, pat, pl));
			else
				hit = fnmatch(pat, p, 0) == 0 || (both && fnmatch(p, pat, 0) == 0);
			if (hit && pass == 0)
				return false; /* an exception: ssh_host_rsa_key.pub */
			if (hit)
				return true;
		}
	}
	return false;
}

/* ---- path components ----------------------------------------------------------------- */

static bool has_glob(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] == '*' || s[i] == '?' || s[i] == '[')
			return true;
	return false;
}

struct comps {
	const char *c[MAX_COMPS];
	unsigned char l[MAX_COMPS];
	bool g[MAX_COMPS]; /* the component holds * ? [ */
	size_t n;
	bool deep; /* more components than fit, or a ** */
};

static void split(const char *p, struct comps *out)
{
	out->n = 0;
	out->deep = false;
	while (*p) {
		size_t l;

		while (*p == '/')
			p++;
		l = strcspn(p, "/");
		if (l == 0)
			break;
		if (out->n == MAX_COMPS || l > 255) {
			out->deep = true;
			return;
		}
		if (l == 2 && p[0] == '*' && p[1] == '*')
			out->deep = true;
		out->c[out->n] = p;
		out->g[out->n] = has_glob(p, l);
		out->l[out->n++] = (unsigned char)l;
		p += l;
	}
}

/* Could component a (of a path; ga: a glob) and component c of pattern pp
 * name the same file name? */
static bool comp_compat(const char *a, size_t al, bool ga, const struct policy_pathpat *pp,
                        size_t c)
{
	char buf[256];

	if (!ga && !pp->globs[c])
		return al == pp->lens[c] && memcmp(a, pp->comps[c], al) == 0;
	if (ga && pp->globs[c])
		return true; /* two globs: assume they meet */
	memcpy(buf, a, al);
	buf[al] = '\0';
	return pp->globs[c] ? fnmatch(pp->comps[c], buf, 0) == 0
	                    : fnmatch(buf, pp->comps[c], 0) == 0;
}

/* Does some secret_stores entry (or absolute secrets: entry, when tree)
 * meet path p?  tree: p is a directory read with everything below it.
 * Returns the pattern's first component count matched (for the reason) or
 * NULL. */
static bool pathpat_meets(const struct policy_pathpat *pp, const struct comps *q, bool tree,
                          bool no_dev);

static const struct policy_pathpat *pathpat_hit(const struct policy *pol, const struct comps *q,
                                                bool tree, bool no_dev)
{
	if (q->n == 0 || q->g[0]) {
		/* "/" or a glob first: every pattern */
		for (size_t i = 0; i < pol->npathpats; i++)
			if (pathpat_meets(&pol->pathpats[i], q, tree, no_dev))
				return &pol->pathpats[i];
		return NULL;
	}
	for (size_t i = 0; i < pol->npp_any; i++)
		if (pathpat_meets(&pol->pathpats[pol->pp_any[i]], q, tree, no_dev))
			return &pol->pathpats[pol->pp_any[i]];
	for (size_t g = 0; g < pol->nppgroups; g++) {
		const struct policy_ppgroup *grp = &pol->ppgroups[g];

		if (grp->len != q->l[0] || memcmp(grp->first, q->c[0], grp->len) != 0)
			continue;
		for (size_t i = 0; i < grp->n; i++)
			if (pathpat_meets(&pol->pathpats[grp->idx[i]], q, tree, no_dev))
				return &pol->pathpats[grp->idx[i]];
		break;
	}
	return NULL;
}

static bool pathpat_meets(const struct policy_pathpat *pp, const struct comps *q, bool tree,
                          bool no_dev)
{
	{
		size_t m = pp->n, k = q->n, lim;
		bool ok = true;

		if (no_dev && pp->device)
			return false;
		if (!tree && !pp->store)
			return false; /* secret_hit judged the secrets: entries */
		if (!tree && !q->deep && (k < m || (!pp->tree && k != m)))
			return false; /* p is not at or below the pattern */
		if (tree && !pp->tree && m < k && !q->deep)
			return false; /* a file pattern above the tree */
		lim = k < m ? k : m;
		for (size_t c = 0; c < lim && ok; c++)
			ok = comp_compat(q->c[c], q->l[c], q->g[c], pp, c);
		return ok;
	}
}

/* ---- the reasons ----------------------------------------------------------------------- */

static void say_secret(struct judge *j, struct judge_seg *s, const char *text, size_t len,
                       const char *how, enum target_type t)
{
	judge_reason(j, s, "secret-read",
	             judge_fmt(j, "reads secret material: %.*s%s", (int)(len > 100 ? 100 : len),
	                       text, how ? how : ""),
	             RISK_CONFIG_MUTATION, t);
}

static void say_lost(struct judge *j, struct judge_seg *s, enum target_type t)
{
	judge_reason(j, s, "secret-read", "reads a path the command is too large to spell",
	             RISK_CONFIG_MUTATION, t);
}

/* A read whose path is known only at run time (mode R_READ or R_TREE):
 * subject is a noun phrase ("the path `$f`"). */
static void say_unknown(struct judge *j, struct judge_seg *s, const char *subject,
                        enum target_type t)
{
	judge_reason(j, s, "secret-read",
	             judge_fmt(j,
	                       "reads secret material: %s, known only at run time, may name a "
	                       "secret (a credential store, a key, a raw disk)",
	                       subject),
	             RISK_CONFIG_MUTATION, t);
}

static const char *quoted(struct judge *j, const char *what, const char *raw, size_t len)
{
	return judge_fmt(j, "%s`%.*s`", what, (int)(len > 80 ? 80 : len), raw);
}

/* /proc/PID/root/REST is REST in that process's root; /proc/PID/cwd/REST and
 * /proc/PID/fd/N are files no word names.  Returns the path to judge (p,
 * REST, or NULL when it cannot be told). */
static const char *proc_path(const char *p, bool *unknown)
{
	const char *q;

	*unknown = false;
	if (strncmp(p, "/proc/", 6) != 0)
		return p;
	q = p + 6;
	q += strcspn(q, "/");
	if (strncmp(q, "/task/", 6) == 0) {
		q += 6;
		q += strcspn(q, "/");
	}
	if (strncmp(q, "/root", 5) == 0 && (q[5] == '/' || q[5] == '\0'))
		return q[5] ? q + 5 : "/";
	if ((strncmp(q, "/cwd", 4) == 0 && (q[4] == '/' || q[4] == '\0')) ||
	    (strncmp(q, "/map_files/", 11) == 0)) {
		*unknown = true;
		return NULL;
	}
	if (strncmp(q, "/fd/", 4) == 0) {
		/* the shell's own 0, 1, 2 (and /dev/fd/N) name no file on disk */
		bool self =
		    strncmp(p, "/proc/self/", 11) == 0 || strncmp(p, "/proc/thread-self/", 18) == 0;

		if (self && q[4] >= '0' && q[4] <= '2' && q[5] == '\0')
			return p;
		*unknown = true;
		return NULL;
	}
	return p;
}

/* Judges the absolute path p (a glob when glob), spelled text[0..len). */
static void judge_path(struct judge *j, struct judge_seg *s, const char *p, bool glob,
                       const char *text, size_t len, enum rmode mode, bool no_dev,
                       enum target_type t)
{
	struct comps q;
	bool unknown;
	const char *real;

	/* the same path again (ls a a a ..., one word repeated): judged once */
	if (j->last_read != NULL && j->last_read_mode == (int)mode && j->last_read_glob == glob &&
	    j->last_read_nodev == no_dev && strcmp(j->last_read, p) == 0)
		return;
	j->last_read = p;
	j->last_read_mode = (int)mode;
	j->last_read_glob = glob;
	j->last_read_nodev = no_dev;
	real = proc_path(p, &unknown);

	if (unknown) {
		if (mode != R_NAME || !glob)
			judge_reason(j, s, "secret-read",
			             judge_fmt(j,
			                       "reads secret material: %.*s is a file of another "
			                       "process, which may be anything",
			                       (int)(len > 100 ? 100 : len), text),
			             RISK_CONFIG_MUTATION, t);
		return;
	}
	if (real != p) {
		/* /proc/self/root/etc/shadow is /etc/shadow */
		judge_path(j, s, real, glob, text, len, mode, no_dev, t);
		return;
	}
	if (mode == R_TREE) {
		split(p, &q);
		if (q.deep || pathpat_hit(j->p, &q, true, no_dev) != NULL)
			say_secret(j, s, text, len,
			           " (a tree that holds secret material, read whole)", t);
		return;
	}
	if (secret_hit(j->p, p, glob, no_dev)) {
		say_secret(j, s, text, len, NULL, t);
		return;
	}
	if (j->p->npathpats > 0) {
		split(p, &q);
		if (pathpat_hit(j->p, &q, false, no_dev) != NULL && (glob || !excepted(j->p, p)))
			say_secret(j, s, text, len, " (a credential store)", t);
	}
}

/* ---- values the command assigns ---------------------------------------------------------- */

struct cand {
	char *s;
	size_t n;
	bool glob;
};

struct cands {
	struct cand v[MAX_CANDS];
	size_t n;
	bool unknown; /* some part is known only at run time */
};

/* Appends text[0..n) to every candidate. */
static bool cands_append(struct judge *j, struct cands *c, const char *text, size_t n, bool glob)
{
	for (size_t i = 0; i < c->n; i++) {
		char *d = arena_alloc(j->a, c->v[i].n + n + 1);

		if (d == NULL)
			return false;
		memcpy(d, c->v[i].s, c->v[i].n);
		memcpy(d + c->v[i].n, text, n);
		d[c->v[i].n + n] = '\0';
		c->v[i].s = d;
		c->v[i].n += n;
		c->v[i].glob = c->v[i].glob || glob;
	}
	return true;
}

/* The values name[0..nl) may hold, as assigned earlier in the command.
 * Returns how many went to vals; *unknown: it may hold others (set outside
 * the command, or computed). */
static size_t var_values(struct judge *j, const char *name, size_t nl, const char **vals,
                         size_t *vlens, bool *globs, size_t max, bool *unknown)
{
	size_t nv = 0;
	bool found = false;

	*unknown = j->assigns_lost;
	for (size_t i = 0; i < j->nassigns; i++) {
		const struct sh_word *a = j->assigns[i];
		const char *eq = memchr(a->text, '=', a->len);
		const char *v;
		size_t vl;
		bool array;

		if (a->name_len != nl || memcmp(a->text, name, nl) != 0 || eq == NULL)
			continue;
		found = true;
		v = eq + 1;
		vl = a->len - (size_t)(v - a->text);
		array = memmem(a->raw, a->raw_len, "=(", 2) != NULL;
		if (!judge_lit(a) && (!array || memchr(a->raw, '$', a->raw_len) ||
		                      memchr(a->raw, '`', a->raw_len))) {
			*unknown = true;
			continue;
		}
		if (eq > a->text && eq[-1] == '+')
			*unknown = true; /* x+=y: appended to a value */
		if (!array) {
			if (nv < max) {
				vals[nv] = v;
				vlens[nv] = vl;
				globs[nv] = has_glob(v, vl);
				nv++;
			} else {
				*unknown = true;
			}
			continue;
		}
		/* a=(x y): the elements, each its own value */
		for (size_t k = 0; k < vl;) {
			size_t st;

			while (k < vl && v[k] == ' ')
				k++;
			st = k;
			while (k < vl && v[k] != ' ')
				k++;
			if (k == st)
				continue;
			if (nv < max) {
				vals[nv] = v + st;
				vlens[nv] = k - st;
				globs[nv] = has_glob(v + st, k - st);
				nv++;
			} else {
				*unknown = true;
			}
		}
	}
	if (!found) {
		if (nl == 4 && memcmp(name, "HOME", 4) == 0) {
			vals[0] = j->p->home;
			vlens[0] = strlen(j->p->home);
			globs[0] = false;
			return 1;
		}
		*unknown = true;
	}
	return nv;
}

/* Multiplies the candidates by the values. */
static void cands_times(struct judge *j, struct cands *c, const char **vals, const size_t *vlens,
                        const bool *globs, size_t nv, bool quoted)
{
	struct cands out = {.n = 0, .unknown = c->unknown};

	if (nv == 0) {
		c->n = 0;
		return;
	}
	for (size_t i = 0; i < c->n; i++) {
		for (size_t k = 0; k < nv; k++) {
			char *d;

			if (out.n == MAX_CANDS) {
				out.unknown = true;
				break;
			}
			d = arena_alloc(j->a, c->v[i].n + vlens[k] + 1);
			if (d == NULL) {
				out.unknown = true;
				break;
			}
			memcpy(d, c->v[i].s, c->v[i].n);
			memcpy(d + c->v[i].n, vals[k], vlens[k]);
			d[c->v[i].n + vlens[k]] = '\0';
			out.v[out.n++] = (struct cand){d, c->v[i].n + vlens[k],
			                               c->v[i].glob || (globs[k] && !quoted)};
		}
	}
	*c = out;
}

/* One ${...} or $NAME at raw[*i] (which is '$'): substitutes the values. */
static void expand_param(struct judge *j, const char *raw, size_t len, size_t *i, bool quoted,
                         struct cands *c)
{
	const char *vals[MAX_CANDS + 1];
	size_t vlens[MAX_CANDS + 1], nv, k = *i + 1, nst, nl;
	bool globs[MAX_CANDS + 1], unk, brace = k < len && raw[k] == '{';
	const char *def = NULL;
	size_t deflen = 0;

	if (brace)
		k++;
	nst = k;
	while (k < len && ((raw[k] >= 'a' && raw[k] <= 'z') || (raw[k] >= 'A' && raw[k] <= 'Z') ||
	                   raw[k] == '_' || (k > nst && raw[k] >= '0' && raw[k] <= '9')))
		k++;
	nl = k - nst;
	if (nl == 0) {
		/* $1, $@, $?, $(...), $((...)), ${#x}, ${!x}: known only at run time */
		c->unknown = true;
		c->n = 0;
		*i = len;
		return;
	}
	if (brace) {
		int depth = 1;
		size_t e = k;

		if (e < len && raw[e] == '[') {
			while (e < len && raw[e] != ']')
				e++;
			e++; /* ${a[0]}, ${a[@]}: any element */
		}
		if (e < len && raw[e] != '}') {
			size_t op = e;

			if (raw[op] == ':')
				op++;
			if (op < len && (raw[op] == '-' || raw[op] == '=')) {
				def = raw + op + 1;
			} else {
				/* ${x#p}, ${x%p}, ${x/a/b}, ${x:1}, ${x^^}: transformed */
				c->unknown = true;
				c->n = 0;
				*i = len;
				return;
			}
		}
		while (e < len && depth > 0) {
			if (raw[e] == '{')
				depth++;
			else if (raw[e] == '}')
				depth--;
			if (depth > 0)
				e++;
		}
		if (def != NULL)
			deflen = (size_t)(raw + e - def);
		k = e + 1;
	}
	nv = var_values(j, raw + nst, nl, vals, vlens, globs, MAX_CANDS, &unk);
	if (def != NULL) {
		/* ${x:-/etc/shadow}: the default is one value; without quotes or
		 * expansions in it, taken as written */
		if (memchr(def, '$', deflen) || memchr(def, '`', deflen) ||
		    memchr(def, '\'', deflen) || memchr(def, '"', deflen) ||
		    memchr(def, '\\', deflen)) {
			unk = true;
		} else if (nv < MAX_CANDS + 1) {
			vals[nv] = def;
			vlens[nv] = deflen;
			globs[nv] = has_glob(def, deflen);
			nv++;
		}
	}
	if (unk)
		c->unknown = true;
	cands_times(j, c, vals, vlens, globs, nv, quoted);
	*i = k;
}

/* The values a word known only at run time may take, from what the command
 * assigned: every candidate in c, c->unknown when some part is not known. */
static void resolve(struct judge *j, const struct sh_word *w, struct cands *c)
{
	const char *raw = w->raw;
	size_t len = w->raw_len, i = 0;
	bool dq = false;

	c->n = 1;
	c->unknown = false;
	c->v[0] = (struct cand){"", 0, false};
	if (len > 0 && raw[0] == '~' && !(w->flags & SHW_TILDE))
		; /* a quoted ~ is a file named ~ */
	else if (len > 0 && raw[0] == '~') {
		if (len > 1 && raw[1] != '/') {
			c->unknown = true; /* ~user */
			c->n = 0;
			return;
		}
		cands_append(j, c, j->p->home, strlen(j->p->home), false);
		i = 1;
	}
	while (i < len && c->n > 0) {
		char ch = raw[i];

		if (!dq && ch == '\'') {
			const char *e = memchr(raw + i + 1, '\'', len - i - 1);
			size_t st = i + 1, n = e ? (size_t)(e - raw) - st : len - st;

			if (!cands_append(j, c, raw + st, n, false))
				c->unknown = true;
			i = e ? (size_t)(e - raw) + 1 : len;
			continue;
		}
		if (ch == '"') {
			dq = !dq;
			i++;
			continue;
		}
		if (ch == '\\' && i + 1 < len) {
			if (!cands_append(j, c, raw + i + 1, 1, false))
				c->unknown = true;
			i += 2;
			continue;
		}
		if (ch == '`') {
			c->unknown = true;
			c->n = 0;
			return;
		}
		if (ch == '$' && i + 1 < len && raw[i + 1] == '\'') {
			c->unknown =
			    true; /* $'...' inside a computed word: rare, not decoded here */
			c->n = 0;
			return;
		}
		if (ch == '$' && i + 1 < len) {
			expand_param(j, raw, len, &i, dq, c);
			continue;
		}
		if (!cands_append(j, c, raw + i, 1, !dq && (ch == '*' || ch == '?' || ch == '[')))
			c->unknown = true;
		i++;
	}
}

/* ---- one word ------------------------------------------------------------------------------ */

/* Judges a literal path spelled text[0..len) (glob: holds * ? [), relative
 * to every directory a cd may have reached. */
static void read_literal(struct judge *j, struct judge_seg *s, const char *text, size_t len,
                         bool tilde, bool glob, const char *shown, size_t shownlen, enum rmode mode,
                         bool no_dev, enum target_type t)
{
	const char *path = NULL;

	if (len == 0)
		return;
	if (tilde && (len == 1 || text[1] == '/')) {
		path = judge_joinpath(j, j->p->home, text + 1, len - 1);
	} else if (tilde) {
		/* ~user/rest: the user's home, by convention /home/user (/root for
		 * root); where it really is is known only at run time */
		size_t ul = strcspn(text + 1, "/");
		char home[300];

		if (mode != R_NAME)
			say_unknown(j, s, quoted(j, "a file in another user's home, ", text, len),
			            t);
		if (ul == 0 || ul > 200 || ul >= len)
			return;
		if (ul == 4 && memcmp(text + 1, "root", 4) == 0)
			snprintf(home, sizeof(home), "/root");
		else
			snprintf(home, sizeof(home), "/home/%.*s", (int)ul, text + 1);
		path = judge_joinpath(j, home, text + 1 + ul, len - 1 - ul);
	} else if (text[0] == '/') {
		path = judge_normpath(j, text, len);
	} else {
		if (len == 1 && text[0] == '-')
			return; /* stdin */
		if (j->cwd_unknown) {
			if (mode != R_NAME)
				say_unknown(j, s,
				            quoted(j, "a file in a directory a cd made unknown, ",
				                   text, len),
				            t);
			path = judge_joinpath(j, "/", text, len);
		} else {
			for (size_t i = 1; i < j->ncwd; i++) {
				const char *pth = judge_joinpath(j, j->cwd[i], text, len);

				if (pth == NULL) {
					say_lost(j, s, t);
					return;
				}
				judge_path(j, s, pth, glob, shown, shownlen, mode, no_dev, t);
			}
			path = judge_joinpath(j, j->cwd[0], text, len);
		}
	}
	if (path == NULL) {
		say_lost(j, s, t);
		return;
	}
	judge_path(j, s, path, glob, shown, shownlen, mode, no_dev, t);
}

/* Judges word w in the given mode. */
static void read_word(struct judge *j, struct judge_seg *s, const struct sh_word *w,
                      enum rmode mode, bool no_dev, enum target_type t)
{
	struct cands c;

	if (j->p->secrets.n == 0 && j->p->npathpats == 0)
		return;
	if (judge_lit(w)) {
		read_literal(j, s, w->text, w->len, (w->flags & SHW_TILDE) != 0,
		             (w->flags & SHW_GLOB) != 0, w->text, w->len, mode, no_dev, t);
		return;
	}
	if (w->raw_len > 1 && (w->raw[0] == '<' || w->raw[0] == '>') && w->raw[1] == '(')
		return; /* <(...) is a pipe from a command judged on its own */
	resolve(j, w, &c);
	for (size_t i = 0; i < c.n; i++)
		read_literal(j, s, c.v[i].s, c.v[i].n, false, c.v[i].glob, w->raw, w->raw_len, mode,
		             no_dev, t);
	if (!c.unknown)
		return;
	if (mode != R_NAME) {
		say_unknown(j, s, quoted(j, "the path ", w->raw, w->raw_len), t);
		return;
	}
	/* /etc/pve/priv/$x: the known part, as a glob */
	if (w->prefix > 0) {
		char *g = arena_alloc(j->a, w->prefix + 2);

		if (g == NULL) {
			say_lost(j, s, t);
			return;
		}
		memcpy(g, w->text, w->prefix);
		memcpy(g + w->prefix, "*", 2);
		read_literal(j, s, g, w->prefix + 1, (w->flags & SHW_TILDE) != 0, true, w->text,
		             w->prefix, R_NAME, no_dev, t);
	}
}

void secrets_read(struct judge *j, struct judge_seg *s, const struct sh_word *w, enum target_type t)
{
	read_word(j, s, w, R_READ, false, t);
}

/* The part of w from byte off on, judged (an option's value, a file:// URL's
 * path). */
static void read_part(struct judge *j, struct judge_seg *s, const struct sh_word *w, size_t off,
                      enum rmode mode, enum target_type t)
{
	struct sh_word v = *w;

	v.text += off;
	v.len -= off;
	v.prefix = v.prefix >= off ? v.prefix - off : 0;
	v.flags &= ~(unsigned)SHW_TILDE;
	if (v.len > 0 && v.text[0] == '~')
		v.flags |= SHW_TILDE;
	if (!judge_lit(&v) && v.raw_len >= off && memchr(w->raw, '=', w->raw_len) != NULL) {
		const char *eq = memchr(w->raw, '=', w->raw_len);

		v.raw = eq + 1;
		v.raw_len = w->raw_len - (size_t)(eq + 1 - w->raw);
	}
	read_word(j, s, &v, mode, false, t);
}

static bool path_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '/' || c == '.' || c == '_' || c == '-' || c == '~' || c == '*' || c == '?';
}

/* Absolute paths spelled inside text (a substitution's source, SQL). */
static void read_spelled_in(struct judge *j, struct judge_seg *s, const char *raw, size_t len,
                            enum target_type t)
{
	for (size_t i = 0; i < len;) {
		size_t st;

		while (i < len && !path_char(raw[i]))
			i++;
		st = i;
		while (i < len && path_char(raw[i]))
			i++;
		if (i - st > 1 && (raw[st] == '/' || (raw[st] == '~' && raw[st + 1] == '/'))) {
			bool glob = memchr(raw + st, '*', i - st) || memchr(raw + st, '?', i - st);

			read_literal(j, s, raw + st, i - st, raw[st] == '~', glob, raw + st, i - st,
			             R_NAME, false, t);
		}
	}
}

/* ---- programs ---------------------------------------------------------------------------- */

static int by_name(const void *key, const void *elem)
{
	return strcmp(key, *(const char *const *)elem);
}

/* Programs that look at a file's name or metadata, never its content. */
static bool metadata_only(const char *name)
{
	if (strchr("lsdtr[bnfgep", name[0]) == NULL)
		return false;
	static const char *const progs[] = {
	    "ls",       "stat",  "du",      "test",   "[",    "readlink", "realpath", "dirname",
	    "basename", "namei", "getfacl", "lsattr", "find", "echo",     "printf"};

	for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++)
		if (strcmp(progs[i], name) == 0)
			return true;
	return false;
}

/* Programs that open a disk for its metadata (partition table, superblock,
 * SMART data), never printing its content: raw devices are not secret to
 * them. */
static bool device_metadata(const char *name)
{
	/* sorted */
	static const char *const progs[] = {
	    "blkid",     "blockdev",  "cgdisk",    "cryptsetup", "df",     "dumpe2fs",
	    "e2fsck",    "e2label",   "fdisk",     "file",       "findfs", "findmnt",
	    "fsck.ext2", "fsck.ext3", "fsck.ext4", "gdisk",      "hdparm", "losetup",
	    "lsblk",     "lsscsi",    "lvdisplay", "lvs",        "lvscan", "mdadm",
	    "mount",     "multipath", "nvme",      "parted",     "partx",  "pvdisplay",
	    "pvs",       "pvscan",    "sdparm",    "sfdisk",     "sgdisk", "smartctl",
	    "smartd",    "tune2fs",   "udevadm",   "vgdisplay",  "vgs",    "vgscan",
	    "wipefs",    "xfs_info",  "zpool",
	};

	if (strchr("bcdefhlmnpstuvwxz", name[0]) == NULL)
		return false;
	return bsearch(name, progs, sizeof(progs) / sizeof(progs[0]), sizeof(progs[0]), by_name) !=
	       NULL;
}

enum rec_kind {
	REC_NONE,
	REC_FLAG,   /* reads directory operands whole with one of rec_opts */
	REC_ALWAYS, /* reads directory operands whole (rg; default: .) */
	REC_CREATE, /* tar: creating or appending reads its operands whole */
	REC_COPY,   /* cp, rsync, scp: the sources (all but the last), whole with rec_opts */
};

/* Programs that read the content of the files their operands name. */
struct reader {
	const char *name;
	unsigned char skip;       /* leading operands that are no file (grep's pattern) */
	const char *pattern_opts; /* options that take the pattern instead: nothing skipped */
	unsigned char rec;        /* enum rec_kind */
	const char *rec_opts;     /* options that make it read trees */
};

static const struct reader readers[] = {
    {"ack", 1, "", REC_ALWAYS, ""},
    {"ag", 1, "", REC_ALWAYS, ""},
    {"awk", 1, "-f --file -e --source", 0, ""},
    {"b2sum", 0, "", 0, ""},
    {"base32", 0, "", 0, ""},
    {"base64", 0, "", 0, ""},
    {"basenc", 0, "", 0, ""},
    {"bat", 0, "", 0, ""},
    {"batcat", 0, "", 0, ""},
    {"bzcat", 0, "", 0, ""},
    {"cat", 0, "", 0, ""},
    {"7z", 2, "", REC_ALWAYS, ""},
    {"7za", 2, "", REC_ALWAYS, ""},
    {"cksum", 0, "", 0, ""},
    {"cmp", 0, "", 0, ""},
    {"colordiff", 0, "", REC_FLAG, "-r --recursive"},
    {"column", 0, "", 0, ""},
    {"comm", 0, "", 0, ""},
    {"cp", 0, "", REC_COPY, "-r -R -a --recursive --archive"},
    {"csvlook", 0, "", 0, ""},
    {"cut", 0, "", 0, ""},
    {"diff", 0, "", REC_FLAG, "-r --recursive"},
    {"diff3", 0, "", 0, ""},
    {"egrep", 1, "-e --regexp -f --file", REC_FLAG, "-r -R --recursive --dereference-recursive"},
    {"expand", 0, "", 0, ""},
    {"fgrep", 1, "-e --regexp -f --file", REC_FLAG, "-r -R --recursive --dereference-recursive"},
    {"fmt", 0, "", 0, ""},
    {"fold", 0, "", 0, ""},
    {"gawk", 1, "-f --file -e --source", 0, ""},
    {"gpg", 0, "", 0, ""},
    {"grep", 1, "-e --regexp -f --file", REC_FLAG, "-r -R --recursive --dereference-recursive"},
    {"hd", 0, "", 0, ""},
    {"head", 0, "", 0, ""},
    {"hexdump", 0, "", 0, ""},
    {"iconv", 0, "", 0, ""},
    {"install", 0, "", REC_COPY, ""},
    {"join", 0, "", 0, ""},
    {"jq", 1, "-f --from-file", 0, ""},
    {"less", 0, "", 0, ""},
    {"mawk", 1, "-f --file", 0, ""},
    {"md5sum", 0, "", 0, ""},
    {"more", 0, "", 0, ""},
    {"most", 0, "", 0, ""},
    {"nawk", 1, "-f --file", 0, ""},
    {"nl", 0, "", 0, ""},
    {"od", 0, "", 0, ""},
    {"paste", 0, "", 0, ""},
    {"pr", 0, "", 0, ""},
    {"ptx", 0, "", 0, ""},
    {"rev", 0, "", 0, ""},
    {"rg", 1, "-e --regexp -f --file", REC_ALWAYS, ""},
    {"rsync", 0, "", REC_COPY, "-r -a --recursive --archive"},
    {"scp", 0, "", REC_COPY, "-r"},
    {"sdiff", 0, "", 0, ""},
    {"sed", 1, "-e --expression -f --file", 0, ""},
    {"sha1sum", 0, "", 0, ""},
    {"sha224sum", 0, "", 0, ""},
    {"sha256sum", 0, "", 0, ""},
    {"sha384sum", 0, "", 0, ""},
    {"sha512sum", 0, "", 0, ""},
    {"shuf", 0, "", 0, ""},
    {"sort", 0, "", 0, ""},
    {"strings", 0, "", 0, ""},
    {"sum", 0, "", 0, ""},
    {"tac", 0, "", 0, ""},
    {"tail", 0, "", 0, ""},
    {"tar", 0, "", REC_CREATE, ""},
    {"tsort", 0, "", 0, ""},
    {"unexpand", 0, "", 0, ""},
    {"uniq", 0, "", 0, ""},
    {"wc", 0, "", 0, ""},
    {"xmllint", 0, "", 0, ""},
    {"xxd", 0, "", 0, ""},
    {"xzcat", 0, "", 0, ""},
    {"yq", 1, "", 0, ""},
    {"zcat", 0, "", 0, ""},
    {"zegrep", 1, "-e --regexp -f --file", 0, ""},
    {"zfgrep", 1, "-e --regexp -f --file", 0, ""},
    {"zgrep", 1, "-e --regexp -f --file", 0, ""},
    {"zip", 1, "", REC_FLAG, "-r --recurse-paths"},
    {"zless", 0, "", 0, ""},
    {"zmore", 0, "", 0, ""},
    {"zstdcat", 0, "", 0, ""},
};

static struct nameidx reader_idx;
static pthread_once_t reader_once = PTHREAD_ONCE_INIT;

static void build_reader_idx(void)
{
	nameidx_build(&reader_idx, readers, sizeof(readers) / sizeof(readers[0]),
	              sizeof(readers[0]));
}

static const struct reader *find_reader(const char *name)
{
	pthread_once(&reader_once, build_reader_idx);
	return nameidx_find(&reader_idx, readers, sizeof(readers[0]), name);
}

static bool listed(const char *list, const char *name)
{
	size_t nl = strlen(name);

	for (const char *q = list; *q;) {
		size_t l = strcspn(q, " ");

		if (l == nl && memcmp(q, name, nl) == 0)
			return true;
		q += l;
		while (*q == ' ')
			q++;
	}
	return false;
}

bool secrets_wants_items(const char *name)
{
	return find_reader(name) != NULL;
}

/* The operands of a reader at file positions: from the grammar's parse. */
static void judge_reader(struct judge *j, struct judge_seg *s, const struct reader *r,
                         const struct judge_argv *av, const struct gram_proof *gp,
                         enum target_type t)
{
	const struct sh_word *ops[64];
	size_t nops = 0, skip = r->skip, from, to;
	bool rec = r->rec == REC_ALWAYS, create = false, lost = gp->items_lost;
	const struct sh_word *base = NULL; /* tar -C DIR */

	if (gp->node != NULL && gp->node->free_words) {
		/* a grammar that takes any word (strings, od, nl ...): every word
		 * that is no option is a file it reads */
		for (size_t i = 0; i < av->n; i++) {
			const struct sh_word *x = &av->w[i];

			if (judge_lit(x) && x->len > 1 && x->text[0] == '-')
				continue;
			if (nops < 64)
				ops[nops++] = x;
			else
				lost = true;
		}
	}
	for (size_t i = 0; i < gp->nitems; i++) {
		const struct gram_item *it = &gp->items[i];

		if (it->opt == NULL) {
			if (nops < 64)
				ops[nops++] = it->word;
			else
				lost = true;
			continue;
		}
		if (listed(r->pattern_opts, it->opt->name))
			skip = 0;
		if (listed(r->rec_opts, it->opt->name))
			rec = true;
		if ((strcmp(it->opt->name, "-d") == 0 ||
		     strcmp(it->opt->name, "--directories") == 0) &&
		    r->rec == REC_FLAG && it->value != NULL && it->vlen == 7 &&
		    memcmp(it->value, "recurse", 7) == 0)
			rec = true; /* grep -d recurse */
		if (r->rec == REC_CREATE) {
			static const char *const modes[] = {
			    "-c",       "--create", "-r",         "--append",      "-u",
			    "--update", "-A",       "--catenate", "--concatenate", NULL};

			for (size_t k = 0; modes[k] != NULL; k++)
				create = create || strcmp(it->opt->name, modes[k]) == 0;
			if ((strcmp(it->opt->name, "-C") == 0 ||
			     strcmp(it->opt->name, "--directory") == 0) &&
			    it->vword != NULL)
				base = it->vword;
			if (strcmp(it->opt->name, "-T") == 0 ||
			    strcmp(it->opt->name, "--files-from") == 0)
				say_unknown(j, s, "the files tar's list file names", t);
		}
	}
	if (r->rec == REC_CREATE) {
		if (nops > 0 && av->n > 0 && judge_lit(&av->w[0]) && av->w[0].len > 0 &&
		    av->w[0].text[0] != '-' && ops[0] == &av->w[0] &&
		    strpbrk(av->w[0].text, "cruA") != NULL &&
		    strspn(av->w[0].text, "AcdrtuxfvzjJZpPkhCbBGgKlLmMnNoOsSTUVwW") == av->w[0].len)
			create = true; /* the old style: tar czf x.tgz /etc */
		if (!create)
			return; /* tar -x, -t: the archive is read, judged as an argument */
		if (base != NULL && !judge_lit(base)) {
			say_unknown(j, s, quoted(j, "tar's directory ", base->raw, base->raw_len),
			            t);
			return;
		}
		for (size_t i = 0; i < nops; i++) {
			const struct sh_word *w = ops[i];

			if (base != NULL && judge_lit(w) && w->len > 0 && w->text[0] != '/') {
				const char *p = judge_joinpath(j, base->text, w->text, w->len);

				if (p == NULL)
					say_lost(j, s, t);
				else
					read_literal(j, s, p, strlen(p), false, false, w->text,
					             w->len, R_TREE, false, t);
				continue;
			}
			read_word(j, s, w, R_TREE, false, t);
		}
		if ((av->extra_unknown && !j->extra_seen) || lost)
			say_unknown(j, s, "what xargs adds", t);
		return;
	}
	from = skip < nops ? skip : nops;
	to = nops;
	if (r->rec == REC_COPY && nops > 0)
		to = nops - 1; /* the destination */
	for (size_t i = from; i < to; i++) {
		const struct sh_word *w = ops[i];

		if (rec)
			read_word(j, s, w, R_TREE, false, t);
		else if (!judge_lit(w) || (j->cwd_unknown && w->len > 0 && w->text[0] != '/' &&
		                           !(w->flags & SHW_TILDE)))
			read_word(j, s, w, R_READ, false, t);
	}
	if (rec && from == nops &&
	    (r->rec == REC_ALWAYS || strcmp(r->name, "grep") == 0 ||
	     strcmp(r->name, "egrep") == 0 || strcmp(r->name, "fgrep") == 0))
		read_literal(j, s, ".", 1, false, false, ". (the working directory)", 25, R_TREE,
		             false, t);
	if ((av->extra_unknown && !j->extra_seen) || lost)
		say_unknown(j, s, "every file xargs names", t);
}

/* redis-cli CONFIG GET, ACL LIST/GETUSER: the server's passwords. */
static void judge_kv(struct judge *j, struct judge_seg *s, const struct judge_argv *av,
                     enum target_type t)
{
	for (size_t i = 0; i + 1 < av->n; i++) {
		const struct sh_word *a = &av->w[i], *b = &av->w[i + 1];

		if (!judge_lit(a) || !judge_lit(b))
			continue;
		if ((a->len == 6 && strncasecmp(a->text, "config", 6) == 0 && b->len == 3 &&
		     strncasecmp(b->text, "get", 3) == 0) ||
		    (a->len == 3 && strncasecmp(a->text, "acl", 3) == 0 &&
		     ((b->len == 4 && strncasecmp(b->text, "list", 4) == 0) ||
		      (b->len == 7 && strncasecmp(b->text, "getuser", 7) == 0)))) {
			judge_reason(
			    j, s, "secret-read",
			    judge_fmt(j,
			              "reads secret material: %.*s %.*s shows the server's "
			              "passwords (requirepass, masterauth, users)",
			              (int)a->len, a->text, (int)b->len, b->text),
			    RISK_CONFIG_MUTATION, t);
			return;
		}
	}
}

/* Dumps that hold the credentials of a database's roles. */
static void judge_dump(struct judge *j, struct judge_seg *s, const char *name,
                       const struct judge_argv *av, enum target_type t)
{
	bool pg = strcmp(name, "pg_dumpall") == 0, hit = pg;

	for (size_t i = 0; i < av->n; i++) {
		const struct sh_word *w = &av->w[i];

		if (pg && (judge_weq(w, "--no-role-passwords") || judge_weq(w, "-t") ||
		           judge_weq(w, "--tablespaces-only")))
			hit = false;
		if (!pg && (judge_weq(w, "-A") || judge_weq(w, "--all-databases") ||
		            judge_weq(w, "mysql") || judge_weq(w, "--system=users") ||
		            judge_weq(w, "--system=all") || !judge_lit(w)))
			hit = true;
	}
	if (hit)
		judge_reason(j, s, "secret-read",
		             judge_fmt(j,
		                       "reads secret material: %s dumps the roles' password hashes "
		                       "(the mysql system tables, pg_authid)",
		                       name),
		             RISK_CONFIG_MUTATION, t);
}

void secrets_sql(struct judge *j, struct judge_seg *s, const char *sql, size_t len,
                 enum target_type t)
{
	static const char *const creds[] = {"pg_authid",
	                                    "pg_shadow",
	                                    "pg_user_mapping",
	                                    "mysql.user",
	                                    "mysql.global_priv",
	                                    "authentication_string",
	                                    "rolpassword",
	                                    "user_mappings",
	                                    "mysql`.`user",
	                                    "`mysql`.`global_priv`",
	                                    NULL};
	static const char *const server_files[] = {"pg_read_file", "pg_read_binary_file",
	                                           "pg_ls_dir",    "pg_stat_file",
	                                           "lo_import",    "load_file",
	                                           "readfile",     "pg_ls_logdir",
	                                           "load data",    NULL};
	char low[4096];
	size_t l = len < sizeof(low) - 1 ? len : sizeof(low) - 1;

	for (size_t i = 0; i < l; i++)
		low[i] = (char)(sql[i] >= 'A' && sql[i] <= 'Z' ? sql[i] + 32 : sql[i]);
	low[l] = '\0';
	for (size_t i = 0; creds[i] != NULL; i++) {
		if (strstr(low, creds[i]) != NULL) {
			judge_reason(
			    j, s, "secret-read",
			    judge_fmt(j, "reads secret material: the credential table or column %s",
			              creds[i]),
			    RISK_CONFIG_MUTATION, t);
			break;
		}
	}
	for (size_t i = 0; server_files[i] != NULL; i++) {
		if (strstr(low, server_files[i]) != NULL) {
			judge_reason(
			    j, s, "secret-read",
			    judge_fmt(j,
			              "reads secret material: %s reads files as the database "
			              "server, outside the jail",
			              server_files[i]),
			    RISK_CONFIG_MUTATION, t);
			break;
		}
	}
	read_spelled_in(j, s, sql, len, t);
}

void secrets_args(struct judge *j, struct judge_seg *s, const char *name,
                  const struct judge_argv *av, const struct gram_proof *gp, enum target_type t)
{
	bool meta = metadata_only(name), no_dev = device_metadata(name);
	const struct reader *r;

	if (j->p->secrets.n == 0 && j->p->npathpats == 0)
		return;
	for (size_t i = 0; i < av->n; i++) {
		const struct sh_word *w = &av->w[i];
		const char *eq;

		if (!meta && !judge_lit(w) && w->prefix == 0)
			read_spelled_in(j, s, w->raw, w->raw_len, t);
		if (w->len == 0 || (meta && w->text[0] != '-'))
			continue; /* ls /etc/shadow looks at a name; du --files0-from= reads */
		if (w->text[0] == '-' && (eq = memchr(w->text, '=', w->prefix)) != NULL) {
			read_part(j, s, w, (size_t)(eq + 1 - w->text), R_NAME, t);
			continue;
		}
		if (w->text[0] == '-')
			continue;
		if (w->prefix >= 8 && memcmp(w->text, "file:///", 8) == 0) {
			read_part(j, s, w, 7, R_READ, t); /* curl file:///etc/shadow */
			continue;
		}
		if (memmem(w->text, w->prefix, "://", 3) != NULL)
			continue; /* a URL names no local file */
		if (j->in_find_exec && judge_lit(w) && memmem(w->text, w->len, "{}", 2) != NULL) {
			/* find DIR -exec cat {} \;: every file below DIR */
			for (size_t k = 0; k < j->nfind_dirs; k++)
				read_word(j, s, &j->find_dirs[k], R_TREE, no_dev, t);
			if (j->nfind_dirs == 0)
				read_literal(j, s, ".", 1, false, false, ". (find's start)", 16,
				             R_TREE, no_dev, t);
			continue;
		}
		read_word(j, s, w, R_NAME, no_dev, t);
		/* dd if=/etc/shadow, key=value words naming a path */
		eq = memchr(w->text, '=', w->prefix);
		if (eq != NULL && eq + 1 < w->text + w->len &&
		    (eq[1] == '/' || eq[1] == '~' ||
		     (eq - w->text <= 8 && strcmp(name, "dd") == 0)))
			read_part(j, s, w, (size_t)(eq + 1 - w->text), R_NAME, t);
		if (strcmp(name, "dd") == 0 && w->len >= 3 && memcmp(w->text, "if=", 3) == 0 &&
		    !judge_lit(w) && w->prefix <= 3)
			read_part(j, s, w, 3, R_READ, t); /* dd if=$x */
	}
	if (strcmp(name, "redis-cli") == 0 || strcmp(name, "valkey-cli") == 0 ||
	    strcmp(name, "keydb-cli") == 0)
		judge_kv(j, s, av, t);
	if (strcmp(name, "pg_dumpall") == 0 || strcmp(name, "mysqldump") == 0 ||
	    strcmp(name, "mariadb-dump") == 0)
		judge_dump(j, s, name, av, t);
	r = find_reader(name);
	if (r != NULL && gp != NULL && gp->ok && gp->items != NULL)
		judge_reader(j, s, r, av, gp, t);
	else if (r != NULL && av->extra_unknown && !j->extra_seen)
		say_unknown(j, s, "every file xargs names", t);
}
